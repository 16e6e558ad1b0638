/* log: the one place the daemon's messages go (nbdkit_error's habit).
 * stderr by default (the foreground, or the --log file dup'ed onto it);
 * syslog once a daemonised mount without --log asked for it. */
#ifndef FSVOL_LOG_H
#define FSVOL_LOG_H

#include <syslog.h>

/* Send messages to syslog (LOG_DAEMON, "fsvol[pid]") from now on. */
void fsvol_log_syslog(void);
/* One message (no trailing newline needed); prio is a syslog priority
 * (LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO). On stderr it reads
 * "fsvol: message". Thread-safe. */
void fsvol_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
