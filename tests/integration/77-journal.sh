#!/usr/bin/env bash
# The raid5 write hole closed by md's write journal (docs/experiments.md,
# "The write hole"; docs/format.md, "Write journal"): the experiment of
# 76-ppl.sh (a degraded raid5 of 5 members, one missing, half-stripe writes,
# a power cut placed with `ctl powercut-after K`, K = 1..20) with
# `create --write-journal PATH`: every stripe write's data and parity reach
# the journal before the members, and the dirty degraded start (no --force)
# writes the complete records again. Nothing is damaged, not even a write
# that was in flight whose chunk lives on the missing member (what the
# partial parity log cannot promise): each block reads as its last
# acknowledged write or a later issued one. Then the journal taken away: the
# volume starts (clean) but refuses writes, reads go on, as md makes an array
# without its journal read-only; the same when the journal fails while serving. The same cuts in md's write-back mode (`ctl
# journal_mode write-back`: acknowledged once the journal has a write) lose
# no acknowledged write either; nor does a raid6 with two members missing.
. "$(dirname "$0")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
BLOCKS=96 # 32K blocks: 3 MiB, 48 stripes of 4 data chunks

cut() { # K [write-back|raid6]: MISMATCHES gets every mismatch, in flight or not
	local d=$T/k$1 pid out use=("$T/k$1"/m{0,1,2,3})
	mkdir -p "$d"
	if [[ ${2:-} == raid6 ]]; then # six members, two missing
		"$FSVOL" create -l raid6 -c 16K -s 768K --write-journal "$d/j" "$d"/m{0,1,2,3,4,5} >/dev/null ||
			fail "create raid6"
	else
		"$FSVOL" create -l raid5 -c 16K -s 768K --write-journal "$d/j" "$d"/m{0,1,2,3,4} >/dev/null || fail "create"
	fi
	fsvol_mount --run "$d/mnt" "${use[@]}" "$d/j" 2>/dev/null
	pid=$(daemon_pid "$d/mnt")
	[[ ${2:-} == write-back ]] && { "$FSVOL" ctl "$d/mnt" journal_mode write-back || fail "ctl journal_mode write-back"; }
	"$ACKW" write -j 2 -b 32K -F -n $((BLOCKS / 2)) "$d/mnt/volume" "$d/log" >/dev/null || fail "K=$1: fill"
	"$FSVOL" ctl "$d/mnt" powercut-after "$1" || fail "K=$1: ctl powercut-after"
	"$ACKW" write -j 2 -b 32K -t 60 "$d/mnt/volume" "$d/log" >"$d/w.out" 2>&1 || true
	grep -q "stopped" "$d/w.out" && fail "K=$1: the writer did not meet the cut: $(cat "$d/w.out")"
	wait_for 30 "K=$1: the daemon survived the cut" eval '! _alive '"$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "K=$1: umount of the dead mount"
	_drop_cleanup fsvol "$d/mnt" "$pid"
	fsvol_mount "$d/mnt" "${use[@]}" "$d/j" 2>"$d/mount.err" ||
		fail "K=$1: the dirty degraded start: $(cat "$d/mount.err")"
	grep -q "resync pending" "$d/mnt/status" && fail "K=$1: a resync is owed after the journal's replay"
	grep -q '"consistency_policy":"journal"' "$d/mnt/status.json" || fail "K=$1: status.json's policy"
	out=$("$ACKW" verify -b 32K "$d/mnt/volume" "$d/log" 2>"$d/verify.err" || true)
	fsvol_umount "$d/mnt"
	[[ $out =~ mismatches\ ([0-9]+) ]] || fail "K=$1: verify said: $out"
	MISMATCHES=${BASH_REMATCH[1]}
	((MISMATCHES == 0)) || fail "K=$1: $out: $(cat "$d/verify.err")"
	[[ $1 == 20 && -z ${2:-} ]] || rm -rf "$d"
}

shown=""
for k in $(seq 1 20); do
	cut "$k"
	shown+=" K=$k:$MISMATCHES"
done
note "journal, mismatched sectors (in flight or not) after a cut after K member writes:$shown"

# md's write-back mode: a write is acknowledged once the journal has it, the
# members follow; what was acknowledged survives the cut all the same
shown=""
for k in 1 2 3 4 5 6 7 9 11 13; do
	cut "$k" write-back
	shown+=" K=$k:$MISMATCHES"
done
note "journal write-back, mismatched sectors after a cut after K member writes:$shown"

# raid6 with two members missing: the same
shown=""
for k in 2 3 4 5 7; do
	cut "$k" raid6
	shown+=" K=$k:$MISMATCHES"
done
note "journal raid6 (2 missing), mismatched sectors after a cut after K member writes:$shown"

# mdadm's words: detail, status.json
d=$T/k20
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j"
"$FSVOL" detail "$d/mnt" | grep -q "Consistency Policy : journal" || fail "detail: $("$FSVOL" detail "$d/mnt")"
"$FSVOL" detail "$d/mnt" | grep -q "journal .*$d/j" || fail "detail shows no journal device"
[[ $(jq -r '.members[] | select((.path // "") | endswith("/j")) | .state' "$d/mnt/status.json") == journal ]] ||
	fail "status.json: the journal's state"
fsvol_umount "$d/mnt"
expect_fail_msg "raid4, raid5 or raid6 only" "$FSVOL" create -f -l raid1 -s 768K --write-journal "$d/j" "$d"/m{0,1}
expect_fail_msg "md refuses both" "$FSVOL" create -f -l raid5 -s 768K --write-journal "$d/j" --bitmap internal "$d"/m{0,1,2}

# the journal gone: writes refused, reads served, nothing else lost
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} 2>"$d/mount.err" || fail "mount without the journal: $(cat "$d/mount.err")"
grep -q "writes refused" "$d/mnt/status" || fail "status does not say writes are refused: $(cat "$d/mnt/status")"
dd if=/dev/zero of="$d/mnt/volume" bs=32K count=1 oflag=direct conv=notrunc status=none 2>"$d/dd.err" &&
	fail "a write went through without the journal"
grep -qi "read-only" "$d/dd.err" || fail "the refused write's error: $(cat "$d/dd.err")"
"$ACKW" verify -b 32K "$d/mnt/volume" "$d/log" >/dev/null 2>&1 || fail "reads without the journal"
fsvol_umount "$d/mnt"

# the journal fails while serving (its writes fail): the same, and the
# superblocks record it failed
d=$T/fails
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 16K -s 768K --write-journal "$d/j" "$d"/m{0,1,2,3} >/dev/null || fail "create"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j"
"$ACKW" write -j 1 -b 32K -F -n 72 "$d/mnt/volume" "$d/log" >/dev/null || fail "fill"
"$FSVOL" ctl "$d/mnt" fault 4 error=write || fail "ctl fault 4 error=write"
dd if=/dev/zero of="$d/mnt/volume" bs=32K count=1 oflag=direct conv=notrunc status=none 2>"$d/dd.err" &&
	fail "a write went through with the journal failing"
grep -qi "read-only" "$d/dd.err" || fail "the refused write's error: $(cat "$d/dd.err")"
grep -q "JOURNAL FAILED: writes refused" "$d/mnt/status" || fail "status: $(cat "$d/mnt/status")"
"$ACKW" verify -b 32K "$d/mnt/volume" "$d/log" >/dev/null 2>&1 || fail "reads with the journal failed"
fsvol_umount "$d/mnt"
"$FSVOL" examine "$d/m0" | grep -q "^ *4 .*failed.*journal" || fail "the superblocks do not record the journal failed"
echo "PASS"
