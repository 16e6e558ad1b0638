/* trace_record: `fsvol trace --record FILE MNT` writes the volume's requests
 * as a fio iolog version 3, so fio replays them (fio --read_iolog=FILE, with
 * --replay_redirect=DEV elsewhere) and fsvol-bench --replay reads them back.
 * It reads MNT/trace.json, keeps the volume requests (not their member
 * requests, nor a rebuild's units; a resync or scrub pass running meanwhile
 * shows as volume requests there and is recorded too), and writes them in issue order when it stops (COUNT requests,
 * SEC seconds, or SIGINT/SIGTERM): the trace hands requests out as they
 * complete, which is not the order they arrived in.
 *   fio version 3 iolog
 *   0 /mnt/v/volume add
 *   0 /mnt/v/volume open
 *   US /mnt/v/volume read|write|sync OFFSET LENGTH   (US: microseconds from
 *   US /mnt/v/volume close                              the first request)
 * Microseconds because fio 3.33 writes and reads v3 timestamps so. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "stats/stats.h"

struct rec_req {
	uint64_t t_ns, off, len, seq;
	int op; /* STATS_READ, STATS_WRITE, STATS_FLUSH */
};

static volatile sig_atomic_t rec_stop;
static void on_stop(int sig) { (void)sig; rec_stop = 1; }

/* The number after "KEY": in one trace.json line; -EINVAL when absent. */
static int field_i64(const char *line, const char *key, int64_t *out)
{
	const char *p = strstr(line, key);
	char *end;
	if (!p)
		return -EINVAL;
	p += strlen(key);
	errno = 0;
	long long v = strtoll(p, &end, 10);
	if (end == p || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A volume request from one line; 1 = taken, 0 = a member request, -EINVAL. */
static int parse_line(const char *line, struct rec_req *q)
{
	int64_t parent, dev, t, off, len, seq;
	if (field_i64(line, "\"parent\":", &parent) || field_i64(line, "\"dev\":", &dev) ||
	    field_i64(line, "\"t_start_ns\":", &t) || field_i64(line, "\"offset\":", &off) ||
	    field_i64(line, "\"length\":", &len) || field_i64(line, "\"seq\":", &seq))
		return -EINVAL;
	/* member requests, and the units of a rebuild (the volume's own pass) */
	if (parent != 0 || dev != -1 || strstr(line, "\"why\":\"rebuild\""))
		return 0;
	if (strstr(line, "\"op\":\"read\""))
		q->op = STATS_READ;
	else if (strstr(line, "\"op\":\"write\""))
		q->op = STATS_WRITE;
	else if (strstr(line, "\"op\":\"flush\""))
		q->op = STATS_FLUSH;
	else
		return -EINVAL;
	q->t_ns = (uint64_t)t, q->off = (uint64_t)off, q->len = (uint64_t)len, q->seq = (uint64_t)seq;
	return 1;
}

static int by_time(const void *a, const void *b)
{
	const struct rec_req *x = a, *y = b;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int write_log(FILE *f, const char *vol, struct rec_req *q, size_t n)
{
	static const char *const act[] = { [STATS_READ] = "read", [STATS_WRITE] = "write", [STATS_FLUSH] = "sync" };
	if (n)
		qsort(q, n, sizeof(*q), by_time);
	uint64_t t0 = n ? q[0].t_ns : 0, last = 0;
	for (size_t i = 0; i < n; i++) {
		last = (q[i].t_ns - t0) / 1000;
		if (q[i].op == STATS_FLUSH)
			fprintf(f, "%" PRIu64 " %s sync 0 0\n", last, vol);
		else
			fprintf(f, "%" PRIu64 " %s %s %" PRIu64 " %" PRIu64 "\n", last, vol, act[q[i].op], q[i].off,
				q[i].len);
	}
	fprintf(f, "%" PRIu64 " %s close\n", last, vol);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int cmd_trace_record(const struct cmd *c, const char *mnt, const char *file, long count, double duration)
{
	char path[PATH_MAX + 16], vol[PATH_MAX + 16], buf[1 << 16], line[4096];
	struct rec_req *q = NULL;
	size_t n = 0, cap = 0, ll = 0;
	int r = 0;
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART: a read returns EINTR */

	snprintf(path, sizeof(path), "%s/trace.json", mnt);
	if (!realpath(mnt, vol) || strlen(vol) + 8 > sizeof(vol))
		return cmd_err(c, "%s: %s", mnt, strerror(errno ? errno : ENAMETOOLONG));
	strcat(vol, "/volume");
	if (strpbrk(vol, " \t\n"))
		return cmd_err(c, "%s: a path with blanks cannot be written in a fio iolog", vol);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cmd_err(c, "%s: %s", path, strerror(errno));
	FILE *f = fopen(file, "w");
	if (!f) {
		r = cmd_err(c, "--record %s: %s", file, strerror(errno));
		close(fd);
		return r;
	}
	/* the header is out before the first request is taken: a caller may wait for it */
	fprintf(f, "fio version 3 iolog\n0 %s add\n0 %s open\n", vol, vol);
	if (fflush(f)) {
		r = cmd_err(c, "--record %s: %s", file, strerror(errno));
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	uint64_t end = duration > 0 ? stats_now() + (uint64_t)(duration * 1e9) : UINT64_MAX;
	/* once stopped (a signal, the duration), what the trace already holds is
	 * still taken: a request that completed before the stop is recorded */
	uint64_t drain_end = 0; /* a volume still busy: at most a second more */
	while (!count || (long)n < count) {
		if (!drain_end && (rec_stop || stats_now() >= end))
			drain_end = stats_now() + 1000000000ull;
		int draining = drain_end != 0;
		if (draining && stats_now() >= drain_end)
			break;
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = cmd_err(c, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (got == 0) {
			if (draining)
				break;
			nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
			continue;
		}
		for (ssize_t i = 0; i < got && (!count || (long)n < count); i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			struct rec_req one;
			int k = parse_line(line, &one);
			if (k < 0) {
				r = cmd_err(c, "%s: not a trace record: %.80s", path, line);
				goto out;
			}
			if (!k)
				continue;
			if (n == cap) {
				struct rec_req *p = realloc(q, (cap = cap ? 2 * cap : 4096) * sizeof(*q));
				if (!p) {
					r = cmd_err(c, "out of memory after %zu requests", n);
					goto out;
				}
				q = p;
			}
			q[n++] = one;
		}
	}
	if (write_log(f, vol, q, n))
		r = cmd_err(c, "--record %s: %s", file, strerror(errno ? errno : EIO));
	else
		fprintf(stderr, "fsvol trace: %zu requests recorded in %s\n", n, file);
out:
	if (fclose(f) && !r)
		r = cmd_err(c, "--record %s: %s", file, strerror(errno));
	close(fd);
	free(q);
	return r;
}
