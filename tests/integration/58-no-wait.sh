#!/usr/bin/env bash
# No thread waits on a member: a raid0 over four member files on a real
# filesystem, 4K random reads at QD128 through FUSE (fio, io_uring, O_DIRECT).
# The FUSE workers hand each request to the engine and go back to /dev/fuse
# (or the ring); file members' I/O runs on a bounded set of ring threads. So
# while 128 requests are outstanding the daemon keeps a fixed, small number
# of threads (the kernel's io-wq workers, iou-*, aside), where a worker that
# waited for its disk would need one thread per request in flight. Every
# read completes (fio's verify of data written first). Then members on
# tmpfs, whose copies run in the submitting thread: unaligned writes to a
# raid5 read back equal. Runs under FSVOL_FUSE_TRANSPORT like the other
# FUSE tests.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq
read -ra m <<<"$(members "$T/m" 4)"
"$FSVOL" create -l raid0 -c 64K -s 64M "${m[@]}" >/dev/null || fail "create failed"
fsvol_mount "$T/mnt" "${m[@]}"
pid=$(daemon_pid "$T/mnt")
fio --name=w --filename="$T/mnt/volume" --rw=write --bs=1M --iodepth=4 --ioengine=io_uring --direct=1 \
	--size=200M --verify=crc32c --do_verify=0 --verify_state_save=0 --output="$T/w.txt" || fail "fio write failed"

# the bound: main, 2 FUSE workers per CPU, one ring queue thread per possible
# CPU, at most 4 member ring threads, and a few spare for the volume's own
# (bitmap, model, a background pass)
cpus=$(nproc)
possible=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))
bound=$((1 + 2 * cpus + possible + 4 + 4))
fio --name=r --filename="$T/mnt/volume" --rw=randread --bs=4k --iodepth=128 --ioengine=io_uring --direct=1 \
	--size=200M --time_based --runtime=3 --output-format=json --output="$T/r.json" &
fio_pid=$!
track_pid "$fio_pid"
max=0
while kill -0 "$fio_pid" 2>/dev/null; do
	n=0
	for c in /proc/"$pid"/task/*/comm; do
		name=$(cat "$c" 2>/dev/null) || continue
		[[ $name == iou-* ]] || n=$((n + 1))
	done
	((n > max)) && max=$n
	sleep 0.2 # sampling the thread count while fio runs, not a synchronisation
done
wait "$fio_pid" || fail "fio randread failed"
ios=$(jq '.jobs[0].read.total_ios' "$T/r.json")
[[ $ios -gt 0 ]] || fail "no reads completed"
note "daemon threads (io-wq aside): at most $max while 128 reads were outstanding (bound $bound); $ios reads"
((max <= bound)) || fail "the daemon ran $max threads (bound $bound): a thread per request in flight?"
fio --name=v --filename="$T/mnt/volume" --rw=read --bs=1M --iodepth=4 --ioengine=io_uring --direct=1 \
	--size=200M --verify=crc32c --verify_only --verify_state_save=0 --output="$T/v.txt" || fail "verify of the written data failed: $(tail -5 "$T/v.txt")"
fsvol_umount "$T/mnt"

# members on tmpfs: their copy is done in the submitting thread (io_uring would
# hand it to an io-wq worker); a raid5 takes unaligned writes and reads them back
if [[ -d /dev/shm && -w /dev/shm ]]; then
	S=$(mktemp -d /dev/shm/fsvol-58.XXXXXX)
	_push_cleanup path "$S"
	"$FSVOL" create -l raid5 -c 16K -s 16M "$S/t0" "$S/t1" "$S/t2" >/dev/null || fail "create on tmpfs failed"
	fsvol_mount --buffered "$T/shm" "$S/t0" "$S/t1" "$S/t2"
	random_file "$T/data" $((30 * MiB))
	dd if="$T/data" of="$T/shm/volume" bs=12K oflag=direct conv=notrunc status=none || fail "tmpfs: write failed"
	dd if="$T/shm/volume" of="$T/back" bs=1M count=30 iflag=direct status=none || fail "tmpfs: read failed"
	cmp -s "$T/data" "$T/back" || fail "tmpfs members: data read back differs"
	fsvol_umount "$T/shm"
fi
