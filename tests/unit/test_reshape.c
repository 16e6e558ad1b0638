/* test_reshape: fsvol grow on memory members (core/reshape.c), and the
 * critical-section rule against a brute-force map of both geometries. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "fsvol/core/engine.h"
#include "fsvol/core/reshape.h"
#include "unit_vol.h"

/* ---- the rule: a window without backup never overwrites old data it has yet to move ---- */

static struct layout_geom geom_alg(enum layout_level level, const char *alg, unsigned n, uint64_t chunk,
				   uint64_t size)
{
	struct layout_geom g = { .level = level, .members = n, .chunk = chunk };
	char err[256];
	g.alg = layout_default_alg(level);
	if (alg)
		ck_assert_int_eq(layout_parse_alg(level, alg, &g.alg, &g.copies), 0);
	for (unsigned i = 0; i < n; i++)
		g.member_size[i] = size;
	ck_assert_msg(layout_init(&g, err, sizeof(err)) == 0, "%s", err);
	return g;
}

static struct layout_geom geom(enum layout_level level, unsigned n, uint64_t chunk, uint64_t size)
{
	return geom_alg(level, NULL, n, chunk, size);
}

/* Brute force: some member byte the new geometry writes for window [off,
 * off+len) holds, in the old geometry, data at a logical offset >= off. */
static int overlaps(const struct layout_geom *old, const struct layout_geom *new, uint64_t off, uint64_t len)
{
	uint64_t c = old->chunk < new->chunk ? old->chunk : new->chunk;
	for (uint64_t x = off; x < off + len && x < new->capacity; x += c) {
		/* the new stripe of x: every member's chunk row (data and parity) */
		struct layout_extent e;
		ck_assert_int_eq(layout_locate(new, x, 0, &e), 0);
		uint64_t row = e.offset / new->chunk * new->chunk;
		for (unsigned m = 0; m < new->members; m++)
			for (uint64_t b = row; b < row + new->chunk; b += c) {
				uint64_t logical;
				unsigned copy;
				if (m >= old->members)
					continue; /* a new member holds nothing old */
				int role = layout_unmap(old, m, b, &logical, &copy);
				if (role == LAYOUT_DATA && logical >= off && logical < old->capacity)
					return 1;
			}
	}
	return 0;
}

/* The same for copies (raid10): some member byte a copy of the window's new
 * data goes to holds, in the old geometry, data at a logical offset >= off. */
static int overlaps_copies(const struct layout_geom *old, const struct layout_geom *new, uint64_t off, uint64_t len)
{
	uint64_t c = old->chunk < new->chunk ? old->chunk : new->chunk;
	for (uint64_t x = off; x < off + len && x < new->capacity; x += c)
		for (unsigned cp = 0; cp < layout_copies(new); cp++) {
			struct layout_extent e;
			uint64_t logical;
			unsigned copy;
			ck_assert_int_eq(layout_locate(new, x, cp, &e), 0);
			if (e.member >= old->members)
				continue;
			/* [e.offset, e.offset + c) lies in one old chunk (c is the smaller, both aligned) */
			int role = layout_unmap(old, e.member, e.offset, &logical, &copy);
			if (role == LAYOUT_DATA && logical / c * c + c > off && logical < old->capacity)
				return 1;
		}
	return 0;
}

static const struct { enum layout_level l0; unsigned n0; uint64_t c0; enum layout_level l1; unsigned n1; uint64_t c1; }
	rule_cases[] = {
		{ LAYOUT_RAID5, 4, 64 * K, LAYOUT_RAID5, 5, 64 * K },   { LAYOUT_RAID6, 5, 64 * K, LAYOUT_RAID6, 6, 64 * K },
		{ LAYOUT_RAID5, 3, 16 * K, LAYOUT_RAID5, 7, 16 * K },   { LAYOUT_RAID5, 4, 64 * K, LAYOUT_RAID5, 4, 128 * K },
		{ LAYOUT_RAID5, 4, 128 * K, LAYOUT_RAID5, 4, 32 * K },  { LAYOUT_RAID5, 4, 64 * K, LAYOUT_RAID6, 5, 64 * K },
		{ LAYOUT_RAID0, 2, 64 * K, LAYOUT_RAID0, 3, 64 * K },   { LAYOUT_RAID4, 4, 32 * K, LAYOUT_RAID4, 6, 64 * K },
	};

START_TEST(test_critical_section)
{
	const __typeof__(rule_cases[0]) *t = &rule_cases[_i];
	struct layout_geom old = geom(t->l0, t->n0, t->c0, 8 * K * K), new = geom(t->l1, t->n1, t->c1, 8 * K * K);
	uint64_t w, bl, backed = 0, windows = 0;
	char err[256];
	ck_assert_msg(vol_reshape_plan(&old, &new, &w, &bl, err, sizeof(err)) == 0, "%s", err);
	ck_assert(w % (old.data_members * old.chunk) == 0 && w % (new.data_members * new.chunk) == 0);
	ck_assert(bl * new.members >= w && bl % 4096 == 0);
	for (uint64_t off = 0; off < new.capacity; off += w, windows++) {
		uint64_t len = new.capacity - off < w ? new.capacity - off : w;
		int rule = vol_reshape_overlap(&old, &new, off, len), brute = overlaps(&old, &new, off, len);
		/* never without backup where data would be lost; the rule may be
		 * cautious but not by more than the window's own rows */
		ck_assert_msg(rule || !brute, "window at %llu: overlap, no backup", (unsigned long long)off);
		backed += rule;
	}
	/* more data members: only the first windows (the new rows run ahead of
	 * the old ones until the old rows' lead exceeds a window); same: all */
	if (new.data_members > old.data_members)
		ck_assert_msg(backed && backed < windows / 2, "%llu of %llu windows backed up", (unsigned long long)backed,
			      (unsigned long long)windows);
	else
		ck_assert_uint_eq(backed, (uint64_t)((old.capacity + w - 1) / w));
}
END_TEST

/* raid10 (near and offset): the same rule, against the copies' brute force */
static const struct { const char *a0; unsigned n0; uint64_t c0; const char *a1; unsigned n1; uint64_t c1; }
	r10_cases[] = {
		{ "n2", 4, 64 * K, "n2", 5, 64 * K },   { "n2", 4, 64 * K, "n2", 6, 64 * K },
		{ "n2", 3, 32 * K, "n2", 7, 32 * K },   { "n3", 3, 64 * K, "n3", 4, 64 * K },
		{ "n2", 4, 64 * K, "n2", 4, 128 * K },  { "n2", 5, 128 * K, "n2", 5, 32 * K },
		{ "o2", 4, 64 * K, "o2", 5, 64 * K },   { "o2", 4, 64 * K, "o2", 4, 128 * K },
		{ "o3", 3, 16 * K, "o3", 5, 64 * K },   { "n2", 4, 64 * K, "o2", 4, 64 * K },
		{ "o2", 4, 64 * K, "n2", 6, 64 * K },
	};

START_TEST(test_critical_section_r10)
{
	const __typeof__(r10_cases[0]) *t = &r10_cases[_i];
	struct layout_geom old = geom_alg(LAYOUT_RAID10, t->a0, t->n0, t->c0, 8 * K * K),
			   new = geom_alg(LAYOUT_RAID10, t->a1, t->n1, t->c1, 8 * K * K);
	uint64_t w, bl, backed = 0, windows = 0, ol, om, nl, nm;
	char err[256];
	ck_assert_msg(vol_reshape_plan(&old, &new, &w, &bl, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(layout_period(&old, &ol, &om), 0);
	ck_assert_int_eq(layout_period(&new, &nl, &nm), 0);
	ck_assert(w % ol == 0 && w % nl == 0);
	/* copies pieces of ceil(W / n) on each member */
	ck_assert(bl / layout_copies(&new) * new.members >= w && bl % (4096 * layout_copies(&new)) == 0);
	for (uint64_t off = 0; off < new.capacity; off += w, windows++) {
		uint64_t len = new.capacity - off < w ? new.capacity - off : w;
		int rule = vol_reshape_overlap(&old, &new, off, len), brute = overlaps_copies(&old, &new, off, len);
		ck_assert_msg(rule || !brute, "%s x%u -> %s x%u: window at %llu: overlap, no backup", t->a0, t->n0, t->a1,
			      t->n1, (unsigned long long)off);
		backed += rule;
	}
	if (new.members > old.members)
		ck_assert_msg(backed && backed < windows / 2, "%llu of %llu windows backed up", (unsigned long long)backed,
			      (unsigned long long)windows);
	else
		ck_assert_uint_eq(backed, (uint64_t)((old.capacity + w - 1) / w));
}
END_TEST

/* layout_period against the map: the copies of logical [i L, (i+1) L) lie
 * in rows [i M, (i+1) M) of the members and fill them, for the first
 * periods; the far layout has none. */
START_TEST(test_period)
{
	const __typeof__(r10_cases[0]) *t = &r10_cases[_i / 2];
	struct layout_geom g = _i % 2 ? geom_alg(LAYOUT_RAID10, t->a1, t->n1, t->c1, 8 * K * K)
				      : geom_alg(LAYOUT_RAID10, t->a0, t->n0, t->c0, 8 * K * K);
	uint64_t l, m, rows, hits[LAYOUT_MAX_MEMBERS * 16];
	ck_assert_int_eq(layout_period(&g, &l, &m), 0);
	ck_assert(l % g.chunk == 0 && m % g.chunk == 0);
	rows = m / g.chunk;
	ck_assert_uint_le(rows, 16);
	for (uint64_t i = 0; i < 3 && (i + 1) * l <= g.capacity; i++) {
		memset(hits, 0, sizeof(hits));
		for (uint64_t x = i * l; x < (i + 1) * l; x += g.chunk)
			for (unsigned cp = 0; cp < layout_copies(&g); cp++) {
				struct layout_extent e;
				ck_assert_int_eq(layout_locate(&g, x, cp, &e), 0);
				uint64_t r = e.offset / g.chunk;
				ck_assert_msg(r >= i * rows && r < (i + 1) * rows, "%s x%u: chunk at %llu copy %u in row %llu",
					      layout_alg_name(&g), g.members, (unsigned long long)x, cp, (unsigned long long)r);
				hits[e.member * 16 + (r - i * rows)]++;
			}
		for (unsigned mb = 0; mb < g.members; mb++)
			for (uint64_t r = 0; r < rows; r++)
				ck_assert_uint_eq(hits[mb * 16 + r], 1);
	}
	struct layout_geom far = geom_alg(LAYOUT_RAID10, "f2", 4, 64 * K, 8 * K * K);
	ck_assert_int_eq(layout_period(&far, &l, &m), -EINVAL);
}
END_TEST

/* The far layout has no rows to move window by window: the plan refuses it. */
START_TEST(test_plan_far)
{
	struct layout_geom old = geom_alg(LAYOUT_RAID10, "f2", 4, 64 * K, 8 * K * K),
			   new = geom_alg(LAYOUT_RAID10, "f2", 5, 64 * K, 8 * K * K);
	uint64_t w, bl;
	char err[256];
	ck_assert_int_eq(vol_reshape_plan(&old, &new, &w, &bl, err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_msg(strstr(err, "f2"), "%s", err);
}
END_TEST

/* ---- online, on memory members ---- */

static void wait_reshape(struct vol *v)
{
	struct vol_sync_info si;
	for (int i = 0; i < 20000; i++) {
		vol_sync_info(v, &si);
		if (!vol_reshaping(v) && !si.running)
			return;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	ck_abort_msg("the reshape did not end");
}

static void add_mem(struct vol *v, const char *tag, unsigned i)
{
	char path[64], err[256];
	snprintf(path, sizeof(path), "mem:grow%s%u_%u:%llu", tag, vol_serial, i, (unsigned long long)MEMBER_SIZE);
	ck_assert_msg(vol_add(v, path, err, sizeof(err)) == 0, "add: %s", err);
}

static uint64_t check_mismatches(struct vol *v)
{
	struct vol_sync_info si;
	ck_assert_int_eq(vol_sync_start(v, "check"), 0);
	wait_reshape(v);
	vol_sync_info(v, &si);
	ck_assert(si.done);
	return si.mismatches;
}

struct writer {
	struct vol *v;
	uint8_t *model; /* what each block holds, once acknowledged */
	uint64_t span, block;
	volatile int stop;
	unsigned writes;
};

/* Foreground writes of random blocks while the reshape runs: the model
 * holds what each acknowledged write put there. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint8_t *buf = malloc(w->block);
	uint64_t seed = 99;
	while (!w->stop) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t b = (seed >> 33) % (w->span / w->block);
		fill(buf, w->block, seed);
		ck_assert_int_eq(engine_write(w->v, buf, b * w->block, w->block), 0);
		memcpy(w->model + b * w->block, buf, w->block);
		w->writes++;
	}
	free(buf);
	return NULL;
}

static const struct {
	const char *level;
	unsigned n, add;
	uint64_t chunk;
	const char *spec;
	const char *new_level;
	unsigned new_n;
	uint64_t new_chunk;
	const char *alg, *new_alg; /* raid10's (NULL: the level's default) */
} grow_cases[] = {
	{ "raid5", 4, 1, 64 * K, "raid-devices=+1", "raid5", 5, 64 * K },
	{ "raid6", 5, 1, 64 * K, "raid-devices=+1", "raid6", 6, 64 * K },
	{ "raid4", 3, 2, 32 * K, "raid-devices=5", "raid4", 5, 32 * K },
	{ "raid0", 2, 1, 64 * K, "raid-devices=+1", "raid0", 3, 64 * K },
	{ "raid5", 4, 0, 64 * K, "chunk=131072", "raid5", 4, 128 * K },
	{ "raid5", 4, 0, 128 * K, "chunk=16384", "raid5", 4, 16 * K },
	{ "raid5", 4, 1, 64 * K, "level=raid6,raid-devices=+1", "raid6", 5, 64 * K },
	{ "linear", 2, 1, 64 * K, "raid-devices=+1", "linear", 3, 64 * K },
	{ "raid1", 2, 1, 64 * K, "raid-devices=+1", "raid1", 3, 64 * K },
	{ "raid10", 4, 1, 64 * K, "raid-devices=+1", "raid10", 5, 64 * K, "n2", "n2" },
	{ "raid10", 3, 2, 32 * K, "raid-devices=5", "raid10", 5, 32 * K, "n3", "n3" },
	{ "raid10", 4, 2, 64 * K, "raid-devices=+2", "raid10", 6, 64 * K, "o2", "o2" },
	{ "raid10", 4, 0, 64 * K, "chunk=131072", "raid10", 4, 128 * K, "o2", "o2" },
	{ "raid10", 4, 0, 128 * K, "chunk=32768", "raid10", 4, 32 * K, "n2", "n2" },
	{ "raid10", 4, 1, 64 * K, "raid-devices=+1,layout=o2", "raid10", 5, 64 * K, "n2", "o2" },
};

START_TEST(test_grow_online)
{
	const __typeof__(grow_cases[0]) *t = &grow_cases[_i];
	struct vol *v = mkvol_alg(t->level, t->alg, t->n, t->chunk);
	uint64_t cap = vol_geom(v)->capacity;
	uint8_t *data = malloc(cap), *back = malloc(cap);
	char err[256];
	fill(data, cap, 7 + _i);
	ck_assert_int_eq(engine_write(v, data, 0, cap), 0);
	for (unsigned i = 0; i < t->add; i++)
		add_mem(v, "o", i);
	struct writer w = { .v = v, .model = data, .span = cap, .block = 12 * K };
	vol_set_sync_speed(v, 1, 50000); /* slow enough for the writer to meet it */
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &w), 0);
	ck_assert_msg(vol_grow(v, t->spec, err, sizeof(err)) == 0, "%s %s: %s", t->level, t->spec, err);
	wait_reshape(v);
	w.stop = 1;
	pthread_join(th, NULL);
	const struct layout_geom *g = vol_geom(v);
	ck_assert_str_eq(layout_level_name(g->level), t->new_level);
	ck_assert_uint_eq(g->members, t->new_n);
	ck_assert_uint_eq(g->chunk, t->new_chunk);
	if (t->new_alg)
		ck_assert_str_eq(layout_alg_name(g), t->new_alg);
	ck_assert_uint_ge(g->capacity, cap);
	ck_assert_int_eq(engine_read(v, back, 0, cap), 0);
	ck_assert_msg(!memcmp(back, data, cap), "%s %s: data differs after the reshape (%u writes during it)", t->level,
		      t->spec, w.writes);
	if (g->capacity > cap && g->level != LAYOUT_LINEAR) { /* the new space reads as zeros */
		uint8_t *z = calloc(1, g->capacity - cap), *zb = malloc(g->capacity - cap);
		ck_assert_int_eq(engine_read(v, zb, cap, g->capacity - cap), 0);
		ck_assert(!memcmp(z, zb, g->capacity - cap));
		free(z);
		free(zb);
	}
	if (layout_is_parity(g) || g->level == LAYOUT_RAID1 || g->level == LAYOUT_RAID10)
		ck_assert_uint_eq(check_mismatches(v), 0);
	ck_assert_uint_eq(v->sb.members, t->new_n);
	ck_assert_uint_eq(v->sb.reshape_flags, 0);
	ck_assert_uint_eq(v->sb.volume_size, g->capacity);
	vol_close(v);
	free(data);
	free(back);
}
END_TEST

/* Two reshapes in one mount, the second with a larger window (its buffer too) */
START_TEST(test_grow_twice)
{
	struct vol *v = mkvol("raid5", 3, 16 * K);
	uint64_t cap = vol_geom(v)->capacity;
	uint8_t *data = malloc(cap), *back = malloc(cap);
	char err[256];
	fill(data, cap, 42);
	ck_assert_int_eq(engine_write(v, data, 0, cap), 0);
	add_mem(v, "t", 0);
	ck_assert_msg(vol_grow(v, "raid-devices=+1", err, sizeof(err)) == 0, "%s", err);
	wait_reshape(v);
	ck_assert_msg(vol_grow(v, "chunk=524288", err, sizeof(err)) == 0, "%s", err);
	wait_reshape(v);
	ck_assert_uint_eq(vol_geom(v)->members, 4);
	ck_assert_uint_eq(vol_geom(v)->chunk, 512 * K);
	ck_assert_int_eq(engine_read(v, back, 0, cap), 0);
	ck_assert(!memcmp(back, data, cap));
	ck_assert_uint_eq(check_mismatches(v), 0);
	vol_close(v);
	free(data);
	free(back);
}
END_TEST

START_TEST(test_refusals)
{
	struct vol *v = mkvol("raid5", 4, 64 * K);
	char err[256];
	ck_assert_int_eq(vol_grow(v, "raid-devices=5", err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "needs a spare for raid device 4"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "chunk=65536", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(vol_grow(v, "level=raid10", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_int_eq(vol_grow(v, "raid-devices=3", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_int_eq(vol_grow(v, "size=1", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(vol_grow(v, "chunk=1000", err, sizeof(err)), -EINVAL); /* not a power of two */
	vol_close(v);
	/* raid10 as md: not the far layout, not to it, the copies stay, no fewer members */
	v = mkvol_alg("raid10", "f2", 4, 64 * K);
	add_mem(v, "f", 0);
	ck_assert_int_eq(vol_grow(v, "raid-devices=+1", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_msg(strstr(err, "far layout (f2) cannot be reshaped"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "chunk=131072", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_uint_eq(v->sb.reshape_flags, 0);
	ck_assert_uint_eq(vol_geom(v)->members, 4);
	vol_close(v);
	v = mkvol_alg("raid10", "n2", 4, 64 * K);
	add_mem(v, "g", 0);
	ck_assert_int_eq(vol_grow(v, "layout=n3", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_msg(strstr(err, "keeps its 2 copies"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "raid-devices=+1,layout=f2", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_msg(strstr(err, "to the far layout"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "raid-devices=3", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_msg(strstr(err, "shrinking is not supported"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "layout=zz", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(vol_grow(v, "layout=n2", err, sizeof(err)), -EINVAL); /* nothing to change */
	/* the dry run (fsvol grow --add asks it first): the plan without the spares */
	ck_assert_int_eq(vol_grow(v, "raid-devices=+2,dry-run=1", err, sizeof(err)), 0);
	ck_assert_int_eq(vol_grow(v, "raid-devices=+2,chunk=1048576,dry-run=1", err, sizeof(err)), -ENOSPC);
	ck_assert_msg(strstr(err, "no room for the reshape's backup"), "%s", err);
	ck_assert_int_eq(vol_grow(v, "raid-devices=3,dry-run=1", err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_uint_eq(v->sb.reshape_flags, 0);
	ck_assert_uint_eq(vol_geom(v)->members, 4);
	vol_close(v);
	v = mkvol("raid5", 4, 64 * K);
	ck_assert_int_eq(vol_grow(v, "layout=o2", err, sizeof(err)), -EOPNOTSUPP); /* raid10's only */
	vol_close(v);
}
END_TEST

/* ---- a window written back from its backup with shares gone (their members failed) ---- */

static const struct restore_case {
	const char *level;
	unsigned n;
	const char *spec;
	uint64_t lost; /* the slots whose share is gone: data shares first, then P, then Q */
} restore_cases[] = {
	{ "raid5", 4, "raid-devices=+1", 1u << 1 },                      /* a data share */
	{ "raid5", 4, "raid-devices=+1", 1u << 4 },                      /* P, on the new member */
	{ "raid6", 5, "raid-devices=+1", (1u << 1) | (1u << 3) },        /* two data shares */
	{ "raid6", 5, "raid-devices=+1", (1u << 0) | (1u << 4) },        /* data and P */
	{ "raid6", 5, "raid-devices=+1", (1u << 2) | (1u << 5) },        /* data and Q */
	{ "raid5", 4, "level=raid6,raid-devices=+1", 1u << 2 },
	{ "raid10", 4, "raid-devices=+1", 1u << 1 },                      /* one copy of two pieces */
	{ "raid10", 4, "raid-devices=+1", (1u << 1) | (1u << 3) },        /* two members, each piece keeps one */
	{ "raid10", 4, "raid-devices=+1", 1u << 4 },                      /* the new member */
	{ "raid10", 4, "raid-devices=+1,layout=o2", 1u << 2 },
};

static void wait_pos(struct vol *v, uint64_t pos)
{
	for (int i = 0; i < 20000 && atomic_load(&v->reshape->pos) < pos; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_ge(atomic_load(&v->reshape->pos), pos);
}

/* Window 0 moved (through its backup), then as after a crash inside it: its
 * new rows garbage, the backup recorded, the lost slots' members failed and
 * their shares garbage too. The restore rebuilds the shares from P and Q and
 * writes the window back; the data reads the same, then and after the end. */
START_TEST(test_restore_degraded)
{
	const struct restore_case *c = &restore_cases[_i];
	struct vol *v = mkvol(c->level, c->n, 64 * K);
	uint64_t cap = vol_geom(v)->capacity;
	uint8_t *data = malloc(cap), *back = malloc(cap);
	char err[256];
	fill(data, cap, 5);
	ck_assert_int_eq(engine_write(v, data, 0, cap), 0);
	vol_set_sync_speed(v, 1, 1); /* 1 KiB/s: window 0 moves, then the pass waits */
	vol_set_sync_speed(v, 0, 1);
	add_mem(v, "r", 0);
	ck_assert_msg(vol_grow(v, c->spec, err, sizeof(err)) == 0, "%s", err);
	struct vol_reshape *rs = v->reshape;
	wait_pos(v, rs->window);
	uint64_t top = v->sb.bbl_offset ? v->sb.bbl_offset : v->data_offset;
	uint64_t pl, pm;
	ck_assert_int_eq(layout_period(&rs->geom, &pl, &pm), 0);
	uint64_t rows = rs->window / pl * pm; /* window 0's new rows on each member */
	void *junk = NULL;
	ck_assert_int_eq(posix_memalign(&junk, 4096, rows > rs->backup_len ? rows : rs->backup_len), 0);
	fill(junk, rows > rs->backup_len ? rows : rs->backup_len, 77);
	for (unsigned i = 0; i < rs->geom.members; i++) {
		ck_assert_int_eq(member_pwrite(v->slot[i], junk, rows, v->data_offset), 0);
		if ((c->lost >> i) & 1)
			ck_assert_int_eq(member_pwrite(v->slot[i], junk, rs->backup_len, top - rs->backup_len), 0);
	}
	atomic_fetch_or(&v->failed, c->lost);
	atomic_store(&rs->pos, 0);
	v->sb.reshape_backup = top - rs->backup_len;
	ck_assert_int_eq(vol_reshape_restore(v), 0);
	ck_assert_uint_eq(atomic_load(&rs->pos), rs->window);
	ck_assert_int_eq(engine_read(v, back, 0, cap), 0);
	ck_assert_msg(!memcmp(back, data, cap), "%s %s: data differs after the restore", c->level, c->spec);
	vol_set_sync_speed(v, 1, 200000);
	vol_set_sync_speed(v, 0, 200000);
	wait_reshape(v);
	ck_assert_int_eq(engine_read(v, back, 0, cap), 0);
	ck_assert_msg(!memcmp(back, data, cap), "%s %s: data differs after the reshape", c->level, c->spec);
	vol_close(v);
	free(junk);
	free(data);
	free(back);
}
END_TEST

static Suite *reshape_suite(void)
{
	Suite *s = suite_create("reshape");
	TCase *t = tcase_create("reshape");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_critical_section, 0, sizeof(rule_cases) / sizeof(rule_cases[0]));
	tcase_add_loop_test(t, test_critical_section_r10, 0, sizeof(r10_cases) / sizeof(r10_cases[0]));
	tcase_add_test(t, test_plan_far);
	tcase_add_loop_test(t, test_period, 0, 2 * sizeof(r10_cases) / sizeof(r10_cases[0]));
	tcase_add_loop_test(t, test_grow_online, 0, sizeof(grow_cases) / sizeof(grow_cases[0]));
	tcase_add_test(t, test_grow_twice);
	tcase_add_test(t, test_refusals);
	tcase_add_loop_test(t, test_restore_degraded, 0, sizeof(restore_cases) / sizeof(restore_cases[0]));
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(reshape_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
