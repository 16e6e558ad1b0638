/* vol_model: the members' emulated disks (fsvol mount --model, MNT/ctl "model SPEC"):
 * each member's spindle, the disks members share, the adapters disks share. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/model/adapter.h"
#include "fsvol/model/emul.h"
#include "fsvol/model/spindle.h"

/* Start the model's timer thread; engines pick it up at their next batch. */
int vol_model_start(struct vol *v)
{
	struct emul *e;
	if (v->opts.virtual_time ? emul_create_virtual(&e) : emul_create(&e))
		return -EAGAIN;
	if (v->opts.virtual_time) {
		/* the assembly's metadata I/O was timed on the real clock */
		stats_clock_restart(v->vstats);
		for (unsigned i = 0; i < v->nslots; i++)
			if (v->slot[i] && v->slot[i]->stats)
				stats_clock_restart(v->slot[i]->stats);
	}
	atomic_store_explicit(&v->emul, e, memory_order_release);
	return 0;
}

struct emul *vol_model_emul(struct vol *v)
{
	return atomic_load_explicit(&v->emul, memory_order_acquire);
}

static struct emul *virtual_emul(const struct vol *v)
{
	struct emul *e = atomic_load_explicit(&((struct vol *)v)->emul, memory_order_acquire);
	return e && emul_is_virtual(e) ? e : NULL;
}

uint64_t vol_clock(const struct vol *v)
{
	return vol_now(v);
}

uint64_t vol_run(struct vol *v, uint64_t until_ns)
{
	struct emul *e = virtual_emul(v);
	return e ? emul_run(e, until_ns) : stats_now();
}

uint64_t vol_run_next(struct vol *v, uint64_t until_ns)
{
	struct emul *e = virtual_emul(v);
	return e ? emul_step(e, until_ns) : stats_now();
}

/* Closing a volume in virtual time: what the background threads still issue
 * (a resync's last unit, the final flush) needs the model's clock to move,
 * and nobody drives it any more. A pump thread does until told to stop. */
struct pump {
	struct emul *e;
	atomic_int stop;
	pthread_t tid;
};

static void *pump_main(void *arg)
{
	struct pump *p = arg;
	struct timespec ts = { 0, 50000 };
	pthread_setname_np(pthread_self(), "fsvol-vclock");
	while (!atomic_load(&p->stop)) {
		emul_run(p->e, UINT64_MAX);
		nanosleep(&ts, NULL);
	}
	emul_run(p->e, UINT64_MAX);
	return NULL;
}

void *vol_model_pump_start(struct vol *v)
{
	struct emul *e = virtual_emul(v);
	struct pump *p = e ? calloc(1, sizeof(*p)) : NULL;
	if (!p)
		return NULL;
	p->e = e;
	if (pthread_create(&p->tid, NULL, pump_main, p)) {
		free(p);
		return NULL;
	}
	return p;
}

void vol_model_pump_stop(void *pump)
{
	struct pump *p = pump;
	if (!p)
		return;
	atomic_store(&p->stop, 1);
	pthread_join(p->tid, NULL);
	free(p);
}

/* How long a model change waits for the spindles to drain under load. */
#define MODEL_DRAIN_NS (5 * 1000000000ull)

/* Give each member its emulated disk (fsvol mount --model SPEC). */
struct model_change {
	struct vol *v;
	struct spindle_plan plan;
	struct adapter *ad;       /* the new adapters (swapped into v) */
	char *err;
	size_t errlen;
};

static int model_apply(void *arg)
{
	struct model_change *mc = arg;
	struct vol *v = mc->v;
	const struct spindle_plan *pl = &mc->plan;
	unsigned n = v->geom.members, modeled = 0, ndisks = 0;
	struct spindle *owner[SPINDLE_MAX_MEMBERS] = { 0 };
	/* A disk with requests queued or in service keeps its state. */
	for (unsigned i = 0; i < n; i++) {
		struct spindle *sp = v->slot[i] ? vol_ms(v, v->slot[i])->spindle : NULL;
		if (sp && !spindle_idle(sp)) {
			snprintf(mc->err, mc->errlen, "member %u still has requests in its model's queue after %d s; retry",
				 i, (int)(MODEL_DRAIN_NS / 1000000000));
			return -EBUSY;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct vol_mstate *ms = v->slot[i] ? vol_ms(v, v->slot[i]) : NULL;
		if (ms && !ms->spindle && !(ms->spindle = calloc(1, sizeof(*ms->spindle))))
			return -ENOMEM;
	}
	for (unsigned k = 0; k < pl->nadapters; k++)
		adapter_init(&mc->ad[k], pl->adname[k], &pl->ad[k]);
	for (unsigned i = 0; i < n; i++) {
		if (!v->slot[i])
			continue;
		struct vol_mstate *m = vol_ms(v, v->slot[i]);
		uint64_t bytes = v->sb.slots[i].data_size;
		unsigned d = pl->disk[i];
		if (owner[d]) {
			/* another partition of a disk a member before it holds */
			spindle_share(m->spindle, owner[d], bytes, pl->base[i]);
		} else {
			/* the first present member of its disk holds it (the planned
			 * holder may be missing) */
			spindle_init(m->spindle, &pl->p[i], bytes);
			spindle_set_base(m->spindle, pl->base[i]);
			spindle_set_adapter(m->spindle, pl->adapter[i] >= 0 ? &mc->ad[pl->adapter[i]] : NULL);
			owner[d] = m->spindle;
			ndisks++;
		}
		atomic_store_explicit(&m->modeled, pl->p[i].kind != SPINDLE_NONE, memory_order_release);
		modeled += pl->p[i].kind != SPINDLE_NONE;
	}
	/* disks do not spin in lock-step */
	unsigned k = 0;
	for (unsigned d = 0; d < n; d++)
		if (owner[d])
			owner[d]->phase_ns = (uint64_t)(owner[d]->rev_ns * k++ / (ndisks ? ndisks : 1));
	struct adapter *old = v->adapters;
	v->adapters = mc->ad;
	v->nadapters = pl->nadapters;
	mc->ad = old;   /* freed by the caller */
	v->modeled = modeled;
	return 0;
}

int vol_model(struct vol *v, const char *spec, char *err, size_t errlen)
{
	struct model_change *mc = calloc(1, sizeof(*mc));
	uint64_t bytes[SPINDLE_MAX_MEMBERS];
	char why[400];
	int r;
	if (!mc)
		return -ENOMEM;
	mc->v = v;
	mc->err = err;
	mc->errlen = errlen;
	for (unsigned i = 0; i < v->geom.members && i < SPINDLE_MAX_MEMBERS; i++)
		bytes[i] = v->sb.slots[i].data_size;
	if (spindle_plan(spec, v->geom.members, bytes, &mc->plan, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", spec, why);
		free(mc);
		return -EINVAL;
	}
	if (mc->plan.nadapters && !(mc->ad = calloc(mc->plan.nadapters, sizeof(*mc->ad)))) {
		free(mc);
		return -ENOMEM;
	}
	/* Before vol_start there are no threads; after, the timer thread runs
	 * (started now if this is the first model) and holds the lock. */
	if (v->started && !v->emul && vol_model_start(v)) {
		free(mc->ad);
		free(mc);
		snprintf(err, errlen, "cannot start the model's timer thread");
		return -EAGAIN;
	}
	if (v->emul) {
		/* a disk with requests queued or in service keeps its state: hold
		 * new requests back until every spindle drained, then change them
		 * (bounded; the lock is not held while waiting) */
		struct timespec ms = { 0, 1000000 };
		uint64_t give_up = stats_now() + MODEL_DRAIN_NS;
		emul_hold(v->emul, 1);
		while ((r = emul_locked(v->emul, model_apply, mc)) == -EBUSY && stats_now() < give_up)
			nanosleep(&ms, NULL);
		emul_hold(v->emul, 0);
	} else {
		r = model_apply(mc);
	}
	if (!r)
		snprintf(v->model, sizeof(v->model), "%s", spec);
	free(mc->ad); /* the replaced adapters, or the new ones if not applied */
	free(mc);
	return r;
}

/* The adapters' counters, printed under the emulator's lock. */
struct adapter_view {
	struct vol *v;
	FILE *f;
	int json;
};

int vol_rotational(const struct vol *v)
{
	for (unsigned i = 0; i < v->nslots; i++) {
		const struct vol_mstate *m = v->slot[i] ? vol_ms(v, v->slot[i]) : NULL;
		if (m && atomic_load(&m->modeled) && m->spindle && m->spindle->p.kind == SPINDLE_HDD)
			return 1;
	}
	return 0;
}

/* The members whose disk is on a, "0,1,2" (into on). */
static void members_on(const struct vol *v, const struct adapter *a, char *on, size_t len)
{
	size_t used = 0;
	on[0] = 0;
	for (unsigned i = 0; i < v->geom.members && used < len; i++) {
		const struct vol_mstate *m = v->slot[i] ? vol_ms(v, v->slot[i]) : NULL;
		if (m && m->spindle && m->spindle->disk->adapter == a)
			used += (size_t)snprintf(on + used, len - used, "%s%u", used ? "," : "", i);
	}
}

static int adapters_print(void *arg)
{
	struct adapter_view *av = arg;
	struct vol *v = av->v;
	for (unsigned k = 0; k < v->nadapters; k++) {
		const struct adapter *a = &v->adapters[k];
		struct adapter_stats st;
		char on[200];
		adapter_snapshot(a, &st);
		members_on(v, a, on, sizeof(on));
		if (av->json) {
			fprintf(av->f, "%s\n{\"name\":\"%s\",\"preset\":\"%s\",\"rate_Bps\":%llu,"
				"\"overhead_ns\":%llu,\"members\":[%s],\"cmds\":%llu,\"bytes\":%llu,"
				"\"busy_ns\":%llu,\"wait_ns\":%llu,\"waited\":%llu}", k ? "," : "",
				a->name, a->p.preset, (unsigned long long)a->p.rate_Bps,
				(unsigned long long)a->p.overhead_ns, on, (unsigned long long)st.cmds,
				(unsigned long long)st.bytes, (unsigned long long)st.busy_ns,
				(unsigned long long)st.wait_ns, (unsigned long long)st.waited);
			continue;
		}
		fprintf(av->f, "      adapter %s (%s, %.1f MB/s, %.1f us/command), members %s:"
			" %llu commands, %llu bytes, busy %.6f s, waited %.6f s (%llu commands)\n",
			a->name, a->p.preset, (double)a->p.rate_Bps / 1e6,
			(double)a->p.overhead_ns / 1e3, on[0] ? on : "-",
			(unsigned long long)st.cmds, (unsigned long long)st.bytes,
			(double)st.busy_ns / 1e9, (double)st.wait_ns / 1e9,
			(unsigned long long)st.waited);
	}
	return 0;
}

static void adapters_show(struct vol *v, FILE *f, int json)
{
	struct adapter_view av = { v, f, json };
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	if (e)
		emul_locked(e, adapters_print, &av);
	else
		adapters_print(&av);
}

void vol_model_status(struct vol *v, FILE *f)
{
	adapters_show(v, f, 0);
}

void vol_model_json(struct vol *v, FILE *f)
{
	fputs("\"adapters\":[", f);
	adapters_show(v, f, 1);
	fputs("]", f);
}
