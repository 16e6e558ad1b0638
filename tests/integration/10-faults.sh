#!/usr/bin/env bash
# Member failures in the middle of a workload: a member starts returning I/O
# errors (MNT/ctl "error N", like a dying disk), the engine fails it and serves
# from redundancy. fio's verify must see every byte right; the failed member
# is recorded in the superblocks, and the volume reassembles degraded.
. "$(dirname "$0")/../lib.sh"
requires fio

# run LEVEL NMEMBERS "FAIL..." [create options]
run() {
	local level=$1 n=$2 fails=$3
	shift 3
	local d=$T/$level members=() i
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	"$FSVOL" create -l "$level" -c 64K -s 24M "$@" "${members[@]}" >/dev/null
	fsvol_mount "$d/mnt" "${members[@]}"
	local size=$(($(stat -c %s "$d/mnt/volume") / MiB))
	((size > 40)) && size=40
	# write with checksums, fail members half-way, then verify everything
	fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=8 --size=${size}M --verify=crc32c --do_verify=0 \
		--verify_state_save=0 --randseed=3 --output="$d/fio-w.out" &
	local fio_pid=$!
	track_pid "$fio_pid"
	sleep 0.5
	for i in $fails; do echo "error $i" >"$d/mnt/ctl"; done
	wait "$fio_pid" || fail "$level: writes failed after member(s) $fails started failing"
	fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=8 --size=${size}M --verify=crc32c --verify_only \
		--verify_state_save=0 --randseed=3 --output="$d/fio-v.out" ||
		fail "$level: verify failed with member(s) $fails failed: $(tail -5 "$d/fio-v.out")"
	for i in $fails; do
		grep -q "m$i: .* failed" "$d/mnt/status" || fail "$level: member $i not shown failed"
	done
	grep -q degraded "$d/mnt/status" || fail "$level: status does not say degraded"
	fsvol_umount "$d/mnt"
	# the survivors' superblocks say which member failed; reassemble without it
	local survivors=()
	for ((i = 0; i < n; i++)); do [[ " $fails " == *" $i "* ]] || survivors+=("${members[i]}"); done
	fsvol_mount "$d/mnt" "${survivors[@]}"
	fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=8 --size=${size}M --verify=crc32c --verify_only \
		--verify_state_save=0 --randseed=3 --output="$d/fio-v2.out" ||
		fail "$level: verify after reassembly failed"
	fsvol_umount "$d/mnt"
	# the failed member is refused as stale when given back
	expect_fail_msg "stale" "$FSVOL" mount "$d/mnt" "${members[@]}"
}

run raid1 2 "1"
run raid10 4 "0"
run raid5 4 "2"
run raid6 5 "1 3"
