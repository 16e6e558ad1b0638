/* sync: the volume's background passes, one typed machine on one thread
 * (md's sync thread and md_do_sync): resync and repair (make the redundancy
 * agree with the data), check (count what disagrees), recovery (rebuild a
 * member from redundancy), replace (build a spare from the role it is to
 * take, md's want_replacement), reshape (move the data to a new geometry,
 * core/reshape.c).
 *
 * One window loop (sync_window) walks the units for every pass; a pass is a
 * const table of callbacks (struct pass_ops): whether it is interrupted,
 * whether a unit may be skipped, the unit's work (the engine's family does
 * read / compute / write), and what to do after a unit. Passes asked for
 * while another runs are wanted bits (md's MD_RECOVERY_NEEDED); umount is the
 * interrupt (md's MD_RECOVERY_INTR). Names appear only at the ctl/status
 * edge (vol_pass_name, vol_pass_parse).
 *
 * Throttled like md: never faster than sync_speed_max; faster than
 * sync_speed_min only while the foreground is idle. A recovery's checkpoint
 * goes to the superblocks about once a second, so an interrupted one
 * (umount, kill -9) resumes where it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define SYNC_CHECKPOINT_NS 1000000000ull /* how often a recovery's position is saved */

struct vol_sync {
	pthread_mutex_t lock;          /* thread start, join, pass and its end */
	pthread_t thread;
	int running, joinable, closed; /* closed: vol_close, no pass starts again */
	enum vol_pass pass;            /* running, or the last one; NONE: none since mount */
	int done;                      /* the last one ran to the end */
	atomic_uint wanted;            /* 1u << pass: asked for while another ran */
	atomic_int intr;               /* stop now (umount) */
	atomic_uint_fast64_t pos;      /* units done */
	uint64_t total;
	atomic_uint_fast64_t bad, skipped; /* mismatches; units without the redundancy to check */
	atomic_uint_fast64_t bytes;    /* logical bytes the current pass has covered */
	uint64_t t0;                   /* when it started (ns) */
	atomic_uint speed_min, speed_max; /* KiB/s, md's sync_speed_min/max */
	atomic_uint_fast64_t max_bytes; /* md's sync_max, in bytes of the pass's span */
	atomic_int held;               /* the pass waits at max_bytes */
	atomic_uint_fast64_t done_end, span_end; /* bytes: the span's end below pos, the whole span's end */
};

static const char *const pass_names[VOL_PASS_COUNT] = {
	[VOL_PASS_NONE] = "none",         [VOL_PASS_RESYNC] = "resync", [VOL_PASS_RECOVERY] = "recovery",
	[VOL_PASS_REPLACE] = "replace",   [VOL_PASS_CHECK] = "check",   [VOL_PASS_REPAIR] = "repair",
	[VOL_PASS_RESHAPE] = "reshape",
};

const char *vol_pass_name(enum vol_pass p)
{
	return (unsigned)p < VOL_PASS_COUNT ? pass_names[p] : "?";
}

int vol_pass_parse(const char *name)
{
	for (int p = VOL_PASS_NONE + 1; p < VOL_PASS_COUNT; p++)
		if (!strcmp(name, pass_names[p]))
			return p;
	return -EINVAL;
}

static int sync_pass_start(struct vol *v, enum vol_pass pass);
static void sync_pass_want(struct vol *v, enum vol_pass p);

int vol_sync_create(struct vol *v)
{
	struct vol_sync *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	/* md's defaults, KiB/s */
	atomic_init(&s->speed_min, 1000);
	atomic_init(&s->speed_max, 200000);
	atomic_init(&s->max_bytes, UINT64_MAX);
	v->sync = s;
	v->pass_start = sync_pass_start; /* for vol_pass_start (vol_error.c) */
	v->pass_want = sync_pass_want;
	return 0;
}

void vol_sync_destroy(struct vol *v)
{
	if (!v->sync)
		return;
	pthread_mutex_destroy(&v->sync->lock);
	free(v->sync);
	v->sync = NULL;
}

void vol_set_sync_speed(struct vol *v, int max, unsigned kibs)
{
	atomic_store(max ? &v->sync->speed_max : &v->sync->speed_min, kibs);
}

void vol_set_sync_max(struct vol *v, uint64_t sectors)
{
	atomic_store(&v->sync->max_bytes, sectors >= UINT64_MAX / 512 ? UINT64_MAX : sectors * 512);
}

static void sync_pass_want(struct vol *v, enum vol_pass p)
{
	atomic_fetch_or(&v->sync->wanted, 1u << p);
}

static int wanted(const struct vol_sync *s, enum vol_pass p)
{
	return (atomic_load(&s->wanted) >> p) & 1;
}

static int take_wanted(struct vol_sync *s, enum vol_pass p)
{
	return (atomic_fetch_and(&s->wanted, ~(1u << p)) >> p) & 1;
}

static void nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* md's rule: above min, give way to the foreground; never above max. */
static void sync_throttle(struct vol *v, uint64_t t0, uint64_t bytes)
{
	struct vol_sync *s = v->sync;
	for (;;) {
		uint64_t el = stats_now() - t0;
		double kibs = el ? (double)bytes / 1024.0 / ((double)el / 1e9) : 0;
		unsigned max = atomic_load(&s->speed_max), min = atomic_load(&s->speed_min);
		if (atomic_load(&s->intr))
			return;
		if (kibs > max || (kibs > min && engine_active(v) > 0)) {
			nap_ns(2000000);
			continue;
		}
		return;
	}
}

int vol_resync_owed(const struct vol *v)
{
	return (v->was_dirty || v->q_rewrite) && !v->opts.readonly && engine_resync_units(v);
}

int vol_resync_pending(const struct vol *v)
{
	const struct vol_sync *s = v->sync;
	return vol_resync_owed(v) && !(s->running && (s->pass == VOL_PASS_RESYNC || s->pass == VOL_PASS_REPAIR));
}

/* ---- one pass: its state while it runs, its callbacks ---- */

struct pass_run {
	struct vol *v;
	enum vol_pass pass;
	uint64_t first;     /* the unit it starts (resumes) at */
	uint64_t base;      /* logical bytes below the first unit (a resumed recovery) */
	uint64_t clean;     /* units skipped by the write-intent bitmap */
	uint64_t bad, skipped;
	int slot;           /* recovery: the target; replace: the role */
	unsigned gen;       /* recovery: the target's generation */
	int by_bitmap;      /* skip what the bitmap says is clean */
	uint64_t saved;     /* recovery: when the checkpoint was last saved */
};

struct pass_ops {
	/* 0: go on; 1: stop quietly (umount, a pass that goes first); -errno:
	 * the pass ends with that error */
	int (*interrupted)(struct pass_run *p);
	/* 1: unit [off, off+len) needs no work (NULL: never) */
	int (*skip)(struct pass_run *p, uint64_t off, uint64_t len);
	/* the unit's work, by the volume's family: 0 or -errno */
	int (*unit)(struct pass_run *p, uint64_t u);
	/* after a unit (NULL: nothing) */
	void (*after)(struct pass_run *p);
	/* the bytes it covered count skipped units too (the speed of a resumed
	 * recovery is over its span) */
	int span;
	/* the logical range of unit u (NULL: the engine's resync unit) */
	void (*range)(struct pass_run *p, uint64_t u, uint64_t *off, uint64_t *len);
	/* it begins to wait at sync_max: record where it is, as md writes its
	 * superblocks there (NULL: nothing) */
	void (*held)(struct pass_run *p);
};

/* md's sync_max: wait before a unit that ends past it (a test stops a pass
 * at a chosen point this way, then cuts it). 0, or what interrupted says. */
static int sync_hold(struct pass_run *p, const struct pass_ops *ops, uint64_t end)
{
	struct vol_sync *s = p->v->sync;
	int r = 0;
	while (end > atomic_load(&s->max_bytes) && !(r = ops->interrupted(p))) {
		if (!atomic_load(&s->held) && ops->held)
			ops->held(p);
		atomic_store(&s->held, 1);
		nap_ns(2000000);
	}
	atomic_store(&s->held, 0);
	return r;
}

/* md_do_sync's loop, for every pass: units from p->first to the end. The
 * unit it stopped at in *end; 0 or the callbacks' -errno. */
static int sync_window(struct pass_run *p, const struct pass_ops *ops, uint64_t *end)
{
	struct vol *v = p->v;
	struct vol_sync *s = v->sync;
	uint64_t t0 = stats_now(), u = p->first, off = 0, len = 0;
	int r = 0;
	if (u && u <= s->total) {
		if (ops->range)
			ops->range(p, u - 1, &off, &len);
		else
			engine_unit_range(v, u - 1, &off, &len);
		atomic_store(&s->done_end, off + len);
	}
	if (s->total) {
		if (ops->range)
			ops->range(p, s->total - 1, &off, &len);
		else
			engine_unit_range(v, s->total - 1, &off, &len);
		atomic_store(&s->span_end, off + len);
	}
	atomic_store(&s->pos, u);
	for (; u < s->total; u++) {
		if ((r = ops->interrupted(p))) {
			r = r < 0 ? r : 0;
			break;
		}
		if (ops->range)
			ops->range(p, u, &off, &len);
		else
			engine_unit_range(v, u, &off, &len);
		if ((r = sync_hold(p, ops, off + len))) {
			r = r < 0 ? r : 0;
			break;
		}
		if (ops->skip && ops->skip(p, off, len)) {
			p->clean++;
			atomic_store(&s->done_end, off + len);
			atomic_store(&s->pos, u + 1);
			continue;
		}
		if ((r = ops->unit(p, u)) < 0)
			break;
		r = 0;
		atomic_store(&s->done_end, off + len);
		atomic_store(&s->pos, u + 1);
		if (ops->span)
			atomic_store(&s->bytes, off + len - p->base);
		else
			atomic_fetch_add(&s->bytes, len);
		if (ops->after)
			ops->after(p);
		sync_throttle(v, t0, atomic_load(&s->bytes));
	}
	*end = u;
	return r;
}

/* resync, repair, check: a recovery or replace asked for goes first */
static int check_interrupted(struct pass_run *p)
{
	struct vol_sync *s = p->v->sync;
	return atomic_load(&s->intr) || wanted(s, VOL_PASS_RECOVERY) || wanted(s, VOL_PASS_REPLACE);
}

static int check_skip(struct pass_run *p, uint64_t off, uint64_t len)
{
	/* after an unclean shutdown only the regions the bitmap marks can differ */
	return p->by_bitmap && !vol_bitmap_dirty(p->v, off, len);
}

static int check_unit(struct pass_run *p, uint64_t u)
{
	struct vol_sync *s = p->v->sync;
	int r = engine_resync(p->v, u, p->pass != VOL_PASS_CHECK, &p->bad, &p->skipped);
	atomic_store(&s->bad, p->bad);
	atomic_store(&s->skipped, p->skipped);
	return r;
}

static const struct pass_ops check_ops = {
	.interrupted = check_interrupted, .skip = check_skip, .unit = check_unit,
};

static int run_check(struct vol *v, enum vol_pass pass)
{
	struct vol_sync *s = v->sync;
	/* a Q rewrite (q_order.c) covers every stripe, whatever the bitmap says */
	struct pass_run p = { .v = v, .pass = pass, .by_bitmap = pass == VOL_PASS_RESYNC && v->bitmap && !v->q_rewrite };
	const char *what = vol_pass_name(pass);
	int repair = pass != VOL_PASS_CHECK;
	uint64_t end;
	int r = sync_window(&p, &check_ops, &end);
	int done = !r && atomic_load(&s->pos) == s->total;
	if (done && repair && !p.skipped) {
		v->was_dirty = 0; /* redundancy agrees with the data again */
		vol_q_order_done(v);
	}
	fsvol_log(LOG_NOTICE, "%s %s: %llu of %llu units, %llu mismatch%s%s, %llu skipped (no redundancy)", what,
		done ? "done" : "stopped", (unsigned long long)atomic_load(&s->pos), (unsigned long long)s->total,
		(unsigned long long)p.bad, p.bad == 1 ? "" : "es", repair && p.bad ? " repaired" : "",
		(unsigned long long)p.skipped);
	if (p.by_bitmap)
		fsvol_log(LOG_NOTICE, "%s: %llu units clean by the write-intent bitmap, not read", what,
			(unsigned long long)p.clean);
	return done;
}

/* The checkpoint of generation gen to the superblocks, in member bytes. */
static void save_checkpoint(struct vol *v, unsigned gen)
{
	vol_state_lock(v);
	int slot = atomic_load(&v->rebuild_slot);
	if (slot >= 0 && atomic_load(&v->rebuild_gen) == gen) {
		v->sb.slots[slot].rebuild_pos = vol_rebuild_to_member(v, atomic_load(&v->rebuild_pos));
		if (!v->opts.readonly)
			vol_write_sbs(v);
	}
	pthread_mutex_unlock(&v->state_lock);
}

/* Whether rebuilding a unit leaves all of it consistent: the target is
 * computed from every other member of the unit, and no other copy or parity
 * is left to disagree (raid4/5: the one parity; a 2-way raid1). raid6's Q,
 * a third mirror, and raid10's chunks without a copy on the target are not
 * rewritten. */
static int rebuild_makes_consistent(const struct vol *v)
{
	const struct layout_geom *g = &v->geom;
	return layout_is_parity(g) ? layout_parity_count(g) == 1 : g->level == LAYOUT_RAID1 && layout_copies(g) == 2;
}

/* recovery: only umount stops it; a new target (its member failed) ends it */
static int recovery_interrupted(struct pass_run *p)
{
	if (atomic_load(&p->v->sync->intr))
		return 1;
	/* the target failed meanwhile (a spare may take over: from 0) */
	return atomic_load(&p->v->rebuild_gen) != p->gen ? -ECANCELED : 0;
}

static int recovery_skip(struct pass_run *p, uint64_t off, uint64_t len)
{
	/* a re-added member catches up only the regions written while it was away */
	return p->by_bitmap && vol_bitmap_skip(p->v, p->gen, off, len);
}

static int recovery_unit(struct pass_run *p, uint64_t u)
{
	return engine_rebuild(p->v, u, p->gen);
}

static void recovery_after(struct pass_run *p)
{
	if (stats_now() - p->saved > SYNC_CHECKPOINT_NS) {
		save_checkpoint(p->v, p->gen);
		p->saved = stats_now();
	}
}

static void recovery_held(struct pass_run *p)
{
	save_checkpoint(p->v, p->gen);
	p->saved = stats_now();
}

static const struct pass_ops recovery_ops = {
	.interrupted = recovery_interrupted, .skip = recovery_skip, .unit = recovery_unit,
	.after = recovery_after, .span = 1, .held = recovery_held,
};

static int run_recovery(struct vol *v)
{
	struct vol_sync *s = v->sync;
	/* one target for the whole pass: its slot, generation and checkpoint */
	pthread_mutex_lock(&v->rebuild_lock);
	struct pass_run p = { .v = v, .pass = VOL_PASS_RECOVERY, .slot = atomic_load(&v->rebuild_slot),
			      .gen = atomic_load(&v->rebuild_gen) };
	uint64_t pos = atomic_load(&v->rebuild_pos);
	pthread_mutex_unlock(&v->rebuild_lock);
	if (p.slot < 0)
		return 1;
	int slot = p.slot;
	uint64_t u = 0, off = 0, len = 0;
	unsigned dirtied = atomic_load(&v->dirtied);
	/* resume: the first unit not wholly below the checkpoint */
	while (u < s->total && (engine_unit_range(v, u, &off, &len), off + len <= pos))
		u++;
	p.first = u;
	p.base = off < pos ? off : pos;
	p.saved = stats_now();
	p.by_bitmap = vol_bitmap_take_partial(v, slot);
	if (!u)
		ppl_member_reset(v, slot); /* no stale record may outlive the rebuild */
	fsvol_log(LOG_NOTICE, "recovery of member %d (%s) %s at %llu of %llu units%s", slot,
		v->slot[slot] ? v->slot[slot]->path : "?", u ? "resumes" : "starts", (unsigned long long)u,
		(unsigned long long)s->total, p.by_bitmap ? ", dirty regions only (bitmap)" : "");
	int r = sync_window(&p, &recovery_ops, &u);
	int done = !r && u == s->total && vol_recovery_done(v, p.gen);
	if (!done)
		save_checkpoint(v, p.gen);
	/* md: what a recovery makes consistent is clean. One that covered every
	 * unit (rebuilt, or clean by the bitmap) on a level where a rebuilt unit
	 * agrees with itself settles a resync owed from before it started */
	if (done && !p.first && v->was_dirty && rebuild_makes_consistent(v) && !atomic_load(&v->failed) &&
	    atomic_load(&v->dirtied) == dirtied) {
		v->was_dirty = 0;
		if (atomic_load(&v->dirtied) != dirtied)
			v->was_dirty = 1; /* a write the host refused meanwhile: owed again */
		fsvol_log(LOG_NOTICE, "recovery of member %d rewrote every unit from the others: the resync it owed "
			  "is settled", slot);
	}
	fsvol_log(LOG_NOTICE, "recovery of member %d %s: %llu of %llu units%s%s", slot, done ? "done" : "stopped",
		(unsigned long long)atomic_load(&s->pos), (unsigned long long)s->total,
		r ? ": " : "", r == -ECANCELED ? "its member failed" : r ? strerror(-r) : "");
	if (p.by_bitmap)
		fsvol_log(LOG_NOTICE, "recovery of member %d: %llu units clean by the write-intent bitmap, not copied",
			slot, (unsigned long long)p.clean);
	return done;
}

/* replace: umount stops it, and a recovery goes first (it resumes after);
 * the replacement or the role failing ends it */
static int replace_interrupted(struct pass_run *p)
{
	if (atomic_load(&p->v->sync->intr) || wanted(p->v->sync, VOL_PASS_RECOVERY))
		return 1;
	return atomic_load(&p->v->replace_slot) != p->slot ? -EIO : 0;
}

static int replace_unit(struct pass_run *p, uint64_t u)
{
	int r = engine_copy(p->v, u);
	uint64_t off, len;
	engine_unit_range(p->v, u, &off, &len);
	if (!r) /* on the replacement now, and every write since goes there too */
		vol_replace_advance(p->v, p->slot, off + len);
	return r;
}

static void replace_after(struct pass_run *p)
{
	if (stats_now() - p->saved > SYNC_CHECKPOINT_NS) {
		vol_replace_checkpoint(p->v);
		p->saved = stats_now();
	}
}

static const struct pass_ops replace_ops = {
	.interrupted = replace_interrupted, .unit = replace_unit, .after = replace_after, .span = 1,
};

/* A replacement built while the role it replaces serves (md's
 * want_replacement), from the first unit it does not hold yet. */
static int run_replace(struct vol *v)
{
	struct vol_sync *s = v->sync;
	struct pass_run p = { .v = v, .pass = VOL_PASS_REPLACE, .slot = atomic_load(&v->replace_slot) };
	int k = p.slot, w = atomic_load(&v->replace_with);
	uint64_t u = 0, off = 0, len = 0, pos = atomic_load(&v->replace_pos);
	if (k < 0 || w < 0)
		return 1;
	while (u < s->total && (engine_unit_range(v, u, &off, &len), off + len <= pos))
		u++;
	p.first = u;
	p.base = off < pos ? off : pos;
	p.saved = stats_now();
	if (!u)
		ppl_member_reset(v, w); /* no stale record may outlive the copy */
	fsvol_log(LOG_NOTICE, "replace of member %d (%s) onto %s %s at %llu of %llu units", k,
		  v->slot[k] ? v->slot[k]->path : "?", v->slot[w] ? v->slot[w]->path : "?", u ? "resumes" : "starts",
		  (unsigned long long)u, (unsigned long long)s->total);
	int r = sync_window(&p, &replace_ops, &u);
	int done = !r && u == s->total;
	if (done)
		vol_replace_done(v);
	else if (!r)
		vol_replace_checkpoint(v); /* umount, a recovery first: it resumes from here */
	else
		vol_replace_stop(v, k, r); /* nothing if the replacement or the role ended it */
	fsvol_log(LOG_NOTICE, "replace of member %d %s: %llu of %llu units", k, done ? "done" : "stopped",
		  (unsigned long long)atomic_load(&s->pos), (unsigned long long)s->total);
	return done;
}

/* reshape: only umount stops it (it resumes at the next mount) */
static int reshape_interrupted(struct pass_run *p)
{
	return atomic_load(&p->v->sync->intr);
}

static int reshape_unit(struct pass_run *p, uint64_t u)
{
	return vol_reshape_window(p->v, u);
}

static void reshape_range(struct pass_run *p, uint64_t u, uint64_t *off, uint64_t *len)
{
	vol_reshape_window_range(p->v, u, off, len);
}

static const struct pass_ops reshape_ops = {
	.interrupted = reshape_interrupted, .unit = reshape_unit, .range = reshape_range, .span = 1,
};

/* A reshape, from the first window not yet moved (after the one a crash left
 * in the backup); the new geometry becomes the volume's at the end. */
static int run_reshape(struct vol *v)
{
	struct vol_sync *s = v->sync;
	if (!vol_reshaping(v))
		return 1;
	int r = vol_reshape_restore(v);
	struct pass_run p = { .v = v, .pass = VOL_PASS_RESHAPE, .first = vol_reshape_first(v) };
	uint64_t u = p.first, off = 0, len = 0;
	if (u < s->total)
		vol_reshape_window_range(v, u, &off, &len);
	p.base = off;
	fsvol_log(LOG_NOTICE, "reshape %s at window %llu of %llu", u ? "resumes" : "starts", (unsigned long long)u,
		  (unsigned long long)s->total);
	if (!r)
		r = sync_window(&p, &reshape_ops, &u);
	int done = !r && u == s->total;
	if (done)
		r = vol_reshape_finish(v);
	fsvol_log(LOG_NOTICE, "reshape %s: %llu of %llu windows%s%s", done && !r ? "done" : "stopped",
		  (unsigned long long)atomic_load(&s->pos), (unsigned long long)s->total, r ? ": " : "",
		  r ? strerror(-r) : "");
	return done && !r;
}

static int run_pass(struct vol *v, enum vol_pass pass)
{
	switch (pass) {
	case VOL_PASS_RECOVERY:
		return run_recovery(v);
	case VOL_PASS_REPLACE:
		return run_replace(v);
	case VOL_PASS_RESYNC:
	case VOL_PASS_CHECK:
	case VOL_PASS_REPAIR:
		return run_check(v, pass);
	case VOL_PASS_RESHAPE:
		return run_reshape(v);
	default:
		return 0;
	}
}

/* Pass starts from its beginning (sync lock held). */
static void sync_pass_begin(struct vol *v, enum vol_pass pass)
{
	struct vol_sync *s = v->sync;
	s->pass = pass;
	s->total = pass == VOL_PASS_RESHAPE ? vol_reshape_windows(v) : engine_resync_units(v);
	atomic_store(&s->pos, 0);
	atomic_store(&s->bytes, 0);
	atomic_store(&s->done_end, 0);
	atomic_store(&s->span_end, 0);
	s->t0 = stats_now();
}

static void *sync_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-sync"); /* top -H, ps -L */
	struct vol *v = arg;
	struct vol_sync *s = v->sync;
	for (;;) {
		enum vol_pass pass = s->pass;
		int done = run_pass(v, pass);
		pthread_mutex_lock(&s->lock);
		s->done = done;
		/* asked for while this pass ran: a recovery (a member failed, or one
		 * was added), then a replace; after a recovery that made the volume
		 * whole, the resync an unclean shutdown left owed (md runs it too:
		 * without it the volume would stay dirty for good) */
		enum vol_pass next = VOL_PASS_NONE;
		int go = !atomic_load(&s->intr);
		if (go && take_wanted(s, VOL_PASS_RECOVERY) && atomic_load(&v->rebuild_slot) >= 0)
			next = VOL_PASS_RECOVERY;
		else if (go && take_wanted(s, VOL_PASS_REPLACE) && atomic_load(&v->replace_slot) >= 0)
			next = VOL_PASS_REPLACE;
		else if (go && take_wanted(s, VOL_PASS_RESHAPE) && vol_reshaping(v))
			next = VOL_PASS_RESHAPE;
		else if (go && pass == VOL_PASS_RESHAPE && done && vol_resync_owed(v) && !atomic_load(&v->failed))
			next = VOL_PASS_RESYNC; /* what a crash left owed, in the new geometry */
		else if (go && pass == VOL_PASS_RECOVERY && done && vol_resync_owed(v) && !atomic_load(&v->failed))
			next = VOL_PASS_RESYNC;
		else if (go && atomic_load(&v->replace_slot) >= 0)
			next = VOL_PASS_REPLACE; /* one that gave way, or a resumed one after what went first */
		if (next != VOL_PASS_NONE) {
			sync_pass_begin(v, next);
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		s->running = 0;
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
}

static int sync_pass_start(struct vol *v, enum vol_pass pass)
{
	struct vol_sync *s = v->sync;
	int r = 0;
	VOL_NOT_ON_COMPLETION("vol_pass_start");
	if (pass <= VOL_PASS_NONE || pass >= VOL_PASS_COUNT || (pass == VOL_PASS_RESHAPE && !vol_reshaping(v)))
		return -EINVAL;
	if (pass != VOL_PASS_RESHAPE && vol_reshaping(v))
		return -EBUSY; /* one geometry at a time: it runs after the reshape */
	if (pass != VOL_PASS_RESHAPE && !engine_resync_units(v))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->closed) {
		r = -ESHUTDOWN; /* vol_close stopped passes for good */
	} else if (s->running) {
		r = -EBUSY;
	} else {
		if (s->joinable)
			pthread_join(s->thread, NULL);
		s->joinable = 0;
		sync_pass_begin(v, pass);
		atomic_store(&s->bad, 0);
		atomic_store(&s->skipped, 0);
		atomic_store(&s->intr, 0);
		take_wanted(s, pass);
		s->done = 0;
		s->running = 1;
		if (pthread_create(&s->thread, NULL, sync_main, v)) {
			s->running = 0;
			r = -EAGAIN;
		} else {
			s->joinable = 1;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

int vol_sync_start(struct vol *v, const char *what)
{
	int p = vol_pass_parse(what);
	return p < 0 ? p : vol_pass_start(v, (enum vol_pass)p);
}

void vol_sync_stop(struct vol *v)
{
	struct vol_sync *s = v->sync;
	VOL_NOT_ON_COMPLETION("vol_sync_stop");
	atomic_store(&s->intr, 1);
	pthread_mutex_lock(&s->lock);
	s->closed = 1; /* the metadata thread may not start another */
	int join = s->joinable;
	s->joinable = 0;
	pthread_mutex_unlock(&s->lock);
	if (join)
		pthread_join(s->thread, NULL);
}

/* The running pass's speed since it started, and the time left at that speed. */
static void sync_rate(const struct vol_sync *s, double *kibs, double *left)
{
	uint64_t pos = atomic_load(&s->pos), total = s->total, bytes = atomic_load(&s->bytes);
	double frac = total ? (double)pos / (double)total : 1, el = (double)(stats_now() - s->t0) / 1e9;
	*kibs = el > 0 ? (double)bytes / 1024 / el : 0;
	*left = frac > 0 && frac < 1 ? el * (1 - frac) / frac : 0;
}

void vol_sync_info(const struct vol *v, struct vol_sync_info *out)
{
	struct vol_sync *s = v->sync;
	pthread_mutex_lock(&s->lock);
	*out = (struct vol_sync_info){
		.what = s->pass != VOL_PASS_NONE ? vol_pass_name(s->pass) : NULL,
		.running = s->running, .done = s->done,
		.pos = atomic_load(&s->pos), .total = s->total,
		.mismatches = atomic_load(&s->bad), .skipped = atomic_load(&s->skipped),
		.rebuild_slot = atomic_load(&v->rebuild_slot), .rebuild_pos = atomic_load(&v->rebuild_pos),
		.replace_with = atomic_load(&v->replace_with),
		.start_ns = s->t0, .speed_min = atomic_load(&s->speed_min), .speed_max = atomic_load(&s->speed_max),
		.done_sectors = atomic_load(&s->done_end) / 512, .total_sectors = atomic_load(&s->span_end) / 512,
		.sync_max = atomic_load(&s->max_bytes) == UINT64_MAX ? UINT64_MAX : atomic_load(&s->max_bytes) / 512,
		.held = atomic_load(&s->held),
	};
	if (out->running)
		sync_rate(s, &out->speed_kibs, &out->eta_s);
	pthread_mutex_unlock(&s->lock);
}
