/* events_diff: the events between two looks at a volume (MNT/events), as
 * mdadm --monitor names them, for the transitions a volume goes through: a
 * failure with a spare moved into the role's slot, a rebuild seen at each
 * fifth, a pass that ran entirely between two looks, one recovery straight
 * after another, a replace, a spare's failure, a volume going beyond
 * redundancy, and nothing for no change. */
#include "fsvol/front/events.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A look: slot words "active:/m0 active:/m1 spare:/s0" ("missing:" for none). */
static void look(struct events_snap *s, const char *slots, int degraded, const char *what, int running,
		 int done, unsigned pct, uint64_t start, int slot)
{
	char buf[512], *save;
	memset(s, 0, sizeof(*s));
	snprintf(buf, sizeof(buf), "%s", slots);
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(w, ':');
		*colon = 0;
		snprintf(s->state[s->nslots], sizeof(s->state[0]), "%s", w);
		snprintf(s->path[s->nslots], sizeof(s->path[0]), "%s", colon + 1);
		s->number[s->nslots] = (int)s->nslots; /* Number = slot unless a test moves one */
		s->nslots++;
	}
	s->members = 3;
	s->degraded = degraded;
	s->nfailed = (unsigned)degraded;
	s->sync_what = what;
	s->sync_running = running;
	s->sync_done = done;
	s->sync_pct = pct;
	s->sync_start_ns = start;
	s->sync_slot = slot;
}

static char got[2048];

static void collect(void *ctx, const char *event, int slot, const char *detail)
{
	(void)ctx;
	size_t n = strlen(got);
	snprintf(got + n, sizeof(got) - n, "%s%s %d %s", n ? "; " : "", event, slot, detail);
}

static const char *diff(const struct events_snap *a, const struct events_snap *b)
{
	got[0] = 0;
	events_diff(a, b, collect, NULL);
	return got;
}

START_TEST(test_no_change)
{
	static struct events_snap a, b;
	look(&a, "active:/m0 active:/m1 active:/m2", 0, "check", 1, 0, 10, 7, -1);
	look(&b, "active:/m0 active:/m1 active:/m2", 0, "check", 1, 0, 15, 7, -1);
	ck_assert_str_eq(diff(&a, &b), "");
}
END_TEST

/* the devices' Numbers go with them: /s0 is m3 in role 1, /m1 stays m1 in slot 3 */
static void swap_numbers(struct events_snap *s)
{
	s->number[1] = 3;
	s->number[3] = 1;
}

START_TEST(test_fail_spare_takes_over)
{
	static struct events_snap a, b, c, d;
	/* md's way here: the spare moves into role 1, the failed member to slot 3 */
	look(&a, "active:/m0 active:/m1 active:/m2 spare:/s0", 0, NULL, 0, 0, 0, 0, -1);
	look(&b, "active:/m0 rebuilding:/s0 active:/m2 failed:/m1", 1, "recovery", 1, 0, 5, 9, 1);
	swap_numbers(&b);
	ck_assert_str_eq(diff(&a, &b), "Fail 1 /m1; DegradedArray -1 1 of 3 members failed or missing; "
				       "RebuildStarted 3 recovery");
	look(&c, "active:/m0 rebuilding:/s0 active:/m2 failed:/m1", 1, "recovery", 1, 0, 45, 9, 1);
	swap_numbers(&c);
	ck_assert_str_eq(diff(&b, &c), "Rebuild20 3 recovery 20%; Rebuild40 3 recovery 40%");
	look(&d, "active:/m0 active:/s0 active:/m2 failed:/m1", 0, "recovery", 0, 1, 100, 9, -1);
	swap_numbers(&d);
	ck_assert_str_eq(diff(&c, &d), "Rebuild60 3 recovery 60%; Rebuild80 3 recovery 80%; "
				       "RebuildFinished 3 recovery done, 0 mismatches; SpareActive 3 /s0");
}
END_TEST

/* a look between the member's going active and its pass's end (seen in CI):
 * the member is held until the pass ends, so the order stays md's */
START_TEST(test_active_before_pass_ends)
{
	static struct events_snap c, e, f;
	look(&c, "active:/m0 rebuilding:/s0 active:/m2 failed:/m1", 1, "recovery", 1, 0, 45, 9, 1);
	look(&e, "active:/m0 active:/s0 active:/m2 failed:/m1", 0, "recovery", 1, 0, 100, 9, -1);
	look(&f, "active:/m0 active:/s0 active:/m2 failed:/m1", 0, "recovery", 0, 1, 100, 9, -1);
	swap_numbers(&c);
	swap_numbers(&e);
	swap_numbers(&f);
	events_hold(&c, &e);
	ck_assert_str_eq(e.state[1], "rebuilding");
	ck_assert_int_eq(e.sync_slot, 1);
	ck_assert_str_eq(diff(&c, &e), "Rebuild60 3 recovery 60%; Rebuild80 3 recovery 80%");
	events_hold(&e, &f); /* the pass ended: nothing held */
	ck_assert_str_eq(f.state[1], "active");
	ck_assert_str_eq(diff(&e, &f), "RebuildFinished 3 recovery done, 0 mismatches; SpareActive 3 /s0");
}
END_TEST

/* one recovery straight after another (a second failed role, a second
 * spare): the first's end, its spare, then the second's start, as md's */
START_TEST(test_recovery_after_recovery)
{
	static struct events_snap a, b;
	look(&a, "rebuilding:/s0 active:/m1 failed:/m2 spare:/s1", 1, "recovery", 1, 0, 90, 9, 0);
	look(&b, "active:/s0 active:/m1 rebuilding:/s1 failed:/m2", 1, "recovery", 1, 0, 10, 12, 2);
	ck_assert_str_eq(diff(&a, &b), "RebuildFinished 0 recovery ended; SpareActive 0 /s0; RebuildStarted 2 recovery");
}
END_TEST

START_TEST(test_recovery_after_replace)
{
	static struct events_snap a, b;
	/* a replace swapped /n in, /m2 failed, and a recovery began on /m1 (the
	 * spare the replace left) before the next look: the replacement's
	 * SpareActive belongs to the replace, before the recovery starts */
	look(&a, "active:/m0 active:/m1 active:/m2 spare:/n", 0, "replace", 1, 0, 95, 3, 3);
	look(&b, "active:/m0 active:/n rebuilding:/m1 failed:/m2", 1, "recovery", 1, 0, 10, 4, 2);
	ck_assert_str_eq(diff(&a, &b), "Fail 3 /m2; DegradedArray -1 1 of 3 members failed or missing; "
				       "RebuildFinished -1 replace ended; SpareActive 1 /n; RebuildStarted 2 recovery");
}
END_TEST

START_TEST(test_pass_between_looks)
{
	static struct events_snap a, b;
	/* a check began and ended within 100 ms: still reported, by its start time */
	look(&a, "active:/m0 active:/m1 active:/m2", 0, "check", 0, 1, 100, 5, -1);
	look(&b, "active:/m0 active:/m1 active:/m2", 0, "check", 0, 1, 100, 6, -1);
	b.sync_mismatches = 1;
	ck_assert_str_eq(diff(&a, &b), "RebuildStarted -1 check; Rebuild20 -1 check 20%; Rebuild40 -1 check 40%; "
				       "Rebuild60 -1 check 60%; Rebuild80 -1 check 80%; "
				       "RebuildFinished -1 check done, 1 mismatch");
}
END_TEST

START_TEST(test_stopped)
{
	static struct events_snap a, b;
	look(&a, "active:/m0 active:/m1 active:/m2", 0, "repair", 1, 0, 30, 5, -1);
	look(&b, "active:/m0 active:/m1 active:/m2", 0, "repair", 0, 0, 35, 5, -1);
	ck_assert_str_eq(diff(&a, &b), "RebuildFinished -1 repair stopped, 0 mismatches");
}
END_TEST

START_TEST(test_replace_swaps)
{
	static struct events_snap a, b;
	look(&a, "active:/m0 active:/m1 active:/m2 spare:/n", 0, "replace", 1, 0, 90, 3, -1);
	look(&b, "active:/m0 active:/n active:/m2 spare:/m1", 0, "replace", 0, 1, 100, 3, -1);
	ck_assert_str_eq(diff(&a, &b), "RebuildFinished -1 replace done, 0 mismatches; SpareActive 1 /n");
}
END_TEST

START_TEST(test_fail_spare_and_beyond)
{
	static struct events_snap a, b;
	look(&a, "active:/m0 rebuilding:/s0 active:/m2 failed:/m1", 1, "recovery", 1, 0, 10, 4, 1);
	look(&b, "active:/m0 failed:/s0 failed:/m2 failed:/m1", 2, "recovery", 0, 0, 12, 4, -1);
	ck_assert_str_eq(diff(&a, &b), "FailSpare 1 /s0; Fail 2 /m2; DegradedArray -1 2 of 3 members failed or "
				       "missing: beyond redundancy, the volume has FAILED; "
				       "RebuildFinished 1 recovery stopped, 0 mismatches");
}
END_TEST

START_TEST(test_missing_member)
{
	static struct events_snap a, b;
	/* a member gone (no path any more): named from the last look */
	look(&a, "active:/m0 active:/m1 active:/m2", 0, NULL, 0, 0, 0, 0, -1);
	look(&b, "active:/m0 missing: active:/m2", 1, NULL, 0, 0, 0, 0, -1);
	ck_assert_str_eq(diff(&a, &b), "Fail 1 /m1; DegradedArray -1 1 of 3 members failed or missing");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("events");
	tcase_add_test(tc, test_no_change);
	tcase_add_test(tc, test_fail_spare_takes_over);
	tcase_add_test(tc, test_active_before_pass_ends);
	tcase_add_test(tc, test_recovery_after_recovery);
	tcase_add_test(tc, test_recovery_after_replace);
	tcase_add_test(tc, test_pass_between_looks);
	tcase_add_test(tc, test_stopped);
	tcase_add_test(tc, test_replace_swaps);
	tcase_add_test(tc, test_fail_spare_and_beyond);
	tcase_add_test(tc, test_missing_member);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
