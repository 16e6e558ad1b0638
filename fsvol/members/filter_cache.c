/* filter_cache: a volatile write-back cache, as a disk's DRAM cache with write
 * caching on (keys cache, cache_size: fault_spec.h). A write is acknowledged
 * once copied in and reaches the member below on a flush or as the cache
 * fills; reads see it; writes to one range go down in the order they were
 * acknowledged. A power cut (filter_cache_powercut) drops what it holds. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fsvol/members/filter.h"

#define FAULT_CACHE_INFLIGHT 64u   /* write-outs in flight per member */
#define FAULT_CACHE_BLOCKERS 128u  /* older ranges a write-out pass checks against */

/* One cached write. Its data never changes; a newer write to the same range
 * is a newer entry, and entries reach the member below oldest first (an entry
 * is written out only when no older overlapping one is left). */
struct cache_ent {
	struct cache_ent *prev, *next; /* the cache, oldest first */
	uint64_t seq, off, len;
	void *data;
	int writing;               /* its write-out is in flight */
	int linked;                /* still in the cache */
	unsigned refs;             /* reads that will lay it over what they read */
	struct member_io *sync_io; /* a write waiting for its own write-out */
	struct fcache *f;
	struct cache_ent *bnext;   /* a write-out batch */
	struct iovec wiov;
	struct member_io wio;      /* the write-out */
};

/* A flush waits until every entry up to target has been written out. */
struct cache_flush {
	struct member_io *io;
	uint64_t target;
	struct cache_flush *next;
};

/* A read that overlaps cached entries: the member's data, then theirs on top. */
struct cache_rd {
	struct member_io io;
	struct member_io *orig;
	struct fcache *f;
	unsigned n;
	struct cache_ent *ent[];   /* oldest first */
};

struct fcache {
	struct filter flt;
	atomic_int active;         /* in use, or the power is off */
	pthread_mutex_t lock;      /* everything below */
	int on;                    /* cache=volatile is set */
	uint64_t size;             /* cache_size */
	struct cache_ent *chead, *ctail; /* oldest first */
	uint64_t cseq;             /* of the newest entry */
	uint64_t cbytes, cdirty;   /* all entries; those not being written out */
	uint64_t wb_target;        /* entries up to this seq must be written out */
	unsigned cwriting;
	struct cache_flush *fhead, *ftail;
	int cerr;                  /* a write-out's error, for the next flush */
	int pumping, repump;
	pthread_cond_t idle;       /* cwriting fell to 0 */
};

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* In use while set, and after it was cleared until what it holds is written out. */
static int cache_in_use(const struct fcache *f)
{
	return f->on || f->chead || f->fhead;
}

static void cache_iov_copy(const struct iovec *iov, unsigned niov, uint64_t at, void *p, uint64_t len, int to_iov)
{
	for (unsigned i = 0; i < niov && len; i++) {
		if (at >= iov[i].iov_len) {
			at -= iov[i].iov_len;
			continue;
		}
		uint64_t n = iov[i].iov_len - at < len ? iov[i].iov_len - at : len;
		if (to_iov)
			memcpy((uint8_t *)iov[i].iov_base + at, p, n);
		else
			memcpy(p, (uint8_t *)iov[i].iov_base + at, n);
		p = (uint8_t *)p + n;
		len -= n;
		at = 0;
	}
}

static void cache_ent_free(struct cache_ent *e)
{
	free(e->data);
	free(e);
}

/* Under lock: out of the cache; freed once no read holds it. */
static void cache_unlink(struct fcache *f, struct cache_ent *e)
{
	*(e->prev ? &e->prev->next : &f->chead) = e->next;
	*(e->next ? &e->next->prev : &f->ctail) = e->prev;
	e->linked = 0;
	f->cbytes -= e->len;
	if (!e->writing)
		f->cdirty -= e->len;
	if (!e->refs)
		cache_ent_free(e);
}

/* Under lock: with the cache cleared and empty, back to the fast path. */
static void cache_settle(struct fcache *f)
{
	if (!filter_dead(&f->flt) && !cache_in_use(f))
		atomic_store_explicit(&f->active, 0, memory_order_release);
}

/* ---- the power: a cut after K more member writes (powercut-after K) ----
 * Every write that goes below a cache filter, whichever member, takes a
 * ticket: the first K go down and land; later ones never do (the power is
 * going); once the K-th has landed, cut() runs (it cuts every member's power). */
static struct {
	_Atomic int armed;
	_Atomic uint64_t issued, landed;
	uint64_t k;
	void (*cut)(void *arg);
	void *arg;
} power;

struct power_io {
	struct member_io io;
	struct member_io *orig;
};

static void power_landed(struct member_io *io)
{
	struct power_io *p = (struct power_io *)io;
	struct member_io *o = p->orig;
	o->res = io->res;
	free(p);
	int last = atomic_fetch_add(&power.landed, 1) + 1 == power.k;
	o->done(o);
	if (last)
		power.cut(power.arg);
}

void member_fault_powercut_after(uint64_t k, void (*cut)(void *arg), void *arg)
{
	power.k = k;
	power.cut = cut;
	power.arg = arg;
	atomic_store(&power.issued, 0);
	atomic_store(&power.landed, 0);
	atomic_store(&power.armed, 1);
	if (!k)
		cut(arg);
}

/* To the member below; a write counts against a power cut to come. */
static void cache_down(struct fcache *f, struct member_io *io)
{
	struct member *next = f->flt.next;
	if (io->op != MEMBER_WRITE || !atomic_load_explicit(&power.armed, memory_order_relaxed)) {
		next->ops->queue(next, io);
		return;
	}
	if (atomic_fetch_add(&power.issued, 1) >= power.k)
		return; /* after the K-th: it never lands, never completes */
	struct power_io *p = malloc(sizeof(*p));
	if (!p) {
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	p->io = *io;
	p->io.done = power_landed;
	p->orig = io;
	next->ops->queue(next, &p->io);
}

static void cache_wb_done(struct member_io *io);

/* Start the write-outs that are due: everything up to wb_target (flushes and
 * writes that wait for their own), then the oldest while over cache_size.
 * One thread pumps at a time; a completion meanwhile asks for another pass. */
static void cache_pump(struct fcache *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->pumping) {
		f->repump = 1;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	f->pumping = 1;
	do {
		struct { uint64_t off, len; } blk[FAULT_CACHE_BLOCKERS];
		unsigned nblk = 0;
		struct cache_ent *batch = NULL, **bt = &batch;
		f->repump = 0;
		for (struct cache_ent *e = f->chead; e && !filter_dead(&f->flt) && f->cwriting < FAULT_CACHE_INFLIGHT; e = e->next) {
			int blocked = 0;
			if (!e->writing) {
				if (e->seq > f->wb_target && f->cdirty <= f->size)
					break; /* newer ones are not due either */
				for (unsigned i = 0; i < nblk && !blocked; i++)
					blocked = overlaps(e->off, e->len, blk[i].off, blk[i].len);
			}
			/* newer overlapping entries wait for this one: in flight, held
			 * back, or going out now (two writes of one range in flight
			 * at once may land in either order) */
			if (nblk == FAULT_CACHE_BLOCKERS)
				break;
			blk[nblk].off = e->off;
			blk[nblk++].len = e->len;
			if (e->writing || blocked)
				continue;
			e->writing = 1;
			f->cdirty -= e->len;
			f->cwriting++;
			e->wiov = (struct iovec){ e->data, e->len };
			e->wio = (struct member_io){ .op = MEMBER_WRITE, .nowait = 1, .off = e->off, .len = e->len,
						     .iov = &e->wiov, .niov = 1, .done = cache_wb_done, .owner = e };
			*bt = e;
			bt = &e->bnext;
			*bt = NULL;
		}
		pthread_mutex_unlock(&f->lock);
		if (batch) {
			for (struct cache_ent *e = batch, *next; e; e = next) {
				next = e->bnext;
				cache_down(f, &e->wio);
			}
			f->flt.next->ops->commit(f->flt.next);
		}
		pthread_mutex_lock(&f->lock);
	} while (f->repump);
	f->pumping = 0;
	pthread_mutex_unlock(&f->lock);
}

/* A flush whose writes are all below: flush the member below (or report a
 * write-out's error). */
static void cache_flush_issue(struct fcache *f, struct member_io *io, int err, int commit)
{
	if (err) {
		io->res = err;
		io->done(io);
		return;
	}
	if (commit)
		io->nowait = 1; /* from a completion: must not block */
	f->flt.next->ops->queue(f->flt.next, io);
	if (commit)
		f->flt.next->ops->commit(f->flt.next);
}

static void cache_wb_done(struct member_io *io)
{
	struct cache_ent *e = io->owner;
	struct fcache *f = e->f;
	struct member_io *sync = NULL;
	struct cache_flush *ready = NULL, **rt = &ready;
	int res = io->res;
	pthread_mutex_lock(&f->lock);
	if (!--f->cwriting)
		pthread_cond_broadcast(&f->idle);
	if (filter_dead(&f->flt)) { /* the power is off: nothing is acknowledged any more */
		cache_unlink(f, e);
		pthread_mutex_unlock(&f->lock);
		return;
	}
	sync = e->sync_io;
	if (res < 0 && !f->cerr && !sync)
		f->cerr = res;
	cache_unlink(f, e); /* writing: cdirty was already taken off */
	while (f->fhead && (!f->chead || f->chead->seq > f->fhead->target)) {
		*rt = f->fhead;
		f->fhead = f->fhead->next;
		rt = &(*rt)->next;
		*rt = NULL;
	}
	if (!f->fhead)
		f->ftail = NULL;
	int err = ready ? f->cerr : 0;
	if (ready)
		f->cerr = 0;
	cache_settle(f);
	pthread_mutex_unlock(&f->lock);
	if (sync) {
		sync->res = res;
		sync->done(sync);
	}
	for (struct cache_flush *fl = ready, *next; fl; fl = next) {
		next = fl->next;
		cache_flush_issue(f, fl->io, err, 1);
		err = 0;
		free(fl);
	}
	cache_pump(f);
}

static void cache_rd_done(struct member_io *io)
{
	struct cache_rd *rd = (struct cache_rd *)io;
	struct fcache *f = rd->f;
	struct member_io *o = rd->orig;
	/* entries never change and a pinned one is never freed: no lock to copy */
	for (unsigned i = 0; i < rd->n && !io->res; i++) {
		struct cache_ent *e = rd->ent[i];
		uint64_t b = e->off > o->off ? e->off : o->off;
		uint64_t end = e->off + e->len < o->off + o->len ? e->off + e->len : o->off + o->len;
		cache_iov_copy(o->iov, o->niov, b - o->off, (uint8_t *)e->data + (b - e->off), end - b, 1);
	}
	pthread_mutex_lock(&f->lock);
	for (unsigned i = 0; i < rd->n; i++)
		if (!--rd->ent[i]->refs && !rd->ent[i]->linked)
			cache_ent_free(rd->ent[i]);
	pthread_mutex_unlock(&f->lock);
	o->res = io->res;
	free(rd);
	o->done(o);
}

/* Below the faults: through the cache when it is in use, else to the member. */
static void cache_queue(struct fcache *f, struct member_io *io)
{
	pthread_mutex_lock(&f->lock);
	if (filter_dead(&f->flt)) { /* the power is off: it never completes */
		pthread_mutex_unlock(&f->lock);
		return;
	}
	if (!cache_in_use(f)) {
		pthread_mutex_unlock(&f->lock);
		cache_down(f, io);
		return;
	}
	if (io->op == MEMBER_READ) {
		unsigned n = 0;
		for (struct cache_ent *e = f->chead; e; e = e->next)
			n += overlaps(io->off, io->len, e->off, e->len);
		struct cache_rd *rd = n ? malloc(sizeof(*rd) + n * sizeof(rd->ent[0])) : NULL;
		if (n && rd) {
			rd->n = 0;
			for (struct cache_ent *e = f->chead; e; e = e->next)
				if (overlaps(io->off, io->len, e->off, e->len)) {
					e->refs++;
					rd->ent[rd->n++] = e;
				}
		}
		pthread_mutex_unlock(&f->lock);
		if (!n) {
			f->flt.next->ops->queue(f->flt.next, io);
		} else if (!rd) {
			io->res = -ENOMEM;
			io->done(io);
		} else {
			rd->io = *io;
			rd->io.done = cache_rd_done;
			rd->orig = io;
			rd->f = f;
			f->flt.next->ops->queue(f->flt.next, &rd->io);
		}
		return;
	}
	if (io->op == MEMBER_FLUSH) {
		if (!f->chead) { /* everything is below already */
			int err = f->cerr;
			f->cerr = 0;
			cache_settle(f);
			pthread_mutex_unlock(&f->lock);
			cache_flush_issue(f, io, err, 0);
			return;
		}
		struct cache_flush *fl = malloc(sizeof(*fl));
		if (!fl) {
			pthread_mutex_unlock(&f->lock);
			io->res = -ENOMEM;
			io->done(io);
			return;
		}
		*fl = (struct cache_flush){ .io = io, .target = f->cseq };
		*(f->ftail ? &f->ftail->next : &f->fhead) = fl;
		f->ftail = fl;
		f->wb_target = f->cseq;
		pthread_mutex_unlock(&f->lock);
		cache_pump(f);
		return;
	}
	size_t align = f->flt.next->align > 4096 ? f->flt.next->align : 4096;
	struct cache_ent *e = calloc(1, sizeof(*e));
	if (!e || posix_memalign(&e->data, align, (io->len + align - 1) / align * align)) {
		pthread_mutex_unlock(&f->lock);
		free(e);
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	cache_iov_copy(io->iov, io->niov, 0, e->data, io->len, 0);
	e->f = f;
	e->off = io->off;
	e->len = io->len;
	e->seq = ++f->cseq;
	e->linked = 1;
	e->prev = f->ctail;
	*(f->ctail ? &f->ctail->next : &f->chead) = e;
	f->ctail = e;
	f->cbytes += e->len;
	f->cdirty += e->len;
	/* over cache_size the oldest go out (the pump); a write that finds twice
	 * that still held waits for its own write-out, as a full disk cache makes
	 * it; so does every write once the cache was cleared */
	int wait = !f->on || f->cbytes > 2 * f->size;
	if (wait) {
		e->sync_io = io;
		f->wb_target = e->seq;
	}
	int pump = wait || f->cdirty > f->size;
	pthread_mutex_unlock(&f->lock);
	if (!wait) {
		io->res = 0;
		io->done(io);
	}
	if (pump)
		cache_pump(f);
}

static void fcache_queue(struct member *m, struct member_io *io)
{
	struct fcache *f = m->priv;
	if (!atomic_load_explicit(&f->active, memory_order_acquire)) {
		cache_down(f, io);
		return;
	}
	cache_queue(f, io);
}

static int fcache_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	(void)m, (void)direct;
	snprintf(err, errlen, "%s: a cache wraps a member (fsvol mount --fault N=cache=volatile)", name);
	return -EINVAL;
}

static void fcache_close(struct member *m)
{
	struct fcache *f = m->priv;
	if (!f)
		return;
	/* a clean shutdown writes the cache out, as a disk does on a flush at
	 * power-off; after a power cut what is left is dropped */
	pthread_mutex_lock(&f->lock);
	while (f->cwriting)
		pthread_cond_wait(&f->idle, &f->lock);
	pthread_mutex_unlock(&f->lock);
	for (struct cache_ent *e = f->chead, *next; e; e = next) {
		next = e->next;
		if (!filter_dead(&f->flt))
			member_pwrite(f->flt.next, e->data, e->len, e->off);
		free(e->data);
		free(e);
	}
	for (struct cache_flush *fl = f->fhead, *next; fl; fl = next) {
		next = fl->next;
		free(fl);
	}
	if (f->chead && !filter_dead(&f->flt))
		member_flush(f->flt.next);
	f->chead = NULL;
	filter_close_next(&f->flt);
	pthread_cond_destroy(&f->idle);
	pthread_mutex_destroy(&f->lock);
	free(f);
	m->priv = NULL;
}

const struct member_ops filter_cache_ops = {
	.name = "cache",
	.filter = 1,
	.open = fcache_open,
	.close = fcache_close,
	.queue = fcache_queue,
	.commit = filter_commit,
	.zero = filter_zero,
	.grow = filter_grow,
	.alloc = filter_alloc,
	.lock = filter_lock,
};

int filter_cache_push(struct member *m, const struct member *top)
{
	struct fcache *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->idle, NULL);
	int r = filter_push(m, &filter_cache_ops, &f->flt, top);
	if (r) {
		pthread_cond_destroy(&f->idle);
		pthread_mutex_destroy(&f->lock);
		free(f);
	}
	return r;
}

void filter_cache_set(struct member *m, const struct fault_spec *s)
{
	struct fcache *f = m->priv;
	pthread_mutex_lock(&f->lock);
	f->on = s->cache;
	f->size = s->cache_size;
	if (cache_in_use(f))
		atomic_store_explicit(&f->active, 1, memory_order_release);
	else
		cache_settle(f);
	pthread_mutex_unlock(&f->lock);
	/* cleared with writes still cached: they go out now */
	cache_pump(f);
}

void filter_cache_get(struct member *m, struct fault_spec *s)
{
	struct fcache *f = m->priv;
	pthread_mutex_lock(&f->lock);
	s->cache = f->on;
	s->cache_size = f->size;
	pthread_mutex_unlock(&f->lock);
}

void filter_cache_powercut(struct member *m)
{
	struct fcache *f = m->priv;
	pthread_mutex_lock(&f->lock);
	atomic_store_explicit(&f->flt.dead, 1, memory_order_relaxed);
	atomic_store_explicit(&f->active, 1, memory_order_release);
	/* what was not on its way to the member below is lost; writes and
	 * flushes waiting for it never complete */
	for (struct cache_ent *e = f->chead, *next; e; e = next) {
		next = e->next;
		if (!e->writing)
			cache_unlink(f, e);
	}
	for (struct cache_flush *fl = f->fhead, *next; fl; fl = next) {
		next = fl->next;
		free(fl);
	}
	f->fhead = f->ftail = NULL;
	pthread_mutex_unlock(&f->lock);
}

