/* nbd_launch: build nbdkit's command line for fsvol's plugin and run it.
 * nbdkit always runs with -f: in the background it is this process's child,
 * and the plugin writes one byte to a pipe once it serves (the FUSE mount
 * included), so `fsvol serve` / `fsvol mount --nbd` return when ready, and
 * report nbdkit's own error otherwise. nbdkit -f keeps the working
 * directory, so relative paths mean what the user meant. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsvol/cli/nbd_launch.h"

#ifndef FSVOL_LIBDIR
#define FSVOL_LIBDIR "/usr/local/lib/fsvol"
#endif
#define NBD_PLUGIN "fsvol-nbdkit.so"

int nbd_launch_kv(struct nbd_launch *l, const char *key, const char *value)
{
	size_t n = strlen(key) + (value ? strlen(value) : 1) + 2;
	if (l->nkv >= NBD_LAUNCH_MAX_KV || n > sizeof(l->kvmem) - l->kvused)
		return -1;
	char *s = l->kvmem + l->kvused;
	l->kvused += n;
	snprintf(s, n, "%s=%s", key, value ? value : "1");
	l->kv[l->nkv++] = s;
	return 0;
}

/* Split [ADDR:]PORT; ADDR may be [IPv6]. 0 or -1. */
static int nbd_split_addr(const char *a, char *host, size_t hlen, char *port, size_t plen)
{
	const char *p;
	host[0] = 0;
	if (a[0] == '[') {
		const char *e = strchr(a, ']');
		if (!e || e[1] != ':' || (size_t)(e - a - 1) >= hlen)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(e - a - 1), a + 1);
		p = e + 2;
	} else if ((p = strrchr(a, ':'))) {
		if ((size_t)(p - a) >= hlen || p == a)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(p - a), a);
		p++;
	} else {
		p = a;
	}
	char *end;
	long v = strtol(p, &end, 10);
	if (!*p || *end || v < 1 || v > 65535)
		return -1;
	snprintf(port, plen, "%ld", v);
	return 0;
}

int nbd_launch_check_addr(const struct cmd *c, const char *addr)
{
	char host[256], port[16];
	if (!strncmp(addr, "unix:", 5)) {
		if (!addr[5])
			return cmd_err(c, "--nbd %s: needs a socket path after unix:", addr), -1;
		if (strlen(addr + 5) >= 108)
			return cmd_err(c, "--nbd %s: socket path longer than 107 bytes", addr), -1;
		return 0;
	}
	if (nbd_split_addr(addr, host, sizeof(host), port, sizeof(port)))
		return cmd_err(c, "--nbd %s: expected unix:PATH or [ADDR:]PORT (port 1-65535)", addr), -1;
	return 0;
}

/* A socket file nobody listens on (a server that ended: nbdkit leaves it
 * behind) is removed; one in use, or another kind of file, is an error. */
static int nbd_clear_socket(const struct cmd *c, const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return cmd_err(c, "--nbd unix:%s: exists and is not a socket", path), -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cmd_err(c, "socket: %s", strerror(errno)), -1;
	int r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	close(fd);
	if (r == 0)
		return cmd_err(c, "--nbd unix:%s: a server is already listening there", path), -1;
	if (e == ECONNREFUSED && unlink(path) == 0)
		return 0;
	return cmd_err(c, "--nbd unix:%s: %s", path, strerror(e)), -1;
}

/* The plugin: next to the binary's lib/ (build tree and install alike), else
 * the install path. */
static int nbd_plugin_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(out, len, "%s/../lib/fsvol/%s", exe, NBD_PLUGIN);
			if (access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, len, "%s/%s", FSVOL_LIBDIR, NBD_PLUGIN);
	return access(out, R_OK) == 0 ? 0 : -1;
}

int nbd_launch(const struct cmd *c, struct nbd_launch *l)
{
	char plugin[PATH_MAX + 64], host[256], port[16], fdkv[32];
	int n = 0, pfd[2] = { -1, -1 };
	const char **argv = calloc(24 + NBD_LAUNCH_MAX_KV + l->nmembers, sizeof(*argv));
	if (!argv)
		return cmd_err(c, "out of memory");

	if (nbd_plugin_path(plugin, sizeof(plugin)))
		return cmd_err(c, "cannot find the NBD plugin %s (looked next to fsvol and in %s; "
				  "run 'make' or 'make install')", NBD_PLUGIN, FSVOL_LIBDIR);
	argv[n++] = "nbdkit";
	argv[n++] = "-f";
	if (!strncmp(l->addr, "unix:", 5)) {
		if (nbd_clear_socket(c, l->addr + 5))
			return 1;
		argv[n++] = "-U";
		argv[n++] = l->addr + 5;
	} else {
		nbd_split_addr(l->addr, host, sizeof(host), port, sizeof(port));
		if (host[0]) {
			argv[n++] = "-i";
			argv[n++] = host;
		}
		argv[n++] = "-p";
		argv[n++] = port;
	}
	if (l->readonly)
		argv[n++] = "-r";
	if (l->pidfile) {
		argv[n++] = "-P";
		argv[n++] = l->pidfile;
	}
	argv[n++] = plugin;
	for (unsigned i = 0; i < l->nmembers; i++) {
		size_t sz = strlen(l->members[i]) + 8;
		char *kv = malloc(sz);
		if (!kv)
			return cmd_err(c, "out of memory");
		snprintf(kv, sz, "member=%s", l->members[i]);
		argv[n++] = kv;
	}
	for (unsigned i = 0; i < l->nkv; i++)
		argv[n++] = l->kv[i];
	if (!l->foreground) {
		if (pipe2(pfd, O_CLOEXEC) < 0)
			return cmd_err(c, "pipe: %s", strerror(errno));
		snprintf(fdkv, sizeof(fdkv), "ready-fd=%d", pfd[1]);
		argv[n++] = fdkv;
		if (l->log) {
			static char logkv[PATH_MAX + 8];
			snprintf(logkv, sizeof(logkv), "log=%s", l->log);
			argv[n++] = logkv;
		}
	}
	argv[n] = NULL;
	if (l->foreground) {
		/* nbdkit becomes this process: signals and exit status are its own */
		int e = (execvp("nbdkit", (char **)argv), errno);
		return cmd_err(c, "cannot run nbdkit: %s (is the nbdkit package installed?)", strerror(e));
	}
	/* Twice forked: nbdkit -f sets PR_SET_PDEATHSIG (it would stop when this
	 * command returns), so it must start as an orphan, a child of init. */
	pid_t pid = fork();
	if (pid < 0)
		return cmd_err(c, "fork: %s", strerror(errno));
	if (pid == 0) {
		setsid();
		pid_t mid = getpid();
		if (fork() != 0)
			_exit(0);
		while (getppid() == mid) /* until the middle process is gone */
			usleep(1000);
		fcntl(pfd[1], F_SETFD, 0); /* the plugin writes "ready" here */
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		execvp("nbdkit", (char **)argv);
		fprintf(stderr, "fsvol %s: cannot run nbdkit: %s (is the nbdkit package installed?)\n",
			c->name, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < n; i++)
		if (!strncmp(argv[i], "member=", 7))
			free((char *)argv[i]);
	free(argv);
	char b;
	ssize_t r;
	while ((r = read(pfd[0], &b, 1)) < 0 && errno == EINTR)
		;
	close(pfd[0]);
	if (r == 1)
		return 0;
	/* nbdkit ended before serving: its messages are on stderr already */
	return cmd_err(c, "the NBD server did not start (see nbdkit's message above)");
}
