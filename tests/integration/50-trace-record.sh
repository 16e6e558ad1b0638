#!/usr/bin/env bash
# fsvol trace --record: a volume's requests as a fio iolog v3 that fio itself
# replays. fio writes and reads at random on a raid5 volume while it is
# recorded; fio replays the log onto a raid10 volume (--replay_redirect) while
# that one is recorded too; both logs must hold the same requests in the same
# order (fio replays one at a time, as recorded). --duration and bad input.
. "$(dirname "$0")/../lib.sh"
requires fio
requires_root


"$FSVOL" create -l raid5 -c 64K -s 32M "$T"/a{0,1,2,3} >/dev/null
"$FSVOL" create -l raid10 -c 16K -s 48M "$T"/b{0,1,2,3} >/dev/null
fsvol_mount "$T/A" "$T"/a{0,1,2,3}
fsvol_mount "$T/B" "$T"/b{0,1,2,3}

# --- record a fio workload on A; stop it with SIGINT (Ctrl-C)
trace_record "$T/A" "$T/a.log"
fio --name=work --filename="$T/A/volume" --rw=randrw --bsrange=4k-64k --direct=1 --ioengine=psync \
	--size=60M --io_size=6M --randseed=11 --output="$T/fio-work.out" || fail "fio workload: $(cat "$T/fio-work.out")"
kill -INT "$REC_PID"
wait "$REC_PID" || fail "the recorder failed: $(cat "$T/record.err")"
head -n 1 "$T/a.log" | grep -qx 'fio version 3 iolog' || fail "not a fio v3 iolog: $(head -n 1 "$T/a.log")"
n=$(trace_requests "$T/a.log" | wc -l)
want=$(awk -F'[=,]' '/issued rwts/ { print $2 + $3 }' "$T/fio-work.out")
[[ $n -eq $want ]] || fail "recorded $n requests, fio issued $want"
reads=$(trace_requests "$T/a.log" | grep -c '^read ')
writes=$(trace_requests "$T/a.log" | grep -c '^write ')
[[ $reads -gt 0 && $writes -gt 0 ]] || fail "expected reads and writes, got $reads and $writes"
# timestamps in microseconds (as fio writes them), never going back
awk 'NR > 1 { if ($1 < last) exit 1; last = $1 }' "$T/a.log" || fail "timestamps go back in $T/a.log"
span_us=$(awk '$3 ~ /^(read|write|sync)$/ { t = $1 } END { print t }' "$T/a.log")
note "recorded $n requests ($reads reads, $writes writes) on raid5"

# --- fio replays the log on B while B is recorded: the same requests
trace_record "$T/B" "$T/b.log" -n "$n" --duration 120
t0=$(date +%s%N)
fio --name=replay --read_iolog="$T/a.log" --replay_redirect="$T/B/volume" --direct=1 --ioengine=psync \
	--output="$T/fio-replay.out" || fail "fio replay: $(cat "$T/fio-replay.out")"
took_us=$((($(date +%s%N) - t0) / 1000))
# fio waits out the recorded gaps (it drops those under 100 us): the replay lasts the recording
[[ $took_us -ge $((span_us * 9 / 10)) ]] || fail "fio replayed a ${span_us} us recording in ${took_us} us"
wait "$REC_PID" || fail "the second recorder failed: $(cat "$T/record.err")"
diff <(trace_requests "$T/a.log") <(trace_requests "$T/b.log") >"$T/diff" ||
	fail "fio's replay on raid10 issued other requests than recorded on raid5: $(head -n 5 "$T/diff")"
note "fio replayed them on raid10: the same $n requests, in order"

# --- the replay also runs on a raw file (a device stand-in)
truncate -s 96M "$T/raw"
fio --name=raw --read_iolog="$T/a.log" --replay_redirect="$T/raw" --direct=1 --ioengine=psync \
	--output="$T/fio-raw.out" || fail "fio replay on a raw file: $(cat "$T/fio-raw.out")"
got=$(awk -F'[=,]' '/issued rwts/ { print $2 + $3 }' "$T/fio-raw.out")
[[ $got -eq $n ]] || fail "fio issued $got requests on the raw file, the log has $n"

# --- --duration stops an idle recording; an empty log is still a valid header
trace_record "$T/A" "$T/idle.log" --duration 0.5
wait "$REC_PID" || fail "the idle recorder failed: $(cat "$T/record.err")"
[[ $(trace_requests "$T/idle.log" | wc -l) -eq 0 ]] || fail "an idle volume recorded requests"
grep -q ' close$' "$T/idle.log" || fail "no close line in $T/idle.log"

# --- bad input
expect_fail_msg "--duration: only with --record" "$FSVOL" trace --duration 1 "$T/A"
expect_fail_msg "--duration x" "$FSVOL" trace --record "$T/x.log" --duration x "$T/A"
expect_fail_msg "--record $T/nodir/x.log" "$FSVOL" trace --record "$T/nodir/x.log" "$T/A"
expect_fail_msg "$T/nomnt: No such file" "$FSVOL" trace --record "$T/x.log" "$T/nomnt"
mkdir "$T/plain"
expect_fail_msg "$T/plain/trace.json" "$FSVOL" trace --record "$T/x.log" "$T/plain"
[[ ! -e $T/x.log ]] || fail "a refused recording left $T/x.log"
