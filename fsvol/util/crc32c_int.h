/* crc32c_int: what fsvol/util/crc32c.c shares with its x86 kernels
 * (crc32c_x86.c). Not for other modules. */
#ifndef FSVOL_CRC32C_INT_H
#define FSVOL_CRC32C_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define CRC32C_X86 1
#endif

struct crc32c_impl {
	const char *name; /* FSVOL_CRC32C_ISA */
	bool (*usable)(void); /* this CPU runs it */
	uint32_t (*fn)(uint32_t crc, const void *buf, size_t len); /* crc32c() */
	void (*init)(void); /* tables of its own, NULL: none; once, after crc32c_fold */
};

extern const struct crc32c_impl crc32c_impl_portable;
#ifdef CRC32C_X86
extern const struct crc32c_impl crc32c_impl_sse42, crc32c_impl_pclmul, crc32c_impl_vpclmul;
#endif

/* Folding constants, filled by crc32c.c before any kernel runs. Moving a
 * 16-byte block (as the polynomial L * x^64 + H, L its first 8 bytes) forward
 * by n bytes multiplies it by x^(8n) mod P; with the bit-reflected operands of
 * PCLMULQDQ (which leave the product one bit low) that is
 *   L * k[0] ^ H * k[1],  k[0] = x^(8n+63) mod P,  k[1] = x^(8n-1) mod P,
 * each stored with x^i at bit 63 - i. crc32c_fold[i] moves by 16 * (i + 1)
 * bytes; 16 * CRC32C_FOLDS is the longest move (four 64-byte vectors). */
#define CRC32C_FOLDS 16
extern uint64_t crc32c_fold[CRC32C_FOLDS][2];

/* k[] for a move by any number of bytes >= 1 */
void crc32c_fold_pair(size_t bytes, uint64_t k[2]);

#endif
