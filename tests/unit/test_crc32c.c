/* test_crc32c: CRC32C against published vectors and a bit-at-a-time reference
 * at every length to 1100 bytes and at the lengths the metadata uses, any
 * offset, chained calls; built with ISA-L (HAVE_ISAL), against its
 * crc32_iscsi too. main() runs the suite once with each kernel set the CPU
 * runs, after checking that the default is the best of them. */
#include "fsvol/util/crc32c.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit_isa.h"

#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BUF (65536 + 1024)

static uint8_t *buf; /* BUF random bytes */

/* one bit at a time, from the definition */
static uint32_t ref_crc(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1u));
	}
	return ~crc;
}

static void setup(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	buf = malloc(BUF);
	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < BUF; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
}

static void teardown(void)
{
	free(buf);
}

static const struct {
	const char *name;
	int kind; /* 0: literal string, 1: n zero bytes, 2: n 0xff, 3: 0..n-1, 4: n-1..0 */
	const char *str;
	size_t n;
	uint32_t crc;
} vectors[] = {
	{ "123456789", 0, "123456789", 9, 0xe3069283u },
	{ "empty", 0, "", 0, 0x00000000u },
	{ "a", 0, "a", 1, 0xc1d04330u },
	{ "rfc3720 zeros", 1, NULL, 32, 0x8a9136aau },
	{ "rfc3720 ones", 2, NULL, 32, 0x62a8ab43u },
	{ "rfc3720 incrementing", 3, NULL, 32, 0x46dd794eu },
	{ "rfc3720 decrementing", 4, NULL, 32, 0x113fdb5cu },
};

START_TEST(published_vectors)
{
	uint8_t b[64];
	size_t n = vectors[_i].n;

	for (size_t k = 0; k < n; k++) {
		switch (vectors[_i].kind) {
		case 0: b[k] = (uint8_t)vectors[_i].str[k]; break;
		case 1: b[k] = 0; break;
		case 2: b[k] = 0xff; break;
		case 3: b[k] = (uint8_t)k; break;
		default: b[k] = (uint8_t)(n - 1 - k); break;
		}
	}
	ck_assert_msg(crc32c(0, b, n) == vectors[_i].crc, "%s: got 0x%08x", vectors[_i].name,
		      crc32c(0, b, n));
}
END_TEST

/* every length to 1100 (each fold width's loop and every remainder), offsets 0..15 */
START_TEST(every_short_length)
{
	unsigned bad = 0;

	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len <= 1100; len++)
			bad += crc32c((uint32_t)len, buf + off, len) !=
			       ref_crc((uint32_t)len, buf + off, len);
	ck_assert_uint_eq(bad, 0);
}
END_TEST

/* the metadata's sizes (4 KiB blocks, PPL and journal payloads) and around them */
START_TEST(long_lengths)
{
	static const size_t lens[] = { 4096, 4095, 4097, 4096 + 255, 8192, 16384 + 48,
				       65536, 65536 + 13, 65536 + 1000 };

	for (size_t li = 0; li < ARRAY_SIZE(lens); li++)
		for (size_t off = 0; off < 24; off += 7) {
			size_t len = lens[li];

			ck_assert_uint_le(off + len, BUF);
			ck_assert_msg(crc32c(0, buf + off, len) == ref_crc(0, buf + off, len),
				      "len %zu off %zu", len, off);
		}
}
END_TEST

/* crc32c(crc32c(0, a), b) == crc32c(0, a b) at every split */
START_TEST(chained_calls)
{
	const size_t len = 4096 + 300;
	uint32_t whole = crc32c(0, buf, len);
	unsigned bad = 0;

	for (size_t split = 0; split <= len; split += 7)
		bad += crc32c(crc32c(0, buf, split), buf + split, len - split) != whole;
	ck_assert_uint_eq(bad, 0);
}
END_TEST

#ifdef HAVE_ISAL
/* ISA-L's crc32_iscsi takes and returns the register (no inversions) */
START_TEST(isal_same_crc)
{
	static const size_t lens[] = { 0, 1, 15, 16, 63, 64, 200, 255, 256, 257, 512, 1000,
				       4096, 4096 + 7, 32768, 65536, 65536 + 999 };
	unsigned bad = 0;

	for (size_t li = 0; li < ARRAY_SIZE(lens); li++)
		for (size_t off = 0; off < 25; off += 3) {
			uint32_t init = (uint32_t)(li * 0x9e3779b9u + off);

			bad += crc32c(init, buf + off, lens[li]) !=
			       ~crc32_iscsi(buf + off, (int)lens[li], ~init);
		}
	ck_assert_uint_eq(bad, 0);
}
END_TEST
#endif

static Suite *crc_suite(const char *isa)
{
	static char name[64];
	Suite *s;
	TCase *tc;

	snprintf(name, sizeof(name), "crc32c (%s)", isa);
	s = suite_create(name);
	tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, published_vectors, 0, ARRAY_SIZE(vectors));
	tcase_add_test(tc, every_short_length);
	tcase_add_test(tc, long_lengths);
	tcase_add_test(tc, chained_calls);
#ifdef HAVE_ISAL
	tcase_add_test(tc, isal_same_crc);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	static const struct unit_isa m = {
		.test = "test_crc32c",
		.env = "FSVOL_CRC32C_ISA",
		.cur = crc32c_isa,
		.name = crc32c_isa_name,
		.usable = crc32c_isa_usable,
		.select = crc32c_isa_select,
		.suite = crc_suite,
	};

#ifndef HAVE_ISAL
	printf("test_crc32c: built without ISA-L (libisal-dev): no comparison with it\n");
#endif
	return unit_isa_run(&m);
}
