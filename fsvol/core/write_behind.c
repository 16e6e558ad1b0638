/* write_behind: md's write-behind (drivers/md/raid1.c's behind writes, in
 * miniature), see write_behind.h.
 *
 * A raid1 write whose write-mostly legs may go behind writes the other
 * copies itself and hands the write-mostly legs to a child request
 * (eng_behind_submit) that owns a copy of the data: the caller is answered
 * when the fast copies are done, the child finishes later. Each child holds
 * an entry here while in flight (at most the superblock's write_behind),
 * and its write-intent bits (taken before the parent drops its own), so the
 * bitmap keeps its regions dirty until the slow leg has them.
 *
 * The child starts on the volume's write-behind thread ("fsvol-wbehind"),
 * not on the caller's: the front end's reply (a FUSE ring's commit goes out
 * when its thread is back in its loop) never waits for the slow leg's
 * submission. While writes come, that thread looks for children every
 * WB_POLL_NS instead of being woken for each (a wake-up on this 2-CPU class of
 * machine costs the writer tens of microseconds); idle for WB_IDLE_NS, it
 * sleeps until a writer wakes it. A child waits at most WB_POLL_NS more on
 * its way to a leg that takes milliseconds.
 *
 * Order on the slow leg: a write (behind or not) or a read that must use a
 * write-mostly leg waits, queued, while a write-behind overlapping it is in
 * flight; a flush waits until none is, and new writes wait for their slow
 * legs meanwhile so the flush cannot starve.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/eng_int.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/write_behind.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define WB_POLL_NS 1000000ull    /* 1 ms */
#define WB_IDLE_NS 100000000ull  /* 100 ms */

struct wb_ent {
	struct vol_wb *wb;
	uint64_t off, len;       /* logical, aligned */
	void *buf;
	size_t cap;
	int used;
};

struct vol_wb {
	pthread_mutex_t lock;
	unsigned limit, inflight, nfree, flushing;
	struct wb_ent *ents;     /* limit of them */
	unsigned *free;          /* indices of unused entries */
	struct vol_waiter *ovl;  /* writes and reads waiting for an overlapping write-behind */
	struct vol_waiter *flush; /* flushes waiting for none in flight */
	uint64_t peak, behind, full;
	/* the thread that starts children (wb_thread_start), queue under lock */
	pthread_t thread;
	pthread_cond_t cond;
	int running, stop, deep;  /* deep: asleep until woken */
	struct eng_req *q_head, *q_tail;
};

int wb_open(struct vol *v)
{
	if (!v->sb.write_behind || v->geom.level != LAYOUT_RAID1)
		return 0;
	struct vol_wb *wb = calloc(1, sizeof(*wb));
	if (!wb)
		return -ENOMEM;
	wb->limit = v->sb.write_behind;
	wb->ents = calloc(wb->limit, sizeof(*wb->ents));
	wb->free = calloc(wb->limit, sizeof(*wb->free));
	if (!wb->ents || !wb->free) {
		free(wb->ents);
		free(wb->free);
		free(wb);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < wb->limit; i++) {
		wb->ents[i].wb = wb;
		wb->free[wb->nfree++] = wb->limit - 1 - i;
	}
	pthread_condattr_t ca;
	pthread_mutex_init(&wb->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* stats_now's clock */
	pthread_cond_init(&wb->cond, &ca);
	pthread_condattr_destroy(&ca);
	v->wb = wb;
	return 0;
}

static void *wb_main(void *arg)
{
	struct vol_wb *wb = arg;
	pthread_setname_np(pthread_self(), "fsvol-wbehind"); /* top -H, ps -L */
	uint64_t last = 0;
	pthread_mutex_lock(&wb->lock);
	while (!wb->stop || wb->q_head) {
		struct eng_req *rq = wb->q_head;
		if (!rq) {
			uint64_t now = stats_now();
			if (now - last < WB_IDLE_NS) {
				uint64_t t = now + WB_POLL_NS;
				struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };
				pthread_cond_timedwait(&wb->cond, &wb->lock, &ts);
			} else {
				wb->deep = 1;
				pthread_cond_wait(&wb->cond, &wb->lock);
				wb->deep = 0;
			}
			continue;
		}
		last = stats_now();
		wb->q_head = wb->q_tail = NULL;
		pthread_mutex_unlock(&wb->lock);
		while (rq) {
			struct eng_req *n = rq->next;
			eng_kick(rq); /* its member I/O is queued from here */
			rq = n;
		}
		pthread_mutex_lock(&wb->lock);
	}
	pthread_mutex_unlock(&wb->lock);
	return NULL;
}

int wb_thread_start(struct vol *v)
{
	struct vol_wb *wb = v->wb;
	if (!wb || wb->running)
		return 0;
	if (pthread_create(&wb->thread, NULL, wb_main, wb))
		return -EAGAIN;
	pthread_mutex_lock(&wb->lock);
	wb->running = 1;
	pthread_mutex_unlock(&wb->lock);
	return 0;
}

void wb_thread_stop(struct vol *v)
{
	struct vol_wb *wb = v->wb;
	if (!wb || !wb->running)
		return;
	pthread_mutex_lock(&wb->lock);
	wb->stop = 1;
	wb->running = 0; /* children from now on start on their parent's thread */
	pthread_cond_signal(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
}

/* Start a child: on the thread when it runs, else here. */
static void wb_kick(struct vol_wb *wb, struct eng_req *rq)
{
	pthread_mutex_lock(&wb->lock);
	int queued = wb->running;
	if (queued) {
		rq->next = NULL;
		if (wb->q_tail)
			wb->q_tail->next = rq;
		else
			wb->q_head = rq;
		wb->q_tail = rq;
		if (wb->deep)
			pthread_cond_signal(&wb->cond); /* else it looks within WB_POLL_NS */
	}
	pthread_mutex_unlock(&wb->lock);
	if (!queued)
		eng_kick(rq);
}

void wb_close(struct vol *v)
{
	struct vol_wb *wb = v->wb;
	if (!wb)
		return;
	/* vol_close drained the engine: every child has finished */
	wb_thread_stop(v);
	pthread_cond_destroy(&wb->cond);
	pthread_mutex_destroy(&wb->lock);
	free(wb->ents);
	free(wb->free);
	free(wb);
	v->wb = NULL;
}

/* An entry in flight overlapping [off, off+len)? Lock held. */
static int wb_overlaps(const struct vol_wb *wb, uint64_t off, uint64_t len)
{
	if (wb->inflight)
		for (unsigned i = 0; i < wb->limit; i++) {
			const struct wb_ent *e = &wb->ents[i];
			if (e->used && e->off < off + len && off < e->off + e->len)
				return 1;
		}
	return 0;
}

static void wb_queue(struct vol_waiter **list, struct eng_req *rq)
{
	rq->wait.res = 0;
	rq->wait.next = *list;
	*list = &rq->wait;
}

static void wb_resume(struct vol_waiter *w)
{
	while (w) {
		struct vol_waiter *n = w->next;
		w->resume(w); /* it checks again: it may queue once more */
		w = n;
	}
}

static void wb_done(void *arg, int res)
{
	struct wb_ent *e = arg;
	struct vol_wb *wb = e->wb;
	struct vol_waiter *ovl, *fl = NULL;
	if (res)
		fsvol_log(LOG_ERR, "write-behind of %llu+%llu: %s (the other copies have it)",
			  (unsigned long long)e->off, (unsigned long long)e->len, strerror(res < 0 ? -res : EIO));
	bufpool_put(e->buf, e->cap);
	pthread_mutex_lock(&wb->lock);
	e->used = 0;
	wb->free[wb->nfree++] = (unsigned)(e - wb->ents);
	wb->inflight--;
	ovl = wb->ovl;
	wb->ovl = NULL;
	if (!wb->inflight) {
		fl = wb->flush;
		wb->flush = NULL;
		wb->flushing = 0;
	}
	pthread_mutex_unlock(&wb->lock);
	wb_resume(ovl);
	wb_resume(fl);
}

int wb_admit(struct eng_req *rq, uint64_t off, uint64_t len)
{
	struct vol_wb *wb = rq->v->wb;
	int r = 1;
	pthread_mutex_lock(&wb->lock);
	if (wb_overlaps(wb, off, len)) {
		wb_queue(&wb->ovl, rq);
		r = ENG_WAIT;
	} else if (len > ENG_SEG || wb->flushing || !wb->nfree) {
		/* the slow leg is written by the request itself: at the limit, md's
		 * "behind writes" counter full */
		wb->full += !wb->nfree;
		r = 0;
	}
	pthread_mutex_unlock(&wb->lock);
	return r;
}

int wb_start(struct eng_req *rq, uint64_t off, uint64_t len, const void *data)
{
	struct vol_wb *wb = rq->v->wb;
	size_t cap;
	void *buf = bufpool_get(len, &cap);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, data, len);
	pthread_mutex_lock(&wb->lock);
	if (!wb->nfree || wb->flushing || wb_overlaps(wb, off, len)) {
		/* something came in since wb_admit: write the slow leg in place */
		pthread_mutex_unlock(&wb->lock);
		bufpool_put(buf, cap);
		return -EAGAIN;
	}
	struct wb_ent *e = &wb->ents[wb->free[--wb->nfree]];
	*e = (struct wb_ent){ .wb = wb, .off = off, .len = len, .buf = buf, .cap = cap, .used = 1 };
	wb->inflight++;
	wb->behind++;
	if (wb->inflight > wb->peak)
		wb->peak = wb->inflight;
	pthread_mutex_unlock(&wb->lock);
	int held = 0;
	struct eng_req *child = eng_behind_new(rq->v, buf, off, len, wb_done, e, &held);
	if (child && held)
		wb_kick(wb, child);
	int r = child ? 0 : -ENOMEM;
	if (r) {
		pthread_mutex_lock(&wb->lock);
		e->used = 0;
		wb->free[wb->nfree++] = (unsigned)(e - wb->ents);
		wb->inflight--;
		wb->behind--;
		pthread_mutex_unlock(&wb->lock);
		bufpool_put(buf, cap);
	}
	return r;
}

int wb_read_ok(struct eng_req *rq, uint64_t off, uint64_t len)
{
	struct vol_wb *wb = rq->v->wb;
	pthread_mutex_lock(&wb->lock);
	int ok = !wb_overlaps(wb, off, len);
	if (!ok)
		wb_queue(&wb->ovl, rq);
	pthread_mutex_unlock(&wb->lock);
	return ok;
}

int wb_flush_ok(struct eng_req *rq)
{
	struct vol_wb *wb = rq->v->wb;
	pthread_mutex_lock(&wb->lock);
	int ok = !wb->inflight;
	if (!ok) {
		wb_queue(&wb->flush, rq);
		wb->flushing++;
	}
	pthread_mutex_unlock(&wb->lock);
	return ok;
}

void wb_counts(struct vol *v, struct wb_counts *c)
{
	struct vol_wb *wb = v->wb;
	memset(c, 0, sizeof(*c));
	if (!wb)
		return;
	pthread_mutex_lock(&wb->lock);
	*c = (struct wb_counts){ .limit = wb->limit, .inflight = wb->inflight, .peak = wb->peak,
				 .behind = wb->behind, .full = wb->full };
	pthread_mutex_unlock(&wb->lock);
}

void wb_status(struct vol *v, FILE *f)
{
	struct wb_counts c;
	if (!v->wb)
		return;
	wb_counts(v, &c);
	fprintf(f, "      write-behind: %llu/%llu in flight (peak %llu), %llu written behind, %llu waited for the "
		"write-mostly legs (limit reached)\n", (unsigned long long)c.inflight, (unsigned long long)c.limit,
		(unsigned long long)c.peak, (unsigned long long)c.behind, (unsigned long long)c.full);
}

void wb_status_json(struct vol *v, FILE *f)
{
	struct wb_counts c;
	fputs(",\"write_behind\":", f);
	if (!v->wb) {
		fputs("null", f);
		return;
	}
	wb_counts(v, &c);
	fprintf(f, "{\"limit\":%llu,\"inflight\":%llu,\"peak\":%llu,\"behind\":%llu,\"full\":%llu}",
		(unsigned long long)c.limit, (unsigned long long)c.inflight, (unsigned long long)c.peak,
		(unsigned long long)c.behind, (unsigned long long)c.full);
}

/* ---- write-behind as a feature (core/feature.h) ---- */

static int wb_feat_open(struct vol *v, char *err, size_t errlen)
{
	if (wb_open(v)) {
		snprintf(err, errlen, "write-behind: out of memory");
		return -ENOMEM;
	}
	return v->wb != NULL;
}

static int wb_feat_start(struct vol *v)
{
	if (wb_thread_start(v))
		fsvol_log(LOG_WARNING, "write-behind: no thread of its own; write-behinds start on the writer's");
	return 0;
}

const struct vol_feature vol_feat_wb = {
	.name = "write-behind",
	.open = wb_feat_open,
	.start = wb_feat_start,
	.free = wb_close,
	.status = wb_status,
	.flush_ok = wb_flush_ok,
};
