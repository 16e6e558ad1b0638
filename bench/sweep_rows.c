/* sweep_rows: the series of a sweep and lookups in its rows (sweep_rows.h). */
#include <stdio.h>

#include "bench/sweep_rows.h"
#include "fsvol/util/size.h"

const char *const bench_wl_name[BENCH_WL_N] = { "seqread", "randread", "seqwrite", "randwrite" };

unsigned bench_sweep_nseries(const struct bench_sweep_opts *o)
{
	return o->nchunk * o->nmodel * o->nblock * o->nqd;
}

/* k = ((chunk * nmodel + model) * nblock + block) * nqd + qd: chunk varies slowest
 * (a new volume), the queue depth fastest. */
void bench_sweep_series_of(const struct bench_sweep_opts *o, unsigned k, struct bench_sweep_series *out)
{
	out->qd = o->qd[k % o->nqd];
	k /= o->nqd;
	out->block = o->block[k % o->nblock];
	k /= o->nblock;
	out->model = o->model[k % o->nmodel];
	k /= o->nmodel;
	out->chunk = o->chunk[k];
}

/* What varies between series, e.g. "chunk 4K, QD 16"; "" with one series. */
const char *bench_sweep_series_label(const struct bench_sweep_opts *o, unsigned k, char *buf, size_t len)
{
	return bench_sweep_series_label_but(o, k, 0, buf, len);
}

const char *bench_sweep_series_label_but(const struct bench_sweep_opts *o, unsigned k, unsigned skip, char *buf,
					 size_t len)
{
	struct bench_sweep_series se;
	char v[32];
	size_t n = 0;
	buf[0] = 0;
	bench_sweep_series_of(o, k, &se);
	if (o->nchunk > 1 && !(skip & BENCH_SERIES_CHUNK)) {
		size_format(se.chunk, v, sizeof(v));
		n += (size_t)snprintf(buf + n, len - n, "chunk %s", v);
	}
	if (o->nmodel > 1 && !(skip & BENCH_SERIES_MODEL) && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", se.model ? se.model : "none");
	if (o->nblock > 1 && !(skip & BENCH_SERIES_BLOCK) && n < len) {
		size_format(se.block, v, sizeof(v));
		n += (size_t)snprintf(buf + n, len - n, "%s-b %s", n ? ", " : "", v);
	}
	if (o->nqd > 1 && !(skip & BENCH_SERIES_QD) && n < len)
		snprintf(buf + n, len - n, "%sQD %u", n ? ", " : "", se.qd * o->run.threads);
	return buf;
}

const char *bench_sweep_pattern(const struct bench_sweep_opts *o, enum bench_wl wl, char *buf, size_t len)
{
	char d[64];
	if (!BENCH_WL_RANDOM(wl))
		snprintf(buf, len, "sequential");
	else if (o->run.dist.kind == BENCH_DIST_UNIFORM)
		snprintf(buf, len, "random");
	else
		snprintf(buf, len, "random %s", bench_dist_name(&o->run.dist, d, sizeof(d)));
	return buf;
}

int bench_sweep_by_level(const struct bench_sweep *s) { return s->o->nlevels > 0; }

const struct bench_sweep_row *bench_sweep_find(const struct bench_sweep *s, unsigned series,
					       enum layout_level level, unsigned members, enum bench_wl wl)
{
	for (unsigned i = 0; i < s->nrow; i++)
		if (s->row[i].series == series && s->row[i].level == level && s->row[i].members == members &&
		    s->row[i].wl == wl)
			return &s->row[i];
	return NULL;
}

