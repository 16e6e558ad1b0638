/* safe_mode: md's safe mode (md.c: md_write_start, md_write_end,
 * set_in_sync, the safemode timer). The superblocks say "clean" while no
 * write has been in flight for safe_mode_delay (200 ms, md's default), so a
 * crash of an idle volume needs no resync; the next write first marks them
 * dirty again and waits until every member has that (a superblock write on
 * each, counted and labelled sb). safe_mode_delay 0 turns it off, as in md:
 * dirty from the first write to the umount.
 *
 * States (sm_state), changed only by the metadata thread:
 *   DIRTY    the members say dirty: writes go straight on
 *   CLEAN    they say clean, or are being told so: a write queues
 *   MARKING  the dirty mark is being written: a write queues
 * A write counts itself in writes_pending before it looks at the state, and
 * the thread stores CLEAN before it looks at writes_pending (both seq_cst):
 * either the write sees CLEAN and queues, or the thread sees the write and
 * stays DIRTY. So no write reaches a member while a superblock says clean.
 * Events do not move (md moves them forward and back): assembly takes a
 * clean and a dirty superblock of the same events alike, and either is true
 * then (a write waits for every dirty mark; clean is marked with none in
 * flight).
 * Times are the volume's clock (vol_now). In virtual time nothing sleeps
 * on it: a write that finds the volume idle for safe_mode_delay of emulated
 * time has both marks written before it, the clean one md's timer would have
 * written during the idle spell and the dirty one, so a simulation writes the
 * same superblocks as the live run. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/core/engine.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/model/emul.h"
#include "fsvol/core/volume.h"
#include "layout/layout.h"
#include "stats/stats.h"

enum { SM_DIRTY, SM_CLEAN, SM_MARKING };

void vol_safe_init(struct vol *v)
{
	atomic_store(&v->sm_state, SM_DIRTY);
	atomic_store(&v->sm_delay_ms, VOL_SAFE_MODE_DELAY_MS);
	atomic_store(&v->sm_idle_ns, vol_now(v));
}

int vol_safe_open(struct vol *v)
{
	/* md's assembly leaves a clean array clean: the first write marks it;
	 * one owed a resync stays dirty until the resync is done */
	int clean = !v->was_dirty;
	atomic_store(&v->sm_state, clean ? SM_CLEAN : SM_DIRTY);
	return clean;
}

/* md marks dirty for the levels whose members must agree (raid0 and linear
 * never call md_write_start: their arrays stay clean). */
static int redundant(const struct vol *v)
{
	return layout_parity_count(&v->geom) || layout_copies(&v->geom) > 1;
}

/* Virtual time: the volume has been idle for safe_mode_delay of its clock. */
static int lapsed(struct vol *v)
{
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	unsigned ms = atomic_load(&v->sm_delay_ms);
	return e && emul_is_virtual(e) && ms && !v->was_dirty && !v->opts.readonly &&
	       vol_now(v) - atomic_load(&v->sm_idle_ns) >= (uint64_t)ms * 1000000u;
}

int vol_safe_begin(struct vol *v, struct vol_waiter *w)
{
	int first = atomic_fetch_add(&v->writes_pending, 1) == 0;
	if (!atomic_load(&v->md_running) || !redundant(v))
		return 1;
	if (atomic_load(&v->sm_state) == SM_DIRTY && !(first && lapsed(v)))
		return 1;
	pthread_mutex_lock(&v->md_lock);
	if (first && atomic_load(&v->sm_state) == SM_DIRTY && lapsed(v)) {
		v->sm_lapsed = 1; /* mark_dirty writes the clean mark first */
		atomic_store(&v->sm_state, SM_MARKING);
	}
	int queued = atomic_load(&v->sm_state) != SM_DIRTY && atomic_load(&v->md_running);
	if (queued)
		vol_md_queue_locked(v, &v->sm_waiters, w, VOL_MD_SAFE);
	pthread_mutex_unlock(&v->md_lock);
	return !queued;
}

void vol_safe_end(struct vol *v)
{
	/* idle from now: stored first, so whoever sees no write pending sees it */
	atomic_store(&v->sm_idle_ns, vol_now(v));
	if (atomic_fetch_sub(&v->writes_pending, 1) != 1)
		return;
	int zero = 0;
	if (atomic_load(&v->sm_state) == SM_DIRTY && atomic_load(&v->sm_delay_ms) &&
	    atomic_compare_exchange_strong(&v->sm_armed, &zero, 1))
		vol_md_wake(v, VOL_MD_SAFE); /* once per idle spell, not per write */
}

uint64_t vol_safe_due(const struct vol *v)
{
	unsigned ms = atomic_load(&v->sm_delay_ms);
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	if (!atomic_load(&v->sm_armed) || !ms || (e && emul_is_virtual(e)))
		return UINT64_MAX; /* virtual time: the next write decides (lapsed) */
	return atomic_load(&v->sm_idle_ns) + (uint64_t)ms * 1000000u;
}

/* Write the superblocks with clean = c (state lock taken here). */
static void write_mark(struct vol *v, int c)
{
	vol_state_lock(v);
	v->sb.clean = (uint32_t)c;
	if (!v->opts.readonly)
		vol_write_sbs(v); /* an unwritable member shows on its next I/O */
	pthread_mutex_unlock(&v->state_lock);
	atomic_fetch_add(&v->sm_marks, 1);
}

/* The queued writes: mark dirty on every member, then let them go. */
static void mark_dirty(struct vol *v)
{
	pthread_mutex_lock(&v->md_lock);
	if (!v->sm_waiters) {
		pthread_mutex_unlock(&v->md_lock);
		return;
	}
	atomic_store(&v->sm_state, SM_MARKING);
	uint64_t cause = 0;
	for (struct vol_waiter *x = v->sm_waiters; x; x = x->next) /* newest first: the oldest */
		cause = x->trace_id ? x->trace_id : cause;
	int was_lapsed = v->sm_lapsed;
	v->sm_lapsed = 0;
	pthread_mutex_unlock(&v->md_lock);
	uint64_t prev = vol_meta_cause(cause);
	if (was_lapsed)
		write_mark(v, 1); /* the clean mark of the idle spell, in virtual time */
	write_mark(v, 0);
	vol_meta_cause(prev);
	pthread_mutex_lock(&v->md_lock);
	atomic_store(&v->sm_state, SM_DIRTY);
	struct vol_waiter *w = v->sm_waiters;
	v->sm_waiters = NULL;
	pthread_mutex_unlock(&v->md_lock);
	vol_md_resume(v, w);
}

/* md's set_in_sync: no write in flight, none owed a resync. */
static void try_clean(struct vol *v)
{
	pthread_mutex_lock(&v->md_lock);
	if (atomic_load(&v->sm_state) != SM_DIRTY || v->sm_waiters || v->was_dirty || v->opts.readonly ||
	    v->md_stop) {
		pthread_mutex_unlock(&v->md_lock);
		return;
	}
	atomic_store(&v->sm_state, SM_CLEAN);
	if (atomic_load(&v->writes_pending)) {
		atomic_store(&v->sm_state, SM_DIRTY); /* a write came: its end arms us again */
		pthread_mutex_unlock(&v->md_lock);
		return;
	}
	pthread_mutex_unlock(&v->md_lock);
	write_mark(v, 1);
}

void vol_safe_run(struct vol *v)
{
	mark_dirty(v);
	if (!atomic_load(&v->sm_delay_ms) || atomic_load(&v->sm_state) != SM_DIRTY)
		return;
	if (!atomic_load(&v->sm_armed)) {
		/* a resync that ended, a delay set again: idle already? */
		if (atomic_load(&v->writes_pending) || v->was_dirty)
			return;
		atomic_store(&v->sm_armed, 1);
	}
	if (atomic_load(&v->writes_pending)) {
		/* disarmed while a write is in flight: its end arms us again */
		atomic_store(&v->sm_armed, 0);
		if (atomic_load(&v->writes_pending))
			return;
		atomic_store(&v->sm_armed, 1);
	}
	if (stats_now() < vol_safe_due(v))
		return; /* the thread sleeps until then */
	atomic_store(&v->sm_armed, 0);
	try_clean(v);
}

void vol_safe_set_delay(struct vol *v, unsigned ms)
{
	atomic_store(&v->sm_delay_ms, ms);
	vol_md_wake(v, VOL_MD_SAFE); /* a shorter delay may be due already */
}

unsigned vol_safe_delay(const struct vol *v)
{
	return atomic_load(&v->sm_delay_ms);
}

const char *vol_array_state(const struct vol *v)
{
	/* md's array_state words */
	switch (atomic_load(&v->sm_state)) {
	case SM_CLEAN:
		return atomic_load(&v->writes_pending) ? "write-pending" : "clean";
	case SM_MARKING:
		return "write-pending";
	default:
		return "active";
	}
}

uint64_t vol_safe_marks(const struct vol *v)
{
	return atomic_load(&v->sm_marks);
}

void vol_safe_status(struct vol *v, FILE *f)
{
	unsigned ms = vol_safe_delay(v);
	fprintf(f, "      array_state %s, safe_mode_delay %u.%03u s%s, %llu clean/dirty marks", vol_array_state(v),
		ms / 1000, ms % 1000, ms ? "" : " (off)", (unsigned long long)vol_safe_marks(v));
	if (layout_is_parity(&v->geom))
		fprintf(f, ", rmw_level %u", vol_rmw_level(v));
	fputc('\n', f);
}

void vol_safe_json(struct vol *v, FILE *f)
{
	fprintf(f, ",\"array_state\":\"%s\",\"safe_mode_delay_ms\":%u,\"safe_mode_marks\":%llu", vol_array_state(v),
		vol_safe_delay(v), (unsigned long long)vol_safe_marks(v));
	if (layout_is_parity(&v->geom))
		fprintf(f, ",\"rmw_level\":%u", vol_rmw_level(v));
}

/* ---- safe mode as a feature (core/feature.h) ---- */

static int safe_feat_open(struct vol *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	if (!v->opts.readonly)
		vol_safe_open(v);
	return 1;
}

static void safe_feat_md_work(struct vol *v, unsigned flags, int stopping)
{
	(void)stopping;
	if (flags & (VOL_MD_SAFE | VOL_MD_TICK))
		vol_safe_run(v); /* writes waiting for the dirty mark; clean when idle */
}

const struct vol_feature vol_feat_safe = {
	.name = "safe mode",
	.open = safe_feat_open,
	.md_work = safe_feat_md_work,
	.md_due = vol_safe_due,
	.status = vol_safe_status,
	.write_start = vol_safe_begin,
	.write_done = vol_safe_end,
};
