/* ctl_dir: counters and control of a volume served without FUSE (fsvol serve
 * --ctl-dir DIR): DIR/stats, stats.json, diskstats and status rewritten
 * (atomically) every interval, after each command, on demand ("refresh
 * TOKEN", acknowledged in DIR/refreshed) and at shutdown; DIR/events follows
 * the events log; DIR/ctl is a FIFO taking the same commands as MNT/ctl, one
 * per line, each outcome appended to DIR/ctl.log, and "stop". */
#ifndef FSVOL_CTL_DIR_H
#define FSVOL_CTL_DIR_H

#include <stddef.h>
#include <sys/types.h>

#include "fsvol/core/volume.h"

struct ctl_dir;

/* Create DIR (if missing) and its FIFO. 0 or -errno with a message naming the path. */
int ctl_dir_open(struct ctl_dir **out, struct vol *v, const char *dir, unsigned interval_ms,
		 char *err, size_t errlen);
/* Start the thread that writes the files and reads DIR/ctl; events (or
 * NULL) is copied to DIR/events. 0 or -errno. */
struct events_log;
int ctl_dir_start(struct ctl_dir *c, struct events_log *events);
/* In a process that watches the server (pid) from outside: the server ended
 * with wstatus (waitpid's); DIR/status gets a first line "server: stopped
 * (...)" after a clean stop (exit 0), else "server: died (...)", when it
 * still is that server's status. */
void ctl_dir_mark_ended(const char *dir, pid_t pid, int wstatus);
/* Stop the thread, write the files a last time, free. */
void ctl_dir_close(struct ctl_dir *c);

#endif
