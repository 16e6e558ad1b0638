/* raid1: n-way mirror. Copy k of every byte is on member k at the same offset;
 * capacity is the smallest member rounded down to the chunk.
 *
 *          m0   m1   m2
 *   row 0  D0   D0   D0
 *   row 1  D1   D1   D1
 */
#include "layout/layout_int.h"

static int raid1_init(struct layout_geom *g, char *err, size_t errlen)
{
	int r = layout_smallest_member(g, g->chunk, &g->member_used, err, errlen);

	if (r)
		return r;
	if (g->member_used > LAYOUT_MAX_CAPACITY)
		return layout_errf(err, errlen, "capacity overflows: %llu bytes exceeds 2^63 - 1",
				   (unsigned long long)g->member_used);
	g->data_members = 1;
	g->capacity = g->member_used;
	g->stripes = g->member_used / g->chunk;
	return 0;
}

/* the extent ends at the chunk boundary, so the engine can balance by chunk */
static void raid1_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			 struct layout_extent *e)
{
	e->logical = off;
	e->offset = off;
	e->length = g->chunk - off % g->chunk;
	e->member = copy;
	e->copy = copy;
}

static int raid1_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
		       uint64_t *logical, unsigned *copy)
{
	(void)g;
	*logical = moff;
	*copy = member;
	return LAYOUT_DATA;
}

/* one present member holds everything */
static int raid1_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	return (unsigned)__builtin_popcountll(failed_mask) < g->members;
}

const struct layout_ops layout_raid1_ops = {
	.name = "raid1",
	.min_members = 2,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = raid1_init,
	.locate = raid1_locate,
	.unmap = raid1_unmap,
	.survives = raid1_survives,
};
