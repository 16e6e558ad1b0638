/* fsvol create: write fresh superblocks on the members (like mdadm --create). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_create_md.h"
#include "fsvol/util/size.h"
#include "fsvol/core/volume.h"
#include "fsvol/meta/bitmap.h"

static const struct cmd_opt create_opts[] = {
	{ "level", 'l', "LEVEL", "single, linear, raid0, raid1, raid10, raid4, raid5, raid6 (required)",
	  CMD_OPT_REQUIRED, "single linear raid0 raid1 raid10 raid4 raid5 raid6" },
	{ "chunk", 'c', "CHUNK", "chunk size, a power of two >= 4K (default 512K, as md); a bare number is KiB, "
	  "as mdadm's (-c64 is 64K)" },
	{ "size", 'z', "SIZE", "data per member (mdadm's -z; a bare number is KiB, as mdadm's: -z 65536 is 64M); "
	  "members that do not exist are created", 0, NULL, NULL, 's' },
	{ "layout", 'p', "ALG", "raid5/6: left-symmetric (default), right-symmetric, left-asymmetric, "
	  "right-asymmetric; raid10: n2 (default), f2, o2 (mdadm's -p, --parity)", 0,
	  "left-symmetric right-symmetric left-asymmetric right-asymmetric n2 f2 o2", "parity" },
	{ "spare-devices", 'x', "K", "the last K members given are spares (mdadm's -x)", 0, NULL, "spares" },
	{ "name", 'N', "NAME", "volume name in every output: 1-31 of A-Z a-z 0-9 _ . - (default fsvol-<8 hex of the UUID>)" },
	{ "data-offset", 0, "OFF", "start of the data area on each member (default 1M; a bare number is KiB, as "
	  "mdadm's)" },
	{ "force", 'f', NULL, "overwrite members that already carry an fsvol superblock" },
	{ "assume-clean", 0, NULL, "do not zero the data areas (parity/copies may not match)" },
	{ "prealloc", 0, NULL, "allocate the data areas of member files now (fallocate), so writes never meet "
	  "a full host filesystem; refused when it lacks the space" },
	{ "bitmap", 0, "internal|none", "write-intent bitmap (default internal on redundant levels, as md)", 0,
	  "internal none" },
	{ "bitmap-chunk", 0, "SIZE", "data per bitmap bit, a power of two >= 4K (default 64M, larger when the "
	  "bitmap would not fit below the data offset; a bare number is KiB, as mdadm's)" },
	{ "consistency-policy", 0, "POLICY", "how a dirty stop is made consistent (mdadm's word): bitmap (the default "
	  "on redundant levels), resync (no bitmap), ppl (raid5: a partial parity log in each member's metadata "
	  "area, closes the write hole; no bitmap), journal (needs --write-journal)", 0, "bitmap resync ppl journal" },
	{ "write-journal", 0, "PATH", "raid4/5/6: PATH is the write journal (md's journal device): every stripe "
	  "write's data and parity go there first; closes the write hole; no bitmap" },
	{ "bad-block-log", 0, "internal|none", "a bad-block list on each member (md's bad block log: 8K before the "
	  "data; default internal on redundant levels when the data offset leaves room)", 0, "internal none" },
	{ "write-mostly", 0, "PATH", "raid1: PATH (a member given, whatever the spelling of its path, or one more after them) is write-mostly, md's word: "
	  "not read from while another copy serves (a slow or remote leg); repeatable" },
	{ "write-behind", 0, "N", "raid1 with the bitmap: up to N writes may complete before the write-mostly members "
	  "have them (md's --write-behind, 0..16383; mdadm takes 256 when no N is given)" },
	{ "failfast", 0, "PATH", "raid1/raid10: PATH (as for --write-mostly) is failfast: an I/O of it that takes "
	  "longer than failfast_ms (default 1000, fsvol ctl MNT failfast_ms MS) fails it at once and the I/O goes to "
	  "another copy; repeatable" },
	{ "raid-devices", 'n', "N", "the number of members in the layout (mdadm's -n): the devices given are N, "
	  "then the spares" },
	{ "metadata", 'e', "VERSION", "the superblock format (mdadm's -e): fsvol (the default: every fsvol command "
	  "reads it), or md's own 1.0 (at the end of each member), 1.1 (at its start) or 1.2 (4K from its start), "
	  "which mdadm, Linux md, blkid and GRUB read (fsvol examine reads it too; mount does not yet)", 0,
	  "fsvol 1.0 1.1 1.2 1 default" },
	{ 0 },
};

#define CREATE_MAX_FLAGGED SB_MAX_SLOTS

struct create_args {
	struct vol_create vc;
	const char *level, *layout;
	const char *size_arg, *doff_arg, *chunk_arg; /* as the user wrote them, for messages */
	int chunk_set;
	unsigned raid_devices;           /* -n N, 0 when not given */
	int md_minor;                    /* --metadata 1.x: x; -1 fsvol's own */
	int policy_bitmap;               /* --consistency-policy bitmap (1) or resync (-1) */
	int policy_journal;              /* --consistency-policy journal */
	const char *journal;             /* --write-journal */
	const char *flagged[CREATE_MAX_FLAGGED]; /* --write-mostly / --failfast paths, in order */
	unsigned flag_of[CREATE_MAX_FLAGGED], nflagged;
};

/* --write-mostly PATH, --failfast PATH: remembered until the members are known. */
static int create_flag(struct create_args *a, const char *path, unsigned flag)
{
	for (unsigned i = 0; i < a->nflagged; i++)
		if (cmd_same_file(a->flagged[i], path)) {
			a->flag_of[i] |= flag;
			return 0;
		}
	if (a->nflagged == CREATE_MAX_FLAGGED)
		return cmd_err(&cmd_create, "--%s %s: too many flagged members", flag == SB_SLOT_FAILFAST ? "failfast"
			       : "write-mostly", path), -1;
	a->flagged[a->nflagged] = path;
	a->flag_of[a->nflagged++] = flag;
	return 0;
}

static int create_opt(int i, const char *arg, void *ctx)
{
	struct create_args *a = ctx;
	uint64_t v;
	char *end;
	switch (i) {
	case 0: a->level = arg; return 0;
	case 1:
		if (cmd_size_kib(&cmd_create, "--chunk", arg, &a->vc.geom.chunk))
			return -1;
		if (!a->vc.geom.chunk) /* 0 would mean "the default" further down */
			return cmd_err(&cmd_create, "--chunk %s: must be a power of two of at least 4K", arg), -1;
		a->chunk_set = 1;
		a->chunk_arg = arg;
		return 0;
	case 2:
		if (cmd_size_kib(&cmd_create, "--size", arg, &a->vc.size))
			return -1;
		if (!a->vc.size)
			return cmd_err(&cmd_create, "--size 0: must be positive"), -1;
		a->size_arg = arg;
		return 0;
	case 3: a->layout = arg; return 0;
	case 4:
		v = strtoull(arg, &end, 10);
		if (!*arg || *end || v > 63)
			return cmd_err(&cmd_create, "--spare-devices %s: not a count", arg), -1;
		a->vc.spares = (unsigned)v;
		return 0;
	case 5: {
		char why[160];
		if (sb_name_check(arg, why, sizeof(why)))
			return cmd_err(&cmd_create, "--name: %s", why), -1;
		a->vc.name = arg;
		return 0;
	}
	case 6:
		if (cmd_size_kib(&cmd_create, "--data-offset", arg, &a->vc.data_offset))
			return -1;
		if (!a->vc.data_offset) /* 0 would mean "the default" further down */
			return cmd_err(&cmd_create, "--data-offset %s: must be a positive multiple of 4K "
				       "(the superblock lives below it)", arg), -1;
		if (a->vc.data_offset % 4096) {
			char said[96];
			cmd_size_said(arg, a->vc.data_offset, said, sizeof(said));
			return cmd_err(&cmd_create, "--data-offset %s: must be a multiple of 4K", said), -1;
		}
		a->doff_arg = arg;
		return 0;
	case 7: a->vc.force = 1; return 0;
	case 8: a->vc.assume_clean = 1; return 0;
	case 9: a->vc.prealloc = 1; return 0;
	case 10:
		if (!strcmp(arg, "none"))
			a->vc.bitmap = -1;
		else if (!strcmp(arg, "internal"))
			a->vc.bitmap = 1;
		else
			return cmd_err(&cmd_create, "--bitmap %s: give internal or none", arg), -1;
		return 0;
	case 11:
		if (cmd_size_kib(&cmd_create, "--bitmap-chunk", arg, &a->vc.bitmap_chunk))
			return -1;
		if (!a->vc.bitmap_chunk)
			return cmd_err(&cmd_create, "--bitmap-chunk %s: must be a power of two of at least 4K", arg), -1;
		return 0;
	case 12:
		if (!strcmp(arg, "ppl"))
			a->vc.consistency = SB_CONS_PPL;
		else if (!strcmp(arg, "journal"))
			a->policy_journal = 1;
		else if (!strcmp(arg, "resync") || !strcmp(arg, "bitmap"))
			a->policy_bitmap = !strcmp(arg, "bitmap") ? 1 : -1;
		else
			return cmd_err(&cmd_create, "--consistency-policy %s: give bitmap, resync, ppl or journal", arg), -1;
		return 0;
	case 13: a->journal = arg; return 0;
	case 14:
		if (strcmp(arg, "none") && strcmp(arg, "internal"))
			return cmd_err(&cmd_create, "--bad-block-log %s: give internal or none", arg), -1;
		a->vc.bbl = strcmp(arg, "none") ? 1 : -1;
		return 0;
	case 15: return create_flag(a, arg, SB_SLOT_WRITE_MOSTLY);
	case 16:
		v = strtoull(arg, &end, 10);
		if (!*arg || *end || v > 16383)
			return cmd_err(&cmd_create, "--write-behind %s: a count from 0 to 16383 (md's limit)", arg), -1;
		a->vc.write_behind = (unsigned)v;
		return 0;
	case 17: return create_flag(a, arg, SB_SLOT_FAILFAST);
	case 18:
		v = strtoull(arg, &end, 10);
		if (!*arg || *end || !v || v > LAYOUT_MAX_MEMBERS)
			return cmd_err(&cmd_create, "--raid-devices %s: expected 1 to %u", arg, LAYOUT_MAX_MEMBERS), -1;
		a->raid_devices = (unsigned)v;
		return 0;
	case 19:
		if (!strcmp(arg, "fsvol"))
			a->md_minor = -1;
		else if (!strcmp(arg, "1.0") || !strcmp(arg, "1.1") || !strcmp(arg, "1.2"))
			a->md_minor = arg[2] - '0';
		else if (!strcmp(arg, "1") || !strcmp(arg, "default"))
			a->md_minor = 2; /* mdadm's: 1 and default are 1.2 */
		else
			return cmd_err(&cmd_create, "--metadata %s: give fsvol, 1.0, 1.1 or 1.2 (0.90, ddf and imsm are "
				       "md formats fsvol does not write)", arg), -1;
		return 0;
	}
	return -1;
}

/* Members of different sizes (no -s): all but linear use as much of each as
 * of the smallest; say so rather than leave the rest unused silently. */
static void warn_unequal(const struct vol *v)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned small = 0;
	char used[32], sz[32];
	if (vol_geom(v)->level == LAYOUT_LINEAR)
		return;
	for (unsigned i = 0; i < vol_nslots(v); i++) {
		if (!vol_member(v, i) || (vol_sb(v)->slots[i].flags & SB_SLOT_JOURNAL))
			continue; /* the journal is not in the layout */
		if (vol_member(v, i)->size < lo)
			lo = vol_member(v, i)->size, small = i;
		if (vol_member(v, i)->size > hi)
			hi = vol_member(v, i)->size;
	}
	if (hi <= lo)
		return;
	size_format(vol_geom(v)->member_used, used, sizeof(used));
	fprintf(stderr, "fsvol create: warning: members differ in size; using %s (%llu bytes) of data on each, "
		"as %s allows:\n", used, (unsigned long long)vol_geom(v)->member_used, vol_member(v, small)->path);
	for (unsigned i = 0; i < vol_nslots(v); i++)
		if (vol_member(v, i) && !(vol_sb(v)->slots[i].flags & SB_SLOT_JOURNAL)) {
			size_format(vol_member(v, i)->size, sz, sizeof(sz));
			fprintf(stderr, "  %s: %s%s\n", vol_member(v, i)->path, sz,
				vol_member(v, i)->size > lo ? " (the rest unused)" : " (the smallest)");
		}
}

/* The same member given twice, however it is spelt (b, ./b, $PWD/b, a
 * link to it): a usage error, as mdadm's. */
static int create_dups(const struct cmd *c, char *const *paths, unsigned n)
{
	struct stat st[SB_MAX_SLOTS];
	int have[SB_MAX_SLOTS];
	char x[PATH_MAX + 2], y[PATH_MAX + 2];
	for (unsigned i = 0; i < n; i++) {
		have[i] = stat(paths[i], &st[i]) == 0;
		for (unsigned j = 0; j < i; j++) {
			int same = have[i] && have[j] && st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino;
			if (!same && strcmp(cmd_abs_path(paths[i], x, sizeof(x)), cmd_abs_path(paths[j], y, sizeof(y))))
				continue;
			if (!strcmp(paths[i], paths[j]))
				return cmd_uerr(c, "%s given twice (a device is one member)", paths[i]);
			return cmd_uerr(c, "%s and %s are the same %s, given twice (a device is one member)", paths[j],
					paths[i], have[i] ? "file" : "path");
		}
	}
	return 0;
}

/* Every value a create can be refused for before any member is looked at:
 * a usage error (2), with the user's own words quoted. */
static int create_check(const struct cmd *c, struct create_args *a, char *const *paths, unsigned n)
{
	char err[512], chunk[32];
	int r;
	for (unsigned i = 0; i < n; i++)
		if (!strncmp(paths[i], "mem:", 4))
			return cmd_uerr(c, "%s: a memory member lives only as long as the process that opens it; its "
				       "superblock would vanish when create exits (use a file or a device)", paths[i]);
	if (a->vc.spares >= n)
		return cmd_uerr(c, "--spare-devices %u with %u device%s: no member would be left (spares are the last K "
			       "of the devices given; at most %u here)", a->vc.spares, n, n == 1 ? "" : "s", n - 1);
	if (a->raid_devices && a->raid_devices + a->vc.spares != n)
		return cmd_uerr(c, "--raid-devices %u%s: %u device%s given (as mdadm, the devices are the raid devices, "
				"then the spares%s)", a->raid_devices, a->vc.spares ? " with --spare-devices" : "", n,
				n == 1 ? "" : "s", n > a->raid_devices && !a->vc.spares ? ": -x K makes the last K spares" : "");
	if ((r = create_dups(c, paths, n)))
		return r;
	size_format(a->vc.geom.chunk, chunk, sizeof(chunk));
	if (a->vc.size && a->vc.size < a->vc.geom.chunk) {
		/* "-z 8" is 8 KiB: say what it was read as */
		char said[96], sz[32];
		cmd_size_said(a->size_arg, a->vc.size, said, sizeof(said));
		size_format(a->vc.size, sz, sizeof(sz));
		return cmd_uerr(c, "--size %s: %s per member, less than one chunk (%s)", said, sz, chunk);
	}
	uint64_t doff = a->vc.data_offset ? a->vc.data_offset : SB_DEFAULT_DATA_OFFSET;
	if ((a->vc.bitmap > 0 || a->vc.bitmap_chunk) && doff - SB_SIZE < BITMAP_BLOCK)
		return cmd_uerr(c, "--data-offset %s: leaves no room for the write-intent bitmap between the "
			       "superblock (4K) and the data; give at least 8K, or --bitmap none",
			       a->doff_arg ? a->doff_arg : "1M");
	/* the geometry itself (member count for the level, chunk), on members
	 * of the given size or a stand-in until the files are looked at */
	struct layout_geom g = a->vc.geom;
	g.members = n - a->vc.spares;
	for (unsigned i = 0; i < g.members; i++)
		g.member_size[i] = a->vc.size ? a->vc.size : LAYOUT_MAX_CHUNK;
	if (layout_init(&g, err, sizeof(err))) {
		char said[96];
		if (!a->chunk_arg || strncmp(err, "chunk ", 6) || !strchr(err, ':'))
			return cmd_uerr(c, "%s", err);
		cmd_size_said(a->chunk_arg, a->vc.geom.chunk, said, sizeof(said)); /* "--chunk 3 (read as 3K...)" */
		return cmd_uerr(c, "--chunk %s%s", said, strchr(err, ':'));
	}
	return 0;
}

/* The members: the operands, then flagged paths not among them (mdadm's
 * "--write-mostly DEV" flags the device that follows); a flagged path is an
 * operand when it names the same file, however spelt. 0, or 2 (a usage error). */
static int create_members(const struct cmd *c, struct create_args *a, char **ops, int nops, char **paths,
			  unsigned *n)
{
	for (int i = 0; i < nops; i++) {
		if (*n == SB_MAX_SLOTS)
			return cmd_uerr(c, "more than %d members", SB_MAX_SLOTS);
		paths[(*n)++] = ops[i];
	}
	for (unsigned k = 0; k < a->nflagged; k++) {
		unsigned i = 0;
		while (i < *n && !cmd_same_file(paths[i], a->flagged[k]))
			i++;
		if (a->journal && cmd_same_file(a->journal, a->flagged[k]))
			return cmd_uerr(c, "--%s %s: that is the write journal (--write-journal %s), not a member",
					a->flag_of[k] & SB_SLOT_WRITE_MOSTLY ? "write-mostly" : "failfast", a->flagged[k],
					a->journal);
		if (i == *n) {
			if (*n == SB_MAX_SLOTS)
				return cmd_uerr(c, "more than %d members", SB_MAX_SLOTS);
			paths[(*n)++] = (char *)a->flagged[k];
		}
		a->vc.flags[i] |= (uint8_t)a->flag_of[k];
	}
	return 0;
}

static int create_run(const struct cmd *c, int argc, char **argv)
{
	struct create_args a = { .md_minor = -1 };
	char err[512], cap[32], chunk[32], name[SB_NAME_MAX + 1], warn[1024];
	int first, r = cmd_parse(c, argc, argv, &first, create_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (!a.level)
		return cmd_uerr(c, "--level is required (e.g. -l raid5)");
	if (layout_parse_level_msg(a.level, &a.vc.geom.level, err, sizeof(err)))
		return cmd_uerr(c, "%s", err);
	a.vc.geom.alg = layout_default_alg(a.vc.geom.level);
	if (a.layout && layout_parse_alg_msg(a.vc.geom.level, a.layout, &a.vc.geom.alg, &a.vc.geom.copies,
					     err, sizeof(err)))
		return cmd_uerr(c, "%s", err);
	if (!a.chunk_set)
		a.vc.geom.chunk = 512 << 10;
	char *paths[SB_MAX_SLOTS];
	unsigned n = 0;
	if ((r = create_members(c, &a, argv + first, argc - first, paths, &n)))
		return r;
	if (!n)
		return cmd_uerr(c, "no members given");
	if (a.vc.bitmap < 0 && a.vc.bitmap_chunk)
		return cmd_uerr(c, "--bitmap-chunk with --bitmap none: choose one");
	if (a.policy_bitmap && a.vc.bitmap && a.vc.bitmap != a.policy_bitmap)
		return cmd_uerr(c, "--consistency-policy %s with --bitmap %s: choose one",
				a.policy_bitmap > 0 ? "bitmap" : "resync", a.vc.bitmap > 0 ? "internal" : "none");
	if (a.policy_bitmap)
		a.vc.bitmap = a.policy_bitmap;
	if (a.vc.consistency == SB_CONS_PPL && a.vc.geom.level != LAYOUT_RAID5)
		return cmd_uerr(c, "--consistency-policy ppl: raid5 only (md's partial parity log), not %s", a.level);
	if (a.vc.consistency == SB_CONS_PPL && (a.vc.bitmap > 0 || a.vc.bitmap_chunk))
		return cmd_uerr(c, "--consistency-policy ppl with a write-intent bitmap: md refuses both at once "
				"(the log leaves no resync for a bitmap to limit); leave out --bitmap");
	if (a.vc.consistency == SB_CONS_PPL)
		a.vc.bitmap = -1;
	if (a.policy_journal && !a.journal)
		return cmd_uerr(c, "--consistency-policy journal needs --write-journal PATH (the journal device)");
	if (a.journal && a.vc.consistency == SB_CONS_PPL)
		return cmd_uerr(c, "--write-journal with --consistency-policy ppl: choose one");
	if (a.journal && !layout_is_parity(&a.vc.geom))
		return cmd_uerr(c, "--write-journal: raid4, raid5 or raid6 only (md's write journal), not %s", a.level);
	if (a.journal && (a.vc.bitmap > 0 || a.vc.bitmap_chunk))
		return cmd_uerr(c, "--write-journal with a write-intent bitmap: md refuses both at once (the journal "
				"leaves no resync for a bitmap to limit); leave out --bitmap");
	if (a.journal) {
		a.vc.consistency = SB_CONS_JOURNAL;
		a.vc.bitmap = -1;
	}
	if (a.vc.bitmap < 0 && a.vc.write_behind)
		return cmd_uerr(c, "--write-behind needs the write-intent bitmap (it records the writes the write-mostly "
				"members have yet to get); drop --bitmap none");
	if (a.vc.write_behind && a.vc.geom.level != LAYOUT_RAID1)
		return cmd_uerr(c, "--write-behind is for raid1 only (md's)");
	unsigned slow = 0;
	for (unsigned i = 0; i < n; i++) {
		if (a.vc.flags[i] && vol_flags_check(&a.vc.geom, a.vc.flags[i], err, sizeof(err)))
			return cmd_uerr(c, "%s: %s", paths[i], err);
		slow += !!(a.vc.flags[i] & SB_SLOT_WRITE_MOSTLY);
	}
	if (a.vc.write_behind && !slow)
		fprintf(stderr, "fsvol create: warning: --write-behind with no --write-mostly member does nothing until "
			"one is flagged (fsvol ctl MNT writemostly M on)\n");
	if ((r = create_check(c, &a, paths, n)))
		return r;
	if (a.md_minor >= 0)
		return cmd_create_md(c, &a.vc, (unsigned)a.md_minor, paths, n);
	a.vc.warn = warn;
	a.vc.warnlen = sizeof(warn);
	if (a.journal) {
		if (n == SB_MAX_SLOTS)
			return cmd_uerr(c, "%u devices and a journal: at most %u", n, SB_MAX_SLOTS);
		paths[n++] = (char *)a.journal; /* the last slot: vol_create knows it */
	}
	r = vol_create(&a.vc, paths, n, err, sizeof(err));
	if (r)
		return cmd_err(c, "%s", err);
	if (warn[0])
		fprintf(stderr, "fsvol create: warning: %s (--prealloc reserves the space now)\n", warn);
	/* Report what was built, from the geometry as assembled. */
	struct vol *v;
	struct vol_opts o = { .readonly = 1, .stats = VOL_STATS_OFF };
	if (vol_open(&v, paths, n, &o, err, sizeof(err)))
		return cmd_err(c, "created, but cannot read it back: %s", err);
	size_format(vol_geom(v)->capacity, cap, sizeof(cap));
	size_format(vol_geom(v)->chunk, chunk, sizeof(chunk));
	sb_volume_name(vol_sb(v), name);
	if (!a.vc.size)
		warn_unequal(v);
	char spares[32] = "";
	if (a.vc.spares)
		snprintf(spares, sizeof(spares), " + %u spare%s", a.vc.spares, a.vc.spares == 1 ? "" : "s");
	if (a.journal)
		snprintf(spares + strlen(spares), sizeof(spares) - strlen(spares), " + a write journal");
	printf("fsvol: created %s: %s%s%s, %u member%s%s, chunk %s, capacity %s (%llu bytes)\n", name,
	       layout_level_name(vol_geom(v)->level), layout_alg_name(vol_geom(v))[0] ? " " : "",
	       layout_alg_name(vol_geom(v)), vol_geom(v)->members, vol_geom(v)->members == 1 ? "" : "s",
	       spares, chunk, cap,
	       (unsigned long long)vol_geom(v)->capacity);
	vol_close(v);
	return 0;
}

const struct cmd cmd_create = {
	.name = "create",
	.operands = "MEMBER...",
	.summary = "create a volume: write superblocks on member files or devices",
	.opts = create_opts,
	.run = create_run,
};
