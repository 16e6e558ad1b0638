/* fsvol serve: assemble a volume and export it over NBD (fsvol's own server,
 * fsvol/front/nbd_server.c); counters and control go to --ctl-dir DIR.
 *
 * Everything that can fail on the user's input (options, the log, the
 * address, the members, the ctl dir) happens before the process goes to the
 * background, so errors reach the terminal with exit status 1. With
 * --ctl-dir a small watcher process stays the server's parent: when the
 * server ends, it writes how in DIR/status (stopped clean, or died: killed,
 * aborted), which a dead server can no longer do. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/core/engine.h"
#include "fsvol/core/vol_opts.h"
#include "fsvol/core/volume.h"
#include "fsvol/front/ctl_dir.h"
#include "fsvol/front/fuse_front.h"
#include "fsvol/front/nbd_server.h"
#include "fsvol/util/log.h"

static const struct cmd_opt serve_opts[] = {
	{ "nbd", 0, "ADDR", "listen on unix:PATH or [ADDR:]PORT (required)" },
	{ "name", 0, "EXPORT", "the export's name, listed to clients; other names are refused (default: empty, any name accepted)" },
	{ "read-only", 'r', NULL, "export read-only" },
	{ "ctl-dir", 0, "DIR", "counters and control: DIR/stats, stats.json, diskstats, status (rewritten every second); commands to the FIFO DIR/ctl, outcomes in DIR/ctl.log" },
	{ "foreground", 'f', NULL, "stay in the foreground (Ctrl-C stops the server)" },
	{ "pidfile", 0, "FILE", "write the server's pid to FILE once it serves" },
	{ "log", 0, "FILE", "append the server's messages to FILE once it runs in the background (created 0600; a symbolic link is refused)" },
	{ "buffered", 0, NULL, "open members without O_DIRECT" },
	{ "force", 0, NULL, "assemble even with stale or unreadable members (they count as missing)" },
	{ "read-policy", 0, "POLICY", "raid1/raid10 reads: md (default), round-robin, prefer:N, split:SIZE" },
	{ "stats", 0, "LEVEL", "counters: all (default), volume, off" },
	{ "model", 0, "SPEC", "emulated disks (see fsvol model list); hard disks make the export rotational" },
	{ "run", 0, NULL, "start degraded when a member the superblocks record as active is not given (as mount --run)" },
	{ 0 },
};

struct serve_args {
	const char *addr, *name, *ctl_dir, *pidfile, *log;
	int readonly, foreground;
	int run;                /* --run: a degraded start is wanted */
	struct vol_opts vo;
};

static int serve_opt(int i, const char *arg, void *ctx)
{
	struct serve_args *a = ctx;
	char err[512];
	switch (i) {
	case 0:
		if (nbd_server_check_addr(arg, err, sizeof(err)))
			return cmd_err(&cmd_serve, "%s", err), -1;
		a->addr = arg;
		return 0;
	case 1:
		if (!*arg || strlen(arg) > 4096)
			return cmd_err(&cmd_serve, "--name '%s': expected 1 to 4096 bytes", arg), -1;
		a->name = arg;
		return 0;
	case 2: a->readonly = 1; return 0;
	case 3: a->ctl_dir = arg; return 0;
	case 4: a->foreground = 1; return 0;
	case 5: a->pidfile = arg; return 0;
	case 6: a->log = arg; return 0;
	case 7: a->vo.buffered = 1; return 0;
	case 8: a->vo.force = 1; return 0;
	case 9:
		if (vol_opts_parse_policy(arg, &a->vo))
			return cmd_err(&cmd_serve, "--read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", arg), -1;
		return 0;
	case 10:
		if (vol_opts_parse_stats(arg, &a->vo))
			return cmd_err(&cmd_serve, "--stats %s: expected all, volume or off", arg), -1;
		return 0;
	case 11: a->vo.model = arg; return 0;
	case 12: a->run = 1; return 0;
	default: return -1;
	}
}

/* The watcher (the server's parent): pass on the signals that stop the
 * server, wait for it, and say in the ctl dir how it ended (stopped clean, or
 * died). Its exit status is the server's. */
static pid_t serve_child;

static void serve_forward(int sig)
{
	if (serve_child > 0)
		kill(serve_child, sig);
}

static int serve_watch(pid_t child, const char *ctl_dir, int foreground)
{
	int st;
	serve_child = child;
	struct sigaction sa = { .sa_handler = serve_forward };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* nothing of the volume stays open here: the server alone holds it;
	 * in the background not the launcher's stderr either (whoever reads it,
	 * a pipe, would wait for this process to end) */
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (!foreground)
			dup2(null, 2);
		if (null > 2)
			close(null);
	}
	close_range(3, ~0u, 0);
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	ctl_dir_mark_ended(ctl_dir, child, st);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void serve_pidfile(const char *path)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	if (!f) {
		fsvol_log(LOG_ERR, "--pidfile %s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) || rename(tmp, path))
		fsvol_log(LOG_ERR, "--pidfile %s: %s", path, strerror(errno));
}

/* The server: start the threads, tell the launcher, serve until signalled,
 * close the volume clean. Runs with SIGTERM, SIGINT, SIGHUP blocked (every
 * thread inherits that), taking them with sigwait. */
static int serve_main(const struct cmd *c, struct serve_args *a, struct vol *v, struct ctl_dir *cd, int lfd,
		      int ready_fd, int log_fd)
{
	char err[1024];
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (vol_start(v)) {
		close(lfd);
		ctl_dir_close(cd);
		vol_close(v);
		return cmd_err(c, "cannot start the volume's threads");
	}
	struct nbd_server_opts no = { .name = a->name, .readonly = a->readonly };
	struct nbd_server *s = nbd_server_start(v, lfd, &no, err, sizeof(err));
	if (!s || (cd && ctl_dir_start(cd))) {
		nbd_server_stop(s);
		ctl_dir_close(cd);
		vol_close(v);
		return cmd_err(c, "%s", s ? "--ctl-dir: cannot start its thread" : err);
	}
	if (a->pidfile)
		serve_pidfile(a->pidfile);
	if (ready_fd >= 0) {
		/* the launcher returns now; later messages go to the log */
		if (log_fd >= 0) {
			dup2(log_fd, 2);
			close(log_fd);
		} else {
			fsvol_log_syslog();
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0) {
				dup2(null, 2);
				close(null);
			}
		}
		ssize_t w = write(ready_fd, "1", 1);
		(void)w;
		close(ready_fd);
	}
	while (sigwait(&set, &sig) != 0)
		;
	/* requests in flight finish, clients are disconnected (a kernel
	 * nbd-client never hangs up by itself), then the volume closes clean */
	nbd_server_stop(s);
	engine_drain(v);
	ctl_dir_close(cd);
	vol_close(v);
	return 0;
}

static int serve_run(const struct cmd *c, int argc, char **argv)
{
	struct serve_args a = { .vo = { .stats = VOL_STATS_ALL } };
	char err[1024];
	int first, r = cmd_parse(c, argc, argv, &first, serve_opt, &a), log_fd = -1;
	if (r)
		return r > 0 ? 0 : 2;
	if (!a.addr)
		return cmd_uerr(c, "--nbd unix:PATH or [ADDR:]PORT is required");
	if (argc - first < 1)
		return cmd_uerr(c, "need at least one member");
	unsigned nm = (unsigned)(argc - first);
	char **members = cmd_abs_paths(argv + first, nm); /* as mount stores them */
	if (!members)
		return cmd_err(c, "out of memory");
	/* --force takes back what it can and starts degraded, as mdadm's does */
	if (!a.run && !a.vo.force && (r = cmd_degraded_refuse(c, members, nm))) {
		cmd_free_paths(members, nm);
		return r;
	}
	/* before assembly: a log that cannot be written is an error, not silence */
	if (a.log && !a.foreground && (log_fd = ff_log_open(a.log, err, sizeof(err))) < 0)
		return cmd_err(c, "%s", err);
	int lfd = nbd_server_listen(a.addr, err, sizeof(err));
	if (lfd < 0) {
		if (log_fd >= 0)
			close(log_fd);
		return cmd_err(c, "%s", err);
	}
	struct vol *v = NULL;
	struct ctl_dir *cd = NULL;
	r = vol_open(&v, members, nm, &a.vo, err, sizeof(err));
	cmd_free_paths(members, nm); /* vol_open keeps its own copies */
	if (r ||
	    (a.ctl_dir && ctl_dir_open(&cd, v, a.ctl_dir, 0, err, sizeof(err)))) {
		if (v)
			vol_close(v);
		close(lfd);
		if (!strncmp(a.addr, "unix:", 5))
			unlink(a.addr + 5);
		if (log_fd >= 0)
			close(log_fd);
		return cmd_err(c, "%s", err);
	}
	cmd_degraded_note(c, v);
	if (vol_was_dirty(v) && layout_copies(vol_geom(v)) + layout_parity_count(vol_geom(v)) > 1)
		fprintf(stderr, "fsvol serve: warning: the volume was not shut down cleanly; resyncing "
				"parity and copies in the background (see status)\n");
	fflush(stderr);
	int pfd[2] = { -1, -1 };
	if (!a.foreground) {
		if (pipe2(pfd, O_CLOEXEC) < 0)
			return cmd_err(c, "pipe: %s", strerror(errno));
		pid_t pid = fork();
		if (pid < 0)
			return cmd_err(c, "fork: %s", strerror(errno));
		if (pid > 0) {
			/* the launcher: back to the user once the server serves */
			char b;
			ssize_t n;
			close(pfd[1]);
			while ((n = read(pfd[0], &b, 1)) < 0 && errno == EINTR)
				;
			_exit(n == 1 ? 0 : 1); /* the volume is the server's now */
		}
		close(pfd[0]);
		setsid();
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			close(null);
		}
	}
	if (a.ctl_dir) {
		pid_t pid = fork();
		if (pid < 0)
			return cmd_err(c, "fork: %s", strerror(errno));
		if (pid > 0)
			_exit(serve_watch(pid, a.ctl_dir, a.foreground));
	}
	return serve_main(c, &a, v, cd, lfd, pfd[1], log_fd);
}

const struct cmd cmd_serve = {
	.name = "serve",
	.usage = "--nbd unix:PATH|[ADDR:]PORT [--name EXPORT] [-r] [--ctl-dir DIR] [-f] MEMBER...",
	.summary = "assemble a volume and export it over NBD (counters: --ctl-dir)",
	.opts = serve_opts,
	.run = serve_run,
};
