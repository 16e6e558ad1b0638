/* layout: level table, names and parsing, layout_init's common checks, and
 * dispatch of locate/unmap/survives to the level files (linear.c, raid0.c,
 * raid1.c, raid10.c, raid456.c).
 */
#include "layout/layout_int.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

static const struct layout_ops *const level_ops[] = {
	[LAYOUT_SINGLE] = &layout_single_ops,
	[LAYOUT_LINEAR] = &layout_linear_ops,
	[LAYOUT_RAID0] = &layout_raid0_ops,
	[LAYOUT_RAID1] = &layout_raid1_ops,
	[LAYOUT_RAID10] = &layout_raid10_ops,
	[LAYOUT_RAID4] = &layout_raid4_ops,
	[LAYOUT_RAID5] = &layout_raid5_ops,
	[LAYOUT_RAID6] = &layout_raid6_ops,
};
#define NLEVELS (sizeof(level_ops) / sizeof(level_ops[0]))

/* accepted spellings of each level, canonical name first */
static const struct {
	const char *name;
	enum layout_level level;
} level_names[] = {
	{ "single", LAYOUT_SINGLE }, { "linear", LAYOUT_LINEAR },
	{ "raid0", LAYOUT_RAID0 },   { "raid1", LAYOUT_RAID1 },
	{ "raid10", LAYOUT_RAID10 }, { "raid4", LAYOUT_RAID4 },
	{ "raid5", LAYOUT_RAID5 },   { "raid6", LAYOUT_RAID6 },
	{ "0", LAYOUT_RAID0 },       { "1", LAYOUT_RAID1 },
	{ "4", LAYOUT_RAID4 },       { "5", LAYOUT_RAID5 },
	{ "6", LAYOUT_RAID6 },       { "10", LAYOUT_RAID10 },
	{ "stripe", LAYOUT_RAID0 },  { "mirror", LAYOUT_RAID1 },
};

/* raid5/6 algorithm names indexed by md's ALGORITHM_* number, with md's short forms */
static const char *const alg_names[] = {
	[LAYOUT_LEFT_ASYMMETRIC] = "left-asymmetric",
	[LAYOUT_RIGHT_ASYMMETRIC] = "right-asymmetric",
	[LAYOUT_LEFT_SYMMETRIC] = "left-symmetric",
	[LAYOUT_RIGHT_SYMMETRIC] = "right-symmetric",
	[LAYOUT_PARITY_0] = "parity-first",
	[LAYOUT_PARITY_N] = "parity-last",
};
static const char *const alg_short[] = { "la", "ra", "ls", "rs", NULL, NULL };
#define NALGS (sizeof(alg_names) / sizeof(alg_names[0]))
#define ALG_CHOICES "left-asymmetric, right-asymmetric, left-symmetric, right-symmetric, " \
		    "parity-first, parity-last"
#define LEVEL_CHOICES "single, linear, raid0, raid1, raid10, raid4, raid5, raid6"
#define R10_CHOICES "nK, fK or oK with K copies, e.g. n2, f2, o3"

/* "n2" "f2" "o2" ... for every copy count, so layout_alg_name needs no buffer */
#define R10_ROW(c) { "n" #c, "f" #c, "o" #c }
static const char *const r10_names[LAYOUT_MAX_MEMBERS + 1][3] = {
	R10_ROW(0), R10_ROW(1), R10_ROW(2), R10_ROW(3), R10_ROW(4), R10_ROW(5), R10_ROW(6),
	R10_ROW(7), R10_ROW(8), R10_ROW(9), R10_ROW(10), R10_ROW(11), R10_ROW(12),
	R10_ROW(13), R10_ROW(14), R10_ROW(15), R10_ROW(16), R10_ROW(17), R10_ROW(18),
	R10_ROW(19), R10_ROW(20), R10_ROW(21), R10_ROW(22), R10_ROW(23), R10_ROW(24),
	R10_ROW(25), R10_ROW(26), R10_ROW(27), R10_ROW(28), R10_ROW(29), R10_ROW(30),
	R10_ROW(31), R10_ROW(32), R10_ROW(33), R10_ROW(34), R10_ROW(35), R10_ROW(36),
	R10_ROW(37), R10_ROW(38), R10_ROW(39), R10_ROW(40), R10_ROW(41), R10_ROW(42),
	R10_ROW(43), R10_ROW(44), R10_ROW(45), R10_ROW(46), R10_ROW(47), R10_ROW(48),
	R10_ROW(49), R10_ROW(50), R10_ROW(51), R10_ROW(52), R10_ROW(53), R10_ROW(54),
	R10_ROW(55), R10_ROW(56), R10_ROW(57), R10_ROW(58), R10_ROW(59), R10_ROW(60),
	R10_ROW(61), R10_ROW(62), R10_ROW(63), R10_ROW(64),
};

const struct layout_ops *layout_ops_of(enum layout_level level)
{
	if ((unsigned)level >= NLEVELS)
		return NULL;
	return level_ops[level];
}

int layout_errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const char *layout_fmt_size(uint64_t v, int bare, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	if (v == 0 || v % 1024) {
		snprintf(buf, len, bare ? "%llu" : "%llu bytes", (unsigned long long)v);
		return buf;
	}
	while (v % 1024 == 0 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

int layout_smallest_member(const struct layout_geom *g, uint64_t unit, uint64_t *out,
			   char *err, size_t errlen)
{
	uint64_t min = UINT64_MAX;
	char a[32], b[32];

	for (unsigned i = 0; i < g->members; i++) {
		uint64_t sz = g->member_size[i];
		if (sz < unit)
			return layout_errf(err, errlen, "member %u (%s) is smaller than one chunk (%s)",
					   i, layout_fmt_size(sz, 0, a, sizeof(a)),
					   layout_fmt_size(unit, 0, b, sizeof(b)));
		sz &= ~(unit - 1);
		if (sz < min)
			min = sz;
	}
	*out = min;
	return 0;
}

/* ---- names ---- */

const char *layout_level_name(enum layout_level level)
{
	const struct layout_ops *ops = layout_ops_of(level);
	return ops ? ops->name : "unknown";
}

int layout_parse_level_msg(const char *s, enum layout_level *out, char *err, size_t errlen)
{
	if (s) {
		for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
			if (strcasecmp(s, level_names[i].name) == 0) {
				*out = level_names[i].level;
				return 0;
			}
		}
	}
	return layout_errf(err, errlen, "unknown level '%s' (" LEVEL_CHOICES ")", s ? s : "");
}

int layout_parse_level(const char *s, enum layout_level *out)
{
	return layout_parse_level_msg(s, out, NULL, 0);
}

/* raid10 "n2" / "f3" / "o2", or the words near/far/offset (2 copies) */
static int parse_r10(const char *s, unsigned *alg, unsigned *copies)
{
	static const char *const words[] = { "near", "far", "offset" };
	static const char letters[] = "nfo";
	const char *l;
	unsigned c = 0;

	for (unsigned i = 0; i < 3; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			*alg = i;
			if (copies)
				*copies = 2;
			return 0;
		}
	}
	if (!s[0] || !(l = strchr(letters, s[0] | 0x20)))
		return -EINVAL;
	for (const char *d = s + 1;; d++) {
		if (*d == '\0' && d > s + 1)
			break;
		if (*d < '0' || *d > '9')
			return -EINVAL;
		c = c * 10 + (unsigned)(*d - '0');
		if (c > LAYOUT_MAX_MEMBERS)
			return -EINVAL;
	}
	if (c < 2)
		return -EINVAL;
	*alg = (unsigned)(l - letters);
	if (copies)
		*copies = c;
	return 0;
}

int layout_parse_alg_msg(enum layout_level level, const char *s, unsigned *alg,
			 unsigned *copies, char *err, size_t errlen)
{
	const char *lname = layout_level_name(level);

	if (!s)
		s = "";
	if (!s[0]) {
		*alg = layout_default_alg(level);
		return layout_ops_of(level) ? 0 : layout_errf(err, errlen, "unknown level %d", (int)level);
	}
	switch (level) {
	case LAYOUT_RAID5:
	case LAYOUT_RAID6:
		for (unsigned i = 0; i < NALGS; i++) {
			if (strcasecmp(s, alg_names[i]) == 0 ||
			    (alg_short[i] && strcasecmp(s, alg_short[i]) == 0)) {
				*alg = i;
				return 0;
			}
		}
		return layout_errf(err, errlen, "unknown %s layout '%s' (" ALG_CHOICES ")", lname, s);
	case LAYOUT_RAID4:
		if (strcasecmp(s, "parity-last") == 0) {
			*alg = LAYOUT_PARITY_N;
			return 0;
		}
		return layout_errf(err, errlen, "unknown raid4 layout '%s' (raid4 has parity-last only)", s);
	case LAYOUT_RAID10:
		if (parse_r10(s, alg, copies) == 0)
			return 0;
		return layout_errf(err, errlen, "unknown raid10 layout '%s' (" R10_CHOICES ")", s);
	default:
		return layout_errf(err, errlen, "%s takes no layout, got '%s'", lname, s);
	}
}

int layout_parse_alg(enum layout_level level, const char *s, unsigned *alg, unsigned *copies)
{
	return layout_parse_alg_msg(level, s, alg, copies, NULL, 0);
}

const char *layout_alg_name(const struct layout_geom *g)
{
	switch (g->level) {
	case LAYOUT_RAID5:
	case LAYOUT_RAID6:
		return g->alg < NALGS ? alg_names[g->alg] : "unknown";
	case LAYOUT_RAID10: {
		unsigned c = g->copies ? g->copies : 2;
		if (g->alg > LAYOUT_R10_OFFSET || c > LAYOUT_MAX_MEMBERS)
			return "unknown";
		return r10_names[c][g->alg];
	}
	default:
		return "";
	}
}

unsigned layout_default_alg(enum layout_level level)
{
	switch (level) {
	case LAYOUT_RAID5:
	case LAYOUT_RAID6:
		return LAYOUT_LEFT_SYMMETRIC;
	case LAYOUT_RAID4:
		return LAYOUT_PARITY_N;
	case LAYOUT_RAID10:
		return LAYOUT_R10_NEAR;
	default:
		return 0;
	}
}

unsigned layout_min_members(enum layout_level level)
{
	const struct layout_ops *ops = layout_ops_of(level);
	return ops ? ops->min_members : 0;
}

int layout_is_parity(const struct layout_geom *g)
{
	return g->level == LAYOUT_RAID4 || g->level == LAYOUT_RAID5 || g->level == LAYOUT_RAID6;
}

unsigned layout_parity_count(const struct layout_geom *g)
{
	return g->level == LAYOUT_RAID6 ? 2 : layout_is_parity(g) ? 1 : 0;
}

unsigned layout_copies(const struct layout_geom *g)
{
	if (g->level == LAYOUT_RAID1)
		return g->members;
	if (g->level == LAYOUT_RAID10)
		return g->copies ? g->copies : 2;
	return 1;
}

int layout_period(const struct layout_geom *g, uint64_t *logical, uint64_t *member_bytes)
{
	unsigned n = g->members, k = layout_copies(g), a = n, b = k;
	if (layout_is_parity(g) || g->level == LAYOUT_RAID0) {
		*logical = (uint64_t)g->data_members * g->chunk;
		*member_bytes = g->chunk;
		return 0;
	}
	if (g->level != LAYOUT_RAID10 || g->alg == LAYOUT_R10_FAR)
		return -EINVAL; /* far: a chunk's copies lie in another section */
	if (g->alg == LAYOUT_R10_OFFSET) {
		/* n chunks fill K rows (each row, then its copies rotated) */
		*logical = (uint64_t)n * g->chunk;
		*member_bytes = (uint64_t)k * g->chunk;
		return 0;
	}
	while (b) { /* near: n positions a row, K a chunk: lcm(n, K) positions */
		unsigned t = a % b;
		a = b;
		b = t;
	}
	*logical = (uint64_t)(n / a) * g->chunk;
	*member_bytes = (uint64_t)(k / a) * g->chunk;
	return 0;
}

/* ---- init and dispatch ---- */

static int check_chunk(uint64_t chunk, char *err, size_t errlen)
{
	char a[32];

	if (chunk & (chunk - 1))
		return layout_errf(err, errlen, "chunk %s: not a power of two",
				   layout_fmt_size(chunk, 1, a, sizeof(a)));
	if (chunk < LAYOUT_MIN_CHUNK)
		return layout_errf(err, errlen, "chunk %s: below the 4K minimum",
				   layout_fmt_size(chunk, 1, a, sizeof(a)));
	if (chunk > LAYOUT_MAX_CHUNK)
		return layout_errf(err, errlen, "chunk %s: above the 1G maximum",
				   layout_fmt_size(chunk, 1, a, sizeof(a)));
	return 0;
}

int layout_init(struct layout_geom *g, char *err, size_t errlen)
{
	const struct layout_ops *ops = layout_ops_of(g->level);
	int r;

	if (err && errlen)
		err[0] = '\0';
	g->data_members = 0;
	g->member_used = 0;
	g->capacity = 0;
	g->stripes = 0;
	if (!ops)
		return layout_errf(err, errlen, "unknown level %d", (int)g->level);
	if (ops->min_members == ops->max_members && g->members != ops->min_members)
		return layout_errf(err, errlen, "%s needs exactly %u member%s, got %u", ops->name,
				   ops->min_members, ops->min_members == 1 ? "" : "s", g->members);
	if (g->members < ops->min_members)
		return layout_errf(err, errlen, "%s needs at least %u member%s, got %u", ops->name,
				   ops->min_members, ops->min_members == 1 ? "" : "s", g->members);
	if (g->members > ops->max_members)
		return layout_errf(err, errlen, "%s supports at most %u members, got %u", ops->name,
				   ops->max_members, g->members);
	if (g->chunk == 0)
		g->chunk = LAYOUT_DEFAULT_CHUNK;
	r = check_chunk(g->chunk, err, errlen);
	if (r)
		return r;

	switch (g->level) {
	case LAYOUT_RAID5:
	case LAYOUT_RAID6:
		if (g->alg >= NALGS)
			return layout_errf(err, errlen, "unknown %s layout %u (" ALG_CHOICES ")",
					   ops->name, g->alg);
		g->copies = 1;
		break;
	case LAYOUT_RAID4:
		g->alg = LAYOUT_PARITY_N; /* md's raid4 is PARITY_N whatever the caller says */
		g->copies = 1;
		break;
	case LAYOUT_RAID10:
		if (g->alg > LAYOUT_R10_OFFSET)
			return layout_errf(err, errlen, "unknown raid10 layout %u (0 near, 1 far, 2 offset)",
					   g->alg);
		if (g->copies == 0)
			g->copies = 2;
		break;
	case LAYOUT_RAID1:
		g->alg = 0;
		g->copies = g->members;
		break;
	default:
		g->alg = 0;
		g->copies = 1;
		break;
	}
	r = ops->init(g, err, errlen);
	if (r) {
		g->data_members = 0;
		g->member_used = 0;
		g->capacity = 0;
		g->stripes = 0;
	}
	return r;
}

int layout_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	const struct layout_ops *ops = layout_ops_of(g->level);

	if (!ops)
		return 0;
	return ops->survives(g, failed_mask & layout_members_mask(g->members));
}

int layout_locate(const struct layout_geom *g, uint64_t off, unsigned copy, struct layout_extent *e)
{
	const struct layout_ops *ops = layout_ops_of(g->level);

	if (!ops || off >= g->capacity || copy >= layout_copies(g))
		return -EINVAL;
	ops->locate(g, off, copy, e);
	return 0;
}

int layout_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
		 uint64_t *logical, unsigned *copy)
{
	const struct layout_ops *ops = layout_ops_of(g->level);

	if (!ops || member >= g->members)
		return -EINVAL;
	/* linear members differ in size: linear.c checks its own bound */
	if (g->level != LAYOUT_LINEAR && moff >= g->member_used)
		return -ENOENT;
	return ops->unmap(g, member, moff, logical, copy);
}
