/* engine: the life of a volume request (see engine.h).
 *
 * A request is served in aligned segments of at most 1 MiB:
 *
 *   START -> LOCK -> [EDGES] -> FAMILY <-> WAIT -> SEGMENT END -> ... -> FINISH
 *
 * LOCK takes the segment's stripe/region locks (queued, never blocking);
 * EDGES reads the partial blocks an unaligned write must merge (child
 * requests); FAMILY asks the level family's step (io_plain.c, io_mirror.c,
 * io_parity.c) for the next batch of member pieces, which are sorted, merged
 * where member offsets meet, queued on every member and committed together;
 * the batch's last completion, on any thread, kicks the request on. A member
 * error goes to the volume through one call (vol_fail_slot, md's md_error);
 * the segment is then replanned on what survives.
 *
 * Kicks run on a per-thread trampoline, so a completion that arrives while
 * its thread is still issuing never recurses: one loop per thread runs every
 * request that became ready on it.
 */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/engine.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/reshape.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

enum {
	ST_START,       /* next segment, or finish */
	ST_LOCK,        /* taking the segment's locks */
	ST_BITMAP,      /* a write waits for its write-intent bits to be durable */
	ST_EDGES,       /* an unaligned write's edge blocks are being read */
	ST_FAMILY,      /* ask the family for the next batch */
	ST_WAIT,        /* a batch is in flight */
	ST_SEG_END,
	ST_FINISH,      /* a write or flush waits for a pending superblock change */
	ST_ACK,         /* its done() runs */
};

#define ENG_POOL_IDLE_REQS 256u

struct eng_state {
	const struct eng_family *fam;
	atomic_uint active;      /* requests between submit and completion */
	struct eng_locktab *locks;
	pthread_mutex_t pool_lock;
	struct eng_req *pool;
	unsigned pooled;
};

static __thread int tl_may_block;

void engine_thread_may_block(int yes)
{
	tl_may_block = yes;
}

const struct eng_family *eng_family_of(const struct layout_geom *g)
{
	if (layout_is_parity(g))
		return &eng_parity;
	return layout_copies(g) > 1 ? &eng_mirror : &eng_plain;
}

/* ---- requests: a bounded pool ---- */

static void req_free_arrays(struct eng_req *rq)
{
	free(rq->pieces);
	free(rq->mio);
	free(rq->iov);
	free(rq->plans);
	rq->pieces = NULL;
	rq->mio = NULL;
	rq->iov = NULL;
	rq->plans = NULL;
	rq->cap_pieces = rq->cap_mio = rq->cap_iov = rq->cap_plans = 0;
}

/* Each thread keeps a few idle requests of its own (any volume's: a request
 * carries nothing of its volume while idle), so a steady stream takes no lock
 * and allocates nothing; the volume's pool takes the overflow. */
#define ENG_TL_REQS 32u
static __thread struct eng_req *tl_reqs;
static __thread unsigned tl_nreqs;
static pthread_key_t tl_req_key;
static pthread_once_t tl_req_once = PTHREAD_ONCE_INIT;

static void tl_reqs_free(void *p)
{
	(void)p;
	while (tl_reqs) {
		struct eng_req *rq = tl_reqs;
		tl_reqs = rq->next;
		req_free_arrays(rq);
		free(rq);
	}
	tl_nreqs = 0;
}

static void tl_req_key_make(void)
{
	pthread_key_create(&tl_req_key, tl_reqs_free);
}

/* The bitmap or the metadata thread lets a queued request go on. */
static void req_resume(struct vol_waiter *w)
{
	struct eng_req *rq = (struct eng_req *)((char *)w - offsetof(struct eng_req, wait));
	if (w->res)
		rq->res = w->res;
	eng_kick(rq);
}

static struct eng_req *req_get(struct vol *v)
{
	struct eng_state *es = v->eng;
	struct eng_req *rq = tl_reqs;
	if (rq) {
		tl_reqs = rq->next;
		tl_nreqs--;
	} else {
		pthread_mutex_lock(&es->pool_lock);
		if ((rq = es->pool)) {
			es->pool = rq->next;
			es->pooled--;
		}
		pthread_mutex_unlock(&es->pool_lock);
	}
	if (!rq && !(rq = calloc(1, sizeof(*rq))))
		return NULL;
	/* keep the arrays, reset the rest */
	struct eng_req keep = *rq;
	memset(rq, 0, sizeof(*rq));
	rq->pieces = keep.pieces;
	rq->cap_pieces = keep.cap_pieces;
	rq->mio = keep.mio;
	rq->cap_mio = keep.cap_mio;
	rq->iov = keep.iov;
	rq->cap_iov = keep.cap_iov;
	rq->plans = keep.plans;
	rq->cap_plans = keep.cap_plans;
	rq->v = v;
	rq->geom = &v->geom;
	rq->wait.resume = req_resume;
	return rq;
}

static void req_put(struct eng_req *rq)
{
	struct eng_state *es = rq->v->eng;
	/* arrays sized for a rare huge request are not kept */
	if (rq->cap_pieces > 256 || rq->cap_plans > ENG_ROUND_PLANS)
		req_free_arrays(rq);
	if (tl_nreqs < ENG_TL_REQS) {
		if (!tl_reqs) /* freed when the thread ends */
			pthread_once(&tl_req_once, tl_req_key_make), pthread_setspecific(tl_req_key, (void *)1);
		rq->next = tl_reqs;
		tl_reqs = rq;
		tl_nreqs++;
		return;
	}
	pthread_mutex_lock(&es->pool_lock);
	if (es->pooled < ENG_POOL_IDLE_REQS) {
		rq->next = es->pool;
		es->pool = rq;
		es->pooled++;
		rq = NULL;
	}
	pthread_mutex_unlock(&es->pool_lock);
	if (rq) {
		req_free_arrays(rq);
		free(rq);
	}
}

/* ---- scratch memory ---- */

static struct eng_chunk *chunk_new(size_t len)
{
	struct eng_chunk *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	if (!(c->mem = bufpool_get(len, &c->cap))) {
		free(c);
		return NULL;
	}
	c->used = 0;
	c->next = NULL;
	return c;
}

static void chunk_free(struct eng_chunk *c)
{
	while (c) {
		struct eng_chunk *n = c->next;
		bufpool_put(c->mem, c->cap);
		free(c);
		c = n;
	}
}

void *eng_alloc(struct eng_req *rq, size_t len)
{
	size_t need = (len + ENG_ALIGN - 1) & ~(size_t)(ENG_ALIGN - 1);
	struct eng_chunk *c = rq->scratch;
	if (!c || c->cap - c->used < need) {
		/* a new chunk: at least 64 KiB, so small pieces share one */
		if (!(c = chunk_new(need > (64u << 10) ? need : (64u << 10))))
			return NULL;
		c->next = rq->scratch;
		rq->scratch = c;
	}
	void *p = c->mem + c->used;
	c->used += need;
	return p;
}

void eng_scratch_free(struct eng_req *rq)
{
	if (rq->ppl) /* the stripe log's hold: before the records' memory goes */
		VOL_FEAT_EACH(rq->v, f)
			if (f->scratch_free)
				f->scratch_free(rq);
	chunk_free(rq->scratch);
	rq->scratch = NULL;
	rq->nplans = 0;
}

struct eng_plan *eng_plan_new(struct eng_req *rq)
{
	if (rq->nplans == rq->cap_plans) {
		unsigned cap = rq->cap_plans ? 2 * rq->cap_plans : 1;
		struct eng_plan *p = realloc(rq->plans, cap * sizeof(*p));
		if (!p)
			return NULL;
		rq->plans = p;
		rq->cap_plans = cap;
	}
	return &rq->plans[rq->nplans++];
}

/* ---- pieces and batches ---- */

int eng_piece(struct eng_req *rq, unsigned slot, int op, int why, uint64_t off, uint64_t len, void *buf)
{
	if (rq->npieces == rq->cap_pieces) {
		unsigned cap = rq->cap_pieces ? 2 * rq->cap_pieces : 16;
		struct eng_piece *p = realloc(rq->pieces, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		rq->pieces = p;
		rq->cap_pieces = cap;
	}
	if (rq->flags & ENG_F_RESHAPE)
		why = STATS_WHY_RESHAPE; /* a reshape's member I/O shows as such in the trace */
	rq->pieces[rq->npieces++] = (struct eng_piece){
		.slot = slot, .op = (uint8_t)op, .why = (uint8_t)why, .off = off, .len = len, .buf = buf
	};
	/* a role being replaced: its replacement gets every write too, so each
	 * unit it holds stays equal to the role once copied (md's replacement) */
	int rs = atomic_load_explicit(&rq->v->replace_slot, memory_order_acquire);
	if (op == MEMBER_WRITE && rs >= 0 && (unsigned)rs == slot && !eng_why_meta(why))
		return eng_piece(rq, (unsigned)atomic_load(&rq->v->replace_with), op, STATS_WHY_MIRROR, off, len, buf);
	return 0;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct eng_piece *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

static int grow(void **arr, unsigned *cap, unsigned need, size_t size)
{
	if (need <= *cap)
		return 0;
	void *p = realloc(*arr, need * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = need;
	return 0;
}

/* Sorted by member and offset: adjacent pieces become one member I/O. */
static int batch_merge(struct eng_req *rq)
{
	unsigned n = rq->npieces, ni = 0, nm = 0;
	if (n > 1)
		qsort(rq->pieces, n, sizeof(rq->pieces[0]), piece_cmp);
	if (grow((void **)&rq->mio, &rq->cap_mio, n, sizeof(*rq->mio)) ||
	    grow((void **)&rq->iov, &rq->cap_iov, n, sizeof(*rq->iov)))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct eng_piece *p = &rq->pieces[i];
		struct eng_mio *s = nm ? &rq->mio[nm - 1] : NULL;
		if (s && s->op == p->op && s->slot == p->slot && s->why == p->why && s->off + s->len == p->off &&
		    p->op != MEMBER_FLUSH && s->io.niov < 1024) {
			struct iovec *last = &rq->iov[ni - 1];
			if ((uint8_t *)last->iov_base + last->iov_len == (uint8_t *)p->buf) {
				last->iov_len += p->len;
			} else {
				rq->iov[ni++] = (struct iovec){ p->buf, p->len };
				s->io.niov++;
			}
			s->len += p->len;
			continue;
		}
		s = &rq->mio[nm++];
		s->slot = p->slot;
		s->op = p->op;
		s->why = p->why;
		s->off = p->off;
		s->len = p->len;
		s->io.niov = 1;
		s->io.iov = (struct iovec *)(uintptr_t)ni; /* an index until the array is final */
		rq->iov[ni++] = (struct iovec){ p->buf, p->len };
	}
	for (unsigned k = 0; k < nm; k++)
		rq->mio[k].io.iov = rq->iov + (uintptr_t)rq->mio[k].io.iov;
	rq->nmio = nm;
	rq->npieces = 0;
	return 0;
}

static int member_counted(const struct vol *v)
{
	return atomic_load_explicit(&v->stats_level, memory_order_relaxed) == VOL_STATS_ALL;
}

static void trace_mio(struct vol *v, struct eng_req *rq, const struct eng_mio *s, uint64_t end, int res)
{
	struct stats_trace_rec r = {
		.seq = stats_trace_id(v->trace),
		.parent = rq->trace_parent,
		.t_start_ns = s->t0,
		.latency_ns = end - s->t0,
		.offset = s->off,
		.length = s->len,
		.dev = (int32_t)s->slot,
		.op = s->op,
		.why = s->why,
		.error = (int16_t)res,
	};
	stats_trace_add(v->trace, &r);
}

/* Both halves of a member I/O are in (the data, and the model's time). */
static void mio_complete(struct eng_mio *s)
{
	struct eng_req *rq = s->rq;
	struct vol *v = rq->v;
	struct member *m = s->m; /* not v->slot[s->slot]: its counters and in-flight count are this one's */
	int res = s->io.res;
	/* a modelled member completed at its emulated time */
	uint64_t end = s->emulated ? s->eio.r.done_ns : vol_now(v);
	struct vol_mstate *ms = vol_ms(v, m);
	atomic_fetch_sub_explicit(&ms->pending, 1, memory_order_relaxed);
	if (s->op != MEMBER_FLUSH)
		atomic_store_explicit(&ms->head, s->off + s->len, memory_order_relaxed);
	if (member_counted(v))
		stats_end(m->stats, (enum stats_op)s->op, s->off, s->op == MEMBER_FLUSH ? 0 : s->len, s->t0, end,
			  res);
	/* a request is traced whole or not at all */
	if (rq->trace_parent && stats_trace_on(v->trace))
		trace_mio(v, rq, s, end, res);
	if (vol_host_errno(res)) {
		/* the host is out of room or resources: not the disk's fault, and
		 * failing the member for it would brick a healthy volume */
		atomic_store(&rq->host_err, res);
	} else if (res < 0) {
		int zero = 0;
		atomic_compare_exchange_strong(&rq->member_err, &zero, res);
		atomic_fetch_or(&rq->failed_now, 1ull << s->slot);
	}
	if (atomic_fetch_sub_explicit(&rq->pending, 1, memory_order_acq_rel) == 1)
		eng_kick(rq);
}

static void mio_part_done(struct eng_mio *s)
{
	if (atomic_fetch_sub_explicit(&s->parts, 1, memory_order_acq_rel) == 1)
		mio_complete(s);
}

static void mio_backend_done(struct member_io *io)
{
	struct eng_mio *s = (struct eng_mio *)io;
	struct emul *e = s->virt;
	/* virtual time: the model gets the request once its data has moved,
	 * with the arrival it was issued at (the release completes it) */
	mio_part_done(s);
	if (e) {
		emul_submit(e, &s->eio);
		emul_expect(e, -1);
	}
}

static void mio_model_done(struct emul_io *eio)
{
	mio_part_done((struct eng_mio *)((uint8_t *)eio - offsetof(struct eng_mio, eio)));
}

/* A feature that queues a member I/O itself (failfast's deadline): 1. */
static int feat_issue(struct vol *v, struct member *m, unsigned slot, struct member_io *io)
{
	VOL_FEAT_EACH(v, f)
		if (f->issue && f->issue(v, m, slot, io))
			return 1;
	return 0;
}

/* Whether a read segment takes its locks for a feature's sake (a write-back
 * journal's acknowledged writes, listed bad blocks). */
static int feat_read_locks(const struct vol *v)
{
	VOL_FEAT_EACH(v, f)
		if (f->read_locks && f->read_locks(v))
			return 1;
	return 0;
}

/* Queue and commit every piece. 1 when all completed already, 0 when the
 * last completion will kick the request. */
static int batch_issue(struct eng_req *rq)
{
	struct vol *v = rq->v;
	int r = batch_merge(rq);
	if (r) {
		rq->res = r;
		return -1;
	}
	struct emul *emul = atomic_load_explicit(&v->emul, memory_order_acquire);
	int virt = emul && emul_is_virtual(emul);
	uint64_t now = virt ? emul_now(emul) : stats_now();
	struct member *used[SB_MAX_SLOTS];
	unsigned nused = 0;
	int counted = member_counted(v);
	atomic_store(&rq->pending, rq->nmio + 1);
	atomic_store(&rq->failed_now, 0);
	atomic_store(&rq->member_err, 0);
	for (unsigned k = 0; k < rq->nmio; k++) {
		struct eng_mio *s = &rq->mio[k];
		struct member *m = v->slot[s->slot];
		s->rq = rq;
		s->m = m;
		s->t0 = now;
		s->io.op = s->op;
		s->io.off = s->off + (eng_why_meta(s->why) ? 0 : v->data_offset);
		s->io.len = s->op == MEMBER_FLUSH ? 0 : s->len;
		s->io.done = mio_backend_done;
		s->io.nowait = !tl_may_block;
		struct vol_mstate *ms = vol_ms(v, m);
		s->emulated = emul && s->op != MEMBER_FLUSH && atomic_load_explicit(&ms->modeled, memory_order_acquire);
		s->virt = virt && s->emulated ? emul : NULL;
		atomic_store_explicit(&s->parts, 1 + s->emulated, memory_order_relaxed);
		atomic_fetch_add_explicit(&ms->pending, 1, memory_order_relaxed);
		if (counted)
			stats_begin(m->stats, now);
		if (s->emulated) {
			/* the model decides when this completes; the data moves now */
			s->eio.r = (struct spindle_req){ .offset = s->off, .length = s->len,
							 .write = s->op == MEMBER_WRITE, .arrival_ns = now };
			s->eio.sp = ms->spindle;
			s->eio.release = mio_model_done;
			if (s->virt)
				emul_expect(emul, 1); /* submitted when the data has moved */
			else
				emul_submit(emul, &s->eio);
		}
		unsigned u = 0;
		while (u < nused && used[u] != m)
			u++;
		if (u == nused && nused < SB_MAX_SLOTS)
			used[nused++] = m;
		if (s->virt || !feat_issue(v, m, s->slot, &s->io))
			m->ops->queue(m, &s->io);
	}
	/* the members queued to, not the slots' members now: a swap meanwhile
	 * would leave a queued I/O uncommitted for good */
	for (unsigned u = 0; u < nused; u++)
		used[u]->ops->commit(used[u]);
	return atomic_fetch_sub_explicit(&rq->pending, 1, memory_order_acq_rel) == 1;
}

/* ---- segments ---- */

static uint64_t lock_unit(const struct eng_req *rq)
{
	return eng_family_of(rq->geom)->lock_unit(rq->geom);
}

static int is_aligned(const void *buf, uint64_t off, uint64_t len)
{
	return ((uintptr_t)buf % ENG_ALIGN) == 0 && off % ENG_ALIGN == 0 && len % ENG_ALIGN == 0;
}

/* Choose the next segment, its memory and its locks. 0, or -ENOMEM. */
static int seg_begin(struct eng_req *rq)
{
	struct vol *v = rq->v;
	if (rq->kind == ENG_K_RESHAPE) {
		/* a reshape window: the units of both geometries over it */
		rq->seg_off = rq->off;
		rq->seg_len = rq->seg_n = rq->len;
		eng_locks_set(&rq->lk, eng_family_of(&v->geom)->lock_unit(&v->geom), rq->off, rq->len, 1);
		eng_locks_add(&rq->lk, lock_unit(rq), rq->off, rq->len);
		return 0;
	}
	if (rq->kind >= ENG_K_RESYNC) {
		rq->geom = &v->geom;
		v->eng->fam->resync_range(&v->geom, rq->unit, &rq->seg_off, &rq->seg_len);
		rq->seg_n = rq->seg_len;
		eng_locks_set(&rq->lk, lock_unit(rq), rq->seg_off, rq->seg_len, 1);
		return 0;
	}
	uint64_t o = rq->off + rq->progress, n = rq->len - rq->progress;
	if (n > ENG_SEG)
		n = ENG_SEG;
	/* a reshape under way: one geometry per segment (cut at its position) */
	rq->epoch = vol_reshape_epoch(v);
	if (!(rq->flags & ENG_F_RESHAPE))
		rq->geom = vol_reshape_geom(v, o, &n);
	const struct eng_family *fam = eng_family_of(rq->geom);
	uint64_t a = o & ~(uint64_t)(ENG_ALIGN - 1), b = (o + n + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
	uint8_t *mem = rq->buf + rq->progress;
	rq->seg_n = n;
	rq->seg_off = a;
	rq->seg_len = b - a;
	if (is_aligned(mem, o, n)) {
		rq->seg_buf = mem;
	} else {
		if (!rq->bounce || rq->bounce->cap < b - a) {
			chunk_free(rq->bounce);
			if (!(rq->bounce = chunk_new(b - a)))
				return -ENOMEM;
		}
		rq->seg_buf = rq->bounce->mem;
	}
	int unaligned = a != o || b != o + n;
	if (rq->flags & ENG_F_NOLOCK)
		rq->lk.want = 0;
	else if (rq->kind == ENG_K_WRITE)
		/* parity updates and partial-block merges need the region to
		 * themselves; plain aligned writes only exclude those */
		eng_locks_set(&rq->lk, lock_unit(rq), a, b - a, unaligned || fam->parity);
	else if ((fam->parity && (eng_failed(v) || feat_read_locks(v))) || vol_reshaping(v))
		/* a reconstructing read must not see a half-written stripe; nor
		 * any read one a write-back journal acknowledged, nor a reshape
		 * window being moved */
		eng_locks_set(&rq->lk, lock_unit(rq), a, b - a, 0);
	else
		rq->lk.want = 0;
	return 0;
}

static void child_done(void *arg, int res)
{
	struct eng_req *parent = arg;
	if (res) {
		int zero = 0;
		atomic_compare_exchange_strong(&parent->member_err, &zero, res);
	}
	if (atomic_fetch_sub_explicit(&parent->pending, 1, memory_order_acq_rel) == 1)
		eng_kick(parent);
}

static void req_start(struct eng_req *rq);
static void hold_parked(void *arg);

/* An unaligned write: read the partial blocks at its edges into the bounce
 * buffer (children that run under this request's locks). 1 when they are
 * already done, 0 when the last one will kick us, <0 on error. */
static int edges_issue(struct eng_req *rq)
{
	uint64_t o = rq->off + rq->progress, n = rq->seg_n;
	uint64_t a = rq->seg_off, b = a + rq->seg_len;
	uint64_t eoff[2];
	unsigned ne = 0;
	if (a != o)
		eoff[ne++] = a;
	if (b != o + n && (b - ENG_ALIGN != a || a == o))
		eoff[ne++] = b - ENG_ALIGN;
	atomic_store(&rq->pending, ne + 1);
	atomic_store(&rq->member_err, 0);
	for (unsigned i = 0; i < ne; i++) {
		struct eng_req *c = req_get(rq->v);
		if (!c) {
			child_done(rq, -ENOMEM);
			continue;
		}
		c->kind = ENG_K_READ;
		c->flags = ENG_F_INTERNAL | ENG_F_NOLOCK;
		c->why = STATS_WHY_ALIGN;
		c->buf = rq->seg_buf + (eoff[i] - a);
		c->off = eoff[i];
		c->len = ENG_ALIGN;
		c->done = child_done;
		c->arg = rq;
		c->trace_parent = rq->trace_parent;
		req_start(c);
	}
	return atomic_fetch_sub_explicit(&rq->pending, 1, memory_order_acq_rel) == 1;
}

/* After a batch: member errors fail members; 1 to go on (maybe replanned),
 * 0 when the segment ends with rq->res set. */
static int batch_settle(struct eng_req *rq)
{
	struct vol *v = rq->v;
	uint64_t bad = atomic_exchange(&rq->failed_now, 0);
	int host = atomic_exchange(&rq->host_err, 0);
	/* an error of a member no longer in its slot (a spare took the role
	 * meanwhile) fails nobody: the segment is planned again */
	uint64_t moved = 0;
	for (unsigned k = 0; k < rq->nmio && bad; k++)
		if (rq->mio[k].io.res < 0 && v->slot[rq->mio[k].slot] != rq->mio[k].m)
			moved |= 1ull << rq->mio[k].slot;
	bad &= ~moved;
	if (host) {
		/* a full host filesystem: the request fails, no member does; the
		 * stripes it touched may disagree now, so the volume stays owed a
		 * resync (the next assembly runs it) */
		v->was_dirty = 1;
		atomic_fetch_add(&v->dirtied, 1);
		rq->res = host;
		return 0;
	}
	if (!bad && !moved)
		return 1;
	int rw = atomic_load(&v->replace_with);
	if (rw >= 0 && (bad & (1ull << rw))) {
		/* the replacement failed: the replace ends, the role still serves */
		vol_replace_abort(v, atomic_load(&rq->member_err));
		bad &= ~(1ull << rw);
		if (rq->kind == ENG_K_COPY) {
			rq->res = -EIO;
			return 0;
		}
		if (!bad && !moved)
			return 1;
	}
	/* the features first: a failed journal ends the write; md's bad-block
	 * log lists a sector-local error instead of failing the member */
	int listed_end = 0;
	VOL_FEAT_EACH(v, f)
		if (f->settle) {
			int r = f->settle(rq, &bad);
			if (r < 0) {
				rq->res = r;
				return 0;
			}
			listed_end |= r;
		}
	for (unsigned i = 0; i < rq->geom->members; i++)
		if (bad & (1ull << i))
			vol_fail_slot(v, i, atomic_load(&rq->member_err));
	if (listed_end)
		return 0;
	if (++rq->tries < ENG_MAX_TRIES && layout_survives(rq->geom, eng_failed(v))) {
		/* replan the whole segment on what survives */
		eng_scratch_free(rq);
		rq->phase = 0; /* the family's first step */
		rq->rpos = rq->seg_off;
		return 1;
	}
	rq->res = atomic_load(&rq->member_err) ? atomic_load(&rq->member_err) : -EIO;
	return 0;
}

/* A slot beyond the roles that a flush reaches too (the journal member). */
static int feat_flush_member(const struct vol *v, unsigned slot)
{
	VOL_FEAT_EACH(v, f)
		if (f->flush_member && f->flush_member(v, slot))
			return 1;
	return 0;
}

static int flush_step(struct eng_req *rq)
{
	struct vol *v = rq->v;
	/* a flush covers the writes acknowledged before it, those still going to
	 * a write-mostly leg (write-behind) too */
	if (rq->phase == ENG_ONCE_ISSUE)
		VOL_FEAT_EACH(v, f)
			if (f->flush_ok && !f->flush_ok(rq))
				return ENG_WAIT;
	if (!eng_once(rq))
		return ENG_DONE;
	/* a member being rebuilt holds what was written below its checkpoint */
	uint64_t failed = eng_failed(v);
	int rebuilding = atomic_load(&v->rebuild_slot);
	if (rebuilding >= 0)
		failed &= ~(1ull << rebuilding);
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && (i < vol_reshape_members(v) ? !(failed & (1ull << i))
				   : (int)i == atomic_load(&v->replace_with) || feat_flush_member(v, i)) &&
		    (v->slot[i]->caps & MEMBER_CAN_FLUSH)) {
			int r = eng_piece(rq, i, MEMBER_FLUSH, STATS_WHY_DATA, 0, 0, NULL);
			if (r)
				return r;
		}
	return rq->npieces ? ENG_ISSUE : ENG_DONE;
}

int eng_window_loop(struct eng_req *rq, const struct eng_window_ops *ops, void *w)
{
	for (;;) {
		uint64_t win = 0;
		int r = ops->window(rq, w, &win);
		if (r != ENG_WIN_GO && r != ENG_WIN_PASS)
			return r; /* ENG_DONE or -errno */
		if (r == ENG_WIN_PASS) {
			rq->rpos += win;
			continue;
		}
		switch ((enum eng_win_step)rq->phase) {
		case ENG_WIN_READ:
			eng_scratch_free(rq);
			rq->phase = ENG_WIN_WRITE;
			r = ops->read(rq, w, win);
			return r ? r : ENG_ISSUE;
		case ENG_WIN_WRITE:
			rq->phase = ENG_WIN_NEXT;
			if ((r = ops->write(rq, w, win)))
				return r;
			if (rq->npieces)
				return ENG_ISSUE;
			__attribute__((fallthrough)); /* nothing to write */
		case ENG_WIN_NEXT:
			eng_scratch_free(rq);
			rq->rpos += win;
			rq->phase = ENG_WIN_READ;
			break;
		}
	}
}

static int family_step(struct eng_req *rq)
{
	const struct eng_family *fam = eng_family_of(rq->geom);
	switch (rq->kind) {
	case ENG_K_RESHAPE:
		return ENG_PARK;
	case ENG_K_READ:
		return fam->read(rq);
	case ENG_K_WRITE:
		return fam->write(rq);
	case ENG_K_FLUSH:
		return flush_step(rq);
	case ENG_K_REBUILD:
	case ENG_K_COPY:
	case ENG_K_FIX:
		return fam->rebuild(rq);
	default:
		return fam->resync(rq);
	}
}

/* In engine_active, so vol_close drains it: the callers' requests and the write-behinds. */
static int req_counted(unsigned flags)
{
	return !(flags & ENG_F_INTERNAL) || (flags & ENG_F_BEHIND);
}

static void req_finish(struct eng_req *rq)
{
	struct vol *v = rq->v;
	uint64_t now = vol_now(v);
	chunk_free(rq->bounce);
	rq->bounce = NULL;
	int background = rq->kind >= ENG_K_RESYNC;
	if ((rq->flags & ENG_F_ACKED) && rq->res) {
		/* told done, then failed on the members: the journal holds it; the
		 * next start replays the journal */
		fsvol_log(LOG_ERR, "write-back: a write acknowledged from the journal failed on the members (%s): "
			  "the volume stays dirty, so the next start replays the journal", strerror(-rq->res));
		v->was_dirty = 1;
	}
	if (!(rq->flags & ENG_F_INTERNAL) && !background) {
		uint64_t len = rq->kind == ENG_K_FLUSH ? 0 : rq->len;
		if (atomic_load_explicit(&v->stats_level, memory_order_relaxed) != VOL_STATS_OFF &&
		    !(rq->flags & ENG_F_ACKED)) /* counted when acknowledged */
			stats_end(v->vstats, (enum stats_op)rq->kind, rq->off, len, rq->t0, now, rq->res);
		if (rq->trace_parent) {
			struct stats_trace_rec rec = {
				.seq = rq->trace_parent, .parent = 0, .t_start_ns = rq->t0,
				.latency_ns = now - rq->t0, .offset = rq->off, .length = len, .dev = -1,
				.op = (uint8_t)rq->kind, .why = STATS_WHY_DATA, .error = (int16_t)rq->res,
			};
			stats_trace_add(v->trace, &rec);
		}
	}
	if (background && rq->trace_parent) {
		/* a background unit shows as one line, its member I/O under it */
		struct stats_trace_rec rec = {
			.seq = rq->trace_parent, .parent = 0, .t_start_ns = rq->t0, .latency_ns = now - rq->t0,
			.offset = rq->seg_off, .length = rq->seg_len, .dev = -1,
			.op = rq->kind == ENG_K_RESYNC && !rq->repair ? STATS_READ : STATS_WRITE,
			.why = rq->kind == ENG_K_RESHAPE ? STATS_WHY_RESHAPE
			       : rq->kind >= ENG_K_REBUILD ? STATS_WHY_REBUILD : STATS_WHY_DATA,
			.error = (int16_t)rq->res,
		};
		stats_trace_add(v->trace, &rec);
	}
	engine_done_fn done = rq->done;
	void *arg = rq->arg;
	int res = rq->res;
	if (rq->flags & ENG_F_SAFE)
		VOL_FEAT_EACH(v, f)
			if (f->write_done)
				f->write_done(v); /* md_write_end */
	if (req_counted(rq->flags))
		atomic_fetch_sub_explicit(&v->eng->active, 1, memory_order_release);
	if (background && rq->kind != ENG_K_FIX) {
		/* the waiter reads the counts from the request: hand it over */
		done(arg, res);
		return;
	}
	int acked = rq->flags & ENG_F_ACKED;
	req_put(rq);
	if (!acked)
		done(arg, res);
}

void eng_ack_early(struct eng_req *rq)
{
	struct vol *v = rq->v;
	if (rq->flags & (ENG_F_ACKED | ENG_F_INTERNAL) || rq->kind != ENG_K_WRITE)
		return;
	rq->flags |= ENG_F_ACKED;
	if (atomic_load_explicit(&v->stats_level, memory_order_relaxed) != VOL_STATS_OFF)
		stats_end(v->vstats, (enum stats_op)rq->kind, rq->off, rq->len, rq->t0, vol_now(v), 0);
	rq->done(rq->arg, 0);
}

/* A write planned before the role being replaced failed would miss its
 * replacement (core/replace.c): planned again, once the replacement has the
 * role. 1 when rq waits for that. */
static int replace_replan(struct eng_req *rq)
{
	eng_scratch_free(rq);
	rq->npieces = 0;
	rq->phase = 0;
	rq->rpos = rq->seg_off;
	return vol_replace_wait(rq->v, &rq->wait, &rq->repl_epoch);
}

/* md_write_start: 1 go on, 0 w queued (a feature resumes it). */
static int feat_write_start(struct vol *v, struct vol_waiter *w)
{
	VOL_FEAT_EACH(v, f)
		if (f->write_start && !f->write_start(v, w))
			return 0;
	return 1;
}

/* A write segment's intent (the bitmap's bits): 1 go on, 0 w queued. */
static int feat_write_begin(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w)
{
	VOL_FEAT_EACH(v, f)
		if (f->write_begin && !f->write_begin(v, off, len, w))
			return 0;
	return 1;
}

/* A rebuild unit the family could not recover: 0 when a feature took it
 * (listed on the new member), else -EIO. */
static int feat_unit_lost(struct eng_req *rq)
{
	VOL_FEAT_EACH(rq->v, f)
		if (f->unit_lost && !f->unit_lost(rq))
			return 0;
	return -EIO;
}

/* Run rq until it waits for something or finishes. */
static void eng_step(struct eng_req *rq)
{
	struct vol *v = rq->v;
	int r;
	for (;;) {
		switch (rq->state) {
		case ST_START:
			if (rq->res || (rq->kind < ENG_K_RESYNC && rq->progress >= rq->len && rq->kind != ENG_K_FLUSH) ||
			    (rq->kind == ENG_K_FLUSH && rq->progress)) {
				rq->state = ST_FINISH;
				break;
			}
			/* md_write_start: a write waits while the superblocks say clean */
			if (rq->kind == ENG_K_WRITE && !(rq->flags & (ENG_F_SAFE | ENG_F_RESHAPE))) {
				rq->flags |= ENG_F_SAFE;
				if (!feat_write_start(v, &rq->wait))
					return; /* the metadata thread marks them dirty, then kicks us */
			}
			if (rq->kind == ENG_K_FLUSH) {
				rq->lk.want = 0;
				rq->seg_n = 1;
			} else if ((r = seg_begin(rq))) {
				rq->res = r;
				rq->state = ST_FINISH;
				break;
			}
			rq->phase = 0; /* the family's first step */
			rq->tries = 0;
			rq->rpos = rq->seg_off;
			rq->repl_epoch = vol_replace_epoch(v); /* before the plan reads the failed mask */
			rq->state = ST_LOCK;
			break;
		case ST_LOCK:
			if (rq->lk.want && !eng_locks_take(v->eng->locks, rq))
				return; /* queued on a bucket: its release kicks us */
			if (rq->kind < ENG_K_FLUSH && !(rq->flags & (ENG_F_RESHAPE | ENG_F_NOLOCK)) &&
			    rq->epoch != vol_reshape_epoch(v)) {
				/* a reshape window moved while we waited: map again */
				eng_locks_drop(v->eng->locks, rq);
				rq->state = ST_START;
				break;
			}
			rq->state = ST_BITMAP;
			/* a write-behind's bits were taken for it by its parent (eng_behind_submit) */
			if (rq->kind == ENG_K_WRITE && !(rq->flags & (ENG_F_BEHIND | ENG_F_RESHAPE)) &&
			    !feat_write_begin(v, rq->seg_off, rq->seg_len, &rq->wait))
				return; /* its bits are being written: the metadata thread kicks us */
			break;
		case ST_BITMAP:
			if (rq->res) { /* the bitmap could not be written (the host's errno) */
				rq->state = ST_SEG_END;
				break;
			}
			if (rq->kind == ENG_K_WRITE && rq->seg_buf != rq->buf + rq->progress) {
				rq->state = ST_EDGES;
				if ((r = edges_issue(rq)) == 0)
					return;
				break;
			}
			rq->state = ST_FAMILY;
			break;
		case ST_EDGES:
			if ((rq->res = atomic_load(&rq->member_err))) {
				rq->state = ST_SEG_END;
				break;
			}
			memcpy(rq->seg_buf + (rq->off + rq->progress - rq->seg_off), rq->buf + rq->progress, rq->seg_n);
			rq->state = ST_FAMILY;
			break;
		case ST_FAMILY:
			r = family_step(rq);
			if (r == -EIO && rq->kind == ENG_K_REBUILD && !feat_unit_lost(rq))
				r = rq->npieces = 0; /* listed on the new member instead: the unit is done */
			if (r < 0) {
				rq->npieces = 0;
				rq->res = r;
				rq->state = ST_SEG_END;
				break;
			}
			if (r == ENG_DONE) {
				rq->state = ST_SEG_END;
				break;
			}
			if (r == ENG_WAIT)
				return; /* still ST_FAMILY: whoever queued it (ppl.c, write_behind.c) kicks it */
			if (r == ENG_PARK) {
				/* a reshape window's locks are held: its thread works, then kicks us */
				rq->state = ST_SEG_END;
				hold_parked(rq->arg);
				return;
			}
			if (rq->kind == ENG_K_WRITE && rq->repl_epoch != vol_replace_epoch(v)) {
				if (replace_replan(rq))
					return; /* the takeover kicks us */
				break;
			}
			rq->state = ST_WAIT;
			r = batch_issue(rq);
			if (r < 0) {
				rq->state = ST_SEG_END;
				break;
			}
			if (r == 0)
				return; /* the last completion kicks us */
			break;
		case ST_WAIT:
			rq->state = batch_settle(rq) ? ST_FAMILY : ST_SEG_END;
			break;
		case ST_SEG_END:
			eng_scratch_free(rq);
			/* the rebuilt unit is in sync from now on: say so before its
			 * lock drops, so no write can slip past the target meanwhile */
			if (rq->kind == ENG_K_REBUILD && !rq->res)
				vol_rebuild_advance(v, rq->gen, rq->seg_off + rq->seg_len);
			if (rq->kind >= ENG_K_RESYNC) /* a fix's entries go before a write can pass the member by */
				VOL_FEAT_EACH(v, f)
					if (f->unit_done)
						f->unit_done(rq);
			if (rq->kind == ENG_K_WRITE && !(rq->flags & ENG_F_RESHAPE))
				VOL_FEAT_EACH(v, f)
					if (f->write_end)
						f->write_end(v, rq->seg_off, rq->seg_len);
			if (rq->lk.want)
				eng_locks_drop(v->eng->locks, rq);
			if (rq->kind == ENG_K_READ && !rq->res && !rq->lk.want && !(rq->flags & ENG_F_NOLOCK) &&
			    rq->epoch != vol_reshape_epoch(v)) {
				/* read without locks while a reshape began: read it again, locked */
				rq->state = ST_START;
				break;
			}
			if (!rq->res && rq->kind == ENG_K_READ && rq->seg_buf != rq->buf + rq->progress)
				memcpy(rq->buf + rq->progress, rq->seg_buf + (rq->off + rq->progress - rq->seg_off),
				       rq->seg_n);
			rq->progress += rq->seg_n;
			rq->state = rq->kind >= ENG_K_RESYNC ? ST_FINISH : ST_START;
			break;
		case ST_FINISH:
			/* an acknowledged write never depends on a superblock that
			 * still calls a failed member active (md's MD_SB_CHANGE_PENDING) */
			rq->state = ST_ACK;
			if ((rq->kind == ENG_K_WRITE || rq->kind == ENG_K_FLUSH) && !vol_md_sb_wait(v, &rq->wait))
				return; /* the metadata thread kicks us */
			break;
		default:
			req_finish(rq);
			return;
		}
	}
}

_Static_assert((int)ENG_K_READ == (int)ENGINE_READ && (int)ENG_K_WRITE == (int)ENGINE_WRITE &&
		       (int)ENG_K_FLUSH == (int)ENGINE_FLUSH,
	       "eng_kind follows engine.h's ops");

/* The trampoline: requests that became ready on this thread, run in order. */
static __thread struct eng_req *tl_run_head, *tl_run_tail;

void eng_kick(struct eng_req *rq)
{
	rq->next = NULL;
	if (tl_run_tail)
		tl_run_tail->next = rq;
	else
		tl_run_head = rq;
	tl_run_tail = rq;
	if (eng_tl_running)
		return;
	eng_tl_running = 1;
	while ((rq = tl_run_head)) {
		if (!(tl_run_head = rq->next))
			tl_run_tail = NULL;
		eng_step(rq);
	}
	eng_tl_running = 0;
}

static void req_start(struct eng_req *rq)
{
	rq->state = ST_START;
	eng_kick(rq);
}

/* ---- entry points ---- */

static int check_range(const struct vol *v, uint64_t off, uint64_t len)
{
	if (off > v->geom.capacity || len > v->geom.capacity - off)
		return -EINVAL;
	return 0;
}

/* A request from the pool with what every maker sets. A child whose parent
 * holds the locks takes no trace id: a write-behind has none, a reshape I/O its hold's. */
static struct eng_req *req_init(struct vol *v, int kind, unsigned flags, int why, engine_done_fn done, void *arg)
{
	struct eng_req *rq = req_get(v);
	if (!rq)
		return NULL;
	if (req_counted(flags))
		atomic_fetch_add_explicit(&v->eng->active, 1, memory_order_relaxed);
	rq->kind = kind;
	rq->flags = flags;
	rq->why = why;
	rq->done = done;
	rq->arg = arg;
	rq->t0 = vol_now(v);
	if (!(flags & ENG_F_NOLOCK) && stats_trace_on(v->trace))
		rq->trace_parent = stats_trace_id(v->trace);
	rq->wait.trace_id = rq->trace_parent; /* the metadata I/O it waits for shows under it */
	return rq;
}

int engine_submit(struct vol *v, int op, void *buf, uint64_t off, uint64_t len, engine_done_fn done, void *arg)
{
	if (op != ENGINE_READ && op != ENGINE_WRITE && op != ENGINE_FLUSH)
		return -EINVAL;
	if (op == ENGINE_FLUSH)
		off = len = 0;
	else if (check_range(v, off, len))
		return -EINVAL;
	/* a volume served without vol_start: its first write starts the
	 * metadata thread (a submission, never a completion) */
	if (op != ENGINE_READ && !v->opts.readonly && !atomic_load(&v->md_running)) {
		int r = v->md_start(v);
		if (r)
			return r;
	}
	struct eng_req *rq = req_init(v, op, 0, STATS_WHY_DATA, done, arg);
	if (!rq)
		return -ENOMEM;
	rq->buf = buf;
	rq->off = off;
	rq->len = len;
	if (atomic_load_explicit(&v->stats_level, memory_order_relaxed) != VOL_STATS_OFF)
		stats_begin(v->vstats, rq->t0);
	if (op != ENGINE_FLUSH && !len) {
		rq->state = ST_FINISH;
		eng_kick(rq);
		return 0;
	}
	req_start(rq);
	return 0;
}

struct eng_req *eng_behind_new(struct vol *v, void *buf, uint64_t off, uint64_t len, engine_done_fn done, void *arg,
			       int *held)
{
	struct eng_req *rq = req_init(v, ENG_K_WRITE, ENG_F_INTERNAL | ENG_F_NOLOCK | ENG_F_BEHIND, STATS_WHY_DATA,
				      done, arg);
	if (!rq)
		return NULL;
	rq->buf = buf;
	rq->off = off;
	rq->len = len;
	rq->state = ST_START;
	/* the parent holds these bits (durable): taken now, so they stay set
	 * until the slow leg has the data; else the bitmap kicks it later */
	*held = feat_write_begin(v, off, len, &rq->wait);
	return rq;
}

struct eng_waiter {
	sem_t sem;
	int res;
};

static void waiter_done(void *arg, int res)
{
	struct eng_waiter *w = arg;
	w->res = res;
	sem_post(&w->sem);
}

static void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) < 0 && errno == EINTR)
		;
}

/* Start rq, made with waiter_done and w, and wait for it (this thread may block). */
static int req_run_wait(struct eng_req *rq, struct eng_waiter *w)
{
	int was = tl_may_block;
	sem_init(&w->sem, 0, 0);
	tl_may_block = 1;
	req_start(rq);
	tl_may_block = was;
	sem_wait_intr(&w->sem);
	sem_destroy(&w->sem);
	return w->res;
}

static int engine_sync(struct vol *v, int op, void *buf, uint64_t off, uint64_t len)
{
	struct eng_waiter w;
	int was = tl_may_block;
	sem_init(&w.sem, 0, 0);
	tl_may_block = 1;
	int r = engine_submit(v, op, buf, off, len, waiter_done, &w);
	tl_may_block = was;
	if (!r) {
		sem_wait_intr(&w.sem);
		r = w.res;
	}
	sem_destroy(&w.sem);
	return r;
}

int engine_read(struct vol *v, void *buf, uint64_t off, uint64_t len)
{
	return engine_sync(v, ENGINE_READ, buf, off, len);
}

int engine_write(struct vol *v, const void *buf, uint64_t off, uint64_t len)
{
	return engine_sync(v, ENGINE_WRITE, (void *)buf, off, len);
}

int engine_flush(struct vol *v)
{
	return engine_sync(v, ENGINE_FLUSH, NULL, 0, 0);
}

uint64_t engine_resync_units(const struct vol *v)
{
	return v->eng->fam->resync_units(&v->geom);
}

/* A background unit (resync or rebuild), waited for. */
static int engine_unit(struct vol *v, int kind, uint64_t unit, int repair, unsigned gen, uint64_t *mismatches,
		       uint64_t *skipped)
{
	if (unit >= engine_resync_units(v))
		return -EINVAL;
	struct eng_waiter w;
	struct eng_req *rq = req_init(v, kind, 0, STATS_WHY_DATA, waiter_done, &w);
	if (!rq)
		return -ENOMEM;
	rq->unit = unit;
	rq->repair = repair;
	rq->gen = gen;
	rq->target = kind == ENG_K_COPY ? atomic_load(&v->replace_slot) : atomic_load(&v->rebuild_slot);
	rq->dest = kind == ENG_K_COPY ? atomic_load(&v->replace_with) : rq->target;
	int r = req_run_wait(rq, &w);
	if (mismatches)
		*mismatches += rq->mismatches;
	if (skipped)
		*skipped += rq->skipped;
	req_put(rq);
	return r;
}

int engine_resync(struct vol *v, uint64_t unit, int repair, uint64_t *mismatches, uint64_t *skipped)
{
	return engine_unit(v, ENG_K_RESYNC, unit, repair, 0, mismatches, skipped);
}

int engine_rebuild(struct vol *v, uint64_t unit, unsigned gen)
{
	if (atomic_load(&v->rebuild_slot) < 0)
		return -EINVAL;
	if (atomic_load(&v->rebuild_gen) != gen)
		return -ECANCELED; /* another target now: its own pass starts from its checkpoint */
	return engine_unit(v, ENG_K_REBUILD, unit, 0, gen, NULL, NULL);
}

int engine_copy(struct vol *v, uint64_t unit)
{
	if (atomic_load(&v->replace_slot) < 0)
		return -EINVAL;
	return engine_unit(v, ENG_K_COPY, unit, 0, 0, NULL, NULL);
}

int engine_fix(struct vol *v, unsigned slot, uint64_t unit, engine_done_fn done, void *arg)
{
	if (unit >= engine_resync_units(v) || slot >= v->geom.members)
		return -EINVAL;
	struct eng_req *rq = req_init(v, ENG_K_FIX, 0, STATS_WHY_DATA, done, arg);
	if (!rq)
		return -ENOMEM;
	rq->unit = unit;
	rq->target = rq->dest = (int)slot;
	req_start(rq);
	return 0;
}

/* ---- a reshape's window (reshape.c) ---- */

void eng_geom_changed(struct vol *v)
{
	v->eng->fam = eng_family_of(&v->geom);
}

struct eng_hold {
	sem_t locked, done;
	int res;
};

/* A hold's request parked with its locks held (ENG_PARK): its thread goes on. */
static void hold_parked(void *arg)
{
	struct eng_hold *h = arg;
	sem_post(&h->locked);
}

static void hold_done(void *arg, int res)
{
	struct eng_hold *h = arg;
	h->res = res;
	sem_post(&h->done);
}

struct eng_req *eng_reshape_hold(struct vol *v, const struct layout_geom *g, uint64_t off, uint64_t len,
				 int all)
{
	struct eng_hold *h = malloc(sizeof(*h));
	struct eng_req *rq = h ? req_init(v, ENG_K_RESHAPE, ENG_F_INTERNAL | ENG_F_RESHAPE, STATS_WHY_RESHAPE,
					  hold_done, h) : NULL;
	if (!rq) {
		free(h);
		return NULL;
	}
	sem_init(&h->locked, 0, 0);
	sem_init(&h->done, 0, 0);
	rq->geom = g;
	rq->off = off;
	/* all: every bucket (as many units as buckets), the volume stands still */
	rq->len = all ? (uint64_t)ENG_LOCKS * lock_unit(rq) : len;
	req_start(rq);
	sem_wait_intr(&h->locked);
	if (all)
		rq->seg_len = rq->len = len; /* the trace shows the volume */
	return rq;
}

int eng_reshape_release(struct eng_req *rq, int res)
{
	struct eng_hold *h = rq->arg;
	rq->res = res;
	eng_kick(rq);
	sem_wait_intr(&h->done);
	int r = h->res;
	sem_destroy(&h->locked);
	sem_destroy(&h->done);
	free(h);
	req_put(rq);
	return r;
}

int eng_reshape_io(struct eng_req *hold, int op, const struct layout_geom *g, void *buf, uint64_t off,
		   uint64_t len)
{
	struct eng_waiter w;
	struct eng_req *rq = req_init(hold->v, op, ENG_F_INTERNAL | ENG_F_NOLOCK | ENG_F_RESHAPE, STATS_WHY_RESHAPE,
				      waiter_done, &w);
	if (!rq)
		return -ENOMEM;
	rq->geom = g;
	rq->buf = buf;
	rq->off = off;
	rq->len = len;
	rq->trace_parent = hold->trace_parent;
	return req_run_wait(rq, &w);
}

unsigned engine_active(const struct vol *v)
{
	return atomic_load_explicit(&v->eng->active, memory_order_relaxed);
}

void engine_unit_range(const struct vol *v, uint64_t unit, uint64_t *off, uint64_t *len)
{
	v->eng->fam->resync_range(&v->geom, unit, off, len);
}

int engine_init(struct vol *v)
{
	struct eng_state *es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	if (eng_locks_create(&es->locks, eng_kick)) {
		free(es);
		return -ENOMEM;
	}
	es->fam = eng_family_of(&v->geom);
	pthread_mutex_init(&es->pool_lock, NULL);
	v->eng = es;
	return 0;
}

void engine_drain(struct vol *v)
{
	/* emulated completions may be seconds away on a deep queue: wait, politely */
	while (v->eng && atomic_load_explicit(&v->eng->active, memory_order_acquire)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

void engine_fini(struct vol *v)
{
	struct eng_state *es = v->eng;
	if (!es)
		return;
	while (es->pool) {
		struct eng_req *rq = es->pool;
		es->pool = rq->next;
		req_free_arrays(rq);
		free(rq);
	}
	eng_locks_destroy(es->locks);
	pthread_mutex_destroy(&es->pool_lock);
	free(es);
	v->eng = NULL;
}
