/* md1_io: md's version-1 superblock on a member, read and rewritten (md1_io.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/md1_io.h"
#include "fsvol/core/meta_io.h"
#include "stats/stats.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/md1_sb.h"

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
	if (!r && md1_decode(buf, MD1_SB_BYTES, where, md, err, sizeof(err)))
		r = -EIO; /* md's superblock went away under us: do not write a made-up one */
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
	if (!bm || !s->clean)
		return 0;
	int r = md1_read(v, m, STATS_WHY_BITMAP, buf, bm);
	if (r)
		return r;
	if (md1_bitmap_decode(buf, &b, err, sizeof(err)))
		return 0; /* not md's bitmap (any more): leave it */
	b.events = b.events_cleared = s->events;
	md1_bitmap_encode(&b, buf); /* the header only: the bits after it stay */
	return 1;
}
