/* fsvol-bench: a diskspd-style load generator (see docs/bench.md).
 *   fsvol-bench -b4K -r -o32 -d5 -W0 -Sh -L /dev/shm/f
 *   fsvol-bench sweep --level raid0 --members 1-4 ... (bench/sweep.c)
 *   fsvol-bench --replay trace.log [--compare raid5:4,raid10:4 --model hdd] (bench/replay.c)
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
		version_print(stdout, "fsvol-bench");
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
	/* a trace is read whole, and refused whole, before anything is issued */
	struct tracefile trace = { 0 };
	if (o.replay) {
		if (bench_replay_load(&o, &trace, err, sizeof(err))) {
			fprintf(stderr, "fsvol-bench: --replay %s\n", err);
			bench_opts_free(&o);
			return 1;
		}
		o.trace = &trace;
		o.write_pct = bench_replay_write_pct(&trace);
		if (o.compare) {
			rc = bench_replay_compare(&o);
			tracefile_free(&trace);
			bench_opts_free(&o);
			return rc;
		}
	}
	if (bench_run(&o, &r, err, sizeof(err))) {
		fprintf(stderr, "fsvol-bench: %s\n", err);
		tracefile_free(&trace);
		bench_opts_free(&o);
		return 1;
	}
	if (o.latency_log && bench_replay_latency_log(o.latency_log, &trace, r, err, sizeof(err))) {
		fprintf(stderr, "fsvol-bench: %s\n", err);
		rc = 1;
	}
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->target[i].holes[0])
			fprintf(stderr, "fsvol-bench: warning: %s: %s\n", r->target[i].path, r->target[i].holes);
	int wr = o.json ? bench_report_json(stdout, &o, r) : o.xml ? bench_report_xml(stdout, &o, r)
							 : bench_report_text(stdout, &o, r);
	if (fflush(stdout) || wr) {
		fprintf(stderr, "fsvol-bench: writing the report: error\n");
		rc = 1;
	}
	bench_result_free(r);
	tracefile_free(&trace);
	bench_opts_free(&o);
	return rc;
}
