/* md1_io: reading and rewriting md's own version-1 superblock on a member,
 * for assembly and the running volume's superblock writes (volume.c);
 * the format itself is fsvol/meta/md1.h, its mapping onto struct sb
 * fsvol/meta/md1_sb.h. */
#ifndef FSVOL_MD1_IO_H
#define FSVOL_MD1_IO_H

struct vol;

#include <stdint.h>

struct member;
struct sb;
struct sb_candidate;
/* After fsvol's own superblock was not found on m: look for md's at the
 * places of 1.2, 1.1 and 1.0 (buf: 4 KiB, aligned). Found and served: c->sb
 * filled, the decode error cleared, 1. Found but not served: c->why says
 * why, 1. Not md's: 0, c untouched. */
int md1_io_read(struct member *m, uint8_t *buf, struct sb_candidate *c);
/* The block to write for s on member m (index s->index): m's own md
 * superblock read back and updated from s (md1_update), encoded into buf
 * (4 KiB); *off its byte offset; *bm the byte offset of md's bitmap on m
 * (0: none). 0 or -errno. */
int md1_io_block(struct vol *v, struct member *m, const struct sb *s, uint8_t *buf, uint64_t *off, uint64_t *bm);
/* md's bitmap header block at bm for volume s, into buf (4 KiB, the bits
 * after the header kept): clean, its events and events_cleared brought to
 * s's and the stale bit cleared (the bits are clear: fsvol never sets md's,
 * and a clean volume is in sync); dirty, md's BITMAP_STALE set, so md,
 * should fsvol stop now, resyncs it all. 1 when there is a block to write,
 * 0 not (already so, or not md's bitmap), -errno. */
int md1_io_bitmap(struct vol *v, struct member *m, const struct sb *s, uint8_t *buf, uint64_t bm);

#endif
