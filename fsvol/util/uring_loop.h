/* uring_loop: the parts every thread that owns an io_uring loop shares (file
 * members' ring threads, FUSE over io_uring's queue threads, the NBD event
 * thread): setting the ring up, tagging what goes on it, reaping and
 * dispatching completions, telling a real error from a retry, and waiting
 * with a timeout.
 *
 * A tag is a pointer (8-byte aligned, or NULL) whose three low bits say its
 * kind. The loop's owner gives one handler per kind; kinds are shared across
 * owners, because a thread may lend its ring to another module (a file
 * member's I/O on a FUSE queue's ring: URING_LENT), which tags its own. */
#ifndef FSVOL_URING_LOOP_H
#define FSVOL_URING_LOOP_H

#include <liburing.h>
#include <stdint.h>

enum uring_kind {
	URING_OWN = 0,   /* the owner's own requests (its default) */
	URING_LENT = 1,  /* I/O another module put on the owner's ring (member_file_lend_ring) */
	URING_WAKE = 2,  /* the wake-up read (util/ring_wake.h) */
	URING_TIMER = 3, /* a timer or a poll of the owner's */
	URING_KINDS = 8,
};

static inline void *uring_tag(const void *ptr, enum uring_kind kind)
{
	return (void *)((uintptr_t)ptr | (uintptr_t)kind);
}

static inline enum uring_kind uring_tag_kind(const void *tag)
{
	return (enum uring_kind)((uintptr_t)tag & (URING_KINDS - 1));
}

static inline void *uring_tag_ptr(const void *tag)
{
	return (void *)((uintptr_t)tag & ~(uintptr_t)(URING_KINDS - 1));
}

/* A completion of kind k: handler(ctx, the tag's pointer, cqe->res). */
typedef void uring_cqe_fn(void *ctx, void *ptr, int res);

/* Set the ring up for one thread (COOP_TASKRUN, SINGLE_ISSUER: call it on
 * that thread), with flags added (e.g. IORING_SETUP_SQE128) and a completion
 * queue of cq_entries (0: the default); a kernel that refuses the first two
 * gets the ring without them. 0 or -errno. */
int uring_loop_init(struct io_uring *ring, unsigned entries, unsigned cq_entries, unsigned flags);

/* io_uring_enter's value r says the ring is broken (not an interruption, a
 * full queue, a timeout: -EINTR, -EAGAIN, -EBUSY, -ETIME). */
int uring_loop_fatal(int r);

/* Submit what is queued; wait for nr completions, for at most timeout_ns
 * (URING_FOREVER: no limit). Returns io_uring_enter's value (-ETIME: timed
 * out). */
#define URING_FOREVER UINT64_MAX
int uring_loop_wait(struct io_uring *ring, unsigned nr, uint64_t timeout_ns);

/* Take every completion there is (those the handlers cause too), freeing
 * their slots before the handlers run (a handler may queue more), and call
 * on[kind] for each (NULL: ignored). Returns how many. */
unsigned uring_loop_reap(struct io_uring *ring, uring_cqe_fn *const on[URING_KINDS], void *ctx);

#endif
