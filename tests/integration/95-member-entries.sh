#!/usr/bin/env bash
# Issue 30 A3 and the new user's point 1, a mount's member entries:
# A3. spare add/remove cycles in ONE mount (no remount between them) reuse the
#     entries of removed members: more cycles than the 64 entries a mount has
#     all succeed, the daemon's RSS grows by less than a few adds' worth (the
#     cost of one add measured here), and a failed member can still be
#     re-added afterwards;
# 1.  a failed member's I/O in flight when a spare takes its role completes
#     on its own counters: its io_now goes back to 0 and remove accepts it
#     (it was left at 1 for good, "still has I/O in flight"), with HTTP
#     clients polling what the dashboard polls meanwhile.
. "$(dirname "$0")/../lib.sh"
requires jq
requires curl

healthy() { [[ $(jq -r .state "$1/status.json") == healthy ]]; }
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

# --- A3: add/remove cycles in one mount
part_a3() {
	local d=$T/a3 M=$T/a3mnt pid r0 r1 r2 cost c cycles=70 bound i
	# on a tmpfs when there is one: each add and remove flushes a superblock
	# on every member, which a busy disk makes slow (the point is the entries)
	if [[ -d /dev/shm && -w /dev/shm ]]; then
		d=$(mktemp -d /dev/shm/fsvol-95.XXXXXX)
		_push_cleanup path "$d"
	fi
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d/m0" "$d/m1" "$d/m2" >/dev/null
	for i in 1 2 3 4 sp; do truncate -s 6M "$d/s$i"; done
	# ASan parks freed memory in a quarantine that RSS counts: keep it small (test 41)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=2 fsvol_mount --buffered "$T/a3mnt" "$d/m0" "$d/m1" "$d/m2"
	pid=$(daemon_pid "$M")
	"$FSVOL" add "$M" "$d/ssp" >/dev/null && "$FSVOL" remove "$M" "$d/ssp" >/dev/null # first-use allocations
	# what an add costs: four spares held at once, each with entries and counters of its own
	r0=$(rss_kib "$pid")
	for i in 1 2 3 4; do "$FSVOL" add "$M" "$d/s$i" >/dev/null || fail "add s$i"; done
	r1=$(rss_kib "$pid")
	cost=$(((r1 - r0) / 4))
	((cost > 0)) || cost=1
	for i in 1 2 3 4; do "$FSVOL" remove "$M" "$d/s$i" >/dev/null || fail "remove s$i"; done
	# through MNT/ctl itself: the cycles are the daemon's, not the CLI's start-up
	for ((c = 1; c <= cycles; c++)); do
		echo "add $d/ssp" 2>"$d/out" >"$M/ctl" || fail "cycle $c: add refused: $(cat "$d/out"); $(tail -n 1 "$DAEMON_LOG")"
		echo "remove $d/ssp" 2>"$d/out" >"$M/ctl" || fail "cycle $c: remove refused: $(cat "$d/out")"
	done
	r2=$(rss_kib "$pid")
	# a leak of an entry per add grows by ~cost per cycle (~0.9 MB: its counters)
	bound=$((4 * cost + 1024))
	note "one add costs ~$cost kB; RSS ${r1} kB -> ${r2} kB after $cycles add/remove cycles (bound +$bound kB)"
	((r2 - r1 <= bound)) || fail "$cycles add/remove cycles grew the daemon by $((r2 - r1)) kB (one add costs ~$cost kB)"
	jq -e '[.members[]] | length == 3' "$M/status.json" >/dev/null ||
		fail "the removed spares are still listed: $(jq -c .members "$M/status.json")"
	# a degraded volume is still repaired in this mount: re-add, and a spare
	"$FSVOL" fail "$M" 1 >/dev/null || fail "fail 1"
	"$FSVOL" re-add "$M" "$d/m1" >"$d/out" 2>&1 || fail "re-add after the cycles: $(cat "$d/out")"
	wait_for 60 "m1 not rebuilt after its re-add: $(cat "$M/status")" healthy "$M"
	"$FSVOL" fail "$M" 2 >/dev/null || fail "fail 2"
	"$FSVOL" add "$M" "$d/ssp" >"$d/out" 2>&1 || fail "add after the cycles: $(cat "$d/out")"
	wait_for 60 "the spare did not rebuild m2's role: $(cat "$M/status")" healthy "$M"
	fsvol_umount "$M"
}

# --- 1: a failed member's I/O in flight while a spare takes over its role
m2_inflight() { jq -e '.members[] | select(.index == 2) | .inflight >= 1' "$1/stats.json" >/dev/null; }
m2_idle() { jq -e '.members[] | select(.index == 2) | .inflight == 0' "$1/stats.json" >/dev/null; }
part_inflight() {
	local d=$T/inflight M=$T/inflight/mnt poll dd_pid u m3
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d/m0" "$d/m1" "$d/m2" "$d/m3" >/dev/null
	truncate -s 6M "$d/sp"
	fsvol_mount_http "$M" "$d/m0" "$d/m1" "$d/m2" "$d/m3"
	"$FSVOL" add "$M" "$d/sp" >/dev/null || fail "add the spare"
	# what the dashboard's page polls, as fast as curl goes
	(
		while :; do
			for u in / status.json stats.json metrics layout.json chunks.json; do
				curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/$u"
			done
		done
	) &
	poll=$!
	track_pid "$poll"
	"$FSVOL" ctl "$M" fault 2 rdelay=2s || fail "fault 2"
	dd if="$M/volume" of=/dev/null bs=16K count=16 iflag=direct status=none &
	dd_pid=$!
	track_pid "$dd_pid"
	wait_for 30 "no read in flight on m2" m2_inflight "$M"
	"$FSVOL" fail "$M" 2 >/dev/null || fail "fail 2"
	wait "$dd_pid" || fail "reads failed while m2 failed under them"
	wait_for 30 "m2 (failed) keeps a request in flight for good: $(jq -c '.members[] | [.index, .state, .inflight]' \
		"$M/stats.json" | tr '\n' ' ')" m2_idle "$M"
	"$FSVOL" remove "$M" m2 >"$d/out" 2>&1 || fail "remove m2: $(cat "$d/out")"
	curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep 'fsvol_disk_io_now{' >"$d/io_now"
	! grep -v ' 0$' "$d/io_now" || fail "io_now not 0 everywhere once idle: $(cat "$d/io_now")"
	# the spare that took the role counted its own requests, not the failed one's
	m3=$(jq '.members[] | select(.index == 4) | .inflight' "$M/stats.json")
	((m3 < 1000)) || fail "the spare's in-flight count went below zero: $m3"
	kill "$poll" 2>/dev/null
	wait_for 60 "the spare did not rebuild m2's role: $(cat "$M/status")" healthy "$M"
	fsvol_umount "$M"
	note "a read in flight on m2 when it failed ended on m2's counters; remove m2 accepted"
}

for part in ${PARTS:-a3 inflight}; do
	"part_$part"
done
echo "PASS"
