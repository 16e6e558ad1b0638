/* crc32c: CRC32C (Castagnoli: reflected polynomial 0x82f63b78, initial value and
 * final XOR 0xffffffff; the iSCSI/ext4 CRC) of the on-disk metadata: superblocks,
 * bad-block lists, PPL and journal records (docs/format.md).
 *
 * Kernel sets, one per instruction set, all giving the same value; the best one
 * the CPU runs is taken at first use, or the one FSVOL_CRC32C_ISA names when
 * the CPU runs it (docs/parity.md). */
#ifndef FSVOL_CRC32C_H
#define FSVOL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc is the running value, 0 to start: crc32c(0, "123456789", 9) == 0xe3069283;
 * crc32c(crc32c(0, a, n), b, m) is the CRC of a followed by b. Any alignment. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

const char *crc32c_isa(void); /* the set in use: "portable", "sse4.2", "pclmul", "avx512+vpclmulqdq" */
const char *crc32c_isa_name(unsigned i); /* the sets built in, slowest first; NULL past the end */
/* 1 when this CPU runs the set, 0 when it does not, -EINVAL for no such set */
int crc32c_isa_usable(const char *name);
/* Use that set from now on: 0, -EINVAL (no such set), -ENOTSUP (not on this CPU).
 * For tests and benches: a call must not overlap a CRC computation. */
int crc32c_isa_select(const char *name);

#endif
