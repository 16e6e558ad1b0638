#!/usr/bin/env bash
# 14-blockdev: members that are block devices (loop devices over files), alone
# and mixed with member files: create sizes the volume from the devices, data
# round-trips through O_DIRECT, assembly ignores device order, a missing
# device degrades, the counters name each device, and a device that is too
# small or already in use is refused by name.
. "$(dirname "$0")/../lib.sh"
requires losetup
requires_root "losetup"

L=()
for i in 0 1 2 3; do
	truncate -s 40M "$T/b$i"
	loop_attach "$T/b$i" || { echo "SKIP: no free loop device"; exit 77; }
	L+=("$LOOP")
done

# --- raid5 over four devices, sized from the devices (no -s)
"$FSVOL" create -l raid5 -c 64K "${L[@]}" >"$T/create.out" || fail "create on ${L[*]} failed"
"$FSVOL" examine "${L[2]}" >"$T/examine.out" || fail "examine ${L[2]} failed"
grep -q "Raid Level : raid5" "$T/examine.out" || fail "examine ${L[2]}: $(cat "$T/examine.out")"
fsvol_mount "$T/m" "${L[@]}"
cap=$(stat -c %s "$T/m/volume")
# three data members of 40M each, less the superblock area: between 110M and 120M
((cap > 110 * MiB && cap <= 120 * MiB)) || fail "capacity $cap from three 40M data devices"
for l in "${L[@]}"; do grep -qF "$l" "$T/m/status" || fail "status does not name $l"; done
dd if=/dev/urandom of="$T/ref" bs=1M count=24 status=none
dd if="$T/ref" of="$T/m/volume" bs=1M oflag=direct conv=notrunc status=none
cmp -n $((24 * MiB)) "$T/ref" "$T/m/volume" || fail "raid5 on block devices: data differs"
# below the mapping layer, every device took part of the writes
for i in 0 1 2 3; do
	w=$(jq ".members[] | select(.index == $i) | .writes" "$T/m/stats.json")
	p=$(jq -r ".members[] | select(.index == $i) | .path" "$T/m/stats.json")
	[[ $w -gt 0 && $p == "${L[i]}" ]] || fail "member $i: path $p, writes $w (want ${L[i]}, > 0)"
done
# a device in use by a mounted volume is refused, and left alone
expect_fail_msg "${L[0]}" "$FSVOL" create -l raid1 -c 64K "${L[0]}" "$T/other"
fsvol_umount "$T/m"

# --- order does not matter; one device missing: degraded, same data
fsvol_mount "$T/m" "${L[3]}" "${L[1]}" "${L[0]}" "${L[2]}"
cmp -n $((24 * MiB)) "$T/ref" "$T/m/volume" || fail "shuffled devices: data differs"
fsvol_umount "$T/m"
fsvol_mount --force "$T/m" "${L[3]}" "${L[0]}" "${L[2]}"
grep -q "degraded" "$T/m/status" || fail "three of four devices, status: $(head -2 "$T/m/status")"
cmp -n $((24 * MiB)) "$T/ref" "$T/m/volume" || fail "degraded (${L[1]} missing): data differs"
fsvol_umount "$T/m"

# --- a mirror of a device and a file: the smaller sets the size
truncate -s 48M "$T/f1"
# (as mdadm: a device that is a member of another volume needs --force)
expect_fail_msg "${L[0]}: already a member of fsvol volume" "$FSVOL" create -l raid1 -c 64K "${L[0]}" "$T/f1"
"$FSVOL" create --force -l raid1 -c 64K "${L[0]}" "$T/f1" >/dev/null || fail "raid1 of ${L[0]} and a file failed"
fsvol_mount "$T/m" "$T/f1" "${L[0]}"
cap=$(stat -c %s "$T/m/volume")
((cap > 36 * MiB && cap <= 40 * MiB)) || fail "raid1 of 40M device and 48M file: capacity $cap"
dd if="$T/ref" of="$T/m/volume" bs=1M count=16 oflag=direct conv=notrunc status=none
fsvol_umount "$T/m"
# each copy holds the data: a degraded mount of either alone reads it back
for one in "${L[0]}" "$T/f1"; do
	fsvol_mount --force "$T/m" "$one"
	cmp -n $((16 * MiB)) "$T/ref" "$T/m/volume" || fail "raid1 copy on $one alone: data differs"
	fsvol_umount "$T/m"
done

# --- a device too small for the level is refused by name, and not written
truncate -s 1M "$T/tiny"
loop_attach "$T/tiny" || { echo "SKIP: no free loop device"; exit 77; }
tiny=$LOOP
before=$(md5sum <"$tiny")
expect_fail_msg "$tiny" "$FSVOL" create --force -l raid0 -c 1M "${L[1]}" "$tiny"
[[ $(md5sum <"$tiny") == "$before" ]] || fail "a refused create wrote to $tiny"

# --- fsvol-bench drives a block device directly (read-only here)
BENCH=$FSVOL_BUILD/bin/fsvol-bench
before=$(md5sum <"${L[2]}")
"$BENCH" -q -b 4K -r -o 4 -d 1 -W0 -Sh --json "${L[2]}" >"$T/bench.json" 2>"$T/bench.err" ||
	fail "fsvol-bench on ${L[2]}: $(cat "$T/bench.err")"
jq -e '.results.total.total.ios > 0 and .results.total.total.bytes == .results.total.total.ios * 4096' \
	"$T/bench.json" >/dev/null || fail "fsvol-bench on ${L[2]}: $(jq -c '.results.total' "$T/bench.json")"
[[ $(md5sum <"${L[2]}") == "$before" ]] || fail "a read-only fsvol-bench run changed ${L[2]}"
