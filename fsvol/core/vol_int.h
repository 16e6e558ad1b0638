/* vol_int: struct vol, for fsvol/core only (and white-box unit tests). Everyone
 * else sees an opaque struct vol and the calls of volume.h. It includes only
 * what lies below the volume (not volume.h): the engine and the bitmap use it
 * without an include circle through volume.h (tests/tools/include_cycles.sh). */
#ifndef FSVOL_VOL_INT_H
#define FSVOL_VOL_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/core/vol_opts.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/sb.h"
#include "fsvol/model/emul.h"
#include "layout/layout.h"
#include "stats/stats.h"

struct vol;
struct spindle;

struct eng_state;
struct vol_feature; /* core/feature.h */
#define VOL_FEAT_MAX 8 /* features on for one volume, at most */
struct ppl_log;

/* Something queued on the volume until a thread resumes it: a write waiting
 * for its write-intent bits, an acknowledgement waiting for superblocks.
 * The engine's request embeds one; the bitmap and the metadata thread know
 * nothing else of it. */
struct vol_waiter {
	struct vol_waiter *next;
	int res;                             /* set before resume: 0, or the host's -errno */
	void (*resume)(struct vol_waiter *w); /* any thread, no lock held */
	uint64_t trace_id;                   /* its request's (0: none): the metadata I/O done
					      * for it shows under it (core/meta_io.h) */
};
struct vol_bitmap;
struct vol_bbl;
struct emul;
struct stats_dev;
struct stats_trace;

/* What the engine and the model keep per opened member, beside it
 * (v->members[i] <-> v->mstate[i]): neither the backend's business nor the
 * front ends'. */
struct vol_mstate {
	atomic_uint pending;           /* member I/O in flight: read balancing; vol_remove waits for 0 */
	atomic_uint_fast64_t head;     /* member offset where its last I/O ended */
	struct spindle *spindle;       /* emulated disk (allocated once, kept till close) */
	atomic_int modeled;            /* 1: completions wait for the spindle model */
};

/* core/sync.c: the background passes, one typed machine (md's
 * MD_RECOVERY_SYNC/RECOVER/CHECK/REQUESTED/RESHAPE). Names only at the edge. */
enum vol_pass {
	VOL_PASS_NONE,
	VOL_PASS_RESYNC,   /* after an unclean shutdown: make the redundancy agree */
	VOL_PASS_RECOVERY, /* rebuild the rebuilding member from the others */
	VOL_PASS_REPLACE,  /* build a spare from the role it is to take */
	VOL_PASS_CHECK,    /* count what disagrees */
	VOL_PASS_REPAIR,   /* rewrite what disagrees */
	VOL_PASS_RESHAPE,  /* move the data to a new geometry (core/reshape.c) */
	VOL_PASS_COUNT
};

struct vol {
	struct layout_geom geom;
	struct sb sb;                   /* the volume's superblock (truth) */
	struct vol_opts opts;
	unsigned nslots;                /* members + spares */
	struct member *slot[SB_MAX_SLOTS]; /* NULL when missing */
	struct member *members;         /* the opened members: given, then added */
	struct vol_mstate *mstate;      /* the engine's state of each, same index */
	unsigned nmembers;
	atomic_uint_fast64_t failed;    /* bit i: slot i cannot be used */
	uint64_t data_offset;
	pthread_mutex_t state_lock;     /* superblock updates, member state changes */
	atomic_uint peek;               /* status readers inside a member's filters (vol_peek_wait) */
	struct eng_state *eng;          /* the engine's: family, stripe locks, request pool */
	atomic_uint rr;                 /* round-robin cursor */
	struct stats_dev *vstats;       /* above the mapping layer */
	_Atomic int stats_level;        /* enum vol_stats_level, switchable at run time */
	struct stats_trace *trace;
	struct emul *_Atomic emul;      /* NULL unless some member has (had) a model */
	char model[256];                /* the --model spec, for status */
	unsigned modeled;               /* members with a model */
	struct adapter *adapters;       /* buses the members' disks share (vol_model.c) */
	unsigned nadapters;
	int started;                    /* vol_start ran: threads may exist */
	uint64_t start_ns;
	_Atomic uint64_t reset_ns;      /* counters last zeroed (start_ns until a reset) */
	int was_dirty;                  /* not shut down cleanly last time */
	int q_rewrite;                  /* raid6 la/ra from before format 5: a resync rewrites Q (q_order.c) */
	atomic_uint dirtied;            /* times the volume became owed a resync while running */
	/* background passes, one at a time (core/sync.c): resync, check, repair,
	 * recovery, replace; opaque outside sync.c */
	struct vol_sync *sync;
	struct vol_reshape *reshape;    /* core/reshape.c; NULL: never reshaped since mount */
	/* recovery: one slot at a time is rebuilt (md recovers one at a time
	 * too); below rebuild_pos (logical bytes) it is in sync, above it it
	 * counts as failed. -1: none. rebuild_gen changes with every new target
	 * (a spare taking over, a re-add, the target failing, the end), so work
	 * done for an earlier one never moves the checkpoint of the next; the
	 * three change together under rebuild_lock (taken after state_lock and
	 * the bitmap's lock, never before). */
	atomic_int rebuild_slot;
	atomic_uint_fast64_t rebuild_pos;
	atomic_uint rebuild_gen;
	pthread_mutex_t rebuild_lock;
	struct vol_bitmap *bitmap;      /* write-intent bitmap (core/bitmap_vol.c), NULL: none */
	struct vol_bbl *bbl;            /* the members' bad-block lists (core/bbl_vol.c), NULL: none */
	/* replace (md's want_replacement, core/replace.c): role replace_slot is
	 * rebuilt onto the member in spare slot replace_with while the role keeps
	 * serving; every write to the role goes to both. -1: none. Below
	 * replace_pos (logical bytes) the replacement holds the role. While
	 * replace_epoch is odd the role has failed and the metadata thread has
	 * yet to give it to its replacement: writes wait in replace_waiters
	 * (rebuild_lock) and are planned again. */
	atomic_int replace_slot, replace_with;
	atomic_uint_fast64_t replace_pos;
	atomic_uint replace_epoch;
	struct vol_waiter *replace_waiters;
	/* the metadata thread (core/vol_md.c, md's md thread): superblock
	 * writes, the bitmap's writes, starting passes; never a completion */
	pthread_mutex_t md_lock;
	pthread_cond_t md_cond;
	pthread_t md_thread;
	atomic_int md_running;
	int md_stop;
	atomic_uint md_flags;           /* VOL_MD_*: what the thread is asked to do */
	atomic_uint_fast64_t sb_seq_want, sb_seq_done; /* superblock changes made / on the members */
	atomic_uint_fast64_t fail_pending; /* slots failed on a completion, not yet in v->sb */
	struct vol_waiter *sb_waiters;  /* acknowledgements waiting for sb_seq_done */
	pthread_cond_t sb_done_cond;    /* md_lock: sb_seq_done moved (vol_md_sync waits on it) */
	struct ppl_log *ppl;            /* partial parity log (core/ppl.c), NULL: none */
	/* the features on for this volume, in hook order, NULL-terminated
	 * (core/feature.h; set by vol_open) */
	const struct vol_feature *feat[VOL_FEAT_MAX + 1];
	/* vol_md.c's blocking wait for the superblocks (vol_md_sync, vol_error.c) */
	void (*md_sync)(struct vol *v);
	/* vol_md.c's thread start, for the engine's first write of a volume
	 * served without vol_start */
	int (*md_start)(struct vol *v);
	/* sync.c's pass start and want, for vol_pass_start / vol_pass_want
	 * (vol_error.c): recovery, replace and reshape ask for passes that
	 * the sync thread runs, which calls them */
	int (*pass_start)(struct vol *v, enum vol_pass pass);
	void (*pass_want)(struct vol *v, enum vol_pass pass);
	/* md's per-device flags at run time (core/vol_flags.c, write_behind.c, failfast.c) */
	atomic_uint failfast_ms;        /* the failfast deadline; 0: VOL_FAILFAST_MS_DEFAULT */
	struct vol_wb *wb;              /* write-behind (core/write_behind.c), NULL: none */
	struct vol_ff *ff;              /* failfast watchdog (core/failfast.c), NULL: none */
	/* md's safe mode (core/safe_mode.c): clean while no write is in flight
	 * for safe_mode_delay; a write waits for the dirty mark */
	atomic_int sm_state;            /* safe_mode.c's SM_* */
	atomic_uint sm_delay_ms;        /* md's safe_mode_delay; 0: dirty until the umount */
	atomic_uint_fast64_t writes_pending; /* md's writes_pending: write requests in flight */
	atomic_uint_fast64_t sm_idle_ns; /* when the last write ended */
	atomic_int sm_armed;            /* the metadata thread looks again at vol_safe_due */
	struct vol_waiter *sm_waiters;  /* md_lock: writes waiting for the dirty mark */
	atomic_uint_fast64_t sm_marks;  /* clean and dirty marks written */
	int sm_lapsed;                  /* md_lock: virtual time: the clean mark came due while idle */
	atomic_uint rmw_level;          /* md's rmw_level (raid4/5/6 writes, layout/plan.c) */
};

/* md_flags (md's MD_SB_CHANGE_PENDING, MD_RECOVERY_NEEDED, the bitmap daemon) */
enum {
	VOL_MD_SB_CHANGE = 1u << 0, /* the in-memory superblock changed: write it */
	VOL_MD_RECOVERY = 1u << 1,  /* a member failed or came: a spare may take over */
	VOL_MD_BITMAP = 1u << 2,    /* writes wait for write-intent bits */
	VOL_MD_TICK = 1u << 3,      /* internal: the bitmap's lazy clearing is due */
	VOL_MD_BBL = 1u << 4,       /* bad blocks listed: probe their members, fix them (core/bbl_vol.c) */
	VOL_MD_SAFE = 1u << 5,      /* safe mode: writes wait for the dirty mark, or the volume went idle */
};

/* core/safe_mode.c: md's safe mode */
#define VOL_SAFE_MODE_DELAY_MS 200u /* md's default safe_mode_delay */
void vol_safe_init(struct vol *v);
/* The mount's superblocks: whether they say clean (a volume owed no resync). */
int vol_safe_open(struct vol *v);
/* A write request starts (the engine, before its first member I/O): 1 when
 * the superblocks say dirty, 0 when w was queued (the metadata thread marks
 * them dirty, then resumes it). Either way vol_safe_end follows. */
int vol_safe_begin(struct vol *v, struct vol_waiter *w);
void vol_safe_end(struct vol *v);
/* The metadata thread: mark dirty for the queued writes; clean when idle
 * for the delay. Never on a completion. */
void vol_safe_run(struct vol *v);
/* When vol_safe_run must look again (CLOCK_MONOTONIC ns; UINT64_MAX: when woken). */
uint64_t vol_safe_due(const struct vol *v);
/* Its line of MNT/status; its status.json members (each with a leading comma). */
void vol_safe_status(struct vol *v, FILE *f);
void vol_safe_json(struct vol *v, FILE *f);

/* core/vol_flags.c (also in volume.h): a slot's SB_SLOT_* read without a
 * lock; the failfast deadline in ms */
unsigned vol_slot_flags(const struct vol *v, unsigned slot);
#define VOL_FAILFAST_MS_DEFAULT 1000u
unsigned vol_failfast_ms(const struct vol *v);

/* core/vol_md.c: the metadata thread */
void vol_md_init(struct vol *v);
void vol_md_destroy(struct vol *v);
/* Start the thread (vol_start, or the first write of a volume served
 * without it). 0 or -errno. Never on a completion. */
int vol_md_start(struct vol *v);
int vol_md_running(struct vol *v);
/* Stop it after the last write: what is queued is done first. */
void vol_md_stop(struct vol *v);
/* core/vol_error.c: md_error's side, callable from any feature and any
 * completion; it calls nothing above it (docs/engine.md, "Features"). */
/* Ask the thread for flags (VOL_MD_*). Any thread, any context: no I/O. */
void vol_md_wake(struct vol *v, unsigned flags);
/* The in-memory superblock changed (state lock held): the thread writes it,
 * and acknowledgements wait for it. The caller wakes the thread after
 * dropping the lock. */
void vol_sb_change_locked(struct vol *v);
/* Take the state lock, and record in v->sb the failures marked on
 * completions meanwhile. Never on a completion (it may wait for a
 * superblock write). */
void vol_state_lock(struct vol *v);
/* A member just taken out of its slot: wait until no status reader is still
 * inside it, then it may be closed. */
void vol_peek_wait(struct vol *v);
/* Slot failed (a completion may call it: atomics and a wake only): the
 * thread records it in the superblock (SB_FAILED, events) and writes it;
 * acknowledgements wait for that; a spare may take over. */
void vol_md_mark_failed(struct vol *v, unsigned slot);
/* md_lock held: queue w on list for the metadata thread and wake it for
 * flag (virtual time waits for it); vol_md_resume resumes a taken list. */
void vol_md_queue_locked(struct vol *v, struct vol_waiter **list, struct vol_waiter *w, unsigned flag);
void vol_md_resume(struct vol *v, struct vol_waiter *w);
/* A write or flush about to be acknowledged: 1 when no superblock change
 * is pending, 0 when w was queued (the thread resumes it once written). */
int vol_md_sb_wait(struct vol *v, struct vol_waiter *w);
/* Wait until every change made so far is on the members (ctl, tests; may
 * block: never on a completion). */
void vol_md_sync(struct vol *v);
/* 1 on a metadata thread (md_main marks its own). */
int vol_md_on_thread(void);
void vol_md_thread_mark(void);
/* The failures marked since into the superblock (state lock held). */
void vol_md_apply_fails(struct vol *v);

/* 1 on a thread running the engine's steps (a completion, a request's step;
 * the engine's trampoline sets it): no superblock write, thread start or
 * join may happen there (docs/engine.md, "Member failures"). Checked always:
 * it is cheap. */
extern __thread int eng_tl_running;
static inline int eng_on_completion(void)
{
	return eng_tl_running;
}
void eng_completion_abort(const char *what);
/* ENOSPC, EDQUOT, EAGAIN and ENOMEM are the host's conditions, not the
 * member's: the I/O fails, no member does (docs/engine.md). */
static inline int vol_host_errno(int res)
{
	return res == -ENOSPC || res == -EDQUOT || res == -EAGAIN || res == -ENOMEM;
}
/* The members failed now (vol_error.c). */
uint64_t eng_failed(const struct vol *v);
#define VOL_NOT_ON_COMPLETION(what) \
	do { \
		if (eng_on_completion()) \
			eng_completion_abort(what); \
	} while (0)

/* A member failed (md's md_error): the one call by which the engine, the
 * bitmap and the user's fail (vol_fail.c) report it. Any thread, a
 * completion too: it marks, the metadata thread records and writes. */
void vol_fail_slot(struct vol *v, unsigned slot, int error);

/* core/vol_sb.c: one superblock to m (v: a running volume's member, counted,
 * traced, under failfast; NULL: create's, plain). 0 or -errno. */
int vol_sb_write(struct member *m, const struct sb *s, struct vol *v);

/* Calls of the volume used only inside fsvol/core (volume.h is the public
 * face). */
/* Stop the running pass for good (vol_close): none starts after it. */
void vol_sync_stop(struct vol *v);
/* The members that must be treated as failed for logical offset off: the
 * failed mask, less a rebuilding member below its checkpoint. */
uint64_t vol_failed_at(const struct vol *v, uint64_t off);
/* The replacement failed (the engine saw an error on it): the replace ends;
 * marked only, the metadata thread writes the superblocks. */
void vol_replace_abort(struct vol *v, int error);
/* The replacement holds the whole role: swap it in; the replaced member is
 * marked faulty (md). */
void vol_replace_done(struct vol *v);
/* core/replace.c, the rest of a replace's life: the copy of role reached
 * pos (sync.c); its checkpoint to the superblocks; it stopped on an error
 * (the record goes). */
void vol_replace_advance(struct vol *v, int role, uint64_t pos);
void vol_replace_checkpoint(struct vol *v);
void vol_replace_stop(struct vol *v, int role, int error);
/* The role being replaced failed (vol_fail_slot, before the failed mask says
 * so; a completion may call it: a leaf lock only). */
void vol_replace_role_failing(struct vol *v);
/* The engine: the epoch a write's plan is made in; a write whose epoch moved
 * is planned again, and waits first while a takeover is to come: 1 when w is
 * queued (resumed by vol_replace_release), 0 to plan now. *epoch: the epoch
 * its new plan is made in. Any thread. */
unsigned vol_replace_epoch(const struct vol *v);
int vol_replace_wait(struct vol *v, struct vol_waiter *w, unsigned *epoch);
/* The metadata thread, state lock held: the replacement of a failed role
 * takes it, from what it has built (md). 1 when a takeover was due: call
 * vol_replace_release once the state lock is dropped. */
int vol_replace_takeover(struct vol *v);
void vol_replace_release(struct vol *v);
/* The replace ends without a swap: no pair, no record (state lock held; recovery.c). */
void vol_replace_end(struct vol *v);
/* vol_open: the replace the superblocks record resumes (or, its role gone,
 * its replacement takes the role); vol_start: the pass, after a recovery or
 * the resync a crash owes, from the first region the bitmap marks when the
 * volume was not shut down cleanly. */
void vol_replace_load(struct vol *v);
void vol_replace_resume(struct vol *v);
/* The metadata thread (a member failed or came): a spare at hand takes over
 * and the recovery starts. Never on a completion. */
void vol_recovery_kick(struct vol *v);
/* Start the model's timer thread (vol_start, or the first model set at run time). */
int vol_model_start(struct vol *v);
/* The adapters' counters, one line each, for MNT/status (nothing without adapters). */
void vol_model_status(struct vol *v, FILE *f);
/* The same as a JSON member, "adapters":[{...}], for stats.json (not wired yet:
 * fsvol stat's strict reader, stats/json.c, must accept the key first). */
void vol_model_json(struct vol *v, FILE *f);
/* Write the current superblock state to every present member but the failed
 * ones (their superblocks keep what they knew when they failed). The first
 * error, or 0. */
int vol_write_sbs(struct vol *v); /* never on a completion */
/* q_order.c: a raid6 la/ra volume whose Q predates md's order owes a
 * resync that rewrites it (v->q_rewrite); refused degraded. 0 or -EINVAL. */
int vol_q_order_open(struct vol *v, uint64_t failed, char *err, size_t errlen);
/* that resync ended whole: the superblocks record md's order */
void vol_q_order_done(struct vol *v);
/* Read a member's superblock into c (errors in c->read_error/decode_error). */
int vol_read_sb(struct member *m, struct sb_candidate *c);

/* The engine's state of m, an opened member of v. */
static inline struct vol_mstate *vol_ms(const struct vol *v, const struct member *m)
{
	return &v->mstate[m - v->members];
}

/* vol_model.c: in virtual time, a thread that runs the model's clock while the
 * volume closes (NULL when the clock is real); stop it after the last I/O. */
void *vol_model_pump_start(struct vol *v);
void vol_model_pump_stop(void *pump);

/* core/volume.c: a replace under way, seen from slot: VOL_REPLACED (the role
 * being replaced), VOL_REPLACING (its replacement), 0; the other end in *other. */
enum { VOL_REPLACED = 1, VOL_REPLACING };
int vol_replace_pair(const struct vol *v, unsigned slot, int *other);

/* core/recovery.c: slot s holds a spare free for any role (not a
 * replacement, not the journal); swap two slots' members and entries (state
 * lock held); role k's recovery onto the member in slot s from logical pos
 * (0: a spare taking over; a replacement keeps what it built); the idle
 * spares into the lowest spare slots (a grow takes those, md takes any). */
int vol_idle_spare(const struct vol *v, unsigned s);
void vol_slot_swap(struct vol *v, unsigned a, unsigned b);
void vol_take_over(struct vol *v, unsigned k, unsigned s, uint64_t pos);
void vol_spares_first(struct vol *v);

/* core/volume.c: write slot's superblock (nothing for a failed member). */
int vol_write_sb_slot(struct vol *v, unsigned slot);

/* core/vol_numbers.c: the lowest Number no used slot entry holds (slot
 * except left out: it is about to be reused); give every used entry without
 * one a Number and clear those of empty ones (assembly). */
unsigned vol_number_free(const struct vol *v, int except);
void vol_numbers_fix(struct vol *v);

/* core/recovery.c */
/* Recovery of generation gen done: its slot becomes active. 0 (nothing
 * changes) when the target changed meanwhile or is not wholly rebuilt. */
int vol_recovery_done(struct vol *v, unsigned gen);

/* core/sync.c: the background passes (enum vol_pass above). */
const char *vol_pass_name(enum vol_pass p);
/* The pass a name gives, or -EINVAL. */
int vol_pass_parse(const char *name);
int vol_sync_create(struct vol *v);
void vol_sync_destroy(struct vol *v);
/* Start pass now: 0, -EBUSY while one runs (it goes on with a wanted pass
 * when it ends), -ESHUTDOWN after vol_sync_stop, -EINVAL. Never on a
 * completion. */
int vol_pass_start(struct vol *v, enum vol_pass pass);
/* Ask for pass (recovery, replace) while another runs: it gives way. */
void vol_pass_want(struct vol *v, enum vol_pass pass);
/* A resync is owed (an unclean shutdown, a write the host
 * refused) and has yet to complete. */
int vol_resync_owed(const struct vol *v);
/* Owed and not running now (MNT/status "resync pending", status.json). */
int vol_resync_pending(const struct vol *v);
/* The rebuild target is slot: it is no longer (a new generation); 1 when it
 * was. Only the rebuild lock: safe on a completion. */
int vol_rebuild_drop(struct vol *v, int slot);
/* A new rebuild target (slot, or -1 for none) from logical position pos:
 * a new generation. State lock held. */
void vol_rebuild_set(struct vol *v, int slot, uint64_t pos);
/* Move the checkpoint of generation gen up to pos (logical bytes); 0 when gen
 * is no longer the volume's (the target changed meanwhile). */
int vol_rebuild_advance(struct vol *v, unsigned gen, uint64_t pos);
/* The superblock's checkpoint (member bytes: rows of every member below it are
 * in sync, md's recovery_offset) from the logical one, and back. The round
 * trip never moves the checkpoint up. */
uint64_t vol_rebuild_to_member(const struct vol *v, uint64_t logical);
uint64_t vol_rebuild_from_member(const struct vol *v, uint64_t moff);

/* The volume's clock, ns: the model's in a simulation (virtual time), else the
 * real one (stats_now). Inline: the engine, the metadata I/O and safe mode
 * read it without including one another. */
static inline uint64_t vol_now(const struct vol *v)
{
	struct emul *e = atomic_load_explicit(&((struct vol *)v)->emul, memory_order_acquire);
	return e && emul_is_virtual(e) ? emul_now(e) : stats_now();
}

#endif
