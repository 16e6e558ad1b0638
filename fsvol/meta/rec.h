/* rec: the head every checksummed log record block starts with (the PPL's
 * and the write journal's, docs/format.md): magic at 0, version at 4, and
 * at 8 the CRC32C of the whole block with that field read as zero. */
#ifndef FSVOL_REC_H
#define FSVOL_REC_H

#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC 0
#define REC_VERSION 4
#define REC_CRC 8

/* Set the CRC over the len bytes (magic, version and the rest written before). */
void rec_seal(uint8_t *buf, size_t len);

/* 0 when buf holds a block of this magic and version whose CRC is right;
 * else -EINVAL with why in err ("no record (magic 0x...)", "unsupported
 * record version N", "checksum mismatch (stored 0x..., computed 0x...)"). */
int rec_check(const uint8_t *buf, size_t len, uint32_t magic, uint32_t version, char *err, size_t errlen);

#endif
