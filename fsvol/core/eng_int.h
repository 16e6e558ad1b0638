/* eng_int: what the engine (engine.c) shares with its per-family I/O
 * (io_plain.c, io_mirror.c, io_parity.c) and its stripe locks (locks.c).
 * Nothing outside fsvol/core includes this. */
#ifndef FSVOL_ENG_INT_H
#define FSVOL_ENG_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/eng_api.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/members/member.h"
#include "fsvol/model/emul.h"
#include "layout/layout.h"
#include "stats/stats.h"

#define ENG_ALIGN 4096u
#define ENG_SEG (1u << 20)            /* a request is served in segments of at most this */
#define ENG_MAX_TRIES 4               /* replans after member failures */
#define ENG_ROUND_PLANS 8u            /* parity stripes planned per round */
#define ENG_ROUND_BUDGET (4u << 20)   /* scratch bytes a parity round may take */
#define ENG_LOCKS 1024u               /* hashed stripe/region locks */

/* A family's step: pieces were added and must be issued, or the segment is
 * done, or rq queued itself on something (the log's room, ppl.c; a
 * write-behind, write_behind.c) that kicks it back into the step. */
enum { ENG_DONE = 0, ENG_ISSUE = 1, ENG_WAIT = 4,
       ENG_PARK = 5 /* ENG_K_RESHAPE: the locks are held, park (engine.c) */ };

/* One contiguous run of memory for one member range (data-area offsets). */
struct eng_piece {
	unsigned slot;
	uint8_t op, why;
	uint64_t off, len;
	void *buf;
};

/* One member I/O after merging adjacent pieces. */
struct eng_mio {
	struct member_io io;     /* to the backend */
	struct emul_io eio;      /* to the model, when the member has one */
	struct eng_req *rq;
	struct member *m;        /* the member it went to: a spare taking over may move another into the slot */
	unsigned slot;
	uint8_t op, why, emulated;
	uint64_t off, len, t0;   /* data-area offset */
	atomic_int parts;        /* backend + model: the last one completes it */
	struct emul *virt;       /* virtual time: the model to submit to after the data */
};

/* A parity stripe planned in a round, with its buffers. */
struct eng_plan {
	struct layout_plan p;
	void *rbuf[LAYOUT_PLAN_MAX_IO];
	const uint8_t *src;      /* write: the new bytes of logical src_off.. */
	uint64_t src_off;
};

/* Scratch memory of a request, returned when the round or segment ends. */
struct eng_chunk {
	struct eng_chunk *next;
	size_t cap, used;
	uint8_t *mem;
};

struct eng_lockset {
	uint64_t bits[ENG_LOCKS / 64];
	unsigned next;           /* acquisition resumes at this bucket */
	uint8_t excl, held, want;
};

struct eng_req {
	struct vol *v;
	const struct layout_geom *geom; /* the segment's: v->geom, or a reshape's new one */
	uint64_t epoch;          /* the reshape epoch the segment was mapped in */
	struct eng_req *next;    /* run queue, lock wait list, free list */
	struct vol_waiter wait;  /* queued on the bitmap or for superblocks */
	int kind;
	unsigned flags;
	uint8_t *buf;            /* the caller's */
	uint64_t off, len;
	void (*done)(void *arg, int res); /* engine.h's engine_done_fn */
	void *arg;
	int res, state, tries;
	unsigned repl_epoch;     /* the replace epoch the segment is planned in (core/replace.c) */
	uint64_t t0, trace_parent, progress;
	atomic_uint pending;     /* member I/Os or children in flight, +1 while issuing */
	atomic_uint_fast64_t failed_now; /* members that erred in the last batch */
	atomic_int member_err, host_err;
	/* the segment being served: aligned [seg_off, seg_off + seg_len) in seg_buf */
	uint64_t seg_off, seg_len, seg_n;
	uint8_t *seg_buf;
	struct eng_chunk *bounce;
	int why;                 /* why plain data pieces are read (DATA, ALIGN) */
	struct eng_lockset lk;
	/* the family's progress through the segment */
	int phase;
	uint64_t rpos, rend;
	unsigned nplans, cap_plans;
	struct eng_plan *plans;
	struct eng_chunk *scratch;
	void *fam_priv;          /* the family's, in scratch */
	/* the batch */
	unsigned npieces, cap_pieces, nmio, cap_mio, cap_iov;
	struct eng_piece *pieces;
	struct eng_mio *mio;
	struct iovec *iov;
	/* resync */
	uint64_t unit, mismatches, skipped;
	int target, dest;        /* rebuild/copy: the role whose part is rebuilt, the slot written */
	unsigned gen;            /* rebuild: the target's generation (vol_int.h rebuild_gen) */
	int repair;
	struct eng_req *parent;  /* a child (edge reads of an unaligned write) */
	void *ppl;               /* ppl.c's hold on the round's log records (in scratch) */
	uint64_t wb_seg;         /* write-behind: seg_off + 1 of the segment whose slow legs went behind */
	void (*parked)(void *arg); /* ENG_K_RESHAPE: its locks are held (ENG_PARK), its thread goes on */
};

#define ENG_POOL_IDLE_REQS 256u

/* A volume's engine (v->eng): engine_init makes it (eng_submit.c). */
struct eng_state {
	const struct eng_family *fam;
	atomic_uint active;      /* requests between submit and completion */
	struct eng_locktab *locks;
	void (*resume)(struct vol_waiter *w); /* eng_resume: a queued request goes on */
	pthread_mutex_t pool_lock;
	struct eng_req *pool;
	unsigned pooled;
};

/* eng_req.c: the pool (a request from it is zeroed but for its arrays, and
 * belongs to v) and the scratch chunks. */
struct eng_req *eng_req_get(struct vol *v);
void eng_req_put(struct eng_req *rq);
void eng_req_free_arrays(struct eng_req *rq);
struct eng_chunk *eng_chunk_new(size_t len);
void eng_chunk_free(struct eng_chunk *c);

/* engine.c: the step machine. Run rq from its first step (ST_START); a
 * queued request's waiter resumes it (eng_resume). */
void eng_start(struct eng_req *rq);
void eng_resume(struct vol_waiter *w);
/* A write's intent through the features (the bitmap's bits): 1 go on, 0 w
 * queued, resumed once durable. */
int eng_feat_write_begin(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w);
/* This thread may block while member I/O runs (engine_thread_may_block). */
extern __thread int eng_tl_may_block;

/* Pieces at member offsets of their own (log records in the metadata area),
 * not in the data area. */
static inline int eng_why_meta(int why)
{
	return stats_why_meta(why);
}


/* In engine_active, so vol_close drains it: the callers' requests and the write-behinds. */
static inline int eng_req_counted(unsigned flags)
{
	return !(flags & ENG_F_INTERNAL) || (flags & ENG_F_BEHIND);
}

/* A RAID family's I/O: one file per family, one const table each. */
struct eng_family {
	const char *name;
	int (*read)(struct eng_req *rq);   /* ENG_ISSUE, ENG_DONE or -errno */
	int (*write)(struct eng_req *rq);
	int (*resync)(struct eng_req *rq);
	int (*rebuild)(struct eng_req *rq); /* the unit's part of role rq->target, from redundancy,
					     * written to slot rq->dest */
	uint64_t (*resync_units)(const struct layout_geom *g);
	void (*resync_range)(const struct layout_geom *g, uint64_t unit, uint64_t *off, uint64_t *len);
	uint64_t (*lock_unit)(const struct layout_geom *g);
	int parity;              /* writes exclude each other; degraded reads lock */
};

extern const struct eng_family eng_plain, eng_mirror, eng_parity;

/* A family step that maps a segment once (plain, mirror reads and writes):
 * rq->phase is ENG_ONCE_ISSUE, then ENG_ONCE_DONE. */
enum { ENG_ONCE_ISSUE, ENG_ONCE_DONE };
static inline int eng_once(struct eng_req *rq)
{
	if (rq->phase == ENG_ONCE_DONE)
		return 0;
	rq->phase = ENG_ONCE_DONE;
	return 1;
}

/* The background passes' window loop (md's sync_request per window), shared
 * by every family: a unit is walked in windows; each window is read, then
 * computed and written, then passed. rq->phase holds the step. */
enum eng_win_step {
	ENG_WIN_READ,  /* fresh scratch; queue the reads */
	ENG_WIN_WRITE, /* the reads are in: compute, queue the writes */
	ENG_WIN_NEXT,  /* the writes are done: on to the next window */
};
enum { ENG_WIN_PASS = 2, ENG_WIN_GO = 3 }; /* window(): skip this window; work on it */
_Static_assert((int)ENG_WIN_PASS != (int)ENG_ISSUE && (int)ENG_WIN_GO != (int)ENG_WAIT &&
		       (int)ENG_WIN_GO != (int)ENG_PARK && (int)ENG_WIN_PASS != (int)ENG_PARK,
	       "a window's answers differ from a step's");
struct eng_window_ops {
	/* The window at rq->rpos in *win (w: the family's window state, filled
	 * here for read and write). ENG_WIN_GO: work on it; ENG_WIN_PASS: skip it;
	 * ENG_DONE: the unit is done; -errno. It may look at rq->phase. */
	int (*window)(struct eng_req *rq, void *w, uint64_t *win);
	int (*read)(struct eng_req *rq, void *w, uint64_t win);  /* 0 or -errno; queues >= 1 piece */
	int (*write)(struct eng_req *rq, void *w, uint64_t win); /* 0 or -errno; may queue none */
};
/* A family's resync or rebuild step: ENG_ISSUE, ENG_DONE or -errno. */
int eng_window_loop(struct eng_req *rq, const struct eng_window_ops *ops, void *w);
const struct eng_family *eng_family_of(const struct layout_geom *g);

/* engine.c, for the families */
/* Acknowledge rq now (done(arg, 0), the volume counters) and go on with its
 * member writes: a write-back journal holds what it wrote. */
void eng_ack_early(struct eng_req *rq);
/* A write-behind of [off, off+len) (aligned, one segment) from buf
 * (write_behind.c): the write-mostly legs only, counted by the members, not
 * the volume; its bitmap bits are taken now: *held 1, start it with eng_kick;
 * 0, the bitmap starts it once they are durable. done(arg, res) at its end.
 * NULL: no memory. */
struct eng_req *eng_behind_new(struct vol *v, void *buf, uint64_t off, uint64_t len,
			       void (*done)(void *arg, int res), void *arg, int *held);
int eng_piece(struct eng_req *rq, unsigned slot, int op, int why, uint64_t off, uint64_t len, void *buf);
void *eng_alloc(struct eng_req *rq, size_t len);
void eng_scratch_free(struct eng_req *rq);
struct eng_plan *eng_plan_new(struct eng_req *rq);
/* The members to treat as failed at logical offset off (a rebuilding member
 * is in sync below its checkpoint). */
static inline uint64_t eng_failed_at(const struct eng_req *rq, uint64_t off)
{
	return vol_failed_at(rq->v, off);
}

/* engine.c: rewrite slot's part of a unit from redundancy, as a rebuild does,
 * without waiting: done(arg, res) on a completion (a bad block's fix,
 * bbl_vol.c). 0 or -errno. */
int engine_fix(struct vol *v, unsigned slot, uint64_t unit, void (*done)(void *arg, int res), void *arg);

/* locks.c: acquire in bucket order; 0 when rq was queued (it is kicked when
 * a bucket frees), 1 when every bucket is held. */
struct eng_locktab;
int eng_locks_create(struct eng_locktab **out, void (*kick)(struct eng_req *rq));
void eng_locks_destroy(struct eng_locktab *t);
void eng_locks_set(struct eng_lockset *l, uint64_t unit, uint64_t off, uint64_t len, int excl);
int eng_locks_take(struct eng_locktab *t, struct eng_req *rq);
void eng_locks_drop(struct eng_locktab *t, struct eng_req *rq);
void eng_kick(struct eng_req *rq);
/* The volume's geometry changed (a reshape's end, the volume still). */
void eng_geom_changed(struct vol *v);
/* engine.c, for reshape.c (on the sync thread: these wait). Hold the locks
 * of a window [off, off+len) in the volume's geometry and g (all: every
 * bucket, the volume stands still); NULL without memory. */
struct eng_req *eng_reshape_hold(struct vol *v, const struct layout_geom *g, uint64_t off, uint64_t len,
				 int all);
/* Drop them; res (0 or -errno) ends the window's trace line. */
int eng_reshape_release(struct eng_req *hold, int res);
/* A read or write in geometry g under the hold's locks, counted below the
 * layer and traced as reshape: 0 or -errno. */
int eng_reshape_io(struct eng_req *hold, int op, const struct layout_geom *g, void *buf, uint64_t off,
		   uint64_t len);
/* Add the units of [off, off+len) to a set (a reshape window: both geometries). */
void eng_locks_add(struct eng_lockset *l, uint64_t unit, uint64_t off, uint64_t len);


#endif
