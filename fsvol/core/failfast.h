/* failfast: md's failfast for raid1 and raid10 members, with a deadline: an
 * I/O of a member flagged failfast (SB_SLOT_FAILFAST) that has not completed
 * after failfast_ms fails the member at once (vol_fail_slot, md_error) and
 * completes with -ETIMEDOUT, so the engine serves it from another copy; the
 * late completion, when it comes, is dropped. Never the last working copy:
 * an I/O whose member the volume cannot lose keeps waiting, as md's failfast
 * never fails the last device. */
#ifndef FSVOL_FAILFAST_H
#define FSVOL_FAILFAST_H

struct vol;
struct member;
struct member_io;

/* The watchdog thread of a raid1/raid10 volume (vol_start; nothing for
 * other levels). 0 or -errno. Never on a completion. */
int ff_start(struct vol *v);
/* After the engine drained (vol_close). */
void ff_stop(struct vol *v);
/* 1 when io to slot goes through the watchdog (the member is failfast and the
 * watchdog runs). */
int ff_wanted(const struct vol *v, unsigned slot);
/* Queue io on m (slot) under the deadline: its data goes through a buffer of
 * its own, so a late completion touches nothing of the caller's. Falls back
 * to a plain queue when out of memory. */
void ff_queue(struct vol *v, struct member *m, unsigned slot, struct member_io *io);
/* member_pwrite and member_flush of the metadata thread (superblocks, the
 * bitmap) to slot's member, under the deadline when it is failfast: a timed
 * out one returns -ETIMEDOUT and fails the member. */
#include <stddef.h>
#include <stdint.h>
int ff_pwrite(struct vol *v, unsigned slot, struct member *m, const void *buf, size_t len, uint64_t off);
int ff_flush(struct vol *v, unsigned slot, struct member *m);
/* I/Os timed out since mount (status.json's failfast_timeouts). */
unsigned long ff_timeouts(const struct vol *v);

#endif
