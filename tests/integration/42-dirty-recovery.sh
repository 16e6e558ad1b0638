#!/usr/bin/env bash
# Issue 22 point 8: a recovery interrupted by kill -9 leaves a dirty volume
# with a member rebuilt only below its checkpoint. md's way (docs/format.md):
# - the plain mount of all the members is refused as dirty degraded (md counts
#   a member not yet in sync as missing), and says --force resumes it;
# - after `mount --force` the recovery resumes, then the resync the crash left
#   owed runs (shown pending until then), and a clean umount leaves clean
#   superblocks: the next degraded start is not refused as dirty;
# - started --force without the half-rebuilt member, the owed resync shows
#   pending in MNT/status and status.json until a spare has made the volume
#   whole; the raid5 recovery of that spare from 0 rewrites every stripe from
#   the others, which settles it (md: what a recovery makes consistent is
#   clean), and the volume is clean again.
. "$(dirname "$0")/../lib.sh"
requires jq


wait_clean_sync() { # MNT: healthy, the last pass done, no resync pending
	local i
	for ((i = 0; i < 1200; i++)); do
		if jq -e '.state == "healthy" and .resync_pending == false and .sync.state == "done"' \
			"$1/status.json" >/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	fail "$1: the owed resync did not run to the end: $(cat "$1/status")"
}

states() { # MEMBER...: the State line of each superblock
	local m
	for m in "$@"; do "$FSVOL" examine "$m" | sed -n 's/^ *State : //p'; done | sort -u
}

killed_mid_rebuild() { # DIR: a raid5 whose recovery onto DIR/spare was killed at ~40%
	local d=$1 pid i
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d/m0" "$d/m1" "$d/m2" >/dev/null
	truncate -s 6M "$d/spare"
	fsvol_mount "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
	safe_mode_off "$d/mnt" # md with safe mode off: still dirty when killed mid-recovery
	random_file "$d/data" "$(stat -c %s "$d/mnt/volume")"
	dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
	sync_hold "$d/mnt" 40 # md's sync_max: the recovery stops at 40% (its checkpoint saved)
	"$FSVOL" fail "$d/mnt" 0
	"$FSVOL" add "$d/mnt" "$d/spare"
	sync_wait_held "$d/mnt" recovery
	pid=$(daemon_pid "$d/mnt")
	kill -9 "$pid"
	for ((i = 0; i < 100; i++)); do _alive "$pid" || break; sleep 0.05; done
	_alive "$pid" && fail "daemon $pid survived kill -9"
	umount -l "$d/mnt" 2>/dev/null || fusermount3 -uz "$d/mnt" 2>/dev/null || true
	_drop_cleanup fsvol "$d/mnt" "$pid"
	[[ $(states "$d/m1" "$d/m2" "$d/spare") == "active (dirty)" ]] || fail "not dirty after kill -9"
}

# --- all the members: refused plain, resumed with --force, clean afterwards
d=$T/all
killed_mid_rebuild "$d"
expect_fail_msg "dirty degraded" "$FSVOL" mount "$d/mnt" "$d/m1" "$d/m2" "$d/spare"
refusal=$LAST_ERR
fsvol_mount --force "$d/mnt" "$d/m1" "$d/m2" "$d/spare" 2>/dev/null
wait_clean_sync "$d/mnt"
grep -q "recovery of member 0 (.*) resumes at" "$DAEMON_LOG" || fail "the recovery did not resume from its checkpoint"
# below where it resumed, only a resync can settle what the crash left
[[ $(jq -r .sync.action "$d/mnt/status.json") == resync ]] || fail "no resync after the resumed recovery: $(cat "$d/mnt/status")"
vol_cmp "$d/data" "$d/mnt/volume" || fail "data differs after the resumed recovery"
out=$("$FSVOL" scrub "$d/mnt") || fail "scrub: $out"
[[ $out == *"check done"*", 0 mismatches"* ]] || fail "scrub: $out"
fsvol_umount "$d/mnt"
[[ $(states "$d/m1" "$d/m2" "$d/spare") == clean ]] ||
	fail "still dirty after the recovery, the resync and a clean umount: $(states "$d/m1" "$d/m2" "$d/spare")"
# the next degraded start is a clean one
fsvol_mount --run "$d/mnt" "$d/m1" "$d/spare" 2>/dev/null
vol_cmp "$d/data" "$d/mnt/volume" || fail "data differs, degraded to the rebuilt member"
fsvol_umount "$d/mnt"
[[ $refusal == *"member 0 was being rebuilt"*"use --force to resume the recovery"* ]] ||
	fail "the refusal does not say which recovery --force resumes: $refusal"
note "kill -9 mid-recovery: plain mount refused (dirty degraded), --force resumed it, resync ran, clean after"

# --- without the half-rebuilt member: the resync shows pending until a spare is rebuilt
d=$T/pending
killed_mid_rebuild "$d"
truncate -s 6M "$d/spare2"
fsvol_mount --force "$d/mnt" "$d/m1" "$d/m2" 2>/dev/null
for ((i = 0; i < 600; i++)); do
	jq -e '.sync.state == "done" or .sync.state == "stopped"' "$d/mnt/status.json" >/dev/null && break
	sleep 0.05
done
jq -e '.resync_pending == true' "$d/mnt/status.json" >/dev/null ||
	fail "status.json shows no resync pending on a dirty degraded volume: $(cat "$d/mnt/status.json")"
grep -q "resync pending" "$d/mnt/status" || fail "MNT/status shows no resync pending: $(cat "$d/mnt/status")"
"$FSVOL" add "$d/mnt" "$d/spare2" || fail "add spare2"
wait_clean_sync "$d/mnt"
# a raid5 recovery from 0 rewrites every stripe from the others: what it
# makes consistent is clean (md), so the resync owed is settled with it
grep -q "the resync it owed is settled" "$DAEMON_LOG" || fail "the full recovery did not settle the owed resync"
vol_cmp "$d/data" "$d/mnt/volume" || fail "data differs after the recovery onto spare2"
fsvol_umount "$d/mnt"
[[ $(states "$d/m1" "$d/m2" "$d/spare2") == clean ]] || fail "still dirty after the recovery and the resync"
echo "PASS"
