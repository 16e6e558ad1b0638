/* parity_int: what layout/parity.c shares with its kernel sets, one file per
 * instruction set (parity_portable.c, parity_x86_avx2.c, parity_x86_avx512.c,
 * parity_x86_gfni.c). Each set fills one const table of the same bulk kernels;
 * parity.c picks one at first use (the best the CPU runs) and keeps the public
 * API, the GF(2^8) tables and the recovery logic. Not for other modules. */
#ifndef FSVOL_PARITY_INT_H
#define FSVOL_PARITY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define PARITY_X86 1
#endif

/* the most sources one xor_n call takes (gen: 255 data blocks) */
#define PARITY_MAXSRC 256

/* Every kernel takes buffers of any alignment and any len >= 0. */
struct parity_impl {
	const char *name; /* "portable", "avx2", ... (FSVOL_PARITY_ISA) */
	bool (*usable)(void); /* this CPU runs the set */
	/* dst = src[0] ^ ... ^ src[n-1], 1 <= n <= PARITY_MAXSRC; dst may alias src[0] */
	void (*xor_n)(uint8_t *dst, const uint8_t *const *src, unsigned n, size_t len);
	/* P and/or Q (either may be NULL) of 1 <= n <= 255 data blocks in data-index order */
	void (*gen)(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len);
	/* gen where a NULL data pointer is a zero block (recovery's lost slots) */
	void (*gen_null)(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
			 size_t len);
	/* x = a ^ b; p ^= x (p may be NULL); q ^= c * x */
	void (*rmw)(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b, uint8_t c,
		    size_t len);
	/* dst = c * (a ^ b) */
	void (*mul2src)(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint8_t c, size_t len);
	/* pxy = dx ^ p, qxy = dy ^ q; dx = ca * pxy ^ cb * qxy; dy = pxy ^ dx */
	void (*rec2)(uint8_t *dx, uint8_t *dy, const uint8_t *p, const uint8_t *q, uint8_t ca,
		     uint8_t cb, size_t len);
};

extern const struct parity_impl parity_impl_portable;
#ifdef PARITY_X86
extern const struct parity_impl parity_impl_avx2, parity_impl_avx512, parity_impl_gfni;
#endif

/* Tables, filled by parity.c before any kernel runs. */
extern uint8_t parity_exp[512]; /* g^j, j in 0..509 (doubled: no reduction of a sum of logs) */
extern uint8_t parity_log[256];
/* c * b = parity_nib_lo[c][b & 15] ^ parity_nib_hi[c][b >> 4] */
extern uint8_t parity_nib_lo[256][16] __attribute__((aligned(16)));
extern uint8_t parity_nib_hi[256][16] __attribute__((aligned(16)));
/* x -> c * x as the 8x8 bit matrix GF2P8AFFINEQB takes: byte 7-i is the row of
 * result bit i (bit j of it set when bit i of c * 2^j is) */
extern uint64_t parity_affine[256];

/* ---- byte-at-a-time helpers for the tails the vector loops leave ---- */

static inline uint8_t parity_mul2_byte(uint8_t x)
{
	return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1d : 0));
}

static inline uint8_t parity_mulc_byte(uint8_t c, uint8_t x)
{
	return parity_nib_lo[c][x & 15] ^ parity_nib_hi[c][x >> 4];
}

static inline void parity_xor_tail(uint8_t *dst, const uint8_t *const *src, unsigned n,
				   size_t i, size_t len)
{
	for (; i < len; i++) {
		uint8_t a = src[0][i];

		for (unsigned j = 1; j < n; j++)
			a ^= src[j][i];
		dst[i] = a;
	}
}

/* x * 2 for each byte of x, a uint64_t or a vector of them (64-bit SWAR): the
 * top bits, moved to bit 0 of the next byte less bit 0 of their own, make 0xff
 * masks (no borrow crosses a byte; the top byte's wraps out) */
#define PARITY_MUL2_SWAR(x)                                                                  \
	((((x) & 0x7f7f7f7f7f7f7f7full) << 1) ^                                              \
	 (((((x) & 0x8080808080808080ull) << 1) - (((x) & 0x8080808080808080ull) >> 7)) &    \
	  0x1d1d1d1d1d1d1d1dull))

/* Horner from the highest index, as every gen kernel: the same bytes. Eight
 * bytes at a time (SWAR), then one at a time. */
static inline void parity_gen_tail(const uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q,
				   size_t i, size_t len)
{
	for (; i + 8 <= len; i += 8) {
		uint64_t pw = 0, qw = 0, w;

		for (unsigned j = n; j-- > 0;) {
			qw = PARITY_MUL2_SWAR(qw);
			if (!d[j])
				continue;
			memcpy(&w, d[j] + i, 8);
			pw ^= w;
			qw ^= w;
		}
		if (p)
			memcpy(p + i, &pw, 8);
		if (q)
			memcpy(q + i, &qw, 8);
	}
	for (; i < len; i++) {
		uint8_t pb = 0, qb = 0;

		for (unsigned j = n; j-- > 0;) {
			qb = parity_mul2_byte(qb);
			if (!d[j])
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

static inline void parity_rmw_tail(uint8_t *p, uint8_t *q, const uint8_t *a, const uint8_t *b,
				   uint8_t c, size_t i, size_t len)
{
	for (; i < len; i++) {
		uint8_t x = a[i] ^ b[i];

		if (p)
			p[i] ^= x;
		q[i] ^= parity_mulc_byte(c, x);
	}
}

static inline void parity_mul2src_tail(uint8_t *dst, const uint8_t *a, const uint8_t *b,
				       uint8_t c, size_t i, size_t len)
{
	for (; i < len; i++)
		dst[i] = parity_mulc_byte(c, a[i] ^ b[i]);
}

static inline void parity_rec2_tail(uint8_t *dx, uint8_t *dy, const uint8_t *p,
				    const uint8_t *q, uint8_t ca, uint8_t cb, size_t i,
				    size_t len)
{
	for (; i < len; i++) {
		uint8_t a = dx[i] ^ p[i], b = dy[i] ^ q[i];
		uint8_t x = parity_mulc_byte(ca, a) ^ parity_mulc_byte(cb, b);

		dx[i] = x;
		dy[i] = x ^ a;
	}
}

#endif
