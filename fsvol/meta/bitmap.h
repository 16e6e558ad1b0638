/* bitmap: the write-intent bitmap's arithmetic and on-disk image (pure, no
 * I/O; spec: docs/format.md, "Write-intent bitmap").
 *
 * One bit per region of bitmap_chunk bytes of the volume's logical address
 * space: bit r covers logical [r * chunk, (r + 1) * chunk). Bit r is byte
 * r / 8, bit r % 8 (least significant first) of the image, which starts at
 * bitmap_offset on every member and is padded with zero bits to a whole
 * number of 4 KiB blocks. Every member in a role carries the same image. */
#ifndef FSVOL_BITMAP_H
#define FSVOL_BITMAP_H

#include <stddef.h>
#include <stdint.h>

#define BITMAP_BLOCK 4096u                   /* written and read in these */
#define BITMAP_DEFAULT_CHUNK (64ull << 20)   /* md's default for an internal bitmap */
#define BITMAP_MIN_CHUNK 4096ull
#define BITMAP_MAX_BITS (1ull << 22)         /* 512 KiB of image: bounds memory */

/* Regions (bits) a volume of capacity bytes needs with chunk-byte regions. */
uint64_t bitmap_bits(uint64_t capacity, uint64_t chunk);
/* Bytes of the on-disk image (whole 4 KiB blocks) for that many bits. */
uint64_t bitmap_image_bytes(uint64_t bits);
/* md's default (mdadm, internal bitmaps): the smallest power of two whose
 * image fits area bytes and BITMAP_MAX_BITS, and at least 64 MiB. */
uint64_t bitmap_default_chunk(uint64_t capacity, uint64_t area);
/* Check a chunk for a capacity and an area (data_offset - bitmap_offset).
 * 0, or -EINVAL with a reason naming the chunk in err. */
int bitmap_check(uint64_t capacity, uint64_t chunk, uint64_t area, char *err, size_t errlen);

/* The regions [*first, *last] that logical [off, off+len) touches (len > 0). */
void bitmap_range(uint64_t chunk, uint64_t off, uint64_t len, uint64_t *first, uint64_t *last);

static inline int bitmap_test(const uint8_t *img, uint64_t bit)
{
	return (img[bit >> 3] >> (bit & 7)) & 1;
}
static inline void bitmap_set(uint8_t *img, uint64_t bit)
{
	img[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}
static inline void bitmap_clear(uint8_t *img, uint64_t bit)
{
	img[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
}
/* 1 when any bit in [first, last] is set. */
int bitmap_any(const uint8_t *img, uint64_t first, uint64_t last);
/* Set bits (of nbits). */
uint64_t bitmap_count(const uint8_t *img, uint64_t nbits);
/* dst |= src over nbits (assembly: the union of every member's image). */
void bitmap_or(uint8_t *dst, const uint8_t *src, uint64_t nbits);
/* Decoding an image read from disk: bits past nbits are cleared (padding). */
void bitmap_trim(uint8_t *img, uint64_t nbits);

#endif
