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
		fprintf(f, "      resync pending: not shut down cleanly; it runs %s\n",
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
		fprintf(f, "      model %s: %llu completions released, lateness p50 %.1f us, p99 %.1f us, clock on %s\n",
			v->model, (unsigned long long)count, p50 / 1000, p99 / 1000, keeper);
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
	for (unsigned i = 0; i < n; i++) {
		struct member *m = &v->members[i];
		char why[sizeof(cand[i].why)];
		cand[i].path = paths[i];
		r = member_open(m, paths[i], !opts->buffered && !opts->readonly, why, sizeof(why));
		if (r == -EINVAL && (strstr(why, "O_DIRECT") || strstr(why, "not a regular file"))) {
			snprintf(err, errlen, "%s", why);
			goto fail;
		}
		if (r) {
			cand[i].read_error = r;
			snprintf(cand[i].why, sizeof(cand[i].why), "%s", strerror(-r));
			continue;
		}
		/* Faults can be set on a served member at any time (--fault, ctl). */
		if (!opts->readonly && (r = member_fault_wrap(m)))
			goto fail;
		cand[i].size = m->size;
		cand[i].dev = m->dev;
		cand[i].ino = m->ino;
		if ((r = vol_read_sb(m, &cand[i])))
			goto fail;
	}
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
	if (!(v->vstats = stats_dev_create())) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && !(v->slot[i]->stats = stats_dev_create())) {
			r = -ENOMEM;
			goto fail;
		}
	vol_numbers_fix(v);
	vol_replace_load(v); /* before the roles' states are read: a replacement may take one */
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
	if (v->was_dirty && failed && layout_is_parity(&v->geom) && !opts->force && !opts->readonly) {
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
		r = -EINVAL;
		goto fail;
	}
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

/* ---- create ---- */

/* What create learns about a member before it changes anything. */
struct create_probe {
	int exists;
	uint64_t size; /* bytes it will have */
};

/* Look at a member without changing it: exists? size? already a member? in use? */
static int create_probe(const struct vol_create *c, const char *path, uint64_t need,
			struct create_probe *pr, struct member *m, char *err, size_t errlen)
{
	memset(pr, 0, sizeof(*pr));
	int r = member_open(m, path, 0, err, errlen);
	if (r == -ENOENT) {
		if (!need) {
			snprintf(err, errlen, "%s: does not exist; give -s SIZE to create it", path);
			return -ENOENT;
		}
		pr->size = need;
		return 0;
	}
	if (r)
		return r;
	pr->exists = 1;
	pr->size = m->size;
	if (!m->is_blockdev && need > pr->size)
		pr->size = need; /* a file is grown to -s */
	if (m->is_blockdev && need > pr->size) {
		snprintf(err, errlen, "%s: too small for -s (%llu bytes, needs %llu): a device or NBD export "
			 "cannot be grown", path, (unsigned long long)pr->size, (unsigned long long)need);
		return -EINVAL;
	}
	if (member_lock(m)) {
		snprintf(err, errlen, "%s: in use by a mounted fsvol volume", path);
		return -EBUSY;
	}
	if (!c->force && m->size >= SB_SIZE) {
		struct sb_candidate cand = { 0 };
		vol_read_sb(m, &cand);
		if (!cand.read_error && !cand.decode_error) {
			char u[37];
			sb_uuid_format(cand.sb.volume_uuid, u);
			snprintf(err, errlen, "%s: already a member of fsvol volume %s (%s); use --force to overwrite",
				 path, u, layout_level_name((enum layout_level)cand.sb.level));
			return -EEXIST;
		}
	}
	return 0;
}

/* A rounded size for messages about space: "78.1G" (df -h's habit). */
static void create_human(uint64_t b, char *out, size_t len)
{
	static const char unit[] = "KMGTPE";
	double x = (double)b;
	int u = -1;
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%llu bytes", (unsigned long long)b);
	else
		snprintf(out, len, "%.1f%c", x, unit[u]);
}

/* Member files are sparse: the host filesystem gives them space as the data
 * areas are written. When it cannot hold them in full, say so and by how
 * much (as LVM does for thin volumes larger than their pool): a warning, or
 * a refusal before anything changes when --prealloc is to allocate it all. */
static int create_space(const struct vol_create *c, char *const *paths, unsigned n, const struct create_probe *pr,
			const struct member *ms, char *err, size_t errlen)
{
	struct { dev_t dev; uint64_t need, avail; char dir[256], names[512]; } fs[SB_MAX_SLOTS];
	unsigned nfs = 0;
	for (unsigned i = 0; i < n; i++) {
		char dir[4096];
		struct stat st;
		struct statvfs sv;
		if (member_backend(paths[i]) != &member_file_ops || (pr[i].exists && ms[i].is_blockdev))
			continue;
		snprintf(dir, sizeof(dir), "%s", paths[i]);
		const char *d = dirname(dir); /* may be a constant ".", not dir */
		if (stat(d, &st) || statvfs(d, &sv))
			continue; /* create itself will say what is wrong */
		/* what the file holds already is reused (or freed by zeroing) */
		uint64_t held = 0;
		struct stat fst;
		if (pr[i].exists && !stat(paths[i], &fst))
			held = (uint64_t)fst.st_blocks * 512;
		uint64_t want = pr[i].size;
		unsigned k = 0;
		while (k < nfs && fs[k].dev != st.st_dev)
			k++;
		if (k == nfs) {
			fs[nfs].dev = st.st_dev;
			fs[nfs].need = 0;
			fs[nfs].avail = (uint64_t)sv.f_bavail * sv.f_frsize;
			snprintf(fs[nfs].dir, sizeof(fs[nfs].dir), "%.250s", d);
			fs[nfs++].names[0] = 0;
		}
		fs[k].need += want > held ? want - held : 0;
		size_t used = strlen(fs[k].names);
		snprintf(fs[k].names + used, sizeof(fs[k].names) - used, "%s%s", used ? ", " : "", paths[i]);
	}
	for (unsigned k = 0; k < nfs; k++) {
		if (fs[k].need <= fs[k].avail)
			continue;
		char need[32], avail[32], short_by[32];
		create_human(fs[k].need, need, sizeof(need));
		create_human(fs[k].avail, avail, sizeof(avail));
		create_human(fs[k].need - fs[k].avail, short_by, sizeof(short_by));
		if (c->prealloc) {
			snprintf(err, errlen, "--prealloc: the filesystem of %s has %s available; %s need %s (short by %s)",
				 fs[k].dir, avail, fs[k].names, need, short_by);
			return -ENOSPC;
		}
		if (c->warn && c->warnlen)
			snprintf(c->warn, c->warnlen, "the filesystem of %s has %s available; the sparse members %s "
				 "need %s once written in full (short by %s): writes beyond that fail with ENOSPC",
				 fs[k].dir, avail, fs[k].names, need, short_by);
	}
	return 0;
}

/* Create (sparse) or grow a member to size; then open it. */
static int create_file(struct member *m, const char *path, const struct create_probe *pr,
		       char *err, size_t errlen)
{
	int r;
	if (!pr->exists) {
		if ((r = member_create(path, pr->size, err, errlen)))
			return r;
		return member_open(m, path, 0, err, errlen);
	}
	if (!m->is_blockdev && m->size < pr->size) {
		r = m->ops->grow ? m->ops->grow(m, pr->size) : -ENOTSUP;
		if (r) {
			snprintf(err, errlen, "%s: cannot grow to %llu bytes: %s", path,
				 (unsigned long long)pr->size, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The write-intent bitmap's place and chunk (fsvol create --bitmap,
 * --bitmap-chunk): right after the superblock, up to the data. */
static int create_bitmap(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
			 char *err, size_t errlen)
{
	int redundant = layout_copies(g) > 1 || layout_parity_count(g) > 0;
	uint64_t area = (s->bbl_offset ? s->bbl_offset : doff) - SB_SIZE; /* the bad-block list ends the area */
	if (c->bitmap < 0 || (c->bitmap == 0 && !c->bitmap_chunk && (!redundant || area < BITMAP_BLOCK)))
		return 0; /* none asked, or (by default) nothing it could serve or no room */
	if (!redundant) {
		snprintf(err, errlen, "%s has no redundancy: a write-intent bitmap would serve nothing "
			 "(use --bitmap none)", layout_level_name(g->level));
		return -EINVAL;
	}
	uint64_t chunk = c->bitmap_chunk ? c->bitmap_chunk : bitmap_default_chunk(g->capacity, area);
	int r = bitmap_check(g->capacity, chunk, area, err, errlen);
	if (r)
		return r;
	s->bitmap_offset = SB_SIZE;
	s->bitmap_chunk = chunk;
	return 0;
}

/* md's partial parity log (--consistency-policy ppl): where the bitmap
 * would be, [4096, data_offset); raid5 only, never with a bitmap (md). */
static int create_ppl(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
		      char *err, size_t errlen)
{
	uint64_t area = (s->bbl_offset ? s->bbl_offset : doff) - SB_SIZE; /* below the bad-block list */
	if (g->level != LAYOUT_RAID5) {
		snprintf(err, errlen, "--consistency-policy ppl: raid5 only (md's partial parity log), not %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	if (c->bitmap > 0 || c->bitmap_chunk) {
		snprintf(err, errlen, "--consistency-policy ppl with a write-intent bitmap: md refuses both at once "
			 "(the log needs no resync to limit); use --bitmap none");
		return -EINVAL;
	}
	if (area > 0xfffff000u)
		area = 0xfffff000u;
	if (area < SB_SIZE + g->chunk) {
		snprintf(err, errlen, "--consistency-policy ppl: the log between the superblock and the data "
			 "(%llu bytes) must hold at least 4K + a chunk (%llu bytes): give a larger --data-offset or "
			 "a smaller --chunk", (unsigned long long)area, (unsigned long long)(SB_SIZE + g->chunk));
		return -EINVAL;
	}
	s->consistency = SB_CONS_PPL;
	s->ppl_offset = SB_SIZE;
	s->ppl_size = (uint32_t)(area & ~(uint64_t)(SB_SIZE - 1));
	return 0;
}

/* md's write journal (--write-journal PATH): raid4/5/6; a ring in the
 * journal device's data area, large enough for two full-stripe records. */
static int create_journal(const struct vol_create *c, const struct layout_geom *g, uint64_t size, uint64_t doff,
			  struct sb *s, const char *path, char *err, size_t errlen)
{
	uint64_t need = 2 * (SB_SIZE + (uint64_t)g->members * g->chunk);
	if (!layout_is_parity(g)) {
		snprintf(err, errlen, "--write-journal: raid4, raid5 or raid6 only (md's write journal), not %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	if (c->bitmap > 0 || c->bitmap_chunk) {
		snprintf(err, errlen, "--write-journal with a write-intent bitmap: md refuses both at once (the "
			 "journal leaves no resync for a bitmap to limit); leave out --bitmap");
		return -EINVAL;
	}
	if (size < doff + need) {
		snprintf(err, errlen, "%s: too small for the write journal (%llu bytes of journal; needs at least "
			 "%llu: two full-stripe records)", path, (unsigned long long)(size > doff ? size - doff : 0),
			 (unsigned long long)need);
		return -EINVAL;
	}
	s->consistency = SB_CONS_JOURNAL;
	return 0;
}

/* The bad-block list's area (md's bblog, just before the data), when the
 * level has redundancy to recover a listed block from. */
static int create_bbl(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
		      char *err, size_t errlen)
{
	int redundant = layout_copies(g) > 1 || layout_parity_count(g) > 0;
	/* the bitmap keeps its block when both would not fit */
	uint64_t room = doff - SB_SIZE, bitmap = c->bitmap >= 0 && redundant ? BITMAP_BLOCK : 0;
	if (c->bbl < 0 || (c->bbl == 0 && (!redundant || room < BBL_AREA + bitmap)))
		return 0;
	if (!redundant) {
		snprintf(err, errlen, "%s has no redundancy: a listed block could not be recovered "
			 "(use --bad-block-log none)", layout_level_name(g->level));
		return -EINVAL;
	}
	if (room < BBL_AREA + bitmap) {
		snprintf(err, errlen, "--bad-block-log: no room for its %u bytes below data offset %llu%s", BBL_AREA,
			 (unsigned long long)doff, bitmap ? " beside the bitmap" : "");
		return -EINVAL;
	}
	s->bbl_offset = doff - BBL_AREA;
	s->bbl_size = BBL_AREA;
	return 0;
}

/* md's per-device flags and --write-behind, checked against the level. */
static int create_flags(const struct vol_create *c, const struct layout_geom *g, unsigned n, struct sb *s,
			char *err, size_t errlen)
{
	for (unsigned i = 0; i < n; i++) {
		int r = vol_flags_check(g, c->flags[i], err, errlen);
		if (r)
			return r;
		s->slots[i].flags = c->flags[i];
	}
	if (!c->write_behind)
		return 0;
	if (g->level != LAYOUT_RAID1) {
		snprintf(err, errlen, "--write-behind is for raid1 only (md's), not %s", layout_level_name(g->level));
		return -EINVAL;
	}
	if (!s->bitmap_offset) {
		/* the bitmap is what records the writes a slow leg has yet to get */
		snprintf(err, errlen, "--write-behind needs the write-intent bitmap (md: \"write-behind mode "
			 "requires a bitmap\"); drop --bitmap none");
		return -EINVAL;
	}
	if (c->write_behind > 16383) {
		snprintf(err, errlen, "--write-behind %u: at most 16383 (md's limit)", c->write_behind);
		return -EINVAL;
	}
	s->write_behind = c->write_behind;
	return 0;
}

int vol_create(const struct vol_create *c, char *const *paths, unsigned n, char *err, size_t errlen)
{
	struct layout_geom g = c->geom;
	unsigned journal = c->consistency == SB_CONS_JOURNAL;
	unsigned members = n - c->spares - journal;
	struct member *ms;
	struct create_probe pr[SB_MAX_SLOTS];
	unsigned made = 0; /* files created so far: removed again on failure */
	uint64_t doff = c->data_offset ? c->data_offset : SB_DEFAULT_DATA_OFFSET;
	uint64_t need;
	int r = 0;

	if (n > SB_MAX_SLOTS || c->spares + journal >= n) {
		snprintf(err, errlen, "%u members and %u spares: need 1 to %u devices with at least one member",
			 n - c->spares, c->spares, SB_MAX_SLOTS);
		return -EINVAL;
	}
	if (doff % 4096 || doff < SB_SIZE) {
		snprintf(err, errlen, "data offset %llu: must be a multiple of 4K", (unsigned long long)doff);
		return -EINVAL;
	}
	if (c->size && c->size > (UINT64_MAX >> 2) - doff) {
		snprintf(err, errlen, "size %llu: too large", (unsigned long long)c->size);
		return -EINVAL;
	}
	if (c->name && (r = sb_name_check(c->name, err, errlen)))
		return r;
	need = c->size ? c->size + doff : 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(paths[i], paths[j])) {
				snprintf(err, errlen, "%s given twice", paths[i]);
				return -EINVAL;
			}
	if (!(ms = calloc(n, sizeof(*ms))))
		return -ENOMEM;
	/* 1. Look, change nothing: every refusal happens before a file exists. */
	for (unsigned i = 0; i < n; i++) {
		if ((r = create_probe(c, paths[i], need, &pr[i], &ms[i], err, errlen)))
			goto out;
		for (unsigned j = 0; j < i; j++)
			if (pr[i].exists && pr[j].exists && ms[j].dev == ms[i].dev && ms[j].ino == ms[i].ino) {
				snprintf(err, errlen, "%s and %s are the same file", paths[j], paths[i]);
				r = -EINVAL;
				goto out;
			}
		if (pr[i].size < doff + LAYOUT_MIN_CHUNK) {
			snprintf(err, errlen, "%s: too small (%llu bytes; needs at least %llu)", paths[i],
				 (unsigned long long)pr[i].size, (unsigned long long)(doff + LAYOUT_MIN_CHUNK));
			r = -EINVAL;
			goto out;
		}
		if (i < members)
			g.member_size[i] = c->size ? c->size : pr[i].size - doff;
	}
	g.members = members;
	if ((r = layout_init(&g, err, errlen)))
		goto out;
	if (c->warn && c->warnlen)
		c->warn[0] = 0;
	if ((r = create_space(c, paths, n, pr, ms, err, errlen)))
		goto out;
	/* 2. Create the missing files, grow short ones. */
	for (unsigned i = 0; i < n; i++) {
		if ((r = create_file(&ms[i], paths[i], &pr[i], err, errlen)))
			goto out;
		made = i + 1;
	}

	struct sb s;
	memset(&s, 0, sizeof(s));
	s.version = SB_VERSION;
	sb_uuid_generate(s.volume_uuid);
	s.ctime = s.utime = (uint64_t)time(NULL);
	s.level = g.level;
	s.layout = g.alg;
	s.copies = layout_copies(&g);
	s.chunk = g.chunk;
	s.members = members;
	s.spares = c->spares + journal; /* the journal's slot is the last: not in the layout */
	s.data_offset = doff;
	s.volume_size = g.capacity;
	s.events = 1;
	s.clean = 1;
	if ((r = create_bbl(c, &g, doff, &s, err, errlen)) ||
	    (c->consistency == SB_CONS_PPL ? (r = create_ppl(c, &g, doff, &s, err, errlen))
	     : journal ? (r = create_journal(c, &g, pr[n - 1].size, doff, &s, paths[n - 1], err, errlen))
		       : (r = create_bitmap(c, &g, doff, &s, err, errlen))))
		goto out;
	if ((r = create_flags(c, &g, n, &s, err, errlen)))
		goto out;
	if (c->name)
		snprintf(s.name, sizeof(s.name), "%s", c->name);
	else
		sb_volume_name(&s, s.name); /* a unique default, stored like a given one */
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		s.slots[i].number = i < n ? (uint16_t)i : SB_NO_NUMBER;
	for (unsigned i = 0; i < n; i++) {
		s.slots[i].state = i < members ? SB_ACTIVE : SB_SPARE;
		sb_uuid_generate(s.slots[i].uuid);
		s.slots[i].data_size = g.level == LAYOUT_LINEAR && i < members ? g.member_size[i] : g.member_used;
	}
	if (journal) { /* active, flagged, its whole data area a ring */
		s.slots[n - 1].flags = SB_SLOT_JOURNAL;
		s.slots[n - 1].state = SB_ACTIVE;
		s.slots[n - 1].data_size = (pr[n - 1].size - doff) & ~(uint64_t)(SB_SIZE - 1);
	}
	/* 3. Zero the data areas (consistent parity and copies), write superblocks. */
	for (unsigned i = 0; i < n; i++) {
		uint64_t used = s.slots[i].data_size;
		if (!c->assume_clean && pr[i].exists && (r = ms[i].ops->zero(&ms[i], doff, used))) {
			snprintf(err, errlen, "%s: cannot zero the data area: %s", paths[i], strerror(-r));
			goto out;
		}
		/* allocated but unwritten: reads as zeros, writes find their space */
		if (c->prealloc && ms[i].ops->alloc && (r = ms[i].ops->alloc(&ms[i], doff, used))) {
			snprintf(err, errlen, "%s: cannot preallocate the data area (%llu bytes): %s", paths[i],
				 (unsigned long long)used, strerror(-r));
			goto out;
		}
		/* a stale bitmap from an earlier life must not survive */
		if (s.bitmap_offset && pr[i].exists &&
		    (r = ms[i].ops->zero(&ms[i], s.bitmap_offset, doff - s.bitmap_offset))) {
			snprintf(err, errlen, "%s: cannot zero the bitmap area: %s", paths[i], strerror(-r));
			goto out;
		}
		if (s.ppl_offset && pr[i].exists && (r = ms[i].ops->zero(&ms[i], s.ppl_offset, s.ppl_size))) {
			snprintf(err, errlen, "%s: cannot zero the PPL area: %s", paths[i], strerror(-r));
			goto out;
		}
		/* nor a bad-block list */
		if (s.bbl_offset && pr[i].exists && (r = ms[i].ops->zero(&ms[i], s.bbl_offset, s.bbl_size))) {
			snprintf(err, errlen, "%s: cannot zero the bad-block list: %s", paths[i], strerror(-r));
			goto out;
		}
		s.index = i;
		memcpy(s.member_uuid, s.slots[i].uuid, 16);
		if ((r = vol_sb_write(&ms[i], &s, NULL))) {
			snprintf(err, errlen, "%s: writing the superblock: %s", paths[i], strerror(-r));
			goto out;
		}
	}
out:
	for (unsigned i = 0; i < n; i++) {
		member_close(&ms[i]);
		if (r && i < made && !pr[i].exists)
			unlink(paths[i]);
	}
	free(ms);
	return r;
}

/* ---- what front ends may read (volume.h) ---- */

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

