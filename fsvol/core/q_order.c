/* q_order: raid6's Q in md's syndrome order on volumes that predate it.
 *
 * fsvol before format 5 multiplied each data block by g^j with j its data
 * index; md walks the members from the one after Q (raid5.c raid6_d0). On
 * the left-/right-asymmetric layouts the two differ, so such a volume's Q is
 * wrong for this build (and for md). Its mount owes a resync that rewrites Q
 * whole (md's repair: not limited by the bitmap, every write meanwhile a
 * reconstruct-write), and sets SB_FEAT_MD_Q when it ends; until then the
 * bit stays clear on disk, so an interrupted rewrite starts again at the next
 * mount. With a member missing the old Q would rebuild wrong data: refused.
 */
#include <errno.h>
#include <stdio.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/util/log.h"

static int asym6(uint32_t level, uint32_t alg)
{
	return level == LAYOUT_RAID6 && alg <= LAYOUT_RIGHT_ASYMMETRIC;
}

int vol_q_order_open(struct vol *v, uint64_t failed, char *err, size_t errlen)
{
	struct sb *s = &v->sb;
	if (s->features & SB_FEAT_MD_Q)
		return 0;
	int old = asym6(s->level, s->layout) ||
		  ((s->reshape_flags & SB_RESHAPE_ACTIVE) && asym6(s->new_level, s->new_layout));
	if (!old) {
		s->features |= SB_FEAT_MD_Q; /* the two orders agree here: written with the next superblocks */
		return 0;
	}
	const char *alg = layout_alg_name(&v->geom);
	if (v->opts.readonly)
		return 0; /* left so (examine tells); a read that needs Q would be wrong */
	if (failed) {
		snprintf(err, errlen, "cannot start this raid6 %s degraded: an fsvol before format 5 wrote its Q in the "
			 "data order, not md's, and a member rebuilt from it would be wrong; recover the missing member(s) "
			 "with that fsvol first (or add them back), then mount it here whole: the mount rewrites Q", alg);
		return -EINVAL;
	}
	v->q_rewrite = 1;
	fsvol_log(LOG_NOTICE, "raid6 %s: Q was written in the data order by an fsvol before format 5; a resync "
		  "rewrites it in md's order now (every stripe, not limited by the bitmap)", alg);
	return 0;
}

void vol_q_order_done(struct vol *v)
{
	if (!v->q_rewrite)
		return;
	vol_state_lock(v);
	v->sb.features |= SB_FEAT_MD_Q;
	v->q_rewrite = 0;
	vol_write_sbs(v);
	pthread_mutex_unlock(&v->state_lock);
	fsvol_log(LOG_NOTICE, "raid6 %s: Q rewritten in md's order; the superblocks say so (format 5)",
		  layout_alg_name(&v->geom));
}
