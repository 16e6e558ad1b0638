/* volume: the engine for an fsvol volume opened in-process (--members).
 *
 * One OS thread per -t thread keeps its -o I/Os in flight through the
 * asynchronous engine (engine_submit), as fio's io_uring engine does with a
 * ring: no thread waits per I/O. A completion may arrive on any thread (the
 * model's clock, a member's ring); it only stamps the time and hands the slot
 * back, so the worker alone accounts and issues. The worker does not let
 * member I/O block it (engine_thread_may_block(0)): file members go through
 * their ring, so the queue depth is real.
 */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/run.h"
#include "fsvol/core/volume.h"

struct vslot {
	struct vworker *vw;
	struct vslot *next;
	char *buf;
	uint64_t off, t0, t1, ready; /* ready: may be issued again (think time) */
	int is_write, res;
};

struct vworker {
	sem_t sem;
	_Atomic(struct vslot *) done; /* completed slots, pushed by any thread */
	struct vol *virt;             /* --virtual: the volume whose clock is the model's */
	uint64_t t_start;
};

/* The worker's clock: real, or the volume's virtual one (from t_start). */
static uint64_t vw_now(const struct vworker *vw)
{
	return vw->virt ? vw->t_start + vol_clock(vw->virt) : stats_now();
}

static unsigned volume_workers(const struct bench_opts *o)
{
	(void)o;
	return 1;
}

static void slot_done(void *arg, int res)
{
	struct vslot *s = arg;
	struct vworker *vw = s->vw;
	s->t1 = vw_now(vw);
	s->res = res;
	struct vslot *head = atomic_load_explicit(&vw->done, memory_order_relaxed);
	do
		s->next = head;
	while (!atomic_compare_exchange_weak_explicit(&vw->done, &head, s, memory_order_release, memory_order_relaxed));
	sem_post(&vw->sem);
}

static void wait_until(sem_t *sem, uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };
	while (sem_clockwait(sem, CLOCK_MONOTONIC, &ts) < 0 && errno == EINTR)
		;
}

/* --virtual: move the model's clock to the next completion, a slot's think
 * time or the next window edge, whichever is first, and sample at the edge.
 * A request still on a thread of the volume (a write parked on the bitmap)
 * is not in the model yet: look again shortly. */
static void virtual_wait(struct vworker *vw, struct bench_clock *c, unsigned inflight, uint64_t wake,
			 int *edges)
{
	uint64_t edge = *edges == 0 ? c->t_meas : *edges == 1 ? c->t_meas_end : UINT64_MAX;
	uint64_t limit = wake < edge ? wake : edge;
	uint64_t before = vol_clock(vw->virt);
	if (!inflight && limit == UINT64_MAX)
		limit = c->t_end; /* nothing to wait for: the run's end */
	if (inflight)
		vol_run_next(vw->virt, limit == UINT64_MAX ? UINT64_MAX : limit - vw->t_start);
	else if (limit != UINT64_MAX)
		vol_run(vw->virt, limit - vw->t_start);
	uint64_t now = vw_now(vw);
	while (*edges < 2 && now >= (*edges == 0 ? c->t_meas : c->t_meas_end)) {
		if (c->edge)
			c->edge(c->edge_arg, *edges);
		(*edges)++;
	}
	if (inflight && vol_clock(vw->virt) == before &&
	    !atomic_load_explicit(&vw->done, memory_order_acquire)) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

static void *volume_worker(void *arg)
{
	struct bench_worker *w = arg;
	const struct bench_opts *o = w->o;
	struct bench_clock *c = w->clk;
	struct vol *v = w->tgt->vol;
	_Atomic uint64_t *next_k = &w->tgt->next_k[w->thread % o->threads];
	unsigned n = o->outstanding, inflight = 0;
	double gap = bench_rate_gap_ns(o);
	struct vworker vw;
	struct vslot *slots = calloc(n, sizeof(*slots)), *idle = NULL;
	char *bufs = bench_buffers(o, n, o->seed + w->thread * 1024);

	sem_init(&vw.sem, 0, 0);
	atomic_init(&vw.done, NULL);
	vw.virt = o->virtual_time ? v : NULL;
	int edges = 0; /* --virtual: window edges sampled so far */
	engine_thread_may_block(0);
	if (!slots || !bufs)
		bench_fail(w, -ENOMEM, "out of memory for %u buffers of %llu bytes", n, (unsigned long long)o->block);
	for (unsigned i = 0; slots && bufs && i < n; i++) {
		slots[i].vw = &vw;
		slots[i].buf = bufs + (size_t)i * o->block;
		slots[i].next = idle;
		idle = &slots[i];
	}
	bench_wait_start(w);
	vw.t_start = c->t_start;
	for (;;) {
		uint64_t now = vw_now(&vw), wake = UINT64_MAX;
		int issuing = !w->error && now < c->t_end && !atomic_load_explicit(&c->stop, memory_order_relaxed);
		/* issue every idle slot whose think time is over */
		struct vslot *later = NULL;
		while (idle) {
			struct vslot *s = idle;
			idle = s->next;
			if (!issuing)
				continue;
			if (s->ready > now) {
				s->next = later;
				later = s;
				wake = s->ready < wake ? s->ready : wake;
				continue;
			}
			if (gap > 0) { /* -g: the next I/O of the thread starts no earlier than k gaps in */
				uint64_t start = c->t_start + (uint64_t)((double)atomic_load(next_k) * gap);
				/* (one worker per thread: next_k counts this thread's I/Os) */
				if (start >= c->t_end)
					continue; /* after the run: the slot retires */
				if (start > now) {
					s->ready = start;
					s->next = later;
					later = s;
					wake = start < wake ? start : wake;
					continue;
				}
			}
			uint64_t k = atomic_fetch_add_explicit(next_k, 1, memory_order_relaxed);
			if (o->interlocked) /* -si: the target's shared position */
				k = atomic_fetch_add_explicit(&w->tgt->si_next, 1, memory_order_relaxed);
			bench_pattern_at(&w->pat, k, &s->off, &s->is_write);
			if (s->is_write)
				bench_write_data(w, s->buf, k);
			s->t0 = vw_now(&vw);
			inflight++;
			int r = engine_submit(v, s->is_write ? ENGINE_WRITE : ENGINE_READ, s->buf, s->off, o->block, slot_done, s);
			if (r)
				slot_done(s, r);
		}
		idle = later;
		if (!inflight && (!issuing || !idle))
			break;
		if (vw.virt)
			virtual_wait(&vw, c, inflight, wake, &edges);
		else if (wake != UINT64_MAX && !inflight)
			wait_until(&vw.sem, wake);
		else if (wake != UINT64_MAX)
			wait_until(&vw.sem, wake < c->t_end ? wake : c->t_end);
		else
			while (sem_wait(&vw.sem) < 0 && errno == EINTR)
				;
		/* account what completed, on this thread only */
		struct vslot *done = atomic_exchange_explicit(&vw.done, NULL, memory_order_acquire);
		while (done) {
			struct vslot *s = done;
			done = s->next;
			inflight--;
			if (s->res) {
				if (!w->error)
					bench_fail(w, s->res, "%s at offset %llu: %s", s->is_write ? "write" : "read",
						   (unsigned long long)s->off, strerror(-s->res));
			} else {
				bench_account(w, s->is_write, o->block, s->t0, s->t1);
			}
			s->ready = s->t1 + o->think_us * 1000;
			s->next = idle;
			idle = s;
		}
	}
	if (vw.virt) {
		virtual_wait(&vw, c, 0, UINT64_MAX, &edges); /* the edges not reached */
		atomic_fetch_add(&c->finished, 1);
	}
	sem_destroy(&vw.sem);
	free(bufs);
	free(slots);
	return NULL;
}

const struct bench_engine_ops bench_volume_ops = {
	.name = "fsvol in-process (asynchronous engine, -o in flight per thread)",
	.workers_per_thread = volume_workers,
	.worker = volume_worker,
};
