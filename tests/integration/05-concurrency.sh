#!/usr/bin/env bash
# 05-concurrency: parallel writers on overlapping stripes of raid5 and raid6,
# then every stripe's parity recomputed from the member files by fsvol-verify
# (its own GF(2^8) code): zero mismatches. fio --verify=crc32c on raid5/raid6.
# fsvol-verify itself is shown to catch a flipped byte.
. "$(dirname "$0")/../lib.sh"
requires fio
[[ -x $FSVOL_VERIFY ]] || fail "$FSVOL_VERIFY not built (make $FSVOL_BUILD/bin/fsvol-verify)"

FIO_COMMON=(--output-format=terse --ioengine=psync --group_reporting --verify_state_save=0)
cd "$T" # fio may leave state files in the working directory

hammer() { # NAME LEVEL N CHUNK
	local name=$1 d=$T/$1 m=() i cap pids=() p
	mkdir -p "$d"
	for ((i = 0; i < $3; i++)); do m+=("$d/m$i"); done
	"$FSVOL" create -l "$2" -c "$4" -s 16M "${m[@]}" >/dev/null || fail "$name: create"
	fsvol_mount "$d/mnt" "${m[@]}"
	cap=$(size_of "$d/mnt/volume")
	# start from data everywhere, so every stripe is checked with real content
	head -c "$cap" /dev/urandom | dd of="$d/mnt/volume" bs=1M iflag=fullblock oflag=direct conv=notrunc status=none ||
		fail "$name: initial fill failed"
	# 4 fio jobs, random writes of 4K/12K/64K over the whole volume (they overlap)
	fio --name=hammer --filename="$d/mnt/volume" --size="$cap" --rw=randwrite \
		--bssplit=4k/40:12k/30:64k/30 --direct=1 --numjobs=4 --io_size=$((cap / 2)) \
		--randrepeat=0 "${FIO_COMMON[@]}" >"$d/fio.out" 2>&1 &
	pids+=($!)
	# 3 buffered dd writers with odd sizes on one overlapping range (sub-sector RMW)
	for i in 0 1 2; do
		head -c $((3 * MiB)) /dev/urandom >"$d/dd$i"
		dd if="$d/dd$i" of="$d/mnt/volume" bs=$((3000 + i * 1111)) oflag=seek_bytes \
			seek=$((cap / 3 + i * 5000)) conv=notrunc status=none &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail "$name: a writer failed: $(cat "$d/fio.out")"; done
	# the volume reads consistently afterwards
	dd if="$d/mnt/volume" of=/dev/null bs=1M iflag=direct status=none || fail "$name: read after the writers failed"
	fsvol_umount "$d/mnt"
	"$FSVOL_VERIFY" "${m[@]}" >"$d/verify.out" 2>&1 || fail "$name: parity after concurrent writers: $(cat "$d/verify.out")"
	grep -q "P mismatches 0, Q mismatches 0" "$d/verify.out" || fail "$name: verify said: $(cat "$d/verify.out")"
	note "$name: $(head -n 1 "$d/verify.out")"
}

hammer raid5 raid5 4 64K
hammer raid5-small raid5 3 16K
hammer raid6 raid6 5 64K

# fio's own data verification through the volume, O_DIRECT
fio_verify() { # NAME LEVEL N
	local name=$1 d=$T/$1 m=() i cap
	mkdir -p "$d"
	for ((i = 0; i < $3; i++)); do m+=("$d/m$i"); done
	"$FSVOL" create -l "$2" -c 64K -s 16M "${m[@]}" >/dev/null || fail "$name: create"
	fsvol_mount "$d/mnt" "${m[@]}"
	cap=$(size_of "$d/mnt/volume")
	# 4 jobs on disjoint quarters (fio verifies what each job wrote), mixed sizes
	fio --name=verify --filename="$d/mnt/volume" --size=$((cap / 4)) --offset_increment=$((cap / 4)) \
		--numjobs=4 --rw=randwrite --bsrange=4k-128k --direct=1 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 "${FIO_COMMON[@]}" >"$d/fio.out" 2>&1 ||
		fail "$name: fio --verify=crc32c failed: $(cat "$d/fio.out")"
	# and once sequentially over the whole volume, odd block size
	fio --name=verify-seq --filename="$d/mnt/volume" --size="$cap" --rw=write --bs=12k --direct=1 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 "${FIO_COMMON[@]}" >"$d/fio2.out" 2>&1 ||
		fail "$name: fio sequential verify failed: $(cat "$d/fio2.out")"
	fsvol_umount "$d/mnt"
	"$FSVOL_VERIFY" "${m[@]}" >"$d/verify.out" 2>&1 || fail "$name: parity after fio: $(cat "$d/verify.out")"
	note "$name: fio verify ok"
}
fio_verify fio-raid5 raid5 4
fio_verify fio-raid6 raid6 5

# --- the checker can fail: flip one data byte, one P byte -----------------------
d=$T/raid6
cp "$d/m1" "$d/m1.orig"
# member 1, stripe 0 of raid6 left-symmetric on 5 = D0: P and Q of stripe 0 break
printf '\xa5' | dd of="$d/m1" bs=1 seek=$((MiB + 100)) conv=notrunc status=none
cmp -s "$d/m1" "$d/m1.orig" && printf '\x5a' | dd of="$d/m1" bs=1 seek=$((MiB + 100)) conv=notrunc status=none
rc=0
"$FSVOL_VERIFY" "$d"/m? >"$T/v.out" 2>"$T/v.err" || rc=$?
[[ $rc -eq 1 ]] || fail "fsvol-verify exit $rc on a corrupted raid6 (expected 1): $(cat "$T/v.out" "$T/v.err")"
grep -q "P mismatches 1, Q mismatches 1" "$T/v.out" || fail "fsvol-verify on one flipped data byte: $(cat "$T/v.out")"
mv "$d/m1.orig" "$d/m1"
d=$T/raid5
# stripe 0 of raid5 left-symmetric on 4: P on member 3
dd if=/dev/urandom of="$d/m3" bs=4096 count=1 seek=$((MiB / 4096 + 2)) conv=notrunc status=none
rc=0
"$FSVOL_VERIFY" "$d"/m? >"$T/v.out" 2>"$T/v.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "P mismatches 1, Q mismatches 0" "$T/v.out" ||
	fail "fsvol-verify on a damaged P chunk: exit $rc, $(cat "$T/v.out" "$T/v.err")"
grep -q "member 3" "$T/v.err" || fail "fsvol-verify does not name member 3: $(cat "$T/v.err")"
