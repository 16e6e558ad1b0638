/* tf_rec: the in-memory trace every parser appends to (tracefile.h): a leaf,
 * it calls nothing else of fsvol/trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tracefile.h"

int tracefile_push(struct tracefile *t, const struct tracefile_rec *r)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct tracefile_rec *p = realloc(t->rec, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->rec = p;
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
