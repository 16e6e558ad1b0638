#!/usr/bin/env bash
# 15-exit-codes: the exit status contract (README "Exit codes"): 0 done, 1 a
# well-formed command that failed, 2 a usage error, for fsvol and fsvol-bench
# alike; every --help from the option tables (mount's lists all its options);
# and 'fsvol umount' right after fsvol-bench on MNT/volume succeeds at once
# (it failed with EBUSY while the kernel still held the bench's io_uring files).
. "$(dirname "$0")/../lib.sh"

BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"

# status WANT CMD...: CMD exits WANT and, when it fails, says why on stderr
status() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[[ $rc -eq $want ]] || fail "exit $rc, expected $want: $*"$'\n'"stderr: $(cat "$T/err")"
	if [[ $want -ne 0 && ! -s $T/err ]]; then
		fail "exit $rc without a message on stderr: $*"
	fi
	! grep -Eq "$SAN_PATTERN" "$T/err" || fail "sanitizer report from: $*"
}

M=("$T/m0" "$T/m1" "$T/m2")
"$FSVOL" create -l raid5 -c 64K -s 8M "${M[@]}" >/dev/null || fail "create"

# --- 0: help, version, a good command -------------------------------------------
status 0 "$FSVOL" --help
status 0 "$FSVOL" --version
status 0 "$FSVOL" help mount
status 0 "$FSVOL" layout -l raid5 -n 4 --rows 2
status 0 "$FSVOL" model show hdd 256M
status 0 "$BENCH" --help
status 0 "$BENCH" sweep --help

# --- 2: usage errors ---------------------------------------------------------------
status 2 "$FSVOL"
status 2 "$FSVOL" frobnicate
status 2 "$FSVOL" help frobnicate
status 2 "$FSVOL" mount --no-such-option "$T/mnt" "${M[@]}"
status 2 "$FSVOL" mount "$T/mnt"                       # no members
status 2 "$FSVOL" mount --stats lots "$T/mnt" "${M[@]}"
status 2 "$FSVOL" mount --model floppy "$T/mnt" "${M[@]}"
status 2 "$FSVOL" create -s 8M "$T/c0"                 # no --level
status 2 "$FSVOL" create -l raid7 -s 8M "$T/c0"
status 2 "$FSVOL" create -l raid0                      # no members
status 2 "$FSVOL" create -l raid0 -s 12X "$T/c0"
status 2 "$FSVOL" examine
status 2 "$FSVOL" umount
status 2 "$FSVOL" umount "$T/a" "$T/b"
status 2 "$FSVOL" status
status 2 "$FSVOL" scrub
status 2 "$FSVOL" layout -n 4                          # no --level
status 2 "$FSVOL" layout -l raid5 -n 4 extra
status 2 "$FSVOL" map -l raid0 -n 4 -c 64K             # no OFFSET
status 2 "$FSVOL" map -l raid0 -n 4 -c 64K -s 1M 4M 1  # beyond the capacity
status 2 "$FSVOL" map -l raid0 -n 4 -c 64K 0 0         # LENGTH 0
status 2 "$FSVOL" model
status 2 "$FSVOL" model show
status 2 "$FSVOL" model show warp-drive
status 2 "$FSVOL" model show hdd 1K
status 2 "$BENCH"                                      # no TARGET
status 2 "$BENCH" -b 3X "$T/f"
status 2 "$BENCH" --no-such-flag "$T/f"
status 2 "$BENCH" sweep --members 0-x
# issue 21 point 7, issue 22 point 9: the same mistake is the same status everywhere
status 2 "$FSVOL" create -l raid5 -s 8M "$T/c0" "$T/c1"   # too few members for the level
status 2 "$FSVOL" layout -l raid5 -n 2
status 2 "$FSVOL" create -l raid5 -c 48K -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 -c 3K -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 -c 0 -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" map -l raid0 -n 4 -c 0 0
status 2 "$FSVOL" layout -l raid0 -n 4 -c 0
status 2 "$FSVOL" map -l raid0 -n 4 -s 0 0
status 2 "$FSVOL" map -l raid0 -n 4 -c 48K 0
status 2 "$FSVOL" ctl "$T" frobnicate                 # an unknown ctl word
status 2 "$FSVOL" ctl "$T" stats lots
# point 8 (issue 30 point 7: mdadm's KiB): -s 8 is 8 KiB; the message says what it was read as
status 2 "$FSVOL" create -l raid5 -s 8 "$T/c0" "$T/c1" "$T/c2"
grep -q -- "--size 8 (read as 8K: a bare number is KiB, as mdadm's): 8K per member, less than one chunk" "$T/err" ||
	fail "-s 8: $(cat "$T/err")"
status 2 "$FSVOL" create -l raid5 --data-offset 4K --bitmap internal -s 8M "$T/c0" "$T/c1" "$T/c2"
grep -q -- "--data-offset 4K: leaves no room for the write-intent bitmap" "$T/err" || fail "--data-offset 4K: $(cat "$T/err")"
status 2 "$FSVOL" create -l raid5 --data-offset 6K -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 --spares 3 -s 8M "$T/c0" "$T/c1" "$T/c2"
grep -q -- "--spare-devices 3 with 3 devices" "$T/err" && ! grep -q "0 members" "$T/err" || fail "--spares 3: $(cat "$T/err")"
# point 10: memory members would lose their superblocks with the process
status 2 "$FSVOL" create -l raid1 -s 8M mem:a mem:b
grep -q "mem:a: a memory member lives only as long as the process" "$T/err" || fail "mem: $(cat "$T/err")"
status 2 "$FSVOL" serve "${M[@]}"                       # no --nbd
status 2 "$FSVOL" serve --nbd unix:"$T/s"              # no members

# every command, every bad-usage path the table allows: no operands, an
# unknown long or short option, an option without its argument
"$FSVOL" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on && /^  [a-z]/ { print $1 }' >"$T/cmds"
while read -r c; do
	[[ $c == monitor ]] || status 2 "$FSVOL" "$c"    # monitor alone follows every mount (--scan)
	status 2 "$FSVOL" "$c" --no-such-option "$T/mnt" "${M[0]}"
	status 2 "$FSVOL" "$c" -Q "$T/mnt" "${M[0]}"
	# the table's first option that takes a value, given without one
	o=$("$FSVOL" "$c" --help | sed -n 's/^  \(-., \)\{0,1\}\(--[a-z-]*\) [A-Z[].*/\2/p' | head -1)
	[[ -z $o ]] || status 2 "$FSVOL" "$c" "$o"
done <"$T/cmds"
# extra or missing operands, and values out of range
status 2 "$FSVOL" detail "$T/a" "$T/b"
status 2 "$FSVOL" fail "$T/mnt"
status 2 "$FSVOL" replace "$T/mnt"
status 2 "$FSVOL" scrub "$T/a" "$T/b"
status 2 "$FSVOL" stat -i 0 "$T/mnt"
status 2 "$FSVOL" status --timeout 0 "$T/mnt"
status 2 "$FSVOL" umount --timeout x "$T/mnt"
status 2 "$FSVOL" mount --mode 999 "$T/mnt" "${M[@]}"
status 2 "$FSVOL" mount --fault x "$T/mnt" "${M[@]}"
status 2 "$FSVOL" create -l raid5 --spares x -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 --bitmap sometimes -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 --name "bad name" -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" create -l raid5 --layout diagonal -s 8M "$T/c0" "$T/c1" "$T/c2"
status 2 "$FSVOL" layout -l raid5 -n 4 --rows 0
status 2 "$FSVOL" map -l raid0 -n 0 0
status 2 "$FSVOL" trace -n x "$T/mnt"
[[ ! -e $T/c0 ]] || fail "a refused create left $T/c0 behind"

# --- 1: well formed, but it cannot be done -----------------------------------------
status 1 "$FSVOL" examine "$T/nonexistent"
head -c 1M /dev/zero >"$T/zero"
status 1 "$FSVOL" examine "$T/zero"                    # not a member
status 1 "$FSVOL" mount "$T/nowhere" "${M[@]}"          # no such mount point
mkdir -p "$T/mnt"
status 1 "$FSVOL" mount "$T/mnt" "${M[0]}" "$T/nonexistent" "${M[2]}"
status 1 "$FSVOL" umount "$T/mnt"                      # not mounted
status 1 "$FSVOL" status "$T/mnt"
status 1 "$FSVOL" map "${M[0]}" "$T/zero" 0             # not a volume
status 1 "$FSVOL" create -l raid1 -s 8M "$T/nodir/c0" "$T/c1"
status 1 "$FSVOL" ctl "$T/mnt" reset                   # well formed, but not a mount
status 1 "$FSVOL" detail "$T/mnt"
status 1 "$BENCH" -d1 -W0 "$T/nonexistent"

# --- every --help comes from its table: mount's lists every option -------------------
"$FSVOL" mount --help >"$T/h" || fail "mount --help"
for o in --foreground --buffered --force --read-policy --stats --page-cache --log --model; do
	grep -q -- "$o" "$T/h" || fail "mount --help lacks $o"
done
syn=$(sed -n '1,/^  [a-z]/p' "$T/h")  # the synopsis lines
for o in -f --buffered --force --read-policy --stats --page-cache --log --model MNT MEMBER...; do
	[[ $syn == *"$o"* ]] || fail "mount's synopsis lacks $o: $syn"
done
[[ $(wc -l <"$T/cmds") -ge 10 ]] || fail "fsvol --help lists $(wc -l <"$T/cmds") commands"
[[ $("$FSVOL" --help | awk 'length > 80' | wc -l) -eq 0 ]] || fail "fsvol --help is wider than 80 columns"
for h in --help "sweep --help"; do
	# shellcheck disable=SC2086 # two words for sweep's
	[[ $("$FSVOL_BUILD/bin/fsvol-bench" $h | awk 'length > 80' | wc -l) -eq 0 ]] ||
		fail "fsvol-bench $h is wider than 80 columns"
done
while read -r c; do
	"$FSVOL" "$c" --help >"$T/hc" || fail "fsvol $c --help"
	[[ $(awk 'length > 80' "$T/hc" | wc -l) -eq 0 ]] || fail "fsvol $c --help is wider than 80 columns"
done <"$T/cmds"

# --- fsvol umount right after fsvol-bench ---------------------------------------------
fsvol_mount "$T/mnt" "${M[@]}"
for i in 1 2 3; do
	"$BENCH" -b4K -r -o8 -w30 -d0.3 -W0 -q "$T/mnt/volume" >"$T/bench.out" 2>&1 ||
		fail "fsvol-bench on MNT/volume: $(cat "$T/bench.out")"
	fsvol_umount "$T/mnt"   # at once: no sleep, no retry
	fsvol_mount "$T/mnt" "${M[@]}"
done
fsvol_umount "$T/mnt"
note "exit codes ok"
