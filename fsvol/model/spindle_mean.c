/* spindle_mean: the model's analytic figures (mean seek over a member or the
 * whole disk, mean random read time), for `fsvol model show`, the naive
 * validation baseline and the tests; the event-driven model is spindle.c. */
#include "fsvol/model/spindle.h"

#include <math.h>

#define NS_PER_S 1e9

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Bytes of [lo, hi) on cylinder c; *sq gets the sum over its tracks of the
 * squared bytes each holds of it. */
static double cyl_bytes(const struct spindle *s, uint64_t c, uint64_t lo, uint64_t hi,
			double *sq)
{
	*sq = 0;
	for (unsigned z = 0; z < s->nzones; z++) {
		const struct spindle_zone *zn = &s->zone[z];
		if (c >= zn->cyl0 + zn->cyls)
			continue;
		uint64_t tb = zn->track_bytes, per = tb * s->p.heads;
		uint64_t c0 = zn->start + (c - zn->cyl0) * per;
		uint64_t c1 = min_u64(c0 + per, zn->start + zn->bytes);
		uint64_t a = max_u64(c0, lo), b = min_u64(c1, hi);
		if (a >= b)
			return 0;
		for (uint64_t t = (a - c0) / tb; c0 + t * tb < b; t++) {
			uint64_t x = max_u64(a, c0 + t * tb), y = min_u64(b, c0 + (t + 1) * tb);
			*sq += (double)(y - x) * (double)(y - x);
		}
		return (double)(b - a);
	}
	return 0;
}

/* Cylinder of a disk byte as a real number (the byte's place within its
 * cylinder as the fraction), for spreading a zone's bytes over bins. */
static double cyl_pos(const struct spindle *s, uint64_t off)
{
	unsigned z = spindle_disk_zone(s, off);
	const struct spindle_zone *zn = &s->zone[z];
	double per = (double)zn->track_bytes * s->p.heads;
	return (double)zn->cyl0 + (double)(off - zn->start) / per;
}

/* Mean seek between two uniformly random bytes of [lo, hi) on disk s. */
static double mean_seek(const struct spindle *s, uint64_t lo, uint64_t hi)
{
	enum { BINS = 256 };
	double w[BINS] = { 0 };
	if (s->p.kind != SPINDLE_HDD || s->cylinders == 0 || hi <= lo)
		return 0;
	uint64_t c_lo = spindle_disk_cylinder(s, lo), n = spindle_disk_cylinder(s, hi - 1) - c_lo + 1;
	/* Weight of each cylinder (or bin of cylinders when there are many) by its
	 * bytes: uniformly random offsets land on outer cylinders more often. */
	unsigned nb = n < BINS ? (unsigned)n : BINS;
	double width = (double)n / nb;
	double m = (double)(hi - lo), switches = 0;
	if (nb == n) {
		/* exact: two offsets on one cylinder cost a head switch unless
		 * they are on the same track */
		for (uint64_t c = 0; c < n; c++) {
			double sq;
			w[c] = cyl_bytes(s, c_lo + c, lo, hi, &sq) / m;
			switches += w[c] * w[c] - sq / (m * m);
		}
	} else {
		/* a zone's bytes spread evenly over its cylinders, shared among the
		 * bins it overlaps: work by zones and bins, never by cylinders */
		for (unsigned z = 0; z < s->nzones; z++) {
			const struct spindle_zone *zn = &s->zone[z];
			uint64_t a = max_u64(lo, zn->start), b = min_u64(hi, zn->start + zn->bytes);
			if (a >= b)
				continue;
			double x0 = cyl_pos(s, a) - (double)c_lo;
			double x1 = x0 + (double)(b - a) / ((double)zn->track_bytes * s->p.heads);
			double per = (double)(b - a) / m / (x1 - x0);
			for (unsigned i = (unsigned)(x0 / width); i < nb && i * width < x1; i++) {
				double u = fmax(x0, i * width), v = fmin(x1, (i + 1) * width);
				if (v > u)
					w[i] += (v - u) * per;
			}
		}
	}
	/* Within a bin of many cylinders: the mean distance of two uniform
	 * points, width/3. Other pairs grouped by distance, so the curve is
	 * evaluated once per distance. */
	double sum = switches * (double)s->p.switch_ns;
	if (nb < n) {
		double same = 0;
		for (unsigned i = 0; i < nb; i++)
			same += w[i] * w[i];
		sum = same * spindle_seek_ns(s, width / 3);
	}
	for (unsigned d = 1; d < nb; d++) {
		double pd = 0;
		for (unsigned i = 0; i + d < nb; i++)
			pd += w[i] * w[i + d];
		sum += 2 * pd * spindle_seek_ns(s, d * width);
	}
	return sum;
}

double spindle_mean_seek_ns(const struct spindle *s)
{
	return mean_seek(s->disk, s->base, s->base + s->member_bytes);
}

double spindle_disk_mean_seek_ns(const struct spindle *s)
{
	return mean_seek(s->disk, 0, s->disk->disk_bytes);
}

double spindle_random_read_ns(const struct spindle *s, uint64_t len)
{
	const struct spindle_params *p = &s->p;
	const struct spindle *d = s->disk;
	if (p->kind == SPINDLE_SSD)
		return (double)(p->overhead_ns + p->read_ns)
		       + (double)len * NS_PER_S / (double)p->bw_Bps;
	if (p->kind != SPINDLE_HDD || !s->member_bytes)
		return 0;
	/* Mean transfer of len bytes at a uniformly random byte of the member: each
	 * zone weighted by its share of the member, len * rev / track_bytes inside
	 * one track. */
	double xfer = 0;
	uint64_t lo = s->base, hi = s->base + s->member_bytes;
	for (unsigned z = 0; z < d->nzones; z++) {
		const struct spindle_zone *zn = &d->zone[z];
		uint64_t a = max_u64(lo, zn->start), b = min_u64(hi, zn->start + zn->bytes);
		if (a < b)
			xfer += (double)(b - a) / (double)s->member_bytes
				* (double)len * d->rev_ns / (double)zn->track_bytes;
	}
	double link = (double)len * NS_PER_S / (double)p->iface_Bps;
	if (d->adapter) {
		double hold = (double)adapter_hold_ns(d->adapter, len);
		link = hold > link ? hold : link;
	}
	return (double)p->overhead_ns + spindle_mean_seek_ns(s) + d->rev_ns / 2
	       + (xfer > link ? xfer : link);
}

