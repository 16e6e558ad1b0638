#!/usr/bin/env bash
# 62-mount-run: a degraded start as mdadm --assemble has it (issue 21 point 3).
# A member the superblocks record as active, left off the command line, makes
# mount refuse, naming the member, where a file of it lies, --run and re-add;
# --run starts it degraded (the start message names the member, no hex mask);
# the next mount with every member refuses the stale one naming re-add; re-add
# brings it back. serve takes --run the same way; --force implies it.
. "$(dirname "$0")/../lib.sh"
requires_root

mkdir -p "$T/v" "$T/mnt"
"$FSVOL" create -l raid5 -c 64K -s 8M "$T"/v/d{0,1,2} >/dev/null || fail "create"
random_file "$T/ref" $((2 * MiB))
fsvol_mount "$T/mnt" "$T"/v/d{0,1,2}
dd if="$T/ref" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
fsvol_umount "$T/mnt"

# --- without --run: refused, and nothing written to the members -----------------------
sum=$(md5sum "$T"/v/d{0,1,2} | md5sum)
expect_fail_msg "would start degraded: m1 (not given; $T/v/d1 holds it, events" \
	"$FSVOL" mount "$T/mnt" "$T/v/d0" "$T/v/d2"
[[ $LAST_ERR == *"--run to start it degraded"*"fsvol re-add MNT PATH"* ]] || fail "refusal: $LAST_ERR"
! mountpoint -q "$T/mnt" || fail "a refused mount left a mount behind"
[[ $(md5sum "$T"/v/d{0,1,2} | md5sum) == "$sum" ]] || fail "a refused mount changed the members"
# a member that is gone altogether is named by its slot
mv "$T/v/d1" "$T/d1.away"
expect_fail_msg "m1 (not given) is missing" "$FSVOL" mount "$T/mnt" "$T/v/d0" "$T/v/d2"
expect_fail_msg "m1 (not given) is missing" "$FSVOL" serve --nbd "unix:$T/nbd.sock" "$T/v/d0" "$T/v/d2"
mv "$T/d1.away" "$T/v/d1"

# --- --run: degraded, said in words -----------------------------------------------------
fsvol_mount --run "$T/mnt" "$T/v/d0" "$T/v/d2" 2>"$T/run.err"
grep -q "fsvol mount: starting degraded: m1 missing" "$T/run.err" || fail "mount --run said: $(cat "$T/run.err")"
! grep -q "0x" "$T/run.err" || fail "a hex slot mask: $(cat "$T/run.err")"
cmp_at "$T/mnt/volume" "$T/ref" 0 $((2 * MiB))
dd if=/dev/urandom of="$T/mnt/volume" bs=64K count=4 seek=64 oflag=direct conv=notrunc status=none
fsvol_umount "$T/mnt"
# now the superblocks record m1 as missing: the same degraded mount needs no --run
fsvol_mount "$T/mnt" "$T/v/d0" "$T/v/d2"
fsvol_umount "$T/mnt"

# --- every member again: the stale one is refused, naming re-add ------------------------------
expect_fail_msg "$T/v/d1: stale" "$FSVOL" mount "$T/mnt" "$T"/v/d{0,1,2}
[[ $LAST_ERR == *"'fsvol re-add MNT $T/v/d1'"* ]] || fail "the stale refusal does not name re-add: $LAST_ERR"
fsvol_mount "$T/mnt" "$T/v/d0" "$T/v/d2"
out=$("$FSVOL" re-add "$T/mnt" "$T/v/d1") || fail "re-add: $out"
for ((i = 0; i < 600; i++)); do
	grep -q "recovery done" "$T/mnt/status" && break
	sleep 0.05
done
grep -q "m1: $T/v/d1 active" "$T/mnt/status" || fail "re-add did not bring m1 back: $(cat "$T/mnt/status")"
fsvol_umount "$T/mnt"
fsvol_mount "$T/mnt" "$T"/v/d{0,1,2}
cmp_at "$T/mnt/volume" "$T/ref" 0 $((2 * MiB))
fsvol_umount "$T/mnt"

# --- --force takes back and starts what it can, --run included ----------------------------
fsvol_mount --force "$T/mnt" "$T/v/d0" "$T/v/d1"
fsvol_umount "$T/mnt"
note "mount --run ok"
