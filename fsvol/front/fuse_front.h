/* fuse_front: serve a volume as MNT/volume through FUSE. */
#ifndef FSVOL_FUSE_FRONT_H
#define FSVOL_FUSE_FRONT_H

#include <stddef.h>

#include "fsvol/core/volume.h"

struct ff_opts {
	const char *mountpoint;
	int foreground;   /* stay in the foreground (else daemonise once mounted) */
	int page_cache;   /* let the kernel cache MNT/volume (default: direct_io) */
	const char *log;  /* the daemon's stderr, when daemonised (default: discarded) */
};

/* 0 when the mount point is an existing directory with nothing mounted on it. */
int ff_check_mountpoint(const char *mnt, char *err, size_t errlen);
/* Mount, daemonise unless foreground, serve until unmounted or signalled.
 * Returns 0 after a clean unmount, or -errno with a message. */
int ff_serve(struct vol *v, const struct ff_opts *o, char *err, size_t errlen);

#endif
