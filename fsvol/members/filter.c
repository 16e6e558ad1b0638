/* filter: stacking members over members, and the ops filters pass through. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/members/filter.h"

int filter_push(struct member *m, const struct member_ops *fops, struct filter *f, const struct member *top)
{
	struct member *next = malloc(sizeof(*next));
	if (!next)
		return -ENOMEM;
	/* the backend moves below; the engine's fields stay with the top */
	memcpy(next, m, sizeof(*next));
	next->stats = NULL;
	f->next = next;
	f->top = top;
	atomic_init(&f->dead, 0);
	m->ops = fops;
	m->priv = f;
	return 0;
}

struct member *filter_find(struct member *m, const struct member_ops *fops)
{
	while (m && m->ops && m->ops->filter) {
		if (m->ops == fops)
			return m;
		m = filter_next(m);
	}
	return NULL;
}

void filter_close_next(struct filter *f)
{
	member_close(f->next);
	free(f->next);
	f->next = NULL;
}

void filter_commit(struct member *m)
{
	struct member *n = filter_next(m);
	n->ops->commit(n);
}

int filter_zero(struct member *m, uint64_t off, uint64_t len)
{
	struct member *n = filter_next(m);
	return n->ops->zero(n, off, len);
}

int filter_grow(struct member *m, uint64_t size)
{
	struct member *n = filter_next(m);
	int r = n->ops->grow ? n->ops->grow(n, size) : -ENOTSUP;
	if (!r)
		m->size = size;
	return r;
}

int filter_alloc(struct member *m, uint64_t off, uint64_t len)
{
	struct member *n = filter_next(m);
	return n->ops->alloc ? n->ops->alloc(n, off, len) : -ENOTSUP;
}

int filter_lock(struct member *m)
{
	return member_lock(filter_next(m));
}
