/* replay: fsvol-bench --replay FILE issues a trace's requests (tracefile.h)
 * against the target instead of a generated pattern. One worker owns the
 * schedule: open loop at the recorded times (--replay-speed X: X times
 * faster), or --replay-afap with -o requests in flight. Files and devices go
 * through an io_uring, the in-process volume through engine_submit; both
 * complete on this thread's wait, which stamps the time. Every request's
 * latency is kept for the percentiles, --latency-log and --compare. */
#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/run.h"
#include "fsvol/core/volume.h"

struct rp_slot {
	struct rp *rp;
	struct rp_slot *next;
	size_t idx;      /* trace request */
	uint64_t t0, t1;
	int res;
};

struct rp {
	struct bench_worker *w;
	struct vol *virt;                /* --virtual: the volume whose clock is the model's */
	const struct tracefile *t;
	struct io_uring ring;
	int ring_ok;
	sem_t sem;                       /* volume: completions pushed by any thread */
	_Atomic(struct rp_slot *) done;
	char *rbuf, *wbuf;
	struct rp_slot *slots, *idle;
	unsigned inflight;
};

static unsigned replay_workers(const struct bench_opts *o)
{
	(void)o;
	return 1;
}

/* ---- issue and complete ---- */

/* The replay's clock: real, or the volume's virtual one (from t_start). */
static uint64_t rp_now(const struct rp *rp)
{
	return rp->virt ? rp->w->clk->t_start + vol_clock(rp->virt) : stats_now();
}

static void rp_complete(struct rp *rp, struct rp_slot *s)
{
	struct bench_worker *w = rp->w;
	const struct tracefile_rec *q = &rp->t->rec[s->idx];
	struct bench_replay_req *rq = &w->req[s->idx];
	rp->inflight--;
	s->next = rp->idle;
	rp->idle = s;
	if (s->res < 0) {
		bench_fail(w, s->res, "%s:%u: %s at offset %" PRIu64 ": %s", w->o->replay, q->line,
			   q->op == TRACEFILE_WRITE ? "write" : q->op == TRACEFILE_READ ? "read" : "sync", rq->off,
			   strerror(-s->res));
		return;
	}
	rq->lat_ns = s->t1 - s->t0;
	rq->done = 1;
	if (s->t1 > w->t_done)
		w->t_done = s->t1;
	if (q->op == TRACEFILE_READ || q->op == TRACEFILE_WRITE)
		bench_account(w, q->op == TRACEFILE_WRITE, q->len, s->t0, s->t1);
	else
		atomic_fetch_add_explicit(&w->done, 1, memory_order_relaxed);
}

static void vol_done(void *arg, int res)
{
	struct rp_slot *s = arg;
	struct rp *rp = s->rp;
	s->t1 = rp_now(rp);
	s->res = res;
	struct rp_slot *head = atomic_load_explicit(&rp->done, memory_order_relaxed);
	do
		s->next = head;
	while (!atomic_compare_exchange_weak_explicit(&rp->done, &head, s, memory_order_release, memory_order_relaxed));
	sem_post(&rp->sem);
}

static void rp_issue(struct rp *rp, size_t idx)
{
	struct bench_worker *w = rp->w;
	const struct tracefile_rec *q = &rp->t->rec[idx];
	struct rp_slot *s = rp->idle;
	uint64_t off = bench_replay_offset(w->o, q, w->tgt->size);
	rp->idle = s->next;
	rp->inflight++;
	s->idx = idx;
	s->res = 0;
	w->req[idx].off = off;
	s->t0 = rp_now(rp);
	w->req[idx].t_ns = s->t0 - w->clk->t_start;
	void *buf = q->op == TRACEFILE_WRITE ? rp->wbuf : rp->rbuf;
	if (w->tgt->vol) {
		int op = q->op == TRACEFILE_WRITE ? ENGINE_WRITE : q->op == TRACEFILE_READ ? ENGINE_READ : ENGINE_FLUSH;
		int r = op == ENGINE_FLUSH ? engine_submit(w->tgt->vol, op, NULL, 0, 0, vol_done, s)
					   : engine_submit(w->tgt->vol, op, buf, off, q->len, vol_done, s);
		if (r)
			vol_done(s, r);
		return;
	}
	struct io_uring_sqe *sqe = io_uring_get_sqe(&rp->ring); /* ring >= slots */
	if (q->op == TRACEFILE_WRITE)
		io_uring_prep_write(sqe, w->tgt->fd, buf, (unsigned)q->len, off);
	else if (q->op == TRACEFILE_READ)
		io_uring_prep_read(sqe, w->tgt->fd, buf, (unsigned)q->len, off);
	else
		io_uring_prep_fsync(sqe, w->tgt->fd, 0);
	io_uring_sqe_set_data(sqe, s);
}

/* Wait for a completion, or until deadline (UINT64_MAX: no deadline), and
 * complete whatever is done. */
static void rp_wait(struct rp *rp, uint64_t deadline)
{
	uint64_t now = stats_now();
	if (rp->virt) {
		/* virtual time: run the model up to the next issue, or to the
		 * next completion; the completions arrive on this thread */
		struct rp_slot *d;
		if (deadline != UINT64_MAX)
			vol_run(rp->virt, deadline - rp->w->clk->t_start);
		/* waiting for a completion: the next one in the model; when the
		 * model has none yet, a request is still on a thread of the volume
		 * (the write-intent bitmap's): look again shortly */
		while (!(d = atomic_exchange_explicit(&rp->done, NULL, memory_order_acquire)) &&
		       deadline == UINT64_MAX) {
			uint64_t before = vol_clock(rp->virt);
			vol_run_next(rp->virt, UINT64_MAX);
			if ((d = atomic_exchange_explicit(&rp->done, NULL, memory_order_acquire)))
				break;
			if (vol_clock(rp->virt) == before) {
				struct timespec ts = { 0, 20000 };
				nanosleep(&ts, NULL);
			}
		}
		while (d) {
			struct rp_slot *s = d;
			d = s->next;
			rp_complete(rp, s);
		}
		return;
	}
	if (rp->w->tgt->vol) {
		if (deadline != UINT64_MAX && deadline > now) {
			struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };
			while (sem_clockwait(&rp->sem, CLOCK_MONOTONIC, &ts) < 0 && errno == EINTR)
				;
		} else if (deadline == UINT64_MAX) {
			while (sem_wait(&rp->sem) < 0 && errno == EINTR)
				;
		}
		struct rp_slot *d = atomic_exchange_explicit(&rp->done, NULL, memory_order_acquire);
		while (d) {
			struct rp_slot *s = d;
			d = s->next;
			rp_complete(rp, s);
		}
		return;
	}
	struct io_uring_cqe *cqe;
	io_uring_submit(&rp->ring);
	if (!rp->inflight) {
		if (deadline != UINT64_MAX && deadline > now) {
			struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		return;
	}
	if (deadline == UINT64_MAX) {
		io_uring_wait_cqe(&rp->ring, &cqe);
	} else if (deadline > now) {
		struct __kernel_timespec ts = { (long long)((deadline - now) / 1000000000u),
						(long long)((deadline - now) % 1000000000u) };
		io_uring_wait_cqe_timeout(&rp->ring, &cqe, &ts);
	}
	unsigned head, n = 0;
	uint64_t t1 = stats_now();
	io_uring_for_each_cqe(&rp->ring, head, cqe) {
		struct rp_slot *s = io_uring_cqe_get_data(cqe);
		s->t1 = t1;
		s->res = cqe->res < 0 ? cqe->res : 0;
		n++;
		rp_complete(rp, s);
	}
	io_uring_cq_advance(&rp->ring, n);
}

static int rp_setup(struct rp *rp, unsigned nslots)
{
	struct bench_worker *w = rp->w;
	uint64_t maxlen = 512;
	for (size_t i = 0; i < rp->t->n; i++)
		if (rp->t->rec[i].len > maxlen && rp->t->rec[i].op != TRACEFILE_TRIM)
			maxlen = rp->t->rec[i].len;
	if (maxlen > 1u << 30) {
		bench_fail(w, -EINVAL, "a request of %" PRIu64 " bytes: at most 1 GiB", maxlen);
		return -EINVAL;
	}
	/* the data does not matter, only where it goes: one buffer per direction */
	maxlen = (maxlen + 4095) & ~4095ull;
	if (posix_memalign((void **)&rp->rbuf, 4096, maxlen) || posix_memalign((void **)&rp->wbuf, 4096, maxlen) ||
	    !(rp->slots = calloc(nslots, sizeof(*rp->slots)))) {
		bench_fail(w, -ENOMEM, "out of memory for buffers of %" PRIu64 " bytes", maxlen);
		return -ENOMEM;
	}
	memset(rp->rbuf, 0, maxlen);
	for (uint64_t i = 0; i < maxlen; i++)
		rp->wbuf[i] = (char)i;
	for (unsigned i = 0; i < nslots; i++) {
		rp->slots[i].rp = rp;
		rp->slots[i].next = rp->idle;
		rp->idle = &rp->slots[i];
	}
	sem_init(&rp->sem, 0, 0);
	atomic_init(&rp->done, NULL);
	if (w->tgt->vol) {
		engine_thread_may_block(0);
		return 0;
	}
	int r = io_uring_queue_init(nslots < 8 ? 8 : nslots, &rp->ring, 0);
	if (r < 0) {
		bench_fail(w, r, "io_uring_queue_init: %s", strerror(-r));
		return r;
	}
	rp->ring_ok = 1;
	return 0;
}

static void *replay_worker(void *arg)
{
	struct bench_worker *w = arg;
	const struct bench_opts *o = w->o;
	struct bench_clock *c = w->clk;
	struct rp rp = { .w = w, .t = o->trace, .virt = o->virtual_time ? w->tgt->vol : NULL };
	unsigned nslots = o->replay_afap ? o->outstanding : BENCH_REPLAY_MAX_INFLIGHT;
	double speed = o->replay_speed > 0 ? o->replay_speed : 1;
	size_t i = 0, n = rp.t->n;

	if (!(w->req = calloc(n, sizeof(*w->req))))
		bench_fail(w, -ENOMEM, "out of memory for %zu requests", n);
	else
		rp_setup(&rp, nslots);
	bench_wait_start(w);
	if (w->error)
		i = n;
	for (;;) {
		uint64_t now = rp_now(&rp), deadline = UINT64_MAX;
		if (atomic_load_explicit(&c->stop, memory_order_relaxed))
			i = n; /* an error: drain and leave */
		while (i < n && rp.idle) {
			const struct tracefile_rec *q = &rp.t->rec[i];
			if (q->op == TRACEFILE_TRIM) {
				w->skipped++;
				i++;
				continue;
			}
			if (!o->replay_afap) {
				uint64_t due = c->t_start + (uint64_t)((double)q->t_ns / speed);
				if (due > now) {
					deadline = due;
					break;
				}
				w->late_sum += now - due;
				if (now - due > w->late_max)
					w->late_max = now - due;
			}
			rp_issue(&rp, i++);
		}
		if (i >= n && !rp.inflight)
			break;
		rp_wait(&rp, rp.idle ? deadline : UINT64_MAX);
	}
	if (rp.ring_ok)
		io_uring_queue_exit(&rp.ring);
	sem_destroy(&rp.sem);
	free(rp.slots);
	free(rp.rbuf);
	free(rp.wbuf);
	atomic_fetch_add(&c->finished, 1);
	return NULL;
}

const struct bench_engine_ops bench_replay_ops = {
	.name = "trace replay",
	.workers_per_thread = replay_workers,
	.worker = replay_worker,
};
