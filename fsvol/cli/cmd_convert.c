/* fsvol convert: a stopped volume in fsvol's format rewritten in Linux md's
 * metadata 1.2 over the same data (docs/format.md, "Converting to md's
 * format"). fsvol maps every byte as md does, so only the metadata changes:
 * md's superblock goes at 4K, its bitmap and bad-block log after it, all
 * before the data offset; what md's format cannot say is refused by name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_create_md.h"
#include "fsvol/core/volume.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/md1.h"
#include "layout/layout.h"

static const struct cmd_opt convert_opts[] = {
	{ "metadata", 'e', "VERSION", "the format to convert to: 1.2 (md's default; 1.0 and 1.1 would need the "
				      "data moved)", 0, "1.2" },
	{ 0 },
};

static int convert_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	*(const char **)ctx = arg;
	return 0;
}

/* Member path's fsvol superblock into *s; a message and 1 when there is none. */
static int convert_read(const struct cmd *c, const char *path, struct sb *s)
{
	struct member m;
	char err[256];
	uint8_t *buf = NULL;
	int r = member_open(&m, path, 0, err, sizeof(err));
	if (r)
		return cmd_err(c, "%s", err);
	if (member_lock(&m))
		r = -EBUSY; /* a mounted volume's: its superblock may be changing */
	else if (posix_memalign((void **)&buf, 4096, SB_SIZE))
		r = -ENOMEM;
	else if (m.size < SB_SIZE || member_pread(&m, buf, SB_SIZE, 0))
		r = -EIO;
	else if (sb_decode(buf, SB_SIZE, s, err, sizeof(err)))
		r = -EINVAL;
	member_close(&m);
	free(buf);
	if (r == -EINVAL)
		return cmd_err(c, "%s: no superblock in fsvol's format (%s): nothing to convert (fsvol examine "
			       "says what it holds)", path, err);
	if (r == -EBUSY)
		return cmd_err(c, "%s: in use by a mounted fsvol volume (umount it first)", path);
	return r ? cmd_err(c, "%s: %s", path, strerror(-r)) : 0;
}

/* What md's format (or convert) cannot carry, named; NULL when none. */
static const char *convert_refusal(const struct sb *s, unsigned n, char *why, size_t len)
{
	if (!s->clean)
		return "the volume was not stopped cleanly (mount it, let the resync end, umount it)";
	if (s->spares || n != s->members)
		return snprintf(why, len, "give the volume's %u members, no spares (remove them first)", s->members), why;
	if (s->reshape_flags)
		return "a reshape is in progress (mount it and let it end)";
	if (s->consistency != SB_CONS_RESYNC)
		return s->consistency == SB_CONS_PPL ? "a partial parity log: md's PPL format is not written yet"
						     : "a write journal: md's journal format is not written yet";
	if (s->level == LAYOUT_SINGLE)
		return "md has no level single";
	if (s->level == LAYOUT_LINEAR)
		return "linear: fsvol does not assemble md's linear yet";
	if (s->level == LAYOUT_RAID6 && !(s->features & SB_FEAT_MD_Q))
		return "raid6 Q not yet in md's order (mount the volume once: it rewrites Q)";
	for (unsigned i = 0; i < s->members; i++)
		if (s->slots[i].state != SB_ACTIVE || (s->slots[i].flags & (SB_SLOT_REPLACEMENT | SB_SLOT_JOURNAL)))
			return snprintf(why, len, "slot %u is %s (every member active and in sync: mount it and let the "
					"recovery end)", i, sb_state_name(s->slots[i].state)), why;
	if (s->data_offset / MD1_SECTOR < md1_super_offset(2, 0) + 16)
		return snprintf(why, len, "data offset %llu bytes: md's 1.2 superblock and bad-block log need %u "
				"before the data", (unsigned long long)s->data_offset,
				(unsigned)(md1_super_offset(2, 0) + 16) * MD1_SECTOR), why;
	return NULL;
}

static int convert_run(const struct cmd *c, int argc, char **argv)
{
	const char *meta = "1.2";
	int first, r = cmd_parse(c, argc, argv, &first, convert_opt, &meta);
	if (r)
		return r < 0 ? CMD_EXIT_USAGE : 0;
	unsigned n = (unsigned)(argc - first);
	if (!n)
		return cmd_uerr(c, "give the volume's members");
	if (strcmp(meta, "1.2") && strcmp(meta, "1"))
		return cmd_uerr(c, "--metadata %s: only 1.2 (md's 1.0 puts the data at sector 0, 1.1 its superblock "
			       "there, where fsvol's data or superblock is: the data would have to move)", meta);
	if (n > SB_MAX_SLOTS)
		return cmd_uerr(c, "%u members: at most %u", n, SB_MAX_SLOTS);
	struct sb *s = calloc(n, sizeof(*s));
	char *paths[SB_MAX_SLOTS] = { 0 }, why[160];
	struct vol_create vc = { 0 };
	if (!s)
		return cmd_err(c, "out of memory");
	for (unsigned i = 0; i < n && !r; i++)
		r = convert_read(c, argv[first + (int)i], &s[i]);
	for (unsigned i = 0; i < n && !r; i++) {
		if (memcmp(s[i].volume_uuid, s[0].volume_uuid, 16) || s[i].events != s[0].events)
			r = cmd_err(c, "%s: %s than %s (every member of one volume, all in step)", argv[first + (int)i],
				    memcmp(s[i].volume_uuid, s[0].volume_uuid, 16) ? "another volume" : "other events",
				    argv[first]);
		else if (s[i].index >= n || paths[s[i].index])
			r = cmd_err(c, "%s: slot %u given twice or out of range", argv[first + (int)i], s[i].index);
		else
			paths[s[i].index] = argv[first + (int)i];
	}
	const char *no = r ? NULL : convert_refusal(&s[0], n, why, sizeof(why));
	if (no)
		r = cmd_err(c, "cannot convert to md's format: %s", no);
	if (!r) {
		const struct sb *v = &s[0];
		struct md_convert conv = { .ctime = v->ctime };
		memcpy(conv.uuid, v->volume_uuid, 16);
		vc.geom.level = (enum layout_level)v->level;
		vc.geom.alg = v->layout;
		vc.geom.copies = v->level == LAYOUT_RAID10 ? v->copies : 0;
		vc.geom.chunk = v->chunk;
		vc.geom.members = v->members;
		for (unsigned i = 0; i < n; i++)
			vc.geom.member_size[i] = v->slots[i].data_size;
		char err[256];
		if (layout_init(&vc.geom, err, sizeof(err)))
			r = cmd_err(c, "%s", err);
		vc.size = vc.geom.member_used;
		vc.data_offset = v->data_offset;
		vc.name = v->name[0] ? v->name : NULL;
		vc.force = vc.assume_clean = 1;
		vc.bitmap = v->bitmap_offset ? 1 : -1;
		vc.bbl = v->bbl_offset ? 1 : -1;
		vc.write_behind = v->write_behind;
		for (unsigned i = 0; i < n; i++)
			vc.flags[i] = v->slots[i].flags & (SB_SLOT_WRITE_MOSTLY | SB_SLOT_FAILFAST);
		if (!r)
			r = cmd_convert_md(c, &vc, &conv, paths, n);
	}
	free(s);
	return r;
}

const struct cmd cmd_convert = {
	.name = "convert",
	.operands = "MEMBER...",
	.summary = "rewrite a stopped volume's metadata in Linux md's format (1.2), the data left in place",
	.more = "Every member of a clean, whole volume (no spares, reshape, PPL or journal), in any order. md's "
		"superblock, bitmap and bad-block log go between 4K and the data offset on each member, then "
		"fsvol's superblock at 0 is zeroed on each. The volume keeps its UUID, name and data; mdadm "
		"--assemble and fsvol mount both take it after. docs/format.md, \"Converting to md's format\".",
	.opts = convert_opts,
	.run = convert_run,
};
