#!/usr/bin/env bash
# raid10 grows as md's does (raid10_check_reshape): near and offset layouts,
# more members or a new chunk, the copies staying.
#  - n2 x4 -> x5 (fsvol grow --add) under a verifying fio and an
#    acknowledging writer, kill -9 twice at random points: each plain mount
#    resumes, nothing acknowledged is lost, fio verifies, the capacity grows
#    by half a member, a scrub finds 0 mismatches, fsvol-verify agrees
#    (tests/reshape_lib.sh).
#  - o2 x4, chunk 64K -> 128K (every window through the backup: its new rows
#    are its old ones) the same way with power cuts (volatile member caches,
#    `fsvol ctl MNT powercut`), then cuts placed inside windows
#    (`powercut-after K`): a resume writes the window back from its backup.
#  - n2 x4 -> x5 with member 1 failing by I/O errors inside the critical
#    section and a power cut in a backed-up window: the window comes back
#    from its backup's other copies; the reshape ends degraded, a spare is
#    rebuilt, scrub and fsvol-verify are clean.
#  - what a raid10 reshape shows: status (md's [5/5] [UUUUU] counts the new
#    geometry's roles), status.json, fsvol detail, metrics, then n2 -> o2 on
#    the same members (md allows near <-> offset); and what grow
#    refuses with md's reasons, nothing touched: the far layout (not even
#    the spare given with --add is added), fewer members, other copies.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"
SCHEMA=$(cd "$(dirname "$0")/../.." && pwd)/docs/status.schema.json
_settled() { jq -e '.reshape == null and (.sync.state // "none") != "running"' "$1/status.json" >/dev/null; }
_healthy() { jq -e '.state == "healthy" and .resync_pending == false and (.sync.state // "none") != "running"' "$1/status.json" >/dev/null; }
cd "$T" # fio may leave state files in the working directory

export RESHAPE_MEMBER=8M RESHAPE_ROUNDS=2 RESHAPE_SPEED=1500
reshape_crash n2 4 1 "-l raid10 --layout n2 -c 64K" "" $((5 * 8 * MiB / 2))
grep -q "reshape done: raid10, 5 members, chunk 65536, capacity 20M" "$DAEMON_LOG" || fail "n2: no reshape to 5 members in the log"
RESHAPE_CUT=powercut reshape_crash o2 4 0 "-l raid10 --layout o2 -c 64K" "--chunk 128K" $((4 * 8 * MiB / 2))
grep -q "reshape done: raid10, 4 members, chunk 131072" "$DAEMON_LOG" || fail "o2: no reshape to 128K in the log"
"$FSVOL" examine "$T/o2/m0" | grep -q "Layout : o2" || fail "o2: the layout changed: $("$FSVOL" examine "$T/o2/m0")"
reshape_cuts o2cuts 4 0 "-l raid10 --layout o2 -c 64K" "--chunk 128K" 13 18 9

# --- n2 x4 -> x5 degraded: member 1 dies by I/O errors in the critical
# section (windows 0-3, whose new rows overlap old ones), then the power is
# cut inside a backed-up window: the backup's pieces lack member 1's copies,
# so the mount reads them from their other copy and writes the window back
reshape_deg_start deg "$T/deg" -l raid10 --layout n2 -c 64K -s 4M
# K member writes from a window's start: the failure's superblocks, 8
# pieces (2 per member left), the backup's superblocks, then the new rows
k=0
for K in 22 30 18; do
	pid=$(daemon_pid "$d/mnt")
	wait_for 60 "deg: the reshape did not move" _moved "$d/mnt"
	((k++)) || echo "fault 1 error=all" >"$d/mnt/ctl"
	echo "powercut-after $K" >"$d/mnt/ctl"
	wait_for 60 "deg: no power cut after $K member writes" _dead "$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "deg: umount of the dead mount failed"
	_drop_cleanup fsvol "$d/mnt" "$pid"
	fsvol_mount --force "${lopts[@]}" "$d/mnt" "${live[@]}"
	cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "deg: data differs after a cut $K writes into a degraded window"
	tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -q "backup read from another copy" && break
done
other=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -c "backup read from another copy" || true)
note "deg: $k cut(s) after member 1 failed, $other window(s) whose backup pieces came from their other copy"
((other > 0)) || fail "deg: no cut landed in a backed-up window after the failure (K = 22 30 18)"
grep -q "5 members \[5/4\] \[U_UUU\]" "$d/mnt/status" || fail "deg: md's counts: $(head -n 1 "$d/mnt/status")"
echo "sync_speed_max 200000" >"$d/mnt/ctl"
# its resync (a crash) waits for the volume to be whole: not waited for here
wait_for 60 "deg: the reshape did not end: $(cat "$d/mnt/status")" _settled "$d/mnt"
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "deg: data differs after the degraded reshape"
for i in 0 2 3 4; do "$FSVOL" ctl "$d/mnt" fault "$i" none >/dev/null || fail "deg: fault $i none"; done
truncate -s 8M "$d/s0"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "deg: add a spare"
wait_for 60 "deg: the spare was not rebuilt: $(cat "$d/mnt/status")" _healthy "$d/mnt"
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "deg: data differs after the rebuild"
out=$("$FSVOL" scrub "$d/mnt")
[[ $out == *"check done"*", 0 mismatches"* ]] || fail "deg: scrub: $out"
fsvol_umount "$d/mnt"
out=$("$FSVOL_VERIFY" "${live[@]}" "$d/s0") || fail "deg: fsvol-verify: $out"
note "deg: fsvol-verify: $out"

# --- what it shows, on a small n2 x4 -> x5
d=$T/show
mkdir -p "$d"
"$FSVOL" create -l raid10 --layout n2 -c 64K -s 4M "$d"/m{0,1,2,3} >/dev/null || fail "show: create"
truncate -s 8M "$d/new" "$d/new2"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
random_file "$d/data" $((8 * MiB))
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
# refused, md's reasons: fewer members, other copies, nothing to change
expect_fail_msg "shrinking is not supported" "$FSVOL" grow "$d/mnt" --raid-devices 3
expect_fail_msg "keeps its 2 copies" "$FSVOL" grow "$d/mnt" --layout n3
expect_fail_msg "cannot be reshaped to the far layout" "$FSVOL" grow "$d/mnt" --layout f2
expect_fail_msg "keeps its 2 copies" "$FSVOL" grow "$d/mnt" --layout o3 --add "$d/new2"
# a 5 MiB window (lcm of 128K and 5 x 1M) needs a 2 MiB backup per member: no room in front of the data
expect_fail_msg "no room for the reshape's backup" "$FSVOL" grow "$d/mnt" --chunk 1M --add "$d/new2"
[[ $(jq '.members | length' "$d/mnt/status.json") -eq 4 ]] || fail "show: a refused grow added its spare: $(cat "$d/mnt/status")"
reshape_speed "$d/mnt" 400
"$FSVOL" grow "$d/mnt" --add "$d/new" >/dev/null || fail "show: grow"
reshape_wait_past "$d/mnt" 5
grep -q "reshape = [0-9.]*% ([0-9]*/10240) raid10 4 -> raid10 5 members, chunk 64K -> 64K, delta +1$" "$d/mnt/status" ||
	fail "MNT/status during the reshape: $(cat "$d/mnt/status")"
grep -q "active raid10 n2 chunk 64K, 5 members \[5/5\] \[UUUUU\]" "$d/mnt/status" ||
	fail "MNT/status: md's counts during the reshape: $(cat "$d/mnt/status")"
[[ $(jq -r '[.sync.action, .reshape.old_members, .reshape.new_members, .reshape.new_layout] | map(tostring) | join(" ")' \
	"$d/mnt/status.json") == "reshape 4 5 n2" ]] || fail "status.json during the reshape: $(cat "$d/mnt/status.json")"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	cp "$d/mnt/status.json" "$d/status.json"
	/usr/bin/python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$SCHEMA" "$d/status.json" ||
		fail "status.json during a raid10 reshape does not validate: $(cat "$d/status.json")"
fi
out=$("$FSVOL" detail "$d/mnt")
# clean or active: md's safe mode marks an idle volume clean while it reshapes
grep -Eq "State : (active|clean), reshaping" <<<"$out" || fail "detail: no reshaping state: $out"
grep -q "Delta Devices : 1, (4->5)" <<<"$out" || fail "detail: no Delta Devices: $out"
grep -q '^fsvol_md_state{volume="[^"]*",state="reshape"} 1$' "$d/mnt/metrics" ||
	fail "metrics: state reshape not 1: $(grep fsvol_md_state "$d/mnt/metrics")"
expect_fail_msg "already under way" "$FSVOL" grow "$d/mnt" --chunk 128K
# reads during it: below the position in the new geometry, above it in the old
vol_cmp "$d/data" "$d/mnt/volume" $((8 * MiB)) || fail "show: data differs during the reshape"
echo reset >"$d/mnt/ctl"
reshape_speed "$d/mnt" 200000
reshape_wait_done "$d/mnt"
wait_for 30 "show: the FUSE size did not become 10M after the reshape" _reshape_size_is "$d/mnt/volume" $((10 * MiB))
vol_cmp "$d/data" "$d/mnt/volume" $((8 * MiB)) || fail "show: data differs after the reshape"
mr=$(jq '[.members[].read_bytes] | add' "$d/mnt/stats.json")
mw=$(jq '[.members[].write_bytes] | add' "$d/mnt/stats.json")
note "show: the rest of a raid10 n2 4 -> 5 reshape of 4 MiB members: member bytes read $mr, written $mw"
# near -> offset on the same members (md allows it; every window through the backup)
reshape_speed "$d/mnt" 400
"$FSVOL" grow "$d/mnt" --layout o2 >/dev/null || fail "show: grow --layout o2"
reshape_wait_past "$d/mnt" 5
grep -q "raid10 5 -> raid10 5 members, chunk 64K -> 64K, delta +0, layout n2 -> o2$" "$d/mnt/status" ||
	fail "MNT/status during n2 -> o2: $(cat "$d/mnt/status")"
out=$("$FSVOL" detail "$d/mnt")
grep -q "New Layout : o2" <<<"$out" || fail "detail: no New Layout: $out"
reshape_speed "$d/mnt" 200000
reshape_wait_done "$d/mnt"
vol_cmp "$d/data" "$d/mnt/volume" $((8 * MiB)) || fail "show: data differs after n2 -> o2"
fsvol_umount "$d/mnt"
out=$("$FSVOL" examine "$d/m0")
if ! grep -q "Raid Devices : 5" <<<"$out" || ! grep -q "Layout : o2" <<<"$out"; then
	fail "show: examine after the reshapes: $out"
fi

# --- the far layout: refused, nothing touched (not even the spare added)
d=$T/far
mkdir -p "$d"
"$FSVOL" create -l raid10 --layout f2 -c 64K -s 4M "$d"/m{0,1,2,3} >/dev/null || fail "far: create"
truncate -s 8M "$d/new"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
expect_fail_msg "far layout (f2) cannot be reshaped" "$FSVOL" grow "$d/mnt" --add "$d/new"
expect_fail_msg "far layout (f2) cannot be reshaped" "$FSVOL" grow "$d/mnt" --chunk 128K
[[ $(jq '.members | length' "$d/mnt/status.json") -eq 4 && $(jq '.reshape' "$d/mnt/status.json") == null ]] ||
	fail "far: a refused grow touched the volume: $(cat "$d/mnt/status")"
fsvol_umount "$d/mnt"
out=$("$FSVOL" examine "$d/m0")
if ! grep -q "Raid Devices : 4" <<<"$out" || ! grep -q "Layout : f2" <<<"$out" || grep -q "New Geometry" <<<"$out"; then
	fail "far: a refused grow changed the superblock: $out"
fi

echo "PASS"
