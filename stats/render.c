/* render: raw views (table, stats.json, diskstats) and interval views for
 * `fsvol stat` (iostat -x, CSV, JSON lines, PerfMon). All write to a FILE*. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define MIB 1048576.0

static int done(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

/* JSON string or null; control bytes escaped, UTF-8 passed through */
static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void stats_json_string(FILE *f, const char *s)
{
	json_str(f, s);
}

/* ---- table (MNT/stats) ---- */

int stats_render_table(FILE *f, const struct stats_view_dev *v, size_t n)
{
	int w = 16; /* the device column fits the longest name */
	for (size_t i = 0; i < n; i++)
		if (v[i].name && (int)strlen(v[i].name) + 2 > w)
			w = (int)strlen(v[i].name) + 2;
	fprintf(f, "%-*s %-10s %10s %10s %10s %10s %11s %11s %5s %10s %10s %6s %5s\n", w, "DEVICE",
		"STATE", "READS", "WRITES", "MB_READ", "MB_WRITTEN", "READ_MS", "WRITE_MS", "INFL",
		"BUSY_S", "QUEUE_S", "ERRORS", "SEQ%");
	for (size_t i = 0; i < n; i++) {
		const struct stats_snap *s = &v[i].snap;
		uint64_t rw = s->reads + s->writes;
		char name[64];
		snprintf(name, sizeof(name), "%s%s", v[i].index >= 0 ? "  " : "",
			 v[i].name ? v[i].name : "?");
		if (v[i].not_counted) { /* the stats level leaves it out: no made-up zeros */
			fprintf(f, "%-*s %-10s %10s\n", w, name, v[i].state ? v[i].state : "-", "not counted");
			continue;
		}
		fprintf(f,
			"%-*s %-10s %10" PRIu64 " %10" PRIu64 " %10.1f %10.1f %11.1f %11.1f %5" PRIu64
			" %10.3f %10.3f %6" PRIu64 " %5.1f\n",
			w, name, v[i].state ? v[i].state : "-", s->reads, s->writes,
			(double)s->read_bytes / MIB, (double)s->write_bytes / MIB,
			(double)s->read_ns / 1e6, (double)s->write_ns / 1e6, s->inflight,
			(double)s->busy_ns / 1e9, (double)s->queue_ns / 1e9, s->errors,
			rw ? 100.0 * (double)(s->seq_reads + s->seq_writes) / (double)rw : 0.0);
	}
	return done(f);
}

/* ---- stats.json ---- */

static void json_hist(FILE *f, const char *key, const uint64_t *h, unsigned nb, int comma)
{
	int first = 1;
	fprintf(f, "%s\"%s\":[", comma ? "," : "", key);
	for (unsigned i = 0; i < nb; i++) {
		if (!h[i])
			continue;
		fprintf(f, "%s[%u,%" PRIu64 "]", first ? "" : ",", i, h[i]);
		first = 0;
	}
	fputc(']', f);
}

static void json_dev(FILE *f, const struct stats_view_dev *d, int member)
{
	const struct stats_snap *s = &d->snap;
	fputs("{\"name\":", f);
	json_str(f, d->name);
	if (member)
		fprintf(f, ",\"index\":%d", d->index);
	if (member && d->uuid) {
		fputs(",\"uuid\":", f);
		json_str(f, d->uuid);
		if (d->role >= 0)
			fprintf(f, ",\"role\":%d", d->role);
		else
			fputs(",\"role\":null", f);
	}
	fputs(",\"path\":", f);
	json_str(f, d->path);
	fputs(",\"state\":", f);
	json_str(f, d->state);
	fprintf(f, ",\"counted\":%s", d->not_counted ? "false" : "true");
	fprintf(f,
		",\"t_ns\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64
		",\"flushes\":%" PRIu64 ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64
		",\"read_ns\":%" PRIu64 ",\"write_ns\":%" PRIu64 ",\"flush_ns\":%" PRIu64
		",\"inflight\":%" PRIu64 ",\"busy_ns\":%" PRIu64 ",\"queue_ns\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"seq_reads\":%" PRIu64 ",\"seq_writes\":%" PRIu64,
		s->t_ns, s->reads, s->writes, s->flushes, s->read_bytes, s->write_bytes, s->read_ns,
		s->write_ns, s->flush_ns, s->inflight, s->busy_ns, s->queue_ns, s->errors,
		s->seq_reads, s->seq_writes);
	fputs(",\"histograms\":{", f);
	json_hist(f, "read_lat", s->lat[STATS_READ], STATS_LAT_BUCKETS, 0);
	json_hist(f, "write_lat", s->lat[STATS_WRITE], STATS_LAT_BUCKETS, 1);
	json_hist(f, "flush_lat", s->lat[STATS_FLUSH], STATS_LAT_BUCKETS, 1);
	json_hist(f, "read_size", s->size[STATS_READ], STATS_SIZE_BUCKETS, 1);
	json_hist(f, "write_size", s->size[STATS_WRITE], STATS_SIZE_BUCKETS, 1);
	fputs("}}", f);
}

int stats_render_json(FILE *f, uint64_t uptime_ns, uint64_t since_reset_ns,
		      const struct stats_view_dev *v, size_t n)
{
	fprintf(f,
		"{\"uptime_ns\":%" PRIu64 ",\"since_reset_ns\":%" PRIu64 ",\n\"bucket\":{\"lat\":{\"unit\":\"ns\",\"count\":%u,"
		"\"sub_bits\":%u,\"rule\":\"i<64: value i; else g=i>>6, lo=(64+(i&63))<<(g-1), "
		"width=1<<(g-1); the last bucket also holds everything larger\"},"
		"\"size\":{\"unit\":\"bytes\",\"count\":%u,\"rule\":\"0: <=512; k: (512<<(k-1), "
		"512<<k]; %u: >16MiB\"},\"format\":\"sparse [[bucket,count],...]\"},\n",
		uptime_ns, since_reset_ns, STATS_LAT_BUCKETS, STATS_LAT_SUB_BITS, STATS_SIZE_BUCKETS,
		STATS_SIZE_BUCKETS - 1);
	fputs("\"volume\":", f);
	if (n > 0)
		json_dev(f, &v[0], 0);
	else
		fputs("null", f);
	fputs(",\n\"members\":[", f);
	for (size_t i = 1; i < n; i++) {
		fputs(i > 1 ? ",\n" : "\n", f);
		json_dev(f, &v[i], 1);
	}
	fputs("]}\n", f);
	return done(f);
}

/* ---- /proc/diskstats lines (kernel >= 5.5: 17 fields after the name) ---- */

int stats_render_diskstats(FILE *f, const struct stats_view_dev *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct stats_snap *s = &v[i].snap;
		/* reads merged sectors ms | writes merged sectors ms | inflight io_ms
		 * weighted_ms | discards merged sectors ms | flushes ms */
		fprintf(f,
			"%4u %7zu %s %" PRIu64 " 0 %" PRIu64 " %" PRIu64 " %" PRIu64 " 0 %" PRIu64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " 0 0 0 0 %" PRIu64 " %" PRIu64
			"\n",
			STATS_DISKSTATS_MAJOR, i, v[i].name ? v[i].name : "?", s->reads,
			s->read_bytes / 512, s->read_ns / 1000000, s->writes, s->write_bytes / 512,
			s->write_ns / 1000000, s->inflight, s->busy_ns / 1000000,
			s->queue_ns / 1000000, s->flushes, s->flush_ns / 1000000);
	}
	return done(f);
}

/* ---- interval views ---- */

static void csv_field(FILE *f, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* one PerfMon counter: name and accessor */
struct pm_counter {
	const char *name;
	size_t off; /* offset of a double in struct stats_rates */
};
#define PM(n, f) {n, offsetof(struct stats_rates, f)}
static const struct pm_counter pm_counters[] = {
	PM("Disk Reads/sec", r_s),
	PM("Disk Writes/sec", w_s),
	PM("Disk Transfers/sec", transfers_s),
	PM("Disk Read Bytes/sec", read_bytes_s),
	PM("Disk Write Bytes/sec", write_bytes_s),
	PM("Avg. Disk Bytes/Read", avg_bytes_read),
	PM("Avg. Disk Bytes/Write", avg_bytes_write),
	PM("Avg. Disk Bytes/Transfer", avg_bytes_transfer),
	PM("Avg. Disk sec/Read", avg_sec_read),
	PM("Avg. Disk sec/Write", avg_sec_write),
	PM("Avg. Disk sec/Transfer", avg_sec_transfer),
	PM("Avg. Disk Queue Length", avg_queue),
	PM("Avg. Disk Read Queue Length", avg_read_queue),
	PM("Avg. Disk Write Queue Length", avg_write_queue),
	PM("% Disk Time", pct_disk_time),
	PM("% Disk Read Time", pct_read_time),
	PM("% Disk Write Time", pct_write_time),
	PM("% Idle Time", pct_idle_time),
	PM("Current Disk Queue Length", cur_queue),
};
#define NPM (sizeof(pm_counters) / sizeof(pm_counters[0]))

static double pm_get(const struct stats_rates *r, unsigned i)
{
	double v;
	memcpy(&v, (const char *)r + pm_counters[i].off, sizeof(v));
	return v;
}

static void row_csv(FILE *f, const struct stats_interval_opts *o, const struct stats_view_dev *d,
		    const struct stats_rates *r)
{
	fprintf(f, "%.3f,", o->t_s);
	csv_field(f, o->time);
	fputc(',', f);
	csv_field(f, d->name);
	fprintf(f,
		",%d,%s,%.3f,%.3f,%.3f,%.6f,%.6f,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%.3f,%.6f,%.6f,%.6f,"
		"%.2f\n",
		d->index, d->not_counted ? "false" : "true", r->r_s, r->w_s, r->f_s, r->rmb_s, r->wmb_s, r->areq_kb, r->rareq_kb,
		r->wareq_kb, r->r_await_ms, r->w_await_ms, r->f_await_ms, r->aqu_sz, r->util_pct,
		r->p50_ms, r->p99_ms, r->p999_ms, r->seq_pct);
}

static void row_json(FILE *f, const struct stats_view_dev *d, const struct stats_rates *r)
{
	fputs("{\"name\":", f);
	json_str(f, d->name);
	fprintf(f,
		",\"index\":%d,\"counted\":%s,\"r/s\":%.3f,\"w/s\":%.3f,\"f/s\":%.3f,\"rMB/s\":%.6f,"
		"\"wMB/s\":%.6f,\"areq-sz\":%.3f,\"rareq-sz\":%.3f,\"wareq-sz\":%.3f,"
		"\"r_await\":%.6f,\"w_await\":%.6f,\"f_await\":%.6f,\"aqu-sz\":%.6f,"
		"\"%%util\":%.3f,\"p50\":%.6f,\"p99\":%.6f,\"p99.9\":%.6f,\"seq%%\":%.2f,"
		"\"perfmon\":{",
		d->index, d->not_counted ? "false" : "true", r->r_s, r->w_s, r->f_s, r->rmb_s, r->wmb_s,
		r->areq_kb, r->rareq_kb, r->wareq_kb, r->r_await_ms, r->w_await_ms, r->f_await_ms,
		r->aqu_sz, r->util_pct, r->p50_ms, r->p99_ms, r->p999_ms, r->seq_pct);
	for (unsigned i = 0; i < NPM; i++)
		fprintf(f, "%s\"%s\":%.6f", i ? "," : "", pm_counters[i].name, pm_get(r, i));
	fputs("}}", f);
}

int stats_render_interval(FILE *f, const struct stats_interval_opts *o, const struct stats_view_dev *prev,
			  const struct stats_view_dev *cur, size_t n)
{
	enum stats_fmt fmt = o->fmt;
	int header = o->header;
	if ((unsigned)fmt > STATS_FMT_PERFMON)
		return -EINVAL;
	if (fmt == STATS_FMT_IOSTAT) {
		struct stats_top_opts top = o->top;
		top.header = header;
		int r = stats_render_top(f, &top, prev, cur, n);
		fputc('\n', f);
		return r ? r : done(f);
	}
	struct stats_rates *rates = calloc(n ? n : 1, sizeof(*rates));
	if (!rates)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (stats_rates_compute(&prev[i].snap, &cur[i].snap, &rates[i]) != 0) {
			free(rates);
			return -EINVAL;
		}
	switch (fmt) {
	case STATS_FMT_IOSTAT:
		break;
	case STATS_FMT_CSV:
		if (header)
			fputs("timestamp,time,device,index,counted,r/s,w/s,f/s,rMB/s,wMB/s,areq-sz,rareq-sz,"
			      "wareq-sz,r_await,w_await,f_await,aqu-sz,%util,p50,p99,p99.9,seq%\n",
			      f);
		for (size_t i = 0; i < n; i++)
			row_csv(f, o, &cur[i], &rates[i]);
		break;
	case STATS_FMT_JSON:
		fprintf(f, "{\"timestamp\":%.3f,\"time\":", o->t_s);
		json_str(f, o->time ? o->time : "");
		fprintf(f, ",\"interval_s\":%.6f,\"devices\":[", n ? rates[0].interval_s : 0.0);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputc(',', f);
			row_json(f, &cur[i], &rates[i]);
		}
		fputs("]}\n", f);
		break;
	case STATS_FMT_PERFMON:
		/* like a PerfMon report, every interval names its instances */
		fprintf(f, "%-30s", "\\PhysicalDisk(*)");
		for (size_t i = 0; i < n; i++)
			fprintf(f, " %16s", cur[i].name ? cur[i].name : "?");
		fputc('\n', f);
		for (unsigned c = 0; c < NPM; c++) {
			fprintf(f, "%-30s", pm_counters[c].name);
			for (size_t i = 0; i < n; i++)
				fprintf(f, " %16.6f", pm_get(&rates[i], c));
			fputc('\n', f);
		}
		fputc('\n', f);
		break;
	}
	free(rates);
	return done(f);
}
