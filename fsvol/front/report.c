/* report: what the mount's text files show (stats, stats.json, diskstats,
 * status) and the control commands written to MNT/ctl. */
#include <ctype.h>
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

int report_ctl_parse(const char *cmd, size_t len, struct report_cmd *c, char *err, size_t errlen)
{
	char line[256], *save = NULL, *end;
	memset(c, 0, sizeof(*c));
	if (len >= sizeof(line)) {
		snprintf(err, errlen, "ctl: command too long");
		return -EINVAL;
	}
	/* commands are text: what follows a NUL would be ignored, so refuse it */
	const char *nul = memchr(cmd, 0, len);
	if (nul) {
		snprintf(err, errlen, "ctl: a NUL byte at offset %zu (commands are text)", (size_t)(nul - cmd));
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
	if (bare ? arg != NULL : extra != NULL) {
		snprintf(err, errlen, "ctl: %s: unexpected '%s' (one command per write)", verb,
			 bare ? arg : extra);
		return -EINVAL;
	}
	if (arg)
		snprintf(c->arg, sizeof(c->arg), "%s", arg);
	if (!strcmp(verb, "reset")) {
		c->verb = REPORT_CTL_RESET;
	} else if (!strcmp(verb, "check")) {
		c->verb = REPORT_CTL_CHECK;
	} else if (!strcmp(verb, "repair")) {
		c->verb = REPORT_CTL_REPAIR;
	} else if (!strcmp(verb, "stats")) {
		if (!arg || stats_parse_level(arg, &c->level)) {
			snprintf(err, errlen, "ctl: stats %s: expected all, volume or off", arg ? arg : "");
			return -EINVAL;
		}
		c->verb = REPORT_CTL_STATS;
	} else if (!strcmp(verb, "fail") || !strcmp(verb, "error")) {
		c->verb = !strcmp(verb, "fail") ? REPORT_CTL_FAIL : REPORT_CTL_ERROR;
		/* not a slot number: REPORT_CTL_NO_INDEX, refused against the volume
		 * (whose message can say what the indexes are) */
		unsigned long i = arg && isdigit((unsigned char)arg[0]) ? strtoul(arg, &end, 10) : SB_MAX_SLOTS;
		c->index = arg && isdigit((unsigned char)arg[0]) && !*end && i < SB_MAX_SLOTS ? (unsigned)i
											: REPORT_CTL_NO_INDEX;
	} else if (!strcmp(verb, "model")) {
		if (!arg) {
			snprintf(err, errlen, "ctl: model SPEC: the spec is missing (see fsvol model list)");
			return -EINVAL;
		}
		c->verb = REPORT_CTL_MODEL;
	} else {
		snprintf(err, errlen, "ctl: unknown command '%s' (reset, stats LEVEL, model SPEC, fail N, error N, check, repair)", verb);
		return -EINVAL;
	}
	return 0;
}

int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen)
{
	struct report_cmd c;
	int r = report_ctl_parse(cmd, len, &c, err, errlen);
	if (r)
		return r;
	switch (c.verb) {
	case REPORT_CTL_RESET:
		report_reset(v);
		return 0;
	case REPORT_CTL_STATS:
		atomic_store(&v->stats_level, c.level == STATS_LEVEL_ALL ? VOL_STATS_ALL
					      : c.level == STATS_LEVEL_VOLUME ? VOL_STATS_VOLUME : VOL_STATS_OFF);
		return 0;
	case REPORT_CTL_FAIL:
		if (c.index >= v->geom.members) {
			snprintf(err, errlen, "ctl: fail %s: expected a member index below %u", c.arg,
				 v->geom.members);
			return -EINVAL;
		}
		vol_fail_slot(v, c.index, -EIO);
		return 0;
	case REPORT_CTL_MODEL: {
		char why[400];
		r = vol_model(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: model %s", why);
		return r;
	}
	case REPORT_CTL_CHECK:
	case REPORT_CTL_REPAIR: {
		const char *verb = c.verb == REPORT_CTL_CHECK ? "check" : "repair";
		r = vol_sync_start(v, verb);
		if (r == -EBUSY)
			snprintf(err, errlen, "ctl: %s: a resync, check or repair is already running", verb);
		else if (r)
			snprintf(err, errlen, "ctl: %s: %s has no redundancy to check", verb,
				 layout_level_name(v->geom.level));
		return r;
	}
	case REPORT_CTL_ERROR:
		/* fault injection: the member's I/O fails from now on, as a dying
		 * disk's would; the engine fails it and serves from redundancy */
		if (c.index >= v->nslots || !v->slot[c.index]) {
			snprintf(err, errlen, "ctl: error %s: expected the index of a present member", c.arg);
			return -EINVAL;
		}
		atomic_store(&v->slot[c.index]->inject_eio, 1);
		return 0;
	}
	return -EINVAL;
}
