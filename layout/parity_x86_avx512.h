/* parity_x86_avx512: the helpers the AVX-512 kernel sets share
 * (parity_x86_avx512.c, parity_x86_gfni.c). x86-64 only, after <immintrin.h>. */
#ifndef FSVOL_PARITY_X86_AVX512_H
#define FSVOL_PARITY_X86_AVX512_H

#define AVX512 __attribute__((target("avx512f,avx512bw")))
#define AI512 AVX512 static inline __attribute__((always_inline))

#define LD(ptr) _mm512_loadu_si512((const void *)(ptr))
#define ST(ptr, v) _mm512_storeu_si512((void *)(ptr), (v))
#define LDM(k, ptr) _mm512_maskz_loadu_epi8((k), (const void *)(ptr))
#define STM(ptr, k, v) _mm512_mask_storeu_epi8((void *)(ptr), (k), (v))
#define XOR(a, b) _mm512_xor_si512((a), (b))
#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)

/* loads and stores of whole vectors (full) or of the bytes in mask k (a tail) */
#define LDX(full, k, ptr) ((full) ? LD(ptr) : LDM((k), (ptr)))
#define STX(full, ptr, k, v)                  \
	do {                                  \
		if (full)                     \
			ST((ptr), (v));       \
		else                          \
			STM((ptr), (k), (v)); \
	} while (0)

/* Kernels over many blocks take them GROUP at a time, the count a constant in
 * each copy (a switch picks it): the loop over the blocks unrolls and their
 * pointers stay in registers. A loop over a variable count costs a
 * mispredicted exit in every column, which halves the speed at 8 blocks. */
#define GROUP 8

/* the bytes of a 64-byte step that are in range: n of them, at most 64 */
AI512 __mmask64 tail_mask(size_t n)
{
	return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

void parity_avx512_xor(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len);
void parity_avx512_gen(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
		       size_t len);

#endif
