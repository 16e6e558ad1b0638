#!/usr/bin/env bash
# Issue 22 points 4, 5 and 6, the spare slots:
# 4. a failed member parked in a spare slot is never written again (docs/
#    format.md), so when it becomes unreachable, add still succeeds and the
#    rebuild starts;
# 5. the entry a failed member leaves when the volume is assembled without it
#    can be removed, and is reused: 70 cycles of fail 1 / add a new file /
#    remount without the old one never run out of slots;
# 6. a refused re-add frees what it opened: the daemon's RSS after 300
#    refusals stays within 10 MB of before.
. "$(dirname "$0")/../lib.sh"
requires jq

wait_healthy() { # MNT
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ $(jq -r .state "$1/status.json") == healthy ]] && return 0
		sleep 0.05
	done
	fail "$1: not healthy after the recovery: $(cat "$1/status")"
}

events_of() { "$FSVOL" examine "$1" | sed -n 's/^ *Events : //p'; }

# --- 4: an unreachable failed member in a spare slot does not block add
part4() {
local d=$T/parked out ev ev0
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 16K -s 4M "$d/m0" "$d/m1" "$d/m2" >/dev/null
truncate -s 6M "$d/s1" "$d/s2" "$d/s3"
fsvol_mount "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
random_file "$d/data" "$(stat -c %s "$d/mnt/volume")"
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
"$FSVOL" fail "$d/mnt" 0
"$FSVOL" add "$d/mnt" "$d/s1" || fail "add s1"
wait_healthy "$d/mnt"
# m0 keeps its Number (md's) wherever it is parked; the spare that took role 0 is m3
grep -q "m0: $d/m0 failed" "$d/mnt/status" || fail "m0 is not parked failed: $(cat "$d/mnt/status")"
grep -q "m3: $d/s1 active (role 0)" "$d/mnt/status" || fail "s1 (m3) is not in role 0: $(cat "$d/mnt/status")"
ev0=$(events_of "$d/m0")
"$FSVOL" ctl "$d/mnt" fault 0 error=all # m0 is gone for good
"$FSVOL" fail "$d/mnt" 1
out=$("$FSVOL" add "$d/mnt" "$d/s2" 2>&1) || fail "add with an unreachable failed member parked: $out"
wait_healthy "$d/mnt"
grep -q "$d/s2 active" "$d/mnt/status" || fail "s2 was not rebuilt: $(cat "$d/mnt/status")"
cmp "$d/data" "$d/mnt/volume" || fail "data differs after the second recovery"
"$FSVOL" ctl "$d/mnt" fault 0 none
"$FSVOL" add "$d/mnt" "$d/s3" 2>/dev/null || true # a third one, m0 reachable again: still not written
fsvol_umount "$d/mnt"
ev=$(events_of "$d/m0")
[[ $ev == "$ev0" ]] || fail "the failed member m0 was written after it failed (events $ev0 -> $ev)"
note "parked failed member: add succeeded, s2 rebuilt, m0 left at events $ev0"
}

# --- 5: 70 cycles of fail 1 / add a new file / remount without the old one
part5() {
local d=$T/cycle cur c slots
mkdir -p "$d"
"$FSVOL" create -l raid1 -c 16K -s 1M "$d/m0" "$d/n0" >/dev/null
cur=$d/n0
for ((c = 1; c <= 70; c++)); do
	fsvol_mount "$d/mnt" "$d/m0" "$cur" 2>/dev/null
	if ((c == 2)); then
		# the entry n0 left (failed, not given): removable by its Number (n0
		# was m1; n1, added as m2, plays role 1)
		grep -q "m1: (missing) failed" "$d/mnt/status" || fail "no leftover entry m1: $(cat "$d/mnt/status")"
		"$FSVOL" remove "$d/mnt" 1 || fail "remove 1 (a failed entry without its member)"
		! grep -q "(missing)" "$d/mnt/status" || fail "entry m1 not removed: $(cat "$d/mnt/status")"
	fi
	"$FSVOL" fail "$d/mnt" "$cur"
	truncate -s 2M "$d/n$c"
	"$FSVOL" add "$d/mnt" "$d/n$c" || fail "cycle $c: add: $(tail -3 "$DAEMON_LOG")"
	wait_healthy "$d/mnt"
	fsvol_umount "$d/mnt"
	rm -f "$cur"
	cur=$d/n$c
done
slots=$("$FSVOL" examine "$d/m0" | sed -n 's/^ *Spares : //p')
((slots <= 1)) || fail "after 70 cycles the volume has $slots spare slots (the leftovers are not reused)"
note "70 fail/add/remount cycles: $slots spare slot in the table"
}

# --- 6: RSS after 300 refused re-adds
part6() {
local d=$T/leak out before after
mkdir -p "$d"
"$FSVOL" create -l raid1 -c 16K -s 1M "$d/m0" "$d/m1" >/dev/null
truncate -s 2M "$d/stranger"
# Under SAN=1, ASan parks what is freed in a quarantine (256 MB) that RSS
# counts: 2 MB keeps use-after-free checks and lets a real leak show.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=2 fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
pid=$(daemon_pid "$d/mnt")
# shellcheck disable=SC2317
rss() {
	local k
	k=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
	[[ -n $k ]] || fail "no VmRSS for daemon $pid"
	echo "$k"
}
refuse() { # N: re-adds of a file that never was a member, each refused
	local i
	for ((i = 0; i < $1; i++)); do
		if echo "re-add $d/stranger" 2>/dev/null >"$d/mnt/ctl"; then fail "re-add of a stranger accepted"; fi
	done
}
refuse 5 # warm up: first-use allocations are not a leak
before=$(rss)
refuse 300
after=$(rss)
note "daemon RSS ${before} kB before, ${after} kB after 300 refused re-adds"
((after - before < 10 * 1024)) || fail "300 refused re-adds grew the daemon from $before kB to $after kB"
out=$("$FSVOL" re-add "$d/mnt" "$d/stranger" 2>&1) && fail "re-add of a stranger accepted"
[[ $out == *"not a former member"* ]] || fail "re-add of a stranger: $out"
fsvol_umount "$d/mnt"
}

for part in ${PARTS:-4 5 6}; do # PARTS=5: one alone
	"part$part"
done
echo "PASS"
