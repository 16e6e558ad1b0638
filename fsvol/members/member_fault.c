/* member_fault: fault injection as a wrapping backend, after nbdkit's error and
 * delay filters, dm-flakey, dm-dust and gnop. Spec (docs/faults.md):
 *
 *   none | KEY=VALUE[,KEY=VALUE...]
 *   error=read|write|all   which I/Os fail (flushes count as writes)
 *   rate=P                 ... with probability P (0..1, default 1)
 *   after=N                ... after the first N of them succeeded
 *   errno=eio|enospc|edquot|enodev   the error returned (default eio)
 *   bad=OFF+LEN            reads touching it fail until a write covers it (dm-dust);
 *                          OFF is in the member's data area, as `fsvol map` prints
 *   flaky=UP/DOWN          up for UP, then every I/O fails for DOWN, repeating
 *                          (dm-flakey); times (5ms, 2s) or I/O counts (100io)
 *   delay=T, rdelay=T, wdelay=T   completions arrive T later (5ms, 200us)
 *   corrupt=P              a read returns one flipped byte with probability P
 *   seed=N                 the random sequence for rate and corrupt
 *   cache=volatile|none    a volatile write-back cache, as a disk's: writes are
 *                          acknowledged from memory and reach the member below
 *                          only on a flush or as the cache fills
 *   cache_size=SIZE        over this the oldest writes go out (default 8M); a
 *                          write that finds twice that held waits for its own
 *
 * With no spec the wrapper costs one atomic load per I/O. A failed I/O never
 * reaches the member below, as with a dead disk. member_fault_powercut drops
 * what the cache holds and completes nothing any more (the power is off).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <time.h>

#include "fsvol/members/member.h"
#include "fsvol/util/size.h"
#include "stats/stats.h"

#define FAULT_MAX_BAD 16

enum { FAULT_READ = 1, FAULT_WRITE = 2 };

struct fault_spec {
	int error_ops;             /* FAULT_READ | FAULT_WRITE, 0: none */
	double rate;
	uint64_t after;
	int err;                   /* positive errno */
	unsigned nbad;
	struct { uint64_t off, len; } bad[FAULT_MAX_BAD];
	uint64_t up, down;         /* flaky periods, 0: not flaky */
	int flaky_io;              /* periods counted in I/Os, not ns */
	uint64_t rdelay_ns, wdelay_ns;
	double corrupt;
	uint64_t seed;
	int cache;                 /* 1: volatile write-back cache */
	uint64_t cache_size;
};

#define FAULT_CACHE_DEFAULT (8ull << 20)
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
	struct fault_state *f;
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
	struct fault_state *f;
	unsigned n;
	struct cache_ent *ent[];   /* oldest first */
};

struct fault_state {
	struct member inner;       /* the wrapped backend's member */
	atomic_int active;         /* a spec is set */
	pthread_mutex_t lock;      /* the spec and the counters below */
	struct fault_spec s;
	uint64_t nerr_ops;         /* I/Os of the failing kind seen */
	uint64_t nio;              /* every I/O seen (flaky in I/Os) */
	uint64_t t0;               /* flaky periods start here */
	uint64_t rng;
	/* the volatile cache (under lock) */
	struct cache_ent *chead, *ctail;
	uint64_t cseq;             /* of the newest entry */
	uint64_t cbytes, cdirty;   /* all entries; those not being written out */
	uint64_t wb_target;        /* entries up to this seq must be written out */
	unsigned cwriting;
	struct cache_flush *fhead, *ftail;
	int cerr;                  /* a write-out's error, for the next flush */
	int pumping, repump;
	int dead;                  /* power cut: nothing completes any more */
	pthread_cond_t idle;       /* cwriting fell to 0 */
};

/* A completion held back for a delay or to corrupt what was read. */
struct fault_io {
	struct member_io io;       /* what the member below sees */
	struct member_io *orig;
	struct fault_state *f;
	uint64_t due;              /* release at (ns, stats_now clock) */
	int corrupt;
	struct fault_io *next;
};

/* ---- parsing ---- */

static int fault_time(const char *v, uint64_t *ns, int *is_io)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || x < 0)
		return -1;
	if (is_io && !strcmp(end, "io")) {
		*is_io = 1;
		*ns = (uint64_t)x;
		return x == (double)(uint64_t)x ? 0 : -1;
	}
	double mul = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6
		   : !strcmp(end, "s") ? 1e9 : -1;
	if (mul < 0 || x * mul > 3.6e12)
		return -1;
	*ns = (uint64_t)(x * mul);
	return 0;
}

static int fault_prob(const char *v, double *p)
{
	char *end;
	*p = strtod(v, &end);
	return end == v || *end || !(*p >= 0 && *p <= 1) ? -1 : 0;
}

static int fault_parse(const char *spec, struct fault_spec *s, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;
	memset(s, 0, sizeof(*s));
	s->rate = 1;
	s->err = EIO;
	s->seed = 1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "fault spec too long");
		return -EINVAL;
	}
	if (!strcmp(spec, "none") || !strcmp(spec, "off"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	int have_rate = 0;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v || !v[1]) {
			snprintf(err, errlen, "fault '%s': expected KEY=VALUE", kv);
			return -EINVAL;
		}
		*v++ = 0;
		int bad = 0;
		if (!strcmp(kv, "error")) {
			s->error_ops = !strcmp(v, "read") ? FAULT_READ : !strcmp(v, "write") ? FAULT_WRITE
				       : !strcmp(v, "all") ? FAULT_READ | FAULT_WRITE : 0;
			bad = !s->error_ops;
		} else if (!strcmp(kv, "rate")) {
			bad = fault_prob(v, &s->rate);
			have_rate = 1;
		} else if (!strcmp(kv, "after")) {
			char *end;
			s->after = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else if (!strcmp(kv, "errno")) {
			s->err = !strcasecmp(v, "eio") ? EIO : !strcasecmp(v, "enospc") ? ENOSPC
				 : !strcasecmp(v, "edquot") ? EDQUOT : !strcasecmp(v, "enodev") ? ENODEV : 0;
			bad = !s->err;
		} else if (!strcmp(kv, "bad")) {
			char *plus = strchr(v, '+');
			if (s->nbad == FAULT_MAX_BAD) {
				snprintf(err, errlen, "fault bad=%s: at most %d bad ranges", v, FAULT_MAX_BAD);
				return -EINVAL;
			}
			if (plus)
				*plus = 0;
			bad = !plus || size_parse(v, &s->bad[s->nbad].off) || size_parse(plus + 1, &s->bad[s->nbad].len) ||
			      !s->bad[s->nbad].len;
			if (plus)
				*plus = '+';
			s->nbad++;
		} else if (!strcmp(kv, "flaky")) {
			char *slash = strchr(v, '/');
			int io_up = 0, io_down = 0;
			if (slash)
				*slash = 0;
			bad = !slash || fault_time(v, &s->up, &io_up) || fault_time(slash + 1, &s->down, &io_down) ||
			      io_up != io_down || !s->up || !s->down;
			if (slash)
				*slash = '/';
			s->flaky_io = io_up;
		} else if (!strcmp(kv, "delay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
			s->wdelay_ns = s->rdelay_ns;
		} else if (!strcmp(kv, "rdelay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
		} else if (!strcmp(kv, "wdelay")) {
			bad = fault_time(v, &s->wdelay_ns, NULL);
		} else if (!strcmp(kv, "corrupt")) {
			bad = fault_prob(v, &s->corrupt);
		} else if (!strcmp(kv, "cache")) {
			s->cache = !strcmp(v, "volatile") ? 1 : !strcmp(v, "none") ? 0 : -1;
			bad = s->cache < 0;
		} else if (!strcmp(kv, "cache_size")) {
			bad = size_parse(v, &s->cache_size) || !s->cache_size;
		} else if (!strcmp(kv, "seed")) {
			char *end;
			s->seed = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else {
			snprintf(err, errlen, "fault: unknown key '%s' (error, rate, after, errno, bad, flaky, "
				 "delay, rdelay, wdelay, corrupt, seed, cache, cache_size)", kv);
			return -EINVAL;
		}
		if (bad) {
			snprintf(err, errlen, "fault %s=%s: bad value", kv, v);
			return -EINVAL;
		}
	}
	if ((have_rate || s->after) && !s->error_ops) {
		snprintf(err, errlen, "fault: rate and after need error=read|write|all");
		return -EINVAL;
	}
	if (s->cache_size && !s->cache) {
		snprintf(err, errlen, "fault: cache_size needs cache=volatile");
		return -EINVAL;
	}
	if (s->cache && !s->cache_size)
		s->cache_size = FAULT_CACHE_DEFAULT;
	return 0;
}

static int fault_spec_empty(const struct fault_spec *s)
{
	return !s->error_ops && !s->nbad && !s->up && !s->rdelay_ns && !s->wdelay_ns && !s->corrupt && !s->cache;
}

/* ---- the delay line: one thread releases held completions in time order ---- */

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fault_io *list; /* sorted by due */
	int ok;
} fault_line = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

static void fault_finish(struct fault_io *fi);

static void *fault_line_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-fault"); /* top -H, ps -L */
	(void)arg;
	pthread_mutex_lock(&fault_line.lock);
	for (;;) {
		struct fault_io *fi = fault_line.list;
		if (!fi) {
			pthread_cond_wait(&fault_line.cond, &fault_line.lock);
			continue;
		}
		uint64_t now = stats_now();
		if (fi->due > now) {
			/* stats_now is CLOCK_MONOTONIC: so is the condition's clock */
			struct timespec ts = { (time_t)(fi->due / 1000000000u), (long)(fi->due % 1000000000u) };
			pthread_cond_timedwait(&fault_line.cond, &fault_line.lock, &ts);
			continue;
		}
		fault_line.list = fi->next;
		pthread_mutex_unlock(&fault_line.lock);
		fault_finish(fi);
		pthread_mutex_lock(&fault_line.lock);
	}
	return NULL;
}

static void fault_line_init(void)
{
	pthread_condattr_t ca;
	pthread_t t;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fault_line.cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, fault_line_main, NULL) == 0) {
		pthread_detach(t);
		fault_line.ok = 1;
	}
}

static void fault_line_add(struct fault_io *fi)
{
	pthread_once(&fault_line.once, fault_line_init);
	if (!fault_line.ok) {
		fault_finish(fi); /* no thread: no delay rather than no completion */
		return;
	}
	pthread_mutex_lock(&fault_line.lock);
	struct fault_io **p = &fault_line.list;
	while (*p && (*p)->due <= fi->due)
		p = &(*p)->next;
	fi->next = *p;
	*p = fi;
	if (fault_line.list == fi)
		pthread_cond_signal(&fault_line.cond);
	pthread_mutex_unlock(&fault_line.lock);
}

/* ---- I/O ---- */

static uint64_t fault_rand(struct fault_state *f)
{
	/* splitmix64: reproducible from seed= */
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int fault_chance(struct fault_state *f, double p)
{
	return p >= 1 || (p > 0 && (double)(fault_rand(f) >> 11) * 0x1.0p-53 < p);
}

static int fault_overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* A write heals what it covers of each bad range (dm-dust). */
static void fault_heal(struct fault_spec *s, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < s->nbad;) {
		uint64_t b = s->bad[i].off, e = b + s->bad[i].len;
		if (!fault_overlaps(off, len, b, e - b)) {
			i++;
			continue;
		}
		if (off <= b && off + len >= e) { /* covered: gone */
			s->bad[i] = s->bad[--s->nbad];
			continue;
		}
		if (off > b && off + len < e && s->nbad < FAULT_MAX_BAD) { /* a hole in the middle */
			s->bad[s->nbad].off = off + len;
			s->bad[s->nbad++].len = e - (off + len);
			s->bad[i].len = off - b;
		} else if (off <= b) {
			s->bad[i].off = off + len;
			s->bad[i].len = e - (off + len);
		} else {
			s->bad[i].len = off - b;
		}
		i++;
	}
}

/* Decide under the lock: 0 to pass, else the positive errno to fail with. */
static int fault_decide(struct fault_state *f, struct member *m, const struct member_io *io, int *corrupt,
			uint64_t *delay)
{
	struct fault_spec *s = &f->s;
	int kind = io->op == MEMBER_READ ? FAULT_READ : FAULT_WRITE;
	/* bad ranges live in the data area: superblock I/O never meets them */
	int in_data = io->op != MEMBER_FLUSH && io->off >= m->data_offset;
	uint64_t doff = in_data ? io->off - m->data_offset : 0;
	int e = 0;
	f->nio++;
	/* superblock I/O is never delayed: a member failure rewrites superblocks
	 * from whichever thread saw it, possibly this wrapper's own */
	*delay = !in_data ? 0 : kind == FAULT_READ ? s->rdelay_ns : s->wdelay_ns;
	*corrupt = 0;
	if (s->up) {
		uint64_t t = s->flaky_io ? f->nio - 1 : stats_now() - f->t0;
		if (t % (s->up + s->down) >= s->up)
			e = s->err;
	}
	if (!e && (s->error_ops & kind) && f->nerr_ops++ >= s->after && fault_chance(f, s->rate))
		e = s->err;
	if (!e && in_data && s->nbad) {
		if (kind == FAULT_WRITE) {
			fault_heal(s, doff, io->len);
		} else {
			for (unsigned i = 0; i < s->nbad && !e; i++)
				if (fault_overlaps(doff, io->len, s->bad[i].off, s->bad[i].len))
					e = EIO;
		}
	}
	if (!e && kind == FAULT_READ && io->op == MEMBER_READ && fault_chance(f, s->corrupt))
		*corrupt = 1;
	return e;
}

static void fault_finish(struct fault_io *fi)
{
	struct member_io *o = fi->orig;
	o->res = fi->io.res;
	if (fi->corrupt && !o->res && o->len) {
		/* flip one byte somewhere in what was read */
		pthread_mutex_lock(&fi->f->lock);
		uint64_t at = fault_rand(fi->f) % o->len;
		pthread_mutex_unlock(&fi->f->lock);
		for (unsigned i = 0; i < o->niov; i++) {
			if (at < o->iov[i].iov_len) {
				((uint8_t *)o->iov[i].iov_base)[at] ^= 0xff;
				break;
			}
			at -= o->iov[i].iov_len;
		}
	}
	free(fi);
	o->done(o);
}

/* ---- the volatile write-back cache (cache=volatile) ---- */

/* In use while set, and after it was cleared until what it holds is written out. */
static int cache_in_use(const struct fault_state *f)
{
	return f->s.cache || f->chead || f->fhead;
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
static void cache_unlink(struct fault_state *f, struct cache_ent *e)
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
static void cache_settle(struct fault_state *f)
{
	if (!f->dead && !cache_in_use(f) && fault_spec_empty(&f->s))
		atomic_store_explicit(&f->active, 0, memory_order_release);
}

static void cache_wb_done(struct member_io *io);

/* Start the write-outs that are due: everything up to wb_target (flushes and
 * writes that wait for their own), then the oldest while over cache_size.
 * One thread pumps at a time; a completion meanwhile asks for another pass. */
static void cache_pump(struct fault_state *f)
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
		for (struct cache_ent *e = f->chead; e && !f->dead && f->cwriting < FAULT_CACHE_INFLIGHT; e = e->next) {
			int blocked = 0;
			if (!e->writing) {
				if (e->seq > f->wb_target && f->cdirty <= f->s.cache_size)
					break; /* newer ones are not due either */
				for (unsigned i = 0; i < nblk && !blocked; i++)
					blocked = fault_overlaps(e->off, e->len, blk[i].off, blk[i].len);
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
				f->inner.ops->queue(&f->inner, &e->wio);
			}
			f->inner.ops->commit(&f->inner);
		}
		pthread_mutex_lock(&f->lock);
	} while (f->repump);
	f->pumping = 0;
	pthread_mutex_unlock(&f->lock);
}

/* A flush whose writes are all below: flush the member below (or report a
 * write-out's error). */
static void cache_flush_issue(struct fault_state *f, struct member_io *io, int err, int commit)
{
	if (err) {
		io->res = err;
		io->done(io);
		return;
	}
	if (commit)
		io->nowait = 1; /* from a completion: must not block */
	f->inner.ops->queue(&f->inner, io);
	if (commit)
		f->inner.ops->commit(&f->inner);
}

static void cache_wb_done(struct member_io *io)
{
	struct cache_ent *e = io->owner;
	struct fault_state *f = e->f;
	struct member_io *sync = NULL;
	struct cache_flush *ready = NULL, **rt = &ready;
	int res = io->res;
	pthread_mutex_lock(&f->lock);
	if (!--f->cwriting)
		pthread_cond_broadcast(&f->idle);
	if (f->dead) { /* the power is off: nothing is acknowledged any more */
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
	struct fault_state *f = rd->f;
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
static void cache_queue(struct fault_state *f, struct member_io *io)
{
	pthread_mutex_lock(&f->lock);
	if (f->dead) { /* the power is off: it never completes */
		pthread_mutex_unlock(&f->lock);
		return;
	}
	if (!cache_in_use(f)) {
		pthread_mutex_unlock(&f->lock);
		f->inner.ops->queue(&f->inner, io);
		return;
	}
	if (io->op == MEMBER_READ) {
		unsigned n = 0;
		for (struct cache_ent *e = f->chead; e; e = e->next)
			n += fault_overlaps(io->off, io->len, e->off, e->len);
		struct cache_rd *rd = n ? malloc(sizeof(*rd) + n * sizeof(rd->ent[0])) : NULL;
		if (n && rd) {
			rd->n = 0;
			for (struct cache_ent *e = f->chead; e; e = e->next)
				if (fault_overlaps(io->off, io->len, e->off, e->len)) {
					e->refs++;
					rd->ent[rd->n++] = e;
				}
		}
		pthread_mutex_unlock(&f->lock);
		if (!n) {
			f->inner.ops->queue(&f->inner, io);
		} else if (!rd) {
			io->res = -ENOMEM;
			io->done(io);
		} else {
			rd->io = *io;
			rd->io.done = cache_rd_done;
			rd->orig = io;
			rd->f = f;
			f->inner.ops->queue(&f->inner, &rd->io);
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
	size_t align = f->inner.align > 4096 ? f->inner.align : 4096;
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
	int wait = !f->s.cache || f->cbytes > 2 * f->s.cache_size;
	if (wait) {
		e->sync_io = io;
		f->wb_target = e->seq;
	}
	int pump = wait || f->cdirty > f->s.cache_size;
	pthread_mutex_unlock(&f->lock);
	if (!wait) {
		io->res = 0;
		io->done(io);
	}
	if (pump)
		cache_pump(f);
}

static void fault_inner_done(struct member_io *io)
{
	struct fault_io *fi = (struct fault_io *)io;
	if (fi->due > stats_now())
		fault_line_add(fi);
	else
		fault_finish(fi);
}

static void fault_queue(struct member *m, struct member_io *io)
{
	struct fault_state *f = m->priv;
	if (!atomic_load_explicit(&f->active, memory_order_acquire)) {
		f->inner.ops->queue(&f->inner, io);
		return;
	}
	int corrupt;
	uint64_t delay;
	pthread_mutex_lock(&f->lock);
	if (f->dead) { /* the power is off: it never completes */
		pthread_mutex_unlock(&f->lock);
		return;
	}
	int e = fault_decide(f, m, io, &corrupt, &delay);
	pthread_mutex_unlock(&f->lock);
	if (!corrupt && !delay) {
		if (e) {
			io->res = -e;
			io->done(io);
		} else {
			cache_queue(f, io);
		}
		return;
	}
	struct fault_io *fi = calloc(1, sizeof(*fi));
	if (!fi) {
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	fi->io = *io;
	fi->io.done = fault_inner_done;
	fi->orig = io;
	fi->f = f;
	fi->corrupt = corrupt;
	fi->due = stats_now() + delay;
	if (e) {
		fi->io.res = -e;
		fault_inner_done(&fi->io);
	} else {
		cache_queue(f, &fi->io);
	}
}

static void fault_commit(struct member *m)
{
	struct fault_state *f = m->priv;
	f->inner.ops->commit(&f->inner);
}

/* ---- the rest passes through ---- */

static int fault_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	(void)m, (void)name, (void)direct;
	snprintf(err, errlen, "%s: faults wrap a member (fsvol mount --fault N=SPEC)", name);
	return -EINVAL;
}

static void fault_close(struct member *m)
{
	struct fault_state *f = m->priv;
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
		if (!f->dead)
			member_pwrite(&f->inner, e->data, e->len, e->off);
		free(e->data);
		free(e);
	}
	for (struct cache_flush *fl = f->fhead, *next; fl; fl = next) {
		next = fl->next;
		free(fl);
	}
	if (f->chead && !f->dead)
		member_flush(&f->inner);
	f->chead = NULL;
	member_close(&f->inner);
	pthread_cond_destroy(&f->idle);
	pthread_mutex_destroy(&f->lock);
	free(f);
	m->priv = NULL;
}

static int fault_zero(struct member *m, uint64_t off, uint64_t len)
{
	struct fault_state *f = m->priv;
	return f->inner.ops->zero(&f->inner, off, len);
}

static int fault_lock(struct member *m)
{
	struct fault_state *f = m->priv;
	return member_lock(&f->inner);
}

static int fault_grow(struct member *m, uint64_t size)
{
	struct fault_state *f = m->priv;
	int r = f->inner.ops->grow ? f->inner.ops->grow(&f->inner, size) : -ENOTSUP;
	if (!r)
		m->size = size;
	return r;
}

const struct member_ops member_fault_ops = {
	.name = "fault",
	.prefix = NULL,
	.open = fault_open,
	.close = fault_close,
	.queue = fault_queue,
	.commit = fault_commit,
	.zero = fault_zero,
	.grow = fault_grow,
	.lock = fault_lock,
};

int member_fault_wrap(struct member *m)
{
	if (m->ops == &member_fault_ops)
		return 0;
	struct fault_state *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->inner = *m;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->idle, NULL);
	m->ops = &member_fault_ops;
	m->priv = f;
	return 0;
}

int member_fault_set(struct member *m, const char *spec, char *err, size_t errlen)
{
	struct fault_spec s;
	if (m->ops != &member_fault_ops) {
		snprintf(err, errlen, "%s: faults can only be set on a mounted volume's members", m->path);
		return -EINVAL;
	}
	int r = fault_parse(spec, &s, err, errlen);
	if (r)
		return r;
	struct fault_state *f = m->priv;
	pthread_mutex_lock(&f->lock);
	f->s = s;
	f->nerr_ops = f->nio = 0;
	f->t0 = stats_now();
	f->rng = s.seed;
	atomic_store_explicit(&f->active, !fault_spec_empty(&s) || cache_in_use(f) || f->dead, memory_order_release);
	pthread_mutex_unlock(&f->lock);
	/* cleared with writes still cached: they go out now */
	cache_pump(f);
	return 0;
}

void member_fault_powercut(struct member *m)
{
	if (m->ops != &member_fault_ops)
		return;
	struct fault_state *f = m->priv;
	pthread_mutex_lock(&f->lock);
	f->dead = 1;
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

void member_fault_describe(struct member *m, char *buf, size_t len)
{
	if (m->ops != &member_fault_ops) {
		snprintf(buf, len, "none");
		return;
	}
	struct fault_state *f = m->priv;
	static const char *const ops[] = { "", "read", "write", "all" };
	size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__)
	pthread_mutex_lock(&f->lock);
	const struct fault_spec *s = &f->s;
	buf[0] = 0;
	if (s->error_ops)
		PUT(",error=%s,rate=%g,after=%llu", ops[s->error_ops], s->rate, (unsigned long long)s->after);
	if (s->error_ops || s->up)
		PUT(",errno=%s", s->err == ENOSPC ? "enospc" : s->err == EDQUOT ? "edquot" : s->err == ENODEV ? "enodev" : "eio");
	for (unsigned i = 0; i < s->nbad; i++)
		PUT(",bad=%llu+%llu", (unsigned long long)s->bad[i].off, (unsigned long long)s->bad[i].len);
	if (s->up && s->flaky_io)
		PUT(",flaky=%lluio/%lluio", (unsigned long long)s->up, (unsigned long long)s->down);
	else if (s->up)
		PUT(",flaky=%lluus/%lluus", (unsigned long long)(s->up / 1000), (unsigned long long)(s->down / 1000));
	if (s->rdelay_ns)
		PUT(",rdelay=%lluus", (unsigned long long)(s->rdelay_ns / 1000));
	if (s->wdelay_ns)
		PUT(",wdelay=%lluus", (unsigned long long)(s->wdelay_ns / 1000));
	if (s->corrupt)
		PUT(",corrupt=%g", s->corrupt);
	if (s->error_ops || s->corrupt)
		PUT(",seed=%llu", (unsigned long long)s->seed);
	if (s->cache) {
		char sz[32];
		size_format(s->cache_size, sz, sizeof(sz));
		PUT(",cache=volatile,cache_size=%s", sz);
	}
	if (f->dead)
		PUT(",powercut");
	pthread_mutex_unlock(&f->lock);
#undef PUT
	if (!buf[0])
		snprintf(buf, len, "none");
	else
		memmove(buf, buf + 1, strlen(buf)); /* drop the leading comma */
}
