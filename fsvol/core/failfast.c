/* failfast: md's failfast with a deadline (see failfast.h).
 *
 * Each I/O to a failfast member goes out as a shadow of its own (nbdkit's
 * filter shape: the member below sees the shadow's member_io, with a buffer of
 * the shadow's), kept on a list in deadline order of issue. One watchdog
 * thread per volume sleeps until the earliest deadline; an I/O still out then
 * is settled by whoever comes first, its completion or the watchdog, by one
 * compare-and-swap on the shadow's state:
 *   ISSUED -> DONE      the completion: data copied back, the caller's done;
 *   ISSUED -> TIMEDOUT  the watchdog: the member fails (vol_fail_slot), the
 *                       caller's done runs with -ETIMEDOUT and the engine
 *                       replans on the other copies; the late completion
 *                       only frees the shadow.
 * The watchdog moves a timed-out shadow to a list of the process's (it
 * belongs to the member below until that answers: a backend closed with it
 * in flight may never answer, libnbd's nbd_close only frees its callbacks)
 * and marks it so: a late completion waits for that mark, then takes it off
 * that list and frees it, never touching the volume (which may be closing).
 *
 * Lock order: ff->lock alone; nothing is called with it held.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/failfast.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

enum { FF_ISSUED, FF_DONE, FF_TIMEDOUT };
#define FF_BATCH 64 /* timed-out I/Os settled per round */

struct ff_io {
	struct member_io io;     /* what the member below sees */
	struct member_io *orig;
	struct vol_ff *ff;
	struct ff_io *prev, *next;
	uint64_t deadline, t0;   /* stats_now() ns */
	unsigned slot;
	atomic_int state;
	atomic_int unlinked;     /* TIMEDOUT: the watchdog is done with it */
	void *buf;
	size_t cap;
	struct iovec iov;
};

struct vol_ff {
	struct vol *v;
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* CLOCK_MONOTONIC, as stats_now */
	pthread_t thread;
	atomic_int running;
	int stop;
	struct ff_io *head, *tail; /* in issue order */
	atomic_ulong timeouts;
};

/* Timed-out shadows whose member has not answered yet. */
static struct {
	pthread_mutex_t lock;
	struct ff_io *head;
} ff_late = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void ff_unlink(struct vol_ff *ff, struct ff_io *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		ff->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		ff->tail = s->prev;
	s->prev = s->next = NULL;
}

static void ff_free(struct ff_io *s)
{
	if (s->buf)
		bufpool_put(s->buf, s->cap);
	free(s);
}

static void ff_done(struct member_io *io)
{
	struct ff_io *s = (struct ff_io *)io;
	int issued = FF_ISSUED;
	if (!atomic_compare_exchange_strong(&s->state, &issued, FF_DONE)) {
		/* late: the watchdog answered for it already */
		while (!atomic_load(&s->unlinked))
			sched_yield();
		pthread_mutex_lock(&ff_late.lock);
		if (s->prev)
			s->prev->next = s->next;
		else
			ff_late.head = s->next;
		if (s->next)
			s->next->prev = s->prev;
		pthread_mutex_unlock(&ff_late.lock);
		ff_free(s);
		return;
	}
	struct vol_ff *ff = s->ff;
	struct member_io *o = s->orig;
	pthread_mutex_lock(&ff->lock);
	ff_unlink(ff, s);
	pthread_mutex_unlock(&ff->lock);
	if (o->op == MEMBER_READ && io->res >= 0) {
		const uint8_t *p = s->buf;
		for (unsigned k = 0; k < o->niov; k++) {
			memcpy(o->iov[k].iov_base, p, o->iov[k].iov_len);
			p += o->iov[k].iov_len;
		}
	}
	o->res = io->res;
	ff_free(s);
	o->done(o);
}

void ff_queue(struct vol *v, struct member *m, unsigned slot, struct member_io *o)
{
	struct vol_ff *ff = v->ff;
	struct ff_io *s = calloc(1, sizeof(*s));
	if (s && o->op != MEMBER_FLUSH && !(s->buf = bufpool_get(o->len, &s->cap))) {
		free(s);
		s = NULL;
	}
	if (!s) { /* no memory: it goes out without a deadline */
		m->ops->queue(m, o);
		return;
	}
	s->io = (struct member_io){ .op = o->op, .nowait = o->nowait, .off = o->off, .len = o->len, .done = ff_done };
	if (s->buf) {
		s->iov = (struct iovec){ s->buf, o->len };
		s->io.iov = &s->iov;
		s->io.niov = 1;
		if (o->op == MEMBER_WRITE) {
			uint8_t *p = s->buf;
			for (unsigned k = 0; k < o->niov; k++) {
				memcpy(p, o->iov[k].iov_base, o->iov[k].iov_len);
				p += o->iov[k].iov_len;
			}
		}
	}
	s->orig = o;
	s->ff = ff;
	s->slot = slot;
	s->t0 = stats_now();
	s->deadline = s->t0 + (uint64_t)vol_failfast_ms(v) * 1000000u;
	atomic_init(&s->state, FF_ISSUED);
	pthread_mutex_lock(&ff->lock);
	s->prev = ff->tail;
	if (ff->tail)
		ff->tail->next = s;
	else
		ff->head = s;
	ff->tail = s;
	int first = ff->head == s;
	pthread_mutex_unlock(&ff->lock);
	if (first)
		pthread_cond_signal(&ff->cond); /* the watchdog may sleep without a deadline */
	m->ops->queue(m, &s->io);
}

/* One watchdog round, lock held: take the overdue I/Os the volume can lose
 * their members for, and with them every later I/O of those members,
 * deadline or not (at most FF_BATCH, in out[]): the
 * member goes, and an I/O of it left waiting would hold whoever waits on it
 * (the metadata thread, which failing the member waits for) for the whole
 * stall while this thread is busy failing it. *next: the earliest deadline
 * left. */
static unsigned ff_collect(struct vol_ff *ff, uint64_t now, struct ff_io **out, uint64_t *next)
{
	struct vol *v = ff->v;
	uint64_t failed = atomic_load(&v->failed), failing = 0; /* failing: the members this round fails */
	unsigned n = 0;
	*next = UINT64_MAX;
	for (struct ff_io *s = ff->head, *nx; s; s = nx) {
		nx = s->next;
		uint64_t bit = s->slot < 64 ? 1ull << s->slot : 0;
		if ((s->deadline > now && !(failing & bit)) || n == FF_BATCH) {
			if (s->deadline < *next)
				*next = s->deadline;
			continue;
		}
		if (s->slot < v->geom.members && !(failed & bit) && !layout_survives(&v->geom, failed | bit)) {
			/* the last copy of something: md never fails it this way; wait on */
			s->deadline = now + (uint64_t)vol_failfast_ms(v) * 1000000u;
			if (s->deadline < *next)
				*next = s->deadline;
			continue;
		}
		int issued = FF_ISSUED;
		if (!atomic_compare_exchange_strong(&s->state, &issued, FF_TIMEDOUT))
			continue; /* completing right now */
		failed |= bit;
		failing |= bit;
		ff_unlink(ff, s);
		out[n++] = s;
	}
	return n;
}

static void ff_wait_until(struct vol_ff *ff, uint64_t deadline)
{
	if (deadline == UINT64_MAX) {
		pthread_cond_wait(&ff->cond, &ff->lock);
		return;
	}
	struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };
	pthread_cond_timedwait(&ff->cond, &ff->lock, &ts);
}

static void *ff_main(void *arg)
{
	struct vol_ff *ff = arg;
	struct ff_io *out[FF_BATCH];
	pthread_setname_np(pthread_self(), "fsvol-failfast"); /* top -H, ps -L */
	pthread_mutex_lock(&ff->lock);
	while (!ff->stop) {
		uint64_t next, now = stats_now();
		unsigned n = ff_collect(ff, now, out, &next);
		if (!n) {
			ff_wait_until(ff, next);
			continue;
		}
		pthread_mutex_unlock(&ff->lock);
		/* every I/O taken completes before any member is failed:
		 * vol_fail_slot waits for the metadata thread, which may itself
		 * wait on one of the others taken in this round */
		unsigned slots[FF_BATCH];
		for (unsigned k = 0; k < n; k++) {
			struct ff_io *s = out[k];
			struct member_io *o = s->orig;
			unsigned slot = slots[k] = s->slot;
			uint64_t took = (now - s->t0) / 1000000u;
			int overdue = s->deadline <= now; /* not one only taken with its member */
			pthread_mutex_lock(&ff_late.lock);
			s->prev = NULL;
			s->next = ff_late.head;
			if (ff_late.head)
				ff_late.head->prev = s;
			ff_late.head = s;
			pthread_mutex_unlock(&ff_late.lock);
			atomic_store(&s->unlinked, 1); /* s is the late completion's from here */
			struct member *m = slot < ff->v->nslots ? ff->v->slot[slot] : NULL;
			if (overdue) {
				atomic_fetch_add(&ff->timeouts, 1);
				fsvol_log(LOG_ERR, "member %u (%s) is failfast and an I/O of it took over %llu ms "
					  "(failfast_ms %u): failing it, the I/O goes to another copy", slot,
					  m ? m->path : "?", (unsigned long long)took, vol_failfast_ms(ff->v));
			}
			/* the I/O first: a metadata-thread write may wait for it, and
			 * vol_fail_slot below waits for that thread (the engine fails
			 * the member itself on this completion, before it replans) */
			o->res = -ETIMEDOUT;
			o->done(o);
		}
		for (unsigned k = 0; k < n; k++) {
			unsigned j = 0;
			while (j < k && slots[j] != slots[k])
				j++;
			if (j == k) /* each member once */
				vol_fail_slot(ff->v, slots[k], -ETIMEDOUT);
		}
		pthread_mutex_lock(&ff->lock);
	}
	pthread_mutex_unlock(&ff->lock);
	return NULL;
}

int ff_start(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("ff_start");
	if (v->ff || (v->geom.level != LAYOUT_RAID1 && v->geom.level != LAYOUT_RAID10))
		return 0;
	struct vol_ff *ff = calloc(1, sizeof(*ff));
	if (!ff)
		return -ENOMEM;
	pthread_condattr_t ca;
	ff->v = v;
	pthread_mutex_init(&ff->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ff->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&ff->thread, NULL, ff_main, ff)) {
		pthread_cond_destroy(&ff->cond);
		pthread_mutex_destroy(&ff->lock);
		free(ff);
		return -EAGAIN;
	}
	atomic_store(&ff->running, 1);
	v->ff = ff;
	return 0;
}

void ff_stop(struct vol *v)
{
	struct vol_ff *ff = v->ff;
	if (!ff)
		return;
	atomic_store(&ff->running, 0); /* new I/O goes out plain */
	pthread_mutex_lock(&ff->lock);
	ff->stop = 1;
	pthread_cond_signal(&ff->cond);
	pthread_mutex_unlock(&ff->lock);
	pthread_join(ff->thread, NULL);
	/* the engine drained: no shadow is ISSUED; late ones never touch ff */
	pthread_cond_destroy(&ff->cond);
	pthread_mutex_destroy(&ff->lock);
	free(ff);
	v->ff = NULL;
}

int ff_wanted(const struct vol *v, unsigned slot)
{
	return v->ff && slot < v->geom.members && atomic_load_explicit(&v->ff->running, memory_order_relaxed) &&
	       (vol_slot_flags(v, slot) & SB_SLOT_FAILFAST);
}

struct ff_waiter {
	sem_t sem;
};

static void ff_sync_done(struct member_io *io)
{
	sem_post(&((struct ff_waiter *)io->owner)->sem);
}

/* member_io_sync under the deadline when slot is failfast. */
static int ff_sync(struct vol *v, unsigned slot, struct member *m, struct member_io *io)
{
	if (!ff_wanted(v, slot))
		return member_io_sync(m, io);
	struct ff_waiter w;
	sem_init(&w.sem, 0, 0);
	io->done = ff_sync_done;
	io->owner = &w;
	ff_queue(v, m, slot, io);
	m->ops->commit(m);
	while (sem_wait(&w.sem) < 0 && errno == EINTR)
		;
	sem_destroy(&w.sem);
	return io->res;
}

int ff_pwrite(struct vol *v, unsigned slot, struct member *m, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { (void *)buf, len };
	struct member_io io = { .op = MEMBER_WRITE, .off = off, .len = len, .iov = &iov, .niov = 1 };
	return ff_sync(v, slot, m, &io);
}

int ff_flush(struct vol *v, unsigned slot, struct member *m)
{
	struct member_io io = { .op = MEMBER_FLUSH };
	return ff_sync(v, slot, m, &io);
}

unsigned long ff_timeouts(const struct vol *v)
{
	return v->ff ? atomic_load(&v->ff->timeouts) : 0;
}

/* ---- failfast as a feature (core/feature.h): a filter on member I/O ---- */

static int ff_feat_open(struct vol *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return !v->opts.readonly && (v->geom.level == LAYOUT_RAID1 || v->geom.level == LAYOUT_RAID10);
}

static int ff_feat_start(struct vol *v)
{
	/* raid1/raid10: the watchdog (idle until a failfast member's I/O) */
	if (ff_start(v))
		fsvol_log(LOG_WARNING, "failfast: no watchdog thread; failfast members wait for their I/O");
	return 0;
}

static int ff_feat_issue(struct vol *v, struct member *m, unsigned slot, struct member_io *io)
{
	if (!ff_wanted(v, slot))
		return 0;
	ff_queue(v, m, slot, io); /* under the failfast deadline */
	return 1;
}

const struct vol_feature vol_feat_ff = {
	.name = "failfast",
	.open = ff_feat_open,
	.start = ff_feat_start,
	.stop = ff_stop, /* after the last write: a stalled failfast member never holds up the close */
	.issue = ff_feat_issue,
};
