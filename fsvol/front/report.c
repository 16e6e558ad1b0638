/* report: what the mount's text files show (stats, stats.json, diskstats,
 * status) and the control commands written to MNT/ctl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/front/report.h"
#include "stats/stats.h"

#define VIEW_NAME 48 /* NAME (31) + ".m63" */

/* Snapshot the volume and every slot into a view (volume first). Devices
 * are named NAME (the volume's) and NAME.mK (member K, as status says mK). */
static struct stats_view_dev *view_build(struct vol *v, size_t *n, char names[][VIEW_NAME])
{
	struct stats_view_dev *d = calloc(v->nslots + 1, sizeof(*d));
	uint64_t now = stats_now();
	if (!d)
		return NULL;
	char vname[SB_NAME_MAX + 1];
	sb_volume_name(&v->sb, vname);
	snprintf(names[0], VIEW_NAME, "%s", vname);
	uint64_t failed = atomic_load(&v->failed);
	d[0] = (struct stats_view_dev){ .name = names[0], .path = NULL, .index = -1,
					.state = !failed ? "active"
						 : layout_survives(&v->geom, failed) ? "degraded" : "failed" };
	int level = atomic_load(&v->stats_level);
	d[0].not_counted = level == VOL_STATS_OFF;
	stats_snapshot(v->vstats, now, &d[0].snap);
	for (unsigned i = 0; i < v->nslots; i++) {
		struct stats_view_dev *e = &d[i + 1];
		snprintf(names[i + 1], VIEW_NAME, "%s.m%u", vname, i);
		e->name = names[i + 1];
		e->path = v->slot[i] ? v->slot[i]->path : "(missing)";
		e->state = vol_slot_state(v, i);
		e->index = (int)i;
		e->not_counted = level != VOL_STATS_ALL || !v->slot[i] || !v->slot[i]->stats;
		if (v->slot[i] && v->slot[i]->stats)
			stats_snapshot(v->slot[i]->stats, now, &e->snap);
		else
			e->snap.t_ns = now;
	}
	*n = v->nslots + 1;
	return d;
}

/* md-like state for MNT/metrics, read as MNT/status reads it (no lock:
 * each field is one atomic load or fixed after assembly). */
static void md_state(struct vol *v, struct stats_prom_md *md)
{
	uint64_t failed = atomic_load(&v->failed);
	uint64_t mask = v->geom.members >= 64 ? ~0ull : (1ull << v->geom.members) - 1;
	md->disks_required = v->geom.members;
	md->degraded = (unsigned)__builtin_popcountll(failed & mask);
	md->blocks = v->geom.capacity / 1024;
	md->blocks_synced = md->blocks;
	md->state = "active";
	if (v->sync_running && v->sync_what) {
		uint64_t pos = atomic_load(&v->sync_pos);
		md->state = !strcmp(v->sync_what, "check") ? "check" : "resync";
		if (v->sync_total)
			md->blocks_synced = (uint64_t)((double)md->blocks * (double)pos / (double)v->sync_total);
	}
}

int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len)
{
	char names[SB_MAX_SLOTS + 1][VIEW_NAME];
	FILE *f = open_memstream(out, len);
	size_t n = 0;
	int r = 0;
	if (!f)
		return -ENOMEM;
	if (kind == REPORT_STATUS) {
		vol_status(v, f);
	} else {
		/* read before the snapshots: a reset racing with them can only
		 * make the covered time look longer, never negative */
		uint64_t reset_ns = atomic_load(&v->reset_ns);
		struct stats_view_dev *d = view_build(v, &n, names);
		if (!d) {
			fclose(f);
			free(*out);
			return -ENOMEM;
		}
		if (kind == REPORT_TABLE)
			r = stats_render_table(f, d, n);
		else if (kind == REPORT_METRICS) {
			struct stats_prom_md md;
			md_state(v, &md);
			r = stats_render_prom(f, d, n, &md);
		} else if (kind == REPORT_JSON)
			r = stats_render_json(f, d[0].snap.t_ns - v->start_ns,
					      d[0].snap.t_ns - reset_ns, d, n);
		else
			r = stats_render_diskstats(f, d, n);
		free(d);
	}
	if (fclose(f) || r) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

void report_reset(struct vol *v)
{
	uint64_t now = stats_now();
	atomic_store(&v->reset_ns, now);
	stats_reset(v->vstats, now);
	for (unsigned i = 0; i < v->nslots; i++)
		if (v->slot[i] && v->slot[i]->stats)
			stats_reset(v->slot[i]->stats, now);
}

int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen)
{
	char line[1100], *save = NULL;
	if (len >= sizeof(line)) {
		snprintf(err, errlen, "ctl: command too long");
		return -EINVAL;
	}
	memcpy(line, cmd, len);
	line[len] = 0;
	char *verb = strtok_r(line, " \t\n", &save);
	char *arg = strtok_r(NULL, " \t\n", &save);
	char *extra = strtok_r(NULL, " \t\n", &save);
	if (!verb) {
		snprintf(err, errlen, "ctl: empty command");
		return -EINVAL;
	}
	/* one command per write: whatever follows it is refused, never ignored */
	int bare = !strcmp(verb, "reset") || !strcmp(verb, "check") || !strcmp(verb, "repair");
	int two = !strcmp(verb, "fault"); /* fault N SPEC */
	char *more = two ? strtok_r(NULL, " \t\n", &save) : NULL;
	if (bare ? arg != NULL : two ? more != NULL : extra != NULL) {
		snprintf(err, errlen, "ctl: %s: unexpected '%s' (one command per write)", verb,
			 bare ? arg : two ? more : extra);
		return -EINVAL;
	}
	if (!strcmp(verb, "reset")) {
		report_reset(v);
		return 0;
	}
	if (!strcmp(verb, "stats")) {
		enum stats_level l;
		if (!arg || stats_parse_level(arg, &l)) {
			snprintf(err, errlen, "ctl: stats %s: expected all, volume or off", arg ? arg : "");
			return -EINVAL;
		}
		atomic_store(&v->stats_level, l == STATS_LEVEL_ALL ? VOL_STATS_ALL
					      : l == STATS_LEVEL_VOLUME ? VOL_STATS_VOLUME : VOL_STATS_OFF);
		return 0;
	}
	if (!strcmp(verb, "fail")) {
		int i = arg ? vol_slot_of(v, arg) : -1;
		if (i < 0 || (unsigned)i >= v->geom.members) {
			snprintf(err, errlen, "ctl: fail %s: expected a member slot below %u or a member's path",
				 arg ? arg : "", v->geom.members);
			return -EINVAL;
		}
		vol_fail_slot(v, (unsigned)i, -EIO);
		return 0;
	}
	if (!strcmp(verb, "add") || !strcmp(verb, "re-add") || !strcmp(verb, "remove")) {
		char why[400];
		int r;
		if (!arg) {
			snprintf(err, errlen, "ctl: %s: the member is missing (%s)", verb,
				 strcmp(verb, "remove") ? "an absolute path" : "a slot number or a path");
			return -EINVAL;
		}
		r = !strcmp(verb, "add") ? vol_add(v, arg, why, sizeof(why))
		    : !strcmp(verb, "re-add") ? vol_readd(v, arg, why, sizeof(why)) : vol_remove(v, arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	}
	if (!strcmp(verb, "sync_speed_min") || !strcmp(verb, "sync_speed_max")) {
		/* md's knobs, KiB/s, live */
		char *end;
		unsigned long n = arg ? strtoul(arg, &end, 10) : 0;
		if (!arg || *end || !n || n > 100000000) {
			snprintf(err, errlen, "ctl: %s %s: expected KiB/s from 1 to 100000000", verb, arg ? arg : "");
			return -EINVAL;
		}
		atomic_store(!strcmp(verb, "sync_speed_min") ? &v->sync_speed_min : &v->sync_speed_max, (unsigned)n);
		return 0;
	}
	if (!strcmp(verb, "model")) {
		if (!arg) {
			snprintf(err, errlen, "ctl: model SPEC: the spec is missing (see fsvol model list)");
			return -EINVAL;
		}
		char why[400];
		int r = vol_model(v, arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: model %s", why);
		return r;
	}
	if (!strcmp(verb, "check") || !strcmp(verb, "repair")) {
		int r = vol_sync_start(v, !strcmp(verb, "check") ? "check" : "repair");
		if (r == -EBUSY)
			snprintf(err, errlen, "ctl: %s: a resync, check or repair is already running", verb);
		else if (r)
			snprintf(err, errlen, "ctl: %s: %s has no redundancy to check", verb,
				 layout_level_name(v->geom.level));
		return r;
	}
	if (!strcmp(verb, "error") || !strcmp(verb, "fault")) {
		/* fault injection on a member (members/member_fault.c); "error N"
		 * is "fault N error=all": every I/O fails from now on, as a dying
		 * disk's would, and the engine fails it and serves from redundancy */
		char *end;
		unsigned long i = arg ? strtoul(arg, &end, 10) : 0;
		if (!arg || *end || i >= v->nslots || !v->slot[i]) {
			snprintf(err, errlen, "ctl: %s %s: expected the index of a present member", verb, arg ? arg : "");
			return -EINVAL;
		}
		if (two && !extra) {
			snprintf(err, errlen, "ctl: fault %s SPEC: the spec is missing (none, error=..., see docs/faults.md)",
				 arg);
			return -EINVAL;
		}
		char why[300];
		int r = member_fault_set(v->slot[i], two ? extra : "error=all", why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	}
	snprintf(err, errlen, "ctl: unknown command '%s' (reset, stats LEVEL, model SPEC, fail M, add PATH, re-add PATH, remove M, sync_speed_min KIBS, sync_speed_max KIBS, error N, fault N SPEC, check, repair)", verb);
	return -EINVAL;
}
