#!/usr/bin/env bash
# bench/scale.sh: how many emulated hdd members one core keeps at their
# modelled rate (issue 33, item 4). For each member count N (SCALE_COUNTS,
# default 8 16 32 64), a raid0 of N in-memory members (64 MiB each, 64K
# chunks; nothing is allocated for blocks never written) on `--model hdd`,
# 4K random reads, one fsvol-bench thread with 16 I/Os per member in flight
# (at most 1024), in-process so the figure is the emulator and the engine,
# not a FUSE round trip:
#   - in virtual time (--virtual): the model's own rate, what the disks would
#     do, and how long the simulation took for its emulated seconds;
#   - live: the rate achieved in real time, its ratio to the model's, its
#     mean latency against the model's, and the process's CPU per 10k I/Os
#     and in cores (user + system over the run).
# A count keeps up when live reaches >= 95% of the modelled rate; the last
# line names the largest count that did. SCALE_SECS (default 2) measured
# seconds per run after 0.5 s of warm-up: about (2 x 2.5 s + the virtual run)
# per count. SCALE_CTL passes a setting as fsvol-bench --ctl (e.g.
# 'timer_slack_us 0' for exact deadlines).
# Run by bench/run.sh (make bench); alone:
#   FSVOL_BUILD=build bench/scale.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FSVOL_BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
BENCH=$build/bin/fsvol-bench
secs=${SCALE_SECS:-2}
read -ra counts <<<"${SCALE_COUNTS:-8 16 32 64}"
ctl=()
[ -z "${SCALE_CTL:-}" ] || ctl=(--ctl "$SCALE_CTL")

now_ns() { date +%s%N; }

printf '%s\n' "emulated hdd members, 4K random reads, 16 in flight per member, one thread (live vs virtual time):"
printf '%8s %12s %12s %9s %14s %14s %11s %7s %9s\n' members "model IOPS" "live IOPS" "live/mod" \
	"lat live ms" "lat model ms" "CPU/10k I/O" cores "virt x"
best=0
behind=0
for n in "${counts[@]}"; do
	list=$(for i in $(seq 0 $((n - 1))); do printf 'mem:s%d:64M,' "$i"; done)
	list=${list%,}
	qd=$((16 * n > 1024 ? 1024 : 16 * n))
	args=(-q -b4K -r -o"$qd" -t1 -d"$secs" -W0.5 --json --create raid0,64K --model hdd "${ctl[@]}" --members "$list")
	t0=$(now_ns)
	virt=$("$BENCH" "${args[@]}" --virtual | jq -r '.results.total.read | "\(.iops) \(.avg_lat_ms)"')
	t1=$(now_ns)
	live=$("$BENCH" "${args[@]}" | jq -r '"\(.results.total.read.iops) \(.results.total.read.avg_lat_ms) " +
		"\(.results.process_cpu.user_s + .results.process_cpu.system_s) \(.results.process_cpu.per_io_us) " +
		"\(.results.test_time_s)"')
	read -r v_iops v_lat <<<"$virt"
	read -r l_iops l_lat cpu_s per_io wall <<<"$live"
	row=$(awk -v vi="$v_iops" -v vl="$v_lat" -v li="$l_iops" -v ll="$l_lat" -v c="$cpu_s" -v p="$per_io" \
		-v w="$wall" -v vt="$(( (t1 - t0) / 1000 ))" -v s="$secs" -v n="$n" 'BEGIN {
		r = vi > 0 ? li / vi : 0
		printf "%8d %12.0f %12.0f %8.2fx %14.1f %14.1f %9.2f s %7.2f %8.0fx %d\n", n, vi, li, r, ll, vl,
			p / 100, (w > 0 ? c / w : 0), (vt > 0 ? (s + 0.5) * 1e6 / vt : 0), (r >= 0.95) }')
	keep=${row##* }
	printf '%s\n' "${row% *}"
	# the largest count before the first that falls behind
	if [ "$keep" = 1 ] && [ "$behind" = 0 ]; then best=$n; else behind=1; fi
done
printf '%s\n' "one core keeps ${best} emulated hdd members at their modelled rate (live >= 0.95x the model)" \
	"  (CPU per 10k I/Os and cores: the whole process, user + system; virt x: emulated / real seconds of the virtual run)"
