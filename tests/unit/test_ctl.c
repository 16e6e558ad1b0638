/* ctl_parse: every command MNT/ctl takes, and every way a write can be
 * wrong (a NUL inside, trailing words, bad numbers, too long), each refusal
 * with a message naming the culprit. */
#include "fsvol/front/ctl.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *s;
	size_t len; /* 0: strlen */
	int rc;
	enum ctl_verb verb;
	unsigned index;
	const char *arg;  /* for rc 0: the argument kept */
	const char *why;  /* for refusals: in the message */
} cases[] = {
	{ "reset", 0, 0, CTL_RESET, 0, "", NULL },
	{ "reset\n", 0, 0, CTL_RESET, 0, "", NULL },
	{ "  check \n", 0, 0, CTL_CHECK, 0, "", NULL },
	{ "repair", 0, 0, CTL_REPAIR, 0, "", NULL },
	{ "stats volume\n", 0, 0, CTL_STATS, 0, "volume", NULL },
	{ "fail 3", 0, 0, CTL_FAIL, 3, "3", NULL },
	{ "error\t0\n", 0, 0, CTL_ERROR, 0, "0", NULL },
	{ "model 0=hdd;1=ssd", 0, 0, CTL_MODEL, 0, "0=hdd;1=ssd", NULL },
	/* bytes after a NUL were once ignored: refused, naming the offset */
	{ "reset\0stats off", 15, -EINVAL, 0, 0, NULL, "NUL byte at offset 5" },
	{ "\0", 1, -EINVAL, 0, 0, NULL, "NUL byte at offset 0" },
	{ "fail 1\0", 7, -EINVAL, 0, 0, NULL, "NUL byte at offset 6" },
	{ "", 0, -EINVAL, 0, 0, NULL, "empty command" },
	{ " \n", 0, -EINVAL, 0, 0, NULL, "empty command" },
	{ "reset now", 0, -EINVAL, 0, 0, NULL, "unexpected 'now'" },
	{ "fail 1 2", 0, -EINVAL, 0, 0, NULL, "unexpected '2'" },
	{ "stats", 0, -EINVAL, 0, 0, NULL, "expected all, volume or off" },
	{ "stats most", 0, -EINVAL, 0, 0, NULL, "stats most" },
	/* not an index: refused against the volume, which names the valid ones */
	{ "fail", 0, 0, CTL_FAIL, CTL_NO_INDEX, "", NULL },
	{ "fail -1", 0, 0, CTL_FAIL, CTL_NO_INDEX, "-1", NULL },
	{ "fail +1", 0, 0, CTL_FAIL, CTL_NO_INDEX, "+1", NULL },
	{ "fail 1x", 0, 0, CTL_FAIL, CTL_NO_INDEX, "1x", NULL },
	{ "fail 64", 0, 0, CTL_FAIL, CTL_NO_INDEX, "64", NULL },
	{ "fail 99999999999999999999999", 0, 0, CTL_FAIL, CTL_NO_INDEX,
	  "99999999999999999999999", NULL },
	{ "error x", 0, 0, CTL_ERROR, CTL_NO_INDEX, "x", NULL },
	{ "model", 0, -EINVAL, 0, 0, NULL, "the spec is missing" },
	{ "frob", 0, -EINVAL, 0, 0, NULL, "unknown command 'frob'" },
	/* recovery and faults */
	{ "fail /m/x force", 0, 0, CTL_FAIL, CTL_NO_INDEX, "/m/x", NULL },
	{ "fail 1 now", 0, -EINVAL, 0, 0, NULL, "unexpected 'now'" },
	{ "add /var/tmp/s0", 0, 0, CTL_ADD, 0, "/var/tmp/s0", NULL },
	{ "add", 0, -EINVAL, 0, 0, NULL, "add PATH: the argument is missing" },
	{ "re-add /var/tmp/m1", 0, 0, CTL_READD, 0, "/var/tmp/m1", NULL },
	{ "remove 4", 0, 0, CTL_REMOVE, 4, "4", NULL },
	{ "remove 4 5", 0, -EINVAL, 0, 0, NULL, "unexpected '5'" },
	{ "fault 2 error=read,after=10", 0, 0, CTL_FAULT, 2, "2", NULL },
	{ "fault 2", 0, -EINVAL, 0, 0, NULL, "see docs/faults.md" },
	{ "sync_speed_max 5000", 0, 0, CTL_SPEED_MAX, 0, "5000", NULL },
	{ "powercut\n", 0, 0, CTL_POWERCUT, 0, "", NULL },
	{ "powercut now", 0, -EINVAL, 0, 0, NULL, "unexpected 'now'" },
	{ "sync_speed_min 0", 0, -EINVAL, 0, 0, NULL, "expected KiB/s from 1" },
	{ "sync_speed_min x", 0, -EINVAL, 0, 0, NULL, "sync_speed_min x" },
	{ "replace 2 /var/tmp/s0", 0, 0, CTL_REPLACE, 0, "2", NULL },
	{ "replace", 0, -EINVAL, 0, 0, NULL, "replace M [PATH]: the argument is missing" },
	/* md's per-device flags */
	{ "add /var/tmp/s0 writemostly failfast", 0, 0, CTL_ADD, 0, "/var/tmp/s0", NULL },
	{ "add /var/tmp/s0 slow", 0, -EINVAL, 0, 0, NULL, "expected writemostly or failfast" },
	{ "writemostly 1 on", 0, 0, CTL_WRITEMOSTLY, 0, "1", NULL },
	{ "writemostly 1", 0, -EINVAL, 0, 0, NULL, "writemostly M on|off: the argument is missing" },
	{ "writemostly 1 yes", 0, -EINVAL, 0, 0, NULL, "expected on or off" },
	{ "failfast /m/x off", 0, 0, CTL_FAILFAST, 0, "/m/x", NULL },
	{ "failfast_ms 250", 0, 0, CTL_FAILFAST_MS, 0, "250", NULL },
	{ "failfast_ms 0", 0, -EINVAL, 0, 0, NULL, "expected milliseconds from 1" },
	/* md's array knobs: safe_mode_delay in seconds to the ms, rmw_level 0-2 */
	{ "safe_mode_delay 0.200", 0, 0, CTL_SAFE_MODE_DELAY, 0, "0.200", NULL },
	{ "safe_mode_delay 0", 0, 0, CTL_SAFE_MODE_DELAY, 0, "0", NULL },
	{ "safe_mode_delay 0.0001", 0, -EINVAL, 0, 0, NULL, "at most 3 decimals" },
	{ "safe_mode_delay 3601", 0, -EINVAL, 0, 0, NULL, "safe_mode_delay 3601" },
	{ "safe_mode_delay -1", 0, -EINVAL, 0, 0, NULL, "safe_mode_delay -1" },
	{ "safe_mode_delay 1.", 0, -EINVAL, 0, 0, NULL, "safe_mode_delay 1." },
	{ "safe_mode_delay", 0, -EINVAL, 0, 0, NULL, "safe_mode_delay SECONDS: the argument is missing" },
	{ "rmw_level 2", 0, 0, CTL_RMW_LEVEL, 0, "2", NULL },
	{ "rmw_level 3", 0, -EINVAL, 0, 0, NULL, "expected 0 (reconstruct-write only)" },
	{ "rmw_level 10", 0, -EINVAL, 0, 0, NULL, "rmw_level 10" },
	/* the model clock's timer slack, microseconds, 0 = exact */
	{ "timer_slack_us 50", 0, 0, CTL_TIMER_SLACK, 0, "50", NULL },
	{ "timer_slack_us 0", 0, 0, CTL_TIMER_SLACK, 0, "0", NULL },
	{ "timer_slack_us 10001", 0, -EINVAL, 0, 0, NULL, "expected microseconds from 0" },
	{ "timer_slack_us -5", 0, -EINVAL, 0, 0, NULL, "timer_slack_us -5" },
	{ "timer_slack_us", 0, -EINVAL, 0, 0, NULL, "timer_slack_us US: the argument is missing" },
};

START_TEST(test_parse)
{
	static struct ctl_cmd c;
	char err[256] = "";
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].s);
	int rc = ctl_parse(cases[_i].s, len, &c, err, sizeof(err));
	ck_assert_msg(rc == cases[_i].rc, "'%s': rc %d, want %d (%s)", cases[_i].s, rc, cases[_i].rc, err);
	if (rc) {
		ck_assert_msg(strstr(err, cases[_i].why), "'%s': message '%s' lacks '%s'", cases[_i].s, err,
			      cases[_i].why);
		return;
	}
	ck_assert_int_eq(c.verb, cases[_i].verb);
	ck_assert_uint_eq(c.index, cases[_i].index);
	ck_assert_str_eq(c.arg, cases[_i].arg);
	if (c.verb == CTL_STATS)
		ck_assert_int_eq(c.level, STATS_LEVEL_VOLUME);
}
END_TEST

START_TEST(test_too_long)
{
	static char buf[CTL_MAX + 2];
	char err[256] = "";
	static struct ctl_cmd c;
	memset(buf, 'a', sizeof(buf));
	ck_assert_int_eq(ctl_parse(buf, sizeof(buf), &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "too long"), "%s", err);
	/* the longest that fits: a model spec is kept whole */
	memcpy(buf, "model ", 6);
	ck_assert_int_eq(ctl_parse(buf, CTL_MAX, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(c.arg), CTL_MAX - 6);
}
END_TEST

/* md's safe_mode_delay is seconds to the millisecond; rmw_level its digit */
START_TEST(test_numbers)
{
	static const struct { const char *s; unsigned n; } want[] = {
		{ "safe_mode_delay 0.2", 200 }, { "safe_mode_delay 0.200", 200 }, { "safe_mode_delay 1.5", 1500 },
		{ "safe_mode_delay 0.001", 1 }, { "safe_mode_delay 3600", 3600000 }, { "safe_mode_delay 0", 0 },
		{ "rmw_level 0", 0 }, { "rmw_level 2", 2 },
	};
	static struct ctl_cmd c;
	char err[256] = "";
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_msg(ctl_parse(want[i].s, strlen(want[i].s), &c, err, sizeof(err)) == 0, "%s: %s", want[i].s, err);
		ck_assert_msg(c.number == want[i].n, "%s: %u, want %u", want[i].s, c.number, want[i].n);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("ctl");
	tcase_add_loop_test(tc, test_parse, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_numbers);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
