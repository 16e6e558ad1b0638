/* vol_error: the volume's md_error side, the low file every feature may
 * call (docs/engine.md, "Features"): a member failed (vol_fail_slot), the
 * failures marked for the metadata thread and the superblock sequence, the
 * state lock that records them, the waiters the thread resumes, the rebuild
 * checkpoint and the replace epoch a completion reads or moves, and the
 * completion-path guard. It calls nothing above it: the metadata thread's
 * blocking wait (vol_md_sync) goes through the callback vol_md_init
 * registered, and each feature's say on where members count as failed
 * through the volume's feature list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/feature.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "layout/layout.h"

/* Set by the engine's trampoline (eng_kick) while it runs a step. */
__thread int eng_tl_running;
static __thread int tl_md_thread; /* this thread is a volume's metadata thread */

void eng_completion_abort(const char *what)
{
	fsvol_log(LOG_CRIT, "%s called on a completion path (engine step): a bug, see docs/engine.md", what);
	abort();
}

int vol_md_on_thread(void)
{
	return tl_md_thread;
}

void vol_md_thread_mark(void)
{
	tl_md_thread = 1;
}

uint64_t eng_failed(const struct vol *v)
{
	return atomic_load_explicit(&v->failed, memory_order_acquire);
}

void vol_md_sync(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_md_sync");
	if (v->md_sync)
		v->md_sync(v);
}

void vol_md_wake(struct vol *v, unsigned flags)
{
	atomic_fetch_or(&v->md_flags, flags);
	pthread_mutex_lock(&v->md_lock);
	pthread_cond_signal(&v->md_cond);
	pthread_mutex_unlock(&v->md_lock);
}

void vol_sb_change_locked(struct vol *v)
{
	atomic_fetch_add(&v->sb_seq_want, 1);
	atomic_fetch_or(&v->md_flags, VOL_MD_SB_CHANGE);
}

void vol_md_mark_failed(struct vol *v, unsigned slot)
{
	/* pending before the sequence moves: the round that sees the new
	 * sequence number also sees the slot */
	atomic_fetch_or(&v->fail_pending, 1ull << slot);
	atomic_fetch_add(&v->sb_seq_want, 1);
	vol_md_wake(v, VOL_MD_SB_CHANGE | VOL_MD_RECOVERY);
}

/* The failures marked since into the superblock: every state-lock section
 * that reads or changes slot states starts with them (vol_state_lock), so a
 * spare never takes over a role whose failure is still only marked. */
void vol_md_apply_fails(struct vol *v)
{
	uint64_t bits = atomic_exchange(&v->fail_pending, 0);
	for (unsigned i = 0; i < v->nslots; i++)
		if (bits & (1ull << i)) {
			v->sb.slots[i].state = SB_FAILED;
			v->sb.slots[i].rebuild_pos = 0; /* a spare that takes over starts from 0 */
			v->sb.slots[i].flags &= (uint8_t)~SB_SLOT_REPLACEMENT; /* a failed replacement replaces nothing */
			v->sb.slots[i].replaces = 0;
			v->sb.events++;
		}
}

void vol_state_lock(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_state_lock");
	pthread_mutex_lock(&v->state_lock);
	vol_md_apply_fails(v);
}

static struct emul *virtual_emul(const struct vol *v)
{
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	return e && emul_is_virtual(e) ? e : NULL;
}

void vol_md_queue_locked(struct vol *v, struct vol_waiter **list, struct vol_waiter *w, unsigned flag)
{
	w->res = 0;
	w->next = *list;
	*list = w;
	struct emul *e = virtual_emul(v);
	if (e)
		emul_expect(e, 1); /* virtual time waits for it: a superblock costs no emulated time */
	atomic_fetch_or(&v->md_flags, flag);
	pthread_cond_signal(&v->md_cond);
}

void vol_md_resume(struct vol *v, struct vol_waiter *w)
{
	struct emul *e = virtual_emul(v);
	while (w) {
		struct vol_waiter *n = w->next;
		w->resume(w); /* it may queue again */
		if (e)
			emul_expect(e, -1);
		w = n;
	}
}

int vol_md_sb_wait(struct vol *v, struct vol_waiter *w)
{
	/* read-only, or no thread (a volume only read): nothing writes them
	 * now; vol_close does */
	if (atomic_load(&v->sb_seq_done) >= atomic_load(&v->sb_seq_want) || v->opts.readonly ||
	    !atomic_load(&v->md_running))
		return 1;
	pthread_mutex_lock(&v->md_lock);
	int queued = atomic_load(&v->sb_seq_done) < atomic_load(&v->sb_seq_want) && atomic_load(&v->md_running);
	if (queued)
		vol_md_queue_locked(v, &v->sb_waiters, w, VOL_MD_SB_CHANGE);
	pthread_mutex_unlock(&v->md_lock);
	return !queued;
}

void vol_fail_slot(struct vol *v, unsigned slot, int error)
{
	/* md_error: no lock a superblock writer holds is taken here (an event
	 * thread of an NBD member may run this while the metadata thread waits
	 * for that member's reply under the state lock): the failed mask and
	 * the rebuild target are atomics; the superblock's view of the slot is
	 * the metadata thread's to change (vol_md_apply_fails) */
	uint64_t bit = 1ull << slot;
	int marked = 0;
	/* the role being replaced failed: its replacement is to take it, and
	 * until then no write may plan without it (core/replace.c) */
	if ((int)slot == atomic_load(&v->replace_slot) && atomic_load(&v->replace_with) >= 0)
		vol_replace_role_failing(v);
	if (vol_rebuild_drop(v, (int)slot)) {
		/* the member being rebuilt failed: the recovery stops, it stays
		 * failed; a spare that takes over starts again from 0 */
		fsvol_log(LOG_ERR, "member %u (%s), being rebuilt, failed: %s; recovery stopped", slot,
			v->slot[slot] ? v->slot[slot]->path : "?", strerror(-error));
		marked = 1;
	} else if (!(atomic_fetch_or(&v->failed, bit) & bit)) {
		fsvol_log(LOG_ERR, "member %u (%s) failed: %s; volume %s", slot,
			v->slot[slot] ? v->slot[slot]->path : "?", strerror(-error),
			vol_reshape_survives(v, atomic_load(&v->failed)) ? "degraded" : "FAILED");
		marked = 1;
	}
	if (marked)
		vol_md_mark_failed(v, slot);
	/* md_error: marked; the metadata thread writes the superblocks and lets a
	 * spare at hand take over (never here: this may be a completion) */
	vol_md_wake(v, VOL_MD_RECOVERY);
	/* a caller that may wait (ctl's fail, a tool) returns once the
	 * superblocks say so, as before */
	if (!eng_on_completion() && !vol_md_on_thread())
		vol_md_sync(v);
}

uint64_t vol_failed_at(const struct vol *v, uint64_t off)
{
	/* slot, then position, then the mask: the reverse of the order
	 * vol_recovery_done changes them in (mask, position, slot), so a
	 * member in the middle of becoming active is never seen failed */
	int slot = atomic_load_explicit(&v->rebuild_slot, memory_order_acquire);
	uint64_t pos = atomic_load_explicit(&v->rebuild_pos, memory_order_acquire);
	uint64_t failed = atomic_load_explicit(&v->failed, memory_order_acquire);
	if (slot >= 0 && off < pos)
		failed &= ~(1ull << slot);
	VOL_FEAT_EACH(v, f) /* listed bad blocks: bypassed there */
		if (f->failed_at)
			failed |= f->failed_at(v, off);
	return failed;
}

void vol_rebuild_set(struct vol *v, int slot, uint64_t pos)
{
	pthread_mutex_lock(&v->rebuild_lock);
	atomic_fetch_add(&v->rebuild_gen, 1);
	/* the position first: a reader that sees the new slot sees its position */
	atomic_store(&v->rebuild_pos, pos);
	atomic_store(&v->rebuild_slot, slot);
	pthread_mutex_unlock(&v->rebuild_lock);
}

int vol_rebuild_drop(struct vol *v, int slot)
{
	pthread_mutex_lock(&v->rebuild_lock);
	int was = atomic_load(&v->rebuild_slot) == slot;
	if (was) {
		atomic_fetch_add(&v->rebuild_gen, 1);
		atomic_store(&v->rebuild_pos, 0);
		atomic_store(&v->rebuild_slot, -1);
	}
	pthread_mutex_unlock(&v->rebuild_lock);
	return was;
}

int vol_rebuild_advance(struct vol *v, unsigned gen, uint64_t pos)
{
	pthread_mutex_lock(&v->rebuild_lock);
	int same = atomic_load(&v->rebuild_gen) == gen && atomic_load(&v->rebuild_slot) >= 0;
	if (same && atomic_load(&v->rebuild_pos) < pos)
		atomic_store_explicit(&v->rebuild_pos, pos, memory_order_release);
	pthread_mutex_unlock(&v->rebuild_lock);
	return same;
}

void vol_replace_abort(struct vol *v, int error)
{
	/* a completion: atomics only, the metadata thread records it (a failed
	 * member replaces nothing: vol_md's apply clears its record) */
	int s = atomic_exchange(&v->replace_with, -1);
	if (s >= 0) {
		atomic_store(&v->replace_slot, -1);
		fsvol_log(LOG_ERR, "replacement %s failed: %s; replace stopped, the member it was to replace still serves",
			  v->slot[s] ? v->slot[s]->path : "?", strerror(error < 0 ? -error : EIO));
		vol_md_mark_failed(v, (unsigned)s);
	}
}

unsigned vol_replace_epoch(const struct vol *v)
{
	return atomic_load(&((struct vol *)v)->replace_epoch);
}

void vol_replace_role_failing(struct vol *v)
{
	/* before the failed mask says so: a write that plans without the role
	 * has seen the epoch move (engine: planned again) */
	pthread_mutex_lock(&v->rebuild_lock);
	if (!(atomic_load(&v->replace_epoch) & 1))
		atomic_fetch_add(&v->replace_epoch, 1);
	pthread_mutex_unlock(&v->rebuild_lock);
}

int vol_replace_wait(struct vol *v, struct vol_waiter *w, unsigned *epoch)
{
	pthread_mutex_lock(&v->rebuild_lock);
	unsigned e = atomic_load(&v->replace_epoch);
	int wait = e & 1;
	/* resumed after the swap, which makes it e + 1 */
	*epoch = wait ? e + 1 : e;
	if (wait) {
		w->res = 0;
		w->next = v->replace_waiters;
		v->replace_waiters = w;
	}
	pthread_mutex_unlock(&v->rebuild_lock);
	return wait;
}

int vol_pass_start(struct vol *v, enum vol_pass pass)
{
	VOL_NOT_ON_COMPLETION("vol_pass_start");
	return v->pass_start ? v->pass_start(v, pass) : -EINVAL;
}

void vol_pass_want(struct vol *v, enum vol_pass pass)
{
	if (v->pass_want)
		v->pass_want(v, pass);
}
