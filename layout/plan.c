/* Write and read plans for one stripe of a parity level. Everything is in
 * in-chunk byte ranges: column j (data index j) is written over [lo_j, hi_j);
 * the span [span_lo, span_hi) is the union of those ranges.
 *
 * A write chooses as md's handle_stripe_dirtying does, for each 4 KiB row
 * of the stripe (a page of md's stripe cache), by counting blocks:
 *
 *          row  | D0    D1    D2    P  |  rmw (old data + parity)   rcw (the rest)
 *   a 4K write  | new   .     .     .  |  D0, P: 2                  D1, D2: 2     tie: RCW
 *   (raid5 x4)  |                      |
 *
 * rmw counts each written column and the parity, rcw each column not wholly
 * overwritten; a member that cannot be read counts 2 x members. Fewer wins;
 * a tie goes to RCW unless rmw_level says PREFER; DISABLE always takes RCW;
 * RCW with nothing to read is FULL. Rows alike make one band: at most five
 * (the partial rows at the two ends, the rows between), each with its reads
 * (RMW: old data under the new, parity; RCW: the other bytes of the band's
 * rows) and a parity write over its rows. No allocation.
 */
#include "layout/layout_int.h"

#include <errno.h>

static int present(uint64_t failed, unsigned m)
{
	return !(failed >> m & 1);
}

/* Add a member I/O, or grow the one it continues (the same column, role and
 * mode, ending where it starts). -E2BIG when the list is full. */
static int add_io(struct layout_io *v, unsigned *n, const struct layout_plan *p, unsigned member,
		  enum layout_role role, int index, uint64_t lo, uint64_t hi, enum layout_plan_mode mode)
{
	for (unsigned i = 0; i < *n; i++)
		if (v[i].member == member && v[i].role == role && v[i].index == index && v[i].mode == mode &&
		    v[i].in_chunk + v[i].length == lo) {
			v[i].length += hi - lo;
			return 0;
		}
	if (*n == LAYOUT_PLAN_MAX_IO)
		return -E2BIG;
	struct layout_io *io = &v[(*n)++];
	io->member = member;
	io->role = role;
	io->index = index;
	io->in_chunk = lo;
	io->offset = p->s.member_offset + lo;
	io->length = hi - lo;
	io->mode = mode;
	return 0;
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
	p->nbands = 0;
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
	const enum layout_plan_mode m = LAYOUT_PLAN_RECONSTRUCT;
	unsigned dd = g->data_members, ndlost = 0;
	int p_ok = present(failed, (unsigned)p->s.p);

	for (unsigned j = 0; j < dd; j++) {
		if (present(failed, p->s.data[j]))
			add_io(p->reads, &p->nreads, p, p->s.data[j], LAYOUT_DATA, (int)j, p->span_lo, p->span_hi, m);
		else if (p->nlost < 2) {
			p->lost[p->nlost++] = j;
			ndlost++;
		}
	}
	if (p_ok)
		add_io(p->reads, &p->nreads, p, (unsigned)p->s.p, LAYOUT_P, -1, p->span_lo, p->span_hi, m);
	else if (p->nlost < 2)
		p->lost[p->nlost++] = dd;
	if (p->s.q >= 0 && !present(failed, (unsigned)p->s.q)) {
		if (p->nlost < 2)
			p->lost[p->nlost++] = dd + 1;
	} else if (p->s.q >= 0 && (!p_ok || ndlost > 1)) {
		add_io(p->reads, &p->nreads, p, (unsigned)p->s.q, LAYOUT_Q, -1, p->span_lo, p->span_hi, m);
	}
	p->nbands = 0;
	p->mode = LAYOUT_PLAN_RECONSTRUCT;
}

static uint64_t page_down(uint64_t x)
{
	return x & ~(uint64_t)(LAYOUT_PAGE - 1);
}

static uint64_t page_up(uint64_t x)
{
	return page_down(x + LAYOUT_PAGE - 1);
}

/* Column j's bytes written in [x, y), as [*a, *b); 0 when none. */
static int written_in(const struct layout_plan *p, unsigned j, uint64_t x, uint64_t y, uint64_t *a, uint64_t *b)
{
	*a = p->lo[j] > x ? p->lo[j] : x;
	*b = p->hi[j] < y ? p->hi[j] : y;
	return touched(p, j) && *a < *b;
}

/* md's counts for each row of [x, y) (one partial row, or whole rows written
 * alike) and the mode they give; 0 when no byte of it is written. */
static int band_choose(const struct layout_geom *g, uint64_t failed, enum layout_rmw level, struct layout_plan *p,
		       struct layout_band *b)
{
	unsigned disks = g->members, any = 0;
	uint64_t row_lo = page_down(b->lo), row_hi = page_up(b->hi), x, y;
#define COST(m) (present(failed, (m)) ? 1u : 2u * disks)
	b->rmw = COST((unsigned)p->s.p) + (p->s.q >= 0 ? COST((unsigned)p->s.q) : 0);
	b->rcw = 0;
	for (unsigned j = 0; j < g->data_members; j++) {
		if (written_in(p, j, b->lo, b->hi, &x, &y)) {
			b->rmw += COST(p->s.data[j]);
			any = 1;
		}
		/* md's R5_OVERWRITE: every byte of the rows is new */
		if (!(touched(p, j) && p->lo[j] <= row_lo && p->hi[j] >= row_hi))
			b->rcw += COST(p->s.data[j]);
	}
#undef COST
	if (level == LAYOUT_RMW_DISABLE || b->rcw < b->rmw || (b->rcw == b->rmw && level != LAYOUT_RMW_PREFER))
		b->mode = b->rcw ? LAYOUT_PLAN_RCW : LAYOUT_PLAN_FULL;
	else
		b->mode = LAYOUT_PLAN_RMW;
	return any;
}

void layout_sort_offsets(uint64_t *v, unsigned n)
{
	for (unsigned a = 1; a < n; a++) /* insertion sort: a few cuts */
		for (unsigned b = a; b > 0 && v[b - 1] > v[b]; b--) {
			uint64_t t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
}

/* Cut the span into bands: at the page rows where a column starts or ends. */
static int plan_bands(const struct layout_geom *g, uint64_t failed, const struct layout_write_opts *o,
		      struct layout_plan *p)
{
	uint64_t cut[2 + 4 * LAYOUT_MAX_MEMBERS];
	unsigned nc = 0;
	cut[nc++] = p->span_lo;
	cut[nc++] = p->span_hi;
	for (unsigned j = 0; j < g->data_members; j++) {
		if (!touched(p, j))
			continue;
		uint64_t c[4] = { page_down(p->lo[j]), page_up(p->lo[j]), page_down(p->hi[j]), page_up(p->hi[j]) };
		for (unsigned k = 0; k < 4; k++)
			if (c[k] > p->span_lo && c[k] < p->span_hi)
				cut[nc++] = c[k];
	}
	layout_sort_offsets(cut, nc);
	for (unsigned k = 0; k + 1 < nc; k++) {
		struct layout_band b = { .lo = cut[k], .hi = cut[k + 1] };
		if (b.lo == b.hi || (!band_choose(g, failed, o->rmw_level, p, &b) && !o->dense))
			continue;
		if (p->nbands == LAYOUT_PLAN_MAX_BANDS)
			return -EIO; /* cannot happen: at most five for a request in one stripe */
		p->band[p->nbands++] = b;
	}
	return 0;
}

/* The mode needs a member that is missing (md: rmw or rcw above 2 x members). */
static int band_blocked(const struct layout_geom *g, const struct layout_band *b)
{
	unsigned need = b->mode == LAYOUT_PLAN_RMW ? b->rmw : b->mode == LAYOUT_PLAN_RCW ? b->rcw : 0;
	return need >= 2 * g->members;
}

/* Reads of one band: RMW the old bytes under the new and the parity; RCW
 * the bytes of its rows that are not new, 0 to 2 pieces per column. 0 or
 * -E2BIG. */
static int band_reads(const struct layout_geom *g, uint64_t failed, const struct layout_band *b, struct layout_plan *p)
{
	uint64_t x, y;
	int r = 0;
	for (unsigned j = 0; j < g->data_members && !r; j++) {
		unsigned m = p->s.data[j];
		int w = written_in(p, j, b->lo, b->hi, &x, &y);
		if (b->mode == LAYOUT_PLAN_RMW && w) {
			r = add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, x, y, b->mode);
		} else if (b->mode == LAYOUT_PLAN_RCW) {
			if (!w)
				x = y = b->hi; /* the whole band */
			if (x > b->lo)
				r = add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, b->lo, x, b->mode);
			if (!r && y < b->hi)
				r = add_io(p->reads, &p->nreads, p, m, LAYOUT_DATA, (int)j, y, b->hi, b->mode);
		}
	}
	if (r || b->mode != LAYOUT_PLAN_RMW)
		return r;
	if (present(failed, (unsigned)p->s.p))
		r = add_io(p->reads, &p->nreads, p, (unsigned)p->s.p, LAYOUT_P, -1, b->lo, b->hi, b->mode);
	if (!r && p->s.q >= 0 && present(failed, (unsigned)p->s.q))
		r = add_io(p->reads, &p->nreads, p, (unsigned)p->s.q, LAYOUT_Q, -1, b->lo, b->hi, b->mode);
	return r;
}

static enum layout_plan_mode plan_mode(const struct layout_plan *p)
{
	for (unsigned k = 1; k < p->nbands; k++)
		if (p->band[k].mode != p->band[0].mode)
			return LAYOUT_PLAN_MIXED;
	return p->nbands ? p->band[0].mode : LAYOUT_PLAN_FULL;
}

int layout_plan_write(const struct layout_geom *g, uint64_t off, uint64_t len, uint64_t failed_mask,
		      const struct layout_write_opts *o, struct layout_plan *p)
{
	static const struct layout_write_opts md_default = { .rmw_level = LAYOUT_RMW_ENABLE };
	unsigned dd = g->data_members;
	uint64_t failed = failed_mask & layout_members_mask(g->members);
	int blocked = 0, r = setup(g, off, len, p);

	if (r)
		return r;
	if ((unsigned)__builtin_popcountll(failed) > layout_parity_count(g))
		return -EIO;
	if ((r = plan_bands(g, failed, o ? o : &md_default, p)))
		return r;
	for (unsigned k = 0; k < p->nbands; k++)
		blocked |= band_blocked(g, &p->band[k]);
	for (unsigned k = 0; k < p->nbands && !blocked; k++)
		/* a list too long (wide sets, bands of both modes) cannot
		 * happen in practice; the span read whole is right anyway */
		blocked = band_reads(g, failed, &p->band[k], p) != 0;
	if (blocked) {
		p->nreads = 0;
		plan_reconstruct(g, failed, p);
	} else {
		p->mode = plan_mode(p);
	}
	for (unsigned i = 0; i < p->nreads; i++)
		p->read_bytes += p->reads[i].length;

	/* writes: new data where the member is there, then the parity of each
	 * band (RECONSTRUCT: over the span) */
	for (unsigned j = 0; j < dd; j++)
		if (touched(p, j) && present(failed, p->s.data[j]))
			add_io(p->writes, &p->nwrites, p, p->s.data[j], LAYOUT_DATA, (int)j, p->lo[j], p->hi[j], p->mode);
	for (unsigned par = 0; par < 2; par++) {
		int m = par ? p->s.q : p->s.p;
		if (m < 0 || !present(failed, (unsigned)m))
			continue;
		if (p->mode == LAYOUT_PLAN_RECONSTRUCT)
			add_io(p->writes, &p->nwrites, p, (unsigned)m, par ? LAYOUT_Q : LAYOUT_P, -1, p->span_lo,
			       p->span_hi, p->mode);
		for (unsigned k = 0; p->mode != LAYOUT_PLAN_RECONSTRUCT && k < p->nbands; k++)
			add_io(p->writes, &p->nwrites, p, (unsigned)m, par ? LAYOUT_Q : LAYOUT_P, -1, p->band[k].lo,
			       p->band[k].hi, p->mode);
	}
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
				       p->lo[j], p->hi[j], LAYOUT_PLAN_READ);
	} else {
		if ((unsigned)__builtin_popcountll(failed) > layout_parity_count(g))
			return -EIO;
		plan_reconstruct(g, failed, p);
	}
	for (unsigned i = 0; i < p->nreads; i++)
		p->read_bytes += p->reads[i].length;
	return 0;
}
