/* eng_submit: the engine's entry points (engine.h) and the requests the
 * volume's own work makes (eng_int.h): a caller's read, write or flush, the
 * synchronous wrappers, background units, a bad block's fix, a write-behind,
 * a reshape window's hold and its I/O. Each is made by eng_new from its
 * fields and run by the step machine (engine.c). */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/engine.h"
#include "fsvol/core/feature.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

/* ---- entry points ---- */

static int check_range(const struct vol *v, uint64_t off, uint64_t len)
{
	if (off > v->geom.capacity || len > v->geom.capacity - off)
		return -EINVAL;
	return 0;
}

int engine_submit(struct vol *v, int op, void *buf, uint64_t off, uint64_t len, engine_done_fn done, void *arg)
{
	if (op != ENGINE_READ && op != ENGINE_WRITE && op != ENGINE_FLUSH)
		return -EINVAL;
	if (op == ENGINE_FLUSH)
		off = len = 0;
	else if (check_range(v, off, len))
		return -EINVAL;
	/* a volume served without vol_start: its first write starts the
	 * metadata thread (a submission, never a completion) */
	if (op != ENGINE_READ && !v->opts.readonly && !atomic_load(&v->md_running)) {
		int r = v->md_start(v);
		if (r)
			return r;
	}
	struct eng_req *rq = eng_new(v, &(struct eng_desc){ .kind = op, .why = STATS_WHY_DATA, .buf = buf, .off = off,
							   .len = len, .done = done, .arg = arg });
	if (!rq)
		return -ENOMEM;
	if (atomic_load_explicit(&v->stats_level, memory_order_relaxed) != VOL_STATS_OFF)
		stats_begin(v->vstats, rq->t0);
	eng_start(rq); /* one of no bytes finishes at its first step */
	return 0;
}

struct eng_req *eng_behind_new(struct vol *v, void *buf, uint64_t off, uint64_t len, engine_done_fn done, void *arg,
			       int *held)
{
	struct eng_req *rq = eng_new(v, &(struct eng_desc){ .kind = ENG_K_WRITE,
							   .flags = ENG_F_INTERNAL | ENG_F_NOLOCK | ENG_F_BEHIND,
							   .why = STATS_WHY_DATA, .buf = buf, .off = off, .len = len,
							   .done = done, .arg = arg });
	if (!rq)
		return NULL;
	/* ST_START (0) when kicked; the parent holds these bits (durable): taken now, so they stay set
	 * until the slow leg has the data; else the bitmap kicks it later */
	*held = eng_feat_write_begin(v, off, len, &rq->wait);
	return rq;
}

struct eng_waiter {
	sem_t sem;
	int res;
};

static void waiter_done(void *arg, int res)
{
	struct eng_waiter *w = arg;
	w->res = res;
	sem_post(&w->sem);
}

static void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) < 0 && errno == EINTR)
		;
}

/* Start rq, made with waiter_done and w, and wait for it (this thread may block). */
static int req_run_wait(struct eng_req *rq, struct eng_waiter *w)
{
	int was = eng_tl_may_block;
	sem_init(&w->sem, 0, 0);
	eng_tl_may_block = 1;
	eng_start(rq);
	eng_tl_may_block = was;
	sem_wait_intr(&w->sem);
	sem_destroy(&w->sem);
	return w->res;
}

static int engine_sync(struct vol *v, int op, void *buf, uint64_t off, uint64_t len)
{
	struct eng_waiter w;
	int was = eng_tl_may_block;
	sem_init(&w.sem, 0, 0);
	eng_tl_may_block = 1;
	int r = engine_submit(v, op, buf, off, len, waiter_done, &w);
	eng_tl_may_block = was;
	if (!r) {
		sem_wait_intr(&w.sem);
		r = w.res;
	}
	sem_destroy(&w.sem);
	return r;
}

int engine_read(struct vol *v, void *buf, uint64_t off, uint64_t len)
{
	return engine_sync(v, ENGINE_READ, buf, off, len);
}

int engine_write(struct vol *v, const void *buf, uint64_t off, uint64_t len)
{
	return engine_sync(v, ENGINE_WRITE, (void *)buf, off, len);
}

int engine_flush(struct vol *v)
{
	return engine_sync(v, ENGINE_FLUSH, NULL, 0, 0);
}

uint64_t engine_resync_units(const struct vol *v)
{
	return v->eng->fam->resync_units(&v->geom);
}

/* A background unit (resync or rebuild), waited for. */
static int engine_unit(struct vol *v, int kind, uint64_t unit, int repair, unsigned gen, uint64_t *mismatches,
		       uint64_t *skipped)
{
	if (unit >= engine_resync_units(v))
		return -EINVAL;
	struct eng_waiter w;
	int target = kind == ENG_K_COPY ? atomic_load(&v->replace_slot) : atomic_load(&v->rebuild_slot);
	struct eng_req *rq = eng_new(v, &(struct eng_desc){
		.kind = kind, .why = STATS_WHY_DATA, .unit = unit, .repair = repair, .gen = gen, .target = target,
		.dest = kind == ENG_K_COPY ? atomic_load(&v->replace_with) : target, .done = waiter_done, .arg = &w });
	if (!rq)
		return -ENOMEM;
	int r = req_run_wait(rq, &w);
	if (mismatches)
		*mismatches += rq->mismatches;
	if (skipped)
		*skipped += rq->skipped;
	eng_req_put(rq);
	return r;
}

int engine_resync(struct vol *v, uint64_t unit, int repair, uint64_t *mismatches, uint64_t *skipped)
{
	return engine_unit(v, ENG_K_RESYNC, unit, repair, 0, mismatches, skipped);
}

int engine_rebuild(struct vol *v, uint64_t unit, unsigned gen)
{
	if (atomic_load(&v->rebuild_slot) < 0)
		return -EINVAL;
	if (atomic_load(&v->rebuild_gen) != gen)
		return -ECANCELED; /* another target now: its own pass starts from its checkpoint */
	return engine_unit(v, ENG_K_REBUILD, unit, 0, gen, NULL, NULL);
}

int engine_copy(struct vol *v, uint64_t unit)
{
	if (atomic_load(&v->replace_slot) < 0)
		return -EINVAL;
	return engine_unit(v, ENG_K_COPY, unit, 0, 0, NULL, NULL);
}

int engine_fix(struct vol *v, unsigned slot, uint64_t unit, engine_done_fn done, void *arg)
{
	if (unit >= engine_resync_units(v) || slot >= v->geom.members)
		return -EINVAL;
	struct eng_req *rq = eng_new(v, &(struct eng_desc){ .kind = ENG_K_FIX, .why = STATS_WHY_DATA, .unit = unit,
							   .target = (int)slot, .dest = (int)slot, .done = done,
							   .arg = arg });
	if (!rq)
		return -ENOMEM;
	eng_start(rq);
	return 0;
}

/* ---- a reshape's window (reshape.c) ---- */

void eng_geom_changed(struct vol *v)
{
	v->eng->fam = eng_family_of(&v->geom);
}

struct eng_hold {
	sem_t locked, done;
	int res;
};

/* A hold's request parked with its locks held (ENG_PARK): its thread goes on. */
static void hold_parked(void *arg)
{
	struct eng_hold *h = arg;
	sem_post(&h->locked);
}

static void hold_done(void *arg, int res)
{
	struct eng_hold *h = arg;
	h->res = res;
	sem_post(&h->done);
}

struct eng_req *eng_reshape_hold(struct vol *v, const struct layout_geom *g, uint64_t off, uint64_t len,
				 int all)
{
	struct eng_hold *h = malloc(sizeof(*h));
	/* all: every bucket (as many units as buckets), the volume stands still */
	struct eng_req *rq = h ? eng_new(v, &(struct eng_desc){
		.kind = ENG_K_RESHAPE, .flags = ENG_F_INTERNAL | ENG_F_RESHAPE, .why = STATS_WHY_RESHAPE, .geom = g,
		.off = off, .len = all ? (uint64_t)ENG_LOCKS * eng_family_of(g)->lock_unit(g) : len,
		.done = hold_done, .parked = hold_parked, .arg = h }) : NULL;
	if (!rq) {
		free(h);
		return NULL;
	}
	sem_init(&h->locked, 0, 0);
	sem_init(&h->done, 0, 0);
	eng_start(rq);
	sem_wait_intr(&h->locked);
	if (all)
		rq->seg_len = rq->len = len; /* the trace shows the volume */
	return rq;
}

int eng_reshape_release(struct eng_req *rq, int res)
{
	struct eng_hold *h = rq->arg;
	rq->res = res;
	eng_kick(rq);
	sem_wait_intr(&h->done);
	int r = h->res;
	sem_destroy(&h->locked);
	sem_destroy(&h->done);
	free(h);
	eng_req_put(rq);
	return r;
}

int eng_reshape_io(struct eng_req *hold, int op, const struct layout_geom *g, void *buf, uint64_t off,
		   uint64_t len)
{
	struct eng_waiter w;
	struct eng_req *rq = eng_new(hold->v, &(struct eng_desc){
		.kind = op, .flags = ENG_F_INTERNAL | ENG_F_NOLOCK | ENG_F_RESHAPE, .why = STATS_WHY_RESHAPE, .geom = g,
		.buf = buf, .off = off, .len = len, .trace_parent = hold->trace_parent, .done = waiter_done, .arg = &w });
	if (!rq)
		return -ENOMEM;
	return req_run_wait(rq, &w);
}

unsigned engine_active(const struct vol *v)
{
	return atomic_load_explicit(&v->eng->active, memory_order_relaxed);
}

void engine_unit_range(const struct vol *v, uint64_t unit, uint64_t *off, uint64_t *len)
{
	v->eng->fam->resync_range(&v->geom, unit, off, len);
}

int engine_init(struct vol *v)
{
	struct eng_state *es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	if (eng_locks_create(&es->locks, eng_kick)) {
		free(es);
		return -ENOMEM;
	}
	es->fam = eng_family_of(&v->geom);
	es->resume = eng_resume;
	pthread_mutex_init(&es->pool_lock, NULL);
	v->eng = es;
	return 0;
}

void engine_drain(struct vol *v)
{
	/* emulated completions may be seconds away on a deep queue: wait, politely */
	while (v->eng && atomic_load_explicit(&v->eng->active, memory_order_acquire)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

void engine_fini(struct vol *v)
{
	struct eng_state *es = v->eng;
	if (!es)
		return;
	while (es->pool) {
		struct eng_req *rq = es->pool;
		es->pool = rq->next;
		eng_req_free_arrays(rq);
		free(rq);
	}
	eng_locks_destroy(es->locks);
	pthread_mutex_destroy(&es->pool_lock);
	free(es);
	v->eng = NULL;
}
