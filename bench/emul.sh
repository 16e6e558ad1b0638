#!/usr/bin/env bash
# bench/emul.sh: the spindle model's own cost and release timing, one row per
# model. An 8-member raid0 (64K chunks, members on $BENCH_DIR) mounted with
# --model MODEL, fio 4K random reads through MNT/volume at QD$EMUL_QD; the row
# says how many completions the model released, their lateness (p50, p99,
# from MNT/status), the daemon's CPU (user + system, /proc/PID/stat) per
# 10k of them and how often its threads slept per I/O (voluntary context
# switches, /proc/PID/task/*/status): on a VM each sleep costs tens of us of
# CPU (timer_probe's row says how much here), so sleeps x that is the floor.
# Under hdd the disks, not the CPU, set the pace, so the CPU is
# the emulator's and the engine's overhead, not a share of a saturated run.
# Each model runs under every FUSE transport the kernel offers (io_uring when
# the fuse module's enable_uring is Y, and /dev/fuse; EMUL_TRANSPORTS to pick),
# one row each: over /dev/fuse the model's thread releases and replies, over
# io_uring the thread of one queue's ring, which then serves every request
# (docs/bench.md, "The emulation row").
# EMUL_SLACK_US sets the model clock's timer slack (--ctl timer_slack_us;
# unset: the default), to compare with exact deadlines (0).
# Run by bench/run.sh (make bench); alone, to compare two builds:
#   FSVOL_BUILD=build bench/emul.sh hdd      (EMUL_QD=1024 BENCH_SECS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FSVOL_BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
FSVOL=$build/bin/fsvol
secs=${BENCH_SECS:-5}
qd=${EMUL_QD:-1024}
base=${BENCH_DIR:-/dev/shm}
models=("$@")
slack=()
[ -z "${EMUL_SLACK_US:-}" ] || slack=(--ctl "timer_slack_us $EMUL_SLACK_US")
[ ${#models[@]} -gt 0 ] || models=(hdd ssd)
if [ -n "${EMUL_TRANSPORTS:-}" ]; then
	read -ra transports <<<"$EMUL_TRANSPORTS"
elif [ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ]; then
	transports=(uring dev)
else
	transports=(dev)
fi
T=$(mktemp -d "$base/fsvol-emul.XXXXXX")
MNT=$T/mnt
cleanup() {
	set +e
	[ -e "$MNT/status" ] && { "$FSVOL" umount "$MNT" >/dev/null 2>&1 || umount -l "$MNT" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
mkdir -p "$MNT"

# the daemon's threads' voluntary context switches (threads that ended are not counted)
sleeps() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'
}

emembers=()
for i in $(seq 0 7); do emembers+=("$T/e$i"); done
"$FSVOL" create -l raid0 -c 64K -s 64M "${emembers[@]}" >/dev/null
for model in "${models[@]}"; do
	for tr in "${transports[@]}"; do
		"$FSVOL" mount --model "$model" --fuse-transport "$tr" "${slack[@]}" --log "$T/daemon.log" "$MNT" "${emembers[@]}"
		pid=$(awk '/^pid:/ { print $2 }' "$MNT/status")
		read -r c0 <"/proc/$pid/stat"
		s0=$(sleeps "$pid")
		# the status line counts releases since the mount: take both ends
		n0=$(sed -n 's/.*: \([0-9]*\) completions released.*/\1/p' "$MNT/status")
		fio --name="model_$model" --filename="$MNT/volume" --rw=randread --bs=4k --iodepth="$qd" \
			--direct=1 --ioengine=io_uring --time_based \
			--runtime="$secs" --size=500M --output=/dev/null
		read -r c1 <"/proc/$pid/stat"
		s1=$(sleeps "$pid")
		line=$(grep "completions released" "$MNT/status")
		"$FSVOL" umount "$MNT"
		n1=$(sed -n 's/.*: \([0-9]*\) completions released.*/\1/p' <<<"$line")
		p50=$(sed -n 's/.*p50 \([0-9.]*\) us.*/\1/p' <<<"$line")
		p99=$(sed -n 's/.*p99 \([0-9.]*\) us.*/\1/p' <<<"$line")
		# utime + stime are fields 14 and 15 (the comm field has no spaces here)
		t=$(awk -v a="$c0" -v b="$c1" 'BEGIN { split(a, x, " "); split(b, y, " ");
			print (y[14] + y[15]) - (x[14] + x[15]) }')
		n=$((n1 - ${n0:-0}))
		cpu=$(awk -v t="$t" -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN { printf "%.2f", n ? t / hz / n * 10000 : 0 }')
		per=$(awk -v a="$s0" -v b="$s1" -v n="$n" 'BEGIN { printf "%.2f", n ? (b - a) / n : 0 }')
		printf '%-44s %s completions, lateness p50 %s us, p99 %s us, daemon CPU %s s per 10k I/Os, %s sleeps per I/O\n' \
			"model $model ($tr), QD$qd over 8 members:" "$n" "$p50" "$p99" "$cpu" "$per"
		# reference: this machine's timer alone, deadlines as far apart on average
		if [ -x "$build/bin/timer_probe" ] && [ "$n" -gt 0 ]; then
			gap=$(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.1f", s * 1e6 / n }')
			printf '%-44s %s\n' "  this machine's timer, ${gap} us apart:" \
				"$("$build/bin/timer_probe" "$gap" "$(( n < 5000 ? (n < 500 ? 500 : n) : 5000 ))")"
		fi
	done
done
