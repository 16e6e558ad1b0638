#!/usr/bin/env bash
# Faults that must not brick a volume, and assemblies that must not lose data:
# - failures beyond redundancy (a second `fail` on raid5, both raid1 members, a
#   forced `fail` on raid0): mount refuses and suggests --force; mount --force
#   takes back the most recently failed member, warns which on stderr, and the
#   data written before the last failure reads back;
# - a `fail N` that would stop the volume is refused (EINVAL, the log says
#   why) unless written `fail N force`;
# - raid1 split brain: each half mounted alone and written; assembling both is
#   refused naming both; --force keeps one and says the other was dropped;
# - a member given twice (same path, hard link, symlink) names both arguments;
# - a superblock field that must agree (data_offset) differs with equal events:
#   refused naming member and field, left out with --force; a volume_size that
#   is not the geometry's capacity is refused even with --force.
. "$(dirname "$0")/../lib.sh"

# ctl_refused MNT CMD WHY: the write fails and the daemon log says WHY
ctl_refused() {
	if printf '%s' "$2" 2>/dev/null >"$1/ctl"; then fail "ctl accepted '$2'"; fi
	grep -qF -- "$3" "$DAEMON_LOG" || fail "ctl '$2': the daemon log lacks '$3'"
}

health() { sed -n 2p "$1/status"; }

# --- raid5 of 4: fail 1, write degraded, fail 2 (forced), umount ------------
"$FSVOL" create -l raid5 -c 64K -s 16M "$T"/a{0,1,2,3} >/dev/null
fsvol_mount "$T/mnt" "$T"/a{0,1,2,3}
random_file "$T/d1" $((4 * MiB))
random_file "$T/d2" $((2 * MiB))
dd if="$T/d1" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
echo "fail 1" >"$T/mnt/ctl" || fail "raid5: 'fail 1' refused"
dd if="$T/d2" of="$T/mnt/volume" bs=1M seek=8 oflag=direct conv=notrunc status=none
ctl_refused "$T/mnt" "fail 2" "fail 2: refused: raid5 cannot serve its data without member 2 (too many already failed); fsvol fail --force fails it anyway"
[[ $(health "$T/mnt") == *degraded* ]] || fail "a refused fail changed the volume: $(health "$T/mnt")"
ctl_refused "$T/mnt" "fail 2 force now" "unexpected 'now'"
echo "fail 2 force" >"$T/mnt/ctl" || fail "'fail 2 force' refused"
[[ $(health "$T/mnt") == *failed* ]] || fail "after two failures the raid5 is not failed: $(health "$T/mnt")"
fsvol_umount "$T/mnt"

expect_fail_msg "raid5 cannot run without member slot(s) 1 2" "$FSVOL" mount "$T/mnt" "$T"/a{0,1,2,3}
[[ $LAST_ERR == *"use --force to take back $T/a2 "* ]] || fail "refusal does not suggest --force with a2: $LAST_ERR"
! mountpoint -q "$T/mnt" || fail "a refused mount left a mount"
fsvol_mount --force "$T/mnt" "$T"/a{0,1,2,3} 2>"$T/force.err"
grep -q "warning: $T/a2: taken back by --force into slot 2 .*may be stale" "$T/force.err" ||
	fail "mount --force did not warn that a2 may be stale: $(cat "$T/force.err")"
grep -q "$T/a1: stale" "$T/force.err" || fail "mount --force did not say a1 is left out: $(cat "$T/force.err")"
grep -q '\[U_UU\]' "$T/mnt/status" || fail "raid5 after --force: $(head -1 "$T/mnt/status")"
cmp_at "$T/mnt/volume" "$T/d1" 0 $((4 * MiB))
cmp_at "$T/mnt/volume" "$T/d2" $((8 * MiB)) $((2 * MiB))
fsvol_umount "$T/mnt"
# taken back for good: the next mount needs no force (a1 left out)
fsvol_mount "$T/mnt" "$T"/a{0,2,3}
cmp_at "$T/mnt/volume" "$T/d2" $((8 * MiB)) $((2 * MiB))
fsvol_umount "$T/mnt"

# --- raid1 of 2: both members failed, the last one to fail holds the data -----
"$FSVOL" create -l raid1 -s 16M "$T"/b{0,1} >/dev/null
fsvol_mount "$T/mnt" "$T"/b{0,1}
dd if="$T/d1" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
echo "fail 0" >"$T/mnt/ctl" || fail "raid1: 'fail 0' refused"
dd if="$T/d2" of="$T/mnt/volume" bs=1M seek=8 oflag=direct conv=notrunc status=none
ctl_refused "$T/mnt" "fail 1" "fail 1: refused: raid1 cannot serve its data without member 1"
echo "fail 1 force" >"$T/mnt/ctl" || fail "'fail 1 force' refused"
fsvol_umount "$T/mnt"
expect_fail_msg "--force" "$FSVOL" mount "$T/mnt" "$T"/b{0,1}
fsvol_mount --force "$T/mnt" "$T"/b{0,1} 2>"$T/force.err"
grep -q '\[_U\]' "$T/mnt/status" || fail "raid1 after --force: $(head -1 "$T/mnt/status")"
cmp_at "$T/mnt/volume" "$T/d1" 0 $((4 * MiB))
cmp_at "$T/mnt/volume" "$T/d2" $((8 * MiB)) $((2 * MiB))
fsvol_umount "$T/mnt"

# --- raid0 of 3: a fail is refused (no redundancy) unless forced ---------------
"$FSVOL" create -l raid0 -c 64K -s 8M "$T"/c{0,1,2} >/dev/null
fsvol_mount "$T/mnt" "$T"/c{0,1,2}
dd if="$T/d1" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
ctl_refused "$T/mnt" "fail 1" "fail 1: refused: raid0 cannot serve its data without member 1 (no redundancy); fsvol fail --force fails it anyway"
grep -q '\[UUU\]' "$T/mnt/status" || fail "a refused fail changed raid0: $(head -1 "$T/mnt/status")"
echo "fail 1 force" >"$T/mnt/ctl" || fail "raid0: 'fail 1 force' refused"
fsvol_umount "$T/mnt"
expect_fail_msg "use --force to take back $T/c1" "$FSVOL" mount "$T/mnt" "$T"/c{0,1,2}
fsvol_mount --force "$T/mnt" "$T"/c{0,1,2} 2>"$T/force.err"
grep -q "warning: $T/c1: taken back by --force" "$T/force.err" || fail "raid0 --force: $(cat "$T/force.err")"
cmp_at "$T/mnt/volume" "$T/d1" 0 $((4 * MiB))
fsvol_umount "$T/mnt"

# --- raid1 split brain -----------------------------------------------------------
"$FSVOL" create -l raid1 -s 16M "$T"/s{0,1} >/dev/null
random_file "$T/x" $MiB
random_file "$T/y" $MiB
fsvol_mount --run "$T/mnt" "$T/s0"
dd if="$T/x" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
fsvol_umount "$T/mnt"
fsvol_mount --run "$T/mnt" "$T/s1"
dd if="$T/y" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
fsvol_umount "$T/mnt"
for order in "s0 s1" "s1 s0"; do
	read -r p q <<<"$order"
	expect_fail_msg "split brain: $T/$p (events 3) records slot" "$FSVOL" mount "$T/mnt" "$T/$p" "$T/$q"
	[[ $LAST_ERR == *"and $T/$q (events 3) records slot"*"use --force to keep $T/$p and drop $T/$q"* ]] ||
		fail "split brain message ($order) does not name both: $LAST_ERR"
done
! mountpoint -q "$T/mnt" || fail "a refused split brain left a mount"
fsvol_mount --force "$T/mnt" "$T/s1" "$T/s0" 2>"$T/force.err"
grep -q "$T/s0: dropped (split brain" "$T/force.err" || fail "split brain --force: $(cat "$T/force.err")"
cmp_at "$T/mnt/volume" "$T/y" 0 $MiB
fsvol_umount "$T/mnt"
# each half alone still holds its own writes
fsvol_mount "$T/mnt" "$T/s0"
cmp_at "$T/mnt/volume" "$T/x" 0 $MiB
fsvol_umount "$T/mnt"

# --- one member file given twice -------------------------------------------------
"$FSVOL" create -l raid1 -s 16M "$T"/t{0,1} >/dev/null
ln "$T/t0" "$T/hard"
ln -s "$T/t0" "$T/sym"
expect_fail_msg "$T/t0 and $T/t0 both claim slot 0 (the same file, given twice)" \
	"$FSVOL" mount "$T/mnt" "$T/t0" "$T/t0" "$T/t1"
expect_fail_msg "$T/t0 and $T/hard both claim slot 0" "$FSVOL" mount "$T/mnt" "$T/t0" "$T/hard"
expect_fail_msg "$T/sym and $T/t0 both claim slot 0" "$FSVOL" mount "$T/mnt" "$T/sym" "$T/t1" "$T/t0"
! mountpoint -q "$T/mnt" || fail "a refused mount left a mount"
# --- a shared superblock field that differs, event counts equal ------------------
"$FSVOL" create -l raid1 -s 16M "$T"/g{0,1} >/dev/null
sb_set "$T/g1" 80 $((2 * MiB)) # data_offset
"$FSVOL" examine "$T/g1" | grep -q "Data Offset : 2097152" || fail "sb_set did not make a valid superblock"
expect_fail_msg "$T/g1: disagrees with $T/g0 on data_offset (2097152, $T/g0 has 1048576)" \
	"$FSVOL" mount "$T/mnt" "$T"/g{0,1}
fsvol_mount --force "$T/mnt" "$T"/g{0,1} 2>"$T/force.err"
grep -q "$T/g1: does not belong: data_offset 2097152" "$T/force.err" || fail "--force: $(cat "$T/force.err")"
grep -q '\[U_\]' "$T/mnt/status" || fail "g1 was used: $(head -1 "$T/mnt/status")"
fsvol_umount "$T/mnt"
# volume_size must be the geometry's capacity, on every member alike
"$FSVOL" create -l raid1 -s 16M "$T"/v{0,1} >/dev/null
for m in "$T"/v{0,1}; do sb_set "$m" 88 $((32 * MiB)); done
expect_fail_msg "volume_size 33554432 is not the capacity of its geometry (raid1, 2 members: 16777216)" \
	"$FSVOL" mount --force "$T/mnt" "$T"/v{0,1}
! mountpoint -q "$T/mnt" || fail "a refused mount left a mount"
echo "PASS"
