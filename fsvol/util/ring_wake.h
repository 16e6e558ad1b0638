/* ring_wake: wake a thread that sleeps on its own io_uring, from any other
 * thread, and only when it sleeps (FUSE over io_uring's queue threads, file
 * members' ring threads).
 *
 * An eventfd read stays armed on the ring; its completion carries the tag
 * given at init, and the thread arms it again (ring_wake_arm). Before it
 * sleeps the thread says so (ring_wake_sleepy), then looks at its inbox once
 * more and waits only when that was empty (ring_wake_wait). A pusher puts its
 * work in the inbox, then writes the eventfd only when it finds the thread
 * asleep (ring_wake_kick). Both sides store then load, sequentially
 * consistent, so one of them sees the other: no push is left unseen while
 * the thread sleeps, and a busy thread costs its pushers no syscall.
 */
#ifndef FSVOL_RING_WAKE_H
#define FSVOL_RING_WAKE_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdint.h>

struct ring_wake {
	atomic_int sleeping;
	int efd;
	uint64_t buf;
	void *tag;
};

/* 0 or -errno (no eventfd). */
int ring_wake_init(struct ring_wake *w, void *tag);
void ring_wake_close(struct ring_wake *w);
/* The thread: put the eventfd read on its ring (submitted with the next
 * submit), at the start and after each completion that carries the tag. */
void ring_wake_arm(struct ring_wake *w, struct io_uring *ring);
/* The thread, before its last look at the inbox. */
void ring_wake_sleepy(struct ring_wake *w);
/* The thread: submit what is queued and wait for one completion, unless
 * inbox_busy (its inbox, read after ring_wake_sleepy) says there is work.
 * Returns io_uring_submit_and_wait's value. */
int ring_wake_wait(struct ring_wake *w, struct io_uring *ring, int inbox_busy);
/* Any other thread, after pushing: wake the thread if it sleeps. */
void ring_wake_kick(struct ring_wake *w);
/* Wake it whether or not it said it sleeps (to stop it). */
void ring_wake_force(struct ring_wake *w);

#endif
