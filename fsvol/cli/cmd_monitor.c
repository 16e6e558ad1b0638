/* fsvol monitor: mdadm --monitor for fsvol mounts (and the ctl dirs of fsvol
 * serve, DIR/events). It follows each mount's MNT/events (the daemon's log of Fail, FailSpare, DegradedArray,
 * SpareActive, RebuildStarted, RebuildNN, RebuildFinished) from its end, adds
 * what only an outside watcher sees (DeviceDisappeared when a mount goes or
 * its daemon dies, NewArray when --scan finds a new one, DegradedArray for a
 * volume degraded when the watch starts, TestMessage with --test), and
 * reports each on stdout, to syslog and to a program (CMD EVENT MNT
 * [MEMBER]), as mdadm --monitor --program does. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "stats/json.h"

#define MON_MAX 64          /* mounts followed at once */
#define MON_POLL_MS 200     /* how often MNT/events is read for new lines */

static const struct cmd_opt monitor_opts[] = {
	{ "scan", 0, NULL, "follow every fsvol mount, and those mounted later (NewArray); the default without MNT" },
	{ "program", 'p', "CMD", "run CMD EVENT MNT [MEMBER] for each event (through sh -c, so CMD may carry arguments)" },
	{ "syslog", 'y', NULL, "also log each event to syslog (fsvol-monitor, facility daemon; Fail, FailSpare, "
	  "DegradedArray, DeviceDisappeared as warnings)" },
	{ "oneshot", '1', NULL, "report the volumes degraded now (DegradedArray) and exit, as mdadm --oneshot" },
	{ "test", 't', NULL, "a TestMessage for each volume at start, to check the alert path" },
	{ 0 },
};

struct mon_args {
	int scan, syslog, oneshot, test;
	const char *program;
};

static int monitor_opt(int i, const char *arg, void *ctx)
{
	struct mon_args *a = ctx;
	switch (i) {
	case 0: a->scan = 1; return 0;
	case 1:
		if (!*arg)
			return cmd_err(&cmd_monitor, "--program: empty command"), -1;
		a->program = arg;
		return 0;
	case 2: a->syslog = 1; return 0;
	case 3: a->oneshot = 1; return 0;
	case 4: a->test = 1; return 0;
	}
	return -1;
}

struct mon_mnt {
	char mnt[PATH_MAX];
	uint64_t off;       /* read up to here in MNT/events */
	char part[4096];    /* a line not complete yet */
	size_t npart;
	int alive;
};

static struct mon_args *mon_opts;

static void mon_now(char *out, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char s[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%03dZ", s, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* One event, reported every way asked. member: a path, or NULL. */
static void mon_report(const char *when, const char *event, const char *mnt, const char *slot, const char *detail,
		       const char *member)
{
	char now[40];
	if (!when) {
		mon_now(now, sizeof(now));
		when = now;
	}
	printf("%s %s %s %s %s\n", when, event, mnt, slot ? slot : "-", detail && *detail ? detail : "-");
	fflush(stdout);
	if (mon_opts->syslog) {
		int warn = !strcmp(event, "Fail") || !strcmp(event, "FailSpare") || !strcmp(event, "DegradedArray") ||
			   !strcmp(event, "DeviceDisappeared");
		syslog(warn ? LOG_WARNING : LOG_INFO, "%s event detected on %s%s%s%s%s", event, mnt, slot ? " " : "",
		       slot ? slot : "", detail && *detail ? ": " : "", detail ? detail : "");
	}
	if (mon_opts->program) {
		/* mdadm's convention: PROGRAM EVENT DEVICE [COMPONENT], waited for so order holds */
		char script[PATH_MAX + 32];
		snprintf(script, sizeof(script), "%s \"$@\"", mon_opts->program);
		pid_t p = fork();
		if (p == 0) {
			execl("/bin/sh", "sh", "-c", script, "fsvol-monitor", event, mnt, member, (char *)NULL);
			_exit(127);
		}
		int st;
		if (p > 0)
			while (waitpid(p, &st, 0) < 0 && errno == EINTR)
				;
	}
}

/* "TIME EVENT NAME SLOT DETAIL" from MNT/events, reported for mnt. */
static void mon_line(struct mon_mnt *m, char *line)
{
	char *save, *when = strtok_r(line, " ", &save), *event = strtok_r(NULL, " ", &save);
	char *name = strtok_r(NULL, " ", &save), *slot = strtok_r(NULL, " ", &save);
	char *detail = save && *save ? save : NULL;
	if (!when || !event || !name || !slot)
		return; /* an empty line (a dropped stretch of the log) */
	int has_member = !strcmp(event, "Fail") || !strcmp(event, "FailSpare") || !strcmp(event, "SpareActive");
	mon_report(when, event, m->mnt, strcmp(slot, "-") ? slot : NULL, detail, has_member ? detail : NULL);
}

static void mon_gone(struct mon_mnt *m, const char *why)
{
	m->alive = 0;
	mon_report(NULL, "DeviceDisappeared", m->mnt, NULL, why, NULL);
}

/* New lines of MNT/events; a mount gone or a daemon dead is reported once.
 * A serve's ctl dir (DIR/events copied once a second) is gone when its
 * server is, after its last events. */
static void mon_poll(struct mon_mnt *m)
{
	char path[PATH_MAX + 16], buf[8192];
	int ctl_dir = cmd_is_ctl_dir(m->mnt), served = ctl_dir && cmd_ctl_dir_refresh(m->mnt) != -ENXIO;
	if (!ctl_dir && !cmd_is_fsvol_mount(m->mnt)) {
		mon_gone(m, "unmounted");
		return;
	}
	snprintf(path, sizeof(path), "%s/events", m->mnt);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTCONN)
			mon_gone(m, "its daemon died");
		else if (ctl_dir && !served)
			mon_gone(m, "its server stopped");
		return;
	}
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)m->off);
		if (n <= 0) {
			if (n < 0 && errno == ENOTCONN)
				mon_gone(m, "its daemon died");
			break;
		}
		m->off += (uint64_t)n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (m->npart < sizeof(m->part) - 1)
					m->part[m->npart++] = buf[i];
				continue;
			}
			m->part[m->npart] = 0;
			mon_line(m, m->part);
			m->npart = 0;
		}
	}
	close(fd);
	if (ctl_dir && !served)
		mon_gone(m, "its server stopped");
}

/* The watch starts at the log's end; the state now is reported as mdadm
 * does for the arrays it finds (DegradedArray), and TestMessage with --test. */
static void mon_start(struct mon_mnt *m, const char *mnt, int is_new)
{
	char path[PATH_MAX + 16];
	struct stat st;
	memset(m, 0, sizeof(*m));
	snprintf(m->mnt, sizeof(m->mnt), "%s", mnt);
	m->alive = 1;
	snprintf(path, sizeof(path), "%s/events", mnt);
	if (stat(path, &st) == 0)
		m->off = (uint64_t)st.st_size;
	if (is_new)
		mon_report(NULL, "NewArray", mnt, NULL, NULL, NULL);
	struct stats_json *s;
	char why[PATH_MAX + 400];
	cmd_status_json(mnt, &s, why, sizeof(why)); /* none: no DegradedArray to tell */
	const char *state = s ? stats_json_str(s, "state") : NULL;
	if (state && strcmp(state, "healthy")) {
		char d[128];
		unsigned raid = (unsigned)stats_json_u64(s, "raid_members", 0), act = (unsigned)stats_json_u64(s, "active_members", 0);
		snprintf(d, sizeof(d), "%u of %u members failed or missing%s", raid - act, raid,
			 !strcmp(state, "failed") ? ": beyond redundancy, the volume has FAILED" : "");
		mon_report(NULL, "DegradedArray", mnt, NULL, d, NULL);
	}
	if (mon_opts->test)
		mon_report(NULL, "TestMessage", mnt, NULL, s ? stats_json_str(s, "name") : NULL, NULL);
	stats_json_free(s);
}

/* --scan: fsvol mounts in /proc/self/mounts not followed yet. */
struct mon_scan_ctx {
	struct mon_mnt *ms;
	unsigned *n;
	int is_new;
};

static int mon_scan_one(void *ctx, const char *dir)
{
	struct mon_scan_ctx *c = ctx;
	if (*c->n >= MON_MAX)
		return 1;
	for (unsigned i = 0; i < *c->n; i++)
		if (c->ms[i].alive && !strcmp(c->ms[i].mnt, dir))
			return 0;
	mon_start(&c->ms[(*c->n)++], dir, c->is_new);
	return 0;
}

static void mon_scan(struct mon_mnt *ms, unsigned *n, int is_new)
{
	struct mon_scan_ctx c = { ms, n, is_new };
	cmd_fsvol_mounts(mon_scan_one, &c);
}

static int monitor_run(const struct cmd *c, int argc, char **argv)
{
	struct mon_args a = { 0 };
	int first, r = cmd_parse(c, argc, argv, &first, monitor_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first > MON_MAX)
		return cmd_uerr(c, "at most %d mount points", MON_MAX);
	if (first == argc)
		a.scan = 1; /* mdadm --monitor --scan: every array there is */
	mon_opts = &a;
	if (a.syslog)
		openlog("fsvol-monitor", LOG_PID, LOG_DAEMON);
	struct mon_mnt *ms = calloc(MON_MAX, sizeof(*ms));
	if (!ms)
		return cmd_err(c, "out of memory");
	unsigned n = 0;
	for (int i = first; i < argc; i++) {
		char real[PATH_MAX];
		if (cmd_mnt_check(c, argv[i])) {
			free(ms);
			return CMD_EXIT_FAIL;
		}
		mon_start(&ms[n++], realpath(argv[i], real) ? real : argv[i], 0);
	}
	if (a.scan)
		mon_scan(ms, &n, 0);
	signal(SIGPIPE, SIG_IGN);
	while (!a.oneshot) {
		unsigned alive = 0;
		nanosleep(&(struct timespec){ 0, MON_POLL_MS * 1000000L }, NULL);
		for (unsigned i = 0; i < n; i++)
			if (ms[i].alive)
				mon_poll(&ms[i]);
		if (a.scan) {
			/* slots of mounts gone are reused */
			unsigned k = 0;
			for (unsigned i = 0; i < n; i++)
				if (ms[i].alive)
					ms[k++] = ms[i];
			n = k;
			mon_scan(ms, &n, 1);
		}
		for (unsigned i = 0; i < n; i++)
			alive += ms[i].alive;
		if (!alive && !a.scan)
			break; /* every mount named is gone: nothing left to watch */
	}
	free(ms);
	return 0;
}

const struct cmd cmd_monitor = {
	.name = "monitor",
	.operands = "[MNT...]",
	.summary = "report failures, degraded volumes and rebuilds as they occur (mdadm --monitor)",
	.more = "Each event is one line on stdout: TIME EVENT MNT mN|- DETAIL. Events: Fail, FailSpare, "
		"DegradedArray, SpareActive, RebuildStarted, Rebuild20/40/60/80, RebuildFinished (from MNT/events), "
		"DeviceDisappeared (the mount went, or its daemon died), NewArray (--scan), TestMessage (--test). "
		"Without --scan it ends when every MNT named is gone.",
	.opts = monitor_opts,
	.run = monitor_run,
};
