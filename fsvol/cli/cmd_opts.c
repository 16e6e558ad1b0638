/* cmd_opts: option-table parsing, and the usage text made from the same
 * tables (synopsis, options, notes). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"
#include "fsvol/util/wrap.h"

#define CMD_MAX_OPTS 40


void cmd_operands(const struct cmd *c, char *out, size_t len)
{
	size_t n = 0;
	if (c->operands || !c->usage) {
		snprintf(out, len, "%s", c->operands ? c->operands : "");
		return;
	}
	/* transitional: "[-i SEC] [--json|--csv] MNT" -> "MNT" */
	for (const char *s = c->usage; *s && n + 1 < len; s++) {
		if (s[0] == '[' && s[1] == '-') {
			const char *e = strchr(s, ']');
			if (!e)
				break;
			s = e;
			continue;
		}
		if (*s == ' ' && (n == 0 || out[n - 1] == ' '))
			continue;
		out[n++] = *s;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = 0;
}

/* One option as the synopsis shows it: "[-c CHUNK]", "[--json]", "-l LEVEL"
 * (the space is a WRAP_NBSP, so the item stays on one line). */
static void opt_item(const struct cmd_opt *o, char *out, size_t len)
{
	int req = o->flags & CMD_OPT_REQUIRED;
	char name[48];
	if (o->sname)
		snprintf(name, sizeof(name), "-%c", o->sname);
	else
		snprintf(name, sizeof(name), "--%s", o->lname);
	snprintf(out, len, "%s%s%s%s%s", req ? "" : "[", name, o->arg ? "\1" : "", o->arg ? o->arg : "",
		 req ? "" : "]");
}

/* The synopsis lines ("usage: fsvol NAME [-f] ... MNT"), wrapped at 80 columns. */
static void cmd_synopsis(const struct cmd *c, FILE *f)
{
	char ops[512], head[64];
	cmd_operands(c, ops, sizeof(ops));
	int nhead = snprintf(head, sizeof(head), "fsvol %s", c->name);
	size_t indent = 7 + (size_t)nhead + 1;
	char *save, *form = strtok_r(ops, "\n", &save);
	int line = 0;
	do {
		size_t col = (size_t)fprintf(f, "%s%s", line++ ? "       " : "usage: ", head);
		for (const struct cmd_opt *o = c->opts; o && o->lname; o++) {
			char item[96];
			opt_item(o, item, sizeof(item));
			col = wrap_words(f, item, col, indent, 0);
		}
		if (form)
			wrap_words(f, form, col, indent, 0);
		fputc('\n', f);
	} while ((form = strtok_r(NULL, "\n", &save)));
}

void cmd_put_wrapped(FILE *f, const char *s, size_t col, size_t indent)
{
	wrap_words(f, s, col, indent, 1);
	fputc('\n', f);
}

void cmd_opt_names(const struct cmd_opt *o, const char *sep, char *out, size_t len)
{
	int n = 0;
	out[0] = 0;
	if (o->sname)
		n += snprintf(out + n, len - (size_t)n, "-%c%s", o->sname, sep);
	if (o->salias && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, "-%c%s", o->salias, sep);
	if ((size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, "--%s", o->lname);
	if (o->alias && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, "%s--%s", sep, o->alias);
}

/* "  -c, --chunk CHUNK          help text", the help wrapped at WRAP_WIDTH;
 * names too long for the column get a line of their own. */
static void opt_line(FILE *f, const struct cmd_opt *o)
{
	char names[96], left[128];
	cmd_opt_names(o, ", ", names, sizeof(names));
	snprintf(left, sizeof(left), "%s%s%s%s", o->sname || o->salias ? "" : "    ", names, o->arg ? " " : "",
		 o->arg ? o->arg : "");
	if (strlen(left) > 28)
		fprintf(f, "  %s\n%31s", left, "");
	else
		fprintf(f, "  %-28s ", left);
	wrap_words(f, o->help, 31, 31, 1);
	fputc('\n', f);
}

void cmd_usage(const struct cmd *c, FILE *f)
{
	cmd_synopsis(c, f);
	fputs("  ", f);
	cmd_put_wrapped(f, c->summary, 2, 2);
	fprintf(f, "options:\n");
	for (const struct cmd_opt *o = c->opts; o && o->lname; o++)
		opt_line(f, o);
	opt_line(f, &(const struct cmd_opt){ "help", 'h', NULL, "show this help" });
	if (c->more) {
		fputs("  ", f);
		wrap_words(f, c->more, 2, 2, 1);
		fputc('\n', f);
	}
}

static void vmsg(const struct cmd *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "fsvol %s: ", c->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cmd_err(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(c, fmt, ap);
	va_end(ap);
	return CMD_EXIT_FAIL;
}

int cmd_uerr(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(c, fmt, ap);
	va_end(ap);
	return CMD_EXIT_USAGE;
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

int cmd_size_kib(const struct cmd *c, const char *opt, const char *s, uint64_t *out)
{
	size_t l = strlen(s);
	if (!l || s[l - 1] < '0' || s[l - 1] > '9')
		return cmd_size(c, opt, s, out); /* a unit given: as written */
	int r = size_parse(s, out);
	if (!r && *out > UINT64_MAX >> 10)
		r = -ERANGE;
	if (r == -ERANGE)
		cmd_err(c, "%s %s: too large (a bare number is KiB, as mdadm's)", opt, s);
	else if (r)
		cmd_err(c, "%s %s: not a size (a number of KiB, as mdadm's, or with a K, M, G or T suffix)", opt, s);
	else
		*out <<= 10;
	return r;
}

void cmd_size_said(const char *s, uint64_t v, char *out, size_t len)
{
	char h[32];
	size_t l = strlen(s);
	size_format(v, h, sizeof(h));
	if (l && s[l - 1] >= '0' && s[l - 1] <= '9' && strcmp(h, s))
		snprintf(out, len, "%s (read as %s: a bare number is KiB, as mdadm's)", s, h);
	else
		snprintf(out, len, "%s", s);
}

int cmd_parse(const struct cmd *c, int argc, char **argv, int *first,
	      int (*on)(int i, const char *arg, void *ctx), void *ctx)
{
	struct option lo[2 * CMD_MAX_OPTS + 2];
	char so[6 * CMD_MAX_OPTS + 4] = ":h";
	int n = 0, sl = 2, k = 0;
	for (const struct cmd_opt *o = c->opts; o && o->lname && k < CMD_MAX_OPTS; o++, k++) {
		int has = o->arg ? required_argument : no_argument;
		lo[n++] = (struct option){ o->lname, has, NULL, 1000 + k };
		if (o->alias)
			lo[n++] = (struct option){ o->alias, has, NULL, 1000 + k };
		for (int s = 0; s < 2; s++) {
			int letter = s ? o->salias : o->sname;
			if (!letter)
				continue;
			so[sl++] = (char)letter;
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
			for (int j = 0; c->opts[j].lname; j++)
				if (c->opts[j].sname == ch || c->opts[j].salias == ch)
					i = j;
		if (i < 0 || on(i, optarg, ctx))
			return -1;
	}
	*first = optind;
	return 0;
}
