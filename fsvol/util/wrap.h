/* wrap: words printed within a terminal's width (help texts: fsvol and
 * fsvol-bench). */
#ifndef FSVOL_WRAP_H
#define FSVOL_WRAP_H

#include <stdio.h>

#define WRAP_WIDTH 80
#define WRAP_NBSP '\1' /* a space that does not break: printed as one */

/* The words of s (split at spaces) printed from column col (the cursor's),
 * wrapped before WRAP_WIDTH and continued at column indent; the first word
 * goes right at the cursor when first_glued, else after a space (or on the
 * next line). Returns the column after the last word. */
size_t wrap_words(FILE *f, const char *s, size_t col, size_t indent, int first_glued);

#endif
