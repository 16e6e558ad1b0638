/* sweep: `fsvol-bench sweep`, the classic stripe-set and level experiments.
 *   fsvol-bench sweep --level raid0 --members 1-4 --chunk 64K --size 60M \
 *       --model hdd-legacy -b 64K --workloads seqread,randread -d 10 --out results/
 * For each member count (or level) it creates the members in a temp dir,
 * opens the volume in-process through bench_run (--members), runs every
 * workload, then deletes the members. The temp dir goes away on every exit,
 * SIGINT and SIGTERM included. Output: tables on stdout, CSV + JSON + plots
 * in --out. See docs/bench.md and docs/experiments.md. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/flags.h"
#include "bench/plot.h"
#include "bench/sweep.h"
#include "bench/tmpdir.h"
#include "fsvol/util/size.h"
#include "fsvol/core/engine.h"
#include "fsvol/core/volume.h"

/* ---- options: one table drives the parser and --help ---- */
/* what the sweep's parser remembers besides the options */
struct sw_state {
	int level_set, levels_set, wl_set, chunk_set, block_set, qd_set, model_set;
};
#define SO(c) ((struct bench_sweep_opts *)(c)->o)
#define ST(c) ((struct sw_state *)(c)->st)

static int get_level(struct bench_flag_ctx *c, const char *v, const char *name, enum layout_level *out)
{
	if (layout_parse_level(name, out))
		return bench_flag_bad(c, v, "unknown level '%s' (single, linear, raid0, raid1, raid10, raid4, raid5, raid6)",
			   name);
	return 0;
}

static int set_level(struct bench_flag_ctx *c, const char *v)
{
	ST(c)->level_set = 1;
	return get_level(c, v, v, &SO(c)->level);
}

static int set_levels(struct bench_flag_ctx *c, const char *v)
{
	char buf[256];
	if (strlen(v) >= sizeof(buf))
		return bench_flag_bad(c, v, "too long");
	strcpy(buf, v);
	SO(c)->nlevels = 0;
	ST(c)->levels_set = 1;
	for (char *s = buf, *next; s; s = next) {
		if ((next = strchr(s, ',')))
			*next++ = 0;
		if (!*s)
			return bench_flag_bad(c, v, "empty level name (a comma-separated list, e.g. single,raid0,raid1,raid5)");
		if (SO(c)->nlevels == BENCH_SWEEP_MAX_LEVELS)
			return bench_flag_bad(c, v, "more than %d levels", BENCH_SWEEP_MAX_LEVELS);
		if (get_level(c, v, s, &SO(c)->levels[SO(c)->nlevels]))
			return -EINVAL;
		for (unsigned i = 0; i < SO(c)->nlevels; i++)
			if (SO(c)->levels[i] == SO(c)->levels[SO(c)->nlevels])
				return bench_flag_bad(c, v, "'%s' given twice", s);
		SO(c)->nlevels++;
	}
	return 0;
}

/* "4" or "1-4" */
static int set_members(struct bench_flag_ctx *c, const char *v)
{
	char buf[32];
	unsigned lo, hi;
	const char *dash = strchr(v, '-');
	if (strlen(v) >= sizeof(buf))
		return bench_flag_bad(c, v, "not a member count (N or LO-HI, e.g. 1-4)");
	strcpy(buf, v);
	if (dash)
		buf[dash - v] = 0;
	struct bench_flag_ctx q = *c; /* its own message would be overwritten below */
	if (bench_flag_uint(&q, buf, &lo, 1, BENCH_MAX_MEMBERS) ||
	    bench_flag_uint(&q, dash ? buf + (dash - v) + 1 : buf, &hi, 1, BENCH_MAX_MEMBERS))
		return bench_flag_bad(c, v, "not a member count (N or LO-HI with 1 <= LO <= HI <= %d, e.g. 1-4)",
			   BENCH_MAX_MEMBERS);
	if (lo > hi)
		return bench_flag_bad(c, v, "LO is larger than HI (N or LO-HI, e.g. 1-4)");
	SO(c)->mem_lo = lo;
	SO(c)->mem_hi = hi;
	return 0;
}

/* A comma-separated list of at most BENCH_SWEEP_MAX_VALS values; one(c, item, k)
 * parses item k (its message names the item); no value twice. */
static int get_list(struct bench_flag_ctx *c, const char *v, unsigned *n,
		    int (*one)(struct bench_flag_ctx *c, const char *item, unsigned k),
		    int (*same)(struct bench_flag_ctx *c, unsigned a, unsigned b))
{
	char buf[256];
	if (strlen(v) >= sizeof(buf))
		return bench_flag_bad(c, v, "too long");
	strcpy(buf, v);
	*n = 0;
	for (char *s = buf, *next; s; s = next) {
		if ((next = strchr(s, ',')))
			*next++ = 0;
		if (!*s)
			return bench_flag_bad(c, v, "empty value in the list (e.g. 1,4,16)");
		if (*n == BENCH_SWEEP_MAX_VALS)
			return bench_flag_bad(c, v, "more than %d values", BENCH_SWEEP_MAX_VALS);
		if (one(c, s, *n))
			return -EINVAL;
		for (unsigned i = 0; i < *n; i++)
			if (same(c, i, *n))
				return bench_flag_bad(c, v, "'%s' given twice", s);
		(*n)++;
	}
	return 0;
}

static int one_chunk(struct bench_flag_ctx *c, const char *v, unsigned k)
{
	uint64_t *x = &SO(c)->chunk[k];
	if (bench_flag_size(c, v, x, LAYOUT_MIN_CHUNK, LAYOUT_MAX_CHUNK))
		return -EINVAL;
	if (*x & (*x - 1))
		return bench_flag_bad(c, v, "must be a power of two (4K, 64K, 512K, ...)");
	return 0;
}
static int same_chunk(struct bench_flag_ctx *c, unsigned a, unsigned b) { return SO(c)->chunk[a] == SO(c)->chunk[b]; }
static int one_block(struct bench_flag_ctx *c, const char *v, unsigned k) { return bench_flag_size(c, v, &SO(c)->block[k], 512, 1ull << 30); }
static int same_block(struct bench_flag_ctx *c, unsigned a, unsigned b) { return SO(c)->block[a] == SO(c)->block[b]; }
static int one_qd(struct bench_flag_ctx *c, const char *v, unsigned k) { return bench_flag_uint(c, v, &SO(c)->qd[k], 1, 1024); }
static int same_qd(struct bench_flag_ctx *c, unsigned a, unsigned b) { return SO(c)->qd[a] == SO(c)->qd[b]; }

static int set_chunk(struct bench_flag_ctx *c, const char *v)
{
	ST(c)->chunk_set = 1;
	return get_list(c, v, &SO(c)->nchunk, one_chunk, same_chunk);
}

static int set_size(struct bench_flag_ctx *c, const char *v) { return bench_flag_size(c, v, &SO(c)->size, 1 << 20, 1ull << 44); }

/* Repeatable: each --model adds a series (a spec holds commas of its own). */
static int set_model(struct bench_flag_ctx *c, const char *v)
{
	struct bench_sweep_opts *o = SO(c);
	if (!*v)
		return bench_flag_bad(c, v, "empty model spec (hdd, hdd-legacy, ssd, nvme, none, ...)");
	if (!ST(c)->model_set)
		o->nmodel = 0;
	ST(c)->model_set = 1;
	if (o->nmodel == BENCH_SWEEP_MAX_VALS)
		return bench_flag_bad(c, v, "more than %d --model specs", BENCH_SWEEP_MAX_VALS);
	const char *spec = strcmp(v, "none") ? v : NULL;
	for (unsigned i = 0; i < o->nmodel; i++)
		if (spec ? o->model[i] && !strcmp(o->model[i], spec) : !o->model[i])
			return bench_flag_bad(c, v, "given twice");
	o->model[o->nmodel++] = spec;
	return 0;
}

static int set_dist(struct bench_flag_ctx *c, const char *v)
{
	if (bench_flag_dist(c, v, &SO(c)->run.dist))
		return -EINVAL;
	SO(c)->run.dist_set = 1;
	return 0;
}

/* -f MAX: every run stays below volume offset MAX (a file of MAX bytes at the
 * start of the volume), as fsvol-bench -f */
static int set_f(struct bench_flag_ctx *c, const char *v) { return bench_flag_size(c, v, &SO(c)->run.max_off, 1, 1ull << 50); }

static int set_no_fill(struct bench_flag_ctx *c, const char *v) { (void)v; SO(c)->no_fill = 1; return 0; }

static int set_workloads(struct bench_flag_ctx *c, const char *v)
{
	char buf[128];
	if (strlen(v) >= sizeof(buf))
		return bench_flag_bad(c, v, "too long");
	strcpy(buf, v);
	SO(c)->nwl = 0;
	ST(c)->wl_set = 1;
	for (char *s = buf, *next; s; s = next) {
		unsigned w;
		if ((next = strchr(s, ',')))
			*next++ = 0;
		for (w = 0; w < BENCH_WL_N && strcmp(s, bench_wl_name[w]); w++)
			;
		if (w == BENCH_WL_N)
			return bench_flag_bad(c, v, "unknown workload '%s' (seqread, randread, seqwrite, randwrite)", s);
		for (unsigned i = 0; i < SO(c)->nwl; i++)
			if (SO(c)->wl[i] == (enum bench_wl)w)
				return bench_flag_bad(c, v, "'%s' given twice", s);
		SO(c)->wl[SO(c)->nwl++] = (enum bench_wl)w;
	}
	return 0;
}

static int set_b(struct bench_flag_ctx *c, const char *v)
{
	ST(c)->block_set = 1;
	return get_list(c, v, &SO(c)->nblock, one_block, same_block);
}
static int set_d(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &SO(c)->run.duration, 0); }
static int set_W(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &SO(c)->run.warmup, 1); }
static int set_C(struct bench_flag_ctx *c, const char *v) { return bench_flag_secs(c, v, &SO(c)->run.cooldown, 1); }
static int set_o(struct bench_flag_ctx *c, const char *v)
{
	ST(c)->qd_set = 1;
	return get_list(c, v, &SO(c)->nqd, one_qd, same_qd);
}
static int set_t(struct bench_flag_ctx *c, const char *v) { return bench_flag_uint(c, v, &SO(c)->run.threads, 1, 256); }

static int set_z(struct bench_flag_ctx *c, const char *v)
{
	char *end;
	if (!*v || *v < '0' || *v > '9' || (errno = 0, SO(c)->run.seed = strtoull(v, &end, 10), *end) ||
	    errno == ERANGE)
		return bench_flag_bad(c, v, "not a seed (a number)");
	return 0;
}

static int set_S(struct bench_flag_ctx *c, const char *v)
{
	if (!strcmp(v, "") || !strcmp(v, "u") || !strcmp(v, "h"))
		SO(c)->run.direct = 1;
	else if (!strcmp(v, "b"))
		SO(c)->run.direct = 0;
	else
		return bench_flag_bad(c, v, "expected -S, -Su, -Sh (O_DIRECT members, the default) or -Sb (page cache)");
	return 0;
}

static int set_out(struct bench_flag_ctx *c, const char *v)
{
	static char dir[PATH_MAX];
	if (!*v)
		return bench_flag_bad(c, v, "empty directory name");
	/* "results/" names the same directory as "results": joined with a
	 * file name it must not print "results//sweep.csv" */
	size_t n = strlen(v);
	while (n > 1 && v[n - 1] == '/')
		n--;
	if (n >= sizeof(dir))
		return bench_flag_bad(c, v, "directory name too long");
	memcpy(dir, v, n);
	dir[n] = 0;
	SO(c)->out = dir;
	return 0;
}

static int set_dir(struct bench_flag_ctx *c, const char *v)
{
	struct stat st;
	if (!*v || stat(v, &st) || !S_ISDIR(st.st_mode))
		return bench_flag_bad(c, v, "not a directory");
	SO(c)->dir = v;
	return 0;
}

static int set_q(struct bench_flag_ctx *c, const char *v) { (void)v; SO(c)->quiet = 1; return 0; }
static int set_virtual(struct bench_flag_ctx *c, const char *v) { (void)v; SO(c)->run.virtual_time = 1; return 0; }
static int set_json(struct bench_flag_ctx *c, const char *v) { (void)v; SO(c)->json = 1; return 0; }

static const struct bench_flag sw_opts[] = {
	{ 0, "level", BENCH_FLAG_REQ, "LEVEL", "level of the volumes (default raid0)", set_level },
	{ 0, "members", BENCH_FLAG_REQ, "N|LO-HI", "member counts to sweep (default 1-4); with --levels the count "
					    "(HI) for every level but single (1) and raid1 (2)", set_members },
	{ 0, "levels", BENCH_FLAG_REQ, "L1,L2,...", "compare levels instead (e.g. single,raid0,raid1,raid5)", set_levels },
	{ 0, "chunk", BENCH_FLAG_REQ, "SIZE,...", "chunk size, or a list to compare (default 64K)", set_chunk },
	{ 0, "size", BENCH_FLAG_REQ, "SIZE", "data bytes per member (default 64M)", set_size },
	{ 0, "model", BENCH_FLAG_REQ, "SPEC", "emulated disks, as fsvol mount --model (hdd, hdd-legacy, ssd, ...; "
				       "default none); repeat to compare specs (placement, adapters)", set_model },
	{ 0, "workloads", BENCH_FLAG_REQ, "W1,W2,...", "seqread, randread, seqwrite, randwrite (default seqread,randread; "
					       "with --levels seqwrite,randwrite)", set_workloads },
	{ 'b', NULL, BENCH_FLAG_REQ, "SIZE,...", "block size, or a list (default 64K)", set_b },
	{ 'd', NULL, BENCH_FLAG_REQ, "SEC", "measured seconds per run (default 10)", set_d },
	{ 'W', NULL, BENCH_FLAG_REQ, "SEC", "warm-up seconds per run (default 2)", set_W },
	{ 'C', NULL, BENCH_FLAG_REQ, "SEC", "cool-down seconds per run (default 0)", set_C },
	{ 'o', NULL, BENCH_FLAG_REQ, "N,...", "outstanding I/Os per thread, or a list (default 4)", set_o },
	{ 't', NULL, BENCH_FLAG_REQ, "N", "threads (default 1)", set_t },
	{ 'z', NULL, BENCH_FLAG_REQ, "SEED", "random seed (default 0)", set_z },
	{ 'S', NULL, BENCH_FLAG_OPT, "[u|h|b]", "-S/-Su/-Sh: O_DIRECT members (default); -Sb: page cache", set_S },
	{ 'f', NULL, BENCH_FLAG_REQ, "MAX", "I/O below volume offset MAX, like a file of MAX bytes (default: the "
					  "whole volume)", set_f },
	{ 0, "dist", BENCH_FLAG_REQ, "D", "record distribution of the random workloads: uniform (default), "
				     "normal:SIGMA, zipf:THETA, hot:DATA%/IO%", set_dist },
	{ 0, "no-fill", BENCH_FLAG_NONE, NULL, "measure the volumes as create leaves them (sparse: reads of holes "
					   "cost nothing) instead of writing them first", set_no_fill },
	{ 0, "out", BENCH_FLAG_REQ, "DIR", "write sweep.csv, sweep.json and plots here (created)", set_out },
	{ 0, "dir", BENCH_FLAG_REQ, "DIR", "make the temp dir of members in DIR (default /var/tmp)", set_dir },
	{ 'q', "quiet", BENCH_FLAG_NONE, NULL, "no progress line", set_q },
	{ 0, "json", BENCH_FLAG_NONE, NULL, "print the JSON document instead of the tables", set_json },
	{ 0, "virtual", BENCH_FLAG_NONE, NULL, "the models' clock is virtual (needs --model, no 'none'): a "
					      "discrete-event simulation, -d and -W are the model's seconds, nothing "
					      "waits, the same sweep gives the same figures", set_virtual },
	{ 0 },
};
const struct bench_flag *const bench_sweep_flags = sw_opts;

static void bench_sweep_usage(FILE *f)
{
	fprintf(f, "usage: fsvol-bench sweep [flags]\n"
		   "  build a volume per member count (or per level) out of temp member files,\n"
		   "  write it once (no holes), run each workload on it in-process for every\n"
		   "  combination of the list flags (-b, -o, --chunk, --model), print the\n"
		   "  stripe-set (or level) table.\n"
		   "flags:\n");
	bench_flags_usage(sw_opts, f);
}

void bench_sweep_defaults(struct bench_sweep_opts *o)
{
	memset(o, 0, sizeof(*o));
	bench_opts_default(&o->run);
	o->run.warmup = 2;
	o->run.outstanding = 4;
	o->run.direct = 1;
	o->level = LAYOUT_RAID0;
	o->mem_lo = 1;
	o->mem_hi = 4;
	o->chunk[0] = 64 << 10;
	o->nchunk = 1;
	o->block[0] = o->run.block;
	o->nblock = 1;
	o->qd[0] = o->run.outstanding;
	o->nqd = 1;
	o->model[0] = NULL;
	o->nmodel = 1;
	o->size = 64 << 20;
}

/* Members of a level in a --levels run: single is one disk, raid1 a pair. */
static unsigned level_members(const struct bench_sweep_opts *o, enum layout_level l)
{
	return l == LAYOUT_SINGLE ? 1 : l == LAYOUT_RAID1 ? 2 : o->mem_hi;
}

static int sweep_check(struct bench_sweep_opts *o, struct bench_flag_ctx *c)
{
	char m[32];
	snprintf(m, sizeof(m), o->mem_lo == o->mem_hi ? "%u" : "%u-%u", o->mem_lo, o->mem_hi);
	if (ST(c)->level_set && ST(c)->levels_set) {
		snprintf(c->err, c->errlen, "--level and --levels exclude each other");
		return -EINVAL;
	}
	if (!ST(c)->wl_set) {
		o->nwl = 2;
		o->wl[0] = o->nlevels ? BENCH_WL_SEQWRITE : BENCH_WL_SEQREAD;
		o->wl[1] = o->nlevels ? BENCH_WL_RANDWRITE : BENCH_WL_RANDREAD;
	}
	if (o->run.virtual_time) {
		for (unsigned i = 0; i < o->nmodel || !o->nmodel; i++)
			if (!o->nmodel || !o->model[i]) {
				snprintf(c->err, c->errlen, "--virtual: needs emulated disks (--model SPEC, not none)");
				return -EINVAL;
			}
		if (o->run.threads > 1) {
			snprintf(c->err, c->errlen, "--virtual: -t %u: one thread drives the models' clock", o->run.threads);
			return -EINVAL;
		}
	}
	c->flag = "--members";
	if (o->nlevels) {
		for (unsigned i = 0; i < o->nlevels; i++) {
			unsigned n = level_members(o, o->levels[i]), min = layout_min_members(o->levels[i]);
			if (n < min)
				return bench_flag_bad(c, m, "%s needs at least %u members", layout_level_name(o->levels[i]), min);
		}
	} else {
		unsigned min = layout_min_members(o->level);
		if (o->mem_lo < min)
			return bench_flag_bad(c, m, "%s needs at least %u members", layout_level_name(o->level), min);
		if (o->level == LAYOUT_SINGLE && o->mem_hi > 1)
			return bench_flag_bad(c, m, "single has exactly 1 member (sweep another level, or use --levels)");
	}
	for (unsigned i = 0; i < o->nblock; i++) {
		if (o->run.direct && o->block[i] % 512) {
			snprintf(c->err, c->errlen, "-b %llu: must be a multiple of 512 with O_DIRECT (or give -Sb)",
				 (unsigned long long)o->block[i]);
			return -EINVAL;
		}
		if (o->run.max_off && o->block[i] > o->run.max_off) {
			snprintf(c->err, c->errlen, "-f %llu: smaller than -b %llu", (unsigned long long)o->run.max_off,
				 (unsigned long long)o->block[i]);
			return -EINVAL;
		}
		if (o->block[i] > o->size) {
			snprintf(c->err, c->errlen, "-b %llu: larger than --size %llu", (unsigned long long)o->block[i],
				 (unsigned long long)o->size);
			return -EINVAL;
		}
	}
	if (o->run.dist_set && o->run.dist.kind != BENCH_DIST_UNIFORM) {
		unsigned rnd = 0;
		for (unsigned w = 0; w < o->nwl; w++)
			rnd += BENCH_WL_RANDOM(o->wl[w]);
		if (!rnd) {
			snprintf(c->err, c->errlen, "--dist: applies to randread and randwrite, and --workloads has neither");
			return -EINVAL;
		}
	}
	return 0;
}

int bench_sweep_parse(struct bench_sweep_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	struct sw_state st = { 0 };
	struct bench_flag_ctx c = { .err = err, .errlen = errlen, .o = o, .st = &st };
	err[0] = 0;
	int r = bench_flags_parse(sw_opts, argc, argv, &c, NULL, "fsvol-bench sweep", bench_sweep_usage);
	return r ? r : sweep_check(o, &c);
}

/* ---- progress: one line on stderr, rewritten in place ---- */
struct sw_progress {
	int show;
	unsigned k, n;        /* run k (0-based) of n */
	uint64_t t0;          /* start of the sweep */
	char what[256];
	FILE *out, *csv;      /* the text report and DIR/sweep.csv as runs end, or NULL */
};

static void stream_row(const struct bench_sweep *s, const struct bench_sweep_row *row, struct sw_progress *pg);
static void csv_row(FILE *f, const struct bench_sweep *s, const struct bench_sweep_row *row);

static void progress_line(struct sw_progress *p, double frac, double iops)
{
	double el = (double)(stats_now() - p->t0) / 1e9, f = ((double)p->k + frac) / p->n;
	char eta[32] = "?";
	if (f > 0.005)
		snprintf(eta, sizeof(eta), "%.0fs", el / f - el);
	fprintf(stderr, "\rsweep: run %u of %u (%s)  %3.0f%%  elapsed %.0fs  ETA %s  %.0f IOPS\033[K", p->k + 1,
		p->n, p->what, 100 * f, el, eta, iops);
}

static void on_progress(void *arg, double frac, double elapsed_s, double iops)
{
	(void)elapsed_s;
	progress_line(arg, frac > 1 ? 1 : frac, iops);
}

/* ---- one configuration: create, run each workload, delete ---- */
static void dev_of(const struct bench_below_dev *d, struct bench_sweep_dev *out)
{
	const struct stats_rates *r = &d->r;
	uint64_t n = d->d.reads + d->d.writes;
	*out = (struct bench_sweep_dev){
		.r_s = r->r_s, .w_s = r->w_s, .mb_s = r->rmb_s + r->wmb_s,
		.await_ms = n ? (double)(d->d.read_ns + d->d.write_ns) / (double)n / 1e6 : 0,
		.aqu_sz = r->aqu_sz, .util_pct = r->util_pct, .p50_ms = r->p50_ms, .p99_ms = r->p99_ms,
		.bytes = d->d.read_bytes + d->d.write_bytes,
	};
}

static void row_fill(struct bench_sweep_row *row, const struct bench_result *res)
{
	struct bench_opstat all = { 0 };
	all.lat_min = UINT64_MAX;
	for (unsigned t = 0; t < res->nthreads; t++)
		for (int op = 0; op < 2; op++)
			bench_opstat_add(&all, &res->thread[t].op[op]);
	row->test_s = res->test_s;
	bench_figs_of(&all, res->test_s, &row->fig);
	if (!bench_percentiles(&all, row->pct_ms))
		memset(row->pct_ms, 0, sizeof(row->pct_ms));
	const struct bench_below *b = res->target[0].below;
	if (!b || b->ndev < 1)
		return;
	dev_of(&b->dev[0], &row->vol);
	uint64_t vios = b->dev[0].d.reads + b->dev[0].d.writes, mr = 0, mw = 0;
	for (unsigned i = 1; i < b->ndev && i - 1 < row->members; i++) {
		dev_of(&b->dev[i], &row->dev[i - 1]);
		mr += b->dev[i].d.reads;
		mw += b->dev[i].d.writes;
	}
	if (vios) {
		row->m_reads_per_io = (double)mr / (double)vios;
		row->m_writes_per_io = (double)mw / (double)vios;
	}
}

/* Write every member's used data area once, through the volume (so parity
 * and copies stay consistent), with full stripes where they fit in one
 * request: create leaves the data areas sparse, and reads of holes cost the
 * member files nothing. No model: this is preparation, not measurement. */
static int fill_volume(char *const *paths, unsigned n, int direct, char *err, size_t errlen)
{
	struct vol_opts vo = { .stats = VOL_STATS_OFF, .buffered = !direct };
	struct vol *v;
	int r = vol_open(&v, paths, n, &vo, err, errlen);
	if (r)
		return r;
	if ((r = vol_start(v))) {
		snprintf(err, errlen, "starting the volume: %s", strerror(-r));
		vol_close(v);
		return r;
	}
	/* full stripes, up to 1 MiB a request (no read-modify-write, a bounded buffer) */
	const struct layout_geom *g = vol_geom(v);
	uint64_t stripe = g->chunk * (g->data_members ? g->data_members : 1), len = 1 << 20;
	if (stripe <= len)
		len = len / stripe * stripe;
	void *p;
	if (posix_memalign(&p, 4096, len)) {
		vol_close(v);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* random bytes, so no filesystem below can compress or dedupe them away */
	char *buf = p;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		memcpy(buf + i, &x, 8);
	}
	engine_thread_may_block(1); /* a synchronous caller: file members' I/O runs here */
	for (uint64_t off = 0; !r && off < g->capacity; off += len) {
		uint64_t k = g->capacity - off < len ? g->capacity - off : len;
		if ((r = engine_write(v, buf, off, k)))
			snprintf(err, errlen, "writing at offset %llu: %s", (unsigned long long)off, strerror(-r));
	}
	if (!r && (r = engine_flush(v)))
		snprintf(err, errlen, "flush: %s", strerror(-r));
	free(buf);
	vol_close(v);
	return r;
}

/* "N=" or "N-M=" at p: a member or a range (fsvol's per-member model spec,
 * "0=hdd;1-3=ssd"); *rest is what follows the '='. */
static int member_item(const char *p, unsigned long *lo, unsigned long *hi, const char **rest)
{
	const char *e = p;
	unsigned long v[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		const char *d = e;
		while (*e >= '0' && *e <= '9' && v[k] < 1000000)
			v[k] = v[k] * 10 + (unsigned long)(*e++ - '0');
		if (e == d)
			return 0;
		if (k == 0 && *e == '-') {
			e++;
			continue;
		}
		if (k == 0)
			v[1] = v[0];
		break;
	}
	if (*e != '=')
		return 0;
	*lo = v[0], *hi = v[1], *rest = e + 1;
	return 1;
}

/* A per-member spec names members a smaller volume of the sweep lacks: keep
 * the items of members 0..n-1 and clip ranges ("0-2=a;3=b;@x=fast-scsi2" on 2
 * members: "0-1=a;@x=fast-scsi2"), so one spec serves every member count. A
 * leading default spec and adapter definitions (@NAME=) stay. */
static const char *model_for(const char *spec, unsigned n, char *buf, size_t len)
{
	unsigned long lo, hi;
	const char *rest;
	size_t k = 0;
	int changed = 0;
	if (!spec)
		return spec;
	for (const char *p = spec; *p;) {
		const char *e = p;
		/* an item ends at ';', or at a ',' that starts the next "N=", "N-M=" or "@" */
		while (*e && *e != ';' && !(*e == ',' && (member_item(e + 1, &lo, &hi, &rest) || e[1] == '@')))
			e++;
		int w = (int)(e - p);
		if (!member_item(p, &lo, &hi, &rest) || hi < n)
			k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%.*s", k ? ";" : "", w, p);
		else if (lo < n) {
			changed = 1;
			if (lo == n - 1)
				k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%lu=%.*s", k ? ";" : "", lo,
						      (int)(e - rest), rest);
			else
				k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%lu-%u=%.*s", k ? ";" : "", lo,
						      n - 1, (int)(e - rest), rest);
		} else
			changed = 1;
		p = *e ? e + 1 : e;
	}
	return changed && k && k < len ? buf : spec;
}

static int run_config(struct bench_sweep *s, enum layout_level level, unsigned n, unsigned ci,
		      struct sw_progress *pg, char *err, size_t errlen)
{
	const struct bench_sweep_opts *o = s->o;
	char path[BENCH_MAX_MEMBERS][PATH_MAX], msg[400];
	char *paths[BENCH_MAX_MEMBERS];
	struct vol_create vc = { .size = o->size, .name = "fsvol-sweep", .force = 1 };
	static int warned;
	int r;

	for (unsigned i = 0; i < n; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/m%u", bench_tmpdir(), i);
		paths[i] = path[i];
	}
	vc.geom.level = level;
	vc.geom.alg = layout_default_alg(level);
	vc.geom.chunk = o->chunk[ci];
	if (pg->show) {
		snprintf(pg->what, sizeof(pg->what), "%s, %u member%s: creating%s", layout_level_name(level), n,
			 n == 1 ? "" : "s", o->no_fill ? "" : " and filling");
		progress_line(pg, 0, 0);
	}
	/* create leaves the data areas sparse (holes); fill them unless told not to */
	if ((r = vol_create(&vc, paths, n, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s, %u members: creating the volume: %s", layout_level_name(level), n, msg);
		goto out;
	}
	if (!o->no_fill && (r = fill_volume(paths, n, o->run.direct, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s, %u members: filling the volume: %s", layout_level_name(level), n, msg);
		goto out;
	}
	unsigned per_chunk = o->nmodel * o->nblock * o->nqd;
	for (unsigned k = ci * per_chunk; k < (ci + 1) * per_chunk; k++) {
		struct bench_sweep_series se;
		bench_sweep_series_of(o, k, &se);
		for (unsigned w = 0; w < o->nwl; w++, pg->k++) {
			struct bench_opts ro = o->run;
			struct bench_result *res;
			struct bench_sweep_row *row = &s->row[s->nrow];
			enum bench_wl wl = o->wl[w];
			char lab[160], mspec[1024];
			ro.block = se.block;
			ro.outstanding = se.qd;
			ro.random = BENCH_WL_RANDOM(wl);
			ro.pattern_set = 1;
			if (!ro.random)
				ro.dist = (struct bench_dist){ BENCH_DIST_UNIFORM };
			ro.write_pct = BENCH_WL_WRITE(wl) ? 100 : 0;
			ro.quiet = 1;
			ro.members_buf = NULL;
			ro.nmembers = n;
			for (unsigned i = 0; i < n; i++)
				ro.members[i] = paths[i];
			ro.model = model_for(se.model, n, mspec, sizeof(mspec));
			bench_sweep_series_label(o, k, lab, sizeof(lab));
			if (pg->show) {
				snprintf(pg->what, sizeof(pg->what), "%s, %u member%s, %s%s%s", layout_level_name(level), n,
					 n == 1 ? "" : "s", bench_wl_name[wl], lab[0] ? ", " : "", lab);
				ro.progress = on_progress;
				ro.progress_arg = pg;
			}
			snprintf(ro.cmdline, sizeof(ro.cmdline), "fsvol-bench sweep (%s)", bench_wl_name[wl]);
			if ((r = bench_run(&ro, &res, msg, sizeof(msg)))) {
				snprintf(err, errlen, "%s, %u members, %s%s%s: %s", layout_level_name(level), n,
					 bench_wl_name[wl], lab[0] ? ", " : "", lab, msg);
				goto out;
			}
			if (res->target[0].holes[0] && !warned++) {
				if (pg->show)
					fprintf(stderr, "\r\033[K");
				fprintf(stderr, "fsvol-bench sweep: warning: --no-fill: %s\n", res->target[0].holes);
			}
			memset(row, 0, sizeof(*row));
			row->series = k;
			row->level = level;
			row->members = n;
			row->wl = wl;
			row->chunk = se.chunk;
			row->block = se.block;
			row->qd = se.qd;
			row->threads = ro.threads;
			row->model = se.model;
			row->filled = !o->no_fill;
			row_fill(row, res);
			bench_result_free(res);
			s->nrow++;
			stream_row(s, row, pg);
		}
	}
out:
	for (unsigned i = 0; i < n; i++)
		unlink(path[i]);
	return r;
}

/* ---- tables ---- */
static int all_write(const struct bench_sweep_opts *o, int want)
{
	for (unsigned i = 0; i < o->nwl; i++)
		if (BENCH_WL_WRITE(o->wl[i]) != want)
			return 0;
	return 1;
}

/* PerfMon's names: reads, writes, or transfers when the workloads mix. */
struct sw_names { const char *ops, *sec, *mop, *rec; };

static struct sw_names names_of(const struct bench_sweep_opts *o)
{
	if (all_write(o, 0))
		return (struct sw_names){ "reads/s", "avg sec/read", "r/s", "read" };
	if (all_write(o, 1))
		return (struct sw_names){ "writes/s", "avg sec/write", "w/s", "write" };
	return (struct sw_names){ "I/Os/s", "avg sec/xfer", "io/s", "I/O" };
}

/* "64K" or "4K,64K" */
static const char *size_list(const uint64_t *v, unsigned n, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < n && k < len; i++) {
		char one[32];
		size_format(v[i], one, sizeof(one));
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "", one);
	}
	return buf;
}

static void print_params(FILE *f, const struct bench_sweep_opts *o)
{
	char chunk[200], size[32], block[200], d[64];
	size_list(o->chunk, o->nchunk, chunk, sizeof(chunk));
	size_format(o->size, size, sizeof(size));
	size_list(o->block, o->nblock, block, sizeof(block));
	if (o->nlevels) {
		fprintf(f, "fsvol-bench sweep: levels");
		for (unsigned i = 0; i < o->nlevels; i++)
			fprintf(f, "%s%s", i ? "," : " ", layout_level_name(o->levels[i]));
	} else {
		fprintf(f, "fsvol-bench sweep: %s, %u", layout_level_name(o->level), o->mem_lo);
		if (o->mem_hi > o->mem_lo)
			fprintf(f, "-%u", o->mem_hi);
		fprintf(f, " member%s", o->mem_hi > 1 ? "s" : "");
	}
	fprintf(f, ", chunk %s, %s per member, model", chunk, size);
	for (unsigned i = 0; i < o->nmodel; i++)
		fprintf(f, "%s%s", i ? " | " : " ", o->model[i] ? o->model[i] : "none");
	fprintf(f, "\n  %s I/Os, ", block);
	for (unsigned i = 0; i < o->nqd; i++)
		fprintf(f, "%s%u", i ? "," : "", o->qd[i]);
	char range[64] = "";
	if (o->run.max_off) {
		char mx[32];
		size_format(o->run.max_off, mx, sizeof(mx));
		snprintf(range, sizeof(range), ", I/O in the first %s (-f)", mx);
	}
	fprintf(f, " outstanding x %u thread%s%s, %g s per run after %g s warm-up, %s%s%s%s\n", o->run.threads,
		o->run.threads == 1 ? "" : "s", range, o->run.duration, o->run.warmup,
		o->run.direct ? "O_DIRECT members" : "members through the page cache",
		o->no_fill ? ", NOT FILLED (reads of holes)" : ", filled before measuring",
		o->run.dist.kind != BENCH_DIST_UNIFORM ? ", random records " : "",
		o->run.dist.kind != BENCH_DIST_UNIFORM ? bench_dist_name(&o->run.dist, d, sizeof(d)) : "");
	fputc('\n', f);
}

static double pct_diff(double a, double b) { return b > 0 ? (a - b) / b * 100 : NAN; }

static void print_rand_vs_seq(FILE *f, const struct bench_sweep *s, unsigned k, enum layout_level l, unsigned n)
{
	for (int wr = 0; wr < 2; wr++) {
		const struct bench_sweep_row *sq = bench_sweep_find(s, k, l, n, wr ? BENCH_WL_SEQWRITE : BENCH_WL_SEQREAD);
		const struct bench_sweep_row *rn = bench_sweep_find(s, k, l, n, wr ? BENCH_WL_RANDWRITE : BENCH_WL_RANDREAD);
		if (sq && rn)
			fprintf(f, "        |           |   random vs sequential %s: %+.1f%% MB/s\n", wr ? "writes" : "reads",
				pct_diff(rn->fig.mb_s, sq->fig.mb_s));
	}
}

static void members_head(FILE *f, const struct bench_sweep_opts *o)
{
	struct sw_names nm = names_of(o);
	char h[32];

	fprintf(f, "members | workload  | %10s |     MB/s | %12s |", nm.ops, nm.sec);
	for (unsigned m = 0; m < o->mem_hi; m++) {
		snprintf(h, sizeof(h), "m%u %s", m, nm.mop);
		fprintf(f, " %9s     MB/s |", h);
	}
	fputc('\n', f);
	fprintf(f, "--------+-----------+------------+----------+--------------+");
	for (unsigned m = 0; m < o->mem_hi; m++)
		fprintf(f, "--------------------+");
	fputc('\n', f);
}

static void members_row(FILE *f, const struct bench_sweep_opts *o, const struct bench_sweep_row *row)
{
	unsigned n = row->members;
	fprintf(f, "%7u | %-9s | %10.2f | %8.2f | %12.5f |", n, bench_wl_name[row->wl], row->fig.iops, row->fig.mb_s,
		row->fig.avg_ms / 1000);
	for (unsigned m = 0; m < o->mem_hi; m++)
		if (m < n)
			fprintf(f, " %9.2f %8.2f |", row->dev[m].r_s + row->dev[m].w_s, row->dev[m].mb_s);
		else
			fprintf(f, " %9s %8s |", "", "");
	fputc('\n', f);
}

/* The scaling table under the rows. */
static void members_tail(FILE *f, const struct bench_sweep *s, unsigned k)
{
	const struct bench_sweep_opts *o = s->o;
	if (o->mem_hi == o->mem_lo)
		return;
	fprintf(f, "\nscaling: MB/s relative to %u member%s\nworkload  |", o->mem_lo, o->mem_lo == 1 ? "" : "s");
	for (unsigned n = o->mem_lo; n <= o->mem_hi; n++)
		fprintf(f, " %5u |", n);
	fputc('\n', f);
	for (unsigned w = 0; w < o->nwl; w++) {
		const struct bench_sweep_row *base = bench_sweep_find(s, k, o->level, o->mem_lo, o->wl[w]);
		fprintf(f, "%-9s |", bench_wl_name[o->wl[w]]);
		for (unsigned n = o->mem_lo; n <= o->mem_hi; n++) {
			const struct bench_sweep_row *row = bench_sweep_find(s, k, o->level, n, o->wl[w]);
			if (row && base && base->fig.mb_s > 0)
				fprintf(f, " %5.2f |", row->fig.mb_s / base->fig.mb_s);
			else
				fprintf(f, " %5s |", "-");
		}
		fputc('\n', f);
	}
	for (unsigned w = 0; w < o->nwl; w++) {
		const struct bench_sweep_row *a = bench_sweep_find(s, k, o->level, o->mem_lo, o->wl[w]);
		const struct bench_sweep_row *b = bench_sweep_find(s, k, o->level, o->mem_hi, o->wl[w]);
		if (a && b && a->fig.mb_s > 0)
			fprintf(f, "%s%s x%.2f", w ? ", " : "scaling factor 1 -> N: ", bench_wl_name[o->wl[w]],
				b->fig.mb_s / a->fig.mb_s);
	}
	fprintf(f, " (from %u to %u members)\n", o->mem_lo, o->mem_hi);
}

static void print_members_table(FILE *f, const struct bench_sweep *s, unsigned k)
{
	const struct bench_sweep_opts *o = s->o;
	members_head(f, o);
	for (unsigned n = o->mem_lo; n <= o->mem_hi; n++) {
		for (unsigned w = 0; w < o->nwl; w++) {
			const struct bench_sweep_row *row = bench_sweep_find(s, k, o->level, n, o->wl[w]);
			if (row)
				members_row(f, o, row);
		}
		print_rand_vs_seq(f, s, k, o->level, n);
	}
	members_tail(f, s, k);
}

/* The level the "x LEVEL" column compares with: single when run, else the first. */
static enum layout_level levels_base(const struct bench_sweep_opts *o)
{
	enum layout_level base = o->levels[0];
	for (unsigned i = 0; i < o->nlevels; i++)
		if (o->levels[i] == LAYOUT_SINGLE)
			base = LAYOUT_SINGLE;
	return base;
}

static void levels_head(FILE *f, const struct bench_sweep_opts *o)
{
	struct sw_names nm = names_of(o);
	char sec[32], x[32];
	enum layout_level base = levels_base(o);
	snprintf(sec, sizeof(sec), "sec/%s", nm.rec);
	snprintf(x, sizeof(x), "x %s", layout_level_name(base));
	fprintf(f, "level   | members | workload  | %10s |    MB/s | %10s | %8s | member writes | member reads\n",
		nm.ops, sec, x);
	fprintf(f, "        |         |           |            |         |            |          |     per %-5s |     per %s\n",
		nm.rec, nm.rec);
	fprintf(f, "--------+---------+-----------+------------+---------+------------+----------+---------------+-------------\n");
}

static void levels_row(FILE *f, const struct bench_sweep *s, const struct bench_sweep_row *row)
{
	const struct bench_sweep_opts *o = s->o;
	enum layout_level base = levels_base(o);
	const struct bench_sweep_row *b = bench_sweep_find(s, row->series, base, level_members(o, base), row->wl);
	fprintf(f, "%-7s | %7u | %-9s | %10.2f | %7.2f | %10.5f |", layout_level_name(row->level), row->members,
		bench_wl_name[row->wl], row->fig.iops, row->fig.mb_s, row->fig.avg_ms / 1000);
	if (b && b->fig.avg_ms > 0)
		fprintf(f, " %8.2f |", row->fig.avg_ms / b->fig.avg_ms);
	else
		fprintf(f, " %8s |", "-");
	fprintf(f, " %13.2f | %12.2f\n", row->m_writes_per_io, row->m_reads_per_io);
}

/* What the columns mean, under the table. */
static void levels_tail(FILE *f, const struct bench_sweep_opts *o)
{
	struct sw_names nm = names_of(o);
	enum layout_level base = levels_base(o);
	fprintf(f, "\nsec/%s: mean time per %s as the application saw it (PerfMon's Avg. Disk sec/%s);\n"
		   "x %s: that time relative to %s; member writes/reads per %s: what the mapping\n"
		   "layer issued below for each volume %s (raid1 writes every copy; raid5 writes data and\n"
		   "parity and first reads old data and parity, or the rest of the stripe, to compute it).\n",
		   nm.rec, nm.rec, BENCH_WL_WRITE(o->wl[0]) ? "Write" : "Read", layout_level_name(base),
		   layout_level_name(base), nm.rec, nm.rec);
}

static void print_levels_table(FILE *f, const struct bench_sweep *s, unsigned k)
{
	const struct bench_sweep_opts *o = s->o;
	levels_head(f, o);
	for (unsigned i = 0; i < o->nlevels; i++)
		for (unsigned w = 0; w < o->nwl; w++) {
			const struct bench_sweep_row *row = bench_sweep_find(s, k, o->levels[i],
									     level_members(o, o->levels[i]), o->wl[w]);
			if (row)
				levels_row(f, s, row);
		}
	levels_tail(f, o);
}

/* Mean %util of a run's members: near 100 when every arm is busy. */
static double mean_util(const struct bench_sweep_row *r)
{
	double u = 0;
	for (unsigned m = 0; m < r->members; m++)
		u += r->dev[m].util_pct;
	return r->members ? u / r->members : NAN;
}

/* "all runs": every run on one line, what varies side by side. */
static void runs_head(FILE *f, const struct bench_sweep_opts *o)
{
	struct sw_names nm = names_of(o);
	fprintf(f, "\nall runs:\n%-32s | level   | members | workload  | %10s |     MB/s | %12s | member %%util\n",
		"series", nm.ops, nm.sec);
	fprintf(f, "---------------------------------+---------+---------+-----------+------------+----------+--------------+-------------\n");
}

static void runs_row(FILE *f, const struct bench_sweep_opts *o, const struct bench_sweep_row *r)
{
	char lab[160];
	fprintf(f, "%-32s | %-7s | %7u | %-9s | %10.2f | %8.2f | %12.5f | %6.1f\n",
		bench_sweep_series_label(o, r->series, lab, sizeof(lab)), layout_level_name(r->level), r->members,
		bench_wl_name[r->wl], r->fig.iops, r->fig.mb_s, r->fig.avg_ms / 1000, mean_util(r));
}

/* The tables of each series (several series: after the "all runs" table,
 * which the sweep prints as it goes). */
static void print_series_tables(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	unsigned ns = bench_sweep_nseries(o);
	char lab[160];
	for (unsigned k = 0; k < ns; k++) {
		if (ns > 1)
			fprintf(f, "\n== %s\n", bench_sweep_series_label(o, k, lab, sizeof(lab)));
		if (o->nlevels)
			print_levels_table(f, s, k);
		else
			print_members_table(f, s, k);
	}
}

/* ---- the report as the runs end ----
 * Each line is flushed as it is made, so a sweep written to a file or a pipe
 * shows its header at once and a row per finished run. One series whose rows
 * come in table order (a members sweep; levels with the compared level run
 * first): the table itself, row by row, its summary at the end. Otherwise the
 * "all runs" table row by row, then the tables of each series. */
static int stream_table(const struct bench_sweep_opts *o)
{
	return bench_sweep_nseries(o) == 1 && (!o->nlevels || levels_base(o) == o->levels[0]);
}

static void stream_head(FILE *f, const struct bench_sweep_opts *o)
{
	print_params(f, o);
	if (!stream_table(o))
		runs_head(f, o);
	else if (o->nlevels)
		levels_head(f, o);
	else
		members_head(f, o);
	fflush(f);
}

static void stream_row(const struct bench_sweep *s, const struct bench_sweep_row *row, struct sw_progress *pg)
{
	const struct bench_sweep_opts *o = s->o;
	if (pg->csv) {
		csv_row(pg->csv, s, row);
		fflush(pg->csv);
	}
	if (!pg->out)
		return;
	if (pg->show)
		fprintf(stderr, "\r\033[K"); /* the progress line, redrawn by the next run */
	if (!stream_table(o))
		runs_row(pg->out, o, row);
	else if (o->nlevels)
		levels_row(pg->out, s, row);
	else {
		members_row(pg->out, o, row);
		if (row->wl == o->wl[o->nwl - 1])
			print_rand_vs_seq(pg->out, s, row->series, o->level, row->members);
	}
	fflush(pg->out);
}

static void stream_tail(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	if (!stream_table(o))
		print_series_tables(f, s);
	else if (o->nlevels)
		levels_tail(f, o);
	else
		members_tail(f, s, 0);
}

/* ---- CSV and JSON ---- */
static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.6g", v);
	else
		fputc(',', f);
}

static void csv_head(FILE *f)
{
	fprintf(f, "level,members,chunk,block,workload,device,ios_s,reads_s,writes_s,mb_s,avg_ms,p50_ms,p90_ms,"
		   "p99_ms,aqu_sz,util_pct,share_pct,member_reads_per_io,member_writes_per_io,"
		   "qd,threads,pattern,model,size,filled\n");
}

/* One run: its total line, then a line per member. */
static void csv_row(FILE *f, const struct bench_sweep *s, const struct bench_sweep_row *row)
{
	int wr = BENCH_WL_WRITE(row->wl);
	double sum = 0;
	const char *lv = layout_level_name(row->level);
	for (unsigned m = 0; m < row->members; m++)
		sum += (double)row->dev[m].bytes;
	char cfg[512], pat[80];
	/* the rest of the configuration, the same on the run's every line; a
	 * model spec has commas of its own, so it is quoted */
	snprintf(cfg, sizeof(cfg), ",%u,%u,%s,\"%s\",%llu,%d", row->qd, row->threads,
		 bench_sweep_pattern(s->o, row->wl, pat, sizeof(pat)), row->model ? row->model : "none",
		 (unsigned long long)s->o->size, row->filled);
	fprintf(f, "%s,%u,%llu,%llu,%s,total", lv, row->members, (unsigned long long)row->chunk,
		(unsigned long long)row->block, bench_wl_name[row->wl]);
	csv_num(f, row->fig.iops);
	csv_num(f, wr ? 0 : row->fig.iops);
	csv_num(f, wr ? row->fig.iops : 0);
	csv_num(f, row->fig.mb_s);
	csv_num(f, row->fig.avg_ms);
	csv_num(f, row->pct_ms[2]);
	csv_num(f, row->pct_ms[4]);
	csv_num(f, row->pct_ms[6]);
	csv_num(f, row->vol.aqu_sz);
	csv_num(f, row->vol.util_pct);
	csv_num(f, 100);
	csv_num(f, row->m_reads_per_io);
	csv_num(f, row->m_writes_per_io);
	fprintf(f, "%s\n", cfg);
	for (unsigned m = 0; m < row->members; m++) {
		const struct bench_sweep_dev *d = &row->dev[m];
		fprintf(f, "%s,%u,%llu,%llu,%s,m%u", lv, row->members, (unsigned long long)row->chunk,
			(unsigned long long)row->block, bench_wl_name[row->wl], m);
		csv_num(f, d->r_s + d->w_s);
		csv_num(f, d->r_s);
		csv_num(f, d->w_s);
		csv_num(f, d->mb_s);
		csv_num(f, d->await_ms);
		csv_num(f, d->p50_ms);
		csv_num(f, NAN);
		csv_num(f, d->p99_ms);
		csv_num(f, d->aqu_sz);
		csv_num(f, d->util_pct);
		csv_num(f, sum > 0 ? (double)d->bytes / sum * 100 : NAN);
		fprintf(f, ",,%s\n", cfg);
	}
}

static void json_num(FILE *f, const char *key, double v, int comma)
{
	if (isfinite(v))
		fprintf(f, "%s\"%s\":%.6g", comma ? "," : "", key, v);
	else
		fprintf(f, "%s\"%s\":null", comma ? "," : "", key);
}

/* A string, or null for NULL (stats_json_string escapes it). */
static void json_str(FILE *f, const char *v)
{
	if (v)
		stats_json_string(f, v);
	else
		fputs("null", f);
}

static void json_dev(FILE *f, const struct bench_sweep_dev *d)
{
	json_num(f, "r_s", d->r_s, 1);
	json_num(f, "w_s", d->w_s, 1);
	json_num(f, "mb_s", d->mb_s, 1);
	json_num(f, "await_ms", d->await_ms, 1);
	json_num(f, "aqu_sz", d->aqu_sz, 1);
	json_num(f, "util_pct", d->util_pct, 1);
	json_num(f, "p50_ms", d->p50_ms, 1);
	json_num(f, "p99_ms", d->p99_ms, 1);
	fprintf(f, ",\"bytes\":%llu", (unsigned long long)d->bytes);
}

/* "params": the sweep as asked, and the lists its series are made of (the
 * object left open for "runs"). */
static void json_params(FILE *f, const struct bench_sweep_opts *o)
{
	fprintf(f, "{\"params\":{\"mode\":\"%s\"", o->nlevels ? "levels" : "members");
	if (o->nlevels) {
		fprintf(f, ",\"levels\":[");
		for (unsigned i = 0; i < o->nlevels; i++)
			fprintf(f, "%s\"%s\"", i ? "," : "", layout_level_name(o->levels[i]));
		fputc(']', f);
	} else {
		fprintf(f, ",\"level\":\"%s\"", layout_level_name(o->level));
	}
	fprintf(f, ",\"members\":[%u,%u],\"chunk\":%llu,\"size\":%llu", o->mem_lo, o->mem_hi,
		(unsigned long long)o->chunk[0], (unsigned long long)o->size);
	fprintf(f, ",\"model\":");
	json_str(f, o->model[0]);
	fprintf(f, ",\"block\":%llu,\"duration_s\":%g,\"warmup_s\":%g,\"cooldown_s\":%g,\"outstanding\":%u,"
		   "\"threads\":%u,\"direct\":%s,\"seed\":%llu,\"filled\":%s",
		(unsigned long long)o->block[0], o->run.duration, o->run.warmup, o->run.cooldown, o->qd[0],
		o->run.threads, o->run.direct ? "true" : "false", (unsigned long long)o->run.seed,
		o->no_fill ? "false" : "true");
	fprintf(f, ",\"max_offset\":%llu", (unsigned long long)o->run.max_off);
	/* the lists the series are made of (chunk, block, outstanding, model: the first of each above) */
	fprintf(f, ",\"chunks\":[");
	for (unsigned i = 0; i < o->nchunk; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)o->chunk[i]);
	fprintf(f, "],\"blocks\":[");
	for (unsigned i = 0; i < o->nblock; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)o->block[i]);
	fprintf(f, "],\"qds\":[");
	for (unsigned i = 0; i < o->nqd; i++)
		fprintf(f, "%s%u", i ? "," : "", o->qd[i]);
	fprintf(f, "],\"models\":[");
	for (unsigned i = 0; i < o->nmodel; i++) {
		fprintf(f, i ? "," : "");
		json_str(f, o->model[i]);
	}
	fprintf(f, "],\"workloads\":[");
	for (unsigned w = 0; w < o->nwl; w++)
		fprintf(f, "%s\"%s\"", w ? "," : "", bench_wl_name[o->wl[w]]);
}

/* One run: its parameters, figures, and each member's share. */
static void json_row(FILE *f, const struct bench_sweep_opts *o, const struct bench_sweep_row *row)
{
	double sum = 0;
	for (unsigned m = 0; m < row->members; m++)
		sum += (double)row->dev[m].bytes;
	char pat[80], lab[160];
	fprintf(f, "{\"level\":\"%s\",\"members\":%u,\"workload\":\"%s\"",
		layout_level_name(row->level), row->members, bench_wl_name[row->wl]);
	fprintf(f, ",\"series\":%u,\"series_label\":", row->series);
	json_str(f, bench_sweep_series_label(o, row->series, lab, sizeof(lab)));
	fprintf(f, ",\"chunk\":%llu,\"block\":%llu,\"qd\":%u,\"threads\":%u,\"pattern\":",
		(unsigned long long)row->chunk, (unsigned long long)row->block, row->qd, row->threads);
	json_str(f, bench_sweep_pattern(o, row->wl, pat, sizeof(pat)));
	fprintf(f, ",\"model\":");
	json_str(f, row->model);
	fprintf(f, ",\"size\":%llu,\"filled\":%s", (unsigned long long)o->size, row->filled ? "true" : "false");
	json_num(f, "test_time_s", row->test_s, 1);
	fprintf(f, ",\"ios\":%llu,\"bytes\":%llu", (unsigned long long)row->fig.ios,
		(unsigned long long)row->fig.bytes);
	json_num(f, "iops", row->fig.iops, 1);
	json_num(f, "mb_s", row->fig.mb_s, 1);
	json_num(f, "avg_lat_ms", row->fig.avg_ms, 1);
	json_num(f, "lat_stddev_ms", row->fig.std_ms, 1);
	json_num(f, "avg_sec_per_io", row->fig.avg_ms / 1000, 1);
	fprintf(f, ",\"latency_ms\":{");
	for (int p = 0; p < BENCH_NPCT; p++)
		json_num(f, bench_pct_name[p], row->pct_ms[p], p);
	fprintf(f, "},\"volume\":{\"name\":\"volume\"");
	json_dev(f, &row->vol);
	fputc('}', f);
	json_num(f, "member_reads_per_io", row->m_reads_per_io, 1);
	json_num(f, "member_writes_per_io", row->m_writes_per_io, 1);
	fprintf(f, ",\"devices\":[");
	for (unsigned m = 0; m < row->members; m++) {
		fprintf(f, "%s{\"name\":\"m%u\"", m ? "," : "", m);
		json_dev(f, &row->dev[m]);
		json_num(f, "share_pct", sum > 0 ? (double)row->dev[m].bytes / sum * 100 : NAN, 1);
		fputc('}', f);
	}
	fprintf(f, "]}");
}

/* The two summaries the table prints, per series: random vs sequential,
 * and the scaling with the member count. */
static void json_summaries(FILE *f, const struct bench_sweep *s)
{
	const struct bench_sweep_opts *o = s->o;
	unsigned ns = bench_sweep_nseries(o);
	fprintf(f, ",\"rand_vs_seq_pct\":[");
	int first = 1;
	for (unsigned k = 0; k < ns; k++)
		for (unsigned n = o->mem_lo; n <= o->mem_hi; n++)
			for (int wr = 0; wr < 2; wr++) {
				const struct bench_sweep_row *sq = bench_sweep_find(s, k, o->level, n, wr ? BENCH_WL_SEQWRITE : BENCH_WL_SEQREAD);
				const struct bench_sweep_row *rn = bench_sweep_find(s, k, o->level, n, wr ? BENCH_WL_RANDWRITE : BENCH_WL_RANDREAD);
				if (!sq || !rn)
					continue;
				fprintf(f, "%s{\"series\":%u,\"members\":%u,\"op\":\"%s\"", first ? "" : ",", k, n,
					wr ? "write" : "read");
				json_num(f, "diff_pct", pct_diff(rn->fig.mb_s, sq->fig.mb_s), 1);
				fputc('}', f);
				first = 0;
			}
	fprintf(f, "],\"scaling\":[");
	first = 1;
	for (unsigned k = 0; k < ns; k++)
		for (unsigned w = 0; w < o->nwl; w++) {
			const struct bench_sweep_row *base = bench_sweep_find(s, k, o->level, o->mem_lo, o->wl[w]);
			fprintf(f, "%s{\"series\":%u,\"workload\":\"%s\",\"factor\":[", first ? "" : ",", k,
				bench_wl_name[o->wl[w]]);
			first = 0;
			for (unsigned n = o->mem_lo; n <= o->mem_hi; n++) {
				const struct bench_sweep_row *row = bench_sweep_find(s, k, o->level, n, o->wl[w]);
				double v = row && base && base->fig.mb_s > 0 ? row->fig.mb_s / base->fig.mb_s : NAN;
				fprintf(f, n > o->mem_lo ? "," : "");
				if (isfinite(v))
					fprintf(f, "%.6g", v);
				else
					fprintf(f, "null");
			}
			fprintf(f, "]}");
		}
	fputc(']', f);
}

static int write_json(const struct bench_sweep *s, FILE *f)
{
	const struct bench_sweep_opts *o = s->o;
	json_params(f, o);
	fprintf(f, "]},\"runs\":[");
	for (unsigned i = 0; i < s->nrow; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_row(f, o, &s->row[i]);
	}
	fputc(']', f);
	if (!o->nlevels)
		json_summaries(f, s);
	fprintf(f, "}\n");
	return ferror(f) ? -EIO : 0;
}

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* --out DIR: sweep.json and the plots (sweep.csv was written as runs ended). */
static int write_outputs(const struct bench_sweep *s)
{
	char p[PATH_MAX];
	const char *out = s->o->out;
	int r;
	FILE *f;
	snprintf(p, sizeof(p), "%s/sweep.json", out);
	if (!(f = fopen(p, "w"))) {
		fprintf(stderr, "fsvol-bench sweep: %s: %s\n", p, strerror(errno));
		return -errno;
	}
	r = write_json(s, f);
	if (fclose(f) || r) {
		fprintf(stderr, "fsvol-bench sweep: %s: write error\n", p);
		return -EIO;
	}
	FILE *msg = s->o->json ? stderr : stdout;
	fprintf(msg, "\nwrote %s/sweep.csv and %s/sweep.json\n", out, out);
	bench_plot(s, out, msg);
	return 0;
}

int bench_sweep_main(int argc, char **argv)
{
	struct bench_sweep_opts o;
	struct bench_sweep s = { .o = &o };
	struct sw_progress pg = { 0 };
	char err[600];
	unsigned nconf = 0, nruns;
	int r;

	bench_sweep_defaults(&o);
	r = bench_sweep_parse(&o, argc, argv, err, sizeof(err));
	if (r == 1)
		return 0;
	if (r) {
		fprintf(stderr, "fsvol-bench sweep: %s\n", err);
		return 2;
	}
	nconf = o.nlevels ? o.nlevels : o.mem_hi - o.mem_lo + 1;
	nruns = nconf * o.nwl * bench_sweep_nseries(&o);
	if (!(s.row = calloc(nruns, sizeof(*s.row)))) {
		fprintf(stderr, "fsvol-bench sweep: out of memory\n");
		return 1;
	}
	if (o.out && (r = mkdir_p(o.out))) {
		fprintf(stderr, "fsvol-bench sweep: --out %s: %s\n", o.out, strerror(-r));
		free(s.row);
		return 1;
	}
	if ((r = bench_tmpdir_make(o.dir ? o.dir : "/var/tmp", "fsvol-sweep", err, sizeof(err)))) {
		fprintf(stderr, "fsvol-bench sweep: %s\n", err);
		free(s.row);
		return 1;
	}
	pg.show = !o.quiet && isatty(STDERR_FILENO);
	pg.n = nruns;
	pg.t0 = stats_now();
	if (o.out) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/sweep.csv", o.out);
		if (!(pg.csv = fopen(p, "w"))) {
			fprintf(stderr, "fsvol-bench sweep: %s: %s\n", p, strerror(errno));
			bench_tmpdir_remove();
			free(s.row);
			return 1;
		}
		csv_head(pg.csv);
		fflush(pg.csv);
	}
	if (!o.json) { /* the header now, each row as its run ends */
		pg.out = stdout;
		stream_head(stdout, &o);
	}
	for (unsigned ci = 0; ci < o.nchunk && !r; ci++)
		for (unsigned c = 0; c < nconf && !r; c++) {
			enum layout_level l = o.nlevels ? o.levels[c] : o.level;
			unsigned n = o.nlevels ? level_members(&o, l) : o.mem_lo + c;
			r = run_config(&s, l, n, ci, &pg, err, sizeof(err));
		}
	if (pg.show)
		fprintf(stderr, "\r\033[K");
	bench_tmpdir_remove();
	if (pg.csv && fclose(pg.csv) && !r) {
		snprintf(err, sizeof(err), "%s/sweep.csv: %s", o.out, strerror(errno));
		r = -EIO;
	}
	if (r) {
		fprintf(stderr, "fsvol-bench sweep: %s\n", err);
		free(s.row);
		return 1;
	}
	if (o.json)
		write_json(&s, stdout);
	else
		stream_tail(stdout, &s);
	fflush(stdout);
	if (o.out && write_outputs(&s))
		r = 1;
	free(s.row);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fsvol-bench sweep: writing the report: error\n");
		return 1;
	}
	return r ? 1 : 0;
}
