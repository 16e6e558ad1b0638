/* vol_flags: md's per-device flags of a running volume (write-mostly,
 * failfast), kept in the superblock's slot entries (docs/format.md), so a
 * flag stays with its device when it moves between slots (a spare taking
 * over, a replace) and across re-assembly. The engine reads them without a
 * lock (vol_slot_flags); they change under the state lock and are written to
 * every member's superblock at once. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/util/log.h"

unsigned vol_slot_flags(const struct vol *v, unsigned slot)
{
	return slot < SB_MAX_SLOTS ? __atomic_load_n(&v->sb.slots[slot].flags, __ATOMIC_RELAXED) : 0;
}

const char *vol_flag_name(unsigned flag)
{
	return flag == SB_SLOT_WRITE_MOSTLY ? "writemostly" : flag == SB_SLOT_FAILFAST ? "failfast" : "?";
}

int vol_flags_check(const struct layout_geom *g, unsigned flags, char *err, size_t errlen)
{
	if ((flags & SB_SLOT_WRITE_MOSTLY) && g->level != LAYOUT_RAID1) {
		/* md: only raid1 balances reads by this flag */
		snprintf(err, errlen, "write-mostly is for raid1 only (md's); this volume is %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	if ((flags & SB_SLOT_FAILFAST) && g->level != LAYOUT_RAID1 && g->level != LAYOUT_RAID10) {
		snprintf(err, errlen, "failfast is for raid1 and raid10 only (md's); this volume is %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	return 0;
}

unsigned vol_failfast_ms(const struct vol *v)
{
	unsigned ms = atomic_load_explicit(&v->failfast_ms, memory_order_relaxed);
	return ms ? ms : VOL_FAILFAST_MS_DEFAULT;
}

void vol_set_failfast_ms(struct vol *v, unsigned ms)
{
	atomic_store(&v->failfast_ms, ms);
}
