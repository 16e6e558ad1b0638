#!/usr/bin/python3
"""jnl_forge.py JOURNAL SLOT OFFSET LENGTH [BYTE]: forge a write-journal record
(docs/format.md, "Write journal") with good checksums that writes LENGTH bytes
of BYTE (default 0xaa) to member slot SLOT at OFFSET of its data area (a u64:
2^64 - data_offset is member offset 0 once added to data_offset). It goes
right after the newest record of JOURNAL's ring with the next sequence number,
so a dirty start takes it as the last write of the last session. A LENGTH
more than the ring holds writes the header alone. Prints "forged record at
block B seq S"."""
import struct
import sys

BLOCK = 4096
JNL_MAGIC = 0x314C4E4A


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
        t.append(c)
    return t


TABLE = _table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def sealed(hdr):
    hdr[8:12] = bytes(4)
    hdr[8:12] = struct.pack("<I", crc32c(bytes(hdr)))
    return hdr


def main():
    path, slot, off, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0), int(sys.argv[4], 0)
    byte = int(sys.argv[5], 0) if len(sys.argv) > 5 else 0xAA
    with open(path, "r+b") as f:
        sb = f.read(BLOCK)
        uuid = sb[16:32]
        data_offset, index = struct.unpack_from("<Q", sb, 80)[0], struct.unpack_from("<I", sb, 76)[0]
        nblocks = struct.unpack_from("<Q", sb, 256 + 48 * index + 24)[0] // BLOCK
        f.seek(data_offset)
        ring = f.read(nblocks * BLOCK)
        newest = None  # (seq, block, blocks)
        for b in range(nblocks):
            h = bytearray(ring[b * BLOCK:(b + 1) * BLOCK])
            if struct.unpack_from("<II", h, 0) != (JNL_MAGIC, 1) or h[16:32] != uuid:
                continue
            if struct.unpack_from("<I", sealed(h.copy()), 8)[0] != struct.unpack_from("<I", h, 8)[0]:
                continue  # not a whole header
            seq, blocks = struct.unpack_from("<Q", h, 32)[0], struct.unpack_from("<I", h, 12)[0]
            if newest is None or seq > newest[0]:
                newest = (seq, b, blocks)
        if newest is None:
            sys.exit("jnl_forge: %s holds no record to follow" % path)
        pb = length // BLOCK
        if length % BLOCK:
            sys.exit("jnl_forge: %d bytes: not whole blocks" % length)
        # more than the ring holds: the header alone (its payload crc of nothing)
        payload = bytes([byte]) * length if pb + 1 <= nblocks else b""
        seq, at = newest[0] + 1, (newest[1] + newest[2]) % nblocks
        hdr = bytearray(BLOCK)
        struct.pack_into("<IIII", hdr, 0, JNL_MAGIC, 1, 0, 1 + pb)
        hdr[16:32] = uuid
        struct.pack_into("<QQII", hdr, 32, seq, 0, crc32c(payload), 1)
        struct.pack_into("<IIQQ", hdr, 64, slot, 0, off & (2**64 - 1), length)
        blocks = [bytes(sealed(hdr))] + [payload[i * BLOCK:(i + 1) * BLOCK] for i in range(len(payload) // BLOCK)]
        for k, blk in enumerate(blocks):  # the record may wrap from the ring's end to its start
            f.seek(data_offset + ((at + k) % nblocks) * BLOCK)
            f.write(blk)
    print("forged record at block %d seq %d" % (at, seq))


if __name__ == "__main__":
    main()
