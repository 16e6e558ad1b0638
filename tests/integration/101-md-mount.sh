#!/usr/bin/env bash
# 101-md-mount: fsvol mounts volumes in md's own format (issue 31) and keeps
# them md-valid on every superblock write: an ext4 made through the mount
# fscks clean after a remount, GRUB's md code reads the same file back from
# the member files (whole and degraded), mdadm --examine shows md's state at
# each step (clean, active while dirty, events rising, a failed role '.',
# the checksum correct), a stale member is refused as md refuses it, and
# what md's format cannot record yet is refused naming it.
. "$(dirname "$0")/../lib.sh"
requires_root
requires mdadm
requires grub-fstest
requires mkfs.ext4
cd "$T"

field() { sed -n "s/^ *$1 : //p" "$2" | head -n 1; }
examine() { # MEMBER: mdadm --examine into ex.txt; the checksum must be right
	mdadm --examine "$1" >ex.txt 2>&1 || fail "mdadm --examine $1: $(cat ex.txt)"
	[[ $(field Checksum ex.txt) == *" - correct" ]] || fail "$1: Checksum $(field Checksum ex.txt)"
}

for meta in 1.2 1.0; do
	ms=(r$meta.0 r$meta.1 r$meta.2 r$meta.3)
	name=vol${meta/./}
	"$FSVOL" create -e "$meta" -l raid5 -n 4 -c 64K -z 32M -N "$name" "${ms[@]}" >/dev/null || fail "create $meta"
	fsvol_mount mnt "${ms[@]}"
	mkfs.ext4 -q -F mnt/volume || fail "mkfs.ext4 on $meta"
	loop_mount mnt/volume fs
	random_file fs/data.bin 3000000
	cp fs/data.bin "want$meta.bin"
	loop_umount fs
	# dirty while written with safe mode off: md's "active"
	safe_mode_off mnt
	examine "${ms[1]}"
	[[ $(field State ex.txt) == active ]] || fail "$meta: dirty volume, mdadm says State $(field State ex.txt)"
	fsvol_umount mnt
	examine "${ms[1]}"
	[[ $(field State ex.txt) == clean ]] || fail "$meta: after umount, State $(field State ex.txt)"
	events=$(field Events ex.txt)
	((events > 0)) || fail "$meta: events $events after a mount"
	[[ $(field "Array State" ex.txt) == "AAAA "* ]] || fail "$meta: Array State $(field "Array State" ex.txt)"
	# md's bitmap kept in step while clean: md will not call it stale
	soff=$(field "Super Offset" ex.txt) boff=$(field "Internal Bitmap" ex.txt)
	dd if="${ms[1]}" of=bm bs=512 skip=$((${soff%% *} + ${boff%% *})) count=8 status=none
	mdadm --examine-bitmap bm >bm.txt 2>&1 || fail "$meta: mdadm -X: $(cat bm.txt)"
	[[ $(field Events bm.txt) == "$events" ]] || fail "$meta: bitmap events $(field Events bm.txt), superblock $events"
	# GRUB's own raid5 reads the file from the member files
	timeout 60 grub-fstest -c 4 "${ms[@]}" -- cp "(md/$name)/data.bin" grub.bin >grub.out 2>&1 ||
		fail "$meta: grub-fstest cp: $(cat grub.out)"
	cmp grub.bin "want$meta.bin" || fail "$meta: GRUB read back other bytes than were written through fsvol"
	# a remount: the ext4 is clean and holds the file
	fsvol_mount mnt "${ms[@]}"
	e2fsck -fn mnt/volume >fsck.out 2>&1 || fail "$meta: e2fsck after remount: $(cat fsck.out)"
	"$FSVOL" scrub mnt >scrub.out 2>&1 || fail "$meta: scrub: $(cat scrub.out)"
	grep -q " 0 mismatches" scrub.out || fail "$meta: scrub: $(cat scrub.out)"
	fsvol_umount mnt
	note "$meta raid5: ext4 through fsvol fscks clean, GRUB reads the file back, mdadm sees clean/active"
done

# degraded: one member left out; md's roles and events follow
ms=(r1.2.0 r1.2.1 r1.2.2 r1.2.3)
fsvol_mount --run mnt "${ms[0]}" "${ms[1]}" "${ms[3]}"
fsvol_umount mnt
examine "${ms[0]}"
[[ $(field "Array State" ex.txt) == "AA.A "* ]] || fail "degraded: Array State $(field "Array State" ex.txt)"
timeout 60 grub-fstest -c 3 "${ms[0]}" "${ms[1]}" "${ms[3]}" -- cp "(md/vol12)/data.bin" grub.bin >grub.out 2>&1 ||
	fail "degraded: grub-fstest cp: $(cat grub.out)"
cmp grub.bin want1.2.bin || fail "degraded: GRUB read other bytes"
expect_fail_msg "stale" "$FSVOL" mount mnt "${ms[@]}"
note "degraded: md's roles (AA.A), GRUB reads it degraded, the stale member refused"

# what md's format cannot record yet is refused, naming it
"$FSVOL" create -e 1.2 -l raid1 -n 2 -x 1 -z 8M s0 s1 s2 >/dev/null || fail "create with a spare"
expect_fail_msg "spare" "$FSVOL" mount mnt s0 s1 s2
fsvol_mount mnt s0 s1
expect_fail_msg "not yet on a volume in md's format" "$FSVOL" grow mnt --raid-devices 3
truncate -s 16M s3
expect_fail_msg "not yet on a volume in md's format" "$FSVOL" replace --with "$T/s3" mnt s0
fsvol_umount mnt
examine s0
[[ $(field "Array State" ex.txt) == "AA "* ]] || fail "after refusals: Array State $(field "Array State" ex.txt)"
note "grow, replace and a spare member refused on md's format (add, fail, remove, re-add: 104-md-states)"
