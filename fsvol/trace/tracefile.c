/* tracefile: load a workload trace in any format we read into one array of
 * requests (tracefile.h). Detection looks at the first non-blank line; each
 * format's parser lives in its own file (tf_*.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

/* The formats, in the order detection tries them (the first whose looks()
 * takes the first non-blank line wins). */
static const struct tf_format *const formats[] = {
	&tf_format_fio2, &tf_format_fio3, &tf_format_blkparse, &tf_format_msr,
	&tf_format_valid, &tf_format_disksim,
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static const struct tf_format *format_of(enum tracefile_fmt fmt)
{
	for (unsigned i = 0; i < NFORMATS; i++)
		if (formats[i]->fmt == fmt)
			return formats[i];
	return NULL;
}

const char *tracefile_fmt_name(enum tracefile_fmt fmt)
{
	const struct tf_format *tf = format_of(fmt);
	return fmt == TRACEFILE_AUTO ? "auto" : tf ? tf->name : "?";
}

int tracefile_fmt_parse(const char *name, enum tracefile_fmt *out)
{
	if (!strcmp(name, "fio")) { /* either version: the header line says which */
		*out = TRACEFILE_FIO2;
		return 0;
	}
	if (!strcmp(name, "auto")) {
		*out = TRACEFILE_AUTO;
		return 0;
	}
	for (unsigned i = 0; i < NFORMATS; i++)
		if (!strcmp(name, formats[i]->name)) {
			*out = formats[i]->fmt;
			return 0;
		}
	return -EINVAL;
}

enum tracefile_fmt tf_detect(const char *line)
{
	for (unsigned i = 0; i < NFORMATS; i++)
		if (formats[i]->looks(line))
			return formats[i]->fmt;
	return TRACEFILE_AUTO;
}

static int detect(const char *path, FILE *f, enum tracefile_fmt *fmt, char *err, size_t errlen)
{
	struct tf_reader r = { .f = f, .path = path };
	long n;
	while ((n = tf_getline(&r)) >= 0 && !*tf_skip(r.line))
		;
	if (n < 0) {
		tf_reader_free(&r);
		if (ferror(f)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
			return -EIO;
		}
		snprintf(err, errlen, "%s: empty (no requests)", path);
		return -EINVAL;
	}
	*fmt = tf_detect(r.line);
	if (*fmt == TRACEFILE_AUTO)
		tf_err(&r, err, errlen, "unknown trace format (\"%.60s\"): expected a fio iolog v2/v3, blkparse "
			"text, MSR Cambridge CSV, DiskSim ASCII or DiskSim validation trace (or name one)", r.line);
	tf_reader_free(&r);
	return *fmt == TRACEFILE_AUTO ? -EINVAL : 0;
}

/* Times from the earliest request, whatever the trace's origin was. */
static void rebase(struct tracefile *t)
{
	uint64_t t0 = UINT64_MAX;
	for (size_t i = 0; i < t->n; i++)
		if (t->rec[i].t_ns < t0)
			t0 = t->rec[i].t_ns;
	for (size_t i = 0; i < t->n; i++)
		t->rec[i].t_ns -= t0;
}

int tracefile_load(const char *path, enum tracefile_fmt fmt, struct tracefile *out, char *err,
		   size_t errlen)
{
	int r;
	memset(out, 0, sizeof(*out));
	err[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fmt == TRACEFILE_AUTO) {
		if ((r = detect(path, f, &fmt, err, errlen)))
			goto out;
		rewind(f);
	}
	out->fmt = fmt;
	const struct tf_format *tf = format_of(fmt);
	if (tf)
		r = tf->parse(path, f, out, err, errlen);
	else {
		snprintf(err, errlen, "%s: unknown trace format %d", path, (int)fmt);
		r = -EINVAL;
	}
	if (!r && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		r = -EIO;
	}
	if (!r && out->n == 0) {
		snprintf(err, errlen, "%s: no requests in this %s trace", path, tracefile_fmt_name(fmt));
		r = -EINVAL;
	}
	if (!r)
		rebase(out);
out:
	fclose(f);
	if (r) {
		tracefile_free(out);
		out->fmt = fmt;
	}
	return r;
}
