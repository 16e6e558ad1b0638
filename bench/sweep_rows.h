/* sweep_rows: what a sweep measured and how it is looked up, shared by the
 * sweep's tables (sweep.c) and its plots (plot.c) so neither needs the other:
 * the options, the series (combinations of the list flags) and the rows. */
#ifndef FSVOL_BENCH_SWEEP_ROWS_H
#define FSVOL_BENCH_SWEEP_ROWS_H

#include <stddef.h>

#include "bench/bench.h"
#include "layout/layout.h"

enum bench_wl { BENCH_WL_SEQREAD, BENCH_WL_RANDREAD, BENCH_WL_SEQWRITE, BENCH_WL_RANDWRITE, BENCH_WL_N };
extern const char *const bench_wl_name[BENCH_WL_N]; /* "seqread", ... */
#define BENCH_WL_RANDOM(w) ((w) == BENCH_WL_RANDREAD || (w) == BENCH_WL_RANDWRITE)
#define BENCH_WL_WRITE(w) ((w) == BENCH_WL_SEQWRITE || (w) == BENCH_WL_RANDWRITE)

#define BENCH_SWEEP_MAX_LEVELS 8
#define BENCH_SWEEP_MAX_VALS 8    /* values of one list flag (-b, -o, --chunk, --model) */

struct bench_sweep_opts {
	struct bench_opts run;    /* -d -W -C -t -S -z --dist, the same for every run */
	enum layout_level level;  /* --level */
	unsigned mem_lo, mem_hi;  /* --members N or LO-HI */
	enum layout_level levels[BENCH_SWEEP_MAX_LEVELS]; /* --levels: compare levels instead */
	unsigned nlevels;
	uint64_t size;            /* data bytes per member */
	/* What the studies varied, each a list; every combination is a series. */
	uint64_t chunk[BENCH_SWEEP_MAX_VALS];  /* --chunk 4K,64K */
	unsigned nchunk;
	uint64_t block[BENCH_SWEEP_MAX_VALS];  /* -b 8K,64K */
	unsigned nblock;
	unsigned qd[BENCH_SWEEP_MAX_VALS];     /* -o 1,4,16 */
	unsigned nqd;
	const char *model[BENCH_SWEEP_MAX_VALS]; /* --model, repeatable; NULL = none */
	unsigned nmodel;
	enum bench_wl wl[BENCH_WL_N]; /* --workloads, in the order given */
	unsigned nwl;
	int no_fill;              /* --no-fill: measure the sparse volume create left */
	const char *out;          /* --out: CSV, JSON, plots; NULL = tables only */
	const char *dir;          /* --dir: where the temp dir of members goes */
	int quiet, json;
};

/* One combination of the list flags: the fixed part of a run's configuration. */
struct bench_sweep_series {
	uint64_t chunk, block;
	unsigned qd;
	const char *model;        /* NULL = none */
};
/* Series k of o (0 <= k < bench_sweep_nseries(o)), and a label of what varies. */
unsigned bench_sweep_nseries(const struct bench_sweep_opts *o);
void bench_sweep_series_of(const struct bench_sweep_opts *o, unsigned k, struct bench_sweep_series *out);
const char *bench_sweep_series_label(const struct bench_sweep_opts *o, unsigned k, char *buf, size_t len);
/* The same label without the flags in skip (BENCH_SERIES_*): what a curve over one of them keeps. */
enum { BENCH_SERIES_CHUNK = 1, BENCH_SERIES_MODEL = 2, BENCH_SERIES_BLOCK = 4, BENCH_SERIES_QD = 8 };
const char *bench_sweep_series_label_but(const struct bench_sweep_opts *o, unsigned k, unsigned skip, char *buf,
					 size_t len);

/* A member (or the volume) below the mapping layer, over the measured window. */
struct bench_sweep_dev {
	double r_s, w_s, mb_s, await_ms, aqu_sz, util_pct, p50_ms, p99_ms;
	uint64_t bytes;
};

/* One run: a volume and a workload, with its whole configuration. */
struct bench_sweep_row {
	unsigned series;          /* index into the combinations of the list flags */
	enum layout_level level;
	unsigned members;
	enum bench_wl wl;
	uint64_t chunk, block;
	unsigned qd, threads;
	const char *model;        /* NULL = none */
	int filled;               /* the members' data areas were written before measuring */
	double test_s;
	struct bench_figs fig;    /* the application's view: every thread summed */
	double pct_ms[BENCH_NPCT]; /* latency percentiles, ms (0 when no I/O) */
	struct bench_sweep_dev vol; /* the volume's own counters, same window */
	double m_reads_per_io, m_writes_per_io; /* member I/Os per volume I/O */
	struct bench_sweep_dev dev[LAYOUT_MAX_MEMBERS];
};

struct bench_sweep {
	const struct bench_sweep_opts *o;
	struct bench_sweep_row *row;
	unsigned nrow;
};

/* The same figure a table shows, for plots: "members" sweeps versus "levels". */
int bench_sweep_by_level(const struct bench_sweep *s);
/* Row of (series, config, workload), NULL when absent. */
const struct bench_sweep_row *bench_sweep_find(const struct bench_sweep *s, unsigned series,
					       enum layout_level level, unsigned members, enum bench_wl wl);
/* The pattern of a row's workload: "sequential", "random", "random normal:0.1". */
const char *bench_sweep_pattern(const struct bench_sweep_opts *o, enum bench_wl wl, char *buf, size_t len);

#endif
