/* fuse_front: serve a volume as MNT/volume through FUSE. */
#ifndef FSVOL_FUSE_FRONT_H
#define FSVOL_FUSE_FRONT_H

#include <stddef.h>
#include <sys/types.h>

#include "fsvol/core/volume.h"

struct events_log;

struct ff_opts {
	const char *mountpoint;
	int page_cache;   /* let the kernel cache MNT/volume (default: direct_io) */
	/* MNT/volume's owner, group and mode, like a block device's (root:disk
	 * 0660 by default, see ff_opts_default); chmod/chown change them until
	 * unmounted. */
	uid_t owner;
	gid_t group;
	mode_t mode;
	int allow_other;  /* let other users in at all (FUSE allow_other) */
};

/* Defaults: owner the daemon's user, group "disk" when run by root (else the
 * daemon's group), mode 0660, no allow_other. */
void ff_opts_default(struct ff_opts *o);

/* 0 when the mount point is an existing directory with nothing mounted on it. */
int ff_check_mountpoint(const char *mnt, char *err, size_t errlen);

/* The steps of serving, for front/daemon.c. A mounted session, whose loop
 * ends on SIGTERM, SIGINT or SIGHUP (handlers installed here) or when
 * unmounted. Mount before going to the background, so a refusal reaches the
 * user: 0, or -errno with a message. */
struct ff;
int ff_mount(struct ff **out, struct vol *v, const struct ff_opts *o, char *err, size_t errlen);
/* Serve until unmounted or signalled, with the volume's threads running;
 * MNT/events reads events (NULL: empty). 0 after a clean end, or -errno
 * with a message. */
int ff_run(struct ff *f, struct events_log *events, char *err, size_t errlen);
/* Unmount (when still mounted) and free, once the engine has drained:
 * requests reply through the session. NULL is a no-op. */
void ff_close(struct ff *f);

#endif
