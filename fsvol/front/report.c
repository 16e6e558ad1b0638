/* report: what the mount's text files show (stats, stats.json, diskstats,
 * status) and the control commands written to MNT/ctl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/front/report.h"
#include "stats/stats.h"

/* Snapshot the volume and every slot into a view (volume first). */
static struct stats_view_dev *view_build(struct vol *v, size_t *n, char names[][32])
{
	struct stats_view_dev *d = calloc(v->nslots + 1, sizeof(*d));
	uint64_t now = stats_now();
	if (!d)
		return NULL;
	snprintf(names[0], 32, "fsvol0");
	d[0] = (struct stats_view_dev){ .name = names[0], .path = NULL, .state = NULL, .index = -1 };
	stats_snapshot(v->vstats, now, &d[0].snap);
	for (unsigned i = 0; i < v->nslots; i++) {
		struct stats_view_dev *e = &d[i + 1];
		snprintf(names[i + 1], 32, "fsvol0m%u", i);
		e->name = names[i + 1];
		e->path = v->slot[i] ? v->slot[i]->path : "(missing)";
		e->state = vol_slot_state(v, i);
		e->index = (int)i;
		if (v->slot[i] && v->slot[i]->stats)
			stats_snapshot(v->slot[i]->stats, now, &e->snap);
		else
			e->snap.t_ns = now;
	}
	*n = v->nslots + 1;
	return d;
}

int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len)
{
	char names[SB_MAX_SLOTS + 1][32];
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
		else if (kind == REPORT_JSON)
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
	char line[256], *save = NULL;
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
	/* "fail N force": the one verb with a flag (a failure beyond redundancy) */
	int forced = !strcmp(verb, "fail") && extra && !strcmp(extra, "force");
	if (forced)
		extra = strtok_r(NULL, " \t\n", &save);
	/* one command per write: whatever follows it is refused, never ignored */
	int bare = !strcmp(verb, "reset") || !strcmp(verb, "check") || !strcmp(verb, "repair");
	if (bare ? arg != NULL : extra != NULL) {
		snprintf(err, errlen, "ctl: %s: unexpected '%s' (one command per write)", verb,
			 bare ? arg : extra);
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
		char *end;
		unsigned long i = arg ? strtoul(arg, &end, 10) : 0;
		if (!arg || *end || i >= v->geom.members) {
			snprintf(err, errlen, "ctl: fail %s: expected a member index below %u", arg ? arg : "",
				 v->geom.members);
			return -EINVAL;
		}
		uint64_t after = atomic_load(&v->failed) | 1ull << i;
		if (!forced && !layout_survives(&v->geom, after)) {
			/* md refuses to fail the last working copy; a mistaken fail must not stop a volume */
			snprintf(err, errlen, "ctl: fail %s: refused: %s cannot serve its data without member %lu%s; "
				 "write 'fail %s force' to fail it anyway", arg, layout_level_name(v->geom.level), i,
				 layout_copies(&v->geom) + layout_parity_count(&v->geom) > 1 ? " (too many already failed)"
											: " (no redundancy)", arg);
			return -EINVAL;
		}
		vol_fail_slot(v, (unsigned)i, -EIO);
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
	if (!strcmp(verb, "error")) {
		/* fault injection: the member's I/O fails from now on, as a dying
		 * disk's would; the engine fails it and serves from redundancy */
		char *end;
		unsigned long i = arg ? strtoul(arg, &end, 10) : 0;
		if (!arg || *end || i >= v->nslots || !v->slot[i]) {
			snprintf(err, errlen, "ctl: error %s: expected the index of a present member", arg ? arg : "");
			return -EINVAL;
		}
		atomic_store(&v->slot[i]->inject_eio, 1);
		return 0;
	}
	snprintf(err, errlen, "ctl: unknown command '%s' (reset, stats LEVEL, model SPEC, fail N [force], error N, check, repair)", verb);
	return -EINVAL;
}
