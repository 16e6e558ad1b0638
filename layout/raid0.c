/* raid0: md striping over equal members (the smallest, rounded down to the chunk).
 * Chunk k goes to member k mod n at member offset (k div n) * chunk:
 *
 *          m0   m1   m2
 *   row 0  D0   D1   D2
 *   row 1  D3   D4   D5
 */
#include "layout/layout_int.h"

static int raid0_init(struct layout_geom *g, char *err, size_t errlen)
{
	int r = layout_smallest_member(g, g->chunk, &g->member_used, err, errlen);
	char a[32];

	if (r)
		return r;
	if (__builtin_mul_overflow(g->member_used, (uint64_t)g->members, &g->capacity) ||
	    g->capacity > LAYOUT_MAX_CAPACITY)
		return layout_errf(err, errlen, "capacity overflows: %u members x %s exceeds 2^63 - 1 bytes",
				   g->members, layout_fmt_size(g->member_used, 0, a, sizeof(a)));
	g->data_members = g->members;
	g->stripes = g->member_used / g->chunk;
	return 0;
}

static void raid0_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			 struct layout_extent *e)
{
	uint64_t c = off / g->chunk, in = off % g->chunk;

	(void)copy;
	e->logical = off;
	e->member = (unsigned)(c % g->members);
	e->offset = (c / g->members) * g->chunk + in;
	e->length = g->chunk - in;
	e->copy = 0;
}

static int raid0_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
		       uint64_t *logical, unsigned *copy)
{
	/* chunk = row * n + member */
	uint64_t c = (moff / g->chunk) * g->members + member;

	*logical = c * g->chunk + moff % g->chunk;
	*copy = 0;
	return LAYOUT_DATA;
}

static int raid0_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	(void)g;
	return failed_mask == 0;
}

const struct layout_ops layout_raid0_ops = {
	.name = "raid0",
	.min_members = 1,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = raid0_init,
	.locate = raid0_locate,
	.unmap = raid0_unmap,
	.survives = raid0_survives,
};
