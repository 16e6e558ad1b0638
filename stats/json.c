/* json: a strict reader for exactly the document stats_render_json writes
 * (schema: docs/stats.schema.json), so `fsvol stat` can diff two reads of
 * MNT/stats.json. Any whitespace and any key order are accepted; every key is
 * required once, unknown keys, non-integer numbers and trailing bytes are
 * errors. Never reads past buf + len; nesting is fixed, so no deep recursion. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define MAX_MEMBERS 4096
#define MAX_STR 65536

struct jp {
	const char *s, *p, *end;
	char *err;
	size_t errlen;
	int bad; /* first error wins */
};

static int fail(struct jp *j, const char *fmt, ...)
{
	if (!j->bad && j->err && j->errlen) {
		int n = snprintf(j->err, j->errlen, "stats.json: byte %zu: ", (size_t)(j->p - j->s));
		if (n >= 0 && (size_t)n < j->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	j->bad = 1;
	return -EINVAL;
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* next significant byte, or -1 at the end */
static int peek(struct jp *j)
{
	ws(j);
	return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int expect(struct jp *j, char c)
{
	if (peek(j) != (unsigned char)c)
		return fail(j, "expected '%c'", c);
	j->p++;
	return 0;
}

/* a list's opening byte: 1 when an item follows, 0 when it closes at once */
static int list_open(struct jp *j, char open, char close)
{
	if (expect(j, open))
		return -EINVAL;
	if (peek(j) == (unsigned char)close) {
		j->p++;
		return 0;
	}
	return 1;
}

/* after an item: 1 when another follows (','), 0 at the list's close */
static int list_next(struct jp *j, char close)
{
	int c = peek(j);
	if (c != ',' && c != (unsigned char)close)
		return fail(j, "expected ',' or '%c'", close);
	j->p++;
	return c == ',';
}

static int is_lit(struct jp *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) >= n && memcmp(j->p, w, n) == 0) {
		j->p += n;
		return 1;
	}
	return 0;
}

static int get_u64(struct jp *j, uint64_t *out)
{
	int c = peek(j);
	if (c < '0' || c > '9')
		return fail(j, "expected an unsigned integer");
	uint64_t v = 0;
	const char *start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		unsigned d = (unsigned)(*j->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(j, "integer overflows 64 bits");
		v = v * 10 + d;
		j->p++;
	}
	if (*start == '0' && j->p - start > 1)
		return fail(j, "leading zero");
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
		return fail(j, "expected an integer");
	*out = v;
	return 0;
}

static int get_int(struct jp *j, int *out)
{
	int neg = 0;
	uint64_t v;
	if (peek(j) == '-') {
		neg = 1;
		j->p++;
	}
	if (get_u64(j, &v))
		return -EINVAL;
	if (v > (uint64_t)INT_MAX + (uint64_t)neg)
		return fail(j, "integer out of range");
	*out = neg ? (int)-(int64_t)v : (int)v;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string into buf (cap bytes, NUL-terminated). Escapes: the JSON set; \u
 * only for non-surrogate code points other than U+0000 (encoded as UTF-8). */
static int get_str_buf(struct jp *j, char *buf, size_t cap)
{
	size_t n = 0;
	if (expect(j, '"'))
		return -EINVAL;
	for (;;) {
		if (j->p >= j->end)
			return fail(j, "unterminated string");
		unsigned char c = (unsigned char)*j->p++;
		char tmp[4];
		size_t k = 1;
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(j, "control byte in string");
		tmp[0] = (char)c;
		if (c == '\\') {
			if (j->p >= j->end)
				return fail(j, "unterminated escape");
			c = (unsigned char)*j->p++;
			switch (c) {
			case '"': case '\\': case '/': tmp[0] = (char)c; break;
			case 'b': tmp[0] = '\b'; break;
			case 'f': tmp[0] = '\f'; break;
			case 'n': tmp[0] = '\n'; break;
			case 'r': tmp[0] = '\r'; break;
			case 't': tmp[0] = '\t'; break;
			case 'u': {
				unsigned cp = 0;
				if (j->end - j->p < 4)
					return fail(j, "short \\u escape");
				for (int i = 0; i < 4; i++) {
					int h = hexval((unsigned char)*j->p++);
					if (h < 0)
						return fail(j, "bad \\u escape");
					cp = cp << 4 | (unsigned)h;
				}
				if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
					return fail(j, "unsupported \\u escape");
				if (cp < 0x80) {
					tmp[0] = (char)cp;
				} else if (cp < 0x800) {
					tmp[0] = (char)(0xc0 | cp >> 6);
					tmp[1] = (char)(0x80 | (cp & 0x3f));
					k = 2;
				} else {
					tmp[0] = (char)(0xe0 | cp >> 12);
					tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
					tmp[2] = (char)(0x80 | (cp & 0x3f));
					k = 3;
				}
				break;
			}
			default:
				return fail(j, "bad escape");
			}
		}
		if (n + k >= cap)
			return fail(j, "string too long");
		memcpy(buf + n, tmp, k);
		n += k;
	}
	buf[n] = 0;
	return 0;
}

/* a string or null, heap-allocated */
static int get_str_alloc(struct jp *j, const char **out)
{
	if (peek(j) == 'n') {
		if (!is_lit(j, "null"))
			return fail(j, "expected a string or null");
		*out = NULL;
		return 0;
	}
	char *buf = malloc(MAX_STR);
	if (!buf)
		return -ENOMEM;
	if (get_str_buf(j, buf, MAX_STR)) {
		free(buf);
		return -EINVAL;
	}
	char *s = strdup(buf);
	free(buf);
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

/* Objects: call `field` for each key; it must know the key or fail. */
typedef int (*field_fn)(struct jp *j, const char *key, void *ctx);

static int get_object(struct jp *j, field_fn field, void *ctx)
{
	char key[32];
	int rc = list_open(j, '{', '}');
	while (rc > 0) {
		if (get_str_buf(j, key, sizeof(key)) || expect(j, ':'))
			return -EINVAL;
		if ((rc = field(j, key, ctx)))
			return rc;
		rc = list_next(j, '}');
	}
	return rc;
}

/* each key once: bit i of *seen for names[i]; returns the index or fails */
static int key_index(struct jp *j, const char *key, const char *const *names, unsigned n,
		     uint64_t *seen)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(key, names[i]) == 0) {
			if (*seen & (1ull << i))
				return fail(j, "duplicate key \"%s\"", key);
			*seen |= 1ull << i;
			return (int)i;
		}
	return fail(j, "unknown key \"%s\"", key);
}

static int check_all(struct jp *j, uint64_t seen, const char *const *names, unsigned n,
		     uint64_t optional)
{
	for (unsigned i = 0; i < n; i++)
		if (!(seen & (1ull << i)) && !(optional & (1ull << i)))
			return fail(j, "missing key \"%s\"", names[i]);
	return 0;
}

#define NKEYS(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

/* ---- "bucket" ---- */

struct bucket_ctx {
	uint64_t seen;
	int lat; /* parsing the "lat" (1) or "size" (0) description */
};

static const char *const bdesc_keys[] = {"unit", "count", "sub_bits", "rule"};

static int bdesc_field(struct jp *j, const char *key, void *vctx)
{
	struct bucket_ctx *c = vctx;
	char buf[256];
	uint64_t v;
	switch (key_index(j, key, bdesc_keys, NKEYS(bdesc_keys), &c->seen)) {
	case 0:
		if (get_str_buf(j, buf, sizeof(buf)))
			return -EINVAL;
		if (strcmp(buf, c->lat ? "ns" : "bytes") != 0)
			return fail(j, "unexpected bucket unit \"%s\"", buf);
		return 0;
	case 1:
		if (get_u64(j, &v))
			return -EINVAL;
		if (v != (c->lat ? STATS_LAT_BUCKETS : STATS_SIZE_BUCKETS))
			return fail(j, "bucket count %llu does not match this build",
				    (unsigned long long)v);
		return 0;
	case 2:
		if (!c->lat)
			return fail(j, "unknown key \"sub_bits\"");
		if (get_u64(j, &v))
			return -EINVAL;
		if (v != STATS_LAT_SUB_BITS)
			return fail(j, "sub_bits %llu does not match this build",
				    (unsigned long long)v);
		return 0;
	case 3:
		return get_str_buf(j, buf, sizeof(buf));
	default:
		return -EINVAL;
	}
}

static const char *const bucket_keys[] = {"lat", "size", "format"};

static int bucket_field(struct jp *j, const char *key, void *vctx)
{
	uint64_t *seen = vctx;
	char buf[256];
	int k = key_index(j, key, bucket_keys, NKEYS(bucket_keys), seen);
	if (k < 0)
		return -EINVAL;
	if (k == 2)
		return get_str_buf(j, buf, sizeof(buf));
	struct bucket_ctx c = {.lat = k == 0};
	if (get_object(j, bdesc_field, &c))
		return -EINVAL;
	return check_all(j, c.seen, bdesc_keys, NKEYS(bdesc_keys), k == 0 ? 0 : 1u << 2);
}

/* ---- histograms: sparse [[index,count],...], indexes increasing ---- */

static int get_hist(struct jp *j, uint64_t *h, unsigned nb)
{
	long last = -1;
	int rc = list_open(j, '[', ']');
	while (rc > 0) {
		uint64_t i, c;
		if (expect(j, '[') || get_u64(j, &i) || expect(j, ',') || get_u64(j, &c) ||
		    expect(j, ']'))
			return -EINVAL;
		if (i >= nb || (long)i <= last)
			return fail(j, "histogram bucket %llu out of order or range",
				    (unsigned long long)i);
		last = (long)i;
		h[i] = c;
		rc = list_next(j, ']');
	}
	return rc;
}

static const char *const hist_keys[] = {"read_lat", "write_lat", "flush_lat", "read_size",
					"write_size"};

struct hist_ctx {
	uint64_t seen;
	struct stats_snap *s;
};

static int hist_field(struct jp *j, const char *key, void *vctx)
{
	struct hist_ctx *c = vctx;
	int k = key_index(j, key, hist_keys, NKEYS(hist_keys), &c->seen);
	if (k < 0)
		return -EINVAL;
	if (k < 3)
		return get_hist(j, c->s->lat[k], STATS_LAT_BUCKETS);
	return get_hist(j, c->s->size[k - 3], STATS_SIZE_BUCKETS);
}

/* ---- a device ---- */

/* the u64 keys first, in dev_u64 order, then the others */
static const char *const dev_keys[] = {
	"t_ns", "reads", "writes", "flushes", "read_bytes", "write_bytes", "read_ns",
	"write_ns", "flush_ns", "inflight", "busy_ns", "queue_ns", "errors", "seq_reads",
	"seq_writes", "name", "index", "path", "state", "histograms", "counted", "uuid", "role",
};
#define OFF(f) offsetof(struct stats_snap, f)
static const size_t dev_u64[] = {
	OFF(t_ns), OFF(reads), OFF(writes), OFF(flushes), OFF(read_bytes), OFF(write_bytes),
	OFF(read_ns), OFF(write_ns), OFF(flush_ns), OFF(inflight), OFF(busy_ns), OFF(queue_ns),
	OFF(errors), OFF(seq_reads), OFF(seq_writes),
};
#define NU64 NKEYS(dev_u64)
enum { K_NAME = 15, K_INDEX, K_PATH, K_STATE, K_HIST, K_COUNTED, K_UUID, K_ROLE, NDEVKEYS };
_Static_assert(K_NAME == sizeof(dev_u64) / sizeof(dev_u64[0]), "dev_keys and dev_u64 agree");
_Static_assert(NDEVKEYS == sizeof(dev_keys) / sizeof(dev_keys[0]), "every key listed");

struct dev_ctx {
	uint64_t seen;
	struct stats_view_dev *d;
};

static int dev_field(struct jp *j, const char *key, void *vctx)
{
	struct dev_ctx *c = vctx;
	int k = key_index(j, key, dev_keys, NDEVKEYS, &c->seen);
	uint64_t v;
	if (k < 0)
		return -EINVAL;
	if (k < (int)NU64) {
		if (get_u64(j, &v))
			return -EINVAL;
		memcpy((char *)&c->d->snap + dev_u64[k], &v, sizeof(v));
		return 0;
	}
	switch (k) {
	case K_NAME:
		return get_str_alloc(j, &c->d->name);
	case K_PATH:
		return get_str_alloc(j, &c->d->path);
	case K_STATE:
		return get_str_alloc(j, &c->d->state);
	case K_UUID:
		return get_str_alloc(j, &c->d->uuid);
	case K_ROLE:
		ws(j);
		if (peek(j) == 'n') {
			c->d->role = -1;
			return is_lit(j, "null") ? 0 : fail(j, "expected a role or null");
		}
		if (get_int(j, &c->d->role))
			return -EINVAL;
		return c->d->role < 0 ? fail(j, "negative role") : 0;
	case K_INDEX:
		if (get_int(j, &c->d->index))
			return -EINVAL;
		if (c->d->index < 0)
			return fail(j, "negative member index");
		return 0;
	case K_COUNTED:
		ws(j);
		if (is_lit(j, "true"))
			c->d->not_counted = 0;
		else if (is_lit(j, "false"))
			c->d->not_counted = 1;
		else
			return fail(j, "expected true or false");
		return 0;
	case K_HIST: {
		struct hist_ctx h = {.s = &c->d->snap};
		if (get_object(j, hist_field, &h))
			return -EINVAL;
		return check_all(j, h.seen, hist_keys, NKEYS(hist_keys), 0);
	}
	}
	return -EINVAL;
}

static int get_dev(struct jp *j, struct stats_view_dev *d, int member)
{
	struct dev_ctx c = {.d = d};
	d->index = -1;
	d->role = -1;
	int rc = get_object(j, dev_field, &c);
	if (rc)
		return rc;
	if (!member && (c.seen & (1ull << K_INDEX | 1ull << K_UUID | 1ull << K_ROLE)))
		return fail(j, "the volume has no index, uuid or role");
	/* uuid and role: members of a served volume (not of older files) */
	return check_all(j, c.seen, dev_keys, NDEVKEYS,
			 (member ? 0 : 1ull << K_INDEX) | 1ull << K_UUID | 1ull << K_ROLE);
}

/* ---- document ---- */

static const char *const top_keys[] = {"uptime_ns", "bucket", "volume", "members", "since_reset_ns"};

struct top_ctx {
	uint64_t seen;
	struct stats_doc *doc;
	size_t cap;
	int have_volume;
};

/* room for one more device; slot 0 is always the volume */
static int grow(struct top_ctx *c)
{
	if (c->doc->n < c->cap)
		return 0;
	size_t cap = c->cap ? c->cap * 2 : 8;
	struct stats_view_dev *d = realloc(c->doc->dev, cap * sizeof(*d));
	if (!d)
		return -ENOMEM;
	memset(d + c->cap, 0, (cap - c->cap) * sizeof(*d));
	c->doc->dev = d;
	c->cap = cap;
	return 0;
}

static int top_field(struct jp *j, const char *key, void *vctx)
{
	struct top_ctx *c = vctx;
	int k = key_index(j, key, top_keys, NKEYS(top_keys), &c->seen);
	int rc;
	switch (k) {
	case 0:
		return get_u64(j, &c->doc->uptime_ns);
	case 4:
		return get_u64(j, &c->doc->since_reset_ns);
	case 1: {
		uint64_t seen = 0;
		if (get_object(j, bucket_field, &seen))
			return -EINVAL;
		return check_all(j, seen, bucket_keys, NKEYS(bucket_keys), 0);
	}
	case 2:
		if (peek(j) == 'n') {
			if (!is_lit(j, "null"))
				return fail(j, "expected an object or null");
			return 0;
		}
		c->have_volume = 1;
		return get_dev(j, &c->doc->dev[0], 0);
	case 3:
		rc = list_open(j, '[', ']');
		while (rc > 0) {
			if (c->doc->n > MAX_MEMBERS)
				return fail(j, "more than %d members", MAX_MEMBERS);
			if ((rc = grow(c)))
				return rc;
			/* counted before parsing so a failure frees its strings */
			struct stats_view_dev *d = &c->doc->dev[c->doc->n++];
			if ((rc = get_dev(j, d, 1)))
				return rc;
			rc = list_next(j, ']');
		}
		return rc;
	default:
		return -EINVAL;
	}
}

void stats_doc_free(struct stats_doc *doc)
{
	if (!doc)
		return;
	for (size_t i = 0; doc->dev && i < doc->n; i++) {
		free((char *)doc->dev[i].name);
		free((char *)doc->dev[i].path);
		free((char *)doc->dev[i].state);
		free((char *)doc->dev[i].uuid);
	}
	/* the volume slot is owned even when n == 0 */
	if (doc->dev && doc->n == 0) {
		free((char *)doc->dev[0].name);
		free((char *)doc->dev[0].path);
		free((char *)doc->dev[0].state);
	}
	free(doc->dev);
	memset(doc, 0, sizeof(*doc));
}

int stats_json_parse(const char *buf, size_t len, struct stats_doc *out, char *err, size_t errlen)
{
	struct jp j = {.s = buf, .p = buf, .end = buf + len, .err = err, .errlen = errlen};
	struct top_ctx c = {.doc = out};
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	if ((rc = grow(&c)))
		goto fail;
	out->n = 1; /* the volume's slot */
	rc = get_object(&j, top_field, &c);
	if (!rc)
		rc = check_all(&j, c.seen, top_keys, NKEYS(top_keys), 0);
	if (!rc && peek(&j) != -1)
		rc = fail(&j, "trailing bytes after the document");
	if (!rc && !c.have_volume) {
		if (out->n > 1)
			rc = fail(&j, "members without a volume");
		else
			out->n = 0;
	}
	if (!rc)
		return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "stats.json: out of memory");
	stats_doc_free(out);
	return rc;
}
