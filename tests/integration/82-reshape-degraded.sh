#!/usr/bin/env bash
# A member fails in the middle of a reshape (md goes on degraded):
#  - raid5 x4 -> x5: member 1 dies by injected I/O errors inside the critical
#    section (the windows whose new rows overlap old ones, moved through the
#    backup), and the power is cut inside such a window: the reshape had gone
#    on without member 1, the window's backup lacks member 1's share, so the
#    mount rebuilds that share from the backup's parity and writes the window
#    back; the data is the same throughout, and after the reshape a spare
#    added is rebuilt (scrub: 0 mismatches, fsvol-verify clean).
#  - raid6 x5 -> x6, under a verifying fio and an acknowledging writer:
#    `fsvol fail` of an old member inside the critical section, then injected
#    I/O errors on the member the reshape adds; the reshape goes on with two
#    missing (a spare added meanwhile takes over one role and waits), kill
#    -9; a plain mount refuses the dirty degraded volume with md's reason,
#    --force resumes the reshape degraded, nothing acknowledged is lost, the
#    added member stays failed in the superblocks, the spare is rebuilt once
#    the reshape ends, then another, scrub and fsvol-verify are clean.
#  - raid5 x4 -> x5 stopped cleanly mid-way: a mount without the member the
#    reshape adds is refused (mdadm's --run rule), with it the reshape
#    resumes; `fsvol fail` of that new member, the reshape ends degraded
#    with it failed in the superblocks, and its re-add rebuilds it whole
#    (the write-intent bitmap knows nothing of the windows it missed).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"
cd "$T" # fio may leave state files in the working directory

# no reshape and no pass running (a degraded volume keeps a resync owed: not waited for)
_settled() { jq -e '.reshape == null and (.sync.state // "none") != "running"' "$1/status.json" >/dev/null; }
_slot_state() { jq -r ".members[] | select(.slot == $2) | .state" "$1/status.json"; }
_size_is() { [[ $(size_of "$1") -eq $2 ]]; } # the new capacity shows a moment after the reshape's end
_healthy() { jq -e '.state == "healthy" and .resync_pending == false and (.sync.state // "none") != "running"' "$1/status.json" >/dev/null; }
scrub_clean() { # MNT WHAT
	local out
	out=$("$FSVOL" scrub "$1") || fail "$2: scrub: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$2: scrub: $out"
	note "$2: $out"
}
verified() { # WHAT MEMBER...: the unmounted members' parity, by the independent checker
	local what=$1 out
	shift
	out=$("$FSVOL_VERIFY" "$@") || fail "$what: fsvol-verify: $out"
	note "$what: fsvol-verify: $out"
}

# --- raid5 x4 -> x5: errors on member 1 in the critical section, a power cut in a backed-up window
reshape_deg_start r5 "$T/r5" -l raid5 -c 64K -s 8M
# survivors at the remounts (live, lopts): member 1 is dead (its faults went
# with the daemon, its file is stale)
# window 1 (the pass waits ~1.5 s after each at 1 MB/s): member 1 fails at
# its read, the backup goes to the 4 others, the superblocks record it; K
# member writes count from the window's start (the failure's superblocks,
# 4 shares, the backup's 4 superblocks, then the new rows); window 2, the
# last one backed up, if needed: 4 shares, 4 superblocks, the new rows
k=0
for K in 14 12; do
	pid=$(daemon_pid "$d/mnt")
	wait_for 60 "r5: the reshape did not move" _moved "$d/mnt"
	((k++)) || echo "fault 1 error=all" >"$d/mnt/ctl"
	echo "powercut-after $K" >"$d/mnt/ctl"
	wait_for 60 "r5: no power cut after $K member writes" _dead "$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "r5: umount of the dead mount failed"
	_drop_cleanup fsvol "$d/mnt" "$pid"
	# md's rule: a dirty degraded volume starts only when told
	expect_fail_msg "cannot start a dirty degraded raid5" "$FSVOL" mount --log "$DAEMON_LOG" "${lopts[@]}" "$d/mnt" "${live[@]}"
	[[ $LAST_ERR == *"use --force"* ]] || fail "r5: the refusal names no way forward: $LAST_ERR"
	fsvol_mount --force "${lopts[@]}" "$d/mnt" "${live[@]}"
	cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "r5: data differs after a cut $K writes into a degraded window"
	[[ $(_slot_state "$d/mnt" 1) == missing ]] || fail "r5: slot 1 is $(_slot_state "$d/mnt" 1), not missing"
	tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -q "rebuilt from its parity" && break
done
restored=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -c "written back from its backup" || true)
rebuilt=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -c "share of the window's backup rebuilt from its parity" || true)
note "r5: $k cut(s) in the critical section after member 1 failed: $restored window(s) written back, $rebuilt with a share rebuilt"
((rebuilt > 0)) || fail "r5: no cut landed in a backed-up window after the failure (K = 14 12)"
echo "sync_speed_max 200000" >"$d/mnt/ctl"
wait_for 120 "r5: the reshape did not end: $(cat "$d/mnt/status")" _settled "$d/mnt"
wait_for 30 "r5: capacity $(size_of "$d/mnt/volume") after the reshape, not 32M" _size_is "$d/mnt/volume" $((4 * 8 * MiB))
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "r5: data differs after the degraded reshape"
cmp -n $((8 * MiB)) -i "$cap:0" "$d/mnt/volume" /dev/zero || fail "r5: the new space does not read as zeros"
# a replacement: the caches written out first, then a spare rebuilt into slot 1
for i in 0 2 3 4; do "$FSVOL" ctl "$d/mnt" fault "$i" none >/dev/null || fail "r5: fault $i none"; done
truncate -s 12M "$d/s0"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "r5: add a spare"
wait_for 120 "r5: the spare was not rebuilt: $(cat "$d/mnt/status")" _healthy "$d/mnt"
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "r5: data differs after the rebuild"
scrub_clean "$d/mnt" r5
fsvol_umount "$d/mnt"
verified r5 "${live[@]}" "$d/s0"

# --- raid6 x5 -> x6: fsvol fail, then errors on the new member, writers on, kill -9
d=$T/r6
mkdir -p "$d"
"$FSVOL" create -l raid6 -c 64K -s 8M "$d"/m{0,1,2,3,4} >/dev/null || fail "r6: create"
truncate -s 12M "$d/a0"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3,4}
cap=$(size_of "$d/mnt/volume")
half=$((cap / 2))
fio_half "$d/mnt" "$half" $((cap - half)) || fail "r6: fio before the reshape: $(cat "$T/fio.out")"
"$ACKW" write -F -j 4 -n 3000 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w0.out" 2>&1 ||
	fail "r6: writer before the reshape: $(cat "$d/w0.out")"
reshape_speed "$d/mnt" 1000
"$FSVOL" grow "$d/mnt" --add "$d/a0" >/dev/null || fail "r6: grow"
"$ACKW" write -j 4 -t 300 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w1.out" 2>&1 &
wpid=$!
track_pid "$wpid"
wait_for 60 "r6: the reshape did not move" _moved "$d/mnt"
sync_cap "$d/mnt" 40 # md's sync_max: it cannot end before the kill, however slow the steps below are
"$FSVOL" fail "$d/mnt" 2 >/dev/null || fail "r6: fsvol fail 2 during the reshape"
pct=$(reshape_field "$d/mnt" percent)
note "r6: m2 failed at ${pct}% (window $(sync_field "$d/mnt" position) of $(sync_field "$d/mnt" total))"
# a spare added now takes over slot 2 at once; its rebuild waits for the reshape's end
truncate -s 12M "$d/s0" "$d/s1"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "r6: add a spare during the reshape"
[[ $(_slot_state "$d/mnt" 2) == rebuilding ]] || fail "r6: slot 2 is $(_slot_state "$d/mnt" 2) after the add"
reshape_speed "$d/mnt" 500 # fio is slow here, not the reshape: some of it is left for the rest
fio_half "$d/mnt" "$half" $((cap - half)) || fail "r6: fio during the degraded reshape: $(cat "$T/fio.out")"
reshape_speed "$d/mnt" 3000
num=$(jq -r ".members[] | select(.path == \"$d/a0\") | .number" "$d/mnt/status.json")
"$FSVOL" ctl "$d/mnt" fault "$num" error=all >/dev/null || fail "r6: fault $num error=all"
wait_for 60 "r6: the new member did not fail: $(cat "$d/mnt/status")" \
	bash -c "[[ \$(jq -r '.members[] | select(.slot == 5) | .state' '$d/mnt/status.json') == failed ]]"
pct=$(reshape_field "$d/mnt" percent)
[[ -n $pct ]] || fail "r6: the reshape ended before the kill: $(cat "$d/mnt/status")"
note "r6: the new member failed at ${pct}%: two missing"
reshape_wait_past "$d/mnt" $((${pct%.*} + 3))
pid=$(daemon_pid "$d/mnt")
kill -KILL "$pid"
wait "$wpid" || fail "r6: writer failed: $(cat "$d/w1.out")"
"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "r6: umount of the dead mount failed"
_drop_cleanup fsvol "$d/mnt" "$pid"
live=("$d"/m{0,1,3,4} "$d/s0")
expect_fail_msg "cannot start a dirty degraded raid6" "$FSVOL" mount --log "$DAEMON_LOG" "$d/mnt" "${live[@]}"
lines=$(wc -l <"$DAEMON_LOG")
fsvol_mount --force "$d/mnt" "${live[@]}"
wait_for 60 "r6: the reshape did not resume" _resumed "$lines"
note "r6: $(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -o "reshape resumes at window.*" | head -1) with slot 2 waiting for its rebuild and slot 5 missing"
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "r6: acknowledged writes lost at the resume: $out"
reshape_speed "$d/mnt" 200000
wait_for 120 "r6: the reshape did not end: $(cat "$d/mnt/status")" _settled "$d/mnt"
wait_for 30 "r6: capacity $(size_of "$d/mnt/volume") after the reshape, not 32M" _size_is "$d/mnt/volume" $((4 * 8 * MiB))
"$FSVOL" examine "$d/m0" | grep -Eq "^ +5 +5 +(failed|missing) " ||
	fail "r6: the member the reshape added failed, yet: $("$FSVOL" examine "$d/m0" | grep -E '^ +5 ')"
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "r6: acknowledged writes lost: $out"
note "r6: writer: $out"
fio_half "$d/mnt" "$half" $((cap - half)) --verify_only || fail "r6: fio's data after the reshape: $(cat "$T/fio.out")"
"$FSVOL" add "$d/mnt" "$d/s1" >/dev/null || fail "r6: add a second spare"
wait_for 120 "r6: the spares were not rebuilt: $(cat "$d/mnt/status")" _healthy "$d/mnt"
grep -q "recovery of member 2 done" "$DAEMON_LOG" || fail "r6: the spare that took over during the reshape was not rebuilt"
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "r6: acknowledged writes lost after the rebuild: $out"
fio_half "$d/mnt" "$half" $((cap - half)) --verify_only || fail "r6: fio's data after the rebuild: $(cat "$T/fio.out")"
scrub_clean "$d/mnt" r6
fsvol_umount "$d/mnt"
verified r6 "${live[@]}" "$d/s1"

# --- raid5 x4 -> x5: stopped cleanly mid-way, its new member left out, then failed and re-added
d=$T/rd
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 64K -s 4M "$d"/m{0,1,2,3} >/dev/null || fail "rd: create"
truncate -s 8M "$d/a0"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
cap=$(size_of "$d/mnt/volume")
random_file "$d/data" "$cap"
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct conv=fsync status=none
reshape_speed "$d/mnt" 1000
"$FSVOL" grow "$d/mnt" --add "$d/a0" >/dev/null || fail "rd: grow"
reshape_wait_past "$d/mnt" 10
fsvol_umount "$d/mnt"
# the windows moved live on the new member too: left out, it is missing (mdadm's --run rule)
expect_fail_msg "or --run to start it degraded" "$FSVOL" mount --log "$DAEMON_LOG" "$d/mnt" "$d"/m{0,1,2,3}
[[ $LAST_ERR == *"m4 (not given; $d/a0 holds it"* ]] || fail "rd: the refusal does not name the new member: $LAST_ERR"
lines=$(wc -l <"$DAEMON_LOG")
# slow from the start, and held (md's sync_max) at 60% of the new 16M: it cannot end before the fail
fsvol_mount "--ctl=sync_speed_max 1000" "--ctl=sync_speed_min 1000" "--ctl=sync_max $((16 * MiB / 512 * 60 / 100))" \
	"$d/mnt" "$d"/m{0,1,2,3} "$d/a0"
wait_for 60 "rd: the reshape did not resume" _resumed "$lines"
"$FSVOL" fail "$d/mnt" 4 >/dev/null || fail "rd: fsvol fail of the member the reshape adds"
[[ $(_slot_state "$d/mnt" 4) == failed ]] || fail "rd: slot 4 is $(_slot_state "$d/mnt" 4) after fsvol fail"
pct=$(reshape_field "$d/mnt" percent)
[[ -n $pct ]] || fail "rd: the reshape ended before the fail: $(cat "$d/mnt/status")"
note "rd: m4 (the new member) failed at ${pct}%"
# the roles are the new geometry's while it reshapes (md's raid_disks), the failed new one among them
grep -q "5 members \[5/4\] \[UUUU_\]" "$d/mnt/status" || fail "rd: the status line hides the new member: $(head -n 1 "$d/mnt/status")"
wait_for 30 "rd: no DegradedArray event counting the new member: $(cat "$d/mnt/events")" \
	grep -q "DegradedArray .* 1 of 5 members failed or missing" "$d/mnt/events"
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "rd: data differs after the new member failed"
sync_release "$d/mnt"
reshape_speed "$d/mnt" 200000
wait_for 120 "rd: the reshape did not end: $(cat "$d/mnt/status")" _settled "$d/mnt"
wait_for 30 "rd: capacity $(size_of "$d/mnt/volume") after the reshape, not 16M" _size_is "$d/mnt/volume" $((16 * MiB))
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "rd: data differs after the reshape"
"$FSVOL" examine "$d/m0" | grep -Eq "^ +4 +4 +failed " || fail "rd: slot 4 after the reshape: $("$FSVOL" examine "$d/m0" | grep -E '^ +4 ')"
# back: rebuilt whole (the write-intent bitmap says nothing of the windows it missed)
lines=$(wc -l <"$DAEMON_LOG")
"$FSVOL" remove "$d/mnt" 4 >/dev/null || fail "rd: remove 4"
"$FSVOL" re-add "$d/mnt" "$d/a0" >/dev/null || fail "rd: re-add the new member"
wait_for 120 "rd: the re-added member was not rebuilt: $(cat "$d/mnt/status")" _healthy "$d/mnt"
tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -q "recovery starts (all of it: it missed a reshape)" ||
	fail "rd: the re-add was not a whole rebuild: $(tail -n +$((lines + 1)) "$DAEMON_LOG")"
scrub_clean "$d/mnt" rd
"$FSVOL" fail "$d/mnt" 0 >/dev/null || fail "rd: fail 0"
cmp -n "$cap" "$d/data" "$d/mnt/volume" || fail "rd: data differs with m0 failed (the re-added member's share)"
fsvol_umount "$d/mnt"
verified rd "$d"/m{0,1,2,3} "$d/a0"

echo "PASS"
