/* test_spindle: the disk model against analytic expectations, in emulated time only.
 * Build: gcc -std=c11 -D_GNU_SOURCE -I. tests/unit/test_spindle.c fsvol/model/spindle.c
 *        fsvol/model/spindle_spec.c fsvol/model/spindle_plan.c fsvol/model/adapter.c
 *        $(pkg-config --cflags --libs check) -lm -pthread */
#include "fsvol/model/spindle.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6
#define US 1e3
#define TB 1000000000000ull
#define GB 1000000000ull

static struct spindle sp; /* big (zone table): keep it off the stack */

static void parse_ok(const char *spec, struct spindle_params *p)
{
	char err[512] = "";
	int rc = spindle_parse(spec, p, err, sizeof(err));
	ck_assert_msg(rc == 0, "'%s' rejected: %s", spec, err);
}

/* The member is the whole disk (capacity=member), as the tests of the disk's
 * own geometry and service want. */
static void init_spec(const char *spec, uint64_t member_bytes)
{
	struct spindle_params p;
	char whole[600];
	snprintf(whole, sizeof(whole), "%s%ccapacity=member", spec, strchr(spec, ':') ? ',' : ':');
	parse_ok(whole, &p);
	spindle_init(&sp, &p, member_bytes);
}

/* Deterministic xorshift64 so every run draws the same offsets. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rand_block(uint64_t member_bytes, uint64_t bs)
{
	return rnd() % (member_bytes / bs) * bs;
}

/* One request at QD1: enqueue at t, dispatch, complete; returns the request. */
static struct spindle_req req;
static struct spindle_req *qd1(uint64_t t, uint64_t off, uint64_t len, int write)
{
	memset(&req, 0, sizeof(req));
	req.offset = off;
	req.length = len;
	req.write = write;
	req.arrival_ns = t;
	spindle_enqueue(&sp, &req);
	struct spindle_req *d = spindle_dispatch(&sp, t);
	ck_assert_ptr_eq(d, &req);
	ck_assert_ptr_null(spindle_dispatch(&sp, t)); /* one slot, nothing else queued */
	ck_assert_uint_ge(d->done_ns, d->start_ns);
	const struct spindle_cost *c = &d->cost;
	ck_assert_uint_eq(c->wait_ns + c->overhead_ns + c->seek_ns + c->rotate_ns +
			  c->access_ns + c->transfer_ns, d->done_ns - d->start_ns);
	spindle_complete(&sp, d);
	return d;
}

/* ---- seek curve ------------------------------------------------------------ */

static const struct { const char *spec; uint64_t bytes; } seek_cases[] = {
	{ "hdd", 1 * TB },
	{ "hdd", 268435456ull },           /* a short stroke: 53 cylinders */
	{ "hdd", 64ull << 30 },
	{ "hdd-legacy", 1 * GB },
	{ "hdd:seek_knee=0.05", 1 * TB },
	{ "hdd:seek_knee=0.3333", 500 * GB },
	{ "hdd:rpm=10000,seek_avg=4.5ms,seek_t2t=0.5ms,seek_full=9ms,heads=2", 300 * GB },
};

START_TEST(test_seek_curve)
{
	init_spec(seek_cases[_i].spec, seek_cases[_i].bytes);
	const struct spindle_params *p = &sp.p;
	double d = (double)(sp.cylinders - 1);
	ck_assert_msg(!sp.seek_linear, "%s: no fit", seek_cases[_i].spec);
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, 1), (double)p->seek_t2t_ns, 1000);
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, d / 3), (double)p->seek_avg_ns, 1000);
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, d), (double)p->seek_full_ns, 1000);
	ck_assert_double_eq(spindle_seek_ns(&sp, 0), 0);
	/* Continuous at the knee and rising everywhere. */
	double k = sp.seek_knee_cyl;
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, k - 1e-6), spindle_seek_ns(&sp, k), 10);
	double prev = 0;
	uint64_t step = sp.cylinders / 200000 + 1;
	for (uint64_t c = 1; c < sp.cylinders; c += step) {
		double t = spindle_seek_ns(&sp, (double)c);
		ck_assert_msg(t > prev, "%s: seek(%llu) = %.0f <= seek(prev) = %.0f",
			      seek_cases[_i].spec, (unsigned long long)c, t, prev);
		prev = t;
	}
}
END_TEST

/* ---- zoned recording -------------------------------------------------------- */

START_TEST(test_zone_rates)
{
	init_spec(seek_cases[_i].spec, seek_cases[_i].bytes);
	const struct spindle_params *p = &sp.p;
	ck_assert_uint_eq(sp.nzones, p->zones);
	for (unsigned z = 1; z < sp.nzones; z++) {
		ck_assert_double_lt(spindle_zone_rate(&sp, z), spindle_zone_rate(&sp, z - 1));
		ck_assert_uint_lt(sp.zone[z].spt, sp.zone[z - 1].spt);
		ck_assert_uint_eq(sp.zone[z].start, sp.zone[z - 1].start + sp.zone[z - 1].bytes);
		ck_assert_uint_eq(sp.zone[z].cyl0, sp.zone[z - 1].cyl0 + sp.zone[z - 1].cyls);
	}
	/* The end zones sustain the data-sheet rates (within a sector per track). */
	const struct spindle_zone *outer = &sp.zone[0], *inner = &sp.zone[sp.nzones - 1];
	double o = (double)p->rate_outer_Bps, in = (double)p->rate_inner_Bps;
	ck_assert_double_le(spindle_zone_rate(&sp, 0), o);
	ck_assert_double_ge(spindle_zone_rate(&sp, 0), o * (1 - 512.0 / outer->track_bytes));
	ck_assert_double_le(spindle_zone_rate(&sp, sp.nzones - 1), in);
	ck_assert_double_ge(spindle_zone_rate(&sp, sp.nzones - 1),
			    in * (1 - 512.0 / inner->track_bytes));
	const struct spindle_zone *last = &sp.zone[sp.nzones - 1];
	ck_assert_ptr_eq(last, inner);
	ck_assert_uint_eq(last->start + last->bytes, seek_cases[_i].bytes);
	/* Cylinders rise with the offset and the last byte sits on the last cylinder. */
	ck_assert_uint_eq(spindle_cylinder(&sp, 0), 0);
	ck_assert_uint_eq(spindle_cylinder(&sp, seek_cases[_i].bytes - 1), sp.cylinders - 1);
	uint64_t prev = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t off = seek_cases[_i].bytes / 1000 * i;
		ck_assert_uint_ge(spindle_cylinder(&sp, off), prev);
		prev = spindle_cylinder(&sp, off);
	}
}
END_TEST

/* ---- hand-computed service times -------------------------------------------- */

/* 6000 rpm: one turn = 10 ms. 51.2 MB/s * 10 ms = 512000 bytes = 1000 sectors per
 * track; one head, one zone, so a cylinder is 512000 bytes; 3001 cylinders give a
 * stroke of D = 3000. Seek fit (spindle.c): e = (11 - 5) ms / 2000 = 0.003 ms/cyl,
 * c = 5 - 0.003 * 1000 = 2 ms, knee K = 0.1 * 3000 = 300, L = c + e K = 2.9 ms,
 * b = (2.9 - 1) / (sqrt(300) - 1), a = 1 - b. */
#define HAND "hdd:rpm=6000,heads=1,zones=1,rate_outer=51.2MB/s,rate_inner=51.2MB/s," \
	"switch=0,seek_t2t=1ms,seek_avg=5ms,seek_full=11ms,seek_knee=0.1,overhead=1ms," \
	"cache=0,wcache=0,iface=1GB/s"
#define HAND_TRACK 512000ull

START_TEST(test_service_hand)
{
	init_spec(HAND, HAND_TRACK * 3001);
	ck_assert_uint_eq(sp.cylinders, 3001);
	ck_assert_uint_eq(sp.zone[0].spt, 1000);
	ck_assert_double_eq_tol(sp.rev_ns, 10 * MS, 1e-6);

	double b = 1.9 / (sqrt(300) - 1);
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, 2000), 8 * MS, 1);          /* c + 2000 e */
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, 100), (1 - b + 10 * b) * MS, 1);
	ck_assert_double_eq_tol(spindle_seek_ns(&sp, 300), 2.9 * MS, 1);

	/* At t = 0 on cylinder 0, read 4K at angle 0: the head reaches the track after
	 * the 1 ms overhead, at angle 0.1, and waits 9 ms; 4096 bytes take
	 * 4096 / 512000 * 10 ms = 80 us. */
	struct spindle_req *d = qd1(0, 0, 4096, 0);
	ck_assert_uint_eq(d->cost.overhead_ns, 1 * MS);
	ck_assert_uint_eq(d->cost.seek_ns, 0);
	ck_assert_uint_eq(d->cost.rotate_ns, 9 * MS);
	ck_assert_uint_eq(d->cost.transfer_ns, 80 * US);
	ck_assert_uint_eq(d->done_ns, 10080 * US);

	/* Next, 2000 cylinders in, half-way round the track: arrival at
	 * 10.08 + 1 + 8 = 19.08 ms, angle 0.908, wait (1.5 - 0.908) turns = 5.92 ms. */
	d = qd1(d->done_ns, 2000 * HAND_TRACK + HAND_TRACK / 2, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, 8 * MS);
	ck_assert_uint_eq(d->cost.rotate_ns, 5920 * US);
	ck_assert_uint_eq(d->done_ns - d->start_ns, 15 * MS);

	/* The same record again at once: a missed revolution, exactly one turn. */
	d = qd1(d->done_ns, 2000 * HAND_TRACK + HAND_TRACK / 2, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, 0);
	ck_assert_uint_eq(d->done_ns - d->start_ns, 10 * MS);

	/* spindle_service_ns evaluates without moving anything. */
	struct spindle_req probe = { .offset = 0, .length = 4096 };
	struct spindle_cost c;
	uint64_t t = d->done_ns, pos = sp.pos;
	uint64_t s1 = spindle_service_ns(&sp, &probe, t, &c);
	ck_assert_uint_eq(spindle_service_ns(&sp, &probe, t, NULL), s1);
	ck_assert_uint_eq(sp.pos, pos);
	ck_assert_uint_eq(c.seek_ns, 8 * MS);
}
END_TEST

/* With a 1 ms switch a track holds 51.2 MB/s * 11 ms = 563200 bytes. A 4K read
 * straddling a track boundary pays 4096 / 563200 turns plus the switch; reading the
 * next track's start right after the previous track's end costs no rotation
 * (track skew = switch). */
START_TEST(test_service_switch)
{
	init_spec("hdd:rpm=6000,heads=2,zones=1,rate_outer=51.2MB/s,rate_inner=51.2MB/s,"
		  "switch=1ms,overhead=0,cache=0,wcache=0,iface=1GB/s", 563200ull * 2 * 1000);
	ck_assert_uint_eq(sp.zone[0].track_bytes, 563200);
	struct spindle_cost c;
	struct spindle_req r = { .offset = 563200 - 2048, .length = 4096 };
	spindle_service_ns(&sp, &r, 0, &c);
	ck_assert_uint_eq(c.transfer_ns, (uint64_t)llround(4096.0 / 563200 * 10 * MS + 1 * MS));
	/* Track 0 read whole from t = 0 (angle 0): ends at 10 ms. Track 1 (other head,
	 * same cylinder) starts at angle skew = 0.1: head switch 1 ms, then no wait. */
	struct spindle_req *d = qd1(0, 0, 563200, 0);
	ck_assert_uint_eq(d->done_ns, 10 * MS);
	d = qd1(d->done_ns, 563200, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, 1 * MS);
	ck_assert_uint_eq(d->cost.rotate_ns, 0);
}
END_TEST

START_TEST(test_service_ssd)
{
	init_spec("ssd:overhead=10us,read=50us,write=20us,bw=409.6MB/s,channels=4", 1 * GB);
	struct spindle_req *d = qd1(0, 0, 4096, 0);  /* 10 + 50 + 4096 / 409.6 MB/s = 70 us */
	ck_assert_uint_eq(d->done_ns, 70 * US);
	ck_assert_uint_eq(d->cost.access_ns, 50 * US);
	d = qd1(d->done_ns, 8192, 4096, 1);          /* 10 + 20 + 10 = 40 us */
	ck_assert_uint_eq(d->done_ns - d->start_ns, 40 * US);
}
END_TEST

/* Write-back: acknowledged after overhead + interface; the media write then
 * delays a read that needs the mechanism; once the cache's destage slots are
 * full, acknowledgements wait for the media. */
START_TEST(test_write_back)
{
	init_spec("hdd", 1 * TB);
	struct spindle_req *d = qd1(0, 123 * GB, 4096, 1);
	ck_assert(d->cost.write_back);
	ck_assert_uint_eq(d->done_ns, 100 * US + (uint64_t)llround(4096 / 600e6 * 1e9));
	d = qd1(d->done_ns, 700 * GB, 4096, 0);
	ck_assert(!d->cost.cache_hit);
	ck_assert_uint_gt(d->cost.wait_ns, 1 * MS);

	init_spec("hdd", 1 * TB);
	uint64_t t = 0, fast = 0, late = 0;
	for (int i = 0; i < 400; i++) {
		d = qd1(t, rand_block(1 * TB, 4096), 4096, 1);
		if (i < SPINDLE_WB_SLOTS)
			fast = d->done_ns - d->start_ns > fast ? d->done_ns - d->start_ns : fast;
		else if (i >= 100)
			late += d->done_ns - d->start_ns;
		t = d->done_ns;
	}
	ck_assert_uint_lt(fast, 200 * US);
	ck_assert_uint_gt(late / 300, 8 * MS); /* bounded by random media writes */

	/* Write-through when the cache is off: a full media access. */
	init_spec("hdd:wcache=0", 1 * TB);
	d = qd1(0, 500 * GB, 4096, 1);
	ck_assert(!d->cost.write_back);
	ck_assert_uint_gt(d->cost.seek_ns, 1 * MS);
}
END_TEST

/* ---- queue disciplines ------------------------------------------------------- */

static const struct {
	const char *sched;
	unsigned order[5];  /* indexes into the queued cylinders below */
} sched_cases[] = {
	{ "fifo", { 0, 1, 2, 3, 4 } },
	{ "sstf", { 0, 4, 2, 3, 1 } },   /* from 40: 50 (tie with 30, arrived first), 60, 80, 30, 10 */
	{ "cscan", { 0, 4, 2, 1, 3 } },  /* from 40 upward: 50, 60, 80, then wrap: 10, 30 */
};

START_TEST(test_sched_order)
{
	static const uint64_t cyl[5] = { 50, 10, 80, 30, 60 };
	char spec[512];
	snprintf(spec, sizeof(spec), "%s,sched=%s", HAND, sched_cases[_i].sched);
	init_spec(spec, HAND_TRACK * 3001);
	struct spindle_req busy = { .offset = 40 * HAND_TRACK, .length = 4096 };
	struct spindle_req q[5];
	spindle_enqueue(&sp, &busy);
	ck_assert_ptr_eq(spindle_dispatch(&sp, 0), &busy);
	memset(q, 0, sizeof(q));
	for (int i = 0; i < 5; i++) {
		q[i].offset = cyl[i] * HAND_TRACK + 4096;
		q[i].length = 4096;
		q[i].arrival_ns = 1 + i;
		spindle_enqueue(&sp, &q[i]);
	}
	ck_assert_ptr_null(spindle_dispatch(&sp, 1000)); /* the slot is busy */
	struct spindle_req *d = &busy;
	for (int i = 0; i < 5; i++) {
		uint64_t t = d->done_ns;
		spindle_complete(&sp, d);
		d = spindle_dispatch(&sp, t);
		ck_assert_ptr_nonnull(d);
		ck_assert_msg(d == &q[sched_cases[_i].order[i]], "%s: step %d got cylinder %llu",
			      sched_cases[_i].sched, i,
			      (unsigned long long)(d->offset / HAND_TRACK));
		ck_assert_uint_eq(d->start_ns, t);
	}
	spindle_complete(&sp, d);
	ck_assert_ptr_null(spindle_dispatch(&sp, d->done_ns));
	ck_assert_uint_eq(sp.queued, 0);
}
END_TEST

START_TEST(test_fifo_keeps_order)
{
	static struct spindle_req q[200];
	init_spec("hdd", 1 * TB);
	memset(q, 0, sizeof(q));
	for (int i = 0; i < 200; i++) {
		q[i].offset = rand_block(1 * TB, 4096);
		q[i].length = 4096;
		spindle_enqueue(&sp, &q[i]);
	}
	uint64_t t = 0;
	for (int i = 0; i < 200; i++) {
		struct spindle_req *d = spindle_dispatch(&sp, t);
		ck_assert_ptr_eq(d, &q[i]);
		t = d->done_ns;
		spindle_complete(&sp, d);
	}
}
END_TEST

/* Closed loop: qd requests always outstanding, a new random read arrives as one
 * completes. Returns the mean service time (done - start); *iops gets throughput. */
static double closed_loop(unsigned qd, int n, uint64_t member, uint64_t bs, double *iops)
{
	static struct spindle_req pool[64];
	struct spindle_req *inflight[64];
	unsigned ninf = 0;
	double sum = 0;
	uint64_t t = 0;
	ck_assert_uint_le(qd, 64);
	memset(pool, 0, sizeof(pool));
	for (unsigned i = 0; i < qd; i++) {
		pool[i].offset = rand_block(member, bs);
		pool[i].length = bs;
		spindle_enqueue(&sp, &pool[i]);
	}
	for (struct spindle_req *d; (d = spindle_dispatch(&sp, 0));)
		inflight[ninf++] = d;
	for (int done = 0; done < n; done++) {
		unsigned first = 0; /* the next completion in emulated time */
		for (unsigned i = 1; i < ninf; i++)
			if (inflight[i]->done_ns < inflight[first]->done_ns)
				first = i;
		struct spindle_req *d = inflight[first];
		inflight[first] = inflight[--ninf];
		t = d->done_ns;
		sum += (double)(d->done_ns - d->start_ns);
		spindle_complete(&sp, d);
		d->offset = rand_block(member, bs);
		d->arrival_ns = t;
		spindle_enqueue(&sp, d);
		for (struct spindle_req *x; (x = spindle_dispatch(&sp, t));)
			inflight[ninf++] = x;
	}
	if (iops)
		*iops = n / ((double)t / 1e9);
	return sum / n;
}

START_TEST(test_sstf_beats_fifo)
{
	init_spec("hdd", 1 * TB);
	double fifo = closed_loop(8, 4000, 1 * TB, 4096, NULL);
	init_spec("hdd:sched=sstf", 1 * TB);
	double sstf = closed_loop(8, 4000, 1 * TB, 4096, NULL);
	init_spec("hdd:sched=cscan", 1 * TB);
	double cscan = closed_loop(8, 4000, 1 * TB, 4096, NULL);
	ck_assert_msg(sstf < 0.85 * fifo, "sstf %.3f ms vs fifo %.3f ms", sstf / MS, fifo / MS);
	ck_assert_msg(cscan < 0.9 * fifo, "cscan %.3f ms vs fifo %.3f ms", cscan / MS, fifo / MS);
}
END_TEST

static const char *const ssd_cases[] = { "ssd", "nvme" };

START_TEST(test_ssd_channels)
{
	char spec[64];
	double one, many;
	snprintf(spec, sizeof(spec), "%s:channels=1", ssd_cases[_i]);
	init_spec(spec, 100 * GB);
	unsigned ch = 0;
	{
		struct spindle_params p;
		parse_ok(ssd_cases[_i], &p);
		ch = p.channels;
	}
	closed_loop(ch, 20000, 100 * GB, 4096, &one);
	init_spec(ssd_cases[_i], 100 * GB);
	closed_loop(ch, 20000, 100 * GB, 4096, &many);
	ck_assert_msg(many > 0.9 * ch * one && many < 1.05 * ch * one,
		      "%s: %u channels %.0f IOPS, one %.0f IOPS", ssd_cases[_i], ch, many, one);
	/* Beyond the channels, more queue adds no throughput. */
	double deeper;
	init_spec(ssd_cases[_i], 100 * GB);
	closed_loop(ch * 2 > 64 ? 64 : ch * 2, 20000, 100 * GB, 4096, &deeper);
	ck_assert_double_lt(deeper, 1.05 * many);
	/* Large transfers are capped by the shared bandwidth. */
	double big;
	init_spec(ssd_cases[_i], 100 * GB);
	closed_loop(ch, 2000, 100 * GB, 1 << 20, &big);
	ck_assert_double_le(big * (1 << 20), 1.001 * (double)sp.p.bw_Bps);
	ck_assert_double_ge(big * (1 << 20), 0.9 * (double)sp.p.bw_Bps);
}
END_TEST

/* ---- emulated workloads against the analytic figures -------------------------- */

/* spec + one more key=value. */
static void with_key(char *buf, size_t len, const char *spec, const char *kv)
{
	snprintf(buf, len, "%s%c%s", spec, strchr(spec, ':') ? ',' : ':', kv);
}

static const struct { const char *spec; uint64_t bytes; } disk_cases[] = {
	{ "hdd", 1 * TB },
	{ "hdd", 268435456ull },           /* few cylinders: the exact per-cylinder sum */
	{ "hdd-legacy", 1 * GB },
	{ "hdd:sched=sstf", 2 * TB },   /* QD1: the discipline has nothing to choose */
};

START_TEST(test_random_qd1)
{
	uint64_t m = disk_cases[_i].bytes;
	init_spec(disk_cases[_i].spec, m);
	const struct spindle_params *p = &sp.p;
	double sum = 0, t = 0;
	int n = 20000;
	for (int i = 0; i < n; i++) {
		struct spindle_req *d = qd1((uint64_t)t, rand_block(m, 4096), 4096, 0);
		sum += (double)(d->done_ns - d->start_ns);
		t = (double)d->done_ns;
	}
	/* The mean seek between random bytes, sampled independently of the
	 * model's own sum: below the data sheet's seek_avg (concave curve, outer
	 * cylinders hold more bytes), but not by much. */
	double seeks = 0;
	for (int i = 0; i < n; i++) {
		uint64_t a = spindle_cylinder(&sp, rand_block(m, 4096));
		uint64_t b = spindle_cylinder(&sp, rand_block(m, 4096));
		seeks += a == b ? 0 : spindle_seek_ns(&sp, a > b ? (double)(a - b) : (double)(b - a));
	}
	double mseek = spindle_mean_seek_ns(&sp);
	ck_assert_msg(fabs(seeks / n - mseek) < 0.03 * mseek, "%s: sampled mean seek %.3f ms, sum %.3f ms",
		      disk_cases[_i].spec, seeks / n / MS, mseek / MS);
	ck_assert(mseek < (double)p->seek_avg_ns && mseek > 0.85 * (double)p->seek_avg_ns);
	/* overhead + mean seek + half a turn + transfer at the mean media rate */
	double xfer = 0;
	for (unsigned z = 0; z < sp.nzones; z++)
		xfer += (double)sp.zone[z].bytes / (double)m * 4096 * 1e9 / spindle_zone_rate(&sp, z);
	double expect = (double)p->overhead_ns + mseek + sp.rev_ns / 2 + xfer;
	ck_assert_double_eq_tol(spindle_random_read_ns(&sp, 4096), expect, 0.01 * expect);
	ck_assert_msg(fabs(sum / n - expect) < 0.03 * expect, "%s: mean %.3f ms, expected %.3f ms",
		      disk_cases[_i].spec, sum / n / MS, expect / MS);
}
END_TEST

START_TEST(test_reread_revolution)
{
	char spec[128];
	with_key(spec, sizeof(spec), disk_cases[_i].spec, "cache=0");
	uint64_t m = disk_cases[_i].bytes;
	init_spec(spec, m);
	uint64_t off = rand_block(m, 4096), t = 0;
	qd1(0, off, 4096, 0);
	t = req.done_ns;
	for (int i = 0; i < 100; i++) {
		struct spindle_req *d = qd1(t, off, 4096, 0);
		ck_assert_double_eq_tol((double)(d->done_ns - d->start_ns), sp.rev_ns,
					0.05 * sp.rev_ns);
		ck_assert_uint_eq(d->cost.seek_ns, 0);
		t = d->done_ns;
	}
}
END_TEST

START_TEST(test_sequential)
{
	uint64_t m = disk_cases[_i].bytes;
	char spec[128];
	init_spec(disk_cases[_i].spec, m);
	ck_assert_uint_gt(sp.p.cache_bytes, 0);
	/* With read-ahead: 4K reads from the outer edge stream at the zone's rate. */
	uint64_t t0 = qd1(0, 0, 4096, 0)->done_ns, t = t0, bytes = 0, hits = 0;
	int n = 4000;
	for (int i = 1; i <= n; i++) {
		struct spindle_req *d = qd1(t, (uint64_t)i * 4096, 4096, 0);
		hits += d->cost.cache_hit;
		bytes += 4096;
		t = d->done_ns;
	}
	double rate = (double)bytes / ((double)(t - t0) / 1e9);
	ck_assert_uint_eq(hits, n);
	ck_assert_msg(rate >= 0.8 * spindle_zone_rate(&sp, 0), "%s: %.2f MB/s, zone %.2f MB/s",
		      disk_cases[_i].spec, rate / 1e6, spindle_zone_rate(&sp, 0) / 1e6);
	ck_assert_double_le(rate, 1.001 * spindle_zone_rate(&sp, 0));

	/* Without it: the overhead lets the next sector pass, so each request loses
	 * ~a turn on top of its transfer. */
	with_key(spec, sizeof(spec), disk_cases[_i].spec, "cache=0");
	init_spec(spec, m);
	t = qd1(0, 0, 4096, 0)->done_ns;
	double sum = 0;
	n = 1000;
	for (int i = 1; i <= n; i++) {
		struct spindle_req *d = qd1(t, (uint64_t)i * 4096, 4096, 0);
		ck_assert(!d->cost.cache_hit);
		sum += (double)(d->done_ns - d->start_ns - d->cost.transfer_ns);
		t = d->done_ns;
	}
	ck_assert_double_eq_tol(sum / n, sp.rev_ns, 0.05 * sp.rev_ns);
}
END_TEST

/* ---- capacity, placement, shared disks, adapters ------------------------------- */

#define MIB_ (1024ull * 1024)

/* A member of member_bytes on the spec's own disk (the preset's capacity). */
static void init_disk(struct spindle *s, const char *spec, uint64_t member_bytes)
{
	struct spindle_params p;
	uint64_t base;
	char err[512] = "";
	parse_ok(spec, &p);
	ck_assert_msg(spindle_place(&p, member_bytes, &base, err, sizeof(err)) == 0, "%s: %s", spec,
		      err);
	spindle_init(s, &p, member_bytes);
	ck_assert_uint_eq(s->base, base);
}

/* The seek between two member offsets is the curve at their distance in the
 * real disk's cylinders: far shorter for a small member than the full stroke
 * the same offsets cross when the member is the whole disk. */
START_TEST(test_seek_real_cylinders)
{
	uint64_t m = 60 * MIB_, end = m - 4096;
	init_disk(&sp, "hdd-legacy:cache=0", m);
	ck_assert_uint_gt(sp.disk_bytes, 15 * m);
	uint64_t dist = spindle_cylinder(&sp, end) - spindle_cylinder(&sp, 0);
	/* the member fills the outer zone's cylinders one after another */
	uint64_t per_cyl = sp.zone[0].track_bytes * sp.p.heads;
	ck_assert_uint_eq(dist, end / per_cyl);
	qd1(0, 0, 4096, 0);
	struct spindle_req *d = qd1(req.done_ns, end, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, (uint64_t)llround(spindle_seek_ns(&sp, (double)dist)));
	uint64_t real = d->cost.seek_ns;
	ck_assert_uint_lt(real, sp.p.seek_full_ns / 2);
	/* the same two offsets on a 60 MB whole disk: a full stroke */
	init_spec("hdd-legacy:cache=0", m);
	qd1(0, 0, 4096, 0);
	d = qd1(req.done_ns, end, 4096, 0);
	ck_assert_double_eq_tol((double)d->cost.seek_ns, (double)sp.p.seek_full_ns, 0.02 * MS);
	ck_assert_uint_gt(d->cost.seek_ns, 3 * real);
}
END_TEST

/* Mean QD1 service of random 4K reads, emulated. */
static double random_mean(struct spindle *s, uint64_t m, int n)
{
	double sum = 0;
	uint64_t t = 0;
	static struct spindle_req r;
	for (int i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.offset = rand_block(m, 4096);
		r.length = 4096;
		r.arrival_ns = t;
		spindle_enqueue(s, &r);
		struct spindle_req *d = spindle_dispatch(s, t);
		ck_assert_ptr_eq(d, &r);
		sum += (double)(d->done_ns - d->start_ns);
		t = d->done_ns;
		spindle_complete(s, d);
	}
	return sum / n;
}

/* A 60 MB member on the 1 GB preset: the mean random seek is well below the
 * whole disk's, and the emulated reads agree with the model's own figure. */
START_TEST(test_small_member_seeks_short)
{
	static struct spindle whole;
	uint64_t m = 60 * MIB_;
	init_disk(&sp, "hdd-legacy", m);
	init_disk(&whole, "hdd-legacy", 1000 * MIB_);
	double small = spindle_mean_seek_ns(&sp), disk = spindle_disk_mean_seek_ns(&sp);
	ck_assert_msg(small < 0.5 * disk, "60 MB member %.3f ms, whole disk %.3f ms", small / MS,
		      disk / MS);
	ck_assert_double_eq_tol(spindle_mean_seek_ns(&whole), disk, 0.02 * disk);
	/* sampled pairs of random member offsets against the model's sum */
	double seeks = 0;
	int n = 20000;
	for (int i = 0; i < n; i++) {
		uint64_t a = spindle_cylinder(&sp, rand_block(m, 4096));
		uint64_t b = spindle_cylinder(&sp, rand_block(m, 4096));
		seeks += a == b ? 0 : spindle_seek_ns(&sp, a > b ? (double)(a - b) : (double)(b - a));
	}
	ck_assert_msg(fabs(seeks / n - small) < 0.05 * small, "sampled %.3f ms, model %.3f ms",
		      seeks / n / MS, small / MS);
	double got = random_mean(&sp, m, 5000), want = spindle_random_read_ns(&sp, 4096);
	ck_assert_msg(fabs(got - want) < 0.03 * want, "emulated %.3f ms, model %.3f ms", got / MS,
		      want / MS);
	double all = random_mean(&whole, 1000 * MIB_, 5000);
	ck_assert_msg(got < 0.75 * all, "60 MB %.3f ms vs 1000 MB %.3f ms", got / MS, all / MS);
}
END_TEST

/* The mean seek of a partition spanning many cylinders (summed over bands of
 * them) against sampled pairs of its offsets, for partitions across the disk. */
static const struct { const char *spec; uint64_t bytes; } part_cases[] = {
	{ "hdd:start=0.3", 100 * GB },
	{ "hdd:start=inner", 20 * GB },
	{ "hdd:start=123456789K", 300 * GB },
	{ "hdd-legacy:start=0.25", 500 * MIB_ },
};

START_TEST(test_partition_mean_seek)
{
	uint64_t m = part_cases[_i].bytes;
	init_disk(&sp, part_cases[_i].spec, m);
	double model = spindle_mean_seek_ns(&sp), seeks = 0;
	int n = 40000;
	for (int i = 0; i < n; i++) {
		uint64_t a = spindle_cylinder(&sp, rand_block(m, 4096));
		uint64_t b = spindle_cylinder(&sp, rand_block(m, 4096));
		seeks += a == b ? 0 : spindle_seek_ns(&sp, a > b ? (double)(a - b) : (double)(b - a));
	}
	ck_assert_msg(fabs(seeks / n - model) < 0.03 * model, "%s: sampled %.3f ms, model %.3f ms",
		      part_cases[_i].spec, seeks / n / MS, model / MS);
	ck_assert_double_lt(model, spindle_disk_mean_seek_ns(&sp));
}
END_TEST

/* Sequential throughput with read-ahead from member offset 0, emulated. */
static double stream_rate(struct spindle *s, uint64_t len, int n)
{
	static struct spindle_req r;
	uint64_t t = 0, t0 = 0;
	for (int i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.offset = (uint64_t)i * len;
		r.length = len;
		r.arrival_ns = t;
		spindle_enqueue(s, &r);
		struct spindle_req *d = spindle_dispatch(s, t);
		t = d->done_ns;
		if (i == 0)
			t0 = t;
		spindle_complete(s, d);
	}
	return (double)(n - 1) * (double)len / ((double)(t - t0) / 1e9);
}

/* The inner edge is slower than the outer: lower media rate, and a member
 * spans more (smaller) cylinders there. */
START_TEST(test_inner_slower)
{
	static struct spindle inner;
	uint64_t m = 60 * MIB_;
	init_disk(&sp, "hdd-legacy", m);
	init_disk(&inner, "hdd-legacy:start=inner", m);
	ck_assert_uint_eq(inner.base + m, inner.disk_bytes);
	ck_assert_uint_eq(spindle_zone_of(&inner, 0), inner.nzones - 1);
	double ro = stream_rate(&sp, 64 * 1024, 400), ri = stream_rate(&inner, 64 * 1024, 400);
	ck_assert_msg(ri < 0.7 * ro, "inner %.2f MB/s, outer %.2f MB/s", ri / 1e6, ro / 1e6);
	ck_assert_double_eq_tol(ro, spindle_zone_rate(&sp, 0), 0.05 * ro);
	ck_assert_double_eq_tol(ri, spindle_zone_rate(&inner, inner.nzones - 1), 0.05 * ri);
	double go = random_mean(&sp, m, 3000), gi = random_mean(&inner, m, 3000);
	ck_assert_msg(gi > go, "random 4K: inner %.3f ms, outer %.3f ms", gi / MS, go / MS);
	ck_assert_double_gt(spindle_mean_seek_ns(&inner), spindle_mean_seek_ns(&sp));
	/* a fraction of the stroke starts on that cylinder */
	static struct spindle half;
	init_disk(&half, "hdd-legacy:start=0.5", m);
	ck_assert_uint_eq(spindle_cylinder(&half, 0), half.cylinders / 2);
	ck_assert_uint_eq(spindle_cylinder(&half, 0), spindle_cylinder(&half, 0) + 0);
	struct spindle_params p;
	uint64_t base;
	char err[512] = "";
	parse_ok("hdd-legacy:start=1000M", &p);
	ck_assert_int_eq(spindle_place(&p, m, &base, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "62914560 bytes") && strstr(err, "1050000000 bytes"), "%s", err);
	parse_ok("hdd-legacy", &p);
	ck_assert_int_eq(spindle_place(&p, 2000 * MIB_, &base, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "larger than its hdd-legacy disk"), "%s", err);
}
END_TEST

/* Two partitions of one spindle: one head, one queue. */
START_TEST(test_shared_head)
{
	static struct spindle b;
	uint64_t m = 100 * MIB_;
	init_disk(&sp, "hdd-legacy:cache=0,disk=d", m);
	spindle_share(&b, &sp, m, 900 * MIB_);
	ck_assert_ptr_eq(b.disk, &sp);
	ck_assert_uint_gt(spindle_cylinder(&b, 0), spindle_cylinder(&sp, m) + 1000);
	/* re-reading a's record: no seek */
	struct spindle_req *d = qd1(0, 4096, 4096, 0);
	d = qd1(d->done_ns, 4096, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, 0);
	/* an I/O on b in between moves a's arm: a's next read seeks back */
	static struct spindle_req rb;
	memset(&rb, 0, sizeof(rb));
	rb.offset = 4096;
	rb.length = 4096;
	rb.arrival_ns = d->done_ns;
	spindle_enqueue(&b, &rb);
	struct spindle_req *x = spindle_dispatch(&b, rb.arrival_ns);
	ck_assert_ptr_eq(x, &rb);
	ck_assert_uint_gt(x->cost.seek_ns, 5 * MS);
	ck_assert_uint_eq(x->disk_offset, 900 * MIB_ + 4096);
	spindle_complete(&b, x);
	d = qd1(x->done_ns, 4096, 4096, 0);
	ck_assert_uint_eq(d->cost.seek_ns, x->cost.seek_ns); /* the same distance back */
	/* one queue: a request on each, the second starts when the first is done */
	static struct spindle_req ra;
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	ra.length = rb.length = 4096;
	ra.arrival_ns = rb.arrival_ns = d->done_ns;
	spindle_enqueue(&sp, &ra);
	spindle_enqueue(&b, &rb);
	ck_assert(!spindle_idle(&b));
	struct spindle_req *first = spindle_dispatch(&b, ra.arrival_ns);
	ck_assert_ptr_eq(first, &ra); /* FIFO across the partitions */
	ck_assert_ptr_null(spindle_dispatch(&sp, ra.arrival_ns));
	spindle_complete(&b, first);
	struct spindle_req *second = spindle_dispatch(&sp, first->done_ns);
	ck_assert_ptr_eq(second, &rb);
	ck_assert_uint_eq(second->start_ns, first->done_ns);
	spindle_complete(&sp, second);
	ck_assert(spindle_idle(&sp) && spindle_idle(&b));
}
END_TEST

/* n members streaming 1 MiB sequential reads (QD1 each) at once, members i on
 * adapter on[i] (NULL: own link); returns the aggregate rate, emulated. */
static double streams(unsigned n, struct adapter **on, double *media)
{
	static struct spindle disk[4];
	static struct spindle_req r[4];
	uint64_t next[4] = { 0 }, t_end = 0, bytes = 0;
	const uint64_t len = 1 << 20;
	*media = 0;
	for (unsigned i = 0; i < n; i++) {
		init_disk(&disk[i], "hdd", 1ull << 30);
		disk[i].phase_ns = (uint64_t)(disk[i].rev_ns * i / n);
		spindle_set_adapter(&disk[i], on[i]);
		*media += spindle_zone_rate(&disk[i], 0);
		memset(&r[i], 0, sizeof(r[i]));
		r[i].length = len;
		spindle_enqueue(&disk[i], &r[i]);
		ck_assert_ptr_eq(spindle_dispatch(&disk[i], 0), &r[i]);
	}
	/* warm up 20 reads each, then measure 200 */
	uint64_t t0 = 0;
	for (unsigned done = 0; done < 220 * n; done++) {
		unsigned k = 0;
		for (unsigned i = 1; i < n; i++)
			if (r[i].done_ns < r[k].done_ns)
				k = i;
		uint64_t t = r[k].done_ns;
		if (done == 20 * n)
			t0 = t; /* the window opens at this completion */
		else if (done > 20 * n)
			bytes += len;
		t_end = t;
		spindle_complete(&disk[k], &r[k]);
		next[k] += len;
		r[k].offset = next[k];
		r[k].arrival_ns = t;
		spindle_enqueue(&disk[k], &r[k]);
		ck_assert_ptr_eq(spindle_dispatch(&disk[k], t), &r[k]);
	}
	return (double)bytes / ((double)(t_end - t0) / 1e9);
}

/* An adapter slower than its disks' sum delivers its own rate; on separate
 * adapters the disks deliver the sum of their media rates. */
START_TEST(test_adapter_serialises)
{
	static struct adapter one, own[3];
	struct adapter_params ap;
	char err[256];
	ck_assert_int_eq(adapter_parse("fast-scsi2:rate=300MB/s", &ap, err, sizeof(err)), 0);
	ck_assert_uint_eq(ap.rate_Bps, 300000000);
	ck_assert_uint_eq(ap.overhead_ns, 15000);
	adapter_init(&one, "a", &ap);
	struct adapter *shared[3] = { &one, &one, &one };
	double media, got = streams(3, shared, &media);
	double hold = (double)adapter_hold_ns(&one, 1 << 20);
	double cap = (double)(1 << 20) * 1e9 / hold; /* the adapter's rate with its overhead */
	ck_assert_msg(media > 1.5 * 300e6, "media sum %.0f MB/s", media / 1e6);
	ck_assert_msg(got > 0.97 * cap && got <= 1.001 * cap, "shared adapter: %.1f MB/s, rate %.1f MB/s",
		      got / 1e6, cap / 1e6);
	struct adapter_stats st;
	adapter_snapshot(&one, &st);
	ck_assert_uint_eq(st.cmds, 3 + 220 * 3);
	ck_assert_uint_eq(st.bytes, st.cmds << 20);
	ck_assert_uint_gt(st.waited, st.cmds / 2);
	ck_assert_uint_gt(st.wait_ns, 0);
	for (int i = 0; i < 3; i++)
		adapter_init(&own[i], "own", &ap);
	struct adapter *apart[3] = { &own[0], &own[1], &own[2] };
	got = streams(3, apart, &media);
	ck_assert_msg(got > 0.95 * media && got <= 1.001 * media, "separate adapters: %.1f MB/s,"
		      " media sum %.1f MB/s", got / 1e6, media / 1e6);
	/* without any adapter: the same sum */
	struct adapter *none[3] = { NULL, NULL, NULL };
	double free_ = streams(3, none, &media);
	ck_assert_double_eq_tol(free_, got, 0.03 * got);
}
END_TEST

/* A bus reservation goes into the first gap it fits, never over another. */
START_TEST(test_adapter_gaps)
{
	static struct adapter a;
	struct adapter_params ap = { .rate_Bps = 1000000000, .overhead_ns = 0 };
	adapter_init(&a, "x", &ap);
	ck_assert_uint_eq(adapter_hold_ns(&a, 1000), 1000);
	adapter_reserve(&a, 0, 1000, 1000, 1000);     /* [1000, 2000) */
	adapter_reserve(&a, 5000, 5000, 1000, 1000);  /* [5000, 6000) */
	ck_assert_uint_eq(adapter_find(&a, 0, 1000), 0);       /* fits before */
	ck_assert_uint_eq(adapter_find(&a, 500, 1000), 2000);  /* would overlap: after */
	ck_assert_uint_eq(adapter_find(&a, 2500, 2500), 2500); /* the gap */
	ck_assert_uint_eq(adapter_find(&a, 2500, 3000), 6000); /* too big for the gap */
	for (int i = 0; i < 200; i++) /* more than it remembers: the oldest go */
		adapter_reserve(&a, 10000 + i * 10, 10000 + i * 10, 5, 5);
	ck_assert_uint_eq(a.n, ADAPTER_SLOTS);
	ck_assert_uint_eq(adapter_find(&a, 11990, 5), 11995);
}
END_TEST

static uint64_t sizes4[4] = { 60 * MIB_, 60 * MIB_, 60 * MIB_, 60 * MIB_ };

START_TEST(test_plan)
{
	static struct spindle_plan pl;
	char err[512] = "";
	ck_assert_int_eq(spindle_plan("0-2=hdd-legacy:adapter=a;3=hdd-legacy:adapter=b;"
				      "@a=fast-scsi2;@b=fast-scsi2:rate=20MB/s", 4, sizes4, &pl, err,
				      sizeof(err)), 0);
	ck_assert_uint_eq(pl.nadapters, 2);
	ck_assert_int_eq(pl.adapter[0], 0);
	ck_assert_int_eq(pl.adapter[2], 0);
	ck_assert_int_eq(pl.adapter[3], 1);
	ck_assert_uint_eq(pl.ad[1].rate_Bps, 20000000);
	/* a preset named directly: one adapter of it; a default spec, then overrides */
	ck_assert_int_eq(spindle_plan("hdd-legacy:adapter=fast-scsi2,3=hdd:start=0.5", 4, sizes4,
				      &pl, err, sizeof(err)), 0);
	ck_assert_uint_eq(pl.nadapters, 1);
	ck_assert_str_eq(pl.adname[0], "fast-scsi2");
	ck_assert_int_eq(pl.adapter[3], -1);
	ck_assert_str_eq(pl.p[3].preset, "hdd");
	ck_assert_uint_gt(pl.base[3], 0);
	/* one disk, four partitions, end to end in member order */
	ck_assert_int_eq(spindle_plan("hdd-legacy:disk=d", 4, sizes4, &pl, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(pl.disk[i], 0);
		ck_assert_uint_eq(pl.base[i], i * 60 * MIB_);
	}
	ck_assert_int_eq(spindle_plan("0-1=hdd-legacy:disk=d;2-3=hdd-legacy:disk=e,start=inner", 4,
				      sizes4, &pl, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "member 3 (disk e") && strstr(err, "overlaps member 2"), "%s", err);
	static const struct { const char *spec; const char *msg; } bad[] = {
		{ "hdd-legacy:start=1000M", "member 0: a member of 62.9 MB (62914560 bytes) from byte"
		  " 1048576000 does not fit on its hdd-legacy disk of 1.05 GB (1050000000 bytes)" },
		{ "hdd-legacy:adapter=zz", "member 0: adapter 'zz' is not defined" },
		{ "0=hdd-legacy:disk=d;1-3=hdd-legacy:disk=d,rpm=7200", "member 1: disk d is also"
		  " member 0's, with other parameters" },
		{ "hdd-legacy:disk=d,capacity=member", "a shared disk needs its capacity" },
		{ "0-1=hdd-legacy:disk=d;2-3=hdd-legacy:disk=d,start=60M", "member 2 (disk d bytes"
		  " 62914560..125829120) overlaps member 1" },
		{ "hdd-legacy:disk=d,capacity=200M", "member 3: on disk d after the members before it" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(spindle_plan(bad[i].spec, 4, sizes4, &pl, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].msg), "'%s': got \"%s\"", bad[i].spec, err);
	}
	/* the new keys round-trip through spindle_format */
	struct spindle_params p, q;
	char a[1024], b[1024];
	static const char *const rt[] = { "hdd:capacity=2G,start=0.25,disk=x,adapter=a",
					  "hdd-legacy:start=inner", "hdd:start=64M,capacity=member",
					  "hdd:start=0.0" };
	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		char why[256] = "";
		if (spindle_parse(rt[i], &p, why, sizeof(why))) {
			ck_assert_msg(strstr(rt[i], "capacity=member"), "%s: %s", rt[i], why);
			continue;
		}
		spindle_format(&p, a, sizeof(a));
		parse_ok(a, &q);
		spindle_format(&q, b, sizeof(b));
		ck_assert_str_eq(a, b);
		ck_assert_int_eq(p.start_mode, q.start_mode);
		ck_assert_uint_eq(p.capacity_bytes, q.capacity_bytes);
	}
}
END_TEST

/* ---- spec parsing -------------------------------------------------------------- */

static const struct { const char *spec; const char *msg; } bad_specs[] = {
	{ "floppy", "unknown preset 'floppy' (presets: hdd-legacy, hdd, ssd, nvme, none)" },
	{ "", "empty model spec" },
	{ "HDD", "unknown preset 'HDD'" },
	{ "hdd:", "hdd: no parameters after ':'" },
	{ "hdd:rpm=0", "rpm: must be > 0" },
	{ "hdd:rpm=-5", "rpm=-5: not a whole number" },
	{ "hdd:rpm=7200.5", "rpm=7200.5: not a whole number" },
	{ "hdd:rpm=", "rpm: missing value" },
	{ "hdd:rpm", "rpm: missing value" },
	{ "hdd:rpm=200000", "rpm: must be between 1 and 100000" },
	{ "hdd:rmp=7200", "unknown key 'rmp' (keys for hdd: sched, overhead," },
	{ "hdd:seek_avg=abc", "seek_avg=abc: not a time" },
	{ "hdd:seek_avg=4.5", "seek_avg=4.5: not a time" },
	{ "hdd:seek_avg=4.5 ms", "seek_avg=4.5 ms: not a time" },
	{ "hdd:seek_avg=1e3ms", "seek_avg=1e3ms: not a time" },
	{ "hdd:seek_avg=-4ms", "seek_avg=-4ms: not a time" },
	{ "hdd:overhead=2000s", "overhead: must be between 0 and 1000000000" },
	{ "hdd:rpm=7200,,cache=0", "hdd: empty parameter" },
	{ "hdd:cache=1X", "cache=1X: not a size" },
	{ "hdd:iface=600", "iface=600: not a rate" },
	{ "hdd:iface=600Mb/s", "iface=600Mb/s: not a rate" },
	{ "hdd:iface=0MB/s", "iface: must be > 0" },
	{ "hdd:zones=33", "zones: must be between 1 and 32" },
	{ "hdd:heads=0", "heads: must be > 0" },
	{ "hdd:wcache=maybe", "wcache=maybe: not a boolean" },
	{ "hdd:sched=elevator", "sched=elevator: unknown discipline" },
	{ "hdd:seek_knee=0.5", "seek_knee: must be >= 0.0001 and <= 0.333" },
	{ "hdd:seek_knee=0", "seek_knee: must be >= 0.0001" },
	{ "hdd:seek_knee=x", "seek_knee=x: not a number" },
	{ "hdd:seek_t2t=9ms", "seek_t2t: must be < seek_avg" },
	{ "hdd:seek_full=8ms", "seek_full: must be > seek_avg" },
	{ "hdd:seek_full=60ms", "seek_full: too long" },
	{ "hdd:rate_inner=300MB/s", "rate_inner: must be <= rate_outer" },
	{ "ssd:rpm=7200", "rpm: not a parameter of ssd models" },
	{ "ssd:channels=0", "channels: must be > 0" },
	{ "ssd:bw=fast", "bw=fast: not a rate" },
	{ "ssd:foo=1", "unknown key 'foo' (keys for ssd: overhead, read, write, channels, bw, capacity" },
	{ "hdd:capacity=1", "capacity: must be between 4096 and" },
	{ "hdd:capacity=big", "capacity=big: not a size (bytes, or with K, M, G, T) or 'member'" },
	{ "hdd:start=1.5", "start=1.5: a fraction of the stroke is below 1" },
	{ "hdd:start=x", "start=x: not a size" },
	{ "hdd:capacity=member,start=1M", "start: capacity=member makes the member the whole disk" },
	{ "hdd:disk=0a", "disk=0a: a name is a letter" },
	{ "hdd:adapter=a/b", "adapter=a/b: a name is a letter" },
	{ "hdd:disk=abcdefghijklmnopq", "disk=abcdefghijklmnopq: a name" },
	{ "nvme:sched=sstf", "sched: not a parameter of ssd models" },
	{ "none:rpm=1", "none: takes no parameters" },
};

START_TEST(test_bad_spec)
{
	struct spindle_params p;
	char err[512] = "";
	int rc = spindle_parse(bad_specs[_i].spec, &p, err, sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(err, bad_specs[_i].msg) != NULL, "'%s': got \"%s\", want \"%s\"",
		      bad_specs[_i].spec, err, bad_specs[_i].msg);
	/* A NULL or tiny error buffer is fine too. */
	ck_assert_int_eq(spindle_parse(bad_specs[_i].spec, &p, NULL, 0), -EINVAL);
	ck_assert_int_eq(spindle_parse(bad_specs[_i].spec, &p, err, 4), -EINVAL);
	ck_assert_uint_le(strlen(err), 3);
}
END_TEST

static const struct {
	const char *spec;
	unsigned members;
	const char *msg;
} bad_multi[] = {
	{ "0=hdd,1=floppy", 2, "member 1: unknown preset 'floppy'" },
	{ "0=hdd", 2, "member 1: no model given" },
	{ "0=hdd,2=ssd", 2, "member 2: out of range (the volume has 2 members)" },
	{ "0=hdd,0=ssd", 2, "member 0: model given twice" },
	{ "0=hdd;x", 2, "model spec 'x': expected MEMBER=SPEC" },
	{ "0=hdd:rmp=1;1=ssd", 2, "member 0: unknown key 'rmp'" },
	{ "0=hdd:cache=0,1=ssd:rpm=1", 2, "member 1: rpm: not a parameter of ssd models" },
	{ "floppy", 3, "unknown preset 'floppy'" },
	{ "hdd", 0, "no members" },
	{ "0-2=hdd", 2, "member 2: out of range" },
	{ "1-0=hdd", 2, "members 1-0: the range runs backwards" },
	{ "0-1=hdd;1=ssd", 2, "member 1: model given twice" },
	{ "hdd;@a=floppy", 2, "adapter a: unknown adapter 'floppy' (adapters: fast-scsi2," },
	{ "hdd;@a=fast-scsi2:rate=0MB/s", 2, "adapter a: adapter rate=0MB/s: not a rate" },
	{ "hdd;@a=fast-scsi2:speed=1", 2, "unknown adapter key 'speed'" },
	{ "hdd;@a=fast-scsi2;@a=sas-hba", 2, "adapter a: defined twice" },
	{ "0=hdd;hdd", 2, "model spec 'hdd': expected MEMBER=SPEC" },
};

START_TEST(test_bad_multi)
{
	struct spindle_params p[4];
	char err[512] = "";
	int rc = spindle_parse_multi(bad_multi[_i].spec, bad_multi[_i].members, p, err,
				     sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(err, bad_multi[_i].msg) != NULL, "'%s': got \"%s\", want \"%s\"",
		      bad_multi[_i].spec, err, bad_multi[_i].msg);
}
END_TEST

START_TEST(test_presets)
{
	static const enum spindle_kind kinds[] = { SPINDLE_HDD, SPINDLE_HDD, SPINDLE_SSD,
						   SPINDLE_SSD, SPINDLE_NONE };
	for (int i = 0; spindle_presets[i]; i++) {
		struct spindle_params p, q;
		char a[1024], b[1024];
		parse_ok(spindle_presets[i], &p);
		ck_assert_int_eq(p.kind, kinds[i]);
		ck_assert_str_eq(p.preset, spindle_presets[i]);
		/* The formatted spec parses back to the same parameters. */
		ck_assert_int_lt(spindle_format(&p, a, sizeof(a)), (int)sizeof(a));
		parse_ok(a, &q);
		spindle_format(&q, b, sizeof(b));
		ck_assert_str_eq(a, b);
		ck_assert_uint_eq(p.seek_avg_ns, q.seek_avg_ns);
		ck_assert_uint_eq(p.rate_outer_Bps, q.rate_outer_Bps);
		ck_assert_uint_eq(p.cache_bytes, q.cache_bytes);
		ck_assert_uint_eq(p.read_ns, q.read_ns);
		/* describe lists every key in spec syntax; show prints the derived figures. */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		spindle_describe(&p, f);
		ck_assert_int_eq(spindle_show(&p, 1 * GB, f, NULL, 0), 0);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(text, spindle_presets[i]));
		if (p.kind == SPINDLE_HDD) {
			ck_assert_ptr_nonnull(strstr(text, "seek_knee"));
			ck_assert_ptr_nonnull(strstr(text, "IOPS, random 4K QD1"));
			ck_assert_ptr_nonnull(strstr(text, "revolution"));
		}
		free(text);
	}
	struct spindle_params p;
	parse_ok("hdd", &p);
	char err[8];
	ck_assert_int_eq(spindle_format(&p, err, sizeof(err)) >= (int)sizeof(err), 1);
}
END_TEST

START_TEST(test_overrides)
{
	struct spindle_params base, p;
	parse_ok("hdd", &base);
	parse_ok("hdd:rpm=10000,seek_avg=4.5ms,cache=0", &p);
	ck_assert_uint_eq(p.rpm, 10000);
	ck_assert_uint_eq(p.seek_avg_ns, 4500000);
	ck_assert_uint_eq(p.cache_bytes, 0);
	ck_assert_uint_eq(p.seek_full_ns, base.seek_full_ns);   /* untouched */
	ck_assert_uint_eq(p.rate_outer_Bps, base.rate_outer_Bps);
	ck_assert_str_eq(p.preset, "hdd");

	static const struct { const char *spec; size_t off; uint64_t want; } units[] = {
		{ "hdd:overhead=250us", offsetof(struct spindle_params, overhead_ns), 250000 },
		{ "hdd:overhead=1500ns", offsetof(struct spindle_params, overhead_ns), 1500 },
		{ "hdd:overhead=0", offsetof(struct spindle_params, overhead_ns), 0 },
		{ "hdd:seek_avg=0.0045s", offsetof(struct spindle_params, seek_avg_ns), 4500000 },
		{ "hdd: seek_avg = 7ms ", offsetof(struct spindle_params, seek_avg_ns), 7000000 },
		{ "hdd:cache=512K", offsetof(struct spindle_params, cache_bytes), 524288 },
		{ "hdd:cache=1.5M", offsetof(struct spindle_params, cache_bytes), 1572864 },
		{ "hdd:cache=1G", offsetof(struct spindle_params, cache_bytes), 1ull << 30 },
		{ "hdd:cache=4096", offsetof(struct spindle_params, cache_bytes), 4096 },
		{ "hdd:iface=1.5GB/s", offsetof(struct spindle_params, iface_Bps), 1500000000 },
		{ "hdd:iface=100MiB/s", offsetof(struct spindle_params, iface_Bps), 104857600 },
		{ "hdd:iface=300KB/s", offsetof(struct spindle_params, iface_Bps), 300000 },
		{ "ssd:bw=2GB/s", offsetof(struct spindle_params, bw_Bps), 2000000000 },
		{ "nvme:read=80us", offsetof(struct spindle_params, read_ns), 80000 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		parse_ok(units[i].spec, &p);
		ck_assert_msg(*(uint64_t *)((char *)&p + units[i].off) == units[i].want, "%s",
			      units[i].spec);
	}
	static const struct { const char *spec; enum spindle_sched s; int wc; } misc[] = {
		{ "hdd:sched=sstf", SPINDLE_SSTF, 1 }, { "hdd:sched=cscan", SPINDLE_CSCAN, 1 },
		{ "hdd:sched=c-scan,wcache=off", SPINDLE_CSCAN, 0 },
		{ "hdd:sched=fifo,wcache=no", SPINDLE_FIFO, 0 },
		{ "hdd-legacy:wcache=on", SPINDLE_FIFO, 1 },
	};
	for (size_t i = 0; i < sizeof(misc) / sizeof(misc[0]); i++) {
		parse_ok(misc[i].spec, &p);
		ck_assert_int_eq(p.sched, misc[i].s);
		ck_assert_int_eq(p.wcache, misc[i].wc);
	}
	parse_ok("hdd:seek_knee=0.1", &p);
	ck_assert_double_eq_tol(p.seek_knee, 0.1, 1e-12);
}
END_TEST

START_TEST(test_multi)
{
	struct spindle_params p[4];
	char err[512] = "";
	ck_assert_int_eq(spindle_parse_multi("hdd:rpm=5400", 3, p, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(p[i].rpm, 5400);
	ck_assert_int_eq(spindle_parse_multi("0=hdd,1=ssd", 2, p, err, sizeof(err)), 0);
	ck_assert_int_eq(p[0].kind, SPINDLE_HDD);
	ck_assert_int_eq(p[1].kind, SPINDLE_SSD);
	ck_assert_int_eq(spindle_parse_multi("1=nvme;0=hdd:rpm=10000,cache=0;2=none", 3, p, err,
					     sizeof(err)), 0);
	ck_assert_uint_eq(p[0].rpm, 10000);
	ck_assert_uint_eq(p[0].cache_bytes, 0);
	ck_assert_str_eq(p[1].preset, "nvme");
	ck_assert_int_eq(p[2].kind, SPINDLE_NONE);
	/* ',' before "N=" splits members, ',' elsewhere separates keys. */
	ck_assert_int_eq(spindle_parse_multi("0=hdd:rpm=10000,cache=0,1=ssd:channels=2", 2, p, err,
					     sizeof(err)), 0);
	ck_assert_uint_eq(p[0].rpm, 10000);
	ck_assert_uint_eq(p[0].cache_bytes, 0);
	ck_assert_uint_eq(p[1].channels, 2);
}
END_TEST

/* Any spec the parser accepts, at any member size, must give finite, ordered
 * service times and printable figures (under SAN=1: no overflow, no UB).
 * Specs: every key at the edges of its range and past them, and random
 * byte mutations of valid specs. */
static const char *const edge_keys[] = {
	"overhead", "hit_overhead", "iface", "rpm", "heads", "zones", "seek_t2t", "seek_avg",
	"seek_full", "seek_knee", "switch", "rate_outer", "rate_inner", "cache", "wcache",
	"read", "write", "channels", "bw", "sched", "capacity", "start", "disk", "adapter",
};
static const char *const edge_values[] = {
	"0", "1", "-1", "1ns", "1000s", "999999999999999999999", "18446744073709551615",
	"1B/s", "18446744073709551615B/s", "1e308", "0.0000001", "1T", "4096", "1024",
	"32", "33", "100000", "0.3333", "nan", "inf", "", "sstf", "cscan", "1ms", "1GB/s",
	"member", "inner", "0.5", "0.999999", "a", "fast-scsi2", "1000M",
};
static const uint64_t edge_sizes[] = { 512, 4096, 1ull << 20, 64ull << 30, 1000 * TB };

static void exercise(const char *spec)
{
	struct spindle_params p;
	if (spindle_parse(spec, &p, NULL, 0) != 0)
		return;
	FILE *null = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(null);
	for (unsigned m = 0; m < sizeof(edge_sizes) / sizeof(edge_sizes[0]); m++) {
		uint64_t bytes = edge_sizes[m];
		spindle_init(&sp, &p, bytes);
		spindle_show(&p, bytes, null, NULL, 0);
		double rnd = spindle_random_read_ns(&sp, 4096);
		ck_assert_msg(isfinite(rnd) && rnd >= 0, "%s at %llu: random read %g", spec,
			      (unsigned long long)bytes, rnd);
		uint64_t t = 0;
		for (int i = 0; i < 16; i++) {
			uint64_t len = i % 3 ? 4096 : 1 << 20;
			uint64_t off = bytes > len ? (uint64_t)rand() % (bytes - len) / 512 * 512 : 0;
			if (p.kind == SPINDLE_NONE)
				break;
			struct spindle_req *d = qd1(t, off, len, i % 4 == 3);
			t = d->done_ns;
		}
	}
	fclose(null);
}

START_TEST(test_spec_edges)
{
	static const char *const bases[] = { "hdd", "hdd-legacy", "ssd", "nvme", "hdd:cache=0" };
	char spec[256];
	for (unsigned b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (unsigned k = 0; k < sizeof(edge_keys) / sizeof(edge_keys[0]); k++)
			for (unsigned v = 0; v < sizeof(edge_values) / sizeof(edge_values[0]); v++) {
				snprintf(spec, sizeof(spec), "%s%c%s=%s", bases[b],
					 strchr(bases[b], ':') ? ',' : ':', edge_keys[k], edge_values[v]);
				exercise(spec);
			}
}
END_TEST

START_TEST(test_spec_mutations)
{
	static const char *const seeds[] = {
		"hdd:rpm=10000,seek_avg=4.5ms,seek_t2t=0.5ms,seek_full=9ms,heads=2,cache=0",
		"hdd-legacy:zones=32,sched=cscan,cache=512K,wcache=1",
		"ssd:channels=4,bw=100MB/s,read=50us,write=1ms",
		"nvme:overhead=0,read=10us",
	};
	static const char alphabet[] = "0123456789.,:=-+eEkKmMgGtTbB/suns hddssd";
	char spec[128];
	srand(7);
	for (int i = 0; i < 1200; i++) {
		const char *seed = seeds[i % 4];
		size_t n = strlen(seed);
		memcpy(spec, seed, n + 1);
		for (int m = 1 + rand() % 3; m > 0; m--) {
			size_t at = (size_t)rand() % n;
			switch (rand() % 3) {
			case 0: /* replace */
				spec[at] = alphabet[rand() % (sizeof(alphabet) - 1)];
				break;
			case 1: /* cut */
				spec[at] = 0;
				n = at;
				break;
			default: /* duplicate a tail */
				if (n + (n - at) < sizeof(spec)) {
					memmove(spec + n, spec + at, n - at + 1);
					n += n - at;
				}
			}
			if (n == 0)
				break;
		}
		exercise(spec);
	}
}
END_TEST

static Suite *spindle_suite(void)
{
	Suite *s = suite_create("spindle");
	TCase *model = tcase_create("model");
	TCase *spec = tcase_create("spec");
	int nseek = sizeof(seek_cases) / sizeof(seek_cases[0]);
	int ndisk = sizeof(disk_cases) / sizeof(disk_cases[0]);

	tcase_set_timeout(model, 30);
	tcase_add_loop_test(model, test_seek_curve, 0, nseek);
	tcase_add_loop_test(model, test_zone_rates, 0, nseek);
	tcase_add_test(model, test_service_hand);
	tcase_add_test(model, test_service_switch);
	tcase_add_test(model, test_service_ssd);
	tcase_add_test(model, test_write_back);
	tcase_add_loop_test(model, test_sched_order, 0,
			    sizeof(sched_cases) / sizeof(sched_cases[0]));
	tcase_add_test(model, test_fifo_keeps_order);
	tcase_add_test(model, test_sstf_beats_fifo);
	tcase_add_loop_test(model, test_ssd_channels, 0,
			    sizeof(ssd_cases) / sizeof(ssd_cases[0]));
	tcase_add_loop_test(model, test_random_qd1, 0, ndisk);
	tcase_add_loop_test(model, test_reread_revolution, 0, ndisk);
	tcase_add_loop_test(model, test_sequential, 0, ndisk);
	tcase_add_test(model, test_seek_real_cylinders);
	tcase_add_test(model, test_small_member_seeks_short);
	tcase_add_test(model, test_inner_slower);
	tcase_add_loop_test(model, test_partition_mean_seek, 0,
			    sizeof(part_cases) / sizeof(part_cases[0]));
	tcase_add_test(model, test_shared_head);
	tcase_add_test(model, test_adapter_serialises);
	tcase_add_test(model, test_adapter_gaps);
	suite_add_tcase(s, model);

	tcase_add_loop_test(spec, test_bad_spec, 0, sizeof(bad_specs) / sizeof(bad_specs[0]));
	tcase_add_loop_test(spec, test_bad_multi, 0, sizeof(bad_multi) / sizeof(bad_multi[0]));
	tcase_add_test(spec, test_presets);
	tcase_add_test(spec, test_overrides);
	tcase_add_test(spec, test_multi);
	tcase_add_test(spec, test_plan);
	tcase_add_test(spec, test_spec_edges);
	tcase_add_test(spec, test_spec_mutations);
	suite_add_tcase(s, spec);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(spindle_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
