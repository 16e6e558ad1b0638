/* report: text files of a mounted volume and its control commands. */
#ifndef FSVOL_REPORT_H
#define FSVOL_REPORT_H

#include <stddef.h>

#include "fsvol/core/volume.h"

enum report_kind { REPORT_TABLE, REPORT_JSON, REPORT_DISKSTATS, REPORT_STATUS, REPORT_METRICS };

/* Render into a malloc'd buffer (*out, *len). 0 or -errno. */
int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len);
/* Zero every counter of the volume and its members. */
void report_reset(struct vol *v);
/* Run one control command ("reset", "stats all|volume|off", "fail N").
 * 0, or -EINVAL with a message naming what was wrong. */
int report_ctl(struct vol *v, const char *cmd, size_t len, char *err, size_t errlen);

#endif
