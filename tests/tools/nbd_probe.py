#!/usr/bin/python3
"""nbd_probe: a minimal NBD client (fixed newstyle, OPT_GO, simple replies) on
a unix socket, for tests that need what nbdinfo/nbdcopy will not send.

  nbd_probe.py SOCKET multiconn     write on one connection, flush on a second,
                                    read back on the second
  nbd_probe.py SOCKET hostile       malformed and hostile requests; each must get
                                    an error reply or a disconnect (a zero-length
                                    request: success), and after each one a new
                                    connection must still be served
  nbd_probe.py SOCKET idle N SECS   open N connections (handshake done), print
                                    "connected K refused R" (R: closed by the
                                    server at once), keep them idle SECS seconds
  nbd_probe.py SOCKET hold SECONDS  connect, print "connected", stay idle (a client
                                    that never hangs up, like a kernel nbd-client)
Prints one line per case; exits 1 on the first wrong answer. Every socket
operation has a timeout, so a hung server fails the test instead of hanging it.
"""
import os
import socket
import struct
import sys
import time

NBDMAGIC = b"NBDMAGIC"
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x3E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_REPLY = 0x67446698
OPT_GO, OPT_ABORT = 7, 2
REP_ACK, REP_INFO = 1, 3
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES = 0, 1, 2, 3, 4, 6
FLAG_CAN_MULTI_CONN = 1 << 8
CMD_FLAG_FAST_ZERO = 1 << 4
TIMEOUT = 10


class Closed(Exception):
    pass


def recvall(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise Closed()
        b += c
    return b


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    s.connect(path)
    return s


def greet(s):
    hello = recvall(s, 18)
    assert hello[:8] == NBDMAGIC, hello
    magic, hflags = struct.unpack(">QH", hello[8:])
    assert magic == IHAVEOPT and hflags & 1, "not fixed newstyle"
    s.sendall(struct.pack(">I", 3))  # FIXED_NEWSTYLE | NO_ZEROES


def go(path, name=b""):
    """Connect and negotiate with OPT_GO; returns (socket, size, flags)."""
    s = connect(path)
    greet(s)
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
    size = flags = None
    while True:
        magic, opt, rtype, rlen = struct.unpack(">QIII", recvall(s, 20))
        assert magic == REPLY_MAGIC and opt == OPT_GO, (hex(magic), opt)
        body = recvall(s, rlen)
        if rtype == REP_INFO and struct.unpack(">H", body[:2])[0] == 0:
            size, flags = struct.unpack(">QH", body[2:12])
        elif rtype == REP_ACK:
            return s, size, flags
        elif rtype & 0x80000000:
            raise RuntimeError("OPT_GO refused: type 0x%x %r" % (rtype, body))


def request(s, cmd, off, length, data=b"", handle=1, flags=0):
    s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, flags, cmd, handle, off, length) + data)


def reply(s, handle=1, rlen=0):
    magic, err, h = struct.unpack(">IIQ", recvall(s, 16))
    assert magic == SIMPLE_REPLY and h == handle, (hex(magic), h)
    return err, (recvall(s, rlen) if not err and rlen else b"")


def ok(what):
    print("ok  " + what)


def bad(what):
    print("BAD " + what)
    sys.exit(1)


def multiconn(path):
    a, size, flags = go(path)
    b, _, _ = go(path)
    if not flags & FLAG_CAN_MULTI_CONN:
        bad("export does not advertise multi-conn")
    data = os.urandom(1 << 20)
    off = (size // 2) & ~4095
    request(a, CMD_WRITE, off, len(data), data)
    if reply(a)[0]:
        bad("write on connection A failed")
    request(b, CMD_FLUSH, 0, 0)
    if reply(b)[0]:
        bad("flush on connection B failed")
    request(b, CMD_READ, off, len(data))
    err, got = reply(b, rlen=len(data))
    if err or got != data:
        bad("read on B after A's write and B's flush differs (err %d)" % err)
    ok("write on A, flush on B, read on B: equal")
    for s in (a, b):
        request(s, CMD_DISC, 0, 0)
        s.close()


def alive(path, after):
    """A new connection is still served (a read of 512 bytes)."""
    try:
        s, _, _ = go(path)
        request(s, CMD_READ, 0, 512)
        err, got = reply(s, rlen=512)
        request(s, CMD_DISC, 0, 0)
        s.close()
    except (OSError, Closed, AssertionError) as e:
        bad("after %s: the server no longer serves (%r)" % (after, e))
    if err or len(got) != 512:
        bad("after %s: a read failed (error %d)" % (after, err))


def expect_error_or_close(path, what, send, rlen=0):
    """send(s) then the server must answer with an error or hang up."""
    s, size, _ = go(path)
    try:
        send(s, size)
        err, _ = reply(s, rlen=rlen)
        if not err:
            bad(what + ": the server answered success")
        ok("%s: error %d" % (what, err))
    except (Closed, ConnectionResetError, BrokenPipeError):
        ok(what + ": disconnected")
    except socket.timeout:
        bad(what + ": no answer within %d s (hang)" % TIMEOUT)
    finally:
        s.close()
    alive(path, what)


def expect_success(path, what, send):
    """send(s) then the server must answer success and keep the connection."""
    s, size, _ = go(path)
    try:
        send(s, size)
        err, _ = reply(s)
        if err:
            bad("%s: error %d, expected success" % (what, err))
        request(s, CMD_READ, 0, 512, handle=2)
        if reply(s, handle=2, rlen=512)[0]:
            bad(what + ": the connection no longer serves")
        ok(what + ": success, connection kept")
    except (Closed, ConnectionResetError, BrokenPipeError):
        bad(what + ": disconnected (the spec says a server SHOULD NOT)")
    except socket.timeout:
        bad(what + ": no answer within %d s (hang)" % TIMEOUT)
    finally:
        s.close()
    alive(path, what)


def hostile(path):
    # handshake: garbage instead of IHAVEOPT
    s = connect(path)
    greet(s)
    s.sendall(b"\xde\xad\xbe\xef" * 8)
    try:
        while s.recv(4096):
            pass
        ok("bad option magic: disconnected")
    except (ConnectionResetError, BrokenPipeError):
        ok("bad option magic: disconnected")
    except socket.timeout:
        bad("bad option magic: no disconnect within %d s" % TIMEOUT)
    s.close()
    # OPT_ABORT is answered and closed
    s = connect(path)
    greet(s)
    s.sendall(struct.pack(">QII", IHAVEOPT, OPT_ABORT, 0))
    s.close()
    ok("OPT_ABORT")

    expect_error_or_close(path, "bad request magic",
                          lambda s, n: s.sendall(struct.pack(">IHHQQI", 0x12345678, 0, CMD_READ, 1, 0, 512)))
    expect_error_or_close(path, "read at the end", lambda s, n: request(s, CMD_READ, n, 512))
    expect_error_or_close(path, "read across the end", lambda s, n: request(s, CMD_READ, n - 512, 4096))
    expect_error_or_close(path, "read at 2^64-512", lambda s, n: request(s, CMD_READ, (1 << 64) - 512, 512))
    expect_error_or_close(path, "write past the end",
                          lambda s, n: request(s, CMD_WRITE, n - 512, 4096, b"\0" * 4096))
    expect_error_or_close(path, "zero past the end", lambda s, n: request(s, CMD_WRITE_ZEROES, n, 4096))
    expect_error_or_close(path, "trim past the end", lambda s, n: request(s, CMD_TRIM, n - 4096, 8192))
    expect_error_or_close(path, "read of 4 GiB - 1", lambda s, n: request(s, CMD_READ, 0, 0xFFFFFFFF))
    expect_error_or_close(path, "write of 2 GiB announced",
                          lambda s, n: request(s, CMD_WRITE, 0, 0x80000000, b"\0" * 4096))
    expect_error_or_close(path, "unknown command 99", lambda s, n: request(s, 99, 0, 512))
    expect_error_or_close(path, "unknown flags", lambda s, n: request(s, CMD_READ, 0, 512, flags=0x8000))
    # FAST_ZERO without NBD_FLAG_SEND_FAST_ZERO (nbdkit 1.32 with fsvol's
    # plugin aborted on it): the spec asks for EINVAL
    expect_error_or_close(path, "write zeroes with FAST_ZERO (not advertised)",
                          lambda s, n: request(s, CMD_WRITE_ZEROES, 0, 4096, flags=CMD_FLAG_FAST_ZERO))
    # zero-length requests: the spec leaves the answer open but says the
    # server SHOULD NOT disconnect; a no-op in range is a success
    expect_success(path, "write of 0 bytes", lambda s, n: request(s, CMD_WRITE, 4096, 0))
    expect_success(path, "write of 0 bytes at the end", lambda s, n: request(s, CMD_WRITE, n, 0))
    expect_success(path, "read of 0 bytes", lambda s, n: request(s, CMD_READ, 4096, 0))
    expect_success(path, "trim of 0 bytes", lambda s, n: request(s, CMD_TRIM, 4096, 0))
    expect_success(path, "write zeroes of 0 bytes", lambda s, n: request(s, CMD_WRITE_ZEROES, 4096, 0))

    # 86 reads of 1 MiB queued, no reply read, then gone (nbdkit 1.32:
    # "raw_send_socket: Assertion sock >= 0", the whole server aborted)
    s, size, _ = go(path)
    for i in range(86):
        request(s, CMD_READ, (i << 20) % (size - (1 << 20)), 1 << 20, handle=i + 1)
    s.close()
    alive(path, "86 reads of 1 MiB left unread")
    ok("86 reads of 1 MiB queued, replies never read, client gone")

    # a client that vanishes mid-request: half a write payload, then gone
    s, size, _ = go(path)
    request(s, CMD_WRITE, 0, 1 << 20, b"x" * 1000)
    s.close()
    # and one that leaves before its read's reply
    s, size, _ = go(path)
    request(s, CMD_READ, 0, 1 << 20)
    s.close()
    alive(path, "clients that vanish mid-request")
    ok("clients that vanish mid-request")

    # the server still serves, and the data is intact
    s, size, _ = go(path)
    data = os.urandom(65536)
    request(s, CMD_WRITE, 4096, len(data), data)
    if reply(s)[0]:
        bad("write after the hostile requests failed")
    request(s, CMD_READ, 4096, len(data))
    err, got = reply(s, rlen=len(data))
    if err or got != data:
        bad("read after the hostile requests differs")
    request(s, CMD_DISC, 0, 0)
    s.close()
    ok("still serving: write and read back equal")


def hold(path, secs):
    s, _, _ = go(path)
    print("connected", flush=True)
    s.settimeout(secs)
    try:
        s.recv(1)  # returns when the server hangs up
    except socket.timeout:
        pass


def idle(path, n, secs):
    held = []
    refused = 0
    for _ in range(n):
        try:
            s, _, _ = go(path)
            held.append(s)
        except (Closed, ConnectionResetError, BrokenPipeError):
            refused += 1  # over the server's connection limit: closed at once
    print("connected %d refused %d" % (len(held), refused), flush=True)
    time.sleep(secs)  # the test kills it once done
    for s in held:
        s.close()


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "hold":
        hold(sys.argv[1], float(sys.argv[3]))
        return
    if len(sys.argv) == 5 and sys.argv[2] == "idle":
        idle(sys.argv[1], int(sys.argv[3]), float(sys.argv[4]))
        return
    if len(sys.argv) != 3 or sys.argv[2] not in ("multiconn", "hostile"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    {"multiconn": multiconn, "hostile": hostile}[sys.argv[2]](sys.argv[1])


if __name__ == "__main__":
    main()
