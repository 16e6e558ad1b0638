/* derive: interval metrics from two snapshots, under iostat's and PerfMon's
 * names. Every formula is listed in docs/counters.md. */
#include <errno.h>
#include <string.h>

#include "stats/stats.h"

#define MIB 1048576.0 /* iostat -m: MB = 2^20 bytes */
#define KIB 1024.0    /* iostat areq-sz: kB = 1024 bytes */

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

/* a later counter below an earlier one means a reset in between: count 0 */
static double dlt(uint64_t a, uint64_t b)
{
	return a > b ? (double)(a - b) : 0.0;
}

int stats_rates_compute(const struct stats_snap *prev, const struct stats_snap *cur,
			struct stats_rates *out)
{
	memset(out, 0, sizeof(*out));
	if (cur->t_ns <= prev->t_ns)
		return -EINVAL;
	double dt_ns = (double)(cur->t_ns - prev->t_ns);
	double t = dt_ns / 1e9;
	double r = dlt(cur->reads, prev->reads), w = dlt(cur->writes, prev->writes);
	double f = dlt(cur->flushes, prev->flushes);
	double rb = dlt(cur->read_bytes, prev->read_bytes);
	double wb = dlt(cur->write_bytes, prev->write_bytes);
	double rns = dlt(cur->read_ns, prev->read_ns), wns = dlt(cur->write_ns, prev->write_ns);
	double fns = dlt(cur->flush_ns, prev->flush_ns);
	double busy = dlt(cur->busy_ns, prev->busy_ns), queue = dlt(cur->queue_ns, prev->queue_ns);
	double seq = dlt(cur->seq_reads, prev->seq_reads) + dlt(cur->seq_writes, prev->seq_writes);

	out->interval_s = t;
	out->r_s = r / t;
	out->w_s = w / t;
	out->f_s = f / t;
	out->rmb_s = rb / MIB / t;
	out->wmb_s = wb / MIB / t;
	out->areq_kb = ratio(rb + wb, r + w) / KIB;
	out->rareq_kb = ratio(rb, r) / KIB;
	out->wareq_kb = ratio(wb, w) / KIB;
	out->r_await_ms = ratio(rns, r) / 1e6;
	out->w_await_ms = ratio(wns, w) / 1e6;
	out->f_await_ms = ratio(fns, f) / 1e6;
	out->aqu_sz = queue / dt_ns;
	out->util_pct = busy / dt_ns * 100.0;
	if (out->util_pct > 100.0) /* only when snapshots raced the clock */
		out->util_pct = 100.0;
	out->seq_pct = ratio(seq, r + w) * 100.0;

	/* interval latency distribution of transfers: bucket-wise deltas */
	uint64_t h[STATS_LAT_BUCKETS];
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		h[i] = (uint64_t)dlt(cur->lat[STATS_READ][i], prev->lat[STATS_READ][i]) +
		       (uint64_t)dlt(cur->lat[STATS_WRITE][i], prev->lat[STATS_WRITE][i]);
	const uint64_t *hv[1] = {h};
	out->p50_ms = stats_lat_percentile(hv, 1, 50.0) / 1e6;
	out->p99_ms = stats_lat_percentile(hv, 1, 99.0) / 1e6;
	out->p999_ms = stats_lat_percentile(hv, 1, 99.9) / 1e6;

	/* PerfMon: averages over the interval of completed transfers */
	out->transfers_s = (r + w) / t;
	out->read_bytes_s = rb / t;
	out->write_bytes_s = wb / t;
	out->avg_bytes_read = ratio(rb, r);
	out->avg_bytes_write = ratio(wb, w);
	out->avg_bytes_transfer = ratio(rb + wb, r + w);
	out->avg_sec_read = ratio(rns, r) / 1e9;
	out->avg_sec_write = ratio(wns, w) / 1e9;
	out->avg_sec_transfer = ratio(rns + wns, r + w) / 1e9;
	out->avg_read_queue = rns / dt_ns;
	out->avg_write_queue = wns / dt_ns;
	out->avg_queue = (rns + wns) / dt_ns;
	out->pct_disk_time = 100.0 * out->avg_queue; /* may exceed 100, as in Windows */
	out->pct_read_time = 100.0 * out->avg_read_queue;
	out->pct_write_time = 100.0 * out->avg_write_queue;
	out->pct_idle_time = 100.0 - out->util_pct;
	out->cur_queue = (double)cur->inflight;
	return 0;
}
