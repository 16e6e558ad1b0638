/* parity_x86_gfni: AVX-512 with GFNI (Ice Lake, Zen 4 and later), the fastest set.
 *
 * GF2P8AFFINEQB applies an 8x8 bit matrix to every byte; multiplying by a
 * constant c in GF(2^8) is linear over GF(2), so it is one instruction with
 * c's matrix (parity_affine, built by parity.c for md's polynomial 0x11d:
 * GF2P8MULB is fixed to AES's 0x11b and cannot serve). So Q needs no Horner
 * chain: Q ^= g^j * D_j with every block independent, two blocks per
 * vpternlogq; recovery's P' and Q' are the same sums over the survivors.
 * XOR is the AVX-512 set's. Each function carries its own target
 * attribute; the rest of the build keeps its flags. */
#include "layout/parity_int.h"

#ifdef PARITY_X86
#include <immintrin.h>

#include "layout/parity_x86_avx512.h"

#define GFNI __attribute__((target("avx512f,avx512bw,gfni")))
#define AIG GFNI static inline __attribute__((always_inline))

/* the matrix of c, in every quadword; x * c per byte */
#define MAT(c) _mm512_set1_epi64((long long)parity_affine[(c)])
#define MUL(x, m) _mm512_gf2p8affine_epi64_epi8((x), (m), 0)

static bool gfni_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("gfni");
}

/* w vectors at offset i of P ^= sum s[b], Q ^= sum mat[b] * s[b] over b < k, two
 * blocks per vpternlogq; first: P and Q start at the block seed (D_0, whose
 * factor is 1: no multiply), or at zero when seed is NULL, not read */
AIG void gen_step(const uint8_t *const *s, const __m512i *mat, unsigned k, uint8_t *p,
		  uint8_t *q, size_t i, unsigned w, bool full, __mmask64 km, bool first,
		  const uint8_t *seed)
{
	__m512i pv[4], qv[4];

	_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++) {
		const size_t o = i + 64 * v;

		if (first) {
			pv[v] = seed ? LDX(full, km, seed + o) : _mm512_setzero_si512();
			qv[v] = pv[v];
		} else {
			pv[v] = p ? LDX(full, km, p + o) : _mm512_setzero_si512();
			qv[v] = q ? LDX(full, km, q + o) : _mm512_setzero_si512();
		}
	}
	_Pragma("GCC unroll 4") for (unsigned b = 0; b < k; b += 2)
		_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++) {
			const size_t o = i + 64 * v;
			__m512i x = LDX(full, km, s[b] + o), y;

			if (b + 1 == k) {
				pv[v] = XOR(pv[v], x);
				qv[v] = XOR(qv[v], MUL(x, mat[b]));
				continue;
			}
			y = LDX(full, km, s[b + 1] + o);
			pv[v] = XOR3(pv[v], x, y);
			qv[v] = XOR3(qv[v], MUL(x, mat[b]), MUL(y, mat[b + 1]));
		}
	_Pragma("GCC unroll 4") for (unsigned v = 0; v < w; v++) {
		if (p)
			STX(full, p + i + 64 * v, km, pv[v]);
		if (q)
			STX(full, q + i + 64 * v, km, qv[v]);
	}
}

/* P ^= sum s[b], Q ^= sum m[b] * s[b] over b < k (GROUP at most: see
 * parity_x86_avx512.h), the matrices in registers too: 128 bytes a pass, then
 * the tail 64 bytes at a time under a mask */
AIG void gen_group(const uint8_t *const *src, const uint64_t *m, unsigned k, uint8_t *p,
		   uint8_t *q, size_t len, bool first, const uint8_t *seed)
{
	const uint8_t *s[GROUP]; /* copied: see xor_group in parity_x86_avx512.c */
	__m512i mat[GROUP];
	size_t i = 0;

	_Pragma("GCC unroll 8") for (unsigned b = 0; b < k; b++) {
		s[b] = src[b];
		mat[b] = _mm512_set1_epi64((long long)m[b]);
	}
	for (; i + 128 <= len; i += 128)
		gen_step(s, mat, k, p, q, i, 2, true, 0, first, seed);
	for (; i < len; i += 64)
		gen_step(s, mat, k, p, q, i, 1, false, tail_mask(len - i), first, seed);
}

#define GEN_K(K)                                                         \
	case K:                                                          \
		if (first)                                               \
			gen_group(s, m, K, p, q, len, true, seed);       \
		else                                                     \
			gen_group(s, m, K, p, q, len, false, NULL);      \
		break

/* gen_group with k (0..GROUP) a constant */
GFNI static void gen_k(const uint8_t *const *s, const uint64_t *m, unsigned k, uint8_t *p,
		       uint8_t *q, size_t len, bool first, const uint8_t *seed)
{
	switch (k) {
		GEN_K(0);
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

/* P and Q of the n blocks d[] (NULL: a zero block, skipped), GROUP at a time:
 * the first group writes P and Q (starting from D_0 when there is one), the
 * next ones add to them. */
static void gen_groups(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
		       size_t len)
{
	const uint8_t *s[GROUP], *seed = n ? d[0] : NULL;
	uint64_t m[GROUP];
	unsigned k = 0;
	bool first = true;

	for (unsigned j = seed ? 1 : 0; j < n; j++) {
		if (!d[j])
			continue;
		s[k] = d[j];
		m[k++] = parity_affine[parity_exp[j]];
		if (k == GROUP) {
			gen_k(s, m, k, p, q, len, first, seed);
			first = false;
			k = 0;
		}
	}
	if (k || first) /* the last group; or D_0 alone, or all NULL (zero blocks) */
		gen_k(s, m, k, p, q, len, first, seed);
}

/* Up to 5 blocks the AVX-512 set's Horner measured faster here (3 to 5:
 * about 10%), from 6 on the sums (6: 20%, 8: 40%): docs/parity.md */
#define HORNER_MAX 5

static void gen_gfni(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len)
{
	if (n <= HORNER_MAX)
		parity_avx512_gen(d, n, p, q, len);
	else
		gen_groups(d, n, p, q, len);
}

GFNI static void rmw_gfni(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b, uint8_t c,
			  size_t len)
{
	const __m512i m = MAT(c);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);
		__m512i x = XOR(LDM(k, a + i), LDM(k, b + i));

		if (p)
			STM(p + i, k, XOR(LDM(k, p + i), x));
		STM(q + i, k, XOR(LDM(k, q + i), MUL(x, m)));
	}
}

GFNI static void mul2src_gfni(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c,
			      size_t len)
{
	const __m512i m = MAT(c);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);

		STM(dst + i, k, MUL(XOR(LDM(k, a + i), LDM(k, b + i)), m));
	}
}

GFNI static void rec2_gfni(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q,
			   uint8_t ca, uint8_t cb, size_t len)
{
	const __m512i ma = MAT(ca), mb = MAT(cb);

	for (size_t i = 0; i < len; i += 64) {
		const __mmask64 k = tail_mask(len - i);
		__m512i pxy = XOR(LDM(k, dx + i), LDM(k, p + i));
		__m512i qxy = XOR(LDM(k, dy + i), LDM(k, q + i));
		__m512i x = XOR(MUL(pxy, ma), MUL(qxy, mb));

		STM(dx + i, k, x);
		STM(dy + i, k, XOR(x, pxy));
	}
}

const struct parity_impl parity_impl_gfni = {
	.name = "avx512+gfni",
	.usable = gfni_usable,
	.xor_n = parity_avx512_xor,
	.gen = gen_gfni,
	.gen_null = gen_gfni,
	.rmw = rmw_gfni,
	.mul2src = mul2src_gfni,
	.rec2 = rec2_gfni,
};
#endif
