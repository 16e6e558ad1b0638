/* tmpdir: the temp dir of member files (m0, m1, ...) that sweep and replay
 * --compare build volumes in, removed on every way out, signals included.
 * One at a time per process. */
#ifndef FSVOL_BENCH_TMPDIR_H
#define FSVOL_BENCH_TMPDIR_H

#include <stddef.h>

/* Make PARENT/NAME.XXXXXX and catch SIGINT, SIGTERM, SIGHUP to remove it.
 * 0 or -errno with a message in err. */
int bench_tmpdir_make(const char *parent, const char *name, char *err, size_t errlen);
const char *bench_tmpdir(void);
/* Remove the member files and the dir (async-signal-safe). */
void bench_tmpdir_remove(void);

#endif
