/* test_stats: counters, integrals, histograms, rates, renderers, the
 * stats.json reader and the trace ring. STATS_BENCH=1 instead prints the
 * hot-path cost (ns per begin+end pair, 1 and 2 threads on one device). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

static struct stats_snap *snap_new(void)
{
	struct stats_snap *s = calloc(1, sizeof(*s));
	ck_assert_ptr_nonnull(s);
	return s;
}

/* ---- scripted integrals ---- */

struct ev {
	char kind;      /* 'b' begin, 'e' end, 0 = stop */
	uint64_t t;     /* now */
	uint64_t start; /* end: the matching begin's t */
};

static const struct {
	const char *name;
	struct ev ev[12];
	uint64_t snap_t, busy, queue, inflight;
} integral_cases[] = {
	{"overlap [0,10] [5,20]",
	 {{'b', 0, 0}, {'b', 5, 0}, {'e', 10, 0}, {'e', 20, 5}}, 20, 20, 25, 0},
	{"disjoint [0,10] [20,30]",
	 {{'b', 0, 0}, {'e', 10, 0}, {'b', 20, 0}, {'e', 30, 20}}, 40, 20, 20, 0},
	{"nested [0,100] [10,20] [30,40]",
	 {{'b', 0, 0}, {'b', 10, 0}, {'e', 20, 10}, {'b', 30, 0}, {'e', 40, 30}, {'e', 100, 0}},
	 100, 100, 120, 0},
	{"in flight at the snapshot",
	 {{'b', 0, 0}, {'b', 5, 0}, {'e', 10, 0}}, 30, 30, 10 + 25, 1},
	{"two in flight, one done",
	 {{'b', 100, 0}, {'e', 110, 100}, {'b', 200, 0}, {'b', 250, 0}}, 300, 10 + 100, 10 + 100 + 50,
	 2},
	{"idle device", {{0, 0, 0}}, 1000, 0, 0, 0},
	{"back to back [0,10] [10,20]",
	 {{'b', 0, 0}, {'e', 10, 0}, {'b', 10, 0}, {'e', 20, 10}}, 20, 20, 20, 0},
};

START_TEST(test_integrals)
{
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *s = snap_new();
	ck_assert_ptr_nonnull(d);
	for (const struct ev *e = integral_cases[_i].ev; e->kind; e++) {
		if (e->kind == 'b')
			stats_begin(d, e->t);
		else
			stats_end(d, STATS_READ, 0, 4096, e->start, e->t, 0);
	}
	stats_snapshot(d, integral_cases[_i].snap_t, s);
	ck_assert_msg(s->busy_ns == integral_cases[_i].busy, "%s: busy %llu",
		      integral_cases[_i].name, (unsigned long long)s->busy_ns);
	ck_assert_msg(s->queue_ns == integral_cases[_i].queue, "%s: queue %llu",
		      integral_cases[_i].name, (unsigned long long)s->queue_ns);
	ck_assert_uint_eq(s->inflight, integral_cases[_i].inflight);

	/* %util over [0, snap_t] from an empty first snapshot */
	struct stats_snap *z = snap_new();
	struct stats_rates r;
	ck_assert_int_eq(stats_rates_compute(z, s, &r), 0);
	ck_assert(fabs(r.util_pct - 100.0 * (double)integral_cases[_i].busy /
					(double)integral_cases[_i].snap_t) < 1e-9);
	ck_assert(fabs(r.pct_idle_time - (100.0 - r.util_pct)) < 1e-9);
	free(z);
	free(s);
	stats_dev_destroy(d);
}
END_TEST

/* Little's law on a constant queue depth: aqu-sz == IOPS x mean latency. */
START_TEST(test_little)
{
	const unsigned qd = 4, k = 50;
	const uint64_t lat = 1000;
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *a = snap_new(), *b = snap_new();
	stats_snapshot(d, 0, a);
	/* qd streams, staggered by lat/qd, each back to back; ends before begins */
	for (uint64_t t = 0; t <= k * lat + lat; t += lat / qd) {
		unsigned j = (unsigned)((t / (lat / qd)) % qd);
		uint64_t phase = j * (lat / qd);
		if (t >= phase + lat && t <= phase + k * lat)
			stats_end(d, STATS_WRITE, 0, 512, t - lat, t, 0);
		if (t >= phase && t < phase + k * lat)
			stats_begin(d, t);
	}
	uint64_t end = (qd - 1) * (lat / qd) + k * lat;
	stats_snapshot(d, end, b);
	ck_assert_uint_eq(b->writes, qd * k);
	ck_assert_uint_eq(b->inflight, 0);
	struct stats_rates r;
	ck_assert_int_eq(stats_rates_compute(a, b, &r), 0);
	double little = r.w_s * r.w_await_ms / 1e3;
	ck_assert_msg(fabs(r.aqu_sz - little) < 1e-9, "aqu %f little %f", r.aqu_sz, little);
	ck_assert(fabs(r.avg_queue - r.aqu_sz) < 1e-9);
	/* the exact integral: qd * k * lat */
	ck_assert_uint_eq(b->queue_ns, qd * k * lat);
	free(a);
	free(b);
	stats_dev_destroy(d);
}
END_TEST

/* ---- histograms ---- */

START_TEST(test_lat_buckets)
{
	/* contiguous, each bucket's lower bound maps to itself */
	for (unsigned i = 0; i + 1 < STATS_LAT_BUCKETS; i++) {
		ck_assert_uint_eq(stats_lat_bucket(stats_lat_bucket_lo(i)), i);
		ck_assert_uint_eq(stats_lat_bucket_lo(i) + stats_lat_bucket_width(i),
				  stats_lat_bucket_lo(i + 1));
	}
	ck_assert_uint_eq(stats_lat_bucket(UINT64_MAX), STATS_LAT_BUCKETS - 1);
	ck_assert_uint_lt(stats_lat_bucket(100000000000ull), STATS_LAT_BUCKETS - 1); /* 100 s */
	/* every value from 1 us to 100 s: mid within 1% (bound: 1/128) */
	double worst = 0;
	for (double x = 1000; x <= 1e11; x *= 1.0007) {
		uint64_t v = (uint64_t)x;
		for (uint64_t dv = 0; dv < 3; dv++) {
			unsigned b = stats_lat_bucket(v + dv);
			ck_assert(v + dv >= stats_lat_bucket_lo(b));
			ck_assert(v + dv < stats_lat_bucket_lo(b) + stats_lat_bucket_width(b));
			double err = fabs(stats_lat_bucket_mid(b) - (double)(v + dv)) / (double)(v + dv);
			if (err > worst)
				worst = err;
		}
	}
	ck_assert_msg(worst <= 1.0 / 128, "worst %f", worst);
	ck_assert(worst > 0.005); /* the bound is tight: the test can see errors */
}
END_TEST

static const struct {
	uint64_t bytes;
	unsigned bucket;
} size_cases[] = {
	{0, 0}, {1, 0}, {512, 0}, {513, 1}, {1024, 1}, {1025, 2}, {4096, 3}, {4097, 4},
	{65536, 7}, {1 << 20, 11}, {16 << 20, 15}, {(16 << 20) + 1, 16}, {UINT64_MAX, 16},
};

START_TEST(test_size_buckets)
{
	ck_assert_uint_eq(stats_size_bucket(size_cases[_i].bytes), size_cases[_i].bucket);
}
END_TEST

static const struct {
	double p, expect_ns;
} pct_cases[] = {
	{50, 500000}, {99, 990000}, {99.9, 999000}, {10, 100000}, {100, 1000000}, {0.1, 1000},
};

START_TEST(test_percentiles)
{
	/* uniform 1..1000 us, one sample each, through the hooks */
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *s = snap_new();
	for (uint64_t us = 1; us <= 1000; us++) {
		stats_begin(d, 0);
		stats_end(d, STATS_READ, us * 4096, 4096, 0, us * 1000, 0);
	}
	stats_snapshot(d, 2000000, s);
	const uint64_t *h[1] = {s->lat[STATS_READ]};
	double v = stats_lat_percentile(h, 1, pct_cases[_i].p);
	ck_assert_msg(fabs(v - pct_cases[_i].expect_ns) <= 0.01 * pct_cases[_i].expect_ns,
		      "p%g = %f", pct_cases[_i].p, v);
	free(s);
	stats_dev_destroy(d);
}
END_TEST

START_TEST(test_merge)
{
	struct stats_dev *a = stats_dev_create(), *b = stats_dev_create();
	struct stats_snap *sa = snap_new(), *sb = snap_new(), *sum = snap_new(), *back = snap_new();
	for (uint64_t i = 1; i <= 500; i++) {
		stats_begin(a, 0);
		stats_end(a, STATS_READ, 0, i * 512, 0, i * 1000, 0);
		stats_begin(b, 0);
		stats_end(b, i % 2 ? STATS_WRITE : STATS_READ, 0, 4096, 0, (i + 500) * 1000, 0);
	}
	stats_snapshot(a, 1000000, sa);
	stats_snapshot(b, 1000000, sb);
	stats_snap_add(sa, sb, sum);
	ck_assert_uint_eq(sum->reads, sa->reads + sb->reads);
	ck_assert_uint_eq(sum->read_ns, sa->read_ns + sb->read_ns);
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		ck_assert_uint_eq(sum->lat[STATS_READ][i],
				  sa->lat[STATS_READ][i] + sb->lat[STATS_READ][i]);
	for (unsigned i = 0; i < STATS_SIZE_BUCKETS; i++)
		ck_assert_uint_eq(sum->size[STATS_READ][i],
				  sa->size[STATS_READ][i] + sb->size[STATS_READ][i]);
	/* merged p50 of reads+writes over 1..1000 us is ~500 us */
	const uint64_t *h[2] = {sum->lat[STATS_READ], sum->lat[STATS_WRITE]};
	ck_assert(fabs(stats_lat_percentile(h, 2, 50) - 500000) < 5000);
	stats_snap_sub(sum, sb, back);
	ck_assert_int_eq(memcmp(back->lat, sa->lat, sizeof(sa->lat)), 0);
	ck_assert_uint_eq(back->read_bytes, sa->read_bytes);
	free(sa);
	free(sb);
	free(sum);
	free(back);
	stats_dev_destroy(a);
	stats_dev_destroy(b);
}
END_TEST

/* ---- sequential detection ---- */

START_TEST(test_sequential)
{
	static const struct {
		int op;
		uint64_t off, len;
		int seq;
	} io[] = {
		{STATS_READ, 0, 4096, 0},      /* first: nothing before it */
		{STATS_READ, 4096, 4096, 1},
		{STATS_READ, 8192, 8192, 1},
		{STATS_FLUSH, 0, 0, 0},        /* flushes do not move the position */
		{STATS_WRITE, 16384, 512, 1},  /* any op continuing the previous end */
		{STATS_READ, 100000, 512, 0},
		{STATS_READ, 0, 512, 0},
		{STATS_WRITE, 512, 512, 1},
	};
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *s = snap_new();
	uint64_t sr = 0, sw = 0;
	for (unsigned i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		stats_begin(d, i * 10);
		stats_end(d, io[i].op, io[i].off, io[i].len, i * 10, i * 10 + 5, 0);
		if (io[i].seq && io[i].op == STATS_READ)
			sr++;
		if (io[i].seq && io[i].op == STATS_WRITE)
			sw++;
	}
	stats_snapshot(d, 1000, s);
	ck_assert_uint_eq(s->seq_reads, sr);
	ck_assert_uint_eq(s->seq_writes, sw);
	struct stats_snap *z = snap_new();
	struct stats_rates r;
	stats_rates_compute(z, s, &r);
	ck_assert(fabs(r.seq_pct - 100.0 * (double)(sr + sw) / 7.0) < 1e-9);
	free(z);
	free(s);
	stats_dev_destroy(d);
}
END_TEST

/* ---- threads ---- */

struct hammer {
	struct stats_dev *d;
	unsigned id, n;
	uint64_t ns; /* sum of the latencies this thread reported */
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	for (unsigned i = 0; i < h->n; i++) {
		uint64_t t = stats_now();
		stats_begin(h->d, t);
		uint64_t e = stats_now();
		stats_end(h->d, i % 3 == 0 ? STATS_WRITE : STATS_READ, i * 4096ull, 4096, t, e,
			  i % 100 == 0 ? -EIO : 0);
		h->ns += e - t;
	}
	return NULL;
}

/* exact sums with threads <= slots (4) and with more threads than slots (24) */
static const unsigned hammer_threads[] = {4, 24};

START_TEST(test_threads)
{
	unsigned nt = hammer_threads[_i], n = nt == 4 ? 100000 : 20000;
	struct stats_dev *d = stats_dev_create();
	pthread_t th[24];
	struct hammer h[24];
	uint64_t t0 = stats_now();
	for (unsigned t = 0; t < nt; t++) {
		h[t] = (struct hammer){d, t, n, 0};
		ck_assert_int_eq(pthread_create(&th[t], NULL, hammer_fn, &h[t]), 0);
	}
	uint64_t ns = 0;
	for (unsigned t = 0; t < nt; t++) {
		pthread_join(th[t], NULL);
		ns += h[t].ns;
	}
	uint64_t t1 = stats_now();
	uint64_t w = 0, r = 0, errs = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i % 3 == 0)
			w++;
		else
			r++;
		errs += i % 100 == 0;
	}
	struct stats_snap *s = snap_new();
	stats_snapshot(d, t1, s);
	ck_assert_uint_eq(s->reads, r * nt);
	ck_assert_uint_eq(s->writes, w * nt);
	ck_assert_uint_eq(s->read_bytes, r * nt * 4096);
	ck_assert_uint_eq(s->read_ns + s->write_ns, ns);
	ck_assert_uint_eq(s->errors, errs * nt);
	ck_assert_uint_eq(s->inflight, 0);
	ck_assert_uint_eq(s->queue_ns, ns);
	uint64_t hist = 0;
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		hist += s->lat[STATS_READ][i] + s->lat[STATS_WRITE][i];
	ck_assert_uint_eq(hist, n * nt);
	/* busy periods never overlap, so they fit in the wall-clock span */
	ck_assert(s->busy_ns > 0);
	ck_assert(s->busy_ns <= t1 - t0);
	free(s);
	stats_dev_destroy(d);
}
END_TEST

/* ---- reset ---- */

START_TEST(test_reset)
{
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *s = snap_new();
	for (int i = 0; i < 10; i++) {
		stats_begin(d, 100 * i);
		stats_end(d, STATS_READ, 0, 4096, 100 * i, 100 * i + 50, 0);
	}
	stats_begin(d, 2000); /* in flight across the reset */
	stats_reset(d, 3000);
	stats_snapshot(d, 3000, s);
	ck_assert_uint_eq(s->reads, 0);
	ck_assert_uint_eq(s->read_ns, 0);
	ck_assert_uint_eq(s->busy_ns, 0);
	ck_assert_uint_eq(s->queue_ns, 0);
	ck_assert_uint_eq(s->inflight, 1);
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		ck_assert_uint_eq(s->lat[STATS_READ][i], 0);
	stats_end(d, STATS_WRITE, 0, 512, 2000, 3500, 0);
	stats_snapshot(d, 4000, s);
	ck_assert_uint_eq(s->writes, 1);
	ck_assert_uint_eq(s->write_bytes, 512);
	ck_assert_uint_eq(s->busy_ns, 500);  /* 3000..3500 */
	ck_assert_uint_eq(s->queue_ns, 500);
	ck_assert_uint_eq(s->inflight, 0);
	free(s);
	stats_dev_destroy(d);
}
END_TEST

/* ---- rates ---- */

START_TEST(test_rates)
{
	struct stats_dev *d = stats_dev_create();
	struct stats_snap *a = snap_new(), *b = snap_new();
	stats_snapshot(d, 1000000000ull, a);
	/* two reads of 4 KiB (1 ms and 3 ms), one 64 KiB write overlapping the
	 * second read for a full second: PerfMon's % Disk Time goes over 100 */
	stats_begin(d, 1000000000ull);
	stats_end(d, STATS_READ, 0, 4096, 1000000000ull, 1001000000ull, 0);
	stats_begin(d, 1001000000ull);
	stats_begin(d, 1001000000ull);
	stats_end(d, STATS_READ, 4096, 4096, 1001000000ull, 1004000000ull, 0);
	stats_end(d, STATS_WRITE, 8192, 65536, 1001000000ull, 2000000000ull, 0);
	stats_snapshot(d, 2000000000ull, b);
	struct stats_rates r;
	ck_assert_int_eq(stats_rates_compute(a, b, &r), 0);
	ck_assert_int_eq(stats_rates_compute(b, a, &r) , -EINVAL);
	ck_assert_int_eq(stats_rates_compute(a, b, &r), 0);
	const struct {
		const char *name;
		double got, want;
	} chk[] = {
		{"r/s", r.r_s, 2},
		{"w/s", r.w_s, 1},
		{"rMB/s", r.rmb_s, 8192.0 / 1048576},
		{"wMB/s", r.wmb_s, 65536.0 / 1048576},
		{"rareq-sz", r.rareq_kb, 4},
		{"areq-sz", r.areq_kb, (8192 + 65536) / 3.0 / 1024},
		{"r_await", r.r_await_ms, 2},
		{"w_await", r.w_await_ms, 999},
		{"aqu-sz", r.aqu_sz, 1.003},
		{"%util", r.util_pct, 100},
		{"seq%", r.seq_pct, 200.0 / 3},
		{"Disk Transfers/sec", r.transfers_s, 3},
		{"Avg. Disk sec/Read", r.avg_sec_read, 0.002},
		{"Avg. Disk sec/Transfer", r.avg_sec_transfer, 1.003 / 3},
		{"Avg. Disk Bytes/Write", r.avg_bytes_write, 65536},
		{"Avg. Disk Queue Length", r.avg_queue, 1.003},
		{"% Disk Time", r.pct_disk_time, 100.3},
		{"% Disk Read Time", r.pct_read_time, 0.4},
		{"% Idle Time", r.pct_idle_time, 0},
		{"Current Disk Queue Length", r.cur_queue, 0},
	};
	for (unsigned i = 0; i < sizeof(chk) / sizeof(chk[0]); i++)
		ck_assert_msg(fabs(chk[i].got - chk[i].want) < 1e-9 * (1 + fabs(chk[i].want)),
			      "%s: %.12f != %.12f", chk[i].name, chk[i].got, chk[i].want);
	free(a);
	free(b);
	stats_dev_destroy(d);
}
END_TEST

/* ---- levels ---- */

static const struct {
	const char *s;
	int rc;
	enum stats_level l;
} level_cases[] = {
	{"all", 0, STATS_LEVEL_ALL}, {"volume", 0, STATS_LEVEL_VOLUME}, {"off", 0, STATS_LEVEL_OFF},
	{"OFF", 0, STATS_LEVEL_OFF}, {"", -EINVAL, 0},   {"members", -EINVAL, 0}, {NULL, -EINVAL, 0},
};

START_TEST(test_levels)
{
	enum stats_level l = (enum stats_level)99;
	ck_assert_int_eq(stats_parse_level(level_cases[_i].s, &l), level_cases[_i].rc);
	if (level_cases[_i].rc == 0) {
		ck_assert_int_eq(l, level_cases[_i].l);
		ck_assert_str_eq(stats_level_name(l), level_cases[_i].s[0] == 'O' ? "off"
										  : level_cases[_i].s);
	}
}
END_TEST

/* ---- renderers and the JSON reader ---- */

#define NVIEW 4
static struct stats_view_dev *make_view(void)
{
	static const char *names[NVIEW] = {"fsvol0", "fsvol0m0", "fsvol0m1", "fsvol0m2"};
	static const char *paths[NVIEW] = {NULL, "/tmp/a b", "/tmp/q\"uote\\d\n", "/tmp/\xc3\xa9t\xe9"};
	static const char *states[NVIEW] = {NULL, "active", "failed", "rebuilding"};
	struct stats_view_dev *v = calloc(NVIEW, sizeof(*v));
	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < NVIEW; i++) {
		struct stats_dev *d = stats_dev_create();
		for (uint64_t k = 0; k < 200u * (unsigned)(i + 1); k++) {
			stats_begin(d, k * 1000);
			stats_end(d, (enum stats_op)(k % 3), k * 4096, 512ull << (k % 18), k * 1000,
				  k * 1000 + 1 + k * k * 997 % 100000000, k % 50 == 0);
		}
		stats_begin(d, 10000000);
		v[i].name = names[i];
		v[i].path = paths[i];
		v[i].state = states[i];
		v[i].index = i - 1;
		v[i].role = -1;
		/* members 1 and 2 of a served volume: their UUIDs, member 2 in role 1
		 * (its Number is not its role), member 1 failed (no role) */
		if (i >= 2)
			v[i].uuid = i == 2 ? "11111111-2222-4333-8444-555555555555" : "66666666-7777-4888-9999-aaaaaaaaaaaa";
		if (i == 3)
			v[i].role = 1;
		v[i].not_counted = i == 2; /* member 1: as if left out by the stats level */
		stats_snapshot(d, 2000000000ull + (uint64_t)i, &v[i].snap);
		stats_dev_destroy(d);
	}
	return v;
}

static char *render_json(const struct stats_view_dev *v, size_t n, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stats_render_json(f, 123456789, 23456789, v, n), 0);
	fclose(f);
	return buf;
}

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

START_TEST(test_json_roundtrip)
{
	struct stats_view_dev *v = make_view();
	for (size_t n = 0; n <= NVIEW; n++) {
		size_t len;
		char *buf = render_json(v, n, &len);
		char err[256];
		struct stats_doc doc;
		int rc = stats_json_parse(buf, len, &doc, err, sizeof(err));
		ck_assert_msg(rc == 0, "n=%zu: %s", n, err);
		ck_assert_uint_eq(doc.uptime_ns, 123456789);
		ck_assert_uint_eq(doc.since_reset_ns, 23456789);
		ck_assert_uint_eq(doc.n, n);
		for (size_t i = 0; i < n; i++) {
			ck_assert(str_eq(doc.dev[i].name, v[i].name));
			ck_assert(str_eq(doc.dev[i].path, v[i].path));
			ck_assert(str_eq(doc.dev[i].state, v[i].state));
			ck_assert_int_eq(doc.dev[i].index, v[i].index);
			ck_assert(str_eq(doc.dev[i].uuid, v[i].uuid));
			ck_assert_int_eq(doc.dev[i].role, v[i].role);
			ck_assert_int_eq(doc.dev[i].not_counted, v[i].not_counted);
			ck_assert_int_eq(memcmp(&doc.dev[i].snap, &v[i].snap, sizeof(v[i].snap)), 0);
		}
		stats_doc_free(&doc);
		free(buf);
	}
	ck_assert(v[3].snap.errors > 0 && v[3].snap.inflight == 1);
	free(v);
}
END_TEST

/* a copy of exactly len bytes (no NUL) so ASan sees any over-read */
static int parse_exact(const char *src, size_t len)
{
	char *b = malloc(len ? len : 1);
	memcpy(b, src, len);
	struct stats_doc doc;
	char err[128];
	int rc = stats_json_parse(b, len, &doc, err, sizeof(err));
	if (rc == 0)
		stats_doc_free(&doc);
	else
		ck_assert(err[0] != 0);
	free(b);
	return rc;
}

START_TEST(test_json_reject_prefixes)
{
	struct stats_view_dev *v = make_view();
	size_t len;
	char *buf = render_json(v, NVIEW, &len);
	size_t last = len;
	while (last > 0 && buf[last - 1] != '}')
		last--;
	ck_assert(last > 0);
	/* every strict prefix that cuts the document is an error */
	for (size_t i = 0; i < last; i++)
		ck_assert_msg(parse_exact(buf, i) == -EINVAL, "prefix %zu accepted", i);
	ck_assert_int_eq(parse_exact(buf, last), 0);
	ck_assert_int_eq(parse_exact(buf, len), 0);
	/* random bytes, and random single-byte corruptions: never a crash */
	unsigned seed = 12345;
	char junk[512];
	for (int k = 0; k < 2000; k++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (char)rand_r(&seed);
		ck_assert_int_eq(parse_exact(junk, (size_t)rand_r(&seed) % sizeof(junk)), -EINVAL);
	}
	for (int k = 0; k < 3000; k++) {
		size_t at = (size_t)rand_r(&seed) % len;
		char old = buf[at];
		buf[at] = (char)rand_r(&seed);
		(void)parse_exact(buf, len);
		buf[at] = old;
	}
	free(buf);
	free(v);
}
END_TEST

static const char *const bad_docs[] = {
	"",
	"{}",
	"[]",
	"null",
	"{\"uptime_ns\":1}",
	"{\"uptime_ns\":01,\"bucket\":{},\"volume\":null,\"members\":[]}",
	"{\"uptime_ns\":1.5,\"bucket\":{},\"volume\":null,\"members\":[]}",
	"{\"uptime_ns\":-1,\"bucket\":{},\"volume\":null,\"members\":[]}",
	"{\"uptime_ns\":18446744073709551616,\"bucket\":{},\"volume\":null,\"members\":[]}",
	"{\"uptime_ns\":1,\"uptime_ns\":1}",
	"{\"uptime_ns\":1,\"extra\":1}",
	"{\"uptime_ns\":1 \"bucket\":{}}",
	"{\"uptime_ns\":1,\"bucket\":{\"lat\":{\"unit\":\"ns\",\"count\":2047,\"sub_bits\":6,"
	"\"rule\":\"\"}}}",
	"{\"uptime_ns\":1,\"bucket\":{\"lat\":{\"unit\":\"\\q\"}}}",
	"{\"uptime_ns\":1,\"bucket\":{\"lat\":{\"unit\":\"\\u0000\"}}}",
	"{\"uptime_ns\":1,\"bucket\":{\"lat\":{\"unit\":\"\\ud800\"}}}",
	"{\"uptime_ns\":1,\"bucket\":{\"lat\":{\"unit\":\"a\nb\"}}}",
};

START_TEST(test_json_reject_table)
{
	ck_assert_int_eq(parse_exact(bad_docs[_i], strlen(bad_docs[_i])), -EINVAL);
}
END_TEST

/* targeted edits of a valid document */
static const struct {
	const char *from, *to;
} edits[] = {
	{"\"reads\":", "\"reads\":-"},             /* negative counter */
	{"\"since_reset_ns\":23456789,", ""},      /* a required key missing */
	{"\"reads\":", "\"readz\":"},              /* unknown key */
	{"\"writes\":", "\"reads\":"},             /* duplicate key */
	{"\"index\":0", "\"index\":0,\"index\":0"}, /* duplicate index */
	{"\"histograms\":{", "\"histograms\":{\"read_lat\":[],"}, /* duplicate histogram */
	{"\"read_lat\":[[", "\"read_lat\":[[2048,1],["}, /* bucket out of range */
	{"\"read_lat\":[[", "\"read_lat\":[[5,1],[4,1],["}, /* out of order */
	{"]}}", "]}},"},                           /* trailing comma */
	{"\"state\":\"active\"", "\"state\":active"},
	{"\"name\":\"fsvol0\",", ""},              /* missing key */
	{"]}\n", "]}x"},                           /* trailing garbage */
	{"\"counted\":true", "\"counted\":1"},      /* not a boolean */
	{"\"counted\":false,", ""},                /* counted missing */
	{"\"role\":1", "\"role\":-1"},           /* a negative role */
	{"\"role\":null", "\"role\":\"x\""},       /* a role not a number */
	{"{\"name\":\"fsvol0\",", "{\"name\":\"fsvol0\",\"uuid\":null,"}, /* the volume has no uuid */
};

static char *replace_once(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	ck_assert_ptr_nonnull(at);
	size_t a = (size_t)(at - s), fl = strlen(from), tl = strlen(to), sl = strlen(s);
	char *o = malloc(sl - fl + tl + 1);
	memcpy(o, s, a);
	memcpy(o + a, to, tl);
	memcpy(o + a + tl, at + fl, sl - a - fl + 1);
	return o;
}

START_TEST(test_json_reject_edits)
{
	struct stats_view_dev *v = make_view();
	size_t len;
	char *buf = render_json(v, NVIEW, &len);
	char *bad = replace_once(buf, edits[_i].from, edits[_i].to);
	ck_assert_int_eq(parse_exact(bad, strlen(bad)), -EINVAL);
	free(bad);
	free(buf);
	free(v);
}
END_TEST

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(test_diskstats)
{
	struct stats_view_dev *v = make_view();
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_render_diskstats(f, v, NVIEW), 0);
	fclose(f);
	ck_assert_uint_eq(count_lines(buf), NVIEW);
	char *save = NULL, *line = strtok_r(buf, "\n", &save);
	for (int i = 0; line; i++, line = strtok_r(NULL, "\n", &save)) {
		char *tok[32], *s2 = NULL;
		int nt = 0;
		for (char *t = strtok_r(line, " ", &s2); t && nt < 32; t = strtok_r(NULL, " ", &s2))
			tok[nt++] = t;
		ck_assert_int_eq(nt, 3 + 17); /* major minor name + kernel 5.5 fields */
		ck_assert_int_eq(atoi(tok[0]), STATS_DISKSTATS_MAJOR);
		ck_assert_int_eq(atoi(tok[1]), i);
		ck_assert_str_eq(tok[2], v[i].name);
		ck_assert_uint_eq(strtoull(tok[3], NULL, 10), v[i].snap.reads);
		ck_assert_uint_eq(strtoull(tok[5], NULL, 10), v[i].snap.read_bytes / 512);
		ck_assert_uint_eq(strtoull(tok[7], NULL, 10), v[i].snap.writes);
		ck_assert_uint_eq(strtoull(tok[11], NULL, 10), v[i].snap.inflight);
		ck_assert_uint_eq(strtoull(tok[12], NULL, 10), v[i].snap.busy_ns / 1000000);
		ck_assert_uint_eq(strtoull(tok[18], NULL, 10), v[i].snap.flushes);
	}
	free(buf);
	free(v);
}
END_TEST

START_TEST(test_render_views)
{
	struct stats_view_dev *cur = make_view(), *prev = calloc(NVIEW, sizeof(*prev));
	for (int i = 0; i < NVIEW; i++)
		prev[i].snap.t_ns = cur[i].snap.t_ns - 1000000000ull;
	static const struct {
		enum stats_fmt fmt;
		int header;
		size_t lines;
	} fm[] = {
		{STATS_FMT_IOSTAT, 1, NVIEW + 3}, {STATS_FMT_IOSTAT, 0, NVIEW + 1},
		{STATS_FMT_CSV, 1, NVIEW + 1},    {STATS_FMT_CSV, 0, NVIEW},
		{STATS_FMT_JSON, 0, 1},           {STATS_FMT_PERFMON, 1, 19 + 2},
	};
	for (unsigned k = 0; k < sizeof(fm) / sizeof(fm[0]); k++) {
		char *buf = NULL;
		size_t len;
		FILE *f = open_memstream(&buf, &len);
		struct stats_interval_opts o = {.fmt = fm[k].fmt, .header = fm[k].header, .t_s = 1.5,
						.time = "2026-01-02T03:04:05+0000"};
		ck_assert_int_eq(stats_render_interval(f, &o, prev, cur, NVIEW), 0);
		fclose(f);
		ck_assert_msg(count_lines(buf) == fm[k].lines, "fmt %d: %zu lines\n%s", fm[k].fmt,
			      count_lines(buf), buf);
		if (fm[k].fmt == STATS_FMT_PERFMON)
			ck_assert_ptr_nonnull(strstr(buf, "Avg. Disk Queue Length"));
		if (fm[k].fmt == STATS_FMT_CSV && fm[k].header)
			ck_assert(strncmp(buf, "timestamp,time,device,index,counted,r/s,", 40) == 0);
		if (fm[k].fmt == STATS_FMT_CSV)
			ck_assert_ptr_nonnull(strstr(buf, ",2026-01-02T03:04:05+0000,fsvol0m1,1,false,"));
		if (fm[k].fmt == STATS_FMT_JSON)
			ck_assert_ptr_nonnull(strstr(buf, "\"time\":\"2026-01-02T03:04:05+0000\""));
		if (fm[k].fmt == STATS_FMT_IOSTAT)
			ck_assert_ptr_nonnull(strstr(buf, "\n  m1   failed   not counted"));
		free(buf);
	}
	/* table: header + one row per device, members indented */
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_render_table(f, cur, NVIEW), 0);
	fclose(f);
	ck_assert_uint_eq(count_lines(buf), NVIEW + 1);
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol0 "));
	ck_assert_ptr_nonnull(strstr(buf, "\n  fsvol0m1 "));
	ck_assert_ptr_nonnull(strstr(buf, "not counted\n"));
	free(buf);
	free(prev);
	free(cur);
}
END_TEST

/* the width of the longest line of s */
static size_t max_line(const char *s)
{
	size_t w = 0, cur = 0;
	for (; *s; s++) {
		if (*s == '\n') {
			w = cur > w ? cur : w;
			cur = 0;
		} else {
			cur++;
		}
	}
	return cur > w ? cur : w;
}

static char *render_top(const struct stats_top_opts *o, const struct stats_view_dev *prev,
			const struct stats_view_dev *cur, size_t n)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_render_top(f, o, prev, cur, n), 0);
	fclose(f);
	return buf;
}

/* the stat table: 80 columns by default, more columns as the width allows,
 * all with wide, units under the names, the rows cut to max_rows */
START_TEST(test_top_layout)
{
	struct stats_view_dev *cur = make_view(), *prev = calloc(NVIEW, sizeof(*prev));
	for (int i = 0; i < NVIEW; i++)
		prev[i].snap.t_ns = cur[i].snap.t_ns - 1000000000ull;
	struct stats_top_opts o = {.header = 1, .title = "fsvol0  over 1.00 s"};
	char *b80 = render_top(&o, prev, cur, NVIEW);
	ck_assert_msg(max_line(b80) <= 79, "%zu columns:\n%s", max_line(b80), b80);
	ck_assert_uint_eq(count_lines(b80), NVIEW + 3);
	ck_assert_ptr_nonnull(strstr(b80, "r/s"));
	ck_assert_ptr_nonnull(strstr(b80, "r_await"));
	ck_assert_ptr_nonnull(strstr(b80, "%util"));
	ck_assert_ptr_null(strstr(b80, "p99.9"));
	ck_assert_ptr_null(strstr(b80, "seq%"));
	/* the units row names a unit under every figure */
	const char *units = strchr(strchr(b80, '\n') + 1, '\n') + 1;
	ck_assert(strncmp(units, "      ", 6) == 0);
	ck_assert_ptr_nonnull(strstr(units, "IO/s"));
	ck_assert(strstr(units, "ms") && strstr(units, "MB/s") && strstr(units, "reqs"));
	o.cols = 120;
	char *b120 = render_top(&o, prev, cur, NVIEW);
	ck_assert_msg(max_line(b120) <= 119 && max_line(b120) > max_line(b80), "%s", b120);
	ck_assert_ptr_nonnull(strstr(b120, "p50"));
	ck_assert_ptr_nonnull(strstr(b120, "areq-sz"));
	o.cols = 0;
	o.wide = 1;
	char *bw = render_top(&o, prev, cur, NVIEW);
	ck_assert(strstr(bw, "p99.9") && strstr(bw, "seq%") && strstr(bw, "f_await"));
	o.wide = 0;
	o.max_rows = 3; /* volume, m0, then a "more" line */
	char *bcut = render_top(&o, prev, cur, NVIEW);
	ck_assert_uint_eq(count_lines(bcut), 3 + 3);
	ck_assert_ptr_nonnull(strstr(bcut, "(2 more members"));
	o.max_rows = 0;
	o.color = 1;
	char *bc = render_top(&o, prev, cur, NVIEW);
	ck_assert_ptr_nonnull(strstr(bc, "\033[31mfailed"));
	ck_assert_ptr_null(strstr(b80, "\033"));
	free(b80);
	free(b120);
	free(bw);
	free(bcut);
	free(bc);
	free(prev);
	free(cur);
}
END_TEST

/* Prometheus text: node_exporter's names, cumulative histograms that end
 * in the op's count, exact seconds */
START_TEST(test_prom)
{
	struct stats_view_dev *v = make_view();
	struct stats_prom_md md = {.disks_required = 3, .degraded = 1, .state = STATS_MD_RESYNC,
				   .blocks = 1000, .blocks_synced = 250};
	char *buf = NULL, want[256];
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_render_prom(f, v, NVIEW, &md), 0);
	fclose(f);
	snprintf(want, sizeof(want),
		 "\nfsvol_disk_reads_completed_total{device=\"fsvol0m0\",volume=\"fsvol0\",layer=\"member\",member=\"0\"} %llu\n",
		 (unsigned long long)v[1].snap.reads);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", want);
	snprintf(want, sizeof(want),
		 "\nfsvol_disk_read_time_seconds_total{device=\"fsvol0\",volume=\"fsvol0\",layer=\"volume\"} %llu.%09llu\n",
		 (unsigned long long)(v[0].snap.read_ns / 1000000000u),
		 (unsigned long long)(v[0].snap.read_ns % 1000000000u));
	ck_assert_msg(strstr(buf, want) != NULL, "%s", want);
	ck_assert_ptr_nonnull(strstr(buf, "# TYPE fsvol_disk_io_now gauge\n"));
	ck_assert_ptr_null(strstr(buf, "fsvol_disk_reads_completed_total{device=\"fsvol0m1\""));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_disk_counted{device=\"fsvol0m1\",volume=\"fsvol0\",layer=\"member\",member=\"1\","
					  "uuid=\"11111111-2222-4333-8444-555555555555\"} 0\n"));
	/* the member UUID on every series; the role only in fsvol_member_info ("-": none) */
	snprintf(want, sizeof(want),
		 "\nfsvol_disk_reads_completed_total{device=\"fsvol0m2\",volume=\"fsvol0\",layer=\"member\",member=\"2\","
		 "uuid=\"66666666-7777-4888-9999-aaaaaaaaaaaa\"} %llu\n", (unsigned long long)v[3].snap.reads);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", want);
	ck_assert_ptr_nonnull(strstr(buf, ",state=\"rebuilding\",role=\"1\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, ",state=\"failed\",role=\"-\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_disk_counted{device=\"fsvol0\",volume=\"fsvol0\",layer=\"volume\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "# TYPE fsvol_disk_latency_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_md_disks{volume=\"fsvol0\",state=\"failed\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_md_degraded{volume=\"fsvol0\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_md_state{volume=\"fsvol0\",state=\"resync\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_md_state{volume=\"fsvol0\",state=\"active\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nfsvol_md_blocks_synced{volume=\"fsvol0\"} 250\n"));
	/* every state: exactly one fsvol_md_state series is 1, the one named */
	for (int s = 0; s < STATS_MD_NSTATES; s++) {
		char *b2 = NULL, *p;
		size_t l2;
		int ones = 0;
		md.state = (enum stats_md_state)s;
		FILE *f2 = open_memstream(&b2, &l2);
		ck_assert_int_eq(stats_render_prom(f2, v, NVIEW, &md), 0);
		fclose(f2);
		for (p = b2; (p = strstr(p, "\nfsvol_md_state{")); p++)
			ones += strstr(p, "} 1\n") == strchr(p, '}');
		ck_assert_int_eq(ones, 1);
		snprintf(want, sizeof(want), "\nfsvol_md_state{volume=\"fsvol0\",state=\"%s\"} 1\n",
			 stats_md_state_name((enum stats_md_state)s));
		ck_assert_msg(strstr(b2, want) != NULL, "%s", want);
		free(b2);
	}
	ck_assert_str_eq(stats_md_state_name(STATS_MD_RECOVERING), "recovering");
	/* a label value with a quote, a backslash and a newline is escaped */
	ck_assert_ptr_nonnull(strstr(buf, "path=\"/tmp/q\\\"uote\\\\d\\n\""));
	/* every latency histogram: cumulative, +Inf = _count = the op's count */
	for (int i = 0; i < NVIEW; i++)
		for (int op = 0; op < STATS_NOPS; op++) {
			static const char *const opn[] = {"read", "write", "flush"};
			uint64_t want_n = op == 0 ? v[i].snap.reads : op == 1 ? v[i].snap.writes : v[i].snap.flushes;
			char key[160];
			snprintf(key, sizeof(key), "fsvol_disk_latency_seconds_bucket{device=\"%s\",", v[i].name);
			unsigned long long last = 0, val = 0;
			int seen = 0;
			for (const char *p = strstr(buf, key); p; p = strstr(p + 1, key)) {
				char opk[32];
				snprintf(opk, sizeof(opk), "op=\"%s\",le=", opn[op]);
				const char *eol = strchr(p, '\n');
				const char *o = strstr(p, opk);
				if (!o || o > eol)
					continue;
				val = strtoull(strstr(p, "} ") + 2, NULL, 10);
				ck_assert_uint_ge(val, last);
				last = val;
				seen++;
			}
			/* member 1 is not counted: its series are absent, not zero */
			ck_assert_int_eq(seen, v[i].not_counted ? 0 : 20);
			if (!v[i].not_counted)
				ck_assert_uint_eq(val, want_n);
		}
	free(buf);
	free(v);
}
END_TEST

/* ---- trace ring ---- */

static struct stats_trace_rec mkrec(uint64_t seq, uint64_t parent, int dev)
{
	return (struct stats_trace_rec){.seq = seq, .parent = parent, .t_start_ns = seq * 10,
					.latency_ns = seq * 3 + 1, .offset = seq << 12,
					.length = 4096 + seq, .dev = dev, .op = seq % 3,
					.why = seq % STATS_WHY_COUNT, .error = seq % 5 ? 0 : -5};
}

static void check_rec(const struct stats_trace_rec *r)
{
	struct stats_trace_rec w = mkrec(r->seq, r->parent, r->dev);
	ck_assert_int_eq(memcmp(&w, r, sizeof(w)), 0);
}

START_TEST(test_trace_order_wrap)
{
	struct stats_trace *t = stats_trace_create(16);
	struct stats_trace_rec out[64];
	uint64_t cur = 0;
	struct stats_trace_rec r0 = mkrec(1, 0, -1);
	stats_trace_add(t, &r0); /* disabled: nothing */
	ck_assert_uint_eq(stats_trace_read(t, &cur, out, 64), 0);
	stats_trace_enable(t, 1);
	for (uint64_t i = 1; i <= 10; i++) {
		struct stats_trace_rec r = mkrec(i, 0, -1);
		stats_trace_add(t, &r);
	}
	ck_assert_uint_eq(stats_trace_read(t, &cur, out, 4), 4); /* max honoured */
	ck_assert_uint_eq(stats_trace_read(t, &cur, out + 4, 64), 6);
	for (uint64_t i = 0; i < 10; i++) {
		ck_assert_uint_eq(out[i].seq, i + 1);
		check_rec(&out[i]);
	}
	/* wrap: 40 more into 16 slots; the reader gets the newest 16, in order */
	for (uint64_t i = 11; i <= 50; i++) {
		struct stats_trace_rec r = mkrec(i, i - 1, (int)i % 4);
		stats_trace_add(t, &r);
	}
	size_t n = stats_trace_read(t, &cur, out, 64);
	ck_assert_uint_eq(n, 16);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(out[i].seq, 35 + i);
		check_rec(&out[i]);
	}
	ck_assert_uint_eq(stats_trace_read(t, &cur, out, 64), 0);
	ck_assert_uint_eq(atomic_load(&t->dropped), 0);
	/* two readers (MNT/trace and the dashboard): on while either wants it;
	 * one too many "off" does not make a later "on" count for nothing */
	stats_trace_enable(t, 1);
	stats_trace_enable(t, 0);
	ck_assert(stats_trace_on(t));
	stats_trace_enable(t, 0);
	ck_assert(!stats_trace_on(t));
	stats_trace_enable(t, 0);
	ck_assert(!stats_trace_on(t));
	stats_trace_enable(t, 1);
	ck_assert(stats_trace_on(t));
	stats_trace_destroy(t);
}
END_TEST

START_TEST(test_trace_skip_overwritten)
{
	/* a slot overwritten after the reader's head load is skipped, not torn:
	 * simulate by writing a later lap before reading an old cursor */
	struct stats_trace *t = stats_trace_create(8);
	stats_trace_enable(t, 1);
	struct stats_trace_rec out[16];
	for (uint64_t i = 1; i <= 8; i++) {
		struct stats_trace_rec r = mkrec(i, 0, -1);
		stats_trace_add(t, &r);
	}
	uint64_t cur = 2;
	ck_assert_uint_eq(stats_trace_read(t, &cur, out, 3), 3); /* tickets 2,3,4 */
	ck_assert_uint_eq(out[0].seq, 3);
	for (uint64_t i = 9; i <= 13; i++) { /* overwrite tickets 0..4 */
		struct stats_trace_rec r = mkrec(i, 0, -1);
		stats_trace_add(t, &r);
	}
	size_t n = stats_trace_read(t, &cur, out, 16);
	ck_assert_uint_eq(n, 8); /* tickets 5..12 */
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(out[i].seq, 6 + i);
	stats_trace_destroy(t);
}
END_TEST

struct producer {
	struct stats_trace *t;
	unsigned id, n;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (unsigned i = 0; i < p->n; i++) {
		/* seq encodes producer and index so readers can check order per producer */
		struct stats_trace_rec r = mkrec(((uint64_t)p->id << 32) | i, p->id, (int)p->id);
		stats_trace_add(p->t, &r);
	}
	return NULL;
}

static const size_t trace_caps[] = {1 << 20, 256};

START_TEST(test_trace_concurrent)
{
	const unsigned np = 4, n = 100000;
	struct stats_trace *t = stats_trace_create(trace_caps[_i]);
	stats_trace_enable(t, 1);
	pthread_t th[4];
	struct producer p[4];
	for (unsigned i = 0; i < np; i++) {
		p[i] = (struct producer){t, i, n};
		pthread_create(&th[i], NULL, produce, &p[i]);
	}
	/* read while they write: every record whole, per-producer order kept */
	int64_t last[4] = {-1, -1, -1, -1};
	uint64_t cur = 0, got = 0;
	static struct stats_trace_rec out[512];
	int running = 1;
	while (running) {
		running = atomic_load(&t->head) < (uint64_t)np * n;
		size_t k;
		while ((k = stats_trace_read(t, &cur, out, 512)) > 0) {
			for (size_t i = 0; i < k; i++) {
				check_rec(&out[i]);
				unsigned id = (unsigned)(out[i].seq >> 32);
				int64_t idx = (int64_t)(out[i].seq & 0xffffffffu);
				ck_assert(id < np);
				ck_assert(idx > last[id]);
				last[id] = idx;
			}
			got += k;
		}
		if (!running) {
			for (unsigned i = 0; i < np; i++)
				pthread_join(th[i], NULL);
			while ((k = stats_trace_read(t, &cur, out, 512)) > 0) {
				for (size_t i = 0; i < k; i++)
					check_rec(&out[i]);
				got += k;
			}
		}
	}
	if (trace_caps[_i] >= np * n) /* nothing overwritten: everything arrives */
		ck_assert_uint_eq(got + atomic_load(&t->dropped), (uint64_t)np * n);
	ck_assert(got > 0);
	stats_trace_destroy(t);
}
END_TEST

START_TEST(test_trace_render)
{
	struct stats_trace_rec r[4] = {mkrec(8, 7, 0), mkrec(9, 7, 2), mkrec(7, 0, -1),
				       mkrec(20, 15, 1)};
	r[1].why = STATS_WHY_PARITY_READ; /* whatever STATS_WHY_COUNT is */
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_trace_render_text(f, r, 4, 0), 0);
	fclose(f);
	ck_assert_uint_eq(count_lines(buf), 4);
	/* the volume request comes first, its two children indented after it */
	ck_assert(buf[0] != ' ');
	char *l2 = strchr(buf, '\n') + 1, *l3 = strchr(l2, '\n') + 1, *l4 = strchr(l3, '\n') + 1;
	ck_assert(l2[0] == ' ' && l2[1] == ' ' && l3[0] == ' ' && l4[0] != ' ');
	ck_assert_ptr_nonnull(strstr(l4, "(of 15)"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(stats_trace_render_json(f, r, 4), 0);
	fclose(f);
	ck_assert_uint_eq(count_lines(buf), 4);
	ck_assert_ptr_nonnull(strstr(buf, "\"why\":\"rebuild\"")); /* seq 7: why 7 whatever STATS_WHY_COUNT */
	free(buf);
}
END_TEST

/* ---- benchmark (not a test: prints, never asserts a time) ---- */

struct bench_arg {
	struct stats_dev *d;
	unsigned n;
	_Atomic int *go;
};

static void *bench_fn(void *arg)
{
	struct bench_arg *b = arg;
	while (!atomic_load(b->go))
		;
	for (unsigned i = 0; i < b->n; i++) {
		uint64_t t = stats_now();
		stats_begin(b->d, t);
		stats_end(b->d, STATS_READ, (uint64_t)i * 4096, 4096, t, t + 1000, 0);
	}
	return NULL;
}

static void *bench_fn_noclock(void *arg)
{
	struct bench_arg *b = arg;
	while (!atomic_load(b->go))
		;
	for (unsigned i = 0; i < b->n; i++) {
		uint64_t t = (uint64_t)i * 2000;
		stats_begin(b->d, t);
		stats_end(b->d, STATS_READ, (uint64_t)i * 4096, 4096, t, t + 1000, 0);
	}
	return NULL;
}

static void bench(void)
{
	const unsigned n = 5000000;
	for (int clk = 0; clk < 2; clk++)
		for (unsigned nt = 1; nt <= 2; nt++) {
			struct stats_dev *d = stats_dev_create();
			_Atomic int go = 0;
			pthread_t th[2];
			struct bench_arg a = {d, n, &go};
			for (unsigned i = 0; i < nt; i++)
				pthread_create(&th[i], NULL, clk ? bench_fn : bench_fn_noclock, &a);
			uint64_t t0 = stats_now();
			atomic_store(&go, 1);
			for (unsigned i = 0; i < nt; i++)
				pthread_join(th[i], NULL);
			uint64_t t1 = stats_now();
			printf("%u thread(s), %s: %.1f ns per begin+end pair (wall / pairs per thread)\n",
			       nt, clk ? "with 1 stats_now() per pair" : "hooks only",
			       (double)(t1 - t0) / n);
			stats_dev_destroy(d);
		}
	uint64_t t0 = stats_now();
	for (unsigned i = 0; i < n; i++)
		(void)stats_now();
	printf("stats_now(): %.1f ns\n", (double)(stats_now() - t0) / n);
}

/* ---- runner ---- */

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

int main(void)
{
	if (getenv("STATS_BENCH")) {
		bench();
		return 0;
	}
	Suite *s = suite_create("stats");
	TCase *c = tcase_create("counters");
	tcase_add_loop_test(c, test_integrals, 0, N(integral_cases));
	tcase_add_test(c, test_little);
	tcase_add_test(c, test_sequential);
	tcase_add_loop_test(c, test_threads, 0, N(hammer_threads));
	tcase_add_test(c, test_reset);
	tcase_add_test(c, test_rates);
	tcase_add_loop_test(c, test_levels, 0, N(level_cases));
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);

	c = tcase_create("hist");
	tcase_add_test(c, test_lat_buckets);
	tcase_add_loop_test(c, test_size_buckets, 0, N(size_cases));
	tcase_add_loop_test(c, test_percentiles, 0, N(pct_cases));
	tcase_add_test(c, test_merge);
	suite_add_tcase(s, c);

	c = tcase_create("render");
	tcase_add_test(c, test_json_roundtrip);
	tcase_add_test(c, test_json_reject_prefixes);
	tcase_add_loop_test(c, test_json_reject_table, 0, N(bad_docs));
	tcase_add_loop_test(c, test_json_reject_edits, 0, N(edits));
	tcase_add_test(c, test_diskstats);
	tcase_add_test(c, test_render_views);
	tcase_add_test(c, test_top_layout);
	tcase_add_test(c, test_prom);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);

	c = tcase_create("trace");
	tcase_add_test(c, test_trace_order_wrap);
	tcase_add_test(c, test_trace_skip_overwritten);
	tcase_add_loop_test(c, test_trace_concurrent, 0, N(trace_caps));
	tcase_add_test(c, test_trace_render);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, c);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
