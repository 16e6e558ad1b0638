/* roff: man page text (see roff.h). */
#include <ctype.h>
#include <string.h>

#include "fsvol/util/roff.h"

void roff_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void roff_line(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	roff_text(f, s);
	fputc('\n', f);
}

void roff_syn_opt(FILE *f, const char *name, const char *arg, int glued, int req)
{
	fputs(req ? "" : "[", f);
	fputs("\\fB", f);
	roff_text(f, name);
	fputs("\\fR", f);
	if (arg) {
		fputs(glued ? "\\fI" : "\\ \\fI", f);
		roff_text(f, arg);
		fputs("\\fR", f);
	}
	fputs(req ? "\n" : "]\n", f);
}

void roff_syn_operands(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	while (*s) {
		if (isupper((unsigned char)*s)) {
			size_t n = 0;
			while (isupper((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '.' ||
			       s[n] == '_')
				n++;
			fputs("\\fI", f);
			fwrite(s, 1, n, f);
			fputs("\\fR", f);
			s += n;
		} else {
			char one[2] = { *s++, 0 };
			roff_text(f, one);
		}
	}
	fputc('\n', f);
}

void roff_opt(FILE *f, const char *names, const char *arg, int glued, const char *help)
{
	fputs(".TP\n", f);
	/* "-c, --chunk": each name bold, the separators roman */
	for (const char *s = names; *s;) {
		size_t n = strcspn(s, ", ");
		if (n) {
			char name[64];
			snprintf(name, sizeof(name), "%.*s", (int)n, s);
			fputs("\\fB", f);
			roff_text(f, name);
			fputs("\\fR", f);
			s += n;
		} else {
			fputc(*s++, f);
		}
	}
	if (arg) {
		fputs(glued ? "\\fI" : " \\fI", f);
		roff_text(f, arg);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	roff_line(f, help);
}

void roff_exit_status(FILE *f)
{
	fputs(".SH EXIT STATUS\n"
	      ".TP\n.B 0\nDone.\n"
	      ".TP\n.B 1\nFailed: the command line was well formed, but what it asked for could not be done "
	      "(a member cannot be opened, the volume will not assemble, I/O failed, a check found a "
	      "mismatch). The message on standard error names the culprit.\n"
	      ".TP\n.B 2\nUsage error: an unknown option or command, a missing or extra operand, or an "
	      "option value that is not valid (not a size, out of range, an unknown level). Nothing "
	      "was done.\n",
	      f);
}
