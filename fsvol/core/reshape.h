/* reshape: grow a volume onto more members, change its chunk, its level
 * (raid5 -> raid6) or a raid10's layout (near <-> offset) while it serves
 * (md's reshape: raid5.c and raid10.c reshape_request, mdadm's Grow.c).
 * fsvol/core only. The rules on disk: docs/format.md, "Reshape".
 *
 * Logical bytes below the reshape position (pos) live in the new geometry,
 * those above it in the old one (v->geom until the reshape ends). The pass
 * moves one window at a time under the window's stripe locks (both
 * geometries' units), writing the superblocks after each window, so that
 * what they say is always what the members hold. */
#ifndef FSVOL_RESHAPE_H
#define FSVOL_RESHAPE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <stddef.h>

#include "layout/layout.h"

struct vol;

struct vol_reshape {
	atomic_int active;            /* 1 while a reshape is under way */
	atomic_uint_fast64_t pos;     /* logical bytes in the new geometry */
	atomic_uint_fast64_t epoch;   /* bumped whenever pos or the geometry changes */
	struct layout_geom geom;      /* the geometry it goes to */
	uint64_t old_capacity;        /* data to move lies below it; zeros are written above */
	uint64_t window;              /* logical bytes moved at a time (a multiple of both stripes) */
	uint64_t backup_len;          /* bytes of a window's backup on each member */
	uint64_t windows_backed;      /* windows that needed the backup */
	uint8_t *buf;                 /* one window (and its backup), aligned */
};

/* The geometry of logical [off, off + *len): the new one below pos, the old
 * one above; *len is cut at pos. Any thread. */
const struct layout_geom *vol_reshape_geom(struct vol *v, uint64_t off, uint64_t *len);
/* 1 while a reshape is under way. */
int vol_reshaping(const struct vol *v);
/* Whether the volume serves its data with the slots in failed gone: in the
 * old geometry and, during a reshape, in the new one too. */
int vol_reshape_survives(const struct vol *v, uint64_t failed);
/* The epoch (a request notes it when it maps a segment). */
uint64_t vol_reshape_epoch(const struct vol *v);
/* Raid members the engine writes now (the new count during a reshape). */
unsigned vol_reshape_members(const struct vol *v);
/* Slot s is a member the reshape adds (kept from spare takeover). */
int vol_reshape_new_member(const struct vol *v, unsigned s);

/* The critical section: 1 when the new rows of window [off, off+len) (a
 * window's edges) reach old rows that still hold data at or past off, so
 * that a crash while writing them would lose it: the window is backed up
 * first. Pure (tests). */
int vol_reshape_overlap(const struct layout_geom *old, const struct layout_geom *new, uint64_t off, uint64_t len);
/* The window (logical bytes moved at a time: a multiple of both geometries'
 * row groups, layout_period, at least 1 MiB) and the backup's bytes per
 * member of the new geometry (raid10: its copies of a piece per member); 0,
 * or -EINVAL (too large), -EOPNOTSUPP (a raid10 far layout) with a message.
 * Pure (tests). */
int vol_reshape_plan(const struct layout_geom *old, const struct layout_geom *new, uint64_t *window,
		     uint64_t *backup_len, char *err, size_t errlen);

/* vol_open: a reshape recorded in the superblock (nothing when none).
 * 0 or -errno with a message. */
int vol_reshape_load(struct vol *v, char *err, size_t errlen);
/* The pass (sync.c): units are windows. */
uint64_t vol_reshape_windows(const struct vol *v);
void vol_reshape_window_range(const struct vol *v, uint64_t u, uint64_t *off, uint64_t *len);
/* The first window still to move. */
uint64_t vol_reshape_first(const struct vol *v);
/* Move window u: 0 or -errno. On the sync thread. */
int vol_reshape_window(struct vol *v, uint64_t u);
/* Every window moved: the new geometry becomes the volume's. 0 or -errno. */
int vol_reshape_finish(struct vol *v);
/* A crash left a window's backup recorded: write it back first. 0 or -errno. */
int vol_reshape_restore(struct vol *v);

/* vol_grow (volume.h) once no other pass runs. */
int vol_reshape_grow(struct vol *v, const char *spec, char *err, size_t errlen);

/* MNT/status lines and status.json's "reshape" member (nothing / null when
 * none). */
void vol_reshape_status(struct vol *v, FILE *f);
void vol_reshape_json(struct vol *v, FILE *f);
void vol_reshape_free(struct vol *v);

#endif
