/* replace: md's want_replacement. A spare is built to take an active role
 * while the role keeps serving: the sync pass copies the role's units onto it
 * (core/sync.c), and every write to the role goes to both meanwhile
 * (eng_piece), so below the copy position (replace_pos) the replacement holds
 * the role. Then it takes the role and the replaced member is marked faulty
 * (mdadm: "the replaced device will be marked as faulty").
 *
 * The superblocks record it as md does (docs/format.md, "Replace"): the
 * spare's entry carries SB_SLOT_REPLACEMENT, the role (replaces) and its
 * checkpoint in member bytes (rebuild_pos, md's recovery_offset), saved about
 * once a second and when the pass stops, so a kill -9 or an umount and a plain
 * mount resume it.
 *
 * When the role fails during its replace, the replacement becomes the member
 * being rebuilt for it and keeps what it has built (md), not an older spare.
 * The failure is marked on a completion; the metadata thread swaps them.
 * Meanwhile a write planned without the failed role would miss the
 * replacement, so every write waits for the swap and is planned again
 * (replace_epoch: odd while the role has failed and the swap is to come).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/util/log.h"

static int redundant(const struct vol *v)
{
	return layout_copies(&v->geom) > 1 || layout_parity_count(&v->geom) > 0;
}

static double pct(const struct vol *v, uint64_t pos)
{
	return v->geom.capacity ? 100.0 * (double)pos / (double)v->geom.capacity : 100.0;
}

int vol_replace(struct vol *v, const char *which, const char *path, char *err, size_t errlen)
{
	if (!redundant(v)) {
		snprintf(err, errlen, "%s has no redundancy to build a replacement from", layout_level_name(v->geom.level));
		return -EINVAL;
	}
	if (path && path[0]) {
		int r = vol_add(v, path, err, errlen);
		if (r)
			return r;
	}
	vol_state_lock(v);
	int k = vol_slot_of(v, which), s = -1, r = 0;
	if (k < 0 || (unsigned)k >= v->geom.members || strcmp(vol_slot_state(v, (unsigned)k), "active")) {
		char act[200] = "";
		for (unsigned i = 0, n = 0; i < v->geom.members && n + 8 < sizeof(act); i++)
			if (v->slot[i] && !strcmp(vol_slot_state(v, i), "active"))
				n += (unsigned)snprintf(act + n, sizeof(act) - n, " m%d", vol_slot_number(v, i));
		snprintf(err, errlen, "replace %s: expected an active member, its Number (mN, as fsvol status names it) or "
			 "its path (active:%s); a failed one is rebuilt onto a spare by itself", which, *act ? act : " none");
		r = -EINVAL;
	} else if (atomic_load(&v->rebuild_slot) >= 0 || atomic_load(&v->replace_slot) >= 0) {
		snprintf(err, errlen, "replace %s: a recovery or replace is running; one at a time", which);
		r = -EBUSY;
	} else if (vol_reshaping(v)) {
		snprintf(err, errlen, "replace %s: a reshape is under way; replace after it", which);
		r = -EBUSY;
	} else if (path && path[0]) {
		s = vol_slot_of(v, path);
		s = s >= 0 && vol_idle_spare(v, (unsigned)s) ? s : -1;
	} else {
		for (unsigned i = v->geom.members; i < v->nslots && s < 0; i++)
			s = vol_idle_spare(v, i) ? (int)i : -1;
	}
	if (!r && s < 0) {
		snprintf(err, errlen, "replace %s: no spare to build the replacement on (add one, or give --with PATH)", which);
		r = -ENOENT;
	}
	if (!r) {
		/* md records the replacement (its role, from 0) before building it */
		struct sb_slot *sl = &v->sb.slots[s];
		sl->flags |= SB_SLOT_REPLACEMENT;
		sl->replaces = (uint16_t)k;
		sl->rebuild_pos = 0;
		v->sb.events++;
		atomic_store(&v->replace_pos, 0);
		atomic_store(&v->replace_with, s);
		atomic_store_explicit(&v->replace_slot, k, memory_order_release);
		vol_write_sbs(v);
		fsvol_log(LOG_NOTICE, "replace of member %d (%s) onto %s starts", k, v->slot[k]->path, v->slot[s]->path);
	}
	pthread_mutex_unlock(&v->state_lock);
	if (r)
		return r;
	vol_pass_want(v, VOL_PASS_REPLACE);
	if (vol_pass_start(v, VOL_PASS_REPLACE) == -EBUSY)
		return 0; /* the running pass gives way and goes on with the replace */
	return 0;
}

void vol_replace_done(struct vol *v)
{
	vol_state_lock(v);
	int k = atomic_load(&v->replace_slot), s = atomic_load(&v->replace_with);
	/* the role failed at the very end: the metadata thread's takeover ends it */
	if (k >= 0 && s >= 0 && !(atomic_load(&v->replace_epoch) & 1)) {
		struct member *old = v->slot[k], *rep = v->slot[s];
		uint64_t size = v->sb.slots[k].data_size;
		vol_replace_end(v);
		vol_slot_swap(v, (unsigned)k, (unsigned)s);
		v->sb.slots[k].state = SB_ACTIVE;
		v->sb.slots[k].data_size = size;
		/* md marks the replaced device faulty: no spare for later, and
		 * removed with fsvol remove; its superblock is left as it was */
		v->sb.slots[s].state = SB_FAILED;
		v->sb.events++;
		vol_write_sbs(v);
		fsvol_log(LOG_NOTICE, "%s replaced member %d; %s is marked faulty (fsvol remove takes it out)", rep->path,
			  k, old->path);
	}
	pthread_mutex_unlock(&v->state_lock);
}

void vol_replace_advance(struct vol *v, int role, uint64_t pos)
{
	if (atomic_load(&v->replace_slot) == role && pos > atomic_load(&v->replace_pos))
		atomic_store(&v->replace_pos, pos);
}

void vol_replace_checkpoint(struct vol *v)
{
	vol_state_lock(v);
	int s = atomic_load(&v->replace_with);
	if (s >= 0 && atomic_load(&v->replace_slot) >= 0) {
		v->sb.slots[s].rebuild_pos = vol_rebuild_to_member(v, atomic_load(&v->replace_pos));
		if (!v->opts.readonly)
			vol_write_sbs(v);
	}
	pthread_mutex_unlock(&v->state_lock);
}

void vol_replace_stop(struct vol *v, int role, int error)
{
	vol_state_lock(v);
	if (atomic_load(&v->replace_slot) == role) {
		fsvol_log(LOG_ERR, "replace of member %d stopped: %s; the member still serves, the spare stays a spare",
			  role, strerror(error < 0 ? -error : EIO));
		vol_replace_end(v);
		v->sb.events++;
		vol_write_sbs(v);
	}
	pthread_mutex_unlock(&v->state_lock);
}

/* ---- the role failing during its replace ---- */

/* ---- across a restart ---- */

/* The replace recorded in v->sb (read at assembly), or -1. */
static int recorded(const struct vol *v)
{
	for (unsigned s = v->geom.members; s < v->nslots; s++)
		if (v->sb.slots[s].flags & SB_SLOT_REPLACEMENT)
			return (int)s;
	return -1;
}

void vol_replace_load(struct vol *v)
{
	int s = recorded(v);
	if (s < 0 || v->opts.readonly)
		return;
	struct sb_slot *sl = &v->sb.slots[s];
	unsigned k = sl->replaces;
	uint64_t pos = vol_rebuild_from_member(v, sl->rebuild_pos);
	const char *st = v->slot[k] ? sb_state_name(v->sb.slots[k].state) : "missing";
	if (!v->slot[s] || (v->sb.reshape_flags & SB_RESHAPE_ACTIVE) || !redundant(v)) {
		fsvol_log(LOG_WARNING, "replace of member %u not resumed: %s", k,
			  !v->slot[s] ? "its replacement is not among the members given" : "a reshape is under way");
		sl->flags &= (uint8_t)~SB_SLOT_REPLACEMENT;
		sl->replaces = 0;
		sl->rebuild_pos = 0;
	} else if (v->slot[k] && v->sb.slots[k].state == SB_ACTIVE) {
		atomic_store(&v->replace_pos, pos);
		atomic_store(&v->replace_with, s);
		atomic_store(&v->replace_slot, (int)k);
		fsvol_log(LOG_NOTICE, "replace of member %u (%s) onto %s resumes at %.1f%% (recorded in the superblocks)",
			  k, v->slot[k]->path, v->slot[s]->path, pct(v, pos));
	} else {
		/* the role failed before the swap was written: the replacement
		 * takes it, from its checkpoint (the mount computes the rest) */
		uint64_t size = v->sb.slots[k].data_size;
		int old = v->slot[k] != NULL;
		vol_slot_swap(v, k, (unsigned)s);
		sl = &v->sb.slots[k];
		sl->state = SB_REBUILDING;
		sl->data_size = size;
		sl->flags &= (uint8_t)~SB_SLOT_REPLACEMENT;
		sl->replaces = 0;
		v->sb.slots[s].state = old ? SB_FAILED : SB_EMPTY;
		if (!old)
			v->sb.slots[s].number = SB_NO_NUMBER;
		fsvol_log(LOG_NOTICE, "member %u (%s) failed during its replace: its replacement %s takes the role; the "
			  "recovery resumes at %.1f%%", k, st, v->slot[k]->path, pct(v, pos));
	}
}

/* After a crash a write in flight may have reached the role and not its
 * replacement: the copy goes again from the first region the write-intent
 * bitmap marks (every write in flight set its bit), or from 0 without one. */
static uint64_t dirty_start(struct vol *v, uint64_t pos)
{
	uint64_t units = engine_resync_units(v), off = 0, len = 0;
	if (!v->bitmap)
		return 0;
	for (uint64_t u = 0; u < units; u++) {
		engine_unit_range(v, u, &off, &len);
		if (off >= pos)
			break;
		if (vol_bitmap_dirty(v, off, len))
			return off;
	}
	return pos;
}

void vol_replace_resume(struct vol *v)
{
	int k = atomic_load(&v->replace_slot);
	if (k < 0 || v->opts.readonly)
		return;
	uint64_t pos = atomic_load(&v->replace_pos);
	if (v->was_dirty && pos) {
		uint64_t from = dirty_start(v, pos);
		if (from < pos)
			fsvol_log(LOG_NOTICE, "replace of member %d: not shut down cleanly, so it goes again from %.1f%% "
				  "(%s)", k, pct(v, from), v->bitmap ? "the first region the bitmap marks" : "no bitmap");
		atomic_store(&v->replace_pos, from);
	}
	/* a recovery or the resync a crash owes goes first (sync.c chains the
	 * replace after it: redundancy agrees before the copy reads it) */
	vol_pass_start(v, VOL_PASS_REPLACE);
}
