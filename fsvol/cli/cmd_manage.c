/* fsvol fail / remove / add / re-add / replace: manage a mounted volume's
 * members with mdadm's meanings. Each verb is a MNT/ctl command; these write
 * it (with paths made absolute: the daemon runs in /). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"

static const struct cmd_opt no_opts[] = { { 0 } };
static const struct cmd_opt replace_opts[] = {
	{ "with", 0, "PATH", "the new member (added as a spare first); default: a spare already there" },
	{ 0 },
};
static const struct cmd_opt add_opts[] = {
	{ "write-mostly", 0, "PATH", "add PATH write-mostly (raid1, md's word: not read from while another copy "
	  "serves); repeatable" },
	{ "failfast", 0, "PATH", "add PATH failfast (raid1/raid10: failed at once when an I/O takes longer than "
	  "failfast_ms); repeatable" },
	{ 0 },
};
static const struct cmd_opt fail_opts[] = {
	{ "force", 0, NULL, "fail it even when the volume cannot run without it (it stops serving)" },
	{ 0 },
};

/* The flag of a verb: --force (fail). */
static int flag_opt(int i, const char *arg, void *ctx)
{
	(void)i, (void)arg;
	*(int *)ctx = 1;
	return 0;
}

/* "N" or "mN" (a member's Number, as status names it) or a path, relative
 * or absolute. */
static int member_number_arg(const char *a)
{
	char *end;
	const char *d = a[0] == 'm' ? a + 1 : a;
	if (*d < '0' || *d > '9')
		return 0;
	strtoul(d, &end, 10);
	return !*end;
}

/* A member argument: a Number as it is, a path made absolute as mount
 * stores it (a file named like a Number is given as ./m2). */
static const char *member_arg(const char *a, char *buf, size_t len)
{
	if (member_number_arg(a))
		return a;
	return cmd_abs_path(a, buf, len);
}

/* mdadm's confirmation of a done change ("set /dev/sdb faulty in /dev/md0"). */
static void manage_confirm(const struct cmd *c, const char *mnt, const char *arg)
{
	const char *m = member_number_arg(arg) && arg[0] != 'm' ? "m" : "";
	if (!strcmp(c->name, "fail"))
		printf("fsvol: set %s%s faulty in %s\n", m, arg, mnt);
	else if (!strcmp(c->name, "remove"))
		printf("fsvol: removed %s%s from %s\n", m, arg, mnt);
	else if (!strcmp(c->name, "add"))
		printf("fsvol: added %s to %s\n", arg, mnt);
	else
		printf("fsvol: re-added %s to %s\n", arg, mnt);
}

/* fsvol VERB MNT MEMBER...: one ctl write per member. */
static int manage_run(const struct cmd *c, int argc, char **argv)
{
	int force = 0, first, r = cmd_parse(c, argc, argv, &first, flag_opt, &force), bad = 0;
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first < 2)
		return cmd_uerr(c, "need a mount point and a member");
	const char *mnt = argv[first];
	for (int i = first + 1; i < argc; i++) {
		char buf[PATH_MAX + 2], line[PATH_MAX + 64], reason[512];
		const char *m = member_arg(argv[i], buf, sizeof(buf));
		snprintf(line, sizeof(line), "%s %s%s", c->name, m, force ? " force" : "");
		if (cmd_ctl_send(mnt, line, reason, sizeof(reason))) {
			cmd_err(c, "%s", reason); /* the daemon's own words */
			bad = 1;
		} else {
			manage_confirm(c, mnt, argv[i]);
		}
	}
	return bad;
}

/* add's flagged members: the operands, then those given with a flag only */
struct add_args {
	const char *path[64];
	unsigned flags[64], n;
};

static int add_opt(int i, const char *arg, void *ctx)
{
	struct add_args *a = ctx;
	unsigned k = 0;
	while (k < a->n && !cmd_same_file(a->path[k], arg))
		k++;
	if (k == 64)
		return cmd_err(&cmd_add, "too many members"), -1;
	if (k == a->n)
		a->path[a->n++] = arg;
	a->flags[k] |= i == 0 ? 1u : 2u; /* SB_SLOT_WRITE_MOSTLY, SB_SLOT_FAILFAST */
	return 0;
}

/* fsvol add MNT [--write-mostly PATH] [--failfast PATH] PATH...: one
 * "add PATH [writemostly] [failfast]" per member, so the flag is there
 * before a recovery can start on it. */
static int add_run(const struct cmd *c, int argc, char **argv)
{
	struct add_args a = { .n = 0 };
	int first, r = cmd_parse(c, argc, argv, &first, add_opt, &a), bad = 0;
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first < 1 || (argc - first < 2 && !a.n))
		return cmd_uerr(c, "need a mount point and a member");
	const char *mnt = argv[first];
	for (int i = first + 1; i < argc; i++) {
		unsigned k = 0;
		while (k < a.n && !cmd_same_file(a.path[k], argv[i]))
			k++;
		if (k == a.n && k < 64)
			a.path[a.n++] = argv[i];
	}
	for (unsigned k = 0; k < a.n; k++) {
		char buf[PATH_MAX + 2], line[PATH_MAX + 64], reason[512];
		int made;
		if (cmd_new_member(c, mnt, a.path[k], &made)) { /* a missing file is made, as create does */
			bad = 1;
			continue;
		}
		snprintf(line, sizeof(line), "add %s%s%s", member_arg(a.path[k], buf, sizeof(buf)),
			 a.flags[k] & 1 ? " writemostly" : "", a.flags[k] & 2 ? " failfast" : "");
		if (cmd_ctl_send(mnt, line, reason, sizeof(reason))) {
			cmd_err(c, "%s", reason);
			if (made == CMD_MEMBER_MADE)
				unlink(a.path[k]);
			bad = 1;
		} else {
			cmd_new_member_note(mnt, a.path[k], made);
			manage_confirm(c, mnt, a.path[k]);
		}
	}
	return bad;
}

static int replace_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	*(const char **)ctx = arg;
	return 0;
}

/* replace: one role, onto --with PATH or a spare (md's want_replacement) */
static int replace_run(const struct cmd *c, int argc, char **argv)
{
	const char *with = NULL;
	int first, r = cmd_parse(c, argc, argv, &first, replace_opt, &with);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 2)
		return cmd_uerr(c, "need a mount point and the member to replace");
	char b1[PATH_MAX + 2], b2[PATH_MAX + 2], line[2 * PATH_MAX + 64], reason[512];
	int made = 0;
	if (with && cmd_new_member(c, argv[first], with, &made))
		return CMD_EXIT_FAIL;
	const char *m = member_arg(argv[first + 1], b1, sizeof(b1));
	snprintf(line, sizeof(line), "replace %s%s%s", m, with ? " " : "", with ? member_arg(with, b2, sizeof(b2)) : "");
	if (cmd_ctl_send(argv[first], line, reason, sizeof(reason))) {
		if (made == CMD_MEMBER_MADE)
			unlink(with);
		return cmd_err(c, "%s", reason);
	}
	cmd_new_member_note(argv[first], with ? with : "", made);
	printf("fsvol: replacing %s in %s%s%s (progress: fsvol status)\n", argv[first + 1], argv[first],
	       with ? " with " : "", with ? with : "");
	return 0;
}

const struct cmd cmd_replace = {
	.name = "replace",
	.operands = "MNT MEMBER",
	.summary = "build a new member while the old one serves, then swap them (md's replace)",
	.opts = replace_opts,
	.run = replace_run,
};

const struct cmd cmd_fail = {
	.name = "fail",
	.operands = "MNT MEMBER...",
	.summary = "mark members faulty (mN or N as status shows, or a path), as mdadm --fail",
	.opts = fail_opts,
	.run = manage_run,
};

const struct cmd cmd_add = {
	.name = "add",
	.operands = "MNT PATH...",
	.summary = "add spares (a missing file is created the size of a member); a degraded volume starts "
		   "rebuilding onto one at once",
	.opts = add_opts,
	.run = add_run,
};

const struct cmd cmd_readd = {
	.name = "re-add",
	.operands = "MNT PATH...",
	.summary = "take a former member back into its slot and rebuild it",
	.opts = no_opts,
	.run = manage_run,
};

const struct cmd cmd_remove = {
	.name = "remove",
	.operands = "MNT MEMBER...",
	.summary = "remove failed or spare members (mN or N as status shows, or a path)",
	.opts = no_opts,
	.run = manage_run,
};
