#!/usr/bin/env bash
# fsvol-bench sweep: a short raid0 sweep (1-2 members, 1 s per run, no
# model) prints the stripe-set table and writes CSV, JSON and (with gnuplot)
# PNGs; a --levels run with writes prints the level table; without gnuplot
# the CSV still comes with a clear message; the temp dir of members is gone
# afterwards; bad flags exit 2 naming the flag.
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"
mkdir -p "$T/tmp"

# --- members sweep
"$BENCH" sweep -q --level raid0 --members 1-2 --chunk 64K --size 16M -b 64K -d 1 -W0 \
	--workloads seqread,randread --dir "$T/tmp" --out "$T/out" >"$T/sweep.txt" 2>"$T/sweep.err" ||
	fail "sweep failed: $(cat "$T/sweep.err")"
for s in "fsvol-bench sweep: raid0, 1-2 members, chunk 64K, 16M per member, model none" \
	"members | workload  |    reads/s |     MB/s | avg sec/read |" "m0 r/s" "m1 r/s" \
	"random vs sequential reads:" "scaling: MB/s relative to 1 member" "scaling factor 1 -> N: seqread x"; do
	grep -qF -- "$s" "$T/sweep.txt" || fail "table lacks '$s':"$'\n'"$(cat "$T/sweep.txt")"
done
for n in 1 2; do
	for w in seqread randread; do
		grep -Eq "^ +$n \| $w +\| +[0-9.]+ \| +[0-9.]+ \| +[0-9.]+ \|" "$T/sweep.txt" ||
			fail "no table row for $n members, $w"
	done
done
[[ -z $(ls -A "$T/tmp") ]] || fail "temp dir of members left behind: $(ls -R "$T/tmp")"

# CSV: a header, then per run a total row and one row per member: 2 x (1 + 1) + 2 x (1 + 2) = 10
csv=$T/out/sweep.csv
[[ -s $csv ]] || fail "no sweep.csv"
head -n 1 "$csv" | grep -q '^level,members,chunk,block,workload,device,ios_s,reads_s,writes_s,mb_s,avg_ms,' ||
	fail "CSV header: $(head -n 1 "$csv")"
[[ $(($(wc -l <"$csv") - 1)) -eq 10 ]] || fail "CSV has $(($(wc -l <"$csv") - 1)) rows, expected 10"
[[ $(grep -c ',total,' "$csv") -eq 4 ]] || fail "CSV: expected 4 total rows"
grep -q '^raid0,2,65536,65536,randread,m1,' "$csv" || fail "CSV lacks the m1 row of 2 members, randread"
awk -F, 'NR > 1 && ($7 + 0 <= 0 || $10 + 0 <= 0) { bad = 1 } END { exit bad }' "$csv" ||
	fail "CSV row with no I/O: $(awk -F, 'NR > 1 && $7 + 0 <= 0' "$csv")"
# each member's share of bytes sums to 100 per run
awk -F, 'NR > 1 && $6 != "total" { s[$2 "," $5] += $17 } END { for (k in s) if (s[k] < 99.5 || s[k] > 100.5) bad = 1; exit bad }' \
	"$csv" || fail "member shares do not add up to 100%"

# JSON: parses, every run, the figures agree with the table's inputs
json=$T/out/sweep.json
jq -e '.params.level == "raid0" and .params.members == [1, 2] and (.runs | length) == 4' "$json" >/dev/null ||
	fail "JSON params/runs: $(jq -c '.params' "$json")"
jq -e 'all(.runs[]; .ios > 0 and .bytes == .ios * 65536 and (.devices | length) == .members
	and .member_reads_per_io > 0.9 and .member_reads_per_io < 1.1 and .latency_ms.max >= .latency_ms["50th"])' \
	"$json" >/dev/null || fail "JSON runs do not reconcile: $(jq -c '.runs[0]' "$json" | head -c 600)"
jq -e '(.scaling | length) == 2 and .scaling[0].factor[0] == 1 and (.rand_vs_seq_pct | length) == 2' "$json" \
	>/dev/null || fail "JSON scaling / rand_vs_seq: $(jq -c '{scaling, rand_vs_seq_pct}' "$json")"
if command -v gnuplot >/dev/null 2>&1; then
	for p in throughput iops share latency; do
		[[ -s $T/out/$p.png && -s $T/out/$p.svg ]] || fail "no $p.png / $p.svg: $(cat "$T/out/gnuplot.log" 2>/dev/null)"
	done
	head -c 8 "$T/out/throughput.png" | od -An -c | grep -q 'P   N   G' || fail "throughput.png is not a PNG"
	grep -q "plots (PNG and SVG) in $T/out/" "$T/sweep.txt" || fail "the plots' path is not printed"
else
	note "gnuplot not installed: PNG check skipped"
fi

# --- without gnuplot: CSV and JSON only, and the message says so
PATH=/nonexistent "$BENCH" sweep -q --members 1 --size 8M -d 0.5 -W0 --dir "$T/tmp" --out "$T/nogp" \
	>"$T/nogp.txt" 2>&1 || fail "sweep without gnuplot failed: $(cat "$T/nogp.txt")"
grep -qF "gnuplot not found: wrote CSV only (apt-get install gnuplot-nox)" "$T/nogp.txt" ||
	fail "no 'gnuplot not found' message: $(cat "$T/nogp.txt")"
[[ -s $T/nogp/sweep.csv && -s $T/nogp/sweep.json ]] || fail "CSV/JSON missing without gnuplot"
! ls "$T"/nogp/*.png >/dev/null 2>&1 || fail "PNG without gnuplot?"

# --- level comparison with writes
"$BENCH" sweep -q --levels single,raid0,raid1,raid5 --members 3 --size 16M -b 64K -d 1 -W0 \
	--workloads randwrite --dir "$T/tmp" --out "$T/lv" >"$T/lv.txt" 2>"$T/lv.err" ||
	fail "--levels sweep failed: $(cat "$T/lv.err")"
grep -qF "level   | members | workload  |   writes/s |    MB/s |  sec/write | x single | member writes" "$T/lv.txt" ||
	fail "no level table header:"$'\n'"$(cat "$T/lv.txt")"
# level members workload ... member writes per write (column 8)
lv_col() { awk -F'|' -v l="$1" '{ gsub(/ /, "", $1) } $1 == l { gsub(/ /, "", $'"$2"'); print $'"$2"' }' "$T/lv.txt"; }
[[ $(lv_col single 2) == 1 && $(lv_col raid1 2) == 2 && $(lv_col raid0 2) == 3 && $(lv_col raid5 2) == 3 ]] ||
	fail "member counts per level wrong:"$'\n'"$(cat "$T/lv.txt")"
awk -v a="$(lv_col single 8)" -v b="$(lv_col raid0 8)" -v m="$(lv_col raid1 8)" -v p="$(lv_col raid5 8)" -v r="$(lv_col raid5 9)" \
	'BEGIN { exit !(a > 0.95 && a < 1.05 && b > 0.95 && b < 1.05 && m > 1.9 && m < 2.1 && p > 1.9 && p < 2.1 && r > 0.9) }' ||
	fail "member writes per write (single 1, raid0 1, raid1 2, raid5 2 + parity reads):"$'\n'"$(cat "$T/lv.txt")"
jq -e '.params.mode == "levels" and (.runs | length) == 4 and all(.runs[]; .workload == "randwrite" and .ios > 0)' \
	"$T/lv/sweep.json" >/dev/null || fail "levels JSON: $(jq -c '.params' "$T/lv/sweep.json")"
if command -v gnuplot >/dev/null 2>&1; then
	[[ -s $T/lv/levels.png && -s $T/lv/member_ios.png ]] || fail "no level plots"
fi
[[ -z $(ls -A "$T/tmp") ]] || fail "temp dir of members left behind after --levels"

# --- no holes: the sweep writes its members' data areas before it measures. The
# workload only reads, so any block allocated while it runs was written by the fill,
# before the measurement began; --no-fill leaves the sparse files create made, and warns.
# alloc_of FILE: bytes allocated (stat's blocks are 512 bytes)
alloc_of() { echo $(($(stat -c %b "$1") * 512)); }
fill_probe() { # fill_probe OUT_FILE SWEEP_ARGS...: allocated bytes of m0 and m1 while measuring
	local out=$1 pid i a0=0 a1=0
	shift
	mkdir -p "$T/ftmp"
	"$BENCH" sweep -q --level raid0 --members 2 --size 8M -b 64K -d 4 -W0 --workloads randread \
		--dir "$T/ftmp" "$@" >"$T/fill.txt" 2>"$T/fill.err" &
	pid=$!
	track_pid "$pid"
	for ((i = 0; i < 100; i++)); do
		local d
		d=$(ls -d "$T"/ftmp/fsvol-sweep.* 2>/dev/null | head -n 1) || true
		# once both members exist, 1.5 s on the run is measuring (create and the
		# fill of 16M take far less) and the sweep has 2.5 s to go
		if [[ -n $d && -f $d/m0 && -f $d/m1 ]]; then
			sleep 1.5
			a0=$(alloc_of "$d/m0") a1=$(alloc_of "$d/m1")
			break
		fi
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null || fail "the sweep ended before the probe (d 4): $(cat "$T/fill.err")"
	wait "$pid" || fail "sweep $* failed: $(cat "$T/fill.err")"
	echo "$a0 $a1" >"$out"
}
fill_probe "$T/filled"
read -r a0 a1 <"$T/filled"
[[ $a0 -ge $((8 * MiB)) && $a1 -ge $((8 * MiB)) ]] ||
	fail "members not filled while measuring: $a0 and $a1 bytes allocated (want >= 8M each)"
! grep -qi "never written" "$T/fill.err" || fail "a filled sweep warned about holes: $(cat "$T/fill.err")"
fill_probe "$T/sparse" --no-fill
read -r a0 a1 <"$T/sparse"
[[ $a0 -lt $MiB && $a1 -lt $MiB ]] || fail "--no-fill: $a0 and $a1 bytes allocated, expected sparse members"
[[ $(grep -c "warning: --no-fill: .*never written" "$T/fill.err") -eq 1 ]] ||
	fail "--no-fill without a model: want one holes warning, got: $(cat "$T/fill.err")"
grep -q "NOT FILLED" "$T/fill.txt" || fail "the parameters line does not say the volumes were not filled"

# --- series: lists of -o, -b, --chunk and repeated --model; every row records its configuration
"$BENCH" sweep -q --level raid0 --members 1-2 --chunk 16K,64K --size 8M -b 16K,64K -o 1,4 \
	--model ssd --model "ssd:channels=1,read=20ms" -d 0.2 -W0 --workloads randread --dist normal:0.2 \
	--dir "$T/tmp" --out "$T/ser" >"$T/ser.txt" 2>"$T/ser.err" || fail "series sweep failed: $(cat "$T/ser.err")"
# 2 chunks x 2 models x 2 blocks x 2 QDs = 16 series, x 2 member counts = 32 runs
jq -e '(.runs | length) == 32 and .params.chunks == [16384, 65536] and .params.qds == [1, 4]
	and .params.models == ["ssd", "ssd:channels=1,read=20ms"] and all(.runs[]; .filled)' "$T/ser/sweep.json" >/dev/null ||
	fail "series JSON: $(jq -c '.params' "$T/ser/sweep.json")"
for cfg in "16384 16384 1 ssd" "65536 65536 4 ssd:channels=1,read=20ms" "16384 65536 4 ssd:channels=1,read=20ms"; do
	read -r c b q m <<<"$cfg"
	[[ $(jq --arg m "$m" "[.runs[] | select(.chunk == $c and .block == $b and .qd == $q and .model == \$m
		and .members == 2 and .pattern == \"random normal:0.2\" and .threads == 1 and .bytes == .ios * $b)] | length" \
		"$T/ser/sweep.json") -eq 1 ]] || fail "no run recorded as chunk $c, -b $b, QD $q, model $m"
done
# the slower model serves fewer I/Os (20 ms per read on 1 channel: at most 100 reads/s on 2 members, vs the ssd preset)
jq -e '([.runs[] | select(.model == "ssd" and .qd == 4 and .members == 2) | .iops] | min) >
	([.runs[] | select(.model != "ssd" and .qd == 4 and .members == 2) | .iops] | max)' "$T/ser/sweep.json" >/dev/null ||
	fail "the model spec did not reach the runs: $(jq -c '[.runs[] | {model, qd, members, iops}]' "$T/ser/sweep.json")"
head -n 1 "$T/ser/sweep.csv" | grep -q ',qd,threads,pattern,model,size,filled$' || fail "CSV header lacks the configuration"
grep -q '^raid0,2,16384,65536,randread,m1,.*,4,1,random normal:0.2,"ssd:channels=1,read=20ms",8388608,1$' "$T/ser/sweep.csv" ||
	fail "CSV member row lacks its configuration: $(grep '^raid0,2,16384,65536,randread,m1,' "$T/ser/sweep.csv" | head -2)"
grep -q "^all runs:" "$T/ser.txt" || fail "no all-runs table for a multi-series sweep"
grep -q "^== chunk 64K, ssd:channels=1,read=20ms, -b 16K, QD 4$" "$T/ser.txt" || fail "no series heading: $(grep '^==' "$T/ser.txt" | head -3)"
if command -v gnuplot >/dev/null 2>&1; then
	[[ -s $T/ser/util.png && -s $T/ser/throughput.png && -s $T/ser/series.png ]] || fail "no util / throughput / series plot"
	# series.dat: one line per series (16) with the figures at 2 members
	[[ $(grep -vc '^#' "$T/ser/series.dat") -eq 16 ]] || fail "series.dat: $(cat "$T/ser/series.dat")"
	grep -q "title 'randread, chunk 16K, ssd, -b 16K, QD 1: ideal'" "$T/ser/plot.gp" || fail "no ideal-scaling line in plot.gp"
	# ideal = the 1-member figure times n: column 7 (ideal MB/s) on the 2-member line is 2 x column 2 on the 1-member line
	awk '!/^#/ { mb[$1] = $2; id[$1] = $7 } END { exit !(id[2] > 1.99 * mb[1] && id[2] < 2.01 * mb[1]) }' "$T/ser/sweep.dat" ||
		fail "ideal-scaling column is not linear from 1 member: $(cat "$T/ser/sweep.dat")"
fi
[[ -z $(ls -A "$T/tmp") ]] || fail "temp dir of members left behind after the series sweep"

# a per-member spec serves every member count: items of members a volume lacks are dropped,
# ranges clipped (1-3 is 1 on 2 members), adapter definitions kept
"$BENCH" sweep -q --json --level raid0 --members 1-2 --size 8M -b 64K -o 2 -d 0.3 -W0 --workloads randread \
	--model "0=ssd;1-3=ssd:channels=1,read=20ms;@x=fast-scsi2" --dir "$T/tmp" >"$T/pm.json" 2>"$T/pm.err" ||
	fail "per-member spec over 1-2 members: $(cat "$T/pm.err")"
# member 1 takes 20 ms a read (its model's figure, a floor), member 0 the ssd's ~0.1 ms
jq -e '(.runs | length) == 2 and .runs[1].devices[1].await_ms >= 20 and .runs[1].devices[0].await_ms < 10' \
	"$T/pm.json" >/dev/null ||
	fail "per-member models not applied: $(jq -c '[.runs[] | [.devices[].await_ms]]' "$T/pm.json")"

# --- SIGINT mid-run: the temp dir of members goes too
"$BENCH" sweep -q --members 1-2 --size 8M -d 30 -W0 --dir "$T/tmp" >/dev/null 2>&1 &
pid=$!
track_pid "$pid"
for ((i = 0; i < 50; i++)); do
	[[ -n $(ls -A "$T/tmp") ]] && break
	sleep 0.1
done
[[ -n $(ls -A "$T/tmp") ]] || fail "the sweep made no temp dir in --dir"
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 130 ]] || fail "SIGINT: exit status $rc, expected 130"
[[ -z $(ls -A "$T/tmp") ]] || fail "temp dir left behind after SIGINT: $(ls -R "$T/tmp")"

# --- bad flags: exit 2, the message names the flag
sweep_bad() { # SUBSTRING ARGS...
	local want=$1 rc=0
	shift
	expect_fail_msg "$want" "$BENCH" sweep "$@"
	"$BENCH" sweep "$@" >/dev/null 2>&1 || rc=$?
	[[ $rc -eq 2 ]] || fail "sweep $*: exit $rc, expected 2"
}
sweep_bad "--members 0-2:" --members 0-2
sweep_bad "--members 3-1: LO is larger than HI" --members 3-1
sweep_bad "--members 1-4: raid5 needs at least 3 members" --level raid5 --members 1-4
sweep_bad "--level raid9: unknown level" --level raid9
sweep_bad "--levels raid0,raidX: unknown level 'raidX'" --levels raid0,raidX
sweep_bad "--level and --levels exclude each other" --level raid0 --levels raid0,raid1
sweep_bad "--chunk 3K:" --chunk 3K
sweep_bad "--chunk 96K: must be a power of two" --chunk 96K
sweep_bad "--chunk 96K: must be a power of two" --chunk 4K,96K
sweep_bad "-o 1,4,1: '1' given twice" -o 1,4,1
sweep_bad "-o 1,,4: empty value" -o 1,,4
sweep_bad "-b 3X: not a size" -b 4K,3X
sweep_bad "--model hdd: given twice" --model hdd --model hdd
sweep_bad "--dist: applies to randread and randwrite" --dist normal:0.1 --workloads seqread
sweep_bad "--size 1K:" --size 1K
sweep_bad "--workloads seqread,bogus: unknown workload 'bogus'" --workloads seqread,bogus
sweep_bad "-b 3X: not a size" -b 3X
sweep_bad "-d 0: must be > 0" -d 0
sweep_bad "-W -1:" -W -1
sweep_bad "-o 0: must be 1..1024" -o 0
sweep_bad "--dir $T/none: not a directory" --dir "$T/none"
sweep_bad "--out needs a value" --out
sweep_bad "unknown option '--bogus'" --bogus
sweep_bad "extra: unexpected argument" extra
"$BENCH" sweep --help | grep -q -- "--workloads W1,W2,..." || fail "sweep --help lacks --workloads"
echo "ok"
