/* test_bench: fsvol-bench's flags (every bad value) and the sweep's lists,
 * the member ranges under a window and the holes found there, access patterns
 * (sequential order, random alignment and bounds, each distribution against
 * its definition, reproducibility from the seed) and the figures of a short
 * real run against a temp file (they reconcile; JSON equals text). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/sweep.h"
#include "fsvol/core/volume.h"
#include <fcntl.h>

#define NARGS 48

static int parse(struct bench_opts *o, char *err, size_t errlen, const char *line)
{
	static char buf[512];
	char *argv[NARGS] = { "fsvol-bench" };
	int argc = 1;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < NARGS; t = strtok(NULL, " "))
		argv[argc++] = t;
	bench_opts_default(o);
	return bench_parse(o, argc, argv, err, errlen);
}

/* ---- flags ---- */
static const struct {
	const char *args;
	const char *msg; /* substring of the error */
} bad_flags[] = {
	{ "-b 3X f", "-b 3X: not a size" },
	{ "-b3X f", "-b 3X: not a size" },
	{ "-b 0 f", "-b 0: must be 1..1G" },
	{ "-b 2G f", "-b 2G: must be 1..1G" },
	{ "-b", "-b needs a value" },
	{ "-d 0 f", "-d 0: must be > 0" },
	{ "-d x f", "-d x: not a number of seconds" },
	{ "-d -1 f", "-d -1: must be > 0" },
	{ "-W -1 f", "-W -1: must be >= 0" },
	{ "-W abc f", "-W abc: not a number of seconds" },
	{ "-C x f", "-C x: not a number of seconds" },
	{ "-o 0 f", "-o 0: must be 1..1024" },
	{ "-o 5000 f", "-o 5000: must be 1..1024" },
	{ "-o two f", "-o two: not a number" },
	{ "-t 0 f", "-t 0: must be 1..256" },
	{ "-t 1000 f", "-t 1000: must be 1..256" },
	{ "-rX f", "-r X: not a size" },
	{ "-s1Q f", "-s 1Q: not a size" },
	{ "-r -s f", "-r and -s exclude each other" },
	{ "-w 120 f", "-w 120: must be 0..100" },
	{ "-w x f", "-w x: not a number" },
	{ "-w -5 f", "-w -5: not a number" },
	{ "-c 10Z f", "-c 10Z: not a size" },
	{ "-Sx f", "-S x: expected -S[bhuw]" },
	{ "-Sm f", "-S m: -Sm (memory-mapped I/O) is Windows-only" },
	{ "-Sbu f", "-S bu: b (caching on) conflicts with u and h" },
	{ "-Sbh f", "-S bh: b (caching on) conflicts" },
	{ "-Sw --members a,b", "-Sw/-Sh/-h: write-through is O_DSYNC" },
	{ "-h --members a,b", "-Sw/-Sh/-h: write-through" },
	{ "-Z1000 f", "-Z 1000: must be 4K..1G" },
	{ "-Z6K f", "-Z 6K: the source buffer must be a multiple of 4K" },
	{ "-Z4K -b 8K f", "-Z4096: the source buffer is smaller than a block" },
	{ "-Z1M,src f", "-ZSIZE,FILE (a source buffer from a file) is not supported" },
	{ "-Zq f", "-Z q: not a size" },
	{ "-g0 f", "-g 0: expected -gBYTES_PER_MS or -gIOPSi" },
	{ "-F0 f", "-F 0: must be 1..256" },
	{ "-F2 -t2 f", "-F 2 and -t 2: threads in all or per target, not both" },
	{ "-F2 -si f g", "-F with -si: not supported" },
	{ "-rs101 f", "-r s101: expected -rsPCT" },
	{ "-rsx f", "-r sx: expected -rsPCT" },
	{ "-rs30 -s f", "-r and -s exclude each other" },
	{ "-rs30 --dist zipf:1 f", "-rs30: the random part is uniform" },
	{ "-si -T 1M f", "-si: the threads share one position" },
	{ "-si -r f", "-r and -s exclude each other" },
	{ "-D0 f", "-D 0: must be 1..3600000" },
	{ "-Dx f", "-D x: not a number" },
	{ "-Rjson f", "-R json: expected -Rtext or -Rxml" },
	{ "-Rpxml f", "-R pxml: expected -Rtext or -Rxml" },
	{ "-Rxml --json f", "-Rxml and --json: one report format at a time" },
	{ "-g1.5 f", "-g 1.5: expected -gBYTES_PER_MS" },
	{ "-gi f", "-g i: expected -gBYTES_PER_MS" },
	{ "-zabc f", "-z abc: not a number" },
	{ "-T 1X f", "-T 1X: not a size" },
	{ "-B x f", "-B x: BASE is not a size of 0..1P (BASE[:LENGTH])" },
	{ "-B 1M: f", "-B 1M:: LENGTH is not a size of 1..1P (BASE[:LENGTH])" },
	{ "-B 1M:0 f", "-B 1M:0: LENGTH is not a size of 1..1P (BASE[:LENGTH])" },
	{ "-B 2P f", "-B 2P: BASE is not a size of 0..1P" },
	{ "-f 0 f", "-f 0: must be 1..1P" },
	{ "-f 1M -f 2M f", "-f 2M: the maximum offset is already set" },
	{ "-B 1M:1M -f 4M f", "-f 4M: the maximum offset is already set" },
	{ "--dist foo f", "--dist foo: expected uniform, normal:SIGMA" },
	{ "--dist normal:0 f", "--dist normal:0: SIGMA must be in (0, 10]" },
	{ "--dist normal:x f", "--dist normal:x: SIGMA is not a number" },
	{ "--dist zipf:-1 f", "--dist zipf:-1: THETA must be in (0, 10]" },
	{ "--dist zipf: f", "--dist zipf:: THETA is not a number" },
	{ "--dist hot:10 f", "--dist hot:10: expected hot:DATA%/IO%" },
	{ "--dist hot:0/90 f", "--dist hot:0/90: DATA% must be in (0, 100)" },
	{ "--dist hot:10/120 f", "--dist hot:10/120: IO% must be in [0, 100]" },
	{ "--dist hot:x/1 f", "--dist hot:x/1: DATA is not a number" },
	{ "--dist=zipf:0.9 -s f", "--dist: needs random I/O (-r), not -s" },
	{ "--think -3 f", "--think -3: not a number" },
	{ "--think 99999999 f", "--think 99999999: must be 0..10000000" },
	{ "--members a,,b", "--members a,,b: empty member name" },
	{ "--members a,b x y", "--members: opens one volume" },
	{ "--json=1 f", "--json takes no value" },
	{ "--bogus f", "unknown option '--bogus'" },
	{ "-Q f", "unknown option '-Q'" },
	{ "-Lx f", "unknown option '-Lx'" },
	{ "-Sh -b 1000 f", "-b 1000: must be a multiple of 512" },
	{ "-b 4K", "no TARGET given" },
	{ "--replay-speed 2 f", "--replay-speed: needs --replay FILE" },
	{ "--latency-log l f", "--latency-log: needs --replay FILE" },
	{ "--compare raid5:4", "--compare: needs --replay FILE" },
	{ "--replay t --replay-format csv f", "--replay-format csv: expected fio, fio2, fio3, blkparse, msr" },
	{ "--replay t --replay-speed 0 f", "--replay-speed 0: expected a factor" },
	{ "--replay t --replay-speed x f", "--replay-speed x: expected a factor" },
	{ "--replay t --replay-map fold f", "--replay-map fold: expected wrap, scale or none" },
	{ "--replay t --replay-speed 2 --replay-afap f", "exclude each other" },
	{ "--replay t -t 2 f", "-t 2: a replay issues the trace's requests from one thread" },
	{ "--replay t f g", "--replay: one TARGET at a time" },
	{ "--replay t --out d f", "--out d: needs --compare" },
	{ "--replay t --compare raid5:4 f", "--compare: builds its own volumes" },
	{ "--replay t", "no TARGET given" },
	{ "--create raid5 f", "--create: needs --members" },
	{ "--create raid9 --members mem:a:8M", "--create raid9: " },
	{ "--create raid0,3K --members mem:a:8M", "--create raid0,3K: CHUNK must be a power of two" },
	{ "--create raid0 --members mem:a:8M,m1", "--create: member m1 is not in memory" },
};

START_TEST(test_bad_flags)
{
	struct bench_opts o;
	char err[256];
	int r = parse(&o, err, sizeof(err), bad_flags[_i].args);
	ck_assert_msg(r == -EINVAL, "%s: accepted", bad_flags[_i].args);
	ck_assert_msg(strstr(err, bad_flags[_i].msg), "%s: got '%s', want '%s'", bad_flags[_i].args, err,
		      bad_flags[_i].msg);
	bench_opts_free(&o);
}
END_TEST

START_TEST(test_good_flags)
{
	struct bench_opts o;
	char err[256];
	ck_assert_int_eq(parse(&o, err, sizeof(err), "f"), 0);
	ck_assert_uint_eq(o.block, 65536);
	ck_assert(o.duration == 10 && o.warmup == 5 && o.cooldown == 0);
	ck_assert_uint_eq(o.outstanding, 2);
	ck_assert_uint_eq(o.threads, 1);
	ck_assert(!o.random && !o.direct && !o.writethrough && !o.latency && o.seed == 0 && o.wbuf == BENCH_WBUF_PATTERN);
	ck_assert_uint_eq(o.ntargets, 1);
	bench_opts_free(&o);

	/* diskspd's sample line, attached and separate values */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-b8K -d60 -Sh -L -o2 -t4 -r -w30 -c20G io.dat"), 0);
	ck_assert(o.block == 8192 && o.duration == 60 && o.direct && o.writethrough && o.latency && o.outstanding == 2 &&
		  o.threads == 4 && o.random && o.align == 0 && o.write_pct == 30 && o.create_size == 20ull << 30);
	ck_assert_str_eq(o.targets[0], "io.dat");
	bench_opts_free(&o);

	ck_assert_int_eq(parse(&o, err, sizeof(err), "-b 4K -r512 -z42 -Z -W0 -C1.5 -q --think 100 "
						    "--dist=zipf:0.99 --json a b"), 0);
	ck_assert(o.block == 4096 && o.align == 512 && o.seed == 42 && !o.seed_time && o.wbuf == BENCH_WBUF_ZERO);
	ck_assert(o.warmup == 0 && o.cooldown == 1.5 && o.quiet && o.think_us == 100 && o.json);
	ck_assert(o.dist.kind == BENCH_DIST_ZIPF && o.dist.theta == 0.99);
	ck_assert_uint_eq(o.ntargets, 2);
	bench_opts_free(&o);

	ck_assert_int_eq(parse(&o, err, sizeof(err), "-s128K -T 1M -z -Su --dist hot:10%/90% f"), -EINVAL);
	bench_opts_free(&o); /* hot needs -r: -s was explicit */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-s128K -T 1M -z -Su f"), 0);
	ck_assert(!o.random && o.stride == 131072 && o.thread_stride == 1 << 20 && o.seed_time && o.direct);
	bench_opts_free(&o);

	/* diskspd's caching letters and write buffers; -h is -Sh, help is -? */
	static const struct { const char *line; int direct, wt; enum bench_wbuf wbuf; uint64_t wsize; } cache[] = {
		{ "-S f", 1, 0, BENCH_WBUF_PATTERN, 0 },   { "-Su f", 1, 0, BENCH_WBUF_PATTERN, 0 },
		{ "-Sw f", 0, 1, BENCH_WBUF_PATTERN, 0 },  { "-Suw -Zr f", 1, 1, BENCH_WBUF_RANDOM_EACH, 0 },
		{ "-Swu f", 1, 1, BENCH_WBUF_PATTERN, 0 }, { "-Sbw -Z64K f", 0, 1, BENCH_WBUF_SOURCE, 65536 },
		{ "-h -Z f", 1, 1, BENCH_WBUF_ZERO, 0 },   { "-Sh -Sb f", 0, 0, BENCH_WBUF_PATTERN, 0 },
	};
	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		ck_assert_msg(parse(&o, err, sizeof(err), cache[i].line) == 0, "%s: %s", cache[i].line, err);
		ck_assert_msg(o.direct == cache[i].direct && o.writethrough == cache[i].wt && o.wbuf == cache[i].wbuf &&
			      o.wbuf_size == cache[i].wsize, "%s", cache[i].line);
		bench_opts_free(&o);
	}

	/* -g: bytes per ms, or I/Os per second; the gap between two starts */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-b8K -g400 f"), 0);
	ck_assert(o.rate == 400 && !o.rate_iops);
	ck_assert_double_eq_tol(bench_rate_gap_ns(&o), 8192.0 / 400 * 1e6, 1e-3); /* 20.48 ms */
	bench_opts_free(&o);
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-g250i f"), 0);
	ck_assert(o.rate == 250 && o.rate_iops);
	ck_assert_double_eq_tol(bench_rate_gap_ns(&o), 4e6, 1e-6);
	bench_opts_free(&o);

	/* -F: threads in all */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-F3 a b"), 0);
	ck_assert(o.fixed == 3 && o.threads == 1 && !o.threads_set);
	bench_opts_free(&o);

	/* -D alone is diskspd's 1000 ms; -Rxml */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-D -Rxml f"), 0);
	ck_assert(o.iops_ms == 1000 && o.xml);
	bench_opts_free(&o);
	ck_assert_int_eq(parse(&o, err, sizeof(err), "-D250 -Rxml -Rtext f"), 0);
	ck_assert(o.iops_ms == 250 && !o.xml);
	bench_opts_free(&o);

	/* --dist alone implies -r; --members needs no TARGET */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "--dist normal:10% --members m0,m1,m2"), 0);
	ck_assert(o.random && o.dist.kind == BENCH_DIST_NORMAL && fabs(o.dist.sigma - 0.1) < 1e-12);
	ck_assert_uint_eq(o.nmembers, 3);
	ck_assert_str_eq(o.members[2], "m2");
	bench_opts_free(&o);

	ck_assert_int_eq(parse(&o, err, sizeof(err), "-r --dist hot:20/80 -Sb f"), 0);
	ck_assert(o.dist.kind == BENCH_DIST_HOT && fabs(o.dist.hot_data - 0.2) < 1e-12 &&
		  fabs(o.dist.hot_io - 0.8) < 1e-12 && !o.direct);
	bench_opts_free(&o);
}
END_TEST

/* ---- the sweep's flags: lists make series ---- */
static int sparse(struct bench_sweep_opts *o, char *err, size_t errlen, const char *line)
{
	static char buf[512];
	char *argv[NARGS] = { "sweep" };
	int argc = 1;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < NARGS; t = strtok(NULL, " "))
		argv[argc++] = t;
	bench_sweep_defaults(o);
	return bench_sweep_parse(o, argc, argv, err, errlen);
}

static const struct {
	const char *args;
	const char *msg;
} bad_sweep[] = {
	{ "-o 1,4,1", "-o 1,4,1: '1' given twice" },
	{ "-o 1,,4", "-o 1,,4: empty value" },
	{ "-o 1,0", "-o 0: must be 1..1024" },
	{ "-o 1,2,3,4,5,6,7,8,9", "more than 8 values" },
	{ "-b 4K,3X", "-b 3X: not a size" },
	{ "-b 4K,100", "-b 100: must be 512..1G" },
	{ "--chunk 4K,96K", "--chunk 96K: must be a power of two" },
	{ "--chunk 64K,64K", "'64K' given twice" },
	{ "--model hdd --model hdd", "--model hdd: given twice" },
	{ "--model none --model none", "--model none: given twice" },
	{ "--model", "--model needs a value" },
	{ "--dist normal:x", "--dist normal:x: SIGMA is not a number" },
	{ "--dist zipf:1 --workloads seqread", "--dist: applies to randread and randwrite" },
	{ "-b 128M --size 64M", "-b 134217728: larger than --size" },
	{ "-Sh -b 1K,1000", "-b 1000: must be a multiple of 512" },
	{ "--no-fill=1", "--no-fill takes no value" },
};

START_TEST(test_sweep_bad)
{
	struct bench_sweep_opts o;
	char err[256];
	int r = sparse(&o, err, sizeof(err), bad_sweep[_i].args);
	ck_assert_msg(r == -EINVAL, "%s: accepted", bad_sweep[_i].args);
	ck_assert_msg(strstr(err, bad_sweep[_i].msg), "%s: got '%s', want '%s'", bad_sweep[_i].args, err,
		      bad_sweep[_i].msg);
}
END_TEST

START_TEST(test_sweep_lists)
{
	struct bench_sweep_opts o;
	struct bench_sweep_series se;
	char err[256], lab[160];
	ck_assert_int_eq(sparse(&o, err, sizeof(err), ""), 0);
	ck_assert_uint_eq(bench_sweep_nseries(&o), 1);
	bench_sweep_series_of(&o, 0, &se);
	ck_assert(se.chunk == 65536 && se.block == 65536 && se.qd == 4 && se.model == NULL && !o.no_fill);
	ck_assert_str_eq(bench_sweep_series_label(&o, 0, lab, sizeof(lab)), "");
	/* --out results/ joins as results/sweep.csv, never results//sweep.csv (issue 21) */
	ck_assert_int_eq(sparse(&o, err, sizeof(err), "--out results//"), 0);
	ck_assert_str_eq(o.out, "results");
	ck_assert_int_eq(sparse(&o, err, sizeof(err), "--out /"), 0);
	ck_assert_str_eq(o.out, "/");

	/* a model spec keeps its commas; each --model is one value */
	ck_assert_int_eq(sparse(&o, err, sizeof(err), "-o 1,4,16 -b 8K,64K --chunk 4K,64K --model none "
						       "--model hdd-legacy:cache=0,rpm=7200 --no-fill --dist normal:0.1"), 0);
	ck_assert_uint_eq(o.nqd, 3);
	ck_assert(o.qd[0] == 1 && o.qd[1] == 4 && o.qd[2] == 16);
	ck_assert(o.nblock == 2 && o.block[0] == 8192 && o.block[1] == 65536);
	ck_assert(o.nchunk == 2 && o.chunk[0] == 4096 && o.chunk[1] == 65536);
	ck_assert(o.nmodel == 2 && o.model[0] == NULL);
	ck_assert_str_eq(o.model[1], "hdd-legacy:cache=0,rpm=7200");
	ck_assert(o.no_fill && o.run.dist.kind == BENCH_DIST_NORMAL);
	ck_assert_uint_eq(bench_sweep_nseries(&o), 3 * 2 * 2 * 2);
	/* the queue depth varies fastest, the chunk slowest (a new volume) */
	bench_sweep_series_of(&o, 1, &se);
	ck_assert(se.qd == 4 && se.block == 8192 && se.chunk == 4096 && se.model == NULL);
	bench_sweep_series_of(&o, 3, &se);
	ck_assert(se.qd == 1 && se.block == 65536 && se.chunk == 4096);
	bench_sweep_series_of(&o, 23, &se);
	ck_assert(se.qd == 16 && se.block == 65536 && se.chunk == 65536 && se.model == o.model[1]);
	ck_assert_str_eq(bench_sweep_series_label(&o, 23, lab, sizeof(lab)),
			 "chunk 64K, hdd-legacy:cache=0,rpm=7200, -b 64K, QD 16");
	ck_assert_str_eq(bench_sweep_pattern(&o, BENCH_WL_RANDREAD, lab, sizeof(lab)), "random normal:0.1");
	ck_assert_str_eq(bench_sweep_pattern(&o, BENCH_WL_SEQWRITE, lab, sizeof(lab)), "sequential");

	/* -t multiplies the queue depth in the label; one list alone names itself */
	ck_assert_int_eq(sparse(&o, err, sizeof(err), "-t 2 -o 1,8"), 0);
	ck_assert_str_eq(bench_sweep_series_label(&o, 1, lab, sizeof(lab)), "QD 16");
}
END_TEST

/* ---- member ranges under a window, and holes there ---- */
static void geom(struct layout_geom *g, enum layout_level l, unsigned n, uint64_t chunk, uint64_t size)
{
	char err[200];
	memset(g, 0, sizeof(*g));
	g->level = l;
	g->alg = layout_default_alg(l);
	g->members = n;
	g->chunk = chunk;
	for (unsigned i = 0; i < n; i++)
		g->member_size[i] = size;
	ck_assert_msg(layout_init(g, err, sizeof(err)) == 0, "%s", err);
}

START_TEST(test_holes_ranges)
{
	struct layout_geom g;
	uint64_t lo[LAYOUT_MAX_MEMBERS], hi[LAYOUT_MAX_MEMBERS], K = 1024, M = K * K;
	/* raid0 x4, 64K: the third chunk is member 2's first */
	geom(&g, LAYOUT_RAID0, 4, 64 * K, 16 * M);
	bench_holes_ranges(&g, 128 * K, 192 * K, lo, hi);
	for (unsigned m = 0; m < 4; m++)
		ck_assert_msg(m == 2 ? lo[m] == 0 && hi[m] == 64 * K : hi[m] == 0, "m%u: [%llu, %llu)", m,
			      (unsigned long long)lo[m], (unsigned long long)hi[m]);
	/* the whole volume: every member's whole used area, also past the ends walked */
	bench_holes_ranges(&g, 0, g.capacity, lo, hi);
	for (unsigned m = 0; m < 4; m++)
		ck_assert(lo[m] == 0 && hi[m] == g.member_used);
	/* a window in the middle of a long volume: rows 100..199 */
	bench_holes_ranges(&g, 400 * 64 * K, 800 * 64 * K, lo, hi);
	for (unsigned m = 0; m < 4; m++)
		ck_assert(lo[m] == 100 * 64 * K && hi[m] == 200 * 64 * K);
	/* raid5: one data chunk's stripe includes its parity on every member */
	geom(&g, LAYOUT_RAID5, 4, 64 * K, 16 * M);
	bench_holes_ranges(&g, 0, 4 * K, lo, hi);
	for (unsigned m = 0; m < 4; m++)
		ck_assert(lo[m] == 0 && hi[m] == 64 * K);
	/* raid1: every copy */
	geom(&g, LAYOUT_RAID1, 2, 64 * K, 16 * M);
	bench_holes_ranges(&g, M, 2 * M, lo, hi);
	ck_assert(lo[0] == M && hi[0] == 2 * M && lo[1] == M && hi[1] == 2 * M);
	/* linear: a window on the second member alone, and one over the seam */
	geom(&g, LAYOUT_LINEAR, 3, 64 * K, 16 * M);
	bench_holes_ranges(&g, 17 * M, 18 * M, lo, hi);
	ck_assert(hi[0] == 0 && lo[1] == M && hi[1] == 2 * M && hi[2] == 0);
	bench_holes_ranges(&g, 15 * M, 33 * M, lo, hi);
	ck_assert(lo[0] == 15 * M && hi[0] == 16 * M && lo[1] == 0 && hi[1] == 16 * M && lo[2] == 0 && hi[2] == M);
	/* an empty window touches nothing */
	bench_holes_ranges(&g, 5 * M, 5 * M, lo, hi);
	ck_assert(hi[0] == 0 && hi[1] == 0 && hi[2] == 0);
}
END_TEST

/* The ends-only walk against every extent of the window, over levels, algorithms,
 * widths and random windows (the walk assumes member offsets grow with the
 * logical offset within each copy). */
START_TEST(test_holes_ranges_brute)
{
	static const struct { enum layout_level l; const char *alg; unsigned n; } geo[] = {
		{ LAYOUT_RAID0, NULL, 3 }, { LAYOUT_RAID0, NULL, 5 }, { LAYOUT_RAID1, NULL, 3 },
		{ LAYOUT_RAID10, "n2", 3 }, { LAYOUT_RAID10, "f2", 4 }, { LAYOUT_RAID10, "o2", 5 },
		{ LAYOUT_RAID10, "f3", 5 }, { LAYOUT_RAID4, NULL, 4 }, { LAYOUT_RAID5, "left-asymmetric", 5 },
		{ LAYOUT_RAID5, NULL, 3 }, { LAYOUT_RAID6, NULL, 6 }, { LAYOUT_LINEAR, NULL, 4 },
	};
	uint64_t seed = 12345, K = 1024;
	for (unsigned gi = 0; gi < sizeof(geo) / sizeof(geo[0]); gi++) {
		struct layout_geom g;
		char err[200];
		memset(&g, 0, sizeof(g));
		g.level = geo[gi].l;
		g.alg = layout_default_alg(g.level);
		if (geo[gi].alg)
			ck_assert(layout_parse_alg(g.level, geo[gi].alg, &g.alg, &g.copies) == 0);
		g.members = geo[gi].n;
		g.chunk = 16 * K;
		for (unsigned i = 0; i < g.members; i++)
			g.member_size[i] = (4096 + 512 * i) * K; /* linear: unequal members */
		ck_assert_msg(layout_init(&g, err, sizeof(err)) == 0, "%s", err);
		for (int t = 0; t < 40; t++) {
			uint64_t lo[LAYOUT_MAX_MEMBERS], hi[LAYOUT_MAX_MEMBERS], blo[LAYOUT_MAX_MEMBERS], bhi[LAYOUT_MAX_MEMBERS];
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t a = (seed >> 20) % g.capacity / 512 * 512;
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* half the windows short (a few rows), half up to the end */
			uint64_t span = t % 2 ? 64 * g.chunk : g.capacity - a;
			uint64_t b = a + 512 + (seed >> 20) % span / 512 * 512;
			if (b > g.capacity)
				b = g.capacity;
			bench_holes_ranges(&g, a, b, lo, hi);
			for (unsigned m = 0; m < g.members; m++)
				blo[m] = UINT64_MAX, bhi[m] = 0;
			for (uint64_t off = a; off < b;) {
				struct layout_extent e;
				uint64_t step = 0;
				for (unsigned c = 0; c < layout_copies(&g); c++) {
					ck_assert(layout_locate(&g, off, c, &e) == 0);
					uint64_t len = e.length < b - off ? e.length : b - off;
					if (e.offset < blo[e.member])
						blo[e.member] = e.offset;
					if (e.offset + len > bhi[e.member])
						bhi[e.member] = e.offset + len;
					if (!c)
						step = e.length;
				}
				off += step;
			}
			if (layout_is_parity(&g)) {
				uint64_t x = UINT64_MAX, y = 0;
				for (unsigned m = 0; m < g.members; m++)
					if (bhi[m]) {
						x = blo[m] < x ? blo[m] : x;
						y = bhi[m] > y ? bhi[m] : y;
					}
				for (unsigned m = 0; m < g.members; m++)
					blo[m] = x / g.chunk * g.chunk, bhi[m] = (y + g.chunk - 1) / g.chunk * g.chunk;
			}
			for (unsigned m = 0; m < g.members; m++)
				ck_assert_msg(hi[m] == bhi[m] && (!hi[m] || lo[m] == blo[m]),
					      "%s %s n=%u window [%llu, %llu) m%u: [%llu, %llu), brute force [%llu, %llu)",
					      layout_level_name(g.level), layout_alg_name(&g), g.members,
					      (unsigned long long)a, (unsigned long long)b, m, (unsigned long long)lo[m],
					      (unsigned long long)hi[m], (unsigned long long)blo[m], (unsigned long long)bhi[m]);
		}
	}
}
END_TEST

static char tmpdir[] = "/var/tmp/test_bench.XXXXXX";

START_TEST(test_holes_check)
{
	char p0[256], p1[256], msg[400], err[300];
	char *paths[2] = { p1, p0 }; /* any order: the superblocks say which is which */
	struct vol_create vc = { .size = 1 << 20, .name = "t", .force = 1 };
	snprintf(p0, sizeof(p0), "%s/h0", tmpdir);
	snprintf(p1, sizeof(p1), "%s/h1", tmpdir);
	vc.geom.level = LAYOUT_RAID0;
	vc.geom.chunk = 64 << 10;
	char *order[2] = { p0, p1 };
	ck_assert_msg(vol_create(&vc, order, 2, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(bench_holes_check(paths, 2, 0, 2 << 20, 0, msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "100% of the member blocks") && strstr(msg, "(holes on m0,m1)"), "%s", msg);
	/* a write-only run on raid0 reads nothing: nothing to warn about */
	ck_assert_int_eq(bench_holes_check(paths, 2, 0, 2 << 20, 1, msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "");
	/* write member 0's data area (1 MiB after the 1 MiB superblock area) */
	static char data[1 << 20];
	memset(data, 0xa5, sizeof(data));
	int fd = open(p0, O_WRONLY);
	ck_assert(fd >= 0 && pwrite(fd, data, sizeof(data), 1 << 20) == (ssize_t)sizeof(data) && !fsync(fd));
	close(fd);
	ck_assert_int_eq(bench_holes_check(paths, 2, 0, 2 << 20, 0, msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "50% of the member blocks") && strstr(msg, "(holes on m1)"), "%s", msg);
	/* a window on member 0's chunks alone: written, no warning */
	ck_assert_int_eq(bench_holes_check(paths, 2, 0, 64 << 10, 0, msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "");
	ck_assert(bench_model_hides("hdd") && bench_model_hides("0=hdd;1=ssd"));
	ck_assert(!bench_model_hides(NULL) && !bench_model_hides("none") && !bench_model_hides("0=hdd;1=none"));
	unlink(p0);
	unlink(p1);
}
END_TEST

/* ---- patterns ---- */
static struct bench_opts popts(const char *line)
{
	struct bench_opts o;
	char err[256];
	ck_assert_msg(parse(&o, err, sizeof(err), line) == 0, "%s: %s", line, err);
	return o;
}

START_TEST(test_sequential)
{
	struct bench_opts o = popts("-b 4K -s f");
	struct bench_pattern p;
	uint64_t size = 1 << 20, off;
	int w;
	ck_assert_int_eq(bench_pattern_init(&p, &o, size, 0), 0);
	/* in order, every block once, then wrap to 0 */
	for (uint64_t k = 0; k < 3 * 256; k++) {
		bench_pattern_at(&p, k, &off, &w);
		ck_assert_uint_eq(off, (k % 256) * 4096);
		ck_assert(!w);
	}
	bench_opts_free(&o);

	/* stride larger than the block; size not a multiple: last block still fits */
	o = popts("-b 4K -s16K -T 64K f");
	ck_assert_int_eq(bench_pattern_init(&p, &o, 100000, 1), 0);
	ck_assert_uint_eq(p.npos, (100000 - 4096) / 16384 + 1);
	bench_pattern_at(&p, 0, &off, &w);
	ck_assert_uint_eq(off, 65536); /* thread 1 starts at 1 x -T */
	for (uint64_t k = 0; k < 50; k++) {
		bench_pattern_at(&p, k, &off, &w);
		ck_assert(off % 16384 == 0 && off + 4096 <= 100000);
	}
	ck_assert_int_eq(bench_pattern_init(&p, &o, 4095, 0), -EINVAL);
	bench_opts_free(&o);
}
END_TEST

/* -rsPCT: PCT% of I/Os jump to a random place, the rest are the next block
 * after the one before; a run keeps its direction (diskspd: homogeneous);
 * its lengths are geometric (mean 100 / PCT). */
START_TEST(test_mixed)
{
	static const int pcts[] = { 0, 10, 30, 75, 100 };
	for (size_t t = 0; t < sizeof(pcts) / sizeof(pcts[0]); t++) {
		char line[64];
		snprintf(line, sizeof(line), "-b 4K -rs%d -w 40 -r8K f", pcts[t]);
		struct bench_opts o = popts(line);
		struct bench_pattern p;
		uint64_t size = 64ull << 20, prev = 0, off, n = 200000, jumps = 0, runs = 0, mixed = 0;
		int w, pw = 0;
		ck_assert_int_eq(o.rs_pct, pcts[t]);
		ck_assert_int_eq(bench_pattern_init(&p, &o, size, 3), 0);
		for (uint64_t k = 0; k < n; k++) {
			bench_pattern_at(&p, k, &off, &w);
			ck_assert(off + 4096 <= size);
			int seq = k && off == prev + 4096;
			if (k && !seq) {
				jumps++;
				ck_assert_uint_eq(off % 8192, 0); /* a random start is -r aligned */
			}
			if (!k || !seq)
				runs++;
			else if (w != pw)
				mixed++; /* a run changed direction */
			prev = off;
			pw = w;
		}
		double share = (double)jumps / (double)n; /* a random draw may land on the next block: rare */
		ck_assert_msg(fabs(share - pcts[t] / 100.0) < 0.01, "-rs%d: %.4f of I/Os jumped", pcts[t], share);
		/* only where a random jump happened to land on the next block */
		ck_assert_msg(mixed <= n / 10000, "-rs%d: %llu runs changed direction", pcts[t], (unsigned long long)mixed);
		bench_opts_free(&o);
	}
}
END_TEST

START_TEST(test_random_bounds)
{
	static const char *lines[] = { "-b 4K -r f", "-b 64K -r4K f", "-b 8K -r512 --dist normal:0.3 f",
				       "-b 4K -r --dist zipf:1.2 f", "-b 4K -r --dist hot:5/95 f" };
	for (unsigned l = 0; l < sizeof(lines) / sizeof(*lines); l++) {
		struct bench_opts o = popts(lines[l]);
		struct bench_pattern p;
		uint64_t size = 10 * 1000 * 1000 + 123, align = o.align ? o.align : o.block, off;
		int w;
		ck_assert_int_eq(bench_pattern_init(&p, &o, size, 3), 0);
		for (uint64_t k = 0; k < 100000; k++) {
			bench_pattern_at(&p, k, &off, &w);
			ck_assert_msg(off % align == 0 && off + o.block <= size, "%s: offset %llu", lines[l],
				      (unsigned long long)off);
		}
		bench_opts_free(&o);
	}
}
END_TEST

/* -B and -f bound every offset: [BASE, MAX - block], positions counted from BASE */
START_TEST(test_bounds_base_max)
{
	static const struct { const char *line; uint64_t lo, hi; } cases[] = {
		{ "-b 4K -r -B 1M f", 1 << 20, 10000123 },
		{ "-b 4K -r -B 1M:64K f", 1 << 20, (1 << 20) + 65536 },
		{ "-b 8K -r512 -B 1000 -f 2M f", 1000, 2 << 20 },
		{ "-b 4K -r --dist zipf:1.2 -f 96K f", 0, 98304 },
		{ "-b 4K -s -B 12K:20K f", 12288, 32768 },
		{ "-b 4K -s -t 3 -T 8K -B 4K -f 64K f", 4096, 65536 },
		{ "-b 4K -r -f 1T f", 0, 10000123 }, /* -f past the end: the end */
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct bench_opts o = popts(cases[i].line);
		struct bench_pattern p;
		uint64_t unit = o.random ? (o.align ? o.align : o.block) : o.block, off, seen_lo = UINT64_MAX, seen_hi = 0;
		int w;
		ck_assert_int_eq(bench_pattern_init(&p, &o, 10000123, 2), 0);
		for (uint64_t k = 0; k < 20000; k++) {
			bench_pattern_at(&p, k, &off, &w);
			ck_assert_msg(off >= cases[i].lo && off + o.block <= cases[i].hi && (off - cases[i].lo) % unit == 0,
				      "%s: offset %llu", cases[i].line, (unsigned long long)off);
			seen_lo = off < seen_lo ? off : seen_lo;
			seen_hi = off > seen_hi ? off : seen_hi;
		}
		/* the whole range is used: its first and its last block */
		ck_assert_msg(seen_lo == cases[i].lo, "%s: lowest %llu", cases[i].line, (unsigned long long)seen_lo);
		ck_assert_msg(seen_hi + o.block + unit > cases[i].hi, "%s: highest %llu", cases[i].line,
			      (unsigned long long)seen_hi);
		bench_opts_free(&o);
	}
	/* a range that holds no block */
	struct bench_opts o = popts("-b 8K -B 1M:4K f");
	struct bench_pattern p;
	ck_assert_int_eq(bench_pattern_init(&p, &o, 10 << 20, 0), -EINVAL);
	bench_opts_free(&o);
	o = popts("-b 4K -B 11M f");
	ck_assert_int_eq(bench_pattern_init(&p, &o, 10 << 20, 0), -EINVAL);
	bench_opts_free(&o);
}
END_TEST

START_TEST(test_reproducible)
{
	struct bench_opts o = popts("-b 4K -r -w 30 -z 7 f");
	struct bench_pattern a, b, c, d;
	uint64_t oa, ob, oc, od;
	int wa, wb, wc, wd, same_c = 0, same_d = 0, writes = 0;
	bench_pattern_init(&a, &o, 1 << 30, 0);
	bench_pattern_init(&b, &o, 1 << 30, 0);
	bench_pattern_init(&c, &o, 1 << 30, 1); /* another thread */
	o.seed = 8;
	bench_pattern_init(&d, &o, 1 << 30, 0); /* another seed */
	/* any order of k gives the same I/O k */
	for (uint64_t k = 0; k < 10000; k++) {
		bench_pattern_at(&a, k, &oa, &wa);
		bench_pattern_at(&b, 9999 - k, &ob, &wb);
		bench_pattern_at(&b, k, &ob, &wb);
		bench_pattern_at(&c, k, &oc, &wc);
		bench_pattern_at(&d, k, &od, &wd);
		ck_assert(oa == ob && wa == wb);
		same_c += oa == oc;
		same_d += oa == od;
		writes += wa;
	}
	ck_assert_int_lt(same_c, 10);
	ck_assert_int_lt(same_d, 10);
	/* -w 30: binomial(10000, 0.3), sd ~46 */
	ck_assert_int_gt(writes, 3000 - 250);
	ck_assert_int_lt(writes, 3000 + 250);
	bench_opts_free(&o);
}
END_TEST

/* chi-square statistic of observed vs expected counts */
static double chi2(const double *obs, const double *exp, unsigned n)
{
	double x = 0;
	for (unsigned i = 0; i < n; i++)
		x += (obs[i] - exp[i]) * (obs[i] - exp[i]) / exp[i];
	return x;
}

#define SAMPLES 200000

START_TEST(test_dist_uniform)
{
	struct bench_opts o = popts("-b 4K -r f");
	struct bench_pattern p;
	double obs[100] = { 0 }, exp[100];
	bench_pattern_init(&p, &o, 4096ull * 100000, 0);
	for (uint64_t k = 0; k < SAMPLES; k++)
		obs[bench_pattern_record(&p, k) * 100 / p.npos]++;
	for (int i = 0; i < 100; i++)
		exp[i] = SAMPLES / 100.0;
	/* 99 degrees of freedom: P(chi2 > 148.2) = 0.001 */
	ck_assert_double_lt(chi2(obs, exp, 100), 148.2);
	bench_opts_free(&o);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

START_TEST(test_dist_normal)
{
	/* sigma 10% of the range: the truncation at +-5 sigma is negligible */
	struct bench_opts o = popts("-b 4K --dist normal:0.1 f");
	struct bench_pattern p;
	uint64_t *x = malloc(SAMPLES * sizeof(*x));
	ck_assert_ptr_nonnull(x);
	bench_pattern_init(&p, &o, 4096ull * 100000, 2);
	for (uint64_t k = 0; k < SAMPLES; k++)
		x[k] = bench_pattern_record(&p, k);
	qsort(x, SAMPLES, sizeof(*x), cmp_u64);
	double n = (double)p.npos, mean = (n - 1) / 2, sd = 0.1 * n, dmax = 0;
	for (uint64_t i = 0; i < SAMPLES; i++) {
		/* records are rounded: compare at the record's upper edge */
		double f = 0.5 * erfc(-((double)x[i] + 0.5 - mean) / (sd * M_SQRT2));
		double lo = fabs(f - (double)i / SAMPLES), hi = fabs(f - (double)(i + 1) / SAMPLES);
		dmax = fmax(dmax, fmax(lo, hi));
	}
	/* Kolmogorov-Smirnov: P(sqrt(n) D > 1.95) = 0.001 */
	ck_assert_double_lt(dmax * sqrt(SAMPLES), 1.95);
	free(x);
	bench_opts_free(&o);
}
END_TEST

START_TEST(test_dist_zipf)
{
	static const double thetas[] = { 0.5, 0.99, 1.0, 1.2 };
	for (unsigned t = 0; t < 4; t++) {
		char line[64];
		snprintf(line, sizeof(line), "-b 4K --dist zipf:%g f", thetas[t]);
		struct bench_opts o = popts(line);
		struct bench_pattern p;
		/* bins: ranks 1..20 one each, then 21-50, 51-100, 101-200, 201-500, 501-1000 */
		static const unsigned edge[] = { 20, 50, 100, 200, 500, 1000 };
		double obs[25] = { 0 }, exp[25] = { 0 }, z = 0;
		bench_pattern_init(&p, &o, 4096ull * 1000, 0);
		ck_assert_uint_eq(p.npos, 1000);
		for (unsigned k = 1; k <= 1000; k++)
			z += pow(k, -thetas[t]);
		for (unsigned k = 1; k <= 1000; k++) {
			unsigned b = k <= 20 ? k - 1 : 0;
			for (unsigned e = 1; k > 20 && e < 6; e++)
				if (k <= edge[e] && k > edge[e - 1])
					b = 19 + e;
			exp[b] += SAMPLES * pow(k, -thetas[t]) / z;
		}
		for (uint64_t k = 0; k < SAMPLES; k++) {
			uint64_t r = bench_pattern_record(&p, k) + 1;
			unsigned b = r <= 20 ? (unsigned)r - 1 : 0;
			for (unsigned e = 1; r > 20 && e < 6; e++)
				if (r <= edge[e] && r > edge[e - 1])
					b = 19 + e;
			obs[b]++;
		}
		/* 24 degrees of freedom: P(chi2 > 51.2) = 0.001 */
		double x = chi2(obs, exp, 25);
		ck_assert_msg(x < 51.2, "zipf:%g chi2 %.1f", thetas[t], x);
		bench_opts_free(&o);
	}
}
END_TEST

START_TEST(test_dist_hot)
{
	struct bench_opts o = popts("-b 4K --dist hot:10/90 f");
	struct bench_pattern p;
	double obs[20] = { 0 }, exp[20];
	uint64_t hot = 0;
	bench_pattern_init(&p, &o, 4096ull * 100000, 0);
	ck_assert_uint_eq(p.hot_n, 10000);
	for (uint64_t k = 0; k < SAMPLES; k++) {
		uint64_t r = bench_pattern_record(&p, k);
		hot += r < p.hot_n;
		/* 10 bins over the hot area, 10 over the rest */
		obs[r < p.hot_n ? r * 10 / p.hot_n : 10 + (r - p.hot_n) * 10 / (p.npos - p.hot_n)]++;
	}
	/* 90% of the I/Os hit the hot 10%: binomial sd ~134, allow 5 sd */
	ck_assert_double_lt(fabs((double)hot - 0.9 * SAMPLES), 5 * sqrt(SAMPLES * 0.9 * 0.1));
	for (int i = 0; i < 20; i++)
		exp[i] = i < 10 ? hot / 10.0 : (SAMPLES - hot) / 10.0;
	/* uniform inside each area: 18 degrees of freedom, P(chi2 > 42.3) = 0.001 */
	ck_assert_double_lt(chi2(obs, exp, 20), 42.3);
	bench_opts_free(&o);
}
END_TEST

/* ---- a short real run: figures reconcile, JSON equals text ---- */

/* The number after "key": in s (first occurrence at or after from). */
static double jnum(const char *s, const char *from_key, const char *key)
{
	const char *p = from_key ? strstr(s, from_key) : s;
	ck_assert_msg(p, "no %s", from_key);
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	ck_assert_msg(p, "no %s", key);
	return strtod(p + strlen(k), NULL);
}

/* /proc/stat's summary line is not core 0, and a 2-core machine has 2 rows
 * (issue 21, point 5: "cpu%u" read "cpu  10 ..." as core 10). */
START_TEST(test_cpu_parse)
{
	static const char text[] = "cpu  900 0 300 9000 10 0 5 0 0 0\n"
				   "cpu0 100 1 20 4000 3 0 2 0 0 0\n"
				   "cpu3 200 2 40 5000 7 1 3 9 0 0\n"
				   "intr 12345 0 0\nctxt 999\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct bench_cpu_raw *c = NULL;
	unsigned n = 0;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bench_cpu_parse(f, &c, &n), 0);
	fclose(f);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(c[0].id, 0);
	ck_assert_uint_eq(c[0].user, 101);
	ck_assert_uint_eq(c[0].kernel, 22);
	ck_assert_uint_eq(c[0].idle, 4003);
	ck_assert_uint_eq(c[1].id, 3); /* an offline core leaves a gap, kept */
	ck_assert_uint_eq(c[1].kernel, 44);
	free(c);

	/* the real file: one row per online core */
	ck_assert_int_eq(bench_cpu_read(&c, &n), 0);
	ck_assert_uint_eq(n, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned i = 1; i < n; i++)
		ck_assert_uint_gt(c[i].id, c[i - 1].id);
	free(c);
}
END_TEST

START_TEST(test_real_run)
{
	struct bench_opts o;
	struct bench_result *r;
	char err[512], path[256], line[512];
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	snprintf(line, sizeof(line), "-b 4K -r -w 25 -o 4 -t 2 -d 0.5 -W 0.1 -C 0.1 -L -c 4M -q %s", path);
	ck_assert_int_eq(parse(&o, err, sizeof(err), line), 0);
	ck_assert_msg(bench_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_uint_eq(r->nthreads, 2);
	ck_assert_uint_eq(r->target[0].size, 4 << 20);
	ck_assert_uint_eq(r->ncpu, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_double_eq_tol(r->cpu_avg.user + r->cpu_avg.kernel + r->cpu_avg.idle, 100, 0.5);

	struct bench_opstat sum[3] = { 0 };
	for (unsigned t = 0; t < r->nthreads; t++)
		for (int op = 0; op < 2; op++) {
			const struct bench_opstat *s = &r->thread[t].op[op];
			ck_assert_uint_eq(s->bytes, s->ios * o.block); /* bytes = I/Os x block */
			bench_opstat_add(&sum[op], s);
			bench_opstat_add(&sum[2], s);
		}
	ck_assert_uint_gt(sum[0].ios, 0);
	ck_assert_uint_gt(sum[1].ios, 0);
	for (int op = 0; op < 3; op++) {
		struct bench_figs g;
		double ms[BENCH_NPCT];
		bench_figs_of(&sum[op], r->test_s, &g);
		ck_assert_double_eq_tol(g.mb_s * 1048576 * r->test_s, (double)g.bytes, 1e-6 * g.bytes);
		ck_assert_double_eq_tol(g.iops * r->test_s, (double)g.ios, 1e-6 * g.ios);
		ck_assert_int_eq(bench_percentiles(&sum[op], ms), BENCH_NPCT);
		for (int i = 1; i < BENCH_NPCT; i++)
			ck_assert(ms[i] >= ms[i - 1]);
		ck_assert(ms[0] <= g.avg_ms && g.avg_ms <= ms[BENCH_NPCT - 1]);
	}
	/* the histogram's count is the I/O count */
	uint64_t n = 0;
	for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
		n += sum[2].hist[i];
	ck_assert_uint_eq(n, sum[2].ios);

	/* JSON equals text: the total rows and the 50th percentile */
	char *txt = NULL, *js = NULL;
	size_t tl, jl;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(bench_report_text(f, &o, r), 0);
	fclose(f);
	f = open_memstream(&js, &jl);
	ck_assert_int_eq(bench_report_json(f, &o, r), 0);
	fclose(f);
	static const char *const sect[3] = { "Read IO", "Write IO", "Total IO" };
	static const char *const jop[3] = { "\"read\":", "\"write\":", ",\"total\":" };
	const char *jtot = strstr(js, "\"total\":{\"read\"");
	ck_assert_ptr_nonnull(jtot);
	for (int op = 0; op < 3; op++) {
		const char *s = strstr(txt, sect[op]);
		ck_assert_ptr_nonnull(s);
		s = strstr(s, "total:");
		ck_assert_ptr_nonnull(s);
		unsigned long long bytes, ios;
		double mbs, iops, avg, sd;
		ck_assert_int_eq(sscanf(s, "total: %llu | %llu | %lf | %lf | %lf | %lf", &bytes, &ios, &mbs, &iops,
					&avg, &sd), 6);
		const char *j = strstr(jtot, jop[op]);
		ck_assert_uint_eq(bytes, (uint64_t)jnum(j, NULL, "bytes"));
		ck_assert_uint_eq(ios, (uint64_t)jnum(j, NULL, "ios"));
		ck_assert_double_eq_tol(mbs, jnum(j, NULL, "mb_s"), 0.0051);
		ck_assert_double_eq_tol(iops, jnum(j, NULL, "iops"), 0.0051);
		ck_assert_double_eq_tol(avg, jnum(j, NULL, "avg_lat_ms"), 0.00051);
		ck_assert_double_eq_tol(sd, jnum(j, NULL, "lat_stddev_ms"), 0.00051);
		ck_assert_uint_eq(bytes, sum[op].bytes);
	}
	double p50;
	const char *s = strstr(txt, "   50th |");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sscanf(s, " 50th | %*f | %*f | %lf", &p50), 1);
	ck_assert_double_eq_tol(p50, jnum(strstr(js, "\"latency_ms\""), "\"total\":{", "50th"), 0.00051);
	free(txt);
	free(js);
	bench_result_free(r);
	bench_opts_free(&o);
}
END_TEST

/* --create: a fresh memory volume, its I/O conserved, the process CPU per
 * I/O reported in both forms. */
START_TEST(test_create_run)
{
	struct bench_opts o;
	struct bench_result *r;
	char err[512];
	ck_assert_int_eq(parse(&o, err, sizeof(err), "--create raid5,16K --members mem:cr0:8M,mem:cr1:8M,mem:cr2:8M "
			       "-b 4K -r -w 50 -o 8 -d 0.3 -W 0.1 -q"), 0);
	ck_assert_msg(bench_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(r->target[0].below);
	ck_assert_str_eq(r->target[0].below->level, "raid5");
	ck_assert(r->have_proc);
	ck_assert(r->proc_user_s + r->proc_sys_s > 0);
	double u, k;
	bench_proc_cpu_per_io(r, &u, &k);
	ck_assert(u + k > 0);
	char *js = NULL;
	size_t jl;
	FILE *f = open_memstream(&js, &jl);
	ck_assert_int_eq(bench_report_json(f, &o, r), 0);
	fclose(f);
	ck_assert_double_eq_tol(jnum(js, "\"process_cpu\"", "per_io_us"), u + k, 0.0001);
	free(js);
	bench_result_free(r);
	/* again on the same names: the volume is made afresh */
	ck_assert_msg(bench_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
	bench_result_free(r);
	bench_opts_free(&o);
	/* without --create, memory members carry no volume: refused by name */
	ck_assert_int_eq(parse(&o, err, sizeof(err), "--members mem:cx0:8M,mem:cx1:8M -d 0.1 -W0 -q"), 0);
	ck_assert_int_ne(bench_run(&o, &r, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "mem:cx"));
	bench_opts_free(&o);
}
END_TEST

START_TEST(test_run_errors)
{
	struct bench_opts o;
	struct bench_result *r;
	char err[512], line[512];
	snprintf(line, sizeof(line), "-d 0.1 -W0 -q %s/missing", tmpdir);
	ck_assert_int_eq(parse(&o, err, sizeof(err), line), 0);
	ck_assert_int_eq(bench_run(&o, &r, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "missing"));
	bench_opts_free(&o);
	/* a file smaller than one block */
	snprintf(line, sizeof(line), "-b 64K -c 4K -d 0.1 -W0 -q %s/small", tmpdir);
	ck_assert_int_eq(parse(&o, err, sizeof(err), line), 0);
	ck_assert_int_eq(bench_run(&o, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "smaller than the block size"));
	bench_opts_free(&o);
}
END_TEST

static void cleanup(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "cleanup of %s failed\n", tmpdir);
}

/* ---- replay: where a trace's requests land on a smaller target ---- */
START_TEST(test_replay_map)
{
	struct tracefile t = { 0 };
	struct bench_opts o;
	char err[256];
	bench_opts_default(&o);
	o.replay = "t.log";
	o.trace = &t;
	for (uint64_t i = 0; i < 64; i++) {
		struct tracefile_rec r = { .off = i * 1048576 + 512 * (i % 7), .len = 4096 * (1 + i % 4),
					   .op = i % 3 ? TRACEFILE_READ : TRACEFILE_WRITE, .line = (uint32_t)i + 1 };
		ck_assert_int_eq(tracefile_push(&t, &r), 0);
	}
	uint64_t size = 8 << 20;
	/* none: refused, naming the line that first goes beyond */
	ck_assert_int_eq(bench_replay_fits(&o, size, "tgt", err, sizeof(err)), -ERANGE);
	ck_assert_msg(strstr(err, "t.log:9: the trace addresses up to") && strstr(err, "beyond the end of tgt"), "%s",
		      err);
	ck_assert_int_eq(bench_replay_fits(&o, t.max_end, "tgt", err, sizeof(err)), 0);
	for (int map = BENCH_MAP_WRAP; map <= BENCH_MAP_SCALE; map++) {
		o.replay_map = map;
		ck_assert_int_eq(bench_replay_fits(&o, size, "tgt", err, sizeof(err)), 0);
		uint64_t prev = 0;
		for (size_t i = 0; i < t.n; i++) {
			uint64_t x = bench_replay_offset(&o, &t.rec[i], size);
			ck_assert_uint_le(x + t.rec[i].len, size);
			ck_assert_uint_eq(x % 512, 0);
			if (map == BENCH_MAP_WRAP && t.rec[i].off % size + t.rec[i].len <= size)
				ck_assert_uint_eq(x, t.rec[i].off % size); /* modulo, when it fits */
			if (map == BENCH_MAP_SCALE) {
				ck_assert_uint_ge(x, prev); /* order kept */
				prev = x;
			}
		}
	}
	/* a request larger than the target is refused whatever the map */
	ck_assert_int_eq(bench_replay_fits(&o, 8192, "tgt", err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "is larger than tgt"), "%s", err);
	/* a target that holds it all: offsets as in the trace */
	for (size_t i = 0; i < t.n; i++)
		ck_assert_uint_eq(bench_replay_offset(&o, &t.rec[i], t.max_end), t.rec[i].off);
	tracefile_free(&t);
}
END_TEST

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("bench");
	TCase *tc = tcase_create("flags");
	tcase_add_loop_test(tc, test_bad_flags, 0, sizeof(bad_flags) / sizeof(bad_flags[0]));
	tcase_add_test(tc, test_good_flags);
	tcase_add_loop_test(tc, test_sweep_bad, 0, sizeof(bad_sweep) / sizeof(bad_sweep[0]));
	tcase_add_test(tc, test_sweep_lists);
	tcase_add_test(tc, test_replay_map);
	suite_add_tcase(s, tc);
	tc = tcase_create("holes");
	tcase_add_test(tc, test_holes_ranges);
	tcase_add_test(tc, test_holes_ranges_brute);
	tcase_add_test(tc, test_holes_check);
	suite_add_tcase(s, tc);
	tc = tcase_create("patterns");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sequential);
	tcase_add_test(tc, test_mixed);
	tcase_add_test(tc, test_random_bounds);
	tcase_add_test(tc, test_bounds_base_max);
	tcase_add_test(tc, test_reproducible);
	tcase_add_test(tc, test_dist_uniform);
	tcase_add_test(tc, test_dist_normal);
	tcase_add_test(tc, test_dist_zipf);
	tcase_add_test(tc, test_dist_hot);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cpu_parse);
	tcase_add_test(tc, test_real_run);
	tcase_add_test(tc, test_create_run);
	tcase_add_test(tc, test_run_errors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
