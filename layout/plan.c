/* Write and read plans for one stripe of a parity level. Everything is in
 * in-chunk byte ranges: column j (data index j) is written over [lo_j, hi_j);
 * the span [span_lo, span_hi) is the union of those ranges, and parity is
 * read and written over the span:
 *
 *          in-chunk 0        span_lo            span_hi      chunk
 *   D0     |                 [=====new=========)             |
 *   D1     [======new===============)                        |  <- RCW reads
 *   D2     |                 .  (old, RCW reads)  .          |     the dots
 *   P      |                 [...read/write.......)          |
 *
 * RMW reads old data under the new data plus P/Q over the span; RCW reads the
 * span minus what is written in every column. Fewer bytes wins, ties go to
 * RMW; FULL when RCW reads nothing. No allocation.
 */
#include "layout/layout_int.h"

#include <errno.h>

static int present(uint64_t failed, unsigned m)
{
	return !(failed >> m & 1);
}

static void add_io(struct layout_io *v, unsigned *n, const struct layout_plan *p,
		   unsigned member, enum layout_role role, int index, uint64_t lo, uint64_t hi)
{
	struct layout_io *io = &v[(*n)++];

	io->member = member;
	io->role = role;
	io->index = index;
	io->in_chunk = lo;
	io->offset = p->s.member_offset + lo;
	io->length = hi - lo;
}

/* Fill stripe, lo/hi and span for logical [off, off+len) inside one stripe. */
static int setup(const struct layout_geom *g, uint64_t off, uint64_t len, struct layout_plan *p)
{
	uint64_t end, first, s;
	unsigned dd = g->data_members;

	if (!layout_is_parity(g) || len == 0 || off >= g->capacity || len > g->capacity - off)
		return -EINVAL;
	end = off + len;
	/* stripe = chunk / data_disks */
	s = off / g->chunk / dd;
	first = s * dd * g->chunk;
	if (end > first + dd * g->chunk)
		return -EINVAL; /* crosses into the next stripe: the engine splits first */
	layout_stripe(g, s, &p->s);
	p->span_lo = g->chunk;
	p->span_hi = 0;
	for (unsigned j = 0; j < dd; j++) {
		uint64_t c0 = first + j * g->chunk, c1 = c0 + g->chunk;
		uint64_t a = off > c0 ? off : c0, b = end < c1 ? end : c1;
		if (a >= b) {
			p->lo[j] = p->hi[j] = 0;
			continue;
		}
		p->lo[j] = a - c0;
		p->hi[j] = b - c0;
		if (p->lo[j] < p->span_lo)
			p->span_lo = p->lo[j];
		if (p->hi[j] > p->span_hi)
			p->span_hi = p->hi[j];
	}
	p->nlost = 0;
	p->nreads = 0;
	p->nwrites = 0;
	p->read_bytes = 0;
	return 0;
}

static int touched(const struct layout_plan *p, unsigned j)
{
	return p->lo[j] < p->hi[j];
}

/* Recovery reads over the span: every present data column, P, and Q only when
 * P cannot do the job alone (P missing or two data columns lost). lost[] lists
 * every missing column of the stripe (data indexes ascending, then P, then Q),
 * so parity_recover never trusts a buffer that could not be read; the one
 * present block left unread (Q, when one data column is lost and P is there)
 * is never needed by a one-block recovery through P. */
static void plan_reconstruct(const struct layout_geom *g, uint64_t failed, struct layout_plan *p)
{
	unsigned dd = g->data_members, ndlost = 0;
	int p_ok = present(failed, (unsigned)p->s.p);

	for (unsigned j = 0; j < dd; j++) {
		if (present(failed, p->s.data[j]))
			add_io(p->reads, &p->nreads, p, p->s.data[j], LAYOUT_DATA, (int)j,
			       p->span_lo, p->span_hi);
		else if (p->nlost < 2) {
			p->lost[p->nlost++] = j;
			ndlost++;
		}
	}
	if (p_ok)
		add_io(p->reads, &p->nreads, p, (unsigned)p->s.p, LAYOUT_P, -1, p->span_lo, p->span_hi);
	else if (p->nlost < 2)
		p->lost[p->nlost++] = dd;
	if (p->s.q >= 0 && !present(failed, (unsigned)p->s.q)) {
		if (p->nlost < 2)
			p->lost[p->nlost++] = dd + 1;
	} else if (p->s.q >= 0 && (!p_ok || ndlost > 1)) {
		add_io(p->reads, &p->nreads, p, (unsigned)p->s.q, LAYOUT_Q, -1, p->span_lo, p->span_hi);
	}
	p->mode = LAYOUT_PLAN_RECONSTRUCT;
}

int layout_plan_write(const struct layout_geom *g, uint64_t off, uint64_t len,
		      uint64_t failed_mask, struct layout_plan *p)
{
	unsigned dd = g->data_members;
	uint64_t failed = failed_mask & layout_members_mask(g->members);
	uint64_t span, rmw = 0, rcw = 0;
	int rmw_ok = 1, rcw_ok = 1, p_ok, q_ok;
	int r = setup(g, off, len, p);

	if (r)
		return r;
	if ((unsigned)__builtin_popcountll(failed) > layout_parity_count(g))
		return -EIO;
	span = p->span_hi - p->span_lo;
	p_ok = present(failed, (unsigned)p->s.p);
	q_ok = p->s.q >= 0 && present(failed, (unsigned)p->s.q);

	/* cost both ways, in bytes read */
	for (unsigned j = 0; j < dd; j++) {
		uint64_t w = p->hi[j] - p->lo[j];
		int ok = present(failed, p->s.data[j]);
		if (w) {
			rmw += w;
			rmw_ok &= ok;
		}
		if (span - w) {
			rcw += span - w;
			rcw_ok &= ok;
		}
	}
	rmw += (p_ok ? span : 0) + (q_ok ? span : 0);

	if (rcw_ok && rcw == 0)
		p->mode = LAYOUT_PLAN_FULL;
	else if (rmw_ok && (!rcw_ok || rmw <= rcw))
		p->mode = LAYOUT_PLAN_RMW;
	else if (rcw_ok)
		p->mode = LAYOUT_PLAN_RCW;
	else
		plan_reconstruct(g, failed, p);

	if (p->mode == LAYOUT_PLAN_RMW) {
		for (unsigned j = 0; j < dd; j++)
			if (touched(p, j))
				add_io(p->reads, &p->nreads, p, p->s.data[j], LAYOUT_DATA, (int)j,
				       p->lo[j], p->hi[j]);
		if (p_ok)
			add_io(p->reads, &p->nreads, p, (unsigned)p->s.p, LAYOUT_P, -1,
			       p->span_lo, p->span_hi);
		if (q_ok)
			add_io(p->reads, &p->nreads, p, (unsigned)p->s.q, LAYOUT_Q, -1,
			       p->span_lo, p->span_hi);
	} else if (p->mode == LAYOUT_PLAN_RCW) {
		/* span minus the written range: 0, 1 or 2 pieces per column */
		for (unsigned j = 0; j < dd; j++) {
			unsigned m = p->s.data[j];
			if (!touched(p, j)) {
				add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, p->span_lo, p->span_hi);
				continue;
			}
			if (p->lo[j] > p->span_lo)
				add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, p->span_lo, p->lo[j]);
			if (p->hi[j] < p->span_hi)
				add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, p->hi[j], p->span_hi);
		}
	}
	for (unsigned i = 0; i < p->nreads; i++)
		p->read_bytes += p->reads[i].length;

	/* writes: new data where the member is there, then the parity over the span */
	for (unsigned j = 0; j < dd; j++)
		if (touched(p, j) && present(failed, p->s.data[j]))
			add_io(p->writes, &p->nwrites, p, p->s.data[j], LAYOUT_DATA, (int)j,
			       p->lo[j], p->hi[j]);
	if (p_ok)
		add_io(p->writes, &p->nwrites, p, (unsigned)p->s.p, LAYOUT_P, -1, p->span_lo, p->span_hi);
	if (q_ok)
		add_io(p->writes, &p->nwrites, p, (unsigned)p->s.q, LAYOUT_Q, -1, p->span_lo, p->span_hi);
	return 0;
}

int layout_plan_read(const struct layout_geom *g, uint64_t off, uint64_t len,
		     uint64_t failed_mask, struct layout_plan *p)
{
	uint64_t failed = failed_mask & layout_members_mask(g->members);
	int need = 0;
	int r = setup(g, off, len, p);

	if (r)
		return r;
	for (unsigned j = 0; j < g->data_members; j++)
		if (touched(p, j) && !present(failed, p->s.data[j]))
			need = 1;
	if (!need) {
		p->mode = LAYOUT_PLAN_READ;
		for (unsigned j = 0; j < g->data_members; j++)
			if (touched(p, j))
				add_io(p->reads, &p->nreads, p, p->s.data[j], LAYOUT_DATA, (int)j,
				       p->lo[j], p->hi[j]);
	} else {
		if ((unsigned)__builtin_popcountll(failed) > layout_parity_count(g))
			return -EIO;
		plan_reconstruct(g, failed, p);
	}
	for (unsigned i = 0; i < p->nreads; i++)
		p->read_bytes += p->reads[i].length;
	return 0;
}
