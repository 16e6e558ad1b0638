/* replay_cmp: fsvol-bench --replay FILE --compare LEVEL:N,... [--model SPEC]
 * answers "what if my workload ran on raid10 x4 instead of raid5 x4": it
 * builds each layout as the sweep does (member files in a temp dir, sized so
 * the volume holds what the trace addresses, or -c SIZE; sparse: --model's
 * disks time them), replays the same trace on each in-process, and prints one table;
 * --out DIR adds a CSV, data files and plots (throughput, latency CDF per
 * layout, each member's %util). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/plot.h"
#include "fsvol/core/volume.h"

#define CMP_MAX 8
#define CMP_CHUNK (64 * 1024)

struct cmp_layout {
	enum layout_level level;
	unsigned n;
	char name[32];       /* "raid5 x4" */
	/* results */
	double test_s, iops, mb_s, mean_ms, pct[BENCH_NPCT];
	double late_ms;      /* mean issue behind the schedule (open loop) */
	double m_ios_per_io, util[LAYOUT_MAX_MEMBERS];
	double *lat_ms;      /* every request's latency, sorted: the CDF */
	size_t nlat;
};

static char cmp_dir[PATH_MAX - 16];
static volatile sig_atomic_t cmp_made;

/* Async-signal-safe: the member files m0..m63 and the dir. */
static void cmp_remove(void)
{
	char p[PATH_MAX];
	size_t n = strlen(cmp_dir);
	if (!cmp_made)
		return;
	memcpy(p, cmp_dir, n);
	for (unsigned i = 0; i < BENCH_MAX_MEMBERS; i++) {
		size_t k = n;
		p[k++] = '/';
		p[k++] = 'm';
		if (i >= 10)
			p[k++] = (char)('0' + i / 10);
		p[k++] = (char)('0' + i % 10);
		p[k] = 0;
		unlink(p);
	}
	rmdir(cmp_dir);
	cmp_made = 0;
}

static void cmp_signal(int sig)
{
	cmp_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* "raid5:4,raid10:4,single:1" */
static int parse(const char *v, struct cmp_layout *l, unsigned *n, char *err, size_t errlen)
{
	char buf[256];
	if (strlen(v) >= sizeof(buf)) {
		snprintf(err, errlen, "--compare: too long");
		return -EINVAL;
	}
	strcpy(buf, v);
	*n = 0;
	for (char *s = buf, *next; s; s = next) {
		char *colon, *end;
		if ((next = strchr(s, ',')))
			*next++ = 0;
		if (*n == CMP_MAX) {
			snprintf(err, errlen, "--compare %s: more than %d layouts", v, CMP_MAX);
			return -EINVAL;
		}
		struct cmp_layout *x = &l[*n];
		if (!(colon = strchr(s, ':'))) {
			snprintf(err, errlen, "--compare %s: '%s' is not LEVEL:N (e.g. raid5:4)", v, s);
			return -EINVAL;
		}
		*colon = 0;
		if (layout_parse_level(s, &x->level)) {
			snprintf(err, errlen, "--compare %s: unknown level '%s' (single, linear, raid0, raid1, raid10, "
				 "raid4, raid5, raid6)", v, s);
			return -EINVAL;
		}
		unsigned long k = strtoul(colon + 1, &end, 10);
		if (end == colon + 1 || *end || k < layout_min_members(x->level) || k > LAYOUT_MAX_MEMBERS ||
		    k > BENCH_MAX_MEMBERS) {
			snprintf(err, errlen, "--compare %s: %s needs %u..%d members, not '%s'", v,
				 layout_level_name(x->level), layout_min_members(x->level), LAYOUT_MAX_MEMBERS,
				 colon + 1);
			return -EINVAL;
		}
		x->n = (unsigned)k;
		snprintf(x->name, sizeof(x->name), "%s x%u", layout_level_name(x->level), x->n);
		(*n)++;
	}
	return 0;
}

/* Bytes per member so that the volume holds [0, need). */
static int member_size(const struct cmp_layout *x, uint64_t need, uint64_t *out, char *err, size_t errlen)
{
	struct layout_geom g = { .level = x->level, .alg = layout_default_alg(x->level), .members = x->n,
				 .chunk = CMP_CHUNK };
	uint64_t s = need / x->n + CMP_CHUNK;
	s = (s + (1 << 20) - 1) & ~(uint64_t)((1 << 20) - 1);
	for (int tries = 0; tries < 64; tries++) {
		for (unsigned i = 0; i < x->n; i++)
			g.member_size[i] = s;
		if (layout_init(&g, err, errlen))
			return -EINVAL;
		if (g.capacity >= need) {
			*out = s;
			return 0;
		}
		/* capacity grows linearly with s: aim at need, a MiB over */
		s = (uint64_t)((double)s * (double)need / (double)(g.capacity ? g.capacity : 1)) + (1 << 20);
		s = (s + (1 << 20) - 1) & ~(uint64_t)((1 << 20) - 1);
	}
	snprintf(err, errlen, "%s: no member size holds %llu bytes", x->name, (unsigned long long)need);
	return -EINVAL;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void fill_row(struct cmp_layout *x, const struct bench_result *res)
{
	struct bench_opstat all = { 0 };
	struct bench_figs f;
	all.lat_min = UINT64_MAX;
	for (unsigned t = 0; t < res->nthreads; t++)
		for (int op = 0; op < 2; op++)
			bench_opstat_add(&all, &res->thread[t].op[op]);
	bench_figs_of(&all, res->test_s, &f);
	x->test_s = res->test_s;
	x->late_ms = res->late_mean_ns / 1e6;
	x->iops = f.iops;
	x->mb_s = f.mb_s;
	x->mean_ms = f.avg_ms;
	if (!bench_percentiles(&all, x->pct))
		memset(x->pct, 0, sizeof(x->pct));
	const struct bench_below *b = res->target[0].below;
	if (b && b->ndev > 1) {
		uint64_t vios = b->dev[0].d.reads + b->dev[0].d.writes, mios = 0;
		for (unsigned i = 1; i < b->ndev && i - 1 < LAYOUT_MAX_MEMBERS; i++) {
			mios += b->dev[i].d.reads + b->dev[i].d.writes;
			x->util[i - 1] = b->dev[i].r.util_pct;
		}
		x->m_ios_per_io = vios ? (double)mios / (double)vios : 0;
	}
	if ((x->lat_ms = malloc((res->nreq ? res->nreq : 1) * sizeof(*x->lat_ms)))) {
		for (size_t i = 0; i < res->nreq; i++)
			if (res->req[i].done)
				x->lat_ms[x->nlat++] = (double)res->req[i].lat_ns / 1e6;
		qsort(x->lat_ms, x->nlat, sizeof(*x->lat_ms), by_double);
	}
}

static int run_one(const struct bench_opts *o, struct cmp_layout *x, char *err, size_t errlen)
{
	char path[BENCH_MAX_MEMBERS][PATH_MAX], msg[400];
	struct vol_create vc = { .name = "fsvol-replay", .force = 1 };
	struct bench_opts ro = *o;
	struct bench_result *res;
	int r;

	/* -c SIZE: every layout gets a volume of SIZE (the trace folded onto it
	 * with --replay-map); else one that holds all the trace addresses */
	if ((r = member_size(x, o->create_size ? o->create_size : o->trace->max_end, &vc.size, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s: %s", x->name, msg);
		return r;
	}
	vc.geom.level = x->level;
	vc.geom.alg = layout_default_alg(x->level);
	vc.geom.chunk = CMP_CHUNK;
	ro.members_buf = NULL;
	ro.nmembers = x->n;
	ro.ntargets = 0;
	ro.quiet = 1;
	ro.compare = NULL;
	for (unsigned i = 0; i < x->n; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/m%u", cmp_dir, i);
		ro.members[i] = path[i];
	}
	if ((r = vol_create(&vc, ro.members, x->n, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s: creating the volume: %s", x->name, msg);
		goto out;
	}
	snprintf(ro.cmdline, sizeof(ro.cmdline), "fsvol-bench --replay %s (%s)", o->replay, x->name);
	if ((r = bench_run(&ro, &res, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s: %s", x->name, msg);
		goto out;
	}
	fill_row(x, res);
	bench_result_free(res);
out:
	for (unsigned i = 0; i < x->n; i++)
		unlink(path[i]);
	return r;
}

static void table(FILE *f, const struct bench_opts *o, const struct cmp_layout *l, unsigned n)
{
	unsigned maxm = 0;
	for (unsigned k = 0; k < n; k++)
		maxm = l[k].n > maxm ? l[k].n : maxm;
	fprintf(f, "\nreplay of %s (%s, %zu requests), %s, chunk 64K, model %s\n", o->replay,
		tracefile_fmt_name(o->trace->fmt), o->trace->n,
		o->replay_afap ? "as fast as possible" : o->replay_speed > 0 && o->replay_speed != 1 ? "open loop, sped up"
												  : "open loop, as recorded",
		o->model ? o->model : "none");
	fprintf(f, "%-11s | %7s | %7s | %6s | %8s | %8s | %8s | %8s | %8s | %8s | %5s | member %%util\n", "layout",
		"time s", "IOPS", "MB/s", "late ms", "mean ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "m-I/O");
	for (unsigned k = 0; k < n; k++) {
		const struct cmp_layout *x = &l[k];
		fprintf(f, "%-11s | %7.2f | %7.1f | %6.2f | %8.1f | %8.2f | %8.2f | %8.2f | %8.2f | %8.2f | %5.2f |",
			x->name, x->test_s, x->iops, x->mb_s, x->late_ms, x->mean_ms, x->pct[2], x->pct[4], x->pct[6],
			x->pct[BENCH_NPCT - 1], x->m_ios_per_io);
		for (unsigned i = 0; i < x->n; i++)
			fprintf(f, " %3.0f", x->util[i]);
		fputc('\n', f);
	}
	fprintf(f, "(late: mean issue behind the recorded time, once %d are in flight; m-I/O: member I/Os per\n"
		   " volume I/O; %%util: busy time over the replay, per member)\n", BENCH_REPLAY_MAX_INFLIGHT);
}

/* ---- --out DIR: CSV, data files, plot.gp, gnuplot ---- */
static FILE *out_file(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return fopen(p, "w");
}

static int write_out(const char *dir, const struct cmp_layout *l, unsigned n, FILE *msg)
{
	FILE *f;
	unsigned maxm = 0;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!(f = out_file(dir, "compare.csv")))
		return -errno;
	fprintf(f, "layout,level,members,time_s,iops,mb_s,mean_ms,p50_ms,p90_ms,p99_ms,max_ms,member_ios_per_io,late_ms");
	for (unsigned k = 0; k < n; k++)
		maxm = l[k].n > maxm ? l[k].n : maxm;
	for (unsigned i = 0; i < maxm; i++)
		fprintf(f, ",m%u_util_pct", i);
	fputc('\n', f);
	for (unsigned k = 0; k < n; k++) {
		const struct cmp_layout *x = &l[k];
		fprintf(f, "%s,%s,%u,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", x->name, layout_level_name(x->level),
			x->n, x->test_s, x->iops, x->mb_s, x->mean_ms, x->pct[2], x->pct[4], x->pct[6],
			x->pct[BENCH_NPCT - 1], x->m_ios_per_io);
		fprintf(f, ",%.6g", x->late_ms);
		for (unsigned i = 0; i < maxm; i++)
			if (i < x->n)
				fprintf(f, ",%.6g", x->util[i]);
			else
				fprintf(f, ",");
		fputc('\n', f);
	}
	if (fclose(f))
		return -errno;
	/* the CDF: one block per layout (gnuplot's index), latency ms and fraction */
	if (!(f = out_file(dir, "cdf.dat")))
		return -errno;
	for (unsigned k = 0; k < n; k++) {
		fprintf(f, "# %s\n", l[k].name);
		for (size_t i = 0; i < l[k].nlat; i++)
			fprintf(f, "%.6g %.6g\n", l[k].lat_ms[i], (double)(i + 1) / (double)l[k].nlat);
		fprintf(f, "\n\n");
	}
	if (fclose(f))
		return -errno;
	/* member %util: one line per member, one column per layout */
	if (!(f = out_file(dir, "util.dat")))
		return -errno;
	fprintf(f, "member"); /* the header gnuplot's columnheader() reads */
	for (unsigned k = 0; k < n; k++)
		fprintf(f, " \"%s\"", l[k].name);
	fputc('\n', f);
	for (unsigned i = 0; i < maxm; i++) {
		fprintf(f, "m%u", i);
		for (unsigned k = 0; k < n; k++)
			fprintf(f, i < l[k].n ? " %.4g" : " NaN", i < l[k].n ? l[k].util[i] : 0.0);
		fputc('\n', f);
	}
	if (fclose(f))
		return -errno;
	if (!(f = out_file(dir, "plot.gp")))
		return -errno;
	fprintf(f, "# fsvol-bench --replay --compare: edit and re-run with gnuplot plot.gp\n"
		   "set datafile separator ','\n"
		   "do for [fmt in 'png svg'] {\n"
		   "  if (fmt eq 'png') { set terminal pngcairo size 900,520 } else { set terminal svg size 900,520 }\n"
		   "  set datafile separator ','\n"
		   "  set output 'throughput.'.fmt\n"
		   "  set title 'Throughput of the replay per layout'\n"
		   "  set style data histograms; set style fill solid 0.7; set boxwidth 0.8\n"
		   "  set ylabel 'MB/s'; set y2label 'IOPS'; set y2tics; set ytics nomirror; set key top left; set yrange [0:*]; set y2range [0:*]\n"
		   "  set xtics rotate by -20\n"
		   "  plot 'compare.csv' every ::1 using 6:xtic(1) title 'MB/s', '' every ::1 using 5 axes x1y2 title 'IOPS'\n"
		   "  unset y2tics; unset y2label; set ytics mirror; set xtics norotate; set yrange [*:*]\n"
		   "  set datafile separator whitespace\n"
		   "  set output 'latency_cdf.'.fmt\n"
		   "  set title 'Latency CDF per layout (every request of the trace)'\n"
		   "  set style data lines; set logscale x; set xlabel 'latency (ms)'; set ylabel 'fraction of requests'\n"
		   "  set key bottom right\n"
		   "  plot ");
	for (unsigned k = 0; k < n; k++)
		fprintf(f, "%s'cdf.dat' index %u using 1:2 with lines lw 2 title '%s'", k ? ", " : "", k, l[k].name);
	fprintf(f, "\n"
		   "  unset logscale x; unset xlabel\n"
		   "  set output 'util.'.fmt\n"
		   "  set title 'Busy time of each member over the replay'\n"
		   "  set style data histograms; set style histogram clustered; set ylabel 'member %%util'; set yrange [0:105]\n"
		   "  set key top right\n"
		   "  plot for [k=2:%u] 'util.dat' using k:xtic(1) title columnheader(k)\n"
		   "  set yrange [*:*]\n"
		   "}\n",
		n + 1);
	if (fclose(f))
		return -errno;
	if (!bench_plot_have_gnuplot()) {
		fprintf(msg, "gnuplot not found: wrote %s/compare.csv and the data files only\n", dir);
		return 0;
	}
	if (bench_plot_run_gnuplot(dir)) {
		fprintf(msg, "gnuplot failed: see %s/gnuplot.log\n", dir);
		return -EIO;
	}
	fprintf(msg, "plots in %s/: throughput.png latency_cdf.png util.png (and .svg)\n", dir);
	return 0;
}

int bench_replay_compare(const struct bench_opts *o)
{
	struct cmp_layout l[CMP_MAX] = { 0 };
	struct sigaction sa = { .sa_handler = cmp_signal };
	unsigned n = 0;
	char err[512];
	int r = 0;
	const char *parent = getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";

	if (parse(o->compare, l, &n, err, sizeof(err))) {
		fprintf(stderr, "fsvol-bench: %s\n", err);
		return 2;
	}
	snprintf(cmp_dir, sizeof(cmp_dir), "%s/fsvol-replay.XXXXXX", parent);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!mkdtemp(cmp_dir)) {
		fprintf(stderr, "fsvol-bench: cannot make a temp dir in %s: %s\n", parent, strerror(errno));
		return 1;
	}
	cmp_made = 1;
	for (unsigned k = 0; k < n && !r; k++) {
		if (!o->quiet)
			fprintf(stderr, "fsvol-bench: replaying on %s (%u of %u)\n", l[k].name, k + 1, n);
		if ((r = run_one(o, &l[k], err, sizeof(err))))
			fprintf(stderr, "fsvol-bench: --compare %s\n", err);
	}
	cmp_remove();
	if (!r) {
		table(stdout, o, l, n);
		if (o->out && (r = write_out(o->out, l, n, stdout)))
			fprintf(stderr, "fsvol-bench: --out %s: %s\n", o->out, strerror(-r));
	}
	for (unsigned k = 0; k < n; k++)
		free(l[k].lat_ms);
	return r ? 1 : fflush(stdout) ? 1 : 0;
}
