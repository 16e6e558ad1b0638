/* ctl: the control commands of a served volume, written to MNT/ctl or to
 * serve --ctl-dir's DIR/ctl (README, "Files in the mount"). */
#ifndef FSVOL_CTL_H
#define FSVOL_CTL_H

#include <stddef.h>

#include "fsvol/core/volume.h"
#include "stats/stats.h"

/* One parsed control command (ctl_parse: pure, no volume needed). */
enum ctl_verb {
	CTL_RESET, CTL_STATS, CTL_FAIL, CTL_ERROR,
	CTL_MODEL, CTL_CHECK, CTL_REPAIR, CTL_FAULT,
	CTL_ADD, CTL_READD, CTL_REMOVE, CTL_SPEED_MIN, CTL_SPEED_MAX,
	CTL_POWERCUT, CTL_POWERCUT_AFTER, CTL_REPLACE, CTL_JOURNAL_MODE, CTL_GROW,
	CTL_WRITEMOSTLY, CTL_FAILFAST, CTL_FAILFAST_MS, /* md's per-device flags */
	CTL_SYNC_MAX,
	CTL_SAFE_MODE_DELAY, CTL_RMW_LEVEL,             /* md's array knobs */
	CTL_TIMER_SLACK,                                /* the model's clock */
};
#define CTL_LAST_VERB CTL_TIMER_SLACK /* a new verb goes after it, and moves this */
#define CTL_NO_INDEX (~0u)
#define CTL_MAX 1100 /* bytes of one command: a path, a fault spec */
struct ctl_cmd {
	enum ctl_verb verb;
	enum stats_level level; /* stats */
	unsigned index;         /* fail, error, fault, remove: a member's Number ("N" or "mN"),
				 * below SB_MAX_SLOTS, not yet checked against the volume, or
				 * CTL_NO_INDEX (missing, not a number) */
	unsigned number;        /* sync_speed_min/max: KiB/s; powercut-after: K; failfast_ms: ms;
				 * writemostly/failfast: 1 on, 0 off; add: the new member's SB_SLOT_*;
				 * safe_mode_delay: ms; rmw_level: 0, 1 or 2 */
	uint64_t sectors;       /* sync_max: 512-byte sectors, UINT64_MAX for "max" */
	int force;              /* fail M force */
	char arg[CTL_MAX + 1];  /* the first argument as written (model: the spec) */
	char arg2[CTL_MAX + 1]; /* the second (fault: the spec) */
};
/* Parse len bytes written to MNT/ctl. 0, or -EINVAL with a message. */
int ctl_parse(const char *cmd, size_t len, struct ctl_cmd *c, char *err, size_t errlen);
/* Run one control command (README, "Files in the mount"). 0, or -errno with a
 * message naming what was wrong. */
int ctl_exec(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen);
/* The same for a setting only (a knob such as sync_speed_max, sync_max,
 * failfast_ms: no member or pass is touched), so it may be applied before
 * the volume starts (mount --ctl); any other verb is refused naming them. */
int ctl_exec_setting(struct vol *v, const char *cmd, char *err, size_t errlen);

#endif
