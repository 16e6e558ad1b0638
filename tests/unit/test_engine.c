/* test_engine: the engine on memory members, deterministic (no sleeps).
 *
 * Table-driven: a request on a fresh volume of each level family gives
 * exactly the member operations (op, member, offset, length, why) the
 * mapping promises, healthy and degraded; data round trips on every level;
 * a member error is retried on what survives; a resync counts and repairs;
 * a fail asked for keeps the last copy unless forced; write-mostly, write-behind
 * and failfast (md's slow-leg answers).
 * The members themselves (fault filters, NBD) are test_members.c's.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats/stats.h"
#include "fsvol/core/failfast.h"
#include "fsvol/core/write_behind.h"
#include "tests/unit/unit_vol.h"

/* A member operation as the trace records it. */
struct op {
	int dev, op;
	uint64_t off, len;
	int why;
};

static int op_cmp(const void *a, const void *b)
{
	const struct op *x = a, *y = b;
	if (x->op != y->op)
		return x->op - y->op;
	if (x->dev != y->dev)
		return x->dev - y->dev;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Run fn and collect the member operations it caused, sorted. */
static size_t traced(struct vol *v, int (*fn)(struct vol *, void *), void *arg, struct op *out, size_t max, int *res)
{
	struct stats_trace_rec recs[256];
	uint64_t cursor = atomic_load(&v->trace->head);
	size_t n = 0;
	stats_trace_enable(v->trace, 1);
	*res = fn(v, arg);
	stats_trace_enable(v->trace, 0);
	size_t got = stats_trace_read(v->trace, &cursor, recs, 256);
	for (size_t i = 0; i < got && n < max; i++)
		if (recs[i].dev >= 0 && !stats_why_meta(recs[i].why)) /* the metadata's: test_meta_counted */
			out[n++] = (struct op){ recs[i].dev, recs[i].op, recs[i].offset, recs[i].length, recs[i].why };
	qsort(out, n, sizeof(out[0]), op_cmp);
	return n;
}

struct io_arg {
	int op;
	uint64_t off, len;
};

static int do_io(struct vol *v, void *arg)
{
	struct io_arg *a = arg;
	static uint8_t buf[1 << 20] __attribute__((aligned(4096)));
	if (a->op == STATS_READ)
		return engine_read(v, buf, a->off, a->len);
	if (a->op == STATS_WRITE)
		return engine_write(v, buf, a->off, a->len);
	return engine_flush(v);
}

enum { R = STATS_READ, W = STATS_WRITE, F = STATS_FLUSH };
enum { D = STATS_WHY_DATA, PR = STATS_WHY_PARITY_READ, PW = STATS_WHY_PARITY_WRITE, OLD = STATS_WHY_OLD_DATA,
       REC = STATS_WHY_RECONSTRUCT, MIR = STATS_WHY_MIRROR, AL = STATS_WHY_ALIGN };

static const struct plan_case {
	const char *name, *level;
	unsigned n;
	int fail;             /* member failed before the request, -1: none */
	struct io_arg io;
	unsigned nops;
	struct op ops[8];     /* sorted: op, member, offset */
} plan_cases[] = {
	/* md's count per 4 KiB row: old D + P (2) ties the other two columns (2),
	 * and a tie goes to reconstruct-write (rmw_level 1) */
	{ "raid5 x4 4K write reads the other columns", "raid5", 4, -1, { W, 0, 4096 }, 4,
	  { { 1, R, 0, 4096, D }, { 2, R, 0, 4096, D }, { 0, W, 0, 4096, D }, { 3, W, 0, 4096, PW } } },
	/* 2 (old D, P) beat 3: read-modify-write */
	{ "raid5 x5 4K write reads old D and P", "raid5", 5, -1, { W, 0, 4096 }, 4,
	  { { 0, R, 0, 4096, OLD }, { 4, R, 0, 4096, PR }, { 0, W, 0, 4096, D }, { 4, W, 0, 4096, PW } } },
	/* 3 data columns: reading the 2 others (RCW) beats old D, P and Q (RMW) */
	{ "raid6 x5 4K write reads the other columns", "raid6", 5, -1, { W, 0, 4096 }, 5,
	  { { 2, R, 0, 4096, D }, { 3, R, 0, 4096, D }, { 0, W, 0, 4096, PW }, { 1, W, 0, 4096, D },
	    { 4, W, 0, 4096, PW } } },
	/* 4 data columns: RMW's 3 reads tie RCW's 3, and ties go to RCW */
	{ "raid6 x6 4K write reads the other columns", "raid6", 6, -1, { W, 0, 4096 }, 6,
	  { { 2, R, 0, 4096, D }, { 3, R, 0, 4096, D }, { 4, R, 0, 4096, D },
	    { 0, W, 0, 4096, PW }, { 1, W, 0, 4096, D }, { 5, W, 0, 4096, PW } } },
	/* 5 data columns: RMW's 3 beat RCW's 4 */
	{ "raid6 x7 4K write reads old D, P and Q", "raid6", 7, -1, { W, 0, 4096 }, 6,
	  { { 0, R, 0, 4096, PR }, { 1, R, 0, 4096, OLD }, { 6, R, 0, 4096, PR },
	    { 0, W, 0, 4096, PW }, { 1, W, 0, 4096, D }, { 6, W, 0, 4096, PW } } },
	{ "raid5 full-stripe write reads nothing", "raid5", 4, -1, { W, 0, 192 * K }, 4,
	  { { 0, W, 0, 64 * K, D }, { 1, W, 0, 64 * K, D }, { 2, W, 0, 64 * K, D }, { 3, W, 0, 64 * K, PW } } },
	{ "raid0 read across a chunk edge", "raid0", 2, -1, { R, 60 * K, 8192 }, 2,
	  { { 0, R, 60 * K, 4096, D }, { 1, R, 0, 4096, D } } },
	{ "raid1 write goes to both copies", "raid1", 2, -1, { W, 0, 4096 }, 2,
	  { { 0, W, 0, 4096, D }, { 1, W, 0, 4096, MIR } } },
	{ "raid10 near read takes one copy", "raid10", 4, -1, { R, 0, 4096 }, 1, { { 0, R, 0, 4096, D } } },
	{ "linear read of the second member", "linear", 2, -1, { R, 8 * 1024 * K, 4096 }, 1, { { 1, R, 0, 4096, D } } },
	{ "single unaligned write merges its block", "single", 1, -1, { W, 100, 512 }, 2,
	  { { 0, R, 0, 4096, AL }, { 0, W, 0, 4096, D } } },
	{ "raid1 flush reaches every member", "raid1", 2, -1, { F, 0, 0 }, 2, { { 0, F, 0, 0, D }, { 1, F, 0, 0, D } } },
	{ "degraded raid5 read rebuilds from the rest", "raid5", 4, 0, { R, 0, 4096 }, 3,
	  { { 1, R, 0, 4096, REC }, { 2, R, 0, 4096, REC }, { 3, R, 0, 4096, REC } } },
	{ "degraded raid5 write to a lost column", "raid5", 4, 0, { W, 0, 4096 }, 3,
	  { { 1, R, 0, 4096, D }, { 2, R, 0, 4096, D }, { 3, W, 0, 4096, PW } } },
	{ "degraded raid1 write skips the lost copy", "raid1", 2, 0, { W, 0, 4096 }, 1, { { 1, W, 0, 4096, MIR } } },
};

/* The recovery checkpoint is saved as member bytes and read back as logical
 * bytes (docs/format.md). Against brute force, at every unit boundary: every
 * row below the saved value holds only units already rebuilt (on every
 * member), the value read back is never ahead (exact where a unit is one
 * row: raid1, raid4/5/6), and every unit below it has all its copies below
 * the saved value. */
static const struct { const char *level, *alg; unsigned n; int exact; } ckpt_cases[] = {
	{ "raid1", NULL, 2, 1 },   { "raid4", NULL, 4, 1 },  { "raid5", NULL, 4, 1 },  { "raid6", NULL, 5, 1 },
	{ "raid10", "n2", 4, 0 },  { "raid10", "n2", 3, 0 }, { "raid10", "n3", 5, 0 }, { "raid10", "f2", 4, 0 },
	{ "raid10", "o2", 3, 0 },
};

START_TEST(test_checkpoint_units)
{
	struct vol *v = mkvol_alg(ckpt_cases[_i].level, ckpt_cases[_i].alg, ckpt_cases[_i].n, 64 * K);
	const struct layout_geom *g = &v->geom;
	uint64_t total = engine_resync_units(v), rows = g->member_used / g->chunk, off, len;
	for (uint64_t u = 0; u <= total; u++) {
		uint64_t l = u == total ? g->capacity : (engine_unit_range(v, u, &off, &len), off);
		uint64_t m = vol_rebuild_to_member(v, l), back = vol_rebuild_from_member(v, m);
		ck_assert_uint_le(m, g->member_used);
		ck_assert_uint_eq(m % g->chunk, 0);
		ck_assert_msg(back <= l, "%s: unit %llu: %llu -> %llu -> %llu is ahead", ckpt_cases[_i].level,
			      (unsigned long long)u, (unsigned long long)l, (unsigned long long)m, (unsigned long long)back);
		if (ckpt_cases[_i].exact)
			ck_assert_uint_eq(back, l);
		for (unsigned k = 0; k < g->members; k++)
			for (uint64_t r = 0; r < m / g->chunk && r < rows; r++) {
				uint64_t logical;
				unsigned copy;
				int t = layout_unmap(g, k, r * g->chunk, &logical, &copy);
				ck_assert_msg(t < 0 || logical < l, "%s: member %u row %llu holds %llu, not below %llu",
					      ckpt_cases[_i].level, k, (unsigned long long)r, (unsigned long long)logical,
					      (unsigned long long)l);
			}
		for (uint64_t w = 0; w < total && (engine_unit_range(v, w, &off, &len), off < back); w++) {
			for (unsigned c = 0; c < layout_copies(g); c++) {
				struct layout_extent e;
				ck_assert_int_eq(layout_locate(g, off, c, &e), 0);
				ck_assert_uint_lt(e.offset / g->chunk, m / g->chunk);
			}
		}
	}
	vol_close(v);
}
END_TEST

START_TEST(test_plans)
{
	const struct plan_case *c = &plan_cases[_i];
	struct vol *v = mkvol(c->level, c->n, 64 * K);
	struct op got[64];
	int res;
	if (c->fail >= 0)
		vol_fail_slot(v, (unsigned)c->fail, -EIO);
	size_t n = traced(v, do_io, (void *)&c->io, got, 64, &res);
	ck_assert_msg(res == 0, "%s: %d", c->name, res);
	ck_assert_msg(n == c->nops, "%s: %zu member ops, want %u", c->name, n, c->nops);
	for (size_t i = 0; i < n; i++) {
		const struct op *w = &c->ops[i];
		ck_assert_msg(got[i].dev == w->dev && got[i].op == w->op && got[i].off == w->off && got[i].len == w->len &&
				      got[i].why == w->why,
			      "%s: op %zu is (m%d op %d off %llu len %llu why %d), want (m%d op %d off %llu len %llu why %d)",
			      c->name, i, got[i].dev, got[i].op, (unsigned long long)got[i].off,
			      (unsigned long long)got[i].len, got[i].why, w->dev, w->op, (unsigned long long)w->off,
			      (unsigned long long)w->len, w->why);
	}
	vol_close(v);
}
END_TEST

/* ---- data round trips ---- */

static const struct { const char *level; unsigned n; } levels[] = {
	{ "single", 1 }, { "linear", 3 }, { "raid0", 3 }, { "raid1", 3 },
	{ "raid10", 4 }, { "raid4", 4 }, { "raid5", 5 }, { "raid6", 6 },
};

/* Odd offsets and lengths, written then read back; then again degraded. */
START_TEST(test_roundtrip)
{
	struct vol *v = mkvol(levels[_i].level, levels[_i].n, 16 * K);
	uint64_t cap = v->geom.capacity;
	static uint8_t a[3 << 20], b[3 << 20];
	const struct { uint64_t off, len; } ios[] = {
		{ 0, 4096 }, { 100, 5000 }, { 16 * K - 512, 1024 }, { 1 << 20, 2 << 20 }, { 77777, 300000 },
		{ cap - 8193, 8192 }, { cap - 1, 1 },
	};
	fill(a, sizeof(a), _i + 1);
	for (size_t k = 0; k < sizeof(ios) / sizeof(ios[0]); k++)
		ck_assert_int_eq(engine_write(v, a + k * 4099, ios[k].off, ios[k].len), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < sizeof(ios) / sizeof(ios[0]); k++) {
			/* the second write overlaps the first: compare what stays */
			if (k == 0)
				continue;
			memset(b, 0xee, ios[k].len);
			ck_assert_int_eq(engine_read(v, b + 3, ios[k].off, ios[k].len), 0);
			ck_assert_msg(!memcmp(b + 3, a + k * 4099, ios[k].len), "%s pass %d io %zu differs",
				      levels[_i].level, pass, k);
		}
		/* then lose what the level can spare, and read it all again */
		unsigned spare = !strcmp(levels[_i].level, "raid6") ? 2 : strstr("raid1 raid10 raid4 raid5", levels[_i].level) ? 1 : 0;
		if (!spare)
			break;
		for (unsigned m = 0; m < spare; m++)
			vol_fail_slot(v, m, -EIO);
	}
	vol_close(v);
}
END_TEST

/* ---- retry after a member error ---- */

START_TEST(test_retry_read_error)
{
	struct vol *v = mkvol("raid5", 4, 64 * K);
	static uint8_t a[256 * K], b[256 * K];
	fill(a, sizeof(a), 7);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	set_fault(v, 1, "error=read");
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	/* the member cannot read its superblock either: not sector-local, so the
	 * metadata thread fails it instead of listing bad blocks (bbl_vol.c) */
	for (int i = 0; i < 10000 && strcmp(vol_slot_state(v, 1), "failed"); i++)
		usleep(1000);
	ck_assert_str_eq(vol_slot_state(v, 1), "failed");
	ck_assert(layout_survives(&v->geom, atomic_load(&v->failed)));
	vol_close(v);
}
END_TEST

/* A sector-local error is listed (md's bad block log): the member stays, the
 * data comes from parity, writes go around it, the list holds the block. */
START_TEST(test_read_error_listed)
{
	struct vol *v = mkvol("raid5", 4, 64 * K);
	static uint8_t a[512 * K], b[512 * K];
	fill(a, sizeof(a), 9);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	set_fault(v, 1, "badw=0+4K"); /* member 1's first block: data of stripe 0 */
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert_str_eq(vol_slot_state(v, 1), "active");
	ck_assert_uint_ge(vol_bad_blocks(v, 1, NULL), 1);
	fill(a, sizeof(a), 10);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	memset(b, 0, sizeof(b));
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert_str_eq(vol_slot_state(v, 1), "active");
	vol_close(v);
}
END_TEST

/* md_error's rule: a write acknowledged after a member failed under it is
 * on superblocks that record the failure (the metadata thread wrote them
 * before the acknowledgement went out). */
START_TEST(test_ack_after_failure_superblock)
{
	struct vol *v = mkvol("raid1", 3, 64 * K);
	static uint8_t a[128 * K];
	fill(a, sizeof(a), 3);
	set_fault(v, 2, "error=write");
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	ck_assert_str_eq(vol_slot_state(v, 2), "failed");
	uint64_t done = atomic_load(&v->sb_seq_done), want = atomic_load(&v->sb_seq_want);
	ck_assert_msg(done >= want, "acknowledged with superblock change %llu of %llu written", (unsigned long long)done,
		      (unsigned long long)want);
	for (unsigned i = 0; i < 2; i++) {
		struct sb_candidate c = { 0 };
		ck_assert_int_eq(vol_read_sb(v->slot[i], &c), 0);
		ck_assert_int_eq(c.read_error, 0);
		ck_assert_msg(c.sb.slots[2].state == SB_FAILED, "member %u's superblock records slot 2 as %s", i,
			      sb_state_name(c.sb.slots[2].state));
	}
	vol_close(v);
}
END_TEST

START_TEST(test_beyond_redundancy)
{
	struct vol *v = mkvol("raid0", 2, 64 * K);
	static uint8_t b[128 * K];
	set_fault(v, 0, "error=all");
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), -EIO);
	vol_close(v);
}
END_TEST

/* ---- resync ---- */

START_TEST(test_resync_counts_and_repairs)
{
	struct vol *v = mkvol("raid5", 4, 64 * K);
	static uint8_t a[192 * K];
	uint64_t bad = 0, skipped = 0;
	fill(a, sizeof(a), 5);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	/* spoil the parity of stripe 0 behind the engine's back */
	ck_assert_int_eq(member_pwrite(v->slot[3], a, 4096, v->data_offset), 0);
	ck_assert_int_eq(engine_resync(v, 0, 0, &bad, &skipped), 0);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(engine_resync(v, 0, 1, &bad, &skipped), 0);
	bad = 0;
	ck_assert_int_eq(engine_resync(v, 0, 0, &bad, &skipped), 0);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(skipped, 0);
	/* degraded: a stripe with a lost data column cannot be checked, and says so */
	vol_fail_slot(v, 0, -EIO);
	ck_assert_int_eq(engine_resync(v, 0, 0, &bad, &skipped), 0);
	ck_assert_uint_eq(skipped, 1);
	vol_close(v);
}
END_TEST

/* ---- a fail asked for: md's policy (vol_fail_request) ---- */

START_TEST(test_fail_request_keeps_last_copy)
{
	struct vol *v = mkvol("raid1", 2, 64 * K);
	char err[256];
	ck_assert_int_eq(vol_fail_request(v, 2, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "slot 2"));
	ck_assert_int_eq(vol_fail_request(v, 0, 0, err, sizeof(err)), 0);
	ck_assert_str_eq(vol_slot_state(v, 0), "failed");
	/* the last copy: refused, naming the level and the member, nothing changed */
	err[0] = 0;
	ck_assert_int_eq(vol_fail_request(v, 1, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "raid1 cannot serve its data without member 1"));
	ck_assert_str_ne(vol_slot_state(v, 1), "failed");
	/* failing one already failed changes nothing and is no error */
	ck_assert_int_eq(vol_fail_request(v, 0, 0, err, sizeof(err)), 0);
	/* forced: done, and the volume has failed */
	ck_assert_int_eq(vol_fail_request(v, 1, 1, err, sizeof(err)), 0);
	ck_assert_str_eq(vol_slot_state(v, 1), "failed");
	ck_assert(!layout_survives(&v->geom, atomic_load(&v->failed)));
	vol_close(v);
}
END_TEST

/* ---- md's slow legs: write-mostly, write-behind, failfast ---- */

/* A raid1 of n memory members with md's device flags and write-behind. */
static struct vol *mkvol_flags(const char *level, unsigned n, const uint8_t *flags, unsigned write_behind)
{
	char names[4][64], *paths[4], err[512];
	struct vol_create c = { 0 };
	struct vol *v = NULL;
	ck_assert(layout_parse_level_msg(level, &c.geom.level, err, sizeof(err)) == 0);
	c.geom.alg = layout_default_alg(c.geom.level);
	c.geom.chunk = 64 * K;
	c.write_behind = write_behind;
	vol_serial++;
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "mem:f%u_%u:%llu", vol_serial, i, (unsigned long long)MEMBER_SIZE);
		paths[i] = names[i];
		c.flags[i] = flags[i];
	}
	ck_assert_msg(vol_create(&c, paths, n, err, sizeof(err)) == 0, "create: %s", err);
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	ck_assert_msg(vol_open(&v, paths, n, &o, err, sizeof(err)) == 0, "open: %s", err);
	ck_assert_int_eq(vol_start(v), 0);
	return v;
}

static int read_256k(struct vol *v, void *arg)
{
	(void)arg;
	static uint8_t b[256 * K] __attribute__((aligned(4096)));
	int r = 0;
	for (uint64_t off = 0; off < 2048 * K && !r; off += sizeof(b))
		r = engine_read(v, b, off, sizeof(b));
	return r;
}

START_TEST(test_write_mostly_reads)
{
	static const uint8_t fl[2] = { 0, SB_SLOT_WRITE_MOSTLY };
	struct vol *v = mkvol_flags("raid1", 2, fl, 0);
	static struct op ops[256];
	static uint8_t a[256 * K], b[256 * K];
	int res;
	fill(a, sizeof(a), 11);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	size_t n = traced(v, read_256k, NULL, ops, 256, &res);
	ck_assert_int_eq(res, 0);
	ck_assert(n > 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(ops[i].dev == 0, "a read went to the write-mostly member %d", ops[i].dev);
	/* the flag off: the balancing uses both */
	char err[256];
	ck_assert_int_eq(vol_set_flag(v, "1", SB_SLOT_WRITE_MOSTLY, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(vol_slot_flags(v, 1), 0);
	/* on again, the other copy failed: the write-mostly one serves, right */
	ck_assert_int_eq(vol_set_flag(v, "1", SB_SLOT_WRITE_MOSTLY, 1, err, sizeof(err)), 0);
	vol_fail_slot(v, 0, -EIO);
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	/* refused off raid1, naming the rule */
	struct vol *r5 = mkvol("raid5", 3, 64 * K);
	ck_assert_int_eq(vol_set_flag(r5, "0", SB_SLOT_WRITE_MOSTLY, 1, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "raid1 only"));
	vol_close(r5);
	vol_close(v);
}
END_TEST

/* A write is acknowledged while its copy to the slow leg is still out; a
 * flush returns only once it has landed; both copies then agree. */
START_TEST(test_write_behind_flush)
{
	static const uint8_t fl[2] = { 0, SB_SLOT_WRITE_MOSTLY };
	struct vol *v = mkvol_flags("raid1", 2, fl, 16);
	static uint8_t a[64 * K], c0[64 * K], c1[64 * K];
	ck_assert_ptr_nonnull(v->wb);
	set_fault(v, 1, "wdelay=2s");
	fill(a, sizeof(a), 13);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	struct wb_counts wc;
	wb_counts(v, &wc);
	ck_assert_uint_eq(wc.behind, 1);
	ck_assert_uint_eq(wc.inflight, 1); /* acknowledged 2 s before the slow leg has it */
	ck_assert_int_eq(engine_flush(v), 0);
	wb_counts(v, &wc);
	ck_assert_uint_eq(wc.inflight, 0);
	ck_assert_int_eq(member_pread(v->slot[0], c0, sizeof(c0), v->data_offset), 0);
	ck_assert_int_eq(member_pread(v->slot[1], c1, sizeof(c1), v->data_offset), 0);
	ck_assert(!memcmp(a, c0, sizeof(a)) && !memcmp(a, c1, sizeof(a)));
	vol_close(v);
}
END_TEST

/* A stalled failfast member is failed at the deadline and the write goes on
 * without it; the last working copy is never failed that way. */
START_TEST(test_failfast_deadline)
{
	static const uint8_t fl[2] = { 0, SB_SLOT_FAILFAST };
	struct vol *v = mkvol_flags("raid1", 2, fl, 0);
	static uint8_t a[64 * K], b[64 * K];
	vol_set_failfast_ms(v, 50);
	set_fault(v, 1, "delay=3s");
	fill(a, sizeof(a), 17);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	ck_assert_str_eq(vol_slot_state(v, 1), "failed");
	ck_assert_uint_ge(ff_timeouts(v), 1);
	vol_close(v);

	static const uint8_t both[2] = { SB_SLOT_FAILFAST, SB_SLOT_FAILFAST };
	v = mkvol_flags("raid1", 2, both, 0);
	vol_set_failfast_ms(v, 50);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	vol_fail_slot(v, 0, -EIO);
	set_fault(v, 1, "delay=300ms");
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert_str_eq(vol_slot_state(v, 1), "active");
	ck_assert_uint_eq(ff_timeouts(v), 0);
	vol_close(v);
}
END_TEST

/* ---- metadata I/O below the mapping layer (DISKPERF's blind spot) ---- */

/* The metadata thread changes it: a bounded look, never a wait for the delay. */
static void wait_array_state(struct vol *v, const char *want)
{
	for (int i = 0; i < 5000 && strcmp(vol_array_state(v), want); i++)
		usleep(1000);
	ck_assert_str_eq(vol_array_state(v), want);
}

/* An idle raid5 x4 with md's bitmap, clean (safe mode): one 4 KiB write to a
 * clean bitmap region gives each member its plan's writes, one bitmap block
 * and one superblock (the dirty mark), each labelled in the trace under the
 * write, and the member counters say exactly what the trace says. */
START_TEST(test_meta_counted)
{
	static uint8_t a[4096] __attribute__((aligned(4096)));
	static struct layout_plan p;
	static struct stats_trace_rec recs[256];
	struct vol *v = mkvol("raid5", 4, 64 * K);
	vol_safe_set_delay(v, 1);
	wait_array_state(v, "clean");
	vol_safe_set_delay(v, 3600 * 1000); /* no clean mark before the counts are read */
	uint64_t now = stats_now(), cursor = atomic_load(&v->trace->head);
	for (unsigned m = 0; m < 4; m++)
		stats_reset(v->slot[m]->stats, now);
	stats_trace_enable(v->trace, 1);
	ck_assert_int_eq(engine_write(v, a, 8 * K, sizeof(a)), 0);
	stats_trace_enable(v->trace, 0);
	size_t n = stats_trace_read(v->trace, &cursor, recs, 256);
	ck_assert_str_eq(vol_array_state(v), "active");

	unsigned plan_w[4] = { 0 }, got[4][STATS_WHY_COUNT][STATS_NOPS];
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(layout_plan_write(&v->geom, 8 * K, sizeof(a), 0, NULL, &p), 0);
	for (unsigned i = 0; i < p.nwrites; i++)
		plan_w[p.writes[i].member]++;
	uint64_t parent = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].dev < 0)
			parent = recs[i].seq;
		else
			got[recs[i].dev][recs[i].why][recs[i].op]++;
	ck_assert_uint_ne(parent, 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(recs[i].dev < 0 || recs[i].parent == parent, "m%d %s: not under the write", recs[i].dev,
			      stats_why_name((enum stats_why)recs[i].why));
	for (unsigned m = 0; m < 4; m++) {
		struct stats_snap s;
		unsigned w = 0, r = 0, f = 0;
		stats_snapshot(v->slot[m]->stats, stats_now(), &s);
		for (unsigned why = 0; why < STATS_WHY_COUNT; why++) {
			r += got[m][why][STATS_READ];
			w += got[m][why][STATS_WRITE];
			f += got[m][why][STATS_FLUSH];
		}
		ck_assert_uint_eq(got[m][STATS_WHY_SB][STATS_WRITE], 1);
		ck_assert_uint_eq(got[m][STATS_WHY_BITMAP][STATS_WRITE], 1);
		ck_assert_uint_eq(got[m][STATS_WHY_DATA][STATS_WRITE] + got[m][STATS_WHY_PARITY_WRITE][STATS_WRITE],
				  plan_w[m]);
		ck_assert_msg(s.writes == plan_w[m] + 2, "m%u: %llu writes, want %u + 2", m, (unsigned long long)s.writes,
			      plan_w[m]);
		ck_assert_uint_eq(s.writes, w);
		ck_assert_uint_eq(s.reads, r);
		ck_assert_uint_eq(s.flushes, f);
		ck_assert_uint_ge(got[m][STATS_WHY_SB][STATS_FLUSH], 1); /* the mark is durable before the write */
	}
	vol_close(v);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *t = tcase_create("plans");
	tcase_add_loop_test(t, test_plans, 0, sizeof(plan_cases) / sizeof(plan_cases[0]));
	suite_add_tcase(s, t);
	t = tcase_create("data");
	tcase_add_loop_test(t, test_roundtrip, 0, sizeof(levels) / sizeof(levels[0]));
	tcase_add_test(t, test_retry_read_error);
	tcase_add_test(t, test_read_error_listed);
	tcase_add_test(t, test_beyond_redundancy);
	tcase_add_test(t, test_ack_after_failure_superblock);
	tcase_add_test(t, test_resync_counts_and_repairs);
	tcase_add_test(t, test_fail_request_keeps_last_copy);
	tcase_add_test(t, test_write_mostly_reads);
	tcase_add_test(t, test_write_behind_flush);
	tcase_add_test(t, test_failfast_deadline);
	tcase_add_test(t, test_meta_counted);
	tcase_add_loop_test(t, test_checkpoint_units, 0, sizeof(ckpt_cases) / sizeof(ckpt_cases[0]));
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
