/* fuzz_tracefile: workload traces through tracefile_load, every format.
 *
 *   byte 0: the format asked for, modulo TRACEFILE_FMT_COUNT (0: detect)
 *   then the file's bytes (written to a memfd, loaded by its /proc path).
 *
 * Properties: a load either fails with "PATH..." in err and nothing kept, or
 * returns at least one request, each inside max_end with a source line, and
 * times counted from the earliest (one request at 0). */
#include <sys/mman.h>
#include <unistd.h>

#include "fsvol/trace/tracefile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz_tracefile", 0);
		FUZZ_ASSERT(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (!size)
		return 0;
	enum tracefile_fmt fmt = (enum tracefile_fmt)(data[0] % TRACEFILE_FMT_COUNT);
	FUZZ_ASSERT(ftruncate(fd, 0) == 0);
	FUZZ_ASSERT(pwrite(fd, data + 1, size - 1, 0) == (ssize_t)(size - 1));
	struct tracefile t;
	char err[512];
	int r = tracefile_load(path, fmt, &t, err, sizeof(err));
	if (r) {
		FUZZ_ASSERT(r < 0);
		FUZZ_ASSERT(!strncmp(err, path, strlen(path)));
		FUZZ_ASSERT(t.n == 0 && t.rec == NULL);
		return 0;
	}
	FUZZ_ASSERT(t.n > 0);
	uint64_t tmin = UINT64_MAX;
	for (size_t i = 0; i < t.n; i++) {
		const struct tracefile_rec *q = &t.rec[i];
		FUZZ_ASSERT(q->line >= 1);
		FUZZ_ASSERT(q->op <= TRACEFILE_TRIM);
		FUZZ_ASSERT(q->off + q->len >= q->off && q->off + q->len <= t.max_end);
		if (q->t_ns < tmin)
			tmin = q->t_ns;
	}
	FUZZ_ASSERT(tmin == 0);
	tracefile_free(&t);
	return 0;
}
