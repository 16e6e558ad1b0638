/* validate: DiskSim-style validation replay in virtual time (see validate.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/model/emul.h"
#include "fsvol/model/validate.h"

struct vrun {
	struct emul *e;
	struct emul_io io;
	struct spindle sp;
	const struct tracefile *t;
	uint64_t *emul_ns;
	unsigned char *hit;
	size_t i;        /* request in service */
};

static void vrun_submit(struct vrun *v, uint64_t at)
{
	const struct tracefile_rec *r = &v->t->rec[v->i];
	memset(&v->io.r, 0, sizeof(v->io.r));
	v->io.r.offset = r->off;
	v->io.r.length = r->len;
	v->io.r.write = r->op == TRACEFILE_WRITE;
	v->io.r.arrival_ns = at;
	emul_submit(v->e, &v->io);
}

/* Completion of request i: record it, issue i+1 after the recorded idle gap
 * (the next issue time less this one's issue and measured service). */
static void vrun_release(struct emul_io *io)
{
	struct vrun *v = (struct vrun *)((char *)io - offsetof(struct vrun, io));
	const struct tracefile_rec *r = &v->t->rec[v->i];
	v->emul_ns[v->i] = io->r.done_ns - io->r.arrival_ns;
	if (v->hit)
		v->hit[v->i] = (unsigned char)io->r.cost.cache_hit;
	if (++v->i == v->t->n)
		return;
	int64_t gap = (int64_t)(v->t->rec[v->i].t_ns - r->t_ns) - (r->service_ns > 0 ? r->service_ns : 0);
	vrun_submit(v, io->r.done_ns + (uint64_t)(gap > 0 ? gap : 0));
}

int validate_run(const struct spindle_params *p, const struct tracefile *t, uint64_t *emul_ns,
		 char *err, size_t errlen)
{
	return validate_run_hits(p, t, emul_ns, NULL, err, errlen);
}

int validate_run_hits(const struct spindle_params *p, const struct tracefile *t,
		      uint64_t *emul_ns, unsigned char *hit, char *err, size_t errlen)
{
	struct vrun *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	uint64_t disk = p->capacity_bytes ? p->capacity_bytes : t->max_end;
	for (size_t i = 0; i < t->n; i++)
		if (t->rec[i].off + t->rec[i].len > disk) {
			snprintf(err, errlen, "line %u: blocks %llu..%llu are beyond the drive's %llu"
				 " blocks", t->rec[i].line, (unsigned long long)(t->rec[i].off / 512),
				 (unsigned long long)((t->rec[i].off + t->rec[i].len) / 512 - 1),
				 (unsigned long long)(disk / 512));
			free(v);
			return -EINVAL;
		}
	int rc = emul_create_virtual(&v->e);
	if (rc) {
		free(v);
		return rc;
	}
	spindle_init(&v->sp, p, disk);
	v->t = t;
	v->emul_ns = emul_ns;
	v->hit = hit;
	v->io.sp = &v->sp;
	v->io.release = vrun_release;
	if (t->n) {
		vrun_submit(v, 0);
		emul_run(v->e, UINT64_MAX);
	}
	rc = v->i == t->n ? 0 : -EIO;
	if (rc)
		snprintf(err, errlen, "the replay stopped after %zu of %zu requests", v->i, t->n);
	emul_destroy(v->e);
	free(v);
	return rc;
}

void validate_naive(const struct spindle_params *p, const struct tracefile *t, uint64_t *emul_ns)
{
	static struct spindle sp; /* large: not on the stack */
	uint64_t disk = p->capacity_bytes ? p->capacity_bytes : t->max_end;
	spindle_init(&sp, p, disk);
	double seek = spindle_disk_mean_seek_ns(&sp), half = sp.rev_ns / 2;
	double rate, bytes = 0, ns = 0;
	for (unsigned z = 0; z < sp.nzones; z++) { /* byte-weighted mean media rate */
		bytes += (double)sp.zone[z].bytes;
		ns += (double)sp.zone[z].bytes * 1e9 / spindle_zone_rate(&sp, z);
	}
	rate = ns > 0 ? bytes * 1e9 / ns : 1;
	for (size_t i = 0; i < t->n; i++)
		emul_ns[i] = (uint64_t)(seek + half + (double)t->rec[i].len * 1e9 / rate);
}

/* ---- DiskSim's rms ------------------------------------------------------- */

#define RMS_BUCKETS 1750

/* Bucket starts in us: 0, 1, 2, ... growing by 1 + 1% of the start (statdefs
 * "Start 0 step 1 grow 1", scale 1000 per ms). */
static void rms_starts(int *s)
{
	s[0] = 0;
	for (int i = 1; i < RMS_BUCKETS; i++)
		s[i] = s[i - 1] + 1 + (int)((double)abs(s[i - 1]) / 100.0);
}

/* The CDF DiskSim prints: x[i] = s[i] ms/1000, y[i] = share of values whose
 * whole us are below s[i]... counted one bucket up, as its stat_update does;
 * y at 6 decimals; the rows end at the first y >= 1. Returns the rows. */
static int rms_cdf(const double *v, size_t n, const int *s, double *x, double *y)
{
	uint64_t cnt[RMS_BUCKETS] = { 0 };
	for (size_t k = 0; k < n; k++) {
		int iv = (int)(v[k] * 1000.0);
		int i;
		if (iv >= s[RMS_BUCKETS - 2]) {
			i = RMS_BUCKETS - 1;
		} else {
			int lo = 0, hi = RMS_BUCKETS - 2;
			while (lo != hi) { /* the bucket with s[i] <= iv < s[i+1] */
				int mid = lo + (hi - lo) / 2;
				if (iv < s[mid + 1])
					hi = mid;
				else
					lo = mid + 1;
			}
			i = hi + 1;
		}
		cnt[i]++;
	}
	double dist = 0;
	for (int i = 0; i < RMS_BUCKETS; i++) {
		char buf[32];
		dist += (double)cnt[i] / (double)n;
		snprintf(buf, sizeof(buf), "%f", dist); /* what rms reads back */
		x[i] = s[i] / 1000.0;
		y[i] = strtod(buf, NULL);
		if (y[i] >= 1.0)
			return i + 1;
	}
	y[RMS_BUCKETS - 1] = 1.0;
	return RMS_BUCKETS;
}

double validate_rms(const double *a_ms, size_t na, const double *b_ms, size_t nb)
{
	static double x1[RMS_BUCKETS], y1[RMS_BUCKETS], x2[RMS_BUCKETS], y2[RMS_BUCKETS];
	int s[RMS_BUCKETS];
	if (!na || !nb)
		return NAN;
	rms_starts(s);
	int n1 = rms_cdf(a_ms, na, s, x1, y1), n2 = rms_cdf(b_ms, nb, s, x2, y2);
	double sq = 0;
	int count = 0, i1 = 0, i2 = 0;
	for (double pnt = 0.0001; pnt <= 1.0; pnt += 0.0001) {
		while (i1 < n1 - 1 && y1[i1] < pnt)
			i1++;
		while (i2 < n2 - 1 && y2[i2] < pnt)
			i2++;
		/* y[0] is 0 (nothing is below 0 us), so i >= 1 here */
		double f1 = i1 ? (pnt - y1[i1 - 1]) / (y1[i1] - y1[i1 - 1]) : 0;
		double f2 = i2 ? (pnt - y2[i2 - 1]) / (y2[i2] - y2[i2 - 1]) : 0;
		double p1 = i1 ? x1[i1 - 1] + f1 * (x1[i1] - x1[i1 - 1]) : x1[0];
		double p2 = i2 ? x2[i2 - 1] + f2 * (x2[i2] - x2[i2 - 1]) : x2[0];
		sq += (p1 - p2) * (p1 - p2);
		count++;
	}
	return sqrt(sq / count);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *s, size_t n, double p)
{
	size_t k = (size_t)ceil(p / 100.0 * (double)n);
	return s[k ? k - 1 : 0];
}

int validate_summary(const double *v, size_t n, double *mean, double *p50, double *p90)
{
	double *s = malloc((n ? n : 1) * sizeof(*s)), sum = 0;
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	*mean = n ? sum / (double)n : 0;
	*p50 = n ? pct(s, n, 50) : 0;
	*p90 = n ? pct(s, n, 90) : 0;
	free(s);
	return 0;
}
