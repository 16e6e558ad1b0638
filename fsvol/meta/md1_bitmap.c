/* md1_bitmap: md's internal bitmap header (bitmap_super_t), its bad-block
 * log and its level/layout numbers against fsvol's geometry (md1.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/meta/md1.h"
#include "fsvol/util/le.h"
#include "layout/layout.h"

void md1_bitmap_encode(const struct md1_bitmap *b, uint8_t *buf)
{
	memset(buf, 0, MD1_BITMAP_HEADER);
	put_le32(buf + 0, MD1_BITMAP_MAGIC);
	put_le32(buf + 4, b->version);
	memcpy(buf + 8, b->uuid, 16);
	put_le64(buf + 24, b->events);
	put_le64(buf + 32, b->events_cleared);
	put_le64(buf + 40, b->sync_size);
	put_le32(buf + 48, b->state);
	put_le32(buf + 52, b->chunksize);
	put_le32(buf + 56, b->daemon_sleep);
	put_le32(buf + 60, b->write_behind);
	put_le32(buf + 64, b->sectors_reserved);
	put_le32(buf + 68, b->nodes);
	memcpy(buf + 72, b->cluster_name, strnlen(b->cluster_name, 64));
}

int md1_bitmap_decode(const uint8_t *buf, struct md1_bitmap *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (get_le32(buf) != MD1_BITMAP_MAGIC)
		return snprintf(err, errlen, "no md bitmap (bad magic 0x%08x)", get_le32(buf)), -EINVAL;
	b->version = get_le32(buf + 4);
	memcpy(b->uuid, buf + 8, 16);
	b->events = get_le64(buf + 24);
	b->events_cleared = get_le64(buf + 32);
	b->sync_size = get_le64(buf + 40);
	b->state = get_le32(buf + 48);
	b->chunksize = get_le32(buf + 52);
	b->daemon_sleep = get_le32(buf + 56);
	b->write_behind = get_le32(buf + 60);
	b->sectors_reserved = get_le32(buf + 64);
	b->nodes = get_le32(buf + 68);
	memcpy(b->cluster_name, buf + 72, 64);
	if (b->version < 3 || b->version > MD1_BITMAP_CLUSTERED)
		return snprintf(err, errlen, "md bitmap version %u (3, 4 or 5 are known)", b->version), -EINVAL;
	if (b->chunksize < 512 || (b->chunksize & (b->chunksize - 1)))
		return snprintf(err, errlen, "md bitmap chunksize %u (a power of two of at least 512)",
				b->chunksize), -EINVAL;
	return 0;
}

uint64_t md1_bitmap_bits(const struct md1_bitmap *b)
{
	return b->chunksize ? (b->sync_size * MD1_SECTOR + b->chunksize - 1) / b->chunksize : 0;
}

unsigned md1_bblog_decode(const uint8_t *buf, size_t bytes, uint64_t *out, unsigned max)
{
	unsigned n = 0;
	for (size_t i = 0; i + 8 <= bytes && n < max; i += 8) {
		uint64_t e = get_le64(buf + i);
		if (e == UINT64_MAX)
			break;
		out[n++] = e;
	}
	return n;
}

void md1_bblog_encode(const uint64_t *e, unsigned n, uint8_t *buf, size_t bytes)
{
	memset(buf, 0xff, bytes);
	for (unsigned i = 0; i < n && 8 * (size_t)i + 8 <= bytes; i++)
		put_le64(buf + 8 * (size_t)i, e[i]);
}

/* raid10's layout word: near copies in bits 0..7, far copies in 8..15,
 * bit 16 "offset" (far copies one chunk row apart, not a section). */
int md1_from_geom(const struct layout_geom *g, int32_t *level, uint32_t *layout, uint32_t *chunksize,
		  char *err, size_t errlen)
{
	unsigned copies = g->copies ? g->copies : 2;
	*layout = 0;
	*chunksize = (uint32_t)(g->chunk / MD1_SECTOR);
	switch (g->level) {
	case LAYOUT_LINEAR: *level = MD1_LEVEL_LINEAR; *chunksize = 0; return 0;
	case LAYOUT_RAID0: *level = 0; return 0;
	case LAYOUT_RAID1: *level = 1; *chunksize = 0; return 0;
	case LAYOUT_RAID4: *level = 4; return 0; /* md's raid4: parity on the last device, layout 0 */
	case LAYOUT_RAID5: *level = 5; *layout = g->alg; return 0;
	case LAYOUT_RAID6: *level = 6; *layout = g->alg; return 0;
	case LAYOUT_RAID10:
		*level = 10;
		if (g->alg == LAYOUT_R10_NEAR)
			*layout = 1u << 8 | copies;
		else if (g->alg == LAYOUT_R10_FAR)
			*layout = copies << 8 | 1u;
		else
			*layout = 1u << 16 | copies << 8 | 1u;
		return 0;
	default:
		return snprintf(err, errlen, "%s has no md level (md's metadata needs linear, raid0, raid1, "
				"raid4, raid5, raid6 or raid10)", layout_level_name(g->level)), -EINVAL;
	}
}

int md1_to_geom(int32_t level, uint32_t layout, uint32_t chunksize, struct layout_geom *g, char *err,
		size_t errlen)
{
	g->chunk = (uint64_t)chunksize * MD1_SECTOR;
	g->alg = 0;
	g->copies = 0;
	switch (level) {
	case MD1_LEVEL_LINEAR: g->level = LAYOUT_LINEAR; break;
	case 0: g->level = LAYOUT_RAID0; break;
	case 1: g->level = LAYOUT_RAID1; break;
	case 4: g->level = LAYOUT_RAID4; g->alg = LAYOUT_PARITY_N; break;
	case 5: case 6:
		g->level = level == 5 ? LAYOUT_RAID5 : LAYOUT_RAID6;
		if (layout > 5)
			return snprintf(err, errlen, "md raid%d layout %u (fsvol knows 0..5: left/right-asymmetric/"
					"symmetric, parity-first, parity-last)", level, layout), -EOPNOTSUPP;
		g->alg = layout;
		break;
	case 10: {
		unsigned near = layout & 0xff, far = (layout >> 8) & 0xff, offset = (layout >> 16) & 1;
		g->level = LAYOUT_RAID10;
		if ((layout >> 17) || (near > 1 && far > 1) || !near || !far)
			return snprintf(err, errlen, "md raid10 layout 0x%x (fsvol knows near, far and offset "
					"with one kind of copies)", layout), -EOPNOTSUPP;
		g->alg = far == 1 ? LAYOUT_R10_NEAR : offset ? LAYOUT_R10_OFFSET : LAYOUT_R10_FAR;
		g->copies = far == 1 ? near : far;
		break;
	}
	default:
		return snprintf(err, errlen, "md level %d (fsvol knows linear, raid0, raid1, raid4, raid5, raid6, "
				"raid10)", level), -EOPNOTSUPP;
	}
	if (!g->chunk && g->level != LAYOUT_LINEAR && g->level != LAYOUT_RAID1)
		return snprintf(err, errlen, "md %s with chunksize 0", md1_level_name(level)), -EINVAL;
	if (!g->chunk)
		g->chunk = 4096; /* raid1 and linear: rounding only */
	return 0;
}

const char *md1_level_name(int32_t level)
{
	switch (level) {
	case -4: return "multipath";
	case -5: return "faulty";
	case MD1_LEVEL_LINEAR: return "linear";
	case 0: return "raid0";
	case 1: return "raid1";
	case 4: return "raid4";
	case 5: return "raid5";
	case 6: return "raid6";
	case 10: return "raid10";
	}
	return NULL;
}
