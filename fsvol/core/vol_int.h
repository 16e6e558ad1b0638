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
	 * counts as failed. -1: none. */
	atomic_int rebuild_slot;
	atomic_uint_fast64_t rebuild_pos;
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

#endif
