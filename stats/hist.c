/* hist: bucket arithmetic for the latency and size histograms, percentiles. */
#include "stats/stats.h"

/* Latency buckets, log-linear (the fio idea, derived here):
 *   v < 64:       bucket v (exact)
 *   v >= 64:      m = floor(log2 v) (>= 6), shift = m - 6,
 *                 sub = (v >> shift) - 64            (0..63)
 *                 bucket = (m - 5) * 64 + sub
 * so each power of two [2^m, 2^(m+1)) is cut into 64 equal buckets of width
 * w = 2^shift, and a bucket's lower bound is lo = (64 + sub) * w >= 64 w.
 * Error bound: we report the bucket middle mid = lo + (w - 1) / 2; every
 * integer v in [lo, lo + w - 1] is within (w - 1) / 2 of it, so the relative
 * error is <= (w - 1) / (2 * 64 w) < 1/128 = 0.78% (< 1%). Buckets below 128
 * have w = 1 and no error. m = 36 is the last group (2^37 ns = 137 s > 100 s):
 * (36 - 5) * 64 + 63 = 2047 = STATS_LAT_BUCKETS - 1. */
#define SUB (1u << STATS_LAT_SUB_BITS)
#define MAX_MSB 36

unsigned stats_lat_bucket(uint64_t ns)
{
	if (ns < SUB)
		return (unsigned)ns;
	unsigned m = 63u - (unsigned)__builtin_clzll(ns);
	if (m > MAX_MSB)
		return STATS_LAT_BUCKETS - 1;
	unsigned shift = m - STATS_LAT_SUB_BITS;
	return ((m - (STATS_LAT_SUB_BITS - 1)) << STATS_LAT_SUB_BITS) + (unsigned)((ns >> shift) - SUB);
}

uint64_t stats_lat_bucket_lo(unsigned idx)
{
	if (idx < SUB)
		return idx;
	unsigned g = idx >> STATS_LAT_SUB_BITS; /* g = m - 5 >= 1, shift = g - 1 */
	return (uint64_t)(SUB + (idx & (SUB - 1))) << (g - 1);
}

uint64_t stats_lat_bucket_width(unsigned idx)
{
	if (idx < SUB)
		return 1;
	return (uint64_t)1 << ((idx >> STATS_LAT_SUB_BITS) - 1);
}

double stats_lat_bucket_mid(unsigned idx)
{
	return (double)stats_lat_bucket_lo(idx) + (double)(stats_lat_bucket_width(idx) - 1) / 2.0;
}

/* bucket 0: <= 512; bucket k: (512 << (k-1), 512 << k]; last: > 16 MiB */
unsigned stats_size_bucket(uint64_t bytes)
{
	if (bytes <= 512)
		return 0;
	unsigned k = 64u - (unsigned)__builtin_clzll((bytes - 1) >> 9);
	return k < STATS_SIZE_BUCKETS - 1 ? k : STATS_SIZE_BUCKETS - 1;
}

uint64_t stats_size_bucket_hi(unsigned idx)
{
	return idx < STATS_SIZE_BUCKETS - 1 ? (uint64_t)512 << idx : 0;
}

double stats_lat_percentile(const uint64_t *const h[], unsigned nh, double p)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		for (unsigned j = 0; j < nh; j++)
			total += h[j][i];
	if (total == 0 || !(p > 0.0))
		return 0.0;
	if (p > 100.0)
		p = 100.0;
	/* nearest rank: the smallest value with at least p% of samples <= it */
	double x = p / 100.0 * (double)total;
	uint64_t rank = (uint64_t)x;
	if ((double)rank < x * (1.0 - 1e-12)) /* ceil, immune to 99.9 * 1000 = 999.0000001 */
		rank++;
	if (rank < 1)
		rank = 1;
	uint64_t cum = 0;
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++) {
		for (unsigned j = 0; j < nh; j++)
			cum += h[j][i];
		if (cum >= rank)
			return stats_lat_bucket_mid(i);
	}
	return stats_lat_bucket_mid(STATS_LAT_BUCKETS - 1);
}
