/* sample: what the report measures besides the I/Os themselves: CPU time
 * per core (/proc/stat deltas) and the fsvol counters below the mapping
 * layer (MNT/stats.json of a mount), and the conservation check. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/bench.h"
#include "fsvol/util/slurp.h"

/* One line per core: "cpuN user nice system idle iowait irq softirq steal".
 * The summary line "cpu  ..." is not a core: "%u" would skip the blanks and
 * read its first figure as the core number, so the digit is checked first. */
int bench_cpu_parse(FILE *f, struct bench_cpu_raw **out, unsigned *n)
{
	char line[512];
	unsigned cap = 0, cnt = 0;
	struct bench_cpu_raw *c = NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long us, ni, sy, id, io, irq, sirq, st;
		unsigned cpu;
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &us, &ni, &sy, &id, &io,
			   &irq, &sirq, &st) != 9)
			continue;
		if (cnt == cap) {
			struct bench_cpu_raw *nc = realloc(c, (cap = cap ? 2 * cap : 16) * sizeof(*c));
			if (!nc) {
				free(c);
				return -ENOMEM;
			}
			c = nc;
		}
		/* steal counts as neither: it is time the core was not ours */
		c[cnt++] = (struct bench_cpu_raw){ cpu, us + ni, sy + irq + sirq, id + io };
	}
	*out = c;
	*n = cnt;
	return cnt ? 0 : -ENOENT;
}

int bench_cpu_read(struct bench_cpu_raw **out, unsigned *n)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return -errno;
	int r = bench_cpu_parse(f, out, n);
	fclose(f);
	return r;
}

void bench_cpu_delta(const struct bench_cpu_raw *a, const struct bench_cpu_raw *b, unsigned n,
		     struct bench_cpu *out, struct bench_cpu *avg)
{
	*avg = (struct bench_cpu){ 0 };
	for (unsigned i = 0; i < n; i++) {
		double u = (double)(b[i].user - a[i].user), k = (double)(b[i].kernel - a[i].kernel);
		double id = (double)(b[i].idle - a[i].idle), t = u + k + id;
		if (t <= 0)
			t = 1, id = 1; /* no tick in the interval: call it idle */
		out[i] = (struct bench_cpu){ b[i].id, 100 * (u + k) / t, 100 * u / t, 100 * k / t, 100 * id / t };
		avg->usage += out[i].usage / n;
		avg->user += out[i].user / n;
		avg->kernel += out[i].kernel / n;
		avg->idle += out[i].idle / n;
	}
}

int bench_fsvol_mount_dir(const char *target, char *dir, size_t len)
{
	const char *slash = strrchr(target, '/');
	char p[PATH_MAX];
	if (strcmp(slash ? slash + 1 : target, "volume"))
		return -ENOENT;
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == target)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - target), target);
	snprintf(p, sizeof(p), "%s/stats.json", dir);
	return access(p, R_OK) ? -ENOENT : 0;
}

int bench_fsvol_read(const char *dir, struct stats_doc *doc, char *err, size_t errlen)
{
	char path[PATH_MAX], perr[200];
	char *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	int r = slurp_file(path, &buf, &len);
	if (r) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	r = stats_json_parse(buf, len, doc, perr, sizeof(perr));
	free(buf);
	if (r)
		snprintf(err, errlen, "%s: %s", path, r == -ENOMEM ? "out of memory" : perr);
	return r;
}

void bench_fsvol_level(const char *dir, char *level, size_t len)
{
	char path[PATH_MAX], line[256], lv[32];
	level[0] = 0;
	snprintf(path, sizeof(path), "%s/status", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	/* "fsvol0 : active raid5 left-symmetric chunk 64K, ..." */
	if (fgets(line, sizeof(line), f) && sscanf(line, "%*s : %*s %31s", lv) == 1)
		snprintf(level, len, "%s", lv);
	fclose(f);
}

void bench_fsvol_model(const char *dir, char *spec, size_t len)
{
	char path[PATH_MAX], line[512];
	spec[0] = 0;
	snprintf(path, sizeof(path), "%s/status", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	/* "      model SPEC" or "      model SPEC: N completions released, ..." */
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " "), *e;
		if (strncmp(s, "model ", 6))
			continue;
		s += 6;
		if ((e = strstr(s, ": ")) || (e = strchr(s, '\n')))
			*e = 0;
		snprintf(spec, len, "%s", s);
		break;
	}
	fclose(f);
}

static void cons(struct bench_below *b, const char *what, uint64_t m, uint64_t v, const char *note,
		 int must_equal)
{
	struct bench_conservation *c = &b->cons[b->ncons++];
	c->what = what;
	c->member_bytes = m;
	c->volume_bytes = v;
	c->ratio = v ? (double)m / (double)v : 0;
	c->ok = !must_equal || m == v;
	snprintf(c->note, sizeof(c->note), "%s: %s", b->level[0] ? b->level : "fsvol", note);
}

void bench_conserve(struct bench_below *b)
{
	const struct stats_snap *v = &b->dev[0].d;
	uint64_t mr = 0, mw = 0;
	const char *lv = b->level;
	int mirror = !strcmp(lv, "raid1") || !strcmp(lv, "raid10");
	int parity = !strcmp(lv, "raid4") || !strcmp(lv, "raid5") || !strcmp(lv, "raid6");
	int plain = !mirror && !parity;
	for (unsigned i = 1; i < b->ndev; i++) {
		mr += b->dev[i].d.read_bytes;
		mw += b->dev[i].d.write_bytes;
	}
	b->ncons = 0;
	if (v->read_bytes || !v->write_bytes) {
		/* a healthy volume of any level reads each byte once, from one copy */
		if (parity && v->write_bytes)
			cons(b, "reads", mr, v->read_bytes, "member reads include read-modify-write reads", 0);
		else
			cons(b, "reads", mr, v->read_bytes, "each byte read once", 1);
	}
	if (v->write_bytes) {
		cons(b, "writes", mw, v->write_bytes,
		     mirror ? "every copy" : parity ? "data + parity" : "each byte written once", plain);
		if (parity && !v->read_bytes)
			cons(b, "member reads for writes", mr, v->write_bytes, "read-modify-write or reconstruct-write", 0);
	}
}

void bench_proc_cpu(double *user_s, double *sys_s)
{
	struct rusage ru;
	*user_s = *sys_s = 0;
	if (getrusage(RUSAGE_SELF, &ru))
		return;
	*user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	*sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}
