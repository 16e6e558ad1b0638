/* bitmap: write-intent bitmap arithmetic and image (see bitmap.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "fsvol/meta/bitmap.h"

uint64_t bitmap_bits(uint64_t capacity, uint64_t chunk)
{
	/* bits = ceil(capacity / chunk) */
	return capacity / chunk + (capacity % chunk != 0);
}

uint64_t bitmap_image_bytes(uint64_t bits)
{
	uint64_t bytes = (bits + 7) / 8;
	return (bytes + BITMAP_BLOCK - 1) / BITMAP_BLOCK * BITMAP_BLOCK;
}

static int is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

uint64_t bitmap_default_chunk(uint64_t capacity, uint64_t area)
{
	uint64_t chunk = BITMAP_MIN_CHUNK;
	while (chunk < (1ull << 62) &&
	       (bitmap_image_bytes(bitmap_bits(capacity, chunk)) > area || bitmap_bits(capacity, chunk) > BITMAP_MAX_BITS))
		chunk <<= 1;
	return chunk < BITMAP_DEFAULT_CHUNK ? BITMAP_DEFAULT_CHUNK : chunk;
}

int bitmap_check(uint64_t capacity, uint64_t chunk, uint64_t area, char *err, size_t errlen)
{
	if (!is_pow2(chunk) || chunk < BITMAP_MIN_CHUNK) {
		snprintf(err, errlen, "bitmap chunk %" PRIu64 ": must be a power of two of at least 4K", chunk);
		return -EINVAL;
	}
	uint64_t bits = bitmap_bits(capacity, chunk);
	if (bits > BITMAP_MAX_BITS || bitmap_image_bytes(bits) > area) {
		snprintf(err, errlen, "bitmap chunk %" PRIu64 ": too small, %" PRIu64 " bits do not fit %s "
			 "(%" PRIu64 " bytes between the superblock and the data; at most %llu bits)",
			 chunk, bits, bits > BITMAP_MAX_BITS ? "the limit" : "the area", area,
			 (unsigned long long)BITMAP_MAX_BITS);
		return -EINVAL;
	}
	return 0;
}

void bitmap_range(uint64_t chunk, uint64_t off, uint64_t len, uint64_t *first, uint64_t *last)
{
	*first = off / chunk;
	*last = (off + len - 1) / chunk;
}

int bitmap_any(const uint8_t *img, uint64_t first, uint64_t last)
{
	for (uint64_t b = first; b <= last; b++) {
		if ((b & 7) == 0 && b + 7 <= last) {
			if (img[b >> 3])
				return 1;
			b += 7;
			continue;
		}
		if (bitmap_test(img, b))
			return 1;
	}
	return 0;
}

uint64_t bitmap_count(const uint8_t *img, uint64_t nbits)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < nbits / 8; i++)
		n += (uint64_t)__builtin_popcount(img[i]);
	for (uint64_t b = nbits / 8 * 8; b < nbits; b++)
		n += (uint64_t)bitmap_test(img, b);
	return n;
}

void bitmap_or(uint8_t *dst, const uint8_t *src, uint64_t nbits)
{
	for (uint64_t i = 0; i < (nbits + 7) / 8; i++)
		dst[i] |= src[i];
	bitmap_trim(dst, nbits);
}

void bitmap_trim(uint8_t *img, uint64_t nbits)
{
	if (nbits % 8)
		img[nbits / 8] &= (uint8_t)((1u << (nbits % 8)) - 1);
	/* whole bytes past the last bit are the caller's padding: bitmap_any and
	 * bitmap_count never read them */
}
