/* log: stderr or syslog, chosen once by the daemon after it forks. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "fsvol/util/log.h"

static atomic_int log_to_syslog;

void fsvol_log_syslog(void)
{
	openlog("fsvol", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	atomic_store(&log_to_syslog, 1);
}

void fsvol_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (atomic_load(&log_to_syslog))
		syslog(prio, "%s", msg);
	else
		fprintf(stderr, "fsvol: %s\n", msg); /* one call: lines from threads stay whole */
}
