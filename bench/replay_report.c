/* replay_report: what a replay adds to fsvol-bench's report (the trace, its
 * timing, how far the issue fell behind) and its per-request latency log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

int bench_replay_latency_log(const char *path, const struct tracefile *t, const struct bench_result *r,
			     char *err, size_t errlen)
{
	static const char *const opn[] = { "read", "write", "sync", "trim" };
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "--latency-log %s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "# index issue_us op offset length latency_us (trace line)\n");
	for (size_t i = 0; i < r->nreq && i < t->n; i++) {
		const struct bench_replay_req *q = &r->req[i];
		const struct tracefile_rec *x = &t->rec[i];
		if (q->done)
			fprintf(f, "%zu %.3f %s %" PRIu64 " %" PRIu64 " %.3f %u\n", i, (double)q->t_ns / 1e3,
				opn[x->op & 3], q->off, x->len, (double)q->lat_ns / 1e3, x->line);
		else
			fprintf(f, "%zu - %s %" PRIu64 " %" PRIu64 " skipped %u\n", i, opn[x->op & 3], x->off, x->len,
				x->line);
	}
	if (fclose(f)) {
		snprintf(err, errlen, "--latency-log %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

void bench_replay_report(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const struct tracefile *t = o->trace;
	uint64_t n[4] = { 0 };
	for (size_t i = 0; i < t->n; i++)
		n[t->rec[i].op & 3]++;
	fprintf(f, "\t\treplaying: '%s' (%s, %zu requests: %" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64
		   " syncs, %" PRIu64 " trims; it addresses %" PRIu64 " bytes)\n",
		o->replay, tracefile_fmt_name(t->fmt), t->n, n[TRACEFILE_READ], n[TRACEFILE_WRITE],
		n[TRACEFILE_SYNC], n[TRACEFILE_TRIM], t->max_end);
	if (o->virtual_time)
		fprintf(f, "\t\tclock: virtual (the model's discrete-event time; no waiting)\n");
	if (o->replay_afap)
		fprintf(f, "\t\ttiming: as fast as possible, %u in flight\n", o->outstanding);
	else if (o->replay_speed > 0 && o->replay_speed != 1)
		fprintf(f, "\t\ttiming: open loop, %g times faster than recorded\n", o->replay_speed);
	else
		fprintf(f, "\t\ttiming: open loop, as recorded\n");
	fprintf(f, "\t\toffsets: %s\n", o->replay_map == BENCH_MAP_WRAP ? "wrapped at the target's size"
				       : o->replay_map == BENCH_MAP_SCALE ? "scaled to the target's size"
									  : "as in the trace");
	if (r) {
		size_t issued = r->nreq - r->skipped;
		fprintf(f, "\t\tissued: %zu requests (%" PRIu64 " trims not replayed)", issued, r->skipped);
		if (!o->replay_afap)
			fprintf(f, "; behind schedule: mean %.1f us, max %.1f us", r->late_mean_ns / 1e3,
				(double)r->late_max_ns / 1e3);
		fputc('\n', f);
	}
}
