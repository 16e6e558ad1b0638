/* feature: the list of features and the lifecycle loops over a volume's
 * (feature.h). Calls go through the tables only. */
#include <string.h>

#include "fsvol/core/feature.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/util/log.h"

/* The hook order: the stripe log settles a batch before the bad-block lists
 * do (a failed log member ends the write first); the metadata thread's round
 * runs the bitmap, then the lists' probes and fixes, then safe mode. */
const struct vol_feature *const vol_features[] = {
	&vol_feat_log, &vol_feat_bitmap, &vol_feat_bbl, &vol_feat_wb, &vol_feat_ff, &vol_feat_safe, NULL,
};

int vol_feat_open(struct vol *v, char *err, size_t errlen)
{
	unsigned n = 0;
	for (const struct vol_feature *const *p = vol_features; *p; p++) {
		int r = (*p)->open ? (*p)->open(v, err, errlen) : 1;
		if (r < 0)
			return r;
		if (r > 0 && n < VOL_FEAT_MAX)
			v->feat[n++] = *p;
	}
	v->feat[n] = NULL;
	return 0;
}

void vol_feat_start(struct vol *v)
{
	VOL_FEAT_EACH(v, f)
		if (f->start && f->start(v))
			fsvol_log(LOG_WARNING, "%s: could not start its thread; see docs/engine.md", f->name);
}

void vol_feat_quiesce(struct vol *v)
{
	VOL_FEAT_EACH(v, f)
		if (f->quiesce)
			f->quiesce(v);
}

void vol_feat_close(struct vol *v)
{
	VOL_FEAT_EACH(v, f)
		if (f->close)
			f->close(v);
}

void vol_feat_stop(struct vol *v)
{
	VOL_FEAT_EACH(v, f)
		if (f->stop)
			f->stop(v);
}

void vol_feat_free(struct vol *v)
{
	/* every feature: one that failed in its open may hold memory */
	for (const struct vol_feature *const *p = vol_features; *p; p++)
		if ((*p)->free)
			(*p)->free(v);
	v->feat[0] = NULL;
}

int vol_feat_sb_write(struct vol *v)
{
	int failed = 0;
	VOL_FEAT_EACH(v, f)
		if (f->sb_write)
			failed |= f->sb_write(v);
	return failed;
}

void vol_feat_md_work(struct vol *v, unsigned flags, int stopping)
{
	VOL_FEAT_EACH(v, f)
		if (f->md_work)
			f->md_work(v, flags, stopping);
}

uint64_t vol_feat_md_due(const struct vol *v)
{
	uint64_t due = UINT64_MAX;
	VOL_FEAT_EACH(v, f)
		if (f->md_due) {
			uint64_t d = f->md_due(v);
			due = d < due ? d : due;
		}
	return due;
}

void vol_feat_status(struct vol *v, FILE *f)
{
	VOL_FEAT_EACH(v, x)
		if (x->status)
			x->status(v, f);
}
