/* fsvol stat / trace: live views of a mounted volume, computed from the
 * mount's files (MNT/stats.json snapshots, MNT/trace), like iostat and
 * blkparse. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/slurp.h"
#include "stats/stats.h"

static const struct cmd_opt stat_opts[] = {
	{ "interval", 'i', "SEC", "report every SEC seconds (fractions allowed); also the first number after MNT" },
	{ "count", 'c', "COUNT", "stop after COUNT reports; also the second number after MNT" },
	{ "json", 0, NULL, "one JSON object per interval" },
	{ "csv", 0, NULL, "CSV rows (header once)" },
	{ "perfmon", 0, NULL, "Windows PerfMon counter names and definitions" },
	{ "extended", 'x', NULL, "iostat -x columns (the default view; accepted for habit)" },
	{ "reset", 0, NULL, "zero the counters first (writes 'reset' to MNT/ctl)" },
	{ "wide", 'w', NULL, "every column (f/s, areq-sz, f_await, p50, p99.9, seq%), whatever the width" },
	{ "timestamp", 't', NULL, "print the wall-clock time of each report" },
	{ 0 },
};

struct stat_args {
	double interval;
	long count;
	enum stats_fmt fmt;
	int reset, wide, timestamp;
};

static int parse_interval(const char *what, const char *arg, double *out)
{
	char *end;
	*out = strtod(arg, &end);
	if (!*arg || *end || !(*out >= 0.01) || *out > 86400)
		return cmd_err(&cmd_stat, "%s %s: expected seconds between 0.01 and 86400", what, arg), -1;
	return 0;
}

static int parse_count(const char *what, const char *arg, long *out)
{
	char *end;
	*out = strtol(arg, &end, 10);
	if (!*arg || *end || *out <= 0)
		return cmd_err(&cmd_stat, "%s %s: expected a positive number", what, arg), -1;
	return 0;
}

static int stat_opt(int i, const char *arg, void *ctx)
{
	struct stat_args *a = ctx;
	switch (i) {
	case 0: return parse_interval("--interval", arg, &a->interval);
	case 1: return parse_count("--count", arg, &a->count);
	case 2: a->fmt = STATS_FMT_JSON; return 0;
	case 3: a->fmt = STATS_FMT_CSV; return 0;
	case 4: a->fmt = STATS_FMT_PERFMON; return 0;
	case 5: return 0;
	case 6: a->reset = 1; return 0;
	case 7: a->wide = 1; return 0;
	case 8: a->timestamp = 1; return 0;
	}
	return -1;
}

/* A number operand: iostat's INTERVAL [COUNT] */
static int is_number(const char *s)
{
	char *end;
	if (!*s)
		return 0;
	(void)strtod(s, &end);
	return !*end;
}

static int snap_read(const struct cmd *c, const char *mnt, struct stats_doc *doc)
{
	char path[PATH_MAX + 32], err[256], *buf = NULL;
	size_t len = 0;
	if (cmd_is_ctl_dir(mnt))
		cmd_ctl_dir_refresh(mnt); /* current figures, not those of the last periodic rewrite */
	snprintf(path, sizeof(path), "%s/stats.json", mnt);
	int r = slurp_file(path, &buf, &len);
	if (r) {
		char why[PATH_MAX + 400];
		cmd_mnt_problem(mnt, path, -r, why, sizeof(why)); /* a dead daemon, not "Transport endpoint..." */
		return cmd_err(c, "%s", why);
	}
	r = stats_json_parse(buf, len, doc, err, sizeof(err));
	free(buf);
	if (r)
		return cmd_err(c, "%s: %s", path, err);
	return 0;
}

/* A snapshot newer than t_ns: a --ctl-dir (fsvol serve) rewritten on demand
 * gives one at once; should the server not answer, its periodic rewrite comes
 * within a second (2 s at most). 0, or 1 after an error message. */
static int snap_read_after(const struct cmd *c, const char *mnt, struct stats_doc *doc, uint64_t t_ns)
{
	for (int i = 0;; i++) {
		if (snap_read(c, mnt, doc))
			return 1;
		if (doc->uptime_ns != t_ns || i == 40)
			return 0;
		stats_doc_free(doc);
		memset(doc, 0, sizeof(*doc));
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
}

/* With emulated disks: the model's release lateness (MNT/status), so the
 * timing error is always in sight next to the figures it affects, and the
 * adapters' running totals. */
static void model_line(FILE *out, const char *mnt)
{
	char path[PATH_MAX + 16], line[512];
	snprintf(path, sizeof(path), "%s/status", mnt);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "lateness") || !strncmp(line + strspn(line, " "), "adapter ", 8))
			fprintf(out, "%s", line + strspn(line, " "));
	fclose(f);
}

static volatile sig_atomic_t winch;

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

/* The report on a terminal: drawn over the last one from the top left,
 * each line cut to the width (a wrapped line would scroll the screen) and
 * cleared to its end, the rest of the screen cleared: no flicker. */
static void paint(const char *buf, size_t len, unsigned cols)
{
	unsigned col = 0;
	fputs("\033[H", stdout);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\033') { /* a colour: CSI ... letter, no width */
			size_t j = i + 1;
			while (j < len && !((buf[j] >= 'A' && buf[j] <= 'Z') || (buf[j] >= 'a' && buf[j] <= 'z')))
				j++;
			fwrite(buf + i, 1, j < len ? j - i + 1 : len - i, stdout);
			i = j;
			continue;
		}
		if (buf[i] == '\n') {
			fputs("\033[K", stdout);
			col = 0;
		} else if (cols && ++col >= cols) {
			continue; /* past the last column but one */
		}
		fputc(buf[i], stdout);
	}
	fputs("\033[J", stdout);
}

struct stat_view {
	const struct stat_args *a;
	const char *mnt;
	int tty, refresh, color;
};

/* One report of prev -> cur on stdout. k: its number (CSV's header once). */
static int report(const struct stat_view *sv, const struct stats_doc *prev, const struct stats_doc *cur,
		  long k)
{
	const struct stat_args *a = sv->a;
	char when[64] = "", iso[64] = "", title[256];
	struct winsize ws = { 0 };
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	/* RFC 3339: the offset as +hh:mm */
	size_t il = strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S%z", &tm);
	if (il >= 5 && il + 1 < sizeof(iso)) {
		memmove(iso + il - 1, iso + il - 2, 3);
		iso[il - 2] = ':';
	}
	if (a->timestamp)
		strftime(when, sizeof(when), "  %Y-%m-%d %H:%M:%S", &tm);
	double span = cur->n ? (double)(cur->dev[0].snap.t_ns - prev->dev[0].snap.t_ns) / 1e9 : 0;
	snprintf(title, sizeof(title), "%s%s  over %.2f s", cur->n && cur->dev[0].name ? cur->dev[0].name : "?",
		 when, span);
	struct stats_interval_opts o = {
		.fmt = a->fmt,
		.header = a->fmt == STATS_FMT_CSV ? k == 0 : 1,
		.t_s = (double)cur->uptime_ns / 1e9,
		.time = iso,
		.top = { .wide = a->wide, .color = sv->color, .title = title },
	};
	if (sv->tty && ioctl(1, TIOCGWINSZ, &ws) == 0) {
		o.top.cols = ws.ws_col;
		/* keep the header on screen: title, 2 header rows, model line */
		if (sv->refresh && ws.ws_row > 6)
			o.top.max_rows = ws.ws_row - 5u;
	}
	if (a->timestamp && a->fmt == STATS_FMT_PERFMON)
		printf("%s\n", when + 2);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	int r = stats_render_interval(m, &o, prev->dev, cur->dev, cur->n);
	if (!r && (a->fmt == STATS_FMT_IOSTAT || a->fmt == STATS_FMT_PERFMON))
		model_line(m, sv->mnt);
	if (fclose(m))
		r = -EIO;
	if (!r) {
		if (sv->refresh)
			paint(buf, len, o.top.cols);
		else
			fwrite(buf, 1, len, stdout);
		fflush(stdout);
	}
	free(buf);
	return r;
}

static int stat_run(const struct cmd *c, int argc, char **argv)
{
	struct stat_args a = { .fmt = STATS_FMT_IOSTAT };
	struct stats_doc prev = { 0 }, cur = { 0 };
	const char *mnt = NULL;
	int nums = 0;
	int first, r = cmd_parse(c, argc, argv, &first, stat_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	/* fsvol stat [options] MNT [INTERVAL [COUNT]], numbers anywhere among
	 * the operands as iostat takes them ("-x 1 3 MNT" too) */
	for (int i = first; i < argc; i++) {
		if (!is_number(argv[i])) {
			if (mnt) {
				cmd_err(c, "%s: one mount point only (%s given first)", argv[i], mnt);
				return 2;
			}
			mnt = argv[i];
		} else if (nums == 0) {
			if (parse_interval("INTERVAL", argv[i], &a.interval))
				return 2;
			nums++;
		} else if (nums == 1) {
			if (parse_count("COUNT", argv[i], &a.count))
				return 2;
			nums++;
		} else {
			cmd_err(c, "%s: too many numbers (INTERVAL [COUNT])", argv[i]);
			return 2;
		}
	}
	if (!mnt) {
		cmd_err(c, "need a mount point (fsvol stat [OPTIONS] MNT [INTERVAL [COUNT]])");
		return 2;
	}
	if (a.reset) {
		char why[512];
		if (cmd_ctl_send(mnt, "reset", why, sizeof(why)))
			return cmd_err(c, "%s", why);
		if (!a.interval && !a.count)
			return 0;
	}
	if (snap_read(c, mnt, &cur))
		return 1;
	/* The first report covers the time since the counters were zeroed (mount
	 * or reset), as iostat's first covers the time since boot. */
	prev.n = cur.n;
	prev.dev = calloc(cur.n, sizeof(*prev.dev));
	if (!prev.dev)
		return cmd_err(c, "out of memory");
	for (size_t i = 0; i < cur.n; i++) {
		prev.dev[i] = cur.dev[i];
		memset(&prev.dev[i].snap, 0, sizeof(prev.dev[i].snap));
		prev.dev[i].snap.t_ns = cur.dev[i].snap.t_ns -
					(cur.since_reset_ns ? cur.since_reset_ns : 1);
	}
	int prev_owned = 0; /* prev.dev borrows cur's strings until the first swap */
	struct stat_view sv = { .a = &a, .mnt = mnt };
	const char *term = getenv("TERM");
	sv.tty = isatty(1) && a.fmt == STATS_FMT_IOSTAT;
	sv.refresh = sv.tty && a.interval && a.count != 1;
	sv.color = sv.tty && !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
	if (sv.refresh) {
		struct sigaction sa = { .sa_handler = on_winch }; /* no SA_RESTART: wake the sleep */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGWINCH, &sa, NULL);
		fputs("\033[H\033[2J", stdout);
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int status = 0;
	for (long k = 0;; k++) {
		if (report(&sv, &prev, &cur, k)) {
			status = cmd_err(c, "cannot render the report");
			break;
		}
		if ((a.count && k + 1 >= a.count) || !a.interval)
			break;
		/* Sleep to the next tick of a fixed schedule: no drift. */
		double next = (double)(k + 1) * a.interval;
		struct timespec due = { t0.tv_sec + (time_t)next,
					t0.tv_nsec + (long)((next - floor(next)) * 1e9) };
		if (due.tv_nsec >= 1000000000L) {
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
			if (winch) { /* resized: lay the same report out again at once */
				winch = 0;
				fputs("\033[2J", stdout);
				report(&sv, &prev, &cur, k);
			}
		if (prev_owned)
			stats_doc_free(&prev);
		else
			free(prev.dev);
		prev = cur;
		prev_owned = 1;
		memset(&cur, 0, sizeof(cur));
		if (snap_read_after(c, mnt, &cur, prev.uptime_ns)) {
			status = 1;
			break;
		}
		if (cur.n != prev.n) {
			status = cmd_err(c, "%s: the volume changed its members; restart", mnt);
			break;
		}
	}
	if (prev_owned)
		stats_doc_free(&prev);
	else
		free(prev.dev);
	stats_doc_free(&cur);
	return status;
}

const struct cmd cmd_stat = {
	.name = "stat",
	.operands = "MNT [INTERVAL [COUNT]]",
	.summary = "iostat -x / gstat view: the volume, then each member (in place on a terminal)",
	.opts = stat_opts,
	.run = stat_run,
};

/* ---- trace ---- */

static const struct cmd_opt trace_opts[] = {
	{ "count", 'n', "COUNT", "stop after COUNT volume requests" },
	{ "json", 0, NULL, "one JSON object per record" },
	{ "record", 0, "FILE", "write the volume's requests to FILE as a fio iolog v3 (fio --read_iolog, "
			       "fsvol-bench --replay) when it stops: COUNT requests, --duration, or Ctrl-C" },
	{ "duration", 0, "SEC", "with --record: stop after SEC seconds" },
	{ 0 },
};

struct trace_args {
	long count;
	int json;
	const char *record;
	double duration;
};

static int trace_opt(int i, const char *arg, void *ctx)
{
	struct trace_args *a = ctx;
	char *end;
	if (i == 1) {
		a->json = 1;
		return 0;
	}
	if (i == 2) {
		a->record = arg;
		return 0;
	}
	if (i == 3) {
		a->duration = strtod(arg, &end);
		if (!*arg || *end || !(a->duration > 0) || a->duration > 1e7)
			return cmd_err(&cmd_trace, "--duration %s: expected a positive number of seconds", arg), -1;
		return 0;
	}
	a->count = strtol(arg, &end, 10);
	if (!*arg || *end || a->count <= 0)
		return cmd_err(&cmd_trace, "--count %s: expected a positive number", arg), -1;
	return 0;
}

/* Is this output line a volume request (not one of its member requests)? */
static int is_volume_line(const char *line, int json)
{
	if (json) /* a member's metadata I/O of nobody's request has parent 0 too */
		return strstr(line, "\"parent\":0,") != NULL && strstr(line, "\"dev\":-1,") != NULL;
	return line[0] != ' ' && strstr(line, " vol ") != NULL;
}

static int trace_run(const struct cmd *c, int argc, char **argv)
{
	struct trace_args a = { 0 };
	char path[PATH_MAX + 16], buf[1 << 16], line[4096];
	size_t ll = 0;
	long seen = 0;
	int first, r = cmd_parse(c, argc, argv, &first, trace_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	if (a.duration && !a.record)
		return cmd_uerr(c, "--duration: only with --record FILE");
	if (a.record && a.json)
		return cmd_uerr(c, "--record and --json exclude each other");
	if (a.record)
		return cmd_trace_record(c, argv[first], a.record, a.count, a.duration);
	snprintf(path, sizeof(path), "%s/%s", argv[first], a.json ? "trace.json" : "trace");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		char why[PATH_MAX + 400];
		cmd_mnt_problem(argv[first], path, errno, why, sizeof(why));
		return cmd_err(c, "%s", why);
	}
	if (!a.json)
		printf("%-14s %8s %-4s %c %12s   %-8s %13s %s\n", "time(s)", "seq", "dev", 'T', "offset",
		       "length", "latency", "why");
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = cmd_err(c, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0) {
			fflush(stdout);
			nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
			continue;
		}
		/* Pass whole lines through, counting volume requests. */
		for (ssize_t i = 0; i < n; i++) {
			if (ll < sizeof(line) - 1)
				line[ll++] = buf[i];
			if (buf[i] != '\n')
				continue;
			line[ll] = 0;
			ll = 0;
			int vol = a.count && is_volume_line(line, a.json);
			/* text: a request's member lines follow it; JSON: they precede it */
			if (vol && !a.json && seen >= a.count)
				goto done;
			fputs(line, stdout);
			if (vol && ++seen >= a.count && a.json)
				goto done;
		}
		/* the daemon hands out a request with all its member records in one
		 * read, so the last text request is complete at the end of a read */
		if (!a.json && a.count && seen >= a.count && ll == 0)
			goto done;
	}
done:
	fflush(stdout);
	close(fd);
	return r;
}

const struct cmd cmd_trace = {
	.name = "trace",
	.operands = "MNT",
	.summary = "live trace of volume and member requests; --record writes a fio iolog",
	.opts = trace_opts,
	.run = trace_run,
};
