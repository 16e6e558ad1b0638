#!/usr/bin/python3
"""nbd_async: many requests in flight on one NBD connection (unix socket), for
70-nbd-async; the handshake and framing are nbd_probe.py's.

  nbd_async.py SOCKET mixed           one connection, ~60 requests sent before any
                                      reply is read: writes (some FUA), trims and
                                      write-zeroes of several MiB (FUA too), flushes,
                                      reads of what was written before; every handle
                                      answered exactly once and without error, then
                                      the range read back equals the model; after
                                      DISC nothing more arrives. Prints "fua N" (the
                                      flushes the server must have made at least)
  nbd_async.py SOCKET overtake SLOW FAST   reads at SLOW (a slow member's range,
                                      63 of 4 KiB, 128 KiB apart) then one at FAST:
                                      the fast one must be answered first (no
                                      thread waits on the slow member)
  nbd_async.py SOCKET flood N         N connections, each with 60 reads and writes
                                      in flight; prints "sent", then waits until
                                      the server answers or hangs up
Exits 1 on the first wrong answer; every socket operation has a timeout.
"""
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbd_probe import (CMD_DISC, CMD_FLUSH, CMD_READ, CMD_TRIM, CMD_WRITE,  # noqa: E402
                       CMD_WRITE_ZEROES, SIMPLE_REPLY, Closed, bad, go, ok, recvall, request)

FUA = 1
MiB = 1 << 20


def replies(s, want):
    """Read replies until every handle in want (handle -> reply data length)
    is answered; returns {handle: (err, data)} in arrival order (a dict)."""
    got = {}
    while len(got) < len(want):
        magic, err, h = struct.unpack(">IIQ", recvall(s, 16))
        if magic != SIMPLE_REPLY:
            bad("reply magic 0x%x" % magic)
        if h not in want:
            bad("reply for handle %d, never sent" % h)
        if h in got:
            bad("handle %d answered twice" % h)
        got[h] = (err, recvall(s, want[h]) if not err and want[h] else b"")
    return got


def mixed(path):
    s, size, _ = go(path)
    s.settimeout(60)
    base = 4 * MiB
    span = 24 * MiB
    if size < base + span:
        bad("export of %d bytes: too small" % size)
    model = bytearray(os.urandom(span))
    # the first pass writes everything, FUA on every third
    reqs, want, fua = [], {}, 0
    h = 0
    for i in range(0, span, 256 << 10):
        h += 1
        flags = FUA if h % 3 == 0 else 0
        fua += flags
        reqs.append((CMD_WRITE, base + i, 256 << 10, bytes(model[i:i + (256 << 10)]), h, flags))
        want[h] = 0
    sender = threading.Thread(target=lambda: [request(s, c, o, n, d, handle=k, flags=f)
                                              for c, o, n, d, k, f in reqs])
    sender.start()
    got = replies(s, want)
    sender.join()
    # the second pass, all in flight at once, on ranges that do not overlap:
    # trims and zeros of several MiB (pieces of 1 MiB in the engine), reads of
    # what the first pass wrote, writes, flushes
    reqs, want = [], {}
    plan = [(CMD_TRIM, 0, 5 * MiB + 4096, FUA), (CMD_WRITE_ZEROES, 6 * MiB, 3 * MiB + 512, FUA),
            (CMD_WRITE_ZEROES, 10 * MiB, 2 * MiB, 0), (CMD_TRIM, 13 * MiB, 1 * MiB, 0)]
    for c, o, n, f in plan:
        h += 1
        fua += f
        reqs.append((c, base + o, n, b"", h, f))
        want[h] = 0
        model[o:o + n] = bytes(n)
    reads = {}
    for i in range(40):
        o = 15 * MiB + i * (128 << 10)
        h += 1
        if i % 2:
            reqs.append((CMD_READ, base + o, 64 << 10, b"", h, 0))
            want[h] = 64 << 10
            reads[h] = bytes(model[o:o + (64 << 10)])
        else:
            d = os.urandom(64 << 10)
            model[o:o + len(d)] = d
            flags = FUA if i % 4 == 0 else 0
            fua += flags
            reqs.append((CMD_WRITE, base + o, len(d), d, h, flags))
            want[h] = 0
        if i % 10 == 9:
            h += 1
            reqs.append((CMD_FLUSH, 0, 0, b"", h, 0))
            want[h] = 0
    sender = threading.Thread(target=lambda: [request(s, c, o, n, d, handle=k, flags=f)
                                              for c, o, n, d, k, f in reqs])
    sender.start()
    got.update(replies(s, want))
    sender.join()
    for k, (err, data) in got.items():
        if err:
            bad("handle %d: error %d" % (k, err))
        if k in reads and data != reads[k]:
            bad("handle %d: a read in flight with other requests differs" % k)
    ok("%d requests, each answered once, no error" % h)
    # read the whole range back
    for o in range(0, span, MiB):
        h += 1
        request(s, CMD_READ, base + o, MiB, handle=h)
        err, data = replies(s, {h: MiB})[h]
        if err or data != bytes(model[o:o + MiB]):
            bad("read back at %d MiB differs (error %d)" % (o // MiB, err))
    ok("read back equal to the model (trims and zeros read as zeros)")
    request(s, CMD_DISC, 0, 0)
    s.settimeout(10)
    try:
        extra = s.recv(1)
    except (ConnectionResetError, socket.timeout):
        extra = b"?"
    if extra:
        bad("bytes after the last reply and DISC: %r" % extra)
    s.close()
    ok("DISC: nothing more, connection closed")
    print("fua %d" % fua)


def overtake(path, slow, fast):
    s, _, _ = go(path)
    s.settimeout(60)
    want = {}
    for i in range(63):
        request(s, CMD_READ, slow + i * (128 << 10), 4096, handle=i + 1)
        want[i + 1] = 4096
    request(s, CMD_READ, fast, 4096, handle=1000)
    want[1000] = 4096
    got = replies(s, want)
    first = next(iter(got))
    if first != 1000:
        bad("the read on the fast member came after %d reads on the slow one (first: handle %d)" %
            (list(got).index(1000), first))
    if any(err for err, _ in got.values()):
        bad("a read failed")
    ok("a fast read overtakes 63 slow ones on the same connection")
    request(s, CMD_DISC, 0, 0)
    s.close()


def flood(path, n):
    conns = []
    for c in range(n):
        s, size, _ = go(path)
        for i in range(60):
            off = ((c * 60 + i) * (64 << 10)) % (size - (64 << 10))
            if i % 2:
                request(s, CMD_READ, off, 64 << 10, handle=i + 1)
            else:
                request(s, CMD_WRITE, off, 64 << 10, os.urandom(64 << 10), handle=i + 1, flags=i % 4 == 0)
        conns.append(s)
    print("sent", flush=True)
    for s in conns:
        s.settimeout(60)
        try:
            while s.recv(1 << 16):
                pass
        except (Closed, ConnectionResetError):
            pass
        except socket.timeout:
            bad("flood: the server neither answered nor hung up within 60 s")


def main():
    a = sys.argv
    if len(a) == 3 and a[2] == "mixed":
        mixed(a[1])
    elif len(a) == 5 and a[2] == "overtake":
        overtake(a[1], int(a[3]), int(a[4]))
    elif len(a) == 4 and a[2] == "flood":
        flood(a[1], int(a[3]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
