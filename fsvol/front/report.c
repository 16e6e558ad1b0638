/* report: what the mount's text files show (stats, stats.json, diskstats,
 * status) and the control commands written to MNT/ctl. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/front/report.h"
#include "fsvol/members/fault.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define VIEW_NAME 48 /* NAME (31) + ".m63" */

/* Snapshot the volume and every slot into a view (volume first). Devices
 * are named NAME (the volume's) and NAME.mK (member K, as status says mK). */
static struct stats_view_dev *view_build(struct vol *v, size_t *n, char names[][VIEW_NAME])
{
	struct stats_view_dev *d = calloc(vol_nslots(v) + 1, sizeof(*d));
	uint64_t now = stats_now();
	if (!d)
		return NULL;
	char vname[SB_NAME_MAX + 1];
	sb_volume_name(vol_sb(v), vname);
	snprintf(names[0], VIEW_NAME, "%s", vname);
	uint64_t failed = vol_failed_mask(v);
	d[0] = (struct stats_view_dev){ .name = names[0], .path = NULL, .index = -1,
					.state = !failed ? "active"
						 : layout_survives(vol_geom(v), failed) ? "degraded" : "failed" };
	int level = vol_stats_level(v);
	d[0].not_counted = level == VOL_STATS_OFF;
	stats_snapshot(vol_stats(v), now, &d[0].snap);
	for (unsigned i = 0; i < vol_nslots(v); i++) {
		struct stats_view_dev *e = &d[i + 1];
		snprintf(names[i + 1], VIEW_NAME, "%s.m%u", vname, i);
		e->name = names[i + 1];
		e->path = vol_member(v, i) ? vol_member(v, i)->path : "(missing)";
		e->state = vol_slot_state(v, i);
		e->index = (int)i;
		e->not_counted = level != VOL_STATS_ALL || !vol_member(v, i) || !vol_member(v, i)->stats;
		if (vol_member(v, i) && vol_member(v, i)->stats)
			stats_snapshot(vol_member(v, i)->stats, now, &e->snap);
		else
			e->snap.t_ns = now;
	}
	*n = vol_nslots(v) + 1;
	return d;
}

/* The md state each background pass shows as (md's mdstat says "recovery"
 * for a replace too, "resync" for a repair). */
static const struct {
	const char *action; /* vol_sync_info's what */
	enum stats_md_state md;
} md_of_action[] = {
	{ "recovery", STATS_MD_RECOVERING }, { "replace", STATS_MD_RECOVERING },
	{ "resync", STATS_MD_RESYNC },       { "repair", STATS_MD_RESYNC },
	{ "check", STATS_MD_CHECK },
};

/* md-like state for MNT/metrics, read as MNT/status reads it (no lock:
 * each field is one atomic load or fixed after assembly). */
static void md_state(struct vol *v, struct stats_prom_md *md)
{
	uint64_t failed = vol_failed_mask(v);
	uint64_t mask = vol_geom(v)->members >= 64 ? ~0ull : (1ull << vol_geom(v)->members) - 1;
	md->disks_required = vol_geom(v)->members;
	md->degraded = (unsigned)__builtin_popcountll(failed & mask);
	md->blocks = vol_geom(v)->capacity / 1024;
	md->blocks_synced = md->blocks;
	md->state = STATS_MD_ACTIVE;
	struct vol_sync_info si;
	vol_sync_info(v, &si);
	if (si.running && si.what) {
		md->state = STATS_MD_RESYNC; /* a pass this table does not know yet still shows as a pass */
		for (size_t i = 0; i < sizeof(md_of_action) / sizeof(md_of_action[0]); i++)
			if (!strcmp(si.what, md_of_action[i].action))
				md->state = md_of_action[i].md;
		if (si.total)
			md->blocks_synced = (uint64_t)((double)md->blocks * (double)si.pos / (double)si.total);
	}
}

/* layout.json: the first rows of the layout grid (as fsvol layout draws it,
 * from layout_unmap), each cell [role, chunk, copy]: role "D", "P", "Q" or
 * "-" (member space holding nothing), chunk the logical chunk number of a D. */
#define REPORT_LAYOUT_ROWS 32
static void layout_json(struct vol *v, FILE *f)
{
	const struct layout_geom *g = vol_geom(v);
	uint64_t total = g->member_used / g->chunk, rows = 2 * (uint64_t)g->members;
	rows = rows < 8 ? 8 : rows > REPORT_LAYOUT_ROWS ? REPORT_LAYOUT_ROWS : rows;
	rows = rows < total ? rows : total;
	fprintf(f, "{\"level\":\"%s\",\"layout\":\"%s\",\"members\":%u,\"chunk\":%llu,\"data_members\":%u,"
		"\"parity\":%u,\"copies\":%u,\"stripes\":%llu,\"rows\":[", layout_level_name(g->level),
		layout_alg_name(g), g->members, (unsigned long long)g->chunk, g->data_members,
		layout_parity_count(g), layout_copies(g), (unsigned long long)total);
	for (uint64_t r = 0; r < rows; r++) {
		fputs(r ? ",\n[" : "\n[", f);
		for (unsigned m = 0; m < g->members; m++) {
			uint64_t logical = 0;
			unsigned copy = 0;
			int role = layout_unmap(g, m, r * g->chunk, &logical, &copy);
			fprintf(f, "%s[\"%s\",%llu,%u]", m ? "," : "",
				role == LAYOUT_P ? "P" : role == LAYOUT_Q ? "Q" : role < 0 ? "-" : "D",
				(unsigned long long)(role == LAYOUT_DATA ? logical / g->chunk : 0), copy);
		}
		fputc(']', f);
	}
	fputs("]}\n", f);
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
	} else if (kind == REPORT_STATUS_JSON) {
		vol_status_json(v, f);
	} else if (kind == REPORT_LAYOUT_JSON) {
		layout_json(v, f);
	} else {
		/* read before the snapshots: a reset racing with them can only
		 * make the covered time look longer, never negative */
		uint64_t reset_ns = vol_reset_ns(v);
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
			r = stats_render_json(f, d[0].snap.t_ns - vol_start_ns(v),
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
	vol_set_reset_ns(v, now);
	stats_reset(vol_stats(v), now);
	for (unsigned i = 0; i < vol_nslots(v); i++)
		if (vol_member(v, i) && vol_member(v, i)->stats)
			stats_reset(vol_member(v, i)->stats, now);
}

/* Verbs by name: how many words follow (min, max) and what they are. */
static const struct ctl_verb {
	const char *name;
	enum report_ctl_verb verb;
	unsigned min, max;
	const char *args; /* for messages */
} ctl_verbs[] = {
	{ "reset", REPORT_CTL_RESET, 0, 0, "" },
	{ "check", REPORT_CTL_CHECK, 0, 0, "" },
	{ "repair", REPORT_CTL_REPAIR, 0, 0, "" },
	{ "stats", REPORT_CTL_STATS, 1, 1, "LEVEL" },
	{ "model", REPORT_CTL_MODEL, 1, 1, "SPEC" },
	{ "fail", REPORT_CTL_FAIL, 0, 2, "M [force]" },
	{ "error", REPORT_CTL_ERROR, 0, 1, "N" },
	{ "fault", REPORT_CTL_FAULT, 2, 2, "N SPEC" },
	{ "add", REPORT_CTL_ADD, 1, 1, "PATH" },
	{ "re-add", REPORT_CTL_READD, 1, 1, "PATH" },
	{ "remove", REPORT_CTL_REMOVE, 1, 1, "M" },
	{ "sync_speed_min", REPORT_CTL_SPEED_MIN, 1, 1, "KIBS" },
	{ "sync_speed_max", REPORT_CTL_SPEED_MAX, 1, 1, "KIBS" },
	{ "powercut", REPORT_CTL_POWERCUT, 0, 0, "" },
	{ "replace", REPORT_CTL_REPLACE, 1, 2, "M [PATH]" },
};

#define CTL_VERB_LIST "reset, stats LEVEL, model SPEC, fail M [force], add PATH, re-add PATH, remove M, " \
		      "sync_speed_min KIBS, sync_speed_max KIBS, fault N SPEC, error N, check, repair, powercut, replace M [PATH]"

/* A slot number below SB_MAX_SLOTS, or REPORT_CTL_NO_INDEX. */
static unsigned ctl_index(const char *arg)
{
	char *end;
	if (!arg || !isdigit((unsigned char)arg[0]))
		return REPORT_CTL_NO_INDEX;
	unsigned long i = strtoul(arg, &end, 10);
	return !*end && i < SB_MAX_SLOTS ? (unsigned)i : REPORT_CTL_NO_INDEX;
}

int report_ctl_parse(const char *cmd, size_t len, struct report_cmd *c, char *err, size_t errlen)
{
	char line[REPORT_CTL_MAX + 1], *save = NULL, *w[4];
	memset(c, 0, sizeof(*c));
	if (len > REPORT_CTL_MAX) {
		snprintf(err, errlen, "ctl: command too long (%zu bytes, at most %d)", len, REPORT_CTL_MAX);
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
	unsigned n = 0;
	for (char *t = strtok_r(line, " \t\n", &save); t && n < 4; t = strtok_r(NULL, " \t\n", &save))
		w[n++] = t;
	if (!n) {
		snprintf(err, errlen, "ctl: empty command");
		return -EINVAL;
	}
	const struct ctl_verb *v = NULL;
	for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++)
		if (!strcmp(w[0], ctl_verbs[i].name))
			v = &ctl_verbs[i];
	if (!v) {
		snprintf(err, errlen, "ctl: unknown command '%s' (" CTL_VERB_LIST ")", w[0]);
		return -EINVAL;
	}
	/* one command per write: whatever follows it is refused, never ignored */
	if (n - 1 > v->max && (v->verb != REPORT_CTL_FAIL || strcmp(w[2], "force") || n > 3)) {
		snprintf(err, errlen, "ctl: %s: unexpected '%s' (one command per write)", w[0], w[v->max + 1]);
		return -EINVAL;
	}
	if (v->verb == REPORT_CTL_FAIL && n == 3 && strcmp(w[2], "force")) {
		snprintf(err, errlen, "ctl: fail: unexpected '%s' (one command per write)", w[2]);
		return -EINVAL;
	}
	if (n - 1 < v->min) {
		if (v->verb == REPORT_CTL_STATS)
			snprintf(err, errlen, "ctl: stats : expected all, volume or off");
		else if (v->verb == REPORT_CTL_MODEL)
			snprintf(err, errlen, "ctl: model SPEC: the spec is missing (see fsvol model list)");
		else if (v->verb == REPORT_CTL_FAULT && n == 2)
			snprintf(err, errlen, "ctl: fault %s SPEC: the spec is missing (none, error=..., see docs/faults.md)", w[1]);
		else
			snprintf(err, errlen, "ctl: %s %s: the argument is missing", w[0], v->args);
		return -EINVAL;
	}
	c->verb = v->verb;
	if (n > 1)
		snprintf(c->arg, sizeof(c->arg), "%s", w[1]);
	if (n > 2)
		snprintf(c->arg2, sizeof(c->arg2), "%s", w[2]);
	c->force = v->verb == REPORT_CTL_FAIL && n == 3;
	switch (v->verb) {
	case REPORT_CTL_STATS:
		if (stats_parse_level(w[1], &c->level)) {
			snprintf(err, errlen, "ctl: stats %s: expected all, volume or off", w[1]);
			return -EINVAL;
		}
		break;
	case REPORT_CTL_FAIL:
	case REPORT_CTL_ERROR:
	case REPORT_CTL_FAULT:
	case REPORT_CTL_REMOVE:
		/* not a slot number: REPORT_CTL_NO_INDEX, judged against the volume
		 * (a member's path, or refused naming the valid slots) */
		c->index = ctl_index(n > 1 ? w[1] : NULL);
		break;
	case REPORT_CTL_SPEED_MIN:
	case REPORT_CTL_SPEED_MAX: {
		char *end;
		unsigned long k = strtoul(w[1], &end, 10);
		if (!isdigit((unsigned char)w[1][0]) || *end || !k || k > 100000000) {
			snprintf(err, errlen, "ctl: %s %s: expected KiB/s from 1 to 100000000", w[0], w[1]);
			return -EINVAL;
		}
		c->number = (unsigned)k;
		break;
	}
	default:
		break;
	}
	return 0;
}

int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen)
{
	struct report_cmd c;
	char why[400];
	int r = report_ctl_parse(cmd, len, &c, err, errlen);
	if (r)
		return r;
	switch (c.verb) {
	case REPORT_CTL_RESET:
		report_reset(v);
		return 0;
	case REPORT_CTL_STATS:
		vol_set_stats_level(v, c.level == STATS_LEVEL_ALL ? VOL_STATS_ALL
					      : c.level == STATS_LEVEL_VOLUME ? VOL_STATS_VOLUME : VOL_STATS_OFF);
		return 0;
	case REPORT_CTL_FAIL: {
		int i = c.arg[0] ? vol_slot_of(v, c.arg) : -1;
		if (i < 0 || (unsigned)i >= vol_geom(v)->members) {
			snprintf(err, errlen, "ctl: fail %s: expected a member slot below %u or a member's path", c.arg,
				 vol_geom(v)->members);
			return -EINVAL;
		}
		/* md refuses to fail the last working copy; a mistaken fail must not stop a volume */
		uint64_t after = vol_failed_mask(v) | (1ull << i);
		if (!c.force && !layout_survives(vol_geom(v), after) && !(vol_failed_mask(v) & (1ull << i))) {
			snprintf(err, errlen, "ctl: fail %s: refused: %s cannot serve its data without member %d%s; "
				 "fsvol fail --force fails it anyway (on MNT/ctl: 'fail %s force')", c.arg,
				 layout_level_name(vol_geom(v)->level), i,
				 layout_copies(vol_geom(v)) + layout_parity_count(vol_geom(v)) > 1 ? " (too many already failed)"
											: " (no redundancy)", c.arg);
			return -EINVAL;
		}
		vol_fail_slot(v, (unsigned)i, -EIO);
		return 0;
	}
	case REPORT_CTL_MODEL:
		r = vol_model(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: model %s", why);
		return r;
	case REPORT_CTL_CHECK:
	case REPORT_CTL_REPAIR: {
		const char *verb = c.verb == REPORT_CTL_CHECK ? "check" : "repair";
		r = vol_sync_start(v, verb);
		if (r == -EBUSY)
			snprintf(err, errlen, "ctl: %s: a resync, check, repair or recovery is already running", verb);
		else if (r)
			snprintf(err, errlen, "ctl: %s: %s has no redundancy to check", verb,
				 layout_level_name(vol_geom(v)->level));
		return r;
	}
	case REPORT_CTL_ERROR:
	case REPORT_CTL_FAULT:
		/* fault injection on a member (members/member_fault.c); "error N"
		 * is "fault N error=all": every I/O fails from now on, as a dying
		 * disk's would, and the engine fails it and serves from redundancy */
		if (c.index >= vol_nslots(v) || !vol_member(v, c.index)) {
			snprintf(err, errlen, "ctl: %s %s: expected the index of a present member",
				 c.verb == REPORT_CTL_ERROR ? "error" : "fault", c.arg);
			return -EINVAL;
		}
		r = member_fault_set(vol_member(v, c.index), c.verb == REPORT_CTL_ERROR ? "error=all" : c.arg2, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case REPORT_CTL_ADD:
	case REPORT_CTL_READD:
	case REPORT_CTL_REMOVE:
		r = c.verb == REPORT_CTL_ADD ? vol_add(v, c.arg, why, sizeof(why))
		    : c.verb == REPORT_CTL_READD ? vol_readd(v, c.arg, why, sizeof(why)) : vol_remove(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case REPORT_CTL_REPLACE:
		r = vol_replace(v, c.arg, c.arg2[0] ? c.arg2 : NULL, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case REPORT_CTL_SPEED_MIN:
	case REPORT_CTL_SPEED_MAX:
		/* md's knobs, KiB/s, live */
		vol_set_sync_speed(v, c.verb == REPORT_CTL_SPEED_MAX, c.number);
		return 0;
	case REPORT_CTL_POWERCUT:
		/* every member loses its volatile cache at once (docs/faults.md),
		 * then the daemon dies as in a crash: the next mount resyncs */
		for (unsigned i = 0; i < vol_nslots(v); i++)
			if (vol_member(v, i))
				member_fault_powercut(vol_member(v, i));
		fsvol_log(LOG_WARNING, "power cut (ctl powercut): stopping as in a crash");
		raise(SIGKILL);
		return -EIO;
	}
	return -EINVAL;
}
