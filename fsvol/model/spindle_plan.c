/* spindle_plan: a volume's model spec resolved into disks, partitions and
 * adapters (which members share a spindle, where each starts, which bus each
 * disk is on), refusing what cannot be built. Pure: no allocation, no I/O. */
#include "fsvol/model/spindle.h"

#include <errno.h>
#include <string.h>


/* The parameters of a disk: a member's, without what is the member's own. */
static void disk_spec(const struct spindle_params *p, char *buf, size_t len)
{
	struct spindle_params q = *p;
	q.start_mode = SPINDLE_START_AUTO;
	q.start_bytes = 0;
	q.start_frac = 0;
	spindle_format(&q, buf, len);
}

/* Which adapter member i's disk is on: a defined name, or a preset used by
 * name (one adapter of that preset, shared by every member naming it). */
static int bind_adapter(struct spindle_plan *pl, unsigned i, char *err, size_t errlen)
{
	const char *name = pl->p[i].adapter;
	char why[256];
	pl->adapter[i] = -1;
	if (!name[0] || pl->p[i].kind == SPINDLE_NONE)
		return 0;
	for (unsigned k = 0; k < pl->nadapters; k++)
		if (!strcmp(pl->adname[k], name)) {
			pl->adapter[i] = (int)k;
			return 0;
		}
	if (adapter_parse(name, &pl->ad[pl->nadapters], why, sizeof(why))) {
		spindle_seterr(err, errlen, "member %u: adapter '%s' is not defined (define it with"
		       " @%s=PRESET, or name a preset: %s)", i, name, name, why);
		return -EINVAL;
	}
	if (pl->nadapters == ADAPTER_MAX) {
		spindle_seterr(err, errlen, "member %u: adapter %s: more than %d adapters", i, name,
		       ADAPTER_MAX);
		return -EINVAL;
	}
	snprintf(pl->adname[pl->nadapters], SPINDLE_NAME, "%s", name);
	pl->adapter[i] = (int)pl->nadapters++;
	return 0;
}

int spindle_plan(const char *spec, unsigned members, const uint64_t *member_bytes,
		 struct spindle_plan *pl, char *err, size_t errlen)
{
	char why[400], a[1024], b[1024];
	memset(pl, 0, sizeof(*pl));
	if (spindle_parse_volume(spec, members, pl->p, pl->adname, pl->ad, &pl->nadapters, err,
				 errlen))
		return -EINVAL;
	pl->members = members;
	for (unsigned i = 0; i < members; i++) {
		const struct spindle_params *p = &pl->p[i];
		pl->disk[i] = i;
		if (bind_adapter(pl, i, err, errlen))
			return -EINVAL;
		if (!p->disk[0] || p->kind == SPINDLE_NONE) {
			if (spindle_place(p, member_bytes[i], &pl->base[i], why, sizeof(why))) {
				spindle_seterr(err, errlen, "member %u: %s", i, why);
				return -EINVAL;
			}
			continue;
		}
		/* a shared disk: the first member naming it holds it */
		unsigned o = i;
		for (unsigned j = 0; j < i && o == i; j++)
			if (pl->p[j].kind != SPINDLE_NONE && !strcmp(pl->p[j].disk, p->disk))
				o = j;
		pl->disk[i] = o;
		if (!p->capacity_bytes) {
			spindle_seterr(err, errlen, "member %u: disk %s: a shared disk needs its capacity"
			       " (capacity=member makes one member the whole disk)", i, p->disk);
			return -EINVAL;
		}
		disk_spec(p, a, sizeof(a));
		disk_spec(&pl->p[o], b, sizeof(b));
		if (strcmp(a, b)) {
			spindle_seterr(err, errlen, "member %u: disk %s is also member %u's, with other"
			       " parameters (members of one disk differ only in start=): %s vs %s",
			       i, p->disk, o, a, b);
			return -EINVAL;
		}
		uint64_t base;
		if (p->start_mode == SPINDLE_START_AUTO && o != i) {
			/* after the last member placed on this disk so far */
			base = 0;
			for (unsigned j = o; j < i; j++)
				if (pl->disk[j] == o && pl->base[j] + member_bytes[j] > base)
					base = pl->base[j] + member_bytes[j];
			struct spindle_params q = *p;
			q.start_mode = SPINDLE_START_BYTES;
			q.start_bytes = base;
			if (spindle_place(&q, member_bytes[i], &base, why, sizeof(why))) {
				spindle_seterr(err, errlen, "member %u: on disk %s after the members before it: %s",
				       i, p->disk, why);
				return -EINVAL;
			}
		} else if (spindle_place(p, member_bytes[i], &base, why, sizeof(why))) {
			spindle_seterr(err, errlen, "member %u: %s", i, why);
			return -EINVAL;
		}
		pl->base[i] = base;
		for (unsigned j = o; j < i; j++)
			if (pl->disk[j] == o && base < pl->base[j] + member_bytes[j] &&
			    pl->base[j] < base + member_bytes[i]) {
				spindle_seterr(err, errlen, "member %u (disk %s bytes %llu..%llu) overlaps member"
				       " %u (bytes %llu..%llu)", i, p->disk, (unsigned long long)base,
				       (unsigned long long)(base + member_bytes[i]), j,
				       (unsigned long long)pl->base[j],
				       (unsigned long long)(pl->base[j] + member_bytes[j]));
				return -EINVAL;
			}
	}
	return 0;
}
