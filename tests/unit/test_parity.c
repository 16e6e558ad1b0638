/* test_parity: GF(2^8) field laws, P/Q against a byte-by-byte reference, every
 * single and double loss, read-modify-write with every constant, misaligned
 * buffers, bad requests; and, built with ISA-L (HAVE_ISAL), P, Q and two-data
 * recovery byte for byte against ISA-L's over many sizes, offsets and widths.
 * main() runs the suite once with each kernel set the CPU runs. */
#include "layout/parity.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/parity_int.h" /* PARITY_MUL2_SWAR */
#include "tests/unit/unit_isa.h"

#ifdef HAVE_ISAL
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAXB 260

static const size_t lens[] = { 1, 7, 13, 31, 32, 33, 63, 64, 65, 127, 129, 4095, 4096, 65536 };

/* ---- reference: shift-and-xor multiply, byte-at-a-time P/Q ---- */

static uint8_t ref_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	for (int k = 0; k < 8; k++) {
		if (b & (1u << k))
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
	}
	return r;
}

static uint8_t ref_pow2(unsigned j)
{
	uint8_t r = 1;

	while (j--)
		r = ref_mul(r, 2);
	return r;
}

static void ref_gen(uint8_t *const *d, unsigned n, uint8_t *p, uint8_t *q, size_t len)
{
	uint8_t g[MAXB];

	for (unsigned j = 0; j < n; j++)
		g[j] = ref_pow2(j);
	for (size_t i = 0; i < len; i++) {
		uint8_t pb = 0, qb = 0;

		for (unsigned j = 0; j < n; j++) {
			pb ^= d[j][i];
			qb ^= ref_mul(g[j], d[j][i]);
		}
		p[i] = pb;
		q[i] = qb;
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void fill(void *buf, size_t len)
{
	uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(rng() >> 24);
}

/* nb blocks of len bytes, each starting `off` bytes past a 64-byte boundary */
struct blockset {
	unsigned nb;
	uint8_t *raw[MAXB];
	uint8_t *b[MAXB];
};

static void bs_alloc(struct blockset *s, unsigned nb, size_t len, size_t off)
{
	s->nb = nb;
	for (unsigned i = 0; i < nb; i++) {
		ck_assert_int_eq(posix_memalign((void **)&s->raw[i], 64, len + 64), 0);
		s->b[i] = s->raw[i] + off;
	}
}

static void bs_free(struct blockset *s)
{
	for (unsigned i = 0; i < s->nb; i++)
		free(s->raw[i]);
}

/* md's syndrome order (parity_gen_slots): Q = sum of g^slot[j] * D_j, checked
 * against the reference over a rotation (what raid6's asymmetric layouts give)
 * and a reversal; every one and two losses come back through
 * parity_recover_slots, and an rmw with the slot as index agrees. */
START_TEST(slots_match_reference)
{
	const size_t len = 4096 + 33;
	for (unsigned n = 2; n <= 8; n++)
		for (unsigned perm = 0; perm < 3; perm++) {
			uint8_t slot[16], *ord[MAXB];
			struct blockset s;

			for (unsigned j = 0; j < n; j++)
				slot[j] = (uint8_t)(perm == 0 ? (j + 1) % n : perm == 1 ? n - 1 - j : (j + n - 2) % n);
			bs_alloc(&s, n + 4, len, 0);
			for (unsigned j = 0; j < n + 4; j++)
				fill(s.b[j], len);
			for (unsigned j = 0; j < n; j++)
				ord[slot[j]] = s.b[j];
			ref_gen(ord, n, s.b[n + 2], s.b[n + 3], len);
			parity_gen_slots((const void *const *)s.b, slot, n, s.b[n], s.b[n + 1], len);
			ck_assert_msg(!memcmp(s.b[n], s.b[n + 2], len) && !memcmp(s.b[n + 1], s.b[n + 3], len),
				      "P/Q n=%u perm %u", n, perm);
			uint8_t *saved[MAXB];
			for (unsigned j = 0; j < n + 2; j++) {
				saved[j] = malloc(len);
				memcpy(saved[j], s.b[j], len);
			}
			for (unsigned a = 0; a < n + 2; a++)
				for (unsigned b = a; b < n + 2; b++) {
					unsigned lost[2] = { a, b }, nl = a == b ? 1 : 2;
					for (unsigned k = 0; k < nl; k++)
						memset(s.b[lost[k]], 0x5a, len);
					ck_assert_int_eq(parity_recover_slots((void *const *)s.b, slot, n, 2, lost, nl, len), 0);
					for (unsigned k = 0; k < nl; k++)
						ck_assert_msg(!memcmp(s.b[lost[k]], saved[lost[k]], len),
							      "n=%u perm %u lost %u,%u: block %u wrong", n, perm, a, b, lost[k]);
				}
			/* rmw of data index 0 with its slot as the coefficient */
			uint8_t *nw = malloc(len);
			fill(nw, len);
			parity_rmw(s.b[n], s.b[n + 1], s.b[0], nw, slot[0], len);
			memcpy(s.b[0], nw, len);
			parity_gen_slots((const void *const *)s.b, slot, n, s.b[n + 2], s.b[n + 3], len);
			ck_assert(!memcmp(s.b[n], s.b[n + 2], len) && !memcmp(s.b[n + 1], s.b[n + 3], len));
			free(nw);
			for (unsigned j = 0; j < n + 2; j++)
				free(saved[j]);
			bs_free(&s);
		}
}
END_TEST

/* ---- GF(2^8) ---- */

/* Tight loops count mismatches and assert once: each ck_assert is a syscall. */
START_TEST(gf_mul_matches_reference)
{
	unsigned bad = 0;

	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			bad += parity_gf_mul((uint8_t)a, (uint8_t)b) != ref_mul((uint8_t)a, (uint8_t)b);
	ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(gf_field_laws)
{
	unsigned bad_inv = 0, bad_comm = 0, bad_assoc = 0, bad_dist = 0, bad_id = 0;

	for (unsigned a = 1; a < 256; a++)
		bad_inv += parity_gf_mul((uint8_t)a, parity_gf_inv((uint8_t)a)) != 1;
	for (int i = 0; i < 20000; i++) {
		uint8_t a = (uint8_t)rng(), b = (uint8_t)(rng() >> 8), c = (uint8_t)(rng() >> 16);

		bad_comm += parity_gf_mul(a, b) != parity_gf_mul(b, a);
		bad_assoc += parity_gf_mul(parity_gf_mul(a, b), c) !=
			     parity_gf_mul(a, parity_gf_mul(b, c));
		bad_dist += parity_gf_mul(a, b ^ c) != (parity_gf_mul(a, b) ^ parity_gf_mul(a, c));
		bad_id += parity_gf_mul(a, 1) != a || parity_gf_mul(a, 0) != 0;
	}
	ck_assert_uint_eq(bad_inv, 0);
	ck_assert_uint_eq(bad_comm, 0);
	ck_assert_uint_eq(bad_assoc, 0);
	ck_assert_uint_eq(bad_dist, 0);
	ck_assert_uint_eq(bad_id, 0);
}
END_TEST

START_TEST(gf_exp2_cycle)
{
	uint8_t seen[256] = { 0 };

	/* g = 2 generates the whole multiplicative group: period exactly 255 */
	for (unsigned j = 0; j < 255; j++) {
		uint8_t v = parity_gf_exp2(j);

		ck_assert_uint_ne(v, 0);
		ck_assert_uint_eq(v, ref_pow2(j));
		ck_assert_uint_eq(seen[v], 0);
		seen[v] = 1;
	}
	ck_assert_uint_eq(parity_gf_exp2(255), 1);
	ck_assert_uint_eq(parity_gf_exp2(256), 2);
	ck_assert_uint_eq(parity_gf_exp2(0), 1);
}
END_TEST

/* the 64-bit SWAR doubling (portable set, tails) on every byte value in every lane */
START_TEST(swar_mul2_every_byte)
{
	unsigned bad = 0;

	for (unsigned pos = 0; pos < 8; pos++)
		for (unsigned v = 0; v < 256; v++) {
			uint64_t x = (rng() & ~(0xffull << 8 * pos)) | (uint64_t)v << 8 * pos;
			uint64_t y = PARITY_MUL2_SWAR(x);

			for (unsigned b = 0; b < 8; b++)
				bad += (uint8_t)(y >> 8 * b) != ref_mul((uint8_t)(x >> 8 * b), 2);
		}
	ck_assert_uint_eq(bad, 0);
}
END_TEST

/* ---- XOR and P/Q generation ---- */

START_TEST(xor_matches_reference)
{
	for (unsigned n = 0; n <= 9; n++)
		for (size_t li = 0; li < ARRAY_SIZE(lens); li++) {
			size_t len = lens[li];
			struct blockset s;
			uint8_t *ref = malloc(len), *dst = malloc(len);

			bs_alloc(&s, n + 1, len, 0);
			for (unsigned j = 0; j < n + 1; j++)
				fill(s.b[j], len);
			memset(ref, 0, len);
			for (unsigned j = 0; j < n; j++)
				for (size_t i = 0; i < len; i++)
					ref[i] ^= s.b[j][i];
			fill(dst, len);
			parity_xor(dst, (const void *const *)s.b, n, len);
			ck_assert_msg(memcmp(dst, ref, len) == 0, "xor n=%u len=%zu", n, len);
			if (n > 0) { /* dst aliasing src[0] */
				parity_xor(s.b[0], (const void *const *)s.b, n, len);
				ck_assert_msg(memcmp(s.b[0], ref, len) == 0, "alias n=%u", n);
				/* xor_into: ref ^ b[n] */
				parity_xor_into(dst, s.b[n], len);
				for (size_t i = 0; i < len; i++)
					ref[i] ^= s.b[n][i];
				ck_assert_msg(memcmp(dst, ref, len) == 0, "xor_into len=%zu", len);
			}
			bs_free(&s);
			free(ref);
			free(dst);
		}
}
END_TEST

START_TEST(gen_matches_reference)
{
	static const unsigned nd[] = { 1, 2, 3, 4, 5, 6, 7, 8, 13, 14, 16, 31, 255 };

	for (size_t ni = 0; ni < ARRAY_SIZE(nd); ni++)
		for (size_t li = 0; li < ARRAY_SIZE(lens); li++) {
			unsigned n = nd[ni];
			size_t len = lens[li];
			struct blockset s;

			if (n > 31 && len > 4096)
				continue;
			bs_alloc(&s, n + 4, len, 0);
			for (unsigned j = 0; j < n + 4; j++)
				fill(s.b[j], len);
			ref_gen(s.b, n, s.b[n + 2], s.b[n + 3], len);
			parity_gen((const void *const *)s.b, n, s.b[n], s.b[n + 1], len);
			ck_assert_msg(memcmp(s.b[n], s.b[n + 2], len) == 0, "P n=%u len=%zu", n,
				      len);
			ck_assert_msg(memcmp(s.b[n + 1], s.b[n + 3], len) == 0, "Q n=%u len=%zu",
				      n, len);
			/* P alone and Q alone */
			fill(s.b[n], len);
			fill(s.b[n + 1], len);
			parity_gen((const void *const *)s.b, n, s.b[n], NULL, len);
			parity_gen((const void *const *)s.b, n, NULL, s.b[n + 1], len);
			ck_assert(memcmp(s.b[n], s.b[n + 2], len) == 0);
			ck_assert(memcmp(s.b[n + 1], s.b[n + 3], len) == 0);
			bs_free(&s);
		}
}
END_TEST

/* ---- recovery ---- */

/* Build a stripe, lose `lost`, scribble over the lost blocks, recover, compare. */
static void check_loss(struct blockset *s, uint8_t **saved, unsigned ndata, unsigned nparity,
		       const unsigned *lost, unsigned nlost, size_t len)
{
	for (unsigned i = 0; i < nlost; i++)
		fill(s->b[lost[i]], len);
	ck_assert_int_eq(parity_recover((void *const *)s->b, ndata, nparity, lost, nlost, len),
			 0);
	for (unsigned i = 0; i < ndata + nparity; i++)
		ck_assert_msg(memcmp(s->b[i], saved[i], len) == 0,
			      "ndata=%u nparity=%u lost={%u,%u} len=%zu: block %u differs", ndata,
			      nparity, lost[0], nlost > 1 ? lost[1] : lost[0], len, i);
}

static void stripe_setup(struct blockset *s, uint8_t **saved, unsigned ndata, unsigned nparity,
			 size_t len, size_t off)
{
	bs_alloc(s, ndata + nparity, len, off);
	for (unsigned j = 0; j < ndata; j++)
		fill(s->b[j], len);
	parity_gen((const void *const *)s->b, ndata, s->b[ndata],
		   nparity == 2 ? s->b[ndata + 1] : NULL, len);
	for (unsigned j = 0; j < ndata + nparity; j++) {
		saved[j] = malloc(len);
		memcpy(saved[j], s->b[j], len);
	}
}

static void stripe_free(struct blockset *s, uint8_t **saved)
{
	for (unsigned j = 0; j < s->nb; j++)
		free(saved[j]);
	bs_free(s);
}

static const size_t loss_lens[] = { 1, 7, 13, 33, 4095, 4096, 65536 };

/* _i: ndata + 2 = 3..8 members */
START_TEST(raid6_every_loss)
{
	unsigned ndata = (unsigned)_i;

	for (size_t li = 0; li < ARRAY_SIZE(loss_lens); li++) {
		size_t len = loss_lens[li];
		unsigned nb = ndata + 2;
		struct blockset s;
		uint8_t *saved[MAXB];

		stripe_setup(&s, saved, ndata, 2, len, 0);
		for (unsigned a = 0; a < nb; a++) {
			unsigned one[1] = { a };

			check_loss(&s, saved, ndata, 2, one, 1, len);
			for (unsigned b = a + 1; b < nb; b++) {
				unsigned two[2] = { a, b }, rev[2] = { b, a };

				check_loss(&s, saved, ndata, 2, two, 2, len);
				check_loss(&s, saved, ndata, 2, rev, 2, len);
			}
		}
		stripe_free(&s, saved);
	}
}
END_TEST

/* _i: ndata + 1 = 2..8 members */
START_TEST(raid5_every_loss)
{
	unsigned ndata = (unsigned)_i;

	for (size_t li = 0; li < ARRAY_SIZE(loss_lens); li++) {
		size_t len = loss_lens[li];
		struct blockset s;
		uint8_t *saved[MAXB];

		stripe_setup(&s, saved, ndata, 1, len, 0);
		for (unsigned a = 0; a < ndata + 1; a++) {
			unsigned one[1] = { a };

			check_loss(&s, saved, ndata, 1, one, 1, len);
		}
		stripe_free(&s, saved);
	}
}
END_TEST

/* widest stripe GF(2^8) allows: the extreme indexes 0 and 254 */
START_TEST(raid6_wide_stripe)
{
	static const unsigned pairs[][2] = { { 0, 254 }, { 253, 254 }, { 0, 1 }, { 100, 255 },
					     { 254, 256 }, { 255, 256 }, { 0, 256 } };
	const unsigned ndata = 255;
	const size_t len = 97;
	struct blockset s;
	uint8_t *saved[MAXB];

	stripe_setup(&s, saved, ndata, 2, len, 0);
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++)
		check_loss(&s, saved, ndata, 2, pairs[i], 2, len);
	stripe_free(&s, saved);
}
END_TEST

/* ---- read-modify-write ---- */

START_TEST(rmw_equals_regeneration)
{
	static const unsigned nd[] = { 1, 2, 4, 7, 14 };
	static const size_t rl[] = { 1, 13, 33, 4095, 65536 };

	for (size_t ni = 0; ni < ARRAY_SIZE(nd); ni++)
		for (size_t li = 0; li < ARRAY_SIZE(rl); li++) {
			unsigned n = nd[ni];
			size_t len = rl[li];
			struct blockset s;
			uint8_t *old = malloc(len), *p2 = malloc(len), *q2 = malloc(len);

			bs_alloc(&s, n + 2, len, 0);
			for (unsigned j = 0; j < n; j++)
				fill(s.b[j], len);
			parity_gen((const void *const *)s.b, n, s.b[n], s.b[n + 1], len);
			for (unsigned idx = 0; idx < n; idx++) {
				memcpy(old, s.b[idx], len);
				fill(s.b[idx], len);
				memcpy(p2, s.b[n], len);
				memcpy(q2, s.b[n + 1], len);
				/* both, then P only and Q only on copies */
				parity_rmw(s.b[n], s.b[n + 1], old, s.b[idx], idx, len);
				parity_rmw(p2, NULL, old, s.b[idx], idx, len);
				parity_rmw(NULL, q2, old, s.b[idx], idx, len);
				{
					uint8_t *rp = malloc(len), *rq = malloc(len);

					parity_gen((const void *const *)s.b, n, rp, rq, len);
					ck_assert_msg(memcmp(rp, s.b[n], len) == 0,
						      "rmw P n=%u idx=%u len=%zu", n, idx, len);
					ck_assert_msg(memcmp(rq, s.b[n + 1], len) == 0,
						      "rmw Q n=%u idx=%u len=%zu", n, idx, len);
					ck_assert(memcmp(rp, p2, len) == 0);
					ck_assert(memcmp(rq, q2, len) == 0);
					free(rp);
					free(rq);
				}
			}
			bs_free(&s);
			free(old);
			free(p2);
			free(q2);
		}
}
END_TEST

/* every multiplier g^index (all 255 non-zero constants; index 255.. wraps),
 * several lengths and offsets, against the byte-by-byte reference */
START_TEST(rmw_every_constant)
{
	static const size_t rl[] = { 1, 77, 300, 4101 };

	for (unsigned idx = 0; idx < 258; idx++)
		for (size_t li = 0; li < ARRAY_SIZE(rl); li++) {
			size_t len = rl[li], off = (idx * 7 + li) % 64;
			uint8_t c = ref_pow2(idx % 255);
			struct blockset s;
			uint8_t *rp = malloc(len), *rq = malloc(len);
			unsigned bad = 0;

			bs_alloc(&s, 4, len, off); /* old, new, P, Q */
			for (unsigned j = 0; j < 4; j++)
				fill(s.b[j], len);
			for (size_t i = 0; i < len; i++) {
				uint8_t x = s.b[0][i] ^ s.b[1][i];

				rp[i] = s.b[2][i] ^ x;
				rq[i] = s.b[3][i] ^ ref_mul(c, x);
			}
			parity_rmw(s.b[2], s.b[3], s.b[0], s.b[1], idx, len);
			bad += memcmp(s.b[2], rp, len) != 0;
			bad += memcmp(s.b[3], rq, len) != 0;
			ck_assert_msg(bad == 0, "rmw index %u len %zu off %zu", idx, len, off);
			bs_free(&s);
			free(rp);
			free(rq);
		}
}
END_TEST

/* ---- misaligned buffers ---- */

START_TEST(misaligned_same_results)
{
	const unsigned n = 5;
	const size_t len = 4096 + 77;
	struct blockset al, mis;
	uint8_t *saved[MAXB];
	size_t off = (size_t)_i; /* 1..15 */

	bs_alloc(&al, n + 2, len, 0);
	stripe_setup(&mis, saved, n, 2, len, off);
	for (unsigned j = 0; j < n; j++)
		memcpy(al.b[j], mis.b[j], len);
	parity_gen((const void *const *)al.b, n, al.b[n], al.b[n + 1], len);
	ck_assert(memcmp(al.b[n], mis.b[n], len) == 0);
	ck_assert(memcmp(al.b[n + 1], mis.b[n + 1], len) == 0);

	/* every pair lost, on the misaligned stripe */
	for (unsigned a = 0; a < n + 2; a++)
		for (unsigned b = a + 1; b < n + 2; b++) {
			unsigned two[2] = { a, b };

			check_loss(&mis, saved, n, 2, two, 2, len);
		}

	/* rmw on misaligned vs aligned */
	{
		uint8_t *nw = malloc(len + 16), *nwm = nw + off;

		fill(nwm, len);
		parity_rmw(al.b[n], al.b[n + 1], al.b[3], nwm, 3, len);
		parity_rmw(mis.b[n], mis.b[n + 1], mis.b[3], nwm, 3, len);
		ck_assert(memcmp(al.b[n], mis.b[n], len) == 0);
		ck_assert(memcmp(al.b[n + 1], mis.b[n + 1], len) == 0);
		free(nw);
	}
	/* xor with a misaligned destination */
	parity_xor(mis.b[n], (const void *const *)mis.b, n, len);
	parity_xor(al.b[n], (const void *const *)mis.b, n, len);
	ck_assert(memcmp(al.b[n], mis.b[n], len) == 0);
	stripe_free(&mis, saved);
	bs_free(&al);
}
END_TEST

/* ---- bad requests ---- */

START_TEST(recover_rejects_bad_requests)
{
	static const struct {
		unsigned ndata, nparity, nlost, lost[3];
	} bad[] = {
		{ 4, 1, 2, { 0, 1 } },	   /* two lost, one parity */
		{ 4, 2, 3, { 0, 1, 2 } }, /* three lost */
		{ 4, 1, 1, { 5 } },	   /* out of range (ndata + 1 blocks) */
		{ 4, 2, 1, { 6 } },
		{ 4, 2, 2, { 0, 6 } },
		{ 4, 2, 2, { 100, 1 } },
		{ 4, 2, 2, { 2, 2 } },	   /* duplicate */
		{ 4, 2, 0, { 0 } },	   /* nothing lost */
		{ 4, 0, 1, { 0 } },	   /* no parity */
		{ 4, 3, 1, { 0 } },	   /* more parity than defined */
		{ 0, 2, 1, { 0 } },	   /* no data */
		{ 256, 2, 1, { 0 } },	   /* wider than GF(2^8) allows */
	};
	const size_t len = 64;
	uint8_t *blk[258], *copy[258];

	for (unsigned i = 0; i < 258; i++) {
		blk[i] = malloc(len);
		fill(blk[i], len);
		copy[i] = malloc(len);
		memcpy(copy[i], blk[i], len);
	}
	for (size_t t = 0; t < ARRAY_SIZE(bad); t++) {
		ck_assert_msg(parity_recover((void *const *)blk, bad[t].ndata, bad[t].nparity,
					     bad[t].lost, bad[t].nlost, len) == -EINVAL,
			      "case %zu accepted", t);
		for (unsigned i = 0; i < 258; i++)
			ck_assert_msg(memcmp(blk[i], copy[i], len) == 0, "case %zu wrote", t);
	}
	{
		const unsigned l0[1] = { 0 };

		ck_assert_int_eq(parity_recover(NULL, 4, 2, l0, 1, len), -EINVAL);
		ck_assert_int_eq(parity_recover((void *const *)blk, 4, 2, NULL, 1, len), -EINVAL);
	}
	for (unsigned i = 0; i < 258; i++) {
		free(blk[i]);
		free(copy[i]);
	}
}
END_TEST

/* ---- ISA-L, the field's library, as a second reference ---- */

#ifdef HAVE_ISAL
static const size_t isal_lens[] = { 32, 64, 96, 160, 288, 4096, 4096 + 96, 65536 };
static const size_t isal_offs[] = { 0, 1, 7, 33, 63 };

/* fsvol's buffers at offset off, ISA-L's copies 64-byte aligned (it wants 32) */
START_TEST(isal_same_xor_pq)
{
	static const unsigned nd[] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 16, 24, 32 };

	for (size_t ni = 0; ni < ARRAY_SIZE(nd); ni++)
		for (size_t li = 0; li < ARRAY_SIZE(isal_lens); li++) {
			unsigned n = nd[ni];
			size_t len = isal_lens[li], off = isal_offs[(ni + li) % ARRAY_SIZE(isal_offs)];
			struct blockset s, r;
			void *arr[MAXB];

			bs_alloc(&s, n + 2, len, off);
			bs_alloc(&r, n + 2, len, 0);
			for (unsigned j = 0; j < n; j++) {
				fill(s.b[j], len);
				memcpy(r.b[j], s.b[j], len);
				arr[j] = r.b[j];
			}
			arr[n] = r.b[n];
			arr[n + 1] = r.b[n + 1];
			parity_gen((const void *const *)s.b, n, s.b[n], s.b[n + 1], len);
			/* its fast pq_gen wants two data blocks at least */
			ck_assert_int_eq((n >= 2 ? pq_gen : pq_gen_base)((int)n + 2, (int)len, arr), 0);
			ck_assert_msg(memcmp(s.b[n], r.b[n], len) == 0, "P n=%u len=%zu off=%zu", n,
				      len, off);
			ck_assert_msg(memcmp(s.b[n + 1], r.b[n + 1], len) == 0,
				      "Q n=%u len=%zu off=%zu", n, len, off);
			/* raid5: XOR alone */
			fill(s.b[n], len);
			parity_xor(s.b[n], (const void *const *)s.b, n, len);
			if (n >= 2) { /* ISA-L's xor_gen wants two sources at least */
				ck_assert_int_eq(xor_gen((int)n + 1, (int)len, arr), 0);
				ck_assert_msg(memcmp(s.b[n], r.b[n], len) == 0, "xor n=%u len=%zu", n,
					      len);
			}
			bs_free(&s);
			bs_free(&r);
		}
}
END_TEST

/* ISA-L's general decoder: the encode matrix's rows of the survivors, inverted,
 * give the lost blocks as sums of survivors (its erasure_code example). */
static void isal_decode(unsigned n, const unsigned lost[2], uint8_t *const *blk, uint8_t **out,
			size_t len)
{
	unsigned char enc[34 * 32], sub[32 * 32], inv[32 * 32], dec[2 * 32];
	unsigned char *src[32], tbl[32 * 32 * 2], g = 1;
	unsigned ns = 0;

	ck_assert_uint_le(n, 32);
	for (unsigned r = 0; r < n + 2; r++)
		for (unsigned c = 0; c < n; c++)
			enc[r * n + c] = r < n ? r == c : r == n ? 1 : 0;
	for (unsigned c = 0; c < n; c++, g = gf_mul(g, 2))
		enc[(n + 1) * n + c] = g;
	for (unsigned r = 0; r < n + 2; r++)
		if (r != lost[0] && r != lost[1]) {
			memcpy(sub + ns * n, enc + r * n, n);
			src[ns++] = blk[r];
		}
	ck_assert_int_eq(gf_invert_matrix(sub, inv, (int)n), 0);
	for (unsigned k = 0; k < 2; k++) /* row lost[k] of enc times inv */
		for (unsigned c = 0; c < n; c++) {
			unsigned char v = 0;

			for (unsigned m = 0; m < n; m++)
				v ^= gf_mul(enc[lost[k] * n + m], inv[m * n + c]);
			dec[k * n + c] = v;
		}
	ec_init_tables((int)n, 2, dec, tbl);
	ec_encode_data((int)len, (int)n, 2, tbl, src, out);
}

/* every pair of lost blocks (data, P, Q), fsvol's recovery and ISA-L's decoder */
START_TEST(isal_same_recovery)
{
	static const unsigned nd[] = { 2, 3, 4, 6, 8, 14, 30 };
	static const size_t rl[] = { 32, 96, 4096, 65536 };

	for (size_t ni = 0; ni < ARRAY_SIZE(nd); ni++)
		for (size_t li = 0; li < ARRAY_SIZE(rl); li++) {
			unsigned n = nd[ni];
			size_t len = rl[li], off = isal_offs[(ni + li) % ARRAY_SIZE(isal_offs)];
			struct blockset s;
			uint8_t *saved[MAXB], *out[2];

			if (n > 8 && len > 4096)
				continue;
			stripe_setup(&s, saved, n, 2, len, off);
			ck_assert_int_eq(posix_memalign((void **)&out[0], 64, len), 0);
			ck_assert_int_eq(posix_memalign((void **)&out[1], 64, len), 0);
			for (unsigned a = 0; a < n + 2; a++)
				for (unsigned b = a + 1; b < n + 2; b++) {
					const unsigned lost[2] = { a, b };

					isal_decode(n, lost, saved, out, len);
					fill(s.b[a], len);
					fill(s.b[b], len);
					ck_assert_int_eq(parity_recover((void *const *)s.b, n, 2, lost, 2, len), 0);
					ck_assert_msg(memcmp(s.b[a], out[0], len) == 0 &&
							      memcmp(s.b[b], out[1], len) == 0,
						      "n=%u lost {%u,%u} len=%zu off=%zu", n, a, b, len, off);
					ck_assert(memcmp(out[0], saved[a], len) == 0);
				}
			free(out[0]);
			free(out[1]);
			stripe_free(&s, saved);
		}
}
END_TEST
#endif

static Suite *parity_suite(const char *isa)
{
	static char name[64];
	Suite *s;
	TCase *tc;

	snprintf(name, sizeof(name), "parity (%s)", isa);
	s = suite_create(name);
	tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gf_mul_matches_reference);
	tcase_add_test(tc, gf_field_laws);
	tcase_add_test(tc, gf_exp2_cycle);
	tcase_add_test(tc, swar_mul2_every_byte);
	tcase_add_test(tc, xor_matches_reference);
	tcase_add_test(tc, gen_matches_reference);
	tcase_add_test(tc, rmw_every_constant);
	tcase_add_loop_test(tc, raid6_every_loss, 1, 7);
	tcase_add_loop_test(tc, raid5_every_loss, 1, 8);
	tcase_add_test(tc, raid6_wide_stripe);
	tcase_add_test(tc, rmw_equals_regeneration);
	tcase_add_loop_test(tc, misaligned_same_results, 1, 16);
	tcase_add_test(tc, recover_rejects_bad_requests);
	tcase_add_test(tc, slots_match_reference);
	suite_add_tcase(s, tc);
#ifdef HAVE_ISAL
	tc = tcase_create("isa-l");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, isal_same_xor_pq);
	tcase_add_test(tc, isal_same_recovery);
	suite_add_tcase(s, tc);
#endif
	return s;
}

/* The whole suite once per kernel set this CPU runs (each forced in turn),
 * after checking that the default is the best of them. */
int main(void)
{
	static const struct unit_isa m = {
		.test = "test_parity",
		.env = "FSVOL_PARITY_ISA",
		.cur = parity_isa,
		.name = parity_isa_name,
		.usable = parity_isa_usable,
		.select = parity_isa_select,
		.suite = parity_suite,
	};

#ifndef HAVE_ISAL
	printf("test_parity: built without ISA-L (libisal-dev): no comparison with it\n");
#endif
	return unit_isa_run(&m);
}
