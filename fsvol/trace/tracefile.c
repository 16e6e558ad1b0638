/* tracefile: the in-memory trace (records appended by the per-format parsers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tracefile.h"

int tracefile_push(struct tracefile *t, const struct tracefile_rec *r)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct tracefile_rec *n = realloc(t->rec, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->rec = n;
		t->cap = cap;
	}
	t->rec[t->n++] = *r;
	if (r->off + r->len > t->max_end)
		t->max_end = r->off + r->len;
	return 0;
}

void tracefile_free(struct tracefile *t)
{
	free(t->rec);
	memset(t, 0, sizeof(*t));
}
