/* ctl_dir: the mount's text files and ctl verbs in a plain directory, for a
 * volume served over NBD without a FUSE mount. Files are written to a
 * temporary name and renamed, so a reader always sees one whole snapshot.
 * Two words are the directory's own, not MNT/ctl's: "refresh TOKEN" rewrites
 * the files at once and then lists TOKEN in DIR/refreshed (fsvol stat,
 * status and detail ask so before they read), and "stop" ends the server as
 * SIGTERM does (fsvol stop DIR). DIR/events follows the events log. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsvol/front/ctl_dir.h"
#include "fsvol/front/ctl.h"
#include "fsvol/front/events.h"
#include "fsvol/front/report.h"

#define CTL_DIR_TOKENS 16 /* refresh tokens listed at once: as many askers */
#define CTL_DIR_TOKEN_MAX 64

struct ctl_dir {
	struct vol *v;
	char dir[4096];
	unsigned interval_ms;
	int fifo;        /* DIR/ctl, held open read-write so it never reports EOF */
	int wake[2];     /* a byte here ends the thread */
	pthread_t thread;
	int running;
	char line[512];  /* a command split over reads */
	size_t used;
	struct events_log *events; /* copied to DIR/events, or NULL */
	uint64_t events_off;       /* bytes of it copied so far */
	char token[CTL_DIR_TOKENS][CTL_DIR_TOKEN_MAX]; /* the last refresh tokens, a ring */
	unsigned ntoken;
};

static const struct {
	const char *name;
	enum report_kind kind;
} ctl_dir_files[] = {
	{ "stats", REPORT_TABLE },
	{ "stats.json", REPORT_JSON },
	{ "diskstats", REPORT_DISKSTATS },
	{ "status", REPORT_STATUS },
	{ "status.json", REPORT_STATUS_JSON },
};

static int ctl_dir_write_file(struct ctl_dir *c, const char *name, enum report_kind kind)
{
	char path[4200], tmp[4200], *buf = NULL;
	size_t len = 0;
	int r = report_render(c->v, kind, &buf, &len);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", c->dir, name);
	/* a fresh file: whatever was planted under the temporary name (a
	 * symbolic link to aim this daemon's writes elsewhere) is removed */
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0) {
			r = -errno;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}


/* What the events log gained since the last look, appended to DIR/events. */
static void ctl_dir_events(struct ctl_dir *c)
{
	char path[4200], buf[8192];
	if (!c->events || events_size(c->events) == c->events_off)
		return;
	snprintf(path, sizeof(path), "%s/events", c->dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return;
	size_t n;
	while ((n = events_read(c->events, c->events_off, buf, sizeof(buf))) > 0) {
		if (write(fd, buf, n) != (ssize_t)n)
			break;
		c->events_off += n;
	}
	close(fd);
}

static void ctl_dir_refresh(struct ctl_dir *c)
{
	for (size_t i = 0; i < sizeof(ctl_dir_files) / sizeof(ctl_dir_files[0]); i++)
		ctl_dir_write_file(c, ctl_dir_files[i].name, ctl_dir_files[i].kind);
	ctl_dir_events(c);
}

/* "refresh TOKEN": the files are current; TOKEN joins DIR/refreshed, which
 * lists the last CTL_DIR_TOKENS (one asker's token is not lost to the next). */
static void ctl_dir_refreshed(struct ctl_dir *c, const char *token)
{
	char path[4200], tmp[4200];
	if (!*token || strlen(token) >= CTL_DIR_TOKEN_MAX || token[strspn(token, "0123456789.-_abcdefghijklmnopqrstuvwxyz"
									       "ABCDEFGHIJKLMNOPQRSTUVWXYZ")])
		return;
	snprintf(c->token[c->ntoken++ % CTL_DIR_TOKENS], CTL_DIR_TOKEN_MAX, "%s", token);
	snprintf(path, sizeof(path), "%s/refreshed", c->dir);
	snprintf(tmp, sizeof(tmp), "%s/.refreshed.tmp", c->dir);
	unlink(tmp);
	FILE *f = NULL;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	unsigned n = c->ntoken < CTL_DIR_TOKENS ? c->ntoken : CTL_DIR_TOKENS;
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s\n", c->token[(c->ntoken - n + i) % CTL_DIR_TOKENS]);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/* Append the outcome of one command to DIR/ctl.log. */
static void ctl_dir_log(struct ctl_dir *c, const char *cmd, const char *outcome)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/ctl.log", c->dir);
	/* never through a symbolic link planted there (ctl_dir_open refuses one) */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "%s: %s\n", cmd, outcome);
	fclose(f);
}

static void ctl_dir_command(struct ctl_dir *c, char *cmd, size_t len)
{
	char err[256];
	while (len && (cmd[len - 1] == '\r' || cmd[len - 1] == ' ' || cmd[len - 1] == '\t'))
		len--;
	cmd[len] = 0;
	if (!len)
		return;
	if (!strncmp(cmd, "refresh", 7) && (!cmd[7] || cmd[7] == ' ')) {
		ctl_dir_refresh(c); /* not logged: readers ask for it all the time */
		ctl_dir_refreshed(c, cmd[7] ? cmd + 8 : "");
		return;
	}
	if (!strcmp(cmd, "stop")) {
		/* the main thread takes it in sigwait, and stops as for kill PID */
		ctl_dir_log(c, cmd, "ok");
		kill(getpid(), SIGTERM);
		return;
	}
	int r = ctl_exec(c->v, cmd, len, err, sizeof(err));
	/* the files show the command's effect before its outcome is logged */
	ctl_dir_refresh(c);
	ctl_dir_log(c, cmd, r ? err : "ok");
}

/* Read what is in the FIFO; run every complete line. */
static void ctl_dir_read(struct ctl_dir *c)
{
	for (;;) {
		ssize_t n = read(c->fifo, c->line + c->used, sizeof(c->line) - 1 - c->used);
		if (n <= 0) {
			/* drained: a last command without its newline is whole too
			 * (fsvol scrub writes "check" bare, as to MNT/ctl) */
			if (c->used)
				ctl_dir_command(c, c->line, c->used);
			c->used = 0;
			return;
		}
		c->used += (size_t)n;
		char *nl;
		while ((nl = memchr(c->line, '\n', c->used))) {
			size_t l = (size_t)(nl - c->line);
			ctl_dir_command(c, c->line, l);
			memmove(c->line, nl + 1, c->used - l - 1);
			c->used -= l + 1;
		}
		if (c->used == sizeof(c->line) - 1) {
			ctl_dir_log(c, "(line)", "ctl: command too long; dropped");
			c->used = 0;
		}
	}
}

static void *ctl_dir_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-ctl"); /* top -H, ps -L */
	struct ctl_dir *c = arg;
	for (;;) {
		struct pollfd p[2] = { { c->fifo, POLLIN, 0 }, { c->wake[0], POLLIN, 0 } };
		int n = poll(p, 2, (int)c->interval_ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && p[1].revents)
			break;
		if (n > 0 && p[0].revents)
			ctl_dir_read(c);
		ctl_dir_refresh(c);
	}
	return NULL;
}

int ctl_dir_open(struct ctl_dir **out, struct vol *v, const char *dir, unsigned interval_ms,
		 char *err, size_t errlen)
{
	char path[4200];
	struct stat st;
	*out = NULL;
	if (strlen(dir) >= sizeof(((struct ctl_dir *)0)->dir) - 16) {
		snprintf(err, errlen, "--ctl-dir %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "--ctl-dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--ctl-dir %s: not a directory", dir);
		return -ENOTDIR;
	}
	snprintf(path, sizeof(path), "%s/ctl", dir);
	if (lstat(path, &st) == 0 && !S_ISFIFO(st.st_mode)) {
		snprintf(err, errlen, "--ctl-dir %s: %s exists and is not a FIFO", dir, path);
		return -EEXIST;
	}
	char log[4200];
	snprintf(log, sizeof(log), "%s/ctl.log", dir);
	if (lstat(log, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--ctl-dir %s: %s is %s, not a regular file: remove it", dir, log,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "another kind of file");
		return -EEXIST;
	}
	/* the files of the last server that are not rewritten at once: gone */
	static const char *const stale[] = { "events", "refreshed" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(log, sizeof(log), "%s/%s", dir, stale[i]);
		if (lstat(log, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "--ctl-dir %s: %s is not a regular file: remove it", dir, log);
			return -EEXIST;
		}
		unlink(log);
	}
	if (mkfifo(path, 0600) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	struct ctl_dir *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->v = v;
	c->interval_ms = interval_ms ? interval_ms : 1000;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	c->wake[0] = c->wake[1] = -1;
	c->fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fifo < 0 || pipe2(c->wake, O_CLOEXEC) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		if (c->fifo >= 0)
			close(c->fifo);
		free(c);
		return -e;
	}
	*out = c;
	return 0;
}

int ctl_dir_start(struct ctl_dir *c, struct events_log *events)
{
	c->events = events;
	ctl_dir_refresh(c);
	int r = pthread_create(&c->thread, NULL, ctl_dir_main, c);
	if (r)
		return -r;
	c->running = 1;
	return 0;
}

void ctl_dir_mark_ended(const char *dir, pid_t pid, int wstatus)
{
	char path[4200], tmp[4200], old[65536], mine[32];
	snprintf(path, sizeof(path), "%s/status", dir);
	snprintf(tmp, sizeof(tmp), "%s/.status.tmp", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, old, sizeof(old) - 1) : -1;
	if (fd >= 0)
		close(fd);
	old[n > 0 ? n : 0] = 0;
	/* only a status this server wrote (not a newer server's) */
	snprintf(mine, sizeof(mine), "pid: %d\n", (int)pid);
	if (!strstr(old, mine))
		return;
	char head[256];
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		snprintf(head, sizeof(head), "server: stopped (pid %d); the volume was closed clean\n", (int)pid);
	else if (WIFSIGNALED(wstatus))
		snprintf(head, sizeof(head), "server: died (pid %d killed by signal %d, %s); the volume is not served "
			 "and was not closed clean\n", (int)pid, WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	else
		snprintf(head, sizeof(head), "server: died (pid %d exited with status %d); the volume is not served\n",
			 (int)pid, WEXITSTATUS(wstatus));
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int ok = write(fd, head, strlen(head)) == (ssize_t)strlen(head) &&
		 write(fd, old, strlen(old)) == (ssize_t)strlen(old);
	if (close(fd) == 0 && ok && rename(tmp, path) == 0)
		return;
	unlink(tmp);
}

void ctl_dir_close(struct ctl_dir *c)
{
	if (!c)
		return;
	if (c->running) {
		ssize_t w = write(c->wake[1], "x", 1);
		(void)w;
		pthread_join(c->thread, NULL);
		/* the last counters stay readable after the server is gone */
		ctl_dir_refresh(c);
	}
	close(c->fifo);
	close(c->wake[0]);
	close(c->wake[1]);
	free(c);
}
