/* unit_isa: what the tests of a module with kernel sets share (parity,
 * crc32c): run a suite once with each set the CPU runs, forced in turn, after
 * checking that the default is the best of them and that an unknown name is
 * refused. Include once, after <check.h>. */
#ifndef FSVOL_TESTS_UNIT_ISA_H
#define FSVOL_TESTS_UNIT_ISA_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a module's set API: parity_isa*() or crc32c_isa*() */
struct unit_isa {
	const char *test;   /* "test_parity": the messages' prefix */
	const char *env;    /* the variable that overrides the default */
	const char *(*cur)(void);
	const char *(*name)(unsigned i);
	int (*usable)(const char *name);
	int (*select)(const char *name);
	Suite *(*suite)(const char *set);
};

/* main()'s exit status */
static int unit_isa_run(const struct unit_isa *m)
{
	const char *best = NULL, *name;
	int failed = 0, nsets = 0;

	for (unsigned i = 0; (name = m->name(i)); i++)
		if (m->usable(name) == 1)
			best = name;
	if (!getenv(m->env) && strcmp(m->cur(), best) != 0) {
		fprintf(stderr, "%s: default kernel set %s, the best usable is %s\n", m->test,
			m->cur(), best);
		failed++;
	}
	if (m->select("no-such-set") != -EINVAL || m->usable("no-such-set") != -EINVAL) {
		fprintf(stderr, "%s: an unknown kernel set was accepted\n", m->test);
		failed++;
	}
	for (unsigned i = 0; (name = m->name(i)); i++) {
		SRunner *sr;

		if (m->usable(name) != 1) {
			printf("%s: kernel set %s: not on this CPU\n", m->test, name);
			failed += m->select(name) != -ENOTSUP;
			continue;
		}
		if (m->select(name) != 0 || strcmp(m->cur(), name) != 0) {
			fprintf(stderr, "%s: kernel set %s could not be selected\n", m->test, name);
			failed++;
			continue;
		}
		sr = srunner_create(m->suite(name));
		srunner_run_all(sr, CK_NORMAL);
		failed += srunner_ntests_failed(sr);
		srunner_free(sr);
		nsets++;
	}
	return failed || nsets == 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
