/* fsvol map / layout: where logical bytes live, and the layout grid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"
#include "fsvol/core/volume.h"

#define LEVELS "single linear raid0 raid1 raid10 raid4 raid5 raid6"
#define ALGS "left-symmetric right-symmetric left-asymmetric right-asymmetric n2 f2 o2"
/* Without -s the figures assume members of this size; the output says so. */
#define DEFAULT_MEMBER_SIZE (1ull << 30)

static const struct cmd_opt map_opts[] = {
	{ "level", 'l', "LEVEL", "geometry without members: the level", 0, LEVELS },
	{ "members", 'n', "N", "number of members (mdadm's -n, --raid-devices)", 0, NULL, "raid-devices" },
	{ "chunk", 'c', "CHUNK", "chunk size (default 512K; a bare number is KiB, as mdadm's)" },
	{ "size", 'z', "SIZE", "data per member (default 1G; a bare number is KiB, as mdadm's); sets the capacity "
	  "shown", 0, NULL, NULL, 's' },
	{ "layout", 'p', "ALG", "raid5/6 algorithm or raid10 layout (mdadm's -p, --parity)", 0, ALGS, "parity" },
	{ "json", 0, NULL, "print JSON: {\"extents\":[...],\"parity\":[...]}" },
	{ 0 },
};

static const struct cmd_opt layout_opts[] = {
	{ "level", 'l', "LEVEL", "the level (required)", CMD_OPT_REQUIRED, LEVELS },
	{ "members", 'n', "N", "number of members (required; mdadm's -n, --raid-devices)", CMD_OPT_REQUIRED, NULL,
	  "raid-devices" },
	{ "chunk", 'c', "CHUNK", "chunk size (default 512K; a bare number is KiB, as mdadm's)" },
	{ "size", 'z', "SIZE", "data per member (default 1G; a bare number is KiB, as mdadm's); sets the capacity "
	  "shown", 0, NULL, NULL, 's' },
	{ "layout", 'p', "ALG", "raid5/6 algorithm or raid10 layout (mdadm's -p, --parity)", 0, ALGS, "parity" },
	{ "rows", 0, "R", "rows to draw (default: one full rotation)" },
	{ 0 },
};

struct geom_args {
	const struct cmd *c;
	const char *level, *layout;
	unsigned n;
	uint64_t chunk, size, rows;
	int json;
};

static int geom_opt(int i, const char *arg, void *ctx)
{
	struct geom_args *a = ctx;
	char *end;
	unsigned long v;
	switch (i) {
	case 0: a->level = arg; return 0;
	case 1:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v == 0 || v > LAYOUT_MAX_MEMBERS)
			return cmd_err(a->c, "-n %s: expected 1 to %u members", arg, LAYOUT_MAX_MEMBERS), -1;
		a->n = (unsigned)v;
		return 0;
	case 2:
		if (cmd_size_kib(a->c, "--chunk", arg, &a->chunk))
			return -1;
		if (!a->chunk) /* 0 would mean "the default" below, as create refuses it */
			return cmd_err(a->c, "--chunk %s: must be a power of two of at least 4K", arg), -1;
		return 0;
	case 3:
		if (cmd_size_kib(a->c, "--size", arg, &a->size))
			return -1;
		if (!a->size)
			return cmd_err(a->c, "--size %s: must be positive", arg), -1;
		return 0;
	case 4: a->layout = arg; return 0;
	case 5:
		if (a->c == &cmd_map) {
			a->json = 1;
			return 0;
		}
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v == 0 || v > 4096)
			return cmd_err(a->c, "--rows %s: expected 1 to 4096", arg), -1;
		a->rows = v;
		return 0;
	}
	return -1;
}

/* Geometry from -l/-n/-c/-s/--layout. Prints the error; returns 0 or 2 (all
 * its errors are about the command line). */
static int geom_build(struct geom_args *a, struct layout_geom *g)
{
	char err[256];
	memset(g, 0, sizeof(*g));
	if (!a->level)
		return cmd_uerr(a->c, "--level is required without members");
	if (layout_parse_level_msg(a->level, &g->level, err, sizeof(err)))
		return cmd_uerr(a->c, "%s", err);
	if (!a->n)
		return cmd_uerr(a->c, "-n N (members) is required");
	g->alg = layout_default_alg(g->level);
	if (a->layout && layout_parse_alg_msg(g->level, a->layout, &g->alg, &g->copies, err, sizeof(err)))
		return cmd_uerr(a->c, "%s", err);
	g->members = a->n;
	g->chunk = a->chunk ? a->chunk : 512 << 10;
	for (unsigned i = 0; i < a->n; i++)
		g->member_size[i] = a->size ? a->size : DEFAULT_MEMBER_SIZE;
	if (layout_init(g, err, sizeof(err)))
		return cmd_uerr(a->c, "%s", err);
	return 0;
}

/* default_size: the capacity comes from the default -s, so say so. */
static void print_header(const struct layout_geom *g, int default_size)
{
	char chunk[32], cap[32];
	size_format(g->chunk, chunk, sizeof(chunk));
	size_format(g->capacity, cap, sizeof(cap));
	printf("%s%s%s, %u member%s, chunk %s, capacity %s%s\n", layout_level_name(g->level),
	       layout_alg_name(g)[0] ? " " : "", layout_alg_name(g), g->members, g->members == 1 ? "" : "s", chunk, cap,
	       default_size ? " (members of 1G, the default -s)" : "");
}

static int map_print(const struct layout_geom *g, uint64_t off, uint64_t len, int json,
		     uint64_t data_offset, int default_size)
{
	unsigned copies = layout_copies(g);
	const char *sep = "";
	if (json)
		printf("{\"extents\":[");
	else {
		char o[32], l[32];
		print_header(g, default_size);
		size_format(off, o, sizeof(o));
		size_format(len, l, sizeof(l));
		printf("logical %s +%s\n  %14s %10s %7s %14s %5s%s\n", o, l, "logical", "length", "member",
		       "member-offset", "copy", data_offset ? "   file-offset" : "");
	}
	for (uint64_t pos = off; pos < off + len;) {
		struct layout_extent e;
		uint64_t step = 0;
		for (unsigned cp = 0; cp < copies; cp++) {
			layout_locate(g, pos, cp, &e);
			if (e.length > off + len - pos)
				e.length = off + len - pos;
			step = e.length;
			if (json) {
				printf("%s{\"logical\":%llu,\"member\":%u,\"offset\":%llu,\"length\":%llu,\"copy\":%u}",
				       sep, (unsigned long long)e.logical, e.member, (unsigned long long)e.offset,
				       (unsigned long long)e.length, e.copy);
				sep = ",";
			} else {
				printf("  %14llu %10llu %7s%-2u %13llu %5u", (unsigned long long)e.logical,
				       (unsigned long long)e.length, "m", e.member, (unsigned long long)e.offset, e.copy);
				if (data_offset)
					printf(" %13llu", (unsigned long long)(e.offset + data_offset));
				putchar('\n');
			}
		}
		pos += step;
	}
	if (json)
		printf("],\"parity\":[");
	sep = "";
	if (layout_is_parity(g)) {
		uint64_t sbytes = g->chunk * g->data_members;
		int any = 0;
		for (uint64_t pos = off; pos < off + len;) {
			uint64_t send = (pos / sbytes + 1) * sbytes;
			uint64_t plen = (send < off + len ? send : off + len) - pos;
			struct layout_plan *p = malloc(sizeof(*p));
			if (!p || layout_plan_write(g, pos, plen, 0, NULL, p)) {
				free(p);
				return 1;
			}
			for (unsigned i = 0; i < p->nwrites; i++) {
				const struct layout_io *io = &p->writes[i];
				if (io->role == LAYOUT_DATA)
					continue;
				const char *kind = io->role == LAYOUT_P ? "P" : "Q";
				if (json) {
					printf("%s{\"kind\":\"%s\",\"member\":%u,\"offset\":%llu,\"length\":%llu}", sep, kind,
					       io->member, (unsigned long long)io->offset, (unsigned long long)io->length);
					sep = ",";
				} else {
					if (!any++)
						printf("parity protecting these bytes:\n");
					printf("  %s of stripe %-8llu %7s%-2u %13llu %5s length %llu\n", kind,
					       (unsigned long long)p->s.stripe, "m", io->member,
					       (unsigned long long)io->offset, "", (unsigned long long)io->length);
				}
			}
			free(p);
			pos += plen;
		}
	}
	if (json)
		printf("]}\n");
	return 0;
}

static int is_file(const char *s)
{
	struct stat st;
	return stat(s, &st) == 0;
}

static int map_run(const struct cmd *c, int argc, char **argv)
{
	struct geom_args a = { .c = c };
	struct layout_geom g;
	uint64_t off, len = 1, doff = 0;
	int first, r = cmd_parse(c, argc, argv, &first, geom_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	int nops = argc - first, nsize = 0;
	/* Trailing operands that are numbers and not files: OFFSET [LENGTH]
	 * (a number too large still counts, so its error can name it). */
	while (nsize < 2 && nsize < nops && !is_file(argv[argc - 1 - nsize]) &&
	       size_parse(argv[argc - 1 - nsize], &off) != -EINVAL)
		nsize++;
	if (nsize == 0 && nops > 0) {
		/* name the operand that is neither a member nor a size, and its role */
		const char *last = argv[argc - 1];
		uint64_t x;
		int after_num = nops >= 2 && !is_file(argv[argc - 2]) && size_parse(argv[argc - 2], &x) != -EINVAL;
		if (!is_file(last))
			return cmd_uerr(c, "%s: not a size for %s (a number with an optional K, M, G or T suffix)%s",
				       last, after_num ? "LENGTH" : "OFFSET",
				       after_num || a.level ? "" : ", nor an existing member file");
	}
	if (nsize == 0)
		return cmd_uerr(c, "need OFFSET [LENGTH] after the geometry or members");
	if (cmd_size(c, "OFFSET", argv[argc - nsize], &off) ||
	    (nsize == 2 && cmd_size(c, "LENGTH", argv[argc - 1], &len)))
		return CMD_EXIT_USAGE;
	int nmembers = nops - nsize;
	if (nmembers > 0 && a.level)
		return cmd_uerr(c, "give either members or -l/-n, not both");
	if (nmembers > 0) {
		char err[512];
		struct vol *v;
		struct vol_opts o = { .readonly = 1, .stats = VOL_STATS_OFF, .force = 1 };
		if (vol_open(&v, argv + first, (unsigned)nmembers, &o, err, sizeof(err)))
			return cmd_err(c, "%s", err);
		g = *vol_geom(v);
		doff = vol_data_offset(v);
		vol_close(v);
	} else if (geom_build(&a, &g)) {
		return CMD_EXIT_USAGE;
	}
	if (len == 0)
		return cmd_uerr(c, "LENGTH 0: nothing to map");
	if (off >= g.capacity || len > g.capacity - off) {
		char cap[32];
		size_format(g.capacity, cap, sizeof(cap));
		return cmd_uerr(c, "range %llu+%llu lies beyond the capacity (%s%s)", (unsigned long long)off,
				(unsigned long long)len, cap,
				!nmembers && !a.size ? ", members of 1G: the default -s" : "");
	}
	return map_print(&g, off, len, a.json, doff, !nmembers && !a.size);
}

const struct cmd cmd_map = {
	.name = "map",
	.operands = "[MEMBER...] OFFSET [LENGTH]",
	.summary = "show where logical bytes live: member, member offset, copy, parity",
	.more = "Give either the MEMBERs of a volume, or a geometry: -l and -n (and -c, -s, --layout).",
	.opts = map_opts,
	.run = map_run,
};

static int layout_run(const struct cmd *c, int argc, char **argv)
{
	struct geom_args a = { .c = c };
	struct layout_geom g;
	int first, r = cmd_parse(c, argc, argv, &first, geom_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (first != argc)
		return cmd_uerr(c, "unexpected operand '%s'", argv[first]);
	if (geom_build(&a, &g))
		return CMD_EXIT_USAGE;
	layout_draw(stdout, &g, (unsigned)a.rows);
	if (!a.size)
		printf("(the capacity is for members of 1G, the default -s; -s SIZE gives yours)\n");
	return 0;
}

const struct cmd cmd_layout = {
	.name = "layout",
	.operands = "",
	.summary = "draw the layout grid: stripes by members, data, parity and copies",
	.opts = layout_opts,
	.run = layout_run,
};
