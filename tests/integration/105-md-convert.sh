#!/usr/bin/env bash
# 105-md-convert: fsvol convert rewrites a stopped volume in fsvol's format as
# md's metadata 1.2 over the same data: the volume keeps its UUID, name and
# bytes, mdadm --examine takes every member (checksum correct, roles, data
# offset), fsvol mounts it and scrubs it clean; what md's format cannot carry,
# or a volume not stopped cleanly and whole, is refused naming why, members
# untouched. (Linux md assembling converted volumes: 102/103-md-assemble.)
. "$(dirname "$0")/../lib.sh"
requires mdadm
cd "$T"
field() { sed -n "s/^ *$1 : //p" "$2" | head -n 1; }

ms=(a0 a1 a2 a3 a4)
"$FSVOL" create -l raid6 -p left-asymmetric -n 5 -c 64K -z 8M -N conv "${ms[@]}" >/dev/null || fail "create"
uuid=$("$FSVOL" examine a0 | sed -n 's/^ *Volume UUID : //p')
fsvol_mount mnt "${ms[@]}"
random_file want $((24 * 1024 * 1024))
dd if=want of=mnt/volume bs=1M oflag=direct conv=notrunc status=none || fail "write"
# refused while mounted (the members are locked), dirty, degraded, partial
expect_fail_msg "in use" "$FSVOL" convert "${ms[@]}"
pid=$(daemon_pid mnt)
safe_mode_off mnt
kill -9 "$pid"
wait_for 10 "daemon $pid to die" _gone "$pid"
umount -l mnt 2>/dev/null || fusermount3 -uz mnt 2>/dev/null || true
_drop_cleanup fsvol "$T/mnt" "$pid"
_drop_cleanup fsvol mnt "$pid"
cp a0 a0.before
expect_fail_msg "not stopped cleanly" "$FSVOL" convert "${ms[@]}"
cmp -s a0 a0.before || fail "a refused convert changed a0"
fsvol_mount mnt "${ms[@]}"
wait_resync mnt
fsvol_umount mnt
expect_fail_msg "give the volume's 5 members" "$FSVOL" convert a0 a1 a2 a3
expect_fail_msg "only 1.2" "$FSVOL" convert -e 1.0 "${ms[@]}"
note "refused: mounted, dirty, a member short, metadata 1.0"

# the conversion, members in any order
"$FSVOL" convert a3 a1 a4 a0 a2 >conv.out || fail "convert: $(cat conv.out)"
for m in "${ms[@]}"; do
	mdadm --examine "$m" >ex.txt 2>&1 || fail "$m: mdadm --examine: $(cat ex.txt)"
	[[ $(field Checksum ex.txt) == *" - correct" ]] || fail "$m: Checksum $(field Checksum ex.txt)"
	[[ $(field "Raid Level" ex.txt) == raid6 && $(field Layout ex.txt) == left-asymmetric ]] ||
		fail "$m: $(field "Raid Level" ex.txt) $(field Layout ex.txt)"
	[[ $(field "Array UUID" ex.txt) == "$(tr -d - <<<"$uuid" | sed 's/\(........\)/\1:/g; s/:$//')" ]] ||
		fail "$m: Array UUID $(field "Array UUID" ex.txt), the volume's was $uuid"
	[[ $(field "Data Offset" ex.txt) == "2048 sectors" ]] || fail "$m: Data Offset $(field "Data Offset" ex.txt)"
done
[[ $(field Name ex.txt) == *:conv* ]] || fail "name: $(field Name ex.txt)"
[[ $(field "Array State" ex.txt) == "AAAAA "* ]] || fail "Array State $(field "Array State" ex.txt)"
fsvol_mount mnt "${ms[@]}"
vol_cmp want mnt/volume || fail "after convert: other bytes"
"$FSVOL" scrub mnt >scrub.out 2>&1 || fail "scrub: $(cat scrub.out)"
grep -q " 0 mismatches" scrub.out || fail "scrub: $(cat scrub.out)"
fsvol_umount mnt
expect_fail_msg "no superblock in fsvol's format" "$FSVOL" convert "${ms[@]}"
note "raid6 la x5: md 1.2 (UUID, name, data offset kept), same bytes, scrub clean; a second convert refused"

# a data offset too small for md's superblock and bad-block log
"$FSVOL" create -l raid1 -n 2 -z 4M --data-offset 8K --bitmap none b0 b1 >/dev/null || fail "create 8K"
expect_fail_msg "md's 1.2 superblock and bad-block log need 12288" "$FSVOL" convert b0 b1
# a PPL volume: md's PPL not written yet
"$FSVOL" create -l raid5 -n 3 -z 4M --consistency-policy ppl p0 p1 p2 >/dev/null || fail "create ppl"
expect_fail_msg "partial parity log" "$FSVOL" convert p0 p1 p2
note "refused: data offset 8K, a PPL volume"
