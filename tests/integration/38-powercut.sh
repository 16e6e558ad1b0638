#!/usr/bin/env bash
# Power cut at every redundant level: each member sits behind a volatile
# write-back cache (--fault N=cache=volatile, docs/faults.md). A writer
# (fsvol-ackwrite -f 32: O_DIRECT pwrites through MNT/volume, an fdatasync
# after every 32 of a thread's writes) logs a write as acknowledged only once
# a flush that followed it completed. Mid-run `ctl powercut` drops every
# member's unflushed cache at once and stops the daemon like a crash; the
# volume is mounted again (it resyncs, being dirty). Then every write
# acknowledged before its flush completed must read back, a scrub must find
# 0 mismatches, and the cache must have lost some written-but-unflushed
# writes (else the power cut tested nothing).
. "$(dirname "$0")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
ROUNDS=2
LOST=0

check_clean() { # MNT LOG WHEN
	local out
	out=$("$ACKW" verify "$1/volume" "$2") || fail "$3: acknowledged writes lost: $out"
	note "$3: $out"
	[[ $out =~ lost\ ([0-9]+) ]] && LOST=$((LOST + BASH_REMATCH[1]))
	out=$("$FSVOL" scrub "$1") || fail "$3: scrub failed: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$3: scrub: $out"
}

powercut_loop() { # NAME NMEMBERS CREATE-ARGS...
	local name=$1 n=$2 d=$T/$1 mem=() faults=() pid wpid r i out
	shift 2
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do
		mem+=("$d/m$i")
		faults+=("--fault=$i=cache=volatile,cache_size=1M")
	done
	"$FSVOL" create -c 64K -s 12M "$@" "${mem[@]}" >/dev/null || fail "$name: create"
	for ((r = 1; r <= ROUNDS; r++)); do
		fsvol_mount "${faults[@]}" "$d/mnt" "${mem[@]}" 2>"$d/mount.err"
		pid=$(daemon_pid "$d/mnt")
		grep -q "cache=volatile" "$d/mnt/status" || fail "$name: no cache in status: $(cat "$d/mnt/status")"
		if ((r > 1)); then
			grep -q "not shut down cleanly" "$d/mount.err" || fail "$name: round $r: no resync after the power cut"
			wait_resync "$d/mnt"
			check_clean "$d/mnt" "$d/log" "$name round $r"
		fi
		"$ACKW" write -j 4 -f 32 -t 300 -s 7 "$d/mnt/volume" "$d/log" >"$d/w$r.out" 2>&1 &
		wpid=$!
		track_pid "$wpid"
		wait_acked "$d/log" $(($(grep -c '^A' "$d/log" 2>/dev/null || true) + 100 + RANDOM % 300)) "$wpid"
		"$FSVOL" ctl "$d/mnt" powercut >"$d/ctl.out" 2>&1 || true # the daemon dies under it
		for ((i = 0; i < 100; i++)); do _alive "$pid" || break; sleep 0.1; done
		_alive "$pid" && fail "$name: round $r: the daemon survived ctl powercut: $(cat "$d/ctl.out")"
		wait "$wpid" || fail "$name: round $r: writer failed: $(cat "$d/w$r.out")"
		! grep -q "stopped at the limit" "$d/w$r.out" ||
			fail "$name: round $r: the writer was not stopped by the power cut: $(cat "$d/w$r.out")"
		"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "$name: umount of the dead mount failed"
		_drop_cleanup fsvol "$d/mnt" "$pid"
	done
	fsvol_mount "$d/mnt" "${mem[@]}" 2>"$d/mount.err"
	grep -q "not shut down cleanly" "$d/mount.err" || fail "$name: no resync after the last power cut"
	wait_resync "$d/mnt"
	check_clean "$d/mnt" "$d/log" "$name final"
	fsvol_umount "$d/mnt"
	out=$("$FSVOL_VERIFY" "${mem[@]}") || fail "$name: fsvol-verify after the power cuts: $out"
	note "$name: $(grep -c '^A' "$d/log") acknowledged writes over $ROUNDS power cuts; $out"
}

powercut_loop raid1 2 -l raid1
powercut_loop raid5 4 -l raid5
powercut_loop raid6 5 -l raid6
powercut_loop raid10 4 -l raid10

# the power cut must have cost something: written, unflushed, and gone
((LOST > 0)) || fail "no unflushed write was lost: the cache did not hold them"
note "unflushed writes lost to the power cuts: $LOST"
echo "PASS"
