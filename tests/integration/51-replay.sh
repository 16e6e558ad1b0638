#!/usr/bin/env bash
# fsvol-bench --replay: a recorded trace issued on every kind of target, and
# exactly the recorded requests. fio's workload on a raid5 mount is recorded;
# fsvol-bench replays it on a raid10 mount while that one is recorded (the
# same requests), in-process on a raid6 (the volume's counters and the
# latency log say the same), and on a raw file as recorded and sped up
# (never early), on a loop device, and a log fio wrote itself. Bad input is
# refused with a message and nothing issued.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq
requires_root
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"


"$FSVOL" create -l raid5 -c 64K -s 32M "$T"/a{0,1,2,3} >/dev/null
"$FSVOL" create -l raid10 -c 16K -s 48M "$T"/b{0,1,2,3} >/dev/null
fsvol_mount "$T/A" "$T"/a{0,1,2,3}
fsvol_mount "$T/B" "$T"/b{0,1,2,3}

trace_record "$T/A" "$T/a.log"
fio --name=work --filename="$T/A/volume" --rw=randrw --bsrange=4k-64k --direct=1 --ioengine=psync \
	--size=60M --io_size=4M --randseed=5 --output=/dev/null || fail "fio workload"
kill -INT "$REC_PID"
wait "$REC_PID" || fail "the recorder failed: $(cat "$T/record.err")"
n=$(trace_requests "$T/a.log" | wc -l)
[[ $n -gt 20 ]] || fail "only $n requests recorded"
reads=$(trace_requests "$T/a.log" | grep -c '^read ')
writes=$(trace_requests "$T/a.log" | grep -c '^write ')
rbytes=$(trace_requests "$T/a.log" | awk '$1 == "read" { s += $3 } END { print s + 0 }')
wbytes=$(trace_requests "$T/a.log" | awk '$1 == "write" { s += $3 } END { print s + 0 }')

# --- on a mount (FUSE), recorded there: the same requests (several in flight: any order)
trace_record "$T/B" "$T/b.log" -n "$n" --duration 120
"$BENCH" --replay "$T/a.log" --replay-afap -o4 -S "$T/B/volume" >"$T/mount.out" 2>"$T/mount.err" ||
	fail "replay on the mount: $(cat "$T/mount.err")"
wait "$REC_PID" || fail "the recorder of B failed: $(cat "$T/record.err")"
diff <(trace_requests "$T/a.log" | sort) <(trace_requests "$T/b.log" | sort) >"$T/diff" ||
	fail "the replay on raid10 issued other requests than recorded: $(head -n 5 "$T/diff")"
grep -q "below the mapping layer: raid10" "$T/mount.out" || fail "no member figures for the mount"
grep -q "99th" "$T/mount.out" || fail "no latency percentiles in the report"
note "replayed $n requests on a raid10 mount: the same requests arrived"

# --- in-process on raid6 x5: the volume counted the trace's requests, the log lists them
"$FSVOL" create -l raid6 -c 64K -s 24M "$T"/c{0,1,2,3,4} >/dev/null
"$BENCH" --replay "$T/a.log" --members "$(echo "$T"/c{0,1,2,3,4} | tr ' ' ,)" --latency-log "$T/lat.txt" \
	--json >"$T/inproc.json" 2>"$T/inproc.err" || fail "in-process replay: $(cat "$T/inproc.err")"
vol=$(jq -c '.results.targets[0].below.devices[0] | [.reads, .writes, .read_bytes, .write_bytes]' "$T/inproc.json")
[[ $vol == "[$reads,$writes,$rbytes,$wbytes]" ]] ||
	fail "raid6 in-process counted $vol, the trace has [$reads,$writes,$rbytes,$wbytes]"
diff <(trace_requests "$T/a.log") <(awk '!/^#/ { print $3, $4, $5 }' "$T/lat.txt") >"$T/diff" ||
	fail "the latency log differs from the trace: $(head -n 5 "$T/diff")"
awk '!/^#/ && !($6 > 0) { exit 1 }' "$T/lat.txt" || fail "a request without a latency in $T/lat.txt"
note "in-process raid6: volume counters = the trace ($reads reads, $writes writes)"

# --- a raw file, as recorded: nothing issued before its recorded time
truncate -s 64M "$T/raw"
"$BENCH" --replay "$T/a.log" --latency-log "$T/raw.txt" "$T/raw" >"$T/raw.out" 2>"$T/raw.err" ||
	fail "replay on a raw file: $(cat "$T/raw.err")"
# (v3 timestamps are microseconds; the log's issue_us counts from the first request)
paste <(awk '$3 ~ /^(read|write|sync)$/ { print $1 }' "$T/a.log") <(awk '!/^#/ { print $2 }' "$T/raw.txt") |
	awk 'NR == 1 { t0 = $1 } { if ($2 < $1 - t0) exit 1 }' || fail "a request was issued before its recorded time"
# sped up 4x: still never early, and over before the recorded span
span_us=$(awk '$3 ~ /^(read|write|sync)$/ { if (t0 == "") t0 = $1; t = $1 } END { print t - t0 }' "$T/a.log")
"$BENCH" --replay "$T/a.log" --replay-speed 4 --latency-log "$T/fast.txt" "$T/raw" >/dev/null 2>"$T/fast.err" ||
	fail "replay at 4x: $(cat "$T/fast.err")"
paste <(awk '$3 ~ /^(read|write|sync)$/ { print $1 }' "$T/a.log") <(awk '!/^#/ { print $2 }' "$T/fast.txt") |
	awk 'NR == 1 { t0 = $1 } { if ($2 < ($1 - t0) / 4) exit 1 }' || fail "4x: a request was issued before its time"
last_us=$(awk '!/^#/ { t = $2 } END { print t }' "$T/fast.txt")
if [[ $span_us -ge 200000 ]]; then
	awk -v a="$last_us" -v s="$span_us" 'BEGIN { exit !(a < s) }' ||
		fail "4x: the last request went out at $last_us us, the trace spans $span_us us"
fi

# --- a block device (a loop device over a file): the same requests reach the file
truncate -s 64M "$T/dev.img"
if loop_attach "$T/dev.img"; then
	"$BENCH" --replay "$T/a.log" --replay-afap -o8 -S --latency-log "$T/dev.txt" "$LOOP" >"$T/dev.out" 2>"$T/dev.err" ||
		fail "replay on $LOOP: $(cat "$T/dev.err")"
	[[ $(grep -vc '^#' "$T/dev.txt") -eq $n ]] || fail "$LOOP: not $n requests replayed"
	grep -q "$LOOP (64M)" "$T/dev.out" || fail "$LOOP: the report does not name the device and its size"
	# what was written there is in the file under it
	[[ $(stat -c %b "$T/dev.img") -gt 0 ]] || fail "the writes replayed on $LOOP did not reach $T/dev.img"
else
	note "no free loop device: the block-device replay is not run"
fi

# --- a log fio wrote itself (--write_iolog, v3): read with fio's own time unit
fio --name=own --filename="$T/raw" --rw=randrw --bs=4k --number_ios=8 --thinktime=50ms --ioengine=psync \
	--write_iolog="$T/fio-own.log" --output=/dev/null || fail "fio --write_iolog"
head -n 1 "$T/fio-own.log" | grep -qx 'fio version 3 iolog' || fail "fio wrote no v3 log"
timeout 60 "$BENCH" --replay "$T/fio-own.log" --latency-log "$T/own.txt" "$T/raw" >/dev/null 2>"$T/own.err" ||
	fail "replay of fio's own log (a wrong time unit waits 1000x too long): $(cat "$T/own.err")"
[[ $(grep -vc '^#' "$T/own.txt") -eq 8 ]] || fail "fio's own log: not 8 requests replayed"
# fio's 50 ms think times are between the requests: the last one leaves >= 350 ms after the first
last_us=$(awk '!/^#/ { t = $2 } END { print t }' "$T/own.txt")
awk -v a="$last_us" 'BEGIN { exit !(a >= 350000) }' || fail "fio's 50 ms gaps not kept: last issue at $last_us us"

# --- bad input: a message, exit 1, and nothing written to the target
sum() { md5sum "$T/raw" | cut -d' ' -f1; }
before=$(sum)
printf 'hello world\n' >"$T/bad-format"
expect_fail_msg "$T/bad-format:1: unknown trace format" "$BENCH" --replay "$T/bad-format" "$T/raw"
printf 'fio version 3 iolog\n0 f add\n0 f write 0 4096\n1 f write 8192\n' >"$T/truncated"
expect_fail_msg "$T/truncated:4: expected OFFSET LENGTH" "$BENCH" --replay "$T/truncated" "$T/raw"
printf '0.0 0 0 8 0\n1.0 0 262144 8 0\n' >"$T/beyond.trace"
truncate -s 64K "$T/small"
expect_fail_msg "beyond the end of $T/small (65536 bytes): nothing was issued" "$BENCH" --replay "$T/beyond.trace" "$T/small"
[[ $(stat -c %b "$T/small") -eq 0 ]] || fail "a refused replay wrote to $T/small"
expect_fail_msg "beyond the end" "$BENCH" --replay "$T/beyond.trace" --members "$(echo "$T"/c{0,1,2,3,4} | tr ' ' ,)" -c 64K
expect_fail_msg "$T/nothere: No such file or directory" "$BENCH" --replay "$T/nothere" "$T/raw"
[[ $(sum) == "$before" ]] || fail "a refused replay changed $T/raw"
# wrap folds the trace onto the small file
"$BENCH" --replay "$T/beyond.trace" --replay-map wrap --latency-log "$T/wrap.txt" "$T/small" >/dev/null 2>&1 ||
	fail "--replay-map wrap refused a trace beyond the target"
awk '!/^#/ && $4 + $5 > 65536 { exit 1 }' "$T/wrap.txt" || fail "--replay-map wrap went beyond the target"
# usage errors: exit 2
rc=0; "$BENCH" --replay "$T/a.log" --replay-format nope "$T/raw" 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "expected fio, fio2" "$T/e" || fail "--replay-format nope: rc $rc, $(cat "$T/e")"
rc=0; "$BENCH" --replay "$T/a.log" --replay-speed 2 --replay-afap "$T/raw" 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "exclude each other" "$T/e" || fail "--replay-speed with --replay-afap: rc $rc"
rc=0; "$BENCH" --latency-log "$T/x" "$T/raw" 2>"$T/e" || rc=$?
[[ $rc -eq 2 ]] && grep -q "needs --replay" "$T/e" || fail "--latency-log without --replay: rc $rc"
# a forced format that is not the file's
expect_fail_msg "$T/a.log:1: expected TIME_MS" "$BENCH" --replay "$T/a.log" --replay-format disksim "$T/raw"
