/* vol_sb: a running volume's superblocks on its members (the format:
 * fsvol/meta/sb.c): read one, write one slot's or every slot's, counted,
 * traced and under failfast through meta_io.c; what a slot's state reads as. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/md1_io.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"

static void *aligned_block(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, SB_SIZE))
		return NULL;
	memset(p, 0, SB_SIZE);
	return p;
}

int vol_read_sb(struct member *m, struct sb_candidate *c)
{
	uint8_t *buf = aligned_block();
	if (!buf)
		return -ENOMEM;
	int r = m->size < SB_SIZE ? -EIO : member_pread(m, buf, SB_SIZE, 0);
	if (r < 0) {
		c->read_error = r;
		snprintf(c->why, sizeof(c->why), "%s", m->size < SB_SIZE ? "too small to hold a superblock" : strerror(-r));
	} else if (sb_decode(buf, SB_SIZE, &c->sb, c->why, sizeof(c->why)) < 0) {
		c->decode_error = -EINVAL;
		md1_io_read(m, buf, c); /* md's own format (issue 31) */
	}
	free(buf);
	return 0;
}

/* v: a running volume's member, or NULL (create). */
int vol_sb_write(struct member *m, const struct sb *s, struct vol *v)
{
	uint8_t *buf = aligned_block();
	if (!buf)
		return -ENOMEM;
	uint64_t off = 0, bm = 0;
	int r = s->md_minor ? md1_io_block(v, m, s, buf, &off, &bm) : (sb_encode(s, buf), 0);
	/* a running volume's: counted, traced (sb), failfast and modelled */
	if (!r)
		r = v ? vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_SB, buf, SB_SIZE, off) : member_pwrite(m, buf, SB_SIZE, off);
	if (!r && bm && (r = md1_io_bitmap(v, m, s, buf, bm)) > 0) /* md's bitmap header keeps up while clean */
		r = v ? vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_BITMAP, buf, SB_SIZE, bm) : member_pwrite(m, buf, SB_SIZE, bm);
	if (!r)
		r = v ? vol_meta_flush(v, m, STATS_WHY_SB) : member_flush(m);
	free(buf);
	return r;
}

/* Whether slot i's member gets superblock writes: a failed member is left
 * alone, in its role or parked in a spare slot (docs/format.md: the one that
 * failed last keeps the highest events of the failed, for assembly rule 14;
 * and an unreachable one must not fail the write); one being rebuilt is
 * written. */
static int sb_written(const struct vol *v, unsigned i)
{
	if (!v->slot[i] || !v->slot[i]->ops)
		return 0;
	if (i < v->geom.members)
		return !(atomic_load(&v->failed) & (1ull << i)) || (int)i == atomic_load(&v->rebuild_slot);
	return v->sb.slots[i].state != SB_FAILED;
}

static int write_slot(struct vol *v, unsigned i)
{
	if (!sb_written(v, i))
		return 0;
	struct sb s = v->sb;
	s.index = i;
	memcpy(s.member_uuid, v->sb.slots[i].uuid, 16);
	return vol_sb_write(v->slot[i], &s, v);
}

int vol_write_sb_slot(struct vol *v, unsigned slot)
{
	VOL_NOT_ON_COMPLETION("vol_write_sb_slot");
	v->sb.utime = (uint64_t)time(NULL);
	return slot < v->nslots ? write_slot(v, slot) : -EINVAL;
}

int vol_write_sbs(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_write_sbs");
	int first = 0;
	v->sb.utime = (uint64_t)time(NULL);
	for (unsigned i = 0; i < v->nslots; i++) {
		int r = write_slot(v, i);
		if (r && !first)
			first = r;
	}
	return first;
}

const char *vol_slot_state(const struct vol *v, unsigned slot)
{
	if ((int)slot == atomic_load(&v->rebuild_slot))
		return "rebuilding";
	if (slot < v->geom.members && (atomic_load(&v->failed) & (1ull << slot)))
		return v->slot[slot] ? "failed" : "missing";
	if (!v->slot[slot] && v->sb.slots[slot].state == SB_EMPTY)
		return "removed";
	return sb_state_name(v->sb.slots[slot].state);
}

void vol_peek_wait(struct vol *v)
{
	while (atomic_load(&v->peek))
		sched_yield();
}
