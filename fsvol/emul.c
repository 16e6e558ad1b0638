/* emul: one timer thread, one heap of emulated completions (see emul.h).
 *
 * Sleeping wake-ups here are ~55 us late on average even with 1 ns timer
 * slack, so the thread sleeps until EMUL_SPIN_NS before a deadline and spins
 * the rest of the way. Lateness is measured on every release.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "fsvol/emul.h"
#include "stats/stats.h"

#define EMUL_SPIN_NS 60000u

struct emul {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* CLOCK_MONOTONIC */
	pthread_t thread;
	int stop;
	struct emul_io **heap;
	size_t n, cap;
	uint64_t late[STATS_LAT_BUCKETS];
	uint64_t released;
};

static int before(const struct emul_io *a, const struct emul_io *b)
{
	return a->r.done_ns < b->r.done_ns;
}

static int heap_push(struct emul *e, struct emul_io *io)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		struct emul_io **h = realloc(e->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		e->heap = h;
		e->cap = cap;
	}
	size_t i = e->n++;
	while (i && before(io, e->heap[(i - 1) / 2])) {
		e->heap[i] = e->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->heap[i] = io;
	return 0;
}

static struct emul_io *heap_pop(struct emul *e)
{
	struct emul_io *top = e->heap[0], *last = e->heap[--e->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		if (c + 1 < e->n && before(e->heap[c + 1], e->heap[c]))
			c++;
		if (!before(e->heap[c], last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->n)
		e->heap[i] = last;
	return top;
}

/* Start what the spindle can start at time t; lock held. */
static void dispatch(struct emul *e, struct spindle *sp, uint64_t t)
{
	struct spindle_req *r;
	while ((r = spindle_dispatch(sp, t))) {
		struct emul_io *io = r->cookie;
		if (heap_push(e, io)) {
			/* Out of memory: release at once rather than lose the request. */
			io->r.done_ns = t;
			spindle_complete(sp, r);
			if (--io->w->pending == 0)
				pthread_cond_signal(&io->w->cond);
		}
	}
}

static void *emul_main(void *arg)
{
	struct emul *e = arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	/* Releases are the model's clock: run ahead of the I/O threads when the
	 * system lets us (root); otherwise stay a normal thread. */
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		if (!e->n) {
			pthread_cond_wait(&e->wake, &e->lock);
			continue;
		}
		struct emul_io *io = e->heap[0];
		uint64_t now = stats_now(), due = io->r.done_ns;
		if (due <= now) {
			heap_pop(e);
			e->late[stats_lat_bucket(now - due)]++;
			e->released++;
			spindle_complete(io->sp, &io->r);
			/* The member's next request starts when this one finished
			 * in emulated time, not when we got round to it. */
			dispatch(e, io->sp, due);
			if (--io->w->pending == 0)
				pthread_cond_signal(&io->w->cond);
			continue;
		}
		if (due - now > EMUL_SPIN_NS) {
			uint64_t until = due - EMUL_SPIN_NS;
			struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
			pthread_cond_timedwait(&e->wake, &e->lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&e->lock);
		while (stats_now() < due)
			__builtin_ia32_pause();
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int emul_create(struct emul **out)
{
	struct emul *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&e->thread, NULL, emul_main, e)) {
		pthread_cond_destroy(&e->wake);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return -EAGAIN;
	}
	*out = e;
	return 0;
}

void emul_destroy(struct emul *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = 1;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->wake);
	pthread_mutex_destroy(&e->lock);
	free(e->heap);
	free(e);
}

void emul_waiter_init(struct emul_waiter *w)
{
	pthread_cond_init(&w->cond, NULL);
	w->pending = 0;
}

void emul_waiter_destroy(struct emul_waiter *w)
{
	pthread_cond_destroy(&w->cond);
}

void emul_submit(struct emul *e, struct emul_io *io)
{
	io->r.cookie = io;
	pthread_mutex_lock(&e->lock);
	io->w->pending++;
	uint64_t first = e->n ? e->heap[0]->r.done_ns : UINT64_MAX;
	spindle_enqueue(io->sp, &io->r);
	dispatch(e, io->sp, io->r.arrival_ns);
	if (e->n && e->heap[0]->r.done_ns < first)
		pthread_cond_signal(&e->wake); /* an earlier deadline than the one slept for */
	pthread_mutex_unlock(&e->lock);
}

void emul_wait(struct emul *e, struct emul_waiter *w)
{
	pthread_mutex_lock(&e->lock);
	while (w->pending)
		pthread_cond_wait(&w->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

int emul_locked(struct emul *e, int (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&e->lock);
	int r = fn(arg);
	pthread_mutex_unlock(&e->lock);
	return r;
}

void emul_lateness(struct emul *e, double *p50, double *p99, uint64_t *count)
{
	pthread_mutex_lock(&e->lock);
	const uint64_t *h[1] = { e->late };
	*p50 = stats_lat_percentile(h, 1, 50);
	*p99 = stats_lat_percentile(h, 1, 99);
	*count = e->released;
	pthread_mutex_unlock(&e->lock);
}
