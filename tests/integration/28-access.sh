#!/usr/bin/env bash
# 15-access: the volume is guarded like a block device. As an unprivileged
# user: reading MNT/volume, writing MNT/ctl and opening MNT/trace are refused
# (root:disk 0660, 0600, 0400); after chmod 660 + chgrp to the user's group,
# reading works; chmod/chown last for the mount's life; --owner/--group/--mode
# set them at mount; without --allow-other nobody else gets in at all;
# members are created 0600; --log refuses a symlink and a file it cannot open.
. "$(dirname "$0")/../lib.sh"
requires_root "useradd and mounts for another user"
requires useradd
requires groupadd
requires runuser

# Names unique to this run: other runs of this test may share the machine.
U=fsvt$$
G=fsvg$$
add_test_user "$U"
add_test_group "$G"
usermod -a -G "$G" "$U" || fail "usermod -a -G $G $U failed"
as_user() { runuser -u "$U" -- "$@"; }

chmod 755 "$T" # the user must reach MNT (mktemp made $T 0700)
MNT=$T/mnt
M=("$T/m0" "$T/m1")
"$FSVOL" create -l raid1 -s 8M "${M[@]}" >/dev/null || fail "create"
for m in "${M[@]}"; do
	[[ $(stat -c %a "$m") == 600 ]] || fail "member $m created $(stat -c %a "$m"), want 600"
done

# --- defaults: root:disk 0660, ctl 0600, trace 0400 -----------------------
fsvol_mount --allow-other "$MNT" "${M[@]}"
[[ $(stat -c '%a %U %G' "$MNT/volume") == "660 root disk" ]] ||
	fail "MNT/volume is $(stat -c '%a %U %G' "$MNT/volume"), want 660 root disk"
[[ $(stat -c %a "$MNT/ctl") == 600 ]] || fail "MNT/ctl is $(stat -c %a "$MNT/ctl"), want 600"
for f in trace trace.json; do
	[[ $(stat -c %a "$MNT/$f") == 400 ]] || fail "MNT/$f is $(stat -c %a "$MNT/$f"), want 400"
done
random_file "$T/ref" $((64 * 1024))
dd if="$T/ref" of="$MNT/volume" bs=64K conv=notrunc status=none || fail "root cannot write the volume"

# the user gets into the mount (so what follows is refused by the modes)
as_user cat "$MNT/stats" >/dev/null || fail "user $U cannot read MNT/stats on an --allow-other mount"
as_user head -c 4096 "$MNT/volume" >/dev/null 2>"$T/err" && fail "user $U read MNT/volume (root:disk 0660)"
grep -q "Permission denied" "$T/err" || fail "reading the volume as $U: $(cat "$T/err")"
as_user dd if=/dev/zero of="$MNT/volume" bs=4K count=1 conv=notrunc status=none 2>/dev/null &&
	fail "user $U wrote MNT/volume"
as_user sh -c "echo reset > '$MNT/ctl'" 2>"$T/err" && fail "user $U wrote MNT/ctl"
grep -q "Permission denied" "$T/err" || fail "writing ctl as $U: $(cat "$T/err")"
for f in trace trace.json; do
	timeout 10 runuser -u "$U" -- head -c 1 "$MNT/$f" >/dev/null 2>"$T/err" && fail "user $U opened MNT/$f"
	grep -q "Permission denied" "$T/err" || fail "opening $f as $U: $(cat "$T/err")"
done
as_user chmod 666 "$MNT/volume" 2>/dev/null && fail "user $U (not the owner) changed the volume's mode"
[[ $(stat -c %a "$MNT/volume") == 660 ]] || fail "the volume's mode changed after a refused chmod"

# --- chmod + chgrp are kept, and let the group in ------------------------
chmod 640 "$MNT/volume" || fail "chmod 640 MNT/volume"
chgrp "$G" "$MNT/volume" || fail "chgrp $G MNT/volume"
[[ $(stat -c '%a %G' "$MNT/volume") == "640 $G" ]] || fail "after chmod/chgrp: $(stat -c '%a %G' "$MNT/volume")"
as_user head -c 65536 "$MNT/volume" >"$T/got" || fail "user $U in group $G cannot read a 640 root:$G volume"
cmp -s "$T/got" "$T/ref" || fail "what $U read differs from what root wrote"
as_user dd if=/dev/zero of="$MNT/volume" bs=4K count=1 conv=notrunc status=none 2>/dev/null &&
	fail "user $U wrote a 640 volume"
chmod 660 "$MNT/volume" || fail "chmod 660 MNT/volume"
as_user dd if=/dev/zero of="$MNT/volume" bs=4K count=1 conv=notrunc status=none ||
	fail "user $U in group $G cannot write a 660 root:$G volume"
cmp -s -n 4096 "$MNT/volume" /dev/zero || fail "the user's write is not on the volume"
touch -d @1000000000 "$MNT/volume" || fail "touch MNT/volume"
[[ $(stat -c %Y "$MNT/volume") == 1000000000 ]] || fail "touch -d did not set the volume's mtime"
chmod 644 "$MNT/ctl" || fail "chmod MNT/ctl"
[[ $(stat -c %a "$MNT/ctl") == 644 ]] || fail "chmod on ctl not kept"
fsvol_umount "$MNT"

# --- for the mount's lifetime only; no --allow-other: nobody else -----------
fsvol_mount "$MNT" "${M[@]}"
[[ $(stat -c '%a %U %G' "$MNT/volume") == "660 root disk" ]] ||
	fail "a new mount kept the old mode: $(stat -c '%a %U %G' "$MNT/volume")"
as_user cat "$MNT/stats" >/dev/null 2>&1 && fail "user $U got into a mount without --allow-other"
fsvol_umount "$MNT"

# --- --owner, --group, --mode -----------------------------------------------
fsvol_mount --allow-other --owner="$U" --group="$(getent group "$G" | cut -d: -f3)" --mode=640 "$MNT" "${M[@]}"
[[ $(stat -c '%a %U %G' "$MNT/volume") == "640 $U $G" ]] ||
	fail "--owner/--group/--mode: $(stat -c '%a %U %G' "$MNT/volume"), want 640 $U $G"
as_user dd if=/dev/zero of="$MNT/volume" bs=4K count=1 conv=notrunc status=none || fail "the owner cannot write"
as_user chmod 600 "$MNT/volume" || fail "the owner cannot chmod the volume"
as_user sh -c "echo reset > '$MNT/ctl'" 2>/dev/null && fail "the volume's owner wrote MNT/ctl (root's)"
fsvol_umount "$MNT"

mkdir -p "$T/mnt2"
expect_fail_msg "--mode 999" "$FSVOL" mount --mode 999 "$T/mnt2" "${M[@]}"
expect_fail_msg "--owner no-such-user-$$" "$FSVOL" mount --owner "no-such-user-$$" "$T/mnt2" "${M[@]}"
expect_fail_msg "--group no-such-group-$$" "$FSVOL" mount --group "no-such-group-$$" "$T/mnt2" "${M[@]}"

# --- the log: no symlinks, an error when it cannot be opened, 0600 -------------
ln -s "$T/planted" "$T/link.log"
expect_fail_msg "$T/link.log" "$FSVOL" mount --log "$T/link.log" "$T/mnt2" "${M[@]}"
[[ ! -e $T/planted ]] || fail "--log followed a symlink"
expect_fail_msg "$T/no-dir/x.log" "$FSVOL" mount --log "$T/no-dir/x.log" "$T/mnt2" "${M[@]}"
mountpoint -q "$T/mnt2" && fail "a mount with a bad --log went ahead"
"$FSVOL" mount --log "$T/new.log" "$T/mnt2" "${M[@]}" || fail "mount with a new log"
_push_cleanup fsvol "$T/mnt2" "$(daemon_pid "$T/mnt2")"
[[ $(stat -c %a "$T/new.log") == 600 ]] || fail "the log was created $(stat -c %a "$T/new.log"), want 600"
fsvol_umount "$T/mnt2"
note "access: volume 660 root:disk, ctl 600, trace 400 hold against user $U; chmod/chgrp let the group in"
