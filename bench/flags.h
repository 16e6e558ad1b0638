/* flags: the option-table parser shared by fsvol-bench and its sweep.
 * diskspd style: values may be attached ("-b64K", "-r4K") or, for flags that
 * need one, the next argument ("-b 64K"); optional values must be attached;
 * long flags take "--name VALUE" or "--name=VALUE". One table drives the
 * parser, --help (synopsis included) and the man page. */
#ifndef FSVOL_BENCH_FLAGS_H
#define FSVOL_BENCH_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum bench_flag_arg { BENCH_FLAG_NONE, BENCH_FLAG_REQ, BENCH_FLAG_OPT };

/* What a setter gets: where its error message goes, and the options. */
struct bench_flag_ctx {
	const char *flag; /* as the user spelt it: "-b", "--dist" */
	char *err;
	size_t errlen;
	void *o;          /* the options being filled */
	void *st;         /* the parser's own state, if any */
};

struct bench_flag {
	int sname;
	const char *lname;
	enum bench_flag_arg arg;
	const char *argname;
	const char *help;
	int (*set)(struct bench_flag_ctx *c, const char *v); /* 0 or -EINVAL via bench_flag_bad */
};

/* "FLAG VALUE: message" into c->err; returns -EINVAL. */
int bench_flag_bad(struct bench_flag_ctx *c, const char *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Value checkers: 0, or -EINVAL with a message naming the flag and the range. */
int bench_flag_size(struct bench_flag_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max);
int bench_flag_u64(struct bench_flag_ctx *c, const char *v, uint64_t *out, uint64_t min, uint64_t max);
int bench_flag_uint(struct bench_flag_ctx *c, const char *v, unsigned *out, unsigned min, unsigned max);
int bench_flag_secs(struct bench_flag_ctx *c, const char *v, double *out, int zero_ok);
struct bench_dist;
/* --dist D: uniform, normal:SIGMA, zipf:THETA, hot:DATA%/IO% (opts.c). */
int bench_flag_dist(struct bench_flag_ctx *c, const char *v, struct bench_dist *out);

/* Parse argv[1..] with table (ended by an entry without set). Operands go to
 * operand(c, arg) (NULL: operands are an error); "--" makes the rest operands.
 * Returns 0, 1 after printing usage(stdout) for -h/--help, or -EINVAL with a
 * message in c->err. prog names the command in "see PROG --help". */
int bench_flags_parse(const struct bench_flag *table, int argc, char **argv, struct bench_flag_ctx *c,
		      int (*operand)(struct bench_flag_ctx *c, const char *arg), const char *prog,
		      void (*usage)(FILE *f));
/* The flags part of --help, one line per table entry. */
void bench_flags_usage(const struct bench_flag *table, FILE *f);
/* "usage: PROG [-b SIZE] [-r[ALIGN]] ... OPERANDS" from the table, wrapped at
 * 80 columns. */
void bench_flags_synopsis(const struct bench_flag *table, const char *prog, const char *operands, FILE *f);
/* The same in roff for a man page's SYNOPSIS (bench/man.c), and one .TP
 * paragraph per flag for its OPTIONS. */
void bench_flags_man_synopsis(const struct bench_flag *table, const char *prog, const char *operands, FILE *f);
void bench_flags_man(const struct bench_flag *table, FILE *f);

#endif
