/* emul: releases member I/O completions at the time the spindle model says.
 *
 * The real I/O runs at once; each request is also queued on its member's
 * model, which decides when it would have completed. One timer thread per
 * volume keeps a heap of emulated completion times and releases them in
 * order, sleeping on a timerfd (it never spins); the next request of a member
 * is dispatched at the emulated time the previous one completed, so timer
 * lateness never accumulates into throughput. bench/tools/timer_probe measures
 * this machine's own timer lateness with the same wait.
 * Another thread's event loop may keep the clock instead (emul_drive_begin:
 * a FUSE over io_uring queue thread, whose replies then need no wake-up);
 * the timer thread parks meanwhile and takes the clock back at
 * emul_drive_end. Same round, same arming, same lateness compensation.
 * In virtual time (emul_create_virtual) the caller's emul_run is that thread
 * and the clock jumps from one completion to the next.
 */
#ifndef FSVOL_EMUL_H
#define FSVOL_EMUL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fsvol/model/spindle.h"

struct emul;

struct emul_io {
	struct spindle_req r; /* offset, length, write, arrival_ns set by the caller */
	struct spindle *sp;
	/* Called on the emulator's thread (no lock held) at the emulated completion
	 * time r.done_ns; it must not block. */
	void (*release)(struct emul_io *io);
	struct emul_io *next; /* on the way to the timer thread */
};

int emul_create(struct emul **out);
/* Virtual time: the same queueing, dispatch and release, but no thread and no
 * waiting. The clock starts at 0 and moves only in emul_run, which releases
 * completions in emulated-time order on the caller's thread (releases may
 * submit more, with arrival_ns >= emul_now). Submit a request arriving at t
 * after emul_run(e, t). The same inputs give the same times. */
int emul_create_virtual(struct emul **out);
/* Run the simulation until nothing is due at or before until_ns (UINT64_MAX:
 * until everything submitted has been released); returns the clock. */
uint64_t emul_run(struct emul *e, uint64_t until_ns);
/* Release what is due at the next completion time, when that is at or before
 * until_ns: the clock moves to it; else the clock moves to until_ns (nothing
 * left and until_ns UINT64_MAX: it does not move). Returns the clock. */
uint64_t emul_step(struct emul *e, uint64_t until_ns);
/* The model's clock: real monotonic ns, or the virtual clock. */
uint64_t emul_now(const struct emul *e);
int emul_is_virtual(const struct emul *e);
/* Virtual time: announce (+1) a request that will be submitted once its data
 * has moved, or say (-1) that it has been; emul_run and emul_step wait for the
 * announced ones before the clock moves, so each request gets the arrival it
 * was issued at. Call -1 after the emul_submit. */
void emul_expect(struct emul *e, int delta);
void emul_destroy(struct emul *e);
/* Queue io on its spindle (arrival = io->r.arrival_ns); io->release follows. */
void emul_submit(struct emul *e, struct emul_io *io);

/* Run fn(arg) with the emulator's lock held: nothing is submitted, dispatched
 * or released meanwhile (to change models at run time). Returns fn's value. */
int emul_locked(struct emul *e, int (*fn)(void *arg), void *arg);

/* Hold (1) or let go (0) new requests: while held they wait on the way in,
 * and what the spindles already have drains, so a model change finds them
 * idle under load. Holds nest. */
void emul_hold(struct emul *e, int hold);

/* ---- Driven: another thread's loop keeps the clock (live only) ----
 * The driver keeps a read (8 bytes) of emul_drive_fd outstanding in its own
 * event loop (an io_uring) from begin to end, and loops:
 *   emul_drive_round   take what came in, release what is due: the releases
 *                      run here, on the driver's thread;
 *   emul_drive_sleepy  just before it would wait (after its own inbox
 *                      check): arms the timer; 0 means work came in, do
 *                      not wait (loop again);
 *   (its wait)
 *   emul_drive_woke    right after the wait, whatever woke it: from here
 *                      submits on this thread cost no wake-up;
 *   emul_drive_fired   when that read completes (then read again).
 * Submits from other threads fire the timerfd when the driver sleeps and the
 * request may start before the armed deadline, as for the timer thread. */
/* The calling thread takes the clock (who names it for status, e.g. a thread
 * name). Returns once the timer thread has parked: 0, -EINVAL (virtual
 * time), -EBUSY (driven already), -errno (no timerfd). */
int emul_drive_begin(struct emul *e, const char *who);
/* The timerfd to keep a read on (valid from begin to end). */
int emul_drive_fd(const struct emul *e);
void emul_drive_round(struct emul *e);
int emul_drive_sleepy(struct emul *e);
void emul_drive_woke(struct emul *e);
void emul_drive_fired(struct emul *e);
/* The driver gives the clock back to the timer thread (on its own timerfd:
 * the driver's read may stay outstanding until its ring closes). From the
 * driver's thread, before emul_destroy; the driver no longer calls emul_drive_*. */
void emul_drive_end(struct emul *e);
/* Who keeps the clock: "fsvol-model (its own thread)", the driver's name, or
 * "virtual". */
void emul_keeper(struct emul *e, char *buf, size_t len);

/* Timer slack (MNT/ctl timer_slack_us, as the kernel's hrtimer slack): the
 * keeper of a live clock releases at once every completion due within the
 * slack of now, so deadlines closer together than it share one wake-up (on a
 * VM each costs tens of us of CPU). Such a release is early by at most the
 * slack and at most 1% of its own service time (a fast disk's replies keep
 * their times, as FUSE's ring expects a release after the data); its member's counters and the next dispatch keep the emulated times,
 * and lateness counts it as on time. 0: every deadline its own wake-up, as
 * exact as the timer allows. Virtual time has none. */
#define EMUL_SLACK_DEFAULT_NS 50000u
void emul_set_slack(struct emul *e, uint64_t ns);
uint64_t emul_slack(const struct emul *e);
/* The slack of emulators created from now on (the process's setting: a
 * volume's model may start after its settings were applied). */
void emul_set_default_slack(uint64_t ns);
uint64_t emul_default_slack(void);

/* Release lateness (real release time - emulated completion): percentiles in
 * ns of everything released so far, and the count. */
void emul_lateness(struct emul *e, double *p50, double *p99, uint64_t *count);

/* The keeper of the clock (the timer thread or its driver) arms the timer
 * `lead` ns before a deadline, lead being learnt from how late its wake-ups
 * come (a low quantile: the machine's floor).
 * One step of that learning, given how late (ns) the last wake-up was after
 * the time armed; returns the new lead. bench/tools/timer_probe uses the same. */
uint64_t emul_lead_learn(uint64_t lead, uint64_t late);

#endif
