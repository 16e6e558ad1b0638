#!/usr/bin/env bash
# Issue 20 point 1: grow a raid5 from 4 to 5 members online (fsvol grow
# --add), under a verifying fio and an acknowledging writer, with kill -9 three
# times at random points of the reshape: each plain mount resumes it, nothing
# acknowledged is lost, fio's data verifies, the capacity grows by a member,
# a scrub finds 0 mismatches (tests/reshape_lib.sh); power cuts placed inside
# the first windows (powercut-after K) resume from the backup. Then what the reshape
# shows: status (mdstat's "reshape = x%"), status.json, fsvol detail, the trace
# (member I/O labelled reshape), the member counters, an NBD connection that
# sees the new size; and what grow refuses.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"

reshape_crash raid5 4 1 "-l raid5 -c 64K" "" $((4 * 32 * MiB))
# power cuts inside the first windows, the ones backed up (their new rows
# overlap old rows not yet moved)
reshape_cuts cuts 4 1 "-l raid5 -c 64K" "" 12 14

# --- what a reshape shows, and what it costs, on a volume exported over NBD too
d=$T/show
mkdir -p "$d"
S=$d/nbd.sock
uri() { echo "nbd+unix:///?socket=$S"; }
"$FSVOL" create -l raid5 -c 64K -s 32M "$d"/m{0,1,2,3} >/dev/null || fail "show: create"
truncate -s 40M "$d/new"
fsvol_mount --nbd="unix:$S" "$d/mnt" "$d"/m{0,1,2,3}
random_file "$d/data" $((96 * MiB))
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
has_nbdinfo=0
if command -v nbdinfo >/dev/null; then
	has_nbdinfo=1
	[[ $(nbdinfo --size "$(uri)") -eq $((96 * MiB)) ]] || fail "NBD size before the reshape: $(nbdinfo --size "$(uri)")"
fi
# refused: nothing to change, no spare for a 5th member
expect_fail_msg "nothing to change" "$FSVOL" grow "$d/mnt" --chunk 64K
expect_fail_msg "needs a spare for raid device 4" "$FSVOL" grow "$d/mnt" --raid-devices 5
expect_fail_msg "shrinking is not supported" "$FSVOL" grow "$d/mnt" --raid-devices 3
echo reset >"$d/mnt/ctl"
reshape_speed "$d/mnt" 3000
"$FSVOL" grow "$d/mnt" --add "$d/new" >/dev/null || fail "show: grow"
reshape_wait_past "$d/mnt" 5
expect_fail_msg "already under way" "$FSVOL" grow "$d/mnt" --chunk 128K
grep -q "reshape = [0-9.]*% ([0-9]*/131072) raid5 4 -> raid5 5 members, chunk 64K -> 64K, delta +1" "$d/mnt/status" ||
	fail "MNT/status during the reshape: $(cat "$d/mnt/status")"
grep -q "\[.*>.*\]  reshape = " "$d/mnt/status" || fail "no mdstat progress line: $(cat "$d/mnt/status")"
[[ $(jq -r '.sync.action + " " + .sync.state + " " + (.reshape.new_members | tostring)' "$d/mnt/status.json") == \
	"reshape running 5" ]] || fail "status.json during the reshape: $(cat "$d/mnt/status.json")"
cp "$d/mnt/status.json" "$d/status.json"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	/usr/bin/python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$(dirname "$0")/../../docs/status.schema.json" "$d/status.json" ||
		fail "status.json during a reshape does not validate: $(cat "$d/status.json")"
fi
out=$("$FSVOL" detail "$d/mnt")
# clean or active: md's safe mode marks an idle volume clean while it reshapes
grep -Eq "State : (active|clean), reshaping" <<<"$out" || fail "detail: no reshaping state: $out"
grep -q "Reshape Status : [0-9]*% complete" <<<"$out" || fail "detail: no Reshape Status: $out"
grep -q "Delta Devices : 1, (4->5)" <<<"$out" || fail "detail: no Delta Devices: $out"
grep -q '^fsvol_md_state{volume="[^"]*",state="reshape"} 1$' "$d/mnt/metrics" ||
	fail "metrics: state reshape not 1: $(grep fsvol_md_state "$d/mnt/metrics")"
# the trace: each window one line labelled reshape, its member I/O under it
"$FSVOL" trace --json -n 3 "$d/mnt" >"$d/trace.json" &
tracer=$!
_push_cleanup pid "$tracer"
timeout 60 tail --pid="$tracer" -f /dev/null || fail "fsvol trace -n 3 did not end during the reshape"
summary=$(jq -c '[.dev, .op, .why, .parent]' "$d/trace.json" | sort | uniq -c)
jq -s -e 'any(.[]; .dev == -1 and .why == "reshape")' "$d/trace.json" >/dev/null ||
	fail "no reshape window in the trace: $summary"
jq -s -e 'any(.[]; .dev == 4 and .why == "reshape" and .op == "write")' "$d/trace.json" >/dev/null ||
	fail "no reshape write to the new member in the trace: $summary"
# reads and writes go on meanwhile
vol_cmp "$d/data" "$d/mnt/volume" $((96 * MiB)) || fail "data differs during the reshape"
dd if="$d/data" of="$d/mnt/volume" bs=1M count=8 seek=40 skip=40 oflag=direct conv=notrunc status=none
reshape_speed "$d/mnt" 200000
reshape_wait_done "$d/mnt"
[[ $(size_of "$d/mnt/volume") -eq $((128 * MiB)) ]] || fail "FUSE size after the reshape: $(size_of "$d/mnt/volume")"
((has_nbdinfo)) && { [[ $(nbdinfo --size "$(uri)") -eq $((128 * MiB)) ]] ||
	fail "a new NBD connection sees $(nbdinfo --size "$(uri)") bytes, not 128M"; }
# what it cost, below the layer (the foreground above: 96 MiB read, 8 MiB written)
vr=$(jq .volume.read_bytes "$d/mnt/stats.json")
mr=$(jq '[.members[].read_bytes] | add' "$d/mnt/stats.json")
mw=$(jq '[.members[].write_bytes] | add' "$d/mnt/stats.json")
nw=$(jq '.members[] | select(.index == 4) | .write_bytes' "$d/mnt/stats.json")
((nw >= 32 * MiB && mw >= 160 * MiB && mr >= 96 * MiB)) ||
	fail "member counters: $mr read, $mw written ($nw to the new member)"
note "show: raid5 4 -> 5 members of 32 MiB, member bytes read $mr, written $mw ($nw to the new member); the volume read $vr"
vol_cmp "$d/data" "$d/mnt/volume" $((96 * MiB)) || fail "data differs after the reshape"
dd if="$d/mnt/volume" bs=1M skip=96 count=32 iflag=direct status=none | cmp -n $((32 * MiB)) - /dev/zero || fail "the new space does not read as zeros"
fsvol_umount "$d/mnt"
"$FSVOL" examine "$d/m0" | grep -q "Raid Devices : 5" || fail "examine after the reshape: $("$FSVOL" examine "$d/m0")"

echo "PASS"
