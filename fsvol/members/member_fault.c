/* member_fault: every served member's fault stack, set from one spec.
 *
 *   the volume's member:  delay -> fault -> cache -> backend (file, nbd, mem)
 *
 * Delay is on top so a failed I/O also arrives late, as from a slow dying
 * disk; fault decides before anything reaches the cache, so a failed write
 * is never cached; the cache sits on the backend as a disk's does. Each
 * filter is its own file (filter_*.c) and takes its keys of the spec. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/members/fault.h"
#include "fsvol/members/filter.h"

int member_fault_wrap(struct member *m)
{
	if (filter_find(m, &filter_fault_ops))
		return 0;
	int r = filter_cache_push(m, m);
	if (!r)
		r = filter_fault_push(m, m);
	if (!r)
		r = filter_delay_push(m, m);
	return r;
}

int member_fault_set(struct member *m, const char *spec, char *err, size_t errlen)
{
	struct member *fm = filter_find(m, &filter_fault_ops);
	struct member *dm = filter_find(m, &filter_delay_ops);
	struct member *cm = filter_find(m, &filter_cache_ops);
	struct fault_spec s;
	if (!fm || !dm || !cm) {
		snprintf(err, errlen, "%s: faults can only be set on a mounted volume's members", m->path);
		return -EINVAL;
	}
	int r = fault_spec_parse(spec, &s, err, errlen);
	if (r)
		return r;
	filter_fault_set(fm, &s);
	filter_delay_set(dm, &s);
	filter_cache_set(cm, &s);
	return 0;
}

void member_fault_describe(struct member *m, char *buf, size_t len)
{
	struct member *fm = filter_find(m, &filter_fault_ops);
	struct member *dm = filter_find(m, &filter_delay_ops);
	struct member *cm = filter_find(m, &filter_cache_ops);
	struct fault_spec s;
	memset(&s, 0, sizeof(s));
	if (fm)
		filter_fault_get(fm, &s);
	if (dm)
		filter_delay_get(dm, &s);
	if (cm)
		filter_cache_get(cm, &s);
	s.powercut = m->ops->filter && filter_dead(m->priv);
	fault_spec_format(&s, buf, len);
}

void member_fault_powercut(struct member *m)
{
	struct member *cm = filter_find(m, &filter_cache_ops);
	if (!cm)
		return;
	/* every filter drops what it is given from now on, the cache what it holds */
	for (struct member *f = m; f->ops->filter; f = filter_next(f))
		atomic_store_explicit(&((struct filter *)f->priv)->dead, 1, memory_order_relaxed);
	filter_cache_powercut(cm);
}
