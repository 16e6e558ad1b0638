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
#include "fsvol/size.h"

enum opt_arg { ARG_NONE, ARG_REQ, ARG_OPT };

struct opt_ctx {
	struct bench_opts *o;
	const char *flag;  /* as the user spelt it: "-b", "--dist" */
	char *err;
	size_t errlen;
};

struct bench_optdef {
	int sname;
	const char *lname;
	enum opt_arg arg;
	const char *argname;
	const char *help;
	int (*set)(struct opt_ctx *c, const char *v);
};

static int bad(struct opt_ctx *c, const char *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct opt_ctx *c, const char *v, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errlen, "%s%s%s: ", c->flag, v ? " " : "", v ? v : "");
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int get_size(struct opt_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max)
{
	int r = size_parse(v, out);
	if (r == -ERANGE)
		return bad(c, v, "too large");
	if (r)
		return bad(c, v, "not a size (a number with an optional K, M, G or T suffix)");
	if (*out < min)
		return bad(c, v, "must be >= %llu", (unsigned long long)min);
	if (*out > max)
		return bad(c, v, "must be <= %llu", (unsigned long long)max);
	return 0;
}

static int get_uint(struct opt_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max)
{
	char *end;
	if (!*v || *v == '-' || *v == '+' || *v == ' ')
		return bad(c, v, "not a number");
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end)
		return bad(c, v, "not a number");
	if (errno == ERANGE || x > max)
		return bad(c, v, "must be %llu..%llu", (unsigned long long)min, (unsigned long long)max);
	if (x < min)
		return bad(c, v, "must be >= %llu", (unsigned long long)min);
	*out = x;
	return 0;
}

/* Seconds: "10", "1.5"; an optional trailing "s". */
static int get_secs(struct opt_ctx *c, const char *v, double *out, int zero_ok)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || (*end && strcmp(end, "s")) || !isfinite(x))
		return bad(c, v, "not a number of seconds");
	if (zero_ok ? x < 0 : x <= 0)
		return bad(c, v, zero_ok ? "must be >= 0" : "must be > 0");
	if (x > 31536000)
		return bad(c, v, "must be <= 31536000 (a year)");
	*out = x;
	return 0;
}

static int set_b(struct opt_ctx *c, const char *v) { return get_size(c, v, &c->o->block, 1, 1ull << 30); }
static int set_d(struct opt_ctx *c, const char *v) { return get_secs(c, v, &c->o->duration, 0); }
static int set_W(struct opt_ctx *c, const char *v) { return get_secs(c, v, &c->o->warmup, 1); }
static int set_C(struct opt_ctx *c, const char *v) { return get_secs(c, v, &c->o->cooldown, 1); }

static int set_o(struct opt_ctx *c, const char *v)
{
	uint64_t x;
	int r = get_uint(c, v, &x, 1, 1024);
	c->o->outstanding = (unsigned)x;
	return r;
}

static int set_t(struct opt_ctx *c, const char *v)
{
	uint64_t x;
	int r = get_uint(c, v, &x, 1, 256);
	c->o->threads = (unsigned)x;
	return r;
}

static int set_pattern(struct opt_ctx *c, int random)
{
	if (c->o->pattern_set && c->o->random != random)
		return bad(c, NULL, "-r and -s exclude each other");
	c->o->pattern_set = 1;
	c->o->random = random;
	return 0;
}

static int set_r(struct opt_ctx *c, const char *v)
{
	if (*v && get_size(c, v, &c->o->align, 1, 1ull << 40))
		return -EINVAL;
	return set_pattern(c, 1);
}

static int set_s(struct opt_ctx *c, const char *v)
{
	if (*v && get_size(c, v, &c->o->stride, 1, 1ull << 40))
		return -EINVAL;
	return set_pattern(c, 0);
}

static int set_T(struct opt_ctx *c, const char *v) { return get_size(c, v, &c->o->thread_stride, 0, 1ull << 50); }

static int set_w(struct opt_ctx *c, const char *v)
{
	uint64_t x;
	char *end;
	if (!*v || *v == '-' || (strtoull(v, &end, 10), *end))
		return bad(c, v, "not a number (a write percentage 0..100)");
	if (get_uint(c, v, &x, 0, 100))
		return bad(c, v, "must be 0..100");
	c->o->write_pct = (unsigned)x;
	return 0;
}

static int set_c(struct opt_ctx *c, const char *v) { return get_size(c, v, &c->o->create_size, 1, 1ull << 50); }

static int set_S(struct opt_ctx *c, const char *v)
{
	if (!strcmp(v, "") || !strcmp(v, "u") || !strcmp(v, "h"))
		c->o->direct = 1;
	else if (!strcmp(v, "b"))
		c->o->direct = 0;
	else
		return bad(c, v, "expected -S, -Su, -Sh (no caching: O_DIRECT) or -Sb (caching)");
	return 0;
}

static int set_L(struct opt_ctx *c, const char *v) { (void)v; c->o->latency = 1; return 0; }

static int set_z(struct opt_ctx *c, const char *v)
{
	if (!*v) {
		c->o->seed_time = 1;
		return 0;
	}
	c->o->seed_time = 0;
	return get_uint(c, v, &c->o->seed, 0, UINT64_MAX);
}

static int set_Z(struct opt_ctx *c, const char *v) { (void)v; c->o->rand_buf = 1; return 0; }
static int set_q(struct opt_ctx *c, const char *v) { (void)v; c->o->quiet = 1; return 0; }
static int set_json(struct opt_ctx *c, const char *v) { (void)v; c->o->json = 1; return 0; }

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

static int set_dist(struct opt_ctx *c, const char *v)
{
	struct bench_dist d = { 0 };
	char *end;
	const char *usage = "expected uniform, normal:SIGMA, zipf:THETA or hot:DATA%/IO%";
	if (!strcmp(v, "uniform")) {
		d.kind = BENCH_DIST_UNIFORM;
	} else if (!strncmp(v, "normal:", 7)) {
		d.kind = BENCH_DIST_NORMAL;
		if (get_frac(v + 7, &end, &d.sigma) || *end)
			return bad(c, v, "SIGMA is not a number (a fraction of the range, 0.1 or 10%%)");
		if (!(d.sigma > 0) || d.sigma > 10)
			return bad(c, v, "SIGMA must be in (0, 10] (a fraction of the range)");
	} else if (!strncmp(v, "zipf:", 5)) {
		d.kind = BENCH_DIST_ZIPF;
		d.theta = strtod(v + 5, &end);
		if (end == v + 5 || *end || !isfinite(d.theta))
			return bad(c, v, "THETA is not a number");
		if (!(d.theta > 0) || d.theta > 10)
			return bad(c, v, "THETA must be in (0, 10]");
	} else if (!strncmp(v, "hot:", 4)) {
		d.kind = BENCH_DIST_HOT;
		/* DATA and IO are percentages, with or without '%' */
		d.hot_data = strtod(v + 4, &end);
		if (end == v + 4 || !isfinite(d.hot_data))
			return bad(c, v, "DATA is not a number (hot:DATA%%/IO%%, e.g. hot:10/90)");
		if (*end == '%')
			end++;
		if (*end != '/')
			return bad(c, v, "expected hot:DATA%%/IO%%, e.g. hot:10/90");
		const char *io = end + 1;
		d.hot_io = strtod(io, &end);
		if (end == io || !isfinite(d.hot_io))
			return bad(c, v, "IO is not a number (hot:DATA%%/IO%%, e.g. hot:10/90)");
		if (*end == '%')
			end++;
		if (*end)
			return bad(c, v, "expected hot:DATA%%/IO%%, e.g. hot:10/90");
		if (!(d.hot_data > 0 && d.hot_data < 100))
			return bad(c, v, "DATA%% must be in (0, 100)");
		if (!(d.hot_io >= 0 && d.hot_io <= 100))
			return bad(c, v, "IO%% must be in [0, 100]");
		d.hot_data /= 100;
		d.hot_io /= 100;
	} else {
		return bad(c, v, "%s", usage);
	}
	c->o->dist = d;
	c->o->dist_set = 1;
	return 0;
}

static int set_think(struct opt_ctx *c, const char *v) { return get_uint(c, v, &c->o->think_us, 0, 10000000); }

static int set_members(struct opt_ctx *c, const char *v)
{
	struct bench_opts *o = c->o;
	free(o->members_buf);
	o->nmembers = 0;
	if (!(o->members_buf = strdup(v)))
		return bad(c, NULL, "out of memory");
	for (char *s = o->members_buf, *next; s; s = next) {
		next = strchr(s, ',');
		if (next)
			*next++ = 0;
		if (!*s)
			return bad(c, v, "empty member name (a comma-separated list of member files)");
		if (o->nmembers == BENCH_MAX_MEMBERS)
			return bad(c, v, "more than %d members", BENCH_MAX_MEMBERS);
		o->members[o->nmembers++] = s;
	}
	return 0;
}

static int set_model(struct opt_ctx *c, const char *v)
{
	/* checked when the volume is opened (fsvol's --model spec grammar) */
	c->o->model = v;
	return 0;
}

static const struct bench_optdef opts[] = {
	{ 'b', NULL, ARG_REQ, "SIZE", "block size (default 64K)", set_b },
	{ 'd', NULL, ARG_REQ, "SEC", "measured duration (default 10)", set_d },
	{ 'W', NULL, ARG_REQ, "SEC", "warm-up before measuring (default 5)", set_W },
	{ 'C', NULL, ARG_REQ, "SEC", "cool-down after measuring (default 0)", set_C },
	{ 'o', NULL, ARG_REQ, "N", "outstanding I/Os per thread per target (default 2)", set_o },
	{ 't', NULL, ARG_REQ, "N", "threads per target (default 1)", set_t },
	{ 'r', NULL, ARG_OPT, "[ALIGN]", "random I/O aligned to ALIGN (default: block size)", set_r },
	{ 's', NULL, ARG_OPT, "[STRIDE]", "sequential I/O, STRIDE apart (default; STRIDE = block size)", set_s },
	{ 'T', NULL, ARG_REQ, "SIZE", "sequential: thread i starts at i x SIZE (default 0)", set_T },
	{ 'w', NULL, ARG_REQ, "PCT", "percentage of writes (default 0)", set_w },
	{ 'c', NULL, ARG_REQ, "SIZE", "create (and fill) the target file of SIZE; else use its size", set_c },
	{ 'S', NULL, ARG_OPT, "[u|h|b]", "-S, -Su, -Sh: no caching (O_DIRECT); -Sb: caching (default)", set_S },
	{ 'L', NULL, ARG_NONE, NULL, "latency percentiles table", set_L },
	{ 'z', NULL, ARG_OPT, "[SEED]", "random seed (default 0; -z alone: from the clock)", set_z },
	{ 'Z', NULL, ARG_NONE, NULL, "write buffers filled with random data (default: a fixed pattern)", set_Z },
	{ 'q', "quiet", ARG_NONE, NULL, "no progress line", set_q },
	{ 0, "dist", ARG_REQ, "D", "random record distribution: uniform (default), normal:SIGMA "
				     "(fraction of the range), zipf:THETA, hot:DATA%/IO%", set_dist },
	{ 0, "think", ARG_REQ, "US", "think time between the I/Os of one slot, microseconds", set_think },
	{ 0, "json", ARG_NONE, NULL, "the report as one JSON document", set_json },
	{ 0, "members", ARG_REQ, "M0,M1,...", "open this fsvol volume in-process (TARGET optional: a label)",
	  set_members },
	{ 0, "model", ARG_REQ, "SPEC", "with --members: emulated disks (fsvol mount --model; fsvol model list)",
	  set_model },
	{ 0 },
};

void bench_usage(FILE *f)
{
	fprintf(f, "usage: fsvol-bench [flags] TARGET...\n"
		   "  diskspd-style load generator; TARGET is a file, a block device, an fsvol\n"
		   "  MNT/volume, or (with --members) a volume opened in-process.\n"
		   "flags:\n");
	for (const struct bench_optdef *d = opts; d->set; d++) {
		char left[48];
		if (d->sname && d->lname)
			snprintf(left, sizeof(left), "-%c, --%s", d->sname, d->lname);
		else if (d->sname)
			snprintf(left, sizeof(left), "-%c%s%s", d->sname, d->arg == ARG_REQ ? " " : "",
				 d->argname ? d->argname : "");
		else
			snprintf(left, sizeof(left), "--%s%s%s", d->lname, d->argname ? " " : "",
				 d->argname ? d->argname : "");
		fprintf(f, "  %-20s %s\n", left, d->help);
	}
	fprintf(f, "  %-20s %s\n", "-h, --help", "show this help");
}

void bench_opts_default(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->block = 64 * 1024;
	o->duration = 10;
	o->warmup = 5;
	o->outstanding = 2;
	o->threads = 1;
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
	if (!o->nmembers && !o->ntargets) {
		snprintf(err, errlen, "no TARGET given (see fsvol-bench --help)");
		return -EINVAL;
	}
	if (o->model && !o->nmembers) {
		snprintf(err, errlen, "--model %s: needs --members (a mounted volume takes fsvol mount --model)",
			 o->model);
		return -EINVAL;
	}
	return 0;
}

int bench_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	int only_targets = 0;
	err[0] = 0;
	cmdline(o, argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct bench_optdef *d = NULL;
		const char *val = NULL;
		char flag[64];
		if (only_targets || a[0] != '-' || !a[1]) {
			if (o->ntargets == BENCH_MAX_TARGETS) {
				snprintf(err, errlen, "%s: more than %d targets", a, BENCH_MAX_TARGETS);
				return -EINVAL;
			}
			o->targets[o->ntargets++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_targets = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-?")) {
			bench_usage(stdout);
			return 1;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (const struct bench_optdef *x = opts; x->set; x++)
				if (x->lname && strlen(x->lname) == len && !strncmp(x->lname, name, len))
					d = x;
			if (!d) {
				snprintf(err, errlen, "unknown option '%.*s' (see fsvol-bench --help)",
					 (int)(len + 2), a);
				return -EINVAL;
			}
			snprintf(flag, sizeof(flag), "--%s", d->lname);
			if (eq) {
				if (d->arg == ARG_NONE) {
					snprintf(err, errlen, "%s takes no value", flag);
					return -EINVAL;
				}
				val = eq + 1;
			}
		} else {
			for (const struct bench_optdef *x = opts; x->set; x++)
				if (x->sname == a[1])
					d = x;
			if (!d || (d->arg == ARG_NONE && a[2])) {
				snprintf(err, errlen, "unknown option '%s' (see fsvol-bench --help)", a);
				return -EINVAL;
			}
			snprintf(flag, sizeof(flag), "-%c", d->sname);
			if (d->arg != ARG_NONE && (a[2] || d->arg == ARG_OPT))
				val = a + 2;
		}
		if (d->arg == ARG_REQ && !val) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value (%s)", flag, d->argname);
				return -EINVAL;
			}
			val = argv[++i];
		}
		struct opt_ctx c = { o, flag, err, errlen };
		if (d->set(&c, val ? val : ""))
			return -EINVAL;
	}
	return check(o, err, errlen);
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
