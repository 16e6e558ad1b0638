/* parity_x86_avx512: the kernels with 512-bit registers and byte masks
 * (AVX-512 F+BW: Skylake-SP, Ice Lake, Zen 4 and later), for CPUs without GFNI
 * (parity_x86_gfni.c is faster where it runs).
 *  - XOR: three inputs per vpternlogq;
 *  - gen: Horner over groups of blocks, multiply-by-2 as add plus 0x1d under
 *    the sign-bit mask, each group's Q then times g^(its first index);
 *  - multiply by a constant: the nibble tables (vpshufb on 64 bytes);
 *  - tails: masked loads and stores, no byte loop.
 * Each function carries its own target attribute; the rest of the build keeps
 * its flags. xor_n and gen for few blocks serve the GFNI set too. */
#include "layout/parity_int.h"

#ifdef PARITY_X86
#include <immintrin.h>

#include "layout/parity_x86_avx512.h"

static bool avx512_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

/* w vectors at offset i of dst = s[0] ^ ... ^ s[k-1], three inputs per vpternlogq */
AI512 void xor_step(uint8_t *dst, const uint8_t *const *s, unsigned k, size_t i, unsigned w,
		    bool full, __mmask64 km)
{
	__m512i a[4];

	_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++)
		a[v] = LDX(full, km, s[0] + i + 64 * v);
	_Pragma("GCC unroll 4") for (unsigned b = 1; b < k; b += 2)
		_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++) {
			const size_t o = i + 64 * v;

			if (b + 1 == k)
				a[v] = XOR(a[v], LDX(full, km, s[b] + o));
			else
				a[v] = XOR3(a[v], LDX(full, km, s[b] + o), LDX(full, km, s[b + 1] + o));
		}
	_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++)
		STX(full, dst + i + 64 * v, km, a[v]);
}

/* dst = src[0] ^ ... ^ src[k-1], 128 bytes a pass, then the tail under a mask.
 * The pointers are copied first: read through src, they would be reloaded
 * after every store (dst may alias src[], for all the compiler knows). */
AI512 void xor_group(uint8_t *dst, const uint8_t *const *src, unsigned k, size_t len)
{
	const uint8_t *s[GROUP];
	size_t i = 0;

	_Pragma("GCC unroll 8") for (unsigned b = 0; b < k; b++)
		s[b] = src[b];
	for (; i + 128 <= len; i += 128)
		xor_step(dst, s, k, i, 2, true, 0);
	for (; i < len; i += 64)
		xor_step(dst, s, k, i, 1, false, tail_mask(len - i));
}

#define XOR_K(K)                                 \
	case K:                                  \
		xor_group(dst, s, K, len);       \
		break

/* dst = s[0] ^ ... ^ s[k-1], k (1..GROUP) a constant in each case */
AVX512 static void xor_k(uint8_t *dst, const uint8_t *const *s, unsigned k, size_t len)
{
	switch (k) {
		XOR_K(1);
		XOR_K(2);
		XOR_K(3);
		XOR_K(4);
		XOR_K(5);
		XOR_K(6);
		XOR_K(7);
		XOR_K(8);
	}
}

/* GROUP sources into dst, then dst and the next GROUP - 1, ... */
void parity_avx512_xor(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len)
{
	const uint8_t *s[GROUP];
	unsigned k = n < GROUP ? n : GROUP;

	xor_k(dst, src, k, len);
	while (k < n) {
		unsigned m = n - k < GROUP - 1 ? n - k : GROUP - 1;

		s[0] = dst;
		memcpy(s + 1, src + k, m * sizeof(*s));
		xor_k(dst, s, m + 1, len);
		k += m;
	}
}

/* q * 2 ^ b: the bytes whose top bit falls out get 0x1d */
AI512 __m512i mul2_xor(__m512i q, __m512i b)
{
	const __m512i red = _mm512_maskz_mov_epi8(_mm512_movepi8_mask(q), _mm512_set1_epi8(0x1d));

	return XOR3(_mm512_add_epi8(q, q), red, b);
}

/* c * x per byte: the 16-entry tables of c's products, one per nibble */
struct nib_tab {
	__m512i lo, hi;
};

AI512 struct nib_tab nib_load(uint8_t c)
{
	struct nib_tab t;

	t.lo = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)parity_nib_lo[c]));
	t.hi = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)parity_nib_hi[c]));
	return t;
}

AI512 __m512i nib_mul(const struct nib_tab *t, __m512i x)
{
	const __m512i m = _mm512_set1_epi8(0x0f);
	__m512i lo = _mm512_and_si512(x, m);
	__m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), m);

	return XOR(_mm512_shuffle_epi8(t->lo, lo), _mm512_shuffle_epi8(t->hi, hi));
}

/* w vectors at offset i: P and Q of the k blocks s[] (NULL: zero) by Horner
 * from the top, Q times g^j0 (the group's first index: mul when j0 > 0); not
 * first: added to P and Q */
AI512 void gen_step(const uint8_t *const *s, unsigned k, const struct nib_tab *mul, uint8_t *p,
		    uint8_t *q, size_t i, unsigned w, bool full, __mmask64 km, bool first)
{
	__m512i pv[2], qv[2];

	_Pragma("GCC unroll 2") for (unsigned v = 0; v < w; v++) {
		const size_t o = i + 64 * v;

		pv[v] = s[k - 1] ? LDX(full, km, s[k - 1] + o) : _mm512_setzero_si512();
		qv[v] = pv[v];
		_Pragma("GCC unroll 8") for (unsigned b = k - 1; b-- > 0;) {
			__m512i x = s[b] ? LDX(full, km, s[b] + o) : _mm512_setzero_si512();

			pv[v] = XOR(pv[v], x);
			qv[v] = mul2_xor(qv[v], x);
		}
		if (mul)
			qv[v] = nib_mul(mul, qv[v]);
		if (!first && p)
			pv[v] = XOR(pv[v], LDX(full, km, p + o));
		if (!first && q)
			qv[v] = XOR(qv[v], LDX(full, km, q + o));
		if (p)
			STX(full, p + o, km, pv[v]);
		if (q)
			STX(full, q + o, km, qv[v]);
	}
}

/* the k blocks d[j0..j0+k-1] (GROUP at most: see parity_x86_avx512.h) into P and Q */
AI512 void gen_group(const uint8_t *const *d, unsigned j0, unsigned k, uint8_t *p, uint8_t *q,
		     size_t len)
{
	const uint8_t *s[GROUP]; /* copied: see xor_group */
	const struct nib_tab t = nib_load(parity_exp[j0]);
	const struct nib_tab *mul = j0 ? &t : NULL;
	size_t i = 0;

	_Pragma("GCC unroll 8") for (unsigned b = 0; b < k; b++)
		s[b] = d[j0 + b];
	for (; i + 128 <= len; i += 128)
		gen_step(s, k, mul, p, q, i, 2, true, 0, j0 == 0);
	for (; i < len; i += 64)
		gen_step(s, k, mul, p, q, i, 1, false, tail_mask(len - i), j0 == 0);
}

#define GEN_K(K)                                         \
	case K:                                          \
		gen_group(d, j0, K, p, q, len);          \
		break

/* P and Q of n blocks (NULL: a zero block), GROUP consecutive ones at a time,
 * their count a constant in each case */
AVX512 void parity_avx512_gen(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			      size_t len)
{
	for (unsigned j0 = 0; j0 < n; j0 += GROUP)
		switch (n - j0 < GROUP ? n - j0 : GROUP) {
			GEN_K(1);
			GEN_K(2);
			GEN_K(3);
			GEN_K(4);
			GEN_K(5);
			GEN_K(6);
			GEN_K(7);
			GEN_K(8);
		}
}

AVX512 static void rmw_avx512(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b,
			      uint8_t c, size_t len)
{
	const struct nib_tab t = nib_load(c);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);
		__m512i x = XOR(LDM(k, a + i), LDM(k, b + i));

		if (p)
			STM(p + i, k, XOR(LDM(k, p + i), x));
		STM(q + i, k, XOR(LDM(k, q + i), nib_mul(&t, x)));
	}
}

AVX512 static void mul2src_avx512(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c,
				  size_t len)
{
	const struct nib_tab t = nib_load(c);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);

		STM(dst + i, k, nib_mul(&t, XOR(LDM(k, a + i), LDM(k, b + i))));
	}
}

AVX512 static void rec2_avx512(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q,
			       uint8_t ca, uint8_t cb, size_t len)
{
	const struct nib_tab ta = nib_load(ca), tb = nib_load(cb);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);
		__m512i pxy = XOR(LDM(k, dx + i), LDM(k, p + i));
		__m512i qxy = XOR(LDM(k, dy + i), LDM(k, q + i));
		__m512i x = XOR(nib_mul(&ta, pxy), nib_mul(&tb, qxy));

		STM(dx + i, k, x);
		STM(dy + i, k, XOR(x, pxy));
	}
}

const struct parity_impl parity_impl_avx512 = {
	.name = "avx512",
	.usable = avx512_usable,
	.xor_n = parity_avx512_xor,
	.gen = parity_avx512_gen,
	.gen_null = parity_avx512_gen,
	.rmw = rmw_avx512,
	.mul2src = mul2src_avx512,
	.rec2 = rec2_avx512,
};
#endif
