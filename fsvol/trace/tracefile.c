/* tracefile: load a workload trace in any format we read into one array of
 * requests (tracefile.h). Detection looks at the first non-blank line; each
 * format's parser lives in its own file (tf_*.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

static const char *const fmt_names[TRACEFILE_FMT_COUNT] = {
	[TRACEFILE_AUTO] = "auto",         [TRACEFILE_FIO2] = "fio2",
	[TRACEFILE_FIO3] = "fio3",         [TRACEFILE_BLKPARSE] = "blkparse",
	[TRACEFILE_MSR] = "msr",           [TRACEFILE_DISKSIM] = "disksim",
	[TRACEFILE_VALID] = "valid",
};

const char *tracefile_fmt_name(enum tracefile_fmt fmt)
{
	return (unsigned)fmt < TRACEFILE_FMT_COUNT ? fmt_names[fmt] : "?";
}

int tracefile_fmt_parse(const char *name, enum tracefile_fmt *out)
{
	if (!strcmp(name, "fio")) { /* either version: the header line says which */
		*out = TRACEFILE_FIO2;
		return 0;
	}
	for (unsigned i = 0; i < TRACEFILE_FMT_COUNT; i++)
		if (!strcmp(name, fmt_names[i])) {
			*out = (enum tracefile_fmt)i;
			return 0;
		}
	return -EINVAL;
}

int tracefile_push(struct tracefile *t, const struct tracefile_rec *r)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct tracefile_rec *p = realloc(t->rec, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->rec = p;
		t->cap = cap;
	}
	t->rec[t->n++] = *r;
	if (r->off + r->len > t->max_end)
		t->max_end = r->off + r->len;
	return 0;
}

void tracefile_free(struct tracefile *t)
{
	free(t->rec);
	memset(t, 0, sizeof(*t));
}

/* "8,0    3   1   0.000000000  697  Q ..." */
static int looks_blkparse(const char *s)
{
	uint64_t v;
	if (tf_u64(&s, &v) || *s++ != ',' || tf_u64(&s, &v) || tf_u64(&s, &v) || tf_u64(&s, &v))
		return 0;
	return !tf_fixed(&s, 1000000000, &v);
}

/* "Timestamp,Hostname,..." or "128166372003061629,hm,1,Read,3218653184,4096,2313" */
static int looks_msr(const char *s)
{
	if (!strncmp(s, "Timestamp,", 10))
		return 1;
	unsigned commas = 0;
	for (const char *p = s; *p; p++)
		commas += *p == ',';
	return commas == 6 && (strstr(s, ",Read,") || strstr(s, ",Write,"));
}

/* "R Hit 1975456 4 15362.00000 56074.00000" */
static int looks_valid(const char *s)
{
	s = tf_skip(s);
	if ((*s != 'R' && *s != 'W') || (s[1] != ' ' && s[1] != '\t'))
		return 0;
	s = tf_skip(s + 1);
	return !strncmp(s, "Hit", 3) || !strncmp(s, "Miss", 4);
}

/* five numbers: "13.191135 30 0 5 1" */
static int looks_disksim(const char *s)
{
	uint64_t v;
	if (tf_fixed(&s, 1000000, &v))
		return 0;
	for (int i = 0; i < 4; i++)
		if (tf_u64(&s, &v))
			return 0;
	return !*tf_skip(s);
}

enum tracefile_fmt tf_detect(const char *line)
{
	if (!strncmp(line, "fio version 2 iolog", 19))
		return TRACEFILE_FIO2;
	if (!strncmp(line, "fio version 3 iolog", 19))
		return TRACEFILE_FIO3;
	if (looks_blkparse(line))
		return TRACEFILE_BLKPARSE;
	if (looks_msr(line))
		return TRACEFILE_MSR;
	if (looks_valid(line))
		return TRACEFILE_VALID;
	if (looks_disksim(line))
		return TRACEFILE_DISKSIM;
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
	switch (fmt) {
	case TRACEFILE_FIO2: r = tf_parse_fio(path, f, 2, out, err, errlen); break;
	case TRACEFILE_FIO3: r = tf_parse_fio(path, f, 3, out, err, errlen); break;
	case TRACEFILE_BLKPARSE: r = tf_parse_blkparse(path, f, out, err, errlen); break;
	case TRACEFILE_MSR: r = tf_parse_msr(path, f, out, err, errlen); break;
	case TRACEFILE_DISKSIM: r = tf_parse_disksim(path, f, out, err, errlen); break;
	case TRACEFILE_VALID: r = tracefile_parse_valid(path, f, out, err, errlen); break;
	default:
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
