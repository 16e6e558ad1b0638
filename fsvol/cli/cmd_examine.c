/* fsvol examine: print a member's superblock (like mdadm --examine). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_md.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/bbl.h"
#include "fsvol/meta/sb.h"
#include "layout/layout.h"

static const struct cmd_opt examine_opts[] = {
	{ "examine-badblocks", 0, NULL, "print only each member's bad-block list (mdadm --examine-badblocks)" },
	{ "scan", 0, NULL, "the operands are paths to look under for fsvol members (directories walked, links not followed) and "
	  "list each volume found: one ARRAY line, its devices in slot order, stale ones apart (mdadm --examine --scan)" },
	{ 0 },
};

struct examine_args {
	int scan, badblocks;
};

static int examine_opt(int i, const char *arg, void *ctx)
{
	struct examine_args *a = ctx;
	(void)arg;
	if (i == 0)
		a->badblocks = 1;
	else
		a->scan = 1;
	return 0;
}

/* ---- --scan ---- */

struct scan_hit {
	char *path;
	struct sb sb;
};

struct scan_list {
	struct scan_hit *h;
	size_t n, cap;
	int nomem;
};

static void scan_add(const char *path, const struct sb *s, void *ctx)
{
	struct scan_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct scan_hit *h = realloc(l->h, cap * sizeof(*h));
		if (!h) {
			l->nomem = 1;
			return;
		}
		l->h = h;
		l->cap = cap;
	}
	if (!(l->h[l->n].path = strdup(path))) {
		l->nomem = 1;
		return;
	}
	l->h[l->n++].sb = *s;
}

/* by volume, then slot, then the freshest first */
static int scan_cmp(const void *a, const void *b)
{
	const struct scan_hit *x = a, *y = b;
	int c = memcmp(x->sb.volume_uuid, y->sb.volume_uuid, 16);
	if (c)
		return c;
	if (x->sb.index != y->sb.index)
		return x->sb.index < y->sb.index ? -1 : 1;
	return x->sb.events > y->sb.events ? -1 : x->sb.events < y->sb.events;
}

/* One volume: hits h[0..n) share its UUID. */
static void scan_print(const struct scan_hit *h, size_t n)
{
	const struct sb *ref = &h[0].sb;
	for (size_t i = 1; i < n; i++)
		if (h[i].sb.events > ref->events)
			ref = &h[i].sb;
	char uuid[37], name[SB_NAME_MAX + 1];
	sb_uuid_format(ref->volume_uuid, uuid);
	sb_volume_name(ref, name);
	printf("ARRAY %s level=%s num-devices=%u", name, layout_level_name(ref->level), ref->members);
	if (ref->spares)
		printf(" spares=%u", ref->spares);
	printf(" UUID=%s events=%llu\n   devices=", uuid, (unsigned long long)ref->events);
	int first = 1, stale = 0;
	for (size_t i = 0; i < n; i++) {
		if (h[i].sb.events < ref->events) {
			stale = 1;
			continue;
		}
		printf("%s%s", first ? "" : ",", h[i].path);
		first = 0;
	}
	putchar('\n');
	if (stale) {
		printf("   stale=");
		first = 1;
		for (size_t i = 0; i < n; i++)
			if (h[i].sb.events < ref->events) {
				printf("%s%s(m%u, events %llu)", first ? "" : ",", h[i].path,
				       h[i].sb.slots[h[i].sb.index].number,
				       (unsigned long long)h[i].sb.events);
				first = 0;
			}
		putchar('\n');
	}
}

static int examine_scan(const struct cmd *c, char **paths, unsigned n)
{
	struct scan_list l = { 0 };
	struct stat st;
	int bad = 0;
	for (unsigned i = 0; i < n; i++)
		if (lstat(paths[i], &st) < 0)
			bad = cmd_err(c, "%s: %s", paths[i], strerror(errno));
	cmd_scan(paths, n, -1, scan_add, &l);
	if (l.nomem)
		bad = cmd_err(c, "out of memory");
	qsort(l.h, l.n, sizeof(*l.h), scan_cmp);
	for (size_t i = 0, j; i < l.n; i = j) {
		for (j = i + 1; j < l.n && !memcmp(l.h[j].sb.volume_uuid, l.h[i].sb.volume_uuid, 16); j++)
			;
		scan_print(l.h + i, j - i);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.h[i].path);
	free(l.h);
	return bad;
}

/* The member's bad-block list (md's bad block log), mdadm --examine style. */
static int examine_bbl(const struct cmd *c, struct member *m, const struct sb *s, const char *path, int only)
{
	void *buf = NULL;
	static struct bbl l;
	char err[256];
	if (!s->bbl_offset) {
		if (only)
			printf("No bad-blocks list configured on %s\n", path);
		return 0;
	}
	int r = posix_memalign(&buf, 4096, BBL_AREA) ? -ENOMEM : member_pread(m, buf, BBL_AREA, s->bbl_offset);
	if (!r && bbl_area_decode(buf, &l, err, sizeof(err)))
		r = -EINVAL;
	else if (r)
		snprintf(err, sizeof(err), "%s", strerror(-r));
	free(buf);
	if (r)
		return cmd_err(c, "%s: bad-block list: %s", path, err);
	if (!only)
		sb_dump_field(stdout, "Bad Block Log", "%u entries (%u available), %llu sectors, sequence %llu", l.n,
			      BBL_MAX, (unsigned long long)bbl_sectors(&l), (unsigned long long)l.seq);
	if (l.n || only)
		bbl_dump(stdout, &l, path);
	return 0;
}

static int examine_one(const struct cmd *c, const char *path, int badblocks)
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
	if (r && (r = cmd_md_examine(c, &m, path, badblocks)) >= 0) { /* md's own format */
		member_close(&m);
		return r;
	}
	if (r) {
		member_close(&m);
		return cmd_err(c, "%s: %s", path, err);
	}
	if (!badblocks)
		sb_dump(stdout, &s, path);
	r = examine_bbl(c, &m, &s, path, badblocks);
	member_close(&m);
	return r;
}

static int examine_run(const struct cmd *c, int argc, char **argv)
{
	struct examine_args a = { 0 };
	int first, bad = 0, r = cmd_parse(c, argc, argv, &first, examine_opt, &a), scan = a.scan;
	if (r)
		return r > 0 ? 0 : 2;
	if (first >= argc)
		return cmd_uerr(c, scan ? "no paths given to scan" : "no members given");
	if (scan)
		return examine_scan(c, argv + first, (unsigned)(argc - first));
	for (int i = first; i < argc; i++) {
		if (i > first)
			putchar('\n');
		bad |= examine_one(c, argv[i], a.badblocks);
	}
	return bad;
}

const struct cmd cmd_examine = {
	.name = "examine",
	.operands = "MEMBER...",
	.summary = "print superblocks and bad-block lists; --scan lists the volumes under paths",
	.opts = examine_opts,
	.run = examine_run,
};
