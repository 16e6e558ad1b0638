/* fsvol ctl: send one control command to a mounted volume (MNT/ctl) and say
 * why when the daemon refuses it. MNT/ctl is opened read-write: after a
 * refused write, a read on the same descriptor returns the daemon's reason
 * (the write itself still fails with EINVAL, as a sysfs attribute's would). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/front/ctl.h"

int cmd_ctl_send(const char *mnt, const char *command, char *reason, size_t len)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/ctl", mnt);
	reason[0] = 0;
	if (cmd_is_ctl_dir(mnt))
		return cmd_ctl_dir_send(mnt, command, reason, len);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		cmd_mnt_problem(mnt, path, e, reason, len);
		return -e;
	}
	ssize_t w = write(fd, command, strlen(command));
	int e = w < 0 ? errno : 0;
	if (w >= 0 && (size_t)w != strlen(command))
		e = EIO; /* the daemon takes a command whole or not at all */
	if (e) {
		ssize_t n = read(fd, reason, len - 1); /* EINVAL, EBUSY: the daemon says why */
		if (n > 0) {
			reason[n] = 0;
			reason[strcspn(reason, "\n")] = 0;
			if (!strncmp(reason, "ctl: ", 5)) /* the daemon's log prefix */
				memmove(reason, reason + 5, strlen(reason + 5) + 1);
		} else {
			snprintf(reason, len, "%s: %s", path, strerror(e));
		}
	}
	close(fd);
	return -e;
}

static const struct cmd_opt ctl_opts[] = {
	{ 0 },
};

static int ctl_run(const struct cmd *c, int argc, char **argv)
{
	char line[256], reason[512];
	size_t used = 0;
	int first = 1, r;
	/* no options: the command's words are passed as they are ("fail -1"
	 * reaches the daemon, which says why it is refused) */
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cmd_usage(c, stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--"))
		first = 2;
	if (argc - first < 2) {
		cmd_err(c, "need a mount point and a command (see fsvol ctl --help)");
		return 2;
	}
	/* the words of the command, one space apart, as one write */
	for (int i = first + 1; i < argc; i++) {
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", i > first + 1 ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= sizeof(line) - used)
			return cmd_uerr(c, "command too long (%zu bytes at most)", sizeof(line) - 1);
		used += (size_t)n;
	}
	/* a command the daemon could not parse is a usage error (2), caught
	 * here by the daemon's own parser; one it refuses on the volume is 1 */
	struct ctl_cmd *parsed = malloc(sizeof(*parsed));
	if (!parsed)
		return cmd_err(c, "out of memory");
	r = ctl_parse(line, used, parsed, reason, sizeof(reason));
	enum ctl_verb verb = parsed->verb;
	free(parsed);
	if (r)
		return cmd_uerr(c, "%s", !strncmp(reason, "ctl: ", 5) ? reason + 5 : reason);
	if (verb == CTL_ADD || verb == CTL_READD || verb == CTL_FAIL || verb == CTL_REMOVE || verb == CTL_REPLACE ||
	    verb == CTL_WRITEMOSTLY || verb == CTL_FAILFAST) {
		/* a member's path as the daemon stores it: absolute (it runs in /),
		 * whatever directory this is typed in; Numbers, "force" and what
		 * looks like an option (refused by the daemon as typed) as they are;
		 * the words after the member (on, off, writemostly, ...) too, but
		 * replace's second one, the new member */
		char abs[PATH_MAX + 2];
		used = (size_t)snprintf(line, sizeof(line), "%s", argv[first + 1]);
		for (int i = first + 2; i < argc && used < sizeof(line); i++) {
			const char *w = argv[i];
			int member = i == first + 2 || (verb == CTL_REPLACE && i == first + 3);
			if (member && vol_parse_number(w) < 0 && strcmp(w, "force") && w[0] != '-')
				w = cmd_abs_path(w, abs, sizeof(abs));
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %s", w);
		}
		if (used >= sizeof(line))
			return cmd_uerr(c, "command too long (%zu bytes at most)", sizeof(line) - 1);
	}
	if (cmd_ctl_send(argv[first], line, reason, sizeof(reason)))
		return cmd_err(c, "%s", reason);
	return 0;
}

const struct cmd cmd_ctl = {
	.name = "ctl",
	.operands = "MNT COMMAND [ARG]",
	.summary = "send a command to MNT/ctl; a refusal prints the daemon's reason",
	.more = "commands: reset, stats LEVEL, model SPEC, fail M, add PATH, re-add PATH, "
		"remove M, replace M [PATH], sync_speed_min KIBS, sync_speed_max KIBS, fault N SPEC, error N, "
		"check, repair, powercut, powercut-after K, journal_mode write-through|write-back, writemostly M on|off, failfast M on|off, failfast_ms MS, "
		"safe_mode_delay SECONDS, rmw_level 0|1|2, timer_slack_us US "
		"(README.md, \"Files in the mount\")",
	.opts = ctl_opts,
	.run = ctl_run,
};
