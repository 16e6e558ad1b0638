#!/usr/bin/python3
"""sb_set.py FILE OFFSET VALUE: store VALUE as the little-endian u64 at OFFSET
of FILE's superblock and fix its CRC32C (docs/format.md), so a test can forge
a field the tools would never write."""
import struct
import sys


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff


path, off, val = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, 'r+b') as f:
    sb = bytearray(f.read(4096))
    sb[off:off + 8] = struct.pack('<Q', val)
    sb[8:12] = bytes(4)
    sb[8:12] = struct.pack('<I', crc32c(bytes(sb)))
    f.seek(0)
    f.write(sb)
