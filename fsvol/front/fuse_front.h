/* fuse_front: serve a volume as MNT/volume through FUSE. */
#ifndef FSVOL_FUSE_FRONT_H
#define FSVOL_FUSE_FRONT_H

#include <stddef.h>
#include <sys/types.h>

#include "fsvol/core/volume.h"

struct ff_opts {
	const char *mountpoint;
	int foreground;   /* stay in the foreground (else daemonise once mounted) */
	int page_cache;   /* let the kernel cache MNT/volume (default: direct_io) */
	const char *log;  /* the daemon's stderr, when daemonised (default: discarded) */
	int log_fd;       /* log, opened by ff_log_open (-1: none) */
	/* MNT/volume's owner, group and mode, like a block device's (root:disk
	 * 0660 by default, see ff_opts_default); chmod/chown change them until
	 * unmounted. */
	uid_t owner;
	gid_t group;
	mode_t mode;
	int allow_other;  /* let other users in at all (FUSE allow_other) */
	const char *http; /* --http [ADDR:]PORT: serve the dashboard and metrics (NULL: no) */
	int transport;    /* enum fu_transport (fuse_uring.h): auto by default */
};

/* Defaults: owner the daemon's user, group "disk" when run by root (else the
 * daemon's group), mode 0660, no allow_other, no log. */
void ff_opts_default(struct ff_opts *o);
/* Open the log as a root daemon may: O_NOFOLLOW|O_CREAT|O_APPEND, mode 0600,
 * a regular file with one link. The fd, or -errno with a message naming it. */
int ff_log_open(const char *path, char *err, size_t errlen);

/* 0 when the mount point is an existing directory with nothing mounted on it. */
int ff_check_mountpoint(const char *mnt, char *err, size_t errlen);
/* Mount, daemonise unless foreground, serve until unmounted or signalled.
 * Returns 0 after a clean unmount, or -errno with a message. */
int ff_serve(struct vol *v, const struct ff_opts *o, char *err, size_t errlen);

#endif
