#!/usr/bin/env bash
# 104-md-states: the states fsvol keeps in md's own fields while a volume in
# md's format (create -e 1.2) is mounted, read back with mdadm --examine on
# the host (and the raw dev_roles): a failed member is md's faulty role
# 0xfffe, removed it is 0xffff (no device); re-added, its recovery is
# recorded as md does (MD_FEATURE_RECOVERY_OFFSET and recovery_offset, on its
# own superblock only) and cleared when done; a blank file added gets md's
# superblock of its own (new device number and UUID, md's bitmap header and
# an empty bad-block log) and is recovered into the role; kill -9 while
# dirty leaves md's "active" with resync_offset 0, and the next mount
# resyncs and leaves it clean. grow and replace are still refused by name.
. "$(dirname "$0")/../lib.sh"
requires mdadm
requires jq
cd "$T"

field() { sed -n "s/^ *$1 : //p" "$2" | head -n 1; }
examine() { # MEMBER: mdadm --examine into ex.txt; the checksum must be right
	mdadm --examine "$1" >ex.txt 2>&1 || fail "mdadm --examine $1: $(cat ex.txt)"
	[[ $(field Checksum ex.txt) == *" - correct" ]] || fail "$1: Checksum $(field Checksum ex.txt)"
}
# role MEMBER N: dev_roles[N] of MEMBER's superblock (metadata 1.2: at 4K), in hex
role() {
	python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(8192)[4096:]; n=int(sys.argv[2]); print("%04x" % struct.unpack_from("<H", b, 256 + 2 * n)[0])' "$1" "$2"
}
# resync_offset MEMBER: md's resync_offset (metadata 1.2), in hex
resync_offset() {
	python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(8192)[4096:]; print("%x" % struct.unpack_from("<Q", b, 208)[0])' "$1"
}
recovery_done() { grep -q "recovery done" "$1/status"; }

ms=(m0 m1 m2 m3)
"$FSVOL" create -e 1.2 -l raid5 -n 4 -c 64K -z 16M -N states "${ms[@]}" >/dev/null || fail "create"
fsvol_mount mnt "${ms[@]}"
random_file want $((48 * 1024 * 1024))
dd if=want of=mnt/volume bs=1M oflag=direct conv=notrunc status=none || fail "write"

# fail: md's faulty role on the others, still listed
"$FSVOL" fail mnt m1 >/dev/null || fail "fail m1"
[[ $(role m0 1) == fffe ]] || fail "failed m1: dev_roles[1] on m0 is $(role m0 1), md writes fffe"
examine m0
[[ $(field "Array State" ex.txt) == "A.AA "* ]] || fail "failed m1: Array State $(field "Array State" ex.txt)"
# remove: no device (0xffff)
"$FSVOL" remove mnt m1 >/dev/null || fail "remove m1"
[[ $(role m0 1) == ffff ]] || fail "removed m1: dev_roles[1] on m0 is $(role m0 1), md writes ffff"
note "fail: dev_roles fffe (A.AA); remove: ffff"

# re-add, held mid-recovery: recovery_offset on m1's own superblock
sync_hold mnt 50
"$FSVOL" re-add mnt "$T/m1" >/dev/null || fail "re-add m1"
sync_wait_held mnt recovery
examine m1
ro=$(field "Recovery Offset" ex.txt)
[[ $ro =~ ^[1-9][0-9]*\ sectors ]] || fail "m1 mid-recovery: Recovery Offset '$ro' ($(cat ex.txt))"
fm=$(field "Feature Map" ex.txt)
(($(printf '%d' "$fm") & 2)) || fail "m1 mid-recovery: Feature Map $fm lacks MD_FEATURE_RECOVERY_OFFSET (0x2)"
[[ $(field "Device Role" ex.txt) == "Active device 1" ]] || fail "m1: Device Role $(field "Device Role" ex.txt)"
examine m0
[[ -z $(field "Recovery Offset" ex.txt) ]] || fail "m0 shows a Recovery Offset: only the recovering device has one"
sync_release mnt
wait_for 60 "the recovery of m1 to end" recovery_done mnt
examine m1
[[ -z $(field "Recovery Offset" ex.txt) ]] || fail "m1 after its recovery still shows Recovery Offset $(field "Recovery Offset" ex.txt)"
note "re-add: Recovery Offset $ro mid-recovery (feature map $fm), gone once done"

# a blank file added in a removed member's place: md's superblock of its own
"$FSVOL" fail mnt m2 >/dev/null || fail "fail m2"
"$FSVOL" remove mnt m2 >/dev/null || fail "remove m2"
truncate -s "$(size_of m0)" n2
"$FSVOL" add mnt "$T/n2" >/dev/null || fail "add n2"
wait_for 60 "the recovery of n2 to end" recovery_done mnt
examine n2
[[ $(field "Device Role" ex.txt) == "Active device 2" ]] || fail "n2: Device Role $(field "Device Role" ex.txt)"
[[ $(field "Array UUID" ex.txt) == "$(mdadm --examine m0 | sed -n 's/^ *Array UUID : //p')" ]] ||
	fail "n2: another Array UUID"
[[ $(field "Device UUID" ex.txt) != "$(mdadm --examine m0 | sed -n 's/^ *Device UUID : //p')" ]] ||
	fail "n2: the Device UUID of m0"
[[ $(field "Bad Block Log" ex.txt) == "512 entries available"* ]] || fail "n2: Bad Block Log $(field "Bad Block Log" ex.txt)"
dd if=n2 of=bm bs=512 skip=16 count=8 status=none
mdadm --examine-bitmap bm >bm.txt 2>&1 || fail "n2: mdadm -X: $(cat bm.txt)"
dnum=$(python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(8192)[4096:]; print(struct.unpack_from("<I", b, 160)[0])' n2)
[[ $(role m0 "$dnum") == 0002 ]] || fail "n2 (device $dnum): dev_roles[$dnum] on m0 is $(role m0 "$dnum")"
examine m0
[[ $(field "Array State" ex.txt) == "AAAA "* ]] || fail "after add: Array State $(field "Array State" ex.txt)"
fsvol_umount mnt
fsvol_mount mnt m0 m1 n2 m3
vol_cmp want mnt/volume || fail "after re-add and add: the volume differs"
"$FSVOL" scrub mnt >scrub.out 2>&1 || fail "scrub: $(cat scrub.out)"
grep -q " 0 mismatches" scrub.out || fail "scrub: $(cat scrub.out)"
note "add: n2 got md's superblock (device $dnum in role 2, its own Device UUID, bitmap, empty bad-block log); remount, scrub clean"

# kill -9 while dirty: md's active, resync_offset 0; the next mount resyncs
safe_mode_off mnt
pid=$(daemon_pid mnt)
kill -9 "$pid"
wait_for 10 "daemon $pid to die" _gone "$pid"
umount -l mnt 2>/dev/null || fusermount3 -uz mnt 2>/dev/null || true
_drop_cleanup fsvol "$T/mnt" "$pid"
_drop_cleanup fsvol mnt "$pid"
examine m0
[[ $(field State ex.txt) == active ]] || fail "after kill -9: State $(field State ex.txt)"
[[ $(resync_offset m0) == 0 ]] || fail "after kill -9: resync_offset $(resync_offset m0), md writes 0 while active"
# md's bitmap: no bit set, its events behind the superblock's (md: stale, a full resync)
dd if=m0 of=bm bs=512 skip=16 count=8 status=none
mdadm --examine-bitmap bm >bm.txt 2>&1 || fail "after kill -9: mdadm -X: $(cat bm.txt)"
bst=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(256), 48)[0])' bm)
((bst & 2)) || fail "after kill -9: md's bitmap state $bst without BITMAP_STALE (2): md would trust its clear bits ($(cat bm.txt))"
fsvol_mount mnt m0 m1 n2 m3
wait_resync mnt
fsvol_umount mnt
examine m0
[[ $(field State ex.txt) == clean ]] || fail "after the resync: State $(field State ex.txt)"
[[ $(resync_offset m0) == ffffffffffffffff ]] || fail "after the resync: resync_offset $(resync_offset m0), md's MaxSector when clean"
dd if=m0 of=bm bs=512 skip=16 count=8 status=none
bst=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(256), 48)[0])' bm)
((!(bst & 2))) || fail "clean again: md's bitmap still stale (state $bst)"
note "kill -9: State active, resync_offset 0, md's bitmap marked stale (md: a full resync); the next mount resyncs, then clean (resync_offset MaxSector)"

# what md's format cannot record yet is refused, naming it
fsvol_mount mnt m0 m1 n2 m3
truncate -s "$(size_of m0)" s4
expect_fail_msg "md's replacement fields" "$FSVOL" replace --with "$T/s4" mnt m0
expect_fail_msg "md's reshape fields" "$FSVOL" grow mnt --raid-devices 5
fsvol_umount mnt
note "replace and grow refused on md's format, naming md's fields"
