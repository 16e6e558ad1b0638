#!/usr/bin/env bash
# The NBD export never waits on the volume (fsvol/front/nbd_server.c,
# docs/network.md "Limits"): the event thread hands each request to the engine
# and the completion answers. Many requests of every kind in flight on one
# connection (writes and FUA writes, trims and zeros of several MiB, flushes,
# reads) are each answered exactly once and leave the data right; a read on a
# fast member overtakes 63 on a slow one (the same connection); SIGTERM with
# hundreds of requests in flight on a slow member ends the server, the volume
# clean; the threads stay few. Members on the test's directory (O_DIRECT).
. "$(dirname "$0")/../lib.sh"
requires jq
ASYNC=$(cd "$(dirname "$0")/../tools" && pwd)/nbd_async.py
PROBE=$(cd "$(dirname "$0")/../tools" && pwd)/nbd_probe.py
# fsvol's own threads: the event thread, the member ring threads (one per CPU,
# at most 4), the volume's few (metadata, stats, ctl)
MAX_OWN=16

own() { cat /proc/"$1"/task/*/comm 2>/dev/null | grep -vc '^iou-wrk'; }
names() { cat /proc/"$1"/task/*/comm 2>/dev/null | sort | uniq -c | tr -s ' \n' ' '; }
gone() { ! _alive "$1"; }
logged() { grep -qF "$2" "$1/ctl.log" 2>/dev/null; }
flushes_at_least() { [[ $(jq -r '.volume.flushes' "$T/ctl/stats.json" 2>/dev/null || echo 0) -ge $1 ]]; }
status_has() { grep -q "$1" "$T/ctl/status" 2>/dev/null; }

# raid0 of 2, chunk 64K: logical chunk k lives on member k % 2
"$FSVOL" create -l raid0 -c 64K -s 32M "$T"/m{0,1} >/dev/null
S=$T/v.sock
"$FSVOL" serve --nbd "unix:$S" --pidfile "$S.pid" --log "$DAEMON_LOG" --ctl-dir "$T/ctl" "$T"/m{0,1} ||
	fail "fsvol serve failed"
pid=$(cat "$S.pid")
track_pid "$pid"

# --- everything in flight at once on one connection
/usr/bin/python3 "$ASYNC" "$S" mixed >"$T/mixed.out" 2>&1 || { cat "$T/mixed.out" >&2; fail "mixed requests in flight"; }
cat "$T/mixed.out"
fua=$(sed -n 's/^fua //p' "$T/mixed.out")
# each FUA request is its write, then a volume flush; each flush one more
wait_for 30 "the volume counted $fua FUA flushes and 4 flushes" flushes_at_least $((fua + 4))
/usr/bin/python3 "$PROBE" "$S" multiconn || fail "multi-conn flush"
note "mixed requests in flight: each answered once, data equal, $fua FUA requests flushed, multi-conn flush"

# --- a slow member: member 0 answers reads 2 s late (far longer than the event thread takes to read 64 headers)
printf 'fault 0 rdelay=2s' >"$T/ctl/ctl"
wait_for 30 "ctl: fault 0 rdelay=2s" logged "$T/ctl" "fault 0"
/usr/bin/python3 "$ASYNC" "$S" overtake 0 $((64 * 1024)) || fail "a fast read waited behind slow ones"
note "a read on the fast member overtakes 63 on the slow one"

# --- SIGTERM with requests in flight on the slow member (and writes)
/usr/bin/python3 "$ASYNC" "$S" flood 8 >"$T/flood.out" 2>&1 &
flood=$!
track_pid $flood
wait_for 60 "the flood client sent its requests" grep -q "^sent" "$T/flood.out"
t=$(own "$pid")
((t <= MAX_OWN)) || fail "$t threads with 480 requests in flight (limit $MAX_OWN): $(names "$pid")"
note "480 requests in flight: $t threads ($(names "$pid"))"
kill -TERM "$pid"
wait_for 60 "the server to end after SIGTERM with requests in flight" gone "$pid"
wait "$flood" || fail "the flood client: $(cat "$T/flood.out")"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "volume not clean after SIGTERM with requests in flight"
[[ ! -S $S ]] || fail "the socket file outlived the server"
note "SIGTERM with 480 requests in flight: server gone, volume clean"
check_sanitizer_logs || fail "sanitizer report"
echo "ok"
