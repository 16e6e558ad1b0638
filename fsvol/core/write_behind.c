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
 * Order on the slow leg: a write (behind or not) or a read that must use a
 * write-mostly leg waits, queued, while a write-behind overlapping it is in
 * flight; a flush waits until none is, and new writes wait for their slow
 * legs meanwhile so the flush cannot starve.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/eng_int.h"
#include "fsvol/core/write_behind.h"
#include "fsvol/util/log.h"

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
	pthread_mutex_init(&wb->lock, NULL);
	v->wb = wb;
	return 0;
}

void wb_close(struct vol *v)
{
	struct vol_wb *wb = v->wb;
	if (!wb)
		return;
	/* vol_close drained the engine: every child has finished */
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
	int r = eng_behind_submit(rq->v, buf, off, len, wb_done, e);
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
