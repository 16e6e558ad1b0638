/* uring_loop: see uring_loop.h. */
#include <errno.h>

#include "fsvol/util/uring_loop.h"

int uring_loop_init(struct io_uring *ring, unsigned entries, unsigned cq_entries, unsigned flags)
{
	unsigned cq = cq_entries ? IORING_SETUP_CQSIZE : 0;
	struct io_uring_params p = { .flags = flags | cq | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
				     .cq_entries = cq_entries };
	int r = io_uring_queue_init_params(entries, ring, &p);
	if (r == -EINVAL) { /* an older kernel: no COOP_TASKRUN or SINGLE_ISSUER */
		p = (struct io_uring_params){ .flags = flags | cq, .cq_entries = cq_entries };
		r = io_uring_queue_init_params(entries, ring, &p);
	}
	return r;
}

int uring_loop_fatal(int r)
{
	return r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY && r != -ETIME;
}

int uring_loop_wait(struct io_uring *ring, unsigned nr, uint64_t timeout_ns)
{
	if (timeout_ns == URING_FOREVER || !nr)
		return io_uring_submit_and_wait(ring, nr);
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { (long long)(timeout_ns / 1000000000u), (long long)(timeout_ns % 1000000000u) };
	return io_uring_submit_and_wait_timeout(ring, &cqe, nr, &ts, NULL);
}

#define REAP_BATCH 64u

unsigned uring_loop_reap(struct io_uring *ring, uring_cqe_fn *const on[URING_KINDS], void *ctx)
{
	void *tags[REAP_BATCH];
	int res[REAP_BATCH];
	unsigned total = 0;
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			if (n == REAP_BATCH)
				break;
			tags[n] = io_uring_cqe_get_data(cqe);
			res[n] = cqe->res;
			n++;
		}
		if (!n)
			return total;
		io_uring_cq_advance(ring, n);
		total += n;
		for (unsigned i = 0; i < n; i++) {
			uring_cqe_fn *fn = on[uring_tag_kind(tags[i])];
			if (fn)
				fn(ctx, uring_tag_ptr(tags[i]), res[i]);
		}
	}
}
