/* opts: fsvol-bench's flags. One table drives the parser and --help.
 * diskspd style: values may be attached ("-b64K", "-r4K", "-z7") or, for
 * flags that need one, the next argument ("-b 64K"); optional values
 * (-r, -s, -z, -S) must be attached, as diskspd has them. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/flags.h"
#include "fsvol/util/size.h"
#include "layout/layout.h"

/* c->o is the struct bench_opts being filled */
#define O(c) ((struct bench_opts *)(c)->o)

static int set_b(struct bench_flag_ctx *c, const char *v) { return bench_flag_size(c, v, &O(c)->block, 1, 1ull << 30); }
static int set_d(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &O(c)->duration, 0); }
static int set_W(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &O(c)->warmup, 1); }
static int set_C(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &O(c)->cooldown, 1); }

static int set_o(struct bench_flag_ctx *c, const char *v)
{
	uint64_t x;
	int r = bench_flag_u64(c, v, &x, 1, 1024);
	O(c)->outstanding = (unsigned)x;
	return r;
}

static int set_t(struct bench_flag_ctx *c, const char *v)
{
	uint64_t x;
	int r = bench_flag_u64(c, v, &x, 1, 256);
	O(c)->threads = (unsigned)x;
	O(c)->threads_set = 1;
	return r;
}

/* -F N: N threads in all, each driving every target (diskspd's fixed threads). */
static int set_F(struct bench_flag_ctx *c, const char *v) { return bench_flag_uint(c, v, &O(c)->fixed, 1, 256); }

static int set_pattern(struct bench_flag_ctx *c, int random)
{
	if (O(c)->pattern_set && O(c)->random != random)
		return bench_flag_bad(c, NULL, "-r and -s exclude each other");
	O(c)->pattern_set = 1;
	O(c)->random = random;
	return 0;
}

/* -r[ALIGN], or -rsPCT: diskspd's mix of random and sequential (each I/O
 * random with probability PCT, else the next block of the current run). */
static int set_r(struct bench_flag_ctx *c, const char *v)
{
	if (*v == 's') {
		uint64_t x;
		if (bench_flag_u64(c, v + 1, &x, 0, 100))
			return bench_flag_bad(c, v, "expected -rsPCT, the percentage of random I/Os 0..100");
		O(c)->rs_pct = (int)x;
	} else if (*v && bench_flag_size(c, v, &O(c)->align, 1, 1ull << 40)) {
		return -EINVAL;
	}
	return set_pattern(c, 1);
}

/* -s[STRIDE], or -si[STRIDE]: the threads of a target interlock on one
 * shared sequential position (diskspd's -si). */
static int set_s(struct bench_flag_ctx *c, const char *v)
{
	if (*v == 'i') {
		O(c)->interlocked = 1;
		v++;
	}
	if (*v && bench_flag_size(c, v, &O(c)->stride, 1, 1ull << 40))
		return -EINVAL;
	return set_pattern(c, 0);
}

static int set_T(struct bench_flag_ctx *c, const char *v) { return bench_flag_size(c, v, &O(c)->thread_stride, 0, 1ull << 50); }

/* -B BASE[:LENGTH] and -f MAX: the bounds of the I/O, as diskspd's (-B b -f b+l
 * is -B b:l); the maximum may be given once. */
static int set_max(struct bench_flag_ctx *c, const char *v, uint64_t max)
{
	if (O(c)->max_off)
		return bench_flag_bad(c, v, "the maximum offset is already set (-B BASE:LENGTH or -f, once)");
	O(c)->max_off = max;
	return 0;
}

static int set_B(struct bench_flag_ctx *c, const char *v)
{
	char part[64];
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	uint64_t base, len = 0;
	if (n >= sizeof(part))
		n = sizeof(part) - 1; /* too long to be a size: fails below */
	memcpy(part, v, n);
	part[n] = 0;
	if (size_parse(part, &base) || base > 1ull << 50)
		return bench_flag_bad(c, v, "BASE is not a size of 0..1P (BASE[:LENGTH])");
	if (colon && (size_parse(colon + 1, &len) || len == 0 || len > 1ull << 50))
		return bench_flag_bad(c, v, "LENGTH is not a size of 1..1P (BASE[:LENGTH])");
	O(c)->base = base;
	return colon ? set_max(c, v, base + len) : 0;
}

static int set_f(struct bench_flag_ctx *c, const char *v)
{
	uint64_t max;
	if (bench_flag_size(c, v, &max, 1, 1ull << 50))
		return -EINVAL;
	return set_max(c, v, max);
}

static int set_w(struct bench_flag_ctx *c, const char *v)
{
	uint64_t x;
	char *end;
	if (!*v || *v == '-' || (strtoull(v, &end, 10), *end))
		return bench_flag_bad(c, v, "not a number (a write percentage 0..100)");
	if (bench_flag_u64(c, v, &x, 0, 100))
		return bench_flag_bad(c, v, "must be 0..100");
	O(c)->write_pct = (unsigned)x;
	return 0;
}

static int set_c(struct bench_flag_ctx *c, const char *v) { return bench_flag_size(c, v, &O(c)->create_size, 1, 1ull << 50); }

/* -S[bhuw]: diskspd's caching flags, combined in any order (-Suw, -Swu,
 * -Sbw): u no software cache (O_DIRECT), w write-through (O_DSYNC), h both,
 * b the cache on (the default); -S alone is -Su. */
static int set_S(struct bench_flag_ctx *c, const char *v)
{
	int b = 0, u = !*v, w = 0;
	for (const char *p = v; *p; p++)
		switch (*p) {
		case 'b': b = 1; break;
		case 'u': u = 1; break;
		case 'w': w = 1; break;
		case 'h': u = w = 1; break;
		case 'm':
		case 'r':
			return bench_flag_bad(c, v, "-S%c (%s) is Windows-only in diskspd; fsvol-bench has -S[bhuw]", *p,
					      *p == 'm' ? "memory-mapped I/O" : "remote caching");
		default:
			return bench_flag_bad(c, v, "expected -S[bhuw]: -S or -Su no software cache (O_DIRECT), -Sw "
					      "write-through (O_DSYNC), -Sh both (= -Suw), -Sb caching (default)");
		}
	if (b && u)
		return bench_flag_bad(c, v, "b (caching on) conflicts with u and h (caching off)");
	O(c)->direct = u;
	O(c)->writethrough = w;
	return 0;
}

/* -h: diskspd's deprecated spelling of -Sh (help is -? or --help). */
static int set_h(struct bench_flag_ctx *c, const char *v)
{
	(void)v;
	O(c)->direct = O(c)->writethrough = 1;
	return 0;
}

static int set_L(struct bench_flag_ctx *c, const char *v) { (void)v; O(c)->latency = 1; return 0; }

static int set_z(struct bench_flag_ctx *c, const char *v)
{
	if (!*v) {
		O(c)->seed_time = 1;
		return 0;
	}
	O(c)->seed_time = 0;
	return bench_flag_u64(c, v, &O(c)->seed, 0, UINT64_MAX);
}

/* -Z zeros, -Zr random per write, -ZSIZE[K|M|G|b] a random source buffer. */
static int set_Z(struct bench_flag_ctx *c, const char *v)
{
	struct bench_opts *o = O(c);
	if (!*v) {
		o->wbuf = BENCH_WBUF_ZERO;
	} else if (!strcmp(v, "r")) {
		o->wbuf = BENCH_WBUF_RANDOM_EACH;
	} else if (strchr(v, ',')) {
		return bench_flag_bad(c, v, "-ZSIZE,FILE (a source buffer from a file) is not supported; -ZSIZE fills it "
				      "with random data");
	} else {
		if (bench_flag_size(c, v, &o->wbuf_size, 4096, 1ull << 30))
			return -EINVAL;
		if (o->wbuf_size % 4096)
			return bench_flag_bad(c, v, "the source buffer must be a multiple of 4K");
		o->wbuf = BENCH_WBUF_SOURCE;
	}
	return 0;
}
static int set_q(struct bench_flag_ctx *c, const char *v) { (void)v; O(c)->quiet = 1; return 0; }
static int set_json(struct bench_flag_ctx *c, const char *v) { (void)v; O(c)->json = 1; return 0; }

/* "12.5", "12.5%" -> 0.125 when pct; a plain fraction otherwise. */
static int get_frac(const char *s, char **end, double *out)
{
	double x = strtod(s, end);
	if (*end == s || !isfinite(x))
		return -EINVAL;
	if (**end == '%') {
		x /= 100;
		(*end)++;
	}
	*out = x;
	return 0;
}

int bench_flag_dist(struct bench_flag_ctx *c, const char *v, struct bench_dist *out)
{
	struct bench_dist d = { 0 };
	char *end;
	const char *usage = "expected uniform, normal:SIGMA, zipf:THETA or hot:DATA%/IO%";
	if (!strcmp(v, "uniform")) {
		d.kind = BENCH_DIST_UNIFORM;
	} else if (!strncmp(v, "normal:", 7)) {
		d.kind = BENCH_DIST_NORMAL;
		if (get_frac(v + 7, &end, &d.sigma) || *end)
			return bench_flag_bad(c, v, "SIGMA is not a number (a fraction of the range, 0.1 or 10%%)");
		if (!(d.sigma > 0) || d.sigma > 10)
			return bench_flag_bad(c, v, "SIGMA must be in (0, 10] (a fraction of the range)");
	} else if (!strncmp(v, "zipf:", 5)) {
		d.kind = BENCH_DIST_ZIPF;
		d.theta = strtod(v + 5, &end);
		if (end == v + 5 || *end || !isfinite(d.theta))
			return bench_flag_bad(c, v, "THETA is not a number");
		if (!(d.theta > 0) || d.theta > 10)
			return bench_flag_bad(c, v, "THETA must be in (0, 10]");
	} else if (!strncmp(v, "hot:", 4)) {
		d.kind = BENCH_DIST_HOT;
		/* DATA and IO are percentages, with or without '%' */
		d.hot_data = strtod(v + 4, &end);
		if (end == v + 4 || !isfinite(d.hot_data))
			return bench_flag_bad(c, v, "DATA is not a number (hot:DATA%%/IO%%, e.g. hot:10/90)");
		if (*end == '%')
			end++;
		if (*end != '/')
			return bench_flag_bad(c, v, "expected hot:DATA%%/IO%%, e.g. hot:10/90");
		const char *io = end + 1;
		d.hot_io = strtod(io, &end);
		if (end == io || !isfinite(d.hot_io))
			return bench_flag_bad(c, v, "IO is not a number (hot:DATA%%/IO%%, e.g. hot:10/90)");
		if (*end == '%')
			end++;
		if (*end)
			return bench_flag_bad(c, v, "expected hot:DATA%%/IO%%, e.g. hot:10/90");
		if (!(d.hot_data > 0 && d.hot_data < 100))
			return bench_flag_bad(c, v, "DATA%% must be in (0, 100)");
		if (!(d.hot_io >= 0 && d.hot_io <= 100))
			return bench_flag_bad(c, v, "IO%% must be in [0, 100]");
		d.hot_data /= 100;
		d.hot_io /= 100;
	} else {
		return bench_flag_bad(c, v, "%s", usage);
	}
	*out = d;
	return 0;
}

static int set_dist(struct bench_flag_ctx *c, const char *v)
{
	if (bench_flag_dist(c, v, &O(c)->dist))
		return -EINVAL;
	O(c)->dist_set = 1;
	return 0;
}

/* -g VALUE[i]: bytes per millisecond, or with i I/Os per second (diskspd's). */
static int set_g(struct bench_flag_ctx *c, const char *v)
{
	char num[32];
	size_t n = strlen(v);
	int iops = n && v[n - 1] == 'i';
	if (iops)
		n--;
	if (n >= sizeof(num))
		return bench_flag_bad(c, v, "not a number");
	memcpy(num, v, n);
	num[n] = 0;
	if (bench_flag_u64(c, num, &O(c)->rate, 1, 1ull << 40))
		return bench_flag_bad(c, v, "expected -gBYTES_PER_MS or -gIOPSi, a whole number from 1");
	O(c)->rate_iops = iops;
	return 0;
}

/* -D[MS]: per-interval IOPS, every MS milliseconds (default 1000). */
static int set_D(struct bench_flag_ctx *c, const char *v)
{
	if (!*v) {
		O(c)->iops_ms = 1000;
		return 0;
	}
	return bench_flag_uint(c, v, &O(c)->iops_ms, 1, 3600000);
}

/* -Rtext, -Rxml: the report's format (diskspd's -R; its p prefix is not here). */
static int set_R(struct bench_flag_ctx *c, const char *v)
{
	if (!strcmp(v, "xml"))
		O(c)->xml = 1;
	else if (!strcmp(v, "text"))
		O(c)->xml = 0;
	else
		return bench_flag_bad(c, v, "expected -Rtext or -Rxml (JSON: --json)");
	return 0;
}

double bench_rate_gap_ns(const struct bench_opts *o)
{
	if (!o->rate)
		return 0;
	/* bytes/ms: a block every block / rate ms = 1e6 * block / rate ns */
	return o->rate_iops ? 1e9 / (double)o->rate : 1e6 * (double)o->block / (double)o->rate;
}

static int set_think(struct bench_flag_ctx *c, const char *v) { return bench_flag_u64(c, v, &O(c)->think_us, 0, 10000000); }

static int set_members(struct bench_flag_ctx *c, const char *v)
{
	struct bench_opts *o = O(c);
	free(o->members_buf);
	o->nmembers = 0;
	if (!(o->members_buf = strdup(v)))
		return bench_flag_bad(c, NULL, "out of memory");
	for (char *s = o->members_buf, *next; s; s = next) {
		next = strchr(s, ',');
		if (next)
			*next++ = 0;
		if (!*s)
			return bench_flag_bad(c, v, "empty member name (a comma-separated list of member files)");
		if (o->nmembers == BENCH_MAX_MEMBERS)
			return bench_flag_bad(c, v, "more than %d members", BENCH_MAX_MEMBERS);
		o->members[o->nmembers++] = s;
	}
	return 0;
}

/* --create LEVEL[,CHUNK]: the level as fsvol create -l takes it, its default
 * layout, the chunk (default 512K, as fsvol create). */
static int set_create(struct bench_flag_ctx *c, const char *v)
{
	struct bench_opts *o = O(c);
	char level[32], why[160];
	const char *comma = strchr(v, ',');
	size_t n = comma ? (size_t)(comma - v) : strlen(v);
	enum layout_level lv;
	if (!n || n >= sizeof(level))
		return bench_flag_bad(c, v, "expected LEVEL[,CHUNK] (e.g. raid5,64K)");
	memcpy(level, v, n);
	level[n] = 0;
	if (layout_parse_level_msg(level, &lv, why, sizeof(why)))
		return bench_flag_bad(c, v, "%s", why);
	o->create_chunk = 512 << 10;
	if (comma && (bench_flag_size(c, comma + 1, &o->create_chunk, 4096, 1ull << 30) ||
		      (o->create_chunk & (o->create_chunk - 1))))
		return bench_flag_bad(c, v, "CHUNK must be a power of two from 4K to 1G");
	o->create = 1;
	o->create_level = (int)lv;
	o->create_alg = layout_default_alg(lv);
	o->create_copies = 0;
	return 0;
}

static int set_model(struct bench_flag_ctx *c, const char *v)
{
	/* checked when the volume is opened (fsvol's --model spec grammar) */
	O(c)->model = v;
	return 0;
}

/* ---- --replay and its company (bench/replay.c) ---- */
static int set_ctl(struct bench_flag_ctx *c, const char *v)
{
	/* checked when the volume is opened (fsvol's ctl grammar) */
	if (O(c)->nctl == sizeof(O(c)->ctl) / sizeof(O(c)->ctl[0]))
		return bench_flag_bad(c, v, "at most %zu settings", sizeof(O(c)->ctl) / sizeof(O(c)->ctl[0]));
	O(c)->ctl[O(c)->nctl++] = v;
	return 0;
}

static int set_replay(struct bench_flag_ctx *c, const char *v) { O(c)->replay = v; return 0; }

static int set_replay_format(struct bench_flag_ctx *c, const char *v)
{
	enum tracefile_fmt f;
	if (tracefile_fmt_parse(v, &f) || f == TRACEFILE_AUTO)
		return bench_flag_bad(c, v, "expected fio, fio2, fio3, blkparse, msr, disksim or valid");
	O(c)->replay_fmt = (int)f;
	return 0;
}

static int set_replay_speed(struct bench_flag_ctx *c, const char *v)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || *end || !isfinite(x) || !(x >= 0.001) || x > 1e6)
		return bench_flag_bad(c, v, "expected a factor of 0.001..1000000 (2: twice as fast as recorded)");
	O(c)->replay_speed = x;
	return 0;
}

static int set_replay_afap(struct bench_flag_ctx *c, const char *v) { (void)v; O(c)->replay_afap = 1; return 0; }

static int set_replay_map(struct bench_flag_ctx *c, const char *v)
{
	if (!strcmp(v, "wrap"))
		O(c)->replay_map = BENCH_MAP_WRAP;
	else if (!strcmp(v, "scale"))
		O(c)->replay_map = BENCH_MAP_SCALE;
	else if (!strcmp(v, "none"))
		O(c)->replay_map = BENCH_MAP_NONE;
	else
		return bench_flag_bad(c, v, "expected wrap, scale or none");
	return 0;
}

static int set_latency_log(struct bench_flag_ctx *c, const char *v) { O(c)->latency_log = v; return 0; }
static int set_virtual(struct bench_flag_ctx *c, const char *v) { (void)v; O(c)->virtual_time = 1; return 0; }
static int set_compare(struct bench_flag_ctx *c, const char *v) { O(c)->compare = v; return 0; }
static int set_out(struct bench_flag_ctx *c, const char *v) { O(c)->out = v; return 0; }

static const struct bench_flag opts[] = {
	{ 'b', NULL, BENCH_FLAG_REQ, "SIZE", "block size (default 64K)", set_b },
	{ 'd', NULL, BENCH_FLAG_REQ, "SEC", "measured duration (default 10)", set_d },
	{ 'W', NULL, BENCH_FLAG_REQ, "SEC", "warm-up before measuring (default 5)", set_W },
	{ 'C', NULL, BENCH_FLAG_REQ, "SEC", "cool-down after measuring (default 0)", set_C },
	{ 'o', NULL, BENCH_FLAG_REQ, "N", "outstanding I/Os per thread per target (default 2)", set_o },
	{ 't', NULL, BENCH_FLAG_REQ, "N", "threads per target (default 1)", set_t },
	{ 'F', NULL, BENCH_FLAG_REQ, "N", "threads in all, each on every target with -o I/Os per target (diskspd's "
					"fixed threads; conflicts with -t)", set_F },
	{ 'r', NULL, BENCH_FLAG_OPT, "[ALIGN|sPCT]", "random I/O aligned to ALIGN (default: block size); -rsPCT: PCT% "
						     "of I/Os random, the rest continue a sequential run (diskspd's mix; "
						     "-r ALIGN may be given too)", set_r },
	{ 's', NULL, BENCH_FLAG_OPT, "[i][STRIDE]", "sequential I/O, STRIDE apart (default; STRIDE = block size); -si: "
						    "the threads of a target share one position (interlocked)", set_s },
	{ 'T', NULL, BENCH_FLAG_REQ, "SIZE", "sequential: thread i starts at i x SIZE (default 0)", set_T },
	{ 'B', NULL, BENCH_FLAG_REQ, "BASE[:LEN]", "I/O from BASE bytes into the target (and below BASE+LEN)", set_B },
	{ 'f', NULL, BENCH_FLAG_REQ, "MAX", "I/O below offset MAX (default: the end of the target)", set_f },
	{ 'w', NULL, BENCH_FLAG_REQ, "PCT", "percentage of writes (default 0)", set_w },
	{ 'c', NULL, BENCH_FLAG_REQ, "SIZE", "create (and fill) the target file of SIZE; else use its size", set_c },
	{ 'S', NULL, BENCH_FLAG_OPT, "[bhuw]", "caching, as diskspd: -S or -Su no software cache (O_DIRECT), -Sw "
					     "write-through (O_DSYNC: each write stable before it completes), -Sh both (= -Suw), "
					     "-Sb the page cache (default); letters combine (-Suw, -Sbw)", set_S },
	{ 'h', NULL, BENCH_FLAG_NONE, NULL, "the same as -Sh (diskspd's deprecated spelling); help is -? or --help", set_h },
	{ 'L', NULL, BENCH_FLAG_NONE, NULL, "latency percentiles table", set_L },
	{ 'z', NULL, BENCH_FLAG_OPT, "[SEED]", "random seed (default 0; -z alone: from the clock)", set_z },
	{ 'Z', NULL, BENCH_FLAG_OPT, "[r|SIZE]", "write buffers, as diskspd: -Z zeros; -Zr fresh random data for every "
						 "write (costs CPU); -ZSIZE a random buffer of SIZE each write takes its "
						 "block from at a random 4K-aligned offset; default: the pattern 0, 1, .., "
						 "255, 0, ..", set_Z },
	{ 'g', NULL, BENCH_FLAG_REQ, "RATE[i]", "throughput limit per thread per target, as diskspd: bytes per "
					       "millisecond, or with i I/Os per second (default: none)", set_g },
	{ 'D', NULL, BENCH_FLAG_OPT, "[MS]", "IOPS statistics per interval of MS ms (default 1000), per thread per "
					    "target, as diskspd: the tables gain IopsStdDev; --json and -Rxml the series", set_D },
	{ 'R', NULL, BENCH_FLAG_REQ, "text|xml", "the report's format: -Rtext (default) or -Rxml (diskspd's XML)", set_R },
	{ 'q', "quiet", BENCH_FLAG_NONE, NULL, "no progress line", set_q },
	{ 0, "dist", BENCH_FLAG_REQ, "D", "random record distribution: uniform (default), normal:SIGMA "
				     "(fraction of the range), zipf:THETA, hot:DATA%/IO%", set_dist },
	{ 0, "think", BENCH_FLAG_REQ, "US", "think time between the I/Os of one slot, microseconds", set_think },
	{ 0, "json", BENCH_FLAG_NONE, NULL, "the report as one JSON document", set_json },
	{ 0, "members", BENCH_FLAG_REQ, "M0,M1,...", "open this fsvol volume in-process (TARGET optional: a label)",
	  set_members },
	{ 0, "create", BENCH_FLAG_REQ, "LEVEL[,CHUNK]", "with --members mem:NAME:SIZE,...: build a fresh in-memory "
	  "volume first (chunk default 512K)", set_create },
	{ 0, "model", BENCH_FLAG_REQ, "SPEC", "with --members or --compare: emulated disks (fsvol mount --model; "
					     "fsvol model list)", set_model },
	{ 0, "ctl", BENCH_FLAG_REQ, "'VERB ARG'", "with --members: a setting of fsvol's MNT/ctl applied before the "
						"volume starts, as fsvol mount --ctl (repeatable; e.g. 'safe_mode_delay 0')", set_ctl },
	{ 0, "replay", BENCH_FLAG_REQ, "FILE", "issue the requests of a trace instead of a pattern (fio iolog v2/v3, "
					      "blkparse text, MSR Cambridge CSV, DiskSim ASCII); ends with the trace", set_replay },
	{ 0, "replay-format", BENCH_FLAG_REQ, "FMT", "the trace's format: fio, blkparse, msr, disksim, valid "
						    "(default: detected from its first lines)", set_replay_format },
	{ 0, "replay-speed", BENCH_FLAG_REQ, "X", "open loop, X times faster than recorded (default 1: as recorded)",
	  set_replay_speed },
	{ 0, "replay-afap", BENCH_FLAG_NONE, NULL, "as fast as possible, -o requests in flight (closed loop)",
	  set_replay_afap },
	{ 0, "replay-map", BENCH_FLAG_REQ, "wrap|scale", "a trace that addresses more than the target: offsets "
						       "modulo its size, or scaled onto it (default: refused)", set_replay_map },
	{ 0, "latency-log", BENCH_FLAG_REQ, "FILE", "with --replay: one line per request (index, issue time, op, "
						     "offset, length, latency)", set_latency_log },
	{ 0, "virtual", BENCH_FLAG_NONE, NULL, "with --members (or --compare) and --model: the model's clock is "
					      "virtual, a discrete-event simulation: nothing waits for emulated time, "
					      "-d/-W/-C and a trace's times are the model's, the same run gives the "
					      "same figures", set_virtual },
	{ 0, "compare", BENCH_FLAG_REQ, "LEVEL:N,...", "with --replay: build each layout (members on emulated disks "
							 "with --model; -c SIZE: volumes of SIZE), replay on each, one table", set_compare },
	{ 0, "out", BENCH_FLAG_REQ, "DIR", "with --compare: CSV, data files and plots (throughput, latency CDF, "
					   "member utilisation) in DIR", set_out },
	{ 0 },
};

const struct bench_flag *const bench_run_flags = opts;

static void bench_usage(FILE *f)
{
	bench_flags_synopsis(opts, "fsvol-bench", BENCH_OPERANDS, f);
	fprintf(f, "       fsvol-bench --replay FILE [flags]\n"
		   "                   (TARGET | --members M0,... | --compare LEVEL:N,...)\n"
		   "       fsvol-bench sweep [flags] (see fsvol-bench sweep --help)\n"
		   "  diskspd-style load generator; TARGET is a file, a block device, an fsvol\n"
		   "  MNT/volume, or (with --members) a volume opened in-process.\n"
		   "flags:\n");
	bench_flags_usage(opts, f);
	fprintf(f, "Exit status: 0 done, 1 failed, 2 usage error.\n"
		   "'fsvol-bench --man' prints the manual page.\n");
}

void bench_opts_default(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->block = 64 * 1024;
	o->duration = 10;
	o->warmup = 5;
	o->outstanding = 2;
	o->threads = 1;
	o->rs_pct = -1;
}

void bench_opts_free(struct bench_opts *o)
{
	free(o->members_buf);
	o->members_buf = NULL;
	o->nmembers = 0;
}

static void cmdline(struct bench_opts *o, int argc, char **argv)
{
	size_t n = 0;
	o->cmdline[0] = 0;
	for (int i = 0; i < argc && n < sizeof(o->cmdline); i++) {
		int w = snprintf(o->cmdline + n, sizeof(o->cmdline) - n, "%s%s", i ? " " : "", argv[i]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* Cross-flag rules, after every flag is in. */
static int check(struct bench_opts *o, char *err, size_t errlen)
{
	if (o->dist_set && o->dist.kind != BENCH_DIST_UNIFORM) {
		if (o->pattern_set && !o->random) {
			snprintf(err, errlen, "--dist: needs random I/O (-r), not -s");
			return -EINVAL;
		}
		o->random = 1;
	}
	if (o->wbuf == BENCH_WBUF_SOURCE && o->wbuf_size < o->block) {
		snprintf(err, errlen, "-Z%llu: the source buffer is smaller than a block (-b %llu)",
			 (unsigned long long)o->wbuf_size, (unsigned long long)o->block);
		return -EINVAL;
	}
	if (o->fixed && o->threads_set) {
		snprintf(err, errlen, "-F %u and -t %u: threads in all or per target, not both", o->fixed, o->threads);
		return -EINVAL;
	}
	if (o->fixed && o->interlocked) {
		snprintf(err, errlen, "-F with -si: not supported (use -t)");
		return -EINVAL;
	}
	if (o->interlocked && o->thread_stride) {
		snprintf(err, errlen, "-si: the threads share one position; -T (a start per thread) conflicts");
		return -EINVAL;
	}
	if (o->rs_pct >= 0 && o->dist_set && o->dist.kind != BENCH_DIST_UNIFORM) {
		snprintf(err, errlen, "-rs%d: the random part is uniform; --dist conflicts", o->rs_pct);
		return -EINVAL;
	}
	if (o->direct && o->block % 512) {
		snprintf(err, errlen, "-b %llu: must be a multiple of 512 with -S (O_DIRECT)",
			 (unsigned long long)o->block);
		return -EINVAL;
	}
	if (o->random && o->align && o->direct && o->align % 512) {
		snprintf(err, errlen, "-r%llu: alignment must be a multiple of 512 with -S (O_DIRECT)",
			 (unsigned long long)o->align);
		return -EINVAL;
	}
	if (o->nmembers && o->ntargets > 1) {
		snprintf(err, errlen, "--members: opens one volume; give at most one TARGET (its label)");
		return -EINVAL;
	}
	if (!o->nmembers && !o->ntargets && !o->compare) {
		snprintf(err, errlen, "no TARGET given (see fsvol-bench --help)");
		return -EINVAL;
	}
	if (o->xml && o->json) {
		snprintf(err, errlen, "-Rxml and --json: one report format at a time");
		return -EINVAL;
	}
	if (o->writethrough && o->nmembers) {
		snprintf(err, errlen, "-Sw/-Sh/-h: write-through is O_DSYNC on a file or MNT/volume; an in-process "
			 "volume (--members) has no such flag: use -Su, or a mount");
		return -EINVAL;
	}
	if (o->create && !o->nmembers) {
		snprintf(err, errlen, "--create: needs --members mem:NAME:SIZE,...");
		return -EINVAL;
	}
	for (unsigned i = 0; o->create && i < o->nmembers; i++)
		if (strncmp(o->members[i], "mem:", 4)) {
			snprintf(err, errlen, "--create: member %s is not in memory (mem:NAME:SIZE); "
				 "fsvol create builds volumes on files", o->members[i]);
			return -EINVAL;
		}
	if (o->model && !o->nmembers && !o->compare) {
		snprintf(err, errlen, "--model %s: needs --members (a mounted volume takes fsvol mount --model)",
			 o->model);
		return -EINVAL;
	}
	return 0;
}

/* --replay's rules: its options need it, and it replays on one target. */
static int check_replay(struct bench_opts *o, char *err, size_t errlen)
{
	const char *need = o->replay_fmt ? "--replay-format" : o->replay_speed ? "--replay-speed"
			 : o->replay_afap ? "--replay-afap" : o->replay_map ? "--replay-map"
			 : o->latency_log ? "--latency-log" : o->compare ? "--compare" : o->out ? "--out" : NULL;
	if (o->virtual_time && ((!o->nmembers && !o->compare) || !o->model)) {
		snprintf(err, errlen, "--virtual: needs --members (or --compare), and --model (emulated disks in"
			 " this process)");
		return -EINVAL;
	}
	if (o->virtual_time && o->threads > 1) {
		snprintf(err, errlen, "--virtual: -t %u: one thread drives the model's clock (use -o for a deeper queue)",
			 o->threads);
		return -EINVAL;
	}
	if (!o->replay) {
		if (need) {
			snprintf(err, errlen, "%s: needs --replay FILE", need);
			return -EINVAL;
		}
		return 0;
	}
	if (o->replay_speed && o->replay_afap) {
		snprintf(err, errlen, "--replay-speed and --replay-afap exclude each other");
		return -EINVAL;
	}
	if (o->threads > 1 || o->fixed) {
		snprintf(err, errlen, "-%c %u: a replay issues the trace's requests from one thread (-o with --replay-afap)",
			 o->fixed ? 'F' : 't', o->fixed ? o->fixed : o->threads);
		return -EINVAL;
	}
	if (o->out && !o->compare) {
		snprintf(err, errlen, "--out %s: needs --compare", o->out);
		return -EINVAL;
	}
	if (o->compare && (o->ntargets || o->nmembers)) {
		snprintf(err, errlen, "--compare: builds its own volumes; give no TARGET nor --members");
		return -EINVAL;
	}
	if (o->ntargets > 1) {
		snprintf(err, errlen, "--replay: one TARGET at a time (or --compare)");
		return -EINVAL;
	}
	o->latency = 1; /* a replay always reports its percentiles */
	return 0;
}

static int add_target(struct bench_flag_ctx *c, const char *a)
{
	struct bench_opts *o = O(c);
	if (o->ntargets == BENCH_MAX_TARGETS) {
		snprintf(c->err, c->errlen, "%s: more than %d targets", a, BENCH_MAX_TARGETS);
		return -EINVAL;
	}
	o->targets[o->ntargets++] = (char *)a;
	return 0;
}

int bench_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	struct bench_flag_ctx c = { .err = err, .errlen = errlen, .o = o };
	err[0] = 0;
	cmdline(o, argc, argv);
	int r = bench_flags_parse(opts, argc, argv, &c, add_target, "fsvol-bench", bench_usage);
	if (!r)
		r = check_replay(o, err, errlen);
	return r ? r : check(o, err, errlen);
}

const char *bench_dist_name(const struct bench_dist *d, char *buf, size_t len)
{
	switch (d->kind) {
	case BENCH_DIST_NORMAL: snprintf(buf, len, "normal:%g", d->sigma); break;
	case BENCH_DIST_ZIPF: snprintf(buf, len, "zipf:%g", d->theta); break;
	case BENCH_DIST_HOT: snprintf(buf, len, "hot:%g%%/%g%%", d->hot_data * 100, d->hot_io * 100); break;
	default: snprintf(buf, len, "uniform"); break;
	}
	return buf;
}
