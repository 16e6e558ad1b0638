/* vol_md: the volume's metadata thread (md's md thread, md_check_recovery).
 *
 * The completion path never writes a superblock, starts or joins a thread:
 * it marks what changed (vol_fail_slot, vol_replace_abort: the failed mask
 * and the in-memory superblock, under the state lock, then a flag) and wakes
 * this one thread, which
 *   - writes the superblocks (VOL_MD_SB_CHANGE, md's MD_SB_CHANGE_PENDING),
 *     then releases the writes whose acknowledgement waited for them;
 *   - writes the write-intent bitmap for the writes queued on it and ages
 *     its bits (core/bitmap_vol.c: the work, this thread: the worker);
 *   - starts passes (VOL_MD_RECOVERY: a spare takes over, a recovery runs).
 *
 * A write or flush whose segments are done waits, queued (no thread blocks),
 * while a superblock change made before its end is not on the members yet:
 * an acknowledged write never depends on a superblock that still calls a
 * failed member active. Sequence numbers order it: sb_seq_want grows with
 * every change (state lock held), sb_seq_done is what the members hold.
 *
 * Lock order: state_lock, then md_lock; this thread holds md_lock only to
 * wait and to take its queue, never across I/O.
 */
#include <errno.h>
#include <time.h>

#include "fsvol/core/feature.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "layout/layout.h"

#define MD_IDLE_NS 2000000000ull /* a wake-up now and then without a bitmap: nothing is lost either way */

static void md_sync(struct vol *v);

void vol_md_init(struct vol *v)
{
	pthread_mutex_init(&v->md_lock, NULL);
	pthread_cond_init(&v->md_cond, NULL);
	pthread_cond_init(&v->sb_done_cond, NULL);
	vol_safe_init(v);
	v->md_sync = md_sync;
	v->md_start = vol_md_start;
	atomic_store(&v->rmw_level, LAYOUT_RMW_ENABLE); /* md's default */
}

void vol_md_destroy(struct vol *v)
{
	pthread_mutex_destroy(&v->md_lock);
	pthread_cond_destroy(&v->md_cond);
	pthread_cond_destroy(&v->sb_done_cond);
}

/* Write the superblocks if a change is pending, then release the writes
 * that waited for them. */
static void md_write_sbs(struct vol *v)
{
	pthread_mutex_lock(&v->state_lock);
	uint64_t want = atomic_load(&v->sb_seq_want);
	vol_md_apply_fails(v); /* after want: what it applies is at most what want covers, or the next round's */
	/* bad-block lists first: a superblock never trusts a block its list lacks;
	 * a member whose list cannot be written fails in this very round */
	if (vol_feat_sb_write(v)) {
		want = atomic_load(&v->sb_seq_want);
		vol_md_apply_fails(v);
	}
	if (atomic_load(&v->sb_seq_done) < want && !v->opts.readonly)
		vol_write_sbs(v); /* an unwritable member shows on its next I/O */
	atomic_store(&v->sb_seq_done, want);
	pthread_mutex_unlock(&v->state_lock);
	pthread_mutex_lock(&v->md_lock);
	struct vol_waiter *w = v->sb_waiters;
	v->sb_waiters = NULL;
	pthread_cond_broadcast(&v->sb_done_cond);
	pthread_mutex_unlock(&v->md_lock);
	vol_md_resume(v, w); /* one queues again if a newer change came meanwhile */
}

/* One round of whatever the flags ask for, md_lock NOT held. */
static void md_work(struct vol *v, unsigned f, int stopping)
{
	if (f & VOL_MD_SB_CHANGE)
		md_write_sbs(v);
	/* the features' rounds: the bitmap's writes and aging, the bad-block
	 * lists' probes and fixes, safe mode's marks (feature.h) */
	vol_feat_md_work(v, f, stopping);
	if ((f & VOL_MD_RECOVERY) && !stopping)
		vol_recovery_kick(v); /* a spare at hand takes over, the pass starts */
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void md_wait_until(struct vol *v, uint64_t deadline)
{
	uint64_t now = now_ns(), left = deadline > now ? deadline - now : 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(left / 1000000000u);
	ts.tv_nsec += (long)(left % 1000000000u);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&v->md_cond, &v->md_lock, &ts);
}

static void *md_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-md"); /* top -H, ps -L */
	vol_md_thread_mark();
	struct vol *v = arg;
	uint64_t next_tick = now_ns() + MD_IDLE_NS;
	pthread_mutex_lock(&v->md_lock);
	while (!v->md_stop) {
		unsigned f = atomic_exchange(&v->md_flags, 0);
		uint64_t due = vol_feat_md_due(v);
		if (!f && now_ns() >= next_tick) {
			f = VOL_MD_TICK;
			next_tick = now_ns() + MD_IDLE_NS;
		}
		if (!f && now_ns() >= due)
			f = VOL_MD_SAFE; /* idle for safe_mode_delay: mark clean */
		if (!f) {
			md_wait_until(v, due < next_tick ? due : next_tick);
			continue;
		}
		pthread_mutex_unlock(&v->md_lock);
		md_work(v, f, 0);
		pthread_mutex_lock(&v->md_lock);
	}
	pthread_mutex_unlock(&v->md_lock);
	/* what is still queued gets its round before the thread goes */
	md_work(v, atomic_exchange(&v->md_flags, 0) | VOL_MD_SB_CHANGE | VOL_MD_BITMAP | VOL_MD_SAFE, 1);
	return NULL;
}

int vol_md_start(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_md_start");
	int r = 0;
	pthread_mutex_lock(&v->md_lock);
	if (!v->md_running && !v->md_stop) {
		if (pthread_create(&v->md_thread, NULL, md_main, v))
			r = -EAGAIN;
		else
			atomic_store(&v->md_running, 1);
	}
	pthread_mutex_unlock(&v->md_lock);
	return r;
}

int vol_md_running(struct vol *v)
{
	return atomic_load(&v->md_running);
}

void vol_md_stop(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_md_stop");
	pthread_mutex_lock(&v->md_lock);
	v->md_stop = 1;
	int join = atomic_load(&v->md_running);
	pthread_cond_signal(&v->md_cond);
	pthread_mutex_unlock(&v->md_lock);
	if (join) {
		pthread_join(v->md_thread, NULL);
		atomic_store(&v->md_running, 0);
	} else {
		md_work(v, atomic_exchange(&v->md_flags, 0) | VOL_MD_SB_CHANGE, 1); /* a volume never started */
	}
}

/* vol_md_sync (vol_error.c) calls this through v->md_sync. */
static void md_sync(struct vol *v)
{
	if (vol_md_on_thread())
		return; /* it writes them itself, next round */
	if (!vol_md_running(v)) {
		md_write_sbs(v);
		return;
	}
	uint64_t want = atomic_load(&v->sb_seq_want);
	pthread_mutex_lock(&v->md_lock);
	while (atomic_load(&v->sb_seq_done) < want && atomic_load(&v->md_running)) {
		atomic_fetch_or(&v->md_flags, VOL_MD_SB_CHANGE);
		pthread_cond_signal(&v->md_cond);
		/* the thread broadcasts when it has written them; the timeout only
		 * re-checks that it still runs */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&v->sb_done_cond, &v->md_lock, &ts);
	}
	pthread_mutex_unlock(&v->md_lock);
	if (atomic_load(&v->sb_seq_done) < want)
		md_write_sbs(v); /* the thread stopped meanwhile */
}
