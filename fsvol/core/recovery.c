/* recovery: spares, add / re-add / remove, and the rebuild of a member from
 * redundancy, with mdadm's meanings.
 *
 * Slots 0..members-1 are the raid roles, the slots above hold spares and
 * members that failed out of a role. A spare taking over role k swaps slots
 * with the failed member: the spare becomes k (REBUILDING, rebuilt below a
 * checkpoint that only grows), the failed one moves to the spare's slot
 * (FAILED) until it is removed. One member is rebuilt at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fsvol/core/bbl_vol.h"
#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/members/fault.h"
#include "fsvol/util/log.h"
#include "fsvol/util/size.h"
#include "stats/stats.h"

/* The lowest and the highest row (member offset / chunk) any copy of unit u
 * lies in. Both only grow with u at every level and layout (parity: the
 * stripe's row; raid1: the chunk's; raid10 near/far/offset: copy 0 is the
 * lowest, the last copy the highest), which the conversions below rely on. */
static void unit_rows(const struct vol *v, uint64_t u, uint64_t *lo, uint64_t *hi)
{
	const struct layout_geom *g = &v->geom;
	uint64_t off, len;
	engine_unit_range(v, u, &off, &len);
	*lo = UINT64_MAX;
	*hi = 0;
	for (unsigned k = 0; k < layout_copies(g); k++) {
		struct layout_extent e;
		if (layout_locate(g, off, k, &e))
			continue;
		uint64_t row = e.offset / g->chunk;
		*lo = row < *lo ? row : *lo;
		*hi = row > *hi ? row : *hi;
	}
}

uint64_t vol_rebuild_to_member(const struct vol *v, uint64_t logical)
{
	uint64_t total = engine_resync_units(v), off, len;
	if (!total)
		return 0;
	engine_unit_range(v, 0, &off, &len);
	/* units are equal but for the last: the first not wholly below logical */
	uint64_t u = logical >= v->geom.capacity ? total : logical / len;
	if (u >= total)
		return v->geom.member_used;
	/* every row below the lowest of unit u holds only units below u */
	uint64_t lo, hi;
	unit_rows(v, u, &lo, &hi);
	return lo * v->geom.chunk;
}

uint64_t vol_rebuild_from_member(const struct vol *v, uint64_t moff)
{
	uint64_t total = engine_resync_units(v), a = 0, b = total, off, len;
	if (!total)
		return 0;
	/* the first unit with a row at or past moff: everything before it is in sync */
	while (a < b) {
		uint64_t m = a + (b - a) / 2, lo, hi;
		unit_rows(v, m, &lo, &hi);
		if ((hi + 1) * v->geom.chunk <= moff)
			a = m + 1;
		else
			b = m;
	}
	if (a >= total)
		return v->geom.capacity;
	engine_unit_range(v, a, &off, &len);
	return off;
}

static int redundant(const struct vol *v)
{
	return layout_copies(&v->geom) > 1 || layout_parity_count(&v->geom) > 0;
}

int vol_idle_spare(const struct vol *v, unsigned s)
{
	/* a replacement is built for its role only (md gives it no other) */
	return s >= v->geom.members && s < v->nslots && v->slot[s] && v->sb.slots[s].state == SB_SPARE &&
	       !(v->sb.slots[s].flags & (SB_SLOT_REPLACEMENT | SB_SLOT_JOURNAL)) &&
	       (int)s != atomic_load(&v->replace_with) && !vol_reshape_new_member(v, s);
}

/* A spare slot holding a member, or -1. State lock held. */
static int find_spare(const struct vol *v)
{
	for (unsigned s = v->geom.members; s < v->nslots; s++)
		if (vol_idle_spare(v, s))
			return (int)s;
	return -1;
}

void vol_spares_first(struct vol *v)
{
	vol_state_lock(v);
	unsigned moved = 0;
	for (unsigned t = v->geom.members; t < v->nslots; t++) {
		if (vol_idle_spare(v, t) || (v->sb.slots[t].flags & (SB_SLOT_JOURNAL | SB_SLOT_REPLACEMENT)) ||
		    (int)t == atomic_load(&v->replace_with))
			continue;
		/* a failed member parked here (a replaced one), or an empty entry */
		unsigned u = t + 1;
		while (u < v->nslots && !vol_idle_spare(v, u))
			u++;
		if (u == v->nslots)
			break;
		vol_slot_swap(v, t, u);
		moved++;
	}
	if (moved) {
		v->sb.events++;
		vol_write_sbs(v);
	}
	pthread_mutex_unlock(&v->state_lock);
}

/* A role to recover: failed or missing, lowest first. -1 when none. */
static int find_role(const struct vol *v)
{
	uint64_t failed = atomic_load(&v->failed);
	for (unsigned k = 0; k < v->geom.members; k++)
		if (failed & (1ull << k))
			return (int)k;
	return -1;
}

void vol_slot_swap(struct vol *v, unsigned a, unsigned b)
{
	struct member *ma = v->slot[a], *mb = v->slot[b];
	struct sb_slot sa = v->sb.slots[a];
	v->slot[a] = mb;
	v->slot[b] = ma;
	if (mb)
		mb->slot = (int)a;
	if (ma)
		ma->slot = (int)b;
	v->sb.slots[a] = v->sb.slots[b];
	v->sb.slots[b] = sa;
}

void vol_take_over(struct vol *v, unsigned k, unsigned s, uint64_t pos)
{
	struct member *old = v->slot[k];
	uint64_t size = v->sb.slots[k].data_size; /* the role's */
	vol_slot_swap(v, k, s);
	struct sb_slot *sl = &v->sb.slots[k];
	sl->state = SB_REBUILDING;
	sl->rebuild_pos = vol_rebuild_to_member(v, pos);
	sl->data_size = size;
	sl->flags &= (uint8_t)~SB_SLOT_REPLACEMENT; /* a replacement that takes the role is its member now */
	sl->replaces = 0;
	v->sb.slots[s].state = old ? SB_FAILED : SB_EMPTY;
	if (!old)
		v->sb.slots[s].number = SB_NO_NUMBER; /* the missing device is forgotten */
	/* a spare starts from 0, whatever an earlier target of this role had reached */
	vol_rebuild_set(v, (int)k, pos);
	v->sb.events++;
	if (!pos)
		fsvol_log(LOG_NOTICE, "spare %s takes over member %u (%s): recovery starts", v->slot[k]->path, k,
			  old ? old->path : "missing");
}

void vol_recovery_kick(struct vol *v)
{
	VOL_NOT_ON_COMPLETION("vol_recovery_kick");
	if (!redundant(v) || v->opts.readonly)
		return;
	vol_state_lock(v);
	/* the role being replaced failed: its replacement takes it (md) */
	int took = vol_replace_takeover(v);
	int k = find_role(v), s = find_spare(v), start = 0;
	if (atomic_load(&v->rebuild_slot) >= 0) {
		start = 1; /* one is pending or running already: make sure it runs */
	} else if (k >= 0 && s >= 0 && layout_survives(&v->geom, atomic_load(&v->failed))) {
		/* redundancy first: a replace under way waits for this recovery */
		vol_take_over(v, (unsigned)k, (unsigned)s, 0);
		vol_write_sbs(v);
		start = 1;
	}
	pthread_mutex_unlock(&v->state_lock);
	if (took)
		vol_replace_release(v); /* the writes held meanwhile go on, planned again */
	if (!start || !v->started)
		return;
	vol_pass_want(v, VOL_PASS_RECOVERY);
	if (vol_pass_start(v, VOL_PASS_RECOVERY) == -EBUSY)
		return; /* the running pass gives way and goes on with the recovery */
}

int vol_recovery_done(struct vol *v, unsigned gen)
{
	vol_state_lock(v);
	int k = atomic_load(&v->rebuild_slot), done = 0;
	/* only the target this pass rebuilt, and only when all of it is */
	if (k >= 0 && atomic_load(&v->rebuild_gen) == gen && atomic_load(&v->rebuild_pos) >= v->geom.capacity) {
		v->sb.slots[k].state = SB_ACTIVE;
		v->sb.slots[k].rebuild_pos = 0;
		/* in the role first, then no longer rebuilding: a write planned in
		 * between must not see the member failed and skip it */
		atomic_fetch_and(&v->failed, ~(1ull << k));
		vol_rebuild_set(v, -1, 0);
		v->sb.events++;
		vol_write_sbs(v);
		fsvol_log(LOG_NOTICE, "member %d (%s) is in sync: volume %s", k, v->slot[k]->path,
			atomic_load(&v->failed) ? "still degraded" : "healthy");
		done = 1;
	}
	pthread_mutex_unlock(&v->state_lock);
	vol_recovery_kick(v); /* another failed role and another spare? */
	return done;
}

/* Undo open_new: the backend and the fault wrapper go, and the member entry
 * is free again (its counters stay, for the next member it holds). State
 * lock held. */
static void close_new(struct vol *v, struct member *m)
{
	(void)v;
	member_close(m);
}

/* A member entry no one holds: closed (removed, or replaced by a re-add), in
 * no slot, with no I/O in flight; else the next never used one. NULL when
 * all SB_MAX_SLOTS hold members. Entries are reused, never freed while the
 * volume lives: a status reader may still look at one it found in a slot
 * (its counters, its path), so the memory stays what it was. State lock held. */
static struct member *free_entry(struct vol *v)
{
	for (unsigned i = 0; i < v->nmembers; i++) {
		struct member *m = &v->members[i];
		int held = m->ops || atomic_load(&vol_ms(v, m)->pending);
		for (unsigned s = 0; s < v->nslots && !held; s++)
			held = v->slot[s] == m;
		if (!held)
			return m;
	}
	return v->nmembers < SB_MAX_SLOTS ? &v->members[v->nmembers++] : NULL;
}

/* Open a member to add at run time: a free member entry, the backend, the
 * fault wrapper, the claim. Its counters (most of a member's memory) come
 * with with_stats, once it is accepted, so that a refusal allocates little.
 * State lock held. */
static struct member *open_new(struct vol *v, const char *path, char *err, size_t errlen)
{
	if (path[0] != '/' && !strchr(path, ':')) {
		snprintf(err, errlen, "%s: give an absolute path (the daemon runs in /)", path);
		return NULL;
	}
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && !strcmp(v->slot[i]->path, path)) {
			snprintf(err, errlen, "%s: already in the volume (m%d)", path, vol_slot_number(v, i));
			return NULL;
		}
	struct member *m = free_entry(v);
	if (!m) {
		snprintf(err, errlen, "%s: no room for another member in this mount (%d at most)", path, SB_MAX_SLOTS);
		return NULL;
	}
	struct stats_dev *kept = m->stats; /* member_open starts from a clean struct */
	int r = member_open(m, path, !v->opts.buffered, err, errlen);
	m->stats = kept;
	if (r)
		return NULL;
	/* a fresh member to the engine (a spindle struct stays for reuse: the
	 * next model change sets it up) */
	struct vol_mstate *ms = vol_ms(v, m);
	atomic_store(&ms->pending, 0);
	atomic_store(&ms->head, 0);
	atomic_store(&ms->modeled, 0);
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && v->slot[i]->dev == m->dev && v->slot[i]->ino == m->ino) {
			snprintf(err, errlen, "%s: the same member as m%d (%s)", path, vol_slot_number(v, i), v->slot[i]->path);
			member_close(m);
			return NULL;
		}
	uint64_t need = v->data_offset + v->sb.slots[0].data_size;
	if (m->size < need) {
		char hs[32], hn[32];
		size_format(m->size, hs, sizeof(hs));
		size_format(need, hn, sizeof(hn));
		snprintf(err, errlen, "%s: too small: %s (%llu bytes), and a member of this volume needs %s (%llu bytes)",
			 path, hs, (unsigned long long)m->size, hn, (unsigned long long)need);
		member_close(m);
		return NULL;
	}
	if (member_lock(m)) {
		snprintf(err, errlen, "%s: in use by another mounted fsvol volume", path);
		member_close(m);
		return NULL;
	}
	if (member_fault_wrap(m)) {
		snprintf(err, errlen, "%s: out of memory", path);
		member_close(m);
		return NULL;
	}
	m->data_offset = v->data_offset;
	vol_bbl_attach(v, m); /* its bad-block list counts from the start */
	return m;
}

/* The counters of an accepted member (those of the entry's last member, from
 * zero, or new ones); closes it when there is no memory. */
static int with_stats(struct vol *v, struct member *m, char *err, size_t errlen)
{
	if (m->stats) {
		stats_reset(m->stats, stats_now());
		return 0;
	}
	if ((m->stats = stats_dev_create()))
		return 0;
	snprintf(err, errlen, "%s: out of memory", m->path);
	close_new(v, m);
	return -ENOMEM;
}

/* A spare-range slot no member holds: a removed one, or the entry of a
 * member that failed out of a role and was not given at assembly (md reuses
 * such descriptor numbers too). */
static int leftover(const struct vol *v, unsigned s)
{
	return s >= v->geom.members && s < v->nslots && !v->slot[s] && v->sb.slots[s].state != SB_REBUILDING &&
	       (int)s != atomic_load(&v->replace_with) && !(v->sb.slots[s].flags & SB_SLOT_REPLACEMENT) &&
	       !(v->sb.slots[s].flags & SB_SLOT_JOURNAL); /* a missing journal's place stays its */
}

/* A free slot for a spare (a leftover, or a new one past the last). -1 when full. */
static int free_slot(struct vol *v)
{
	for (unsigned s = v->geom.members; s < v->nslots; s++)
		if (leftover(v, s))
			return (int)s;
	if (v->nslots < SB_MAX_SLOTS) {
		v->sb.spares++;
		return (int)v->nslots++;
	}
	return -1;
}

int vol_add(struct vol *v, const char *path, char *err, size_t errlen)
{
	return vol_add_flags(v, path, 0, err, errlen);
}

int vol_add_flags(struct vol *v, const char *path, unsigned flags, char *err, size_t errlen)
{
	if (flags && vol_flags_check(&v->geom, flags, err, errlen))
		return -EINVAL;
	/* raid0 and linear: a spare only fsvol grow can use */
	if (!redundant(v) && v->geom.level != LAYOUT_RAID0 && v->geom.level != LAYOUT_LINEAR) {
		snprintf(err, errlen, "%s has no redundancy: a spare could never be used", layout_level_name(v->geom.level));
		return -EINVAL;
	}
	vol_state_lock(v);
	struct member *m = open_new(v, path, err, errlen);
	if (!m) {
		pthread_mutex_unlock(&v->state_lock);
		return -EINVAL;
	}
	int s = free_slot(v);
	if (s < 0)
		snprintf(err, errlen, "%s: every one of the %d slots is taken", path, SB_MAX_SLOTS);
	if (s < 0) {
		close_new(v, m);
		pthread_mutex_unlock(&v->state_lock);
		return -ENOSPC;
	}
	int r = with_stats(v, m, err, errlen);
	if (r) {
		pthread_mutex_unlock(&v->state_lock);
		return r;
	}
	struct sb_slot was = v->sb.slots[s];
	/* md: a new device takes the lowest free Number (a leftover's is free) */
	v->sb.slots[s].number = (uint16_t)vol_number_free(v, s);
	v->slot[s] = m;
	m->slot = s;
	v->sb.slots[s].state = SB_SPARE;
	sb_uuid_generate(v->sb.slots[s].uuid);
	v->sb.slots[s].data_size = v->sb.slots[0].data_size;
	v->sb.slots[s].rebuild_pos = 0;
	v->sb.slots[s].flags = (uint8_t)flags; /* md's per-device flags go with it when it takes a role */
	v->sb.events++;
	/* the new member first: one that cannot hold a superblock is no spare */
	r = vol_write_sb_slot(v, (unsigned)s);
	if (r) {
		v->slot[s] = NULL;
		v->sb.slots[s] = was;
		close_new(v, m);
		pthread_mutex_unlock(&v->state_lock);
		snprintf(err, errlen, "%s: writing its superblock: %s", path, strerror(-r));
		return r;
	}
	/* the others (failed members are left alone): an error there is the
	 * member's, logged; the spare is recorded and the recovery goes on */
	if ((r = vol_write_sbs(v)))
		fsvol_log(LOG_ERR, "%s added, but writing the other members' superblocks: %s", path, strerror(-r));
	pthread_mutex_unlock(&v->state_lock);
	fsvol_log(LOG_NOTICE, "%s added as a spare (slot %d)", path, s);
	vol_recovery_kick(v);
	return 0;
}

int vol_slot_of(const struct vol *v, const char *which)
{
	int n = vol_parse_number(which);
	if (n >= 0 || (which[0] >= '0' && which[0] <= '9'))
		return n >= 0 ? vol_slot_of_number(v, (unsigned)n) : -1;
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && !strcmp(v->slot[i]->path, which))
			return (int)i;
	/* another spelling of a member's file (a link to it, a hard link): the
	 * member with its identity (member_file.c: st_rdev of a device) */
	struct stat st;
	if (member_backend(which) != &member_file_ops || stat(which, &st))
		return -1;
	uint64_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev, ino = S_ISBLK(st.st_mode) ? 0 : st.st_ino;
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && member_backend(v->slot[i]->path) == &member_file_ops && v->slot[i]->dev == dev &&
		    v->slot[i]->ino == ino)
			return (int)i;
	return -1;
}

/* The slot table forgets entry s: empty, its device Number free again. */
static void slot_forget(struct vol *v, unsigned s)
{
	memset(&v->sb.slots[s], 0, sizeof(v->sb.slots[s]));
	v->sb.slots[s].state = SB_EMPTY;
	v->sb.slots[s].number = SB_NO_NUMBER;
}

int vol_remove(struct vol *v, const char *which, char *err, size_t errlen)
{
	vol_state_lock(v);
	int s = vol_slot_of(v, which), r = 0;
	const char *st = s >= 0 ? vol_slot_state(v, (unsigned)s) : NULL;
	if (s >= 0 && leftover(v, (unsigned)s) && v->sb.slots[s].state != SB_EMPTY) {
		/* an entry without its member (failed out of a role, then left
		 * out at assembly): only the table forgets it */
		fsvol_log(LOG_NOTICE, "slot %d (%s, no member present) removed", s, st);
		slot_forget(v, (unsigned)s);
		v->sb.events++;
		vol_write_sbs(v);
		pthread_mutex_unlock(&v->state_lock);
		return 0;
	}
	if (s < 0 || !v->slot[s]) {
		snprintf(err, errlen, "remove %s: no member there (give a member's Number, mN as fsvol status names it, "
			 "or its path)", which);
		r = -ENOENT;
	} else if (s == atomic_load(&v->replace_with)) {
		/* md: a replacement under way is in a role, not a spare */
		snprintf(err, errlen, "remove %s: m%d is being built to replace m%d (a replace is running)", which,
			 vol_slot_number(v, (unsigned)s), vol_slot_number(v, (unsigned)atomic_load(&v->replace_slot)));
		r = -EBUSY;
	} else if (strcmp(st, "failed") && strcmp(st, "spare")) {
		/* mdadm: "device or resource busy": fail it first */
		snprintf(err, errlen, "remove %s: m%d is %s; only failed or spare members can be removed "
			 "(fail it first)", which, vol_slot_number(v, (unsigned)s), st);
		r = -EBUSY;
	} else if (atomic_load(&vol_ms(v, v->slot[s])->pending)) {
		snprintf(err, errlen, "remove %s: m%d still has I/O in flight; retry", which, vol_slot_number(v, (unsigned)s));
		r = -EBUSY;
	}
	if (r) {
		pthread_mutex_unlock(&v->state_lock);
		return r;
	}
	struct member *m = v->slot[s];
	fsvol_log(LOG_NOTICE, "%s (slot %d, %s) removed", m->path, s, st);
	/* the struct stays (its counters may be read right now); the backend goes */
	v->slot[s] = NULL;
	if ((unsigned)s < v->geom.members)
		v->sb.slots[s].state = SB_MISSING;
	else
		slot_forget(v, (unsigned)s);
	v->sb.events++;
	vol_write_sbs(v);
	pthread_mutex_unlock(&v->state_lock);
	vol_peek_wait(v);
	m->ops->close(m);
	/* the entry is free for the next add from here (free_entry reads it
	 * under the state lock) */
	vol_state_lock(v);
	m->ops = NULL;
	pthread_mutex_unlock(&v->state_lock);
	return 0;
}

int vol_readd(struct vol *v, const char *path, char *err, size_t errlen)
{
	struct sb_candidate cand = { 0 };
	if (!redundant(v)) {
		snprintf(err, errlen, "%s has no redundancy to rebuild a member from", layout_level_name(v->geom.level));
		return -EINVAL;
	}
	vol_state_lock(v);
	/* the old handle of the same member, if the volume still holds it, goes first */
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && !strcmp(v->slot[i]->path, path)) {
			const char *st = vol_slot_state(v, i);
			if (strcmp(st, "failed")) {
				pthread_mutex_unlock(&v->state_lock);
				snprintf(err, errlen, "re-add %s: it is m%d, %s, not a former member", path, vol_slot_number(v, i), st);
				return -EBUSY;
			}
			struct member *old = v->slot[i];
			v->slot[i] = NULL;
			if (i >= v->geom.members) {
				v->sb.slots[i].state = SB_EMPTY;
				v->sb.slots[i].number = SB_NO_NUMBER;
			}
			vol_peek_wait(v);
			old->ops->close(old);
			old->ops = NULL;
		}
	struct member *m = open_new(v, path, err, errlen);
	if (!m) {
		pthread_mutex_unlock(&v->state_lock);
		return -EINVAL;
	}
	int r = vol_read_sb(m, &cand);
	unsigned k = cand.sb.index;
	if (r || cand.read_error || cand.decode_error || memcmp(cand.sb.volume_uuid, v->sb.volume_uuid, 16) ||
	    k >= v->geom.members || memcmp(cand.sb.member_uuid, v->sb.slots[k].uuid, 16)) {
		snprintf(err, errlen, "re-add %s: not a former member of this volume (use add)", path);
		r = -EINVAL;
	} else if (!(atomic_load(&v->failed) & (1ull << k)) || v->slot[k] || atomic_load(&v->rebuild_slot) >= 0) {
		snprintf(err, errlen, "re-add %s: its raid device %u is %s", path, k,
			 atomic_load(&v->rebuild_slot) >= 0 ? "busy: a recovery is running" : vol_slot_state(v, k));
		r = -EBUSY;
	}
	if (r)
		close_new(v, m);
	else
		r = with_stats(v, m, err, errlen); /* closes it on failure */
	if (r) {
		pthread_mutex_unlock(&v->state_lock);
		return r;
	}
	/* with a write-intent bitmap only the regions written while it was away
	 * are rebuilt (bits are never cleared while degraded, as md); without
	 * one, the whole member (mdadm --add). The bitmap records writes, not a
	 * reshape's restriping: a member that left before a reshape ended (its
	 * superblock mid-reshape or in another geometry) is rebuilt whole, as
	 * md's --add after a reshape (a partial one marked it in sync with rows
	 * of the old geometry) */
	const struct sb *was = &cand.sb;
	int missed_reshape = was->reshape_flags || v->sb.reshape_flags || was->members != v->sb.members ||
			     was->level != v->sb.level || was->layout != v->sb.layout || was->chunk != v->sb.chunk;
	if (v->bitmap && !missed_reshape)
		vol_bitmap_partial(v, (int)k);
	v->slot[k] = m;
	m->slot = (int)k;
	v->sb.slots[k].state = SB_REBUILDING;
	v->sb.slots[k].rebuild_pos = 0;
	vol_rebuild_set(v, (int)k, 0);
	v->sb.events++;
	vol_write_sbs(v);
	pthread_mutex_unlock(&v->state_lock);
	fsvol_log(LOG_NOTICE, "%s re-added as member %u: recovery starts%s", path, k,
		!v->bitmap ? "" : missed_reshape ? " (all of it: it missed a reshape)" : " (the bitmap's dirty regions)");
	vol_recovery_kick(v);
	return 0;
}

int vol_set_flag(struct vol *v, const char *which, unsigned flag, int on, char *err, size_t errlen)
{
	int r = vol_flags_check(&v->geom, flag, err, errlen);
	if (r)
		return r;
	vol_state_lock(v);
	int s = vol_slot_of(v, which);
	if (s < 0 || (!v->slot[s] && v->sb.slots[s].state == SB_EMPTY)) {
		pthread_mutex_unlock(&v->state_lock);
		snprintf(err, errlen, "%s %s: no member there (give a member's Number, mN as fsvol status names it, or its path)",
			 vol_flag_name(flag), which);
		return -ENOENT;
	}
	uint8_t was = v->sb.slots[s].flags, now = (uint8_t)(on ? was | flag : was & ~flag);
	if (now != was) {
		__atomic_store_n(&v->sb.slots[s].flags, now, __ATOMIC_RELAXED);
		v->sb.events++;
		if ((r = vol_write_sbs(v)))
			fsvol_log(LOG_ERR, "%s %s: writing the superblocks: %s", vol_flag_name(flag), which, strerror(-r));
		fsvol_log(LOG_NOTICE, "member %d (%s): %s %s", s, v->slot[s] ? v->slot[s]->path : "missing",
			  vol_flag_name(flag), on ? "on" : "off");
	}
	pthread_mutex_unlock(&v->state_lock);
	return 0;
}

/* The replace ends without a swap: no pair, no record (state lock held). */
void vol_replace_end(struct vol *v)
{
	int s = atomic_exchange(&v->replace_with, -1);
	atomic_store(&v->replace_slot, -1);
	if (s >= 0 && (unsigned)s < v->nslots) {
		v->sb.slots[s].flags &= (uint8_t)~SB_SLOT_REPLACEMENT;
		v->sb.slots[s].replaces = 0;
		v->sb.slots[s].rebuild_pos = 0;
	}
}

int vol_replace_takeover(struct vol *v)
{
	if (!(atomic_load(&v->replace_epoch) & 1))
		return 0;
	int k = atomic_load(&v->replace_slot), s = atomic_load(&v->replace_with);
	uint64_t failed = atomic_load(&v->failed), pos = atomic_load(&v->replace_pos);
	if (k >= 0 && s >= 0 && !((failed >> k) & 1))
		return 0; /* its failure is still being marked: the kick that follows it does this */
	if (k >= 0 && s >= 0 && v->slot[s] && atomic_load(&v->rebuild_slot) < 0 &&
	    layout_survives(&v->geom, failed)) {
		/* md: the replacement becomes the recovering device, keeping its progress */
		vol_replace_end(v);
		vol_take_over(v, (unsigned)k, (unsigned)s, pos);
		fsvol_log(LOG_NOTICE, "member %d failed during its replace: its replacement %s takes the role; the "
			  "recovery goes on from %.1f%% (what the replace had built)", k, v->slot[k]->path, 100.0 * (double)pos / (double)(v->geom.capacity ? v->geom.capacity : 1));
	} else if (k >= 0) {
		vol_replace_end(v);
		v->sb.events++;
	}
	vol_write_sbs(v);
	return 1;
}

void vol_replace_release(struct vol *v)
{
	pthread_mutex_lock(&v->rebuild_lock);
	if (atomic_load(&v->replace_epoch) & 1)
		atomic_fetch_add(&v->replace_epoch, 1);
	struct vol_waiter *w = v->replace_waiters;
	v->replace_waiters = NULL;
	pthread_mutex_unlock(&v->rebuild_lock);
	while (w) {
		struct vol_waiter *n = w->next;
		w->resume(w);
		w = n;
	}
}
