#!/usr/bin/env bash
# Limits of the NBD export (fsvol/front/nbd_server.c, docs/network.md
# "Limits"): 1,000 idle connections cost no thread each (nbdkit 1.32 took 17
# per connection), and the volume still serves a new client meanwhile
# (nbdcopy round trip, multi-conn flush); SIGTERM with all of them connected
# ends the server and leaves the volume clean. Connections beyond the limit
# (descriptors allowing) are closed at once, and served again once the others
# leave. Servers listen on unix sockets in $T only.
. "$(dirname "$0")/../lib.sh"
requires nbdcopy
requires nbdinfo
requires jq
PROBE=$(cd "$(dirname "$0")/../tools" && pwd)/nbd_probe.py
# fsvol's own threads: the export's event thread (no worker: requests go to
# the engine asynchronously), the member ring threads (one per CPU, at most 4),
# the volume's few
MAX_OWN=16
# the kernel's io_uring workers (iou-wrk-*): per ring (the ring threads', and
# a synchronous caller's own) at most 4 per CPU for file I/O
MAX_IOWQ=$((8 * 4 * $(nproc)))

uri() { echo "nbd+unix:///?socket=$1"; }
own() { cat /proc/"$1"/task/*/comm 2>/dev/null | grep -vc '^iou-wrk'; }
iowq() { cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c '^iou-wrk'; }
# which threads (by name, counted): for the failure message
names() { cat /proc/"$1"/task/*/comm 2>/dev/null | sort | uniq -c | tr -s ' \n' ' '; }
# wait_for SECS CMD...: until CMD succeeds
wait_for() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
	fail "timed out waiting for: $*"
}
gone() { ! _alive "$1"; }
served() { nbdinfo --size "$(uri "$S")" >/dev/null 2>&1; }

"$FSVOL" create -l raid5 -c 64K -s 24M "$T"/m{0,1,2} >/dev/null
S=$T/v.sock
"$FSVOL" serve --nbd "unix:$S" --pidfile "$S.pid" --log "$DAEMON_LOG" --ctl-dir "$T/ctl" "$T"/m{0,1,2} ||
	fail "fsvol serve failed"
pid=$(cat "$S.pid")
track_pid "$pid"
t0=$(own "$pid")

# --- 1,000 idle connections, each through the handshake
/usr/bin/python3 "$PROBE" "$S" idle 1000 600 >"$T/idle.out" 2>&1 &
track_pid $!
wait_for 120 grep -q "^connected" "$T/idle.out"
grep -q "^connected 1000 refused 0" "$T/idle.out" || fail "1000 connections: $(cat "$T/idle.out")"
socks=$(find "/proc/$pid/fd" -lname 'socket:*' | wc -l)
((socks >= 1000)) || fail "the server holds $socks sockets, expected the 1000 connections"
t1=$(own "$pid")
((t1 <= MAX_OWN && t1 == t0)) ||
	fail "$t1 threads with 1000 idle connections ($t0 before, limit $MAX_OWN): $(names "$pid")"
note "1000 idle connections: $t0 threads before, $t1 with them"

# the volume still serves: a new client writes and reads back, multi-conn flush
random_file "$T/data" $((8 * MiB))
nbdcopy "$T/data" "$(uri "$S")" || fail "nbdcopy to the export with 1000 idle connections failed"
nbdcopy "$(uri "$S")" "$T/back" || fail "nbdcopy from the export with 1000 idle connections failed"
cmp -n $((8 * MiB)) "$T/data" "$T/back" || fail "round trip with 1000 idle connections differs"
/usr/bin/python3 "$PROBE" "$S" multiconn || fail "multi-conn flush with 1000 idle connections"
t2=$(own "$pid")
w2=$(iowq "$pid")
((t2 <= MAX_OWN && w2 <= MAX_IOWQ)) ||
	fail "$t2 threads and $w2 io_uring workers after serving beside 1000 idle connections: $(names "$pid")"
note "still serving beside them: nbdcopy round trip equal, multi-conn flush; $t2 threads + $w2 io_uring workers"

# SIGTERM: every client is dropped, the volume closed clean
kill -TERM "$pid"
wait_for 30 gone "$pid"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "volume not clean after SIGTERM with 1000 clients"
[[ ! -S $S ]] || fail "the socket file outlived the server"
note "SIGTERM with 1000 idle connections: server gone, volume clean"

# --- the connection limit: descriptors 400 -> 144 connections (docs/network.md)
(
	ulimit -n 400
	"$FSVOL" serve --nbd "unix:$S" --pidfile "$S.pid" --log "$DAEMON_LOG" "$T"/m{0,1,2}
) || fail "fsvol serve (400 descriptors) failed"
pid=$(cat "$S.pid")
track_pid "$pid"
/usr/bin/python3 "$PROBE" "$S" idle 200 600 >"$T/idle2.out" 2>&1 &
idle=$!
track_pid $idle
wait_for 60 grep -q "^connected" "$T/idle2.out"
grep -q "^connected 144 refused 56" "$T/idle2.out" || fail "limit of 144: $(cat "$T/idle2.out")"
! served || fail "a connection beyond the limit was served"
kill "$idle"
wait_for 30 served
note "limit: 144 connections with 400 descriptors, the rest closed at once; served again when they leave"
check_sanitizer_logs
echo "ok"
