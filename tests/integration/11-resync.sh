#!/usr/bin/env bash
# A killed daemon and what follows (md's dirty-array rules), and scrubbing:
# - a daemon killed mid-write leaves the volume dirty; `fsvol umount` clears the
#   dead mount; the next mount resyncs in the background and the parity then
#   matches the data (checked by the independent fsvol-verify);
# - a dirty volume with a member missing is refused unless forced;
# - `fsvol scrub` finds a corrupted parity block, `--repair` fixes it.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq

wait_sync() { # MNT WHAT: until MNT/status says WHAT is done
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q "$2 done" "$1/status" && return 0
		sleep 0.1
	done
	fail "$2 did not finish: $(cat "$1/status")"
}

"$FSVOL" create -l raid5 -c 64K -s 24M "$T"/m{0,1,2,3} >/dev/null
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
pid=$(daemon_pid "$T/mnt")
fio --name=w --filename="$T/mnt/volume" --rw=randwrite --bs=12k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=70M --time_based --runtime=30 --output=/dev/null >/dev/null 2>&1 &
fio_pid=$!
track_pid "$fio_pid"
# killed while writes are in flight (md's safe mode: an idle volume is clean)
wait_for 30 "fio writing (array_state active)" jq_true '.array_state == "active"' "$T/mnt/status.json"
sleep 1
kill -KILL "$pid"
wait "$fio_pid" 2>/dev/null || true
"$FSVOL" umount "$T/mnt" 2>"$T/umount.err" || fail "umount of a dead mount failed: $(cat "$T/umount.err")"
mountpoint -q "$T/mnt" && fail "dead mount still there"
"$FSVOL" examine "$T/m0" | grep -q "State : active (dirty)" || fail "killed daemon: superblock not dirty"

# dirty + degraded: refused unless forced
expect_fail_msg "dirty degraded" "$FSVOL" mount "$T/mnt" "$T"/m{0,1,2}
mountpoint -q "$T/mnt" && fail "a refused mount left a mount"

# all members: the mount resyncs, after which parity agrees everywhere
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
wait_sync "$T/mnt" resync
grep -q "resync done: 100.0%" "$T/mnt/status" || fail "resync incomplete: $(cat "$T/mnt/status")"
fsvol_umount "$T/mnt"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "after resync and umount: not clean"
"$FSVOL_VERIFY" "$T"/m{0,1,2,3} || fail "parity does not match the data after resync"

# scrub: corrupt 4K of one member's data area behind fsvol's back
dd if=/dev/urandom of="$T/m2" bs=4K count=1 seek=$((256 + 40)) conv=notrunc status=none
"$FSVOL_VERIFY" "$T"/m{0,1,2,3} >/dev/null && fail "fsvol-verify missed a corrupted block"
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
# scrub says what it found in its exit code too: 1 when anything disagreed
rc=0; out=$("$FSVOL" scrub "$T/mnt") || rc=$?
[[ $out == *"check done"*", 1 mismatch"* && $rc -eq 1 ]] || fail "scrub: $out, exit $rc (want 1 mismatch, exit 1)"
rc=0; out=$("$FSVOL" scrub --repair "$T/mnt") || rc=$?
[[ $out == *"repair done"* && $rc -eq 1 ]] || fail "scrub --repair: $out, exit $rc (it found one)"
out=$("$FSVOL" scrub "$T/mnt") || fail "scrub after the repair exited non-zero: $out"
[[ $out == *", 0 mismatches"* ]] || fail "after repair: $out"
fsvol_umount "$T/mnt"
"$FSVOL_VERIFY" "$T"/m{0,1,2,3} || fail "parity does not match the data after repair"

# mirrors: a copy that differs is found and made equal to the first
"$FSVOL" create -l raid1 -s 16M "$T"/r{0,1} >/dev/null
fsvol_mount "$T/mir" "$T"/r{0,1}
dd if=/dev/urandom of="$T/mir/volume" bs=1M count=16 oflag=direct conv=notrunc status=none
fsvol_umount "$T/mir"
dd if=/dev/urandom of="$T/r1" bs=4K count=2 seek=$((256 + 100)) conv=notrunc status=none
fsvol_mount "$T/mir" "$T"/r{0,1}
out=$("$FSVOL" scrub --repair "$T/mir") && fail "raid1 scrub --repair found a mismatch but exited 0"
[[ $out == *"1 mismatch"* ]] || fail "raid1 scrub: $out"
[[ $("$FSVOL" scrub "$T/mir") == *", 0 mismatches"* ]] || fail "raid1 copies still differ after repair"

# --- signals stop a daemon cleanly: the mount goes, the superblock is clean
# SIGTERM to a daemonised mount during writes: acknowledged data survives
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
pid=$(daemon_pid "$T/mnt")
random_file "$T/sig" $MiB
dd if="$T/sig" of="$T/mnt/volume" bs=64K seek=32 oflag=direct conv=notrunc status=none
kill -TERM "$pid"
for ((i = 0; i < 100; i++)); do _alive "$pid" || break; sleep 0.1; done
! _alive "$pid" || fail "SIGTERM: daemon $pid still running"
! mountpoint -q "$T/mnt" || fail "SIGTERM: $T/mnt still mounted"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "SIGTERM: superblock not clean"
# a foreground mount (-f) stops on SIGTERM too, and exits 0 with no complaint
"$FSVOL" mount -f "$T/mnt" "$T"/m{0,1,2,3} 2>"$T/fg.err" &
fg=$!
track_pid "$fg"
for ((i = 0; i < 100; i++)); do mountpoint -q "$T/mnt" && break; sleep 0.1; done
mountpoint -q "$T/mnt" || fail "mount -f: no mount after 10 s"
cmp_at "$T/mnt/volume" "$T/sig" $((2 * MiB)) $MiB
kill -TERM "$fg"
rc=0
wait "$fg" || rc=$?
[[ $rc -eq 0 && ! -s $T/fg.err ]] || fail "mount -f after SIGTERM: exit $rc, stderr: $(cat "$T/fg.err")"
! mountpoint -q "$T/mnt" || fail "mount -f: still mounted after SIGTERM"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "mount -f, SIGTERM: superblock not clean"
