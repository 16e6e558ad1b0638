#!/usr/bin/env bash
# tests/stress/failpath.sh: the failure path under load (issue 19 point 6).
# Members fail at random moments (a fault spec that trips after a random
# number of I/Os, errors injected at a random point of the run, a member's
# nbdkit server killed) under fio --verify=crc32c, at raid1/5/6/10, with file
# and NBD members; each iteration must end with fio clean (no error, verify
# clean, also on a verify pass after the failure), no member failed but the
# victims (none silent until the NBD timeout) and a clean umount.
#   FSVOL_BUILD=build tests/stress/failpath.sh [-n ITERATIONS] [--short]
#       [--levels raid1,raid5,raid6,raid10] [--kinds file,nbd] [--seed N] [--out DIR]
#       [--nbd-delay server|member]
# Every member answers 3 ms late: file members by a fault spec (delay=3ms),
# NBD members by nbdkit's delay filter (--nbd-delay member: by the fault spec
# too, whose delay thread then runs their completions).
# A watchdog stands over each iteration: when the volume's I/O counters stand
# still for --stall seconds (default 60) while it runs, or it outlives
# --limit (default 300), every thread's stack of the daemon (gdb: thread apply
# all bt) and the kernel stacks of every task of the daemon, fio and the nbdkit
# servers (/proc/PID/task/*/stack) go to DIR/hang-N.txt, and the iteration
# counts as a hang. The closing line: iterations, passed, hangs, verify
# errors, other failures; exit 1 when any is not 0.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${FSVOL_BUILD:=build}"
export FSVOL_BUILD

# ---------------------------------------------------------------- the driver
if [[ ${1:-} != --iter ]]; then
	iters=8 levels=raid1,raid5,raid6,raid10 kinds=file,nbd seed=$RANDOM short=0 stall=60 limit=300 out="" nbd_delay=server
	while (($#)); do
		case $1 in
		-n) iters=$2; shift ;;
		--short) short=1 ;;
		--levels) levels=$2; shift ;;
		--kinds) kinds=$2; shift ;;
		--seed) seed=$2; shift ;;
		--stall) stall=$2; shift ;;
		--limit) limit=$2; shift ;;
		--out) out=$2; shift ;;
		--nbd-delay) nbd_delay=$2; shift ;;
		-h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "failpath.sh: unknown argument $1" >&2; exit 2 ;;
		esac
		shift
	done
	[[ $iters =~ ^[0-9]+$ ]] || { echo "failpath.sh: -n $iters: not a number" >&2; exit 2; }
	[[ $nbd_delay == server || $nbd_delay == member ]] || { echo "failpath.sh: --nbd-delay $nbd_delay: server or member" >&2; exit 2; }
	IFS=, read -r -a L <<<"$levels"
	IFS=, read -r -a K <<<"$kinds"
	out=${out:-${FSVOL_TEST_TMPDIR:-/var/tmp}/fsvol-failpath-out.$$}
	mkdir -p "$out"
	state=$(mktemp -d "${TMPDIR:-/tmp}/fsvol-failpath-state.XXXXXX")
	trap 'rm -rf "$state"' EXIT
	# dump PID...: every user stack (gdb) of the first, kernel stacks of all
	dump() {
		local p tsk
		echo "== gdb: thread apply all bt, daemon $1"
		timeout 60 gdb -batch -p "$1" -ex 'thread apply all bt' 2>&1 | grep -v '^\[New LWP\|^warning:'
		for p in "$@"; do
			[[ -d /proc/$p ]] || continue
			echo "== kernel stacks of $p ($(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-120))"
			for tsk in /proc/"$p"/task/*; do
				echo "-- task ${tsk##*/} ($(cat "$tsk/comm" 2>/dev/null)) wchan $(cat "$tsk/wchan" 2>/dev/null)"
				cat "$tsk/stack" 2>/dev/null
			done
		done
	}
	ios() { timeout 5 jq '.volume.reads + .volume.writes' "$1/stats.json" 2>/dev/null || echo stuck; }
	passed=0 hangs=0 verrs=0 others=0
	echo "failpath: $iters iterations, levels $levels, kinds $kinds, NBD delay by the $nbd_delay, seed $seed, output $out"
	for ((i = 0; i < iters; i++)); do
		level=${L[i % ${#L[@]}]}
		kind=${K[(i / ${#L[@]}) % ${#K[@]}]}
		rm -f "$state"/*
		bash "$0" --iter "$level" "$kind" $((seed * 7919 + i)) "$short" "$state" "$nbd_delay" >"$out/iter-$i.log" 2>&1 &
		child=$!
		start=$SECONDS last=-1 still=$SECONDS hung="" tick=0
		while kill -0 "$child" 2>/dev/null; do
			# the iteration's end seen within 0.1 s, the counters looked at once a second
			sleep 0.1
			(((tick += 1) % 10)) && continue
			if [[ -s $state/mnt ]]; then
				now=$(ios "$(cat "$state/mnt")")
				if [[ $now != "$last" || $now == stuck && $last != stuck ]]; then
					[[ $now != stuck ]] && still=$SECONDS
					last=$now
				fi
				[[ -e $state/idle ]] && still=$SECONDS # between runs: no I/O is expected
				((SECONDS - still >= stall)) && hung="no I/O progress for ${stall}s"
			fi
			((SECONDS - start >= limit)) && hung="still running after ${limit}s"
			[[ -n $hung ]] && break
		done
		if [[ -n $hung ]]; then
			{
				echo "iteration $i ($level, $kind): $hung"
				cat "$state/what" 2>/dev/null
				dpid=$(cat "$state/pid" 2>/dev/null)
				# shellcheck disable=SC2046
				[[ -n $dpid ]] && dump "$dpid" $(cat "$state/others" 2>/dev/null)
			} >"$out/hang-$i.txt" 2>&1
			kill -TERM "$child" 2>/dev/null
			for ((w = 0; w < 120 && $(kill -0 "$child" 2>/dev/null && echo 1 || echo 0); w++)); do sleep 0.5; done
			kill -KILL "$child" 2>/dev/null
			wait "$child" 2>/dev/null
			hangs=$((hangs + 1))
			echo "HANG  $i $level $kind: $hung; $(cat "$state/what" 2>/dev/null); stacks in $out/hang-$i.txt"
			continue
		fi
		wait "$child"
		rc=$?
		line=$(grep -E '^(PASS|FAIL|VERIFY) ' "$out/iter-$i.log" | tail -n 1)
		if ((rc == 0)); then
			passed=$((passed + 1))
			echo "pass  $i $level $kind: ${line#PASS }"
			rm -f "$out/iter-$i.log"
		elif [[ $line == VERIFY* ]]; then
			verrs=$((verrs + 1))
			echo "VERIFY $i $level $kind: ${line#VERIFY }; log $out/iter-$i.log"
		else
			others=$((others + 1))
			echo "FAIL  $i $level $kind: ${line#FAIL }$([[ -z $line ]] && grep -m1 '^FAIL' "$out/iter-$i.log"); log $out/iter-$i.log"
		fi
	done
	echo "iterations $iters, passed $passed, hangs $hangs, verify errors $verrs, other failures $others"
	((passed == iters))
	exit
fi

# ---------------------------------------------------------------- one iteration
LEVEL=$2 KIND=$3 SEED=$4 SHORT=$5 STATE=$6 NBD_DELAY=${7:-member}
RANDOM=$SEED
. "$HERE/../lib.sh"
requires fio
[[ $KIND == nbd ]] && requires nbdkit
cd "$T"
MB=$((SHORT ? 4 : 16)) # --short: small members (a failure's moment scales with the run's I/Os)
what=() # what this iteration did, for its line
say() { what+=("$*"); echo "${what[*]}" >"$STATE/what"; }
fail() { echo "FAIL ${what[*]}: $*"; exit 1; }

case $LEVEL in raid1) n=2 ;; raid5) n=4 ;; raid6) n=5 ;; raid10) n=4 ;; *) fail "level $LEVEL" ;; esac
mem=() others=()
for ((i = 0; i < n; i++)); do
	if [[ $KIND == nbd ]]; then
		nbdkit_start "$T/n$i.pid" nbdkit -U "$T/n$i.sock" --filter=delay memory $((MB + 4))M \
			delay-read=$([[ $NBD_DELAY == server ]] && echo 3ms || echo 0) delay-write=$([[ $NBD_DELAY == server ]] && echo 3ms || echo 0)
		others+=("$NBDKIT_PID")
		mem+=("nbd+unix:///?socket=$T/n$i.sock")
	else
		mem+=("$T/m$i")
	fi
done
echo "${others[*]}" >"$STATE/others"
"$FSVOL" create -l "$LEVEL" -c 64K -s ${MB}M "${mem[@]}" >/dev/null || fail "create"

# the victims: one member (two at raid6, any two), each with a way to die
nvict=1
[[ $LEVEL == raid6 ]] && nvict=$((1 + RANDOM % 2))
victims=()
while ((${#victims[@]} < nvict)); do
	v=$((RANDOM % n))
	[[ " ${victims[*]} " == *" $v "* ]] || victims+=("$v")
done
# the run: LOOPS times about SIZE/18K writes (the mean of 4K-32K), each time
# followed by as many verify reads; every member answers 3 ms late (a busy
# disk: the fault spec's delay, or nbdkit's), so a run lasts seconds and a
# failure lands inside it
case $LEVEL in raid1) size=$MB ;; raid5) size=$((MB * (n - 1))) ;; raid6) size=$((MB * (n - 2))) ;; raid10) size=$((MB * n / 2)) ;; esac
((size > 32)) && size=32
LOOPS=2
ios=$((LOOPS * 2 * size * 1024 / 18))
# the 3 ms: in the fault spec, unless the NBD server adds them
member_delay() { [[ $KIND == nbd && $NBD_DELAY == server ]] || echo ",delay=3ms"; }
ways=(after ctl rate)
[[ $KIND == nbd ]] && ways+=(kill kill)
opts=() later=()
say "$LEVEL/$KIND"
for v in "${victims[@]}"; do
	way=${ways[RANDOM % ${#ways[@]}]}
	case $way in
	after) # trips by itself after a random number of the member's I/Os
		k=$((20 + RANDOM % (ios / 2)))
		opts+=("--fault=$v=error=all,after=$k$(member_delay)")
		say "m$v error after $k I/Os" ;;
	*) later+=("$v:$way:$((5 + RANDOM % (9 * ios / 10)))") ;; # at that many volume I/Os (writes and the verify's reads)
	esac
done
for ((i = 0; i < n; i++)); do
	[[ -z $(member_delay) || " ${opts[*]} " == *"--fault=$i="* ]] || opts+=("--fault=$i=$(member_delay | cut -c2-)")
done
fsvol_mount "${opts[@]}" "$T/mnt" "${mem[@]}"
daemon_pid "$T/mnt" >"$STATE/pid"
echo "$T/mnt" >"$STATE/mnt"
fio_v() { # OUT [extra]: random writes 4K-32K, then their verify (crc32c), LOOPS times
	local out=$1
	shift
	fio --name=fp --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-32k --direct=1 --ioengine=io_uring \
		--iodepth=8 --size=${size}M --loops=$LOOPS --verify=crc32c --verify_state_save=0 --randseed="$SEED" \
		--output="$out" "$@"
}
fio_v "$T/fio.out" &
fio_pid=$!
track_pid "$fio_pid"
vol_ios() { jq '.volume.writes + .volume.reads' "$T/mnt/stats.json"; }
_reached() { ! _alive "$fio_pid" || (($(vol_ios) >= $1)); }
for l in "${later[@]}"; do
	IFS=: read -r v way at <<<"$l"
	wait_for 3600 "the volume did not reach $at I/Os" _reached "$at" # the watchdog (--limit) reports a crawl first, with the stacks
	case $way in
	ctl) "$FSVOL" ctl "$T/mnt" fault "$v" error=all >/dev/null || fail "fault $v" ;;
	rate) "$FSVOL" ctl "$T/mnt" fault "$v" error=all,rate=0.05,seed=$RANDOM >/dev/null || fail "fault $v rate" ;;
	kill) kill -KILL "$(cat "$T/n$v.pid")" ;;
	esac
	say "m$v $way at $(vol_ios) I/Os$(_alive "$fio_pid" || echo ' (the run had ended)')"
done
rc=0
wait "$fio_pid" || rc=$?
_drop_cleanup pid "$fio_pid"
if ((rc)); then
	grep -qi "verify" "$T/fio.out" && { echo "VERIFY ${what[*]}: $(grep -i -m3 'verify\|error' "$T/fio.out" | tr '\n' ' ')"; exit 1; }
	fail "fio exit $rc: $(grep -i -m3 'error' "$T/fio.out" | tr '\n' ' ')"
fi
# every failure injected shows by now at the latest: a pass that reads it all
fio_v "$T/fio2.out" --verify_only || {
	echo "VERIFY ${what[*]}: verify after the failure: $(grep -i -m3 'verify\|error' "$T/fio2.out" | tr '\n' ' ')"
	exit 1
}
nfailed=$(grep -c "^ *m[0-9]*: .* failed" "$T/mnt/status" || true)
# only the victims may fail: another member failing, or one silent until the
# NBD timeout, is the failure path stalling the daemon (its threads blocked)
((nfailed <= nvict)) ||
	fail "$nfailed members failed, $nvict injected: $(grep -E 'failed|no reply' "$DAEMON_LOG" | tail -n 4 | tr '\n' ' ')"
! grep -q "no reply for" "$DAEMON_LOG" || fail "a member went silent: $(grep -m2 'no reply for' "$DAEMON_LOG" | tr '\n' ' ')"
touch "$STATE/idle"
fsvol_umount "$T/mnt"
echo "PASS ${what[*]}; $nfailed member(s) failed, fio clean, verify after it clean"
