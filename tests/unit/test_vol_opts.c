/* vol_opts: the words that set a volume's options (fsvol mount's and serve's
 * option values, the NBD plugin's key=value configuration): every form
 * accepted, every one refused, and refusals leave the options unchanged. */
#include "fsvol/core/vol_opts.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *key, *value;
	int rc;
	enum vol_read_policy policy;
	unsigned prefer;
	uint64_t split;
	enum vol_stats_level stats;
} cases[] = {
	{ "read-policy", "md", 0, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "default", 0, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "round-robin", 0, VOL_READ_ROUNDROBIN, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "rr", 0, VOL_READ_ROUNDROBIN, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "prefer:0", 0, VOL_READ_PREFER, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "prefer:3", 0, VOL_READ_PREFER, 3, 0, VOL_STATS_ALL },
	{ "read-policy", "split:64K", 0, VOL_READ_SPLIT, 0, 65536, VOL_STATS_ALL },
	{ "read-policy", "split:4096", 0, VOL_READ_SPLIT, 0, 4096, VOL_STATS_ALL },
	{ "read-policy", "prefer:", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "prefer:x", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "prefer:99999", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "split:1000", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "split:6K", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "split:", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "nearest", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "read-policy", "", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "stats", "all", 0, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "stats", "volume", 0, VOL_READ_DEFAULT, 0, 0, VOL_STATS_VOLUME },
	{ "stats", "off", 0, VOL_READ_DEFAULT, 0, 0, VOL_STATS_OFF },
	{ "stats", "none", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "stats", "ALL", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
	{ "colour", "red", -EINVAL, VOL_READ_DEFAULT, 0, 0, VOL_STATS_ALL },
};

START_TEST(test_set)
{
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	char err[256] = "";
	int r = vol_opts_set(&o, cases[_i].key, cases[_i].value, err, sizeof(err));
	ck_assert_int_eq(r, cases[_i].rc);
	ck_assert_int_eq(o.read_policy, cases[_i].policy);
	ck_assert_uint_eq(o.prefer, cases[_i].prefer);
	ck_assert_uint_eq(o.split, cases[_i].split);
	ck_assert_int_eq(o.stats, cases[_i].stats);
	if (r) /* the message names the key */
		ck_assert_ptr_nonnull(strstr(err, cases[_i].key));
}
END_TEST

START_TEST(test_flags)
{
	struct vol_opts o = { 0 };
	char err[64];
	ck_assert_int_eq(vol_opts_set(&o, "buffered", "1", err, sizeof(err)), 0);
	ck_assert_int_eq(vol_opts_set(&o, "force", "1", err, sizeof(err)), 0);
	ck_assert_int_eq(vol_opts_set(&o, "model", "hdd", err, sizeof(err)), 0);
	ck_assert_int_eq(o.buffered, 1);
	ck_assert_int_eq(o.force, 1);
	ck_assert_str_eq(o.model, "hdd");
	ck_assert_int_eq(o.readonly, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_opts");
	TCase *tc = tcase_create("vol_opts");
	tcase_add_loop_test(tc, test_set, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_flags);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
