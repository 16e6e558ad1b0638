/* size_parse and size_format: every form the CLI accepts, every one it must
 * refuse, overflow at each suffix, and format(parse(x)) round trips. */
#include "fsvol/util/size.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const struct {
	const char *s;
	int rc;
	uint64_t v;
} cases[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "010", 0, 10 }, /* never octal */
	{ "0x1000", 0, 4096 },
	{ "0X10K", 0, 16384 },
	{ "64K", 0, 65536 },
	{ "64k", 0, 65536 },
	{ "64KB", 0, 65536 },
	{ "64KiB", 0, 65536 },
	{ "1M", 0, 1ull << 20 },
	{ "2g", 0, 2ull << 30 },
	{ "3T", 0, 3ull << 40 },
	{ "512B", 0, 512 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16777215T", 0, 16777215ull << 40 },
	{ "16777216T", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "18014398509481984K", -ERANGE, 0 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 K", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "1K1", -EINVAL, 0 },
	{ "1P", -EINVAL, 0 },
	{ "1iB", -EINVAL, 0 },
	{ "1KBB", -EINVAL, 0 },
	{ "0x", -EINVAL, 0 },
	{ "08x", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
};

START_TEST(test_parse)
{
	uint64_t v = 12345;
	int rc = size_parse(cases[_i].s, &v);
	ck_assert_msg(rc == cases[_i].rc, "'%s': rc %d, want %d", cases[_i].s, rc, cases[_i].rc);
	if (rc == 0)
		ck_assert_msg(v == cases[_i].v, "'%s': %llu, want %llu", cases[_i].s,
			      (unsigned long long)v, (unsigned long long)cases[_i].v);
	else
		ck_assert_uint_eq(v, 12345); /* untouched on error */
}
END_TEST

START_TEST(test_null)
{
	uint64_t v;
	ck_assert_int_eq(size_parse(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_format_roundtrip)
{
	static const struct { uint64_t v; const char *s; } fmt[] = {
		{ 0, "0" }, { 1000, "1000" }, { 65536, "64K" }, { 1536, "1536" },
		{ 3ull << 30, "3G" }, { 1ull << 50, "1P" }, { 5ull << 60, "5120P" },
	};
	char buf[32];
	for (unsigned i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		size_format(fmt[i].v, buf, sizeof(buf));
		ck_assert_str_eq(buf, fmt[i].s);
	}
	/* what format prints, parse reads back (up to T: P is not a suffix) */
	srand(3);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = ((uint64_t)rand() << 31 ^ (uint64_t)rand()) >> (rand() % 40);
		v <<= rand() % 30;
		if (v >= 1ull << 50)
			continue;
		uint64_t back;
		size_format(v, buf, sizeof(buf));
		ck_assert_int_eq(size_parse(buf, &back), 0);
		ck_assert_uint_eq(back, v);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("size");
	TCase *tc = tcase_create("size");
	tcase_add_loop_test(tc, test_parse, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_null);
	tcase_add_test(tc, test_format_roundtrip);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
