/* write_behind: md's write-behind on raid1 (--write-behind N with
 * write-mostly members): a write is acknowledged once the other copies have
 * it, while its copy to the write-mostly legs (a slow or remote disk) is still
 * on its way; at most N such writes at a time. Their write-intent bits stay
 * set until the slow legs have them, so a crash resyncs those regions. */
#ifndef FSVOL_WRITE_BEHIND_H
#define FSVOL_WRITE_BEHIND_H

#include <stdint.h>
#include <stdio.h>

struct vol;
struct eng_req;

/* At assembly: a tracker when the volume is raid1 with write_behind set
 * (v->wb stays NULL otherwise). 0 or -ENOMEM. */
int wb_open(struct vol *v);
void wb_close(struct vol *v);
/* The thread that starts write-behinds (vol_start: after any fork; never on
 * a completion); stopped by wb_close, or after the engine drained. */
int wb_thread_start(struct vol *v);
void wb_thread_stop(struct vol *v);

/* A write segment [off, off+len) of rq whose write-mostly legs wm are
 * present: 1 when those legs may be written behind (call wb_start), 0 when rq
 * writes them itself (the limit is reached, a flush waits, too long), ENG_WAIT
 * when rq was queued behind an overlapping write-behind (no write overtakes
 * one on a slow leg: md serializes them too). */
int wb_admit(struct eng_req *rq, uint64_t off, uint64_t len);
/* Copy data and start its write-behind. 0, or -ENOMEM (then rq writes the
 * slow legs itself). */
int wb_start(struct eng_req *rq, uint64_t off, uint64_t len, const void *data);
/* A read of [off, off+len) that only a write-mostly leg can serve: 1 when no
 * write-behind overlapping it is in flight, else 0 with rq queued (md waits
 * for behind writes before reading a write-mostly device). */
int wb_read_ok(struct eng_req *rq, uint64_t off, uint64_t len);
/* A flush: 1 when no write-behind is in flight, else 0 with rq queued; new
 * writes wait for their slow legs meanwhile, so it never starves. */
int wb_flush_ok(struct eng_req *rq);

struct wb_counts {
	uint64_t limit, inflight, peak, behind, full; /* full: writes that waited for the slow leg (limit) */
};
void wb_counts(struct vol *v, struct wb_counts *c);
/* "write-behind: 3/256 in flight ..." for MNT/status; nothing without. */
void wb_status(struct vol *v, FILE *f);
/* ,"write_behind":{...} or null, for status.json. */
void wb_status_json(struct vol *v, FILE *f);

#endif
