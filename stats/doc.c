/* doc: MNT/stats.json read back (schema: docs/stats.schema.json), so `fsvol
 * stat` and the bench can diff two reads. The text goes through the one JSON
 * reader (json.h); this file checks its shape strictly: every key required
 * once, unknown keys and non-integer counters are errors, each message with
 * the byte offset of the value at fault. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/json.h"
#include "stats/stats.h"

#define MAX_MEMBERS 4096

struct dc {
	char *err;
	size_t errlen;
};

static int fail(struct dc *c, const struct stats_json *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct dc *c, const struct stats_json *at, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int n = snprintf(c->err, c->errlen, "stats.json: byte %zu: ", at->off);
		if (n >= 0 && (size_t)n < c->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static int get_u64(struct dc *c, const struct stats_json *v, uint64_t *out)
{
	if (v->t != STATS_JSON_NUM || !(v->fits & STATS_JSON_U64))
		return fail(c, v, "expected an unsigned 64-bit integer");
	*out = v->u64;
	return 0;
}

/* a non-negative int */
static int get_index(struct dc *c, const struct stats_json *v, int *out, const char *what)
{
	if (v->t != STATS_JSON_NUM || !(v->fits & STATS_JSON_I64) || v->i64 > INT_MAX)
		return fail(c, v, "expected an integer");
	if (v->i64 < 0)
		return fail(c, v, "negative %s", what);
	*out = (int)v->i64;
	return 0;
}

static int get_str(struct dc *c, const struct stats_json *v, const char **out)
{
	if (v->t != STATS_JSON_STR)
		return fail(c, v, "expected a string");
	*out = v->str;
	return 0;
}

/* a string or null, heap-allocated */
static int get_str_alloc(struct dc *c, const struct stats_json *v, const char **out)
{
	if (v->t == STATS_JSON_NULL) {
		*out = NULL;
		return 0;
	}
	if (v->t != STATS_JSON_STR)
		return fail(c, v, "expected a string or null");
	return (*out = strdup(v->str)) ? 0 : -ENOMEM;
}

/* An object whose keys are all in names[], each once; want: the keys that
 * must be there. idx[i] is the member for names[i], or NULL. */
static int keys_of(struct dc *c, const struct stats_json *o, const char *const *names, unsigned n,
		   uint64_t want, const struct stats_json **idx)
{
	if (o->t != STATS_JSON_OBJ)
		return fail(c, o, "expected an object");
	memset(idx, 0, n * sizeof(*idx));
	for (size_t i = 0; i < o->n; i++) {
		unsigned k = 0;
		while (k < n && strcmp(o->keys[i], names[k]))
			k++;
		if (k == n)
			return fail(c, &o->kids[i], "unknown key \"%s\"", o->keys[i]);
		if (idx[k])
			return fail(c, &o->kids[i], "duplicate key \"%s\"", o->keys[i]);
		idx[k] = &o->kids[i];
	}
	for (unsigned k = 0; k < n; k++)
		if (!idx[k] && (want & (1ull << k)))
			return fail(c, o, "missing key \"%s\"", names[k]);
	return 0;
}

#define NKEYS(a) (unsigned)(sizeof(a) / sizeof((a)[0]))
#define ALL(n) ((1ull << (n)) - 1)

/* ---- "bucket": the histograms' bucket rules, which must be this build's ---- */

static const char *const bdesc_keys[] = {"unit", "count", "sub_bits", "rule"};

static int get_bdesc(struct dc *c, const struct stats_json *o, int lat)
{
	const struct stats_json *k[NKEYS(bdesc_keys)];
	const char *s = NULL;
	uint64_t v = 0;
	if (keys_of(c, o, bdesc_keys, NKEYS(bdesc_keys), lat ? ALL(4) : 1u | 2u | 8u, k))
		return -EINVAL;
	if (!lat && k[2])
		return fail(c, k[2], "unknown key \"sub_bits\"");
	if (get_str(c, k[0], &s))
		return -EINVAL;
	if (strcmp(s, lat ? "ns" : "bytes") != 0)
		return fail(c, k[0], "unexpected bucket unit \"%s\"", s);
	if (get_u64(c, k[1], &v))
		return -EINVAL;
	if (v != (lat ? STATS_LAT_BUCKETS : STATS_SIZE_BUCKETS))
		return fail(c, k[1], "bucket count %llu does not match this build", (unsigned long long)v);
	if (lat && get_u64(c, k[2], &v))
		return -EINVAL;
	if (lat && v != STATS_LAT_SUB_BITS)
		return fail(c, k[2], "sub_bits %llu does not match this build", (unsigned long long)v);
	return get_str(c, k[3], &s);
}

static const char *const bucket_keys[] = {"lat", "size", "format"};

static int get_bucket(struct dc *c, const struct stats_json *o)
{
	const struct stats_json *k[NKEYS(bucket_keys)];
	const char *s;
	if (keys_of(c, o, bucket_keys, NKEYS(bucket_keys), ALL(3), k) || get_bdesc(c, k[0], 1) ||
	    get_bdesc(c, k[1], 0))
		return -EINVAL;
	return get_str(c, k[2], &s);
}

/* ---- histograms: sparse [[index,count],...], indexes increasing ---- */

static int get_hist(struct dc *c, const struct stats_json *a, uint64_t *h, unsigned nb)
{
	uint64_t last = 0;
	if (a->t != STATS_JSON_ARR)
		return fail(c, a, "expected an array");
	for (size_t n = 0; n < a->n; n++) {
		const struct stats_json *p = &a->kids[n];
		uint64_t i = 0, cnt = 0;
		if (p->t != STATS_JSON_ARR || p->n != 2)
			return fail(c, p, "expected [index,count]");
		if (get_u64(c, &p->kids[0], &i) || get_u64(c, &p->kids[1], &cnt))
			return -EINVAL;
		if (i >= nb || (n && i <= last))
			return fail(c, p, "histogram bucket %llu out of order or range", (unsigned long long)i);
		last = i;
		h[i] = cnt;
	}
	return 0;
}

static const char *const hist_keys[] = {"read_lat", "write_lat", "flush_lat", "read_size",
					"write_size"};

static int get_hists(struct dc *c, const struct stats_json *o, struct stats_snap *s)
{
	const struct stats_json *k[NKEYS(hist_keys)];
	if (keys_of(c, o, hist_keys, NKEYS(hist_keys), ALL(5), k))
		return -EINVAL;
	for (unsigned i = 0; i < 3; i++)
		if (get_hist(c, k[i], s->lat[i], STATS_LAT_BUCKETS))
			return -EINVAL;
	for (unsigned i = 0; i < 2; i++)
		if (get_hist(c, k[3 + i], s->size[i], STATS_SIZE_BUCKETS))
			return -EINVAL;
	return 0;
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

static int get_dev(struct dc *c, const struct stats_json *o, struct stats_view_dev *d, int member)
{
	const struct stats_json *k[NDEVKEYS];
	/* uuid and role: members of a served volume (not of older files) */
	uint64_t want = ALL(NDEVKEYS) & ~(1ull << K_UUID | 1ull << K_ROLE | (member ? 0 : 1ull << K_INDEX));
	int rc;
	d->index = -1;
	d->role = -1;
	if (keys_of(c, o, dev_keys, NDEVKEYS, want, k))
		return -EINVAL;
	if (!member && (k[K_INDEX] || k[K_UUID] || k[K_ROLE]))
		return fail(c, o, "the volume has no index, uuid or role");
	for (unsigned i = 0; i < NU64; i++) {
		uint64_t v = 0;
		if (get_u64(c, k[i], &v))
			return -EINVAL;
		memcpy((char *)&d->snap + dev_u64[i], &v, sizeof(v));
	}
	if ((rc = get_str_alloc(c, k[K_NAME], &d->name)) || (rc = get_str_alloc(c, k[K_PATH], &d->path)) ||
	    (rc = get_str_alloc(c, k[K_STATE], &d->state)) ||
	    (k[K_UUID] && (rc = get_str_alloc(c, k[K_UUID], &d->uuid))))
		return rc;
	if (k[K_ROLE] && k[K_ROLE]->t != STATS_JSON_NULL && get_index(c, k[K_ROLE], &d->role, "role"))
		return -EINVAL;
	if (k[K_INDEX] && get_index(c, k[K_INDEX], &d->index, "member index"))
		return -EINVAL;
	if (k[K_COUNTED]->t != STATS_JSON_BOOL)
		return fail(c, k[K_COUNTED], "expected true or false");
	d->not_counted = !k[K_COUNTED]->b;
	return get_hists(c, k[K_HIST], &d->snap);
}

/* ---- document ---- */

static const char *const top_keys[] = {"uptime_ns", "bucket", "volume", "members", "since_reset_ns"};

static int get_doc(struct dc *c, const struct stats_json *o, struct stats_doc *doc)
{
	const struct stats_json *k[NKEYS(top_keys)];
	int rc;
	if (keys_of(c, o, top_keys, NKEYS(top_keys), ALL(5), k) || get_u64(c, k[0], &doc->uptime_ns) ||
	    get_u64(c, k[4], &doc->since_reset_ns) || get_bucket(c, k[1]))
		return -EINVAL;
	const struct stats_json *vol = k[2], *ms = k[3];
	if (vol->t != STATS_JSON_NULL && vol->t != STATS_JSON_OBJ)
		return fail(c, vol, "expected an object or null");
	if (ms->t != STATS_JSON_ARR)
		return fail(c, ms, "expected an array");
	if (ms->n > MAX_MEMBERS)
		return fail(c, ms, "more than %d members", MAX_MEMBERS);
	if (vol->t == STATS_JSON_NULL && ms->n)
		return fail(c, ms, "members without a volume");
	/* slot 0 is the volume's, there even when n is 0 (no volume) */
	if (!(doc->dev = calloc(ms->n + 1, sizeof(*doc->dev))))
		return -ENOMEM;
	if (vol->t == STATS_JSON_NULL)
		return 0;
	doc->n = 1; /* counted before parsing, so a failure frees the strings */
	if ((rc = get_dev(c, vol, &doc->dev[0], 0)))
		return rc;
	for (size_t i = 0; i < ms->n; i++)
		if ((rc = get_dev(c, &ms->kids[i], &doc->dev[doc->n++], 1)))
			return rc;
	return 0;
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
	free(doc->dev);
	memset(doc, 0, sizeof(*doc));
}

int stats_json_parse(const char *buf, size_t len, struct stats_doc *out, char *err, size_t errlen)
{
	struct dc c = {.err = err, .errlen = errlen};
	struct stats_json *tree;
	char jerr[200];
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	int rc = stats_json_read(buf, len, &tree, jerr, sizeof(jerr));
	if (rc == -EINVAL && err && errlen)
		snprintf(err, errlen, "stats.json: %s", jerr);
	if (!rc) {
		rc = get_doc(&c, tree, out);
		stats_json_free(tree);
	}
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "stats.json: out of memory");
	if (rc)
		stats_doc_free(out);
	return rc;
}
