#!/usr/bin/env bash
# tests/stress/adversarial.sh: issue 22's adversarial scenarios, kept to be run
# again (documented in tests/stress/README.md).
#   FSVOL_BUILD=build tests/stress/adversarial.sh [--short] [--list] [SCENARIO...]
# Each scenario runs in a process of its own (tests/lib.sh: its temp dir and
# cleanup trap) under a timeout, and prints one line: PASS or FAIL, its name
# and its numbers. The closing line counts them; exit 1 when any failed.
# --short: small volumes and few rounds (seconds each; make check runs this
# through tests/integration/46-stress-short.sh). No SCENARIO: all of them.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${FSVOL_BUILD:=build}"
export FSVOL_BUILD

SCENARIOS=(
	spare-takeover-raid1 spare-takeover-raid5 spare-takeover-raid6 spare-takeover-raid10
	stopped-recovery-raid5-10 stopped-recovery-raid5-50 stopped-recovery-raid5-90
	stopped-recovery-raid6-10 stopped-recovery-raid6-50 stopped-recovery-raid6-90
	stopped-recovery-raid10-10 stopped-recovery-raid10-50 stopped-recovery-raid10-90
	nbd-fast-zero nbd-unread-reads nbd-zero-length
	parked-failed-add slot-cycles readd-leak kill-rebuild-force
	crash-kill-raid1 crash-kill-raid5 crash-kill-raid6 crash-kill-raid10
	powercut-raid1 powercut-raid5 powercut-raid6 powercut-raid10
)

# ---------------------------------------------------------------- the driver
if [[ ${1:-} != --one ]]; then
	short=0 list=0 want=()
	for a in "$@"; do
		case $a in
		--short) short=1 ;;
		--list) list=1 ;;
		-h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "adversarial.sh: unknown option $a" >&2; exit 2 ;;
		*) want+=("$a") ;;
		esac
	done
	if ((list)); then printf '%s\n' "${SCENARIOS[@]}"; exit 0; fi
	((${#want[@]})) || want=("${SCENARIOS[@]}")
	for s in "${want[@]}"; do
		[[ " ${SCENARIOS[*]} " == *" $s "* ]] || { echo "adversarial.sh: no scenario $s (--list)" >&2; exit 2; }
	done
	limit=$((short ? 300 : 3600))
	passed=0 failed=()
	for s in "${want[@]}"; do
		out=$(mktemp "${TMPDIR:-/tmp}/fsvol-adv.XXXXXX")
		start=$SECONDS
		timeout -k 60 "$limit" bash "$0" --one "$s" "$short" >"$out" 2>&1
		rc=$?
		line=$(grep -E '^(PASS|FAIL) ' "$out" | tail -n 1)
		if ((rc == 0)) && [[ $line == PASS* ]]; then
			echo "$line ($((SECONDS - start))s)"
			passed=$((passed + 1))
		else
			[[ -n $line ]] || line="FAIL $s: $(grep -m1 '^FAIL:' "$out" | sed 's/^FAIL: //')"
			((rc == 124 || rc == 137)) && line+=" (timed out after ${limit}s)"
			echo "$line ($((SECONDS - start))s, exit $rc)"
			grep -Ev '^(PASS|FAIL) ' "$out" | uniq | tail -n 12 | sed 's/^/    | /'
			failed+=("$s")
		fi
		rm -f "$out"
	done
	echo "$passed passed, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}"
	((${#failed[@]} == 0))
	exit
fi

# ---------------------------------------------------------------- one scenario
NAME=$2 SHORT=$3
# shellcheck source=tests/stress/stress_lib.sh
. "$HERE/stress_lib.sh"
fail() { echo "FAIL $NAME: $*"; exit 1; } # a scenario's failure is its verdict line
cd "$T"
MB=$((SHORT ? 4 : 16)) # data per member

members_for() { case $1 in raid1) echo 2 ;; raid5) echo 4 ;; raid6) echo 5 ;; raid10) echo 4 ;; esac; }

# mkvol DIR LEVEL N [create args]: DIR/m0.. created (chunk 16K, MB each)
mkvol() {
	local d=$1 level=$2 n=$3 i
	shift 3
	mkdir -p "$d"
	MEM=()
	for ((i = 0; i < n; i++)); do MEM+=("$d/m$i"); done
	"$FSVOL" create -l "$level" -c 16K -s ${MB}M "$@" "${MEM[@]}" >/dev/null || fail "create $level"
}

# fill_ref MNT: the whole volume written with random data, kept in $T/ref
fill_ref() {
	random_file "$T/ref" "$(size_of "$1/volume")"
	dd if="$T/ref" of="$1/volume" bs=1M oflag=direct conv=notrunc status=none || fail "filling $1"
}

# Issue 22 point 1: a spare waiting while a recovery runs takes over when the
# member being rebuilt fails; it must be rebuilt from 0. A writer runs
# throughout (every block written first: -F), then every acknowledged write
# must read back (raid1/raid10 also with the rebuilt member alone) and a
# check must find 0 mismatches.
spare_takeover() {
	local level=$1 n before after lost lost_alone=- scrub acked blocks
	n=$(members_for "$level")
	mkvol "$T/v" "$level" "$n"
	fsvol_mount "$T/mnt" "${MEM[@]}"
	blocks=$(($(size_of "$T/mnt/volume") / 12288))
	start_writer "$T/mnt" "$T/log" -F -j 4
	wait_filled "$T/log" "$blocks"
	sync_hold "$T/mnt" 30 # md's sync_max: the recovery waits at 30% until released
	"$FSVOL" ctl "$T/mnt" fail 0 || fail "fail 0"
	spare_file "$T/s1" $MB
	spare_file "$T/s2" $MB
	"$FSVOL" ctl "$T/mnt" add "$T/s1" || fail "add s1"
	"$FSVOL" ctl "$T/mnt" add "$T/s2" || fail "add s2"
	sync_wait_held "$T/mnt" recovery
	before=$(sync_pct "$T/mnt")
	"$FSVOL" ctl "$T/mnt" fail "$T/s1" || fail "fail s1 (the spare being rebuilt in role 0)"
	after=$(sync_pct "$T/mnt")
	sync_release "$T/mnt"
	wait_healthy "$T/mnt"
	stop_writer "$T/log"
	acked=$(grep -c '^A' "$T/log")
	lost=$(verify_acked "$T/mnt" "$T/log")
	scrub=$(scrub_mismatches "$T/mnt")
	if [[ $level == raid1 || $level == raid10 ]]; then
		"$FSVOL" ctl "$T/mnt" fail 1 || fail "fail 1 (to read the rebuilt member alone)"
		lost_alone=$(verify_acked "$T/mnt" "$T/log")
	fi
	local v="recovery at ${before}% when its spare failed, ${after}% after the takeover; $acked acknowledged writes: $lost lost, $lost_alone lost reading the rebuilt member alone; scrub $scrub mismatches"
	[[ $lost == 0 && $scrub == 0 && $lost_alone =~ ^(0|-)$ ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 2: a recovery stopped (clean umount) at PCT% must leave a
# volume that examines, mounts, finishes the recovery and reads back.
stopped_recovery() {
	local level=$1 pct=$2 n at ex_bad=0 ex_msg="" mrc=0 same=no scrub=- m
	n=$(($(members_for "$level") - 1)) # raid5 of 3, raid6 of 4, raid10 of 3 (issue 22)
	((n < 3)) && n=3
	[[ $level == raid6 ]] && n=4
	mkvol "$T/v" "$level" "$n"
	fsvol_mount "$T/mnt" "${MEM[@]}"
	fill_ref "$T/mnt"
	# md's sync_max holds the recovery at pct%: it cannot end before the umount
	sync_hold "$T/mnt" "$pct"
	"$FSVOL" ctl "$T/mnt" fail 0 || fail "fail 0"
	spare_file "$T/s" $MB
	"$FSVOL" ctl "$T/mnt" add "$T/s" || fail "add"
	sync_wait_held "$T/mnt" recovery
	at=$(sync_pct "$T/mnt")
	[[ $(json "$T/mnt" '.sync.state // ""') == running ]] || fail "the recovery ended at ${at}% before it was stopped"
	fsvol_umount "$T/mnt"
	local now=("$T/s" "${MEM[@]:1}")
	for m in "${now[@]}"; do
		# a refusal says "bad FIELD ..."; the bad-block list's own lines do not count
		if ! "$FSVOL" examine "$m" >"$T/examine.out" 2>&1 ||
			grep -vi "bad block log\|bad-blocks on" "$T/examine.out" | grep -qi "bad "; then
			ex_bad=$((ex_bad + 1))
			ex_msg=$(grep -vi "bad block log\|bad-blocks on" "$T/examine.out" | grep -i -m1 "bad \|error\|no valid")
		fi
	done
	mkdir -p "$T/mnt"
	"$FSVOL" mount --log "$DAEMON_LOG" "$T/mnt" "${now[@]}" 2>"$T/mount.err" || mrc=$?
	if ((mrc == 0)); then
		_push_cleanup fsvol "$T/mnt" "$(daemon_pid "$T/mnt")"
		wait_healthy "$T/mnt"
		vol_cmp "$T/ref" "$T/mnt/volume" >/dev/null 2>&1 && same=yes
		scrub=$(scrub_mismatches "$T/mnt")
	fi
	local v="stopped at ${at}%: examine refused $ex_bad of ${#now[@]}${ex_msg:+ ($ex_msg)}; mount exit $mrc$( ((mrc)) && echo " ($(head -c 200 "$T/mount.err"))"); data equal: $same; scrub $scrub mismatches"
	[[ $ex_bad == 0 && $mrc == 0 && $same == yes && $scrub == 0 ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 3: a request that must not kill the server (mount --nbd: the
# FUSE mount shares the daemon). After it, the daemon lives, the mount reads
# and a new NBD connection reads and writes.
nbd_hostile() {
	local kind=$1 pid answer alive=yes
	mkvol "$T/v" raid5 3
	fsvol_mount "--nbd=unix:$T/nbd.sock" "$T/mnt" "${MEM[@]}"
	pid=$(daemon_pid "$T/mnt")
	answer=$(timeout 120 /usr/bin/python3 "$HERE/nbd_hostile.py" "$T/nbd.sock" "$kind" 2>&1) || true
	# settled: dead, or a new connection works
	_settled() { ! _alive "$pid" || timeout 30 /usr/bin/python3 "$HERE/nbd_hostile.py" "$T/nbd.sock" alive >/dev/null 2>&1; }
	wait_for 60 "the server neither died nor answered" _settled
	_alive "$pid" || alive="no (daemon $pid died)"
	if [[ $alive == yes ]]; then
		dd if="$T/mnt/volume" of=/dev/null bs=1M count=4 iflag=direct status=none 2>/dev/null || alive="no (the mount does not read)"
		timeout 30 /usr/bin/python3 "$HERE/nbd_hostile.py" "$T/nbd.sock" alive >"$T/alive.out" 2>&1 ||
			alive="no (a new connection: $(tail -n 1 "$T/alive.out"))"
	fi
	local v="$answer; server alive: $alive"
	[[ $alive == yes && $answer == ok* ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 4: a failed member parked in a spare slot that cannot be
# written must not block `add`: the new spare is added and rebuilt.
parked_failed_add() {
	local arc=0 same=no state
	mkvol "$T/v" raid5 5 --spares 1 # m4 is the spare
	fsvol_mount "$T/mnt" "${MEM[@]}"
	fill_ref "$T/mnt"
	"$FSVOL" ctl "$T/mnt" fault 1 error=all || fail "fault 1"
	dd if="$T/mnt/volume" of=/dev/null bs=1M iflag=direct status=none || fail "reading with member 1 failing"
	wait_for 60 "member 1 not failed" grep -q "m[0-9]*: $T/v/m1 failed" "$T/mnt/status"
	wait_healthy "$T/mnt"
	"$FSVOL" ctl "$T/mnt" fail 2 || fail "fail 2"
	spare_file "$T/s" $MB
	"$FSVOL" ctl "$T/mnt" add "$T/s" >"$T/add.out" 2>&1 || arc=$?
	((arc == 0)) && wait_healthy "$T/mnt" 120
	state=$(json "$T/mnt" .state)
	vol_cmp "$T/ref" "$T/mnt/volume" >/dev/null 2>&1 && same=yes
	local v="add with a failed unwritable member parked: exit $arc$( ((arc)) && echo " ($(tr '\n' ' ' <"$T/add.out"))"); state $state; data equal: $same"
	[[ $arc == 0 && $state == healthy && $same == yes ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 5: raid1, fail 1 / add a new file / remount without the old
# one, CYCLES times; a failed entry left over must be removable (or gone).
slot_cycles() {
	local cycles=$((SHORT ? 4 : 70)) c cur=() s err="" left
	mkvol "$T/v" raid1 2
	cur=("${MEM[@]}")
	for ((c = 1; c <= cycles; c++)); do
		fsvol_mount "$T/mnt" "${cur[@]}"
		# leftovers of the last cycle: failed or missing entries must go with remove (by Number)
		for s in $(json "$T/mnt" '.members[] | select(.state == "failed" or .state == "missing") | .number'); do
			"$FSVOL" ctl "$T/mnt" remove "$s" >"$T/rm.out" 2>&1 || { err="cycle $c: remove $s: $(tr '\n' ' ' <"$T/rm.out")"; break 2; }
		done
		"$FSVOL" ctl "$T/mnt" fail "${cur[1]}" >"$T/ctl.out" 2>&1 || { err="cycle $c: fail ${cur[1]}: $(cat "$T/ctl.out")"; break; }
		spare_file "$T/v/n$c" $MB
		"$FSVOL" ctl "$T/mnt" add "$T/v/n$c" >"$T/ctl.out" 2>&1 || { err="cycle $c: add: $(tr '\n' ' ' <"$T/ctl.out")"; break; }
		wait_healthy "$T/mnt" 120
		fsvol_umount "$T/mnt"
		cur=("${cur[0]}" "$T/v/n$c")
	done
	left=$("$FSVOL" examine "${cur[0]}" 2>/dev/null | awk '/^ *Slot +Number +State/ { t = 1; next } t && NF >= 3 { n++ } END { print n + 0 }')
	_is_mounted "$T/mnt" && fsvol_umount "$T/mnt"
	local v="$((c - 1)) of $cycles cycles${err:+, then $err}; slot table entries now $left"
	[[ -z $err ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 6: refused re-adds (a file that never was a member) must not
# leak: RSS after N refusals within 10 MB of before.
readd_leak() {
	local n=$((SHORT ? 40 : 300)) pid r0 r1 i refused=0
	mkvol "$T/v" raid1 2
	fsvol_mount "$T/mnt" "${MEM[@]}"
	pid=$(daemon_pid "$T/mnt")
	truncate -s $((MB + 2))M "$T/stranger"
	for ((i = 0; i < 5; i++)); do "$FSVOL" ctl "$T/mnt" re-add "$T/stranger" >/dev/null 2>&1 || true; done # warm up
	r0=$(rss_kib "$pid")
	for ((i = 0; i < n; i++)); do
		"$FSVOL" ctl "$T/mnt" re-add "$T/stranger" >/dev/null 2>&1 || refused=$((refused + 1))
	done
	r1=$(rss_kib "$pid")
	local v="$refused of $n re-adds refused; RSS $((r0 / 1024)) MB -> $((r1 / 1024)) MB (+$(((r1 - r0) / 1024)) MB, at most 10 allowed)"
	[[ $refused == "$n" && $((r1 - r0)) -le 10240 ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# Issue 22 point 8: kill -9 mid-rebuild, start with --force (dirty and
# degraded), the recovery completes, a clean umount: every superblock must
# say clean, and a degraded start afterwards must not be refused as dirty.
kill_rebuild_force() {
	local now mrc=0 dirty=0 m drc=0 same=no
	mkvol "$T/v" raid5 4
	fsvol_mount "$T/mnt" "${MEM[@]}"
	fill_ref "$T/mnt"
	sync_hold "$T/mnt" 30 # md's sync_max: the recovery waits at 30% (its checkpoint saved) for the kill
	"$FSVOL" ctl "$T/mnt" fail 0 || fail "fail 0"
	spare_file "$T/s" $MB
	"$FSVOL" ctl "$T/mnt" add "$T/s" || fail "add"
	sync_wait_held "$T/mnt" recovery
	HOW=kill kill_daemon "$T/mnt"
	now=("$T/s" "${MEM[@]:1}")
	"$FSVOL" mount --force --log "$DAEMON_LOG" "$T/mnt" "${now[@]}" 2>"$T/mount.err" || mrc=$?
	((mrc == 0)) || result FAIL "$NAME: mount --force after kill -9 mid-rebuild: exit $mrc ($(head -c 200 "$T/mount.err"))"
	_push_cleanup fsvol "$T/mnt" "$(daemon_pid "$T/mnt")"
	wait_healthy "$T/mnt"
	vol_cmp "$T/ref" "$T/mnt/volume" >/dev/null 2>&1 && same=yes
	fsvol_umount "$T/mnt"
	for m in "${now[@]}"; do
		"$FSVOL" examine "$m" | grep -q "State : clean" || dirty=$((dirty + 1))
	done
	# a degraded start (one member left out, --run) is not refused as dirty
	"$FSVOL" mount --run --log "$DAEMON_LOG" "$T/mnt" "${now[@]:0:${#now[@]}-1}" 2>"$T/mount2.err" || drc=$?
	((drc == 0)) && { _push_cleanup fsvol "$T/mnt" "$(daemon_pid "$T/mnt")"; fsvol_umount "$T/mnt"; }
	local v="after the recovery and a clean umount $dirty of ${#now[@]} superblocks not clean; degraded start: exit $drc$( ((drc)) && echo " ($(head -c 150 "$T/mount2.err"))"); data equal: $same"
	[[ $dirty == 0 && $drc == 0 && $same == yes ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

# kill -9 (or a power cut: every member behind a volatile cache) under a
# writer logging acknowledged writes, ROUNDS times; after each restart (a
# resync) every acknowledged write must read back and a check find nothing.
crash_rounds() {
	local how=$1 level=$2 rounds=$((SHORT ? 1 : 5)) n r i opts=() lost scrub total_lost=0 total_scrub=0 flush=()
	n=$(members_for "$level")
	mkvol "$T/v" "$level" "$n"
	if [[ $how == powercut ]]; then
		for ((i = 0; i < n; i++)); do opts+=("--fault=$i=cache=volatile"); done
		flush=(-f 32)
	fi
	for ((r = 1; r <= rounds; r++)); do
		fsvol_mount "${opts[@]}" "$T/mnt" "${MEM[@]}"
		((r > 1)) && wait_resync "$T/mnt"
		start_writer "$T/mnt" "$T/log" -j 4 -s 7 "${flush[@]}"
		wait_acked "$T/log" $(($(grep -c '^A' "$T/log" 2>/dev/null || true) + 100 + RANDOM % 300)) "$WRITER_PID"
		HOW=$how kill_daemon "$T/mnt" "$WRITER_PID"
	done
	fsvol_mount "$T/mnt" "${MEM[@]}"
	wait_resync "$T/mnt"
	lost=$(verify_acked "$T/mnt" "$T/log")
	scrub=$(scrub_mismatches "$T/mnt")
	fsvol_umount "$T/mnt"
	local v="$rounds ${how}s, $(grep -c '^A' "$T/log") acknowledged writes: $lost lost; scrub $scrub mismatches"
	[[ $lost == 0 && $scrub == 0 ]] && result PASS "$NAME: $v"
	result FAIL "$NAME: $v"
}

case $NAME in
spare-takeover-*) spare_takeover "${NAME#spare-takeover-}" ;;
stopped-recovery-*)
	x=${NAME#stopped-recovery-}
	stopped_recovery "${x%-*}" "${x##*-}" ;;
nbd-*) nbd_hostile "${NAME#nbd-}" ;;
parked-failed-add) parked_failed_add ;;
slot-cycles) slot_cycles ;;
readd-leak) readd_leak ;;
kill-rebuild-force) kill_rebuild_force ;;
crash-kill-*) crash_rounds kill "${NAME#crash-kill-}" ;;
powercut-*) crash_rounds powercut "${NAME#powercut-}" ;;
*) echo "FAIL $NAME: no such scenario"; exit 2 ;;
esac
