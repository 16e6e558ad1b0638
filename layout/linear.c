/* single and linear: no redundancy, no striping.
 *
 *   single: one member, logical == member offset.
 *   linear: members concatenated in order, each rounded down to 4 KiB:
 *
 *     logical  0 ........ s0 ........ s0+s1 ........ s0+s1+s2
 *              |   m0     |    m1     |      m2      |
 */
#include "layout/layout_int.h"

#include <errno.h>

static int capacity_check(uint64_t cap, char *err, size_t errlen)
{
	if (cap > LAYOUT_MAX_CAPACITY)
		return layout_errf(err, errlen, "capacity overflows: %llu bytes exceeds 2^63 - 1",
				   (unsigned long long)cap);
	return 0;
}

static int single_init(struct layout_geom *g, char *err, size_t errlen)
{
	int r = layout_smallest_member(g, g->chunk, &g->member_used, err, errlen);

	if (r)
		return r;
	g->data_members = 1;
	g->capacity = g->member_used;
	g->stripes = g->member_used / g->chunk;
	return capacity_check(g->capacity, err, errlen);
}

/* identity: the extent runs to the end of the only member */
static void single_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			  struct layout_extent *e)
{
	(void)copy;
	e->logical = off;
	e->offset = off;
	e->length = g->capacity - off;
	e->member = 0;
	e->copy = 0;
}

static int single_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
			uint64_t *logical, unsigned *copy)
{
	(void)g;
	(void)member;
	*logical = moff;
	*copy = 0;
	return LAYOUT_DATA;
}

/* no redundancy: any missing member loses data */
static int none_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	(void)g;
	return failed_mask == 0;
}

static uint64_t linear_size(const struct layout_geom *g, unsigned i)
{
	return g->member_size[i] & ~(uint64_t)(LAYOUT_LINEAR_UNIT - 1);
}

static int linear_init(struct layout_geom *g, char *err, size_t errlen)
{
	uint64_t cap = 0, max = 0;
	char a[32];

	for (unsigned i = 0; i < g->members; i++) {
		uint64_t sz = linear_size(g, i);
		if (g->member_size[i] < LAYOUT_LINEAR_UNIT)
			return layout_errf(err, errlen, "member %u (%s) is smaller than 4K", i,
					   layout_fmt_size(g->member_size[i], 0, a, sizeof(a)));
		if (__builtin_add_overflow(cap, sz, &cap) || cap > LAYOUT_MAX_CAPACITY)
			return layout_errf(err, errlen,
					   "capacity overflows: members 0..%u add up to more than 2^63 - 1 bytes", i);
		if (sz > max)
			max = sz;
	}
	g->data_members = 1;
	g->member_used = max; /* members differ: see linear_size() for each */
	g->capacity = cap;
	g->stripes = 0;
	return 0;
}

/* the extent runs to the end of the member holding off */
static void linear_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			  struct layout_extent *e)
{
	uint64_t base = 0;
	unsigned i = 0;

	(void)copy;
	for (; i + 1 < g->members && off - base >= linear_size(g, i); i++)
		base += linear_size(g, i);
	e->logical = off;
	e->offset = off - base;
	e->length = linear_size(g, i) - e->offset;
	e->member = i;
	e->copy = 0;
}

static int linear_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
			uint64_t *logical, unsigned *copy)
{
	uint64_t base = 0;

	if (moff >= linear_size(g, member))
		return -ENOENT;
	for (unsigned i = 0; i < member; i++)
		base += linear_size(g, i);
	*logical = base + moff;
	*copy = 0;
	return LAYOUT_DATA;
}

const struct layout_ops layout_single_ops = {
	.name = "single",
	.min_members = 1,
	.max_members = 1,
	.init = single_init,
	.locate = single_locate,
	.unmap = single_unmap,
	.survives = none_survives,
};

const struct layout_ops layout_linear_ops = {
	.name = "linear",
	.min_members = 1,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = linear_init,
	.locate = linear_locate,
	.unmap = linear_unmap,
	.survives = none_survives,
};
