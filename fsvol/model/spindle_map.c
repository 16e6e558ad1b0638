/* spindle_map: a measured drive's logical-to-physical map, slips included.
 *
 * DiskSim's layout_g1 (diskmodel/layout_g1.c, the g1_ltop_* functions) maps a
 * zone's blocks under one of eleven sparing schemes; the slips listed for each
 * zone are defective blocks (whole tracks under track sparing) that the map
 * steps over, so every block after one moves on a sector (a track). Where the
 * slips are changes which cylinder, surface and angle a block has, and with
 * them seek and rotation. The rules below are DiskSim's, written from its
 * description of each scheme:
 *   1     track sparing: user blocks fill tracks from the zone's empty front;
 *         a slipped track is skipped; the spare tracks are at the zone's end;
 *   3     sectors per track: each track ends in `spares` spares; a slip on the
 *         track moves the blocks after it on by one;
 *   2,4-7 sectors per cylinder: each cylinder ends in `spares` spares; a slip on
 *         the cylinder moves the later blocks on (4, 6, 7: slips on earlier
 *         cylinders too: they are pushed to the zone's end);
 *   8     sectors per range of `range` cylinders, slips within the range;
 *   9, 10 spares at the zone's end, slips anywhere before the block;
 *   0     no sparing.
 * Under the sectors-per-cylinder schemes (2, 4, 5, 6) and sectors per track
 * (3), the slips before a track's first block also push its angle on by a
 * sector each (g1_map_pbn_skew), counted here as slipoffs. */
#include "fsvol/model/spindle.h"

static const uint32_t *slips_of(const struct spindle_table *t, unsigned z, uint32_t *n)
{
	*n = t->zone[z].nslip;
	return t->slip + t->zone[z].slip0;
}

/* Slip-to-end schemes: a slip on an earlier cylinder moves the blocks on. */
static int slip_to_end(int scheme)
{
	return scheme == 4 || scheme == 6 || scheme == 7;
}

/* Sectors-per-cylinder schemes whose slips push the angle (not 7). */
static int angle_slips(int scheme)
{
	return scheme == 2 || scheme == 4 || scheme == 5 || scheme == 6 || scheme == 3;
}

void spindle_map_ltop(const struct spindle_table *t, uint32_t heads, unsigned z, uint64_t rel,
		      struct spindle_pbn *p)
{
	uint32_t ns;
	const uint32_t *sl = slips_of(t, z, &ns);
	uint64_t spt = t->zone[z].spt, bpc = spt * heads, sp = t->zone[z].spares;
	uint64_t l = rel + t->zone[z].dead, cyl = 0, track = 0;
	switch (t->scheme) {
	case 1: /* slips are whole tracks */
		track = l / spt;
		for (uint32_t i = 0; i < ns; i++)
			if (sl[i] <= track)
				track++;
		cyl = track / heads;
		track %= heads;
		l %= spt;
		break;
	case 3: {
		uint64_t lpt = spt > sp ? spt - sp : 1, first;
		track = l / lpt;
		l %= lpt;
		first = spt * track;
		for (uint32_t i = 0; i < ns; i++)
			if (sl[i] >= first && sl[i] - first <= l)
				l++;
		cyl = track / heads;
		track %= heads;
		break;
	}
	case 2: case 4: case 5: case 6: case 7: case 8: {
		uint64_t per = t->scheme == 8 ? bpc * (t->range ? t->range : 1) : bpc;
		uint64_t lpu = per > sp ? per - sp : 1, unit = l / lpu, first, n = 0;
		l %= lpu;
		first = unit * per;
		for (uint32_t i = 0; i < ns; i++)
			if ((slip_to_end(t->scheme) && sl[i] / bpc < unit) ||
			    (sl[i] >= first && sl[i] - first <= l + n))
				n++;
		l += n;
		if (t->scheme == 8) {
			cyl = unit * (t->range ? t->range : 1) + l / bpc;
		} else {
			cyl = unit + l / lpu;
			l %= lpu;
		}
		track = (l % bpc) / spt;
		l %= spt;
		break;
	}
	case 9: case 10: {
		uint64_t n = 0;
		for (uint32_t i = 0; i < ns; i++)
			if (sl[i] <= l + n)
				n++;
		l += n;
		cyl = l / bpc;
		track = (l % bpc) / spt;
		l %= spt;
		break;
	}
	default:
		cyl = l / bpc;
		track = (l % bpc) / spt;
		l %= spt;
		break;
	}
	p->cyl = t->zone[z].cyl0 + cyl;
	p->head = (uint32_t)track;
	p->sector = (uint32_t)l;
	p->slipoffs = 0;
	if (angle_slips(t->scheme)) {
		uint64_t cut = (cyl * heads + (t->scheme == 3 ? track : 0)) * spt;
		for (uint32_t i = 0; i < ns; i++)
			if (sl[i] < cut)
				p->slipoffs++;
	}
}

/* Physical sector index of a block on the disk: tracks then sectors. */
static uint64_t phys(const struct spindle_table *t, uint32_t heads, unsigned z, uint64_t rel,
		     uint64_t *trk)
{
	struct spindle_pbn p;
	spindle_map_ltop(t, heads, z, rel, &p);
	*trk = p.cyl * heads + p.head;
	return p.sector;
}

uint64_t spindle_map_run(const struct spindle_table *t, uint32_t heads, unsigned z, uint64_t rel,
			 uint64_t left)
{
	uint64_t trk0, trk, s0 = phys(t, heads, z, rel, &trk0);
	uint64_t lo = 1, hi = t->zone[z].spt - s0; /* the run is in [lo, hi] */
	if (hi > left)
		hi = left;
	if (hi < 1)
		return 1;
	/* the map is monotonic: block rel + k is contiguous with rel iff it is on
	 * rel's track at sector s0 + k */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2, k = mid - 1;
		uint64_t s = phys(t, heads, z, rel + k, &trk);
		if (trk == trk0 && s == s0 + k)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}
