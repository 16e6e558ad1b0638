/* parity_portable: the kernels every C compiler builds, on every CPU.
 *
 * GCC vector extensions on 16-byte vectors: SSE2 on x86-64, NEON on arm64.
 * Where the target has no vector unit GCC splits the vectors into machine
 * words, and multiply-by-2 is then 64-bit SWAR (PARITY_MUL2_SWAR): a byte compare
 * would be split into 16 byte operations. Multiply-by-constant is a bit
 * decomposition (at most 7 doublings): without a byte shuffle there is no
 * cheaper way. Loads and stores go through memcpy: any alignment.
 */
#include "layout/parity_int.h"

#include <string.h>

#define AI static inline __attribute__((always_inline))

typedef uint8_t vu8 __attribute__((vector_size(16)));
typedef int8_t vs8 __attribute__((vector_size(16)));
typedef uint64_t vu64 __attribute__((vector_size(16)));
#define VW 16

#define LD(v, ptr) memcpy(&(v), (ptr), VW)
#define ST(ptr, v) memcpy((ptr), &(v), VW)

#if defined(__SSE2__) || defined(__ARM_NEON) || defined(__ALTIVEC__)
/* a byte compare is one instruction here: the top bits become 0xff masks */
#define MUL2(x) (((x) + (x)) ^ ((vu8)((vs8)(x) < 0) & 0x1d))
#else
#define MUL2(x) ((vu8)PARITY_MUL2_SWAR((vu64)(x)))
#endif

static bool portable_usable(void)
{
	return true;
}

static void xor_portable(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len)
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
	parity_xor_tail(dst, src, n, i, len);
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
	parity_gen_tail(d, n, p, q, i, len);
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

#define MW 4 /* vectors per pass in the multiply kernels (mulc_vec4) */

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
	parity_rmw_tail(p, q, a, b, c, i, len);
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
	parity_mul2src_tail(dst, a, b, c, i, len);
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
	parity_rec2_tail(dx, dy, p, q, ca, cb, i, len);
}

const struct parity_impl parity_impl_portable = {
	.name = "portable",
	.usable = portable_usable,
	.xor_n = xor_portable,
	.gen = gen_portable,
	.gen_null = gen_null_portable,
	.rmw = rmw_portable,
	.mul2src = mul2src_portable,
	.rec2 = rec2_portable,
};
