/* volume: create, assemble, state changes and close of a volume.
 * The superblock format is in sb.c; the assembly rules in assemble.c. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/members/fault.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "fsvol/util/size.h"
#include "fsvol/model/spindle.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/core/bbl_vol.h"
#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/ppl.h"
#include "fsvol/meta/bbl.h"
#include "fsvol/core/write_behind.h"
#include "fsvol/core/failfast.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/reshape.h"
#include "fsvol/meta/bitmap.h"
#include "fsvol/core/md1_io.h"
#include "stats/stats.h"

/* mdstat's progress line: a bar, percent, position, finish estimate, speed. */
static void vol_status_progress(const struct vol_sync_info *si, FILE *f)
{
	double frac = si->total ? (double)si->pos / (double)si->total : 1;
	char bar[21];
	unsigned fill = (unsigned)(frac * 20);
	for (unsigned i = 0; i < 20; i++)
		bar[i] = i < fill ? '=' : i == fill ? '>' : '.';
	bar[20] = 0;
	fprintf(f, "      [%s]  %s = %.1f%% (%llu/%llu) finish=%.1fmin speed=%.0fK/sec (min %u, max %u)%s\n", bar,
		si->what, 100 * frac, (unsigned long long)si->pos, (unsigned long long)si->total, si->eta_s / 60,
		si->speed_kibs, si->speed_min, si->speed_max, si->held ? " held at sync_max" : "");
}

/* A replace under way: " (being replaced by m4)" on the role, " (replacing m1)"
 * on the new member, so the pair reads off either line. */
static void vol_status_replace(const struct vol *v, FILE *f, unsigned i)
{
	char name[VOL_NAME_LEN];
	int other, r = vol_replace_pair(v, i, &other);
	if (r)
		vol_slot_name(v, (unsigned)other, name);
	if (r == VOL_REPLACED)
		fprintf(f, " (being replaced by %s)", name);
	else if (r == VOL_REPLACING)
		fprintf(f, " (replacing %s)", name);
}

/* md's per-device flags: mdstat's "(W)" for write-mostly, sysfs' "failfast". */
static void vol_status_flags(const struct vol *v, FILE *f, unsigned i)
{
	unsigned fl = vol_slot_flags(v, i);
	if (fl & SB_SLOT_WRITE_MOSTLY)
		fputs(" (W)", f);
	if (fl & SB_SLOT_FAILFAST)
		fputs(" (failfast)", f);
}

int vol_replace_pair(const struct vol *v, unsigned slot, int *other)
{
	int k = atomic_load(&v->replace_slot), w = atomic_load(&v->replace_with);
	if (k < 0 || w < 0)
		return 0;
	*other = (int)slot == k ? w : k;
	return (int)slot == k ? VOL_REPLACED : (int)slot == w ? VOL_REPLACING : 0;
}

void vol_status(struct vol *v, FILE *f)
{
	const struct layout_geom *g = &v->geom;
	uint64_t failed = atomic_load(&v->failed);
	char chunk[32], cap[32], uuid[37], name[SB_NAME_MAX + 1];
	unsigned up = 0;
	size_format(g->chunk, chunk, sizeof(chunk));
	size_format(g->capacity, cap, sizeof(cap));
	sb_uuid_format(v->sb.volume_uuid, uuid);
	/* during a reshape the roles are the new geometry's, as md's raid_disks:
	 * a member the reshape adds shows in the [n/m] [U_] part too */
	unsigned roles = vol_roles(v);
	for (unsigned i = 0; i < roles; i++)
		up += !(failed & (1ull << i));
	sb_volume_name(&v->sb, name);
	fprintf(f, "%s : active %s", name, layout_level_name(g->level));
	if (layout_alg_name(g)[0])
		fprintf(f, " %s", layout_alg_name(g));
	fprintf(f, " chunk %s, %u member%s [%u/%u] [", chunk, roles, roles == 1 ? "" : "s", roles, up);
	for (unsigned i = 0; i < roles; i++)
		fputc(failed & (1ull << i) ? '_' : 'U', f);
	fprintf(f, "]\n      %llu bytes (%s), uuid %s, events %llu, %s\n",
		(unsigned long long)g->capacity, cap, uuid, (unsigned long long)v->sb.events,
		failed ? (layout_survives(g, failed) ? "degraded" : "failed") : "healthy");
	for (unsigned i = 0; i < v->nslots; i++) {
		char faults[512] = "none", name[VOL_NAME_LEN];
		struct member *m = v->slot[i]; /* one look: a remove may empty the slot (the struct stays) */
		if (i >= g->members && !m && v->sb.slots[i].state == SB_EMPTY)
			continue; /* a removed spare's entry: nothing is there, nothing to show */
		if (m) { /* its filters: a remove waits before closing them (vol_peek_wait) */
			atomic_fetch_add(&v->peek, 1);
			if (v->slot[i] == m)
				member_fault_describe(m, faults, sizeof(faults));
			atomic_fetch_sub(&v->peek, 1);
		}
		vol_slot_name(v, i, name);
		fprintf(f, "      %s: %s %s", name, m ? m->path : "(missing)", vol_slot_state(v, i));
		/* the role, where the Number does not tell it (md's RaidDevice) */
		if (i < g->members && vol_slot_number(v, i) != (int)i)
			fprintf(f, " (role %u)", i);
		vol_status_replace(v, f, i);
		if (v->sb.slots[i].flags & SB_SLOT_JOURNAL)
			fputs(" (write journal)", f);
		uint64_t bad_sectors;
		unsigned bad = vol_bbl_count(v, i, &bad_sectors);
		if (bad) /* md's bad block log */
			fprintf(f, " (bad blocks: %u, %llu sectors)", bad, (unsigned long long)bad_sectors);
		vol_status_flags(v, f, i);
		if (strcmp(faults, "none"))
			fprintf(f, " (faults: %s)", faults);
		fputc('\n', f);
	}
	if (vol_resync_pending(v))
		fprintf(f, "      resync pending: %s; it runs %s\n",
			v->q_rewrite ? "Q written in the data order by an fsvol before format 5, rewritten in md's"
				     : "not shut down cleanly",
			atomic_load(&v->rebuild_slot) >= 0 ? "after the recovery"
			: "when the volume is whole again (a spare rebuilt)");
	struct vol_sync_info si;
	vol_sync_info(v, &si);
	if (si.what) {
		fprintf(f, "      %s %s: %.1f%% (%llu/%llu %s), %llu mismatch%s", si.what,
			si.running ? "running" : si.done ? "done" : "stopped",
			si.total ? 100.0 * (double)si.pos / (double)si.total : 100.0, (unsigned long long)si.pos,
			(unsigned long long)si.total, !strcmp(si.what, "reshape") ? "windows" : layout_is_parity(g) ? "stripes" : "chunks",
			(unsigned long long)si.mismatches, si.mismatches == 1 ? "" : "es");
		if (si.skipped) /* honest: these could not be checked at all */
			fprintf(f, ", %llu skipped (no redundancy to check against)", (unsigned long long)si.skipped);
		fputc('\n', f);
		if (si.running)
			vol_status_progress(&si, f);
	}
	if (v->model[0] && !v->emul)
		fprintf(f, "      model %s\n", v->model);
	if (v->emul) {
		double p50, p99;
		uint64_t count;
		char keeper[64];
		emul_lateness(v->emul, &p50, &p99, &count);
		emul_keeper(v->emul, keeper, sizeof(keeper));
		fprintf(f, "      model %s: %llu completions released, lateness p50 %.1f us, p99 %.1f us, "
			"timer slack %llu us, clock on %s\n", v->model, (unsigned long long)count, p50 / 1000, p99 / 1000,
			(unsigned long long)(emul_slack(v->emul) / 1000), keeper);
	}
	vol_reshape_status(v, f);
	vol_feat_status(v, f);
	vol_model_status(v, f);
	fprintf(f, "pid: %d\n", (int)getpid());
}

static int vol_alloc(struct vol **out, const struct vol_opts *opts)
{
	struct vol *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->opts = *opts;
	pthread_mutex_init(&v->state_lock, NULL);
	atomic_init(&v->rebuild_slot, -1);
	pthread_mutex_init(&v->rebuild_lock, NULL);
	vol_md_init(v);
	atomic_init(&v->replace_slot, -1);
	atomic_init(&v->replace_with, -1);
	if (vol_sync_create(v)) {
		free(v);
		return -ENOMEM;
	}
	*out = v;
	return 0;
}

static void vol_free(struct vol *v)
{
	if (!v)
		return;
	emul_destroy(v->emul);
	vol_feat_free(v);
	engine_fini(v);
	free(v->adapters);
	for (unsigned i = 0; i < v->nmembers; i++) {
		member_close(&v->members[i]);
		free(v->mstate[i].spindle);
		if (v->members[i].stats)
			stats_dev_destroy(v->members[i].stats);
	}
	if (v->vstats)
		stats_dev_destroy(v->vstats);
	if (v->trace)
		stats_trace_destroy(v->trace);
	free(v->members);
	free(v->mstate);
	pthread_mutex_destroy(&v->state_lock);
	vol_sync_destroy(v);
	vol_reshape_free(v);
	pthread_mutex_destroy(&v->rebuild_lock);
	vol_md_destroy(v);
	free(v);
}

int vol_grow(struct vol *v, const char *spec, char *err, size_t errlen)
{
	struct vol_sync_info si;
	vol_sync_info(v, &si);
	if (si.running && !vol_reshaping(v)) {
		snprintf(err, errlen, "grow: a %s is running: wait for it", si.what);
		return -EBUSY;
	}
	/* md refuses these too: the logs and the lists are in the old geometry */
	if (v->sb.consistency == SB_CONS_PPL || v->sb.consistency == SB_CONS_JOURNAL) {
		snprintf(err, errlen, "grow: the volume has a %s: md does not reshape with one either",
			 v->sb.consistency == SB_CONS_PPL ? "partial parity log" : "write journal");
		return -EOPNOTSUPP;
	}
	for (unsigned i = 0; i < v->nslots; i++)
		if (vol_bad_blocks(v, i, NULL)) {
			char name[VOL_NAME_LEN];
			vol_slot_name(v, i, name);
			snprintf(err, errlen, "grow: %s (%s) has blocks in its bad-block list: replace it first", name,
				 v->slot[i] ? v->slot[i]->path : "missing");
			return -EBUSY;
		}
	return vol_reshape_grow(v, spec, err, errlen);
}

int vol_start(struct vol *v)
{
	/* Threads do not survive fork: start them in the process that serves. */
	if (v->started)
		return 0; /* once: the NBD export and its FUSE mount share the volume */
	v->started = 1;
	if (v->modeled && !v->emul && vol_model_start(v))
		return -EAGAIN;
	int r = v->opts.readonly ? 0 : vol_md_start(v);
	/* a reshape under way resumes first (the resync a crash owes follows it);
	 * a recovery is asked for now and runs after it: a spare that took over
	 * during a degraded reshape, or one at hand (without this the volume
	 * stayed degraded once the reshape ended) */
	if (!r && vol_reshaping(v) && !v->opts.readonly) {
		vol_recovery_kick(v);
		return vol_pass_start(v, VOL_PASS_RESHAPE);
	}
	/* an interrupted recovery, or a spare and a failed member: rebuild
	 * first (the volume gets its redundancy back soonest) */
	if (!r)
		vol_recovery_kick(v);
	/* Not shut down cleanly: a write may have reached some members and not
	 * others. Bring the redundancy back in line, in the background (md):
	 * now, or after the recovery (status shows it pending meanwhile). */
	if (!r && vol_resync_owed(v) && atomic_load(&v->rebuild_slot) < 0)
		r = vol_pass_start(v, VOL_PASS_RESYNC);
	/* a replace the superblocks record goes on (after those, sync.c) */
	if (!r)
		vol_replace_resume(v);
	/* the features' threads (failfast's watchdog, write-behind's) */
	if (!r)
		vol_feat_start(v);
	return r;
}

/* The roles of the assembled volume and which of them are failed, missing
 * or rebuilding (an interrupted recovery resumes from its checkpoint). */
static uint64_t open_roles(struct vol *v, unsigned *nroles)
{
	uint64_t failed = 0;
	/* a reshape under way: the slots it adds hold the windows below
	 * reshape_pos, so their members count as roles (failed or missing too) */
	unsigned roles = v->geom.members;
	if ((v->sb.reshape_flags & SB_RESHAPE_ACTIVE) && v->sb.new_members > roles && v->sb.new_members <= v->nslots)
		roles = v->sb.new_members;
	for (unsigned i = 0; i < roles; i++) {
		if (!v->slot[i] || v->sb.slots[i].state == SB_FAILED || v->sb.slots[i].state == SB_MISSING)
			failed |= 1ull << i;
		if (v->slot[i] && v->sb.slots[i].state == SB_REBUILDING && atomic_load(&v->rebuild_slot) < 0) {
			/* an interrupted recovery resumes from its saved checkpoint
			 * (member bytes on disk, logical bytes in memory) */
			failed |= 1ull << i;
			vol_rebuild_set(v, (int)i, vol_rebuild_from_member(v, v->sb.slots[i].rebuild_pos));
		} else if (v->sb.slots[i].state == SB_REBUILDING) {
			failed |= 1ull << i;
		}
	}
	*nroles = roles;
	return failed;
}

/* The volume's and each present member's counters: 0 or -ENOMEM. */
static int open_counters(struct vol *v)
{
	if (!(v->vstats = stats_dev_create()))
		return -ENOMEM;
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && !(v->slot[i]->stats = stats_dev_create()))
			return -ENOMEM;
	return 0;
}

/* Open the given members, wrap them in their fault filters, read their
 * superblocks into cand (an unreadable one is a candidate that says why). */
static int open_members(struct vol *v, struct sb_candidate *cand, char *const *paths, unsigned n,
			const struct vol_opts *opts, char *err, size_t errlen)
{
	int r;
	for (unsigned i = 0; i < n; i++) {
		struct member *m = &v->members[i];
		char why[sizeof(cand[i].why)];
		cand[i].path = paths[i];
		r = member_open(m, paths[i], !opts->buffered && !opts->readonly, why, sizeof(why));
		if (r == -EINVAL && (strstr(why, "O_DIRECT") || strstr(why, "not a regular file"))) {
			snprintf(err, errlen, "%s", why);
			return r;
		}
		if (r) {
			cand[i].read_error = r;
			snprintf(cand[i].why, sizeof(cand[i].why), "%s", strerror(-r));
			continue;
		}
		/* Faults can be set on a served member at any time (--fault, ctl). */
		if (!opts->readonly && (r = member_fault_wrap(m)))
			return r;
		cand[i].size = m->size;
		cand[i].dev = m->dev;
		cand[i].ino = m->ino;
		if ((r = vol_read_sb(m, &cand[i])))
			return r;
	}
	return 0;
}

/* md's rule: a dirty degraded parity volume does not start unforced. */
static int dirty_degraded(struct vol *v, uint64_t failed, char *err, size_t errlen)
{
	if (v->was_dirty && failed && layout_is_parity(&v->geom) && !v->opts.force && !v->opts.readonly) {
		/* md's rule: interrupted writes may have left a stripe's parity
		 * stale, and with a member missing that stripe would rebuild wrong.
		 * A member whose recovery was interrupted counts as missing above
		 * its checkpoint (md: not In_sync, so degraded). */
		int k = atomic_load(&v->rebuild_slot);
		if (k >= 0 && failed == 1ull << k)
			snprintf(err, errlen, "cannot start a dirty degraded %s: member %d was being rebuilt (%.0f%% done) "
				 "when it stopped uncleanly, and writes in flight then may have left parity stale where "
				 "it is not rebuilt yet; use --force to resume the recovery (the resync it owes follows)",
				 layout_level_name(v->geom.level), k,
				 100.0 * (double)atomic_load(&v->rebuild_pos) / (double)v->geom.capacity);
		else
			snprintf(err, errlen, "cannot start a dirty degraded %s (not shut down cleanly, member slot(s) "
				 "missing): data written at the crash may be wrong; use --force to start it anyway",
				 layout_level_name(v->geom.level));
		return -EINVAL;
	}
	return 0;
}

int vol_open(struct vol **out, char *const *paths, unsigned n, const struct vol_opts *opts,
	     char *err, size_t errlen)
{
	struct vol *v;
	struct sb_candidate *cand = NULL;
	struct sb_assembly as;
	int r;

	*out = NULL;
	if (n == 0 || n > SB_MAX_SLOTS) {
		snprintf(err, errlen, "need 1 to %u members, got %u", SB_MAX_SLOTS, n);
		return -EINVAL;
	}
	if ((r = vol_alloc(&v, opts)))
		return r;
	/* room for members added at run time: slots point into this array */
	v->members = calloc(SB_MAX_SLOTS, sizeof(*v->members));
	v->mstate = calloc(SB_MAX_SLOTS, sizeof(*v->mstate));
	cand = calloc(n, sizeof(*cand));
	if (!v->members || !v->mstate || !cand) {
		r = -ENOMEM;
		goto fail;
	}
	v->nmembers = n;
	if ((r = open_members(v, cand, paths, n, opts, err, errlen)))
		goto fail;
	if ((r = sb_assemble(cand, n, opts->force, &as, err, errlen)))
		goto fail;
	/* members left out, or taken back by --force: the user must hear which */
	for (unsigned i = 0; i < n && !opts->readonly; i++)
		if (cand[i].note[0])
			fprintf(stderr, "fsvol: warning: %s: %s\n", cand[i].path, cand[i].note);
	v->sb = as.sb;
	v->was_dirty = !as.sb.clean;
	v->nslots = as.sb.members + as.sb.spares;
	v->data_offset = as.sb.data_offset;
	if ((r = sb_geom(&as.sb, &v->geom, err, errlen)) || (r = engine_init(v)))
		goto fail;
	for (unsigned i = 0; i < v->nslots; i++)
		if (as.slot_of[i] >= 0 && !opts->readonly && member_lock(&v->members[as.slot_of[i]])) {
			/* mdadm: "device busy". Two daemons must never write one member. */
			snprintf(err, errlen, "%s: in use by another mounted fsvol volume",
				 v->members[as.slot_of[i]].path);
			r = -EBUSY;
			goto fail;
		}
	for (unsigned i = 0; i < v->nslots; i++)
		if (as.slot_of[i] >= 0) {
			v->slot[i] = &v->members[as.slot_of[i]];
			v->slot[i]->slot = (int)i;
			v->slot[i]->data_offset = v->data_offset;
		}
	/* Counters exist at every level so the level can change at run time;
	 * from here on, so what assembly reads and replays counts too. */
	atomic_store(&v->stats_level, opts->stats);
	if ((r = open_counters(v)))
		goto fail;
	vol_numbers_fix(v);
	vol_replace_load(v); /* before the roles' states are read: a replacement may take one */
	unsigned roles;
	uint64_t failed = open_roles(v, &roles);
	atomic_store(&v->failed, failed);
	if (!layout_survives(&v->geom, failed)) {
		int len = snprintf(err, errlen, "%s cannot run without member slot(s)",
				   layout_level_name(v->geom.level));
		for (unsigned i = 0; i < v->geom.members && len > 0 && (size_t)len < errlen; i++)
			if (failed & (1ull << i))
				len += snprintf(err + len, errlen - (size_t)len, " %u", i);
		r = -ENODEV;
		goto fail;
	}
	if ((r = vol_reshape_load(v, err, errlen)))
		goto fail;
	/* the features, in hook order: the stripe log first, which puts
	 * interrupted stripes right (no resync, and a dirty degraded raid5
	 * starts, md), then the bitmap, the bad-block lists, write-behind,
	 * failfast, safe mode (feature.h) */
	if ((r = vol_feat_open(v, err, errlen)))
		goto fail;
	if ((r = vol_q_order_open(v, failed, err, errlen)))
		goto fail;
	if ((r = dirty_degraded(v, failed, err, errlen)))
		goto fail;
	if (opts->model) {
		char why[512];
		if ((r = vol_model(v, opts->model, why, sizeof(why)))) {
			snprintf(err, errlen, "--model %s", why);
			goto fail;
		}
	}
	if (!(v->trace = stats_trace_create(1u << 16))) {
		r = -ENOMEM;
		goto fail;
	}
	v->start_ns = stats_now();
	atomic_store(&v->reset_ns, v->start_ns);
	if (!opts->readonly) {
		/* Missing members become stale: their events stay behind. */
		for (unsigned i = 0; i < roles; i++)
			if ((failed & (1ull << i)) && (v->sb.slots[i].state == SB_ACTIVE ||
						       (i >= v->geom.members && v->sb.slots[i].state == SB_SPARE)))
				v->sb.slots[i].state = v->slot[i] ? SB_FAILED : SB_MISSING;
		v->sb.events++;
		v->sb.clean = !v->was_dirty; /* md's safe mode: dirty from the first write (safe_mode.c) */
		if ((r = vol_write_sbs(v))) {
			snprintf(err, errlen, "writing superblocks: %s", strerror(-r));
			goto fail;
		}
	}
	free(cand);
	*out = v;
	return 0;
fail:
	free(cand);
	vol_free(v);
	return r < 0 ? r : -EINVAL;
}

void vol_close(struct vol *v)
{
	if (!v)
		return;
	void *pump = vol_model_pump_start(v); /* virtual time: someone must run the clock */
	vol_sync_stop(v);
	vol_feat_quiesce(v); /* no bad-block fix starts any more */
	engine_drain(v);
	if (!v->opts.readonly) {
		engine_flush(v);
		vol_md_stop(v); /* after the last write: it writes what is pending */
		vol_feat_close(v); /* the bitmap's all-clear image */
		vol_state_lock(v);
		/* an interrupted resync stays owed: the next assembly starts it again */
		v->sb.clean = !v->was_dirty;
		v->sb.events++;
		vol_write_sbs(v);
		pthread_mutex_unlock(&v->state_lock);
	}
	vol_feat_stop(v); /* after the last write: a stalled failfast member never holds up the close */
	vol_model_pump_stop(pump);
	vol_free(v);
}

const struct layout_geom *vol_geom(const struct vol *v) { return &v->geom; }
unsigned vol_bad_blocks(const struct vol *v, unsigned slot, uint64_t *sectors) { return vol_bbl_count(v, slot, sectors); }
unsigned vol_nslots(const struct vol *v) { return v->nslots; }
struct member *vol_member(const struct vol *v, unsigned slot) { return slot < v->nslots ? v->slot[slot] : NULL; }
uint64_t vol_failed_mask(const struct vol *v) { return atomic_load(&v->failed); }
const struct sb *vol_sb(const struct vol *v) { return &v->sb; }
uint64_t vol_data_offset(const struct vol *v) { return v->data_offset; }
int vol_was_dirty(const struct vol *v) { return v->was_dirty; }
struct stats_dev *vol_stats(const struct vol *v) { return v->vstats; }
struct stats_trace *vol_trace(const struct vol *v) { return v->trace; }
uint64_t vol_start_ns(const struct vol *v) { return v->start_ns; }
uint64_t vol_reset_ns(const struct vol *v) { return atomic_load(&v->reset_ns); }
void vol_set_reset_ns(struct vol *v, uint64_t ns) { atomic_store(&v->reset_ns, ns); }
enum vol_stats_level vol_stats_level(const struct vol *v) { return (enum vol_stats_level)atomic_load(&v->stats_level); }
void vol_set_stats_level(struct vol *v, enum vol_stats_level l) { atomic_store(&v->stats_level, (int)l); }

