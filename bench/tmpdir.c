/* tmpdir: a temp dir of members that goes away on every way out. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/tmpdir.h"

static char tmp_dir[PATH_MAX - 16];
static volatile sig_atomic_t tmp_made;

const char *bench_tmpdir(void)
{
	return tmp_dir;
}

/* Async-signal-safe: no stdio, no malloc. */
void bench_tmpdir_remove(void)
{
	char p[PATH_MAX];
	size_t n = strlen(tmp_dir);
	if (!tmp_made)
		return;
	memcpy(p, tmp_dir, n);
	for (unsigned i = 0; i < BENCH_MAX_MEMBERS; i++) {
		size_t k = n;
		p[k++] = '/';
		p[k++] = 'm';
		if (i >= 10)
			p[k++] = (char)('0' + i / 10);
		p[k++] = (char)('0' + i % 10);
		p[k] = 0;
		unlink(p);
	}
	rmdir(tmp_dir);
	tmp_made = 0;
}

static void on_signal(int sig)
{
	bench_tmpdir_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

int bench_tmpdir_make(const char *parent, const char *name, char *err, size_t errlen)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int n = snprintf(tmp_dir, sizeof(tmp_dir), "%s/%s.XXXXXX", parent, name);
	if (n < 0 || (size_t)n >= sizeof(tmp_dir) - 8) {
		snprintf(err, errlen, "%s: path too long", parent);
		return -ENAMETOOLONG;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!mkdtemp(tmp_dir)) {
		int r = -errno;
		snprintf(err, errlen, "cannot make a temp dir in %s: %s", parent, strerror(errno));
		return r;
	}
	tmp_made = 1;
	return 0;
}
