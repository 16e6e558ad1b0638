#!/usr/bin/python3
"""nbd_hostile: issue 22's NBD requests that killed the server, one at a time
(tests/stress/adversarial.sh), on a unix socket. Uses tests/tools/nbd_probe.py.

  nbd_hostile.py SOCKET fast-zero      WRITE_ZEROES with NBD_CMD_FLAG_FAST_ZERO
  nbd_hostile.py SOCKET unread-reads   86 reads of 1 MiB, no reply read, then close
  nbd_hostile.py SOCKET zero-length    a write of 0 bytes (must not be ENOSPC)
  nbd_hostile.py SOCKET alive          write 64 KiB, read it back equal
  nbd_hostile.py SOCKET unread-hold N  N connections, each sends 256 reads of 1 MiB and
                                       reads no reply; prints "holding N", then keeps
                                       them open until stdin ends (issue 30 A7)
Prints "ok ..." or "BAD ..." (exit 1). Whether the server survived is for the
caller to see (its pid, a new connection).
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import nbd_probe as p  # noqa: E402

FLAG_FAST_ZERO = 1 << 4
ENOSPC, EINVAL = 28, 22


def answer(s, rlen=0):
    """The reply's error, or 'disconnected'."""
    try:
        return p.reply(s, rlen=rlen)[0]
    except (p.Closed, ConnectionResetError, BrokenPipeError):
        return "disconnected"
    except socket.timeout:
        return "no answer within %d s" % p.TIMEOUT


def fast_zero(path):
    s, _, _ = p.go(path)
    p.request(s, p.CMD_WRITE_ZEROES, 0, 65536, flags=FLAG_FAST_ZERO)
    err = answer(s)
    s.close()
    if isinstance(err, str) and err.startswith("no answer"):
        return "BAD fast-zero write-zeroes: " + err
    return "ok fast-zero write-zeroes answered: %s" % ("error %d" % err if isinstance(err, int) else err)


def unread_reads(path):
    s, size, _ = p.go(path)
    n = 86
    for i in range(n):
        p.request(s, p.CMD_READ, (i % (size >> 20)) << 20, 1 << 20, handle=i + 1)
    s.close()
    return "ok %d reads of 1 MiB sent, closed with no reply read" % n


def unread_hold(path, n):
    socks = []
    for _ in range(n):
        s, size, _ = p.go(path)
        # one send of 7 KiB of headers: the socket takes it whole (256 sends
        # of 28 bytes would fill its buffer once the server stops reading)
        s.sendall(b"".join(struct.pack(">IHHQQI", p.REQ_MAGIC, 0, p.CMD_READ, i + 1, (i % (size >> 20)) << 20,
                                       1 << 20) for i in range(256)))
        socks.append(s)
    print("holding %d" % n, flush=True)
    sys.stdin.read()  # until the caller closes it (or dies)
    for s in socks:
        s.close()
    return "ok %d connections held with 256 unread reads of 1 MiB each, then closed" % n


def zero_length(path):
    s, _, _ = p.go(path)
    p.request(s, p.CMD_WRITE, 4096, 0)
    err = answer(s)
    s.close()
    if err == ENOSPC:
        return "BAD zero-length write answered ENOSPC"
    if err not in (0, EINVAL):
        return "BAD zero-length write answered %s" % err
    return "ok zero-length write answered %s" % ("success" if err == 0 else "EINVAL")


def alive(path):
    s, _, _ = p.go(path)
    data = os.urandom(65536)
    p.request(s, p.CMD_WRITE, 1 << 20, len(data), data)
    if p.reply(s)[0]:
        return "BAD write on a new connection failed"
    p.request(s, p.CMD_READ, 1 << 20, len(data))
    err, got = p.reply(s, rlen=len(data))
    p.request(s, p.CMD_DISC, 0, 0)
    s.close()
    return "ok new connection: write, read back equal" if not err and got == data else "BAD read back differs"


def main():
    kinds = {"fast-zero": fast_zero, "unread-reads": unread_reads, "zero-length": zero_length, "alive": alive}
    if len(sys.argv) == 4 and sys.argv[2] == "unread-hold":
        kinds["unread-hold"] = lambda path: unread_hold(path, int(sys.argv[3]))
    elif len(sys.argv) != 3 or sys.argv[2] not in kinds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        out = kinds[sys.argv[2]](sys.argv[1])
    except Exception as e:  # a refused connection, a handshake cut short: the server is not well
        out = "BAD %s: %s" % (type(e).__name__, e)
    print(out)
    sys.exit(0 if out.startswith("ok") else 1)


if __name__ == "__main__":
    main()
