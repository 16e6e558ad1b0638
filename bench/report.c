/* report: the figures of a bench_result and their two renderings, text
 * shaped like diskspd's and one JSON document. Both print what
 * bench_figs_of and bench_percentiles compute, so they cannot disagree.
 * MB = 2^20 bytes (diskspd's and iostat -m's MB). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "fsvol/util/size.h"

const double bench_pct[BENCH_NPCT] = { 0, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 99.9999,
				       99.99999, 99.999999, 99.9999999, 100 };
const char *const bench_pct_name[BENCH_NPCT] = { "min", "25th", "50th", "75th", "90th", "95th", "99th",
						 "3-nines", "4-nines", "5-nines", "6-nines", "7-nines",
						 "8-nines", "9-nines", "max" };

void bench_opstat_add(struct bench_opstat *a, const struct bench_opstat *b)
{
	if (!b->ios)
		return;
	if (!a->ios || b->lat_min < a->lat_min)
		a->lat_min = b->lat_min;
	if (b->lat_max > a->lat_max)
		a->lat_max = b->lat_max;
	a->ios += b->ios;
	a->bytes += b->bytes;
	a->lat_sum += b->lat_sum;
	a->lat_sq += b->lat_sq;
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		a->hist[i] += b->hist[i];
}

void bench_figs_of(const struct bench_opstat *s, double test_s, struct bench_figs *f)
{
	*f = (struct bench_figs){ .bytes = s->bytes, .ios = s->ios };
	if (test_s > 0) {
		f->mb_s = (double)s->bytes / 1048576.0 / test_s;
		f->iops = (double)s->ios / test_s;
	}
	if (s->ios) {
		double n = (double)s->ios, mean = s->lat_sum / n;
		double var = s->lat_sq / n - mean * mean; /* population, as diskspd */
		f->avg_ms = mean / 1e6;
		f->std_ms = var > 0 ? sqrt(var) / 1e6 : 0;
	}
}

int bench_percentiles(const struct bench_opstat *s, double ms[BENCH_NPCT])
{
	const uint64_t *h[1] = { s->hist };
	double lo = (double)s->lat_min, hi = (double)s->lat_max, prev = lo;
	if (!s->ios)
		return 0;
	for (int i = 0; i < BENCH_NPCT; i++) {
		/* histogram values are bucket mids (<= 1/128 off): clamp into the exact
		 * [min, max] and keep the rows monotonic */
		double v = i == 0 ? lo : i == BENCH_NPCT - 1 ? hi : stats_lat_percentile(h, 1, bench_pct[i]);
		if (v < prev)
			v = prev;
		if (v > hi)
			v = hi;
		ms[i] = v / 1e6;
		prev = v;
	}
	return BENCH_NPCT;
}

uint64_t bench_iops_count(const struct bench_result *r, int t, int op, unsigned i)
{
	uint64_t n = 0;
	for (unsigned x = 0; x < r->nthreads; x++) {
		if ((t >= 0 && (unsigned)t != x) || !r->thread[x].iv || i >= r->niv)
			continue;
		for (int k = 0; k < 2; k++)
			if (op == 2 || op == k)
				n += r->thread[x].iv[(size_t)k * r->niv + i];
	}
	return n;
}

double bench_iops_stddev(const struct bench_result *r, const struct bench_opts *o, int t, int op)
{
	/* population standard deviation of count / interval over the whole intervals */
	unsigned n = r->niv_full ? r->niv_full : r->niv;
	double sec = o->iops_ms / 1e3, sum = 0, sq = 0;
	if (!n || !o->iops_ms)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		double x = (double)bench_iops_count(r, t, op, i) / sec;
		sum += x;
		sq += x * x;
	}
	double mean = sum / n, var = sq / n - mean * mean;
	return var > 0 ? sqrt(var) : 0;
}

/* Sums: per op over all threads (op 2 = read + write). */
static void totals(const struct bench_result *r, int thread, struct bench_opstat *sum)
{
	for (int op = 0; op < 3; op++)
		memset(&sum[op], 0, sizeof(sum[op]));
	for (unsigned t = 0; t < r->nthreads; t++) {
		if (thread >= 0 && (unsigned)thread != t)
			continue;
		for (int op = 0; op < 2; op++) {
			bench_opstat_add(&sum[op], &r->thread[t].op[op]);
			bench_opstat_add(&sum[2], &r->thread[t].op[op]);
		}
	}
}

static const char *mix_name(const struct bench_opts *o, char *buf, size_t len)
{
	if (!o->write_pct)
		snprintf(buf, len, "performing read test");
	else if (o->write_pct == 100)
		snprintf(buf, len, "performing write test");
	else
		snprintf(buf, len, "performing mix test (read/write ratio: %u/%u)", 100 - o->write_pct, o->write_pct);
	return buf;
}

/* -Z's meaning in words: "pattern", "zero", "random", "source:SIZE" */
static const char *wbuf_name(const struct bench_opts *o, char *buf, size_t len)
{
	switch (o->wbuf) {
	case BENCH_WBUF_ZERO: return "zero";
	case BENCH_WBUF_RANDOM_EACH: return "random";
	case BENCH_WBUF_SOURCE: snprintf(buf, len, "source:%llu", (unsigned long long)o->wbuf_size); return buf;
	default: return "pattern";
	}
}

static void print_hr(FILE *f, int n)
{
	for (int i = 0; i < n; i++)
		fputc('-', f);
	fputc('\n', f);
}

/* " |  IopsStdDev" with -D (diskspd's column), else nothing. */
static void sd_col(FILE *f, const struct bench_result *r, const struct bench_opts *o, int t, int op)
{
	if (o->iops_ms)
		fprintf(f, " | %10.2f", bench_iops_stddev(r, o, t, op));
}

static void table(FILE *f, const char *title, const struct bench_result *r, const struct bench_opts *o, int op)
{
	struct bench_figs g;
	struct bench_opstat sum[3];
	char sz[32];
	int w = o->iops_ms ? 114 : 101;
	fprintf(f, "%s\n", title);
	fprintf(f, "thread |       bytes     |     I/Os     |     MB/s   |  I/O per s |%s  AvgLat  | LatStdDev |  file\n",
		o->iops_ms ? " IopsStdDev |" : "");
	print_hr(f, w);
	for (unsigned t = 0; t < r->nthreads; t++) {
		const struct bench_target_result *tr = &r->target[r->thread[t].target];
		totals(r, (int)t, sum);
		bench_figs_of(&sum[op], r->test_s, &g);
		size_format(tr->size, sz, sizeof(sz));
		fprintf(f, "%6u | %15llu | %12llu | %10.2f | %10.2f", r->thread[t].id, (unsigned long long)g.bytes,
			(unsigned long long)g.ios, g.mb_s, g.iops);
		sd_col(f, r, o, (int)t, op);
		fprintf(f, " | %8.3f | %9.3f | %s (%s)\n", g.avg_ms, g.std_ms, tr->path, sz);
	}
	print_hr(f, w);
	totals(r, -1, sum);
	bench_figs_of(&sum[op], r->test_s, &g);
	fprintf(f, "total: %17llu | %12llu | %10.2f | %10.2f", (unsigned long long)g.bytes, (unsigned long long)g.ios,
		g.mb_s, g.iops);
	sd_col(f, r, o, -1, op);
	fprintf(f, " | %8.3f | %9.3f\n\n", g.avg_ms, g.std_ms);
}

static void below_text(FILE *f, const struct bench_target_result *tr)
{
	const struct bench_below *b = tr->below;
	fprintf(f, "below the mapping layer: %s, %u member%s (%s)\n", b->level[0] ? b->level : "fsvol",
		b->ndev - 1, b->ndev == 2 ? "" : "s", tr->path);
	fprintf(f, "device |      r/s   |      w/s   |    MB/s   | avg lat (ms) |  aqu-sz | %%util | path\n");
	print_hr(f, 90);
	for (unsigned i = 0; i < b->ndev; i++) {
		const struct bench_below_dev *d = &b->dev[i];
		const struct stats_snap *s = &d->d;
		uint64_t n = s->reads + s->writes;
		double lat = n ? (double)(s->read_ns + s->write_ns) / (double)n / 1e6 : 0;
		fprintf(f, "%6s | %10.2f | %10.2f | %9.2f | %12.3f | %7.2f | %5.1f | %s%s%s%s\n", d->name,
			d->r.r_s, d->r.w_s, d->r.rmb_s + d->r.wmb_s, lat, d->r.aqu_sz, d->r.util_pct, d->path,
			d->state[0] && strcmp(d->state, "active") ? " (" : "", d->state[0] && strcmp(d->state, "active") ? d->state : "",
			d->state[0] && strcmp(d->state, "active") ? ")" : "");
	}
	print_hr(f, 90);
	for (unsigned i = 0; i < b->ncons; i++) {
		const struct bench_conservation *c = &b->cons[i];
		fprintf(f, "conservation: member %s bytes / volume %s bytes = %llu / %llu = %.2f (%s)%s\n",
			!strcmp(c->what, "member reads for writes") ? "read" : !strcmp(c->what, "reads") ? "read" : "write",
			!strcmp(c->what, "reads") ? "read" : "write", (unsigned long long)c->member_bytes,
			(unsigned long long)c->volume_bytes, c->ratio, c->note, c->ok ? "" : "  NOT CONSERVED");
	}
	fputc('\n', f);
}

/* Through MNT/volume, the volume row's latency is fsvol's (engine entry to
 * completion) and the tables above are the application's: what lies between
 * is the FUSE path, not the volume. */
static void fuse_gap_note(FILE *f)
{
	fprintf(f, "note: the volume row's latency is measured inside fsvol, from a request's arrival to its\n"
		   "completion; the AvgLat and percentiles above are the application's, through the kernel.\n"
		   "The gap between the two is the FUSE path (kernel to the fsvol daemon and back), not the\n"
		   "volume; --members opens the volume in-process, without it.\n\n");
}

int bench_report_text(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	char buf[128];
	struct bench_opstat sum[3];
	fprintf(f, "\nCommand Line: %s\n\nInput parameters:\n\n", o->cmdline);
	fprintf(f, "\ttimespan:   1\n\t-------------\n");
	if (o->trace)
		fprintf(f, "\tduration: the trace's (replay)\n");
	else
		fprintf(f, "\tduration: %gs\n\twarm up time: %gs\n\tcool down time: %gs\n", o->duration, o->warmup,
			o->cooldown);
	if (o->latency)
		fprintf(f, "\tmeasuring latency\n");
	fprintf(f, "\trandom seed: %llu\n", (unsigned long long)r->seed);
	for (unsigned i = 0; i < r->ntargets; i++) {
		const struct bench_target_result *tr = &r->target[i];
		fprintf(f, "\tpath: '%s'\n", tr->path);
		if (o->nmembers) {
			fprintf(f, "\t\tfsvol volume in-process, members:");
			for (unsigned m = 0; m < o->nmembers; m++)
				fprintf(f, " %s", o->members[m]);
			fputc('\n', f);
		}
		if (o->trace) {
			fprintf(f, "\t\t%s\n", o->direct ? "software cache disabled (O_DIRECT)" : "using software cache");
			bench_replay_report(f, o, r);
			fprintf(f, "\t\tusing %s (%u OS threads)\n", tr->engine, tr->workers);
			continue;
		}
		fprintf(f, "\t\tthink time: %lluus\n", (unsigned long long)o->think_us);
		if (o->rate)
			fprintf(f, "\t\tthroughput rate-limited to %llu %s per thread\n", (unsigned long long)o->rate,
				o->rate_iops ? "IOPS" : "B/ms");
		fprintf(f, "\t\t%s\n", o->direct ? "software cache disabled (O_DIRECT)" : "using software cache");
		fprintf(f, "\t\t%s\n", o->writethrough ? "writethrough on (O_DSYNC)" : "writethrough off");
		fprintf(f, "\t\t%s\n", mix_name(o, buf, sizeof(buf)));
		fprintf(f, "\t\tblock size: %llu\n", (unsigned long long)o->block);
		if (o->random && o->rs_pct >= 0)
			fprintf(f, "\t\tusing mixed random/sequential I/O (%d%% random, alignment: %llu)\n", o->rs_pct,
				(unsigned long long)(o->align ? o->align : o->block));
		else if (o->random)
			fprintf(f, "\t\tusing random I/O (alignment: %llu, distribution: %s)\n",
				(unsigned long long)(o->align ? o->align : o->block),
				bench_dist_name(&o->dist, buf, sizeof(buf)));
		else
			fprintf(f, "\t\tusing %ssequential I/O (stride: %llu)\n", o->interlocked ? "interlocked " : "",
				(unsigned long long)(o->stride ? o->stride : o->block));
		fprintf(f, "\t\tnumber of outstanding I/O operations: %u\n", o->outstanding);
		if (o->base)
			fprintf(f, "\t\tbase file offset: %llu\n", (unsigned long long)o->base);
		if (o->max_off)
			fprintf(f, "\t\tmax file size: %llu\n", (unsigned long long)o->max_off);
		fprintf(f, "\t\tthread stride size: %llu\n", (unsigned long long)o->thread_stride);
		if (o->fixed)
			fprintf(f, "\t\ttotal threads: %u (each on every target)\n", o->fixed);
		else
			fprintf(f, "\t\tthreads per file: %u\n", o->threads);
		fprintf(f, "\t\twrite buffers: %s\n", wbuf_name(o, buf, sizeof(buf)));
		fprintf(f, "\t\tusing %s (%u OS threads)\n", tr->engine, tr->workers);
	}
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->target[i].holes[0])
			fprintf(f, "\nWARNING: %s: %s\n", r->target[i].path, r->target[i].holes);
	fprintf(f, "\nResults for timespan 1:\n");
	fprintf(f, "*******************************************************************************\n\n");
	fprintf(f, "actual test time:\t%.2fs\nthread count:\t\t%u\nproc count:\t\t%u\n\n", r->test_s, r->threads,
		r->ncpu);
	fprintf(f, "CPU |  Usage |  User  |  Kernel |  Idle\n");
	print_hr(f, 43);
	for (unsigned i = 0; i < r->ncpu; i++)
		fprintf(f, "%4u| %6.2f%%| %6.2f%%| %6.2f%%| %6.2f%%\n", r->cpu[i].id, r->cpu[i].usage, r->cpu[i].user,
			r->cpu[i].kernel, r->cpu[i].idle);
	print_hr(f, 43);
	fprintf(f, "avg.| %6.2f%%| %6.2f%%| %6.2f%%| %6.2f%%\n\n", r->cpu_avg.usage, r->cpu_avg.user,
		r->cpu_avg.kernel, r->cpu_avg.idle);
	if (r->have_proc) {
		double u, k;
		bench_proc_cpu_per_io(r, &u, &k);
		fprintf(f, "process CPU: user %.3fs, system %.3fs; per I/O %.2f us (user %.2f us + system %.2f us)\n\n",
			r->proc_user_s, r->proc_sys_s, u + k, u, k);
	}
	table(f, "Total IO", r, o, 2);
	table(f, "Read IO", r, o, STATS_READ);
	table(f, "Write IO", r, o, STATS_WRITE);
	if (o->latency) {
		double ms[3][BENCH_NPCT];
		int have[3];
		totals(r, -1, sum);
		for (int op = 0; op < 3; op++)
			have[op] = bench_percentiles(&sum[op], ms[op]);
		fprintf(f, "\n  %%-ile |  Read (ms) | Write (ms) | Total (ms)\n");
		print_hr(f, 46);
		for (int i = 0; i < BENCH_NPCT; i++) {
			fprintf(f, "%7s |", bench_pct_name[i]);
			for (int op = 0; op < 3; op++) {
				if (have[op])
					fprintf(f, " %10.3f", ms[op][i]);
				else
					fprintf(f, " %10s", "N/A");
				fputs(op < 2 ? " |" : "\n", f);
			}
		}
		fputc('\n', f);
	}
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->target[i].below) {
			below_text(f, &r->target[i]);
			if (!o->nmembers)
				fuse_gap_note(f);
		}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void jfigs(FILE *f, const struct bench_opstat *s, double test_s)
{
	struct bench_figs g;
	bench_figs_of(s, test_s, &g);
	fprintf(f, "{\"bytes\":%llu,\"ios\":%llu,\"mb_s\":%.6f,\"iops\":%.6f,\"avg_lat_ms\":%.6f,\"lat_stddev_ms\":%.6f}",
		(unsigned long long)g.bytes, (unsigned long long)g.ios, g.mb_s, g.iops, g.avg_ms, g.std_ms);
}

/* -D: ,"iops":{"interval_ms":N,"stddev":{read, write, total},"read":[...],"write":[...]} */
static void jiops(FILE *f, const struct bench_result *r, const struct bench_opts *o, int t)
{
	static const char *const opn[3] = { "read", "write", "total" };
	if (!o->iops_ms)
		return;
	fprintf(f, ",\"iops\":{\"interval_ms\":%u,\"whole_intervals\":%u,\"stddev\":{", o->iops_ms, r->niv_full);
	for (int op = 0; op < 3; op++)
		fprintf(f, "%s\"%s\":%.6f", op ? "," : "", opn[op], bench_iops_stddev(r, o, t, op));
	fputc('}', f);
	for (int op = 0; op < 2; op++) {
		fprintf(f, ",\"%s\":[", opn[op]);
		for (unsigned i = 0; i < r->niv; i++)
			fprintf(f, i ? ",%llu" : "%llu", (unsigned long long)bench_iops_count(r, t, op, i));
		fputc(']', f);
	}
	fputc('}', f);
}

static void jsnap(FILE *f, const struct bench_below_dev *d)
{
	const struct stats_snap *s = &d->d;
	uint64_t n = s->reads + s->writes;
	fprintf(f, "{\"name\":");
	jstr(f, d->name);
	fprintf(f, ",\"path\":");
	jstr(f, d->path);
	fprintf(f, ",\"state\":");
	jstr(f, d->state);
	fprintf(f, ",\"reads\":%llu,\"writes\":%llu,\"read_bytes\":%llu,\"write_bytes\":%llu,"
		   "\"r_s\":%.6f,\"w_s\":%.6f,\"mb_s\":%.6f,\"avg_lat_ms\":%.6f,\"aqu_sz\":%.6f,\"util_pct\":%.6f}",
		(unsigned long long)s->reads, (unsigned long long)s->writes, (unsigned long long)s->read_bytes,
		(unsigned long long)s->write_bytes, d->r.r_s, d->r.w_s, d->r.rmb_s + d->r.wmb_s,
		n ? (double)(s->read_ns + s->write_ns) / (double)n / 1e6 : 0, d->r.aqu_sz, d->r.util_pct);
}

/* "params": what was asked (the options as diskspd names them), and for
 * --replay the trace and how its schedule held; the object left open. */
static void jparams(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	char buf[128];
	fprintf(f, ",\n\"params\":{\"duration_s\":%g,\"warmup_s\":%g,\"cooldown_s\":%g,\"latency\":%s,"
		   "\"seed\":%llu,\"block\":%llu,\"outstanding\":%u,\"threads_per_target\":%u,\"write_pct\":%u,"
		   "\"random\":%s,\"align\":%llu,\"stride\":%llu,\"thread_stride\":%llu,\"base\":%llu,"
		   "\"max_offset\":%llu,\"direct\":%s,\"writethrough\":%s,"
		   "\"think_us\":%llu,\"write_buffers\":\"%s\",\"rate_limit\":%llu,\"rate_unit\":\"%s\","
		   "\"random_pct\":%d,\"interlocked\":%s,"
		   "\"distribution\":",
		o->duration, o->warmup, o->cooldown, o->latency ? "true" : "false", (unsigned long long)r->seed,
		(unsigned long long)o->block, o->outstanding, o->threads, o->write_pct, o->random ? "true" : "false",
		(unsigned long long)(o->random ? (o->align ? o->align : o->block) : 0),
		(unsigned long long)(o->random ? 0 : (o->stride ? o->stride : o->block)),
		(unsigned long long)o->thread_stride, (unsigned long long)o->base,
		(unsigned long long)o->max_off, o->direct ? "true" : "false", o->writethrough ? "true" : "false",
		(unsigned long long)o->think_us, wbuf_name(o, buf, sizeof(buf)), (unsigned long long)o->rate,
		o->rate_iops ? "iops" : "bytes_per_ms", o->random ? (o->rs_pct >= 0 ? o->rs_pct : 100) : 0,
		o->interlocked ? "true" : "false");
	jstr(f, bench_dist_name(&o->dist, buf, sizeof(buf)));
	fprintf(f, ",\"members\":[");
	for (unsigned m = 0; m < o->nmembers; m++) {
		fprintf(f, m ? "," : "");
		jstr(f, o->members[m]);
	}
	fprintf(f, "]");
	if (o->trace) { /* --replay: the trace and how its schedule held */
		fprintf(f, ",\"replay\":{\"file\":");
		jstr(f, o->replay);
		fprintf(f, ",\"format\":\"%s\",\"requests\":%zu,\"addresses\":%llu,\"timing\":\"%s\",\"speed\":%g,"
			   "\"map\":\"%s\",\"skipped\":%llu,\"late_mean_us\":%.3f,\"late_max_us\":%.3f}",
			tracefile_fmt_name(o->trace->fmt), o->trace->n, (unsigned long long)o->trace->max_end,
			o->replay_afap ? "afap" : "open", o->replay_speed > 0 ? o->replay_speed : 1,
			o->replay_map == BENCH_MAP_WRAP ? "wrap" : o->replay_map == BENCH_MAP_SCALE ? "scale" : "none",
			(unsigned long long)r->skipped, r->late_mean_ns / 1e3, (double)r->late_max_ns / 1e3);
	}
}

/* One target: its path, size, engine, and what was counted below it. */
static void jtarget(FILE *f, const struct bench_target_result *tr)
{
	fprintf(f, "{\"path\":");
	jstr(f, tr->path);
	fprintf(f, ",\"size\":%llu,\"engine\":", (unsigned long long)tr->size);
	jstr(f, tr->engine);
	fprintf(f, ",\"os_threads\":%u,\"holes_warning\":", tr->workers);
	if (tr->holes[0])
		jstr(f, tr->holes);
	else
		fprintf(f, "null");
	fprintf(f, ",\"below\":");
	if (!tr->below) {
		fprintf(f, "null}");
		return;
	}
	const struct bench_below *b = tr->below;
	fprintf(f, "{\"level\":");
	jstr(f, b->level);
	fprintf(f, ",\"devices\":[");
	for (unsigned d = 0; d < b->ndev; d++) {
		fprintf(f, d ? ",\n" : "\n");
		jsnap(f, &b->dev[d]);
	}
	fprintf(f, "],\n\"conservation\":[");
	for (unsigned c = 0; c < b->ncons; c++) {
		fprintf(f, "%s{\"what\":", c ? "," : "");
		jstr(f, b->cons[c].what);
		fprintf(f, ",\"member_bytes\":%llu,\"volume_bytes\":%llu,\"ratio\":%.6f,\"ok\":%s,\"note\":",
			(unsigned long long)b->cons[c].member_bytes, (unsigned long long)b->cons[c].volume_bytes,
			b->cons[c].ratio, b->cons[c].ok ? "true" : "false");
		jstr(f, b->cons[c].note);
		fputc('}', f);
	}
	fprintf(f, "]}}");
}

int bench_report_json(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	struct bench_opstat sum[3];
	static const char *const opn[3] = { "read", "write", "total" };
	fprintf(f, "{\"command_line\":");
	jstr(f, o->cmdline);
	jparams(f, o, r);
	fprintf(f, "},\n\"results\":{\"test_time_s\":%.6f,\"thread_count\":%u,\"proc_count\":%u,\n\"cpu\":[", r->test_s,
		r->threads, r->ncpu);
	for (unsigned i = 0; i < r->ncpu; i++)
		fprintf(f, "%s{\"cpu\":%u,\"usage\":%.2f,\"user\":%.2f,\"kernel\":%.2f,\"idle\":%.2f}", i ? "," : "",
			r->cpu[i].id,
			r->cpu[i].usage, r->cpu[i].user, r->cpu[i].kernel, r->cpu[i].idle);
	fprintf(f, "],\n\"cpu_avg\":{\"usage\":%.2f,\"user\":%.2f,\"kernel\":%.2f,\"idle\":%.2f},\n",
		r->cpu_avg.usage, r->cpu_avg.user, r->cpu_avg.kernel, r->cpu_avg.idle);
	if (r->have_proc) {
		double u, k;
		bench_proc_cpu_per_io(r, &u, &k);
		fprintf(f, "\"process_cpu\":{\"user_s\":%.6f,\"system_s\":%.6f,\"per_io_us\":%.4f,"
			   "\"per_io_user_us\":%.4f,\"per_io_system_us\":%.4f},\n",
			r->proc_user_s, r->proc_sys_s, u + k, u, k);
	} else {
		fprintf(f, "\"process_cpu\":null,\n");
	}
	fprintf(f, "\"targets\":[");
	for (unsigned i = 0; i < r->ntargets; i++) {
		fprintf(f, "%s", i ? ",\n" : "");
		jtarget(f, &r->target[i]);
	}
	fprintf(f, "],\n\"threads\":[");
	for (unsigned t = 0; t < r->nthreads; t++) {
		totals(r, (int)t, sum);
		fprintf(f, "%s{\"thread\":%u,\"target\":%u", t ? ",\n" : "\n", r->thread[t].id, r->thread[t].target);
		for (int op = 0; op < 3; op++) {
			fprintf(f, ",\"%s\":", opn[op]);
			jfigs(f, &sum[op], r->test_s);
		}
		jiops(f, r, o, (int)t);
		fputc('}', f);
	}
	totals(r, -1, sum);
	fprintf(f, "],\n\"total\":{");
	for (int op = 0; op < 3; op++) {
		fprintf(f, "%s\"%s\":", op ? "," : "", opn[op]);
		jfigs(f, &sum[op], r->test_s);
	}
	jiops(f, r, o, -1);
	fprintf(f, "},\n\"latency_ms\":");
	if (!o->latency) {
		fprintf(f, "null");
	} else {
		fputc('{', f);
		for (int op = 0; op < 3; op++) {
			double ms[BENCH_NPCT];
			int have = bench_percentiles(&sum[op], ms);
			fprintf(f, "%s\"%s\":", op ? "," : "", opn[op]);
			if (!have) {
				fprintf(f, "null");
				continue;
			}
			fputc('{', f);
			for (int i = 0; i < BENCH_NPCT; i++)
				fprintf(f, "%s\"%s\":%.6f", i ? "," : "", bench_pct_name[i], ms[i]);
			fputc('}', f);
		}
		fputc('}', f);
	}
	fprintf(f, "}}\n");
	return ferror(f) ? -EIO : 0;
}

void bench_proc_cpu_per_io(const struct bench_result *r, double *user_us, double *sys_us)
{
	uint64_t ios = 0;
	for (unsigned i = 0; i < r->nthreads; i++)
		ios += r->thread[i].op[0].ios + r->thread[i].op[1].ios;
	*user_us = ios ? r->proc_user_s * 1e6 / (double)ios : 0;
	*sys_us = ios ? r->proc_sys_s * 1e6 / (double)ios : 0;
}
