/* parity: XOR (raid4/5) and RAID-6 P+Q over GF(2^8), polynomial 0x11d,
 * generator 2 (as md's lib/raid6). Q = sum over syndrome slot j of g^j * D_j:
 * the slot is the data index unless the caller gives slots (the _slots calls).
 * Pure computation on caller buffers; no allocation. */
#ifndef FSVOL_PARITY_H
#define FSVOL_PARITY_H

#include <stddef.h>
#include <stdint.h>

/* dst = src[0] ^ src[1] ^ ... ^ src[n-1]; dst may alias src[0]. */
void parity_xor(void *dst, const void *const *src, unsigned n, size_t len);
/* dst ^= src */
void parity_xor_into(void *dst, const void *src, size_t len);

/* P and Q over ndata data blocks given in data-index order; p or q may be NULL.
 * With Q, ndata <= 255 (g^j repeats after 255). */
void parity_gen(const void *const *data, unsigned ndata, void *p, void *q, size_t len);

/* The same with each data block's syndrome slot given: Q = sum of
 * g^slot[j] * data[j] (md's order on raid6's asymmetric layouts,
 * layout_stripe.qslot; a permutation of 0..ndata-1). slot NULL: data-index
 * order, parity_gen itself. */
void parity_gen_slots(const void *const *data, const uint8_t *slot, unsigned ndata, void *p, void *q,
		      size_t len);

/* Read-modify-write update for data index `index`:
 * p ^= old ^ new; q ^= g^index * (old ^ new). p or q may be NULL. */
void parity_rmw(void *p, void *q, const void *old, const void *new_, unsigned index, size_t len);

/* Recover up to two lost blocks in place. blocks[0..ndata-1] are data in
 * data-index order, blocks[ndata] is P, blocks[ndata+1] is Q (nparity == 2).
 * lost[] (nlost 1 or 2) are indexes into blocks[]; their content is rebuilt
 * from the others. Returns 0, or -EINVAL for an impossible request
 * (nlost > nparity, or a lost index out of range). */
int parity_recover(void *const *blocks, unsigned ndata, unsigned nparity,
		   const unsigned *lost, unsigned nlost, size_t len);

/* parity_recover with the data blocks' syndrome slots given (as in
 * parity_gen_slots); blocks[] and lost[] still count in data-index order. */
int parity_recover_slots(void *const *blocks, const uint8_t *slot, unsigned ndata, unsigned nparity,
			 const unsigned *lost, unsigned nlost, size_t len);

/* Kernel sets, one per instruction set, all producing the same bytes
 * (docs/parity.md). The best one this CPU runs is taken at first use, or the
 * one FSVOL_PARITY_ISA names when the CPU runs it. */
const char *parity_isa(void); /* the set in use: "portable", "avx2", "avx512", "avx512+gfni" */
const char *parity_isa_name(unsigned i); /* the sets built in, slowest first; NULL past the end */
/* 1 when this CPU runs the set, 0 when it does not, -EINVAL for no such set */
int parity_isa_usable(const char *name);
/* Use that set from now on: 0, -EINVAL (no such set), -ENOTSUP (not on this CPU).
 * For tests and benches: a call must not overlap a parity computation. */
int parity_isa_select(const char *name);

/* GF(2^8) helpers (exposed for tests). */
uint8_t parity_gf_mul(uint8_t a, uint8_t b);
uint8_t parity_gf_inv(uint8_t a);
uint8_t parity_gf_exp2(unsigned j); /* g^j */

#endif
