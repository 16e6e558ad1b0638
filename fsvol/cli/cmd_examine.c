/* fsvol examine: print a member's superblock (like mdadm --examine). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/sb.h"

static const struct cmd_opt examine_opts[] = { { 0 } };

static int examine_opt(int i, const char *arg, void *ctx)
{
	(void)i, (void)arg, (void)ctx;
	return -1;
}

static int examine_one(const struct cmd *c, const char *path)
{
	struct member m;
	char err[512];
	struct sb s;
	void *buf = NULL;
	int r = member_open(&m, path, 0, err, sizeof(err));
	if (r)
		return cmd_err(c, "%s", err);
	if (m.size < SB_SIZE) {
		member_close(&m);
		return cmd_err(c, "%s: too small to hold a superblock (%llu bytes)", path,
			       (unsigned long long)m.size);
	}
	if (posix_memalign(&buf, 4096, SB_SIZE) || (r = member_pread(&m, buf, SB_SIZE, 0))) {
		free(buf);
		member_close(&m);
		return cmd_err(c, "%s: cannot read: %s", path, strerror(r ? -r : ENOMEM));
	}
	r = sb_decode(buf, SB_SIZE, &s, err, sizeof(err));
	free(buf);
	member_close(&m);
	if (r)
		return cmd_err(c, "%s: %s", path, err);
	sb_dump(stdout, &s, path);
	return 0;
}

static int examine_run(const struct cmd *c, int argc, char **argv)
{
	int first, bad = 0, r = cmd_parse(c, argc, argv, &first, examine_opt, NULL);
	if (r)
		return r > 0 ? 0 : 2;
	if (first >= argc)
		return cmd_uerr(c, "no members given");
	for (int i = first; i < argc; i++) {
		if (i > first)
			putchar('\n');
		bad |= examine_one(c, argv[i]);
	}
	return bad;
}

const struct cmd cmd_examine = {
	.name = "examine",
	.operands = "MEMBER...",
	.summary = "print the superblock of members",
	.opts = examine_opts,
	.run = examine_run,
};
