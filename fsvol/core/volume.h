/* volume: an assembled volume (members + geometry + state) and the engine
 * entry points that serve I/O on it. */
#ifndef FSVOL_VOLUME_H
#define FSVOL_VOLUME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

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
	int force;             /* assemble stale/unreadable members as missing */
	enum vol_read_policy read_policy;
	unsigned prefer;       /* VOL_READ_PREFER */
	uint64_t split;        /* VOL_READ_SPLIT */
	enum vol_stats_level stats;
	int readonly;          /* examine-like opens: never write superblocks */
	const char *model;     /* spindle model spec (fsvol mount --model), NULL = none */
};

struct eng_ctx;
struct emul;
struct stats_dev;
struct stats_trace;

#define VOL_LOCKS 1024

struct vol {
	struct layout_geom geom;
	struct sb sb;                   /* the volume's superblock (truth) */
	struct vol_opts opts;
	unsigned nslots;                /* members + spares */
	struct member *slot[SB_MAX_SLOTS]; /* NULL when missing */
	struct member *members;         /* the opened files, in argument order */
	unsigned nmembers;
	atomic_uint_fast64_t failed;    /* bit i: slot i cannot be used */
	uint64_t data_offset;
	pthread_mutex_t state_lock;     /* superblock updates, member state changes */
	pthread_rwlock_t locks[VOL_LOCKS]; /* stripe / region locks for writes */
	pthread_mutex_t ctx_lock;
	struct eng_ctx *ctx_free;       /* pool of per-request engine contexts */
	struct eng_ctx *ctx_all;
	atomic_uint rr;                 /* round-robin cursor */
	struct stats_dev *vstats;       /* above the mapping layer */
	_Atomic int stats_level;        /* enum vol_stats_level, switchable at run time */
	struct stats_trace *trace;
	struct emul *_Atomic emul;      /* NULL unless some member has (had) a model */
	char model[256];                /* the --model spec, for status */
	unsigned modeled;               /* members with a model */
	int started;                    /* vol_start ran: threads may exist */
	uint64_t start_ns;
	_Atomic uint64_t reset_ns;      /* counters last zeroed (start_ns until a reset) */
	int was_dirty;                  /* not shut down cleanly last time */
	/* background resync / check / repair (one at a time) */
	pthread_mutex_t sync_lock;
	pthread_t sync_thread;
	int sync_running, sync_joinable;
	atomic_int sync_stop;
	const char *sync_what;          /* "resync", "check", "repair" */
	atomic_uint_fast64_t sync_pos;
	uint64_t sync_total;
	atomic_uint_fast64_t sync_bad;
	int sync_done;                  /* the last one ran to the end */
};

/* Assemble from member paths (any order). Returns 0 or -errno with a message
 * naming the culprit. Unless opts->readonly, marks the volume dirty on disk. */
int vol_open(struct vol **out, char *const *paths, unsigned n, const struct vol_opts *opts,
	     char *err, size_t errlen);
/* Start the volume's threads (model timer) and engine contexts; call in the
 * process that will serve I/O (after any fork). 0 or -errno. */
int vol_start(struct vol *v);
/* Start a background pass over the redundancy: "resync" or "repair" rewrite
 * what disagrees, "check" only counts. -EBUSY while one runs, -EINVAL when the
 * level has no redundancy. */
int vol_sync_start(struct vol *v, const char *what);
/* Set (or change, at run time) the members' spindle models from a spec
 * (fsvol mount --model, MNT/ctl "model SPEC"). -EBUSY while a model has
 * requests queued; -EINVAL with a message for a bad spec. */
int vol_model(struct vol *v, const char *spec, char *err, size_t errlen);
/* Start the model's timer thread (vol_start, or the first model set at run time). */
int vol_model_start(struct vol *v);
/* Flush, mark clean (unless readonly), close everything. */
void vol_close(struct vol *v);

/* Record that slot i failed (bump events on the survivors). */
void vol_fail_slot(struct vol *v, unsigned slot, int error);
/* Write the current superblock state to every present member. 0 or -errno. */
int vol_write_sbs(struct vol *v);
const char *vol_slot_state(const struct vol *v, unsigned slot);
/* Render MNT/status (mdstat-like) into f. */
void vol_status(struct vol *v, FILE *f);

/* Engine: len <= any size; off+len must be <= capacity. 0 or -errno. */
int engine_read(struct vol *v, void *buf, uint64_t off, uint64_t len);
int engine_write(struct vol *v, const void *buf, uint64_t off, uint64_t len);
int engine_flush(struct vol *v);
void engine_destroy_contexts(struct vol *v);
/* Resync/check one unit (a parity stripe, or a chunk of a mirror): compare the
 * redundancy with the data, count disagreements in *mismatches, rewrite the
 * redundancy when repair. Units: engine_resync_units (0 without redundancy). */
int engine_resync(struct vol *v, uint64_t unit, int repair, uint64_t *mismatches);
uint64_t engine_resync_units(const struct vol *v);
/* Create n contexts ahead of time (rings + pre-touched arenas). */
int engine_prepare(struct vol *v, unsigned n);

/* create: write fresh superblocks on members (see fsvol create). */
struct vol_create {
	struct layout_geom geom;       /* level, alg, copies, chunk, members set */
	unsigned spares;
	uint64_t size;                 /* per-member data size, 0 = from the files */
	uint64_t data_offset;
	const char *name;
	int force;                     /* overwrite an existing fsvol superblock */
	int assume_clean;              /* skip zeroing the data areas */
};
int vol_create(const struct vol_create *c, char *const *paths, unsigned n, char *err, size_t errlen);
/* The volume's geometry as a superblock records it (for tools that read
 * member files without opening the volume). 0 or -EINVAL with a message. */
int vol_geom_of_sb(const struct sb *s, struct layout_geom *g, char *err, size_t errlen);

#endif
