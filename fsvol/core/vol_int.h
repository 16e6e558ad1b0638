/* vol_int: struct vol, for fsvol/core only (and white-box unit tests). Everyone
 * else sees an opaque struct vol and the calls of volume.h. */
#ifndef FSVOL_VOL_INT_H
#define FSVOL_VOL_INT_H

#include "fsvol/core/volume.h"

struct eng_state;
struct vol_bitmap;
struct emul;
struct stats_dev;
struct stats_trace;

struct vol {
	struct layout_geom geom;
	struct sb sb;                   /* the volume's superblock (truth) */
	struct vol_opts opts;
	unsigned nslots;                /* members + spares */
	struct member *slot[SB_MAX_SLOTS]; /* NULL when missing */
	struct member *members;         /* the opened members: given, then added */
	unsigned nmembers;
	atomic_uint_fast64_t failed;    /* bit i: slot i cannot be used */
	uint64_t data_offset;
	pthread_mutex_t state_lock;     /* superblock updates, member state changes */
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
	atomic_uint dirtied;            /* times the volume became owed a resync while running */
	/* background passes, one at a time (core/sync.c): resync, check, repair,
	 * and recovery (a member rebuilt from redundancy, core/recovery.c) */
	pthread_mutex_t sync_lock;
	pthread_t sync_thread;
	int sync_running, sync_joinable;
	atomic_int sync_stop;
	const char *sync_what;          /* "resync", "check", "repair", "recovery" */
	atomic_uint_fast64_t sync_pos;
	uint64_t sync_total;
	atomic_uint_fast64_t sync_bad;
	atomic_uint_fast64_t sync_skipped; /* units without the redundancy to check */
	int sync_done;                  /* the last one ran to the end */
	atomic_uint_fast64_t sync_bytes; /* logical bytes the current pass has covered */
	uint64_t sync_t0;               /* when it started (ns) */
	atomic_uint sync_speed_min, sync_speed_max; /* KiB/s, md's sync_speed_min/max */
	atomic_int recovery_wanted;     /* a member failed with a spare at hand */
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
	/* replace (md's want_replacement): role replace_slot is rebuilt onto the
	 * member in spare slot replace_with while the role keeps serving; every
	 * write to the role goes to both. -1: none. */
	atomic_int replace_slot, replace_with;
	atomic_int replace_wanted;      /* a replace waits for the running pass */
};

/* vol_model.c: in virtual time, a thread that runs the model's clock while the
 * volume closes (NULL when the clock is real); stop it after the last I/O. */
void *vol_model_pump_start(struct vol *v);
void vol_model_pump_stop(void *pump);

/* core/volume.c: write slot's superblock (nothing for a failed member). */
int vol_write_sb_slot(struct vol *v, unsigned slot);

/* core/recovery.c */
/* Recovery of generation gen done: its slot becomes active. 0 (nothing
 * changes) when the target changed meanwhile or is not wholly rebuilt. */
int vol_recovery_done(struct vol *v, unsigned gen);

/* core/sync.c: a resync is owed (an unclean shutdown, a write the host
 * refused) and has yet to complete. */
int vol_resync_owed(const struct vol *v);
/* Owed and not running now (MNT/status "resync pending", status.json). */
int vol_resync_pending(const struct vol *v);
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

#endif
