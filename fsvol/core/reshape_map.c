/* reshape_map: what the engine reads of a reshape per segment (md's
 * reshape_progress): whether one runs, its epoch, which geometry maps an
 * offset, how many roles there are. Atomics only; the window mover is
 * reshape.c. */
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "layout/layout.h"

int vol_reshaping(const struct vol *v)
{
	return v->reshape && atomic_load(&v->reshape->active);
}

int vol_reshape_survives(const struct vol *v, uint64_t failed)
{
	return layout_survives(&v->geom, failed) && (!vol_reshaping(v) || layout_survives(&v->reshape->geom, failed));
}

uint64_t vol_reshape_epoch(const struct vol *v)
{
	return v->reshape ? atomic_load(&v->reshape->epoch) : 0;
}

const struct layout_geom *vol_reshape_geom(struct vol *v, uint64_t off, uint64_t *len)
{
	struct vol_reshape *rs = v->reshape;
	if (!rs || !atomic_load(&rs->active))
		return &v->geom;
	uint64_t pos = atomic_load(&rs->pos);
	if (off >= pos)
		return &v->geom;
	if (*len > pos - off)
		*len = pos - off;
	return &rs->geom;
}

unsigned vol_reshape_members(const struct vol *v)
{
	if (!vol_reshaping(v))
		return v->geom.members;
	return v->reshape->geom.members > v->geom.members ? v->reshape->geom.members : v->geom.members;
}

unsigned vol_roles(const struct vol *v)
{
	return vol_reshape_members(v);
}

int vol_reshape_new_member(const struct vol *v, unsigned s)
{
	return vol_reshaping(v) && s >= v->geom.members && s < v->reshape->geom.members;
}
