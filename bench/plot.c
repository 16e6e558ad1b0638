/* plot: a sweep's charts. Writes plain data files and plot.gp into the
 * output dir, then runs gnuplot there, so the user can edit plot.gp and
 * re-run it by hand. Each chart comes as NAME.png and NAME.svg. A chart is
 * drawn only when its data can be: an axis over the member count needs two
 * counts or more, and every legend entry draws at least one point.
 *   members sweep (2+ counts): throughput (MB/s), iops, latency
 *   levels run:    levels (ms per I/O), member_ios (member I/Os per I/O)
 *   several series: series, series_latency (curves over -b, -o or --chunk)
 *   always:        share (member bytes), util (member %util) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
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

/* ---- series: what varies between them, and the curve over one of the list flags ---- */

/* The numeric list flag a series chart draws on its x axis (sizes and queue
 * depths, on a log2 axis); SX_NONE when only --model varies (bars, one per series). */
enum series_x { SX_NONE, SX_BLOCK, SX_QD, SX_CHUNK };

static enum series_x series_x(const struct bench_sweep_opts *o)
{
	return o->nblock > 1 ? SX_BLOCK : o->nqd > 1 ? SX_QD : o->nchunk > 1 ? SX_CHUNK : SX_NONE;
}

static unsigned series_nx(const struct bench_sweep_opts *o, enum series_x x)
{
	return x == SX_BLOCK ? o->nblock : x == SX_QD ? o->nqd : x == SX_CHUNK ? o->nchunk : 1;
}

/* Series k's index on the x axis (k = ((chunk * nmodel + model) * nblock + block) * nqd + qd). */
static unsigned series_xi(const struct bench_sweep_opts *o, enum series_x x, unsigned k)
{
	return x == SX_BLOCK ? k / o->nqd % o->nblock : x == SX_QD ? k % o->nqd
	     : x == SX_CHUNK ? k / (o->nqd * o->nblock * o->nmodel) : 0;
}

/* Series k's curve: the series that differ from it only on the x axis share it. */
static unsigned series_group(const struct bench_sweep_opts *o, enum series_x x, unsigned k)
{
	unsigned nx = series_nx(o, x), xi = series_xi(o, x, k);
	unsigned below = x == SX_BLOCK ? o->nqd : x == SX_QD ? 1 : x == SX_CHUNK ? o->nqd * o->nblock * o->nmodel : 1;
	return x == SX_NONE ? 0 : (k - xi * below) / (below * nx) * below + k % below;
}

/* The value of x index xi (the lists are sorted, so 0 is the smallest). */
static double series_xval(const struct bench_sweep_opts *o, enum series_x x, unsigned xi)
{
	return x == SX_BLOCK ? (double)o->block[xi] : x == SX_QD ? (double)o->qd[xi] * o->run.threads
	     : x == SX_CHUNK ? (double)o->chunk[xi] : xi;
}

static const unsigned series_skip[] = { 0, BENCH_SERIES_BLOCK, BENCH_SERIES_QD, BENCH_SERIES_CHUNK };

/* The x indexes by increasing value (the lists keep the order given). */
static void series_xsort(const struct bench_sweep_opts *o, enum series_x x, unsigned *perm)
{
	unsigned nx = series_nx(o, x);
	for (unsigned i = 0; i < nx; i++) {
		unsigned j = i;
		for (; j > 0 && series_xval(o, x, perm[j - 1]) > series_xval(o, x, i); j--)
			perm[j] = perm[j - 1];
		perm[j] = i;
	}
}

/* The series in series.dat's order: by curve, then along the x axis. */
static void series_order(const struct bench_sweep_opts *o, enum series_x x, unsigned *order)
{
	unsigned ns = bench_sweep_nseries(o), nx = series_nx(o, x), n = 0, perm[BENCH_SWEEP_MAX_VALS];
	series_xsort(o, x, perm);
	for (unsigned gr = 0; gr < ns / nx; gr++)
		for (unsigned xi = 0; xi < nx; xi++)
			for (unsigned k = 0; k < ns; k++)
				if (series_group(o, x, k) == gr && series_xi(o, x, k) == perm[xi])
					order[n++] = k;
}

/* series.dat: one line per series, its figures at the largest member count:
 * "label" x "x tick" then per workload MB/s, IOPS, ms per I/O. Curves take
 * consecutive lines (gnuplot's `every ::first::last`). */
static void data_series(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	enum series_x x = series_x(o);
	unsigned order[BENCH_SWEEP_MAX_VALS * BENCH_SWEEP_MAX_VALS * BENCH_SWEEP_MAX_VALS * BENCH_SWEEP_MAX_VALS];
	char lab[160], v[32];
	series_order(o, x, order);
	fprintf(f, "# series x x_label");
	for (unsigned w = 0; w < o->nwl; w++)
		fprintf(f, " %s_mb_s %s_iops %s_avg_ms", bench_wl_name[o->wl[w]], bench_wl_name[o->wl[w]],
			bench_wl_name[o->wl[w]]);
	fputc('\n', f);
	for (unsigned i = 0; i < bench_sweep_nseries(o); i++) {
		struct bench_sweep_series se;
		unsigned k = order[i];
		bench_sweep_series_of(o, k, &se);
		uint64_t xv = x == SX_BLOCK ? se.block : x == SX_QD ? se.qd * o->run.threads : x == SX_CHUNK ? se.chunk : i;
		if (x == SX_QD || x == SX_NONE)
			snprintf(v, sizeof(v), "%llu", (unsigned long long)xv);
		else
			size_format(xv, v, sizeof(v));
		fprintf(f, "\"%s\" %llu \"%s\"", axis_label(o, k, lab, sizeof(lab)), (unsigned long long)xv, v);
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

/* ---- the gnuplot script ---- */

/* A chart's plot command, built before it is written so that the legend's
 * place and the margins can be sized for its entries. */
struct plot_cmd {
	FILE *f;
	char *buf;
	size_t len, maxlen; /* the longest legend entry */
	unsigned n;         /* legend entries */
};

static int cmd_open(struct plot_cmd *c)
{
	*c = (struct plot_cmd){ 0 };
	c->f = open_memstream(&c->buf, &c->len);
	return c->f ? 0 : -errno;
}

/* One plot element: SPEC (printf-style: data, using, style), titled TITLE in the legend. */
__attribute__((format(printf, 3, 4))) static void cmd_add(struct plot_cmd *c, const char *title, const char *spec, ...)
{
	va_list ap;
	fputs(c->n ? ", " : "", c->f);
	va_start(ap, spec);
	vfprintf(c->f, spec, ap);
	va_end(ap);
	fprintf(c->f, " title '%s'", title);
	c->n++;
	if (strlen(title) > c->maxlen)
		c->maxlen = strlen(title);
}

/* Characters of 11-point text across the 1000-pixel canvas (8 pixels each,
 * a little wider than the text is, so a row never holds more entries than
 * gnuplot puts there), and an entry's line sample with the gap after it. */
#define KEY_LINE_CHARS 120
#define KEY_SAMPLE_CHARS 10
#define CHART_W 1000
#define CHART_H 640
#define ROW_PX 18
#define RUN_PX 30 /* a run's bars on a per member chart, its rotated label under them */

/* The legend below the frame, under the x axis' label: columns that fit the
 * canvas, a bottom margin that holds every row (gnuplot's own estimate of a
 * row's height is short under pngcairo, and its key met the axis label), and
 * a taller canvas for a long legend. Returns the canvas height. */
static unsigned key_below(FILE *g, const struct plot_cmd *c)
{
	unsigned cols = KEY_LINE_CHARS / (unsigned)(c->maxlen + KEY_SAMPLE_CHARS);
	cols = cols < 1 ? 1 : cols > c->n ? c->n : cols;
	unsigned rows = (c->n + cols - 1) / cols;
	fprintf(g, "set key below horizontal maxcols %u\nset bmargin %.1f\n", cols, 4.0 + 1.1 * rows);
	return CHART_H + (rows > 4 ? (rows - 4) * ROW_PX : 0);
}

/* Both terminals from one plot command: PNG first, then replot as SVG, on a
 * canvas of w x h pixels. */
static void chart_write(FILE *g, const char *name, unsigned w, unsigned h, struct plot_cmd *c)
{
	fclose(c->f);
	fprintf(g, "eval sprintf(PNG, %u, %u)\nset output '%s.png'\nplot %s\n", w, h, name, c->buf);
	fprintf(g, "eval sprintf(SVG, %u, %u)\nset output '%s.svg'\nreplot\nset output\nreset\neval STYLE\n", w, h, name);
	free(c->buf);
}

static void chart_begin(FILE *g, const char *name, const char *title)
{
	fprintf(g, "\n# ---- %s\nset title \"%s\" noenhanced\n", name, title);
}

/* The legend title of (series k, workload w) without the flags in skip: "randread" or "randread, QD 16". */
static const char *group_title(const struct bench_sweep_opts *o, unsigned k, unsigned skip, unsigned w, char *buf,
			       size_t len)
{
	char lab[160];
	bench_sweep_series_label_but(o, k, skip, lab, sizeof(lab));
	snprintf(buf, len, "%s%s%s", bench_wl_name[o->wl[w]], lab[0] ? ", " : "", lab);
	return buf;
}

/* Per member histogram (share or util): clustered bars per run, the legend beside. */
static void per_member_chart(FILE *g, const struct bench_sweep *s, const char *name, const char *title,
			     const char *ylab, int stacked, unsigned maxm)
{
	struct plot_cmd c;
	char t[16];
	if (cmd_open(&c))
		return;
	chart_begin(g, name, title);
	fprintf(g, "set style data histograms\nset style histogram %s\nset boxwidth %s\n"
		   /* 105: bars of 100 stay inside the frame */
		   "set yrange [0:105]\nset ytics 0,20,100\nset key outside right top vertical\nset xtics rotate by 30 right\n"
		   "set lmargin 18\n" /* room for the first rotated label */
		   "set xlabel '%s'\nset ylabel '%s'\n",
		   stacked ? "rowstacked" : "clustered gap 1", stacked ? "0.7" : "0.9",
		   s->o->nlevels ? "level and workload" : "members: workload", ylab);
	axis_legend(g, s->o);
	for (unsigned m = 0; m < maxm; m++) {
		snprintf(t, sizeof(t), "m%u", m);
		cmd_add(&c, t, "'%s.dat' using %u%s", name, m + 2, m ? "" : ":xtic(1)");
	}
	/* a label rotated by 30 degrees needs twice its line height between bars */
	chart_write(g, name, s->nrow * RUN_PX + 250 > CHART_W ? s->nrow * RUN_PX + 250 : CHART_W, CHART_H, &c);
}

/* What the title names: the parameters every run shared (the legend and the
 * x axis say what varies). */
static void fixed_params(const struct bench_sweep_opts *o, char *buf, size_t len)
{
	char chunk[32], block[32];
	size_t n = 0;
	size_format(o->chunk[0], chunk, sizeof(chunk));
	size_format(o->block[0], block, sizeof(block));
	n += (size_t)snprintf(buf, len, "%s%s", o->nlevels ? "levels" : layout_level_name(o->level),
			      !o->nlevels && o->level == LAYOUT_RAID0 ? " stripe set" : "");
	if (o->nblock == 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", %s blocks", block);
	if (o->nchunk == 1 && (o->nlevels || (o->level != LAYOUT_SINGLE && o->level != LAYOUT_LINEAR && o->level != LAYOUT_RAID1)) && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", chunk %s", chunk);
	if (o->nmodel == 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", model %s", o->model[0] ? o->model[0] : "none");
	if (o->nqd == 1 && n < len)
		snprintf(buf + n, len - n, ", QD %u", o->qd[0] * o->run.threads);
}

/* members sweep (two member counts or more): throughput, IOPS and latency
 * against the member count, each series with its ideal scaling */
static void members_charts(FILE *g, const struct bench_sweep *s, const char *what)
{
	const struct bench_sweep_opts *o = s->o;
	const char *chart[3] = { "throughput", "iops", "latency" };
	const char *ylab[3] = { "throughput (MB/s)", "I/Os per second", "latency (ms)" };
	const char *head[3] = { "Throughput", "IOPS", "Latency percentiles" };
	const char *pn[3] = { "p50", "p90", "p99" };
	char t[400], gt[200], it[220];
	for (unsigned c = 0; c < 3; c++) {
		struct plot_cmd pc;
		if (cmd_open(&pc))
			return;
		snprintf(t, sizeof(t), "%s vs member count: %s", head[c], what);
		chart_begin(g, chart[c], t);
		fprintf(g, "set xrange [%g:%g]\nset xtics 1\nset yrange [0:*]\nset xlabel 'members'\nset ylabel '%s'\n",
			o->mem_lo - 0.3, o->mem_hi + 0.3, ylab[c]);
		for (unsigned k = 0, gi = 0; k < bench_sweep_nseries(o); k++)
			for (unsigned w = 0; w < o->nwl; w++, gi++) {
				group_title(o, k, 0, w, gt, sizeof(gt));
				if (c == 2) {
					for (unsigned p = 0; p < 3; p++) {
						snprintf(it, sizeof(it), "%s %s", gt, pn[p]);
						cmd_add(&pc, it, "'sweep.dat' using 1:%u with linespoints lw 2 lc %u dt %u pt %u",
							4 + MCOLS * gi + p, gi + 1, p + 1, 7 - 2 * p);
					}
					continue;
				}
				cmd_add(&pc, gt, "'sweep.dat' using 1:%u with linespoints lw 2 lc %u pt 7 ps 1.2",
					2 + MCOLS * gi + c, gi + 1);
				snprintf(it, sizeof(it), "%s: ideal", gt);
				cmd_add(&pc, it, "'sweep.dat' using 1:%u with lines lw 1 lc %u dt 2", 2 + MCOLS * gi + 5 + c,
					gi + 1);
			}
		chart_write(g, chart[c], CHART_W, key_below(g, &pc), &pc);
	}
}

/* levels run: time per I/O and member I/Os per I/O, bars per level */
static void levels_charts(FILE *g, const struct bench_sweep *s, const char *what)
{
	const struct bench_sweep_opts *o = s->o;
	const char *ylab[2] = { "ms per I/O (application view)", "member I/Os per volume I/O" };
	const char *chart[2] = { "levels", "member_ios" };
	char t[400], gt[200], it[220];
	for (unsigned c = 0; c < 2; c++) {
		struct plot_cmd pc;
		if (cmd_open(&pc))
			return;
		snprintf(t, sizeof(t), "%s: %s", c ? "Member I/Os per volume I/O" : "Time per I/O by level", what);
		chart_begin(g, chart[c], t);
		fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
			   "set yrange [0:*]\nset xlabel 'level (members)'\nset ylabel '%s'\n", ylab[c]);
		for (unsigned k = 0, gi = 0; k < bench_sweep_nseries(o); k++)
			for (unsigned w = 0; w < o->nwl; w++, gi++) {
				group_title(o, k, 0, w, gt, sizeof(gt));
				if (!c) {
					cmd_add(&pc, gt, "'levels.dat' using %u%s", 2 + 3 * gi, gi ? "" : ":xtic(1)");
					continue;
				}
				snprintf(it, sizeof(it), "%s: member writes", gt);
				cmd_add(&pc, it, "'levels.dat' using %u%s", 3 + 3 * gi, gi ? "" : ":xtic(1)");
				snprintf(it, sizeof(it), "%s: member reads", gt);
				cmd_add(&pc, it, "'levels.dat' using %u", 4 + 3 * gi);
			}
		chart_write(g, chart[c], CHART_W, key_below(g, &pc), &pc);
	}
}

/* several series: their figures at the largest member count, as curves over
 * the record size, queue depth or chunk (one per workload and remaining
 * combination), or as bars per series when only the model varies */
static void series_charts(FILE *g, const struct bench_sweep *s, const char *what)
{
	const struct bench_sweep_opts *o = s->o;
	enum series_x x = series_x(o);
	unsigned nx = series_nx(o, x), ns = bench_sweep_nseries(o);
	const char *xname[4] = { "series", "record size", "queue depth", "chunk size" };
	const char *xlab[4] = { "series", "record size (-b)", "outstanding I/Os (-o x -t)", "chunk size (--chunk)" };
	const char *chart[2] = { "series", "series_latency" };
	const char *ylab[2] = { "throughput (MB/s)", "ms per I/O (application view)" };
	char t[400], gt[200];
	for (unsigned c = 0; c < 2; c++) {
		struct plot_cmd pc;
		if (cmd_open(&pc))
			return;
		snprintf(t, sizeof(t), "%s %s %s, %u member%s: %s", c ? "Time per I/O" : "Throughput", x ? "vs" : "by",
			 xname[x], o->mem_hi, o->mem_hi == 1 ? "" : "s", what);
		chart_begin(g, chart[c], t);
		fprintf(g, "set yrange [0:*]\nset xlabel '%s'\nset ylabel '%s'\n", xlab[x], ylab[c]);
		if (x == SX_NONE) {
			fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
				   "set xtics rotate by 30 right\nset lmargin 18\nset key outside right top vertical\n");
			axis_legend(g, o);
			for (unsigned w = 0; w < o->nwl; w++)
				cmd_add(&pc, bench_wl_name[o->wl[w]], "'series.dat' using %u%s", 4 + 3 * w + 2 * c,
					w ? "" : ":xtic(1)");
			chart_write(g, chart[c], CHART_W, CHART_H, &pc);
			continue;
		}
		/* a log2 axis with a tick at each value the sweep took, named as the flag was */
		unsigned perm[BENCH_SWEEP_MAX_VALS];
		series_xsort(o, x, perm);
		fprintf(g, "set logscale x 2\nset xrange [%g:%g]\n", series_xval(o, x, perm[0]) / 1.4,
			series_xval(o, x, perm[nx - 1]) * 1.4);
		for (unsigned gr = 0; gr < ns / nx; gr++) {
			unsigned k = 0;
			while (series_group(o, x, k) != gr)
				k++;
			for (unsigned w = 0; w < o->nwl; w++)
				cmd_add(&pc, group_title(o, k, series_skip[x], w, gt, sizeof(gt)),
					"'series.dat' every ::%u::%u using 2:%u:xtic(3) with linespoints lw 2 lc %u pt 7 ps 1.2",
					gr * nx, gr * nx + nx - 1, 4 + 3 * w + 2 * c, gr * o->nwl + w + 1);
		}
		chart_write(g, chart[c], CHART_W, key_below(g, &pc), &pc);
	}
}

/* %util is iostat's: time with a request outstanding at the member. The
 * platter turns (and reads ahead) while none is, so at equal r/s a member
 * whose requests arrive later shows less %util for the same work. */
#define UTIL_NOTE "%%util = time with a request outstanding (iostat's): at equal r/s, lower = waited for requests"

static void script(FILE *g, const struct bench_sweep *s, unsigned maxm)
{
	const struct bench_sweep_opts *o = s->o;
	char what[300], t[700];
	fixed_params(o, what, sizeof(what));
	fprintf(g, "# fsvol-bench sweep plots: run `gnuplot plot.gp` in this directory.\n"
		   "PNG = (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) ? "
		   "\"set terminal pngcairo size %%d,%%d noenhanced font ',11'\" : \"set terminal png size %%d,%%d noenhanced\"\n"
		   "SVG = \"set terminal svg size %%d,%%d dynamic noenhanced font 'sans,11'\"\n"
		   /* the legend outside the frame never hides a point; labels are literal (no
		    * enhanced text: '@' and '_' in specs); the top offset keeps the highest
		    * point inside the frame */
		   "STYLE = \"set grid ytics; set datafile missing 'NaN'; "
		   "set style fill solid 0.85 border -1; set offsets 0, 0, graph 0.08, 0\"\n"
		   "eval STYLE\n");
	if (o->nlevels)
		levels_charts(g, s, what);
	else if (o->mem_hi > o->mem_lo)
		members_charts(g, s, what);
	if (!o->nlevels && bench_sweep_nseries(o) > 1)
		series_charts(g, s, what);
	snprintf(t, sizeof(t), "Share of member bytes per run: %s", what);
	per_member_chart(g, s, "share", t, "share of member bytes (%)", 1, maxm);
	snprintf(t, sizeof(t), "%%util of each member per run: %s\\n" UTIL_NOTE, what);
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

/* The charts script() draws for s, in the order it draws them; returns how many. */
static unsigned chart_list(const struct bench_sweep *s, const char **out)
{
	static const char *const mem[] = { "throughput", "iops", "latency" }, *const lev[] = { "levels", "member_ios" };
	unsigned n = 0;
	if (bench_sweep_by_level(s))
		for (unsigned i = 0; i < 2; i++)
			out[n++] = lev[i];
	else if (s->o->mem_hi > s->o->mem_lo)
		for (unsigned i = 0; i < 3; i++)
			out[n++] = mem[i];
	if (!bench_sweep_by_level(s) && bench_sweep_nseries(s->o) > 1) {
		out[n++] = "series";
		out[n++] = "series_latency";
	}
	out[n++] = "share";
	out[n++] = "util";
	return n;
}

/* A chart an earlier sweep left in dir that this one does not draw would be
 * read as this sweep's: remove it. */
static void remove_stale(const char *dir, const char **charts, unsigned n)
{
	static const char *const all[] = { "throughput", "iops", "latency", "levels", "member_ios",
					   "series", "series_latency", "share", "util" };
	static const char *const ext[] = { "png", "svg" };
	char p[PATH_MAX];
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		unsigned drawn = 0;
		for (unsigned j = 0; j < n; j++)
			drawn |= !strcmp(all[i], charts[j]);
		for (unsigned e = 0; e < 2 && !drawn; e++) {
			snprintf(p, sizeof(p), "%s/%s.%s", dir, all[i], ext[e]);
			unlink(p);
		}
	}
}

int bench_plot(const struct bench_sweep *s, const char *dir, FILE *msg)
{
	const char *charts[10];
	unsigned nc = chart_list(s, charts);
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
	remove_stale(dir, charts, nc);
	if (!have_gnuplot()) {
		fprintf(msg, "gnuplot not found: wrote CSV only (apt-get install gnuplot-nox)\n");
		return 1;
	}
	if ((r = run_gnuplot(dir))) {
		fprintf(msg, "gnuplot failed: see %s/gnuplot.log (data and plot.gp are in %s)\n", dir, dir);
		return r;
	}
	fprintf(msg, "plots (PNG and SVG) in %s/:", dir);
	for (unsigned i = 0; i < nc; i++) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s.png", dir, charts[i]);
		if (stat(p, &st) || !st.st_size) {
			fprintf(msg, "\ngnuplot made no %s (see %s/gnuplot.log)\n", p, dir);
			return -EIO;
		}
		fprintf(msg, " %s.png", charts[i]);
	}
	fputc('\n', msg);
	return 0;
fail:
	fprintf(msg, "plots: cannot write %s: %s\n", p[0] ? p : dir, strerror(-r));
	return r;
}
