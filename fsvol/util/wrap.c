/* wrap: see wrap.h. */
#include <string.h>

#include "fsvol/util/wrap.h"

size_t wrap_words(FILE *f, const char *s, size_t col, size_t indent, int first_glued)
{
	while (*s) {
		while (*s == ' ')
			s++;
		size_t n = strcspn(s, " ");
		if (!n)
			break;
		if (!first_glued && col > indent && col + 1 + n > WRAP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first_glued) {
			fputc(' ', f);
			col++;
		}
		for (size_t i = 0; i < n; i++)
			fputc(s[i] == WRAP_NBSP ? ' ' : s[i], f);
		col += n;
		s += n;
		first_glued = 0;
	}
	return col;
}
