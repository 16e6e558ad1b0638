/* Filters stack in any order over any backend (members/filter.h): each of the
 * six orders of fault, delay and cache over a memory member keeps every
 * filter's behaviour: a bad range fails reads until a write heals it, the
 * cache holds writes until a flush, delayed completions arrive. (With the
 * cache above the fault filter, the heal happens when the write goes out.) */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/members/fault.h"
#include "fsvol/members/fault_spec.h"
#include "fsvol/members/filter.h"

#define K 1024u

static const char *const orders[] = { "fdc", "fcd", "dfc", "dcf", "cfd", "cdf" };

static int push(struct member *m, char which)
{
	return which == 'f' ? filter_fault_push(m, m) : which == 'd' ? filter_delay_push(m, m) : filter_cache_push(m, m);
}

START_TEST(test_filter_orders)
{
	const char *order = orders[_i];
	char name[64], err[256];
	struct member m = { 0 }, raw = { 0 };
	static uint8_t buf[16 * K], got[16 * K];
	struct fault_spec s;
	snprintf(name, sizeof(name), "mem:order%d:1M", _i);
	ck_assert_int_eq(member_open(&m, name, 0, err, sizeof(err)), 0);
	snprintf(name, sizeof(name), "mem:order%d", _i);
	ck_assert_int_eq(member_open(&raw, name, 0, err, sizeof(err)), 0);
	/* pushed bottom first: the last letter ends on top */
	for (const char *p = order + 2; p >= order; p--)
		ck_assert_int_eq(push(&m, *p), 0);
	ck_assert_str_eq(m.ops->name, order[0] == 'f' ? "fault" : order[0] == 'd' ? "delay" : "cache");
	ck_assert_msg(fault_spec_parse("bad=8K+4K,rdelay=1ms,cache=volatile", &s, err, sizeof(err)) == 0, "%s", err);
	filter_fault_set(filter_find(&m, &filter_fault_ops), &s);
	filter_delay_set(filter_find(&m, &filter_delay_ops), &s);
	filter_cache_set(filter_find(&m, &filter_cache_ops), &s);

	ck_assert_int_eq(member_pread(&m, buf, 4 * K, 0), 0);           /* outside the bad range */
	ck_assert_int_eq(member_pread(&m, buf, 4 * K, 8 * K), -EIO);    /* in it */
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(member_pwrite(&m, buf, sizeof(buf), 0), 0);    /* cached */
	ck_assert_int_eq(member_pread(&raw, got, sizeof(got), 0), 0);
	ck_assert_msg(got[0] == 0, "%s: a cached write reached the member before a flush", order);
	ck_assert_int_eq(member_flush(&m), 0);                          /* out: heals the range */
	ck_assert_int_eq(member_pread(&raw, got, sizeof(got), 0), 0);
	ck_assert_msg(!memcmp(got, buf, sizeof(buf)), "%s: a flush left writes in the cache", order);
	ck_assert_int_eq(member_pread(&m, got, sizeof(got), 0), 0);
	ck_assert_msg(!memcmp(got, buf, sizeof(buf)), "%s: the healed range reads wrong", order);
	member_close(&m);
	member_close(&raw);
}
END_TEST

/* powercut-after K: across members, the first K writes land and complete,
 * later ones never reach a member, and the cut comes once the K-th landed. */
static int cuts, landed;

static void count_cut(void *arg)
{
	(void)arg;
	cuts++;
}

static void count_done(struct member_io *io)
{
	ck_assert_int_eq(io->res, 0);
	landed++;
}

START_TEST(test_powercut_after)
{
	char err[256];
	struct member m[2] = { 0 }, raw[2] = { 0 };
	static uint8_t buf[5][4 * K], got[4 * K];
	struct iovec iov[5];
	struct member_io io[5];
	for (int i = 0; i < 2; i++) {
		char name[32];
		snprintf(name, sizeof(name), "mem:pca%d:1M", i);
		ck_assert_int_eq(member_open(&m[i], name, 0, err, sizeof(err)), 0);
		ck_assert_int_eq(member_fault_wrap(&m[i]), 0);
		snprintf(name, sizeof(name), "mem:pca%d", i);
		ck_assert_int_eq(member_open(&raw[i], name, 0, err, sizeof(err)), 0);
	}
	member_fault_powercut_after(3, count_cut, NULL);
	for (int k = 0; k < 5; k++) { /* writes 0, 2, 4 to member 0; 1, 3 to member 1 */
		memset(buf[k], 'a' + k, sizeof(buf[k]));
		iov[k] = (struct iovec){ buf[k], sizeof(buf[k]) };
		io[k] = (struct member_io){ .op = MEMBER_WRITE, .off = (uint64_t)k * 4 * K, .len = 4 * K,
					    .iov = &iov[k], .niov = 1, .done = count_done };
		m[k % 2].ops->queue(&m[k % 2], &io[k]);
		m[k % 2].ops->commit(&m[k % 2]);
	}
	ck_assert_int_eq(landed, 3); /* memory members complete at once */
	ck_assert_int_eq(cuts, 1);
	for (int k = 0; k < 5; k++) {
		ck_assert_int_eq(member_pread(&raw[k % 2], got, sizeof(got), (uint64_t)k * 4 * K), 0);
		ck_assert_msg((got[0] == 'a' + k) == (k < 3), "write %d %s", k, k < 3 ? "did not land" : "landed after the cut");
	}
	member_fault_powercut(&m[0]);
	member_fault_powercut(&m[1]);
	for (int i = 0; i < 2; i++) {
		member_close(&m[i]);
		member_close(&raw[i]);
	}
}
END_TEST

/* A filter cannot be opened by name: it wraps an open member. */
/* badw= fails reads and writes for good; bad= heals on a write. */
START_TEST(test_bad_sticky)
{
	struct member m;
	char err[256], fmt[256];
	static uint8_t buf[4 * K];
	struct fault_spec s;
	ck_assert_int_eq(member_open(&m, "mem:badw:1M", 0, err, sizeof(err)), 0);
	ck_assert_int_eq(push(&m, 'f'), 0);
	ck_assert_msg(fault_spec_parse("badw=8K+4K,bad=16K+4K", &s, err, sizeof(err)) == 0, "%s", err);
	fault_spec_format(&s, fmt, sizeof(fmt));
	ck_assert_msg(strstr(fmt, "badw=8192+4096") && strstr(fmt, ",bad=16384+4096"), "%s", fmt);
	filter_fault_set(filter_find(&m, &filter_fault_ops), &s);
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 8 * K), -EIO);
	ck_assert_int_eq(member_pwrite(&m, buf, sizeof(buf), 8 * K), -EIO);
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 8 * K), -EIO); /* still bad */
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 16 * K), -EIO);
	ck_assert_int_eq(member_pwrite(&m, buf, sizeof(buf), 16 * K), 0);
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 16 * K), 0);  /* healed */
	ck_assert_int_eq(member_pwrite(&m, buf, sizeof(buf), 0), 0);      /* elsewhere: fine */
	member_close(&m);
}
END_TEST

START_TEST(test_filter_not_openable)
{
	char err[256];
	struct member m = { 0 };
	ck_assert_int_eq(filter_fault_ops.open(&m, "x", 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "wrap"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("filters");
	TCase *t = tcase_create("stack");
	tcase_add_loop_test(t, test_filter_orders, 0, sizeof(orders) / sizeof(orders[0]));
	tcase_add_test(t, test_filter_not_openable);
	tcase_add_test(t, test_bad_sticky);
	tcase_add_test(t, test_powercut_after);
	suite_add_tcase(s, t);
	SRunner *r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
