/* io_parity: raid4, raid5 and raid6.
 *
 * Reads of healthy stripes go straight to the data columns; a stripe with a
 * lost column is planned (layout_plan_read) and rebuilt from the others.
 * Writes go in rounds of a few stripes: plan each (RMW, RCW or FULL, by what
 * it must read), read what the plans need, compute P (and Q), write:
 *
 *   phase 0: plan the round, read     phase 1: compute, write     phase 2: next round
 *
 * Resync walks one stripe in windows: read every column and the parity,
 * recompute, count what disagrees, rewrite the parity when repairing.
 */
#include <errno.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "layout/parity.h"

#define PARITY_WINDOW (256u << 10)

static uint64_t stripe_bytes(const struct layout_geom *g)
{
	return g->chunk * g->data_members;
}

/* Reads in a RECONSTRUCT plan (or a write plan's reads) give full-span
 * buffers for the columns they cover; fill blocks[] (data, P, Q) and list the
 * columns to recover. nparity: 1 when Q is not available, else 2. */
static int gather_lost(struct eng_req *rq, const struct eng_plan *pl, void *blocks[], unsigned *nparity,
		       unsigned lost[], unsigned *nlost, uint64_t span)
{
	const struct layout_geom *g = &rq->v->geom;
	const struct layout_plan *p = &pl->p;
	unsigned nd = g->data_members, np = layout_parity_count(g);
	for (unsigned j = 0; j < nd + 2; j++)
		blocks[j] = NULL;
	for (unsigned i = 0; i < p->nreads; i++) {
		const struct layout_io *io = &p->reads[i];
		if (io->in_chunk != p->span_lo || io->length != span)
			continue;
		unsigned col = io->role == LAYOUT_DATA ? (unsigned)io->index : io->role == LAYOUT_P ? nd : nd + 1;
		blocks[col] = pl->rbuf[i];
	}
	*nparity = (np == 2 && blocks[nd + 1]) ? 2 : 1;
	*nlost = 0;
	for (unsigned j = 0; j < nd + *nparity; j++) {
		if (blocks[j])
			continue;
		if (*nlost == *nparity)
			return -EIO;
		if (!(blocks[j] = eng_alloc(rq, span)))
			return -ENOMEM;
		lost[(*nlost)++] = j;
	}
	return 0;
}

static int read_why(const struct layout_plan *p, const struct layout_io *io)
{
	if (io->role != LAYOUT_DATA)
		return p->mode == LAYOUT_PLAN_RECONSTRUCT ? STATS_WHY_RECONSTRUCT : STATS_WHY_PARITY_READ;
	if (p->mode == LAYOUT_PLAN_RMW)
		return STATS_WHY_OLD_DATA;
	return p->mode == LAYOUT_PLAN_RECONSTRUCT ? STATS_WHY_RECONSTRUCT : STATS_WHY_DATA;
}

/* Bytes of scratch a plan needs: its reads, new P/Q, recovered columns. */
static uint64_t plan_need(const struct layout_geom *g, const struct layout_plan *p)
{
	uint64_t span = p->span_hi - p->span_lo, need = 0;
	for (unsigned i = 0; i < p->nreads; i++)
		need += (p->reads[i].length + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
	return need + (layout_parity_count(g) + 2) * span;
}

/* Buffers for a plan's reads, and the read pieces. */
static int plan_reads(struct eng_req *rq, struct eng_plan *pl, int why_override)
{
	for (unsigned i = 0; i < pl->p.nreads; i++) {
		const struct layout_io *io = &pl->p.reads[i];
		if (!(pl->rbuf[i] = eng_alloc(rq, io->length)))
			return -ENOMEM;
		int r = eng_piece(rq, io->member, MEMBER_READ, why_override >= 0 ? why_override : read_why(&pl->p, io),
				  io->offset, io->length, pl->rbuf[i]);
		if (r)
			return r;
	}
	return 0;
}

/* ---- reads ---- */

/* Degraded read of one stripe piece: recover the lost columns, copy out. */
static int read_reconstruct(struct eng_req *rq, struct eng_plan *pl)
{
	const struct layout_geom *g = &rq->v->geom;
	const struct layout_plan *p = &pl->p;
	uint64_t span = p->span_hi - p->span_lo;
	void *blocks[LAYOUT_MAX_MEMBERS + 2];
	unsigned lost[2], nlost, nparity;
	int r = gather_lost(rq, pl, blocks, &nparity, lost, &nlost, span);
	if (r)
		return r;
	if (nlost && parity_recover(blocks, g->data_members, nparity, lost, nlost, span))
		return -EIO;
	for (unsigned j = 0; j < g->data_members; j++) {
		if (p->lo[j] == p->hi[j])
			continue;
		uint64_t logical = p->s.logical + j * g->chunk + p->lo[j];
		memcpy(rq->seg_buf + (logical - rq->seg_off), (uint8_t *)blocks[j] + (p->lo[j] - p->span_lo),
		       p->hi[j] - p->lo[j]);
	}
	return 0;
}

/* Plan a read round from rq->rpos: healthy stripes straight, lost ones planned. */
static int read_round(struct eng_req *rq)
{
	const struct layout_geom *g = &rq->v->geom;
	uint64_t sbytes = stripe_bytes(g), end = rq->seg_off + rq->seg_len;
	uint64_t pos = rq->rpos, budget = 0;
	while (pos < end) {
		uint64_t send = (pos / sbytes + 1) * sbytes, plen = (send < end ? send : end) - pos;
		uint64_t failed = eng_failed_at(rq, pos);
		struct layout_extent e;
		int healthy = 1, r;
		for (uint64_t q = pos; failed && q < pos + plen; q += e.length) {
			layout_locate(g, q, 0, &e);
			if (failed & (1ull << e.member))
				healthy = 0;
		}
		if (healthy) {
			for (uint64_t q = pos; q < pos + plen; q += e.length) {
				layout_locate(g, q, 0, &e);
				if (e.length > pos + plen - q)
					e.length = pos + plen - q;
				if ((r = eng_piece(rq, e.member, MEMBER_READ, rq->why, e.offset, e.length,
						   rq->seg_buf + (q - rq->seg_off))))
					return r;
			}
		} else {
			struct layout_plan p;
			if ((r = layout_plan_read(g, pos, plen, failed, &p)))
				return r;
			uint64_t need = plan_need(g, &p);
			if (rq->nplans && (rq->nplans == ENG_ROUND_PLANS || budget + need > ENG_ROUND_BUDGET))
				break; /* the rest waits for the next round */
			struct eng_plan *pl = eng_plan_new(rq);
			if (!pl)
				return -ENOMEM;
			pl->p = p;
			budget += need;
			if ((r = plan_reads(rq, pl, STATS_WHY_RECONSTRUCT)))
				return r;
		}
		pos += plen;
	}
	rq->rend = pos;
	return ENG_ISSUE;
}

static int parity_read(struct eng_req *rq)
{
	uint64_t end = rq->seg_off + rq->seg_len;
	if (rq->phase == 0) {
		rq->phase = 1;
		return read_round(rq);
	}
	for (unsigned k = 0; k < rq->nplans; k++) {
		int r = read_reconstruct(rq, &rq->plans[k]);
		if (r)
			return r;
	}
	eng_scratch_free(rq);
	rq->rpos = rq->rend;
	if (rq->rpos >= end)
		return ENG_DONE;
	rq->phase = 1;
	return read_round(rq);
}

/* ---- writes ---- */

static const uint8_t *col_src(const struct layout_geom *g, const struct eng_plan *pl, unsigned j, uint64_t in_chunk)
{
	uint64_t logical = pl->p.s.logical + j * g->chunk + in_chunk;
	return pl->src + (logical - pl->src_off);
}

/* Pointer to column j's bytes at in-chunk offset x from the plan's reads. */
static const uint8_t *col_read(const struct eng_plan *pl, int role, int j, uint64_t x)
{
	const struct layout_plan *p = &pl->p;
	for (unsigned i = 0; i < p->nreads; i++) {
		const struct layout_io *io = &p->reads[i];
		if ((int)io->role == role && (role != LAYOUT_DATA || io->index == j) && io->in_chunk <= x &&
		    x < io->in_chunk + io->length)
			return (const uint8_t *)pl->rbuf[i] + (x - io->in_chunk);
	}
	return NULL;
}

/* Compute the new parity of a plan and add its write pieces. */
static int write_compute(struct eng_req *rq, struct eng_plan *pl)
{
	const struct layout_geom *g = &rq->v->geom;
	const struct layout_plan *p = &pl->p;
	unsigned nd = g->data_members;
	uint64_t span = p->span_hi - p->span_lo;
	uint8_t *pbuf = NULL, *qbuf = NULL;
	/* Which parity to produce follows the plan (made with one failed mask),
	 * not the live mask, which another request may change meanwhile. */
	int want_p = 0, want_q = 0;
	for (unsigned i = 0; i < p->nwrites; i++) {
		want_p |= p->writes[i].role == LAYOUT_P;
		want_q |= p->writes[i].role == LAYOUT_Q;
	}

	if (p->mode == LAYOUT_PLAN_RMW) {
		pbuf = want_p ? (uint8_t *)col_read(pl, LAYOUT_P, -1, p->span_lo) : NULL;
		qbuf = want_q ? (uint8_t *)col_read(pl, LAYOUT_Q, -1, p->span_lo) : NULL;
		if ((want_p && !pbuf) || (want_q && !qbuf))
			return -EIO; /* a plan that reads no parity cannot update it */
		for (unsigned j = 0; j < nd; j++) {
			if (p->lo[j] == p->hi[j])
				continue;
			const uint8_t *old = col_read(pl, LAYOUT_DATA, (int)j, p->lo[j]);
			if (!old)
				return -EIO;
			parity_rmw(pbuf ? pbuf + (p->lo[j] - p->span_lo) : NULL, qbuf ? qbuf + (p->lo[j] - p->span_lo) : NULL,
				   old, col_src(g, pl, j, p->lo[j]), j, p->hi[j] - p->lo[j]);
		}
	} else if (p->mode == LAYOUT_PLAN_RCW || p->mode == LAYOUT_PLAN_FULL) {
		/* parity_gen always needs a P target, even when P's member is gone */
		if (!(pbuf = eng_alloc(rq, span)) || (want_q && !(qbuf = eng_alloc(rq, span))))
			return -ENOMEM;
		/* Segments between column boundaries: in each, every column's bytes
		 * are contiguous, either new (src) or read. */
		uint64_t cuts[2 * LAYOUT_MAX_MEMBERS + 2];
		unsigned nc = 0;
		cuts[nc++] = p->span_lo;
		cuts[nc++] = p->span_hi;
		for (unsigned j = 0; j < nd; j++) {
			if (p->lo[j] > p->span_lo && p->lo[j] < p->span_hi)
				cuts[nc++] = p->lo[j];
			if (p->hi[j] > p->span_lo && p->hi[j] < p->span_hi)
				cuts[nc++] = p->hi[j];
		}
		for (unsigned a = 1; a < nc; a++) /* insertion sort: few cuts */
			for (unsigned b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
				uint64_t t = cuts[b];
				cuts[b] = cuts[b - 1];
				cuts[b - 1] = t;
			}
		for (unsigned s = 0; s + 1 < nc; s++) {
			uint64_t x = cuts[s], y = cuts[s + 1];
			const void *cols[LAYOUT_MAX_MEMBERS];
			if (x == y)
				continue;
			for (unsigned j = 0; j < nd; j++) {
				if (p->lo[j] <= x && y <= p->hi[j])
					cols[j] = col_src(g, pl, j, x);
				else if (!(cols[j] = col_read(pl, LAYOUT_DATA, (int)j, x)))
					return -EIO;
			}
			parity_gen(cols, nd, pbuf ? pbuf + (x - p->span_lo) : NULL, qbuf ? qbuf + (x - p->span_lo) : NULL,
				   y - x);
		}
	} else { /* RECONSTRUCT */
		void *blocks[LAYOUT_MAX_MEMBERS + 2];
		unsigned lost[2], nlost, nparity;
		int r = gather_lost(rq, pl, blocks, &nparity, lost, &nlost, span);
		if (r)
			return r;
		if (nlost && parity_recover(blocks, nd, nparity, lost, nlost, span))
			return -EIO;
		for (unsigned j = 0; j < nd; j++)
			if (p->lo[j] != p->hi[j])
				memcpy((uint8_t *)blocks[j] + (p->lo[j] - p->span_lo), col_src(g, pl, j, p->lo[j]),
				       p->hi[j] - p->lo[j]);
		pbuf = blocks[nd];
		if (!(qbuf = blocks[nd + 1]) && want_q && !(qbuf = eng_alloc(rq, span)))
			return -ENOMEM;
		parity_gen((const void *const *)blocks, nd, pbuf, want_q ? qbuf : NULL, span);
	}

	for (unsigned i = 0; i < p->nwrites; i++) {
		const struct layout_io *io = &p->writes[i];
		const uint8_t *from;
		int why;
		if (io->role == LAYOUT_DATA) {
			from = col_src(g, pl, (unsigned)io->index, io->in_chunk);
			why = STATS_WHY_DATA;
		} else {
			from = io->role == LAYOUT_P ? pbuf : qbuf;
			if (!from)
				continue;
			from += io->in_chunk - p->span_lo;
			why = STATS_WHY_PARITY_WRITE;
		}
		int r = eng_piece(rq, io->member, MEMBER_WRITE, why, io->offset, io->length, (void *)from);
		if (r)
			return r;
	}
	return 0;
}

/* Plan a write round from rq->rpos: as many stripes as fit the budget. */
static int write_round(struct eng_req *rq)
{
	const struct layout_geom *g = &rq->v->geom;
	uint64_t sbytes = stripe_bytes(g), end = rq->seg_off + rq->seg_len;
	uint64_t pos = rq->rpos, budget = 0;
	int r;
	while (pos < end && rq->nplans < ENG_ROUND_PLANS) {
		uint64_t send = (pos / sbytes + 1) * sbytes, plen = (send < end ? send : end) - pos;
		uint64_t failed = eng_failed_at(rq, pos);
		struct layout_plan p;
		uint64_t need;
		for (;;) {
			if ((r = layout_plan_write(g, pos, plen, failed, &p)))
				return r;
			need = plan_need(g, &p);
			if (budget + need <= ENG_ROUND_BUDGET || rq->nplans)
				break;
			if (plen <= ENG_ALIGN)
				return -ENOMEM;
			plen = (plen / 2 + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
		}
		if (rq->nplans && budget + need > ENG_ROUND_BUDGET)
			break;
		struct eng_plan *pl = eng_plan_new(rq);
		if (!pl)
			return -ENOMEM;
		pl->p = p;
		pl->src = rq->seg_buf;
		pl->src_off = rq->seg_off;
		budget += need;
		if ((r = plan_reads(rq, pl, -1)))
			return r;
		pos += plen;
	}
	rq->rend = pos;
	return 0;
}

static int parity_write(struct eng_req *rq)
{
	uint64_t end = rq->seg_off + rq->seg_len;
	int r;
	for (;;) {
		switch (rq->phase) {
		case 0:
			if ((r = write_round(rq)))
				return r;
			rq->phase = 1;
			if (rq->npieces)
				return ENG_ISSUE;
			/* nothing to read (full stripes): compute at once */
			__attribute__((fallthrough));
		case 1:
			for (unsigned k = 0; k < rq->nplans; k++)
				if ((r = write_compute(rq, &rq->plans[k])))
					return r;
			rq->phase = 2;
			return ENG_ISSUE;
		default:
			eng_scratch_free(rq);
			rq->rpos = rq->rend;
			if (rq->rpos >= end)
				return ENG_DONE;
			rq->phase = 0;
		}
	}
}

/* ---- resync ---- */

static int parity_resync(struct eng_req *rq)
{
	const struct layout_geom *g = &rq->v->geom;
	unsigned nd = g->data_members, np = layout_parity_count(g);
	uint64_t failed = eng_failed_at(rq, rq->seg_off);
	uint64_t win = g->chunk < PARITY_WINDOW ? g->chunk : PARITY_WINDOW;
	struct layout_stripe st;
	layout_stripe(g, rq->unit, &st);
	int pm[2] = { st.p, st.q };
	/* scratch layout per window: nd columns, then np read parity, then np fresh */
	for (;;) {
		uint64_t x = rq->rpos - rq->seg_off; /* in-chunk offset of the window */
		if (x >= g->chunk)
			return ENG_DONE;
		if (rq->phase == 0) {
			unsigned present = 0;
			for (unsigned k = 0; k < np; k++)
				present += !(failed & (1ull << pm[k]));
			for (unsigned j = 0; j < nd; j++)
				if (failed & (1ull << st.data[j]))
					present = 0;
			if (!present) {
				/* a data column or every parity is gone: nothing to check against */
				rq->skipped++;
				return ENG_DONE;
			}
			eng_scratch_free(rq);
			uint8_t **b = eng_alloc(rq, (nd + 2 * np) * sizeof(*b));
			if (!b)
				return -ENOMEM;
			rq->fam_priv = b;
			for (unsigned j = 0; j < nd; j++) {
				if (!(b[j] = eng_alloc(rq, win)))
					return -ENOMEM;
				int r = eng_piece(rq, st.data[j], MEMBER_READ, STATS_WHY_DATA, st.member_offset + x, win, b[j]);
				if (r)
					return r;
			}
			for (unsigned k = 0; k < np; k++) {
				b[nd + k] = NULL;
				if (!(b[nd + np + k] = eng_alloc(rq, win)))
					return -ENOMEM;
				if (failed & (1ull << pm[k]))
					continue;
				if (!(b[nd + k] = eng_alloc(rq, win)))
					return -ENOMEM;
				int r = eng_piece(rq, (unsigned)pm[k], MEMBER_READ, STATS_WHY_PARITY_READ, st.member_offset + x,
						  win, b[nd + k]);
				if (r)
					return r;
			}
			rq->phase = 1;
			return ENG_ISSUE;
		}
		if (rq->phase == 1) {
			uint8_t **b = rq->fam_priv;
			parity_gen((const void *const *)b, nd, b[nd + np], np > 1 ? b[nd + np + 1] : NULL, win);
			int differs = 0;
			for (unsigned k = 0; k < np; k++)
				if (b[nd + k] && memcmp(b[nd + k], b[nd + np + k], win)) {
					differs = 1;
					if (rq->repair) {
						int r = eng_piece(rq, (unsigned)pm[k], MEMBER_WRITE, STATS_WHY_PARITY_WRITE,
								  st.member_offset + x, win, b[nd + np + k]);
						if (r)
							return r;
					}
				}
			rq->mismatches += differs;
			rq->phase = 2;
			if (rq->npieces)
				return ENG_ISSUE;
		}
		eng_scratch_free(rq);
		rq->rpos += win;
		rq->phase = 0;
	}
}

/* Rebuild the rebuild slot's column of one stripe, window by window: phase 0
 * reads every other column that is present, phase 1 recovers what is lost
 * (the target, and on raid6 maybe one more) and writes the target's part. */
static int parity_rebuild(struct eng_req *rq)
{
	const struct layout_geom *g = &rq->v->geom;
	unsigned nd = g->data_members, np = layout_parity_count(g), n = nd + np;
	unsigned target = (unsigned)rq->target;
	uint64_t failed = eng_failed_at(rq, rq->seg_off) | (1ull << target);
	uint64_t win = g->chunk < PARITY_WINDOW ? g->chunk : PARITY_WINDOW;
	struct layout_stripe st;
	unsigned col[LAYOUT_MAX_MEMBERS + 2], tcol = n;
	layout_stripe(g, rq->unit, &st);
	/* blocks: data in data-index order, then P, then Q (parity_recover's order) */
	for (unsigned j = 0; j < nd; j++)
		col[j] = st.data[j];
	col[nd] = (unsigned)st.p;
	if (np > 1)
		col[nd + 1] = (unsigned)st.q;
	for (unsigned j = 0; j < n; j++)
		if (col[j] == target)
			tcol = j;
	if (tcol == n)
		return ENG_DONE; /* cannot happen: every member holds a column of every stripe */
	for (;;) {
		uint64_t x = rq->rpos - rq->seg_off;
		if (x >= g->chunk)
			return ENG_DONE;
		if (rq->phase == 0) {
			eng_scratch_free(rq);
			uint8_t **b = eng_alloc(rq, n * sizeof(*b));
			if (!b)
				return -ENOMEM;
			rq->fam_priv = b;
			for (unsigned j = 0; j < n; j++) {
				if (!(b[j] = eng_alloc(rq, win)))
					return -ENOMEM;
				if (failed & (1ull << col[j]))
					continue;
				int r = eng_piece(rq, col[j], MEMBER_READ, STATS_WHY_REBUILD, st.member_offset + x, win, b[j]);
				if (r)
					return r;
			}
			rq->phase = 1;
			return ENG_ISSUE;
		}
		if (rq->phase == 1) {
			uint8_t **b = rq->fam_priv;
			unsigned lost[2], nlost = 0;
			for (unsigned j = 0; j < n; j++)
				if (failed & (1ull << col[j])) {
					if (nlost == np)
						return -EIO; /* more lost than the level can rebuild */
					lost[nlost++] = j;
				}
			if (parity_recover((void *const *)b, nd, np, lost, nlost, win))
				return -EIO;
			rq->phase = 2;
			int r = eng_piece(rq, (unsigned)rq->dest, MEMBER_WRITE, STATS_WHY_REBUILD, st.member_offset + x, win, b[tcol]);
			return r ? r : ENG_ISSUE;
		}
		eng_scratch_free(rq);
		rq->rpos += win;
		rq->phase = 0;
	}
}

static uint64_t parity_units(const struct layout_geom *g)
{
	return g->stripes;
}

static void parity_range(const struct layout_geom *g, uint64_t unit, uint64_t *off, uint64_t *len)
{
	*off = unit * stripe_bytes(g);
	*len = stripe_bytes(g);
	if (*len > g->capacity - *off)
		*len = g->capacity - *off;
}

static uint64_t parity_lock_unit(const struct layout_geom *g)
{
	return stripe_bytes(g);
}

const struct eng_family eng_parity = {
	.name = "parity",
	.read = parity_read,
	.write = parity_write,
	.resync = parity_resync,
	.rebuild = parity_rebuild,
	.resync_units = parity_units,
	.resync_range = parity_range,
	.lock_unit = parity_lock_unit,
	.parity = 1,
};
