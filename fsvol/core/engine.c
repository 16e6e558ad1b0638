/* engine: the step machine of a volume request (see engine.h); the pool and
 * scratch are eng_req.c, the entry points and request makers eng_submit.c,
 * the features reached through v->feat (feature.h).
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


__thread int eng_tl_may_block;

void engine_thread_may_block(int yes)
{
	eng_tl_may_block = yes;
}

const struct eng_family *eng_family_of(const struct layout_geom *g)
{
	if (layout_is_parity(g))
		return &eng_parity;
	return layout_copies(g) > 1 ? &eng_mirror : &eng_plain;
}

/* The bitmap or the metadata thread lets a queued request go on. */
void eng_resume(struct vol_waiter *w)
{
	struct eng_req *rq = (struct eng_req *)((char *)w - offsetof(struct eng_req, wait));
	if (w->res)
		rq->res = w->res;
	eng_kick(rq);
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
		s->io.nowait = !eng_tl_may_block;
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
			eng_chunk_free(rq->bounce);
			if (!(rq->bounce = eng_chunk_new(b - a)))
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
		struct eng_req *c = eng_new(rq->v, &(struct eng_desc){
			.kind = ENG_K_READ, .flags = ENG_F_INTERNAL | ENG_F_NOLOCK, .why = STATS_WHY_ALIGN,
			.buf = rq->seg_buf + (eoff[i] - a), .off = eoff[i], .len = ENG_ALIGN,
			.trace_parent = rq->trace_parent, .done = child_done, .arg = rq });
		if (!c) {
			child_done(rq, -ENOMEM);
			continue;
		}
		eng_start(c);
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

static void req_finish(struct eng_req *rq)
{
	struct vol *v = rq->v;
	uint64_t now = vol_now(v);
	eng_chunk_free(rq->bounce);
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
	if (eng_req_counted(rq->flags))
		atomic_fetch_sub_explicit(&v->eng->active, 1, memory_order_release);
	if (background && rq->kind != ENG_K_FIX) {
		/* the waiter reads the counts from the request: hand it over */
		done(arg, res);
		return;
	}
	int acked = rq->flags & ENG_F_ACKED;
	eng_req_put(rq);
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
int eng_feat_write_begin(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w)
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
/* ST_START, past the write's mark: the next segment and its locks; the
 * next state. */
static int seg_start(struct eng_req *rq)
{
	int r;
	if (rq->kind == ENG_K_FLUSH) {
		rq->lk.want = 0;
		rq->seg_n = 1;
	} else if ((r = seg_begin(rq))) {
		rq->res = r;
		return ST_FINISH;
	}
	rq->phase = 0; /* the family's first step */
	rq->tries = 0;
	rq->rpos = rq->seg_off;
	rq->repl_epoch = vol_replace_epoch(rq->v); /* before the plan reads the failed mask */
	return ST_LOCK;
}

/* ST_SEG_END: the segment's scratch, its features' ends and its locks go;
 * the next state. */
static int seg_end(struct eng_req *rq)
{
	struct vol *v = rq->v;
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
		return ST_START; /* read without locks while a reshape began: read it again, locked */
	}
	if (!rq->res && rq->kind == ENG_K_READ && rq->seg_buf != rq->buf + rq->progress)
		memcpy(rq->buf + rq->progress, rq->seg_buf + (rq->off + rq->progress - rq->seg_off),
		       rq->seg_n);
	rq->progress += rq->seg_n;
	return rq->kind >= ENG_K_RESYNC ? ST_FINISH : ST_START;
}

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
			rq->state = seg_start(rq);
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
			    !eng_feat_write_begin(v, rq->seg_off, rq->seg_len, &rq->wait))
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
				rq->parked(rq->arg);
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
			rq->state = seg_end(rq);
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

void eng_start(struct eng_req *rq)
{
	rq->state = ST_START;
	eng_kick(rq);
}

