/* daemon: a served volume and its optional services, in one order for
 * fsvol mount (FUSE, with NBD and HTTP if asked) and fsvol serve (NBD, with
 * a ctl dir if asked):
 *
 *   in the foreground, so a refusal reaches the user with exit status 1:
 *     daemon_open  the log, the HTTP and NBD listening sockets
 *     daemon_run   the ctl dir, the FUSE mount
 *   then in the background, messages in the log (or syslog) from the fork
 *     on; the launcher returns once the daemon serves, or fails with its
 *     reason: the volume's threads; the events log, HTTP, NBD, the ctl dir's
 *     thread; the pidfile; the launcher told
 *   until the end: the FUSE loop (unmounted, or SIGTERM, SIGINT, SIGHUP), or
 *     without FUSE those signals taken by sigwait
 *   then the services in reverse: NBD clients disconnected once their
 *     requests finish, HTTP stopped, the engine drained, the ctl dir written
 *     a last time (the final counters and events), events stopped, FUSE
 *     unmounted, and the volume closed clean.
 *
 * With FUSE, the mount is the front end: another service that cannot start
 * is logged and the mount serves. Without it, each one is needed: the
 * daemon stops. With a ctl dir, a watcher process stays the daemon's parent
 * and writes how it ended to DIR/status, which a dead daemon cannot. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsvol/core/engine.h"
#include "fsvol/front/ctl_dir.h"
#include "fsvol/front/daemon.h"
#include "fsvol/front/events.h"
#include "fsvol/front/http.h"
#include "fsvol/util/log.h"

struct daemon {
	struct daemon_opts o;
	int log_fd, http_fd, nbd_fd; /* opened by daemon_open, -1 once handed on */
	int ready_fd;                /* to the launcher; -1 in the foreground */
	int user_err;                /* the launcher's stderr until ready, for a failure; else -1 */
	int started;                 /* the volume's threads run */
	struct vol *v;
	struct ff *fuse;
	struct ctl_dir *cd;
	struct events_log *events;
	struct http_server *http;
	struct nbd_server *nbd;
};

/* Open the log as a root daemon may: O_NOFOLLOW|O_CREAT|O_APPEND, mode 0600,
 * a regular file with one link. The fd, or -errno with a message naming it. */
static int daemon_log_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	/* a planted symlink or hard link must not aim a root daemon's
	 * appends at another file */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "--log %s: %s%s", path, strerror(e),
			 e == ELOOP ? " (a symbolic link: give the real file)" : "");
		return -e;
	}
	if (fstat(fd, &st) < 0)
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		snprintf(err, errlen, "--log %s: %s", path,
			 !S_ISREG(st.st_mode) ? "not a regular file" : "has other hard links");
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Close what was not handed on; a unix socket nobody will serve goes too. */
static void daemon_close_fds(struct daemon *d)
{
	if (d->nbd_fd >= 0) {
		close(d->nbd_fd);
		if (!strncmp(d->o.nbd, "unix:", 5))
			unlink(d->o.nbd + 5);
	}
	if (d->http_fd >= 0)
		close(d->http_fd);
	if (d->log_fd >= 0)
		close(d->log_fd);
	d->nbd_fd = d->http_fd = d->log_fd = -1;
}

int daemon_open(struct daemon **out, const struct daemon_opts *o, char *err, size_t errlen)
{
	struct daemon *d = calloc(1, sizeof(*d));
	int r = 0;
	*out = NULL;
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*d = (struct daemon){ .o = *o, .log_fd = -1, .http_fd = -1, .nbd_fd = -1, .ready_fd = -1,
			     .user_err = -1 };
	/* a log that cannot be written is an error, not silence */
	if (o->log && !o->foreground && (r = d->log_fd = daemon_log_open(o->log, err, errlen)) < 0)
		goto fail;
	if (o->http && (r = d->http_fd = http_listen(o->http, err, errlen)) < 0)
		goto fail;
	if (o->nbd && (r = d->nbd_fd = nbd_server_listen(o->nbd, err, errlen)) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	daemon_free(d);
	return r;
}

void daemon_free(struct daemon *d)
{
	if (!d)
		return;
	daemon_close_fds(d);
	free(d);
}

/* Fork: the launcher waits until the daemon serves (or fails: its message
 * is on the launcher's stderr) and exits 0 or 1; the daemon goes on here. */
static int daemon_background(struct daemon *d, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (pid > 0) {
		char b;
		ssize_t n;
		close(pfd[1]);
		while ((n = read(pfd[0], &b, 1)) < 0 && errno == EINTR)
			;
		_exit(n == 1 ? 0 : 1); /* the volume is the daemon's now */
	}
	close(pfd[0]);
	d->ready_fd = pfd[1];
	setsid();
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	/* the daemon's messages go to the log from here on (a recovery that
	 * resumes says so as the threads start); the user's stderr is kept to
	 * say why, should the daemon fail before it serves */
	d->user_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (d->log_fd >= 0) {
		dup2(d->log_fd, 2);
		close(d->log_fd);
		d->log_fd = -1;
	} else {
		fsvol_log_syslog(); /* stderr is /dev/null from here on: keep the messages */
		if (null >= 0)
			dup2(null, 2);
	}
	if (null > 2)
		close(null);
	return 0;
}

/* The watcher (the daemon's parent): pass on the signals that stop the
 * daemon, wait for it, and say in the ctl dir how it ended. Its exit status
 * is the daemon's. */
static pid_t daemon_child;

static void daemon_forward(int sig)
{
	if (daemon_child > 0)
		kill(daemon_child, sig);
}

static int daemon_watch(pid_t child, const char *ctl_dir, int foreground)
{
	int st;
	daemon_child = child;
	struct sigaction sa = { .sa_handler = daemon_forward };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* nothing of the volume stays open here: the daemon alone holds it;
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

static void daemon_pidfile(const char *path)
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

/* A service that did not start: the end without FUSE, logged with it. */
static int daemon_service_failed(struct daemon *d, int r, const char *msg, char *err, size_t errlen)
{
	if (!d->fuse) {
		if (msg != err)
			snprintf(err, errlen, "%s", msg);
		return r;
	}
	fsvol_log(LOG_ERR, "%s; the mount still serves", msg);
	return 0;
}

/* In the order they are stopped backwards (daemon_stop). */
static int daemon_start_services(struct daemon *d, char *err, size_t errlen)
{
	int r = 0;
	if (d->o.events && events_start(d->v, &d->events))
		fsvol_log(LOG_ERR, "cannot start MNT/events; the volume still serves");
	if (d->http_fd >= 0) {
		d->http = http_start(d->v, d->http_fd, err, errlen);
		d->http_fd = -1; /* taken over */
		if (!d->http && (r = daemon_service_failed(d, -EIO, err, err, errlen)))
			return r;
	}
	if (d->nbd_fd >= 0) {
		d->nbd = nbd_server_start(d->v, d->nbd_fd, &d->o.nbd_opts, err, errlen);
		d->nbd_fd = -1;
		if (!d->nbd && (r = daemon_service_failed(d, -EIO, err, err, errlen)))
			return r;
	}
	if (d->cd && ctl_dir_start(d->cd, d->events))
		return daemon_service_failed(d, -EIO, "--ctl-dir: cannot start its thread", err, errlen);
	return 0;
}

/* Serving: tell the launcher, which returns. */
static void daemon_ready(struct daemon *d)
{
	if (d->ready_fd < 0)
		return;
	ssize_t w = write(d->ready_fd, "1", 1);
	(void)w;
	close(d->ready_fd);
	d->ready_fd = -1;
	close(d->user_err);
	d->user_err = -1;
}

static void daemon_stop(struct daemon *d)
{
	nbd_server_stop(d->nbd);
	http_stop(d->http);
	/* requests still in the engine reply through FUSE or NBD: let them */
	if (d->started)
		engine_drain(d->v);
	ctl_dir_close(d->cd); /* the last files, and the last events: it reads the log */
	events_stop(d->events);
	ff_close(d->fuse);
	vol_close(d->v);
	daemon_close_fds(d);
	/* a launcher still waiting learns of the failure when this process
	 * exits, after the message is printed: ready_fd stays open till then */
	free(d);
}

int daemon_run(struct daemon *d, struct vol *v, char *err, size_t errlen)
{
	sigset_t set;
	int r, sig, user_err;
	d->v = v;
	if (d->o.ctl_dir && (r = ctl_dir_open(&d->cd, v, d->o.ctl_dir, 0, err, errlen)))
		goto out;
	if (d->o.fuse && (r = ff_mount(&d->fuse, v, d->o.fuse, err, errlen)))
		goto out;
	fflush(stdout);
	fflush(stderr);
	if (!d->o.foreground && (r = daemon_background(d, err, errlen)))
		goto out;
	/* as fuse_daemonize: a mount keeps no directory busy (mount's paths
	 * are absolute; serve's --ctl-dir and --pidfile may be relative) */
	if (d->fuse && chdir("/"))
		fsvol_log(LOG_WARNING, "chdir /: %s", strerror(errno));
	if (d->o.ctl_dir) {
		pid_t pid = fork();
		if (pid < 0) {
			r = -errno;
			snprintf(err, errlen, "fork: %s", strerror(errno));
			goto out;
		}
		if (pid > 0)
			_exit(daemon_watch(pid, d->o.ctl_dir, d->o.foreground));
	}
	/* without FUSE (whose loop ends on them) the signals that stop the
	 * daemon are taken by sigwait: every thread started below inherits
	 * the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (!d->fuse)
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (vol_start(v)) {
		snprintf(err, errlen, "cannot start the volume's threads");
		r = -EIO;
		goto out;
	}
	d->started = 1;
	if ((r = daemon_start_services(d, err, errlen)))
		goto out;
	if (d->o.pidfile)
		daemon_pidfile(d->o.pidfile);
	daemon_ready(d);
	if (d->fuse) {
		r = ff_run(d->fuse, d->events, err, errlen);
	} else {
		while (sigwait(&set, &sig) != 0)
			;
		r = 0;
	}
out:
	user_err = d->user_err;
	daemon_stop(d);
	if (user_err >= 0) {
		/* not serving yet: the log keeps why, and so does the user's
		 * terminal, where the caller prints err */
		if (r)
			fsvol_log(LOG_ERR, "%s", err);
		dup2(user_err, 2);
		close(user_err);
	}
	return r;
}
