/* cmd_opts: option-table parsing and usage for every subcommand. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"

#define CMD_MAX_OPTS 40

void cmd_usage(const struct cmd *c, FILE *f)
{
	fprintf(f, "usage: fsvol %s %s\n  %s\n", c->name, c->usage, c->summary);
	if (!c->opts || !c->opts[0].lname)
		return;
	fprintf(f, "options:\n");
	for (const struct cmd_opt *o = c->opts; o->lname; o++) {
		char left[64];
		int n = 0;
		if (o->sname)
			n = snprintf(left, sizeof(left), "-%c, ", o->sname);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", o->lname, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

int cmd_err(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fsvol %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cmd_size(const struct cmd *c, const char *opt, const char *s, uint64_t *out)
{
	int r = size_parse(s, out);
	if (r == -ERANGE)
		cmd_err(c, "%s %s: too large", opt, s);
	else if (r)
		cmd_err(c, "%s %s: not a size (use a number with an optional K, M, G or T suffix)", opt, s);
	return r;
}

int cmd_parse(const struct cmd *c, int argc, char **argv, int *first,
	      int (*on)(int i, const char *arg, void *ctx), void *ctx)
{
	struct option lo[CMD_MAX_OPTS + 2];
	char so[3 * CMD_MAX_OPTS + 4] = ":h";
	int n = 0, sl = 2;
	for (const struct cmd_opt *o = c->opts; o && o->lname && n < CMD_MAX_OPTS; o++, n++) {
		lo[n] = (struct option){ o->lname, o->arg ? required_argument : no_argument, NULL, 1000 + n };
		if (o->sname) {
			so[sl++] = (char)o->sname;
			if (o->arg)
				so[sl++] = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	so[sl] = 0;
	optind = 1;
	opterr = 0;
	for (;;) {
		int ch = getopt_long(argc, argv, so, lo, NULL);
		if (ch == -1)
			break;
		if (ch == 'h') {
			cmd_usage(c, stdout);
			return 1;
		}
		if (ch == '?' || ch == ':') {
			const char *bad = argv[optind - 1];
			if (ch == ':')
				cmd_err(c, "option %s needs an argument", bad);
			else if (optopt)
				cmd_err(c, "unknown option '-%c' (see fsvol %s --help)", optopt, c->name);
			else
				cmd_err(c, "unknown option '%s' (see fsvol %s --help)", bad, c->name);
			return -1;
		}
		int i = -1;
		if (ch >= 1000)
			i = ch - 1000;
		else
			for (int k = 0; c->opts[k].lname; k++)
				if (c->opts[k].sname == ch)
					i = k;
		if (i < 0 || on(i, optarg, ctx))
			return -1;
	}
	*first = optind;
	return 0;
}
