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
"$FSVOL" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }' >"$T/cmds"
[[ $(wc -l <"$T/cmds") -ge 10 ]] || fail "fsvol --help lists $(wc -l <"$T/cmds") commands"
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
