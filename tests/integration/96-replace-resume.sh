#!/usr/bin/env bash
# Issue 30 A4, A5 and the new user's point 2: a replace (md's
# want_replacement) as md does it.
# A4.  The superblocks record it (the replacement's role and how far it is
#      built, md's MD_FEATURE_REPLACEMENT and recovery_offset): after a clean
#      umount, and after kill -9, a plain mount resumes it from there, and
#      says so; superblocks of the version before mount as they are.
# A5.  The role failing during its replace: the replacement becomes the member
#      rebuilt for it and keeps what it built (the recovery resumes there),
#      not an older idle spare; acknowledged writes meanwhile are all there.
# 2.   Once done, the replaced member is marked faulty (md), not a spare; a
#      later grow --add NEW puts NEW in the new role.
. "$(dirname "$0")/../lib.sh"
requires jq
ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"

json() { jq -r "$2" "$1/status.json"; }
healthy() { json "$1" '[.state == "healthy", (.sync == null or .sync.state != "running")] | all' | grep -qx true; }
replace_done() { grep -q "replace done" "$1/status"; }
bitmap_clean() { [[ $(json "$1" '.bitmap.dirty') == 0 ]]; }
# built MEMBER: how far its superblock says the replacement is built (0 when not one)
built() { "$FSVOL" examine "$1" | sed -n 's/.*Replacement device [0-9]* (built to \([0-9.]*\)[KMG]*).*/\1/p'; }
built_some() { [[ $(built "$1") =~ ^[0-9.]+$ ]] && [[ $(built "$1") != 0 ]]; }
# resumed_at: the unit the last resumed replace started at, from the daemon's log
resumed_at() { sed -n 's/.*replace of member [0-9]* (.*) onto .* resumes at \([0-9]*\) of .*/\1/p' "$DAEMON_LOG" | tail -n 1; }

# remount DIR: a plain mount of the members and s1, its messages kept in DIR/mount.err
remount() {
	local d=$1
	"$FSVOL" mount --log "$DAEMON_LOG" "$d/mnt" "$d"/m{0,1,2,3} "$d/s1" 2>"$d/mount.err" ||
		fail "mount: $(cat "$d/mount.err")"
	_push_cleanup fsvol "$d/mnt" "$(daemon_pid "$d/mnt")"
}

mkvol() { # DIR: raid5 x4, 4M each, written with reference data
	local d=$1
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d"/m{0,1,2,3} >/dev/null
	truncate -s 6M "$d/s1"
	fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
	random_file "$d/ref" $((12 * MiB))
	dd if="$d/ref" of="$d/mnt/volume" bs=1M oflag=direct status=none
	# the bits of those writes cleared: a crash then owes no copy again
	wait_for 30 "the write-intent bitmap stays dirty: $(cat "$d/mnt/status")" bitmap_clean "$d/mnt"
	echo "sync_speed_max 1000" >"$d/mnt/ctl"
	"$FSVOL" replace --with "$d/s1" "$d/mnt" 1 >/dev/null || fail "replace 1 with s1"
	wait_sync_past "$d/mnt" replace 10
	wait_for 30 "no checkpoint of the replace in s1's superblock: $("$FSVOL" examine "$d/s1")" built_some "$d/s1"
}

# after the replace resumed: it ends, the data is whole, m1 is marked faulty
finish() { # DIR
	local d=$1 out
	echo "sync_speed_max 200000" >"$d/mnt/ctl"
	wait_for 120 "the resumed replace did not end: $(cat "$d/mnt/status")" replace_done "$d/mnt"
	grep -q "m4: $d/s1 active (role 1)$" "$d/mnt/status" || fail "s1 did not take role 1: $(cat "$d/mnt/status")"
	grep -q "m1: $d/m1 failed$" "$d/mnt/status" || fail "the replaced m1 is not marked faulty: $(cat "$d/mnt/status")"
	vol_cmp "$d/ref" "$d/mnt/volume" || fail "data differs after the resumed replace"
	out=$("$FSVOL" scrub "$d/mnt") || fail "scrub: $out"
	[[ $out == *", 0 mismatches"* ]] || fail "scrub after the resumed replace: $out"
}

# resume DIR WHAT AT: after WHAT, a plain mount says the replace resumes, and
# it goes on from where it was (s1 built to AT MiB, the bitmap clean) to the end
resume() {
	local d=$1 n
	remount "$d"
	grep -q "replace of member 1 ($d/m1) onto $d/s1 resumes at [0-9.]*% (recorded in the superblocks)" "$d/mount.err" ||
		fail "the mount after $2 did not say the replace resumes: $(cat "$d/mount.err")"
	wait_for 60 "the replace did not go on after $2: $(cat "$d/mnt/status")" grep -q "replace \(running\|done\)" "$d/mnt/status"
	n=$(resumed_at)
	((n > 0)) || fail "the replace started again from 0 after $2 (s1 was built to $3M)"
	note "$2 with s1 built to $3M: resumed at unit $n"
	finish "$d"
	fsvol_umount "$d/mnt"
}

# --- A4, a clean umount
part_umount() {
	local d=$T/umount at
	mkvol "$d"
	fsvol_umount "$d/mnt"
	at=$(built "$d/s1")
	"$FSVOL" examine "$d/s1" | grep -q "^ *Version : 5$" || fail "a replace recorded in a superblock older than this build's (5)"
	"$FSVOL" examine "$d/m0" | grep -Eq "^ +4 +4 +spare .* replacement for 1$" ||
		fail "m0's slot table lacks the replacement: $("$FSVOL" examine "$d/m0")"
	resume "$d" "a clean umount" "$at"
}

# --- 2: the replaced member is marked faulty; grow --add NEW puts NEW in the new role
part_grow() {
	local d=$T/grow out
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d"/m{0,1,2,3} >/dev/null
	truncate -s 6M "$d/s1" "$d/new"
	fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
	random_file "$d/ref" $((12 * MiB))
	dd if="$d/ref" of="$d/mnt/volume" bs=1M oflag=direct status=none
	"$FSVOL" replace --with "$d/s1" "$d/mnt" 1 >/dev/null || fail "replace 1 with s1"
	wait_for 120 "the replace did not end: $(cat "$d/mnt/status")" replace_done "$d/mnt"
	grep -q "m1: $d/m1 failed$" "$d/mnt/status" || fail "the replaced m1 is not marked faulty: $(cat "$d/mnt/status")"
	out=$("$FSVOL" grow --add "$d/new" "$d/mnt" 2>&1) || fail "grow --add new: $out"
	wait_for 120 "the reshape did not end: $(cat "$d/mnt/status")" healthy "$d/mnt"
	grep -q "m5: $d/new active (role 4)$" "$d/mnt/status" || fail "NEW did not take the new role: $(cat "$d/mnt/status")"
	grep -q "m1: $d/m1 failed$" "$d/mnt/status" || fail "the replaced m1 was used again: $(cat "$d/mnt/status")"
	vol_cmp "$d/ref" "$d/mnt/volume" || fail "data differs after the grow"
	"$FSVOL" remove "$d/mnt" "$d/m1" >/dev/null || fail "remove the replaced m1"
	fsvol_umount "$d/mnt"
}

# --- A4, kill -9
part_kill() {
	local d=$T/kill at pid
	mkvol "$d"
	at=$(built "$d/s1")
	pid=$(daemon_pid "$d/mnt")
	kill -9 "$pid"
	wait_for 10 "daemon $pid still alive after kill -9" _gone "$pid"
	umount -l "$d/mnt" 2>/dev/null || fusermount3 -uz "$d/mnt" 2>/dev/null || true
	_drop_cleanup fsvol "$d/mnt" "$pid"
	resume "$d" "kill -9" "$at"
}

# --- A5: the role fails during its replace, under acknowledged writes
part_fail() {
	local d=$T/fail wpid out at sum1 sum2 n
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d"/m{0,1,2,3} >/dev/null
	truncate -s 6M "$d/s0" "$d/s1"
	fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
	"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "add s0 (an idle spare, older than the replacement)"
	"$ACKW" write -j 4 -b 64K -s 7 -n 600 -f 16 "$d/mnt/volume" "$d/log" >"$d/w0.out" 2>&1 ||
		fail "first write run: $(cat "$d/w0.out")"
	"$ACKW" write -j 2 -b 64K -t 600 "$d/mnt/volume" "$d/log" >"$d/w1.out" 2>&1 &
	wpid=$!
	track_pid "$wpid"
	echo "sync_speed_max 1000" >"$d/mnt/ctl"
	"$FSVOL" replace --with "$d/s1" "$d/mnt" 1 >/dev/null || fail "replace 1 with s1"
	wait_sync_past "$d/mnt" replace 30
	at=$(json "$d/mnt" .sync.percent)
	"$FSVOL" fail "$d/mnt" 1 >/dev/null || fail "fail m1 during its replace"
	wait_for 30 "s1 did not take role 1: $(cat "$d/mnt/status")" grep -q "m5: $d/s1 rebuilding (role 1)$" "$d/mnt/status"
	grep -q "m4: $d/s0 spare$" "$d/mnt/status" || fail "the idle spare s0 was taken: $(cat "$d/mnt/status")"
	grep -q "member 1 failed during its replace: its replacement $d/s1 takes the role" "$DAEMON_LOG" ||
		fail "no word of the takeover: $(tail -5 "$DAEMON_LOG")"
	wait_for 60 "no recovery of s1: $(tail -3 "$DAEMON_LOG")" grep -q "recovery of member 1 ($d/s1) resumes at" "$DAEMON_LOG"
	n=$(sed -n "s|.*recovery of member 1 ($d/s1) resumes at \([0-9]*\) of.*|\1|p" "$DAEMON_LOG" | tail -n 1)
	((n > 0)) || fail "the recovery of s1 started from 0: the replace's progress was thrown away"
	note "m1 failed at ${at}% of its replace: s1's recovery resumed at unit $n"
	# writes go on across the takeover (none waits for good)
	wait_acked "$d/log" $(($(grep -c '^A' "$d/log") + 40)) "$wpid"
	kill -TERM "$wpid"
	wait "$wpid" || true
	echo "sync_speed_max 200000" >"$d/mnt/ctl"
	wait_for 120 "not healthy after the recovery: $(cat "$d/mnt/status")" healthy "$d/mnt"
	out=$("$ACKW" verify -b 64K "$d/mnt/volume" "$d/log") || fail "acknowledged writes lost: $out"
	out=$("$FSVOL" scrub "$d/mnt") || fail "scrub: $out"
	[[ $out == *", 0 mismatches"* ]] || fail "scrub after the takeover: $out"
	# what s1 holds is served: the same bytes with another member failed
	sum1=$(md5sum <"$d/mnt/volume")
	"$FSVOL" fail "$d/mnt" 0 >/dev/null || fail "fail m0"
	sum2=$(md5sum <"$d/mnt/volume")
	[[ $sum1 == "$sum2" ]] || fail "the volume reads differently when s1's data is needed"
	fsvol_umount "$d/mnt"
}

# --- superblocks of version 3 (written before replaces were recorded) mount
part_compat() {
	local d=$T/compat m
	mkdir -p "$d"
	"$FSVOL" create -l raid1 -s 4M "$d/a" "$d/b" >/dev/null
	for m in a b; do sb_set "$d/$m" 4 3; done # the version (u32 at 4; the checksum after it is redone)
	"$FSVOL" examine "$d/a" | grep -q "^ *Version : 3$" || fail "not a version-3 superblock: $("$FSVOL" examine "$d/a")"
	fsvol_mount "$d/mnt" "$d/a" "$d/b"
	fsvol_umount "$d/mnt"
	"$FSVOL" examine "$d/a" | grep -q "^ *Version : 5$" || fail "the mount did not write version 5 (this build's)"
}

for part in ${PARTS:-compat grow umount kill fail}; do
	"part_$part"
done
echo "PASS"
