/* crc32c_x86: the x86-64 CRC32C kernels.
 *  - sse4.2: the crc32 instruction, 8 bytes at a time (one dependency chain);
 *  - pclmul: four 16-byte blocks folded forward by carry-less multiplies
 *    (crc32c_int.h has the algebra), the folded 16 bytes then given to crc32;
 *  - avx512+vpclmulqdq: the same with four 64-byte vectors, 256 bytes a pass.
 * The CRC register is XORed into the first four bytes and the rest runs from
 * zero, so folding and crc32 agree: the folded block has the message's
 * remainder. Each function carries its own target attribute. */
#include "fsvol/util/crc32c_int.h"

#ifdef CRC32C_X86
#include <immintrin.h>
#include <string.h>

#define SSE42 __attribute__((target("sse4.2")))
#define PCL __attribute__((target("sse4.2,pclmul")))
#define VPCL __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
#define AI static inline __attribute__((always_inline))

/* ---- sse4.2 ---- */

/* the register after len more bytes (not inverted) */
SSE42 AI uint32_t crc_raw(uint32_t reg, const uint8_t *p, size_t len)
{
	uint64_t c = reg;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;

		memcpy(&v, p, 8); /* x86 is little-endian, as the CRC reads bytes */
		c = _mm_crc32_u64(c, v);
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

SSE42 static uint32_t crc_sse42(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_raw(~crc, buf, len);
}

static bool sse42_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

/* ---- pclmul: 16-byte blocks ---- */

#define LD16(p) _mm_loadu_si128((const __m128i *)(const void *)(p))

/* the constants that move a block forward by n bytes (16..256, a multiple of 16) */
PCL AI __m128i kpair(unsigned n)
{
	return _mm_set_epi64x((long long)crc32c_fold[n / 16 - 1][1],
			      (long long)crc32c_fold[n / 16 - 1][0]);
}

PCL AI __m128i fold16(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

/* the register of a message whose remainder is the block v, then len more bytes */
PCL AI uint32_t finish(__m128i v, const uint8_t *p, size_t len)
{
	uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));

	c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
	return crc_raw((uint32_t)c, p, len);
}

/* the register after len more bytes */
PCL static uint32_t pclmul_raw(uint32_t reg, const uint8_t *p, size_t len)
{
	__m128i x0, x1, x2, x3, k;

	if (len < 64)
		return crc_raw(reg, p, len);
	x0 = _mm_xor_si128(LD16(p), _mm_cvtsi32_si128((int)reg));
	x1 = LD16(p + 16);
	x2 = LD16(p + 32);
	x3 = LD16(p + 48);
	k = kpair(64);
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		x0 = fold16(x0, k, LD16(p));
		x1 = fold16(x1, k, LD16(p + 16));
		x2 = fold16(x2, k, LD16(p + 32));
		x3 = fold16(x3, k, LD16(p + 48));
	}
	x3 = fold16(x0, kpair(48), fold16(x1, kpair(32), fold16(x2, kpair(16), x3)));
	for (k = kpair(16); len >= 16; p += 16, len -= 16)
		x3 = fold16(x3, k, LD16(p));
	return finish(x3, p, len);
}

PCL static uint32_t crc_pclmul(uint32_t crc, const void *buf, size_t len)
{
	return ~pclmul_raw(~crc, buf, len);
}

static bool pclmul_usable(void)
{
	return sse42_usable() && __builtin_cpu_supports("pclmul");
}

/* ---- avx512+vpclmulqdq: 64-byte vectors ---- */

#define LD64(p) _mm512_loadu_si512((const void *)(p))

VPCL AI __m512i kpair4(unsigned n)
{
	return _mm512_broadcast_i32x4(kpair(n));
}

VPCL AI __m512i fold64(__m512i x, __m512i k, __m512i next)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/* the four blocks of x moved to the last one's place and summed */
VPCL AI __m128i fold_lanes(__m512i x)
{
	const __m128i k48 = kpair(48), k32 = kpair(32), k16 = kpair(16);
	const __m512i k = _mm512_set_epi64(0, 0, _mm_extract_epi64(k16, 1), _mm_cvtsi128_si64(k16),
					   _mm_extract_epi64(k32, 1), _mm_cvtsi128_si64(k32),
					   _mm_extract_epi64(k48, 1), _mm_cvtsi128_si64(k48));
	/* lane 3 has no constants: its products are 0, and it comes in as it is */
	__m512i t = fold64(x, k, _mm512_maskz_mov_epi64(0xc0, x));
	__m256i h = _mm256_xor_si256(_mm512_extracti64x4_epi64(t, 0), _mm512_extracti64x4_epi64(t, 1));

	return _mm_xor_si128(_mm256_extracti128_si256(h, 0), _mm256_extracti128_si256(h, 1));
}

/* the first 256 bytes at p, the register XORed into their first 4 bytes */
VPCL AI void load4(__m512i x[4], const uint8_t *p, uint32_t reg)
{
	x[0] = _mm512_xor_si512(LD64(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
	x[1] = LD64(p + 64);
	x[2] = LD64(p + 128);
	x[3] = LD64(p + 192);
}

/* x moved forward by 256 bytes onto the 256 at p */
VPCL AI void fold4(__m512i x[4], __m512i k, const uint8_t *p)
{
	x[0] = fold64(x[0], k, LD64(p));
	x[1] = fold64(x[1], k, LD64(p + 64));
	x[2] = fold64(x[2], k, LD64(p + 128));
	x[3] = fold64(x[3], k, LD64(p + 192));
}

/* x: the four accumulators of the 256 bytes before p; the rest of them folded
 * in (len >= 0 bytes from p): the block at the end, equal mod P */
VPCL AI __m128i fold_tail(const __m512i x[4], const uint8_t *p, size_t len)
{
	__m512i k, x0, x1, x3;
	__m128i v, k16;

	/* three independent moves, then the sum: a short dependency chain */
	x0 = fold64(x[0], kpair4(192), x[3]);
	x1 = fold64(x[1], kpair4(128), fold64(x[2], kpair4(64), _mm512_setzero_si512()));
	x3 = _mm512_xor_si512(x0, x1);
	for (k = kpair4(64); len >= 64; p += 64, len -= 64)
		x3 = fold64(x3, k, LD64(p));
	v = fold_lanes(x3);
	for (k16 = kpair(16); len >= 16; p += 16, len -= 16)
		v = fold16(v, k16, LD16(p));
	return v;
}

/* the register after len >= 256 more bytes */
VPCL static uint32_t vpclmul_raw(uint32_t reg, const uint8_t *p, size_t len)
{
	const __m512i k = kpair4(256);
	__m512i x[4];
	size_t rest;

	load4(x, p, reg);
	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256)
		fold4(x, k, p);
	rest = len & ~(size_t)15;
	return finish(fold_tail(x, p, rest), p + rest, len - rest);
}

/* ---- the crc32 unit beside the carry-less multiplier ----
 *
 * Folding is bound by the multiplier; the crc32 instruction runs on another
 * unit. So a window of the buffer is cut as F G1 G2 G3 r: F folded 256 bytes a
 * pass as above while three crc32 chains (independent: from 0) take HYB_S
 * bytes each of G1, G2, G3 in the same pass. A chain's register XORed into the
 * first 4 bytes of its part's last 16 bytes makes a block equal mod P to the
 * whole part (the rule that puts the initial register into the first bytes);
 * the four blocks (F's and the Gs') move to the end of G3 with the constants
 * for their distances, are summed, and crc32 takes them and the r < 16 bytes
 * left. The constants depend on the pass count n: hyb_k, built once. */
#define HYB_Q 4 /* qwords per chain per pass: the two units take about as long */
#define HYB_S (8 * HYB_Q)
#define HYB_NMAX 64 /* passes per window */
#define HYB_G(n) (HYB_S * (size_t)(n) + 16) /* bytes of each G */
#define HYB_MIN(n) (256 * ((size_t)(n) + 1) + 3 * HYB_G(n)) /* the smallest window */

static uint64_t hyb_k[HYB_NMAX + 1][3][2]; /* moves by g, 2g, 3g for g = HYB_G(n) */

static void hyb_init(void)
{
	for (unsigned n = 1; n <= HYB_NMAX; n++)
		for (unsigned m = 1; m <= 3; m++)
			crc32c_fold_pair(m * HYB_G(n), hyb_k[n][m - 1]);
}

VPCL AI __m128i hyb_kpair(unsigned n, unsigned m)
{
	return _mm_set_epi64x((long long)hyb_k[n][m - 1][1], (long long)hyb_k[n][m - 1][0]);
}

#define CRC_Q(c, ptr)                                                   \
	do {                                                            \
		uint64_t q_;                                            \
		memcpy(&q_, (ptr), 8);                                  \
		c = _mm_crc32_u64(c, q_);                               \
	} while (0)

/* the register after the w >= HYB_MIN(n) bytes of a window of n passes */
VPCL static uint32_t hyb_window(uint32_t reg, const uint8_t *p, size_t w, unsigned n)
{
	const size_t g = HYB_G(n), r = (w - 3 * g) % 16, f = w - 3 * g - r;
	const uint8_t *g1 = p + f, *g2 = g1 + g, *g3 = g2 + g;
	uint64_t c1 = 0, c2 = 0, c3 = 0;
	const __m512i k = kpair4(256);
	__m512i x[4];
	__m128i v;

	load4(x, p, reg);
	p += 256;
	for (unsigned it = 0; it < n; it++, p += 256) {
		fold4(x, k, p);
		for (unsigned q = 0; q < HYB_Q; q++, g1 += 8, g2 += 8, g3 += 8) {
			CRC_Q(c1, g1);
			CRC_Q(c2, g2);
			CRC_Q(c3, g3);
		}
	}
	v = fold_tail(x, p, f - 256 * ((size_t)n + 1));
	v = fold16(v, hyb_kpair(n, 3),
		   fold16(_mm_xor_si128(LD16(g1), _mm_cvtsi32_si128((int)c1)), hyb_kpair(n, 2),
			  fold16(_mm_xor_si128(LD16(g2), _mm_cvtsi32_si128((int)c2)),
				 hyb_kpair(n, 1),
				 _mm_xor_si128(LD16(g3), _mm_cvtsi32_si128((int)c3)))));
	return finish(v, g3 + 16, r);
}

/* windows of up to HYB_NMAX passes, then what is too short for one */
VPCL static uint32_t crc_vpclmul(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t reg = ~crc;

	while (len >= HYB_MIN(1)) {
		size_t w = len, n = (len - HYB_MIN(0)) / (256 + 3 * HYB_S);

		if (n > HYB_NMAX) {
			n = HYB_NMAX;
			w = HYB_MIN(n);
		}
		reg = hyb_window(reg, p, w, (unsigned)n);
		p += w;
		len -= w;
	}
	if (len >= 256)
		reg = vpclmul_raw(reg, p, len);
	else
		reg = pclmul_raw(reg, p, len);
	return ~reg;
}

static bool vpclmul_usable(void)
{
	return pclmul_usable() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("vpclmulqdq");
}

const struct crc32c_impl crc32c_impl_sse42 = {
	.name = "sse4.2",
	.usable = sse42_usable,
	.fn = crc_sse42,
};

const struct crc32c_impl crc32c_impl_pclmul = {
	.name = "pclmul",
	.usable = pclmul_usable,
	.fn = crc_pclmul,
};

const struct crc32c_impl crc32c_impl_vpclmul = {
	.name = "avx512+vpclmulqdq",
	.usable = vpclmul_usable,
	.fn = crc_vpclmul,
	.init = hyb_init,
};
#endif
