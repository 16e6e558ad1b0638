/* fuzz_bench: fsvol-bench's command line (bench/flags.c and the option table
 * in bench/opts.c). The input is split at NUL bytes into arguments. */
#include <errno.h>

#include "bench/bench.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bench_opts o;
	char *buf = malloc(size + 1), *argv[FUZZ_MAX_ARGS + 2], err[600];
	int argc = 0;
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = "fsvol-bench";
	for (size_t i = 0; i < size && argc <= FUZZ_MAX_ARGS;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	bench_opts_default(&o);
	int r = bench_parse(&o, argc, argv, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == 1 || r < 0);
	if (r < 0)
		FUZZ_ASSERT(err[0] != 0); /* every refusal names the flag */
	bench_opts_free(&o);
	free(buf);
	return 0;
}
