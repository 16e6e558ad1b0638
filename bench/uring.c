/* uring: the engine for files, block devices and MNT/volume. One ring per
 * thread with -o I/Os in flight per target; a slot re-issues as soon as it
 * completes (after --think or -g's pacing, an io_uring timeout). With -F a
 * thread drives several targets: each is a stream (a bench_worker of its
 * own: pattern, counts) with its -o slots on the one ring. Registered files
 * and buffers when the kernel allows (memlock), plain reads/writes otherwise. */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "bench/run.h"

#define THINK_BIT (1ull << 63)

struct uslot {
	struct bench_worker *w; /* the stream (thread on one target) it serves */
	unsigned file;          /* its target's index among the registered files */
	char *buf;
	uint64_t t0;
	uint64_t k;   /* the thread's I/O number this slot carries next */
	uint64_t off;
	int is_write;
	struct __kernel_timespec think;
};

static unsigned uring_workers(const struct bench_opts *o)
{
	(void)o;
	return 1;
}

static void prep_io(struct io_uring *ring, struct bench_worker *w, struct uslot *s, unsigned i, int fixed)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring); /* never NULL: ring >= -o entries */
	bench_pattern_at(&w->pat, s->k, &s->off, &s->is_write);
	if (s->is_write)
		bench_write_data(w, s->buf, s->k);
	unsigned len = (unsigned)w->o->block;
	int fd = fixed ? (int)s->file : w->tgt->fd;
	if (fixed && s->is_write)
		io_uring_prep_write_fixed(sqe, fd, s->buf, len, s->off, (int)i);
	else if (fixed)
		io_uring_prep_read_fixed(sqe, fd, s->buf, len, s->off, (int)i);
	else if (s->is_write)
		io_uring_prep_write(sqe, fd, s->buf, len, s->off);
	else
		io_uring_prep_read(sqe, fd, s->buf, len, s->off);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, i);
}

static void prep_think(struct io_uring *ring, struct uslot *s, unsigned i, uint64_t ns)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	s->think.tv_sec = (long long)(ns / 1000000000u);
	s->think.tv_nsec = (long long)(ns % 1000000000u);
	io_uring_prep_timeout(sqe, &s->think, 0, 0);
	io_uring_sqe_set_data64(sqe, THINK_BIT | i);
}

/* Slot i takes the thread's next I/O number and issues it now, or waits (a
 * timeout) for the think time after a completion and for -g's start time of
 * that I/O. 1: issued now; 0: waiting; -1: its start falls after the run,
 * the slot retires. */
static int next_io(struct io_uring *ring, struct uslot *s, unsigned i, int fixed, uint64_t now, int completed,
		   double gap)
{
	struct bench_worker *w = s->w;
	uint64_t due = completed && w->o->think_us ? now + w->o->think_us * 1000 : 0, mine = w->issued++;
	/* -si: the position is the target's, drawn by every thread in turn */
	s->k = w->o->interlocked ? atomic_fetch_add_explicit(&w->tgt->si_next, 1, memory_order_relaxed) : mine;
	if (gap > 0) { /* -g paces this thread's own I/Os */
		uint64_t start = w->clk->t_start + (uint64_t)((double)mine * gap);
		if (start >= w->clk->t_end)
			return -1;
		due = start > due ? start : due;
	}
	if (due > now) {
		prep_think(ring, s, i, due - now);
		return 0;
	}
	prep_io(ring, w, s, i, fixed);
	return 1;
}

/* The ring with room for every slot's I/O or timeout, the slots tied to
 * their streams and buffers, and (when the kernel lets) the files and
 * buffers registered (*fixed). 0, or -errno from io_uring_queue_init. */
static int ring_setup(struct io_uring *ring, struct bench_worker *w, struct uslot *slot, struct iovec *iov,
		      int *fds, char *bufs, int *fixed)
{
	const struct bench_opts *o = w->o;
	unsigned ns = w->nstreams ? w->nstreams : 1, per = o->outstanding, n = per * ns;
	/* completions run when this thread waits, not by interrupting it (as
	 * fio sets up its rings), where the kernel knows the flags */
	int r = io_uring_queue_init(n < 8 ? 8 : n, ring, IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
	if (r == -EINVAL)
		r = io_uring_queue_init(n < 8 ? 8 : n, ring, 0);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		slot[i].w = &w[i / per];
		slot[i].file = i / per;
		slot[i].buf = bufs + (size_t)i * o->block;
		iov[i] = (struct iovec){ slot[i].buf, o->block };
	}
	for (unsigned i = 0; i < ns; i++)
		fds[i] = w[i].tgt->fd;
	if (o->block <= (1u << 30) && io_uring_register_files(ring, fds, ns) == 0) {
		if (io_uring_register_buffers(ring, iov, n) == 0)
			*fixed = 1;
		else
			io_uring_unregister_files(ring);
	}
	return 0;
}

/* One completion: a think time over or an I/O done (counted, the slot's
 * next prepared). 1 when an I/O was prepared (its t0 left to stamp), -1
 * when the slot is done (stopping, or an error: *stopping set), else 0. */
static int on_cqe(struct io_uring *ring, const struct io_uring_cqe *cqe, struct uslot *slot, int fixed,
		  uint64_t now, int *stopping, double gap)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	unsigned i = (unsigned)(ud & ~THINK_BIT);
	struct uslot *s = &slot[i];
	const struct bench_opts *o = s->w->o;
	if (ud & THINK_BIT) {
		if (*stopping)
			return -1;
		prep_io(ring, s->w, s, i, fixed);
		s->t0 = 0; /* stamped at submit */
		return 1;
	}
	if (cqe->res != (int)o->block) {
		int e = cqe->res < 0 ? cqe->res : -EIO;
		bench_fail(s->w, e, "%s at offset %llu: %s%s", s->is_write ? "write" : "read",
			   (unsigned long long)s->off, strerror(-e), cqe->res >= 0 ? " (short transfer)" : "");
		*stopping = 1;
		return -1;
	}
	bench_account(s->w, s->is_write, o->block, s->t0, now);
	int x = *stopping ? -1 : next_io(ring, s, i, fixed, now, 1, gap);
	if (x > 0)
		s->t0 = 0;
	return x;
}

static void *uring_worker(void *arg)
{
	struct bench_worker *w = arg; /* the first stream; w[1 .. ns - 1] the others */
	const struct bench_opts *o = w->o;
	const struct bench_clock *c = w->clk;
	unsigned ns = w->nstreams ? w->nstreams : 1, per = o->outstanding, n = per * ns, inflight = 0;
	struct io_uring ring;
	struct uslot *slot = calloc(n, sizeof(*slot));
	struct iovec *iov = calloc(n, sizeof(*iov));
	int *fds = calloc(ns, sizeof(*fds));
	char *bufs = bench_buffers(o, n, o->seed + w->thread);
	int ring_ok = 0, fixed = 0, r;
	uint64_t batch_t0;
	double gap = bench_rate_gap_ns(o);

	if (!slot || !iov || !bufs || !fds) {
		bench_fail(w, -ENOMEM, "out of memory for %u buffers of %llu bytes", n,
			   (unsigned long long)o->block);
		goto wait;
	}
	if ((r = ring_setup(&ring, w, slot, iov, fds, bufs, &fixed)) < 0)
		bench_fail(w, r, "io_uring_queue_init: %s", strerror(-r));
	ring_ok = r == 0;
wait:
	bench_wait_start(w);
	if (w->error || atomic_load(&((struct bench_clock *)c)->stop))
		goto out;

	batch_t0 = stats_now();
	for (unsigned i = 0; i < n; i++)
		inflight += next_io(&ring, &slot[i], i, fixed, batch_t0, 0, gap) >= 0;
	batch_t0 = stats_now();
	for (unsigned i = 0; i < n; i++)
		slot[i].t0 = batch_t0;
	while (inflight) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0, issued = 0;
		r = io_uring_submit_and_wait(&ring, 1);
		if (r < 0 && r != -EINTR) {
			bench_fail(w, r, "io_uring_submit_and_wait: %s", strerror(-r));
			break;
		}
		uint64_t now = stats_now();
		int stopping = now >= c->t_end || atomic_load_explicit(&((struct bench_clock *)c)->stop,
								      memory_order_relaxed);
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			int x = on_cqe(&ring, cqe, slot, fixed, now, &stopping, gap);
			seen++;
			inflight -= x < 0;
			issued += x > 0;
		}
		io_uring_cq_advance(&ring, seen);
		if (issued) {
			/* the submit is the next loop's; stamp just before it */
			uint64_t t = stats_now();
			for (unsigned i = 0; i < n; i++)
				if (!slot[i].t0)
					slot[i].t0 = t;
		}
	}
out:
	/* Registered files are dropped only when the ring is torn down, and
	 * the kernel tears a ring down in a worker after close(): the target
	 * (a FUSE MNT/volume) stayed open past exit and umount got EBUSY.
	 * Unregistering is synchronous. */
	if (fixed) {
		io_uring_unregister_buffers(&ring);
		io_uring_unregister_files(&ring);
	}
	if (ring_ok)
		io_uring_queue_exit(&ring);
	free(bufs);
	free(iov);
	free(fds);
	free(slot);
	return NULL;
}

const struct bench_engine_ops bench_uring_ops = {
	.name = "io_uring",
	.workers_per_thread = uring_workers,
	.worker = uring_worker,
};
