/* json: the reader (contract in json.h). A recursive descent bounded by
 * STATS_JSON_MAX_DEPTH; every byte read is checked against the end first. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/json.h"

struct jr {
	const char *s, *p, *end;
	char *err;
	size_t errlen;
	int rc; /* the first error wins */
};

/* An error at byte `at`: the message kept, -EINVAL (or j->rc if set first). */
static int fail_at(struct jr *j, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(struct jr *j, const char *at, const char *fmt, ...)
{
	if (j->rc)
		return j->rc;
	j->rc = -EINVAL;
	if (j->err && j->errlen) {
		int n = snprintf(j->err, j->errlen, "byte %zu: ", (size_t)(at - j->s));
		if (n >= 0 && (size_t)n < j->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return j->rc;
}

static int no_mem(struct jr *j)
{
	if (!j->rc && j->err && j->errlen)
		snprintf(j->err, j->errlen, "out of memory");
	if (!j->rc)
		j->rc = -ENOMEM;
	return j->rc;
}

static void ws(struct jr *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int is_digit(const struct jr *j)
{
	return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

/* ---- strings ---- */

struct sbuf {
	char *b;
	size_t n, cap;
};

static int sbuf_put(struct sbuf *s, const char *src, size_t k)
{
	if (s->n + k + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 32;
		while (s->n + k + 1 > cap)
			cap *= 2;
		char *b = realloc(s->b, cap);
		if (!b)
			return -ENOMEM;
		s->b = b;
		s->cap = cap;
	}
	memcpy(s->b + s->n, src, k);
	s->n += k;
	s->b[s->n] = 0;
	return 0;
}

/* Four hex digits after "\u": the code unit, or -1. */
static long hex4(struct jr *j)
{
	long v = 0;
	if (j->end - j->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = *j->p++;
		int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

static size_t utf8(unsigned long cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* "\uXXXX" (the backslash and 'u' read): a code point as UTF-8 into o, a
 * high surrogate joined with the low one that must follow. */
static int u_escape(struct jr *j, const char *esc, char *o, size_t *k)
{
	long hi = hex4(j), lo;
	if (hi < 0)
		return fail_at(j, esc, "bad \\u escape (four hex digits expected)");
	if (hi == 0)
		return fail_at(j, esc, "\\u0000 in a string");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail_at(j, esc, "lone low surrogate \\u%04lx", hi);
	if (hi < 0xd800 || hi > 0xdbff) {
		*k = utf8((unsigned long)hi, o);
		return 0;
	}
	if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
		return fail_at(j, esc, "lone high surrogate \\u%04lx", hi);
	j->p += 2;
	lo = hex4(j);
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail_at(j, esc, "high surrogate \\u%04lx not followed by a low one", hi);
	*k = utf8(0x10000 + (((unsigned long)hi - 0xd800) << 10) + ((unsigned long)lo - 0xdc00), o);
	return 0;
}

/* One escape after the backslash, decoded into o (k bytes). */
static int escape(struct jr *j, char *o, size_t *k)
{
	const char *esc = j->p - 1;
	if (j->p >= j->end)
		return fail_at(j, esc, "unterminated string");
	char c = *j->p++;
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at = c ? strchr(from, c) : NULL;
	*k = 1;
	if (at) {
		o[0] = to[at - from];
		return 0;
	}
	if (c == 'u')
		return u_escape(j, esc, o, k);
	return fail_at(j, esc, "bad escape \\%c", c >= 0x20 && c < 0x7f ? c : '?');
}

/* A string at j->p (the opening quote): its bytes, malloc'd, into *out. */
static int string(struct jr *j, char **out)
{
	const char *start = j->p;
	struct sbuf s = { 0 };
	j->p++;
	for (;;) {
		const char *run = j->p;
		while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
			j->p++;
		if (sbuf_put(&s, run, (size_t)(j->p - run)))
			goto nomem;
		if (j->p >= j->end) {
			fail_at(j, start, "unterminated string");
			goto bad;
		}
		char c = *j->p++;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20) {
			fail_at(j, j->p - 1, "control byte 0x%02x in a string", (unsigned char)c);
			goto bad;
		}
		char o[4];
		size_t k;
		if (escape(j, o, &k))
			goto bad;
		if (sbuf_put(&s, o, k))
			goto nomem;
	}
	if (!s.b && sbuf_put(&s, "", 0))
		goto nomem;
	*out = s.b;
	return 0;
nomem:
	no_mem(j);
bad:
	free(s.b);
	return j->rc;
}

/* ---- numbers ---- */

/* A number, the grammar's: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct jr *j, struct stats_json *v)
{
	const char *start = j->p;
	int neg = 0, whole = 1;
	if (*j->p == '-') {
		neg = 1;
		j->p++;
	}
	if (!is_digit(j))
		return fail_at(j, start, "expected a value");
	if (*j->p == '0' && (j->p++, is_digit(j)))
		return fail_at(j, start, "leading zero in a number");
	while (is_digit(j))
		j->p++;
	const char *digits_end = j->p;
	if (j->p < j->end && *j->p == '.') {
		j->p++, whole = 0;
		if (!is_digit(j))
			return fail_at(j, start, "expected a digit after '.'");
		while (is_digit(j))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++, whole = 0;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!is_digit(j))
			return fail_at(j, start, "expected a digit in the exponent");
		while (is_digit(j))
			j->p++;
	}
	v->t = STATS_JSON_NUM;
	uint64_t mag = 0;
	int exact = whole;
	for (const char *d = start + neg; exact && d < digits_end; d++) {
		unsigned dig = (unsigned)(*d - '0');
		if (mag > (UINT64_MAX - dig) / 10)
			exact = 0;
		else
			mag = mag * 10 + dig;
	}
	if (exact && !neg) {
		v->fits = STATS_JSON_U64 | (mag <= INT64_MAX ? STATS_JSON_I64 : 0);
		v->u64 = mag;
		v->i64 = mag <= INT64_MAX ? (int64_t)mag : 0;
	} else if (exact && mag <= (uint64_t)INT64_MAX + 1) {
		v->fits = STATS_JSON_I64 | (mag == 0 ? STATS_JSON_U64 : 0);
		v->i64 = mag ? -(int64_t)(mag - 1) - 1 : 0;
	}
	if (v->fits) {
		v->num = v->fits & STATS_JSON_U64 ? (double)v->u64 : (double)v->i64;
		return 0;
	}
	/* strtod wants a terminated copy (the text may end right after it) */
	size_t n = (size_t)(j->p - start);
	char small[64], *t = n < sizeof(small) ? small : malloc(n + 1);
	if (!t)
		return no_mem(j);
	memcpy(t, start, n);
	t[n] = 0;
	v->num = strtod(t, NULL); /* out of range: +-HUGE_VAL or 0, as JSON leaves it open */
	if (t != small)
		free(t);
	return 0;
}

/* ---- values ---- */

static int value(struct jr *j, struct stats_json *v, int depth);

static int literal(struct jr *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return 0;
	j->p += n;
	return 1;
}

/* An array or an object at j->p (its opening byte). */
static int container(struct jr *j, struct stats_json *v, int depth)
{
	int obj = *j->p == '{';
	char close = obj ? '}' : ']';
	size_t cap = 0;
	v->t = obj ? STATS_JSON_OBJ : STATS_JSON_ARR;
	if (depth >= STATS_JSON_MAX_DEPTH)
		return fail_at(j, j->p, "nested deeper than %d", STATS_JSON_MAX_DEPTH);
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) { /* room for one more; kids and keys stay owned by v */
			cap = cap ? cap * 2 : 4;
			struct stats_json *k = realloc(v->kids, cap * sizeof(*k));
			if (k)
				v->kids = k;
			char **ks = obj ? realloc(v->keys, cap * sizeof(*ks)) : NULL;
			if (ks)
				v->keys = ks;
			if (!k || (obj && !ks))
				return no_mem(j);
		}
		ws(j);
		if (obj) {
			if (j->p >= j->end || *j->p != '"')
				return fail_at(j, j->p, "expected a key (a string)");
			if (string(j, &v->keys[v->n]))
				return j->rc;
			ws(j);
			if (j->p >= j->end || *j->p != ':') {
				free(v->keys[v->n]);
				return fail_at(j, j->p, "expected ':'");
			}
			j->p++;
		}
		/* counted before it is read, so a failure frees what it holds */
		struct stats_json *kid = &v->kids[v->n++];
		if (value(j, kid, depth + 1))
			return j->rc;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		return fail_at(j, j->p, j->p < j->end ? "expected ',' or '%c'" : "unterminated: '%c' expected",
			       close);
	}
}

static int value(struct jr *j, struct stats_json *v, int depth)
{
	memset(v, 0, sizeof(*v));
	ws(j);
	v->off = (size_t)(j->p - j->s);
	if (j->p >= j->end)
		return fail_at(j, j->p, "expected a value, the text ended");
	char c = *j->p;
	if (c == '{' || c == '[')
		return container(j, v, depth);
	if (c == '"') {
		v->t = STATS_JSON_STR;
		return string(j, &v->str);
	}
	if (literal(j, "null"))
		return 0;
	if (literal(j, "true") || literal(j, "false")) {
		v->t = STATS_JSON_BOOL;
		v->b = c == 't';
		return 0;
	}
	return number(j, v);
}

static void free_value(struct stats_json *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_value(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
}

void stats_json_free(struct stats_json *v)
{
	if (v)
		free_value(v);
	free(v);
}

int stats_json_read(const char *buf, size_t len, struct stats_json **out, char *err, size_t errlen)
{
	struct jr j = { .s = buf, .p = buf, .end = buf + len, .err = err, .errlen = errlen };
	struct stats_json *v = calloc(1, sizeof(*v));
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (!v)
		return no_mem(&j);
	if (!value(&j, v, 0)) {
		ws(&j);
		if (j.p != j.end)
			fail_at(&j, j.p, "trailing bytes after the document");
	}
	if (j.rc) {
		stats_json_free(v);
		return j.rc;
	}
	*out = v;
	return 0;
}

/* ---- lookups ---- */

const struct stats_json *stats_json_get(const struct stats_json *o, const char *key)
{
	for (size_t i = 0; o && o->t == STATS_JSON_OBJ && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

const char *stats_json_str(const struct stats_json *o, const char *key)
{
	const struct stats_json *v = stats_json_get(o, key);
	return v && v->t == STATS_JSON_STR ? v->str : NULL;
}

uint64_t stats_json_u64(const struct stats_json *o, const char *key, uint64_t dflt)
{
	const struct stats_json *v = stats_json_get(o, key);
	return v && v->t == STATS_JSON_NUM && (v->fits & STATS_JSON_U64) ? v->u64 : dflt;
}

int64_t stats_json_i64(const struct stats_json *o, const char *key, int64_t dflt)
{
	const struct stats_json *v = stats_json_get(o, key);
	return v && v->t == STATS_JSON_NUM && (v->fits & STATS_JSON_I64) ? v->i64 : dflt;
}

double stats_json_num(const struct stats_json *o, const char *key, double dflt)
{
	const struct stats_json *v = stats_json_get(o, key);
	return v && v->t == STATS_JSON_NUM ? v->num : dflt;
}

int stats_json_bool(const struct stats_json *o, const char *key, int dflt)
{
	const struct stats_json *v = stats_json_get(o, key);
	return v && v->t == STATS_JSON_BOOL ? v->b : dflt;
}
