/* io_plain: single, linear and raid0, where every byte has one home.
 * A read or write is one piece per extent; a lost member loses its data. */
#include <errno.h>

#include "fsvol/core/eng_int.h"

/* One batch: every extent of the segment. */
static int plain_rw(struct eng_req *rq, int op)
{
	const struct layout_geom *g = rq->geom;
	uint64_t failed = eng_failed(rq->v), end = rq->seg_off + rq->seg_len;
	if (!eng_once(rq))
		return ENG_DONE;
	for (uint64_t pos = rq->seg_off; pos < end;) {
		struct layout_extent e;
		int r = layout_locate(g, pos, 0, &e);
		if (r)
			return r;
		if (failed & (1ull << e.member))
			return -EIO;
		if (e.length > end - pos)
			e.length = end - pos;
		if ((r = eng_piece(rq, e.member, op, op == MEMBER_READ ? rq->why : STATS_WHY_DATA, e.offset, e.length,
				   rq->seg_buf + (pos - rq->seg_off))))
			return r;
		pos += e.length;
	}
	return ENG_ISSUE;
}

static int plain_read(struct eng_req *rq)
{
	return plain_rw(rq, MEMBER_READ);
}

static int plain_write(struct eng_req *rq)
{
	return plain_rw(rq, MEMBER_WRITE);
}

static int plain_resync(struct eng_req *rq)
{
	(void)rq;
	return -EINVAL; /* nothing redundant to compare */
}

static uint64_t plain_units(const struct layout_geom *g)
{
	(void)g;
	return 0;
}

static void plain_range(const struct layout_geom *g, uint64_t unit, uint64_t *off, uint64_t *len)
{
	(void)g, (void)unit;
	*off = *len = 0;
}

static uint64_t plain_lock_unit(const struct layout_geom *g)
{
	(void)g;
	return 1u << 20;
}

const struct eng_family eng_plain = {
	.name = "plain",
	.read = plain_read,
	.write = plain_write,
	.resync = plain_resync,
	.rebuild = plain_resync,
	.resync_units = plain_units,
	.resync_range = plain_range,
	.lock_unit = plain_lock_unit,
	.parity = 0,
};
