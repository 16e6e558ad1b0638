/* fsvol serve: assemble a volume and export it over NBD (nbdkit runs fsvol's
 * plugin); counters and control go to --ctl-dir DIR. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/nbd_launch.h"
#include "fsvol/core/vol_opts.h"

static const struct cmd_opt serve_opts[] = {
	{ "nbd", 0, "ADDR", "listen on unix:PATH or [ADDR:]PORT (required)" },
	{ "name", 0, "EXPORT", "the export's name, listed to clients; other names are refused (default: empty, any name accepted)" },
	{ "read-only", 'r', NULL, "export read-only" },
	{ "ctl-dir", 0, "DIR", "counters and control: DIR/stats, stats.json, diskstats, status (rewritten every second); commands to the FIFO DIR/ctl, outcomes in DIR/ctl.log" },
	{ "foreground", 'f', NULL, "stay in the foreground (Ctrl-C stops the server)" },
	{ "pidfile", 0, "FILE", "write the server's pid to FILE once it serves" },
	{ "log", 0, "FILE", "append the server's messages to FILE once it runs in the background" },
	{ "buffered", 0, NULL, "open members without O_DIRECT" },
	{ "force", 0, NULL, "assemble even with stale or unreadable members (they count as missing)" },
	{ "read-policy", 0, "POLICY", "raid1/raid10 reads: md (default), round-robin, prefer:N, split:SIZE" },
	{ "stats", 0, "LEVEL", "counters: all (default), volume, off" },
	{ "model", 0, "SPEC", "emulated disks (see fsvol model list); hard disks make the export rotational" },
	{ "run", 0, NULL, "start degraded when a member the superblocks record as active is not given (as mount --run)" },
	{ 0 },
};

struct serve_args {
	struct nbd_launch l;
	struct vol_opts vo;
	int bad;
	int run, force;
};

static int serve_opt(int i, const char *arg, void *ctx)
{
	struct serve_args *a = ctx;
	int r = 0;
	switch (i) {
	case 0:
		if (nbd_launch_check_addr(&cmd_serve, arg))
			return -1;
		a->l.addr = arg;
		return 0;
	case 1:
		if (!*arg || strlen(arg) > 4096)
			return cmd_err(&cmd_serve, "--name '%s': expected 1 to 4096 bytes", arg), -1;
		r = nbd_launch_kv(&a->l, "name", arg);
		break;
	case 2: a->l.readonly = 1; return 0;
	case 3: r = nbd_launch_kv(&a->l, "ctl-dir", arg); break;
	case 4: a->l.foreground = 1; return 0;
	case 5: a->l.pidfile = arg; return 0;
	case 6: a->l.log = arg; return 0;
	case 7: r = nbd_launch_kv(&a->l, "buffered", NULL); break;
	case 8: a->force = 1; r = nbd_launch_kv(&a->l, "force", NULL); break;
	case 9:
		if (vol_opts_parse_policy(arg, &a->vo))
			return cmd_err(&cmd_serve, "--read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", arg), -1;
		r = nbd_launch_kv(&a->l, "read-policy", arg);
		break;
	case 10:
		if (vol_opts_parse_stats(arg, &a->vo))
			return cmd_err(&cmd_serve, "--stats %s: expected all, volume or off", arg), -1;
		r = nbd_launch_kv(&a->l, "stats", arg);
		break;
	case 11: r = nbd_launch_kv(&a->l, "model", arg); break;
	case 12: a->run = 1; return 0;
	default: return -1;
	}
	if (r)
		return cmd_err(&cmd_serve, "too many options"), -1;
	return 0;
}

static int serve_run(const struct cmd *c, int argc, char **argv)
{
	struct serve_args a = { 0 };
	int first, r = cmd_parse(c, argc, argv, &first, serve_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (!a.l.addr)
		return cmd_uerr(c, "--nbd unix:PATH or [ADDR:]PORT is required");
	if (argc - first < 1)
		return cmd_uerr(c, "need at least one member");
	a.l.nmembers = (unsigned)(argc - first);
	char **members = cmd_abs_paths(argv + first, a.l.nmembers); /* as mount stores them */
	if (!members)
		return cmd_err(c, "out of memory");
	a.l.members = members;
	r = a.run || a.force ? 0 : cmd_degraded_refuse(c, members, a.l.nmembers);
	if (!r)
		r = nbd_launch(c, &a.l);
	cmd_free_paths(members, a.l.nmembers);
	return r;
}

const struct cmd cmd_serve = {
	.name = "serve",
	.usage = "--nbd unix:PATH|[ADDR:]PORT [--name EXPORT] [-r] [--ctl-dir DIR] [-f] MEMBER...",
	.summary = "assemble a volume and export it over NBD (counters: --ctl-dir)",
	.opts = serve_opts,
	.run = serve_run,
};
