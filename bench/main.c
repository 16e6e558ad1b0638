/* fsvol-bench: a diskspd-style load generator (see docs/bench.md).
 *   fsvol-bench -b4K -r -o32 -d5 -W0 -Sh -L /dev/shm/f
 *   fsvol-bench sweep --level raid0 --members 1-4 ... (bench/sweep.c)
 * Exit status: 0, 1 when the run fails, 2 for bad flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/sweep.h"
#include "fsvol/util/version.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_result *r;
	char err[512];
	int rc;

	if (argc > 1 && !strcmp(argv[1], "sweep"))
		return bench_sweep_main(argc - 1, argv + 1);
	/* generated documents (the Makefile installs them) */
	if (argc == 2 && !strcmp(argv[1], "--man")) {
		bench_man(stdout, FSVOL_VERSION);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--bash-completion")) {
		bench_bash_completion(stdout);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("fsvol-bench %s\n", FSVOL_VERSION);
		return 0;
	}
	bench_opts_default(&o);
	rc = bench_parse(&o, argc, argv, err, sizeof(err));
	if (rc == 1) {
		bench_opts_free(&o);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "fsvol-bench: %s\n", err);
		bench_opts_free(&o);
		return 2;
	}
	if (bench_run(&o, &r, err, sizeof(err))) {
		fprintf(stderr, "fsvol-bench: %s\n", err);
		bench_opts_free(&o);
		return 1;
	}
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->target[i].holes[0])
			fprintf(stderr, "fsvol-bench: warning: %s: %s\n", r->target[i].path, r->target[i].holes);
	rc = o.json ? bench_report_json(stdout, &o, r) : o.xml ? bench_report_xml(stdout, &o, r)
							 : bench_report_text(stdout, &o, r);
	if (fflush(stdout) || rc) {
		fprintf(stderr, "fsvol-bench: writing the report: error\n");
		rc = 1;
	}
	bench_result_free(r);
	bench_opts_free(&o);
	return rc;
}
