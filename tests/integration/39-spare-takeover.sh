#!/usr/bin/env bash
# Issue 22 point 1: a spare that takes over a role whose rebuild failed is
# rebuilt from 0, as one added after the failure is. At raid1/5/6/10, with a
# writer (fsvol-ackwrite) logging acknowledged writes throughout: fail 0, add
# two spares, hold the first rebuild at 30% (md's sync_max, waited for in
# status.json), fail the member being rebuilt; the second spare takes over
# (the writer stops a few writes later, so most blocks keep older data).
# After its recovery: no acknowledged write lost, scrub 0 mismatches, and the
# volume reads the same when the rebuilt member must serve (another fails).
. "$(dirname "$0")/../lib.sh"
requires jq

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"


wait_healthy() { # MNT: the recovery ended and the volume is whole
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ $(jq -r .state "$1/status.json") == healthy ]] && return 0
		sleep 0.05
	done
	fail "$1: not healthy after the recovery: $(cat "$1/status")"
}

takeover() { # NAME NMEMBERS OTHER CREATE-ARGS...: OTHER is the member failed at the end
	local name=$1 n=$2 other=$3 d=$T/$1 mem=() i wpid out sum1 sum2
	shift 3
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	"$FSVOL" create -c 16K -s 4M "$@" "${mem[@]}" >/dev/null || fail "$name: create"
	truncate -s 6M "$d/s1" "$d/s2"
	fsvol_mount "$d/mnt" "${mem[@]}"
	# 64K blocks, written until nearly every one holds data (a block never
	# written would read as zeros from a spare that was never rebuilt too);
	# a flush every 16 writes, each acknowledged after it
	"$ACKW" write -j 4 -b 64K -s 5 -n 1200 -f 16 "$d/mnt/volume" "$d/log" >"$d/w0.out" 2>&1 ||
		fail "$name: first write run: $(cat "$d/w0.out")"
	"$ACKW" write -j 2 -b 64K -t 600 "$d/mnt/volume" "$d/log" >"$d/w1.out" 2>&1 &
	wpid=$!
	track_pid "$wpid"
	sync_hold "$d/mnt" 30 # md's sync_max: the recovery stops at 30% until released
	"$FSVOL" fail "$d/mnt" 0 || fail "$name: fail 0"
	"$FSVOL" add "$d/mnt" "$d/s1" || fail "$name: add s1"
	"$FSVOL" add "$d/mnt" "$d/s2" || fail "$name: add s2"
	sync_wait_held "$d/mnt" recovery
	grep -q "$d/s1 rebuilding" "$d/mnt/status" || fail "$name: s1 is not the one rebuilt: $(cat "$d/mnt/status")"
	# by its path: s1 plays role 0 but keeps its own Number (0 is m0's, failed already)
	"$FSVOL" fail "$d/mnt" "$d/s1" || fail "$name: fail s1 (being rebuilt in role 0)"
	grep -q "$d/s2 rebuilding" "$d/mnt/status" || fail "$name: s2 did not take over: $(cat "$d/mnt/status")"
	# a few writes across the take-over, not so many that they rewrite
	# every block (which would hide a region left unrebuilt)
	wait_acked "$d/log" $(($(grep -c '^A' "$d/log") + 20)) "$wpid"
	kill -TERM "$wpid"
	wait "$wpid" || true
	_alive "$wpid" && fail "$name: the writer did not stop"
	sync_release "$d/mnt"
	wait_healthy "$d/mnt"
	out=$("$ACKW" verify -b 64K "$d/mnt/volume" "$d/log") || fail "$name: acknowledged writes lost: $out"
	note "$name: $out"
	out=$("$FSVOL" scrub "$d/mnt") || fail "$name: scrub: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$name: scrub: $out"
	sum1=$(md5sum <"$d/mnt/volume")
	# the rebuilt member must serve: every byte the same
	"$FSVOL" fail "$d/mnt" "$other" || fail "$name: fail $other"
	sum2=$(md5sum <"$d/mnt/volume")
	[[ $sum1 == "$sum2" ]] || fail "$name: the volume reads differently when the rebuilt member serves"
	out=$("$ACKW" verify -b 64K "$d/mnt/volume" "$d/log") ||
		fail "$name: acknowledged writes lost when the rebuilt member serves: $out"
	out=$(grep "recovery of member 0 ($d/s2)" "$DAEMON_LOG" | tail -1) || true
	[[ $out == *" starts at 0 of "* ]] || fail "$name: no recovery of s2 from 0 in the log: $out"
	fsvol_umount "$d/mnt"
}

for level in ${LEVELS:-raid1 raid5 raid6 raid10}; do # LEVELS=raid6: one alone
	case $level in
	raid1) takeover raid1 2 1 -l raid1 ;;
	*) takeover "$level" 4 1 -l "$level" ;;
	esac
done
echo "PASS"
