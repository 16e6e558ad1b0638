/* sweep: `fsvol-bench sweep`, the classic experiments. Builds one volume per
 * member count (or per level) out of member files in a temp dir, runs each
 * workload on it with bench_run, and renders the rows: the stripe-set
 * table, the level table, CSV and JSON (sweep.c), plots (plot.c). */
#ifndef FSVOL_BENCH_SWEEP_H
#define FSVOL_BENCH_SWEEP_H

#include <stdio.h>

#include "bench/bench.h"
#include "layout/layout.h"

enum bench_wl { BENCH_WL_SEQREAD, BENCH_WL_RANDREAD, BENCH_WL_SEQWRITE, BENCH_WL_RANDWRITE, BENCH_WL_N };
extern const char *const bench_wl_name[BENCH_WL_N]; /* "seqread", ... */
#define BENCH_WL_RANDOM(w) ((w) == BENCH_WL_RANDREAD || (w) == BENCH_WL_RANDWRITE)
#define BENCH_WL_WRITE(w) ((w) == BENCH_WL_SEQWRITE || (w) == BENCH_WL_RANDWRITE)

#define BENCH_SWEEP_MAX_LEVELS 8

struct bench_sweep_opts {
	struct bench_opts run;    /* -b -d -W -C -o -t -S -z, the same for every run */
	enum layout_level level;  /* --level */
	unsigned mem_lo, mem_hi;  /* --members N or LO-HI */
	enum layout_level levels[BENCH_SWEEP_MAX_LEVELS]; /* --levels: compare levels instead */
	unsigned nlevels;
	uint64_t chunk, size;     /* size: data bytes per member */
	const char *model;        /* fsvol's --model spec, NULL = none */
	enum bench_wl wl[BENCH_WL_N]; /* --workloads, in the order given */
	unsigned nwl;
	const char *out;          /* --out: CSV, JSON, plots; NULL = tables only */
	const char *dir;          /* --dir: where the temp dir of members goes */
	int quiet, json;
};

/* A member (or the volume) below the mapping layer, over the measured window. */
struct bench_sweep_dev {
	double r_s, w_s, mb_s, await_ms, aqu_sz, util_pct, p50_ms, p99_ms;
	uint64_t bytes;
};

/* One run: a volume and a workload. */
struct bench_sweep_row {
	enum layout_level level;
	unsigned members;
	enum bench_wl wl;
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

/* `fsvol-bench sweep ARGS`: argv[0] is "sweep". Returns the exit status. */
int bench_sweep_main(int argc, char **argv);
/* 0 run; 1 --help printed; -EINVAL with a message naming the flag in err. */
int bench_sweep_parse(struct bench_sweep_opts *o, int argc, char **argv, char *err, size_t errlen);
void bench_sweep_usage(FILE *f);
/* The sweep's flag table (--help, the man page, the completion). */
struct bench_flag;
extern const struct bench_flag *const bench_sweep_flags;

/* The same figure a table shows, for plots: "members" sweeps versus "levels". */
int bench_sweep_by_level(const struct bench_sweep *s);
/* Row of (config, workload), NULL when absent. */
const struct bench_sweep_row *bench_sweep_find(const struct bench_sweep *s, enum layout_level level,
					       unsigned members, enum bench_wl wl);

/* plot.c: data files and a gnuplot script in dir, then gnuplot for PNG and
 * SVG. Writes what it did (or why not) to msg. 0 when the plots were made,
 * 1 when gnuplot is absent (CSV/JSON stand alone), -errno on failure. */
int bench_plot(const struct bench_sweep *s, const char *dir, FILE *msg);

#endif
