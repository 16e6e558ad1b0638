/* fuse_uring: FUSE over io_uring for a libfuse 3.14 session.
 *
 * libfuse keeps the mount, INIT and its /dev/fuse loop (forgets, interrupts,
 * whatever comes before the ring is ready); fsvol drives the ring: it hooks
 * libfuse's device I/O (fuse_session_custom_io) to offer FUSE_OVER_IO_URING
 * in the INIT reply, then registers ring entries on every CPU's queue and
 * hands each request that arrives there to libfuse's dispatcher; the reply
 * (from whichever thread completes the request) goes back through the ring
 * with COMMIT_AND_FETCH.
 */
#ifndef FSVOL_FUSE_URING_H
#define FSVOL_FUSE_URING_H

#include <stddef.h>

struct fuse_session;

enum fu_transport { FU_TRANSPORT_AUTO, FU_TRANSPORT_DEV, FU_TRANSPORT_URING };

/* "auto", "dev", "uring" -> the value; -1 when unknown. */
int fu_transport_parse(const char *s);
const char *fu_transport_name(int t);

/* After fuse_session_mount: take over se's device I/O. With FU_TRANSPORT_DEV
 * nothing is hooked. quiet: no informational log lines (a foreground mount
 * keeps a clean stderr; warnings still go). One session per process. 0 or
 * -errno with a message. */
int fu_attach(struct fuse_session *se, int want, int quiet, char *err, size_t errlen);
/* While a request that came through the ring is being dispatched (on its
 * queue thread): the entry's payload buffer, where a read of len bytes may be
 * made in place (the reply then needs no copy); page-aligned, valid until the
 * reply. NULL otherwise, or when len does not fit. */
void *fu_request_buffer(size_t len);
/* The session loop has ended: requests that still arrive through the ring
 * are not dispatched (the kernel fails them when the device closes, as it
 * does those the stopped loop left); returns once no ring thread is handing
 * one to the engine, so a drain that follows sees every request. */
void fu_quiesce(void);
/* 1 on a ring thread: its loop also completes file members' I/O, so what
 * runs there must not wait for I/O (fuse_front moves such work away). */
int fu_on_ring_thread(void);
/* The model's clock may live on a queue thread's ring: emul_of(arg) gives
 * the volume's emulator (NULL while none runs). Once the ring serves, the
 * first queue thread that wakes with an emulator to keep takes its clock
 * (emul_drive_begin) and commits every release on its own ring, so the
 * volume's entries gather there and no release wakes another thread; it goes
 * back to the emulator's thread when the ring threads stop (fu_stop) or a
 * timer read fails. Without the ring the emulator keeps its own thread. Call before
 * the session loop. */
struct emul;
void fu_model_clock(struct emul *(*emul_of)(void *arg), void *arg);
/* Stop the ring threads (the engine has drained). */
void fu_stop(void);
/* The transport in use, for MNT/status and the log: "uring (2 queues x 32
 * entries)" or "dev" with the reason the ring is not used. */
void fu_describe(char *buf, size_t len);
/* While the ring serves: the requests each queue thread dispatched, "q0
 * 1234, q1 567" (an emulated volume's gather on the thread that keeps the
 * model's clock); "" otherwise. */
void fu_describe_threads(char *buf, size_t len);

#endif
