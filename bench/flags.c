/* flags: option tables for fsvol-bench and its sweep (see flags.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/flags.h"
#include "fsvol/util/wrap.h"
#include "fsvol/util/roff.h"
#include "fsvol/util/size.h"

int bench_flag_bad(struct bench_flag_ctx *c, const char *v, const char *fmt, ...)
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

int bench_flag_size(struct bench_flag_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max)
{
	uint64_t x;
	int r = size_parse(v, &x);
	if (r == -ERANGE)
		return bench_flag_bad(c, v, "too large");
	if (r)
		return bench_flag_bad(c, v, "not a size (a number with an optional K, M, G or T suffix)");
	if (x < min || x > max) {
		char a[32], b[32];
		size_format(min, a, sizeof(a));
		size_format(max, b, sizeof(b));
		return bench_flag_bad(c, v, "must be %s..%s", a, b);
	}
	*out = x;
	return 0;
}

int bench_flag_u64(struct bench_flag_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max)
{
	char *end;
	if (!*v || *v < '0' || *v > '9')
		return bench_flag_bad(c, v, "not a number");
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end)
		return bench_flag_bad(c, v, "not a number");
	if (errno == ERANGE || x < min || x > max)
		return bench_flag_bad(c, v, "must be %llu..%llu", (unsigned long long)min, (unsigned long long)max);
	*out = x;
	return 0;
}

int bench_flag_uint(struct bench_flag_ctx *c, const char *v, unsigned *out, unsigned min, unsigned max)
{
	uint64_t x;
	int r = bench_flag_u64(c, v, &x, min, max);
	if (!r)
		*out = (unsigned)x;
	return r;
}

/* Seconds: "10", "1.5"; an optional trailing "s". */
int bench_flag_secs(struct bench_flag_ctx *c, const char *v, double *out, int zero_ok)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || (*end && strcmp(end, "s")) || !isfinite(x))
		return bench_flag_bad(c, v, "not a number of seconds");
	if (zero_ok ? x < 0 : x <= 0)
		return bench_flag_bad(c, v, zero_ok ? "must be >= 0" : "must be > 0");
	if (x > 31536000)
		return bench_flag_bad(c, v, "must be <= 31536000 (a year)");
	*out = x;
	return 0;
}

/* A table with a -h flag of its own (fsvol-bench's: diskspd's -Sh) leaves
 * help to -? and --help. */
static int has_h(const struct bench_flag *t)
{
	for (; t->set; t++)
		if (t->sname == 'h')
			return 1;
	return 0;
}

void bench_flags_usage(const struct bench_flag *t, FILE *f)
{
	for (const struct bench_flag *d = t; d->set; d++) {
		char left[48];
		if (d->sname && d->lname)
			snprintf(left, sizeof(left), "-%c, --%s", d->sname, d->lname);
		else if (d->sname)
			snprintf(left, sizeof(left), "-%c%s%s", d->sname, d->arg == BENCH_FLAG_REQ ? " " : "",
				 d->argname ? d->argname : "");
		else
			snprintf(left, sizeof(left), "--%s%s%s", d->lname, d->argname ? " " : "",
				 d->argname ? d->argname : "");
		int w = fprintf(f, "  %-22s", left);
		wrap_words(f, d->help, (size_t)w, 25, 0);
		fputc('\n', f);
	}
	fprintf(f, "  %-22s %s\n", has_h(t) ? "-?, --help" : "-h, --help", "show this help");
}

/* The spelling a synopsis uses: "-b", "--dist"; and its value, attached for
 * optional values ("-r[ALIGN]"). */
static const char *syn_name(const struct bench_flag *d, char *buf, size_t len)
{
	if (d->sname)
		snprintf(buf, len, "-%c", d->sname);
	else
		snprintf(buf, len, "--%s", d->lname);
	return buf;
}

/* One word of a synopsis at *col, wrapped before 80 columns to indent. */
static void syn_word(FILE *f, const char *w, size_t *col, size_t indent)
{
	size_t n = strlen(w);
	if (*col + 1 + n > 80 && *col > indent) {
		fprintf(f, "\n%*s", (int)indent, "");
		*col = indent;
	} else {
		fputc(' ', f);
		(*col)++;
	}
	fputs(w, f);
	*col += n;
}

void bench_flags_synopsis(const struct bench_flag *t, const char *prog, const char *operands, FILE *f)
{
	size_t indent = strlen("usage: ") + strlen(prog) + 1;
	size_t col = (size_t)fprintf(f, "usage: %s", prog);
	char ops[256], *save, *w;
	for (const struct bench_flag *d = t; d->set; d++) {
		char name[48], item[128];
		snprintf(item, sizeof(item), "[%s%s%s]", syn_name(d, name, sizeof(name)),
			 d->arg == BENCH_FLAG_REQ ? " " : "",
			 d->arg != BENCH_FLAG_NONE && d->argname ? d->argname : "");
		syn_word(f, item, &col, indent);
	}
	snprintf(ops, sizeof(ops), "%s", operands ? operands : "");
	for (w = strtok_r(ops, " ", &save); w; w = strtok_r(NULL, " ", &save))
		syn_word(f, w, &col, indent);
	fputc('\n', f);
}

void bench_flags_man_synopsis(const struct bench_flag *t, const char *prog, const char *operands, FILE *f)
{
	fputs(".PP\n.B ", f);
	roff_text(f, prog);
	fputc('\n', f);
	for (const struct bench_flag *d = t; d->set; d++) {
		char name[48];
		roff_syn_opt(f, syn_name(d, name, sizeof(name)), d->arg != BENCH_FLAG_NONE ? d->argname : NULL,
			     d->arg == BENCH_FLAG_OPT, 0);
	}
	if (operands && *operands)
		roff_syn_operands(f, operands);
}

void bench_flags_man(const struct bench_flag *t, FILE *f)
{
	for (const struct bench_flag *d = t; d->set; d++) {
		char names[64];
		if (d->sname && d->lname)
			snprintf(names, sizeof(names), "-%c, --%s", d->sname, d->lname);
		else if (d->sname)
			snprintf(names, sizeof(names), "-%c", d->sname);
		else
			snprintf(names, sizeof(names), "--%s", d->lname);
		roff_opt(f, names, d->arg != BENCH_FLAG_NONE ? d->argname : NULL, d->arg == BENCH_FLAG_OPT, d->help);
	}
	roff_opt(f, has_h(t) ? "-?, --help" : "-h, --help", NULL, 0, "show the usage text and exit");
}

int bench_flags_parse(const struct bench_flag *t, int argc, char **argv, struct bench_flag_ctx *c,
		      int (*operand)(struct bench_flag_ctx *c, const char *arg), const char *prog,
		      void (*usage)(FILE *f))
{
	int only_operands = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct bench_flag *d = NULL;
		char flag[64];
		if (only_operands || a[0] != '-' || !a[1]) {
			if (!operand) {
				snprintf(c->err, c->errlen, "%s: unexpected argument (%s takes flags only; see --help)",
					 a, prog);
				return -EINVAL;
			}
			if (operand(c, a))
				return -EINVAL;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_operands = 1;
			continue;
		}
		if ((!strcmp(a, "-h") && !has_h(t)) || !strcmp(a, "--help") || !strcmp(a, "-?")) {
			usage(stdout);
			return 1;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (const struct bench_flag *x = t; x->set; x++)
				if (x->lname && strlen(x->lname) == len && !strncmp(x->lname, name, len))
					d = x;
			if (!d) {
				snprintf(c->err, c->errlen, "unknown option '%.*s' (see %s --help)", (int)(len + 2), a,
					 prog);
				return -EINVAL;
			}
			snprintf(flag, sizeof(flag), "--%s", d->lname);
			if (eq && d->arg == BENCH_FLAG_NONE) {
				snprintf(c->err, c->errlen, "%s takes no value", flag);
				return -EINVAL;
			}
			if (eq)
				val = eq + 1;
		} else {
			for (const struct bench_flag *x = t; x->set; x++)
				if (x->sname == a[1])
					d = x;
			if (!d || (d->arg == BENCH_FLAG_NONE && a[2])) {
				snprintf(c->err, c->errlen, "unknown option '%s' (see %s --help)", a, prog);
				return -EINVAL;
			}
			snprintf(flag, sizeof(flag), "-%c", d->sname);
			if (d->arg != BENCH_FLAG_NONE && (a[2] || d->arg == BENCH_FLAG_OPT))
				val = a + 2;
		}
		if (d->arg == BENCH_FLAG_REQ && !val) {
			if (i + 1 >= argc) {
				snprintf(c->err, c->errlen, "%s needs a value (%s)", flag, d->argname);
				return -EINVAL;
			}
			val = argv[++i];
		}
		c->flag = flag;
		int r = d->set(c, val ? val : "");
		c->flag = NULL;
		if (r)
			return -EINVAL;
	}
	return 0;
}
