/* pattern: where I/O number k of a thread goes. Counter-based: the random
 * numbers of I/O k come from splitmix64 started at mix(key + k), so any k
 * can be computed alone, in any order, by any worker. */
#include <errno.h>
#include <math.h>

#include "bench/bench.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix64 (Steele, Lea, Flood): the state walks by GOLDEN, output is mixed. */
static uint64_t next(uint64_t *s)
{
	*s += GOLDEN;
	return mix64(*s);
}

static double unit01(uint64_t *s) /* [0, 1) with 53 bits */
{
	return (double)(next(s) >> 11) * 0x1p-53;
}

static uint64_t below(uint64_t *s, uint64_t n) /* [0, n), Lemire's multiply-high */
{
	return (uint64_t)(((unsigned __int128)next(s) * n) >> 64);
}

/* Zipf by rejection-inversion (Hormann & Derflinger 1996): O(1) set-up and
 * sampling for any N and theta > 0. H is an antiderivative of h(x) = x^-s;
 * the helpers keep H and its inverse exact near s = 1 (where H -> log). */
static double helper1(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x / 2 + x * x / 3; }
static double helper2(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x / 2 + x * x / 6; }
static double zh(double s, double x) { return exp(-s * log(x)); }
static double zH(double s, double x)
{
	double lx = log(x);
	return helper2((1 - s) * lx) * lx;
}
static double zHinv(double s, double x)
{
	double t = x * (1 - s);
	if (t < -1)
		t = -1; /* rounding at the far end */
	return exp(helper1(t) * x);
}

int bench_pattern_init(struct bench_pattern *p, const struct bench_opts *o, uint64_t size,
		       unsigned thread)
{
	*p = (struct bench_pattern){ 0 };
	p->key = mix64(o->seed ^ mix64(GOLDEN * (thread + 1)));
	p->block = o->block;
	p->random = o->random;
	p->rs_pct = o->random ? o->rs_pct : -1;
	p->write_pct = o->write_pct;
	p->dist = o->dist;
	p->unit = o->random ? (o->align ? o->align : o->block) : (o->stride ? o->stride : o->block);
	uint64_t end = o->max_off && o->max_off < size ? o->max_off : size;
	if (end < o->base || end - o->base < o->block)
		return -EINVAL;
	p->base = o->base;
	/* positions base + k * unit where a whole block fits below end */
	p->npos = (end - o->base - o->block) / p->unit + 1;
	if (!p->random)
		p->start = (uint64_t)thread * o->thread_stride / p->unit % p->npos;
	if (p->random && p->dist.kind == BENCH_DIST_ZIPF) {
		double s = p->dist.theta, n = (double)p->npos;
		p->z_hx1 = zH(s, 1.5) - 1;
		p->z_hn = zH(s, n + 0.5);
		p->z_s = 2 - zHinv(s, zH(s, 2.5) - zh(s, 2));
	}
	if (p->random && p->dist.kind == BENCH_DIST_HOT) {
		p->hot_n = (uint64_t)llround(p->dist.hot_data * (double)p->npos);
		if (p->hot_n < 1)
			p->hot_n = 1;
		if (p->hot_n > p->npos)
			p->hot_n = p->npos;
	}
	return 0;
}

static uint64_t zipf(const struct bench_pattern *p, uint64_t *s)
{
	double th = p->dist.theta, n = (double)p->npos;
	for (;;) {
		double u = p->z_hn + unit01(s) * (p->z_hx1 - p->z_hn);
		double x = zHinv(th, u);
		double k = floor(x + 0.5);
		if (k < 1)
			k = 1;
		else if (k > n)
			k = n;
		if (k - x <= p->z_s || u >= zH(th, k + 0.5) - zh(th, k))
			return (uint64_t)k - 1; /* rank 1 = record 0 */
	}
}

/* Normal around the middle of the range, redrawn outside it (truncated). */
static uint64_t normal(const struct bench_pattern *p, uint64_t *s)
{
	double n = (double)p->npos, mean = (n - 1) / 2, sd = p->dist.sigma * n;
	for (int tries = 0; tries < 1000; tries++) {
		/* Box-Muller: u1 in (0, 1] keeps log finite */
		double u1 = 1 - unit01(s), u2 = unit01(s);
		double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		double x = floor(mean + z * sd + 0.5);
		if (x >= 0 && x < n)
			return (uint64_t)x;
	}
	return (uint64_t)mean;
}

static uint64_t record(const struct bench_pattern *p, uint64_t *s)
{
	switch (p->dist.kind) {
	case BENCH_DIST_NORMAL: return normal(p, s);
	case BENCH_DIST_ZIPF: return zipf(p, s);
	case BENCH_DIST_HOT:
		if (p->hot_n == p->npos || unit01(s) < p->dist.hot_io)
			return below(s, p->hot_n);
		return p->hot_n + below(s, p->npos - p->hot_n);
	default: return below(s, p->npos);
	}
}

uint64_t bench_pattern_record(const struct bench_pattern *p, uint64_t k)
{
	uint64_t s = mix64(p->key + k * GOLDEN);
	next(&s); /* the draw that decides read or write */
	return record(p, &s);
}

/* -rs: whether I/O k starts a random run (a draw of its own, apart from
 * the op's and the record's). */
static int rs_random(const struct bench_pattern *p, uint64_t k)
{
	return mix64((p->key ^ 0x5bd1e995u) + k * GOLDEN) % 100 < (uint64_t)p->rs_pct;
}

#define RS_SCAN_MAX 1000000 /* a run longer than this counts from the start */

void bench_pattern_at(const struct bench_pattern *p, uint64_t k, uint64_t *off, int *is_write)
{
	uint64_t s = mix64(p->key + k * GOLDEN);
	uint64_t op = next(&s);
	*is_write = p->write_pct && op % 100 < p->write_pct;
	if (p->random && p->rs_pct >= 0) {
		/* the run I/O k belongs to began at the last random I/O j <= k: k
		 * is the (k - j)th block after it, in j's direction (diskspd:
		 * sequential runs are homogeneous); before any, a run from start */
		uint64_t j = p->rs_pct ? k : 0, span = p->npos * p->unit, rel;
		while (p->rs_pct && !rs_random(p, j) && j > 0 && k - j < RS_SCAN_MAX)
			j--;
		uint64_t sj = mix64(p->key + j * GOLDEN), opj = next(&sj);
		*is_write = p->write_pct && opj % 100 < p->write_pct;
		if (p->rs_pct && rs_random(p, j))
			rel = record(p, &sj) * p->unit + (k - j) * p->block;
		else
			rel = p->start * p->unit + k * p->block;
		rel %= span;
		if (rel > (p->npos - 1) * p->unit)
			rel = 0; /* the block would cross the end: wrap */
		*off = p->base + rel;
	} else if (p->random) {
		*off = p->base + record(p, &s) * p->unit;
	} else {
		*off = p->base + (p->start + k) % p->npos * p->unit;
	}
}
