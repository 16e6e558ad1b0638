/* fsvol serve: assemble a volume and export it over NBD (fsvol's own server,
 * fsvol/front/nbd_*.c); counters and control go to --ctl-dir DIR.
 *
 * Everything that can fail on the user's input (options, the log, the
 * address, the members, the ctl dir) happens before the process goes to the
 * background, so errors reach the terminal with exit status 1; the daemon
 * (front/daemon.c) runs the rest, as it does for mount. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/core/vol_opts.h"
#include "fsvol/core/volume.h"
#include "fsvol/front/daemon.h"
#include "fsvol/front/nbd_server.h"

static const struct cmd_opt serve_opts[] = {
	{ "nbd", 0, "ADDR", "listen on unix:PATH or [ADDR:]PORT (required)" },
	{ "name", 0, "EXPORT", "the export's name, listed to clients; other names are refused (default: empty, any name accepted)" },
	{ "read-only", 'r', NULL, "export read-only" },
	{ "ctl-dir", 0, "DIR", "counters and control: DIR/stats, stats.json, diskstats, status, status.json (rewritten "
	  "every second, and when an fsvol command asks), DIR/events; commands to the FIFO DIR/ctl, outcomes in "
	  "DIR/ctl.log. Every fsvol command that takes a mount takes DIR (fsvol status DIR, fail DIR m1, stop DIR, ...)" },
	{ "foreground", 'f', NULL, "stay in the foreground (Ctrl-C stops the server)" },
	{ "pidfile", 0, "FILE", "write the server's pid to FILE once it serves" },
	{ "log", 0, "FILE", "append the server's messages to FILE once it runs in the background (created 0600; a symbolic link is refused)" },
	{ "buffered", 0, NULL, "open members without O_DIRECT" },
	{ "force", 0, NULL, "assemble even with stale or unreadable members (they count as missing)" },
	{ "read-policy", 0, "POLICY", "raid1/raid10 reads: md (default), round-robin, prefer:N, split:SIZE" },
	{ "stats", 0, "LEVEL", "counters: all (default), volume, off" },
	{ "model", 0, "SPEC", "emulated disks (see fsvol model list); hard disks make the export rotational" },
	{ "run", 0, NULL, "start degraded when a member the superblocks record as active is not given (as mount --run)" },
	{ 0 },
};

struct serve_args {
	const char *addr, *name, *ctl_dir, *pidfile, *log;
	int readonly, foreground;
	int run;                /* --run: a degraded start is wanted */
	struct vol_opts vo;
};

static int serve_opt(int i, const char *arg, void *ctx)
{
	struct serve_args *a = ctx;
	char err[512];
	switch (i) {
	case 0:
		if (nbd_server_check_addr(arg, err, sizeof(err)))
			return cmd_err(&cmd_serve, "%s", err), -1;
		a->addr = arg;
		return 0;
	case 1:
		if (!*arg || strlen(arg) > 4096)
			return cmd_err(&cmd_serve, "--name '%s': expected 1 to 4096 bytes", arg), -1;
		a->name = arg;
		return 0;
	case 2: a->readonly = 1; return 0;
	case 3: a->ctl_dir = arg; return 0;
	case 4: a->foreground = 1; return 0;
	case 5: a->pidfile = arg; return 0;
	case 6: a->log = arg; return 0;
	case 7: a->vo.buffered = 1; return 0;
	case 8: a->vo.force = 1; return 0;
	case 9:
		if (vol_opts_parse_policy(arg, &a->vo))
			return cmd_err(&cmd_serve, "--read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", arg), -1;
		return 0;
	case 10:
		if (vol_opts_parse_stats(arg, &a->vo))
			return cmd_err(&cmd_serve, "--stats %s: expected all, volume or off", arg), -1;
		return 0;
	case 11: a->vo.model = arg; return 0;
	case 12: a->run = 1; return 0;
	default: return -1;
	}
}

static int serve_run(const struct cmd *c, int argc, char **argv)
{
	struct serve_args a = { .vo = { .stats = VOL_STATS_ALL } };
	char err[1024];
	int first, r = cmd_parse(c, argc, argv, &first, serve_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (!a.addr)
		return cmd_uerr(c, "--nbd unix:PATH or [ADDR:]PORT is required");
	if (argc - first < 1)
		return cmd_uerr(c, "need at least one member");
	unsigned nm = (unsigned)(argc - first);
	char **members = cmd_abs_paths(argv + first, nm); /* as mount stores them */
	if (!members)
		return cmd_err(c, "out of memory");
	/* --force takes back what it can and starts degraded, as mdadm's does */
	if (!a.run && !a.vo.force && (r = cmd_degraded_refuse(c, members, nm))) {
		cmd_free_paths(members, nm);
		return r;
	}
	struct daemon_opts o = { .foreground = a.foreground, .log = a.log, .pidfile = a.pidfile, .nbd = a.addr,
				 .nbd_opts = { .name = a.name, .readonly = a.readonly }, .ctl_dir = a.ctl_dir,
				 .events = !!a.ctl_dir /* DIR/events, for fsvol monitor DIR */ };
	struct daemon *d;
	struct vol *v = NULL;
	/* before assembly: the log and the listening socket */
	if (daemon_open(&d, &o, err, sizeof(err))) {
		cmd_free_paths(members, nm);
		return cmd_err(c, "%s", err);
	}
	r = vol_open(&v, members, nm, &a.vo, err, sizeof(err));
	cmd_free_paths(members, nm); /* vol_open keeps its own copies */
	if (r) {
		daemon_free(d);
		return cmd_err(c, "%s", err);
	}
	cmd_degraded_note(c, v, "status");
	if (daemon_run(d, v, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	return 0;
}

const struct cmd cmd_serve = {
	.name = "serve",
	.usage = "--nbd unix:PATH|[ADDR:]PORT [--name EXPORT] [-r] [--ctl-dir DIR] [-f] MEMBER...",
	.summary = "assemble a volume and export it over NBD (counters: --ctl-dir)",
	.opts = serve_opts,
	.run = serve_run,
};
