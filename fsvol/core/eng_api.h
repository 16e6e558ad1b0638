/* eng_api: what a feature (core/feature.h) and the volume's own work may ask
 * of the engine: an internal request made from one descriptor (eng_new), run
 * (eng_start) or kicked on (eng_kick) once a queue it waited on lets it go.
 * The request's fields stay the engine's (eng_int.h). */
#ifndef FSVOL_ENG_API_H
#define FSVOL_ENG_API_H

#include <stdint.h>

struct vol;
struct eng_req;
struct layout_geom;

/* READ, WRITE, FLUSH are engine.h's ENGINE_* (engine.c checks) */
enum eng_kind { ENG_K_READ, ENG_K_WRITE, ENG_K_FLUSH, ENG_K_RESYNC,
		ENG_K_REBUILD, ENG_K_COPY /* a replacement's unit (md's want_replacement) */,
		ENG_K_FIX, /* a listed bad block's unit rewritten on its member (core/bbl_vol.c) */
		ENG_K_RESHAPE /* holds a reshape window's locks (reshape.c) */ };

#define ENG_F_INTERNAL 0x1u      /* no volume counters, no trace record of its own */
#define ENG_F_NOLOCK 0x2u        /* the parent holds the locks */
#define ENG_F_ACKED 0x4u         /* acknowledged early (a write-back journal has it) */
#define ENG_F_BEHIND 0x8u        /* a write-behind: only the write-mostly legs (write_behind.c) */
#define ENG_F_RESHAPE 0x10u      /* a reshape's I/O: its geometry is set, no bitmap, labelled reshape */
#define ENG_F_SAFE 0x20u         /* a write counted in writes_pending (md's safe mode, safe_mode.c) */

/* A request to make: the kind and flags, the bytes (a caller's, or a
 * background unit's), and who hears of its end. Fields left 0 mean: the
 * volume's geometry, no unit, a trace id of its own unless ENG_F_NOLOCK. */
struct eng_desc {
	int kind;                /* ENG_K_* */
	unsigned flags;          /* ENG_F_* */
	int why;                 /* STATS_WHY_* of its data pieces */
	void *buf;
	uint64_t off, len;
	const struct layout_geom *geom; /* NULL: the volume's */
	uint64_t unit;           /* background: the unit */
	int repair;              /* resync: rewrite what disagrees */
	unsigned gen;            /* rebuild: the target's generation */
	int target, dest;        /* rebuild, copy, fix: the role rebuilt, the slot written */
	uint64_t trace_parent;   /* a child's: its parent's trace id */
	void (*done)(void *arg, int res); /* once, 0 or -errno */
	void (*parked)(void *arg); /* ENG_K_RESHAPE: its locks are held */
	void *arg;
};

/* A request from the pool (counted in engine_active unless internal), not
 * started: NULL without memory. */
struct eng_req *eng_new(struct vol *v, const struct eng_desc *d);
/* Run it from its first step. */
void eng_start(struct eng_req *rq);
/* Let a request that queued itself (ENG_WAIT, a feature's queue) go on. */
void eng_kick(struct eng_req *rq);

#endif
