/* The JSON reader (stats/json.h): strings and their escapes (UTF-8 out,
 * surrogate pairs, lone surrogates and control bytes refused), numbers
 * (int64, uint64, doubles), the nesting limit, every truncation of a
 * document refused, the error's byte offset, and the typed lookups. */
#include "stats/json.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* text read from a copy of exactly its length (no NUL: ASan sees an over-read) */
static int read_exact(const char *text, size_t len, struct stats_json **v, char *err, size_t errlen)
{
	char *b = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(b);
	memcpy(b, text, len);
	int rc = stats_json_read(b, len, v, err, errlen);
	free(b);
	return rc;
}

static struct stats_json *ok(const char *text)
{
	struct stats_json *v;
	char err[200];
	int rc = read_exact(text, strlen(text), &v, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: %s", text, err);
	return v;
}

/* ---- strings ---- */

static const struct {
	const char *json, *want;
} strings[] = {
	{ "\"\"", "" },
	{ "\"plain\"", "plain" },
	{ "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t" },
	{ "\"\\u0041\"", "A" },
	{ "\"\\u00e9\"", "\xc3\xa9" },                 /* é */
	{ "\"caf\\u00E9!\"", "caf\xc3\xa9!" },
	{ "\"\\u20ac\"", "\xe2\x82\xac" },             /* € */
	{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" },  /* 😀 */
	{ "\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf" },  /* U+10FFFF */
	{ "\"\\u001f\"", "\x1f" },                     /* escaped, a control byte is fine */
	{ "\"\xc3\xa9t\xe9\"", "\xc3\xa9t\xe9" },      /* raw bytes kept: file names are bytes */
};

START_TEST(test_strings)
{
	struct stats_json *v = ok(strings[_i].json);
	ck_assert_int_eq(v->t, STATS_JSON_STR);
	ck_assert_str_eq(v->str, strings[_i].want);
	stats_json_free(v);
}
END_TEST

/* ---- refused, with the byte the message names ---- */

static const struct {
	const char *json;
	size_t at;
	const char *says;
} bad[] = {
	{ "", 0, "ended" },
	{ "  ", 2, "ended" },
	{ "\"\\ud800\"", 1, "lone high surrogate" },
	{ "\"ab\\udc00\"", 3, "lone low surrogate" },
	{ "\"\\ud83d\\u0041\"", 1, "not followed by a low one" },
	{ "\"\\ud83dx\"", 1, "lone high surrogate" },
	{ "\"\\u0000\"", 1, "\\u0000" },
	{ "\"\\u12\"", 1, "four hex digits" },
	{ "\"\\u12g4\"", 1, "four hex digits" },
	{ "\"\\q\"", 1, "bad escape" },
	{ "\"a\nb\"", 2, "control byte 0x0a" },
	{ "\"a\tb\"", 2, "control byte 0x09" },
	{ "[\"a\x01\"]", 3, "control byte 0x01" },
	{ "\"abc", 0, "unterminated string" },
	{ "\"abc\\", 4, "unterminated string" },
	{ "01", 0, "leading zero" },
	{ "-", 0, "expected a value" },
	{ "+1", 0, "expected a value" },
	{ "1.", 0, "after '.'" },
	{ ".5", 0, "expected a value" },
	{ "1e", 0, "exponent" },
	{ "1e+", 0, "exponent" },
	{ "nul", 0, "expected a value" },
	{ "tru", 0, "expected a value" },
	{ "[1,]", 3, "expected a value" },
	{ "[1 2]", 3, "expected ','" },
	{ "{\"a\" 1}", 5, "expected ':'" },
	{ "{1:2}", 1, "expected a key" },
	{ "{\"a\":1,}", 7, "expected a key" },
	{ "[1", 2, "unterminated" },
	{ "{\"a\":1", 6, "unterminated" },
	{ "{} x", 3, "trailing bytes" },
	{ "1 2", 2, "trailing bytes" },
	{ "truex", 4, "trailing bytes" },
};

START_TEST(test_refused)
{
	struct stats_json *v = (struct stats_json *)1;
	char err[200], want[32];
	int rc = read_exact(bad[_i].json, strlen(bad[_i].json), &v, err, sizeof(err));
	ck_assert_msg(rc == -EINVAL, "%s accepted", bad[_i].json);
	ck_assert_ptr_null(v);
	snprintf(want, sizeof(want), "byte %zu: ", bad[_i].at);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s: \"%s\", want \"%s...\"", bad[_i].json, err, want);
	ck_assert_msg(strstr(err, bad[_i].says), "%s: \"%s\" does not say \"%s\"", bad[_i].json, err,
		      bad[_i].says);
}
END_TEST

/* ---- numbers ---- */

static const struct {
	const char *json;
	unsigned fits;
	int64_t i64;
	uint64_t u64;
	double num;
} numbers[] = {
	{ "0", STATS_JSON_I64 | STATS_JSON_U64, 0, 0, 0 },
	{ "-0", STATS_JSON_I64 | STATS_JSON_U64, 0, 0, 0 },
	{ "42", STATS_JSON_I64 | STATS_JSON_U64, 42, 42, 42 },
	{ "-7", STATS_JSON_I64, -7, 0, -7 },
	{ "9223372036854775807", STATS_JSON_I64 | STATS_JSON_U64, INT64_MAX, INT64_MAX, 9223372036854775807.0 },
	{ "9223372036854775808", STATS_JSON_U64, 0, 9223372036854775808ull, 9223372036854775808.0 },
	{ "-9223372036854775808", STATS_JSON_I64, INT64_MIN, 0, -9223372036854775808.0 },
	{ "-9223372036854775809", 0, 0, 0, -9223372036854775809.0 },
	{ "18446744073709551615", STATS_JSON_U64, 0, UINT64_MAX, 18446744073709551615.0 },
	{ "18446744073709551616", 0, 0, 0, 18446744073709551616.0 },
	{ "12.5", 0, 0, 0, 12.5 },
	{ "-0.25", 0, 0, 0, -0.25 },
	{ "1e3", 0, 0, 0, 1000 },
	{ "1E-2", 0, 0, 0, 0.01 },
	{ "2.5e+2", 0, 0, 0, 250 },
	{ "100.0", 0, 0, 0, 100 }, /* status.json's %.1f: a double, not an integer */
};

START_TEST(test_numbers)
{
	struct stats_json *v = ok(numbers[_i].json);
	ck_assert_int_eq(v->t, STATS_JSON_NUM);
	ck_assert_uint_eq(v->fits, numbers[_i].fits);
	if (v->fits & STATS_JSON_I64)
		ck_assert_int_eq(v->i64, numbers[_i].i64);
	if (v->fits & STATS_JSON_U64)
		ck_assert_uint_eq(v->u64, numbers[_i].u64);
	ck_assert_double_eq_tol(v->num, numbers[_i].num, fabs(numbers[_i].num) * 1e-12 + 1e-12);
	stats_json_free(v);
}
END_TEST

/* a number at the very end of the text, longer than any stack copy */
START_TEST(test_long_number)
{
	char text[302];
	memset(text, '9', 300);
	memcpy(text + 300, ".5", 2);
	struct stats_json *v;
	ck_assert_int_eq(read_exact(text, sizeof(text), &v, NULL, 0), 0);
	ck_assert(v->t == STATS_JSON_NUM && !v->fits && isfinite(v->num) && v->num > 1e299);
	stats_json_free(v);
}
END_TEST

/* ---- nesting ---- */

static char *nested(int depth)
{
	char *s = malloc(2 * (size_t)depth + 1);
	for (int i = 0; i < depth; i++) {
		s[i] = '[';
		s[2 * depth - 1 - i] = ']';
	}
	s[2 * depth] = 0;
	return s;
}

START_TEST(test_depth)
{
	char err[200];
	struct stats_json *v;
	char *s = nested(STATS_JSON_MAX_DEPTH);
	ck_assert_int_eq(read_exact(s, strlen(s), &v, err, sizeof(err)), 0);
	stats_json_free(v);
	free(s);
	s = nested(STATS_JSON_MAX_DEPTH + 1);
	ck_assert_int_eq(read_exact(s, strlen(s), &v, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "nested deeper") && !strncmp(err, "byte 32: ", 9), "%s", err);
	free(s);
	/* far deeper than the stack would allow were it not bounded */
	s = nested(1000000);
	ck_assert_int_eq(read_exact(s, strlen(s), &v, err, sizeof(err)), -EINVAL);
	free(s);
}
END_TEST

/* ---- truncation: no prefix of a document is one ---- */

static const char doc[] =
	"{\"name\":\"fsvol0\",\"level\":\"raid5\",\"capacity\":3221225472,\"members\":["
	"{\"slot\":0,\"path\":\"/tmp/caf\\u00e9\",\"state\":\"active\",\"write_mostly\":true},"
	"{\"slot\":1,\"path\":null,\"state\":\"missing\",\"failfast\":false,\"number\":-1}],"
	"\"sync\":{\"action\":\"recovery\",\"percent\":12.5,\"eta_s\":3.2e1},\"emoji\":\"\\ud83d\\ude00\"}";

START_TEST(test_truncated)
{
	size_t len = strlen(doc);
	struct stats_json *v;
	char err[200];
	for (size_t i = 0; i < len; i++) {
		int rc = read_exact(doc, i, &v, err, sizeof(err));
		ck_assert_msg(rc == -EINVAL, "prefix of %zu bytes accepted", i);
		ck_assert(err[0] != 0);
	}
	ck_assert_int_eq(read_exact(doc, len, &v, err, sizeof(err)), 0);
	stats_json_free(v);
}
END_TEST

/* ---- lookups ---- */

START_TEST(test_lookups)
{
	struct stats_json *v = ok(doc);
	ck_assert_str_eq(stats_json_str(v, "name"), "fsvol0");
	ck_assert_ptr_null(stats_json_str(v, "capacity")); /* another type */
	ck_assert_ptr_null(stats_json_str(v, "nothing"));
	ck_assert_uint_eq(stats_json_u64(v, "capacity", 7), 3221225472ull);
	ck_assert_uint_eq(stats_json_u64(v, "name", 7), 7);
	ck_assert_str_eq(stats_json_str(v, "emoji"), "\xf0\x9f\x98\x80");
	const struct stats_json *ms = stats_json_get(v, "members");
	ck_assert(ms && ms->t == STATS_JSON_ARR && ms->n == 2);
	ck_assert_str_eq(stats_json_str(&ms->kids[0], "path"), "/tmp/caf\xc3\xa9");
	ck_assert_int_eq(stats_json_bool(&ms->kids[0], "write_mostly", 0), 1);
	ck_assert_int_eq(stats_json_bool(&ms->kids[1], "failfast", 1), 0);
	ck_assert_int_eq(stats_json_bool(&ms->kids[1], "write_mostly", 5), 5);
	ck_assert_ptr_null(stats_json_str(&ms->kids[1], "path")); /* null */
	ck_assert_int_eq(stats_json_i64(&ms->kids[1], "number", 9), -1);
	ck_assert_uint_eq(stats_json_u64(&ms->kids[1], "number", 9), 9); /* negative: no u64 */
	ck_assert_int_eq(stats_json_get(ms, "slot") == NULL, 1);          /* an array has no keys */
	const struct stats_json *sync = stats_json_get(v, "sync");
	ck_assert_double_eq(stats_json_num(sync, "percent", 0), 12.5);
	ck_assert_double_eq(stats_json_num(sync, "eta_s", 0), 32);
	ck_assert_uint_eq(stats_json_u64(sync, "percent", 3), 3); /* not an integer */
	ck_assert_int_eq(ms->kids[1].off, (size_t)(strstr(doc, "{\"slot\":1") - doc));
	stats_json_free(v);
	/* a repeated key: the first */
	v = ok(" {\"a\":1,\"a\":2} \n");
	ck_assert_uint_eq(stats_json_u64(v, "a", 0), 1);
	stats_json_free(v);
	stats_json_free(NULL);
}
END_TEST

/* random bytes and single-byte corruptions of doc: an answer, never a crash */
START_TEST(test_junk)
{
	unsigned seed = 2026;
	char buf[sizeof(doc)], err[200];
	struct stats_json *v;
	for (int k = 0; k < 20000; k++) {
		size_t len = (size_t)rand_r(&seed) % sizeof(buf);
		memcpy(buf, doc, sizeof(doc));
		if (k % 2)
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rand_r(&seed);
		else
			buf[(size_t)rand_r(&seed) % (sizeof(doc) - 1)] = (char)rand_r(&seed);
		int rc = read_exact(buf, k % 2 ? len : sizeof(doc) - 1, &v, err, sizeof(err));
		ck_assert(rc == 0 || rc == -EINVAL);
		if (!rc)
			stats_json_free(v);
	}
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

int main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");
	tcase_add_loop_test(tc, test_strings, 0, N(strings));
	tcase_add_loop_test(tc, test_refused, 0, N(bad));
	tcase_add_loop_test(tc, test_numbers, 0, N(numbers));
	tcase_add_test(tc, test_long_number);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_lookups);
	tcase_add_test(tc, test_junk);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
