/* vol_fail: a member failed on request (fsvol fail, MNT/ctl "fail M"), with
 * md's policy: the last working copy of some data is not failed unless
 * forced, so a mistaken command cannot stop a volume. Failures the engine
 * sees go through vol_fail_slot directly: a dead disk is not asked.
 *
 * vol_fail_request: 0 once slot is failed (or was already); -EINVAL with why
 * in err when slot is no member slot, or, without force, when the volume
 * could not serve its data without it. */
#include <errno.h>
#include <stdio.h>

#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"

int vol_fail_request(struct vol *v, unsigned slot, int force, char *err, size_t errlen)
{
	const struct layout_geom *g = vol_geom(v);
	/* during a reshape the members it adds are roles too, and both
	 * geometries must survive (md fails any member of a reshaping array) */
	unsigned n = vol_reshape_members(v);
	if (slot >= n) {
		int num = vol_slot_number(v, slot);
		if (num < 0)
			snprintf(err, errlen, "slot %u holds no member in a raid role", slot);
		else
			snprintf(err, errlen, "m%d is not in a raid role (a spare: fsvol remove takes it out)", num);
		return -EINVAL;
	}
	uint64_t failed = vol_failed_mask(v), bit = 1ull << slot;
	/* failing a member that already failed changes nothing, forced or not */
	if (!force && !(failed & bit) && !vol_reshape_survives(v, failed | bit)) {
		snprintf(err, errlen, "%s cannot serve its data without member %d%s", layout_level_name(g->level),
			 vol_slot_number(v, slot), layout_copies(g) + layout_parity_count(g) > 1 ? " (too many already failed)"
									  : " (no redundancy)");
		return -EINVAL;
	}
	vol_fail_slot(v, slot, -EIO);
	return 0;
}
