/* slurp: a whole file into memory (the small documents the daemon writes:
 * MNT/stats.json, MNT/status.json), for the readers of the CLI and bench. */
#ifndef FSVOL_SLURP_H
#define FSVOL_SLURP_H

#include <stddef.h>

/* path's bytes in *buf (malloc'd, NUL after the last, *len without it):
 * 0, or -errno (nothing to free). */
int slurp_file(const char *path, char **buf, size_t *len);

#endif
