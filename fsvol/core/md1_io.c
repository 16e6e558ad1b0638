/* md1_io: md's version-1 superblock on a member, read and rewritten (md1_io.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/md1_io.h"
#include "fsvol/core/meta_io.h"
#include "stats/stats.h"
#include "fsvol/members/member.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/meta/md1_sb.h"
#include "fsvol/util/log.h"

int md1_io_read(struct member *m, uint8_t *buf, struct sb_candidate *c)
{
	uint64_t sec = m->size / MD1_SECTOR, where[3] = { 8, 0, md1_super_offset(0, sec) };
	struct md1_sb *s = malloc(sizeof(*s));
	int found = 0;
	if (!s)
		return 0;
	for (unsigned i = 0; i < 3 && !found; i++) {
		char err[160];
		if ((where[i] + 8) * MD1_SECTOR > m->size || member_pread(m, buf, MD1_SB_BYTES, where[i] * MD1_SECTOR) ||
		    md1_decode(buf, MD1_SB_BYTES, where[i], s, err, sizeof(err)))
			continue;
		found = 1;
		if (md1_to_sb(s, m->size, &c->sb, err, sizeof(err))) {
			size_t n = (size_t)snprintf(c->why, sizeof(c->why), "md metadata 1.%u: ", md1_minor(s));
			snprintf(c->why + n, sizeof(c->why) - n, "%.*s", (int)(sizeof(c->why) - n - 1), err);
		} else {
			c->decode_error = 0;
			c->why[0] = 0;
		}
	}
	free(s);
	return found;
}

/* A running volume's read of md's block before it is rewritten: counted and
 * traced like the write after it (v NULL: create, nothing counts yet). */
static int md1_read(struct vol *v, struct member *m, int why, uint8_t *buf, uint64_t off)
{
	return v ? vol_meta_io(v, m, MEMBER_READ, why, buf, MD1_SB_BYTES, off) : member_pread(m, buf, MD1_SB_BYTES, off);
}

/* The blank metadata of an added member next to its new superblock: md's
 * bitmap (the template's header, events behind so md resyncs what it
 * covers, every bit clear) and an empty bad-block log. */
static int md1_blank_meta(struct vol *v, struct member *m, struct member *o, const struct md1_sb *md, uint64_t where)
{
	uint8_t *blk = NULL;
	if (posix_memalign((void **)&blk, 4096, MD1_SB_BYTES))
		return -ENOMEM;
	int r = 0;
	char err[160];
	struct md1_bitmap b;
	if (md->feature_map & MD1_F_BITMAP_OFFSET) {
		uint64_t ob = (uint64_t)((int64_t)md1_super_offset(md1_minor(md), o->size / MD1_SECTOR) +
					 md->bitmap_offset) * MD1_SECTOR;
		uint64_t nb = (uint64_t)((int64_t)where + md->bitmap_offset) * MD1_SECTOR;
		if (!(r = md1_read(v, o, STATS_WHY_BITMAP, blk, ob)) && !md1_bitmap_decode(blk, &b, err, sizeof(err))) {
			uint64_t bytes = md1_bitmap_bytes(b.sync_size, b.chunksize, MD1_SB_BYTES);
			for (uint64_t at = 0; at < bytes && !r; at += MD1_SB_BYTES) {
				memset(blk, 0, MD1_SB_BYTES);
				if (!at)
					md1_bitmap_encode(&b, blk);
				r = vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_BITMAP, blk, MD1_SB_BYTES, nb + at);
			}
		}
	}
	if (!r && md->bblog_size && md->bblog_size * MD1_SECTOR <= MD1_SB_BYTES) {
		md1_bblog_encode(NULL, 0, blk, MD1_SB_BYTES);
		r = vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_BBL, blk, (size_t)md->bblog_size * MD1_SECTOR,
				(uint64_t)((int64_t)where + md->bblog_offset) * MD1_SECTOR);
	}
	free(blk);
	return r;
}

/* A member added to a running volume has no md superblock yet: as mdadm
 * --add does, take a present member's, made this device's (its own
 * offsets on its size, a new device UUID, its device Number; the roles
 * md1_update writes), and lay out blank metadata beside it. 0, or -ENOSPC
 * when the device cannot hold the array's data area and md's metadata. */
static int md1_template(struct vol *v, struct member *m, const struct sb *s, uint8_t *buf, struct md1_sb *md,
			uint64_t where)
{
	char err[160];
	for (unsigned i = 0; i < v->nslots; i++) {
		struct member *o = v->slot[i];
		if (!o || o == m || !o->ops)
			continue;
		uint64_t w = md1_super_offset(s->md_minor - 1, o->size / MD1_SECTOR);
		if (md1_read(v, o, STATS_WHY_SB, buf, w * MD1_SECTOR) || md1_decode(buf, MD1_SB_BYTES, w, md, err, sizeof(err)))
			continue;
		/* md's metadata below the superblock (1.0) or before the data (1.1, 1.2) */
		int64_t low = md->bitmap_offset < md->bblog_offset ? md->bitmap_offset : md->bblog_offset;
		uint64_t end = md->data_offset + (md->size ? md->size : md->data_size), dev = m->size / MD1_SECTOR;
		if (s->md_minor == 1 ? (int64_t)where + (low < 0 ? low : 0) < (int64_t)end : end > dev) {
			fsvol_log(LOG_ERR, "%s: %llu sectors cannot hold md's data area (to sector %llu) and metadata",
				  m->path, (unsigned long long)dev, (unsigned long long)end);
			return -ENOSPC;
		}
		md->super_offset = where;
		if (s->md_minor != 1)
			md->data_size = dev - md->data_offset;
		md->dev_number = s->slots[s->index].number;
		sb_uuid_generate(md->device_uuid);
		md->feature_map &= ~(uint32_t)(MD1_F_BAD_BLOCKS | MD1_F_REPLACEMENT);
		md->cnt_corrected_read = 0;
		md->devflags = 0;
		return md1_blank_meta(v, m, o, md, where);
	}
	return -EIO;
}

int md1_io_block(struct vol *v, struct member *m, const struct sb *s, uint8_t *buf, uint64_t *off, uint64_t *bm)
{
	if (!s->md_minor || s->md_minor > 3)
		return -EINVAL;
	uint64_t where = md1_super_offset(s->md_minor - 1, m->size / MD1_SECTOR);
	struct md1_sb *md = malloc(sizeof(*md));
	char err[160];
	if (!md)
		return -ENOMEM;
	int r = md1_read(v, m, STATS_WHY_SB, buf, where * MD1_SECTOR);
	if (!r && md1_decode(buf, MD1_SB_BYTES, where, md, err, sizeof(err))) {
		/* a member the running volume just added has none yet; on any
		 * other, md's superblock went away under us: no made-up one */
		const struct sb_slot *sl = s->index < SB_MAX_SLOTS ? &s->slots[s->index] : NULL;
		r = v && sl && (sl->state == SB_SPARE || sl->state == SB_REBUILDING) ? md1_template(v, m, s, buf, md, where)
										    : -EIO;
	}
	if (!r) {
		md1_update(md, s, s->index);
		md1_encode(md, buf);
		*off = where * MD1_SECTOR;
		*bm = md->feature_map & MD1_F_BITMAP_OFFSET ? (uint64_t)((int64_t)where + md->bitmap_offset) * MD1_SECTOR
							      : 0;
	}
	free(md);
	return r;
}

int md1_io_bitmap(struct vol *v, struct member *m, const struct sb *s, uint8_t *buf, uint64_t bm)
{
	struct md1_bitmap b;
	char err[160];
	if (!bm)
		return 0;
	int r = md1_read(v, m, STATS_WHY_BITMAP, buf, bm);
	if (r)
		return r;
	if (md1_bitmap_decode(buf, &b, err, sizeof(err)))
		return 0; /* not md's bitmap (any more): leave it */
	if (s->clean) {
		b.events = b.events_cleared = s->events;
		b.state &= ~MD1_BITMAP_STALE;
	} else if (!(b.state & MD1_BITMAP_STALE)) {
		/* fsvol sets none of md's bits before its writes: while dirty
		 * md must not trust them (a crash now is a full resync for md,
		 * "bitmap file is out of date"), even with the events equal */
		b.state |= MD1_BITMAP_STALE;
	} else {
		return 0; /* already marked */
	}
	md1_bitmap_encode(&b, buf); /* the header only: the bits after it stay */
	return 1;
}
