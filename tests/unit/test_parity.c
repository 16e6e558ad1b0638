/* test_parity: GF(2^8) field laws, P/Q against a byte-by-byte reference, every
 * single and double loss, read-modify-write, misaligned buffers, bad requests.
 * main() runs the suite with the default kernels, then re-runs itself with
 * FSVOL_PARITY_ISA=portable so both kernel sets are covered. */
#include "layout/parity.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
	tcase_add_test(tc, xor_matches_reference);
	tcase_add_test(tc, gen_matches_reference);
	tcase_add_loop_test(tc, raid6_every_loss, 1, 7);
	tcase_add_loop_test(tc, raid5_every_loss, 1, 8);
	tcase_add_test(tc, raid6_wide_stripe);
	tcase_add_test(tc, rmw_equals_regeneration);
	tcase_add_loop_test(tc, misaligned_same_results, 1, 16);
	tcase_add_test(tc, recover_rejects_bad_requests);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	const char *isa = getenv("FSVOL_PARITY_ISA");
	SRunner *sr = srunner_create(parity_suite(isa ? isa : "default"));
	int failed, status;
	pid_t pid;

	(void)argc;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (isa)
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;

	/* again with the portable kernels, in a fresh process (choice is made once) */
	pid = fork();
	if (pid < 0) {
		perror("test_parity: fork");
		return EXIT_FAILURE;
	}
	if (pid == 0) {
		setenv("FSVOL_PARITY_ISA", "portable", 1);
		execv("/proc/self/exe", argv);
		perror("test_parity: execv /proc/self/exe");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
