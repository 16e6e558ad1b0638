/* cmd_doc: fsvol(8) and the bash completion, generated from the command
 * and option tables (`fsvol --man`, `fsvol --bash-completion`; the Makefile
 * runs them at build time and installs the results). */
#include <ctype.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/roff.h"

static void man_command(FILE *f, const struct cmd *c)
{
	char ops[512], head[64];
	cmd_operands(c, ops, sizeof(ops));
	snprintf(head, sizeof(head), "fsvol %s", c->name);
	fprintf(f, ".SS %s\n", c->name);
	char *save, *form = strtok_r(ops, "\n", &save);
	fputs(".nh\n.ad l\n", f);
	do {
		fputs(".PP\n.B ", f);
		roff_text(f, head);
		fputc('\n', f);
		for (const struct cmd_opt *o = c->opts; o && o->lname; o++) {
			char name[48];
			if (o->sname)
				snprintf(name, sizeof(name), "-%c", o->sname);
			else
				snprintf(name, sizeof(name), "--%s", o->lname);
			roff_syn_opt(f, name, o->arg, 0, o->flags & CMD_OPT_REQUIRED);
		}
		if (form)
			roff_syn_operands(f, form);
	} while ((form = strtok_r(NULL, "\n", &save)));
	fputs(".ad b\n.hy\n.PP\n", f);
	roff_line(f, c->summary);
	if (c->more) {
		fputs(".PP\n", f);
		roff_line(f, c->more);
	}
	fputs(".RS\n", f);
	for (const struct cmd_opt *o = c->opts; o && o->lname; o++) {
		char names[96];
		cmd_opt_names(o, ", ", names, sizeof(names));
		roff_opt(f, names, o->arg, 0, o->help);
	}
	fputs(".RE\n", f);
}

void cmd_man(FILE *f, const char *version)
{
	fprintf(f, ".\\\" fsvol(8), generated from the option tables by 'fsvol --man'; do not edit.\n"
		   ".TH FSVOL 8 \"\" \"fsvol %s\" \"System Administration\"\n", version);
	fputs(".SH NAME\nfsvol \\- software RAID emulator with instrumentation\n"
	      ".SH SYNOPSIS\n.nh\n.ad l\n"
	      ".B fsvol\n\\fICOMMAND\\fR [\\fIOPTION\\fR]... [\\fIOPERAND\\fR]...\n.br\n"
	      ".B fsvol\n\\fB\\-\\-help\\fR | \\fBhelp\\fR [\\fICOMMAND\\fR] | \\fB\\-\\-version\\fR | "
	      "\\fB\\-\\-man\\fR | \\fB\\-\\-bash\\-completion\\fR\n"
	      ".ad b\n.hy\n.SH DESCRIPTION\n"
	      "fsvol builds a logical volume out of member files or block devices and maps every "
	      "logical offset onto them with Linux md's layouts: single, linear, raid0, raid1, "
	      "raid10 (near, far, offset), raid4, raid5 (md's four algorithms) and raid6. "
	      "It serves the volume as the file \\fIMNT\\fR/volume of a FUSE mount and keeps "
	      "mdadm-style superblocks on the members.\n.PP\n"
	      "It counts I/O twice: above the mapping layer (what the volume received) and below "
	      "it (what each member was asked to do), and can give each member an emulated disk "
	      "(seek, rotation, transfer) so stripe-count experiments show spindle parallelism.\n"
	      ".PP\nSizes take the suffixes K, M, G and T (powers of 1024). A bare number is bytes, except for "
	      "the sizes mdadm takes in KiB: \\fB\\-\\-chunk\\fR, \\fB\\-\\-size\\fR, \\fB\\-\\-bitmap\\-chunk\\fR "
	      "and \\fB\\-\\-data\\-offset\\fR read \\fB\\-c64\\fR as 64K, as mdadm does. "
	      "Every command takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR. Where a command takes a mount point "
	      "\\fIMNT\\fR, the \\fB\\-\\-ctl\\-dir\\fR \\fIDIR\\fR of \\fBfsvol serve\\fR does as well "
	      "(except \\fBtrace\\fR).\n"
	      ".SH COMMANDS\n",
	      f);
	for (const struct cmd *const *c = cmd_all; *c; c++)
		man_command(f, *c);
	fputs(".SH FILES\nA mounted volume's directory \\fIMNT\\fR holds:\n"
	      ".TP\n.I MNT/volume\nthe logical volume, read and written like a disk image\n"
	      ".TP\n.IR MNT/stats \", \" MNT/stats.json \", \" MNT/diskstats\n"
	      "the counters above and below the mapping layer: a table, JSON, /proc/diskstats lines\n"
	      ".TP\n.I MNT/status\nlevel, members and their states, resync progress (like /proc/mdstat); a member "
	      "is named mN by its Number, which stays with the device (md's), and says its role when that differs\n"
	      ".TP\n.I MNT/status.json\nthe same for programs: state, each member's Number, UUID, role, path, state and bad-block count, "
	      "the background pass's position, speed and ETA (schema: docs/status.schema.json)\n"
	      ".TP\n.I MNT/metrics\nthe counters and md-like state in Prometheus text format "
	      "(node_exporter's names under fsvol_; also served by mount \\-\\-http at /metrics)\n"
	      ".TP\n.I MNT/events\nmember failures, degraded starts and rebuilds as they happen, one line each "
	      "(TIME EVENT VOLUME mN DETAIL, mdadm \\-\\-monitor's event names), appended while mounted: "
	      "follow it with tail \\-f or fsvol monitor\n"
	      ".TP\n.IR MNT/trace \", \" MNT/trace.json\n"
	      "each volume request and the member requests it caused, while open\n"
	      ".TP\n.I MNT/ctl\ncontrol commands, one per write: reset, stats LEVEL, model SPEC, fail M [force], "
	      "error N, fault N SPEC, add PATH, re\\-add PATH, remove M, replace M [PATH], sync_speed_min KIBS, "
	      "sync_speed_max KIBS, check, repair, powercut, powercut\\-after K, "
	      "journal_mode write\\-through|write\\-back\n",
	      f);
	roff_exit_status(f);
	fputs(".SH EXAMPLES\n.nf\n"
	      "fsvol create \\-l raid5 \\-c 64K \\-s 256M m0 m1 m2 m3\n"
	      "fsvol mount /mnt/v m0 m1 m2 m3\n"
	      "fsvol stat \\-i 1 /mnt/v\n"
	      "fsvol map \\-l raid5 \\-n 4 \\-c 64K 1M 8K\n"
	      "fsvol umount /mnt/v\n"
	      ".fi\n"
	      ".SH SEE ALSO\n.BR fsvol\\-bench (1),\n.BR mdadm (8),\n.BR iostat (1),\n.BR fusermount3 (1)\n",
	      f);
}

/* Words of a shell list, from a table string (no quotes can appear in them). */
static void sh_words(FILE *f, const char *s)
{
	for (; *s; s++)
		if (isalnum((unsigned char)*s) || strchr(" -_.:,=+/%", *s))
			fputc(*s, f);
}

/* The literal words of a synopsis' operands ("list", "show"): lower-case tokens. */
static void literal_words(FILE *f, const struct cmd *c)
{
	char ops[512];
	cmd_operands(c, ops, sizeof(ops));
	const char *sep = "";
	for (char *s = ops; *s;) {
		size_t n = 0;
		if (islower((unsigned char)*s) && (s == ops || !isalnum((unsigned char)s[-1])))
			while (islower((unsigned char)s[n]) || s[n] == '-')
				n++;
		if (n && !isalnum((unsigned char)s[n])) {
			fprintf(f, "%s%.*s", sep, (int)n, s);
			sep = " ";
			s += n;
		} else {
			s += n ? n : 1;
		}
	}
}

void cmd_bash_completion(FILE *f)
{
	fputs("# bash completion for fsvol(8): generated from its option tables by\n"
	      "# 'fsvol --bash-completion'; do not edit.\n"
	      "_fsvol()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cmd=${COMP_WORDS[1]} opts='' argopts='' words='' w i n=0 skip=0\n"
	      "\tCOMPREPLY=()\n"
	      "\tif ((COMP_CWORD == 1)); then\n"
	      "\t\tCOMPREPLY=($(compgen -W '",
	      f);
	for (const struct cmd *const *c = cmd_all; *c; c++)
		fprintf(f, "%s ", (*c)->name);
	fputs("help --help --version --man --bash-completion' -- \"$cur\"))\n\t\treturn\n\tfi\n"
	      "\tcase $cmd in\n"
	      "\thelp | --help | -h)\n\t\tCOMPREPLY=($(compgen -W '",
	      f);
	for (const struct cmd *const *c = cmd_all; *c; c++)
		fprintf(f, "%s%s", c == cmd_all ? "" : " ", (*c)->name);
	fputs("' -- \"$cur\"))\n\t\treturn ;;\n", f);
	for (const struct cmd *const *c = cmd_all; *c; c++) {
		fprintf(f, "\t%s)\n\t\topts='", (*c)->name);
		char names[96];
		for (const struct cmd_opt *o = (*c)->opts; o && o->lname; o++) {
			cmd_opt_names(o, " ", names, sizeof(names));
			fprintf(f, "%s ", names);
		}
		fputs("-h --help'\n\t\targopts='", f);
		const char *sep = "";
		for (const struct cmd_opt *o = (*c)->opts; o && o->lname; o++) {
			if (!o->arg)
				continue;
			cmd_opt_names(o, " ", names, sizeof(names));
			fprintf(f, "%s%s", sep, names);
			sep = " ";
		}
		fputs("'\n\t\twords='", f);
		literal_words(f, *c);
		fputs("'\n\t\tcase $prev in\n", f);
		for (const struct cmd_opt *o = (*c)->opts; o && o->lname; o++) {
			if (!o->arg || !o->values)
				continue;
			cmd_opt_names(o, " | ", names, sizeof(names));
			fprintf(f, "\t\t%s)\n\t\t\tCOMPREPLY=($(compgen -W '", names);
			sh_words(f, o->values);
			fputs("' -- \"$cur\"))\n\t\t\treturn ;;\n", f);
		}
		fputs("\t\tesac ;;\n", f);
	}
	fputs("\t*) return ;;\n\tesac\n"
	      "\t# the value of an option without a word list: files (complete -o default)\n"
	      "\tcase \" $argopts \" in *\" $prev \"*) return ;; esac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n"
	      "\t# literal operands (model list|show) in the first operand's place\n"
	      "\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	      "\t\tw=${COMP_WORDS[i]}\n"
	      "\t\tif ((skip)); then skip=0; continue; fi\n"
	      "\t\tcase \" $argopts \" in *\" $w \"*) skip=1; continue ;; esac\n"
	      "\t\t[[ $w == -* ]] || n=$((n + 1))\n"
	      "\tdone\n"
	      "\tif ((n == 0)) && [[ -n $words ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	      "\tfi\n"
	      "}\n"
	      "complete -o default -F _fsvol fsvol\n",
	      f);
}
