/* volume: the engine for an fsvol volume opened in-process (--members).
 *
 * One OS thread per -t thread keeps its -o I/Os in flight through the
 * asynchronous engine (engine_submit), as fio's io_uring engine does with a
 * ring: no thread waits per I/O. The worker owns an io_uring and lends it to
 * file members (member_file_lend_ring): their I/O goes on it and completes in
 * the worker's own loop, so what the kernel completes inline costs no
 * hand-off. A completion that arrives on another thread (the model's clock,
 * a member's own thread) only stamps the time, hands the slot back and wakes
 * the worker through an eventfd read kept armed on the ring; the worker alone
 * accounts and issues.
 */
#include <errno.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/run.h"
#include "fsvol/util/uring_loop.h"
#include "fsvol/core/volume.h"

struct vslot {
	struct vworker *vw;
	struct vslot *next;
	char *buf;
	uint64_t off, t0, t1, ready; /* ready: may be issued again (think time) */
	int is_write, res;
};

struct vworker {
	int efd;                      /* wakes the worker from another thread */
	_Atomic(struct vslot *) done; /* completed slots, pushed by any thread */
	struct vol *virt;             /* --virtual: the volume whose clock is the model's */
	uint64_t t_start;
};

/* The worker's clock: real, or the volume's virtual one (from t_start). */
static uint64_t vw_now(const struct vworker *vw)
{
	return vw->virt ? vw->t_start + vol_clock(vw->virt) : stats_now();
}

static __thread struct vworker *tl_vw; /* set on the worker's own thread */

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
	if (tl_vw != vw) { /* the worker may sleep in its ring: wake it */
		uint64_t one = 1;
		if (write(vw->efd, &one, sizeof(one)) < 0) {
			/* only on overflow: it is awake anyway */
		}
	}
}

static void arm_wake(struct io_uring *ring, struct vworker *vw, uint64_t *buf)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (sqe) {
		io_uring_prep_read(sqe, vw->efd, buf, sizeof(*buf), 0);
		io_uring_sqe_set_data(sqe, uring_tag(NULL, URING_WAKE));
	}
}

/* The ring's wake-up read completed: arm it again. */
struct vring {
	struct io_uring *ring;
	struct vworker *vw;
	uint64_t *wake_buf;
};

static void ring_woken(void *ctx, void *ptr, int res)
{
	struct vring *r = ctx;
	(void)ptr, (void)res;
	arm_wake(r->ring, r->vw, r->wake_buf);
}

static uring_cqe_fn *const ring_handlers[URING_KINDS] = {
	[URING_LENT] = member_file_complete, /* a file member's I/O (member_file_lend_ring) */
	[URING_WAKE] = ring_woken,
};

/* Submit what is queued; wait for one completion unless slots are done
 * already, or until t (UINT64_MAX: no limit); run the ring's completions. */
static void ring_wait(struct io_uring *ring, struct vworker *vw, uint64_t *wake_buf, uint64_t t)
{
	unsigned wait = atomic_load_explicit(&vw->done, memory_order_acquire) ? 0 : 1;
	uint64_t now = t != UINT64_MAX ? stats_now() : 0;
	uring_loop_wait(ring, wait, t == UINT64_MAX ? URING_FOREVER : t > now ? t - now : 0);
	struct vring ctx = { ring, vw, wake_buf };
	uring_loop_reap(ring, ring_handlers, &ctx);
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

	struct io_uring ring;
	uint64_t wake_buf = 0;
	int have_ring = 0;
	atomic_init(&vw.done, NULL);
	vw.virt = o->virtual_time ? v : NULL;
	int edges = 0; /* --virtual: window edges sampled so far */
	vw.efd = eventfd(0, EFD_CLOEXEC);
	unsigned entries = 4 * n + 64 > 4096 ? 4096 : 4 * n + 64;
	if (vw.efd >= 0 && uring_loop_init(&ring, entries, 0, 0) == 0)
		have_ring = 1;
	if (!have_ring)
		bench_fail(w, -ENOMEM, "cannot set up the worker's io_uring");
	else {
		tl_vw = &vw;
		if (!vw.virt) /* in virtual time the model's clock is driven here, not the ring */
			member_file_lend_ring(&ring);
		arm_wake(&ring, &vw, &wake_buf);
	}
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
		if (vw.virt) {
			virtual_wait(&vw, c, inflight, wake, &edges);
		} else {
			if (!have_ring)
				break;
			if (wake != UINT64_MAX && inflight)
				wake = wake < c->t_end ? wake : c->t_end;
			ring_wait(&ring, &vw, &wake_buf, wake);
		}
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
	if (have_ring) {
		member_file_lend_ring(NULL);
		tl_vw = NULL;
		io_uring_queue_exit(&ring); /* cancels the eventfd read */
	}
	if (vw.efd >= 0)
		close(vw.efd);
	free(bufs);
	free(slots);
	return NULL;
}

const struct bench_engine_ops bench_volume_ops = {
	.name = "fsvol in-process (asynchronous engine, -o in flight per thread)",
	.workers_per_thread = volume_workers,
	.worker = volume_worker,
};
