/* tf_read: the line reader and the scanners every trace parser uses, so each
 * parser only says what its fields are. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

long tf_getline(struct tf_reader *r)
{
	ssize_t n = getline(&r->line, &r->cap, r->f);
	if (n < 0)
		return -1;
	r->lineno++;
	while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
		r->line[--n] = 0;
	return (long)n;
}

void tf_reader_free(struct tf_reader *r)
{
	free(r->line);
	r->line = NULL;
	r->cap = 0;
}

int tf_err(const struct tf_reader *r, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s:%u: ", r->path, r->lineno);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const char *tf_skip(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int tf_u64(const char **p, uint64_t *out)
{
	const char *s = tf_skip(*p);
	uint64_t v = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL; /* overflow */
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

int tf_fixed(const char **p, uint64_t mult, uint64_t *out)
{
	const char *s = tf_skip(*p);
	uint64_t ip, frac = 0, scale = 1;
	if (tf_u64(&s, &ip) || ip > UINT64_MAX / mult)
		return -EINVAL;
	if (*s == '.') {
		s++;
		/* digits past the multiplier's precision (and one to round) are read, not kept */
		for (; *s >= '0' && *s <= '9'; s++)
			if (scale < 10 * mult && scale <= UINT64_MAX / 10) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
	}
	/* frac / scale of a unit, in 1 / mult units, rounded */
	uint64_t f = (uint64_t)(((unsigned __int128)frac * mult * 2 + scale) / (2 * scale));
	if (ip * mult > UINT64_MAX - f)
		return -EINVAL;
	*out = ip * mult + f;
	*p = s;
	return 0;
}

int tf_word(const char **p, char *buf, size_t len)
{
	const char *s = tf_skip(*p), *e = s;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	if (e == s || (size_t)(e - s) >= len)
		return -EINVAL;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = 0;
	*p = e;
	return 0;
}

int tf_push(struct tracefile *t, const struct tf_reader *r, struct tracefile_rec *rec)
{
	rec->line = r->lineno;
	return tracefile_push(t, rec);
}
