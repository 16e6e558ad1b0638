/* spindle_seek: the seek curve, from the data sheet's three points (fitted
 * once per disk) or from a measured drive's table; a leaf that the
 * event-driven model (spindle.c) and the analytic figures (spindle_mean.c)
 * both read. */
#include "fsvol/model/spindle.h"

#include <math.h>

/* Seek curve after Ruemmler & Wilkes: a + b*sqrt(d) below the knee K, c + e*d above,
 * through the three data-sheet points t(1) = t2t, t(D/3) = avg, t(D) = full, where
 * D = cylinders - 1 is the full stroke and K = knee * D <= D/3.
 *   long part through (D/3, avg) and (D, full):  e = (full - avg) / (2D/3),
 *                                                c = avg - e * D/3
 *   continuity at K:   a + b*sqrt(K) = c + e*K =: L
 *   through (1, t2t):  a + b = t2t
 *   => b = (L - t2t) / (sqrt(K) - 1),  a = t2t - b
 * Monotonic when e > 0 and b > 0 (L > t2t); the parser enforces both. */
void spindle_fit_seek(struct spindle *s)
{
	double d = s->cylinders > 1 ? (double)(s->cylinders - 1) : 0;
	double t1 = (double)s->p.seek_t2t_ns, ta = (double)s->p.seek_avg_ns;
	double tf = (double)s->p.seek_full_ns;
	double k = s->p.seek_knee * d;

	s->seek_linear = 1;
	s->seek_knee_cyl = k;
	if (d / 3 <= 1 || k <= 1 || tf <= ta)
		return;
	s->seek_e = (tf - ta) / (d - d / 3);
	s->seek_c = ta - s->seek_e * d / 3;
	double l = s->seek_c + s->seek_e * k;
	if (l <= t1)
		return;
	s->seek_b = (l - t1) / (sqrt(k) - 1);
	s->seek_a = t1 - s->seek_b;
	s->seek_linear = 0;
}

/* A measured seek table: linear between points, extrapolated past the last
 * (as DiskSim's "extracted" seek curves are read). */
double spindle_table_seek_ns(const struct spindle_table *t, double dist)
{
	unsigned i = 1;
	if (t->nseek == 1 || dist <= t->seek_d[0])
		return t->seek_ns[0] * (dist < t->seek_d[0] ? dist / t->seek_d[0] : 1);
	while (i < t->nseek - 1 && t->seek_d[i] < dist)
		i++;
	double d0 = t->seek_d[i - 1], d1 = t->seek_d[i];
	double v = t->seek_ns[i - 1] + (dist - d0) * (t->seek_ns[i] - t->seek_ns[i - 1]) / (d1 - d0);
	return v > 0 ? v : 0;
}

double spindle_seek_ns(const struct spindle *sp, double dist)
{
	const struct spindle *s = sp->disk;
	if (dist <= 0)
		return 0;
	if (s->p.tab && s->p.tab->nseek)
		return spindle_table_seek_ns(s->p.tab, dist);
	if (!s->seek_linear)
		return dist < s->seek_knee_cyl ? s->seek_a + s->seek_b * sqrt(dist)
					       : s->seek_c + s->seek_e * dist;
	/* Short stroke: straight lines through the same three points. */
	double d = s->cylinders > 1 ? (double)(s->cylinders - 1) : 1;
	double t1 = (double)s->p.seek_t2t_ns, ta = (double)s->p.seek_avg_ns;
	double tf = (double)s->p.seek_full_ns, x2 = d / 3;
	if (dist <= 1 || d <= 1)
		return t1;
	if (x2 <= 1)
		return t1 + (tf - t1) * (dist - 1) / (d - 1);
	if (dist <= x2)
		return t1 + (ta - t1) * (dist - 1) / (x2 - 1);
	return ta + (tf - ta) * (dist - x2) / (d - x2);
}
