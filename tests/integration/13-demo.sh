#!/usr/bin/env bash
# make demo in its quick mode (DEMO_QUICK=1: 1-2 members, 1 s per run), so the
# demo cannot rot: it prints the stripe-set table and the plots' path, keeps
# its results, and removes its temp dir of members.
. "$(dirname "$0")/../lib.sh"
requires jq
demo=$(cd "$(dirname "$0")/../.." && pwd)/scripts/demo.sh
[[ -x $FSVOL_BUILD/bin/fsvol-bench ]] || fail "fsvol-bench not built"
mkdir -p "$T/tmp"

DEMO_QUICK=1 DEMO_OUT="$T/results" DEMO_TMPDIR="$T/tmp" FSVOL_BUILD="$FSVOL_BUILD" \
	timeout 50 "$demo" >"$T/demo.out" 2>"$T/demo.log" || fail "demo failed: $(tail -20 "$T/demo.log")"

for s in "fsvol-bench sweep: raid0, 1-2 members, chunk 64K, 16M per member, model hdd-legacy" \
	"members | workload  |    reads/s |     MB/s | avg sec/read |" \
	"random vs sequential reads:" "scaling factor 1 -> N: seqread x" "What to look for" "%util (util.png) is the share" \
	"results kept in $T/results"; do
	grep -qF -- "$s" "$T/demo.out" || fail "demo output lacks '$s':"$'\n'"$(cat "$T/demo.out")"
done
for n in 1 2; do
	for w in seqread randread; do
		grep -Eq "^ +$n \| $w +\| +[0-9.]+ \|" "$T/demo.out" || fail "no table row for $n members, $w"
	done
done
# the %util bullet quotes each member's reads/s and %util at the largest count
grep -Eq "Sequential reads on 2 members: m0 [0-9]+ r/s [0-9]+%, m1 [0-9]+ r/s [0-9]+%\.$" "$T/demo.out" ||
	fail "the demo does not quote the members' %util: $(grep -A2 '%util (util.png)' "$T/demo.out")"
# the paragraph quotes real figures, not jq errors or nulls
! grep -Eq '\(x |\(x\)|null|: % with' "$T/demo.out" || fail "demo paragraph has empty figures"
[[ -s $T/results/sweep.csv ]] || fail "no sweep.csv in the results dir"
jq -e '(.runs | length) == 4' "$T/results/sweep.json" >/dev/null || fail "sweep.json lacks the 4 runs"
if command -v gnuplot >/dev/null 2>&1; then
	[[ -s $T/results/throughput.png ]] || fail "no throughput.png"
	grep -qF "plots (PNG and SVG) in $T/results/" "$T/demo.out" || fail "the plots' path is not printed"
fi
# the raid5 tail: a 4K write = 2 member reads + 2 member writes of data and
# parity, plus the metadata writes the trace labels (sb, bitmap)
if grep -q "A 4K write on raid5" "$T/demo.out" && ! grep -q "no FUSE here" "$T/demo.out"; then
	meta=$(grep -Ec '^  [0-9.]+ +[0-9]+ m[0-9]+ +W .* (sb|bitmap)$' "$T/demo.out") || true
	dp=$(grep -Ec '^  [0-9.]+ +[0-9]+ m[0-9]+ +W .* (data|parity_write)$' "$T/demo.out") || true
	((dp == 2 && meta >= 8)) || fail "raid5 4K write trace: $dp data/parity writes, $meta sb/bitmap writes:"$'\n'"$(cat "$T/demo.out")"
	awk -v meta="$meta" '/^  [^ ]+\.m[0-9]+ / { r += $3; w += $4 } END { exit !(r == 2 && w == 2 + meta) }' "$T/demo.out" ||
		fail "raid5 4K write: member reads/writes not 2 + 2 + $meta metadata:"$'\n'"$(grep -A6 '^DEVICE' "$T/demo.out")"
fi
[[ -z $(ls -A "$T/tmp") ]] || fail "the demo left its temp dir behind: $(ls -A "$T/tmp")"
grep -qs "$T/tmp" /proc/self/mounts && fail "the demo left a mount behind"
echo "ok"
