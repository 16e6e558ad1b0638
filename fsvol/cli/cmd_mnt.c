/* cmd_mnt: what the commands on a mounted volume share: member paths made
 * absolute (the daemon runs in /, and status, fail and remove compare the
 * paths it stored), MNT checked before use, so a dead daemon is named
 * as such rather than as "Transport endpoint is not connected", and
 * MNT/status.json read. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/slurp.h"
#include "stats/json.h"

/* Made absolute by the words alone: "." and ".." folded, symbolic links kept
 * (a link is the name the user chose, and messages quote it). */
const char *cmd_abs_path(const char *a, char *buf, size_t len)
{
	char cwd[PATH_MAX], tmp[2 * PATH_MAX + 2];
	if (strchr(a, ':')) /* nbd://..., nbd+unix://..., mem:NAME */
		return a;
	if (a[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", a);
	else
		snprintf(tmp, sizeof(tmp), "%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : "", a);
	size_t n = 0;
	char *save, *w;
	for (w = strtok_r(tmp, "/", &save); w; w = strtok_r(NULL, "/", &save)) {
		if (!strcmp(w, "."))
			continue;
		if (!strcmp(w, "..")) {
			while (n && buf[n - 1] != '/')
				n--;
			if (n)
				n--;
			continue;
		}
		size_t l = strlen(w);
		if (n + 1 + l + 1 > len)
			return a; /* too long to fold: the daemon says so */
		buf[n++] = '/';
		memcpy(buf + n, w, l);
		n += l;
	}
	if (!n)
		buf[n++] = '/';
	buf[n] = 0;
	return buf;
}

char **cmd_abs_paths(char *const *in, unsigned n)
{
	char **out = calloc(n + 1, sizeof(*out));
	for (unsigned i = 0; out && i < n; i++) {
		char buf[PATH_MAX + 2];
		if (!(out[i] = strdup(cmd_abs_path(in[i], buf, sizeof(buf))))) {
			cmd_free_paths(out, i);
			return NULL;
		}
	}
	return out;
}

void cmd_free_paths(char **p, unsigned n)
{
	for (unsigned i = 0; p && i < n; i++)
		free(p[i]);
	free(p);
}

int cmd_fsvol_mounts(int (*fn)(void *ctx, const char *dir), void *ctx)
{
	char line[PATH_MAX * 2];
	int r = 0;
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (!r && fgets(line, sizeof(line), f)) {
		char dev[256], dir[PATH_MAX], type[64], real[PATH_MAX];
		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) != 3 || strcmp(type, "fuse.fsvol"))
			continue;
		/* the kernel writes a space, tab, newline or backslash as \ooo */
		size_t k = 0;
		for (char *p = dir; *p; p++) {
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
			    p[3] >= '0' && p[3] <= '7') {
				real[k++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 3;
			} else {
				real[k++] = *p;
			}
		}
		real[k] = 0;
		r = fn(ctx, real);
	}
	fclose(f);
	return r;
}

static int is_mount_dir(void *ctx, const char *dir)
{
	return !strcmp(dir, ctx);
}

int cmd_is_fsvol_mount(const char *mnt)
{
	char real[PATH_MAX];
	if (!realpath(mnt, real))
		snprintf(real, sizeof(real), "%s", mnt);
	return cmd_fsvol_mounts(is_mount_dir, real) > 0;
}

void cmd_mnt_problem(const char *mnt, const char *path, int e, char *out, size_t len)
{
	/* a dead FUSE server: ENOTCONN once the kernel knows, ECONNABORTED for
	 * a request it aborted while finding out (seen under load) */
	if (e == ENOTCONN || e == ECONNABORTED)
		snprintf(out, len, "%s: the fsvol daemon serving this mount has died (killed, crashed or a "
			 "ctl powercut); its last messages are in its --log file or in syslog (journalctl -t fsvol); "
			 "'fsvol umount %s' removes the dead mount, and the next mount resyncs", mnt, mnt);
	else if (e == ENOENT && cmd_is_ctl_dir(mnt))
		snprintf(out, len, "%s: the ctl dir of fsvol serve has no %s (a mount has it: fsvol mount --nbd exports "
			 "over NBD with one)", mnt, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	else if ((e == ENOENT || e == ENOTDIR) && !cmd_is_fsvol_mount(mnt))
		snprintf(out, len, "%s: not an fsvol mount (%s: %s)", mnt, path, strerror(e));
	else
		snprintf(out, len, "%s: %s", path, strerror(e));
}

int cmd_mnt_check(const struct cmd *c, const char *mnt)
{
	char path[PATH_MAX + 16], why[PATH_MAX + 400];
	struct stat st;
	if (!cmd_is_fsvol_mount(mnt) && !cmd_is_ctl_dir(mnt))
		return cmd_err(c, "%s: not an fsvol mount", mnt);
	snprintf(path, sizeof(path), "%s/status", mnt);
	if (stat(path, &st) < 0) {
		cmd_mnt_problem(mnt, path, errno, why, sizeof(why));
		return cmd_err(c, "%s", why);
	}
	return 0;
}

int cmd_status_json(const char *mnt, struct stats_json **out, char *why, size_t len)
{
	char path[PATH_MAX + 16], *buf, err[200];
	size_t n;
	*out = NULL;
	if (cmd_is_ctl_dir(mnt))
		cmd_ctl_dir_refresh(mnt); /* current figures; a stopped server's last ones */
	snprintf(path, sizeof(path), "%s/status.json", mnt);
	int r = slurp_file(path, &buf, &n);
	if (r) {
		cmd_mnt_problem(mnt, path, -r, why, len);
		return r;
	}
	r = stats_json_read(buf, n, out, err, sizeof(err));
	free(buf);
	if (r == -EINVAL)
		snprintf(why, len, "%s: not an fsvol status (%s)", path, err);
	else if (r)
		snprintf(why, len, "%s: %s", path, strerror(-r));
	return r;
}
