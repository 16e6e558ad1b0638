/* bbl.c: the bad-block list against a brute-force model (a byte per sector),
 * md's entry encoding, the two copies and every refusal of a damaged copy. */
#include "fsvol/meta/bbl.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SECTORS 8192u /* the model's span */

/* The list's sectors as a byte per sector, and the entries' invariants. */
static void check_model(const struct bbl *l, const uint8_t *model)
{
	static uint8_t seen[SECTORS];
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < l->n; i++) {
		ck_assert_uint_ge(l->e[i].len, 1);
		ck_assert_uint_le(l->e[i].len, BBL_MAX_LEN);
		if (i)
			ck_assert_uint_ge(l->e[i].start, l->e[i - 1].start + l->e[i - 1].len);
		for (uint64_t s = l->e[i].start; s < l->e[i].start + l->e[i].len; s++)
			seen[s] = 1;
	}
	ck_assert_mem_eq(seen, model, SECTORS);
}

START_TEST(test_model)
{
	static uint8_t model[SECTORS];
	static struct bbl l;
	memset(model, 0, sizeof(model));
	bbl_init(&l);
	srand(7 + (unsigned)_i);
	for (int step = 0; step < 3000; step++) {
		uint64_t start = (uint64_t)rand() % SECTORS, len = 1 + (uint64_t)rand() % 700;
		if (start + len > SECTORS)
			len = SECTORS - start;
		int add = rand() % 3 != 0;
		int r = add ? bbl_add(&l, start, len, rand() & 1) : bbl_clear(&l, start, len);
		if (r == 0)
			memset(model + start, add, len);
		else
			ck_assert_int_eq(r, -ENOSPC); /* unchanged: the model stays */
		check_model(&l, model);
		int any = 0;
		for (uint64_t s = start; s < start + len; s++)
			any |= model[s];
		ck_assert_int_eq(bbl_overlaps(&l, start, len), any);
	}
}
END_TEST

START_TEST(test_merge_and_ack)
{
	static struct bbl l;
	bbl_init(&l);
	ck_assert_int_eq(bbl_add(&l, 100, 8, 1), 0);
	ck_assert_int_eq(bbl_add(&l, 108, 8, 1), 0); /* touching: one entry */
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.e[0].len, 16);
	ck_assert_uint_eq(l.e[0].ack, 1);
	ck_assert_int_eq(bbl_add(&l, 90, 20, 0), 0); /* a part not yet written: not acknowledged */
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.e[0].start, 90);
	ck_assert_uint_eq(l.e[0].ack, 0);
	bbl_ack_all(&l);
	ck_assert_uint_eq(l.e[0].ack, 1);
	ck_assert_int_eq(bbl_add(&l, 4096, 1200, 1), 0); /* cut in pieces of 512 */
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(bbl_sectors(&l), 26 + 1200);
	ck_assert_int_eq(bbl_clear(&l, 95, 10), 0); /* a hole splits the entry */
	ck_assert_uint_eq(l.n, 5);
	ck_assert_int_eq(bbl_overlaps(&l, 95, 10), 0);
	ck_assert_int_eq(bbl_overlaps(&l, 94, 1), 1);
	ck_assert_int_eq(bbl_add(&l, 0, 0, 1), -EINVAL);
	ck_assert_int_eq(bbl_add(&l, BBL_MAX_SECTOR, 2, 1), -EINVAL);
}
END_TEST

START_TEST(test_full)
{
	static struct bbl l;
	bbl_init(&l);
	for (unsigned i = 0; i < BBL_MAX; i++)
		ck_assert_int_eq(bbl_add(&l, 16ull * i, 8, 1), 0);
	ck_assert_uint_eq(l.n, BBL_MAX);
	ck_assert_int_eq(bbl_add(&l, 16ull * BBL_MAX, 8, 1), -ENOSPC);
	ck_assert_int_eq(bbl_clear(&l, 2, 2), -ENOSPC); /* a split that does not fit */
	ck_assert_uint_eq(l.n, BBL_MAX);
	ck_assert_int_eq(bbl_add(&l, 8, 8, 1), 0); /* filling a gap merges two */
	ck_assert_uint_eq(l.n, BBL_MAX - 1);
}
END_TEST

START_TEST(test_encode_roundtrip)
{
	static struct bbl l, d;
	static uint8_t buf[BBL_COPY];
	bbl_init(&l);
	ck_assert_int_eq(bbl_add(&l, 2048, 128, 1), 0);
	ck_assert_int_eq(bbl_add(&l, (1ull << 40), 3, 0), 0);
	bbl_encode(&l, 7, buf);
	/* md's entry: bit 63 acknowledged, 62..9 sector, 8..0 length - 1 */
	uint64_t w = 0;
	for (int i = 7; i >= 0; i--)
		w = w << 8 | buf[BBL_HEADER + i];
	ck_assert_uint_eq(w, 1ull << 63 | 2048ull << 9 | 127);
	char err[256];
	ck_assert_int_eq(bbl_decode(buf, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.seq, 7);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_uint_eq(d.e[1].start, 1ull << 40);
	ck_assert_uint_eq(d.e[1].len, 3);
	ck_assert_uint_eq(d.e[1].ack, 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(bbl_decode(buf, &d, err, sizeof(err)), 1); /* blank */
}
END_TEST

/* Every single-byte change of a copy is refused. */
START_TEST(test_corruption)
{
	static struct bbl l, d;
	static uint8_t buf[BBL_COPY];
	char err[256];
	bbl_init(&l);
	ck_assert_int_eq(bbl_add(&l, 64, 64, 1), 0);
	for (unsigned off = 0; off < BBL_COPY; off += 1 + off / 64) {
		bbl_encode(&l, 3, buf);
		buf[off] ^= 0x10;
		ck_assert_int_eq(bbl_decode(buf, &d, err, sizeof(err)), -EINVAL);
		ck_assert(err[0]);
	}
}
END_TEST

/* An entry at the last sector md's 54 bits can hold, running past it: its
 * end would not fit; refused, not wrapped (issue 30 A2's audit). */
START_TEST(test_decode_wrap)
{
	static struct bbl l, d;
	static uint8_t buf[BBL_COPY];
	char err[256];
	bbl_init(&l);
	l.e[0] = (struct bbl_entry){ .start = BBL_MAX_SECTOR, .len = 512, .ack = 1 };
	l.n = 1;
	bbl_encode(&l, 1, buf);
	ck_assert_int_eq(bbl_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "past the last sector"));
	l.e[0].start = BBL_MAX_SECTOR; /* the last sector alone fits */
	l.e[0].len = 1;
	bbl_encode(&l, 1, buf);
	ck_assert_msg(bbl_decode(buf, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.e[0].start, BBL_MAX_SECTOR);
}
END_TEST

/* The area: the newest valid copy wins; a torn copy leaves the other. */
START_TEST(test_area)
{
	static struct bbl a, b, d;
	static uint8_t area[BBL_AREA];
	char err[256];
	memset(area, 0, sizeof(area));
	ck_assert_int_eq(bbl_area_decode(area, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(d.seq, 0);
	bbl_init(&a);
	bbl_add(&a, 10, 1, 1);
	bbl_encode(&a, 1, area + bbl_copy_off(1));
	b = a;
	bbl_add(&b, 20, 1, 1);
	bbl_encode(&b, 2, area + bbl_copy_off(2));
	ck_assert_int_eq(bbl_area_decode(area, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.seq, 2);
	ck_assert_uint_eq(d.n, 2);
	area[bbl_copy_off(2) + 100] ^= 1; /* copy 2 torn: copy 1 is the list */
	ck_assert_int_eq(bbl_area_decode(area, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.seq, 1);
	ck_assert_uint_eq(d.n, 1);
	area[bbl_copy_off(1) + 8] ^= 1; /* both damaged: refused, naming both */
	ck_assert_int_eq(bbl_area_decode(area, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "copy 0"));
	ck_assert_ptr_nonnull(strstr(err, "copy 1"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bbl");
	TCase *tc = tcase_create("bbl");
	tcase_add_loop_test(tc, test_model, 0, 4);
	tcase_add_test(tc, test_merge_and_ack);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_encode_roundtrip);
	tcase_add_test(tc, test_corruption);
	tcase_add_test(tc, test_decode_wrap);
	tcase_add_test(tc, test_area);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
