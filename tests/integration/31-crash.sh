#!/usr/bin/env bash
# kill -9 loop at every redundant level: a writer (fsvol-ackwrite: O_DIRECT
# pwrite + fdatasync through MNT/volume, 4 threads, 12K blocks across chunk
# boundaries) logs each write before it is issued and once it is
# acknowledged; the daemon is killed mid-run, the dead mount removed, the
# volume mounted again (it resyncs, being dirty). After each resync every
# acknowledged write must read back (a write in flight at the kill may hold
# either generation, sector by sector), a check (scrub) must find 0
# mismatches, and at the end the independent fsvol-verify must agree.
. "$(dirname "$0")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
ROUNDS=3

check_clean() { # MNT LOG WHEN
	local out
	out=$("$ACKW" verify "$1/volume" "$2") || fail "$3: acknowledged writes lost: $out"
	note "$3: $out"
	out=$("$FSVOL" scrub "$1")
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$3: scrub: $out"
}

crash_loop() { # NAME NMEMBERS CREATE-ARGS...
	local name=$1 n=$2 d=$T/$1 mem=() pid wpid r i out
	shift 2
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	"$FSVOL" create -c 64K -s 12M "$@" "${mem[@]}" >/dev/null || fail "$name: create"
	for ((r = 1; r <= ROUNDS; r++)); do
		fsvol_mount "$d/mnt" "${mem[@]}" 2>"$d/mount.err"
		pid=$(daemon_pid "$d/mnt")
		if ((r > 1)); then
			grep -q "not shut down cleanly" "$d/mount.err" || fail "$name: round $r: no resync after kill -9"
			wait_resync "$d/mnt"
			check_clean "$d/mnt" "$d/log" "$name round $r"
		fi
		"$ACKW" write -j 4 -t 300 -s 7 "$d/mnt/volume" "$d/log" >"$d/w$r.out" 2>&1 &
		wpid=$!
		track_pid "$wpid"
		# kill after a varying number of acknowledged writes: mid-run, never the same point
		wait_acked "$d/log" $(($(grep -c '^A' "$d/log" 2>/dev/null || true) + 50 + RANDOM % 250)) "$wpid"
		kill -KILL "$pid"
		wait "$wpid" || fail "$name: round $r: writer failed: $(cat "$d/w$r.out")"
		! grep -q "stopped at the limit" "$d/w$r.out" ||
			fail "$name: round $r: the writer was not stopped by the kill: $(cat "$d/w$r.out")"
		"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "$name: umount of the dead mount failed"
		_drop_cleanup fsvol "$d/mnt" "$pid"
		_alive "$pid" && fail "$name: daemon $pid survived kill -9"
	done
	fsvol_mount "$d/mnt" "${mem[@]}" 2>/dev/null
	wait_resync "$d/mnt"
	check_clean "$d/mnt" "$d/log" "$name final"
	fsvol_umount "$d/mnt"
	out=$("$FSVOL_VERIFY" "${mem[@]}") || fail "$name: fsvol-verify after the crash loop: $out"
	note "$name: $(grep -c '^A' "$d/log") acknowledged writes over $ROUNDS kills; $out"
}

crash_loop raid1 2 -l raid1
crash_loop raid5 4 -l raid5
crash_loop raid6 5 -l raid6
crash_loop raid10 4 -l raid10

# the oracle can fail: a claimed acknowledgement the volume never saw
read -r _ k _ < <(grep '^A' "$T/raid5/log" | tail -n 1)
g=$(awk -v k="$k" '$2 == k && $3 > m { m = $3 } END { print m }' "$T/raid5/log") # newest issued
cp "$T/raid5/log" "$T/forged"
printf 'I %s %s\nA %s %s\n' "$k" $((g + 1)) "$k" $((g + 1)) >>"$T/forged"
fsvol_mount "$T/raid5/mnt" "$T"/raid5/m{0,1,2,3}
out=$("$ACKW" verify "$T/raid5/mnt/volume" "$T/forged" 2>&1) && fail "verify accepted a forged log: $out"
[[ $out == *"block $k sector 0: older than acknowledged"* ]] || fail "verify on a forged log: $out"
fsvol_umount "$T/raid5/mnt"
echo "PASS"
