/* ctl: the control commands of a served volume (MNT/ctl, DIR/ctl of serve
 * --ctl-dir, fsvol ctl): parsing, pure and shared with the CLI, and running
 * one on the volume. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/front/ctl.h"
#include "fsvol/members/fault.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

/* Zero every counter of the volume and its members. */
static void ctl_reset(struct vol *v)
{
	uint64_t now = stats_now();
	vol_set_reset_ns(v, now);
	stats_reset(vol_stats(v), now);
	for (unsigned i = 0; i < vol_nslots(v); i++) {
		struct member *m = vol_member(v, i); /* one look: a remove may empty the slot */
		if (m && m->stats)
			stats_reset(m->stats, now);
	}
}

/* timer_slack_us at most (10 ms): beyond it, the slack would change what a disk model means */
#define CTL_SLACK_MAX_US 10000u

/* Verbs by name: how many words follow (min, max) and what they are. */
static const struct ctl_verb_def {
	const char *name;
	enum ctl_verb verb;
	unsigned min, max;
	const char *args; /* for messages */
	int setting;      /* only sets a knob: may be applied before the volume starts */
} ctl_verbs[] = {
	{ "reset", CTL_RESET, 0, 0, "" },
	{ "check", CTL_CHECK, 0, 0, "" },
	{ "repair", CTL_REPAIR, 0, 0, "" },
	{ "stats", CTL_STATS, 1, 1, "LEVEL" },
	{ "model", CTL_MODEL, 1, 1, "SPEC" },
	{ "fail", CTL_FAIL, 0, 2, "M [force]" },
	{ "error", CTL_ERROR, 0, 1, "N" },
	{ "fault", CTL_FAULT, 2, 2, "N SPEC" },
	{ "add", CTL_ADD, 1, 3, "PATH" }, /* [writemostly] [failfast] */
	{ "re-add", CTL_READD, 1, 1, "PATH" },
	{ "remove", CTL_REMOVE, 1, 1, "M" },
	{ "sync_speed_min", CTL_SPEED_MIN, 1, 1, "KIBS", 1 },
	{ "sync_speed_max", CTL_SPEED_MAX, 1, 1, "KIBS", 1 },
	{ "powercut", CTL_POWERCUT, 0, 0, "" },
	{ "powercut-after", CTL_POWERCUT_AFTER, 1, 1, "K" },
	{ "replace", CTL_REPLACE, 1, 2, "M [PATH]" },
	{ "journal_mode", CTL_JOURNAL_MODE, 1, 1, "write-through|write-back" },
	{ "writemostly", CTL_WRITEMOSTLY, 2, 2, "M on|off" },
	{ "failfast", CTL_FAILFAST, 2, 2, "M on|off" },
	{ "failfast_ms", CTL_FAILFAST_MS, 1, 1, "MS", 1 },
	{ "safe_mode_delay", CTL_SAFE_MODE_DELAY, 1, 1, "SECONDS", 1 },
	{ "rmw_level", CTL_RMW_LEVEL, 1, 1, "0|1|2", 1 },
	{ "grow", CTL_GROW, 1, 1, "raid-devices=N,chunk=BYTES,level=L" },
	{ "sync_max", CTL_SYNC_MAX, 1, 1, "SECTORS|max", 1 },
	{ "timer_slack_us", CTL_TIMER_SLACK, 1, 1, "US", 1 },
};

#define CTL_VERB_LIST "reset, stats LEVEL, model SPEC, fail M [force], add PATH, re-add PATH, remove M, " \
		      "sync_speed_min KIBS, sync_speed_max KIBS, fault N SPEC, error N, check, repair, powercut, powercut-after K, replace M [PATH], " \
		      "journal_mode write-through|write-back, writemostly M on|off, failfast M on|off, failfast_ms MS, grow SPEC, " \
		      "safe_mode_delay SECONDS, rmw_level 0|1|2, sync_max SECTORS|max, timer_slack_us US"

/* md's seconds to the millisecond ("0.2", "0.200", "5", "0"): *ms, up to an hour.
 * 0, or -EINVAL. */
static int ctl_parse_msec(const char *s, unsigned *ms)
{
	unsigned long whole = 0, frac = 0, digits = 0;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p) && whole <= 3600; p++)
		whole = whole * 10 + (unsigned long)(*p - '0');
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p) && digits < 3; p++, digits++)
			frac = frac * 10 + (unsigned long)(*p - '0');
	if (*p || whole > 3600 || (whole == 3600 && frac) || (s[strlen(s) - 1] == '.'))
		return -EINVAL;
	while (digits++ < 3)
		frac *= 10;
	*ms = (unsigned)(whole * 1000 + frac);
	return 0;
}

/* A member's Number ("N" or "mN", as status names it) below SB_MAX_SLOTS,
 * or CTL_NO_INDEX. */
static unsigned ctl_index(const char *arg)
{
	int n = arg ? vol_parse_number(arg) : -1;
	return n >= 0 ? (unsigned)n : CTL_NO_INDEX;
}

/* The command's words (at most 4) into w, from line (a copy of cmd, NUL
 * and length checked): their count, or -EINVAL. */
static int ctl_words(const char *cmd, size_t len, char *line, char **w, char *err, size_t errlen)
{
	char *save = NULL;
	if (len > CTL_MAX) {
		snprintf(err, errlen, "ctl: command too long (%zu bytes, at most %d)", len, CTL_MAX);
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
	return (int)n;
}

/* The verb w[0] names, its word count checked; NULL after a message. */
static const struct ctl_verb_def *ctl_verb(char **w, unsigned n, char *err, size_t errlen)
{
	const struct ctl_verb_def *v = NULL;
	for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++)
		if (!strcmp(w[0], ctl_verbs[i].name))
			v = &ctl_verbs[i];
	if (!v) {
		snprintf(err, errlen, "ctl: unknown command '%s' (" CTL_VERB_LIST ")", w[0]);
		return NULL;
	}
	/* one command per write: whatever follows it is refused, never ignored */
	if (n - 1 > v->max && (v->verb != CTL_FAIL || strcmp(w[2], "force") || n > 3)) {
		snprintf(err, errlen, "ctl: %s: unexpected '%s' (one command per write)", w[0], w[v->max + 1]);
		return NULL;
	}
	if (v->verb == CTL_FAIL && n == 3 && strcmp(w[2], "force")) {
		snprintf(err, errlen, "ctl: fail: unexpected '%s' (one command per write)", w[2]);
		return NULL;
	}
	if (n - 1 < v->min) {
		if (v->verb == CTL_STATS)
			snprintf(err, errlen, "ctl: stats : expected all, volume or off");
		else if (v->verb == CTL_MODEL)
			snprintf(err, errlen, "ctl: model SPEC: the spec is missing (see fsvol model list)");
		else if (v->verb == CTL_FAULT && n == 2)
			snprintf(err, errlen, "ctl: fault %s SPEC: the spec is missing (none, error=..., see docs/faults.md)", w[1]);
		else
			snprintf(err, errlen, "ctl: %s %s: the argument is missing", w[0], v->args);
		return NULL;
	}
	return v;
}

/* The verb's arguments (w[1..n-1]) read into c by their kind. */
static int ctl_args(struct ctl_cmd *c, char **w, unsigned n, char *err, size_t errlen)
{
	switch (c->verb) {
	case CTL_STATS:
		if (stats_parse_level(w[1], &c->level)) {
			snprintf(err, errlen, "ctl: stats %s: expected all, volume or off", w[1]);
			return -EINVAL;
		}
		break;
	case CTL_FAIL:
	case CTL_ERROR:
	case CTL_FAULT:
	case CTL_REMOVE:
		/* not a slot number: CTL_NO_INDEX, judged against the volume
		 * (a member's path, or refused naming the valid slots) */
		c->index = ctl_index(n > 1 ? w[1] : NULL);
		break;
	case CTL_SPEED_MIN:
	case CTL_SPEED_MAX: {
		char *end;
		unsigned long k = strtoul(w[1], &end, 10);
		if (!isdigit((unsigned char)w[1][0]) || *end || !k || k > 100000000) {
			snprintf(err, errlen, "ctl: %s %s: expected KiB/s from 1 to 100000000", w[0], w[1]);
			return -EINVAL;
		}
		c->number = (unsigned)k;
		break;
	}
	case CTL_SYNC_MAX: {
		char *end;
		errno = 0;
		unsigned long long k = strtoull(w[1], &end, 10);
		if (!strcmp(w[1], "max"))
			k = UINT64_MAX;
		else if (!isdigit((unsigned char)w[1][0]) || *end || errno || k >= UINT64_MAX / 512) {
			snprintf(err, errlen, "ctl: %s %s: expected a count of 512-byte sectors or \"max\"", w[0], w[1]);
			return -EINVAL;
		}
		c->sectors = k;
		break;
	}
	case CTL_ADD:
		/* md's device flags for the new member: "add PATH writemostly failfast" */
		for (unsigned k = 2; k < n; k++) {
			if (!strcmp(w[k], "writemostly"))
				c->number |= SB_SLOT_WRITE_MOSTLY;
			else if (!strcmp(w[k], "failfast"))
				c->number |= SB_SLOT_FAILFAST;
			else {
				snprintf(err, errlen, "ctl: add %s %s: expected writemostly or failfast", w[1], w[k]);
				return -EINVAL;
			}
		}
		break;
	case CTL_WRITEMOSTLY:
	case CTL_FAILFAST:
		if (strcmp(w[2], "on") && strcmp(w[2], "off")) {
			snprintf(err, errlen, "ctl: %s %s %s: expected on or off", w[0], w[1], w[2]);
			return -EINVAL;
		}
		c->number = !strcmp(w[2], "on");
		break;
	case CTL_FAILFAST_MS: {
		char *end;
		unsigned long k = strtoul(w[1], &end, 10);
		if (!isdigit((unsigned char)w[1][0]) || *end || !k || k > 3600000) {
			snprintf(err, errlen, "ctl: failfast_ms %s: expected milliseconds from 1 to 3600000", w[1]);
			return -EINVAL;
		}
		c->number = (unsigned)k;
		break;
	}
	case CTL_SAFE_MODE_DELAY:
		/* md's sysfs value: seconds, to the millisecond ("0.200"); 0 turns it off */
		if (ctl_parse_msec(w[1], &c->number)) {
			snprintf(err, errlen, "ctl: safe_mode_delay %s: expected seconds with at most 3 decimals, "
				 "0 (off) to 3600 (md's sysfs value, e.g. 0.200)", w[1]);
			return -EINVAL;
		}
		break;
	case CTL_RMW_LEVEL:
		if (strlen(w[1]) != 1 || w[1][0] < '0' || w[1][0] > '2') {
			snprintf(err, errlen, "ctl: rmw_level %s: expected 0 (reconstruct-write only), 1 (the fewer "
				 "reads; ties: reconstruct-write) or 2 (ties: read-modify-write)", w[1]);
			return -EINVAL;
		}
		c->number = (unsigned)(w[1][0] - '0');
		break;
	case CTL_TIMER_SLACK: {
		char *end;
		unsigned long k = strtoul(w[1], &end, 10);
		if (!isdigit((unsigned char)w[1][0]) || *end || k > CTL_SLACK_MAX_US) {
			snprintf(err, errlen, "ctl: timer_slack_us %s: expected microseconds from 0 (every deadline its own "
				 "wake-up) to %u", w[1], CTL_SLACK_MAX_US);
			return -EINVAL;
		}
		c->number = (unsigned)k;
		break;
	}
	case CTL_POWERCUT_AFTER: {
		char *end;
		unsigned long k = strtoul(w[1], &end, 10);
		if (!isdigit((unsigned char)w[1][0]) || *end || k > 1000000000) {
			snprintf(err, errlen, "ctl: %s %s: expected a count of member writes, 0 to 1000000000", w[0], w[1]);
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

int ctl_parse(const char *cmd, size_t len, struct ctl_cmd *c, char *err, size_t errlen)
{
	char line[CTL_MAX + 1], *w[4];
	memset(c, 0, sizeof(*c));
	int n = ctl_words(cmd, len, line, w, err, errlen);
	if (n < 0)
		return n;
	const struct ctl_verb_def *v = ctl_verb(w, (unsigned)n, err, errlen);
	if (!v)
		return -EINVAL;
	c->verb = v->verb;
	if (n > 1)
		snprintf(c->arg, sizeof(c->arg), "%s", w[1]);
	if (n > 2)
		snprintf(c->arg2, sizeof(c->arg2), "%s", w[2]);
	c->force = v->verb == CTL_FAIL && n == 3;
	return ctl_args(c, w, (unsigned)n, err, errlen);
}

/* Every member loses its volatile cache at once (docs/faults.md), then the
 * daemon dies as in a crash: the next mount resyncs. */
static void ctl_powercut(void *arg)
{
	struct vol *v = arg;
	for (unsigned i = 0; i < vol_nslots(v); i++) {
		struct member *m = vol_member(v, i);
		if (m)
			member_fault_powercut(m);
	}
	fsvol_log(LOG_WARNING, "power cut (ctl powercut): stopping as in a crash");
	raise(SIGKILL);
}

int ctl_exec_setting(struct vol *v, const char *cmd, char *err, size_t errlen)
{
	size_t n = strcspn(cmd, " \t");
	for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++)
		if (ctl_verbs[i].setting && strlen(ctl_verbs[i].name) == n && !strncmp(cmd, ctl_verbs[i].name, n))
			return ctl_exec(v, cmd, strlen(cmd), err, errlen);
	char names[256] = "";
	for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++)
		if (ctl_verbs[i].setting)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
				 ctl_verbs[i].name);
	snprintf(err, errlen, "ctl: \"%.*s\" is not a setting (before the volume starts: %s)", (int)n, cmd, names);
	return -EINVAL;
}

/* Commands whose state md's format cannot record yet (issue 31): a
 * reshape (grow) and a replacement (replace). fail, remove, add and re-add
 * are md's roles (0xfffe, 0xffff, a role) and recovery_offset. */
static int ctl_not_md(const struct vol *v, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "ctl: %s: not yet on a volume in md's format (metadata 1.%u): fsvol does not write "
		 "md's %s fields yet", what, vol_sb(v)->md_minor - 1, strcmp(what, "grow") ? "replacement" : "reshape");
	return -EOPNOTSUPP;
}

/* The verbs on one member: fail, error, fault, add, re-add, remove,
 * replace, writemostly, failfast. */
static int ctl_exec_member(struct vol *v, const struct ctl_cmd *c, char *err, size_t errlen)
{
	char why[400];
	int r;
	switch (c->verb) {
	case CTL_FAIL: {
		int i = c->arg[0] ? vol_slot_of(v, c->arg) : -1;
		/* during a reshape the members it adds are in raid roles too */
		if (i < 0 || (unsigned)i >= vol_roles(v)) {
			snprintf(err, errlen, "ctl: fail %s: expected a member in a raid role: its Number (mN, as "
				 "fsvol status names it) or its path", c->arg);
			return -EINVAL;
		}
		/* the policy (md's: not the last working copy unless forced) is the core's */
		r = vol_fail_request(v, (unsigned)i, c->force, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: fail %s: refused: %s; fsvol fail --force fails it anyway "
				 "(on MNT/ctl: 'fail %s force')", c->arg, why, c->arg);
		return r;
	}
	case CTL_ERROR:
	case CTL_FAULT:
		/* fault injection on a member (members/member_fault.c); "error N"
		 * is "fault N error=all": every I/O fails from now on, as a dying
		 * disk's would, and the engine fails it and serves from redundancy */
		if (c->index == CTL_NO_INDEX || vol_slot_of_number(v, c->index) < 0 ||
		    !vol_member(v, (unsigned)vol_slot_of_number(v, c->index))) {
			snprintf(err, errlen, "ctl: %s %s: expected the Number of a present member (mN, as fsvol status "
				 "names it)", c->verb == CTL_ERROR ? "error" : "fault", c->arg);
			return -EINVAL;
		}
		r = member_fault_set(vol_member(v, (unsigned)vol_slot_of_number(v, c->index)),
				     c->verb == CTL_ERROR ? "error=all" : c->arg2, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case CTL_ADD:
	case CTL_READD:
	case CTL_REMOVE:
		r = c->verb == CTL_ADD ? vol_add_flags(v, c->arg, c->number, why, sizeof(why))
		    : c->verb == CTL_READD ? vol_readd(v, c->arg, why, sizeof(why)) : vol_remove(v, c->arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case CTL_REPLACE:
		if (vol_sb(v)->md_minor) /* nor md's replacement */
			return ctl_not_md(v, "replace", err, errlen);
		r = vol_replace(v, c->arg, c->arg2[0] ? c->arg2 : NULL, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case CTL_WRITEMOSTLY:
	case CTL_FAILFAST:
		r = vol_set_flag(v, c->arg, c->verb == CTL_WRITEMOSTLY ? SB_SLOT_WRITE_MOSTLY : SB_SLOT_FAILFAST, (int)c->number,
				 why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	default:
		return -EINVAL;
	}
}

int ctl_exec(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen)
{
	struct ctl_cmd c;
	char why[400];
	int r = ctl_parse(cmd, len, &c, err, errlen);
	if (r)
		return r;
	switch (c.verb) {
	case CTL_RESET:
		ctl_reset(v);
		return 0;
	case CTL_STATS:
		vol_set_stats_level(v, c.level == STATS_LEVEL_ALL ? VOL_STATS_ALL
					      : c.level == STATS_LEVEL_VOLUME ? VOL_STATS_VOLUME : VOL_STATS_OFF);
		return 0;
	case CTL_MODEL:
		r = vol_model(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: model %s", why);
		return r;
	case CTL_CHECK:
	case CTL_REPAIR: {
		const char *verb = c.verb == CTL_CHECK ? "check" : "repair";
		r = vol_sync_start(v, verb);
		if (r == -EBUSY)
			snprintf(err, errlen, "ctl: %s: a resync, check, repair or recovery is already running", verb);
		else if (r)
			snprintf(err, errlen, "ctl: %s: %s has no redundancy to check", verb,
				 layout_level_name(vol_geom(v)->level));
		return r;
	}
	case CTL_GROW:
		if (vol_sb(v)->md_minor) /* md's format: no reshape fields written yet (issue 31) */
			return ctl_not_md(v, "grow", err, errlen);
		r = vol_grow(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case CTL_JOURNAL_MODE:
		r = vol_journal_mode(v, c.arg, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "ctl: %s", why);
		return r;
	case CTL_SPEED_MIN:
	case CTL_SPEED_MAX:
		/* md's knobs, KiB/s, live */
		vol_set_sync_speed(v, c.verb == CTL_SPEED_MAX, c.number);
		return 0;
	case CTL_SYNC_MAX:
		/* md's sync_max: a pass waits before a unit that ends past it */
		vol_set_sync_max(v, c.sectors);
		return 0;
	case CTL_FAILFAST_MS:
		vol_set_failfast_ms(v, c.number);
		return 0;
	case CTL_SAFE_MODE_DELAY:
		vol_safe_set_delay(v, c.number);
		return 0;
	case CTL_RMW_LEVEL:
		/* md has it for raid4/5/6 only (raid5.c's sysfs attribute) */
		if (!layout_is_parity(vol_geom(v))) {
			snprintf(err, errlen, "ctl: rmw_level: %s has no parity to read-modify-write (raid4, raid5 and "
				 "raid6 have rmw_level)", layout_level_name(vol_geom(v)->level));
			return -EINVAL;
		}
		vol_set_rmw_level(v, c.number);
		return 0;
	case CTL_TIMER_SLACK: {
		/* before the model starts too: emulators take it when created */
		struct emul *e = vol_model_emul(v);
		emul_set_default_slack(1000ull * c.number);
		if (e)
			emul_set_slack(e, 1000ull * c.number);
		return 0;
	}
	case CTL_POWERCUT:
		ctl_powercut(v);
		return -EIO;
	case CTL_POWERCUT_AFTER:
		/* the cut comes from the completion of the K-th member write */
		member_fault_powercut_after(c.number, ctl_powercut, v);
		return 0;
	default:
		return ctl_exec_member(v, &c, err, errlen);
	}
}
