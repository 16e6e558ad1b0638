/* bitmap.c: the write-intent bitmap's arithmetic against a brute-force model
 * (a byte per bit), the default chunk md's way, and every refusal. */
#include "fsvol/meta/bitmap.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)

START_TEST(test_bits_and_bytes)
{
	ck_assert_uint_eq(bitmap_bits(192 * MiB, MiB), 192);
	ck_assert_uint_eq(bitmap_bits(192 * MiB + 1, MiB), 193); /* a partial region counts */
	ck_assert_uint_eq(bitmap_bits(1, 64 * MiB), 1);
	ck_assert_uint_eq(bitmap_image_bytes(1), 4096);
	ck_assert_uint_eq(bitmap_image_bytes(8 * 4096), 4096);
	ck_assert_uint_eq(bitmap_image_bytes(8 * 4096 + 1), 8192);
}
END_TEST

START_TEST(test_default_chunk)
{
	uint64_t area = MiB - 4096; /* the default data offset, less the superblock */
	/* small volumes: md's 64 MiB floor */
	ck_assert_uint_eq(bitmap_default_chunk(192 * MiB, area), 64 * MiB);
	ck_assert_uint_eq(bitmap_default_chunk(TiB, area), 64 * MiB);
	/* 8 PiB: 64 MiB regions would need 128 Mi bits; the chunk grows to fit */
	uint64_t big = 8192 * TiB, c = bitmap_default_chunk(big, area);
	ck_assert_uint_gt(c, 64 * MiB);
	char err[256];
	ck_assert_int_eq(bitmap_check(big, c, area, err, sizeof(err)), 0);
	ck_assert_int_ne(bitmap_check(big, c / 2, area, err, sizeof(err)), 0);
	/* a tiny area still gets a chunk that fits it */
	c = bitmap_default_chunk(16 * TiB, 4096);
	ck_assert_uint_eq(c, 512 * MiB);
	ck_assert_int_eq(bitmap_check(16 * TiB, c, 4096, err, sizeof(err)), 0);
	ck_assert_int_ne(bitmap_check(16 * TiB, c / 2, 4096, err, sizeof(err)), 0);
}
END_TEST

static const struct {
	uint64_t cap, chunk, area;
	const char *msg;
} refused[] = {
	{ 192 * MiB, 0, MiB, "power of two" },
	{ 192 * MiB, 3 * 4096, MiB, "power of two" },
	{ 192 * MiB, 2048, MiB, "at least 4K" },
	{ 64 * GiB, 4096, MiB, "too small" },       /* 16 Mi bits > the limit */
	{ 64 * GiB, 65536, 4096, "do not fit the area" },
};

START_TEST(test_refused)
{
	char err[256] = "";
	ck_assert_int_eq(bitmap_check(refused[_i].cap, refused[_i].chunk, refused[_i].area, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, refused[_i].msg), "'%s' lacks '%s'", err, refused[_i].msg);
	ck_assert_msg(strstr(err, "bitmap chunk"), "'%s' does not name the chunk", err);
}
END_TEST

START_TEST(test_range)
{
	uint64_t f, l;
	bitmap_range(MiB, 0, 1, &f, &l);
	ck_assert_uint_eq(f, 0);
	ck_assert_uint_eq(l, 0);
	bitmap_range(MiB, MiB - 1, 2, &f, &l);
	ck_assert_uint_eq(f, 0);
	ck_assert_uint_eq(l, 1);
	bitmap_range(MiB, 5 * MiB, MiB, &f, &l);
	ck_assert_uint_eq(f, 5);
	ck_assert_uint_eq(l, 5);
	bitmap_range(4096, 4096 * 10 + 7, 4096 * 3, &f, &l);
	ck_assert_uint_eq(f, 10);
	ck_assert_uint_eq(l, 13);
}
END_TEST

/* set, clear, test, any, count, or: against a byte-per-bit model */
START_TEST(test_model)
{
	enum { N = 1000 };
	static uint8_t img[4096], img2[4096], model[N], model2[N];
	srand(7 + (unsigned)_i);
	memset(img, 0, sizeof(img));
	memset(img2, 0, sizeof(img2));
	memset(model, 0, sizeof(model));
	memset(model2, 0, sizeof(model2));
	for (int k = 0; k < 5000; k++) {
		uint64_t b = (uint64_t)(rand() % N);
		switch (rand() % 3) {
		case 0: bitmap_set(img, b); model[b] = 1; break;
		case 1: bitmap_clear(img, b); model[b] = 0; break;
		default: bitmap_set(img2, b); model2[b] = 1; break;
		}
		if (k % 97)
			continue;
		uint64_t n = 0;
		for (unsigned i = 0; i < N; i++) {
			ck_assert_int_eq(bitmap_test(img, i), model[i]);
			n += model[i];
		}
		ck_assert_uint_eq(bitmap_count(img, N), n);
		for (int q = 0; q < 50; q++) {
			uint64_t a = (uint64_t)(rand() % N), z = a + (uint64_t)(rand() % (N - a));
			int want = 0;
			for (uint64_t i = a; i <= z; i++)
				want |= model[i];
			ck_assert_int_eq(bitmap_any(img, a, z), want);
		}
	}
	bitmap_or(img, img2, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(bitmap_test(img, i), model[i] | model2[i]);
}
END_TEST

START_TEST(test_trim)
{
	static uint8_t img[4096];
	memset(img, 0xff, sizeof(img));
	bitmap_trim(img, 13); /* padding bits of the last byte read as clear */
	ck_assert_uint_eq(img[1], 0x1f);
	ck_assert_uint_eq(bitmap_count(img, 13), 13);
	ck_assert_int_eq(bitmap_any(img, 13, 15), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bitmap");
	TCase *tc = tcase_create("bitmap");
	tcase_add_test(tc, test_bits_and_bytes);
	tcase_add_test(tc, test_default_chunk);
	tcase_add_loop_test(tc, test_refused, 0, sizeof(refused) / sizeof(refused[0]));
	tcase_add_test(tc, test_range);
	tcase_add_loop_test(tc, test_model, 0, 4);
	tcase_add_test(tc, test_trim);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
