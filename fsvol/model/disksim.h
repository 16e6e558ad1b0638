/* disksim: a drive from DiskSim's parameter files (--model disksim:PATH.parv). */
#ifndef FSVOL_DISKSIM_H
#define FSVOL_DISKSIM_H

#include <stddef.h>
#include <stdio.h>

#include "fsvol/model/spindle.h"

/* Read PATH (a .parv and what it sources: the .diskspecs, the .model layout,
 * the .seek table) and map the disk it instantiates onto *out (an HDD with a
 * spindle_table). The first load of a path lists each parameter it ignores,
 * once, on log (stderr when NULL); later loads reuse the table. 0, or -errno
 * with "FILE:LINE: ..." in err. */
int disksim_load(const char *path, struct spindle_params *out, FILE *log, char *err,
		 size_t errlen);

#endif
