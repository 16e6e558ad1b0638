/* fsvol grow: reshape a mounted volume, as mdadm --grow: more members
 * (--add PATH... as spares first, then --raid-devices), a new chunk, raid5 ->
 * raid6. Each step is a MNT/ctl command ("add PATH", then "grow SPEC"); the
 * daemon moves the data in the background (fsvol status shows it). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "layout/layout.h"

static const struct cmd_opt grow_opts[] = {
	{ "add", 'a', "PATH", "add PATH as a spare first (repeat it, or give more PATHs after MNT); without "
			      "--raid-devices each one added widens the volume by one member" },
	{ "raid-devices", 'n', "N", "the number of raid members after the reshape (mdadm --raid-devices); the new "
				    "ones are the spares (in slot order)" },
	{ "chunk", 'c', "SIZE", "the chunk after the reshape, a power of two >= 4K (K, M: powers of 1024; a bare "
				"number is KiB, as mdadm's)" },
	{ "level", 'l', "LEVEL", "the level after the reshape: raid6 from raid5 (takes one more member for Q)", 0,
	  "raid6" },
	{ "layout", 'p', "LAYOUT", "raid10 only: the layout after the reshape, near <-> offset with the same copies "
				   "(n2 <-> o2); the far layout and another number of copies are refused, as md does "
				   "(mdadm's -p, --parity)", 0, NULL, "parity" },
	{ 0 },
};

#define GROW_MAX_ADD 64

struct grow_args {
	const char *add[GROW_MAX_ADD];
	unsigned nadd;
	const char *n, *chunk, *level, *layout;
	int bad;
};

static int grow_opt(int i, const char *arg, void *ctx)
{
	struct grow_args *a = ctx;
	switch (i) {
	case 0:
		if (a->nadd == GROW_MAX_ADD)
			return -1;
		a->add[a->nadd++] = arg;
		break;
	case 1:
		a->n = arg;
		break;
	case 2:
		a->chunk = arg;
		break;
	case 3:
		a->level = arg;
		break;
	default:
		a->layout = arg;
		break;
	}
	return 0;
}

static int grow_run(const struct cmd *c, int argc, char **argv)
{
	struct grow_args a = { .nadd = 0 };
	int first, r = cmd_parse(c, argc, argv, &first, grow_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first < 1)
		return cmd_uerr(c, "need a mount point");
	const char *mnt = argv[first];
	for (int i = first + 1; i < argc; i++) {
		if (a.nadd == GROW_MAX_ADD)
			return cmd_uerr(c, "at most %d members at once", GROW_MAX_ADD);
		a.add[a.nadd++] = argv[i];
	}
	if (!a.nadd && !a.n && !a.chunk && !a.level && !a.layout)
		return cmd_uerr(c, "nothing to change: give --add, --raid-devices, --chunk, --level or --layout");
	char spec[256] = "", reason[512];
	size_t used = 0;
	if (a.n) {
		char *end;
		unsigned long n = strtoul(a.n, &end, 10);
		if (*end || !n || n > LAYOUT_MAX_MEMBERS)
			return cmd_uerr(c, "--raid-devices %s: expected 1..%d", a.n, LAYOUT_MAX_MEMBERS);
		used += (size_t)snprintf(spec + used, sizeof(spec) - used, "raid-devices=%lu,", n);
	} else if (a.nadd) {
		/* each member added widens the volume (raid5 -> raid6 takes one of them for Q) */
		used += (size_t)snprintf(spec + used, sizeof(spec) - used, "raid-devices=+%u,", a.nadd);
	}
	if (a.chunk) {
		uint64_t ch;
		char said[96];
		if (cmd_size_kib(c, "--chunk", a.chunk, &ch))
			return 2;
		cmd_size_said(a.chunk, ch, said, sizeof(said));
		if (ch & (ch - 1) || ch < LAYOUT_MIN_CHUNK || ch > LAYOUT_MAX_CHUNK)
			return cmd_uerr(c, "--chunk %s: %s", said, ch & (ch - 1) ? "not a power of two"
					: ch < LAYOUT_MIN_CHUNK ? "below the 4K minimum" : "above the 1G maximum");
		used += (size_t)snprintf(spec + used, sizeof(spec) - used, "chunk=%llu,", (unsigned long long)ch);
	}
	if (a.level) {
		enum layout_level l;
		char why[256];
		if (layout_parse_level_msg(a.level, &l, why, sizeof(why)))
			return cmd_uerr(c, "--level %s", why);
		used += (size_t)snprintf(spec + used, sizeof(spec) - used, "level=%s,", layout_level_name(l));
	}
	if (a.layout) {
		unsigned alg, copies;
		char why[256];
		if (strlen(a.layout) > 16 || strpbrk(a.layout, ",= ") ||
		    layout_parse_alg_msg(LAYOUT_RAID10, a.layout, &alg, &copies, why, sizeof(why)))
			return cmd_uerr(c, "--layout %s: expected a raid10 layout (n2, o2, ...)", a.layout);
		used += (size_t)snprintf(spec + used, sizeof(spec) - used, "layout=%s,", a.layout);
	}
	if (used)
		spec[used - 1] = 0;
	char line[300];
	if (a.nadd) {
		/* what grow refuses whatever the spares (a far raid10, fewer members,
		 * other copies) is refused before anything is added */
		snprintf(line, sizeof(line), "grow %s%sdry-run=1", spec, *spec ? "," : "");
		if (cmd_ctl_send(mnt, line, reason, sizeof(reason)))
			return cmd_err(c, "%s", strncmp(reason, "grow: ", 6) ? reason : reason + 6);
	}
	for (unsigned i = 0; i < a.nadd; i++) {
		char buf[PATH_MAX + 2], line[PATH_MAX + 16];
		const char *p = cmd_abs_path(a.add[i], buf, sizeof(buf));
		int made;
		if (cmd_new_member(c, mnt, a.add[i], &made))
			return CMD_EXIT_FAIL;
		snprintf(line, sizeof(line), "add %s", p);
		if (cmd_ctl_send(mnt, line, reason, sizeof(reason))) {
			if (made == CMD_MEMBER_MADE)
				unlink(a.add[i]);
			return cmd_err(c, "%s", reason);
		}
		cmd_new_member_note(mnt, a.add[i], made);
		printf("fsvol: added %s to %s\n", a.add[i], mnt);
	}
	snprintf(line, sizeof(line), "grow %s", spec);
	if (cmd_ctl_send(mnt, line, reason, sizeof(reason))) /* the daemon's reason starts "grow: " */
		return cmd_err(c, "%s", strncmp(reason, "grow: ", 6) ? reason : reason + 6);
	printf("fsvol: reshape of %s started (%s; progress: fsvol status %s)\n", mnt, spec, mnt);
	return 0;
}

const struct cmd cmd_grow = {
	.name = "grow",
	.operands = "MNT [PATH...]",
	.summary = "reshape: more members, a new chunk, raid6, a raid10 layout (mdadm --grow)",
	.more = "The data moves in the background, window by window; fsvol status shows \"reshape = x%\". The new "
		"capacity appears when it ends. A crash or kill -9 mid-way resumes at the next mount. raid0, raid4, "
		"raid5 and raid6 restripe; raid5 goes to raid6 with one more member; linear appends (nothing moves); "
		"raid1 gains a copy (rebuilt onto the new member, one at a time). raid10 restripes in its near and "
		"offset layouts (more members, a new chunk, near <-> offset; the copies stay), as md; the far layout, "
		"fewer members and another number of copies are refused.",
	.opts = grow_opts,
	.run = grow_run,
};
