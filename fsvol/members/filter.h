/* filter: a member that wraps another, in nbdkit's filter shape. The member
 * the volume holds keeps its identity (path, size, slot, data_offset,
 * counters) and becomes the filter; the backend it had moves below, to a
 * member of its own (`next`). Filters stack in any order over any backend:
 * each one passes on what it does not change to next->ops. */
#ifndef FSVOL_FILTER_H
#define FSVOL_FILTER_H

#include <stdatomic.h>

#include "fsvol/members/fault_spec.h"
#include "fsvol/members/member.h"

/* The first field of every filter's state (member->priv). */
struct filter {
	struct member *next;       /* the member below */
	const struct member *top;  /* the stack's top: the data area is read there */
	atomic_int dead;           /* a power cut: nothing completes any more */
};

extern const struct member_ops filter_fault_ops;
extern const struct member_ops filter_delay_ops;
extern const struct member_ops filter_cache_ops;

/* Put fops over m: m's backend moves to a new member below (f->next) and m
 * takes fops with priv = f. top names the member the volume holds. */
int filter_push(struct member *m, const struct member_ops *fops, struct filter *f, const struct member *top);
/* The filter of kind fops in m's stack, or NULL. */
struct member *filter_find(struct member *m, const struct member_ops *fops);
/* Close and free the member below (a filter's close calls it last). */
void filter_close_next(struct filter *f);

/* Pass-through ops for what a filter does not change. */
void filter_commit(struct member *m);
int filter_zero(struct member *m, uint64_t off, uint64_t len);
int filter_grow(struct member *m, uint64_t size);
int filter_alloc(struct member *m, uint64_t off, uint64_t len);
int filter_lock(struct member *m);

static inline struct member *filter_next(struct member *m)
{
	return ((struct filter *)m->priv)->next;
}

/* Each filter: push one over m; set its keys of a spec (the others are
 * ignored); get its keys back into a spec (for describe). */
int filter_fault_push(struct member *m, const struct member *top);
void filter_fault_set(struct member *m, const struct fault_spec *s);
void filter_fault_get(struct member *m, struct fault_spec *s);
int filter_delay_push(struct member *m, const struct member *top);
void filter_delay_set(struct member *m, const struct fault_spec *s);
void filter_delay_get(struct member *m, struct fault_spec *s);
int filter_cache_push(struct member *m, const struct member *top);
void filter_cache_set(struct member *m, const struct fault_spec *s);
void filter_cache_get(struct member *m, struct fault_spec *s);
/* The power goes: the cache drops what it holds (filter_cache.c). */
void filter_cache_powercut(struct member *m);

/* Is the stack's power off? A filter then drops what it is given. */
static inline int filter_dead(const struct filter *f)
{
	return atomic_load_explicit(&f->dead, memory_order_relaxed);
}

#endif
