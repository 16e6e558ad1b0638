/* fsvol mount / umount / status: assemble a volume and serve it through FUSE. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/core/vol_opts.h"
#include "fsvol/front/ctl.h"
#include "fsvol/front/daemon.h"
#include "fsvol/front/fuse_uring.h"
#include "fsvol/front/http.h"
#include "fsvol/front/nbd_server.h"
#include "fsvol/members/fault.h"
#include "fsvol/util/size.h"
#include "fsvol/core/volume.h"
#include "fsvol/model/spindle.h"

static const struct cmd_opt mount_opts[] = {
	{ "foreground", 'f', NULL, "stay in the foreground (Ctrl-C unmounts)" },
	{ "buffered", 0, NULL, "open members without O_DIRECT (needed on filesystems without it)" },
	{ "force", 0, NULL, "assemble with stale, unreadable or split-brain members left out; beyond redundancy, take back the most recently failed" },
	{ "read-policy", 0, "POLICY", "raid1/raid10 reads: md (default), round-robin, prefer:N, split:SIZE", 0,
	  "md round-robin prefer: split:" },
	{ "stats", 0, "LEVEL", "counters: all (default), volume, off", 0, "all volume off" },
	{ "page-cache", 0, NULL, "let the kernel cache MNT/volume (default: every request reaches fsvol)" },
	{ "log", 0, "FILE", "append the daemon's messages to FILE" },
	{ "model", 0, "SPEC", "emulated disks: hdd, hdd-legacy, ssd, nvme, none, PRESET:key=val,... or 0=SPEC,1=SPEC (see fsvol model list)",
	  0, "hdd hdd-legacy ssd nvme none" },
	{ "fault", 0, "N=SPEC", "inject faults on member N (its Number, mN in fsvol status; repeatable; e.g. 2=error=read,after=100; see docs/faults.md)" },
	{ "owner", 0, "USER", "owner of MNT/volume, a name or uid (default: the mounting user)" },
	{ "group", 0, "GROUP", "group of MNT/volume, a name or gid (default: disk when root mounts)" },
	{ "mode", 0, "OCTAL", "permissions of MNT/volume (default 660, as a block device's)" },
	{ "allow-other", 0, NULL, "let users other than the mounting one in (FUSE allow_other; modes still apply)" },
	{ "nbd", 0, "ADDR", "also export the volume over NBD on unix:PATH or [ADDR:]PORT (one daemon serves both)" },
	{ "name", 0, "EXPORT", "with --nbd: the export name" },
	{ "read-only", 'r', NULL, "with --nbd: export read-only (MNT/volume stays writable)" },
	{ "http", 0, "[ADDR:]PORT", "serve a live dashboard, /metrics, /stats.json and /status.json over HTTP "
	  "(ADDR 127.0.0.1 unless given; see docs/counters.md); at most " HTTP_STR(HTTP_MAX_CONNECTIONS)
	  " connections, " HTTP_STR(HTTP_MAX_PER_IP) " from one address (one more closes the oldest), a request "
	  "within " HTTP_STR(HTTP_DEADLINE_S) " s, idle ones closed after " HTTP_STR(HTTP_TIMEOUT_S) " s" },
	{ "run", 0, NULL, "start degraded when a member the superblocks record as active is not given "
	  "(mdadm --assemble --run); refused without it, naming the missing members" },
	{ "fuse-transport", 0, "auto|dev|uring", "how FUSE requests reach the daemon: /dev/fuse, or FUSE over io_uring "
	  "where the kernel offers it (auto, the default: uring when offered; MNT/status tells which; a refused ring "
	  "falls back to /dev/fuse)", 0, "auto dev uring" },
	{ "journal-mode", 0, "MODE", "a volume with a write journal: write-through (default: a write is done once the "
	  "members have it) or write-back (once the journal has it); md's journal_mode, also ctl journal_mode", 0,
	  "write-through write-back" },
	{ "ctl", 0, "'VERB ARG'", "a setting of MNT/ctl applied before the volume starts, as md's sysctl limits apply "
	  "from assembly (repeatable): sync_speed_min KIBS, sync_speed_max KIBS, sync_max SECTORS, failfast_ms MS, "
	  "safe_mode_delay SECONDS, rmw_level 0|1|2, timer_slack_us US" },
	{ 0 },
};

#define MOUNT_MAX_FAULTS 64
#define MOUNT_MAX_CTLS 16

struct mount_args {
	struct vol_opts vo;
	struct ff_opts fo;
	struct daemon_opts d;   /* d.fuse is &fo */
	unsigned nfaults;
	struct { unsigned slot; const char *spec; } fault[MOUNT_MAX_FAULTS];
	int nbd_only;           /* an option that needs --nbd was given */
	int run;                /* --run: a degraded start is wanted */
	unsigned nctls;
	const char *ctl[MOUNT_MAX_CTLS]; /* --ctl settings, in order */
};

static int mount_opt(int i, const char *arg, void *ctx)
{
	struct mount_args *a = ctx;
	switch (i) {
	case 0: a->d.foreground = 1; return 0;
	case 1: a->vo.buffered = 1; return 0;
	case 2: a->vo.force = 1; return 0;
	case 3:
		if (vol_opts_parse_policy(arg, &a->vo))
			return cmd_err(&cmd_mount, "--read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", arg), -1;
		return 0;
	case 4:
		if (vol_opts_parse_stats(arg, &a->vo))
			return cmd_err(&cmd_mount, "--stats %s: expected all, volume or off", arg), -1;
		return 0;
	case 5: a->fo.page_cache = 1; return 0;
	case 6: a->d.log = arg; return 0;
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
			return cmd_err(&cmd_mount, "--fault %s: expected N=SPEC with N a member's Number", arg), -1;
		a->fault[a->nfaults].slot = (unsigned)n;
		a->fault[a->nfaults++].spec = end + 1;
		return 0;
	}
	case 9: {
		struct passwd *pw = getpwnam(arg);
		char *end;
		unsigned long id = strtoul(arg, &end, 10);
		if (pw)
			a->fo.owner = pw->pw_uid;
		else if (*arg && !*end && arg[0] != '-' && id < (uid_t)-1)
			a->fo.owner = (uid_t)id;
		else
			return cmd_err(&cmd_mount, "--owner %s: no such user (give a name or a uid)", arg), -1;
		return 0;
	}
	case 10: {
		struct group *gr = getgrnam(arg);
		char *end;
		unsigned long id = strtoul(arg, &end, 10);
		if (gr)
			a->fo.group = gr->gr_gid;
		else if (*arg && !*end && arg[0] != '-' && id < (gid_t)-1)
			a->fo.group = (gid_t)id;
		else
			return cmd_err(&cmd_mount, "--group %s: no such group (give a name or a gid)", arg), -1;
		return 0;
	}
	case 11: {
		char *end;
		unsigned long m = strtoul(arg, &end, 8);
		if (!*arg || *end || arg[0] == '-' || m > 0777)
			return cmd_err(&cmd_mount, "--mode %s: expected octal permissions up to 777, e.g. 660", arg), -1;
		a->fo.mode = (mode_t)m;
		return 0;
	}
	case 12: a->fo.allow_other = 1; return 0;
	case 13: {
		char err[256];
		if (nbd_server_check_addr(arg, err, sizeof(err)))
			return cmd_err(&cmd_mount, "%s", err), -1;
		a->d.nbd = arg;
		return 0;
	}
	case 14:
		if (!*arg || strlen(arg) > 4096)
			return cmd_err(&cmd_mount, "--name '%s': expected 1 to 4096 bytes", arg), -1;
		a->nbd_only = 1;
		a->d.nbd_opts.name = arg;
		return 0;
	case 15: a->nbd_only = a->d.nbd_opts.readonly = 1; return 0;
	case 16: {
		char err[256];
		if (http_check_addr(arg, err, sizeof(err)))
			return cmd_err(&cmd_mount, "%s", err), -1;
		a->d.http = arg;
		return 0;
	}
	case 17: a->run = 1; return 0;
	case 18:
		if ((a->fo.transport = fu_transport_parse(arg)) < 0)
			return cmd_err(&cmd_mount, "--fuse-transport %s: expected auto, dev or uring", arg), -1;
		return 0;
	case 19:
		if (strcmp(arg, "write-through") && strcmp(arg, "write-back"))
			return cmd_err(&cmd_mount, "--journal-mode %s: expected write-through or write-back", arg), -1;
		a->vo.journal_write_back = !strcmp(arg, "write-back");
		return 0;
	case 20:
		if (a->nctls == MOUNT_MAX_CTLS)
			return cmd_err(&cmd_mount, "--ctl %s: at most %d settings", arg, MOUNT_MAX_CTLS), -1;
		a->ctl[a->nctls++] = arg;
		return 0;
	}
	return -1;
}

/* Assemble members (absolute paths) and serve them (FUSE, and NBD with --nbd). */
static int mount_members(const struct cmd *c, struct mount_args *a, char **members, unsigned nm)
{
	char err[1024];
	struct daemon *d;
	struct vol *v;
	/* before assembly: the log and the listening sockets */
	if (daemon_open(&d, &a->d, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	if (vol_open(&v, members, nm, &a->vo, err, sizeof(err))) {
		daemon_free(d);
		return cmd_err(c, "%s", err);
	}
	for (unsigned i = 0; i < a->nfaults; i++) {
		unsigned n = a->fault[i].slot;
		int s = vol_slot_of_number(v, n); /* the Number names the device, whatever its role */
		int bad = s < 0 || !vol_member(v, (unsigned)s);
		if (bad)
			snprintf(err, sizeof(err), "--fault %u=%s: no member m%u present", n, a->fault[i].spec, n);
		else if (member_fault_set(vol_member(v, (unsigned)s), a->fault[i].spec, err + 64, sizeof(err) - 64))
			bad = snprintf(err, 64, "--fault %u=", n) > 0, memmove(err + strlen(err), err + 64, strlen(err + 64) + 1);
		if (bad) {
			vol_close(v);
			daemon_free(d);
			return cmd_err(c, "%s", err);
		}
	}
	for (unsigned i = 0; i < a->nctls; i++)
		if (ctl_exec_setting(v, a->ctl[i], err, sizeof(err))) {
			vol_close(v);
			daemon_free(d);
			return cmd_err(c, "--ctl '%s': %s", a->ctl[i], strncmp(err, "ctl: ", 5) ? err : err + 5);
		}
	cmd_degraded_note(c, v, "MNT/status");
	if (daemon_run(d, v, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	return 0;
}

static int mount_run(const struct cmd *c, int argc, char **argv)
{
	struct mount_args a = { .vo = { .stats = VOL_STATS_ALL } };
	char err[1024];
	static char mnt[PATH_MAX];
	ff_opts_default(&a.fo);
	a.d.fuse = &a.fo;
	a.d.events = 1; /* MNT/events */
	int first, r = cmd_parse(c, argc, argv, &first, mount_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	a.fo.quiet = a.d.foreground && !a.d.log; /* -f without --log: stderr is the user's */
	if (argc - first < 2)
		return cmd_uerr(c, "need a mount point and at least one member");
	if (a.nbd_only && !a.d.nbd)
		return cmd_uerr(c, "--name and --read-only need --nbd");
	/* the daemon runs in / and unmounts by this name when signalled: a
	 * relative one would leave a dead mount behind */
	if (!realpath(argv[first], mnt))
		return cmd_err(c, "mount point %s: %s", argv[first], strerror(errno));
	a.fo.mountpoint = mnt;
	if (a.d.log && a.d.log[0] != '/') {
		/* the daemon runs in /: keep the log where the user meant */
		static char abs[2 * PATH_MAX + 2];
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(abs, sizeof(abs), "%s/%s", cwd, a.d.log);
		a.d.log = abs;
	}
	if (ff_check_mountpoint(a.fo.mountpoint, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	/* stored as given, a relative path would never match what fail, remove
	 * and status say (the CLI makes their paths absolute) */
	unsigned nm = (unsigned)(argc - first - 1);
	char **members = cmd_abs_paths(argv + first + 1, nm);
	if (!members)
		return cmd_err(c, "out of memory");
	/* --force takes back what it can and starts degraded, as mdadm's does */
	r = a.run || a.vo.force ? 0 : cmd_degraded_refuse(c, members, nm);
	if (!r)
		r = mount_members(c, &a, members, nm);
	cmd_free_paths(members, nm);
	return r;
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

/* --timeout SEC for umount and status (ctx: a long). */
static int timeout_opt(const struct cmd *c, const char *arg, void *ctx)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (!*arg || *end || v <= 0 || v > 86400)
		return cmd_err(c, "--timeout %s: not a number of seconds from 1 to 86400", arg), -1;
	*(long *)ctx = v;
	return 0;
}

static int umount_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	return timeout_opt(&cmd_umount, arg, ctx);
}

static int stop_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	return timeout_opt(&cmd_stop, arg, ctx);
}

/* A stopped or wedged daemon leaves every access to its mount waiting in
 * the kernel, where no timer reaches it; over FUSE over io_uring the wait is
 * even unkillable (the kernel hands a request to the daemon's ring at once,
 * and a request the daemon holds is waited out). So the command runs in a
 * child whose output comes through pipes, and this process watches it:
 * after the timeout it kills the child (which dies as soon as its wait
 * ends, before doing anything more) and exits with the message. A thread
 * watches instead when no child can be made. */
static struct {
	const struct cmd *c;
	const char *mnt;
	long secs;
	atomic_int done;
	int ctl; /* the child's end: a byte says "disarmed" */
} wd = { .ctl = -1 };

static void watchdog_give_up(void)
{
	cmd_err(wd.c, "%s: the daemon did not answer within %ld s (stopped or hung? "
		      "see 'ps' for its state; --timeout SEC waits longer)", wd.mnt, wd.secs);
	fflush(stdout);
	_exit(1);
}

static void *watchdog_run(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-watchdog"); /* top -H, ps -L */
	(void)arg;
	for (long i = 0; i < wd.secs * 10; i++) {
		if (atomic_load(&wd.done))
			return NULL;
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
	if (atomic_load(&wd.done))
		return NULL;
	watchdog_give_up();
	return NULL;
}

/* The parent's side: relay the child's output, give up at the deadline
 * unless it said it is past every access to the mount. Never returns. */
static void watchdog_parent(pid_t child, int out, int err, int ctl)
{
	struct pollfd pf[3] = { { out, POLLIN, 0 }, { err, POLLIN, 0 }, { ctl, POLLIN, 0 } };
	struct timespec now, end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += wd.secs;
	int armed = 1;
	char buf[4096];
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int ms = -1;
		if (armed) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long long left = (end.tv_sec - now.tv_sec) * 1000LL + (end.tv_nsec - now.tv_nsec) / 1000000;
			ms = left < 0 ? 0 : (int)left;
		}
		int n = poll(pf, 3, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) { /* the deadline, and nothing said it was met */
			kill(child, SIGKILL);
			watchdog_give_up();
		}
		for (int i = 0; i < 3; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			ssize_t k = read(pf[i].fd, buf, sizeof(buf));
			if (k <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
			} else if (i == 2) {
				armed = 0;
			} else if (write(i == 0 ? 1 : 2, buf, (size_t)k) < 0) {
				/* our reader went away: the child's output goes nowhere */
			}
		}
	}
	if (pf[2].fd >= 0)
		close(pf[2].fd);
	int st;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static void watchdog_arm(const struct cmd *c, const char *mnt, long secs)
{
	wd.c = c;
	wd.mnt = mnt;
	wd.secs = secs;
	atomic_store(&wd.done, 0);
	int out[2], err[2], ctl[2];
	fflush(stdout);
	fflush(stderr);
	if (pipe2(out, O_CLOEXEC) == 0) {
		if (pipe2(err, O_CLOEXEC) == 0) {
			if (pipe2(ctl, O_CLOEXEC) == 0) {
				pid_t p = fork();
				if (p > 0) {
					close(out[1]);
					close(err[1]);
					close(ctl[1]);
					watchdog_parent(p, out[0], err[0], ctl[0]);
				}
				if (p == 0) { /* the command goes on here */
					dup2(out[1], 1);
					dup2(err[1], 2);
					close(out[0]);
					close(out[1]);
					close(err[0]);
					close(err[1]);
					close(ctl[0]);
					wd.ctl = ctl[1];
					return;
				}
				close(ctl[0]);
				close(ctl[1]);
			}
			close(err[0]);
			close(err[1]);
		}
		close(out[0]);
		close(out[1]);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, watchdog_run, NULL) == 0)
		pthread_detach(t);
}

static void watchdog_disarm(void)
{
	atomic_store(&wd.done, 1);
	fflush(stdout);
	if (wd.ctl >= 0 && write(wd.ctl, "d", 1) != 1) {
		/* the watcher is gone: it gave up, and so does this */
		_exit(1);
	}
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

/* A reader of the mount's own files (fsvol stat -i, a monitor polling
 * MNT/stats.json, fsvol status) holds the mount for the moment of its read,
 * and umount2 fails with EBUSY if it lands then (about one umount in 200
 * under tests/stress/failpath.sh's once-a-second poll). Such a hold ends by
 * itself, so EBUSY is retried this long (at most half of --timeout) before
 * the mount counts as really in use; the wait is said once it lasts. */
#define UMOUNT_BUSY_MS 3000
#define UMOUNT_BUSY_SAY_MS 250

static int umount_retry_busy(const char *mnt, long timeout)
{
	long limit = timeout * 500 < UMOUNT_BUSY_MS ? timeout * 500 : UMOUNT_BUSY_MS;
	for (long ms = 0;; ms += 10) {
		if (umount2(mnt, 0) == 0)
			return 0;
		if (errno != EBUSY || ms >= limit)
			return -1;
		if (ms == UMOUNT_BUSY_SAY_MS)
			fprintf(stderr, "fsvol umount: %s: busy; waiting up to %ld s for it to be released\n", mnt,
				(limit + 999) / 1000);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
}

/* umount MNT, and stop MNT|DIR (mdadm --stop): a serve's ctl dir is
 * stopped through its ctl. */
static int umount_run(const struct cmd *c, int argc, char **argv)
{
	long timeout = 60;
	int first, r = cmd_parse(c, argc, argv, &first, c == &cmd_stop ? stop_opt : umount_opt, &timeout);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point%s", c == &cmd_stop ? " or ctl dir" : "");
	const char *mnt = argv[first];
	/* armed before the first look at MNT: even a stat of MNT/ctl waits in
	 * the kernel for a stopped daemon */
	watchdog_arm(c, mnt, timeout);
	if (cmd_is_ctl_dir(mnt)) {
		watchdog_disarm(); /* a ctl dir is no mount: its stop keeps its own time */
		return cmd_ctl_dir_stop(c, mnt, timeout);
	}
	if (!cmd_is_fsvol_mount(mnt))
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
		if (umount_retry_busy(mnt, timeout) < 0)
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
	watchdog_disarm(); /* the mount is gone: nothing can wait in the kernel now */
	/* Wait for the daemon to write its clean superblocks and exit. */
	for (long i = 0; pid > 0 && i < timeout * 200; i++) { /* 200 x 5 ms: a second */
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

const struct cmd cmd_stop = {
	.name = "stop",
	.operands = "MNT|DIR",
	.summary = "stop a volume (mdadm --stop): unmount MNT, or end the fsvol serve of ctl dir DIR; "
		   "the members are left clean",
	.more = "On a ctl dir, the server finishes the requests in flight, disconnects its clients, marks the "
		"members' superblocks clean and exits; its last counters stay in DIR, and DIR/status starts "
		"\"server: stopped (pid N)\". 'echo stop > DIR/ctl' does the same without waiting.",
	.opts = umount_opts,
	.run = umount_run,
};

/* ---- status ---- */

static const struct cmd_opt status_opts[] = {
	{ "timeout", 't', "SEC", "give up when the daemon has not answered after SEC seconds (default 5)" },
	{ 0 },
};

static int status_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	return timeout_opt(&cmd_status, arg, ctx);
}

static int status_run(const struct cmd *c, int argc, char **argv)
{
	char path[PATH_MAX + 16], buf[4096];
	long timeout = 5;
	int first, r = cmd_parse(c, argc, argv, &first, status_opt, &timeout);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	watchdog_arm(c, argv[first], timeout);
	if (cmd_is_ctl_dir(argv[first]))
		cmd_ctl_dir_refresh(argv[first]); /* current figures; a stopped server's last ones */
	else if (!cmd_is_fsvol_mount(argv[first]))
		return cmd_err(c, "%s: not an fsvol mount or ctl dir", argv[first]);
	snprintf(path, sizeof(path), "%s/status", argv[first]);
	FILE *f = fopen(path, "r");
	if (!f) {
		char why[PATH_MAX + 400];
		cmd_mnt_problem(argv[first], path, errno, why, sizeof(why));
		return cmd_err(c, "%s", why);
	}
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	watchdog_disarm();
	return 0;
}

const struct cmd cmd_status = {
	.name = "status",
	.operands = "MNT",
	.summary = "show level, members and their states (like /proc/mdstat)",
	.opts = status_opts,
	.run = status_run,
};
