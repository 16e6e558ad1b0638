/* vol_model: the members' emulated disks (fsvol mount --model, MNT/ctl "model SPEC"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/volume.h"
#include "fsvol/model/emul.h"
#include "fsvol/model/spindle.h"

/* Start the model's timer thread; engines pick it up at their next batch. */
int vol_model_start(struct vol *v)
{
	struct emul *e;
	if (emul_create(&e))
		return -EAGAIN;
	atomic_store_explicit(&v->emul, e, memory_order_release);
	return 0;
}

/* Give each member its emulated disk (fsvol mount --model SPEC). */
struct model_change {
	struct vol *v;
	struct spindle_params p[SB_MAX_SLOTS];
	char *err;
	size_t errlen;
};

static int model_apply(void *arg)
{
	struct model_change *mc = arg;
	struct vol *v = mc->v;
	unsigned n = v->geom.members, modeled = 0;
	/* A spindle with requests queued or in service keeps its state. */
	for (unsigned i = 0; i < n; i++) {
		struct spindle *sp = v->slot[i] ? v->slot[i]->spindle : NULL;
		if (sp && (sp->queued || sp->busy)) {
			snprintf(mc->err, mc->errlen, "member %u has requests in its model's queue; retry when idle", i);
			return -EBUSY;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct member *m = v->slot[i];
		if (!m)
			continue;
		if (!m->spindle && !(m->spindle = calloc(1, sizeof(*m->spindle))))
			return -ENOMEM;
		spindle_init(m->spindle, &mc->p[i], v->sb.slots[i].data_size);
		/* members do not spin in lock-step */
		m->spindle->phase_ns = (uint64_t)(m->spindle->rev_ns * i / n);
		atomic_store_explicit(&m->modeled, mc->p[i].kind != SPINDLE_NONE, memory_order_release);
		modeled += mc->p[i].kind != SPINDLE_NONE;
	}
	v->modeled = modeled;
	return 0;
}

int vol_model(struct vol *v, const char *spec, char *err, size_t errlen)
{
	struct model_change *mc = calloc(1, sizeof(*mc));
	char why[256];
	int r;
	if (!mc)
		return -ENOMEM;
	mc->v = v;
	mc->err = err;
	mc->errlen = errlen;
	if (spindle_parse_multi(spec, v->geom.members, mc->p, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", spec, why);
		free(mc);
		return -EINVAL;
	}
	/* Before vol_start there are no threads; after, the timer thread runs
	 * (started now if this is the first model) and holds the lock. */
	if (v->started && !v->emul && vol_model_start(v)) {
		free(mc);
		snprintf(err, errlen, "cannot start the model's timer thread");
		return -EAGAIN;
	}
	r = v->emul ? emul_locked(v->emul, model_apply, mc) : model_apply(mc);
	if (!r)
		snprintf(v->model, sizeof(v->model), "%s", spec);
	free(mc);
	return r;
}

