#!/usr/bin/env bash
# Issue 30 A7: NBD clients that never read their replies. Twelve connections
# each pipeline 256 reads of 1 MiB and read nothing (what took the daemon to
# 1,079 MiB with 8, and left 984 MiB after they closed). The server reads
# their requests only while its budgets allow (docs/network.md, "Limits"):
# the daemon's RSS stays within its base, the budgets of nbd_server.h (all
# connections' buffers, the reserve past it, one largest request more),
# bufpool's idle buffers and 64 MiB for the rest; another client is served
# meanwhile (write and read back, an nbdcopy round trip: the reserve keeps
# the budget from locking it out); once the hostile clients hang up, the
# RSS falls back to the base and the idle buffers; the daemon lives.
. "$(dirname "$0")/../lib.sh"
requires jq
requires nbdcopy
HOSTILE=$(cd "$(dirname "$0")/../stress" && pwd)/nbd_hostile.py
HDR=$(cd "$(dirname "$0")/../.." && pwd)/fsvol/front/nbd_server.h
N=12

hdr_mib() { sed -n "s/^#define $1 (\([0-9]*\)u << 20).*/\1/p" "$HDR"; }
TOTAL=$(hdr_mib NBD_SERVER_TOTAL_BYTES)
RESERVE=$(hdr_mib NBD_SERVER_RESERVE_BYTES)
[[ -n $TOTAL && -n $RESERVE ]] || fail "the budgets are not in $HDR"
MAX_REQ=32 # NBDS_MAX_BLOCK, MiB
IDLE=32    # bufpool's idle bound, MiB

"$FSVOL" create -l raid0 -c 64K -s 160M "$T"/m{0,1} >/dev/null
S=$T/v.sock
"$FSVOL" serve --nbd "unix:$S" --pidfile "$S.pid" --log "$DAEMON_LOG" --ctl-dir "$T/ctl" "$T"/m{0,1} ||
	fail "fsvol serve failed"
pid=$(cat "$S.pid")
track_pid "$pid"
rss() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status"; }
good() { timeout 60 /usr/bin/python3 "$HOSTILE" "$S" alive >"$T/alive.out" 2>&1 || fail "a new client: $(cat "$T/alive.out")"; }
good # the server's buffers for a small client exist before the base is taken
base=$(rss)
bound=$((base + TOTAL + RESERVE + MAX_REQ + IDLE + 64))

# --- the hostile clients, until the server has read what its budget lets it
mkfifo "$T/hold"
/usr/bin/python3 "$HOSTILE" "$S" unread-hold "$N" <"$T/hold" >"$T/hostile.out" 2>&1 &
hpid=$!
track_pid "$hpid"
exec 7>"$T/hold" # the helper holds its connections until this closes
wait_for 60 "$N hostile clients connected: $(cat "$T/hostile.out")" grep -q "^holding $N" "$T/hostile.out"
reads() { jq -r '.volume.reads' "$T/ctl/stats.json" 2>/dev/null || echo 0; }
read_past() { (($(reads) >= TOTAL)); }
wait_for 60 "the server did not answer $TOTAL of the unread 1 MiB reads" read_past
peak=$(rss)
note "reads at the budget: $(reads)"

# --- meanwhile another client is served
random_file "$T/data" $((8 * MiB))
for i in 1 2 3 4 5; do
	good
	r=$(rss) && ((r > peak)) && peak=$r
done
nbdcopy "$T/data" "nbd+unix:///?socket=$S" || fail "nbdcopy to the export beside the hostile clients"
nbdcopy "nbd+unix:///?socket=$S" "$T/back" || fail "nbdcopy from the export beside the hostile clients"
cmp -n $((8 * MiB)) "$T/data" "$T/back" || fail "round trip beside the hostile clients differs"
r=$(rss) && ((r > peak)) && peak=$r
held=$(reads)
note "$N clients with 256 unread 1 MiB reads each: $held answered, RSS $base MiB -> $peak MiB (bound $bound)"
((peak <= bound)) || fail "RSS $peak MiB with $N hostile clients, past $bound MiB (base $base + budgets $TOTAL + $RESERVE + $MAX_REQ + idle $IDLE + 64)"
((held < N * 256)) || fail "the server answered all $held reads: no budget held it back"

# --- they hang up: their replies are given back, the memory with them
exec 7>&-
wait_for 30 "the hostile helper did not end" eval '! _alive '"$hpid"
_drop_cleanup pid "$hpid"
# ASan keeps the shadow of what was touched (an eighth) and a quarantine of
# freed blocks: room for them under SAN=1
san=0
[[ ${SAN:-0} == 1 ]] && san=$(((TOTAL + RESERVE) / 8 + 16))
fallen() { (($(rss) <= base + IDLE + 16 + san)); }
wait_for 60 "RSS did not fall back after the clients closed: $(rss) MiB (base $base)" fallen
note "after they closed: RSS $(rss) MiB"
_alive "$pid" || fail "the daemon died"
good
grep -Eq "$SAN_PATTERN" "$DAEMON_LOG" && fail "sanitizer report: $(cat "$DAEMON_LOG")"
echo "PASS"
