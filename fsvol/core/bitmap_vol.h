/* bitmap_vol: the volume's write-intent bitmap (md's internal bitmap): the
 * image kept in memory, written to every member in a role by the metadata
 * thread (core/vol_md.c),
 * cleared lazily. The format and its arithmetic are fsvol/meta/bitmap.c. */
#ifndef FSVOL_BITMAP_VOL_H
#define FSVOL_BITMAP_VOL_H

#include <stdint.h>
#include <stdio.h>

struct vol;
struct vol_waiter;

/* At assembly (after the slots are set): read every present role member's
 * image and keep their union. No-op without a bitmap. 0 or -errno (err). */
int vol_bitmap_open(struct vol *v, char *err, size_t errlen);
/* The metadata thread's work (core/vol_md.c): write the image for the
 * writers queued; _tick also ages and clears idle bits when due (md's
 * daemon_sleep). No-op without a bitmap. */
void vol_bitmap_run(struct vol *v);
void vol_bitmap_tick(struct vol *v);
/* At close, after the last write was flushed and the thread stopped: a healthy,
 * clean volume writes an all-clear image. Frees everything. */
void vol_bitmap_close(struct vol *v);
/* The capacity grew (a reshape's end, the volume still): regions for the new
 * space. 0, -EFBIG when the image would need more 4 KiB blocks than it has
 * (vol_bitmap_fits says so first), -ENOMEM. */
int vol_bitmap_grow(struct vol *v);
/* 1 when the image for capacity fits the blocks it has now (or no bitmap). */
int vol_bitmap_fits(const struct vol *v, uint64_t capacity);
void vol_bitmap_free(struct vol *v);

/* The engine's ST_BITMAP step for a write segment [off, off+len): 1 when
 * the regions' bits are durable on every member, 0 when w was queued (the
 * metadata thread kicks it once they are). Never blocks. */
int vol_bitmap_begin(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w);
/* The segment's member writes are done (its regions may be cleared later). */
void vol_bitmap_end(struct vol *v, uint64_t off, uint64_t len);

/* Resync after an unclean shutdown: 1 when [off, off+len) may differ
 * between members (a bit is set, or there is no bitmap). */
int vol_bitmap_dirty(struct vol *v, uint64_t off, uint64_t len);
/* Recovery of a re-added member: when no bit covers [off, off+len), move
 * the rebuild checkpoint of generation gen past it (atomically with writers
 * setting bits) and return 1; else 0 (rebuild the unit, or the target
 * changed). */
int vol_bitmap_skip(struct vol *v, unsigned gen, uint64_t off, uint64_t len);
/* vol_readd: the next recovery of slot rebuilds only the dirty regions. */
void vol_bitmap_partial(struct vol *v, int slot);
/* run_recovery: 1 when the recovery of slot is partial (consumes the mark). */
int vol_bitmap_take_partial(struct vol *v, int slot);

/* "bitmap: 3/512 regions dirty, 64M chunk" for MNT/status; nothing without. */
void vol_bitmap_status(struct vol *v, FILE *f);
/* Counts for status.json and tests: regions, dirty ones, bitmap block writes. */
void vol_bitmap_counts(struct vol *v, uint64_t *regions, uint64_t *dirty, uint64_t *writes);

#endif
