/* parity_bench: parity kernels against memcpy, side by side on the same buffers.
 *
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -I. bench/tools/parity_bench.c layout/parity.c \
 *       -pthread -o parity_bench && ./parity_bench [ms_per_kernel]
 *
 * GB/s counts the data bytes a kernel consumes (md's convention): n * chunk for
 * xor, ndata * chunk for gen and recover, one chunk for rmw; memcpy counts the
 * bytes copied. FSVOL_PARITY_ISA=portable measures the portable kernels.
 */
#include "layout/parity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (64 * 1024)
#define NBUF 20 /* up to 14 data + P + Q, spares for memcpy/rmw */
#define PB 16
#define QB 17

static uint8_t *buf[NBUF];
static double ms_per_kernel = 300;

enum kernel { K_MEMCPY, K_XOR, K_GEN, K_RMW, K_REC2 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_once(enum kernel k, unsigned n)
{
	static const unsigned lost[2] = { 1, 2 };
	void *blocks[NBUF];

	switch (k) {
	case K_MEMCPY:
		memcpy(buf[18], buf[0], CHUNK);
		break;
	case K_XOR:
		parity_xor(buf[PB], (const void *const *)buf, n, CHUNK);
		break;
	case K_GEN:
		parity_gen((const void *const *)buf, n, buf[PB], buf[QB], CHUNK);
		break;
	case K_RMW: /* applied twice in a row it toggles back: stripe stays valid */
		parity_rmw(buf[PB], buf[QB], buf[3], buf[19], 3, CHUNK);
		break;
	case K_REC2:
		for (unsigned j = 0; j < n; j++)
			blocks[j] = buf[j];
		blocks[n] = buf[PB];
		blocks[n + 1] = buf[QB];
		if (parity_recover(blocks, n, 2, lost, 2, CHUNK) != 0) {
			fprintf(stderr, "parity_bench: parity_recover failed\n");
			exit(1);
		}
		break;
	}
}

/* best of 3 runs of ms_per_kernel / 3 each; returns seconds per call */
static double measure(enum kernel k, unsigned n)
{
	double best = 1e9;

	run_once(k, n); /* warm caches and the one-time table setup */
	for (int r = 0; r < 3; r++) {
		double t0 = now(), t;
		unsigned long calls = 0;

		do {
			for (int i = 0; i < 64; i++)
				run_once(k, n);
			calls += 64;
			t = now() - t0;
		} while (t < ms_per_kernel / 3e3);
		if (t / (double)calls < best)
			best = t / (double)calls;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum kernel k;
		unsigned n;
		unsigned nbytes_chunks; /* data chunks consumed per call */
	} tab[] = {
		{ "memcpy", K_MEMCPY, 0, 1 },
		{ "xor n=3", K_XOR, 3, 3 },
		{ "xor n=7", K_XOR, 7, 7 },
		{ "gen P+Q ndata=4", K_GEN, 4, 4 },
		{ "gen P+Q ndata=14", K_GEN, 14, 14 },
		{ "rmw P+Q (1 chunk)", K_RMW, 0, 1 },
		{ "recover 2 data ndata=4", K_REC2, 4, 4 },
		{ "recover 2 data ndata=14", K_REC2, 14, 14 },
	};
	const char *isa = getenv("FSVOL_PARITY_ISA");
	double memcpy_gbs = 0;
	uint8_t *save1 = malloc(CHUNK), *save2 = malloc(CHUNK);

	if (argc > 1)
		ms_per_kernel = atof(argv[1]);
	if (ms_per_kernel <= 0 || !save1 || !save2) {
		fprintf(stderr, "usage: parity_bench [ms_per_kernel > 0]\n");
		return 2;
	}
	/* allocate once, fill (pre-touch) with non-trivial data */
	srand(1);
	for (int i = 0; i < NBUF; i++) {
		if (posix_memalign((void **)&buf[i], 4096, CHUNK)) {
			fprintf(stderr, "parity_bench: out of memory\n");
			return 1;
		}
		for (size_t j = 0; j < CHUNK; j++)
			buf[i][j] = (uint8_t)rand();
	}

#if defined(__x86_64__) || defined(__i386__)
	const char *avx2 = __builtin_cpu_supports("avx2") ? "yes" : "no";
#else
	const char *avx2 = "n/a";
#endif
	printf("parity_bench: chunk %d KiB, %.0f ms per kernel, kernels %s, cpu avx2 %s\n",
	       CHUNK / 1024, ms_per_kernel, isa ? isa : "default", avx2);
	printf("%-26s %10s %10s %10s\n", "kernel", "us/call", "GB/s", "x memcpy");
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		double s, gbs;

		if (tab[i].k == K_REC2) { /* a consistent stripe to recover from */
			parity_gen((const void *const *)buf, tab[i].n, buf[PB], buf[QB], CHUNK);
			memcpy(save1, buf[1], CHUNK);
			memcpy(save2, buf[2], CHUNK);
		}
		s = measure(tab[i].k, tab[i].n);
		gbs = (double)tab[i].nbytes_chunks * CHUNK / s / 1e9;
		if (tab[i].k == K_MEMCPY)
			memcpy_gbs = gbs;
		if (tab[i].k == K_REC2 &&
		    (memcmp(save1, buf[1], CHUNK) != 0 || memcmp(save2, buf[2], CHUNK) != 0)) {
			fprintf(stderr, "parity_bench: recovery produced wrong data\n");
			return 1;
		}
		printf("%-26s %10.2f %10.2f %10.2f\n", tab[i].name, s * 1e6, gbs,
		       gbs / memcpy_gbs);
	}
	for (int i = 0; i < NBUF; i++)
		free(buf[i]);
	free(save1);
	free(save2);
	return 0;
}
