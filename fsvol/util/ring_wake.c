/* ring_wake: see ring_wake.h. */
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fsvol/util/ring_wake.h"
#include "fsvol/util/uring_loop.h"

int ring_wake_init(struct ring_wake *w, void *tag)
{
	atomic_init(&w->sleeping, 0);
	w->tag = tag;
	w->efd = eventfd(0, EFD_CLOEXEC);
	return w->efd < 0 ? -errno : 0;
}

void ring_wake_close(struct ring_wake *w)
{
	if (w->efd >= 0)
		close(w->efd);
	w->efd = -1;
}

void ring_wake_arm(struct ring_wake *w, struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (!sqe)
		return; /* cannot happen: the callers' rings keep room for it */
	io_uring_prep_read(sqe, w->efd, &w->buf, sizeof(w->buf), 0);
	io_uring_sqe_set_data(sqe, w->tag);
}

void ring_wake_sleepy(struct ring_wake *w)
{
	atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
}

int ring_wake_wait(struct ring_wake *w, struct io_uring *ring, int inbox_busy)
{
	/* busy: submit, reap what is there, come back for the inbox */
	unsigned wait = !inbox_busy;
	if (inbox_busy)
		atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
	int r = uring_loop_wait(ring, wait, URING_FOREVER);
	atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
	return r;
}

void ring_wake_force(struct ring_wake *w)
{
	uint64_t one = 1;
	if (write(w->efd, &one, sizeof(one)) < 0) {
		/* an eventfd write fails only on overflow: the thread wakes anyway */
	}
}

void ring_wake_kick(struct ring_wake *w)
{
	if (atomic_exchange_explicit(&w->sleeping, 0, memory_order_seq_cst))
		ring_wake_force(w);
}
