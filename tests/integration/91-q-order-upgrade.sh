#!/usr/bin/env bash
# raid6 left-/right-asymmetric volumes written before format 5 (issue 30, A1):
# their Q used the data order, not md's syndrome order. tests/data holds one
# (raid6-la-v4.tar.xz, made by that fsvol). Here:
# - examine says version 4 and "Q Order : data order";
# - mounting it with a member missing is refused, naming the way forward;
# - mounted whole, a resync rewrites Q (counted as mismatches: the 6 of its 16
#   stripes where the orders differ), the log says so, the superblocks then
#   say version 5 and md's order, and every member's data area is
#   byte-identical to a volume this build made and wrote with the same bytes;
# - the next mount owes nothing, and with two members missing the volume reads
#   back whole (two-failure recovery through Q);
# - grown to 6 members (a reshape writes every stripe again, Q in md's order),
#   a scrub finds 0 mismatches and the data reads back, whole and without two
#   members.
. "$(dirname "$0")/../lib.sh"
requires jq

DATA=$(cd "$(dirname "$0")/../data" && pwd)/raid6-la-v4.tar.xz
mkdir -p "$T/old"
tar -xJf "$DATA" -C "$T/old"
O=$T/old
"$FSVOL" examine "$O/m0" >"$T/ex0"
grep -q "Version : 4$" "$T/ex0" || fail "the old member is not version 4: $(cat "$T/ex0")"
grep -q "Q Order : data order (fsvol before format 5)" "$T/ex0" || fail "examine does not tell the old Q order: $(cat "$T/ex0")"

# degraded: refused, saying what to do
mkdir -p "$T/mnt"
expect_fail_msg "wrote its Q in the data order, not md's" "$FSVOL" mount --run "$T/mnt" "$O"/m{0,1,2,3}
[[ $LAST_ERR == *"then mount it here whole: the mount rewrites Q"* ]] || fail "no way forward in: $LAST_ERR"

# the reference: the same geometry and bytes, written by this build
mkdir -p "$T/ref"
"$FSVOL" create -l raid6 -p left-asymmetric -c 4K -z 64K -N ref $(members "$T/ref/m" 5) >/dev/null
fsvol_mount "$T/rmnt" $(members "$T/ref/m" 5)
dd if="$O/data.bin" of="$T/rmnt/volume" bs=4k oflag=direct conv=notrunc status=none
fsvol_umount "$T/rmnt"

# whole: the mount rewrites Q
M=$T/mnt
fsvol_mount "$M" "$O"/m{0,1,2,3,4} 2>"$T/mount.err"
wait_resync "$M"
grep -q "Q was written in the data order by an fsvol before format 5; a resync rewrites it" "$T/mount.err" ||
	fail "the mount does not say Q is rewritten: $(cat "$T/mount.err")"
grep -q "Q rewritten in md's order" "$DAEMON_LOG" || fail "the log does not say the rewrite ended: $(tail -n 5 "$DAEMON_LOG")"
[[ $(jq .mismatch_count "$M/status.json") == 6 ]] ||
	fail "mismatches $(jq .mismatch_count "$M/status.json"), want 6 (stripes 2, 3, 7, 8, 12, 13)"
jq_true '.q_rewrite == false and .resync_pending == false' "$M/status.json" || fail "still owed: $(cat "$M/status.json")"
vol_cmp "$O/data.bin" "$M/volume" || fail "the data changed"
fsvol_umount "$M"
"$FSVOL" examine "$O/m2" >"$T/ex2"
grep -q "Version : 5$" "$T/ex2" || fail "not version 5 after the rewrite: $(cat "$T/ex2")"
grep -q "Q Order : md (syndrome order)" "$T/ex2" || fail "examine does not say md's order: $(cat "$T/ex2")"
for k in 0 1 2 3 4; do
	cmp -n $((64 * 1024)) -i $MiB:$MiB "$O/m$k" "$T/ref/m$k" ||
		fail "member $k's data area differs from this build's for the same bytes"
done

# nothing owed any more; two members gone, Q rebuilds the data
fsvol_mount "$M" "$O"/m{0,1,2,3,4} 2>"$T/mount2.err"
jq_true '.q_rewrite == false and .resync_pending == false' "$M/status.json" || fail "owed again: $(cat "$M/status.json")"
! grep -q "Q was written in the data order" "$T/mount2.err" "$DAEMON_LOG" || fail "the second mount rewrote Q again"
fsvol_umount "$M"
mkdir -p "$T/copy"
cp "$O"/m{0,2,4} "$T/copy/" # a copy: the members left out go stale
fsvol_mount --run "$M" "$T"/copy/m{0,2,4}
jq_true '.state == "degraded"' "$M/status.json" || fail "not degraded: $(jq .state "$M/status.json")"
vol_cmp "$O/data.bin" "$M/volume" || fail "two-failure reads differ from the data"
fsvol_umount "$M"

# a reshape of the left-asymmetric volume: Q in md's order in the new geometry
truncate -s $((2 * MiB)) "$O/m5"
fsvol_mount "$M" "$O"/m{0,1,2,3,4}
out=$("$FSVOL" grow "$M" "$O/m5" 2>&1) || fail "fsvol grow: $out"
# done: the new size (given at the reshape's end, as md does) and no pass left
# (the size first: right after grow the reshape may not show yet)
reshaped() { [[ $(size_of "$M/volume") -eq $((4 * 64 * 1024)) ]] &&
	jq -e '.reshape == null and (.sync.state // "none") != "running" and .resync_pending == false' \
		"$M/status.json" >/dev/null; }
wait_for 120 "the reshape to 6 members done" reshaped
[[ $(size_of "$M/volume") -eq $((4 * 64 * 1024)) ]] || fail "not grown: $(size_of "$M/volume") bytes"
out=$("$FSVOL" scrub "$M")
[[ $out == *"check done"*", 0 mismatches"* ]] || fail "scrub after the reshape: $out"
vol_cmp "$O/data.bin" "$M/volume" || fail "the data changed in the reshape"
fsvol_umount "$M"
fsvol_mount --run "$M" "$O/m0" "$O/m2" "$O/m3" "$O/m5"
vol_cmp "$O/data.bin" "$M/volume" || fail "two-failure reads differ after the reshape"
fsvol_umount "$M"
