/* md1_place: where mdadm puts md's metadata and data on a device, for
 * metadata 1.0, 1.1 and 1.2 (md1.h; the rules learnt from mdadm's super1.c:
 * validate_geometry1, add_internal_bitmap1, write_init_super1). */
#include <errno.h>
#include <stdio.h>

#include "fsvol/meta/md1.h"

#define ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

uint64_t md1_super_offset(unsigned minor, uint64_t dev)
{
	if (minor == 1)
		return 0;
	if (minor == 2)
		return 8;
	return dev < 16 ? 0 : (dev - 16) & ~(uint64_t)7;
}

uint64_t md1_bm_space(uint64_t dev)
{
	if (dev < 64 * 2)
		return 0;
	if (dev - 64 * 2 >= 200ull * 1024 * 1024 * 2)
		return 128 * 2;
	if (dev - 4 * 2 > 8ull * 1024 * 1024 * 2)
		return 64 * 2;
	return 4 * 2;
}

uint64_t md1_default_data_offset(unsigned minor, uint64_t dev, uint64_t chunk)
{
	if (minor == 0)
		return 0;
	/* headroom for a reshape: about 0.1% of the device, at most 128M,
	 * halved while too large for the device but never below 4 chunks */
	uint64_t headroom = 128 * 1024 * 2, csec = chunk / MD1_SECTOR;
	while ((headroom << 10) > dev && (csec == 0 || headroom / 2 >= csec * 2))
		headroom >>= 1;
	return ROUND_UP(12 * 2 + md1_bm_space(dev) + headroom, 2048);
}

uint64_t md1_avail(unsigned minor, uint64_t dev, uint64_t data_offset)
{
	if (minor == 0) {
		uint64_t d = dev & ~(uint64_t)7, over = 8 * 2 + 8 + md1_bm_space(dev);
		return d > over ? d - over : 0;
	}
	return dev > data_offset ? dev - data_offset : 0;
}

uint64_t md1_bitmap_bytes(uint64_t sync_size, uint64_t chunk, uint64_t boundary)
{
	uint64_t bits = chunk ? (sync_size * MD1_SECTOR + chunk - 1) / chunk : 0;
	return ROUND_UP((bits + 7) / 8 + MD1_BITMAP_HEADER, boundary);
}

uint64_t md1_bitmap_default_chunk(uint64_t size)
{
	/* mdadm at create: room for the bitmap is choose_bm_space of the
	 * component size, at most 128K when no chunk is asked for */
	uint64_t room = md1_bm_space(size);
	if (room > 128 * 2)
		room = 128 * 2;
	if (room <= 1)
		room = 8; /* mdadm would refuse (no room); fsvol still reserves 4K */
	uint64_t max_bits = (room * MD1_SECTOR - MD1_BITMAP_HEADER) * 8;
	uint64_t chunk = 4096, bits = size * MD1_SECTOR / chunk + 1;
	while (bits > max_bits) {
		chunk *= 2;
		bits = (bits + 1) / 2;
	}
	return chunk < (64ull << 20) ? 64ull << 20 : chunk;
}

static int md1_place_end(struct md1_place *p, char *err, size_t errlen)
{
	/* 1.0: superblock at the end; below it the bad-block log (8 sectors),
	 * below that the bitmap, below that the data, which starts at 0 */
	uint64_t space = p->bitmap_chunk ? md1_bitmap_bytes(p->size, p->bitmap_chunk, 4096) / MD1_SECTOR
					 : md1_bm_space(p->size);
	p->super_offset = md1_super_offset(0, p->dev);
	space += 8;
	if (p->super_offset < p->size + space) {
		if (p->super_offset < p->size + (p->bitmap_chunk ? space : 8))
			return snprintf(err, errlen, "device of %llu sectors cannot hold %llu sectors of data and md's "
					"metadata at its end (%llu sectors)", (unsigned long long)p->dev,
					(unsigned long long)p->size, (unsigned long long)space + 16), -ENOSPC;
		space = p->super_offset - p->size; /* mdadm shrinks the reserve */
	}
	p->data_size = p->super_offset - space;
	if (p->bitmap_chunk) {
		/* mdadm's add_internal_bitmap1 counts one bit more than there are */
		uint64_t bits = p->size * MD1_SECTOR / p->bitmap_chunk + 1;
		uint64_t room = ROUND_UP((bits + 7) / 8 + MD1_BITMAP_HEADER, 4096) / MD1_SECTOR;
		p->bitmap_offset = -(int32_t)(room + 8);
		if (p->data_size > p->super_offset - room - 8)
			p->data_size = p->super_offset - room - 8; /* never under the bitmap */
		if (p->data_size < p->size)
			return snprintf(err, errlen, "device of %llu sectors cannot hold %llu sectors of data and "
					"md's bitmap at its end", (unsigned long long)p->dev,
					(unsigned long long)p->size), -ENOSPC;
	}
	if (p->bblog && space >= 8) {
		p->bblog_size = 8;
		p->bblog_offset = -8;
	}
	return 0;
}

int md1_place(struct md1_place *p, char *err, size_t errlen)
{
	p->bitmap_offset = 0;
	p->bblog_offset = 0;
	p->bblog_size = 0;
	if (p->minor > 2)
		return snprintf(err, errlen, "metadata 1.%u: md knows 1.0, 1.1 and 1.2", p->minor), -EINVAL;
	if (p->minor == 0)
		return md1_place_end(p, err, errlen);
	/* 1.1 / 1.2: superblock at 0 / 4K, the bitmap 4K after it, the
	 * bad-block log after the bitmap (or the room mdadm reserves for one) */
	p->super_offset = md1_super_offset(p->minor, p->dev);
	int64_t bm_offset = 8;
	uint64_t bm_space = p->bitmap_chunk ? md1_bitmap_bytes(p->size, p->bitmap_chunk, 4096) / MD1_SECTOR
					    : md1_bm_space(p->size);
	if (p->data_offset < p->super_offset + 8 + (p->bitmap_chunk ? bm_space : 0))
		return snprintf(err, errlen, "data offset %llu sectors leaves no room for md's superblock%s "
				"(needs %llu)", (unsigned long long)p->data_offset,
				p->bitmap_chunk ? " and bitmap" : "",
				(unsigned long long)(p->super_offset + 8 + (p->bitmap_chunk ? bm_space : 0))), -ENOSPC;
	if (p->dev < p->data_offset + p->size)
		return snprintf(err, errlen, "device of %llu sectors cannot hold %llu sectors of data after data "
				"offset %llu", (unsigned long long)p->dev, (unsigned long long)p->size,
				(unsigned long long)p->data_offset), -ENOSPC;
	p->data_size = p->dev - p->data_offset;
	if (p->bitmap_chunk)
		p->bitmap_offset = (int32_t)bm_offset;
	if (!p->bblog)
		return 0;
	if (p->data_offset >= p->super_offset + bm_offset + bm_space + 8) {
		p->bblog_size = 8;
		p->bblog_offset = (int32_t)(bm_offset + bm_space);
	} else if (p->data_offset >= p->super_offset + 16 && !p->bitmap_chunk) {
		p->bblog_size = 8;
		p->bblog_offset = (int32_t)(p->data_offset - 8 - p->super_offset);
	}
	return 0;
}
