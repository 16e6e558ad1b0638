/* tf_int: what tracefile's per-format parsers share (not for users of
 * tracefile.h): a line reader that counts lines, the "FILE:LINE: ..." error,
 * number scanners, and the format table tracefile_load dispatches through. */
#ifndef FSVOL_TF_INT_H
#define FSVOL_TF_INT_H

#include "fsvol/trace/tracefile.h"

struct tf_reader {
	FILE *f;
	const char *path;
	char *line;       /* the current line, without its end of line */
	size_t cap;
	uint32_t lineno;
};

/* Next line into r->line; its length, or -1 at the end (or a read error:
 * ferror(r->f) tells). */
long tf_getline(struct tf_reader *r);
void tf_reader_free(struct tf_reader *r);
/* "PATH:LINE: " + the message into err; returns -EINVAL. */
int tf_err(const struct tf_reader *r, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Skip blanks (spaces, tabs) at *p. */
const char *tf_skip(const char *p);
/* A decimal number at *p (after blanks); advances *p. 0 or -EINVAL. */
int tf_u64(const char **p, uint64_t *out);
/* A non-negative decimal with an optional fraction ("12.5"), scaled by
 * mult and rounded: tf_fixed("1.5", 1000000) = 1500000. 0 or -EINVAL. */
int tf_fixed(const char **p, uint64_t mult, uint64_t *out);
/* The word at *p (up to a blank) copied into buf; 0, or -EINVAL when empty
 * or too long. */
int tf_word(const char **p, char *buf, size_t len);
/* Append a request with the trace's own line number and grow max_end. */
int tf_push(struct tracefile *t, const struct tf_reader *r, struct tracefile_rec *rec);

/* The format of a trace whose first non-blank line is LINE, or TRACEFILE_AUTO. */
enum tracefile_fmt tf_detect(const char *line);

/* One trace format: whether a trace whose first non-blank line is LINE is
 * of it, and its parser (the contract of tracefile_parse_valid). Each
 * parser's file exports its table; tracefile.c lists them. */
struct tf_format {
	enum tracefile_fmt fmt;
	const char *name;    /* tracefile_fmt_parse's word */
	int (*looks)(const char *line);
	int (*parse)(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen);
};
extern const struct tf_format tf_format_fio2, tf_format_fio3, tf_format_blkparse, tf_format_msr,
	tf_format_valid, tf_format_disksim;

#endif
