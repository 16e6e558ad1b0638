#!/usr/bin/env bash
# Issue 22 point 2: a recovery stopped by umount at about 10%, 50% and 90%
# (held there by md's sync_max, waited for in status.json, while the umount
# comes) leaves a
# volume that examines and assembles, and its recovery resumes from the saved
# checkpoint (member bytes on disk, docs/format.md), at raid5, raid6 and raid10.
# The data reads back the same, also when the rebuilt member must serve. A
# version-1 superblock with a logical checkpoint past the member's data (what
# the code before wrote) still assembles; its recovery restarts from 0.
. "$(dirname "$0")/../lib.sh"
requires jq



wait_healthy() { # MNT
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ $(jq -r .state "$1/status.json") == healthy ]] && return 0
		sleep 0.05
	done
	fail "$1: not healthy after the recovery: $(cat "$1/status")"
}

stop_at() { # NAME NMEMBERS PERCENT CREATE-ARGS...
	local name=$1 n=$2 pct=$3 d=$T/$1-$3 mem=() i out pos total start lines
	shift 3
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	"$FSVOL" create -c 16K -s 4M "$@" "${mem[@]}" >/dev/null || fail "$name: create"
	truncate -s 6M "$d/spare"
	fsvol_mount "$d/mnt" "${mem[@]}"
	random_file "$d/data" "$(stat -c %s "$d/mnt/volume")"
	dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
	sync_hold "$d/mnt" "$pct" # md's sync_max: the recovery stops at pct% until the umount
	"$FSVOL" fail "$d/mnt" 0 || fail "$name: fail 0"
	"$FSVOL" add "$d/mnt" "$d/spare" || fail "$name: add"
	sync_wait_held "$d/mnt" recovery
	fsvol_umount "$d/mnt"
	out=$("$FSVOL" examine "${mem[@]:1}" "$d/spare" 2>&1) || fail "$name at $pct%: examine: $out"
	grep -q "Rebuilding device 0" <<<"$out" || fail "$name at $pct%: no member rebuilding in examine: $out"
	pos=$(grep "recovery of member 0 stopped" "$DAEMON_LOG" | tail -1 | sed -n 's/.*stopped: \([0-9]*\) of.*/\1/p')
	lines=$(wc -l <"$DAEMON_LOG")
	fsvol_mount "$d/mnt" "${mem[@]:1}" "$d/spare"
	for ((i = 0; i < 600; i++)); do # the sync thread logs where it starts
		out=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep "recovery of member 0 (" | head -1) || true
		[[ -n $out ]] && break
		sleep 0.05
	done
	[[ $out == *"resumes at "* ]] || fail "$name at $pct%: the recovery did not resume: $out"
	read -r start total < <(sed -n 's/.*resumes at \([0-9]*\) of \([0-9]*\) units.*/\1 \2/p' <<<"$out")
	# about where it stopped (a checkpoint is saved at the stop): not past it,
	# and not more than a tenth of the way behind
	((start <= pos && start * 100 >= (pct - 10) * total)) ||
		fail "$name at $pct%: resumed at unit $start of $total, stopped at $pos"
	note "$name: stopped at $pos of $total units ($pct%), resumed at $start"
	echo "sync_speed_max 200000" >"$d/mnt/ctl"
	wait_healthy "$d/mnt"
	vol_cmp "$d/data" "$d/mnt/volume" || fail "$name at $pct%: data differs after the resumed recovery"
	"$FSVOL" fail "$d/mnt" 1 || fail "$name: fail 1"
	vol_cmp "$d/data" "$d/mnt/volume" || fail "$name at $pct%: data differs when the rebuilt member serves"
	fsvol_umount "$d/mnt"
	rm -rf "$d"
}


# A version-1 superblock, as the code before the fix wrote it at 74% of a
# raid5 of 3 x 4M: rebuild_pos in logical bytes, past the member's data. It
# assembles, and that recovery restarts from 0.
v1() {
	local d=$T/v1 m out lines i
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 4M "$d/m0" "$d/m1" "$d/m2" >/dev/null
	truncate -s 6M "$d/spare"
	fsvol_mount "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
	random_file "$d/data" "$(stat -c %s "$d/mnt/volume")"
	dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
	sync_hold "$d/mnt" 74
	"$FSVOL" fail "$d/mnt" 0
	"$FSVOL" add "$d/mnt" "$d/spare"
	sync_wait_held "$d/mnt" recovery
	fsvol_umount "$d/mnt"
	for m in "$d/m1" "$d/m2" "$d/spare"; do
		sb_set "$m" 4 1                      # version 1 (the checksum after it is recomputed)
		sb_set "$m" $((256 + 32)) 6207570    # slots[0].rebuild_pos: 74% of 8M, logical
	done
	out=$("$FSVOL" examine "$d/spare" 2>&1) || fail "version 1: examine: $out"
	grep -q "Version : 1" <<<"$out" || fail "version 1: the forged superblock is not version 1: $out"
	lines=$(wc -l <"$DAEMON_LOG")
	fsvol_mount "$d/mnt" "$d/m1" "$d/m2" "$d/spare"
	for ((i = 0; i < 600; i++)); do
		out=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep "recovery of member 0 (" | head -1) || true
		[[ -n $out ]] && break
		sleep 0.05
	done
	[[ $out == *" starts at 0 of "* ]] || fail "version 1: the recovery did not restart from 0: $out"
	wait_healthy "$d/mnt"
	vol_cmp "$d/data" "$d/mnt/volume" || fail "version 1: data differs after the restarted recovery"
	fsvol_umount "$d/mnt"
	"$FSVOL" examine "$d/m1" | grep -q "Version : 5" || fail "version 1: not converted to version 5 (this build's) by the mount"
	note "version 1 superblock with a logical checkpoint past the data: assembled, recovery restarted from 0"
}

[[ -z ${LEVELS:-} ]] && v1
for level in ${LEVELS:-raid5 raid6 raid10}; do # LEVELS=raid6: one alone
	for pct in 10 50 90; do
		case $level in
		raid5) stop_at raid5 3 "$pct" -l raid5 ;;
		*) stop_at "$level" 4 "$pct" -l "$level" ;;
		esac
	done
done
echo "PASS"
