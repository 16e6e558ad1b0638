/* plot: a sweep's charts. Writes plain data files and plot.gp into the
 * output dir, then runs gnuplot there, so the user can edit plot.gp and
 * re-run it by hand. Each chart comes as NAME.png and NAME.svg.
 *   members sweep: throughput (MB/s), iops, share (member bytes), latency
 *   levels run:    levels (ms per I/O), member_ios (member I/Os per I/O), share */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/plot.h"
#include "fsvol/util/size.h"

/* gnuplot on $PATH, as execvp would find it. */
static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char p[PATH_MAX];
	if (!path)
		path = "/usr/bin:/bin";
	for (const char *s = path; *s;) {
		const char *e = strchr(s, ':');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n && n < sizeof(p) - 9) {
			snprintf(p, sizeof(p), "%.*s/gnuplot", (int)n, s);
			if (!access(p, X_OK))
				return 1;
		}
		s += n + (e ? 1 : 0);
	}
	return 0;
}

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.6g", v);
	else
		fprintf(f, " NaN");
}

/* Columns per (series, workload) group in sweep.dat. */
#define MCOLS 8
/* members sweep: one line per member count; per (series, workload) group:
 * MB/s, IOPS, p50, p90, p99, the ideal MB/s and IOPS (linear from the first
 * member count: n / lo times its figure), the members' mean %util */
static void data_members(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	unsigned ns = bench_sweep_nseries(o);
	fprintf(f, "# members");
	for (unsigned k = 0; k < ns; k++)
		for (unsigned w = 0; w < o->nwl; w++) {
			const char *n = bench_wl_name[o->wl[w]];
			fprintf(f, " s%u_%s_mb_s s%u_%s_iops s%u_%s_p50_ms s%u_%s_p90_ms s%u_%s_p99_ms s%u_%s_ideal_mb_s"
				   " s%u_%s_ideal_iops s%u_%s_util_pct", k, n, k, n, k, n, k, n, k, n, k, n, k, n, k, n);
		}
	fputc('\n', f);
	for (unsigned n = o->mem_lo; n <= o->mem_hi; n++) {
		fprintf(f, "%u", n);
		for (unsigned k = 0; k < ns; k++)
			for (unsigned w = 0; w < o->nwl; w++) {
				const struct bench_sweep_row *r = bench_sweep_find(s, k, o->level, n, o->wl[w]);
				const struct bench_sweep_row *b = bench_sweep_find(s, k, o->level, o->mem_lo, o->wl[w]);
				double x = (double)n / o->mem_lo, u = NAN;
				num(f, r ? r->fig.mb_s : NAN);
				num(f, r ? r->fig.iops : NAN);
				num(f, r ? r->pct_ms[2] : NAN);
				num(f, r ? r->pct_ms[4] : NAN);
				num(f, r ? r->pct_ms[6] : NAN);
				num(f, b ? b->fig.mb_s * x : NAN);
				num(f, b ? b->fig.iops * x : NAN);
				if (r && r->members) {
					u = 0;
					for (unsigned m = 0; m < r->members; m++)
						u += r->dev[m].util_pct / r->members;
				}
				num(f, u);
			}
		fputc('\n', f);
	}
}

/* levels run: one line per level; per (series, workload): ms per I/O, member writes and reads per I/O */
static void data_levels(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	unsigned ns = bench_sweep_nseries(o);
	fprintf(f, "# level");
	for (unsigned k = 0; k < ns; k++)
		for (unsigned w = 0; w < o->nwl; w++)
			fprintf(f, " s%u_%s_ms s%u_%s_member_writes s%u_%s_member_reads", k, bench_wl_name[o->wl[w]], k,
				bench_wl_name[o->wl[w]], k, bench_wl_name[o->wl[w]]);
	fputc('\n', f);
	for (unsigned i = 0; i < o->nlevels; i++) {
		const struct bench_sweep_row *any = NULL;
		for (unsigned k = 0; k < s->nrow; k++)
			if (s->row[k].level == o->levels[i])
				any = &s->row[k];
		if (!any)
			continue;
		fprintf(f, "\"%s (%u)\"", layout_level_name(o->levels[i]), any->members);
		for (unsigned k = 0; k < ns; k++)
			for (unsigned w = 0; w < o->nwl; w++) {
				const struct bench_sweep_row *r = bench_sweep_find(s, k, o->levels[i], any->members, o->wl[w]);
				num(f, r ? r->fig.avg_ms : NAN);
				num(f, r ? r->m_writes_per_io : NAN);
				num(f, r ? r->m_reads_per_io : NAN);
			}
		fputc('\n', f);
	}
}

static unsigned max_members(const struct bench_sweep *s)
{
	unsigned maxm = 0;
	for (unsigned i = 0; i < s->nrow; i++)
		if (s->row[i].members > maxm)
			maxm = s->row[i].members;
	return maxm;
}

/* A series on an x axis: its label, or "#K" when the label is too long to
 * stand under a bar (the chart then lists "#K = label" below: axis_legend). */
#define AXIS_LABEL_MAX 24
static const char *axis_label(const struct bench_sweep_opts *o, unsigned k, char *buf, size_t len)
{
	bench_sweep_series_label(o, k, buf, len);
	if (strlen(buf) > AXIS_LABEL_MAX)
		snprintf(buf, len, "#%u", k + 1);
	return buf;
}

/* Under a chart whose x axis names series by number: what each number is. */
static void axis_legend(FILE *g, const struct bench_sweep_opts *o)
{
	char lab[160];
	unsigned ns = bench_sweep_nseries(o), shown = 0;
	for (unsigned k = 0; k < ns; k++)
		if (strlen(bench_sweep_series_label(o, k, lab, sizeof(lab))) > AXIS_LABEL_MAX)
			shown = 1;
	if (!shown)
		return;
	unsigned m = ns < 8 ? ns : 8;
	for (unsigned k = 0; k < m; k++)
		fprintf(g, "set label %u \"#%u = %s\" at screen 0.01, screen %.3f left font ',9'\n", 10 + k, k + 1,
			bench_sweep_series_label(o, k, lab, sizeof(lab)), 0.012 + 0.026 * (double)(m - 1 - k));
	if (ns > m)
		fprintf(g, "set label 20 \"(#9 and on: series_label in sweep.json)\" at screen 0.6, screen 0.012 left font ',9'\n");
	/* rotated tick labels and the axis label, then one line per series */
	fprintf(g, "set bmargin %u\n", 8 + (m * 6 + 4) / 5);
}

/* one line per run: each member's share of the member bytes (util = 0), or its %util (util = 1) */
static void data_per_member(FILE *f, const struct bench_sweep *s, int util)
{
	unsigned maxm = max_members(s), ns = bench_sweep_nseries(s->o);
	char lab[160];
	fprintf(f, "# run");
	for (unsigned m = 0; m < maxm; m++)
		fprintf(f, util ? " m%u_util_pct" : " m%u_pct", m);
	fputc('\n', f);
	for (unsigned i = 0; i < s->nrow; i++) {
		const struct bench_sweep_row *r = &s->row[i];
		double sum = 0;
		for (unsigned m = 0; m < r->members; m++)
			sum += (double)r->dev[m].bytes;
		axis_label(s->o, r->series, lab, sizeof(lab));
		if (bench_sweep_by_level(s))
			fprintf(f, "\"%s %s%s%s\"", layout_level_name(r->level), bench_wl_name[r->wl], ns > 1 ? ", " : "",
				lab);
		else
			fprintf(f, "\"%u: %s%s%s\"", r->members, bench_wl_name[r->wl], ns > 1 ? ", " : "", lab);
		for (unsigned m = 0; m < maxm; m++)
			num(f, m >= r->members ? 0 : util ? r->dev[m].util_pct
					 : sum > 0 ? (double)r->dev[m].bytes / sum * 100 : 0);
		fputc('\n', f);
	}
}

/* members sweep with several series: one line per series, its figures at the
 * largest member count (per workload MB/s, IOPS, ms per I/O) */
static void data_series(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	char lab[160];
	fprintf(f, "# series");
	for (unsigned w = 0; w < o->nwl; w++)
		fprintf(f, " %s_mb_s %s_iops %s_avg_ms", bench_wl_name[o->wl[w]], bench_wl_name[o->wl[w]],
			bench_wl_name[o->wl[w]]);
	fputc('\n', f);
	for (unsigned k = 0; k < bench_sweep_nseries(o); k++) {
		fprintf(f, "\"%s\"", axis_label(o, k, lab, sizeof(lab)));
		for (unsigned w = 0; w < o->nwl; w++) {
			const struct bench_sweep_row *r = bench_sweep_find(s, k, o->level, o->mem_hi, o->wl[w]);
			num(f, r ? r->fig.mb_s : NAN);
			num(f, r ? r->fig.iops : NAN);
			num(f, r ? r->fig.avg_ms : NAN);
		}
		fputc('\n', f);
	}
}

static void data_share(FILE *f, const struct bench_sweep *s) { data_per_member(f, s, 0); }
static void data_util(FILE *f, const struct bench_sweep *s) { data_per_member(f, s, 1); }

static int write_file(const char *dir, const char *name, void (*fill)(FILE *, const struct bench_sweep *),
		      const struct bench_sweep *s)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f)
		return -errno;
	fill(f, s);
	return fclose(f) ? -errno : 0;
}

/* Both terminals from one plot command: PNG first, then replot as SVG. */
static void chart_begin(FILE *g, const char *name, const char *title)
{
	fprintf(g, "\n# ---- %s\nset title \"%s\" noenhanced\neval PNG\nset output '%s.png'\n", name, title, name);
}

static void chart_end(FILE *g, const char *name)
{
	fprintf(g, "eval SVG\nset output '%s.svg'\nreplot\nset output\nreset\neval STYLE\n", name);
}

/* The legend title of (series k, workload w): "randread" or "randread, QD 16". */
static const char *group_title(const struct bench_sweep_opts *o, unsigned k, unsigned w, char *buf, size_t len)
{
	char lab[160];
	bench_sweep_series_label(o, k, lab, sizeof(lab));
	snprintf(buf, len, "%s%s%s", bench_wl_name[o->wl[w]], lab[0] ? ", " : "", lab);
	return buf;
}

/* Per member histogram (share or util): clustered bars per run. */
static void per_member_chart(FILE *g, const struct bench_sweep *s, const char *name, const char *title,
			     const char *ylab, int stacked, unsigned maxm)
{
	chart_begin(g, name, title);
	fprintf(g, "set style data histograms\nset style histogram %s\nset boxwidth %s\n"
		   /* 105: bars of 100 stay inside the frame */
		   "set yrange [0:105]\nset ytics 0,20,100\nset key outside right top vertical\nset xtics rotate by 30 right\n"
		   "set lmargin 18\n" /* room for the first rotated label */
		   "set xlabel '%s'\nset ylabel '%s'\n",
		   stacked ? "rowstacked" : "clustered gap 1", stacked ? "0.7" : "0.9",
		   s->o->nlevels ? "level and workload" : "members: workload", ylab);
	axis_legend(g, s->o);
	fprintf(g, "plot for [i=2:%u] '%s.dat' using i:xtic(1) title sprintf('m%%d', i-2)\n", maxm + 1, name);
	chart_end(g, name);
}

static void script(FILE *g, const struct bench_sweep *s, unsigned maxm)
{
	const struct bench_sweep_opts *o = s->o;
	unsigned ns = bench_sweep_nseries(o);
	char chunk[32], block[32], what[300], t[400], gt[200], qd[32];
	size_format(o->chunk[0], chunk, sizeof(chunk));
	size_format(o->block[0], block, sizeof(block));
	snprintf(qd, sizeof(qd), "QD %u", o->qd[0] * o->run.threads);
	/* the title names what is fixed; the legend what varies */
	snprintf(what, sizeof(what), "%s%s, %s blocks, chunk %s, model %s, %s", o->nlevels ? "levels" : layout_level_name(o->level),
		 !o->nlevels && o->level == LAYOUT_RAID0 ? " stripe set" : "", o->nblock > 1 ? "varied" : block, o->nchunk > 1 ? "varied" : chunk,
		 o->nmodel > 1 ? "varied" : o->model[0] ? o->model[0] : "none", o->nqd > 1 ? "QD varied" : qd);
	fprintf(g, "# fsvol-bench sweep plots: run `gnuplot plot.gp` in this directory.\n"
		   "PNG = (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) ? "
		   "\"set terminal pngcairo size 1000,640 noenhanced font ',11'\" : \"set terminal png size 1000,640 noenhanced\"\n"
		   "SVG = \"set terminal svg size 1000,640 dynamic noenhanced font 'sans,11'\"\n"
		   /* the legend below the frame never hides a point and leaves the frame its
		    * width whatever the labels (model specs are long); the top offset keeps
		    * the highest point inside the frame; labels are literal (no enhanced text:
		    * '@' and '_' in specs) */
		   "STYLE = \"set grid ytics; set key below; set datafile missing 'NaN'; "
		   "set style fill solid 0.85 border -1; set offsets 0, 0, graph 0.08, 0\"\n"
		   "eval STYLE\n");
	if (!o->nlevels) {
		const char *chart[2] = { "throughput", "iops" };
		const char *ylab[2] = { "throughput (MB/s)", "I/Os per second" };
		for (int c = 0; c < 2; c++) {
			snprintf(t, sizeof(t), "%s vs member count: %s", c ? "IOPS" : "Throughput", what);
			chart_begin(g, chart[c], t);
			fprintf(g, "set xrange [%g:%g]\nset xtics 1\nset yrange [0:*]\nset xlabel 'members'\n"
				   "set ylabel '%s'\nplot ", o->mem_lo - 0.3, o->mem_hi + 0.3, ylab[c]);
			for (unsigned k = 0, gi = 0; k < ns; k++)
				for (unsigned w = 0; w < o->nwl; w++, gi++) {
					group_title(o, k, w, gt, sizeof(gt));
					fprintf(g, "%s'sweep.dat' using 1:%u with linespoints lw 2 lc %u pt 7 ps 1.2 title '%s', "
						   "'' using 1:%u with lines lw 1 lc %u dt 2 title '%s: ideal'",
						gi ? ", " : "", 2 + MCOLS * gi + (unsigned)c, gi + 1, gt,
						2 + MCOLS * gi + 5 + (unsigned)c, gi + 1, gt);
				}
			fputc('\n', g);
			chart_end(g, chart[c]);
		}
		snprintf(t, sizeof(t), "Latency percentiles vs member count: %s", what);
		chart_begin(g, "latency", t);
		fprintf(g, "set xrange [%g:%g]\nset xtics 1\nset yrange [0:*]\nset xlabel 'members'\n"
			   "set ylabel 'latency (ms)'\nplot ", o->mem_lo - 0.3, o->mem_hi + 0.3);
		const char *pn[3] = { "p50", "p90", "p99" };
		for (unsigned k = 0, gi = 0; k < ns; k++)
			for (unsigned w = 0; w < o->nwl; w++, gi++)
				for (unsigned p = 0; p < 3; p++)
					fprintf(g, "%s'sweep.dat' using 1:%u with linespoints lw 2 lc %u dt %u pt %u title '%s %s'",
						gi || p ? ", " : "", 4 + MCOLS * gi + p, gi + 1, p + 1, 7 - 2 * p,
						group_title(o, k, w, gt, sizeof(gt)), pn[p]);
		fputc('\n', g);
		chart_end(g, "latency");
	} else {
		snprintf(t, sizeof(t), "Time per I/O by level: %s", what);
		chart_begin(g, "levels", t);
		fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
			   "set yrange [0:*]\nset xlabel 'level (members)'\nset ylabel 'ms per I/O (application view)'\nplot ");
		for (unsigned k = 0, gi = 0; k < ns; k++)
			for (unsigned w = 0; w < o->nwl; w++, gi++)
				fprintf(g, "%s'levels.dat' using %u%s title '%s'", gi ? ", " : "", 2 + 3 * gi,
					gi ? "" : ":xtic(1)", group_title(o, k, w, gt, sizeof(gt)));
		fputc('\n', g);
		chart_end(g, "levels");
		snprintf(t, sizeof(t), "Member I/Os per volume I/O: %s", what);
		chart_begin(g, "member_ios", t);
		fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
			   "set yrange [0:*]\nset xlabel 'level (members)'\nset ylabel 'member I/Os per volume I/O'\nplot ");
		for (unsigned k = 0, gi = 0; k < ns; k++)
			for (unsigned w = 0; w < o->nwl; w++, gi++) {
				group_title(o, k, w, gt, sizeof(gt));
				fprintf(g, "%s'levels.dat' using %u%s title '%s: member writes', '' using %u title '%s: member reads'",
					gi ? ", " : "", 3 + 3 * gi, gi ? "" : ":xtic(1)", gt, 4 + 3 * gi, gt);
			}
		fputc('\n', g);
		chart_end(g, "member_ios");
	}
	if (!o->nlevels && ns > 1) {
		/* what varies on the x axis: record size, queue depth, model spec ... */
		const char *chart[2] = { "series", "series_latency" };
		const char *ylab[2] = { "throughput (MB/s)", "ms per I/O (application view)" };
		for (int c = 0; c < 2; c++) {
			snprintf(t, sizeof(t), "%s by series, %u member%s: %s", c ? "Time per I/O" : "Throughput", o->mem_hi,
				 o->mem_hi == 1 ? "" : "s", what);
			chart_begin(g, chart[c], t);
			fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
				   "set yrange [0:*]\nset xtics rotate by 30 right\nset lmargin 18\nset key outside right top vertical\nset xlabel 'series'\nset ylabel '%s'\n",
				ylab[c]);
			axis_legend(g, o);
			fprintf(g, "plot ");
			for (unsigned w = 0; w < o->nwl; w++)
				fprintf(g, "%s'series.dat' using %u%s title '%s'", w ? ", " : "", 2 + 3 * w + 2 * (unsigned)c,
					w ? "" : ":xtic(1)", bench_wl_name[o->wl[w]]);
			fputc('\n', g);
			chart_end(g, chart[c]);
		}
	}
	snprintf(t, sizeof(t), "Share of member bytes per run: %s", what);
	per_member_chart(g, s, "share", t, "share of member bytes (%)", 1, maxm);
	/* %util below 100 on some members is why a stripe set scales less than linearly */
	snprintf(t, sizeof(t), "%%util of each member per run (busy time / interval): %s", what);
	per_member_chart(g, s, "util", t, "member %util", 0, maxm);
}

static int run_gnuplot(const char *dir)
{
	pid_t pid = fork();
	int st;
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd;
		if (chdir(dir))
			_exit(126);
		if ((fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int bench_plot_have_gnuplot(void) { return have_gnuplot(); }
int bench_plot_run_gnuplot(const char *dir) { return run_gnuplot(dir); }

int bench_plot(const struct bench_sweep *s, const char *dir, FILE *msg)
{
	static const char *const members_charts[] = { "throughput", "iops", "share", "util", "latency", NULL };
	static const char *const level_charts[] = { "levels", "member_ios", "share", "util", NULL };
	const char *const *charts = bench_sweep_by_level(s) ? level_charts : members_charts;
	char p[PATH_MAX] = "";
	int r;
	FILE *f;

	if ((r = write_file(dir, bench_sweep_by_level(s) ? "levels.dat" : "sweep.dat",
			    bench_sweep_by_level(s) ? data_levels : data_members, s)) ||
	    (r = write_file(dir, "share.dat", data_share, s)) || (r = write_file(dir, "util.dat", data_util, s)) ||
	    (!bench_sweep_by_level(s) && bench_sweep_nseries(s->o) > 1 && (r = write_file(dir, "series.dat", data_series, s))))
		goto fail;
	snprintf(p, sizeof(p), "%s/plot.gp", dir);
	if (!(f = fopen(p, "w"))) {
		r = -errno;
		goto fail;
	}
	script(f, s, max_members(s));
	if (fclose(f)) {
		r = -errno;
		goto fail;
	}
	if (!have_gnuplot()) {
		fprintf(msg, "gnuplot not found: wrote CSV only (apt-get install gnuplot-nox)\n");
		return 1;
	}
	if ((r = run_gnuplot(dir))) {
		fprintf(msg, "gnuplot failed: see %s/gnuplot.log (data and plot.gp are in %s)\n", dir, dir);
		return r;
	}
	fprintf(msg, "plots (PNG and SVG) in %s/:", dir);
	for (unsigned i = 0; charts[i]; i++) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s.png", dir, charts[i]);
		if (stat(p, &st) || !st.st_size) {
			fprintf(msg, "\ngnuplot made no %s (see %s/gnuplot.log)\n", p, dir);
			return -EIO;
		}
		fprintf(msg, " %s.png", charts[i]);
	}
	if (!bench_sweep_by_level(s) && bench_sweep_nseries(s->o) > 1)
		fprintf(msg, " series.png series_latency.png");
	fputc('\n', msg);
	return 0;
fail:
	fprintf(msg, "plots: cannot write %s: %s\n", p[0] ? p : dir, strerror(-r));
	return r;
}
