#!/usr/bin/env bash
# fsvol-bench sweep's plots say what their data can show (docs/bench.md, "With
# --out DIR"): sweeps of each shape (member counts, one member count over
# record sizes, levels with long model specs, model x queue depth) in virtual
# time, then each chart's SVG through tests/tools/plot_check.py (no text out of
# the canvas, no text over another or over a legend sample, no legend entry
# that draws nothing, no "vs" title over one x value) and each title, x axis
# and legend against the sweep's own data. The checker itself must catch a
# chart made wrong on purpose.
. "$(dirname "$0")/../lib.sh"
requires jq
requires gnuplot
BENCH=$FSVOL_BUILD/bin/fsvol-bench
CHECK=$(cd "$(dirname "$0")/../tools" && pwd)/plot_check.py
[[ -x $BENCH ]] || fail "fsvol-bench not built"
mkdir -p "$T/tmp"

# sweep OUT ARGS...: a sweep in virtual time into $T/OUT; its output in $T/OUT.txt
sweep() {
	local out=$1
	shift
	"$BENCH" sweep -q --size 16M -d 2 -W 0.5 --virtual --dir "$T/tmp" --out "$T/$out" "$@" >"$T/$out.txt" 2>&1 ||
		fail "sweep $*: $(tail -n 5 "$T/$out.txt")"
}
# charts OUT: the charts the sweep said it drew, sorted
charts() { sed -n 's/^plots (PNG and SVG) in [^:]*: //p' "$T/$1.txt" | tr ' ' '\n' | sed 's/\.png$//' | sort | xargs; }
# svg_texts OUT CHART: the chart's texts, one a line
svg_texts() { sed -n 's/.*<text>\(.*\)<\/text>.*/\1/p' "$T/$1/$2.svg" | sed 's/&apos;/'"'"'/g; s/&amp;/\&/g'; }
check_svgs() { # OUT: every chart of OUT passes the checker
	/usr/bin/python3 "$CHECK" "$T/$1"/*.svg >"$T/$1.check" || fail "plots of '$1':"$'\n'"$(cat "$T/$1.check")"
}

# --- the checker catches what it must: a one-x "vs" chart with an undrawable line,
# a legend over the x label, a title wider than the canvas
mkdir -p "$T/bad"
printf '1 2 3\n' >"$T/bad/one.dat"
cat >"$T/bad/bad.gp" <<'EOF'
set terminal svg size 600,400 dynamic noenhanced font 'sans,11'
set output 'bad.svg'
set title "Throughput vs member count: a title far too long for a canvas of six hundred pixels, on and on and on"
set key below
set xlabel 'members'
set xrange [0.7:1.3]
set xtics 1
plot 'one.dat' using 1:2 with linespoints title 'seqread', '' using 1:3 with lines title 'seqread: ideal'
EOF
(cd "$T/bad" && gnuplot bad.gp) || fail "gnuplot could not draw the bad chart"
/usr/bin/python3 "$CHECK" "$T/bad/bad.svg" >"$T/bad.check" && fail "the checker passed a bad chart"
for want in "'seqread: ideal' draws nothing" "over an x axis of 1 value" "does not fit the 600x400 canvas" "'members' and "; do
	grep -qF "$want" "$T/bad.check" || fail "the checker did not say '$want':"$'\n'"$(cat "$T/bad.check")"
done

# --- member counts: charts against the member count, each series with its ideal line
sweep members --level raid0 --members 1-3 --chunk 64K --model hdd-legacy -b 64K -o 4 --workloads seqread,randread
[[ $(charts members) == "iops latency share throughput util" ]] || fail "member-count charts: $(charts members)"
check_svgs members
svg_texts members throughput >"$T/tp.texts"
grep -qx 'Throughput vs member count: raid0 stripe set, 64K blocks, chunk 64K, model hdd-legacy, QD 4' "$T/tp.texts" ||
	fail "throughput title: $(head -n 30 "$T/tp.texts")"
for k in seqread 'seqread: ideal' randread 'randread: ideal' members 1 2 3; do
	grep -qx " *$k" "$T/tp.texts" || fail "throughput.svg lacks '$k'"
done
# the util chart's x axis names every run, its legend every member, its caption what %util is
svg_texts members util >"$T/util.texts"
[[ $(grep -cE '^[123]: (seqread|randread)$' "$T/util.texts") -eq 6 ]] || fail "util runs: $(cat "$T/util.texts")"
[[ $(grep -cE '^m[012]$' "$T/util.texts") -eq 3 ]] || fail "util legend: $(cat "$T/util.texts")"
grep -q "^%util = time with a request outstanding" "$T/util.texts" || fail "util.png does not say what %util is"

# --- one member count over record sizes (docs/experiments.md, section 3): no chart
# against the member count; the series chart is a curve over the record size
sweep records --level single --members 1 --model hdd-legacy:cache=0 -b 1K,4K,16K,64K -o 1 --workloads seqread
[[ $(charts records) == "series series_latency share util" ]] || fail "one-member-count charts: $(charts records)"
! ls "$T"/records/{throughput,iops,latency}.* >/dev/null 2>&1 || fail "a chart against the member count for one count"
check_svgs records
svg_texts records series >"$T/rec.texts"
grep -qx 'Throughput vs record size, 1 member: single, model hdd-legacy:cache=0, QD 1' "$T/rec.texts" ||
	fail "series title: $(head -n 30 "$T/rec.texts")"
grep -qx 'record size (-b)' "$T/rec.texts" || fail "series x label: $(cat "$T/rec.texts")"
[[ $(grep -cxE ' *(1K|4K|16K|64K)' "$T/rec.texts") -eq 4 ]] || fail "series x ticks: $(cat "$T/rec.texts")"
# one curve (one workload, nothing else varies): one legend entry, four points on it
[[ $(grep -o 'gnuplot_plot_[0-9]*" ' "$T/records/series.svg" | sort -u | wc -l) -eq 1 ]] ||
	fail "series.svg: not one curve"
# (each line: "label" x "x tick" MB/s IOPS ms; the label may hold spaces)
sed 's/^"[^"]*" //' "$T/records/series.dat" | awk '!/^#/ && NF { n++; if ($3 + 0 <= 0) bad = 1 } END { exit !(n == 4 && !bad) }' ||
	fail "series.dat: $(cat "$T/records/series.dat")"
# the x values rise along the curve (lists are taken in any order)
sweep unsorted --level single --members 1 --model hdd-legacy:cache=0 -b 64K,4K,16K -o 1 --workloads seqread
sed 's/^"[^"]*" //' "$T/unsorted/series.dat" | awk '!/^#/ && NF { if ($1 + 0 <= last) bad = 1; last = $1 } END { exit bad }' ||
	fail "series.dat not in x order: $(cat "$T/unsorted/series.dat")"
check_svgs unsorted
# a sweep into the same --out with a different shape leaves no chart of the old one
sweep members --level single --members 1 --model hdd-legacy -b 4K,64K -o 1 --workloads seqread
[[ $(charts members) == "series series_latency share util" ]] || fail "charts: $(charts members)"
! ls "$T"/members/{throughput,iops,latency}.* >/dev/null 2>&1 || fail "the earlier sweep's charts are left in its --out"

# --- two lists: the curve is over the queue depth, one curve per model
sweep qd --level single --members 1 --model hdd-legacy:cache=0 --model hdd-legacy -b 4K -o 1,2,4 --workloads seqread
check_svgs qd
svg_texts qd series >"$T/qd.texts"
grep -q '^Throughput vs queue depth, 1 member: single, 4K blocks$' "$T/qd.texts" || fail "qd title: $(cat "$T/qd.texts")"
for k in 'seqread, hdd-legacy:cache=0' 'seqread, hdd-legacy'; do
	grep -qx " *$k" "$T/qd.texts" || fail "qd legend lacks '$k': $(cat "$T/qd.texts")"
done

# --- levels with long model specs: the legend below the x label, nothing over it
sweep levels --levels single,raid0,raid1,raid5 --members 3 -b 8K -o 1 --workloads randwrite \
	--model hdd-legacy:adapter=fast-scsi2 --model 'hdd-legacy:adapter=a,1=hdd-legacy:adapter=b;@a=fast-scsi2;@b=fast-scsi2'
[[ $(charts levels) == "levels member_ios share util" ]] || fail "level charts: $(charts levels)"
check_svgs levels
[[ -z $(ls -A "$T/tmp") ]] || fail "the sweeps left members behind: $(ls -A "$T/tmp")"
echo "PASS: 19-plots"
