/* report: text files of a mounted volume and its control commands. */
#ifndef FSVOL_REPORT_H
#define FSVOL_REPORT_H

#include <stddef.h>

#include "fsvol/core/volume.h"
#include "stats/stats.h"

enum report_kind { REPORT_TABLE, REPORT_JSON, REPORT_DISKSTATS, REPORT_STATUS };

/* Render into a malloc'd buffer (*out, *len). 0 or -errno. */
int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len);
/* Zero every counter of the volume and its members. */
void report_reset(struct vol *v);
/* Run one control command ("reset", "stats all|volume|off", "fail N").
 * 0, or -EINVAL with a message naming what was wrong. */
/* One parsed control command (report_ctl_parse: pure, no volume needed). */
enum report_ctl_verb {
	REPORT_CTL_RESET, REPORT_CTL_STATS, REPORT_CTL_FAIL, REPORT_CTL_ERROR,
	REPORT_CTL_MODEL, REPORT_CTL_CHECK, REPORT_CTL_REPAIR,
};
#define REPORT_CTL_NO_INDEX (~0u)
struct report_cmd {
	enum report_ctl_verb verb;
	enum stats_level level; /* stats */
	unsigned index;         /* fail, error: below SB_MAX_SLOTS, not yet checked against the
				 * volume, or REPORT_CTL_NO_INDEX (missing, not a number) */
	char arg[256];          /* the argument as written (model: the spec) */
};
/* Parse len bytes written to MNT/ctl. 0, or -EINVAL with a message. */
int report_ctl_parse(const char *cmd, size_t len, struct report_cmd *c, char *err, size_t errlen);
int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen);

#endif
