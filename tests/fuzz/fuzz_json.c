/* fuzz_json: any bytes through the JSON reader (stats/json.h) and the
 * stats.json checker over it. A refusal names a byte within the input; an
 * accepted tree, written back as JSON, reads back the same (strings, numbers
 * exactly, keys and order). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "stats/json.h"
#include "stats/stats.h"
#include "tests/fuzz/fuzz.h"

/* 0 when a number that cannot be written back (inf from 1e999) was met */
static int put(FILE *f, const struct stats_json *v)
{
	int ok = 1;
	switch (v->t) {
	case STATS_JSON_NULL: fputs("null", f); break;
	case STATS_JSON_BOOL: fputs(v->b ? "true" : "false", f); break;
	case STATS_JSON_NUM:
		if (v->fits & STATS_JSON_U64)
			fprintf(f, "%" PRIu64, v->u64);
		else if (v->fits & STATS_JSON_I64)
			fprintf(f, "%" PRId64, v->i64);
		else if (isfinite(v->num))
			fprintf(f, "%.17g", v->num);
		else
			fputs("0", f), ok = 0;
		break;
	case STATS_JSON_STR:
		FUZZ_ASSERT(v->str != NULL);
		stats_json_string(f, v->str);
		break;
	case STATS_JSON_ARR:
	case STATS_JSON_OBJ:
		fputc(v->t == STATS_JSON_OBJ ? '{' : '[', f);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->t == STATS_JSON_OBJ) {
				stats_json_string(f, v->keys[i]);
				fputc(':', f);
			}
			ok &= put(f, &v->kids[i]);
		}
		fputc(v->t == STATS_JSON_OBJ ? '}' : ']', f);
		break;
	}
	return ok;
}

static void same(const struct stats_json *a, const struct stats_json *b)
{
	FUZZ_ASSERT(a->t == b->t && a->n == b->n);
	if (a->t == STATS_JSON_BOOL)
		FUZZ_ASSERT(a->b == b->b);
	if (a->t == STATS_JSON_STR)
		FUZZ_ASSERT(strcmp(a->str, b->str) == 0);
	if (a->t == STATS_JSON_NUM) {
		FUZZ_ASSERT(!a->fits || a->fits == b->fits); /* 100.0 may come back as 100 */
		FUZZ_ASSERT(!(a->fits & STATS_JSON_U64) || a->u64 == b->u64);
		FUZZ_ASSERT(!(a->fits & STATS_JSON_I64) || a->i64 == b->i64);
		FUZZ_ASSERT(a->num == b->num || (a->num == 0 && b->num == 0));
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->t == STATS_JSON_OBJ)
			FUZZ_ASSERT(strcmp(a->keys[i], b->keys[i]) == 0);
		same(&a->kids[i], &b->kids[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so ASan sees any read past them */
	char *buf = malloc(size ? size : 1), err[256], *out = NULL;
	size_t outlen = 0, at;
	struct stats_json *v, *back;
	struct stats_doc doc;
	if (!buf)
		abort();
	memcpy(buf, data, size);
	err[0] = 0;
	int r = stats_json_read(buf, size, &v, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == -EINVAL);
	if (r) {
		FUZZ_ASSERT(v == NULL && sscanf(err, "byte %zu: ", &at) == 1 && at <= size);
	} else {
		FILE *f = open_memstream(&out, &outlen);
		FUZZ_ASSERT(f != NULL);
		int ok = put(f, v);
		fclose(f);
		if (ok) {
			FUZZ_ASSERT(stats_json_read(out, outlen, &back, err, sizeof(err)) == 0);
			same(v, back);
			stats_json_free(back);
		}
		free(out);
		stats_json_free(v);
	}
	r = stats_json_parse(buf, size, &doc, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == -EINVAL);
	if (r == 0)
		stats_doc_free(&doc);
	else
		FUZZ_ASSERT(err[0] != 0);
	free(buf);
	return 0;
}
