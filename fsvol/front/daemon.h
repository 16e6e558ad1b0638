/* daemon: one served volume and its optional services (FUSE, NBD, HTTP,
 * the ctl dir, the events log), started, waited on and stopped in one order
 * for both fsvol mount and fsvol serve (daemon.c says which). */
#ifndef FSVOL_DAEMON_H
#define FSVOL_DAEMON_H

#include <stddef.h>

#include "fsvol/core/volume.h"
#include "fsvol/front/fuse_front.h"
#include "fsvol/front/nbd_server.h"

struct daemon_opts {
	int foreground;            /* else the daemon goes to the background once it serves */
	const char *log;           /* its stderr in the background (NULL: syslog) */
	const char *pidfile;       /* its pid, written once it serves (NULL: none) */
	const struct ff_opts *fuse; /* serve MNT/volume (NULL: no FUSE); the wait ends with the mount */
	int events;                /* keep the events log (MNT/events reads it) */
	const char *nbd;           /* export over NBD on unix:PATH or [ADDR:]PORT (NULL: no) */
	struct nbd_server_opts nbd_opts;
	const char *http;          /* serve the dashboard and metrics on [ADDR:]PORT (NULL: no) */
	const char *ctl_dir;       /* counters and control in DIR, with a watcher process (NULL: no) */
};

struct daemon;

/* What can fail on the user's input before the volume is opened: the log,
 * the listening sockets (a taken address is refused at once). 0, or -errno
 * with a message naming the culprit. */
int daemon_open(struct daemon **out, const struct daemon_opts *o, char *err, size_t errlen);
/* Serve v (taken over) until the end: unmounted or signalled (SIGTERM,
 * SIGINT, SIGHUP). Returns in the process that served, after the volume was
 * closed clean and d freed: 0, or -errno with a message. The launcher and the
 * watcher never return. */
int daemon_run(struct daemon *d, struct vol *v, char *err, size_t errlen);
/* Undo daemon_open when the volume could not be opened. NULL is a no-op. */
void daemon_free(struct daemon *d);

#endif
