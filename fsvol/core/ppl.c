/* ppl: md's partial parity log (raid5-ppl.c's idea, fsvol's own code; see ppl.h),
 * and the log machinery the write journal shares (the ring, the round's hold
 * and its steps; journal.c opens the journal, makes and replays its records,
 * and keeps its mode).
 *
 * Each member's PPL area [ppl_offset, ppl_offset + ppl_size) is a ring of
 * 4 KiB blocks; a record is a header block and its partial parity, which may
 * wrap from the ring's end to its start:
 *
 *   | ... | hdr | pp pp pp | hdr | pp | ... |      records in the order written
 *           ^ oldest live             ^ head
 *
 * A record lives from its write until the round's data and parity writes are
 * done (ppl_release); only room no live record holds is reused, so a record
 * whose stripe write may be unfinished is never overwritten. Records of one
 * stripe go to one member (its parity member) in the order of their writes
 * (the stripe lock serialises them), so the ring keeps the newest: at replay,
 * the newest record covering a row is the one that tells its parity.
 *
 * Lock rules: one mutex for all rings (a round takes room on several members
 * at once, all or nothing: no round holds room while waiting for more);
 * waiters are resumed after it is dropped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/ppl_int.h"
#include "fsvol/meta/sb.h"
#include "fsvol/util/crc32c.h"
#include "fsvol/util/log.h"
#include "layout/parity.h"
#include "fsvol/meta/rec.h"
#include "fsvol/util/le.h"

/* header offsets (docs/format.md, "Partial parity log") */
enum {
	PH_MAGIC = 0, PH_VERSION = 4, PH_CRC = 8, PH_BLOCKS = 12, PH_UUID = 16, PH_SEQ = 32, PH_STRIPE = 40,
	PH_SPAN_LO = 48, PH_SPAN_HI = 56, PH_PP_CRC = 64, PH_NDATA = 68, PH_COLS = 128,
};
#define PPL_VERSION 1u

void ppl_rec_encode(const struct ppl_rec *r, uint8_t *buf)
{
	memset(buf, 0, PPL_BLOCK);
	put_le32(buf + PH_MAGIC, PPL_MAGIC);
	put_le32(buf + PH_VERSION, PPL_VERSION);
	put_le32(buf + PH_BLOCKS, r->blocks);
	memcpy(buf + PH_UUID, r->volume_uuid, 16);
	put_le64(buf + PH_SEQ, r->seq);
	put_le64(buf + PH_STRIPE, r->stripe);
	put_le64(buf + PH_SPAN_LO, r->span_lo);
	put_le64(buf + PH_SPAN_HI, r->span_hi);
	put_le32(buf + PH_PP_CRC, r->pp_crc);
	put_le32(buf + PH_NDATA, r->ndata);
	for (unsigned j = 0; j < r->ndata && j < LAYOUT_MAX_MEMBERS; j++) {
		put_le32(buf + PH_COLS + 8 * j, r->lo[j]);
		put_le32(buf + PH_COLS + 8 * j + 4, r->hi[j]);
	}
	rec_seal(buf, PPL_BLOCK);
}

int ppl_rec_decode(const uint8_t *buf, struct ppl_rec *r, char *err, size_t errlen)
{
	if (rec_check(buf, PPL_BLOCK, PPL_MAGIC, PPL_VERSION, err, errlen))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->blocks = get_le32(buf + PH_BLOCKS);
	memcpy(r->volume_uuid, buf + PH_UUID, 16);
	r->seq = get_le64(buf + PH_SEQ);
	r->stripe = get_le64(buf + PH_STRIPE);
	r->span_lo = get_le64(buf + PH_SPAN_LO);
	r->span_hi = get_le64(buf + PH_SPAN_HI);
	r->pp_crc = get_le32(buf + PH_PP_CRC);
	r->ndata = get_le32(buf + PH_NDATA);
	if (!r->ndata || r->ndata > LAYOUT_MAX_MEMBERS - 1) {
		snprintf(err, errlen, "bad ndata %u", r->ndata);
		return -EINVAL;
	}
	if (r->span_lo >= r->span_hi || r->span_lo % PPL_BLOCK || r->span_hi % PPL_BLOCK) {
		snprintf(err, errlen, "bad span [%llu, %llu)", (unsigned long long)r->span_lo,
			 (unsigned long long)r->span_hi);
		return -EINVAL;
	}
	uint64_t pp = (uint64_t)r->blocks * PPL_BLOCK - PPL_BLOCK;
	if (!r->blocks || (pp && pp != r->span_hi - r->span_lo)) {
		snprintf(err, errlen, "bad blocks %u for span %llu", r->blocks,
			 (unsigned long long)(r->span_hi - r->span_lo));
		return -EINVAL;
	}
	for (unsigned j = 0; j < r->ndata; j++) {
		r->lo[j] = get_le32(buf + PH_COLS + 8 * j);
		r->hi[j] = get_le32(buf + PH_COLS + 8 * j + 4);
		if (r->lo[j] > r->hi[j] || (r->lo[j] < r->hi[j] && (r->lo[j] < r->span_lo || r->hi[j] > r->span_hi))) {
			snprintf(err, errlen, "bad column %u range [%u, %u)", j, r->lo[j], r->hi[j]);
			return -EINVAL;
		}
	}
	return 0;
}

int ppl_on(const struct vol *v)
{
	return v->ppl != NULL;
}

int ppl_write_back(const struct vol *v)
{
	return v->ppl && atomic_load_explicit(&v->ppl->write_back, memory_order_relaxed);
}

int ppl_reads_lock(const struct vol *v)
{
	return v->ppl && atomic_load_explicit(&v->ppl->wb_seen, memory_order_relaxed);
}

int ppl_is_journal(const struct vol *v, unsigned i)
{
	return v->ppl && v->ppl->journal && v->ppl->jslot == i;
}


void ppl_counts(const struct vol *v, uint64_t *records, uint64_t *blocks, uint64_t *replayed)
{
	*records = *blocks = *replayed = 0;
	if (v->ppl) {
		*records = atomic_load(&v->ppl->records);
		*blocks = atomic_load(&v->ppl->blocks);
		*replayed = atomic_load(&v->ppl->replayed);
	}
}

/* ---- the write path ---- */

static uint64_t rec_blocks(const struct ppl_log *l, const struct layout_plan *p)
{
	if (l->journal)
		return jnl_kind.plan_blocks(p);
	/* every column rewritten over the span: the partial parity is zero,
	 * the header alone says so (md logs no partial parity for a full stripe) */
	int whole = 1;
	for (unsigned j = 0; j < l->ndata; j++)
		whole &= p->lo[j] == p->span_lo && p->hi[j] == p->span_hi;
	uint64_t pp = whole ? 0 : p->span_hi - p->span_lo;
	return 1 + (pp + PPL_BLOCK - 1) / PPL_BLOCK;
}

int ppl_round_full(const struct eng_req *rq, const struct layout_plan *p)
{
	const struct ppl_log *l = rq->v->ppl;
	if (!l || !rq->nplans)
		return 0;
	uint64_t sum = rec_blocks(l, p);
	for (unsigned k = 0; k < rq->nplans; k++)
		sum += rec_blocks(l, &rq->plans[k].p);
	return sum > l->nblocks; /* a round must fit an empty log: it never waits for itself */
}

static struct ppl_hold *hold_of(struct eng_req *rq)
{
	if (!rq->ppl) {
		struct ppl_hold *h = eng_alloc(rq, sizeof(*h));
		if (!h)
			return NULL;
		memset(h, 0, sizeof(*h));
		rq->ppl = h;
	}
	return rq->ppl;
}

int ppl_hold_add(struct eng_req *rq, unsigned member, uint64_t blocks, uint8_t *buf)
{
	struct ppl_hold *h = hold_of(rq);
	if (!h)
		return -ENOMEM;
	if (h->n == ENG_ROUND_PLANS)
		return -EIO; /* cannot happen: one record per plan */
	h->rec[h->n].member = member;
	h->rec[h->n].blocks = blocks;
	h->rec[h->n].buf = buf;
	h->n++;
	return 0;
}

uint64_t ppl_next_seq(struct vol *v)
{
	struct ppl_log *l = v->ppl;
	pthread_mutex_lock(&l->lock);
	uint64_t s = ++l->seq;
	pthread_mutex_unlock(&l->lock);
	return s;
}

unsigned ppl_journal_slot(const struct vol *v)
{
	return v->ppl->jslot;
}

int ppl_record(struct eng_req *rq, const struct eng_plan *pl, const uint8_t *pbuf, unsigned first)
{
	struct vol *v = rq->v;
	const struct layout_plan *p = &pl->p;
	const struct layout_geom *g = &v->geom;
	if (v->ppl->journal)
		return jnl_kind.record(rq, pl, first);
	if (!pbuf || p->s.p < 0)
		return 0; /* the parity member is gone: no parity to make wrong, no log to write */
	uint64_t span = p->span_hi - p->span_lo, nb = rec_blocks(v->ppl, p);
	uint8_t *buf = eng_alloc(rq, nb * PPL_BLOCK);
	if (!buf)
		return -ENOMEM;
	struct ppl_rec r = { .stripe = p->s.stripe, .span_lo = p->span_lo, .span_hi = p->span_hi,
			     .blocks = (uint32_t)nb, .ndata = g->data_members };
	memcpy(r.volume_uuid, v->sb.volume_uuid, 16);
	for (unsigned j = 0; j < g->data_members; j++) {
		r.lo[j] = (uint32_t)p->lo[j];
		r.hi[j] = (uint32_t)p->hi[j];
	}
	if (nb > 1) {
		/* partial parity = new parity xor the new bytes of the modified
		 * columns = the xor of the columns the write leaves alone */
		uint8_t *pp = buf + PPL_BLOCK;
		memcpy(pp, pbuf, span);
		for (unsigned j = 0; j < g->data_members; j++) {
			if (p->lo[j] == p->hi[j])
				continue;
			uint64_t logical = p->s.logical + j * g->chunk + p->lo[j];
			parity_xor_into(pp + (p->lo[j] - p->span_lo), pl->src + (logical - pl->src_off), p->hi[j] - p->lo[j]);
		}
		r.pp_crc = crc32c(0, pp, span);
	}
	r.seq = ppl_next_seq(v);
	ppl_rec_encode(&r, buf);
	return ppl_hold_add(rq, (unsigned)p->s.p, nb, buf);
}

static uint64_t ring_free(const struct ppl_log *l, const struct ppl_ring *rg)
{
	if (!rg->qn)
		return l->nblocks;
	return (rg->q[rg->qh].start + l->nblocks - rg->head) % l->nblocks;
}

/* Under lock: room for every record of the round, all or nothing. */
static int ring_take(struct ppl_log *l, struct ppl_hold *h)
{
	uint64_t need[SB_MAX_SLOTS] = { 0 };
	for (unsigned i = 0; i < h->n; i++)
		need[h->rec[i].member] += h->rec[i].blocks;
	for (unsigned m = 0; m < SB_MAX_SLOTS; m++)
		if (need[m] && need[m] > ring_free(l, &l->ring[m]))
			return 0;
	for (unsigned i = 0; i < h->n; i++) {
		struct ppl_ring *rg = &l->ring[h->rec[i].member];
		unsigned qi = (rg->qh + rg->qn) % (unsigned)l->nblocks;
		rg->q[qi] = (struct ppl_live){ .start = rg->head, .n = h->rec[i].blocks };
		rg->qn++;
		h->rec[i].qi = qi;
		h->rec[i].at = rg->head;
		rg->head = (rg->head + h->rec[i].blocks) % l->nblocks;
	}
	h->allocated = 1;
	return 1;
}

int ppl_log(struct eng_req *rq, int retry_phase)
{
	struct ppl_log *l = rq->v->ppl;
	struct ppl_hold *h = rq->ppl;
	if (l->journal && atomic_load(&l->dead))
		return -EROFS; /* no journal, no write (md makes the array read-only) */
	if (!h || !h->n)
		return ENG_DONE;
	if (!h->stash) {
		/* hold the data and parity writes back until the records are in */
		if (!(h->stash = eng_alloc(rq, rq->npieces * sizeof(*h->stash))))
			return -ENOMEM;
		memcpy(h->stash, rq->pieces, rq->npieces * sizeof(*h->stash));
		h->nstash = rq->npieces;
		rq->npieces = 0;
	}
	pthread_mutex_lock(&l->lock);
	if (!ring_take(l, h)) {
		/* no room until a live record is released: wait, queued (the
		 * release may resume it at once on another thread) */
		rq->phase = retry_phase;
		rq->wait.res = 0;
		rq->wait.next = l->waiters;
		l->waiters = &rq->wait;
		pthread_mutex_unlock(&l->lock);
		return ENG_WAIT;
	}
	pthread_mutex_unlock(&l->lock);
	for (unsigned i = 0; i < h->n; i++) {
		uint64_t at = h->rec[i].at, nb = h->rec[i].blocks, first = l->nblocks - at < nb ? l->nblocks - at : nb;
		unsigned m = h->rec[i].member;
		int why = l->journal ? STATS_WHY_JOURNAL : STATS_WHY_PPL;
		int r = eng_piece(rq, m, MEMBER_WRITE, why, l->area + at * PPL_BLOCK, first * PPL_BLOCK, h->rec[i].buf);
		if (!r && first < nb) /* wraps: the rest at the ring's start */
			r = eng_piece(rq, m, MEMBER_WRITE, why, l->area, (nb - first) * PPL_BLOCK,
				      h->rec[i].buf + first * PPL_BLOCK);
		if (r)
			return r;
		atomic_fetch_add(&l->records, 1);
		atomic_fetch_add(&l->blocks, nb);
	}
	return ENG_ISSUE;
}

void ppl_release_writes(struct eng_req *rq)
{
	struct ppl_hold *h = rq->ppl;
	if (!h || !h->stash)
		return;
	/* back as they were queued (a replacement's copies included): the
	 * pieces array only grows, so it holds them */
	memcpy(rq->pieces, h->stash, h->nstash * sizeof(*h->stash));
	rq->npieces = h->nstash;
	h->stash = NULL;
	h->nstash = 0;
}

void ppl_release(struct eng_req *rq)
{
	struct ppl_log *l = rq->v->ppl;
	struct ppl_hold *h = rq->ppl;
	rq->ppl = NULL;
	if (!l || !h || !h->allocated)
		return;
	pthread_mutex_lock(&l->lock);
	for (unsigned i = 0; i < h->n; i++) {
		struct ppl_ring *rg = &l->ring[h->rec[i].member];
		rg->q[h->rec[i].qi].done = 1;
		while (rg->qn && rg->q[rg->qh].done) {
			rg->qh = (rg->qh + 1) % (unsigned)l->nblocks;
			rg->qn--;
		}
	}
	struct vol_waiter *w = l->waiters;
	l->waiters = NULL;
	pthread_mutex_unlock(&l->lock);
	while (w) {
		struct vol_waiter *next = w->next;
		w->res = 0;
		w->resume(w);
		w = next;
	}
}

/* ---- open and replay ---- */

/* A valid record found in a member's area, with its partial parity. */
struct ppl_found {
	struct ppl_rec r;
	unsigned member;
	uint8_t *pp;               /* NULL when the record has none (a full-stripe write) */
};

static int found_cmp(const void *a, const void *b)
{
	const struct ppl_found *x = a, *y = b;
	if (x->r.stripe != y->r.stripe)
		return x->r.stripe < y->r.stripe ? -1 : 1;
	return x->r.seq > y->r.seq ? -1 : x->r.seq < y->r.seq; /* newest first */
}

static void *ppl_buf(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, PPL_BLOCK, len ? len : PPL_BLOCK))
		return NULL;
	return p;
}

/* Read slot m's area and add its valid records to *f. */
static int scan_member(struct vol *v, unsigned m, struct ppl_found **f, unsigned *nf, unsigned *cap)
{
	struct ppl_log *l = v->ppl;
	uint64_t bytes = l->nblocks * PPL_BLOCK;
	uint8_t *area = ppl_buf(bytes);
	if (!area)
		return -ENOMEM;
	int r = vol_meta_io(v, v->slot[m], MEMBER_READ, STATS_WHY_PPL, area, bytes, l->area);
	if (r) {
		free(area);
		return r;
	}
	for (uint64_t b = 0; b < l->nblocks; b++) {
		struct ppl_rec rec;
		char why[128];
		if (ppl_rec_decode(area + b * PPL_BLOCK, &rec, why, sizeof(why)))
			continue;
		struct layout_stripe st;
		if (memcmp(rec.volume_uuid, v->sb.volume_uuid, 16) || rec.blocks > l->nblocks ||
		    rec.stripe >= v->geom.stripes || rec.ndata != v->geom.data_members || rec.span_hi > v->geom.chunk)
			continue;
		layout_stripe(&v->geom, rec.stripe, &st);
		if (st.p != (int)m)
			continue; /* not this member's stripe: garbage that decoded */
		uint8_t *pp = NULL;
		uint64_t ppb = rec.blocks - 1;
		if (ppb) {
			if (!(pp = malloc(ppb * PPL_BLOCK))) {
				free(area);
				return -ENOMEM;
			}
			for (uint64_t k = 0; k < ppb; k++)
				memcpy(pp + k * PPL_BLOCK, area + ((b + 1 + k) % l->nblocks) * PPL_BLOCK, PPL_BLOCK);
			if (crc32c(0, pp, ppb * PPL_BLOCK) != rec.pp_crc) {
				free(pp); /* torn: its stripe's writes were never issued */
				continue;
			}
		}
		if (*nf == *cap) {
			unsigned nc = *cap ? 2 * *cap : 64;
			struct ppl_found *nfp = realloc(*f, nc * sizeof(*nfp));
			if (!nfp) {
				free(pp);
				free(area);
				return -ENOMEM;
			}
			*f = nfp;
			*cap = nc;
		}
		(*f)[(*nf)++] = (struct ppl_found){ .r = rec, .member = m, .pp = pp };
	}
	free(area);
	return 0;
}

/* Parity of the rows [x, y) of a record: pp xor the modified columns now. */
static int replay_rows(struct vol *v, const struct ppl_found *f, const struct layout_stripe *st, uint64_t x,
		       uint64_t y, uint8_t *buf, uint8_t *col)
{
	const struct ppl_rec *r = &f->r;
	uint64_t len = y - x;
	if (f->pp)
		memcpy(buf, f->pp + (x - r->span_lo), len);
	else
		memset(buf, 0, len);
	for (unsigned j = 0; j < r->ndata; j++) {
		uint64_t a = r->lo[j] > x ? r->lo[j] : x, b = r->hi[j] < y ? r->hi[j] : y;
		if (a >= b)
			continue;
		/* the replay's data and parity I/O: at data-area places, labelled ppl */
		int e = vol_meta_io(v, v->slot[st->data[j]], MEMBER_READ, STATS_WHY_PPL, col, b - a,
				    v->data_offset + st->member_offset + a);
		if (e)
			return e;
		parity_xor_into(buf + (a - x), col, b - a);
	}
	return vol_meta_io(v, v->slot[st->p], MEMBER_WRITE, STATS_WHY_PPL, buf, len,
			   v->data_offset + st->member_offset + x);
}

static int replay(struct vol *v, char *err, size_t errlen)
{
	struct ppl_log *l = v->ppl;
	const struct layout_geom *g = &v->geom;
	uint64_t failed = atomic_load(&v->failed);
	struct ppl_found *f = NULL;
	unsigned nf = 0, cap = 0, applied = 0, skipped = 0;
	uint64_t rows = g->chunk / PPL_BLOCK;
	uint8_t *claimed = calloc(1, (rows + 7) / 8), *buf = ppl_buf(g->chunk), *col = ppl_buf(g->chunk);
	int r = claimed && buf && col ? 0 : -ENOMEM;
	for (unsigned m = 0; !r && m < g->members; m++)
		if (v->slot[m] && !(failed & (1ull << m)) && (r = scan_member(v, m, &f, &nf, &cap)))
			snprintf(err, errlen, "%s: reading its partial parity log: %s", v->slot[m]->path, strerror(-r));
	/* only the last session's records: each start writes its ring from the
	 * start again, so an earlier session's records past its head may be
	 * older than ones it overwrote (that session ended consistent) */
	uint64_t last = 0;
	for (unsigned i = 0; i < nf; i++)
		last = PPL_SESSION(f[i].r.seq) > last ? PPL_SESSION(f[i].r.seq) : last;
	unsigned keep = 0;
	for (unsigned i = 0; i < nf; i++) {
		if (PPL_SESSION(f[i].r.seq) == last)
			f[keep++] = f[i];
		else
			free(f[i].pp);
	}
	nf = keep;
	if (!r && nf)
		qsort(f, nf, sizeof(*f), found_cmp);
	for (unsigned i = 0; !r && i < nf; i++) {
		const struct ppl_rec *rec = &f[i].r;
		struct layout_stripe st;
		if (!i || f[i - 1].r.stripe != rec->stripe)
			memset(claimed, 0, (rows + 7) / 8); /* a new stripe */
		layout_stripe(g, rec->stripe, &st);
		/* md's rule: a modified column on a missing member cannot be put
		 * right; its rows stay as they are (and older records do not apply) */
		int lost = 0;
		for (unsigned j = 0; j < rec->ndata; j++)
			if (rec->lo[j] < rec->hi[j] && (failed & (1ull << st.data[j])))
				lost = 1;
		int fresh = 0; /* rows no newer record of the stripe covers */
		for (uint64_t x = rec->span_lo; x < rec->span_hi; x += PPL_BLOCK)
			fresh |= !(claimed[(x / PPL_BLOCK) / 8] & (1u << ((x / PPL_BLOCK) % 8)));
		skipped += fresh && lost;
		applied += fresh && !lost;
		for (uint64_t x = rec->span_lo; !r && x < rec->span_hi;) {
			uint64_t row = x / PPL_BLOCK, y = x;
			if (claimed[row / 8] & (1u << (row % 8))) {
				x += PPL_BLOCK;
				continue;
			}
			while (y < rec->span_hi && !(claimed[(y / PPL_BLOCK) / 8] & (1u << ((y / PPL_BLOCK) % 8)))) {
				claimed[(y / PPL_BLOCK) / 8] |= (uint8_t)(1u << ((y / PPL_BLOCK) % 8));
				y += PPL_BLOCK;
			}
			if (!lost && (r = replay_rows(v, &f[i], &st, x, y, buf, col)))
				snprintf(err, errlen, "replaying the partial parity log of stripe %llu: %s",
					 (unsigned long long)rec->stripe, strerror(-r));
			x = y;
		}
	}
	for (unsigned m = 0; !r && m < g->members; m++)
		if (v->slot[m] && !(failed & (1ull << m)))
			member_flush(v->slot[m]);
	if (!r) {
		atomic_store(&l->replayed, applied);
		fsvol_log(LOG_NOTICE, "ppl: not shut down cleanly: %u record%s replayed (parity from partial parity), "
			  "%u left as they are (a modified chunk on a missing member); no resync owed",
			  applied, applied == 1 ? "" : "s", skipped);
	}
	for (unsigned i = 0; i < nf; i++)
		free(f[i].pp);
	free(f);
	free(claimed);
	free(buf);
	free(col);
	return r;
}


int ppl_member_errors(struct vol *v, uint64_t *bad)
{
	struct ppl_log *l = v->ppl;
	if (!l || !l->journal || !(*bad & (1ull << l->jslot)))
		return 0;
	*bad &= ~(1ull << l->jslot);
	if (!atomic_exchange(&l->dead, 1)) {
		fsvol_log(LOG_ERR, "journal: the write journal (slot %u, %s) failed: writes are refused from now on "
			  "(read-only), as md does", l->jslot, v->slot[l->jslot] ? v->slot[l->jslot]->path : "?");
		vol_md_mark_failed(v, l->jslot); /* the superblocks say so (the metadata thread writes them) */
	}
	return 1;
}

int ppl_open(struct vol *v, char *err, size_t errlen)
{
	const struct sb *s = &v->sb;
	if (s->consistency == SB_CONS_JOURNAL)
		return jnl_kind.open(v, err, errlen);
	if (v->opts.journal_write_back) {
		snprintf(err, errlen, "--journal-mode write-back: this volume has no write journal (create --write-journal)");
		return -EINVAL;
	}
	if (s->consistency != SB_CONS_PPL)
		return 0;
	if (v->geom.level != LAYOUT_RAID5 || !s->ppl_offset || s->ppl_size < PPL_BLOCK + v->geom.chunk) {
		snprintf(err, errlen, "consistency policy ppl: needs raid5 and a PPL area of at least 4K + a chunk "
			 "(has %s, %u bytes)", layout_level_name(v->geom.level), s->ppl_size);
		return -EINVAL;
	}
	struct ppl_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	v->ppl = l;
	pthread_mutex_init(&l->lock, NULL);
	l->area = s->ppl_offset;
	l->nblocks = s->ppl_size / PPL_BLOCK;
	l->ndata = v->geom.data_members;
	/* a later start's records are newer than any of an earlier one (its
	 * session, PPL_SESSION, is higher: every start bumps events) */
	l->seq = (s->events + 1) << 32;
	for (unsigned m = 0; m < v->geom.members; m++)
		if (!(l->ring[m].q = calloc(l->nblocks, sizeof(*l->ring[m].q))))
			return -ENOMEM;
	if (!v->was_dirty || v->opts.readonly)
		return 0;
	int r = replay(v, err, errlen);
	if (!r)
		v->was_dirty = 0; /* the log put every interrupted stripe right */
	return r;
}

void ppl_free(struct vol *v)
{
	struct ppl_log *l = v->ppl;
	if (!l)
		return;
	for (unsigned m = 0; m < SB_MAX_SLOTS; m++)
		free(l->ring[m].q); /* NULL where no ring */
	pthread_mutex_destroy(&l->lock);
	free(l);
	v->ppl = NULL;
}

void ppl_member_reset(struct vol *v, int slot)
{
	struct ppl_log *l = v->ppl;
	if (!l || l->journal || slot < 0 || !v->slot[slot])
		return;
	int r = member_write_zeros(v->slot[slot], l->area, l->nblocks * PPL_BLOCK);
	if (!r)
		r = member_flush(v->slot[slot]);
	if (r)
		fsvol_log(LOG_WARNING, "ppl: clearing the log of member %d (%s): %s", slot, v->slot[slot]->path,
			  strerror(-r));
}

const char *vol_consistency_name(const struct vol *v)
{
	if (v->sb.consistency == SB_CONS_PPL)
		return "ppl";
	if (v->sb.consistency == SB_CONS_JOURNAL)
		return "journal";
	if (v->sb.bitmap_offset)
		return "bitmap";
	return layout_copies(&v->geom) > 1 || layout_parity_count(&v->geom) ? "resync" : "none";
}

void ppl_status(struct vol *v, FILE *f)
{
	uint64_t rec, blk, rep;
	if (!ppl_on(v))
		return;
	ppl_counts(v, &rec, &blk, &rep);
	int dead = v->ppl->journal && atomic_load(&v->ppl->dead);
	fprintf(f, "      consistency policy: %s (%llu records, %llu blocks written; %llu replayed at start)%s\n",
		!v->ppl->journal ? "ppl" : atomic_load(&v->ppl->write_back) ? "journal, write-back" : "journal, write-through",
		(unsigned long long)rec, (unsigned long long)blk, (unsigned long long)rep,
		!dead ? "" : v->slot[v->ppl->jslot] ? ", JOURNAL FAILED: writes refused" : ", JOURNAL MISSING: writes refused");
}

/* ---- the stripe log as a feature (core/feature.h) ---- */

static int log_open(struct vol *v, char *err, size_t errlen)
{
	int r = ppl_open(v, err, errlen);
	return r < 0 ? r : v->ppl != NULL;
}

static int log_settle(struct eng_req *rq, uint64_t *bad)
{
	/* the write journal failed: no write goes on without it */
	return ppl_member_errors(rq->v, bad) && !*bad ? -EROFS : 0;
}

const struct vol_feature vol_feat_log = {
	.name = "stripe log",
	.open = log_open,
	.free = ppl_free,
	.status = ppl_status,
	.read_locks = ppl_reads_lock,
	.flush_member = ppl_is_journal,
	.settle = log_settle,
	.scratch_free = ppl_release,
};
