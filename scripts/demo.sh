#!/usr/bin/env bash
# make demo: the classic stripe-set experiment. A raid0 of 1, 2, 3, then 4
# emulated mid-1990s disks (hdd-legacy), 64K chunks, sequential and random
# 64K reads: the table, the plots, and what to look for; then a raid5 small
# write seen below the mapping layer. About 2 minutes.
#   DEMO_QUICK=1   1-2 members, 1 s per run (CI)
#   DEMO_OUT=DIR   results directory (default ./results/demo-DATE)
#   DEMO_TMPDIR=D  where the temp dir of members goes (default /var/tmp)
# Member files live in a temp dir removed at the end, even on failure or Ctrl-C.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FSVOL_BUILD:-build}
[[ $build == /* ]] || build=$here/$build
FSVOL=$build/bin/fsvol
BENCH=$build/bin/fsvol-bench
for b in "$FSVOL" "$BENCH"; do
	[[ -x $b ]] || { echo "demo: $b not built (run: make)" >&2; exit 1; }
done
quick=${DEMO_QUICK:-0}
out=${DEMO_OUT:-$here/results/demo-$(date +%Y%m%d-%H%M%S)}
T=$(mktemp -d "${DEMO_TMPDIR:-/var/tmp}/fsvol-demo.XXXXXX")
mounted=()
cleanup() {
	set +e
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		"$FSVOL" umount "${mounted[i]}" >/dev/null 2>&1 || umount -l "${mounted[i]}" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

if [[ $quick == 1 ]]; then
	sweep=(--members 1-2 --size 16M -d 1 -W 0.5)
else
	sweep=(--members 1-4 --size 60M -d 10 -W 2)
fi

say "1. The stripe-set study: raid0 over 1..N emulated 5400 rpm disks, 64K reads"
echo "member files in $T (removed at the end); results in $out"
run "$BENCH" sweep --level raid0 "${sweep[@]}" --chunk 64K --model hdd-legacy -b 64K -o 4 \
	--workloads seqread,randread --dir "$T" --out "$out"

# The figures the paragraph below quotes, from the sweep's own JSON.
factor() { jq -r --arg w "$1" '.scaling[] | select(.workload == $w) | .factor[-1] | . * 100 | round / 100' "$out/sweep.json"; }
diff_at() { jq -r --argjson n "$1" '.rand_vs_seq_pct[] | select(.members == $n and .op == "read") | .diff_pct | round' "$out/sweep.json"; }
# each member's reads/s and %util in the sequential run at N members
utils() {
	jq -r --argjson n "$1" '.runs[] | select(.members == $n and .workload == "seqread") |
		[.devices[] | "\(.name) \(.r_s | round) r/s \(.util_pct | round)%"] | join(", ")' "$out/sweep.json"
}
hi=$(jq -r '.params.members[1]' "$out/sweep.json")
lo=$(jq -r '.params.members[0]' "$out/sweep.json")
cat <<EOF

What to look for
  * Sequential reads scale with the members (x$(factor seqread) from $lo to $hi here): with 64K
    chunks, consecutive 64K reads land on consecutive members, so with 4 reads in
    flight every disk streams at its media rate at once (see the m0..m$((hi - 1)) columns).
  * Random reads pay a seek and half a revolution each, so one disk does far fewer
    (random vs sequential: $(diff_at "$lo")% with $lo member). More members add arms that
    seek in parallel, but scaling (x$(factor randread)) stays below the member count: 4 requests
    in flight land on random members, so some disks queue while others idle (compare
    the members' reads/s, and aqu-sz / %util in sweep.csv).
  * avg sec/read (PerfMon's Avg. Disk sec/Read) falls as members are added: the same
    queue is spread over more arms.
  * %util (util.png) is the share of the time a member had a request outstanding, as
    iostat's. Sequential reads on $hi members: $(utils "$hi").
    Equal reads/s with unequal %util is not unequal work: the 4 reads in flight follow
    the stream, not the disks, so a member whose disk is ahead in its turn finishes
    first and waits for its next request while its platter turns and reads ahead;
    it loses nothing (with -o 8 each member always has a request waiting: 100%
    each, the same reads/s). docs/experiments.md, section 1, has the measurement.
  Plots: $out/throughput.png (MB/s vs members, seq and random on one chart),
  iops.png, share.png (each member's share of the bytes), latency.png (p50/p90/p99);
  SVG next to each, data in sweep.csv / sweep.json, and plot.gp to redraw them.
  More experiments (levels for writes, record size and missed revolutions, a queue on
  one disk): docs/experiments.md.
EOF

say "2. A 4K write on raid5 costs 2 member reads and 2 member writes, and metadata"
run "$FSVOL" create -l raid5 -c 64K -s 16M "$T"/p0 "$T"/p1 "$T"/p2 "$T"/p3
mkdir -p "$T/parity"
if run "$FSVOL" mount "$T/parity" "$T"/p0 "$T"/p1 "$T"/p2 "$T"/p3; then
	mounted+=("$T/parity")
	# md marks an idle volume clean again after safe_mode_delay (0.2 s): here
	# a minute, so the counters below show this one write and its marks
	echo "safe_mode_delay 60" >"$T/parity/ctl"
	echo reset >"$T/parity/ctl"
	"$FSVOL" trace -n 1 "$T/parity" >"$T/trace.txt" &
	tracer=$!
	for _ in $(seq 100); do ls -l "/proc/$tracer/fd" 2>/dev/null | grep -qF -- "-> $T/parity/trace" && break; sleep 0.05; done
	run dd if=/dev/urandom of="$T/parity/volume" bs=4K count=1 seek=5 oflag=direct conv=notrunc status=none
	timeout 10 tail --pid="$tracer" -f /dev/null || kill "$tracer" 2>/dev/null || true
	echo "md's choice on 4 members: read the two other data chunks (reconstruct-write: 2 reads,"
	echo "as read-modify-write would), write new data + new parity; first, the write to an idle"
	echo "volume marks it dirty (sb) and sets its region's write-intent bit (bitmap) on every member:"
	run cat "$T/trace.txt"
	run cat "$T/parity/stats"
	run "$FSVOL" map -l raid5 -n 4 -c 64K -s 16M 20K 4K
	run "$FSVOL" layout -l raid5 -n 4 -c 64K --rows 4
	"$FSVOL" umount "$T/parity"
	mounted=()
else
	echo "(no FUSE here: skipping the mount; the level table in docs/experiments.md shows the same)"
fi
echo
echo "demo done: results kept in $out; member files removed."
