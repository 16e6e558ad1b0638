/* report: the text files of a served volume (status, counters), rendered. */
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

#endif
