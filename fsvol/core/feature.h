/* feature: how the volume and the engine reach a feature (md's
 * bitmap_operations, raid5-log's log_* interface): the stripe log (PPL or
 * journal, ppl.c), the write-intent bitmap (bitmap_vol.c), the bad-block
 * lists (bbl_vol.c), write-behind (write_behind.c), failfast (failfast.c)
 * and safe mode (safe_mode.c) are one const table each, listed once in
 * vol_features[] (feature.c). vol_open keeps the ones that are on for the
 * volume in v->feat, in that order; the engine, the metadata thread and
 * volume.c call them only through it, never by name (the call graph has no
 * edge from them to a feature; tests/tools/callgraph.py). A NULL hook is
 * skipped. A feature reaches the engine through eng_api.h and the volume's
 * md_error side through vol_int.h's vol_error.c calls, nothing above.
 *
 * The hooks, in the order a request meets them (docs/engine.md, "Features"):
 *   write_start   ST_START, a write: 1 go on, 0 w queued (md_write_start)
 *   read_locks    planning a read segment: 1 when it must take its locks
 *   write_begin   ST_LOCK, a write segment: 1 go on, 0 w queued (the bits)
 *   failed_at     the family's plan: members to treat as failed at off
 *   flush_ok      a flush's step: 1 go on, 0 rq queued (kicked later)
 *   flush_member  a flush: slot (not a role) is flushed too (the log member)
 *   issue         a member I/O: 1 when the feature queued it itself
 *   settle        after a batch: take members out of *bad; >0 the segment
 *                 ends once the rest are failed (rq->res set), <0 it ends
 *                 now with that errno
 *   unit_lost     a rebuild unit the family could not recover: 0 done
 *   unit_done     ST_SEG_END of a background unit (locks still held)
 *   write_end     ST_SEG_END of a write segment
 *   scratch_free  the round's or segment's scratch is given back
 *   write_done    the end of a write that write_start let go */
#ifndef FSVOL_FEATURE_H
#define FSVOL_FEATURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct vol;
struct vol_waiter;
struct eng_req;
struct member;
struct member_io;

struct vol_feature {
	const char *name;
	/* ---- lifecycle (volume.c, vol_md.c), each in list order ---- */
	/* vol_open, after the slots, the counters and a reshape are known:
	 * 1 on (kept in v->feat), 0 off, -errno (err says why) */
	int (*open)(struct vol *v, char *err, size_t errlen);
	int (*start)(struct vol *v);        /* vol_start: its threads; 0 or -errno (logged) */
	void (*quiesce)(struct vol *v);     /* vol_close, before the engine drains */
	void (*close)(struct vol *v);       /* vol_close, after the last write and the metadata thread */
	void (*stop)(struct vol *v);        /* vol_close, the very end (threads that outlive the writes) */
	void (*free)(struct vol *v);        /* vol_free */
	/* the metadata thread: before the superblocks are written (1 when it
	 * failed members: their change joins this round); a round's work for
	 * flags (VOL_MD_*); the next time it wants a round (UINT64_MAX: none) */
	int (*sb_write)(struct vol *v);
	void (*md_work)(struct vol *v, unsigned flags, int stopping);
	uint64_t (*md_due)(const struct vol *v);
	void (*status)(struct vol *v, FILE *f); /* MNT/status lines */
	/* ---- engine hooks (the order above) ---- */
	int (*write_start)(struct vol *v, struct vol_waiter *w);
	int (*read_locks)(const struct vol *v);
	int (*write_begin)(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w);
	uint64_t (*failed_at)(const struct vol *v, uint64_t off);
	int (*flush_ok)(struct eng_req *rq);
	int (*flush_member)(const struct vol *v, unsigned slot);
	int (*issue)(struct vol *v, struct member *m, unsigned slot, struct member_io *io);
	int (*settle)(struct eng_req *rq, uint64_t *bad);
	int (*unit_lost)(struct eng_req *rq);
	void (*unit_done)(struct eng_req *rq);
	void (*write_end)(struct vol *v, uint64_t off, uint64_t len);
	void (*scratch_free)(struct eng_req *rq);
	void (*write_done)(struct vol *v);
};

/* Every feature, in hook order (feature.c). */
extern const struct vol_feature *const vol_features[];
extern const struct vol_feature vol_feat_log, vol_feat_bitmap, vol_feat_bbl, vol_feat_wb, vol_feat_ff,
	vol_feat_safe;

/* for (f of the volume's features) */
#define VOL_FEAT_EACH(v, f) \
	for (const struct vol_feature *const *f##_it = (v)->feat, *f; (f = *f##_it); f##_it++)

/* feature.c: the lifecycle loops */
int vol_feat_open(struct vol *v, char *err, size_t errlen);
void vol_feat_start(struct vol *v);
void vol_feat_quiesce(struct vol *v);
void vol_feat_close(struct vol *v);
void vol_feat_stop(struct vol *v);
void vol_feat_free(struct vol *v);
int vol_feat_sb_write(struct vol *v);
void vol_feat_md_work(struct vol *v, unsigned flags, int stopping);
uint64_t vol_feat_md_due(const struct vol *v);
void vol_feat_status(struct vol *v, FILE *f);

#endif
