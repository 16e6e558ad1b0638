/* parity_x86_avx2: the kernels with 256-bit registers (Haswell, Zen and later).
 * Multiply-by-2 is add plus a reduction masked by the sign bits; multiply by a
 * constant looks both nibbles up in 16-entry tables (vpshufb). Each function
 * carries its own target attribute: the rest of the build keeps its flags. */
#include "layout/parity_int.h"

#ifdef PARITY_X86
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AI AVX2 static inline __attribute__((always_inline))

#define LDU(ptr) _mm256_loadu_si256((const __m256i *)(const void *)(ptr))
#define STU(ptr, v) _mm256_storeu_si256((__m256i *)(void *)(ptr), (v))
#define X(a, b) _mm256_xor_si256((a), (b))

static bool avx2_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

AVX2 static void xor_avx2(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len)
{
	size_t i = 0;

	for (; i + 128 <= len; i += 128) {
		__m256i a0 = LDU(src[0] + i), a1 = LDU(src[0] + i + 32);
		__m256i a2 = LDU(src[0] + i + 64), a3 = LDU(src[0] + i + 96);

		for (unsigned j = 1; j < n; j++) {
			a0 = X(a0, LDU(src[j] + i));
			a1 = X(a1, LDU(src[j] + i + 32));
			a2 = X(a2, LDU(src[j] + i + 64));
			a3 = X(a3, LDU(src[j] + i + 96));
		}
		STU(dst + i, a0);
		STU(dst + i + 32, a1);
		STU(dst + i + 64, a2);
		STU(dst + i + 96, a3);
	}
	for (; i + 32 <= len; i += 32) {
		__m256i a = LDU(src[0] + i);

		for (unsigned j = 1; j < n; j++)
			a = X(a, LDU(src[j] + i));
		STU(dst + i, a);
	}
	parity_xor_tail(dst, src, n, i, len);
}

/* x * 2 per byte: top bits become 0xff masks (signed compare), add doubles */
#define MUL2Y(x) X(_mm256_add_epi8((x), (x)), _mm256_and_si256(_mm256_cmpgt_epi8(zero, (x)), poly))

/* Horner from the highest index, 128 bytes of P and Q per pass; may_null: NULL
 * data pointers are zero blocks */
AI void gen_body(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len,
		 bool may_null)
{
	const __m256i zero = _mm256_setzero_si256(), poly = _mm256_set1_epi8(0x1d);
	const unsigned top = n - 1;
	size_t i = 0;

	for (; i + 128 <= len; i += 128) {
		__m256i p0 = zero, p1 = zero, p2 = zero, p3 = zero, q0, q1, q2, q3;

		if (!may_null || d[top]) {
			p0 = LDU(d[top] + i);
			p1 = LDU(d[top] + i + 32);
			p2 = LDU(d[top] + i + 64);
			p3 = LDU(d[top] + i + 96);
		}
		q0 = p0;
		q1 = p1;
		q2 = p2;
		q3 = p3;
		for (unsigned j = top; j-- > 0;) {
			__m256i b0, b1, b2, b3;

			q0 = MUL2Y(q0);
			q1 = MUL2Y(q1);
			q2 = MUL2Y(q2);
			q3 = MUL2Y(q3);
			if (may_null && !d[j])
				continue;
			b0 = LDU(d[j] + i);
			b1 = LDU(d[j] + i + 32);
			b2 = LDU(d[j] + i + 64);
			b3 = LDU(d[j] + i + 96);
			p0 = X(p0, b0);
			p1 = X(p1, b1);
			p2 = X(p2, b2);
			p3 = X(p3, b3);
			q0 = X(q0, b0);
			q1 = X(q1, b1);
			q2 = X(q2, b2);
			q3 = X(q3, b3);
		}
		if (p) {
			STU(p + i, p0);
			STU(p + i + 32, p1);
			STU(p + i + 64, p2);
			STU(p + i + 96, p3);
		}
		if (q) {
			STU(q + i, q0);
			STU(q + i + 32, q1);
			STU(q + i + 64, q2);
			STU(q + i + 96, q3);
		}
	}
	parity_gen_tail(d, n, p, q, i, len);
}

AVX2 static void gen_avx2(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			  size_t len)
{
	gen_body(d, n, p, q, len, false);
}

AVX2 static void gen_null_avx2(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			       size_t len)
{
	gen_body(d, n, p, q, len, true);
}

struct nib_tab {
	__m256i lo, hi;
};

AI struct nib_tab nib_load(uint8_t c)
{
	struct nib_tab t;

	t.lo = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)parity_nib_lo[c]));
	t.hi = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)parity_nib_hi[c]));
	return t;
}

AI __m256i nib_mul(const struct nib_tab *t, __m256i x)
{
	const __m256i m = _mm256_set1_epi8(0x0f);
	__m256i lo = _mm256_and_si256(x, m);
	__m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m);

	return X(_mm256_shuffle_epi8(t->lo, lo), _mm256_shuffle_epi8(t->hi, hi));
}

AVX2 static void rmw_avx2(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b,
			  uint8_t c, size_t len)
{
	const struct nib_tab t = nib_load(c);
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		__m256i d = X(LDU(a + i), LDU(b + i));

		if (p)
			STU(p + i, X(LDU(p + i), d));
		STU(q + i, X(LDU(q + i), nib_mul(&t, d)));
	}
	parity_rmw_tail(p, q, a, b, c, i, len);
}

AVX2 static void mul2src_avx2(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c,
			      size_t len)
{
	const struct nib_tab t = nib_load(c);
	size_t i = 0;

	for (; i + 32 <= len; i += 32)
		STU(dst + i, nib_mul(&t, X(LDU(a + i), LDU(b + i))));
	parity_mul2src_tail(dst, a, b, c, i, len);
}

AVX2 static void rec2_avx2(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q,
			   uint8_t ca, uint8_t cb, size_t len)
{
	const struct nib_tab ta = nib_load(ca), tb = nib_load(cb);
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		__m256i pxy = X(LDU(dx + i), LDU(p + i));
		__m256i qxy = X(LDU(dy + i), LDU(q + i));
		__m256i x = X(nib_mul(&ta, pxy), nib_mul(&tb, qxy));

		STU(dx + i, x);
		STU(dy + i, X(x, pxy));
	}
	parity_rec2_tail(dx, dy, p, q, ca, cb, i, len);
}

const struct parity_impl parity_impl_avx2 = {
	.name = "avx2",
	.usable = avx2_usable,
	.xor_n = xor_avx2,
	.gen = gen_avx2,
	.gen_null = gen_null_avx2,
	.rmw = rmw_avx2,
	.mul2src = mul2src_avx2,
	.rec2 = rec2_avx2,
};
#endif
