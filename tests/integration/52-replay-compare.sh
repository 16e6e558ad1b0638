#!/usr/bin/env bash
# fsvol-bench --replay --compare: one trace (the first 300 requests of
# DiskSim's ascii.trace) replayed on three layouts of emulated period disks,
# built the way the sweep builds them: one table row per layout, a CSV with
# the same numbers, member counts as asked, the CDF data with every request,
# plots when gnuplot is there; bad layouts and a volume too small for the
# trace are refused, and the temp members are always removed.
. "$(dirname "$0")/../lib.sh"
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"
DATA=$(cd "$(dirname "$0")/../data/disksim-ascii" && pwd)

head -n 300 "$DATA/ascii-30s.trace" >"$T/head.trace"
export TMPDIR=$T/tmp # where --compare keeps its members
mkdir "$TMPDIR"
"$BENCH" --replay "$T/head.trace" --replay-afap -o4 --compare single:1,raid10:4,raid5:4 --model hdd-legacy \
	-c 512M --replay-map scale --out "$T/out" >"$T/cmp.out" 2>"$T/cmp.err" ||
	fail "compare: $(cat "$T/cmp.err")"
cat "$T/cmp.out"
for l in "single x1" "raid10 x4" "raid5 x4"; do
	grep -q "^$l " "$T/cmp.out" || fail "no row for $l"
done
# the CSV: three layouts, members as asked, every request completed and fast enough to count
[[ $(tail -n +2 "$T/out/compare.csv" | wc -l) -eq 3 ]] || fail "compare.csv: not 3 rows"
awk -F, 'NR > 1 { print $2, $3 }' "$T/out/compare.csv" | tr '\n' ' ' | grep -qx 'single 1 raid10 4 raid5 4 ' ||
	fail "compare.csv layouts: $(cut -d, -f2,3 "$T/out/compare.csv" | tr '\n' ' ')"
awk -F, 'NR > 1 && !($5 > 0 && $7 > 0 && $11 >= $8) { exit 1 }' "$T/out/compare.csv" ||
	fail "compare.csv has a layout without IOPS or latency"
# a mirror reads one copy, raid5 writes parity: member I/Os per request differ, and single is 1:1 or more
awk -F, 'NR > 1 && $2 == "raid5" { r5 = $12 } NR > 1 && $2 == "raid10" { r10 = $12 } END { exit !(r5 > 0 && r10 > 0 && r5 != r10) }' \
	"$T/out/compare.csv" || fail "raid5 and raid10 show the same member I/Os per request"
# the CDF: every request of every layout
n=$(grep -vc '^#\|^$' "$T/out/cdf.dat")
[[ $n -eq 900 ]] || fail "cdf.dat has $n points, expected 3 x 300"
[[ $(tail -n +2 "$T/out/util.dat" | wc -l) -eq 4 ]] || fail "util.dat: not 4 members"
if command -v gnuplot >/dev/null; then
	for p in throughput latency_cdf util; do
		[[ -s $T/out/$p.png ]] || fail "no $p.png: $(cat "$T/out/gnuplot.log" 2>/dev/null)"
	done
fi
[[ -z $(ls -A "$TMPDIR") ]] || fail "--compare left members behind: $(ls "$TMPDIR")"

# --- refusals
rc=0; "$BENCH" --replay "$T/head.trace" --compare raid5:2 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "raid5 needs 3" "$T/e" || fail "raid5:2: rc $rc, $(cat "$T/e")"
rc=0; "$BENCH" --replay "$T/head.trace" --compare raid9:4 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "unknown level 'raid9'" "$T/e" || fail "raid9:4: rc $rc, $(cat "$T/e")"
rc=0; "$BENCH" --replay "$T/head.trace" --compare raid0:2 "$T/x" 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "give no TARGET" "$T/e" || fail "--compare with a target: rc $rc, $(cat "$T/e")"
expect_fail_msg "beyond the end" "$BENCH" --replay "$T/head.trace" --compare raid0:2 -c 64M
[[ -z $(ls -A "$TMPDIR") ]] || fail "a refused --compare left members behind: $(ls "$TMPDIR")"
