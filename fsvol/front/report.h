/* report: text files of a mounted volume and its control commands. */
#ifndef FSVOL_REPORT_H
#define FSVOL_REPORT_H

#include <stddef.h>

#include "fsvol/core/volume.h"
#include "stats/stats.h"

enum report_kind { REPORT_TABLE, REPORT_JSON, REPORT_DISKSTATS, REPORT_STATUS, REPORT_METRICS,
		   REPORT_STATUS_JSON,  /* status as JSON: slots, states, sync/recovery progress */
		   REPORT_LAYOUT_JSON }; /* geometry and the first rows of the layout grid */

/* Render into a malloc'd buffer (*out, *len). 0 or -errno. */
int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len);
/* Zero every counter of the volume and its members. */
void report_reset(struct vol *v);
/* One parsed control command (report_ctl_parse: pure, no volume needed). */
enum report_ctl_verb {
	REPORT_CTL_RESET, REPORT_CTL_STATS, REPORT_CTL_FAIL, REPORT_CTL_ERROR,
	REPORT_CTL_MODEL, REPORT_CTL_CHECK, REPORT_CTL_REPAIR, REPORT_CTL_FAULT,
	REPORT_CTL_ADD, REPORT_CTL_READD, REPORT_CTL_REMOVE, REPORT_CTL_SPEED_MIN, REPORT_CTL_SPEED_MAX,
	REPORT_CTL_POWERCUT, REPORT_CTL_REPLACE,
};
#define REPORT_CTL_NO_INDEX (~0u)
#define REPORT_CTL_MAX 1100 /* bytes of one command: a path, a fault spec */
struct report_cmd {
	enum report_ctl_verb verb;
	enum stats_level level; /* stats */
	unsigned index;         /* fail, error, fault, remove: below SB_MAX_SLOTS, not yet checked
				 * against the volume, or REPORT_CTL_NO_INDEX (missing, not a number) */
	unsigned number;        /* sync_speed_min/max: KiB/s */
	int force;              /* fail M force */
	char arg[REPORT_CTL_MAX + 1];  /* the first argument as written (model: the spec) */
	char arg2[REPORT_CTL_MAX + 1]; /* the second (fault: the spec) */
};
/* Parse len bytes written to MNT/ctl. 0, or -EINVAL with a message. */
int report_ctl_parse(const char *cmd, size_t len, struct report_cmd *c, char *err, size_t errlen);
/* Run one control command (README, "Files in the mount"). 0, or -errno with a
 * message naming what was wrong. */
int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen);

#endif
