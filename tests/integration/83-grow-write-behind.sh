#!/usr/bin/env bash
# Growing a raid1 whose write-mostly leg runs write-behind (md's raid1 grow:
# one more copy, rebuilt onto it), with writes in flight and kill -9 during
# the grow:
#  - the write-mostly leg is slow (5 ms writes) and has a volatile cache, so
#    its copy really lags: write-behinds are in flight when `fsvol grow --add`
#    adds the third copy, and a kill -9 loses what its cache held;
#  - a verifying fio runs through the grow, an acknowledging writer through
#    the grow and the kill; the kill comes while the new copy is being
#    rebuilt and write-behinds are in flight;
#  - a plain mount resumes the rebuild of the new copy from its checkpoint,
#    then the resync the crash owes (the bitmap kept the write-behinds'
#    regions) brings the slow leg up to date; nothing acknowledged is lost,
#    fio verifies, a scrub finds 0 mismatches and fsvol-verify agrees;
#  - then a fourth copy, itself write-mostly (`fsvol add --write-mostly`,
#    `grow --raid-devices 4`), under the same writers: both slow legs get
#    every write, the copies agree.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq
cd "$T" # fio may leave state files in the working directory
ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
speed() { echo "sync_speed_max $2" >"$1/ctl" && echo "sync_speed_min $2" >"$1/ctl"; }
fio_half() { # MNT [fio args]: the second half, written then verified
	fio --name=wb --filename="$1/volume" --rw=randwrite --bs=64k --direct=1 --ioengine=io_uring --iodepth=8 \
		--offset="$half" --size="$half" --verify=crc32c --do_verify=1 --verify_state_save=0 --randrepeat=1 \
		--output="$T/fio.out" "${@:2}"
}
scrub_clean() { # MNT WHAT
	local out
	out=$("$FSVOL" scrub "$1") || fail "$2: scrub: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$2: scrub: $out"
	note "$2: $out"
}
_healthy() { jq_true '.state == "healthy" and .resync_pending == false and (.sync.state // "none") != "running"' "$1/status.json"; }

d=$T/wb
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M --bitmap-chunk 1M "$d/f" --write-mostly "$d/s" --write-behind 64 >/dev/null ||
	fail "create raid1 with a write-mostly leg and --write-behind"
truncate -s 20M "$d/n" "$d/w"
slow=(--fault=1=wdelay=5ms,cache=volatile) # m1: the write-mostly leg
# filled at full speed, then m1 slows down (the same spec as at the remount)
fsvol_mount "$d/mnt" "$d/f" "$d/s"
cap=$(size_of "$d/mnt/volume")
half=$((cap / 2))
fio_half "$d/mnt" || fail "fio before the grow: $(tail -5 "$T/fio.out")"
"$ACKW" write -F -j 4 -n 1000 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w0.out" 2>&1 ||
	fail "writer before the grow: $(cat "$d/w0.out")"
"$FSVOL" ctl "$d/mnt" fault 1 "${slow[0]#--fault=1=}" >/dev/null || fail "ctl fault 1 ${slow[0]#--fault=1=}"

# the grow with write-behinds in flight, the writer on
speed "$d/mnt" 1000
"$ACKW" write -j 8 -t 300 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w1.out" 2>&1 &
wpid=$!
track_pid "$wpid"
wait_for 60 "no write-behind in flight before the grow" jq_true '.write_behind.inflight > 0' "$d/mnt/status.json"
"$FSVOL" grow "$d/mnt" --add "$d/n" >/dev/null || fail "fsvol grow --add on the raid1"
jq_true '.members | length == 3 and .[2].state == "rebuilding" and .[1].write_mostly == true' "$d/mnt/status.json" ||
	fail "after the grow: $(jq -c .members "$d/mnt/status.json")"
sync_cap "$d/mnt" 50 # md's sync_max: the rebuild cannot end before the kill, however slow fio is
speed "$d/mnt" 300 # fio is slow here, not the rebuild: most of it is left for the kill
fio_half "$d/mnt" || fail "fio during the grow: $(tail -5 "$T/fio.out")"
pct=$(sync_field "$d/mnt" percent)
speed "$d/mnt" 2000
wait_recovery_past "$d/mnt" $((${pct%.*} + 5))
wait_for 60 "no write-behind in flight before the kill" jq_true '.write_behind.inflight > 0' "$d/mnt/status.json"
pct=$(sync_field "$d/mnt" percent)
pid=$(daemon_pid "$d/mnt")
kill -KILL "$pid"
note "kill -9 at ${pct}% of the new copy's rebuild, write-behinds in flight"
wait "$wpid" || fail "writer failed: $(cat "$d/w1.out")"
"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "umount of the dead mount failed"
_drop_cleanup fsvol "$d/mnt" "$pid"

lines=$(wc -l <"$DAEMON_LOG")
fsvol_mount "${slow[@]}" "$d/mnt" "$d/f" "$d/s" "$d/n" 2>/dev/null
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "acknowledged writes lost at the remount: $out"
speed "$d/mnt" 200000
wait_for 120 "the rebuild and the resync did not end: $(cat "$d/mnt/status")" _healthy "$d/mnt"
log=$(tail -n +$((lines + 1)) "$DAEMON_LOG")
grep -q "recovery of member 2 .* resumes at [1-9]" <<<"$log" || fail "the new copy's rebuild did not resume: $log"
grep -q "resync done" <<<"$log" || fail "no resync after the crash: $log"
note "$(grep -o "recovery of member 2 .* resumes at .*" <<<"$log" | head -1); $(grep -o "resync done.*" <<<"$log" | head -1)"
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "acknowledged writes lost: $out"
note "writer: $out"
fio_half "$d/mnt" --verify_only || fail "fio's data after the crash: $(tail -5 "$T/fio.out")"
scrub_clean "$d/mnt" "3 copies"

# a fourth copy, write-mostly too, with the writers on
"$ACKW" write -j 4 -t 300 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w2.out" 2>&1 &
wpid=$!
track_pid "$wpid"
"$FSVOL" add "$d/mnt" --write-mostly "$d/w" >/dev/null || fail "add --write-mostly"
"$FSVOL" grow "$d/mnt" --raid-devices 4 >/dev/null || fail "grow --raid-devices 4"
fio_half "$d/mnt" || fail "fio during the second grow: $(tail -5 "$T/fio.out")"
wait_for 120 "the fourth copy was not rebuilt: $(cat "$d/mnt/status")" _healthy "$d/mnt"
kill -TERM "$wpid"
wait "$wpid" || fail "writer failed: $(cat "$d/w2.out")"
jq_true '[.members[] | .write_mostly] == [false, true, false, true] and .write_behind.behind > 0' "$d/mnt/status.json" ||
	fail "after the second grow: $(jq -c '[.members, .write_behind]' "$d/mnt/status.json")"
out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "acknowledged writes lost (4 copies): $out"
fio_half "$d/mnt" --verify_only || fail "fio's data with 4 copies: $(tail -5 "$T/fio.out")"
scrub_clean "$d/mnt" "4 copies"
fsvol_umount "$d/mnt"
out=$("$FSVOL_VERIFY" "$d/f" "$d/s" "$d/n" "$d/w") || fail "fsvol-verify: $out"
note "fsvol-verify: $out"

echo "PASS"
