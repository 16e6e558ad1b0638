/* cmd_ctldir: the commands that take a mount, on the --ctl-dir of fsvol serve
 * instead. DIR/ctl is a FIFO that cannot fail a write, so a command's
 * outcome is read back from DIR/ctl.log; DIR's files are rewritten once a
 * second, so a reader first asks for a rewrite ("refresh TOKEN") and waits
 * for TOKEN in DIR/refreshed; "stop" ends the server (mdadm --stop). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"

#define CTLDIR_POLL_NS (10 * 1000 * 1000)
#define CTLDIR_REFRESH_WAIT_MS 5000 /* a server this slow to answer: read what is there */

static void nap(void)
{
	nanosleep(&(struct timespec){ 0, CTLDIR_POLL_NS }, NULL);
}

int cmd_is_ctl_dir(const char *dir)
{
	char path[PATH_MAX + 16];
	struct stat st;
	snprintf(path, sizeof(path), "%s/ctl", dir);
	return lstat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* A writer's end of DIR/ctl: -ENXIO when no server reads it. */
static int ctl_fifo(const char *dir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/ctl", dir);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

static int server_alive(const char *dir)
{
	int fd = ctl_fifo(dir);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The first line of DIR/status (how the last server ended, when it has). */
static void status_head(const char *dir, char *out, size_t len)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/status", dir);
	FILE *f = fopen(path, "re");
	out[0] = 0;
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = 0;
		fclose(f);
	}
	out[strcspn(out, "\n")] = 0;
}

static void no_server(const char *dir, char *reason, size_t len)
{
	char head[256];
	status_head(dir, head, sizeof(head));
	snprintf(reason, len, "%s: no fsvol serve runs on this ctl dir%s%s", dir, *head ? "; its status says: " : "",
		 head);
}

/* Write one line to DIR/ctl. 0, or -errno with the reason. */
static int fifo_write(const char *dir, const char *line, char *reason, size_t len)
{
	int fd = ctl_fifo(dir);
	if (fd == -ENXIO) {
		no_server(dir, reason, len);
		return fd;
	}
	if (fd < 0) {
		snprintf(reason, len, "%s/ctl: %s", dir, strerror(-fd));
		return fd;
	}
	/* under PIPE_BUF: one write, whole, never mixed with another's */
	ssize_t w = write(fd, line, strlen(line));
	int e = w < 0 ? errno : (size_t)w != strlen(line) ? EIO : 0;
	close(fd);
	if (e)
		snprintf(reason, len, "%s/ctl: %s", dir, e == EAGAIN ? "full: the server is not reading it" : strerror(e));
	return -e;
}

/* The outcome logged for command after byte off of DIR/ctl.log: 1 found
 * (ok or the reason in reason), 0 not yet. */
static int log_outcome(const char *dir, off_t off, const char *command, int *ok, char *reason, size_t len)
{
	char path[PATH_MAX + 16], line[1024];
	snprintf(path, sizeof(path), "%s/ctl.log", dir);
	FILE *f = fopen(path, "re");
	size_t cl = strlen(command);
	int found = 0;
	if (!f)
		return 0;
	if (fseeko(f, off, SEEK_SET) == 0)
		while (!found && fgets(line, sizeof(line), f)) {
			size_t l = strlen(line);
			if (!l || line[l - 1] != '\n')
				break; /* a line still being written */
			line[l - 1] = 0;
			if (strncmp(line, command, cl) || strncmp(line + cl, ": ", 2))
				continue;
			const char *out = line + cl + 2;
			*ok = !strcmp(out, "ok");
			snprintf(reason, len, "%s", !strncmp(out, "ctl: ", 5) ? out + 5 : out);
			found = 1;
		}
	fclose(f);
	return found;
}

int cmd_ctl_dir_send(const char *dir, const char *command, char *reason, size_t len)
{
	char path[PATH_MAX + 16], line[1024];
	struct stat st;
	if (strchr(command, '\n') || strlen(command) + 2 > sizeof(line)) {
		snprintf(reason, len, "%s: a command is one line of at most %zu bytes", dir, sizeof(line) - 2);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/ctl.log", dir);
	off_t off = stat(path, &st) == 0 ? st.st_size : 0;
	snprintf(line, sizeof(line), "%s\n", command);
	int r = fifo_write(dir, line, reason, len);
	if (r)
		return r;
	for (;;) {
		int ok = 0;
		if (log_outcome(dir, off, command, &ok, reason, len))
			return ok ? 0 : -EINVAL;
		if (!server_alive(dir)) {
			snprintf(reason, len, "%s: the server ended before it answered '%s' (see %s/status)", dir, command,
				 dir);
			return -EPIPE;
		}
		nap();
	}
}

/* Is token among the lines of DIR/refreshed? */
static int refreshed(const char *dir, const char *token)
{
	char path[PATH_MAX + 16], line[128];
	snprintf(path, sizeof(path), "%s/refreshed", dir);
	FILE *f = fopen(path, "re");
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		found = !strcmp(line, token);
	}
	fclose(f);
	return found;
}

int cmd_ctl_dir_refresh(const char *dir)
{
	static unsigned seq;
	struct timespec t;
	char token[64], line[96], why[512];
	clock_gettime(CLOCK_MONOTONIC, &t);
	snprintf(token, sizeof(token), "%d.%u.%lld%09ld", (int)getpid(), seq++, (long long)t.tv_sec, t.tv_nsec);
	snprintf(line, sizeof(line), "refresh %s\n", token);
	int r = fifo_write(dir, line, why, sizeof(why));
	if (r)
		return r; /* no server: its files are its last word */
	for (int ms = 0; ms < CTLDIR_REFRESH_WAIT_MS; ms += CTLDIR_POLL_NS / 1000000) {
		if (refreshed(dir, token))
			return 0;
		if (!server_alive(dir))
			return -ENXIO;
		nap();
	}
	return -ETIMEDOUT;
}

int cmd_ctl_dir_stop(const struct cmd *c, const char *dir, long timeout)
{
	char reason[512], head[256], want[64], died[64];
	int pid = 0;
	char path[PATH_MAX + 16], line[256];
	snprintf(path, sizeof(path), "%s/status", dir);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "pid: %d", &pid) == 1)
			break;
	if (f)
		fclose(f);
	if (cmd_ctl_dir_send(dir, "stop", reason, sizeof(reason)))
		return cmd_err(c, "%s", reason);
	/* the server's watcher puts how it ended first in DIR/status (its pid
	 * unknown, any server's end will do) */
	snprintf(want, sizeof(want), pid > 0 ? "server: stopped (pid %d)" : "server: stopped (pid ", pid);
	snprintf(died, sizeof(died), pid > 0 ? "server: died (pid %d" : "server: died (pid ", pid);
	for (long ms = 0; ms < timeout * 1000; ms += CTLDIR_POLL_NS / 1000000) {
		status_head(dir, head, sizeof(head));
		if (!strncmp(head, want, strlen(want))) {
			printf("fsvol: stopped %s (pid %d): the volume was closed clean\n", dir, pid);
			return 0;
		}
		if (!strncmp(head, died, strlen(died)))
			return cmd_err(c, "%s: %s", dir, head);
		nap();
	}
	return cmd_err(c, "%s: asked to stop, but server %d has not ended after %ld s", dir, pid, timeout);
}
