/* fsvol scrub: check (or repair) that parity and copies agree with the data,
 * like md's sync_action check/repair. Runs in the daemon; this waits for it.
 * Exits 0 only when every unit was checked and none disagreed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"

static const struct cmd_opt scrub_opts[] = {
	{ "repair", 0, NULL, "rewrite parity/copies that disagree with the data" },
	{ "no-wait", 0, NULL, "start it and return; progress shows in MNT/status" },
	{ 0 },
};

struct scrub_args {
	int repair, nowait;
};

static int scrub_opt(int i, const char *arg, void *ctx)
{
	struct scrub_args *a = ctx;
	(void)arg;
	if (i == 0)
		a->repair = 1;
	else
		a->nowait = 1;
	return 0;
}

/* The sync line of MNT/status ("check done: ..."), or "" when none. */
static int sync_line(const char *mnt, const char *what, char *out, size_t len)
{
	char path[PATH_MAX + 16], line[512];
	snprintf(path, sizeof(path), "%s/status", mnt);
	if (cmd_is_ctl_dir(mnt))
		cmd_ctl_dir_refresh(mnt);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	out[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " ");
		if (!strncmp(p, what, strlen(what)) && p[strlen(what)] == ' ') {
			snprintf(out, len, "%s", p);
			break;
		}
	}
	fclose(f);
	return 0;
}

static int scrub_run(const struct cmd *c, int argc, char **argv)
{
	struct scrub_args a = { 0 };
	char line[512];
	int first, r = cmd_parse(c, argc, argv, &first, scrub_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	const char *mnt = argv[first], *what = a.repair ? "repair" : "check";
	char why[512];
	if (cmd_ctl_send(mnt, what, why, sizeof(why))) /* the daemon's own reason, or why MNT is not one */
		return cmd_err(c, "%s", why);
	if (a.nowait)
		return 0;
	for (;;) {
		if ((r = sync_line(mnt, what, line, sizeof(line))))
			return cmd_err(c, "%s/status: %s", mnt, strerror(-r));
		if (!strstr(line, " running:"))
			break;
		if (isatty(2))
			fprintf(stderr, "\r%s", strtok(line, "\n"));
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
	if (isatty(2))
		fputc('\n', stderr);
	printf("%s", line);
	/* a clean bill only when it ran to the end, found nothing and skipped nothing */
	unsigned long long bad = 0;
	const char *m = strstr(line, "), ");
	if (m)
		sscanf(m + 3, "%llu mismatches", &bad);
	return strstr(line, " done:") && !bad && !strstr(line, "skipped") ? 0 : 1;
}

const struct cmd cmd_scrub = {
	.name = "scrub",
	.operands = "MNT",
	.summary = "check that parity and copies agree with the data (and repair them)",
	.opts = scrub_opts,
	.run = scrub_run,
};
