/* fsvol stat / trace: live views of a mounted volume, computed from the
 * mount's files (MNT/stats.json snapshots, MNT/trace), like iostat and
 * blkparse. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "stats/stats.h"

static const struct cmd_opt stat_opts[] = {
	{ "interval", 'i', "SEC", "report every SEC seconds (fractions allowed)" },
	{ "count", 'c', "COUNT", "stop after COUNT reports" },
	{ "json", 0, NULL, "one JSON object per interval" },
	{ "csv", 0, NULL, "CSV rows (header once)" },
	{ "perfmon", 0, NULL, "Windows PerfMon counter names and definitions" },
	{ "extended", 'x', NULL, "iostat -x columns (the default view; accepted for habit)" },
	{ "reset", 0, NULL, "zero the counters first (writes 'reset' to MNT/ctl)" },
	{ 0 },
};

struct stat_args {
	double interval;
	long count;
	enum stats_fmt fmt;
	int reset;
};

static int stat_opt(int i, const char *arg, void *ctx)
{
	struct stat_args *a = ctx;
	char *end;
	switch (i) {
	case 0:
		a->interval = strtod(arg, &end);
		if (!*arg || *end || !(a->interval >= 0.01) || a->interval > 86400)
			return cmd_err(&cmd_stat, "--interval %s: expected seconds between 0.01 and 86400", arg), -1;
		return 0;
	case 1:
		a->count = strtol(arg, &end, 10);
		if (!*arg || *end || a->count <= 0)
			return cmd_err(&cmd_stat, "--count %s: expected a positive number", arg), -1;
		return 0;
	case 2: a->fmt = STATS_FMT_JSON; return 0;
	case 3: a->fmt = STATS_FMT_CSV; return 0;
	case 4: a->fmt = STATS_FMT_PERFMON; return 0;
	case 5: return 0;
	case 6: a->reset = 1; return 0;
	}
	return -1;
}

static int read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	char *b;
	if (fd < 0)
		return -errno;
	if (!(b = malloc(cap))) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = n;
	return 0;
}

static int snap_read(const struct cmd *c, const char *mnt, struct stats_doc *doc)
{
	char path[PATH_MAX + 32], err[256], *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/stats.json", mnt);
	int r = read_file(path, &buf, &len);
	if (r)
		return cmd_err(c, "%s: %s", path, strerror(-r));
	r = stats_json_parse(buf, len, doc, err, sizeof(err));
	free(buf);
	if (r)
		return cmd_err(c, "%s: %s", path, err);
	return 0;
}

/* A snapshot newer than t_ns: a --ctl-dir (fsvol serve) is rewritten once a
 * second, so a shorter interval can find the same one again; wait for the next
 * (2 s at most). 0, or 1 after an error message. */
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
 * timing error is always in sight next to the figures it affects. */
static void model_line(const char *mnt)
{
	char path[PATH_MAX + 16], line[512];
	snprintf(path, sizeof(path), "%s/status", mnt);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "lateness"))
			printf("%s", line + strspn(line, " "));
	fclose(f);
}

static int stat_run(const struct cmd *c, int argc, char **argv)
{
	struct stat_args a = { .fmt = STATS_FMT_IOSTAT };
	struct stats_doc prev = { 0 }, cur = { 0 };
	int first, r = cmd_parse(c, argc, argv, &first, stat_opt, &a);
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_err(c, "need exactly one mount point");
	const char *mnt = argv[first];
	if (a.reset) {
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/ctl", mnt);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "reset\n", 6) != 6) {
			if (fd >= 0)
				close(fd);
			return cmd_err(c, "%s: %s", path, strerror(errno));
		}
		close(fd);
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
	int tty = isatty(1) && a.interval && a.fmt != STATS_FMT_CSV && a.fmt != STATS_FMT_JSON;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int status = 0;
	for (long k = 0;; k++) {
		if (tty)
			fputs("\033[H\033[J", stdout); /* refresh in place, like gstat */
		double t_s = (double)cur.uptime_ns / 1e9;
		if (stats_render_interval(stdout, a.fmt, prev.dev, cur.dev, cur.n, t_s,
					  a.fmt == STATS_FMT_CSV ? k == 0 : 1)) {
			status = cmd_err(c, "cannot render the report");
			break;
		}
		if (a.fmt == STATS_FMT_IOSTAT || a.fmt == STATS_FMT_PERFMON)
			model_line(mnt);
		fflush(stdout);
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
			;
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
	.usage = "[-i SEC] [-c COUNT] [--json|--csv|--perfmon] [-x] [--reset] MNT",
	.summary = "iostat -x / gstat style view: the volume, then each member under it",
	.opts = stat_opts,
	.run = stat_run,
};

/* ---- trace ---- */

static const struct cmd_opt trace_opts[] = {
	{ "count", 'n', "COUNT", "stop after COUNT volume requests" },
	{ "json", 0, NULL, "one JSON object per record" },
	{ 0 },
};

struct trace_args {
	long count;
	int json;
};

static int trace_opt(int i, const char *arg, void *ctx)
{
	struct trace_args *a = ctx;
	char *end;
	if (i == 1) {
		a->json = 1;
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
	if (json)
		return strstr(line, "\"parent\":0,") != NULL;
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
		return cmd_err(c, "need exactly one mount point");
	snprintf(path, sizeof(path), "%s/%s", argv[first], a.json ? "trace.json" : "trace");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cmd_err(c, "%s: %s", path, strerror(errno));
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
	.usage = "[-n COUNT] [--json] MNT",
	.summary = "live trace: each volume request and the member requests it caused",
	.opts = trace_opts,
	.run = trace_run,
};
