/* parity: XOR and RAID-6 P+Q over GF(2^8) (poly 0x11d, g = 2), as md's lib/raid6.
 *
 * Two implementations of every bulk kernel, picked once at first use:
 *  - portable: GCC vector extensions on 16-byte vectors (SSE2 on any x86-64, NEON
 *    on arm64), multiply-by-2 as a SWAR shift-and-reduce, multiply-by-constant by
 *    bit decomposition (at most 8 doublings);
 *  - avx2 (runtime-detected): 256-bit intrinsics, multiply-by-constant with two
 *    16-entry nibble tables and vpshufb.
 * FSVOL_PARITY_ISA=portable forces the portable set (tests use it to cover both).
 * Loads and stores go through memcpy, so buffers may have any alignment; every
 * kernel finishes the last bytes that do not fill a vector one byte at a time.
 */
#include "layout/parity.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_X86 1
#endif

#define AI static inline __attribute__((always_inline))

/* g^j for j in 0..509 (doubled so log a + log b needs no reduction) */
static uint8_t gf_exp[512];
static uint8_t gf_log[256];
/* c * n and c * (n << 4) for the 16 nibbles n: c * b = lo[c][b & 15] ^ hi[c][b >> 4] */
static uint8_t gf_nib_lo[256][16] __attribute__((aligned(16)));
static uint8_t gf_nib_hi[256][16] __attribute__((aligned(16)));

struct parity_impl {
	void (*xor_n)(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len);
	/* P and/or Q (either may be NULL); NULL data pointers count as zero blocks */
	void (*gen)(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len);
	/* d = a ^ b; p ^= d (p may be NULL); q ^= c * d */
	void (*rmw)(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b, uint8_t c,
		    size_t len);
	/* dst = c * (a ^ b) */
	void (*mul2src)(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c, size_t len);
	/* pxy = dx ^ p, qxy = dy ^ q; dx = ca * pxy ^ cb * qxy; dy = pxy ^ dx */
	void (*rec2)(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q, uint8_t ca,
		     uint8_t cb, size_t len);
};

static struct parity_impl impl;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- scalar helpers (tables, tails) ---- */

static uint8_t gf_mul_slow(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	while (b) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
		b >>= 1;
	}
	return r;
}

AI uint8_t mul2_byte(uint8_t x)
{
	return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1d : 0));
}

AI uint8_t mulc_byte(uint8_t c, uint8_t x)
{
	return gf_nib_lo[c][x & 15] ^ gf_nib_hi[c][x >> 4];
}

/* Bytewise tails of xor_n, rmw and rec2: bytes i..len that the vector loops leave. */
AI void xor_tail(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t i, size_t len)
{
	for (; i < len; i++) {
		uint8_t a = src[0][i];

		for (unsigned j = 1; j < n; j++)
			a ^= src[j][i];
		dst[i] = a;
	}
}

AI void rmw_tail(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b, uint8_t c, size_t i,
		 size_t len)
{
	for (; i < len; i++) {
		uint8_t x = a[i] ^ b[i];

		if (p)
			p[i] ^= x;
		q[i] ^= mulc_byte(c, x);
	}
}

AI void rec2_tail(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q, uint8_t ca,
		  uint8_t cb, size_t i, size_t len)
{
	for (; i < len; i++) {
		uint8_t a = dx[i] ^ p[i], b = dy[i] ^ q[i];
		uint8_t x = mulc_byte(ca, a) ^ mulc_byte(cb, b);

		dx[i] = x;
		dy[i] = x ^ a;
	}
}

/* ---- portable: GCC vector extensions, 16 bytes (SSE2 on x86-64, NEON on arm64) ---- */

typedef uint8_t vu8 __attribute__((vector_size(16)));
typedef int8_t vs8 __attribute__((vector_size(16)));
#define VW 16

#define LD(v, ptr) memcpy(&(v), (ptr), VW)
#define ST(ptr, v) memcpy((ptr), &(v), VW)
/* x * 2 per byte: shift, then reduce the bytes whose top bit fell out */
#define MUL2(x) (((x) + (x)) ^ ((vu8)((vs8)(x) < 0) & 0x1d))

AI void xor_body(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len)
{
	size_t i = 0;

	for (; i + 4 * VW <= len; i += 4 * VW) {
		vu8 a0, a1, a2, a3, b0, b1, b2, b3;

		LD(a0, src[0] + i);
		LD(a1, src[0] + i + VW);
		LD(a2, src[0] + i + 2 * VW);
		LD(a3, src[0] + i + 3 * VW);
		for (unsigned j = 1; j < n; j++) {
			LD(b0, src[j] + i);
			LD(b1, src[j] + i + VW);
			LD(b2, src[j] + i + 2 * VW);
			LD(b3, src[j] + i + 3 * VW);
			a0 ^= b0;
			a1 ^= b1;
			a2 ^= b2;
			a3 ^= b3;
		}
		ST(dst + i, a0);
		ST(dst + i + VW, a1);
		ST(dst + i + 2 * VW, a2);
		ST(dst + i + 3 * VW, a3);
	}
	for (; i + VW <= len; i += VW) {
		vu8 a, b;

		LD(a, src[0] + i);
		for (unsigned j = 1; j < n; j++) {
			LD(b, src[j] + i);
			a ^= b;
		}
		ST(dst + i, a);
	}
	xor_tail(dst, src, n, i, len);
}

/* Bytewise tail of gen: same Horner order as the vector loops. */
AI void gen_tail(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t i,
		 size_t len, bool may_null)
{
	for (; i < len; i++) {
		uint8_t pb = 0, qb = 0;

		for (unsigned j = n; j-- > 0;) {
			qb = mul2_byte(qb);
			if (may_null && !d[j])
				continue;
			pb ^= d[j][i];
			qb ^= d[j][i];
		}
		if (p)
			p[i] = pb;
		if (q)
			q[i] = qb;
	}
}

/* Horner from the highest index: q = ((D[n-1] * 2 ^ D[n-2]) * 2 ^ ...) ^ D[0],
 * 64 bytes of P and Q kept in registers across all n blocks.
 * may_null: NULL data pointers are zero blocks (recovery passes lost slots). */
AI void gen_body(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len,
		 bool may_null)
{
	const unsigned top = n - 1;
	size_t i = 0;

	for (; i + 4 * VW <= len; i += 4 * VW) {
		vu8 p0 = { 0 }, p1 = { 0 }, p2 = { 0 }, p3 = { 0 }, q0, q1, q2, q3, b0, b1, b2, b3;

		if (!may_null || d[top]) {
			LD(p0, d[top] + i);
			LD(p1, d[top] + i + VW);
			LD(p2, d[top] + i + 2 * VW);
			LD(p3, d[top] + i + 3 * VW);
		}
		q0 = p0;
		q1 = p1;
		q2 = p2;
		q3 = p3;
		for (unsigned j = top; j-- > 0;) {
			q0 = MUL2(q0);
			q1 = MUL2(q1);
			q2 = MUL2(q2);
			q3 = MUL2(q3);
			if (may_null && !d[j])
				continue;
			LD(b0, d[j] + i);
			LD(b1, d[j] + i + VW);
			LD(b2, d[j] + i + 2 * VW);
			LD(b3, d[j] + i + 3 * VW);
			p0 ^= b0;
			p1 ^= b1;
			p2 ^= b2;
			p3 ^= b3;
			q0 ^= b0;
			q1 ^= b1;
			q2 ^= b2;
			q3 ^= b3;
		}
		if (p) {
			ST(p + i, p0);
			ST(p + i + VW, p1);
			ST(p + i + 2 * VW, p2);
			ST(p + i + 3 * VW, p3);
		}
		if (q) {
			ST(q + i, q0);
			ST(q + i + VW, q1);
			ST(q + i + 2 * VW, q2);
			ST(q + i + 3 * VW, q3);
		}
	}
	gen_tail(d, n, p, q, i, len, may_null);
}

/* out[0..3] = c * x[0..3] by bit decomposition (sum of 2^b * x over the set bits
 * b of c); four independent vectors per pass hide the doubling latency. */
AI void mulc_vec4(vu8 *out, uint8_t c, const vu8 *x)
{
	vu8 t0 = x[0], t1 = x[1], t2 = x[2], t3 = x[3];
	vu8 a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };

	for (;;) {
		if (c & 1) {
			a0 ^= t0;
			a1 ^= t1;
			a2 ^= t2;
			a3 ^= t3;
		}
		c >>= 1;
		if (!c)
			break;
		t0 = MUL2(t0);
		t1 = MUL2(t1);
		t2 = MUL2(t2);
		t3 = MUL2(t3);
	}
	out[0] = a0;
	out[1] = a1;
	out[2] = a2;
	out[3] = a3;
}

#define MW 4 /* vectors per pass in the multiply kernels (mulc_vec4) */

static void xor_portable(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len)
{
	xor_body(dst, src, n, len);
}

static void gen_portable(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			 size_t len)
{
	gen_body(d, n, p, q, len, false);
}

static void gen_null_portable(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			      size_t len)
{
	gen_body(d, n, p, q, len, true);
}

static void rmw_portable(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b,
			 uint8_t c, size_t len)
{
	size_t i = 0;

	for (; i + MW * VW <= len; i += MW * VW) {
		vu8 d[MW], m[MW], t;

		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++) {
			LD(d[v], a + i + v * VW);
			LD(t, b + i + v * VW);
			d[v] ^= t;
			if (p) {
				LD(t, p + i + v * VW);
				t ^= d[v];
				ST(p + i + v * VW, t);
			}
		}
		mulc_vec4(m, c, d);
		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++) {
			LD(t, q + i + v * VW);
			t ^= m[v];
			ST(q + i + v * VW, t);
		}
	}
	rmw_tail(p, q, a, b, c, i, len);
}

static void mul2src_portable(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c,
			     size_t len)
{
	size_t i = 0;

	for (; i + MW * VW <= len; i += MW * VW) {
		vu8 d[MW], m[MW], t;

		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++) {
			LD(d[v], a + i + v * VW);
			LD(t, b + i + v * VW);
			d[v] ^= t;
		}
		mulc_vec4(m, c, d);
		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++)
			ST(dst + i + v * VW, m[v]);
	}
	for (; i < len; i++)
		dst[i] = mulc_byte(c, a[i] ^ b[i]);
}

static void rec2_portable(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q,
			  uint8_t ca, uint8_t cb, size_t len)
{
	size_t i = 0;

	for (; i + MW * VW <= len; i += MW * VW) {
		vu8 pxy[MW], qxy[MW], ma[MW], mb[MW], t;

		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++) {
			LD(pxy[v], dx + i + v * VW);
			LD(t, p + i + v * VW);
			pxy[v] ^= t;
			LD(qxy[v], dy + i + v * VW);
			LD(t, q + i + v * VW);
			qxy[v] ^= t;
		}
		mulc_vec4(ma, ca, pxy);
		mulc_vec4(mb, cb, qxy);
		_Pragma("GCC unroll 4") for (unsigned v = 0; v < MW; v++) {
			t = ma[v] ^ mb[v];
			ST(dx + i + v * VW, t);
			t ^= pxy[v];
			ST(dy + i + v * VW, t);
		}
	}
	rec2_tail(dx, dy, p, q, ca, cb, i, len);
}

static const struct parity_impl impl_portable = {
	.xor_n = xor_portable,
	.gen = gen_portable,
	.rmw = rmw_portable,
	.mul2src = mul2src_portable,
	.rec2 = rec2_portable,
};

/* ---- AVX2: same bodies with 256-bit registers, vpshufb multiply ---- */

#ifdef PARITY_X86
#define AVX2 __attribute__((target("avx2")))

#define LDU(ptr) _mm256_loadu_si256((const __m256i *)(const void *)(ptr))
#define STU(ptr, v) _mm256_storeu_si256((__m256i *)(void *)(ptr), (v))
#define X(a, b) _mm256_xor_si256((a), (b))

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
	xor_tail(dst, src, n, i, len);
}

/* x * 2 per byte: top bits become 0xff masks (signed compare), add doubles */
#define MUL2Y(x) X(_mm256_add_epi8((x), (x)), _mm256_and_si256(_mm256_cmpgt_epi8(zero, (x)), poly))

/* gen_body with 256-bit registers, 128 bytes of P and Q per pass */
AVX2 static inline __attribute__((always_inline)) void
gen_avx2_body(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len,
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
	gen_tail(d, n, p, q, i, len, may_null);
}

AVX2 static void gen_avx2(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			  size_t len)
{
	gen_avx2_body(d, n, p, q, len, false);
}

AVX2 static void gen_null_avx2(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			       size_t len)
{
	gen_avx2_body(d, n, p, q, len, true);
}

struct nib_tab {
	__m256i lo, hi;
};

AVX2 static inline __attribute__((always_inline)) struct nib_tab nib_load(uint8_t c)
{
	struct nib_tab t;

	t.lo = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)gf_nib_lo[c]));
	t.hi = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)gf_nib_hi[c]));
	return t;
}

AVX2 static inline __attribute__((always_inline)) __m256i nib_mul(const struct nib_tab *t,
								  __m256i x)
{
	const __m256i m = _mm256_set1_epi8(0x0f);
	__m256i lo = _mm256_and_si256(x, m);
	__m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m);

	return _mm256_xor_si256(_mm256_shuffle_epi8(t->lo, lo), _mm256_shuffle_epi8(t->hi, hi));
}

AVX2 static void rmw_avx2(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b,
			  uint8_t c, size_t len)
{
	const struct nib_tab t = nib_load(c);
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		__m256i d = _mm256_xor_si256(LDU(a + i), LDU(b + i));

		if (p)
			STU(p + i, _mm256_xor_si256(LDU(p + i), d));
		STU(q + i, _mm256_xor_si256(LDU(q + i), nib_mul(&t, d)));
	}
	rmw_tail(p, q, a, b, c, i, len);
}

AVX2 static void mul2src_avx2(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c,
			      size_t len)
{
	const struct nib_tab t = nib_load(c);
	size_t i = 0;

	for (; i + 32 <= len; i += 32)
		STU(dst + i, nib_mul(&t, _mm256_xor_si256(LDU(a + i), LDU(b + i))));
	for (; i < len; i++)
		dst[i] = mulc_byte(c, a[i] ^ b[i]);
}

AVX2 static void rec2_avx2(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q,
			   uint8_t ca, uint8_t cb, size_t len)
{
	const struct nib_tab ta = nib_load(ca), tb = nib_load(cb);
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		__m256i pxy = _mm256_xor_si256(LDU(dx + i), LDU(p + i));
		__m256i qxy = _mm256_xor_si256(LDU(dy + i), LDU(q + i));
		__m256i x = _mm256_xor_si256(nib_mul(&ta, pxy), nib_mul(&tb, qxy));

		STU(dx + i, x);
		STU(dy + i, _mm256_xor_si256(x, pxy));
	}
	rec2_tail(dx, dy, p, q, ca, cb, i, len);
}

static const struct parity_impl impl_avx2 = {
	.xor_n = xor_avx2,
	.gen = gen_avx2,
	.rmw = rmw_avx2,
	.mul2src = mul2src_avx2,
	.rec2 = rec2_avx2,
};
#endif

/* gen with NULL data slots, chosen alongside impl */
static void (*gen_null)(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			size_t len);

static void parity_init(void)
{
	const char *isa = getenv("FSVOL_PARITY_ISA");
	uint8_t x = 1;

	for (unsigned i = 0; i < 255; i++) {
		gf_exp[i] = gf_exp[i + 255] = x;
		gf_log[x] = (uint8_t)i;
		x = mul2_byte(x);
	}
	gf_exp[510] = gf_exp[0];
	gf_exp[511] = gf_exp[1];
	for (unsigned c = 0; c < 256; c++)
		for (unsigned n = 0; n < 16; n++) {
			gf_nib_lo[c][n] = gf_mul_slow((uint8_t)c, (uint8_t)n);
			gf_nib_hi[c][n] = gf_mul_slow((uint8_t)c, (uint8_t)(n << 4));
		}

	impl = impl_portable;
	gen_null = gen_null_portable;
#ifdef PARITY_X86
	if (!(isa && strcmp(isa, "portable") == 0)) {
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx2")) {
			impl = impl_avx2;
			gen_null = gen_null_avx2;
		}
	}
#else
	(void)isa;
#endif
}

static inline void ensure_init(void)
{
	pthread_once(&init_once, parity_init);
}

/* ---- GF(2^8) helpers ---- */

uint8_t parity_gf_mul(uint8_t a, uint8_t b)
{
	ensure_init();
	if (!a || !b)
		return 0;
	return gf_exp[gf_log[a] + gf_log[b]];
}

/* inv(0) is undefined; 0 is returned */
uint8_t parity_gf_inv(uint8_t a)
{
	ensure_init();
	if (!a)
		return 0;
	return gf_exp[255 - gf_log[a]];
}

uint8_t parity_gf_exp2(unsigned j)
{
	ensure_init();
	return gf_exp[j % 255];
}

/* ---- public kernels ---- */

void parity_xor(void *dst, const void *const *src, unsigned n, size_t len)
{
	ensure_init();
	if (n == 0) {
		memset(dst, 0, len);
		return;
	}
	impl.xor_n(dst, (const uint8_t *const *)src, n, len);
}

void parity_xor_into(void *dst, const void *src, size_t len)
{
	const uint8_t *s[2] = { dst, src };

	ensure_init();
	impl.xor_n(dst, s, 2, len);
}

void parity_gen(const void *const *data, unsigned ndata, void *p, void *q, size_t len)
{
	ensure_init();
	if (ndata == 0) {
		if (p)
			memset(p, 0, len);
		if (q)
			memset(q, 0, len);
		return;
	}
	if (!q) {
		if (p)
			impl.xor_n(p, (const uint8_t *const *)data, ndata, len);
		return;
	}
	impl.gen((const uint8_t *const *)data, ndata, p, q, len);
}

void parity_rmw(void *p, void *q, const void *old, const void *new_, unsigned index,
		size_t len)
{
	ensure_init();
	if (!q) {
		if (p) {
			const uint8_t *s[3] = { p, old, new_ };

			impl.xor_n(p, s, 3, len);
		}
		return;
	}
	impl.rmw(p, q, old, new_, gf_exp[index % 255], len);
}

/* ---- recovery ---- */

/* blocks[k] = XOR of every block in 0..nblocks-1 but k */
static void rebuild_by_xor(void *const *blocks, unsigned nblocks, unsigned k, size_t len)
{
	const uint8_t *src[257];
	unsigned n = 0;

	for (unsigned i = 0; i < nblocks; i++)
		if (i != k)
			src[n++] = blocks[i];
	if (n == 0)
		memset(blocks[k], 0, len);
	else
		impl.xor_n(blocks[k], src, n, len);
}

/* Data x lost with P: Q' (data x as zero) goes into P's buffer as scratch,
 * D_x = g^-x * (Q ^ Q'), then P is recomputed. */
static void recover_data_p(void *const *blocks, unsigned ndata, unsigned x, size_t len)
{
	const uint8_t *d[255];
	uint8_t *p = blocks[ndata], *q = blocks[ndata + 1];

	for (unsigned j = 0; j < ndata; j++)
		d[j] = j == x ? NULL : blocks[j];
	gen_null(d, ndata, NULL, p, len);
	impl.mul2src(blocks[x], q, p, gf_exp[255 - x], len);
	impl.xor_n(p, (const uint8_t *const *)blocks, ndata, len);
}

/* Data x < y lost: P' and Q' (both as zero) go into D_x and D_y as scratch, then
 * with Pxy = P ^ P', Qxy = Q ^ Q' (Anvin, "The mathematics of RAID-6", sec. 4):
 *   D_x = A * Pxy ^ B * Qxy, A = g^y / (g^x ^ g^y), B = 1 / (g^x ^ g^y); D_y = Pxy ^ D_x */
static void recover_data_data(void *const *blocks, unsigned ndata, unsigned x, unsigned y,
			      size_t len)
{
	const uint8_t *d[255];
	uint8_t den = parity_gf_inv(gf_exp[x] ^ gf_exp[y]);

	for (unsigned j = 0; j < ndata; j++)
		d[j] = (j == x || j == y) ? NULL : blocks[j];
	gen_null(d, ndata, blocks[x], blocks[y], len);
	impl.rec2(blocks[x], blocks[y], blocks[ndata], blocks[ndata + 1],
		  parity_gf_mul(gf_exp[y], den), den, len);
}

int parity_recover(void *const *blocks, unsigned ndata, unsigned nparity,
		   const unsigned *lost, unsigned nlost, size_t len)
{
	unsigned nblocks = ndata + nparity, a, b;

	if (!blocks || !lost || nparity < 1 || nparity > 2 || ndata < 1 || ndata > 255 ||
	    nlost < 1 || nlost > nparity)
		return -EINVAL;
	for (unsigned i = 0; i < nlost; i++)
		if (lost[i] >= nblocks || !blocks[lost[i]])
			return -EINVAL;
	a = lost[0];
	b = nlost == 2 ? lost[1] : a;
	if (nlost == 2 && a == b)
		return -EINVAL;
	if (a > b) {
		unsigned t = a;

		a = b;
		b = t;
	}
	ensure_init();

	const unsigned P = ndata, Q = ndata + 1;
	const void *const *data = (const void *const *)blocks;

	if (nlost == 1) {
		if (a < ndata || a == P) /* data via P, or P itself */
			rebuild_by_xor(blocks, ndata + 1, a, len);
		else
			parity_gen(data, ndata, NULL, blocks[Q], len);
		return 0;
	}
	if (a == P) /* P and Q */
		parity_gen(data, ndata, blocks[P], blocks[Q], len);
	else if (b == Q) { /* data and Q: data via P first */
		rebuild_by_xor(blocks, ndata + 1, a, len);
		parity_gen(data, ndata, NULL, blocks[Q], len);
	} else if (b == P)
		recover_data_p(blocks, ndata, a, len);
	else
		recover_data_data(blocks, ndata, a, b, len);
	return 0;
}
