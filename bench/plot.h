/* plot: a sweep's charts (plot.c), and gnuplot for replay --compare. */
#ifndef FSVOL_BENCH_PLOT_H
#define FSVOL_BENCH_PLOT_H

#include <stdio.h>

#include "bench/sweep_rows.h"

/* Data files and a gnuplot script in dir, then gnuplot for PNG and
 * SVG. Writes what it did (or why not) to msg. 0 when the plots were made,
 * 1 when gnuplot is absent (CSV/JSON stand alone), -errno on failure. */
int bench_plot(const struct bench_sweep *s, const char *dir, FILE *msg);
/* gnuplot on $PATH; run DIR/plot.gp in DIR (its output in DIR/gnuplot.log): 0 or -errno. */
int bench_plot_have_gnuplot(void);
int bench_plot_run_gnuplot(const char *dir);

#endif
