/* bbl: a member's bad-block list (md's bad block log): its entries and its
 * on-disk area. Pure: list arithmetic, encode and decode, no I/O (spec:
 * docs/format.md, "Bad-block list").
 *
 * The area (BBL_AREA bytes at the superblock's bbl_offset) holds two copies
 * of the list, written alternately (the copy is the sequence number's low
 * bit), so a torn write leaves the previous list readable:
 *
 *   copy 0 (seq even) | copy 1 (seq odd)
 *   each: 32-byte header (magic, version, crc, count, seq), then count
 *   64-bit entries (md's: bit 63 acknowledged, 62..9 sector, 8..0 length - 1)
 *
 * Sectors are 512 bytes, counted from the start of the member's data area
 * (as `fsvol map` and the fault wrapper's bad= count member offsets). */
#ifndef FSVOL_BBL_H
#define FSVOL_BBL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BBL_MAGIC 0x4c424253u             /* "SBBL" read as a little-endian u32 */
#define BBL_VERSION 1u
#define BBL_COPY 4096u                    /* one copy of the list */
#define BBL_AREA (2u * BBL_COPY)          /* the area: two copies */
#define BBL_HEADER 32u
#define BBL_MAX ((BBL_COPY - BBL_HEADER) / 8u) /* 508 entries */
#define BBL_SECTOR 512u
#define BBL_MAX_LEN 512u                  /* sectors per entry (md: 9 bits of length) */
#define BBL_MAX_SECTOR ((1ull << 54) - 1) /* 54 bits of sector */

struct bbl_entry {
	uint64_t start;   /* first sector */
	uint32_t len;     /* sectors, 1..BBL_MAX_LEN */
	uint8_t ack;      /* 1: on the member (md's acknowledged) */
};

struct bbl {
	uint64_t seq;     /* sequence of the copy last read or written; 0: never written */
	unsigned n;       /* entries, sorted by start, disjoint */
	struct bbl_entry e[BBL_MAX];
};

void bbl_init(struct bbl *l);
/* Add sectors [start, start + len), merged with the entries it overlaps or
 * touches (md merges the same way), cut in pieces of at most BBL_MAX_LEN.
 * The new sectors carry ack; a merged entry is acknowledged only when all
 * its parts were. 0, or -ENOSPC when the list would need more than BBL_MAX
 * entries, -EINVAL for an empty or out-of-range span (nothing changed). */
int bbl_add(struct bbl *l, uint64_t start, uint64_t len, int ack);
/* Remove sectors [start, start + len). 0, or -ENOSPC (a split would need
 * more than BBL_MAX entries: nothing changed). */
int bbl_clear(struct bbl *l, uint64_t start, uint64_t len);
/* 1 when any sector of [start, start + len) is listed. */
int bbl_overlaps(const struct bbl *l, uint64_t start, uint64_t len);
/* Listed sectors in all. */
uint64_t bbl_sectors(const struct bbl *l);
/* Every entry acknowledged (the list is about to be written). */
void bbl_ack_all(struct bbl *l);

/* One copy of l, BBL_COPY bytes, with sequence seq (crc filled in). */
void bbl_encode(const struct bbl *l, uint64_t seq, uint8_t *buf);
/* Decode one copy (BBL_COPY bytes): 0 and l filled; 1 when the copy is blank
 * (all zeros: never written); -EINVAL with the reason in err (bad magic,
 * version, crc mismatch, count, an entry out of order or overlapping). */
int bbl_decode(const uint8_t *buf, struct bbl *l, char *err, size_t errlen);
/* Decode the area (BBL_AREA bytes): the valid copy with the highest
 * sequence. 0 (a blank area is an empty list, seq 0), or -EINVAL when no
 * copy is valid, with both reasons in err. */
int bbl_area_decode(const uint8_t *area, struct bbl *l, char *err, size_t errlen);
/* Offset in the area of the copy a list with sequence seq is written to. */
static inline size_t bbl_copy_off(uint64_t seq)
{
	return (size_t)(seq & 1) * BBL_COPY;
}

/* mdadm --examine-badblocks: "Bad-blocks on PATH:" then one line per entry. */
void bbl_dump(FILE *f, const struct bbl *l, const char *path);

#endif
