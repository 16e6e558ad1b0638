/* roff: man page text for the generators of fsvol(8) and fsvol-bench(1),
 * which render the option tables (fsvol --man, fsvol-bench --man). */
#ifndef FSVOL_ROFF_H
#define FSVOL_ROFF_H

#include <stdio.h>

/* s with roff's specials escaped: '\' -> \e, '-' -> \- (a real minus, so
 * options can be searched and copied). */
void roff_text(FILE *f, const char *s);
/* s as one text line: guarded against a leading '.' or '\'' (a request). */
void roff_line(FILE *f, const char *s);
/* An option as the synopsis shows it: "[\fB\-c\fR\ \fICHUNK\fR]".
 * names: "-c" or "--chunk"; arg NULL for a flag; glued: the value is attached
 * ("-r[ALIGN]"); req: no brackets. */
void roff_syn_opt(FILE *f, const char *name, const char *arg, int glued, int req);
/* Operands of a synopsis: upper-case words (MNT, MEMBER...) in italics. */
void roff_syn_operands(FILE *f, const char *s);
/* One option's paragraph: names "-c, --chunk" in bold, arg in italics. */
void roff_opt(FILE *f, const char *names, const char *arg, int glued, const char *help);
/* The EXIT STATUS section, the same for fsvol and fsvol-bench. */
void roff_exit_status(FILE *f);

#endif
