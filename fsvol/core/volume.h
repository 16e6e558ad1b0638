/* volume: an assembled volume (members + geometry + state) and the engine
 * entry points that serve I/O on it. */
#ifndef FSVOL_VOLUME_H
#define FSVOL_VOLUME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/core/engine.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/sb.h"
#include "layout/layout.h"

enum vol_read_policy {
	VOL_READ_DEFAULT,    /* md: stay on a sequential stream, else fewest pending, else nearest head */
	VOL_READ_ROUNDROBIN, /* gmirror round-robin */
	VOL_READ_PREFER,     /* prefer:N, then the default */
	VOL_READ_SPLIT,      /* split:SIZE: larger requests are split over the copies */
};

enum vol_stats_level { VOL_STATS_OFF, VOL_STATS_VOLUME, VOL_STATS_ALL };

struct vol_opts {
	int buffered;          /* members without O_DIRECT */
	int force;             /* assemble stale/unreadable members as missing; take back beyond redundancy */
	enum vol_read_policy read_policy;
	unsigned prefer;       /* VOL_READ_PREFER */
	uint64_t split;        /* VOL_READ_SPLIT */
	enum vol_stats_level stats;
	int readonly;          /* examine-like opens: never write superblocks */
	const char *model;     /* spindle model spec (fsvol mount --model), NULL = none */
};

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
	struct member *member_store;    /* SB_MAX_SLOTS members: slots point here */
	struct vol_bitmap *bitmap;      /* write-intent bitmap (core/bitmap_vol.c), NULL: none */
};

/* Assemble from member paths (any order). Returns 0 or -errno with a message
 * naming the culprit. Unless opts->readonly, marks the volume dirty on disk. */
int vol_open(struct vol **out, char *const *paths, unsigned n, const struct vol_opts *opts,
	     char *err, size_t errlen);
/* Start the volume's threads (model timer, a pending resync); call in the
 * process that will serve I/O (after any fork). 0 or -errno. */
int vol_start(struct vol *v);
/* Start a background pass over the redundancy: "resync" or "repair" rewrite
 * what disagrees, "check" only counts, "recovery" rebuilds rebuild_slot.
 * -EBUSY while one runs, -EINVAL when the level has no redundancy. */
int vol_sync_start(struct vol *v, const char *what);
void vol_sync_stop(struct vol *v);
/* The members that must be treated as failed for logical offset off: the
 * failed mask, less a rebuilding member below its checkpoint. */
uint64_t vol_failed_at(const struct vol *v, uint64_t off);

/* Recovery (core/recovery.c), each also a MNT/ctl verb. 0 or -errno with a
 * message in err. */
/* Add a spare; it replaces a failed member at once when the volume is degraded. */
int vol_add(struct vol *v, const char *path, char *err, size_t errlen);
/* A former member comes back: rebuilt onto its old slot. */
int vol_readd(struct vol *v, const char *path, char *err, size_t errlen);
/* Remove a failed or spare member (slot, or its path). */
int vol_remove(struct vol *v, const char *which, char *err, size_t errlen);
/* "N" or a member's path -> its slot, or -1. */
int vol_slot_of(const struct vol *v, const char *which);
/* Called when a member failed: start recovery onto a spare if one is there. */
void vol_recovery_kick(struct vol *v);
/* Recovery done: the rebuilt slot becomes active. */
void vol_recovery_done(struct vol *v);
/* Set (or change, at run time) the members' spindle models from a spec
 * (fsvol mount --model, MNT/ctl "model SPEC"). -EBUSY while a model has
 * requests queued; -EINVAL with a message for a bad spec. */
int vol_model(struct vol *v, const char *spec, char *err, size_t errlen);
/* Start the model's timer thread (vol_start, or the first model set at run time). */
int vol_model_start(struct vol *v);
/* The adapters' counters, one line each, for MNT/status (nothing without adapters). */
void vol_model_status(struct vol *v, FILE *f);
/* The same as a JSON member, "adapters":[{...}], for stats.json (not wired yet:
 * fsvol stat's strict reader, stats/json.c, must accept the key first). */
void vol_model_json(struct vol *v, FILE *f);
/* Flush, mark clean (unless readonly), close everything. */
void vol_close(struct vol *v);

/* Record that slot i failed (bump events on the survivors): the one call by
 * which the engine reports a member error (md's md_error). */
void vol_fail_slot(struct vol *v, unsigned slot, int error);
/* Write the current superblock state to every present member. 0 or -errno. */
int vol_write_sbs(struct vol *v);
const char *vol_slot_state(const struct vol *v, unsigned slot);
/* Read a member's superblock into c (errors in c->read_error/decode_error). */
int vol_read_sb(struct member *m, struct sb_candidate *c);
/* Render MNT/status (mdstat-like) into f. */
void vol_status(struct vol *v, FILE *f);
/* Render MNT/status.json (docs/status.schema.json) into f. */
void vol_status_json(struct vol *v, FILE *f);

/* create: write fresh superblocks on members (see fsvol create). */
struct vol_create {
	struct layout_geom geom;       /* level, alg, copies, chunk, members set */
	unsigned spares;
	uint64_t size;                 /* per-member data size, 0 = from the files */
	uint64_t data_offset;
	const char *name;
	int force;                     /* overwrite an existing fsvol superblock */
	int assume_clean;              /* skip zeroing the data areas */
	int bitmap;                    /* -1 none, 0 default (internal when redundant), 1 internal */
	uint64_t bitmap_chunk;         /* 0: md's default (bitmap_default_chunk) */
};
int vol_create(const struct vol_create *c, char *const *paths, unsigned n, char *err, size_t errlen);

#endif
