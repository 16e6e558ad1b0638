/* report_xml: the report as diskspd's -Rxml lays it out (<Results>, the
 * <Profile> that ran, one <TimeSpan> with CPU, latency percentiles, the -D
 * IOPS series and a <Thread> per thread with its <Target> counts), so tools
 * that read diskspd's XML read this; numbers are the text report's. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

/* Text with &, <, >, " escaped. */
static void xs(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static void el_u(FILE *f, int ind, const char *name, unsigned long long v)
{
	fprintf(f, "%*s<%s>%llu</%s>\n", ind, "", name, v, name);
}

static void el_d(FILE *f, int ind, const char *name, double v)
{
	fprintf(f, "%*s<%s>%.3f</%s>\n", ind, "", name, v, name);
}

static void el_s(FILE *f, int ind, const char *name, const char *v)
{
	fprintf(f, "%*s<%s>", ind, "", name);
	xs(f, v);
	fprintf(f, "</%s>\n", name);
}

static const char *b(int x) { return x ? "true" : "false"; }

static void profile(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	fputs("  <Profile>\n    <ResultFormat>xml</ResultFormat>\n    <TimeSpans>\n      <TimeSpan>\n", f);
	el_d(f, 8, "Duration", o->duration);
	el_d(f, 8, "Warmup", o->warmup);
	el_d(f, 8, "Cooldown", o->cooldown);
	el_u(f, 8, "RandSeed", r->seed);
	el_s(f, 8, "MeasureLatency", b(o->latency));
	el_s(f, 8, "CalculateIopsStdDev", b(o->iops_ms));
	el_u(f, 8, "IoBucketDuration", o->iops_ms ? o->iops_ms : 1000);
	fputs("        <Targets>\n", f);
	for (unsigned i = 0; i < r->ntargets; i++) {
		fputs("          <Target>\n", f);
		el_s(f, 12, "Path", r->target[i].path);
		el_u(f, 12, "BlockSize", o->block);
		el_u(f, 12, "BaseFileOffset", o->base);
		el_u(f, 12, "MaxFileSize", o->max_off);
		el_s(f, 12, "DisableOSCache", b(o->direct));
		el_s(f, 12, "WriteThrough", b(o->writethrough));
		fprintf(f, "            <WriteBufferContent><Pattern>%s</Pattern></WriteBufferContent>\n",
			o->wbuf == BENCH_WBUF_ZERO ? "zero" : o->wbuf == BENCH_WBUF_PATTERN ? "sequential" : "random");
		if (o->random)
			el_u(f, 12, "Random", o->align ? o->align : o->block);
		else
			el_u(f, 12, "StrideSize", o->stride ? o->stride : o->block);
		el_u(f, 12, "ThreadStride", o->thread_stride);
		el_u(f, 12, "RequestCount", o->outstanding);
		el_u(f, 12, "WriteRatio", o->write_pct);
		if (o->rate)
			fprintf(f, "            <Throughput unit=\"%s\">%llu</Throughput>\n", o->rate_iops ? "IOPS" : "BPMS",
				(unsigned long long)o->rate);
		if (o->fixed)
			el_u(f, 12, "ThreadCount", o->fixed);
		else
			el_u(f, 12, "ThreadsPerFile", o->threads);
		fputs("          </Target>\n", f);
	}
	fputs("        </Targets>\n      </TimeSpan>\n    </TimeSpans>\n  </Profile>\n", f);
}

/* <Iops>: the standard deviations and one <Bucket> per interval (-D). */
static void iops(FILE *f, int ind, const struct bench_result *r, const struct bench_opts *o, int t)
{
	if (!o->iops_ms)
		return;
	fprintf(f, "%*s<Iops>\n", ind, "");
	el_d(f, ind + 2, "ReadIopsStdDev", bench_iops_stddev(r, o, t, 0));
	el_d(f, ind + 2, "WriteIopsStdDev", bench_iops_stddev(r, o, t, 1));
	el_d(f, ind + 2, "IopsStdDev", bench_iops_stddev(r, o, t, 2));
	for (unsigned i = 0; i < r->niv; i++) {
		uint64_t rd = bench_iops_count(r, t, 0, i), wr = bench_iops_count(r, t, 1, i);
		fprintf(f, "%*s<Bucket SampleMillisecond=\"%llu\" Read=\"%llu\" Write=\"%llu\" Total=\"%llu\"/>\n", ind + 2,
			"", (unsigned long long)(i + 1) * o->iops_ms, (unsigned long long)rd, (unsigned long long)wr,
			(unsigned long long)(rd + wr));
	}
	fprintf(f, "%*s</Iops>\n", ind, "");
}

int bench_report_xml(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	char host[256] = "", when[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	gethostname(host, sizeof(host) - 1);
	strftime(when, sizeof(when), "%Y/%m/%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	fputs("<Results>\n  <System>\n", f);
	el_s(f, 4, "ComputerName", host);
	fputs("    <Tool><Version>fsvol-bench</Version></Tool>\n", f);
	el_s(f, 4, "CommandLine", o->cmdline);
	fputs("    <RunTime>\n", f);
	el_s(f, 6, "StartTime", when);
	fputs("    </RunTime>\n  </System>\n", f);
	profile(f, o, r);
	fputs("  <TimeSpan>\n", f);
	el_d(f, 4, "TestTimeSeconds", r->test_s);
	el_u(f, 4, "ThreadCount", r->threads);
	el_u(f, 4, "ProcCount", r->ncpu);
	fputs("    <CpuUtilization>\n", f);
	for (unsigned i = 0; i < r->ncpu; i++) {
		fputs("      <CPU>\n", f);
		el_u(f, 8, "Id", r->cpu[i].id);
		el_d(f, 8, "UsagePercent", r->cpu[i].usage);
		el_d(f, 8, "UserPercent", r->cpu[i].user);
		el_d(f, 8, "KernelPercent", r->cpu[i].kernel);
		el_d(f, 8, "IdlePercent", r->cpu[i].idle);
		fputs("      </CPU>\n", f);
	}
	fputs("      <Average>\n", f);
	el_d(f, 8, "UsagePercent", r->cpu_avg.usage);
	el_d(f, 8, "UserPercent", r->cpu_avg.user);
	el_d(f, 8, "KernelPercent", r->cpu_avg.kernel);
	el_d(f, 8, "IdlePercent", r->cpu_avg.idle);
	fputs("      </Average>\n    </CpuUtilization>\n", f);
	struct bench_opstat all[2] = { 0 };
	for (unsigned t = 0; t < r->nthreads; t++)
		for (int op = 0; op < 2; op++)
			bench_opstat_add(&all[op], &r->thread[t].op[op]);
	if (o->latency) {
		struct bench_opstat tot = all[0];
		double ms[3][BENCH_NPCT];
		int have[3];
		bench_opstat_add(&tot, &all[1]);
		have[0] = bench_percentiles(&all[0], ms[0]);
		have[1] = bench_percentiles(&all[1], ms[1]);
		have[2] = bench_percentiles(&tot, ms[2]);
		fputs("    <Latency>\n", f);
		for (int i = 0; i < BENCH_NPCT; i++) {
			fprintf(f, "      <Bucket>\n        <Percentile>%g</Percentile>\n", bench_pct[i]);
			if (have[0])
				el_d(f, 8, "ReadMilliseconds", ms[0][i]);
			if (have[1])
				el_d(f, 8, "WriteMilliseconds", ms[1][i]);
			if (have[2])
				el_d(f, 8, "TotalMilliseconds", ms[2][i]);
			fputs("      </Bucket>\n", f);
		}
		fputs("    </Latency>\n", f);
	}
	iops(f, 4, r, o, -1);
	for (unsigned t = 0; t < r->nthreads; t++) {
		const struct bench_thread_result *th = &r->thread[t];
		const struct bench_target_result *tr = &r->target[th->target];
		struct bench_figs rd, wr;
		bench_figs_of(&th->op[0], r->test_s, &rd);
		bench_figs_of(&th->op[1], r->test_s, &wr);
		if (!t || th->id != r->thread[t - 1].id) { /* -F: one <Thread>, a <Target> per target */
			fputs("    <Thread>\n", f);
			el_u(f, 6, "Id", th->id);
		}
		fputs("      <Target>\n", f);
		el_s(f, 8, "Path", tr->path);
		el_u(f, 8, "BytesCount", rd.bytes + wr.bytes);
		el_u(f, 8, "FileSize", tr->size);
		el_u(f, 8, "IOCount", rd.ios + wr.ios);
		el_u(f, 8, "ReadBytes", rd.bytes);
		el_u(f, 8, "ReadCount", rd.ios);
		el_u(f, 8, "WriteBytes", wr.bytes);
		el_u(f, 8, "WriteCount", wr.ios);
		if (o->latency) {
			el_d(f, 8, "AverageReadLatencyMilliseconds", rd.avg_ms);
			el_d(f, 8, "ReadLatencyStdev", rd.std_ms);
			el_d(f, 8, "AverageWriteLatencyMilliseconds", wr.avg_ms);
			el_d(f, 8, "WriteLatencyStdev", wr.std_ms);
		}
		iops(f, 8, r, o, (int)t);
		fputs("      </Target>\n", f);
		if (t + 1 == r->nthreads || r->thread[t + 1].id != th->id)
			fputs("    </Thread>\n", f);
	}
	fputs("  </TimeSpan>\n</Results>\n", f);
	return ferror(f) ? -EIO : 0;
}
