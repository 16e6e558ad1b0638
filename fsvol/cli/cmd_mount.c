/* fsvol mount / umount / status: assemble a volume and serve it through FUSE. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/front/fuse_front.h"
#include "fsvol/util/size.h"
#include "fsvol/core/volume.h"
#include "fsvol/model/spindle.h"

static const struct cmd_opt mount_opts[] = {
	{ "foreground", 'f', NULL, "stay in the foreground (Ctrl-C unmounts)" },
	{ "buffered", 0, NULL, "open members without O_DIRECT (needed on filesystems without it)" },
	{ "force", 0, NULL, "assemble even with stale or unreadable members (they count as missing)" },
	{ "read-policy", 0, "POLICY", "raid1/raid10 reads: md (default), round-robin, prefer:N, split:SIZE", 0,
	  "md round-robin prefer: split:" },
	{ "stats", 0, "LEVEL", "counters: all (default), volume, off", 0, "all volume off" },
	{ "page-cache", 0, NULL, "let the kernel cache MNT/volume (default: every request reaches fsvol)" },
	{ "log", 0, "FILE", "append the daemon's messages to FILE" },
	{ "model", 0, "SPEC", "emulated disks: hdd, hdd-legacy, ssd, nvme, none, PRESET:key=val,... or 0=SPEC,1=SPEC (see fsvol model list)",
	  0, "hdd hdd-legacy ssd nvme none" },
	{ "fault", 0, "N=SPEC", "inject faults on member slot N (repeatable; e.g. 2=error=read,after=100; see docs/faults.md)" },
	{ 0 },
};

#define MOUNT_MAX_FAULTS 64

struct mount_args {
	struct vol_opts vo;
	struct ff_opts fo;
	unsigned nfaults;
	struct { unsigned slot; const char *spec; } fault[MOUNT_MAX_FAULTS];
};

static int parse_policy(const char *s, struct vol_opts *o)
{
	char *end;
	if (!strcmp(s, "md") || !strcmp(s, "default")) {
		o->read_policy = VOL_READ_DEFAULT;
	} else if (!strcmp(s, "round-robin") || !strcmp(s, "rr")) {
		o->read_policy = VOL_READ_ROUNDROBIN;
	} else if (!strncmp(s, "prefer:", 7)) {
		unsigned long n = strtoul(s + 7, &end, 10);
		if (!s[7] || *end || n >= SB_MAX_SLOTS)
			return -1;
		o->read_policy = VOL_READ_PREFER;
		o->prefer = (unsigned)n;
	} else if (!strncmp(s, "split:", 6)) {
		if (size_parse(s + 6, &o->split) || o->split < 4096 || o->split % 4096)
			return -1;
		o->read_policy = VOL_READ_SPLIT;
	} else {
		return -1;
	}
	return 0;
}

static int mount_opt(int i, const char *arg, void *ctx)
{
	struct mount_args *a = ctx;
	switch (i) {
	case 0: a->fo.foreground = 1; return 0;
	case 1: a->vo.buffered = 1; return 0;
	case 2: a->vo.force = 1; return 0;
	case 3:
		if (parse_policy(arg, &a->vo))
			return cmd_err(&cmd_mount, "--read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", arg), -1;
		return 0;
	case 4:
		if (!strcmp(arg, "all"))
			a->vo.stats = VOL_STATS_ALL;
		else if (!strcmp(arg, "volume"))
			a->vo.stats = VOL_STATS_VOLUME;
		else if (!strcmp(arg, "off"))
			a->vo.stats = VOL_STATS_OFF;
		else
			return cmd_err(&cmd_mount, "--stats %s: expected all, volume or off", arg), -1;
		return 0;
	case 5: a->fo.page_cache = 1; return 0;
	case 6: a->fo.log = arg; return 0;
	case 7:
		/* one spec for every member is checked here, so a typo is a usage
		 * error; per-member specs ("0=hdd,1=ssd") need the assembled count */
		if (!(arg[0] >= '0' && arg[0] <= '9')) {
			struct spindle_params p;
			char err[256];
			if (spindle_parse(arg, &p, err, sizeof(err)))
				return cmd_err(&cmd_mount, "--model %s", err), -1;
		}
		a->vo.model = arg;
		return 0;
	case 8: {
		char *end;
		unsigned long n = strtoul(arg, &end, 10);
		if (end == arg || *end != '=' || !end[1] || n >= SB_MAX_SLOTS || a->nfaults == MOUNT_MAX_FAULTS)
			return cmd_err(&cmd_mount, "--fault %s: expected N=SPEC with N a member slot", arg), -1;
		a->fault[a->nfaults].slot = (unsigned)n;
		a->fault[a->nfaults++].spec = end + 1;
		return 0;
	}
	}
	return -1;
}

static int mount_run(const struct cmd *c, int argc, char **argv)
{
	struct mount_args a = { .vo = { .stats = VOL_STATS_ALL } };
	char err[1024];
	int first, r = cmd_parse(c, argc, argv, &first, mount_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first < 2)
		return cmd_uerr(c, "need a mount point and at least one member");
	a.fo.mountpoint = argv[first];
	if (a.fo.log && a.fo.log[0] != '/') {
		/* the daemon runs in /: keep the log where the user meant */
		static char abs[2 * PATH_MAX + 2];
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(abs, sizeof(abs), "%s/%s", cwd, a.fo.log);
		a.fo.log = abs;
	}
	if (ff_check_mountpoint(a.fo.mountpoint, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	struct vol *v;
	if (vol_open(&v, argv + first + 1, (unsigned)(argc - first - 1), &a.vo, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	for (unsigned i = 0; i < a.nfaults; i++) {
		unsigned n = a.fault[i].slot;
		if (n >= v->nslots || !v->slot[n]) {
			vol_close(v);
			return cmd_err(c, "--fault %u=%s: no member in slot %u", n, a.fault[i].spec, n);
		}
		if (member_fault_set(v->slot[n], a.fault[i].spec, err, sizeof(err))) {
			vol_close(v);
			return cmd_err(c, "--fault %u=%s", n, err);
		}
	}
	uint64_t failed = atomic_load(&v->failed);
	if (failed)
		fprintf(stderr, "fsvol mount: volume is degraded (missing or failed member slots: 0x%llx)\n",
			(unsigned long long)failed);
	if (v->was_dirty && layout_copies(&v->geom) + layout_parity_count(&v->geom) > 1)
		fprintf(stderr, "fsvol mount: warning: the volume was not shut down cleanly; "
				"resyncing parity and copies in the background (see MNT/status)\n");
	r = ff_serve(v, &a.fo, err, sizeof(err));
	vol_close(v);
	if (r)
		return cmd_err(c, "%s", err);
	return 0;
}

const struct cmd cmd_mount = {
	.name = "mount",
	.operands = "MNT MEMBER...",
	.summary = "assemble a volume and serve it as MNT/volume (with MNT/stats, MNT/status, ...)",
	.opts = mount_opts,
	.run = mount_run,
};

/* ---- umount ---- */

static const struct cmd_opt umount_opts[] = {
	{ "timeout", 't', "SEC", "wait this long for the daemon to finish (default 60)" },
	{ 0 },
};

static int umount_opt(int i, const char *arg, void *ctx)
{
	char *end;
	long v = strtol(arg, &end, 10);
	(void)i;
	if (!*arg || *end || v <= 0)
		return cmd_err(&cmd_umount, "--timeout %s: not a positive number of seconds", arg), -1;
	*(long *)ctx = v;
	return 0;
}

/* Is mnt an fsvol FUSE mount? (/proc/self/mounts: "fsvol MNT fuse.fsvol ...") */
static int is_fsvol_mount(const char *mnt)
{
	char real[PATH_MAX], line[PATH_MAX * 2];
	int found = 0;
	if (!realpath(mnt, real))
		snprintf(real, sizeof(real), "%s", mnt);
	FILE *f = fopen("/proc/self/mounts", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[PATH_MAX], type[64];
		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) == 3 && !strcmp(dir, real) &&
		    !strcmp(type, "fuse.fsvol"))
			found = 1;
	}
	fclose(f);
	return found;
}

static int daemon_pid(const char *mnt)
{
	char path[PATH_MAX + 16], line[256];
	int pid = 0;
	snprintf(path, sizeof(path), "%s/status", mnt);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

/* Has the daemon exited? A zombie counts: its parent (init, after the
 * daemon's fork) may reap it late, and it holds nothing any more. */
static int daemon_gone(int pid)
{
	char path[64], buf[256];
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* "pid (comm) S ..." */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int umount_run(const struct cmd *c, int argc, char **argv)
{
	long timeout = 60;
	int first, r = cmd_parse(c, argc, argv, &first, umount_opt, &timeout);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	const char *mnt = argv[first];
	if (!is_fsvol_mount(mnt))
		return cmd_err(c, "%s: not an fsvol mount", mnt);
	int pid = daemon_pid(mnt);
	if (pid == -ENOTCONN) {
		/* The daemon died: only the kernel's half of the mount is left. */
		if (umount2(mnt, MNT_DETACH) < 0)
			return cmd_err(c, "%s: %s", mnt, strerror(errno));
		fprintf(stderr, "fsvol umount: %s: the daemon was gone; mount removed\n", mnt);
		return 0;
	}
	if (geteuid() == 0) {
		if (umount2(mnt, 0) < 0)
			return cmd_err(c, "%s: %s%s", mnt, strerror(errno),
				       errno == EBUSY ? " (a process, loop device or mount still uses it)" : "");
	} else {
		pid_t p = fork();
		if (p == 0) {
			execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
			_exit(127);
		}
		int st;
		if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return cmd_err(c, "%s: fusermount3 -u failed", mnt);
	}
	/* Wait for the daemon to write its clean superblocks and exit. */
	for (long i = 0; pid > 0 && i < timeout * 50; i++) {
		if (daemon_gone(pid))
			return 0;
		nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
	}
	if (pid > 0)
		return cmd_err(c, "%s: unmounted, but daemon %d has not exited after %ld s", mnt, pid, timeout);
	return 0;
}

const struct cmd cmd_umount = {
	.name = "umount",
	.operands = "MNT",
	.summary = "unmount a volume and wait until its daemon has closed it cleanly",
	.opts = umount_opts,
	.run = umount_run,
};

/* ---- status ---- */

static const struct cmd_opt status_opts[] = { { 0 } };

static int status_opt(int i, const char *arg, void *ctx)
{
	(void)i, (void)arg, (void)ctx;
	return -1;
}

static int status_run(const struct cmd *c, int argc, char **argv)
{
	char path[PATH_MAX + 16], buf[4096];
	int first, r = cmd_parse(c, argc, argv, &first, status_opt, NULL);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	if (!is_fsvol_mount(argv[first]))
		return cmd_err(c, "%s: not an fsvol mount", argv[first]);
	snprintf(path, sizeof(path), "%s/status", argv[first]);
	FILE *f = fopen(path, "r");
	if (!f)
		return cmd_err(c, "%s: %s", path, strerror(errno));
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}

const struct cmd cmd_status = {
	.name = "status",
	.operands = "MNT",
	.summary = "show level, members and their states (like /proc/mdstat)",
	.opts = status_opts,
	.run = status_run,
};
