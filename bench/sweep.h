/* sweep: `fsvol-bench sweep`, the classic experiments. Builds one volume per
 * member count (or per level) out of member files in a temp dir, runs each
 * workload on it with bench_run, and renders the rows: the stripe-set
 * table, the level table, CSV and JSON (sweep.c); plots are plot.c's. */
#ifndef FSVOL_BENCH_SWEEP_H
#define FSVOL_BENCH_SWEEP_H

#include <stdio.h>

#include "bench/sweep_rows.h"

/* `fsvol-bench sweep ARGS`: argv[0] is "sweep". Returns the exit status. */
int bench_sweep_main(int argc, char **argv);
/* 0 run; 1 --help printed; -EINVAL with a message naming the flag in err. */
int bench_sweep_parse(struct bench_sweep_opts *o, int argc, char **argv, char *err, size_t errlen);
/* The defaults the parser starts from (bench_sweep_parse does not set them). */
void bench_sweep_defaults(struct bench_sweep_opts *o);
/* The sweep's flag table (--help, the man page, the completion). */
struct bench_flag;
extern const struct bench_flag *const bench_sweep_flags;

#endif
