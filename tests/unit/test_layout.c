/* Unit tests for layout/: every mapping is compared with an independent
 * brute-force model that fills the md grids literally (place parity, pour data;
 * lay raid10 copies into a grid), inverse(forward(x)) == x everywhere, plans
 * against byte-by-byte cost counts, init errors, names and the drawing.
 */
#include "layout/layout.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* Check writes a checkpoint on every ck_assert_*; the sweeps below run millions
 * of comparisons, so these call Check only when they fail. */
#define CMP_(T, a, op, b) do { \
	T a_ = (T)(a), b_ = (T)(b); \
	if (!(a_ op b_)) \
		ck_abort_msg("%s:%d: %s %s %s (%lld vs %lld)", __FILE__, __LINE__, #a, #op, #b, \
			     (long long)a_, (long long)b_); \
} while (0)
#define IEQ(a, b) CMP_(long long, a, ==, b)
#define UEQ(a, b) CMP_(unsigned long long, a, ==, b)
#define UNE(a, b) CMP_(unsigned long long, a, !=, b)
#define ULE(a, b) CMP_(unsigned long long, a, <=, b)
#define ULT(a, b) CMP_(unsigned long long, a, <, b)
#define UGE(a, b) CMP_(unsigned long long, a, >=, b)
#define UGT(a, b) CMP_(unsigned long long, a, >, b)
#define IGE(a, b) CMP_(long long, a, >=, b)
#define TRUE(c) CMP_(int, !!(c), ==, 1)

#define K 1024ull
#define M (1024ull * 1024ull)

static const uint64_t chunks[] = { 4 * K, 16 * K, 64 * K, 256 * K, 1 * M };
#define NCHUNKS (sizeof(chunks) / sizeof(chunks[0]))

/* xorshift64*: fixed seed, reproducible */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}
static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void mk(struct layout_geom *g, enum layout_level level, unsigned alg, unsigned copies,
	       unsigned n, uint64_t chunk)
{
	memset(g, 0, sizeof(*g));
	g->level = level;
	g->alg = alg;
	g->copies = copies;
	g->members = n;
	g->chunk = chunk;
}

static void init_ok(struct layout_geom *g)
{
	char err[256] = "";
	int r = layout_init(g, err, sizeof(err));
	if (r != 0)
		ck_abort_msg("layout_init %s n=%u: %s", layout_level_name(g->level), g->members, err);
}

/* ---- generic inverse checks ---- */

/* in-chunk offsets worth probing */
static void probes(uint64_t chunk, uint64_t x[3])
{
	x[0] = 0;
	x[1] = chunk - 1;
	x[2] = 1 + rnd_below(chunk - 2);
}

/* forward then inverse for every chunk and copy, and inverse then forward for
 * every member row: inverse(forward(x)) == x both ways */
static void check_roundtrip(const struct layout_geom *g)
{
	uint64_t nch = (g->capacity + g->chunk - 1) / g->chunk, x[3], logical;
	unsigned copies = layout_copies(g), copy;
	struct layout_extent e;

	IEQ(layout_locate(g, g->capacity, 0, &e), -EINVAL);
	IEQ(layout_locate(g, 0, copies, &e), -EINVAL);
	for (uint64_t c = 0; c < nch; c++) {
		probes(g->chunk, x);
		for (unsigned i = 0; i < 3; i++) {
			uint64_t off = c * g->chunk + x[i];
			if (off >= g->capacity)
				continue;
			for (unsigned k = 0; k < copies; k++) {
				IEQ(layout_locate(g, off, k, &e), 0);
				UEQ(e.logical, off);
				UEQ(e.copy, k);
				UGT(e.length, 0);
				ULE(off + e.length, g->capacity);
				IEQ(layout_unmap(g, e.member, e.offset, &logical, &copy),
						 LAYOUT_DATA);
				UEQ(logical, off);
				UEQ(copy, k);
			}
		}
	}
	for (unsigned m = 0; m < g->members; m++) {
		uint64_t used = g->level == LAYOUT_LINEAR ? (g->member_size[m] & ~4095ull) : g->member_used;
		for (uint64_t row = 0; row * g->chunk < used; row++) {
			uint64_t moff = row * g->chunk + rnd_below(g->chunk);
			if (moff >= used)
				continue;
			int r = layout_unmap(g, m, moff, &logical, &copy);
			if (r == -ENOENT)
				continue;
			if (r != LAYOUT_DATA)
				continue; /* parity: checked against the model */
			IEQ(layout_locate(g, logical, copy, &e), 0);
			UEQ(e.member, m);
			UEQ(e.offset, moff);
		}
		IEQ(layout_unmap(g, m, used, &logical, &copy), -ENOENT);
	}
	IEQ(layout_unmap(g, g->members, 0, &logical, &copy), -EINVAL);
}

/* ---- parity levels: literal model ---- */

#define CELL_EMPTY (-9)
#define CELL_P (-1)
#define CELL_Q (-2)

/* One stripe, filled the way the md docs describe it: put P where the rotation
 * says, Q on the member after P, then pour data indexes 0, 1, ... into the
 * empty cells, in member order (asymmetric, parity-first/last) or starting
 * right after the parity and wrapping (symmetric). */
static void model_stripe(enum layout_level level, unsigned alg, unsigned n, uint64_t s, int *cells)
{
	unsigned pc = level == LAYOUT_RAID6 ? 2 : 1, dd = n - pc, p, start = 0, j = 0;
	int symmetric = 0;

	if (level == LAYOUT_RAID4)
		alg = LAYOUT_PARITY_N;
	for (unsigned m = 0; m < n; m++)
		cells[m] = CELL_EMPTY;
	switch (alg) {
	case LAYOUT_LEFT_ASYMMETRIC:
		p = n - 1 - (unsigned)(s % n);
		break;
	case LAYOUT_LEFT_SYMMETRIC:
		p = n - 1 - (unsigned)(s % n);
		symmetric = 1;
		break;
	case LAYOUT_RIGHT_ASYMMETRIC:
		p = (unsigned)(s % n);
		break;
	case LAYOUT_RIGHT_SYMMETRIC:
		p = (unsigned)(s % n);
		symmetric = 1;
		break;
	case LAYOUT_PARITY_0:
		p = 0;
		break;
	default:
		p = dd;
		break;
	}
	cells[p] = CELL_P;
	if (pc == 2)
		cells[(p + 1) % n] = CELL_Q;
	if (symmetric)
		start = (p + pc) % n;
	for (unsigned i = 0; i < n; i++) {
		unsigned m = (start + i) % n;
		if (cells[m] == CELL_EMPTY)
			cells[m] = (int)j++;
	}
}

static void check_parity_stripe(const struct layout_geom *g, uint64_t s)
{
	int cells[LAYOUT_MAX_MEMBERS];
	unsigned dd = g->data_members, copy;
	struct layout_stripe st;
	struct layout_extent e;
	uint64_t x[3], logical;

	model_stripe(g->level, g->alg, g->members, s, cells);
	layout_stripe(g, s, &st);
	UEQ(st.stripe, s);
	UEQ(st.member_offset, s * g->chunk);
	UEQ(st.logical, s * dd * g->chunk);
	IEQ(cells[st.p], CELL_P);
	if (g->level == LAYOUT_RAID6)
		IEQ(cells[st.q], CELL_Q);
	else
		IEQ(st.q, -1);
	probes(g->chunk, x);
	for (unsigned m = 0; m < g->members; m++) {
		for (unsigned i = 0; i < 3; i++) {
			uint64_t moff = s * g->chunk + x[i];
			int r = layout_unmap(g, m, moff, &logical, &copy);
			if (cells[m] >= 0) {
				unsigned j = (unsigned)cells[m];
				uint64_t off = (s * dd + j) * g->chunk + x[i];
				UEQ(st.data[j], m);
				IEQ(r, LAYOUT_DATA);
				UEQ(logical, off);
				IEQ(layout_locate(g, off, 0, &e), 0);
				UEQ(e.member, m);
				UEQ(e.offset, moff);
				UEQ(e.length, g->chunk - x[i]);
			} else {
				IEQ(r, cells[m] == CELL_P ? LAYOUT_P : LAYOUT_Q);
				UEQ(logical, s * dd * g->chunk + x[i]);
			}
		}
	}
}

static const struct {
	enum layout_level level;
	unsigned alg;
} parity_algs[] = {
	{ LAYOUT_RAID4, LAYOUT_LEFT_ASYMMETRIC }, /* raid4 forces parity-last */
	{ LAYOUT_RAID5, LAYOUT_LEFT_ASYMMETRIC }, { LAYOUT_RAID5, LAYOUT_RIGHT_ASYMMETRIC },
	{ LAYOUT_RAID5, LAYOUT_LEFT_SYMMETRIC },  { LAYOUT_RAID5, LAYOUT_RIGHT_SYMMETRIC },
	{ LAYOUT_RAID5, LAYOUT_PARITY_0 },        { LAYOUT_RAID5, LAYOUT_PARITY_N },
	{ LAYOUT_RAID6, LAYOUT_LEFT_ASYMMETRIC }, { LAYOUT_RAID6, LAYOUT_RIGHT_ASYMMETRIC },
	{ LAYOUT_RAID6, LAYOUT_LEFT_SYMMETRIC },  { LAYOUT_RAID6, LAYOUT_RIGHT_SYMMETRIC },
	{ LAYOUT_RAID6, LAYOUT_PARITY_0 },        { LAYOUT_RAID6, LAYOUT_PARITY_N },
};
#define NPARITY_ALGS (sizeof(parity_algs) / sizeof(parity_algs[0]))

START_TEST(parity_vs_model)
{
	const enum layout_level level = parity_algs[_i].level;
	const unsigned alg = parity_algs[_i].alg;

	for (unsigned n = layout_min_members(level); n <= 16; n++) {
		for (unsigned ci = 0; ci < NCHUNKS; ci++) {
			struct layout_geom g;
			uint64_t ch = chunks[ci], rows = n + 1 + ci;
			unsigned small = (unsigned)rnd_below(n);

			mk(&g, level, alg, 0, n, ch);
			for (unsigned m = 0; m < n; m++)
				g.member_size[m] = (rows + 3 + m) * ch + rnd_below(ch);
			g.member_size[small] = rows * ch + rnd_below(ch); /* the smallest rules */
			init_ok(&g);
			UEQ(g.alg, level == LAYOUT_RAID4 ? LAYOUT_PARITY_N : alg);
			UEQ(g.data_members, n - (level == LAYOUT_RAID6 ? 2 : 1));
			UEQ(g.stripes, rows);
			UEQ(g.member_used, rows * ch);
			UEQ(g.capacity, rows * g.data_members * ch);
			for (uint64_t s = 0; s < rows; s++)
				check_parity_stripe(&g, s);
			check_roundtrip(&g);
		}
		/* huge members: stripes far beyond 2^32 */
		if (n <= 8) {
			struct layout_geom g;
			mk(&g, level, alg, 0, n, 64 * K);
			for (unsigned m = 0; m < n; m++)
				g.member_size[m] = 1ull << 60;
			init_ok(&g);
			UEQ(g.capacity, (1ull << 60) * g.data_members);
			for (unsigned i = 0; i < 50; i++)
				check_parity_stripe(&g, g.stripes - 1 - rnd_below(1ull << 40));
		}
	}
}
END_TEST

/* ---- raid0, raid1, linear, single ---- */

/* Q's coefficients in md's order (raid5.c raid6_d0 / raid6_idx_to_slot): walk
 * the members from the one after Q, wrapping; the data members get slots 0, 1,
 * ... as they come. Found here from layout_unmap's roles, independently of
 * layout_stripe; plus one stripe written out by hand. */
START_TEST(raid6_q_slots_md)
{
	for (unsigned a = 0; a < NPARITY_ALGS; a++) {
		if (parity_algs[a].level != LAYOUT_RAID6)
			continue;
		for (unsigned n = 4; n <= 9; n++) {
			struct layout_geom g = { .level = LAYOUT_RAID6, .alg = parity_algs[a].alg, .members = n,
						 .chunk = 4096 };
			char err[128];
			for (unsigned m = 0; m < n; m++)
				g.member_size[m] = 4096ull * 3 * n;
			ck_assert_msg(layout_init(&g, err, sizeof(err)) == 0, "%s", err);
			for (uint64_t st = 0; st < g.stripes; st++) {
				struct layout_stripe s;
				layout_stripe(&g, st, &s);
				unsigned d0 = (unsigned)s.q == n - 1 ? 0 : (unsigned)s.q + 1, slot = 0, natural = 1;
				for (unsigned i = 0; i < n; i++) {
					unsigned m = (d0 + i) % n, copy;
					uint64_t logical;
					int role = layout_unmap(&g, m, st * g.chunk, &logical, &copy);
					if (role != LAYOUT_DATA)
						continue;
					unsigned j = (unsigned)((logical - s.logical) / g.chunk);
					ck_assert_msg(s.data[j] == m && s.qslot[j] == slot, "%s n=%u stripe %llu: data %u on member %u "
						      "has slot %u, md's %u", layout_alg_name(&g), n, (unsigned long long)st, j, m,
						      s.qslot[j], slot);
					natural &= j == slot;
					slot++;
				}
				ck_assert_uint_eq(slot, n - 2);
				ck_assert_int_eq(s.q_natural, (int)natural);
				if (g.alg >= LAYOUT_LEFT_SYMMETRIC)
					ck_assert(s.q_natural); /* data follows Q: md's order is the data order */
			}
		}
	}
	/* left-asymmetric, 5 members, stripe 2: D6 D7 P Q D8 -> D8 g^0, D6 g^1, D7 g^2 */
	struct layout_geom g = { .level = LAYOUT_RAID6, .alg = LAYOUT_LEFT_ASYMMETRIC, .members = 5, .chunk = 4096 };
	char err[128];
	for (unsigned m = 0; m < 5; m++)
		g.member_size[m] = 4096 * 8;
	ck_assert_msg(layout_init(&g, err, sizeof(err)) == 0, "%s", err);
	struct layout_stripe s;
	layout_stripe(&g, 2, &s);
	ck_assert(s.p == 2 && s.q == 3 && s.data[0] == 0 && s.data[1] == 1 && s.data[2] == 4);
	ck_assert(s.qslot[0] == 1 && s.qslot[1] == 2 && s.qslot[2] == 0 && !s.q_natural);
	ck_assert_ptr_eq(layout_q_slots(&s), s.qslot);
	layout_stripe(&g, 0, &s); /* P on the last member, Q wraps to member 0: data order */
	ck_assert(s.q == 0 && s.q_natural && layout_q_slots(&s) == NULL);
}
END_TEST

START_TEST(raid0_vs_model)
{
	for (unsigned n = 1; n <= 16; n++) {
		for (unsigned ci = 0; ci < NCHUNKS; ci++) {
			struct layout_geom g;
			uint64_t ch = chunks[ci], rows = 3 + n % 4, c = 0;
			struct layout_extent e;

			mk(&g, LAYOUT_RAID0, 0, 0, n, ch);
			for (unsigned m = 0; m < n; m++)
				g.member_size[m] = (rows + m % 2) * ch + rnd_below(ch);
			init_ok(&g);
			UEQ(g.capacity, rows * n * ch);
			UEQ(g.data_members, n);
			/* grid filled row by row */
			for (uint64_t r = 0; r < rows; r++) {
				for (unsigned m = 0; m < n; m++, c++) {
					IEQ(layout_locate(&g, c * ch + 5, 0, &e), 0);
					UEQ(e.member, m);
					UEQ(e.offset, r * ch + 5);
					UEQ(e.length, ch - 5);
				}
			}
			check_roundtrip(&g);
		}
	}
}
END_TEST

START_TEST(raid1_vs_model)
{
	for (unsigned n = 2; n <= 16; n++) {
		struct layout_geom g;
		struct layout_extent e;

		mk(&g, LAYOUT_RAID1, 0, 0, n, 64 * K);
		for (unsigned m = 0; m < n; m++)
			g.member_size[m] = 10 * M - m * 1000;
		init_ok(&g);
		UEQ(g.copies, n);
		UEQ(layout_copies(&g), n);
		UEQ(g.capacity, (10 * M - (n - 1) * 1000) / (64 * K) * 64 * K);
		for (unsigned k = 0; k < n; k++) {
			uint64_t off = rnd_below(g.capacity);
			IEQ(layout_locate(&g, off, k, &e), 0);
			UEQ(e.member, k);
			UEQ(e.offset, off);
			UEQ(e.copy, k);
			UEQ(e.length, 64 * K - off % (64 * K));
		}
		check_roundtrip(&g);
	}
}
END_TEST

START_TEST(linear_and_single)
{
	for (unsigned n = 1; n <= 16; n++) {
		struct layout_geom g;
		struct layout_extent e;
		uint64_t sizes[16], base = 0;

		mk(&g, LAYOUT_LINEAR, 0, 0, n, 0);
		for (unsigned m = 0; m < n; m++) {
			g.member_size[m] = 4 * K + rnd_below(300 * K);
			sizes[m] = g.member_size[m] / (4 * K) * (4 * K);
		}
		init_ok(&g);
		for (unsigned m = 0; m < n; m++) {
			/* first, some middle and last byte of each member */
			uint64_t in[3] = { 0, rnd_below(sizes[m]), sizes[m] - 1 };
			for (unsigned i = 0; i < 3; i++) {
				IEQ(layout_locate(&g, base + in[i], 0, &e), 0);
				UEQ(e.member, m);
				UEQ(e.offset, in[i]);
				UEQ(e.length, sizes[m] - in[i]);
			}
			base += sizes[m];
		}
		UEQ(g.capacity, base);
		check_roundtrip(&g);
	}
	{
		struct layout_geom g;
		struct layout_extent e;

		mk(&g, LAYOUT_SINGLE, 0, 0, 1, 4 * K);
		g.member_size[0] = 1 * M + 100;
		init_ok(&g);
		UEQ(g.capacity, 1 * M);
		IEQ(layout_locate(&g, 12345, 0, &e), 0);
		UEQ(e.member, 0);
		UEQ(e.offset, 12345);
		UEQ(e.length, 1 * M - 12345);
		check_roundtrip(&g);
	}
}
END_TEST

/* ---- raid10: copies laid into a grid ---- */

#define R10_ROWS 64
struct r10_cell {
	int64_t c; /* -1: empty */
	unsigned k;
};

/* Fill the member grid the way md's docs draw it; returns capacity in chunks. */
static uint64_t model_r10(unsigned alg, unsigned n, unsigned kc, uint64_t mc,
			  struct r10_cell grid[R10_ROWS][16])
{
	uint64_t cap = 0;

	for (unsigned r = 0; r < R10_ROWS; r++)
		for (unsigned m = 0; m < 16; m++)
			grid[r][m].c = -1;
	if (alg == LAYOUT_R10_NEAR) {
		/* row-major, each chunk written kc times in a row, whole chunks only */
		uint64_t pos = 0;
		for (; pos + kc <= mc * n; cap++)
			for (unsigned k = 0; k < kc; k++, pos++)
				grid[pos / n][pos % n] = (struct r10_cell){ (int64_t)cap, k };
	} else if (alg == LAYOUT_R10_FAR) {
		/* section 0 is raid0; section k is section 0 shifted right k members */
		uint64_t s = mc / kc;
		for (uint64_t r = 0; r < s; r++)
			for (unsigned m = 0; m < n; m++)
				grid[r][m] = (struct r10_cell){ (int64_t)(r * n + m), 0 };
		for (unsigned k = 1; k < kc; k++)
			for (uint64_t r = 0; r < s; r++)
				for (unsigned m = 0; m < n; m++)
					grid[k * s + r][(m + k) % n] = (struct r10_cell){ grid[r][m].c, k };
		cap = s * n;
	} else {
		/* each raid0 row followed by kc-1 copies of it, shifted right 1, 2, ... */
		uint64_t groups = mc / kc;
		for (uint64_t gi = 0; gi < groups; gi++)
			for (unsigned k = 0; k < kc; k++)
				for (unsigned m = 0; m < n; m++)
					grid[gi * kc + k][(m + k) % n] =
						(struct r10_cell){ (int64_t)(gi * n + m), k };
		cap = groups * n;
	}
	return cap;
}

START_TEST(raid10_vs_model)
{
	static struct r10_cell grid[R10_ROWS][16];
	const unsigned alg = (unsigned)_i;

	for (unsigned n = 2; n <= 16; n++) {
		for (unsigned kc = 2; kc <= n; kc++) {
			for (unsigned ci = 0; ci < 2; ci++) {
				uint64_t ch = chunks[ci * 2], mc = 2 * kc + 1 + (n + kc) % 3, cap;
				struct layout_geom g;
				struct layout_extent e;
				uint64_t logical;
				unsigned copy;

				mk(&g, LAYOUT_RAID10, alg, kc, n, ch);
				for (unsigned m = 0; m < n; m++)
					g.member_size[m] = (mc + m % 3) * ch + rnd_below(ch);
				g.member_size[n - 1] = mc * ch;
				init_ok(&g);
				cap = model_r10(alg, n, kc, mc, grid);
				UEQ(g.capacity, cap * ch);
				UEQ(layout_copies(&g), kc);
				ULE(g.member_used, mc * ch);
				for (uint64_t r = 0; r < mc; r++) {
					for (unsigned m = 0; m < n; m++) {
						uint64_t x = rnd_below(ch), moff = r * ch + x;
						int rr = layout_unmap(&g, m, moff, &logical, &copy);
						if (grid[r][m].c < 0) {
							IEQ(rr, -ENOENT);
							continue;
						}
						ULT(moff, g.member_used);
						IEQ(rr, LAYOUT_DATA);
						UEQ(logical, (uint64_t)grid[r][m].c * ch + x);
						UEQ(copy, grid[r][m].k);
						IEQ(layout_locate(&g, logical, copy, &e), 0);
						UEQ(e.member, m);
						UEQ(e.offset, moff);
						UEQ(e.length, ch - x);
					}
				}
				check_roundtrip(&g);

				/* survives: every chunk keeps a present copy (brute force over masks) */
				if (n <= 8) {
					for (uint64_t mask = 0; mask < (1ull << n); mask++) {
						int alive = 1;
						for (uint64_t c = 0; c < cap && alive; c++) {
							int any = 0;
							for (uint64_t r = 0; r < mc; r++)
								for (unsigned m = 0; m < n; m++)
									if (grid[r][m].c == (int64_t)c &&
									    !(mask >> m & 1))
										any = 1;
							alive = any;
						}
						IEQ(!!layout_survives(&g, mask), alive);
					}
				}
			}
		}
	}
}
END_TEST

/* ---- capacity, survives, init errors ---- */

START_TEST(capacity_table)
{
	static const struct {
		enum layout_level level;
		unsigned alg, copies, n;
		uint64_t chunk, size, capacity, used;
	} t[] = {
		{ LAYOUT_RAID5, 2, 0, 4, 64 * K, 1 * M + 5000, 3 * M, 1 * M },
		{ LAYOUT_RAID6, 2, 0, 6, 64 * K, 1 * M, 4 * M, 1 * M },
		{ LAYOUT_RAID4, 0, 0, 3, 4 * K, 40 * K, 80 * K, 40 * K },
		{ LAYOUT_RAID0, 0, 0, 1, 512 * K, 1 * M + 1, 1 * M, 1 * M },
		{ LAYOUT_RAID1, 0, 0, 3, 64 * K, 100 * K, 64 * K, 64 * K },
		/* near: 5 chunks x 3 members / 2 copies = 7 chunks; 14 positions = 5 rows */
		{ LAYOUT_RAID10, LAYOUT_R10_NEAR, 2, 3, 4 * K, 20 * K, 28 * K, 20 * K },
		{ LAYOUT_RAID10, LAYOUT_R10_NEAR, 2, 4, 4 * K, 20 * K, 40 * K, 20 * K },
		{ LAYOUT_RAID10, LAYOUT_R10_NEAR, 3, 4, 4 * K, 16 * K, 20 * K, 16 * K },
		/* far: sections of 5/2 = 2 rows, 2 x 3 = 6 chunks */
		{ LAYOUT_RAID10, LAYOUT_R10_FAR, 2, 3, 4 * K, 20 * K, 24 * K, 16 * K },
		{ LAYOUT_RAID10, LAYOUT_R10_OFFSET, 3, 3, 4 * K, 20 * K, 12 * K, 12 * K },
		{ LAYOUT_SINGLE, 0, 0, 1, 0, 600 * K, 512 * K, 512 * K }, /* chunk 0 = 512K */
		{ LAYOUT_RAID1, 0, 0, 2, 4 * K, (1ull << 62) + 77, 1ull << 62, 1ull << 62 },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct layout_geom g;
		mk(&g, t[i].level, t[i].alg, t[i].copies, t[i].n, t[i].chunk);
		for (unsigned m = 0; m < t[i].n; m++)
			g.member_size[m] = t[i].size;
		init_ok(&g);
		ck_assert_msg(g.capacity == t[i].capacity, "case %u: capacity %llu", i,
			      (unsigned long long)g.capacity);
		ck_assert_msg(g.member_used == t[i].used, "case %u: used %llu", i,
			      (unsigned long long)g.member_used);
	}
}
END_TEST

START_TEST(survives_table)
{
	static const struct {
		enum layout_level level;
		unsigned alg, copies, n;
		uint64_t mask;
		int ok;
	} t[] = {
		{ LAYOUT_SINGLE, 0, 0, 1, 0, 1 },    { LAYOUT_SINGLE, 0, 0, 1, 1, 0 },
		{ LAYOUT_SINGLE, 0, 0, 1, 2, 1 },    /* bits past the members are ignored */
		{ LAYOUT_LINEAR, 0, 0, 3, 4, 0 },    { LAYOUT_LINEAR, 0, 0, 3, 8, 1 },
		{ LAYOUT_RAID0, 0, 0, 4, 0, 1 },     { LAYOUT_RAID0, 0, 0, 4, 1, 0 },
		{ LAYOUT_RAID0, 0, 0, 4, 1ull << 63, 1 },
		{ LAYOUT_RAID1, 0, 0, 3, 3, 1 },     { LAYOUT_RAID1, 0, 0, 3, 7, 0 },
		{ LAYOUT_RAID10, 0, 2, 4, 0x5, 1 },  { LAYOUT_RAID10, 0, 2, 4, 0x3, 0 },
		{ LAYOUT_RAID10, 0, 2, 3, 0x1, 1 },  { LAYOUT_RAID10, 0, 2, 3, 0x5, 0 },
		{ LAYOUT_RAID10, 1, 2, 4, 0x5, 1 },  { LAYOUT_RAID10, 1, 2, 4, 0x9, 0 },
		{ LAYOUT_RAID10, 2, 2, 4, 0x5, 1 },  { LAYOUT_RAID10, 2, 2, 4, 0x9, 0 },
		{ LAYOUT_RAID10, 0, 3, 4, 0x3, 1 },  { LAYOUT_RAID10, 0, 3, 4, 0x7, 0 },
		{ LAYOUT_RAID4, 0, 0, 3, 4, 1 },     { LAYOUT_RAID5, 2, 0, 5, 0x10, 1 },
		{ LAYOUT_RAID5, 2, 0, 5, 0x11, 0 },  { LAYOUT_RAID6, 2, 0, 5, 0x11, 1 },
		{ LAYOUT_RAID6, 2, 0, 5, 0x13, 0 },  { LAYOUT_RAID6, 2, 0, 4, 0x30, 1 },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct layout_geom g;
		mk(&g, t[i].level, t[i].alg, t[i].copies, t[i].n, 64 * K);
		for (unsigned m = 0; m < t[i].n; m++)
			g.member_size[m] = 4 * M;
		init_ok(&g);
		ck_assert_msg(!!layout_survives(&g, t[i].mask) == t[i].ok, "case %u", i);
	}
}
END_TEST

START_TEST(init_errors)
{
	static const struct {
		int level;
		unsigned alg, copies, n;
		uint64_t chunk, size;
		int bad;          /* member index given bad_size, or -1 */
		uint64_t bad_size;
		const char *want; /* substring of the message */
	} t[] = {
		{ LAYOUT_RAID6, 2, 0, 3, 64 * K, M, -1, 0, "raid6 needs at least 4 members, got 3" },
		{ LAYOUT_RAID5, 2, 0, 2, 64 * K, M, -1, 0, "raid5 needs at least 3 members, got 2" },
		{ LAYOUT_RAID1, 0, 0, 1, 64 * K, M, -1, 0, "raid1 needs at least 2 members, got 1" },
		{ LAYOUT_RAID0, 0, 0, 0, 64 * K, M, -1, 0, "raid0 needs at least 1 member, got 0" },
		{ LAYOUT_RAID0, 0, 0, 65, 64 * K, M, -1, 0, "raid0 supports at most 64 members, got 65" },
		{ LAYOUT_SINGLE, 0, 0, 2, 64 * K, M, -1, 0, "single needs exactly 1 member, got 2" },
		{ LAYOUT_RAID5, 2, 0, 4, 3000, M, -1, 0, "chunk 3000: not a power of two" },
		{ LAYOUT_RAID5, 2, 0, 4, 2 * K, M, -1, 0, "chunk 2K: below the 4K minimum" },
		{ LAYOUT_RAID0, 0, 0, 4, 2 * K * M, M, -1, 0, "chunk 2G: above the 1G maximum" },
		{ LAYOUT_RAID5, 2, 0, 4, 64 * K, M, 2, 1536,
		  "member 2 (1536 bytes) is smaller than one chunk (64K)" },
		{ LAYOUT_LINEAR, 0, 0, 3, 0, M, 1, 100, "member 1 (100 bytes) is smaller than 4K" },
		{ LAYOUT_RAID10, 0, 5, 4, 64 * K, M, -1, 0, "raid10 copies 5 exceeds the 4 members" },
		{ LAYOUT_RAID10, 0, 1, 4, 64 * K, M, -1, 0, "raid10 needs at least 2 copies, got 1" },
		{ LAYOUT_RAID10, 7, 2, 4, 64 * K, M, -1, 0, "unknown raid10 layout 7" },
		{ LAYOUT_RAID10, 1, 3, 3, 64 * K, 4 * M, 1, 128 * K,
		  "member 1 (128K) is too small for 3 copies of chunk 64K" },
		{ LAYOUT_RAID5, 9, 0, 4, 64 * K, M, -1, 0, "unknown raid5 layout 9" },
		{ LAYOUT_RAID6, 6, 0, 4, 64 * K, M, -1, 0, "unknown raid6 layout 6" },
		{ 42, 0, 0, 4, 64 * K, M, -1, 0, "unknown level 42" },
		{ LAYOUT_RAID0, 0, 0, 64, 64 * K, 1ull << 62, -1, 0, "capacity overflows" },
		/* fits in 64 bits but not in an off_t */
		{ LAYOUT_RAID0, 0, 0, 3, 64 * K, 1ull << 62, -1, 0, "capacity overflows" },
		{ LAYOUT_RAID5, 2, 0, 4, 64 * K, 1ull << 62, -1, 0, "capacity overflows" },
		{ LAYOUT_RAID10, 0, 2, 5, 64 * K, 1ull << 62, -1, 0, "capacity overflows" },
		{ LAYOUT_RAID6, 2, 0, 64, 4 * K, 1ull << 62, -1, 0, "capacity overflows" },
		{ LAYOUT_RAID10, 0, 2, 64, 4 * K, 1ull << 62, -1, 0, "capacity overflows" },
		{ LAYOUT_LINEAR, 0, 0, 3, 0, 1ull << 62, -1, 0, "capacity overflows" },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct layout_geom g;
		char err[256] = "";
		mk(&g, (enum layout_level)t[i].level, t[i].alg, t[i].copies, t[i].n, t[i].chunk);
		for (unsigned m = 0; m < t[i].n && m < LAYOUT_MAX_MEMBERS; m++)
			g.member_size[m] = m == (unsigned)t[i].bad ? t[i].bad_size : t[i].size;
		IEQ(layout_init(&g, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, t[i].want), "case %u: got '%s', want '%s'", i, err, t[i].want);
		UEQ(g.capacity, 0);
	}
	/* a NULL err buffer is fine */
	struct layout_geom g;
	mk(&g, LAYOUT_RAID6, 0, 0, 2, 64 * K);
	IEQ(layout_init(&g, NULL, 0), -EINVAL);
}
END_TEST

/* ---- names ---- */

START_TEST(names_roundtrip)
{
	static const struct {
		const char *s;
		enum layout_level level;
	} lv[] = {
		{ "single", LAYOUT_SINGLE }, { "linear", LAYOUT_LINEAR }, { "raid0", LAYOUT_RAID0 },
		{ "raid1", LAYOUT_RAID1 },   { "raid10", LAYOUT_RAID10 }, { "raid4", LAYOUT_RAID4 },
		{ "raid5", LAYOUT_RAID5 },   { "raid6", LAYOUT_RAID6 },   { "0", LAYOUT_RAID0 },
		{ "1", LAYOUT_RAID1 },       { "4", LAYOUT_RAID4 },       { "5", LAYOUT_RAID5 },
		{ "6", LAYOUT_RAID6 },       { "10", LAYOUT_RAID10 },     { "stripe", LAYOUT_RAID0 },
		{ "mirror", LAYOUT_RAID1 },  { "RAID5", LAYOUT_RAID5 },
	};
	static const unsigned minm[] = { 1, 1, 1, 2, 2, 3, 3, 4 };
	enum layout_level l;
	unsigned alg, copies;
	char err[256];

	for (unsigned i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		IEQ(layout_parse_level(lv[i].s, &l), 0);
		IEQ(l, lv[i].level);
	}
	for (unsigned i = 0; i <= LAYOUT_RAID6; i++) {
		IEQ(layout_parse_level(layout_level_name((enum layout_level)i), &l), 0);
		IEQ(l, (int)i);
		UEQ(layout_min_members((enum layout_level)i), minm[i]);
	}
	IEQ(layout_parse_level("raid7", &l), -EINVAL);
	IEQ(layout_parse_level("", &l), -EINVAL);
	IEQ(layout_parse_level_msg("raid7", &l, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'raid7'"));

	/* raid5/6: every algorithm, long and short names */
	static const char *const shorts[] = { "la", "ra", "ls", "rs" };
	for (unsigned lev = LAYOUT_RAID5; lev <= LAYOUT_RAID6; lev++) {
		for (unsigned a = 0; a <= LAYOUT_PARITY_N; a++) {
			struct layout_geom g;
			mk(&g, (enum layout_level)lev, a, 0, 4, 64 * K);
			IEQ(layout_parse_alg((enum layout_level)lev, layout_alg_name(&g), &alg,
							  NULL), 0);
			UEQ(alg, a);
			if (a < 4) {
				IEQ(layout_parse_alg((enum layout_level)lev, shorts[a], &alg, NULL), 0);
				UEQ(alg, a);
			}
		}
		UEQ(layout_default_alg((enum layout_level)lev), LAYOUT_LEFT_SYMMETRIC);
		IEQ(layout_parse_alg((enum layout_level)lev, "", &alg, NULL), 0);
		UEQ(alg, LAYOUT_LEFT_SYMMETRIC);
	}
	IEQ(layout_parse_alg_msg(LAYOUT_RAID5, "zigzag", &alg, NULL, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "unknown raid5 layout 'zigzag' (left-asymmetric, right-asymmetric, "
			      "left-symmetric, right-symmetric, parity-first, parity-last)");
	IEQ(layout_parse_alg(LAYOUT_RAID4, "parity-last", &alg, NULL), 0);
	UEQ(alg, LAYOUT_PARITY_N);
	IEQ(layout_parse_alg(LAYOUT_RAID4, "left-symmetric", &alg, NULL), -EINVAL);
	IEQ(layout_parse_alg(LAYOUT_RAID0, "ls", &alg, NULL), -EINVAL);
	IEQ(layout_parse_alg(LAYOUT_RAID0, "", &alg, NULL), 0);

	/* raid10: nK fK oK set copies; names round trip */
	static const struct {
		const char *s;
		unsigned alg, copies;
	} r10[] = { { "n2", 0, 2 }, { "f2", 1, 2 }, { "o3", 2, 3 }, { "N4", 0, 4 },
		    { "n64", 0, 64 }, { "far", 1, 2 }, { "offset", 2, 2 } };
	for (unsigned i = 0; i < sizeof(r10) / sizeof(r10[0]); i++) {
		struct layout_geom g;
		copies = 0;
		IEQ(layout_parse_alg(LAYOUT_RAID10, r10[i].s, &alg, &copies), 0);
		UEQ(alg, r10[i].alg);
		UEQ(copies, r10[i].copies);
		mk(&g, LAYOUT_RAID10, alg, copies, 4, 64 * K);
		IEQ(layout_parse_alg(LAYOUT_RAID10, layout_alg_name(&g), &alg, &copies), 0);
		UEQ(alg, r10[i].alg);
		UEQ(copies, r10[i].copies);
	}
	static const char *const bad10[] = { "n", "n1", "n65", "x2", "n2x", "2" };
	for (unsigned i = 0; i < sizeof(bad10) / sizeof(bad10[0]); i++)
		ck_assert_msg(layout_parse_alg(LAYOUT_RAID10, bad10[i], &alg, &copies) == -EINVAL,
			      "accepted '%s'", bad10[i]);
	{
		struct layout_geom g;
		mk(&g, LAYOUT_RAID10, 0, 0, 4, 64 * K);
		ck_assert_str_eq(layout_alg_name(&g), "n2"); /* copies 0 = default 2 */
		mk(&g, LAYOUT_RAID0, 0, 0, 4, 64 * K);
		ck_assert_str_eq(layout_alg_name(&g), "");
		IEQ(layout_is_parity(&g), 0);
		UEQ(layout_parity_count(&g), 0);
		mk(&g, LAYOUT_RAID6, 0, 0, 4, 64 * K);
		IEQ(layout_is_parity(&g), 1);
		UEQ(layout_parity_count(&g), 2);
	}
}
END_TEST

/* ---- plans: the teaching examples ---- */

static void geom_parity(struct layout_geom *g, enum layout_level level, unsigned n, uint64_t chunk)
{
	mk(g, level, LAYOUT_LEFT_SYMMETRIC, 0, n, chunk);
	for (unsigned m = 0; m < n; m++)
		g->member_size[m] = 64 * chunk;
	init_ok(g);
}

static unsigned count_role(const struct layout_io *v, unsigned n, enum layout_role role)
{
	unsigned c = 0;
	for (unsigned i = 0; i < n; i++)
		c += v[i].role == role;
	return c;
}

START_TEST(plan_examples)
{
	struct layout_geom g;
	static struct layout_plan p;
	const struct layout_write_opts prefer = { .rmw_level = LAYOUT_RMW_PREFER },
				       never = { .rmw_level = LAYOUT_RMW_DISABLE };

	/* raid5 n=4, 4 KiB inside one chunk: md counts 2 (old D1, P) against 2
	 * (D0, D2); the tie goes to reconstruct-write (rmw_level 1) */
	geom_parity(&g, LAYOUT_RAID5, 4, 64 * K);
	IEQ(layout_plan_write(&g, 64 * K + 8 * K, 4 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nbands, 1);
	UEQ(p.band[0].rmw, 2);
	UEQ(p.band[0].rcw, 2);
	UEQ(p.nreads, 2);
	UEQ(p.nwrites, 2);
	UEQ(p.read_bytes, 8 * K);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_P), 0);
	UEQ(p.reads[0].member, p.s.data[0]);
	UEQ(p.reads[1].member, p.s.data[2]);
	UEQ(p.reads[0].in_chunk, 8 * K);
	UEQ(p.span_lo, 8 * K);
	UEQ(p.span_hi, 12 * K);
	/* rmw_level 2: the tie goes to read-modify-write: old D + P */
	IEQ(layout_plan_write(&g, 64 * K + 8 * K, 4 * K, 0, &prefer, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RMW);
	UEQ(p.nreads, 2);
	UEQ(p.reads[0].member, p.s.data[1]);
	IEQ(p.reads[0].mode, LAYOUT_PLAN_RMW);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_P), 1);

	/* raid5 n=5: 2 (old D, P) beat 3 (the other data): read-modify-write */
	geom_parity(&g, LAYOUT_RAID5, 5, 64 * K);
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RMW);
	UEQ(p.band[0].rmw, 2);
	UEQ(p.band[0].rcw, 3);
	UEQ(p.nreads, 2);
	/* rmw_level 0: reconstruct-write whatever it reads */
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, &never, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 3);

	/* a 64 KiB chunk written whole on raid5 n=4: every 4 KiB row is a tie,
	 * so the other two columns are read (bytes would have tied too) */
	geom_parity(&g, LAYOUT_RAID5, 4, 64 * K);
	IEQ(layout_plan_write(&g, 64 * K, 64 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 2);
	UEQ(p.read_bytes, 128 * K);

	/* raid5 n=4, aligned full stripe of 192 KiB: FULL, no reads, 4 writes */
	IEQ(layout_plan_write(&g, 192 * K, 192 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_FULL);
	UEQ(p.nreads, 0);
	UEQ(p.read_bytes, 0);
	UEQ(p.nwrites, 4);
	UEQ(p.s.stripe, 1);
	for (unsigned i = 0; i < 4; i++) {
		UEQ(p.writes[i].offset, 64 * K);
		UEQ(p.writes[i].length, 64 * K);
	}

	/* the end of D0 and the start of D1: only the rows written get I/O,
	 * the 56 KiB between them none (the parity is written twice, 4 KiB each) */
	IEQ(layout_plan_write(&g, 60 * K, 8 * K, 0, NULL, &p), 0);
	UEQ(p.nbands, 2);
	UEQ(p.band[0].lo, 0);
	UEQ(p.band[0].hi, 4 * K);
	UEQ(p.band[1].lo, 60 * K);
	UEQ(count_role(p.writes, p.nwrites, LAYOUT_P), 2);
	UEQ(p.read_bytes, 16 * K);

	/* raid5 with the written column's member failed: RCW, data write skipped */
	IEQ(layout_plan_write(&g, 64 * K + 4 * K, 4 * K, 1ull << 1, NULL, &p), 0);
	UEQ(p.s.data[1], 1); /* stripe 0 of left-symmetric: D0 D1 D2 P */
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 2);
	UEQ(p.nwrites, 1);
	IEQ(p.writes[0].role, LAYOUT_P);
	for (unsigned i = 0; i < p.nreads; i++)
		UNE(p.reads[i].member, 1);

	/* raid6 n=6, 4 KiB: RMW 3 (D, P, Q) ties RCW 3: reconstruct-write */
	geom_parity(&g, LAYOUT_RAID6, 6, 64 * K);
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 3);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_DATA), 3);
	UEQ(p.nwrites, 3);
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, &prefer, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RMW);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_DATA), 1);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_P), 1);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_Q), 1);
	/* n=7: RMW 3 beats RCW 4 */
	geom_parity(&g, LAYOUT_RAID6, 7, 64 * K);
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RMW);

	/* raid6 n=4, 4 KiB: RMW would read 3, RCW reads the other data column */
	geom_parity(&g, LAYOUT_RAID6, 4, 64 * K);
	IEQ(layout_plan_write(&g, 4 * K, 4 * K, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 1);
	UEQ(p.read_bytes, 4 * K);
	UEQ(p.nwrites, 3);

	/* raid6 n=4, all but the first and last byte of the stripe: the two
	 * partial rows read a byte each (RCW), the rows between nothing (FULL) */
	IEQ(layout_plan_write(&g, 1, 128 * K - 2, 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_MIXED);
	UEQ(p.nbands, 3);
	IEQ(p.band[0].mode, LAYOUT_PLAN_RCW);
	IEQ(p.band[1].mode, LAYOUT_PLAN_FULL);
	IEQ(p.band[2].mode, LAYOUT_PLAN_RCW);
	UEQ(p.nreads, 2);
	UEQ(p.reads[0].in_chunk, 0);
	UEQ(p.reads[0].length, 1);
	UEQ(p.reads[1].in_chunk, 64 * K - 1);
	UEQ(p.reads[1].length, 1);

	/* raid5 n=4, D0 missing, write across D0's end and D1's start: D1's row
	 * by read-modify-write, D0's by reconstruct-write from D1 and D2 */
	geom_parity(&g, LAYOUT_RAID5, 4, 64 * K);
	IEQ(layout_plan_write(&g, 60 * K, 8 * K, 1ull << 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_MIXED);
	UEQ(p.nreads, 4);
	UEQ(p.nwrites, 3); /* D1, P twice */
	for (unsigned i = 0; i < p.nreads; i++)
		UNE(p.reads[i].member, 0);
	/* a partial write to the missing column: neither way reads what it
	 * needs, so the stripe is rebuilt */
	IEQ(layout_plan_write(&g, 0, 2 * K, 1ull << 0, NULL, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RECONSTRUCT);
	UEQ(p.nlost, 1);
	UEQ(p.lost[0], 0);
	UEQ(p.nreads, 3); /* D1, D2, P over the span */

	/* too many failures, bad requests */
	IEQ(layout_plan_write(&g, 0, 4 * K, 0x3, NULL, &p), -EIO);
	IEQ(layout_plan_write(&g, 190 * K, 4 * K, 0, NULL, &p), -EINVAL); /* crosses */
	IEQ(layout_plan_write(&g, 0, 0, 0, NULL, &p), -EINVAL);
	IEQ(layout_plan_write(&g, g.capacity, 4 * K, 0, NULL, &p), -EINVAL);

	/* reads: plain, then degraded */
	IEQ(layout_plan_read(&g, 60 * K, 8 * K, 0, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_READ);
	UEQ(p.nreads, 2);
	UEQ(p.read_bytes, 8 * K);
	IEQ(layout_plan_read(&g, 4 * K, 4 * K, 1ull << 0, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RECONSTRUCT);
	UEQ(p.nlost, 1);
	UEQ(p.nreads, 3); /* D1, D2, P over [4K, 8K) */
	UEQ(p.read_bytes, 12 * K);
	/* a failure that the read does not touch needs nothing */
	IEQ(layout_plan_read(&g, 4 * K, 4 * K, 1ull << 2, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_READ);
	IEQ(layout_plan_read(&g, 4 * K, 4 * K, 0x3, &p), -EIO);

	/* raid6: reads need Q only when P cannot do it alone */
	geom_parity(&g, LAYOUT_RAID6, 6, 64 * K);
	IEQ(layout_plan_read(&g, 0, 4 * K, 1ull << g.data_members, &p), 0);
	UEQ(p.s.data[0], 1); /* stripe 0 left-symmetric: Q D0 D1 D2 D3 P */
	IEQ(layout_plan_read(&g, 0, 4 * K, 1ull << 1, &p), 0);
	IEQ(p.mode, LAYOUT_PLAN_RECONSTRUCT);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_Q), 0);
	IEQ(layout_plan_read(&g, 0, 4 * K, (1ull << 1) | (1ull << 5), &p), 0);
	UEQ(count_role(p.reads, p.nreads, LAYOUT_Q), 1);
	UEQ(p.nlost, 2);
	UEQ(p.lost[0], 0);
	UEQ(p.lost[1], g.data_members); /* P */
	IEQ(layout_plan_read(&g, 0, 4 * K, (1ull << 1) | (1ull << 3), &p), 0);
	UEQ(p.nlost, 2);
	UEQ(p.lost[1], 2); /* D2 is missing too: recovery needs it marked */
	UEQ(count_role(p.reads, p.nreads, LAYOUT_Q), 1);

	/* non-parity levels have no plans */
	mk(&g, LAYOUT_RAID0, 0, 0, 2, 64 * K);
	g.member_size[0] = g.member_size[1] = M;
	init_ok(&g);
	IEQ(layout_plan_write(&g, 0, 4 * K, 0, NULL, &p), -EINVAL);
}
END_TEST

/* ---- plans: random requests against byte-by-byte counts ---- */

#define PCH 16384u  /* four 4 KiB rows per chunk */
#define PROWS (PCH / LAYOUT_PAGE)
#define PCOLS (16 + 2)
static unsigned char want_w[PCOLS][PCH], got_r[PCOLS][PCH], got_w[PCOLS][PCH];

static unsigned col_of(const struct layout_geom *g, const struct layout_plan *p,
		       const struct layout_io *io)
{
	uint64_t s0 = p->s.stripe * g->chunk;

	UGE(io->offset, s0);
	ULE(io->offset + io->length, s0 + g->chunk);
	UGT(io->length, 0);
	UEQ(io->in_chunk, io->offset - s0);
	if (io->role == LAYOUT_P) {
		IEQ((int)io->member, p->s.p);
		return g->data_members;
	}
	if (io->role == LAYOUT_Q) {
		IEQ((int)io->member, p->s.q);
		return g->data_members + 1;
	}
	IGE(io->index, 0);
	UEQ(io->member, p->s.data[io->index]);
	return (unsigned)io->index;
}

static void mark(unsigned char map[PCOLS][PCH], unsigned col, const struct layout_io *io)
{
	for (uint64_t b = io->in_chunk; b < io->in_chunk + io->length; b++) {
		if (map[col][b])
			ck_abort_msg("byte %llu of column %u twice", (unsigned long long)b, col);
		map[col][b] = 1;
	}
}

/* lost = exactly the missing columns, in order; a parity block read for each
 * lost data column */
static void check_lost(const struct layout_plan *p, const unsigned *colm, unsigned ncol,
		       unsigned dd, uint64_t failed)
{
	unsigned missing = 0, have_parity = 0, nl = 0;

	for (unsigned c = 0; c < ncol; c++) {
		if (failed >> colm[c] & 1) {
			ULT(nl, p->nlost);
			UEQ(p->lost[nl], c);
			nl++;
			missing += c < dd;
		}
	}
	UEQ(nl, p->nlost);
	for (unsigned c = dd; c < ncol; c++)
		have_parity += got_r[c][p->span_lo] != 0;
	UGE(have_parity, missing);
	UGT(missing, 0);
}

/* md's choice for one 4 KiB row, from the byte map (handle_stripe_dirtying:
 * rmw counts each written column and the parity, rcw each column not wholly
 * overwritten; one that cannot be read counts 2 x members). -1: the row has
 * nothing written (no I/O unless dense). *blocked: the mode needs a missing
 * member. */
static int row_mode(unsigned row, unsigned dd, unsigned ncol, unsigned n, const unsigned *colm, uint64_t failed,
		    enum layout_rmw level, int dense, int *blocked)
{
	unsigned rmw = 0, rcw = 0, any = 0;
	for (unsigned j = 0; j < dd; j++) {
		unsigned w = 0, cost = (failed >> colm[j] & 1) ? 2 * n : 1;
		for (unsigned b = row * LAYOUT_PAGE; b < (row + 1) * LAYOUT_PAGE; b++)
			w += want_w[j][b];
		rmw += w ? cost : 0;
		rcw += w == LAYOUT_PAGE ? 0 : cost;
		any |= w != 0;
	}
	for (unsigned c = dd; c < ncol; c++)
		rmw += (failed >> colm[c] & 1) ? 2 * n : 1;
	if (!any && !dense)
		return -1;
	int mode = level == LAYOUT_RMW_DISABLE || rcw < rmw || (rcw == rmw && level != LAYOUT_RMW_PREFER)
			   ? (rcw ? LAYOUT_PLAN_RCW : LAYOUT_PLAN_FULL)
			   : LAYOUT_PLAN_RMW;
	*blocked |= (mode == LAYOUT_PLAN_RMW ? rmw : mode == LAYOUT_PLAN_RCW ? rcw : 0) >= 2 * n;
	return mode;
}

static void random_plan(const struct layout_geom *g, uint64_t failed)
{
	static struct layout_plan p;
	unsigned dd = g->data_members, pc = layout_parity_count(g), ncol = dd + pc;
	uint64_t sbytes = (uint64_t)dd * PCH, s = rnd_below(g->stripes);
	uint64_t start, len, lo = PCH, hi = 0, sum = 0;
	unsigned colm[PCOLS];
	int rmode[PROWS], blocked = 0, mode = -1, r;
	int nfail = __builtin_popcountll(failed & ((1ull << g->members) - 1));
	struct layout_write_opts o = { .rmw_level = (enum layout_rmw)rnd_below(3), .dense = rnd_below(4) == 0 };

	switch (rnd_below(4)) {
	case 0: /* whole pages */
		start = rnd_below(sbytes / LAYOUT_PAGE) * LAYOUT_PAGE;
		len = (1 + rnd_below((sbytes - start) / LAYOUT_PAGE)) * LAYOUT_PAGE;
		break;
	case 1: /* small, inside one chunk */
		start = rnd_below(sbytes - 1);
		len = 1 + rnd_below(PCH - start % PCH);
		break;
	case 2: /* ends a byte or two off chunk boundaries */
		start = rnd_below(dd) * PCH + rnd_below(3);
		len = rnd_below(dd + 1) * PCH - rnd_below(3);
		len = len > start && len - start <= sbytes - start ? len - start : 1;
		break;
	default:
		start = rnd_below(sbytes);
		len = 1 + rnd_below(sbytes - start);
		break;
	}
	layout_stripe(g, s, &p.s);
	for (unsigned j = 0; j < dd; j++)
		colm[j] = p.s.data[j];
	colm[dd] = (unsigned)p.s.p;
	if (pc == 2)
		colm[dd + 1] = (unsigned)p.s.q;

	/* expected: byte maps, span, each row's mode */
	memset(want_w, 0, sizeof(want_w));
	for (uint64_t b = start; b < start + len; b++) {
		want_w[b / PCH][b % PCH] = 1;
		lo = b % PCH < lo ? b % PCH : lo;
		hi = b % PCH + 1 > hi ? b % PCH + 1 : hi;
	}
	for (unsigned row = 0; row < PROWS; row++) {
		int in = row * LAYOUT_PAGE < hi && (row + 1) * LAYOUT_PAGE > lo;
		rmode[row] = in ? row_mode(row, dd, ncol, g->members, colm, failed, o.rmw_level, o.dense, &blocked) : -1;
		if (rmode[row] >= 0)
			mode = mode < 0 || mode == rmode[row] ? rmode[row] : LAYOUT_PLAN_MIXED;
	}
	if (blocked)
		mode = LAYOUT_PLAN_RECONSTRUCT;

	r = layout_plan_write(g, s * sbytes + start, len, failed, &o, &p);
	if ((unsigned)nfail > pc) {
		IEQ(r, -EIO);
		return;
	}
	IEQ(r, 0);
	UEQ(p.span_lo, lo);
	UEQ(p.span_hi, hi);
	ck_assert_msg((int)p.mode == mode, "mode %d want %d (level %d, dense %d)", p.mode, mode, o.rmw_level, o.dense);

	memset(got_r, 0, sizeof(got_r));
	memset(got_w, 0, sizeof(got_w));
	for (unsigned i = 0; i < p.nreads; i++) {
		if (failed >> p.reads[i].member & 1)
			ck_abort_msg("read from failed member");
		mark(got_r, col_of(g, &p, &p.reads[i]), &p.reads[i]);
		sum += p.reads[i].length;
	}
	UEQ(sum, p.read_bytes);
	for (unsigned i = 0; i < p.nwrites; i++) {
		if (failed >> p.writes[i].member & 1)
			ck_abort_msg("write to failed member");
		mark(got_w, col_of(g, &p, &p.writes[i]), &p.writes[i]);
	}
	for (unsigned c = 0; c < ncol; c++) {
		int present = !(failed >> colm[c] & 1);
		for (uint64_t b = 0; b < PCH; b++) {
			int in_span = b >= lo && b < hi, rm = rmode[b / LAYOUT_PAGE];
			/* parity: over the span where the row is planned (all of it rebuilt) */
			int wr = c < dd ? want_w[c][b] : in_span && (blocked || rm >= 0);
			int rd;
			IEQ(got_w[c][b], present && wr);
			if (blocked) { /* every present data column over the span; parity as needed */
				if (c >= dd)
					continue;
				rd = present && in_span;
			} else if (!in_span || rm < 0 || rm == LAYOUT_PLAN_FULL) {
				rd = 0;
			} else if (rm == LAYOUT_PLAN_RMW) {
				rd = present && (c < dd ? want_w[c][b] : 1);
			} else {
				rd = c < dd && !want_w[c][b];
			}
			if (got_r[c][b] != rd)
				ck_abort_msg("mode %d row mode %d column %u byte %llu: read %d want %d", mode, rm, c,
					     (unsigned long long)b, got_r[c][b], rd);
		}
	}
	if (mode == LAYOUT_PLAN_RECONSTRUCT)
		check_lost(&p, colm, ncol, dd, failed);

	/* the same request as a read */
	r = layout_plan_read(g, s * sbytes + start, len, failed, &p);
	IEQ(r, 0);
	memset(got_r, 0, sizeof(got_r));
	for (unsigned i = 0; i < p.nreads; i++) {
		TRUE(!(failed >> p.reads[i].member & 1));
		mark(got_r, col_of(g, &p, &p.reads[i]), &p.reads[i]);
	}
	int touched_missing = 0;
	for (unsigned j = 0; j < dd; j++)
		if (failed >> colm[j] & 1)
			for (uint64_t b = lo; b < hi; b++)
				touched_missing |= want_w[j][b];
	IEQ(p.mode, touched_missing ? LAYOUT_PLAN_RECONSTRUCT : LAYOUT_PLAN_READ);
	UEQ(p.span_lo, lo);
	UEQ(p.span_hi, hi);
	if (touched_missing)
		check_lost(&p, colm, ncol, dd, failed);
	else
		UEQ(p.nlost, 0);
	for (unsigned j = 0; j < dd; j++)
		for (uint64_t b = 0; b < PCH; b++)
			IEQ(got_r[j][b], touched_missing
				? !(failed >> colm[j] & 1) && b >= lo && b < hi
				: want_w[j][b]);
}

START_TEST(plan_random)
{
	for (unsigned it = 0; it < 1500; it++) {
		unsigned a = (unsigned)rnd_below(NPARITY_ALGS);
		enum layout_level level = parity_algs[a].level;
		unsigned n = layout_min_members(level) + (unsigned)rnd_below(16 - layout_min_members(level) + 1);
		unsigned pc = level == LAYOUT_RAID6 ? 2 : 1, nf = (unsigned)rnd_below(pc + 2);
		struct layout_geom g;
		uint64_t failed = 0;

		if (rnd_below(3) == 0)
			nf = 0;
		mk(&g, level, parity_algs[a].alg, 0, n, PCH);
		for (unsigned m = 0; m < n; m++)
			g.member_size[m] = 8 * PCH;
		init_ok(&g);
		while ((unsigned)__builtin_popcountll(failed) < nf)
			failed |= 1ull << rnd_below(n);
		random_plan(&g, failed | (1ull << 63)); /* bits past the members are ignored */
	}
}
END_TEST

/* ---- drawing ---- */

START_TEST(draw_raid5)
{
	static const char *const want[] = {
		"raid5 left-symmetric (md layout 2), 4 members, chunk 64K, 3 data + 1 parity per stripe",
		"0 0 D0 D1 D2 P",
		"1 64K D4 D5 P D3",
		"2 128K D8 P D6 D7",
		"3 192K P D9 D10 D11",
	};
	struct layout_geom g;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	unsigned found = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	geom_parity(&g, LAYOUT_RAID5, 4, 64 * K);
	layout_draw(f, &g, 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, want[0]));
	ck_assert_ptr_nonnull(strstr(buf, "m0"));
	ck_assert_ptr_nonnull(strstr(buf, "m3"));
	ck_assert_ptr_nonnull(strstr(buf, "P = XOR"));
	/* compare rows word by word, whatever the column widths */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char norm[256] = "", *w, *s2 = NULL;
		for (w = strtok_r(line, " ", &s2); w; w = strtok_r(NULL, " ", &s2)) {
			if (norm[0])
				strcat(norm, " ");
			strncat(norm, w, sizeof(norm) - strlen(norm) - 2);
		}
		for (unsigned i = 1; i < 5; i++)
			if (strcmp(norm, want[i]) == 0)
				found |= 1u << i;
	}
	UEQ(found, 0x1e);
	free(buf);

	/* every level draws something sane, raid10 marks copies, no stripe 4 by default */
	static const struct {
		enum layout_level level;
		unsigned alg, copies, n;
		const char *want;
	} t[] = {
		{ LAYOUT_RAID10, 0, 2, 4, "D0'" },   { LAYOUT_RAID10, 1, 3, 5, "D4''" },
		{ LAYOUT_RAID10, 2, 2, 3, "D2'" },   { LAYOUT_RAID6, 2, 0, 6, "Q" },
		{ LAYOUT_RAID4, 0, 0, 4, "raid4" },  { LAYOUT_LINEAR, 0, 0, 3, "m2" },
		{ LAYOUT_RAID1, 0, 0, 3, "3 copies" }, { LAYOUT_RAID0, 0, 0, 1, "D3" },
		{ LAYOUT_SINGLE, 0, 0, 1, "single" },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		mk(&g, t[i].level, t[i].alg, t[i].copies, t[i].n, 64 * K);
		for (unsigned m = 0; m < t[i].n; m++)
			g.member_size[m] = 2 * M;
		init_ok(&g);
		buf = NULL;
		f = open_memstream(&buf, &len);
		layout_draw(f, &g, 0);
		fclose(f);
		ck_assert_msg(strstr(buf, t[i].want), "case %u: no '%s' in\n%s", i, t[i].want, buf);
		free(buf);
	}
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, parity_vs_model, 0, NPARITY_ALGS);
	tcase_add_test(tc, raid0_vs_model);
	tcase_add_test(tc, raid6_q_slots_md);
	tcase_add_test(tc, raid1_vs_model);
	tcase_add_test(tc, linear_and_single);
	tcase_add_loop_test(tc, raid10_vs_model, 0, 3);
	tcase_add_test(tc, capacity_table);
	tcase_add_test(tc, survives_table);
	tcase_add_test(tc, init_errors);
	tcase_add_test(tc, names_roundtrip);
	tcase_add_test(tc, plan_examples);
	tcase_add_test(tc, plan_random);
	tcase_add_test(tc, draw_raid5);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(layout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
