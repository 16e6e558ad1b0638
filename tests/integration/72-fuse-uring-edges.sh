#!/usr/bin/env bash
# FUSE over io_uring at its edges (the fuse module's enable_uring set Y for
# the test and restored after; every mount checked to be served by the ring):
# the largest requests (1 MiB writes, max_write) with fsyncs, verified; a
# refused ctl command's reason read back while 64 requests sit on the ring;
# clients killed with requests in flight (interrupted requests) leave the
# daemon serving; SIGTERM under load ends the daemon (the application gets
# errors, not a hang) with clean superblocks; kill -9 under load leaves a
# dead mount that `fsvol umount` removes, and the volume mounts again.
# fsvol-test: alone (sets the fuse module's enable_uring (machine-wide) for its mounts)
. "$(dirname "$0")/../lib.sh"
requires_root
requires fio
requires jq
param=/sys/module/fuse/parameters/enable_uring
if [[ ! -w $param ]]; then
	echo "SKIP: no writable $param (FUSE over io_uring needs Linux 6.14+ with CONFIG_FUSE_IO_URING)"
	exit 77
fi
_push_cleanup sysparam "$param" "$(cat "$param")"
echo Y >"$param"
export FSVOL_FUSE_TRANSPORT=uring # fsvol_mount fails a mount the ring does not serve

M=("$T/m0" "$T/m1" "$T/m2" "$T/m3")
"$FSVOL" create -l raid5 -c 64K -s 32M "${M[@]}" >/dev/null || fail "create"
MNT=$T/mnt
reads() { jq '.volume.reads' "$MNT/stats.json"; }
ring_errors() { grep -c "FUSE over io_uring: queue" "$DAEMON_LOG" || true; }

# load SECS: fio keeps 64 requests (random 4K reads and writes) in flight; $lpid
load() {
	local before
	before=$(reads)
	fio --name=load --filename="$MNT/volume" --rw=randrw --bs=4k --iodepth=64 --ioengine=io_uring --direct=1 \
		--time_based --runtime="$1" --output="$T/load.out" >/dev/null 2>&1 &
	lpid=$!
	track_pid "$lpid"
	wait_for 60 "fio's reads do not reach the volume" _read_past "$before"
}
_read_past() { (($(reads) > $1 + 200)); }

fsvol_mount "$MNT" "${M[@]}"

# --- 1 MiB writes (each fills a ring entry's payload) with fsyncs, read back -----------
fio --name=big --filename="$MNT/volume" --rw=randwrite --bs=1M --iodepth=8 --ioengine=io_uring --direct=1 \
	--size=64M --fsync=4 --verify=crc32c --do_verify=1 --verify_state_save=0 --output="$T/big.out" >/dev/null 2>&1 ||
	fail "1 MiB writes with fsync, verified: $(cat "$T/big.out")"
(($(jq '.volume.flushes' "$MNT/stats.json") > 0)) || fail "no fsync reached the volume"

# --- ctl while the ring is full: a refused command's reason reads back -----------------
load 30
out=$("$FSVOL" ctl "$MNT" fail 9 2>&1) && fail "ctl fail 9 accepted on 4 members"
[[ $out == *"expected a member in a raid role"* ]] || fail "ctl fail 9: $out"
exec 3<>"$MNT/ctl"
printf 'fail 9' >&3 2>/dev/null && fail "a write of 'fail 9' to MNT/ctl succeeded"
reason=$(cat <&3)
exec 3>&-
[[ $reason == *"expected a member in a raid role"* ]] || fail "MNT/ctl read after a refusal: '$reason'"
find "$MNT" -maxdepth 1 -name stats.json | grep -q . || fail "readdir under load lacks stats.json"

# --- clients killed with requests in flight: the daemon keeps serving ------------------
# (--thread: the job runs in the process killed; a job process of its own
# outlives its killed parent, waiting on it for good)
_victims_gone() { ! pgrep -f "name=victim --filename=$MNT/volume" >/dev/null; }
for _ in 1 2 3; do
	fio --name=victim --filename="$MNT/volume" --rw=randread --bs=64k --iodepth=128 --ioengine=io_uring \
		--direct=1 --time_based --runtime=30 --thread --output=/dev/null >/dev/null 2>&1 &
	vpid=$!
	before=$(reads)
	wait_for 60 "the victim's reads do not reach the volume" _read_past "$before"
	kill -KILL "$vpid"
	wait "$vpid" 2>/dev/null || true # killed, as meant
done
wait_for 30 "killed clients still running: $(pgrep -af "name=victim --filename=$MNT/volume")" _victims_gone
dd if="$MNT/volume" of=/dev/null bs=1M count=16 iflag=direct status=none || fail "read after killed clients"
_alive "$lpid" || fail "the load stopped when other clients were killed: $(cat "$T/load.out")"
(($(ring_errors) == 0)) || fail "ring errors in the log: $(grep 'FUSE over io_uring' "$DAEMON_LOG")"

# --- SIGTERM under load: the daemon ends, the application gets errors -------------------
sigterm_under_load "$MNT" "$lpid" "${M[@]}"

# --- kill -9 under load: a dead mount, removed; the volume mounts again ------------------
fsvol_mount "$MNT" "${M[@]}"
load 30
pid=$(daemon_pid "$MNT")
kill -KILL "$pid"
wait_for 60 "fio still running after its daemon was killed" _gone "$lpid"
_drop_cleanup pid "$lpid"
out=$("$FSVOL" umount "$MNT" 2>&1) || fail "umount of a dead mount: $out"
[[ $out == *"daemon was gone; mount removed"* ]] || fail "umount of a dead mount said: $out"
_drop_cleanup fsvol "$MNT" "$pid"
fsvol_mount "$MNT" "${M[@]}" 2>"$T/mount.err"
grep -q "not shut down cleanly" "$T/mount.err" || fail "no resync after kill -9: $(cat "$T/mount.err")"
wait_resync "$MNT"
out=$("$FSVOL" scrub "$MNT")
[[ $out == *"check done"*", 0 mismatches"* ]] || fail "scrub after kill -9: $out"
fsvol_umount "$MNT"
note "FUSE over io_uring: 1 MiB writes, ctl under load, killed clients, SIGTERM and kill -9 under load"
