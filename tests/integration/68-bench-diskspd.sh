#!/usr/bin/env bash
# fsvol-bench's diskspd flags, each against its diskspd meaning, proved by
# counters and content rather than by trusting the tool's own report:
#   -Sw / -Sh / -h  write-through: through MNT/volume every write is followed by a
#                   volume flush (the mount's counters: flushes = writes), -Su none;
#   -Z, -Zr, -ZSIZE, default  what the writes carry, read back from the file:
#                   zeros; every block different; at most SIZE/4K different blocks;
#                   the pattern 0, 1, .., 255;
#   -gRATE, -gRATEi  bytes per ms (I/Os per s) per thread per target: the bytes the
#                   volume's own counters saw over the run, and the tool's bytes over
#                   the run time it reports, are threads x rate within 5%, far below
#                   what the same run does unthrottled;
#   -Rxml, -D       diskspd's XML: it parses, each thread's counts add up, its -D
#                   buckets (one per interval) add up to its I/O count and give the
#                   IopsStdDev it prints, and the volume's own counters saw the same
#                   reads and writes (plus at most the I/Os in flight at the end);
#                   paced by -g, every interval holds the same count (within one);
#   -rsPCT          in the volume's trace (one thread, one I/O at a time), PCT% of the
#                   requests jump, the rest are the next block after the one before;
#   -si             four threads on one shared position: the traced offsets never
#                   repeat and leave no gap; without -si they repeat;
#   -F N            N threads in all, each on every target: the process creates N I/O
#                   threads (strace counts its clones) where -t N creates N per target, and
#                   the XML has N <Thread>s each with a <Target> per target.
. "$(dirname "$0")/../lib.sh"
requires jq
requires strace
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"

# --- write-through, counted by the volume (a raid1 of two files)
"$FSVOL" create -l raid1 -s 16M "$T"/r{0,1} >/dev/null
fsvol_mount "$T/mnt" "$T"/r{0,1}
M=$T/mnt
vol() { jq ".volume.$1" "$M/stats.json"; }
for flags in -Sw -Suw -Sh -h -Su -Sb; do
	w0=$(vol writes) f0=$(vol flushes)
	"$BENCH" -b4K -w100 -d0.5 -W0 -q "$flags" "$M/volume" >"$T/b.out" 2>&1 || fail "fsvol-bench $flags: $(cat "$T/b.out")"
	dw=$(($(vol writes) - w0)) df=$(($(vol flushes) - f0))
	note "$flags: $dw writes, $df flushes at the volume"
	((dw > 0)) || fail "$flags: no writes reached the volume"
	case $flags in
	-Su | -Sb) ((df == 0)) || fail "$flags (no write-through): $df flushes for $dw writes" ;;
	*) ((df == dw)) || fail "$flags (write-through): $df flushes for $dw writes, want one each" ;;
	esac
done
grep -q "writethrough on (O_DSYNC)" < <("$BENCH" -b4K -d0.1 -W0 -q -h "$M/volume") || fail "-h: the report does not say write-through"

# --- -g: a throughput limit per thread per target
dd if=/dev/urandom of="$M/volume" bs=1M count=16 oflag=direct status=none
"$BENCH" -b4K -r -t2 -o4 -d1 -W0 -q -Su --json "$M/volume" >"$T/free.json" || fail "unthrottled run failed"
free=$(jq '.results.total.total.bytes / .results.test_time_s' "$T/free.json")
for g in 400 150i; do
	# expected bytes/s of the 2 threads: 2 x 400 B/ms x 1000, or 2 x 150 I/Os/s x 4096
	want=$([[ $g == *i ]] && echo $((2 * ${g%i} * 4096)) || echo $((2 * g * 1000)))
	awk -v f="$free" -v w="$want" 'BEGIN { exit !(f > 3 * w) }' ||
		fail "unthrottled ($free B/s) is not well above the -g$g limit ($want B/s): the test cannot tell"
	r0=$(vol read_bytes)
	"$BENCH" -b4K -r -t2 -o4 -d2 -W0 -C0 -q -Su "-g$g" --json "$M/volume" >"$T/g.json" || fail "-g$g run failed"
	seen=$(($(vol read_bytes) - r0))
	read -r bytes secs < <(jq -r '"\(.results.total.total.bytes) \(.results.test_time_s)"' "$T/g.json")
	note "-g$g: want $want B/s; the tool: $bytes B in ${secs}s; the volume saw $seen B in the run"
	awk -v b="$bytes" -v s="$secs" -v w="$want" 'BEGIN { r = b / s / w; exit !(r > 0.95 && r < 1.05) }' ||
		fail "-g$g: the tool's bytes over its run time are not the limit within 5%"
	awk -v b="$seen" -v s="$secs" -v w="$want" 'BEGIN { r = b / s / w; exit !(r > 0.95 && r < 1.05) }' ||
		fail "-g$g: the volume's bytes over the run are not the limit within 5%"
done

# --- -Rxml with -D: diskspd's XML, checked against itself and the volume's counters
for g in "" -g100i; do
	r0=$(vol reads) w0=$(vol writes)
	"$BENCH" -b4K -r -w30 -t2 -o2 -d2 -W0 -C0 -q -Su -L -D250 $g -Rxml "$M/volume" >"$T/r.xml" || fail "-Rxml run failed"
	dr=$(($(vol reads) - r0)) dw=$(($(vol writes) - w0))
	/usr/bin/python3 - "$T/r.xml" "$dr" "$dw" "${g:-none}" >"$T/xml.out" 2>&1 <<'PY' || fail "-Rxml ${g}:"$'\n'"$(cat "$T/xml.out")"
import math, sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
dr, dw, g = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ts = root.find("TimeSpan")
num = lambda e, p: float(e.find(p).text)
bad, rd, wr = [], 0, 0
threads = ts.findall("Thread")
if int(num(ts, "ThreadCount")) != 2 or len(threads) != 2 or num(ts, "TestTimeSeconds") != 2:
    bad.append(f"ThreadCount {num(ts, 'ThreadCount')}, {len(threads)} <Thread>, TestTimeSeconds {num(ts, 'TestTimeSeconds')}")
if len(ts.find("Latency").findall("Bucket")) < 10:
    bad.append("-L: no latency percentiles")
for th in threads:
    t = th.find("Target")
    c = {k: int(num(t, k)) for k in ("IOCount", "ReadCount", "WriteCount", "BytesCount", "ReadBytes", "WriteBytes")}
    rd += c["ReadCount"]; wr += c["WriteCount"]
    if c["IOCount"] != c["ReadCount"] + c["WriteCount"] or c["BytesCount"] != 4096 * c["IOCount"] \
            or c["ReadBytes"] != 4096 * c["ReadCount"] or c["WriteBytes"] != 4096 * c["WriteCount"]:
        bad.append(f"thread {th.find('Id').text}: counts do not add up: {c}")
    b = t.find("Iops").findall("Bucket")
    tot = [int(x.get("Total")) for x in b]
    if len(b) != 8 or sum(tot) != c["IOCount"] or any(int(x.get("Read")) + int(x.get("Write")) != int(x.get("Total")) for x in b):
        bad.append(f"thread {th.find('Id').text}: {len(b)} buckets (want 8 of 250 ms) summing to {sum(tot)}, IOCount {c['IOCount']}")
    iops = [x * 4 for x in tot]
    mean = sum(iops) / len(iops)
    sd = math.sqrt(sum((x - mean) ** 2 for x in iops) / len(iops))
    if abs(sd - num(t.find("Iops"), "IopsStdDev")) > 0.01:
        bad.append(f"IopsStdDev {num(t.find('Iops'), 'IopsStdDev')}, the buckets give {sd:.3f}")
    # -g100i paces 25 I/Os per 250 ms bucket: never ahead of that schedule by
    # more than the one I/O that straddles a bucket's end; behind it only by
    # what a loaded machine delays (the run's mean stays 100 IOPS within 1%)
    ahead = max(sum(tot[:k + 1]) - 25 * (k + 1) for k in range(len(tot))) if tot else 0
    if g != "none" and (ahead > 1 or abs(mean - 100) > 1):
        bad.append(f"-g100i: buckets {tot} run ahead of 25 I/Os each by {ahead} or do not average 100 IOPS")
# the volume saw what was counted, and at most the 2 x 2 I/Os in flight at the end besides
if not (0 <= dr - rd <= 4 and 0 <= dw - wr <= 4):
    bad.append(f"the volume saw {dr} reads, {dw} writes; the XML counts {rd}, {wr}")
print("\n".join(bad) if bad else f"{g}: {rd} reads, {wr} writes; volume {dr}, {dw}")
sys.exit(1 if bad else 0)
PY
	note "-Rxml -D250 $(cat "$T/xml.out")"
done
fsvol_umount "$M"

# --- write buffers: a 1 MiB file of 0xff, written over sequentially many times
blocks() { # FILE: how the file's 4K blocks read: zero, pattern, and the count of distinct ones
	/usr/bin/python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
b = [d[i:i + 4096] for i in range(0, len(d), 4096)]
pat = bytes(i % 256 for i in range(4096))
print(sum(x == bytes(4096) for x in b), sum(x == pat for x in b), len(set(b)), sum(x == b"\xff" * 4096 for x in b))
PY
}
for z in "" -Z -Zr -Z64K; do
	head -c $MiB /dev/zero | tr '\0' '\377' >"$T/f"
	"$BENCH" -b4K -w100 -s -o4 -d0.5 -W0 -q -Su $z --json "$T/f" >"$T/z.json" 2>"$T/z.err" || fail "fsvol-bench $z: $(cat "$T/z.err")"
	ios=$(jq '[.results.targets[0].threads[].write.ios] | add' "$T/z.json" 2>/dev/null || jq '.results.total.write.ios' "$T/z.json")
	read -r zero pat distinct ff < <(blocks "$T/f")
	note "${z:-default}: $ios writes; of 256 blocks: $zero zero, $pat pattern, $distinct distinct, $ff untouched"
	((ff == 0)) || fail "${z:-default}: $ff blocks never written (the run did not cover the file once)"
	case $z in
	"") ((pat == 256)) || fail "default: $pat of 256 blocks carry diskspd's pattern 0, 1, .., 255" ;;
	-Z) ((zero == 256)) || fail "-Z: $zero of 256 blocks are zeros" ;;
	-Zr) ((distinct == 256 && zero == 0 && pat == 0)) || fail "-Zr: $distinct distinct blocks of 256 (each write its own random data)" ;;
	-Z64K) ((distinct >= 2 && distinct <= 16 && zero == 0 && pat == 0)) ||
		fail "-Z64K: $distinct distinct blocks (want 2..16: 4K slices of one 64K random buffer)" ;;
	esac
done
# --- -rs and -si, seen in the volume's trace (fsvol trace --json: volume requests
# are the records with dev -1, in completion order)
"$FSVOL" create -l raid0 -c 64K -s 32M "$T"/s{0,1} >/dev/null
fsvol_mount "$T/smnt" "$T"/s{0,1}
S=$T/smnt
traced() { # N BENCH-FLAGS...: the offsets of N volume requests of a run, in order
	local n=$1
	shift
	timeout 60 "$FSVOL" trace -n "$n" --json "$S" >"$T/trace.json" &
	local tp=$!
	"$BENCH" -b4K -W0 -d3 -q -Su "$@" "$S/volume" >"$T/tb.out" 2>&1 || fail "fsvol-bench $*: $(cat "$T/tb.out")"
	wait "$tp" || fail "fsvol trace did not see $n requests of fsvol-bench $*"
	jq -r 'select(.dev == -1) | .offset' "$T/trace.json" >"$T/offsets"
	[[ $(wc -l <"$T/offsets") -ge $n ]] || fail "the trace has $(wc -l <"$T/offsets") volume requests, want $n"
}
for pct in 0 25 100; do
	traced 3000 -rs$pct -t1 -o1 -g2000i
	share=$(awk 'NR > 1 { n++; if ($1 != prev + 4096) j++ } { prev = $1 } END { printf "%.4f", j / n }' "$T/offsets")
	note "-rs$pct: $share of traced requests jumped"
	awk -v s="$share" -v p="$pct" 'BEGIN { d = s - p / 100; exit !(d > -0.03 && d < 0.03) }' ||
		fail "-rs$pct: $share of the requests jumped, want $pct% (within 3 points)"
done
for si in -si -s; do
	traced 3000 "$si" -t4 -o1 -g1000i
	read -r dup gap < <(sort -n "$T/offsets" | awk 'NR > 1 { if ($1 == prev) d++; else if ($1 != prev + 4096) g += ($1 - prev) / 4096 - 1 } { prev = $1 } END { print d + 0, g + 0 }')
	note "$si -t4: $dup repeated offsets, $gap blocks skipped among 3000 traced"
	if [[ $si == -si ]]; then
		((dup == 0 && gap <= 8)) || fail "-si: the threads did not share one position ($dup repeats, $gap blocks skipped)"
	else
		((dup > 1000)) || fail "-s without i: 4 threads from offset 0 should repeat each other's offsets ($dup repeats)"
	fi
done
fsvol_umount "$S"

# --- -F: threads in all, each on every target
for i in 1 2 3; do head -c $((4 * MiB)) /dev/urandom >"$T/F$i"; done
os_threads() { # FLAGS...: the threads the run created (strace counts each clone of a thread:
	# every one, however short-lived; io_uring's iou-wrk workers are the kernel's, not clones)
	strace -f -qq -e trace=clone,clone3 -o "$T/F.strace" \
		"$BENCH" -b4K -r -o2 -d1.5 -W0 -q -Su "$@" -Rxml "$T/F1" "$T/F2" "$T/F3" >"$T/F.xml" 2>"$T/F.err" ||
		fail "fsvol-bench $*: $(cat "$T/F.err")"
	grep -c 'CLONE_THREAD' "$T/F.strace" || true
}
nf=$(os_threads -F2)
read -r tc threads < <(/usr/bin/python3 - "$T/F.xml" <<'PY'
import sys, xml.etree.ElementTree as E
ts = E.parse(sys.argv[1]).getroot().find("TimeSpan")
th = ts.findall("Thread")
ok = all(len(t.findall("Target")) == 3 and all(int(x.find("IOCount").text) > 0 for x in t.findall("Target")) for t in th)
print(ts.find("ThreadCount").text, len(th) if ok else -1)
PY
)
note "-F2 on 3 targets: $nf I/O threads, ThreadCount $tc, $threads <Thread>s of 3 busy <Target>s"
((nf == 2 && tc == 2 && threads == 2)) || fail "-F2: want 2 threads, each on the 3 targets (threads $nf, ThreadCount $tc, <Thread>s $threads)"
nt=$(os_threads -t2)
note "-t2 on 3 targets: $nt I/O threads"
((nt == 6)) || fail "-t2 on 3 targets: $nt I/O threads, want 6"
echo "PASS: 68-bench-diskspd"
