/* io_parity: raid4, raid5 and raid6.
 *
 * Reads of healthy stripes go straight to the data columns; a stripe with a
 * lost column is planned (layout_plan_read) and rebuilt from the others.
 * Writes go in rounds of a few stripes: plan each (RMW, RCW or FULL, by what
 * it must read), read what the plans need, compute P (and Q), write:
 *
 *   ROUND_READ: plan the round, read   ROUND_WRITE: compute, write   ROUND_NEXT: next round
 *
 * Resync walks one stripe in windows (eng_window_loop): read every column and
 * the parity, recompute, count what disagrees, rewrite the parity when
 * repairing.
 */
#include <errno.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/volume.h"
#include "layout/parity.h"

#define PARITY_WINDOW (256u << 10)

/* A foreground request's step through its rounds (rq->phase; raid5's
 * check_states / reconstruct_states in miniature). */
enum parity_round {
	ROUND_READ,  /* plan the round, read what the plans need */
	ROUND_WRITE, /* reads: reconstruct; writes: compute P (and Q), write */
	ROUND_NEXT,  /* the round is done: the next one */
	ROUND_LOG,   /* ppl: the partial parity records first (ppl.c) */
	ROUND_DATA,  /* ppl: they are in; now the data and parity */
};

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
	const struct layout_geom *g = rq->geom;
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

static int read_why(const struct layout_io *io)
{
	if (io->mode == LAYOUT_PLAN_RECONSTRUCT)
		return STATS_WHY_RECONSTRUCT;
	if (io->role != LAYOUT_DATA)
		return STATS_WHY_PARITY_READ;
	return io->mode == LAYOUT_PLAN_RMW ? STATS_WHY_OLD_DATA : STATS_WHY_DATA;
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
		int r = eng_piece(rq, io->member, MEMBER_READ, why_override >= 0 ? why_override : read_why(io),
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
	const struct layout_geom *g = rq->geom;
	const struct layout_plan *p = &pl->p;
	uint64_t span = p->span_hi - p->span_lo;
	void *blocks[LAYOUT_MAX_MEMBERS + 2];
	unsigned lost[2], nlost, nparity;
	int r = gather_lost(rq, pl, blocks, &nparity, lost, &nlost, span);
	if (r)
		return r;
	if (nlost && parity_recover_slots(blocks, layout_q_slots(&p->s), g->data_members, nparity, lost, nlost, span))
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
	const struct layout_geom *g = rq->geom;
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
	if (rq->phase == ROUND_READ) {
		rq->phase = ROUND_WRITE;
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
	rq->phase = ROUND_WRITE; /* a read round reconstructs and reads on in one step */
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

/* The new parity of a read-modify-write band [x, y): the old parity, then
 * old ^ new of every column written there. */
static int band_rmw(struct eng_req *rq, const struct eng_plan *pl, const struct layout_band *b, uint8_t *pbuf,
		    uint8_t *qbuf)
{
	const struct layout_geom *g = rq->geom;
	const struct layout_plan *p = &pl->p;
	uint8_t *par[2] = { pbuf, qbuf };
	for (unsigned k = 0; k < 2; k++) {
		if (!par[k])
			continue;
		const uint8_t *old = col_read(pl, k ? LAYOUT_Q : LAYOUT_P, -1, b->lo);
		if (!old)
			return -EIO; /* a plan that reads no parity cannot update it */
		memcpy(par[k] + (b->lo - p->span_lo), old, b->hi - b->lo);
	}
	for (unsigned j = 0; j < g->data_members; j++) {
		uint64_t x = p->lo[j] > b->lo ? p->lo[j] : b->lo, y = p->hi[j] < b->hi ? p->hi[j] : b->hi;
		if (p->lo[j] == p->hi[j] || x >= y)
			continue;
		const uint8_t *old = col_read(pl, LAYOUT_DATA, (int)j, x);
		if (!old)
			return -EIO;
		parity_rmw(pbuf ? pbuf + (x - p->span_lo) : NULL, qbuf ? qbuf + (x - p->span_lo) : NULL, old,
			   col_src(g, pl, j, x), p->s.qslot[j], y - x); /* Q's coefficient: md's slot */
	}
	return 0;
}

/* The parity of a reconstruct-write (or full) band [x, y) from every
 * column: cut where columns start or end, each piece of a column is then
 * either new (src) or read. */
static int band_rcw(struct eng_req *rq, const struct eng_plan *pl, const struct layout_band *b, uint8_t *pbuf,
		    uint8_t *qbuf)
{
	const struct layout_geom *g = rq->geom;
	const struct layout_plan *p = &pl->p;
	unsigned nd = g->data_members, nc = 0;
	uint64_t cuts[2 * LAYOUT_MAX_MEMBERS + 2];
	cuts[nc++] = b->lo;
	cuts[nc++] = b->hi;
	for (unsigned j = 0; j < nd; j++) {
		if (p->lo[j] > b->lo && p->lo[j] < b->hi)
			cuts[nc++] = p->lo[j];
		if (p->hi[j] > b->lo && p->hi[j] < b->hi)
			cuts[nc++] = p->hi[j];
	}
	layout_sort_offsets(cuts, nc);
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
		parity_gen_slots(cols, layout_q_slots(&p->s), nd, pbuf + (x - p->span_lo),
				 qbuf ? qbuf + (x - p->span_lo) : NULL, y - x);
	}
	return 0;
}

/* Compute the new parity of a plan and add its write pieces. */
static int write_compute(struct eng_req *rq, struct eng_plan *pl)
{
	const struct layout_geom *g = rq->geom;
	const struct layout_plan *p = &pl->p;
	unsigned nd = g->data_members;
	uint64_t span = p->span_hi - p->span_lo;
	uint8_t *pbuf = NULL, *qbuf = NULL;
	/* Which parity to produce follows the plan (made with one failed mask),
	 * not the live mask, which another request may change meanwhile. */
	int want_p = 0, want_q = 0, r = 0;
	for (unsigned i = 0; i < p->nwrites; i++) {
		want_p |= p->writes[i].role == LAYOUT_P;
		want_q |= p->writes[i].role == LAYOUT_Q;
	}

	if (p->mode != LAYOUT_PLAN_RECONSTRUCT) {
		/* parity_gen always needs a P target, even when P's member is gone */
		if (!(pbuf = eng_alloc(rq, span)) || (want_q && !(qbuf = eng_alloc(rq, span))))
			return -ENOMEM;
		for (unsigned k = 0; k < p->nbands && !r; k++)
			r = p->band[k].mode == LAYOUT_PLAN_RMW
				    ? band_rmw(rq, pl, &p->band[k], want_p ? pbuf : NULL, qbuf)
				    : band_rcw(rq, pl, &p->band[k], pbuf, qbuf);
		if (r)
			return r;
	} else {
		void *blocks[LAYOUT_MAX_MEMBERS + 2];
		unsigned lost[2], nlost, nparity;
		if ((r = gather_lost(rq, pl, blocks, &nparity, lost, &nlost, span)))
			return r;
		if (nlost && parity_recover_slots(blocks, layout_q_slots(&p->s), nd, nparity, lost, nlost, span))
			return -EIO;
		for (unsigned j = 0; j < nd; j++)
			if (p->lo[j] != p->hi[j])
				memcpy((uint8_t *)blocks[j] + (p->lo[j] - p->span_lo), col_src(g, pl, j, p->lo[j]),
				       p->hi[j] - p->lo[j]);
		pbuf = blocks[nd];
		if (!(qbuf = blocks[nd + 1]) && want_q && !(qbuf = eng_alloc(rq, span)))
			return -ENOMEM;
		parity_gen_slots((const void *const *)blocks, layout_q_slots(&p->s), nd, pbuf, want_q ? qbuf : NULL,
				 span);
	}

	unsigned first = rq->npieces;
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
		if ((r = eng_piece(rq, io->member, MEMBER_WRITE, why, io->offset, io->length, (void *)from)))
			return r;
	}
	/* ppl: the partial parity record; journal: the record of these writes */
	return ppl_on(rq->v) ? ppl_record(rq, pl, want_p ? pbuf : NULL, first) : 0;
}

/* md's rmw_level for this write; reconstruct-write while a resync is owed and
 * nothing is missing (md: above the resync checkpoint, parity may be stale,
 * so it is made from the data, never updated). */
static struct layout_write_opts write_opts(struct eng_req *rq, uint64_t failed)
{
	struct vol *v = rq->v;
	struct layout_write_opts o = { .rmw_level = (enum layout_rmw)vol_rmw_level(v), .dense = ppl_on(v) };
	if (!failed && vol_resync_owed(v))
		o.rmw_level = LAYOUT_RMW_DISABLE;
	return o;
}

unsigned vol_rmw_level(const struct vol *v)
{
	return atomic_load_explicit(&v->rmw_level, memory_order_relaxed);
}

void vol_set_rmw_level(struct vol *v, unsigned level)
{
	atomic_store(&v->rmw_level, level);
}

/* Plan a write round from rq->rpos: as many stripes as fit the budget. */
static int write_round(struct eng_req *rq)
{
	const struct layout_geom *g = rq->geom;
	uint64_t sbytes = stripe_bytes(g), end = rq->seg_off + rq->seg_len;
	uint64_t pos = rq->rpos, budget = 0;
	int r;
	while (pos < end && rq->nplans < ENG_ROUND_PLANS) {
		uint64_t send = (pos / sbytes + 1) * sbytes, plen = (send < end ? send : end) - pos;
		uint64_t failed = eng_failed_at(rq, pos);
		struct layout_plan p;
		uint64_t need;
		struct layout_write_opts o = write_opts(rq, failed);
		for (;;) {
			if ((r = layout_plan_write(g, pos, plen, failed, &o, &p)))
				return r;
			need = plan_need(g, &p);
			if (budget + need <= ENG_ROUND_BUDGET || rq->nplans)
				break;
			if (plen <= ENG_ALIGN)
				return -ENOMEM;
			plen = (plen / 2 + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
		}
		if (rq->nplans && (budget + need > ENG_ROUND_BUDGET || ppl_round_full(rq, &p)))
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
		switch ((enum parity_round)rq->phase) {
		case ROUND_READ:
			if ((r = write_round(rq)))
				return r;
			rq->phase = ROUND_WRITE;
			if (rq->npieces)
				return ENG_ISSUE;
			/* nothing to read (full stripes): compute at once */
			__attribute__((fallthrough));
		case ROUND_WRITE:
			for (unsigned k = 0; k < rq->nplans; k++)
				if ((r = write_compute(rq, &rq->plans[k])))
					return r;
			rq->phase = ppl_on(rq->v) ? ROUND_LOG : ROUND_NEXT;
			if (rq->phase == ROUND_NEXT)
				return ENG_ISSUE;
			__attribute__((fallthrough));
		case ROUND_LOG:
			/* the log records before the data and parity (md's PPL) */
			rq->phase = ROUND_DATA;
			if ((r = ppl_log(rq, ROUND_LOG)) != ENG_DONE)
				return r; /* ENG_ISSUE, ENG_WAIT (retried here) or -errno */
			__attribute__((fallthrough)); /* nothing logged: write at once */
		case ROUND_DATA:
			ppl_release_writes(rq);
			rq->phase = ROUND_NEXT;
			/* write-back journal: the last round's record is in, so the
			 * whole write is: acknowledge, then the members */
			if (ppl_write_back(rq->v) && rq->rend >= end && rq->progress + rq->seg_n >= rq->len)
				eng_ack_early(rq);
			return ENG_ISSUE;
		case ROUND_NEXT:
			eng_scratch_free(rq);
			rq->rpos = rq->rend;
			if (rq->rpos >= end)
				return ENG_DONE;
			rq->phase = ROUND_READ;
		}
	}
}

/* ---- resync ---- */

/* One stripe of a background pass: its columns, who is failed, the window. */
struct parity_win {
	struct layout_stripe st;
	unsigned nd, np, n;
	int pm[2];                          /* the parity members: P, Q */
	unsigned col[LAYOUT_MAX_MEMBERS + 2]; /* rebuild: data in data-index order, then P, then Q */
	unsigned tcol;                      /* rebuild: the target's column */
	uint64_t failed;                    /* at the unit's start */
	uint64_t win;
};

static void parity_win_init(struct eng_req *rq, struct parity_win *w, uint64_t failed)
{
	const struct layout_geom *g = rq->geom;
	w->nd = g->data_members;
	w->np = layout_parity_count(g);
	w->n = w->nd + w->np;
	w->failed = failed;
	w->win = g->chunk < PARITY_WINDOW ? g->chunk : PARITY_WINDOW;
	layout_stripe(g, rq->unit, &w->st);
	w->pm[0] = w->st.p;
	w->pm[1] = w->st.q;
}

/* The window's in-chunk offset */
static uint64_t win_x(const struct eng_req *rq)
{
	return rq->rpos - rq->seg_off;
}

/* Resync: read the data and the parity of the window, compute the parity,
 * compare, rewrite what differs (repair). Scratch per window: nd columns,
 * then np read parity, then np fresh. */
static int resync_window(struct eng_req *rq, void *wp, uint64_t *win)
{
	struct parity_win *w = wp;
	if (win_x(rq) >= rq->geom->chunk)
		return ENG_DONE;
	*win = w->win;
	if (rq->phase == ENG_WIN_READ) {
		unsigned present = 0;
		for (unsigned k = 0; k < w->np; k++)
			present += !(w->failed & (1ull << w->pm[k]));
		for (unsigned j = 0; j < w->nd; j++)
			if (w->failed & (1ull << w->st.data[j]))
				present = 0;
		if (!present) {
			/* a data column or every parity is gone: nothing to check against */
			rq->skipped++;
			return ENG_DONE;
		}
	}
	return ENG_WIN_GO;
}

static int resync_read(struct eng_req *rq, void *wp, uint64_t win)
{
	struct parity_win *w = wp;
	unsigned nd = w->nd, np = w->np;
	uint64_t at = w->st.member_offset + win_x(rq);
	uint8_t **b = eng_alloc(rq, (nd + 2 * np) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	rq->fam_priv = b;
	for (unsigned j = 0; j < nd; j++) {
		if (!(b[j] = eng_alloc(rq, win)))
			return -ENOMEM;
		int r = eng_piece(rq, w->st.data[j], MEMBER_READ, STATS_WHY_DATA, at, win, b[j]);
		if (r)
			return r;
	}
	for (unsigned k = 0; k < np; k++) {
		b[nd + k] = NULL;
		if (!(b[nd + np + k] = eng_alloc(rq, win)))
			return -ENOMEM;
		if (w->failed & (1ull << w->pm[k]))
			continue;
		if (!(b[nd + k] = eng_alloc(rq, win)))
			return -ENOMEM;
		int r = eng_piece(rq, (unsigned)w->pm[k], MEMBER_READ, STATS_WHY_PARITY_READ, at, win, b[nd + k]);
		if (r)
			return r;
	}
	return 0;
}

static int resync_write(struct eng_req *rq, void *wp, uint64_t win)
{
	struct parity_win *w = wp;
	unsigned nd = w->nd, np = w->np;
	uint8_t **b = rq->fam_priv;
	parity_gen_slots((const void *const *)b, layout_q_slots(&w->st), nd, b[nd + np], np > 1 ? b[nd + np + 1] : NULL,
			 win);
	int differs = 0;
	for (unsigned k = 0; k < np; k++)
		if (b[nd + k] && memcmp(b[nd + k], b[nd + np + k], win)) {
			differs = 1;
			if (rq->repair) {
				int r = eng_piece(rq, (unsigned)w->pm[k], MEMBER_WRITE, STATS_WHY_PARITY_WRITE,
						  w->st.member_offset + win_x(rq), win, b[nd + np + k]);
				if (r)
					return r;
			}
		}
	rq->mismatches += differs;
	return 0;
}

static const struct eng_window_ops parity_resync_ops = {
	.window = resync_window, .read = resync_read, .write = resync_write,
};

static int parity_resync(struct eng_req *rq)
{
	struct parity_win w;
	parity_win_init(rq, &w, eng_failed_at(rq, rq->seg_off));
	return eng_window_loop(rq, &parity_resync_ops, &w);
}

/* Rebuild the rebuild slot's column of one stripe, window by window: read
 * every other column that is present, recover what is lost (the target, and
 * on raid6 maybe one more) and write the target's part. */
static int rebuild_window(struct eng_req *rq, void *wp, uint64_t *win)
{
	struct parity_win *w = wp;
	if (win_x(rq) >= rq->geom->chunk)
		return ENG_DONE;
	*win = w->win;
	return ENG_WIN_GO;
}

static int rebuild_read(struct eng_req *rq, void *wp, uint64_t win)
{
	struct parity_win *w = wp;
	uint8_t **b = eng_alloc(rq, w->n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	rq->fam_priv = b;
	for (unsigned j = 0; j < w->n; j++) {
		if (!(b[j] = eng_alloc(rq, win)))
			return -ENOMEM;
		if (w->failed & (1ull << w->col[j]))
			continue;
		int r = eng_piece(rq, w->col[j], MEMBER_READ, STATS_WHY_REBUILD, w->st.member_offset + win_x(rq), win, b[j]);
		if (r)
			return r;
	}
	return 0;
}

static int rebuild_write(struct eng_req *rq, void *wp, uint64_t win)
{
	struct parity_win *w = wp;
	uint8_t **b = rq->fam_priv;
	unsigned lost[2], nlost = 0;
	for (unsigned j = 0; j < w->n; j++)
		if (w->failed & (1ull << w->col[j])) {
			if (nlost == w->np)
				return -EIO; /* more lost than the level can rebuild */
			lost[nlost++] = j;
		}
	if (parity_recover_slots((void *const *)b, layout_q_slots(&w->st), w->nd, w->np, lost, nlost, win))
		return -EIO;
	return eng_piece(rq, (unsigned)rq->dest, MEMBER_WRITE, STATS_WHY_REBUILD, w->st.member_offset + win_x(rq), win,
			 b[w->tcol]);
}

static const struct eng_window_ops parity_rebuild_ops = {
	.window = rebuild_window, .read = rebuild_read, .write = rebuild_write,
};

static int parity_rebuild(struct eng_req *rq)
{
	struct parity_win w;
	unsigned target = (unsigned)rq->target;
	parity_win_init(rq, &w, eng_failed_at(rq, rq->seg_off) | (1ull << target));
	for (unsigned j = 0; j < w.nd; j++)
		w.col[j] = w.st.data[j];
	w.col[w.nd] = (unsigned)w.st.p;
	if (w.np > 1)
		w.col[w.nd + 1] = (unsigned)w.st.q;
	w.tcol = w.n;
	for (unsigned j = 0; j < w.n; j++)
		if (w.col[j] == target)
			w.tcol = j;
	if (w.tcol == w.n)
		return ENG_DONE; /* cannot happen: every member holds a column of every stripe */
	return eng_window_loop(rq, &parity_rebuild_ops, &w);
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
