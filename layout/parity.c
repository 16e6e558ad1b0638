/* parity: XOR and RAID-6 P+Q over GF(2^8) (poly 0x11d, g = 2), as md's lib/raid6.
 *
 * This file keeps the public API, the GF(2^8) tables, the choice of kernels and
 * the recovery logic; the bulk kernels live in one file per instruction set
 * (parity_int.h lists them), all producing the same bytes:
 *   portable     GCC vector extensions (SSE2, NEON; 64-bit SWAR elsewhere)
 *   avx2         256-bit, vpshufb nibble-table multiply
 *   avx512       512-bit with byte masks (F+BW), vpternlogq XOR
 *   avx512+gfni  the multiply by a constant as one GF2P8AFFINEQB
 * The best set the CPU runs is taken at first use (CPUID), unless
 * FSVOL_PARITY_ISA names another one it runs; parity_isa() says which.
 * docs/parity.md: the choices and their figures.
 */
#include "layout/parity.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "layout/parity_int.h"

uint8_t parity_exp[512];
uint8_t parity_log[256];
uint8_t parity_nib_lo[256][16] __attribute__((aligned(16)));
uint8_t parity_nib_hi[256][16] __attribute__((aligned(16)));
uint64_t parity_affine[256];

/* slowest first: the last one the CPU runs is the default */
static const struct parity_impl *const impls[] = {
	&parity_impl_portable,
#ifdef PARITY_X86
	&parity_impl_avx2,
	&parity_impl_avx512,
	&parity_impl_gfni,
#endif
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* the set in use; read relaxed on every call (parity_isa_select may swap it) */
static const struct parity_impl *impl;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static uint8_t gf_mul_slow(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	while (b) {
		if (b & 1)
			r ^= a;
		a = parity_mul2_byte(a);
		b >>= 1;
	}
	return r;
}

static void tables_init(void)
{
	uint8_t x = 1;

	for (unsigned i = 0; i < 255; i++) {
		parity_exp[i] = parity_exp[i + 255] = x;
		parity_log[x] = (uint8_t)i;
		x = parity_mul2_byte(x);
	}
	parity_exp[510] = parity_exp[0];
	parity_exp[511] = parity_exp[1];
	for (unsigned c = 0; c < 256; c++) {
		uint64_t m = 0;

		for (unsigned n = 0; n < 16; n++) {
			parity_nib_lo[c][n] = gf_mul_slow((uint8_t)c, (uint8_t)n);
			parity_nib_hi[c][n] = gf_mul_slow((uint8_t)c, (uint8_t)(n << 4));
		}
		/* row i (byte 7 - i): bit j set when bit i of c * 2^j is */
		for (unsigned i = 0; i < 8; i++) {
			unsigned row = 0;

			for (unsigned j = 0; j < 8; j++)
				row |= ((gf_mul_slow((uint8_t)c, (uint8_t)(1u << j)) >> i) & 1u) << j;
			m |= (uint64_t)row << (8 * (7 - i));
		}
		parity_affine[c] = m;
	}
}

static const struct parity_impl *find_impl(const char *name)
{
	for (size_t i = 0; name && i < NIMPLS; i++)
		if (strcmp(impls[i]->name, name) == 0)
			return impls[i];
	return NULL;
}

static void parity_init(void)
{
	const struct parity_impl *want = find_impl(getenv("FSVOL_PARITY_ISA"));

	tables_init();
	impl = &parity_impl_portable;
	for (size_t i = 0; i < NIMPLS; i++)
		if (impls[i]->usable())
			impl = impls[i];
	if (want && want->usable())
		impl = want;
}

/* the set in use, tables ready */
static inline const struct parity_impl *cur(void)
{
	pthread_once(&init_once, parity_init);
	return __atomic_load_n(&impl, __ATOMIC_RELAXED);
}

/* ---- kernel sets ---- */

const char *parity_isa(void)
{
	return cur()->name;
}

const char *parity_isa_name(unsigned i)
{
	return i < NIMPLS ? impls[i]->name : NULL;
}

int parity_isa_usable(const char *name)
{
	const struct parity_impl *p = find_impl(name);

	if (!p)
		return -EINVAL;
	return p->usable() ? 1 : 0;
}

int parity_isa_select(const char *name)
{
	const struct parity_impl *p = find_impl(name);

	if (!p)
		return -EINVAL;
	if (!p->usable())
		return -ENOTSUP;
	(void)cur();
	__atomic_store_n(&impl, p, __ATOMIC_RELAXED);
	return 0;
}

/* ---- GF(2^8) helpers ---- */

uint8_t parity_gf_mul(uint8_t a, uint8_t b)
{
	(void)cur();
	if (!a || !b)
		return 0;
	return parity_exp[parity_log[a] + parity_log[b]];
}

/* inv(0) is undefined; 0 is returned */
uint8_t parity_gf_inv(uint8_t a)
{
	(void)cur();
	if (!a)
		return 0;
	return parity_exp[255 - parity_log[a]];
}

uint8_t parity_gf_exp2(unsigned j)
{
	(void)cur();
	return parity_exp[j % 255];
}

/* ---- public kernels ---- */

/* dst = XOR of n >= 1 sources, at most PARITY_MAXSRC per kernel call */
static void xor_many(const struct parity_impl *ks, uint8_t *dst, const uint8_t *const *src,
		     unsigned n, size_t len)
{
	const uint8_t *s[PARITY_MAXSRC];
	unsigned k = n < PARITY_MAXSRC ? n : PARITY_MAXSRC;

	ks->xor_n(dst, src, k, len);
	while (k < n) { /* dst, then the next sources */
		unsigned m = n - k < PARITY_MAXSRC - 1 ? n - k : PARITY_MAXSRC - 1;

		s[0] = dst;
		memcpy(s + 1, src + k, m * sizeof(*s));
		ks->xor_n(dst, s, m + 1, len);
		k += m;
	}
}

void parity_xor(void *dst, const void *const *src, unsigned n, size_t len)
{
	if (n == 0) {
		memset(dst, 0, len);
		return;
	}
	xor_many(cur(), dst, (const uint8_t *const *)src, n, len);
}

void parity_xor_into(void *dst, const void *src, size_t len)
{
	const uint8_t *s[2] = { dst, src };

	cur()->xor_n(dst, s, 2, len);
}

void parity_gen(const void *const *data, unsigned ndata, void *p, void *q, size_t len)
{
	const struct parity_impl *ks = cur();

	if (ndata == 0) {
		if (p)
			memset(p, 0, len);
		if (q)
			memset(q, 0, len);
		return;
	}
	if (!q) {
		if (p)
			xor_many(ks, p, (const uint8_t *const *)data, ndata, len);
		return;
	}
	assert(ndata <= 255); /* g^j repeats after 255 */
	ks->gen((const uint8_t *const *)data, ndata, p, q, len);
}

void parity_gen_slots(const void *const *data, const uint8_t *slot, unsigned ndata, void *p, void *q,
		      size_t len)
{
	const void *src[255];

	if (!slot || !q || ndata == 0) {
		parity_gen(data, ndata, p, q, len);
		return;
	}
	assert(ndata <= 255);
	for (unsigned j = 0; j < ndata; j++)
		src[slot[j]] = data[j];
	parity_gen(src, ndata, p, q, len);
}

void parity_rmw(void *p, void *q, const void *old, const void *new_, unsigned index,
		size_t len)
{
	const struct parity_impl *ks = cur();

	if (!q) {
		if (p) {
			const uint8_t *s[3] = { p, old, new_ };

			ks->xor_n(p, s, 3, len);
		}
		return;
	}
	ks->rmw(p, q, old, new_, parity_exp[index % 255], len);
}

/* ---- recovery ---- */

/* blocks[k] = XOR of every block in 0..nblocks-1 but k */
static void rebuild_by_xor(const struct parity_impl *ks, void *const *blocks, unsigned nblocks,
			   unsigned k, size_t len)
{
	const uint8_t *src[256];
	unsigned n = 0;

	for (unsigned i = 0; i < nblocks; i++)
		if (i != k)
			src[n++] = blocks[i];
	if (n == 0)
		memset(blocks[k], 0, len);
	else
		ks->xor_n(blocks[k], src, n, len);
}

/* Data x lost with P: Q' (data x as zero) goes into P's buffer as scratch,
 * D_x = g^-x * (Q ^ Q'), then P is recomputed. */
static void recover_data_p(const struct parity_impl *ks, void *const *blocks, unsigned ndata,
			   unsigned x, size_t len)
{
	const uint8_t *d[255];
	uint8_t *p = blocks[ndata], *q = blocks[ndata + 1];

	for (unsigned j = 0; j < ndata; j++)
		d[j] = j == x ? NULL : blocks[j];
	ks->gen_null(d, ndata, NULL, p, len);
	ks->mul2src(blocks[x], q, p, parity_exp[255 - x], len);
	ks->xor_n(p, (const uint8_t *const *)blocks, ndata, len);
}

/* Data x < y lost: P' and Q' (both as zero) go into D_x and D_y as scratch, then
 * with Pxy = P ^ P', Qxy = Q ^ Q' (Anvin, "The mathematics of RAID-6", sec. 4):
 *   D_x = A * Pxy ^ B * Qxy, A = g^y / (g^x ^ g^y), B = 1 / (g^x ^ g^y); D_y = Pxy ^ D_x */
static void recover_data_data(const struct parity_impl *ks, void *const *blocks,
			      unsigned ndata, unsigned x, unsigned y, size_t len)
{
	const uint8_t *d[255];
	uint8_t den = parity_gf_inv(parity_exp[x] ^ parity_exp[y]);

	for (unsigned j = 0; j < ndata; j++)
		d[j] = (j == x || j == y) ? NULL : blocks[j];
	ks->gen_null(d, ndata, blocks[x], blocks[y], len);
	ks->rec2(blocks[x], blocks[y], blocks[ndata], blocks[ndata + 1],
		  parity_gf_mul(parity_exp[y], den), den, len);
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
	const struct parity_impl *ks = cur();
	const unsigned P = ndata, Q = ndata + 1;
	const void *const *data = (const void *const *)blocks;

	if (nlost == 1) {
		if (a < ndata || a == P) /* data via P, or P itself */
			rebuild_by_xor(ks, blocks, ndata + 1, a, len);
		else
			parity_gen(data, ndata, NULL, blocks[Q], len);
		return 0;
	}
	if (a == P) /* P and Q */
		parity_gen(data, ndata, blocks[P], blocks[Q], len);
	else if (b == Q) { /* data and Q: data via P first */
		rebuild_by_xor(ks, blocks, ndata + 1, a, len);
		parity_gen(data, ndata, NULL, blocks[Q], len);
	} else if (b == P)
		recover_data_p(ks, blocks, ndata, a, len);
	else
		recover_data_data(ks, blocks, ndata, a, b, len);
	return 0;
}

int parity_recover_slots(void *const *blocks, const uint8_t *slot, unsigned ndata, unsigned nparity,
			 const unsigned *lost, unsigned nlost, size_t len)
{
	void *b[257];
	unsigned l[2];

	if (!slot)
		return parity_recover(blocks, ndata, nparity, lost, nlost, len);
	if (!blocks || !lost || ndata < 1 || ndata > 255 || nparity < 1 || nparity > 2 || nlost < 1 ||
	    nlost > nparity)
		return -EINVAL;
	for (unsigned j = 0; j < ndata; j++) {
		if (slot[j] >= ndata)
			return -EINVAL;
		b[slot[j]] = blocks[j];
	}
	for (unsigned k = 0; k < nparity; k++)
		b[ndata + k] = blocks[ndata + k];
	for (unsigned i = 0; i < nlost; i++)
		l[i] = lost[i] < ndata ? slot[lost[i]] : lost[i];
	return parity_recover(b, ndata, nparity, l, nlost, len);
}
