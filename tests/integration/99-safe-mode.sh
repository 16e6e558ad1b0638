#!/usr/bin/env bash
# md's safe mode (issue 30 item 4): the superblocks say clean while no write
# has been in flight for safe_mode_delay (200 ms, md's default), dirty again
# before the next write reaches a member:
# - an idle volume: `fsvol detail` says "State : clean", examine too; while
#   writing "active" and the superblocks "active (dirty)"; clean again once idle;
# - each mark is a superblock write on every member, counted (safe_mode_marks);
# - a kill -9 of an idle volume owes no resync (md's point), of a writing one
#   a resync;
# - `ctl safe_mode_delay SECONDS` (md's sysfs value): 0 keeps it dirty from
#   the first write to the umount (a kill then owes a resync); bad values refused;
# - raid0 never goes dirty (md's raid0 marks nothing).
# Every wait is for an event (a state polled with a bound), never for the delay.
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio

"$FSVOL" create -l raid5 -c 64K -s 16M "$T"/m{0,1,2} >/dev/null
M=$T/mnt
fsvol_mount "$M" "$T"/m{0,1,2}
state() { jq -r .array_state "$M/status.json"; }
detail_state() { "$FSVOL" detail "$M" | sed -n 's/^ *State : //p'; }
sb_state() { "$FSVOL" examine "$T/m0" | sed -n 's/^ *State : //p'; }
is_detail() { [[ $(detail_state) == "$1" ]]; }
writer_start() {
	fio --name=w --filename="$M/volume" --rw=randwrite --bs=4k --direct=1 --ioengine=psync \
		--time_based --runtime=120 --output=/dev/null >/dev/null 2>&1 &
	WPID=$!
	track_pid "$WPID"
}
writer_stop() { kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; _drop_cleanup pid "$WPID"; }
crash() { # kill -9 of the daemon, its dead mount removed
	local pid
	pid=$(daemon_pid "$M")
	kill -KILL "$pid"
	wait_for 20 "the daemon gone" _gone "$pid"
	"$FSVOL" umount "$M" >/dev/null 2>&1 || fail "umount of the dead mount"
	_drop_cleanup fsvol "$M" "$pid"
}

# --- idle after the mount: clean (a clean volume mounts clean), 200 ms by default
[[ $(jq .safe_mode_delay_ms "$M/status.json") == 200 ]] || fail "default safe_mode_delay: $(jq .safe_mode_delay_ms "$M/status.json")"
wait_for 10 "detail says clean on an idle volume" is_detail clean
[[ $(sb_state) == clean ]] || fail "examine of an idle volume: $(sb_state)"
grep -q "array_state clean, safe_mode_delay 0.200 s" "$M/status" || fail "status: $(grep array_state "$M/status")"

# --- writing: active (dirty on disk); idle again: clean
writer_start
wait_for 20 "detail says active while writing" is_detail active
[[ $(sb_state) == "active (dirty)" ]] || fail "examine while writing: $(sb_state)"
writer_stop
wait_for 20 "clean again once idle" is_detail clean
[[ $(sb_state) == clean ]] || fail "examine once idle again: $(sb_state)"

# --- one write from clean: two marks (dirty, then clean), each a superblock
# write on every member, beside the write's own data, parity and bitmap writes
echo reset >"$M/ctl"
m0=$(jq .safe_mode_marks "$M/status.json")
bw0=$(jq .bitmap.block_writes "$M/status.json")
OFF=$((3 * 65536))
dd if=/dev/urandom of="$M/volume" bs=4K count=1 seek=$((OFF / 4096)) oflag=direct conv=notrunc status=none
wait_for 20 "clean after the write" jq_true '.array_state == "clean"' "$M/status.json"
cp "$M/stats.json" "$M/status.json" "$T/"
marks=$(($(jq .safe_mode_marks "$T/status.json") - m0))
bw=$(($(jq .bitmap.block_writes "$T/status.json") - bw0))
((marks == 2)) || fail "one write from clean made $marks marks (want dirty + clean)"
map=$("$FSVOL" map --json -l raid5 -n 3 -c 64K -s 16M "$OFF" 4096)
for i in 0 1 2; do
	dp=$(jq "[.extents[], .parity[] | select(.member == $i)] | length" <<<"$map")
	w=$(member_stat "$T" $i writes)
	((w == dp + bw / 3 + marks)) || fail "m$i: $w writes, want $dp data/parity + $((bw / 3)) bitmap + $marks superblocks"
done
note "one 4K write from clean: per member data/parity + $((bw / 3)) bitmap + $marks superblock writes"

# --- a kill -9 while idle (clean) owes no resync; while writing, a resync
crash
[[ $(sb_state) == clean ]] || fail "killed while idle: examine says $(sb_state)"
fsvol_mount "$M" "$T"/m{0,1,2} 2>"$T/mount.err"
grep -q "not shut down cleanly" "$T/mount.err" && fail "an idle volume killed owes a resync: $(cat "$T/mount.err")"
jq_true '.resync_pending == false and .sync == null' "$M/status.json" || fail "a resync after an idle kill: $(cat "$M/status")"
writer_start
wait_for 20 "active while writing" jq_true '.array_state == "active"' "$M/status.json"
crash
writer_stop
[[ $(sb_state) == "active (dirty)" ]] || fail "killed while writing: examine says $(sb_state)"
fsvol_mount "$M" "$T"/m{0,1,2} 2>"$T/mount.err"
grep -q "not shut down cleanly" "$T/mount.err" || fail "no resync after a kill while writing: $(cat "$T/mount.err")"
wait_resync "$M"
wait_for 20 "clean once the resync is done and idle" jq_true '.array_state == "clean"' "$M/status.json"

# --- safe_mode_delay: md's value in seconds; 0 keeps the volume dirty
echo "safe_mode_delay 0.5" >"$M/ctl"
[[ $(jq .safe_mode_delay_ms "$M/status.json") == 500 ]] || fail "safe_mode_delay 0.5: $(jq .safe_mode_delay_ms "$M/status.json") ms"
for bad in "x" "0.0001" "1e3" "3601"; do
	expect_fail_msg "safe_mode_delay $bad" "$FSVOL" ctl "$M" safe_mode_delay "$bad"
done
echo "safe_mode_delay 0" >"$M/ctl"
dd if=/dev/urandom of="$M/volume" bs=4K count=1 seek=7 oflag=direct conv=notrunc status=none
[[ $(state) == active ]] || fail "after a write with safe_mode_delay 0: $(state)"
marks=$(jq .safe_mode_marks "$M/status.json")
echo "safe_mode_delay 0" >"$M/ctl" # wakes the metadata thread: it looks, and leaves it dirty
crash
[[ $(sb_state) == "active (dirty)" ]] || fail "safe_mode_delay 0, killed idle: examine says $(sb_state)"
fsvol_mount "$M" "$T"/m{0,1,2} 2>"$T/mount.err"
grep -q "not shut down cleanly" "$T/mount.err" || fail "safe_mode_delay 0: no resync owed after a kill: $(cat "$T/mount.err")"
wait_resync "$M"
fsvol_umount "$M"
[[ $(sb_state) == clean ]] || fail "after a clean umount: $(sb_state)"
note "safe_mode_delay 0: dirty from the first write ($marks marks) until the kill, a resync after it"

# --- rmw_level is a parity knob; raid0 has no safe-mode marks (md's raid0 marks nothing)
"$FSVOL" create -l raid0 -c 64K -s 8M "$T"/z{0,1} >/dev/null
fsvol_mount "$T/z" "$T"/z{0,1}
expect_fail_msg "raid0 has no parity" "$FSVOL" ctl "$T/z" rmw_level 1
echo reset >"$T/z/ctl"
dd if=/dev/urandom of="$T/z/volume" bs=64K count=2 oflag=direct conv=notrunc status=none
jq_true '.array_state == "clean" and .safe_mode_marks == 0' "$T/z/status.json" ||
	fail "raid0 after writes: $(jq -c '[.array_state, .safe_mode_marks]' "$T/z/status.json")"
[[ $(jq '[.members[].writes] | add' "$T/z/stats.json") == 2 ]] || fail "raid0: member writes beside the data"
fsvol_umount "$T/z"
echo "PASS"
