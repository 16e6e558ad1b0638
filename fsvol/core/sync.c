/* sync: the volume's background passes, one at a time on one thread (md's
 * sync thread): resync and repair (make the redundancy agree with the data),
 * check (count what disagrees), recovery (rebuild a member from redundancy).
 *
 * Throttled like md: never faster than sync_speed_max; faster than
 * sync_speed_min only while the foreground is idle. A recovery's checkpoint
 * goes to the superblocks about once a second, so an interrupted one
 * (umount, kill -9) resumes where it was.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define SYNC_CHECKPOINT_NS 1000000000ull /* how often a recovery's position is saved */

static void nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* md's rule: above min, give way to the foreground; never above max. */
static void sync_throttle(struct vol *v, uint64_t t0, uint64_t bytes)
{
	for (;;) {
		uint64_t el = stats_now() - t0;
		double kibs = el ? (double)bytes / 1024.0 / ((double)el / 1e9) : 0;
		unsigned max = atomic_load(&v->sync_speed_max), min = atomic_load(&v->sync_speed_min);
		if (atomic_load(&v->sync_stop))
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
	return v->was_dirty && !v->opts.readonly && engine_resync_units(v);
}

int vol_resync_pending(const struct vol *v)
{
	const char *what = v->sync_what;
	return vol_resync_owed(v) &&
	       !(v->sync_running && what && (!strcmp(what, "resync") || !strcmp(what, "repair")));
}

static int sync_preempted(struct vol *v, int recovery)
{
	/* a recovery waiting pre-empts a check or resync (it resumes later) */
	return atomic_load(&v->sync_stop) || (!recovery && atomic_load(&v->recovery_wanted)) ||
	       (!recovery && atomic_load(&v->replace_wanted));
}

static int run_check(struct vol *v, const char *what)
{
	uint64_t bad = 0, skipped = 0, clean = 0, t0 = stats_now();
	int repair = strcmp(what, "check") != 0, r = 0;
	/* after an unclean shutdown only the regions the bitmap marks can differ */
	int by_bitmap = !strcmp(what, "resync") && v->bitmap;
	for (uint64_t u = 0; u < v->sync_total && !sync_preempted(v, 0); u++) {
		uint64_t off, len;
		engine_unit_range(v, u, &off, &len);
		if (by_bitmap && !vol_bitmap_dirty(v, off, len)) {
			clean++;
			atomic_store(&v->sync_pos, u + 1);
			continue;
		}
		if ((r = engine_resync(v, u, repair, &bad, &skipped)) < 0)
			break;
		atomic_store(&v->sync_bad, bad);
		atomic_store(&v->sync_skipped, skipped);
		atomic_store(&v->sync_pos, u + 1);
		atomic_fetch_add(&v->sync_bytes, len);
		sync_throttle(v, t0, atomic_load(&v->sync_bytes));
	}
	int done = !r && atomic_load(&v->sync_pos) == v->sync_total;
	if (done && repair && !skipped)
		v->was_dirty = 0; /* redundancy agrees with the data again */
	fsvol_log(LOG_NOTICE, "%s %s: %llu of %llu units, %llu mismatch%s%s, %llu skipped (no redundancy)", what,
		done ? "done" : "stopped", (unsigned long long)atomic_load(&v->sync_pos),
		(unsigned long long)v->sync_total, (unsigned long long)bad, bad == 1 ? "" : "es", repair && bad ? " repaired" : "",
		(unsigned long long)skipped);
	if (by_bitmap)
		fsvol_log(LOG_NOTICE, "%s: %llu units clean by the write-intent bitmap, not read", what,
			(unsigned long long)clean);
	return done;
}

/* The checkpoint of generation gen to the superblocks, in member bytes. */
static void save_checkpoint(struct vol *v, unsigned gen)
{
	pthread_mutex_lock(&v->state_lock);
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

static int run_recovery(struct vol *v)
{
	/* one target for the whole pass: its slot, generation and checkpoint */
	pthread_mutex_lock(&v->rebuild_lock);
	int slot = atomic_load(&v->rebuild_slot), r = 0;
	unsigned gen = atomic_load(&v->rebuild_gen);
	uint64_t pos = atomic_load(&v->rebuild_pos);
	pthread_mutex_unlock(&v->rebuild_lock);
	if (slot < 0)
		return 1;
	uint64_t t0 = stats_now(), saved = t0, u = 0, off, len;
	unsigned dirtied = atomic_load(&v->dirtied);
	/* resume: the first unit not wholly below the checkpoint */
	while (u < v->sync_total && (engine_unit_range(v, u, &off, &len), off + len <= pos))
		u++;
	uint64_t first = u;
	atomic_store(&v->sync_pos, u);
	uint64_t start_bytes = off < pos ? off : pos, clean = 0;
	/* a re-added member catches up only the regions written while it was away */
	int partial = vol_bitmap_take_partial(v, slot);
	fsvol_log(LOG_NOTICE, "recovery of member %d (%s) %s at %llu of %llu units%s", slot,
		v->slot[slot] ? v->slot[slot]->path : "?", u ? "resumes" : "starts", (unsigned long long)u,
		(unsigned long long)v->sync_total, partial ? ", dirty regions only (bitmap)" : "");
	for (; u < v->sync_total && !atomic_load(&v->sync_stop); u++) {
		if (atomic_load(&v->rebuild_gen) != gen) {
			r = -ECANCELED; /* the target failed meanwhile (a spare may take over: from 0) */
			break;
		}
		engine_unit_range(v, u, &off, &len);
		if (partial && vol_bitmap_skip(v, gen, off, len)) {
			clean++;
			atomic_store(&v->sync_pos, u + 1);
			continue;
		}
		if ((r = engine_rebuild(v, u, gen)) < 0)
			break;
		engine_unit_range(v, u, &off, &len);
		atomic_store(&v->sync_pos, u + 1);
		atomic_store(&v->sync_bytes, off + len - start_bytes);
		if (stats_now() - saved > SYNC_CHECKPOINT_NS) {
			save_checkpoint(v, gen);
			saved = stats_now();
		}
		sync_throttle(v, t0, off + len - start_bytes);
	}
	int done = !r && u == v->sync_total && vol_recovery_done(v, gen);
	if (!done)
		save_checkpoint(v, gen);
	/* md: what a recovery makes consistent is clean. One that covered every
	 * unit (rebuilt, or clean by the bitmap) on a level where a rebuilt unit
	 * agrees with itself settles a resync owed from before it started */
	if (done && !first && v->was_dirty && rebuild_makes_consistent(v) && !atomic_load(&v->failed) &&
	    atomic_load(&v->dirtied) == dirtied) {
		v->was_dirty = 0;
		if (atomic_load(&v->dirtied) != dirtied)
			v->was_dirty = 1; /* a write the host refused meanwhile: owed again */
		fsvol_log(LOG_NOTICE, "recovery of member %d rewrote every unit from the others: the resync it owed "
			  "is settled", slot);
	}
	fsvol_log(LOG_NOTICE, "recovery of member %d %s: %llu of %llu units%s%s", slot, done ? "done" : "stopped",
		(unsigned long long)atomic_load(&v->sync_pos), (unsigned long long)v->sync_total,
		r ? ": " : "", r == -ECANCELED ? "its member failed" : r ? strerror(-r) : "");
	if (partial)
		fsvol_log(LOG_NOTICE, "recovery of member %d: %llu units clean by the write-intent bitmap, not copied",
			slot, (unsigned long long)clean);
	return done;
}

/* A replacement built while the role it replaces serves (md's want_replacement). */
static int run_replace(struct vol *v)
{
	int k = atomic_load(&v->replace_slot), r = 0;
	uint64_t t0 = stats_now(), u = 0, off = 0, len = 0;
	if (k < 0)
		return 1;
	fsvol_log(LOG_NOTICE, "replace of member %d: %llu units", k, (unsigned long long)v->sync_total);
	for (; u < v->sync_total && !sync_preempted(v, 1); u++) {
		if (atomic_load(&v->replace_slot) != k) {
			r = -EIO; /* the replacement failed, or the role did (a recovery follows) */
			break;
		}
		if ((r = engine_copy(v, u)) < 0)
			break;
		engine_unit_range(v, u, &off, &len);
		atomic_store(&v->sync_pos, u + 1);
		atomic_store(&v->sync_bytes, off + len);
		sync_throttle(v, t0, off + len);
	}
	int done = !r && u == v->sync_total;
	if (done) {
		vol_replace_done(v);
	} else if (atomic_load(&v->replace_slot) == k) {
		/* stopped (umount, a recovery first): the replacement stays a spare */
		atomic_store(&v->replace_slot, -1);
		atomic_store(&v->replace_with, -1);
	}
	fsvol_log(LOG_NOTICE, "replace of member %d %s: %llu of %llu units", k, done ? "done" : "stopped",
		  (unsigned long long)atomic_load(&v->sync_pos), (unsigned long long)v->sync_total);
	return done;
}

/* Pass what starts from its beginning (v->sync_lock held). */
static void sync_pass_begin(struct vol *v, const char *what)
{
	v->sync_what = what;
	v->sync_total = engine_resync_units(v);
	atomic_store(&v->sync_pos, 0);
	atomic_store(&v->sync_bytes, 0);
	v->sync_t0 = stats_now();
}

static void *sync_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-sync"); /* top -H, ps -L */
	struct vol *v = arg;
	for (;;) {
		int recovery = !strcmp(v->sync_what, "recovery");
		int done = recovery ? run_recovery(v)
			   : !strcmp(v->sync_what, "replace") ? run_replace(v) : run_check(v, v->sync_what);
		pthread_mutex_lock(&v->sync_lock);
		v->sync_done = done;
		/* asked for while this pass ran: a recovery (a member failed, or one
		 * was added), then a replace; after a recovery that made the volume
		 * whole, the resync an unclean shutdown left owed (md runs it too:
		 * without it the volume would stay dirty for good) */
		const char *next = NULL;
		if (!atomic_load(&v->sync_stop) && atomic_exchange(&v->recovery_wanted, 0) &&
		    atomic_load(&v->rebuild_slot) >= 0)
			next = "recovery";
		else if (!atomic_load(&v->sync_stop) && atomic_exchange(&v->replace_wanted, 0) &&
			 atomic_load(&v->replace_slot) >= 0)
			next = "replace";
		else if (!atomic_load(&v->sync_stop) && recovery && done && vol_resync_owed(v) &&
			 !atomic_load(&v->failed))
			next = "resync";
		if (next) {
			sync_pass_begin(v, next);
			pthread_mutex_unlock(&v->sync_lock);
			continue;
		}
		v->sync_running = 0;
		pthread_mutex_unlock(&v->sync_lock);
		return NULL;
	}
}

int vol_sync_start(struct vol *v, const char *what)
{
	int r = 0;
	if (!engine_resync_units(v))
		return -EINVAL;
	pthread_mutex_lock(&v->sync_lock);
	if (v->sync_running) {
		r = -EBUSY;
	} else {
		if (v->sync_joinable)
			pthread_join(v->sync_thread, NULL);
		v->sync_joinable = 0;
		sync_pass_begin(v, what);
		atomic_store(&v->sync_bad, 0);
		atomic_store(&v->sync_skipped, 0);
		atomic_store(&v->sync_stop, 0);
		if (!strcmp(what, "recovery"))
			atomic_store(&v->recovery_wanted, 0);
		if (!strcmp(what, "replace"))
			atomic_store(&v->replace_wanted, 0);
		v->sync_done = 0;
		v->sync_running = 1;
		if (pthread_create(&v->sync_thread, NULL, sync_main, v)) {
			v->sync_running = 0;
			r = -EAGAIN;
		} else {
			v->sync_joinable = 1;
		}
	}
	pthread_mutex_unlock(&v->sync_lock);
	return r;
}

void vol_sync_stop(struct vol *v)
{
	atomic_store(&v->sync_stop, 1);
	pthread_mutex_lock(&v->sync_lock);
	int join = v->sync_joinable;
	v->sync_joinable = 0;
	pthread_mutex_unlock(&v->sync_lock);
	if (join)
		pthread_join(v->sync_thread, NULL);
}
