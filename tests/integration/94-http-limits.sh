#!/usr/bin/env bash
# Issue 30 A8: `mount --http` while 1,200 half-open connections are held (each
# sent half a request and waits). Loopback has 127.0.0.0/8, so clients come
# from addresses of their own. The limits (docs/counters.md, "HTTP"; `fsvol
# mount --help`): 64 connections from one address, 256 in all; a connection
# past either closes the oldest one (of that address, or of all): clients
# that hold connections open can no longer lock a new request out, whether
# it comes from another address or from theirs (on loopback every local
# client is 127.0.0.1). Each case: /status.json answered 200 with the
# volume's status, from 127.0.0.2 and from the holder's address; the holder
# keeps at most 64 connections, the server at most 256; the daemon lives.
. "$(dirname "$0")/../lib.sh"
requires jq
requires curl

"$FSVOL" create -l raid1 -s 8M "$T"/m{0,1} >/dev/null
fsvol_mount_http "$T/mnt" "$T"/m{0,1}
pid=$(daemon_pid "$T/mnt")
url=http://127.0.0.1:$HTTP_PORT

# hold PORT N FIRST_ADDR NADDR: N connections spread over NADDR addresses from
# 127.0.0.FIRST_ADDR up, each with half a request; then GET /status.json from
# 127.0.0.2 and from 127.0.0.FIRST_ADDR (each once the earlier connections
# are accepted: the kernel's accept queue is FIFO), and count the held
# connections still open, per address. Prints "status A B", "open TOTAL MAXPERADDR".
hold() {
	/usr/bin/python3 - "$@" <<'EOF'
import errno, http.client, select, socket, sys, time
port, n, first, naddr = (int(a) for a in sys.argv[1:5])
# connect all at once (non-blocking: a server that stops accepting must not
# cost a timeout per socket), then half a request on each that connected
conns = {}
poll = select.poll()
for i in range(n):
    src = "127.0.0.%d" % (first + i % naddr)
    s = socket.socket()
    s.setblocking(False)
    s.bind((src, 0))
    if s.connect_ex(("127.0.0.1", port)) not in (0, errno.EINPROGRESS):
        s.close()
        continue
    conns[s.fileno()] = (src, s)
    poll.register(s, select.POLLOUT)
held, deadline = [], time.time() + 15
while conns and time.time() < deadline:
    for fd, ev in poll.poll(500):
        src, s = conns.pop(fd)
        poll.unregister(fd)
        try:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                s.send(b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                held.append((src, s))
                continue
        except OSError:
            pass
        s.close()  # refused or reset at once: not held

def get(src):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(src, 0))
    try:
        c.request("GET", "/status.json")
        r = c.getresponse()
        body = r.read()
        return "%d:%s" % (r.status, b'"members"' in body)
    except OSError as e:
        return type(e).__name__
    finally:
        c.close()

a, b = get("127.0.0.2"), get("127.0.0.%d" % first)

def still_open():
    per = {}
    for src, s in held:
        try:
            closed = s.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            closed = False
        except OSError:
            closed = True
        if not closed:
            per[src] = per.get(src, 0) + 1
    return per

# the server closes the oldest connection of an address (or of all) after it
# accepted the newer one: its closes may trail the answers by a turn of its
# loop, so the count is read until it is within the limits (bounded)
deadline = time.time() + 10
per = still_open()
while (max(per.values(), default=0) > 64 or sum(per.values()) > 256) and time.time() < deadline:
    select.select([], [], [], 0.1)
    per = still_open()
print("status", a, b)
print("open", sum(per.values()), max(per.values(), default=0))
EOF
}

check() { # WHAT: the output of hold in $T/hold.out
	local a b total most
	read -r _ a b <"$T/hold.out" || true
	read -r _ total most < <(sed -n 2p "$T/hold.out") || true
	[[ $a == 200:True ]] || fail "$1: /status.json from 127.0.0.2: $a"
	[[ $b == 200:True ]] || fail "$1: /status.json from the holders' address: $b"
	((most <= 64)) || fail "$1: one address keeps $most connections open (limit 64)"
	((total <= 256)) || fail "$1: $total connections kept open (limit 256)"
	_alive "$pid" || fail "$1: the daemon died"
	note "$1: /status.json answered from 127.0.0.2 and the holders' address; $total held connections open, at most $most from one address"
}

# --- 1,200 from one address
hold "$HTTP_PORT" 1200 1 1 >"$T/hold.out" 2>&1 || fail "hold: $(cat "$T/hold.out")"
check "1,200 half-open connections from 127.0.0.1"

# --- 1,200 from 20 addresses (60 each: under the per-address limit, past the total)
hold "$HTTP_PORT" 1200 10 20 >"$T/hold.out" 2>&1 || fail "hold: $(cat "$T/hold.out")"
check "1,200 half-open connections from 20 addresses"

# the server is itself again once they are gone
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url/status.json") == 200 ]] || fail "/status.json after the holders left"
fsvol_umount "$T/mnt"
echo "PASS"
