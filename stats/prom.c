/* prom: the Prometheus text exposition format (version 0.0.4) of a view.
 * Names and units follow node_exporter's diskstats and mdadm collectors
 * under an fsvol_ prefix (node_disk_reads_completed_total ->
 * fsvol_disk_reads_completed_total, seconds and bytes as base units), so
 * dashboards built for node_exporter carry over by changing the prefix.
 * Every device is one series per family, told apart by labels:
 *   device="NAME" | "NAME.mK", volume="NAME", layer="volume"|"member",
 *   member="K" and uuid="MEMBER-UUID" (members only; K is the member's
 *   Number, which stays with the device as md's does, so a series never
 *   changes disk). The role a member plays (md's RaidDevice) changes with
 *   fail and rebuild: it is a label of fsvol_member_info only, so that the
 *   counter series go on across it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "stats/stats.h"

/* Latency bucket bounds (seconds): 1-2.5-5 steps from 10 us to 10 s, the
 * range a disk, an SSD and the FUSE round trip span. */
static const double prom_lat_le[] = {
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
	0.01,    0.025,    0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10,
};
#define PROM_NLE (sizeof(prom_lat_le) / sizeof(prom_lat_le[0]))

static int done(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The labels of device d, without the braces; extra is appended (may be NULL). */
static void dev_labels(FILE *f, const char *volume, const struct stats_view_dev *d)
{
	fputs("device=", f);
	label_value(f, d->name ? d->name : "?");
	fputs(",volume=", f);
	label_value(f, volume);
	fprintf(f, ",layer=\"%s\"", d->index < 0 ? "volume" : "member");
	if (d->index >= 0)
		fprintf(f, ",member=\"%d\"", d->index);
	if (d->index >= 0 && d->uuid) {
		fputs(",uuid=", f);
		label_value(f, d->uuid);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per device of a counter or gauge. Integers print exactly;
 * ns figures print as seconds with 9 decimals (exact too). */
enum prom_unit { PROM_COUNT, PROM_NS };

static void per_dev(FILE *f, const char *name, const char *type, const char *help, const char *volume,
		    const struct stats_view_dev *v, size_t n, size_t off, enum prom_unit unit)
{
	family(f, name, type, help);
	for (size_t i = 0; i < n; i++) {
		uint64_t x;
		if (v[i].not_counted)
			continue; /* unknown, not zero: the series is absent */
		memcpy(&x, (const char *)&v[i].snap + off, sizeof(x));
		fprintf(f, "%s{", name);
		dev_labels(f, volume, &v[i]);
		if (unit == PROM_NS)
			fprintf(f, "} %" PRIu64 ".%09" PRIu64 "\n", x / 1000000000u, x % 1000000000u);
		else
			fprintf(f, "} %" PRIu64 "\n", x);
	}
}

#define SNAP_OFF(field) offsetof(struct stats_snap, field)

static const char *const prom_op_name[STATS_NOPS] = { "read", "write", "flush" };

/* Latency histograms: a log-linear bucket counts toward le when all of it
 * lies at or below le, so a bucket that straddles a bound counts in the next
 * one: a value is misplaced by at most one bucket width (< 0.78%). */
static void lat_histograms(FILE *f, const char *volume, const struct stats_view_dev *v, size_t n)
{
	const char *name = "fsvol_disk_latency_seconds";
	family(f, name, "histogram", "Completion latency of requests, by op (reads, writes, flushes).");
	for (size_t i = 0; i < n; i++)
		for (unsigned op = 0; op < STATS_NOPS && !v[i].not_counted; op++) {
			const uint64_t *h = v[i].snap.lat[op];
			uint64_t cum = 0, sum_ns;
			unsigned b = 0;
			for (unsigned k = 0; k < PROM_NLE; k++) {
				double le_ns = prom_lat_le[k] * 1e9;
				for (; b < STATS_LAT_BUCKETS - 1 &&
				       (double)(stats_lat_bucket_lo(b) + stats_lat_bucket_width(b) - 1) <= le_ns;
				     b++)
					cum += h[b];
				fprintf(f, "%s_bucket{", name);
				dev_labels(f, volume, &v[i]);
				fprintf(f, ",op=\"%s\",le=\"%g\"} %" PRIu64 "\n", prom_op_name[op], prom_lat_le[k], cum);
			}
			for (; b < STATS_LAT_BUCKETS; b++)
				cum += h[b];
			fprintf(f, "%s_bucket{", name);
			dev_labels(f, volume, &v[i]);
			fprintf(f, ",op=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", prom_op_name[op], cum);
			sum_ns = op == STATS_READ ? v[i].snap.read_ns
				 : op == STATS_WRITE ? v[i].snap.write_ns : v[i].snap.flush_ns;
			fprintf(f, "%s_sum{", name);
			dev_labels(f, volume, &v[i]);
			fprintf(f, ",op=\"%s\"} %" PRIu64 ".%09" PRIu64 "\n", prom_op_name[op],
				sum_ns / 1000000000u, sum_ns % 1000000000u);
			fprintf(f, "%s_count{", name);
			dev_labels(f, volume, &v[i]);
			fprintf(f, ",op=\"%s\"} %" PRIu64 "\n", prom_op_name[op], cum);
		}
}

/* Size histograms: the buckets are powers of two, so every bound is exact. */
static void size_histograms(FILE *f, const char *volume, const struct stats_view_dev *v, size_t n)
{
	const char *name = "fsvol_disk_request_size_bytes";
	family(f, name, "histogram", "Size of read and write requests (bucket bounds are exact).");
	for (size_t i = 0; i < n; i++)
		for (unsigned op = 0; op < 2 && !v[i].not_counted; op++) {
			const uint64_t *h = v[i].snap.size[op];
			uint64_t cum = 0;
			for (unsigned k = 0; k < STATS_SIZE_BUCKETS; k++) {
				cum += h[k];
				fprintf(f, "%s_bucket{", name);
				dev_labels(f, volume, &v[i]);
				if (k == STATS_SIZE_BUCKETS - 1)
					fprintf(f, ",op=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", prom_op_name[op], cum);
				else
					fprintf(f, ",op=\"%s\",le=\"%" PRIu64 "\"} %" PRIu64 "\n", prom_op_name[op],
						stats_size_bucket_hi(k), cum);
			}
			fprintf(f, "%s_sum{", name);
			dev_labels(f, volume, &v[i]);
			fprintf(f, ",op=\"%s\"} %" PRIu64 "\n", prom_op_name[op],
				op == STATS_READ ? v[i].snap.read_bytes : v[i].snap.write_bytes);
			fprintf(f, "%s_count{", name);
			dev_labels(f, volume, &v[i]);
			fprintf(f, ",op=\"%s\"} %" PRIu64 "\n", prom_op_name[op], cum);
		}
}

static const char *const md_state_names[STATS_MD_NSTATES] = {
	[STATS_MD_ACTIVE] = "active",         [STATS_MD_INACTIVE] = "inactive",
	[STATS_MD_RECOVERING] = "recovering", [STATS_MD_RESYNC] = "resync",
	[STATS_MD_CHECK] = "check",           [STATS_MD_RESHAPE] = "reshape",
};

const char *stats_md_state_name(enum stats_md_state s)
{
	return (unsigned)s < STATS_MD_NSTATES ? md_state_names[s] : "?";
}

static void md_families(FILE *f, const char *volume, const struct stats_view_dev *v, size_t n,
			const struct stats_prom_md *md)
{
	static const char *const states[] = { "active", "failed", "spare", "rebuilding", "missing" };
	family(f, "fsvol_md_disks", "gauge", "Member slots by state (node_md_disks).");
	for (unsigned s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		unsigned c = 0;
		for (size_t i = 1; i < n; i++)
			c += v[i].state && !strcmp(v[i].state, states[s]);
		fprintf(f, "fsvol_md_disks{volume=");
		label_value(f, volume);
		fprintf(f, ",state=\"%s\"} %u\n", states[s], c);
	}
	family(f, "fsvol_md_disks_required", "gauge", "Members the level needs, spares not included.");
	fputs("fsvol_md_disks_required{volume=", f);
	label_value(f, volume);
	fprintf(f, "} %u\n", md->disks_required);
	family(f, "fsvol_md_degraded", "gauge", "Required members that are not active (failed or missing).");
	fputs("fsvol_md_degraded{volume=", f);
	label_value(f, volume);
	fprintf(f, "} %u\n", md->degraded);
	family(f, "fsvol_md_state", "gauge", "The volume's state: 1 for the current one.");
	for (unsigned s = 0; s < STATS_MD_NSTATES; s++) {
		fputs("fsvol_md_state{volume=", f);
		label_value(f, volume);
		fprintf(f, ",state=\"%s\"} %d\n", md_state_names[s], md->state == (enum stats_md_state)s);
	}
	family(f, "fsvol_md_blocks", "gauge", "Capacity in 1 KiB blocks, as /proc/mdstat counts.");
	fputs("fsvol_md_blocks{volume=", f);
	label_value(f, volume);
	fprintf(f, "} %" PRIu64 "\n", md->blocks);
	family(f, "fsvol_md_blocks_synced", "gauge",
	       "1 KiB blocks done by a running resync, check, repair or reshape (= fsvol_md_blocks when none runs).");
	fputs("fsvol_md_blocks_synced{volume=", f);
	label_value(f, volume);
	fprintf(f, "} %" PRIu64 "\n", md->blocks_synced);
	family(f, "fsvol_member_info", "gauge",
	       "Each member's path, state and role (md's RaidDevice, \"-\" for none) (always 1).");
	for (size_t i = 1; i < n; i++) {
		fputs("fsvol_member_info{", f);
		dev_labels(f, volume, &v[i]);
		fputs(",path=", f);
		label_value(f, v[i].path ? v[i].path : "");
		fputs(",state=", f);
		label_value(f, v[i].state ? v[i].state : "unknown");
		if (v[i].uuid && v[i].role >= 0)
			fprintf(f, ",role=\"%d\"", v[i].role);
		else
			fputs(",role=\"-\"", f);
		fputs("} 1\n", f);
	}
	family(f, "fsvol_member_bad_blocks", "gauge",
	       "Entries in each member's bad-block list (md's bad block log; 0 without one).");
	for (size_t i = 1; i < n; i++) {
		fputs("fsvol_member_bad_blocks{", f);
		dev_labels(f, volume, &v[i]);
		fprintf(f, "} %u\n", v[i].bad_blocks);
	}
}

int stats_render_prom(FILE *f, const struct stats_view_dev *v, size_t n, const struct stats_prom_md *md)
{
	const char *volume = n && v[0].name ? v[0].name : "?";
	family(f, "fsvol_disk_counted", "gauge",
	       "1 when the device is counted; 0 when the stats level leaves it out (its fsvol_disk_ series are absent).");
	for (size_t i = 0; i < n; i++) {
		fputs("fsvol_disk_counted{", f);
		dev_labels(f, volume, &v[i]);
		fprintf(f, "} %d\n", !v[i].not_counted);
	}
	per_dev(f, "fsvol_disk_reads_completed_total", "counter", "Reads completed (failed ones included).",
		volume, v, n, SNAP_OFF(reads), PROM_COUNT);
	per_dev(f, "fsvol_disk_read_bytes_total", "counter", "Bytes read.", volume, v, n,
		SNAP_OFF(read_bytes), PROM_COUNT);
	per_dev(f, "fsvol_disk_read_time_seconds_total", "counter", "Sum of read latencies.", volume, v, n,
		SNAP_OFF(read_ns), PROM_NS);
	per_dev(f, "fsvol_disk_writes_completed_total", "counter", "Writes completed (failed ones included).",
		volume, v, n, SNAP_OFF(writes), PROM_COUNT);
	per_dev(f, "fsvol_disk_written_bytes_total", "counter", "Bytes written.", volume, v, n,
		SNAP_OFF(write_bytes), PROM_COUNT);
	per_dev(f, "fsvol_disk_write_time_seconds_total", "counter", "Sum of write latencies.", volume, v, n,
		SNAP_OFF(write_ns), PROM_NS);
	per_dev(f, "fsvol_disk_flush_requests_total", "counter", "Flushes completed.", volume, v, n,
		SNAP_OFF(flushes), PROM_COUNT);
	per_dev(f, "fsvol_disk_flush_requests_time_seconds_total", "counter", "Sum of flush latencies.",
		volume, v, n, SNAP_OFF(flush_ns), PROM_NS);
	per_dev(f, "fsvol_disk_io_now", "gauge", "Requests in flight.", volume, v, n, SNAP_OFF(inflight),
		PROM_COUNT);
	per_dev(f, "fsvol_disk_io_time_seconds_total", "counter",
		"Time with at least one request in flight (rate = utilisation).", volume, v, n,
		SNAP_OFF(busy_ns), PROM_NS);
	per_dev(f, "fsvol_disk_io_time_weighted_seconds_total", "counter",
		"Integral of the in-flight count (rate = average queue size).", volume, v, n,
		SNAP_OFF(queue_ns), PROM_NS);
	per_dev(f, "fsvol_disk_errors_total", "counter", "Requests that ended with an error.", volume, v, n,
		SNAP_OFF(errors), PROM_COUNT);
	lat_histograms(f, volume, v, n);
	size_histograms(f, volume, v, n);
	if (md)
		md_families(f, volume, v, n, md);
	return done(f);
}
