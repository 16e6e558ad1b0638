/* man: fsvol-bench(1) and its bash completion, generated from the flag
 * tables of the run (opts.c) and the sweep (sweep.c), so neither can drift
 * from the parser. The Makefile runs `fsvol-bench --man` and
 * `fsvol-bench --bash-completion` at build time and installs the results. */
#include <stdio.h>

#include "bench/bench.h"
#include "bench/flags.h"
#include "bench/sweep.h"
#include "fsvol/util/roff.h"

void bench_man(FILE *f, const char *version)
{
	fprintf(f, ".\\\" fsvol-bench(1), generated from the flag tables by 'fsvol-bench --man'; do not edit.\n"
		   ".TH FSVOL\\-BENCH 1 \"\" \"fsvol %s\" \"User Commands\"\n", version);
	fputs(".SH NAME\nfsvol\\-bench \\- diskspd-style load generator for files, devices and fsvol volumes\n"
	      ".SH SYNOPSIS\n.nh\n.ad l\n",
	      f);
	bench_flags_man_synopsis(bench_run_flags, "fsvol-bench", BENCH_OPERANDS, f);
	bench_flags_man_synopsis(bench_sweep_flags, "fsvol-bench sweep", "", f);
	fputs(".ad b\n.hy\n.SH DESCRIPTION\n"
	      "fsvol\\-bench runs a timed workload (block size, queue depth, threads, random or "
	      "sequential, read/write mix) against each \\fITARGET\\fR and prints a report shaped like "
	      "diskspd's: per thread and in total, bytes, I/Os, MiB/s, I/O per second and average "
	      "latency, with \\fB\\-L\\fR a latency percentile table. A \\fITARGET\\fR is a file, a "
	      "block device, an fsvol \\fIMNT\\fR/volume, or with \\fB\\-\\-members\\fR a volume "
	      "opened in-process (no FUSE in the way). On an fsvol volume the report adds each "
	      "member's figures for the same interval (below the mapping layer) and checks that "
	      "bytes are conserved.\n"
	      ".PP\nValues may be attached (\\fB\\-b64K\\fR) or, for flags that need one, the next "
	      "argument (\\fB\\-b 64K\\fR); optional values (\\fB\\-r\\fR, \\fB\\-s\\fR, \\fB\\-z\\fR, "
	      "\\fB\\-S\\fR) must be attached. Long flags take \\fB\\-\\-name VALUE\\fR or "
	      "\\fB\\-\\-name=VALUE\\fR. Sizes take K, M, G, T (powers of 1024).\n"
	      ".SH OPTIONS\n",
	      f);
	bench_flags_man(bench_run_flags, f);
	fputs(".SH SWEEP\n"
	      "\\fBfsvol\\-bench sweep\\fR builds a volume per member count (\\fB\\-\\-members 1\\-4\\fR) "
	      "or per level (\\fB\\-\\-levels\\fR) out of member files in a temp directory, runs each "
	      "workload on it in-process and prints the stripe-set (or level) table; "
	      "\\fB\\-\\-out\\fR also writes CSV, JSON and gnuplot plots. The temp directory is "
	      "removed on every exit, interrupts included.\n",
	      f);
	bench_flags_man(bench_sweep_flags, f);
	roff_exit_status(f);
	fputs(".SH EXAMPLES\n.nf\n"
	      "fsvol\\-bench \\-b4K \\-r \\-o32 \\-d10 \\-W2 \\-Sh \\-L /mnt/v/volume\n"
	      "fsvol\\-bench \\-b64K \\-s \\-c256M \\-d5 \\-W0 /var/tmp/bench.dat\n"
	      "fsvol\\-bench sweep \\-\\-members 1\\-4 \\-\\-model hdd\\-legacy \\-\\-out results\n"
	      ".fi\n"
	      ".SH SEE ALSO\n.BR fsvol (8),\n.BR fio (1)\n",
	      f);
}

static void words(FILE *f, const struct bench_flag *t)
{
	for (const struct bench_flag *d = t; d->set; d++) {
		if (d->sname)
			fprintf(f, "-%c ", d->sname);
		if (d->lname)
			fprintf(f, "--%s ", d->lname);
	}
	fputs("-h --help", f);
}

/* Flags whose value is the next argument (when not attached). */
static void argflags(FILE *f, const struct bench_flag *t)
{
	const char *sep = "";
	for (const struct bench_flag *d = t; d->set; d++) {
		if (d->arg != BENCH_FLAG_REQ)
			continue;
		if (d->sname)
			fprintf(f, "%s-%c", sep, d->sname), sep = " ";
		if (d->lname)
			fprintf(f, "%s--%s", sep, d->lname), sep = " ";
	}
}

void bench_bash_completion(FILE *f)
{
	fputs("# bash completion for fsvol-bench(1): generated from its flag tables by\n"
	      "# 'fsvol-bench --bash-completion'; do not edit.\n"
	      "_fsvol_bench()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts argopts\n"
	      "\tCOMPREPLY=()\n"
	      "\tif [[ ${COMP_WORDS[1]} == sweep ]] && ((COMP_CWORD > 1)); then\n\t\topts='",
	      f);
	words(f, bench_sweep_flags);
	fputs("'\n\t\targopts='", f);
	argflags(f, bench_sweep_flags);
	fputs("'\n\telse\n\t\topts='", f);
	words(f, bench_run_flags);
	fputs(" --man --bash-completion'\n\t\targopts='", f);
	argflags(f, bench_run_flags);
	fputs("'\n\tfi\n"
	      "\t# a flag's value: files (complete -o default)\n"
	      "\tcase \" $argopts \" in *\" $prev \"*) return ;; esac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telif ((COMP_CWORD == 1)); then\n"
	      "\t\tCOMPREPLY=($(compgen -W sweep -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
	      "\tfi\n"
	      "}\n"
	      "complete -o default -F _fsvol_bench fsvol-bench\n",
	      f);
}
