/* engine: serves volume reads, writes and flushes on every level, asynchronously.
 *
 * A front end hands the engine a request and a completion callback; the
 * callback runs exactly once, with 0 or -errno, on whichever thread finished
 * the request (the submitter's own, a backend's, the model's clock). No
 * thread waits for a request: a request waiting for a stripe lock, a member
 * or an emulated disk is a queued object. Synchronous wrappers serve simple
 * callers (the CLI, tools).
 */
#ifndef FSVOL_ENGINE_H
#define FSVOL_ENGINE_H

#include <stdint.h>

#include "stats/stats.h"

struct vol;

enum engine_op { ENGINE_READ = STATS_READ, ENGINE_WRITE = STATS_WRITE, ENGINE_FLUSH = STATS_FLUSH };

typedef void (*engine_done_fn)(void *arg, int res);

/* Start op on [off, off+len) (len 0 and buf NULL for a flush). 0: done(arg,
 * res) follows exactly once, maybe before engine_submit returns; -EINVAL (out
 * of range) or -ENOMEM: refused, done is not called. buf stays the caller's
 * until done; any alignment and length are accepted. */
int engine_submit(struct vol *v, int op, void *buf, uint64_t off, uint64_t len, engine_done_fn done,
		  void *arg);

/* Whether the calling thread may block while member I/O runs (a FUSE worker,
 * a synchronous caller): then a file member's I/O runs on this thread, the
 * fastest way here. Threads that must not block (the model's clock, an
 * asynchronous load generator) leave it 0: their member I/O goes to a ring. */
void engine_thread_may_block(int yes);

/* Synchronous wrappers: 0 or -errno. Never call them from a completion. */
int engine_read(struct vol *v, void *buf, uint64_t off, uint64_t len);
int engine_write(struct vol *v, const void *buf, uint64_t off, uint64_t len);
int engine_flush(struct vol *v);

/* Resync/check one unit (a parity stripe, or a chunk of a mirror): compare
 * the redundancy with the data, count disagreements in *mismatches and units
 * that could not be checked for lack of redundancy in *skipped, rewrite the
 * redundancy when repair. Units: engine_resync_units (0 without redundancy). */
int engine_resync(struct vol *v, uint64_t unit, int repair, uint64_t *mismatches, uint64_t *skipped);
uint64_t engine_resync_units(const struct vol *v);
/* Rebuild one unit's part of the volume's rebuild slot from redundancy (a
 * parity stripe, a mirror chunk); the slot is in sync below the unit's end
 * from the moment it completes, if the rebuild target is still generation
 * gen's (vol_int.h). 0, -ECANCELED when the target changed, or -errno. */
int engine_rebuild(struct vol *v, uint64_t unit, unsigned gen);
/* The same for a replacement: role replace_slot's part of the unit, rebuilt
 * from redundancy onto the member in slot replace_with. */
int engine_copy(struct vol *v, uint64_t unit);
/* The logical range of a resync/rebuild unit. */
void engine_unit_range(const struct vol *v, uint64_t unit, uint64_t *off, uint64_t *len);
/* Requests in the engine now (the foreground, for throttling background work). */
unsigned engine_active(const struct vol *v);

/* Wait until every submitted request has completed (a front end stopping;
 * vol_close). */
void engine_drain(struct vol *v);
/* Engine state of a volume (vol_open / vol_close). */
int engine_init(struct vol *v);
void engine_fini(struct vol *v);

#endif
