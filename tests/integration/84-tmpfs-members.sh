#!/usr/bin/env bash
# Members on tmpfs (members/member_map.c): their reads, and their writes into
# pages that hold data, copy through a shared mapping of the file. Through a
# mounted raid5 of /dev/shm files: fio's verified writes and reads, parity
# right on every stripe (fsvol-verify) and the data right after a remount; a
# sparse member stays sparse when the whole volume is read (a read fault on a
# tmpfs hole would allocate it); a member cut short under the daemon (a page
# the mapping held now past the end: SIGBUS) makes its reads fail, not the
# daemon: they are served from redundancy (and rewritten), the data right.
. "$(dirname "$0")/../lib.sh"
requires fio
[[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] || { echo "SKIP: /dev/shm is not tmpfs"; exit 77; }
S=$(mktemp -d /dev/shm/fsvol-84.XXXXXX)
_push_cleanup path "$S"
FIO=(--direct=1 --ioengine=io_uring --iodepth=16 --verify_state_save=0)

# allocated bytes of the members (du counts what tmpfs holds)
held() { du -B1 -c "$@" | tail -n 1 | cut -f1; }

# 1. sparse: reading the whole volume allocates nothing
m=("$S"/s0 "$S"/s1)
"$FSVOL" create -l raid0 -c 64K -s 64M "${m[@]}" >/dev/null
before=$(held "${m[@]}")
fsvol_mount "$T/sp" "${m[@]}"
dd if="$T/sp/volume" of=/dev/null bs=1M iflag=direct status=none || fail "reading the sparse volume"
dd if="$T/sp/volume" of=/dev/null bs=4K count=4096 iflag=direct status=none || fail "reading it by 4K"
after=$(held "${m[@]}")
[[ $after -le $((before + 64 * 1024)) ]] || fail "reading a sparse volume allocated $((after - before)) bytes on tmpfs (was $before)"
fsvol_umount "$T/sp"
note "sparse raid0 x2 of 64M read whole: $before -> $after bytes held"

# 2. raid5 x4: verified writes (the second pass rewrites pages that hold data:
# through the mapping), parity right, the data right after a remount
r=("$S"/r0 "$S"/r1 "$S"/r2 "$S"/r3)
"$FSVOL" create -l raid5 -c 64K -s 8M "${r[@]}" >/dev/null
fsvol_mount "$T/r5" "${r[@]}"
for pass in 1 2; do
	fio --name=w --filename="$T/r5/volume" --rw=randwrite --bssplit=4k/50:16k/25:64k/25 --size=24M \
		--verify=crc32c --do_verify=1 --randseed=$((pass * 7)) "${FIO[@]}" --output="$T/fio$pass.out" ||
		fail "fio pass $pass: $(tail -n 20 "$T/fio$pass.out")"
done
fio --name=w --filename="$T/r5/volume" --rw=write --bs=64k --size=24M --verify=crc32c --do_verify=0 \
	"${FIO[@]}" --output="$T/fill.out" || fail "fio fill: $(tail -n 20 "$T/fill.out")"
fsvol_umount "$T/r5"
"$FSVOL_VERIFY" "${r[@]}" >"$T/verify.out" 2>&1 || fail "parity: $(cat "$T/verify.out")"
grep -q "P mismatches 0" "$T/verify.out" || fail "fsvol-verify said: $(cat "$T/verify.out")"
fsvol_mount "$T/r5" "${r[@]}"
fio --name=w --filename="$T/r5/volume" --rw=write --bs=64k --size=24M --verify=crc32c --verify_only \
	"${FIO[@]}" --output="$T/check.out" || fail "the data after a remount: $(tail -n 20 "$T/check.out")"

# 3. a member cut short under the daemon: its mapped pages past the end
pid=$(daemon_pid "$T/r5")
truncate -s 1M "${r[1]}"
dd if="$T/r5/volume" of=/dev/null bs=1M iflag=direct status=none || fail "reading with a member cut short"
_alive "$pid" || fail "the daemon died when a member was cut short under it (log: $(tail -n 5 "$DAEMON_LOG"))"
grep -q "(${r[1]}): read error" "$DAEMON_LOG" || fail "no read error of the member cut short in the log: $(tail -n 5 "$DAEMON_LOG")"
fio --name=w --filename="$T/r5/volume" --rw=write --bs=64k --size=24M --verify=crc32c --verify_only \
	"${FIO[@]}" --output="$T/check2.out" || fail "the data with a member cut short: $(tail -n 20 "$T/check2.out")"
note "after the cut: $(grep -m1 "(${r[1]}): read error" "$DAEMON_LOG")"
fsvol_umount "$T/r5"
echo "PASS"
