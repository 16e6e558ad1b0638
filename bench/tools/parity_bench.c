/* parity_bench: fsvol's parity and CRC32C kernels beside ISA-L's, in one run.
 *
 *   make build/bin/parity_bench && build/bin/parity_bench [ms_per_sample [rounds]]
 *
 * Every row runs its contenders in turn, round after round (alternated: a change
 * in the machine's load hits them all alike), each for ms_per_sample of this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time the thread waits preempted
 * is not counted), and prints the median of the rounds. GB/s counts the data a
 * kernel consumes (md's convention): n chunks for XOR, P+Q and recovery, one
 * chunk for rmw, the buffer for CRC32C. Columns: fsvol with the kernel set it
 * chooses on this CPU, ISA-L (built with libisal-dev), their ratio, then
 * fsvol's other kernel sets (forced). Recovered chunks are checked.
 */
#include "fsvol/util/crc32c.h"
#include "layout/parity.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_ISAL
#include <isa-l.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define CHUNK (64 * 1024)
#define NBUF 20 /* up to 8 data, P, Q, spares */
#define PB 16
#define QB 17
#define NEWB 18
#define MAXC 8 /* contenders per row */
#define MAXR 31 /* rounds */

static uint8_t *buf[NBUF];
static volatile uint32_t sink; /* keeps the CRC calls */
static double ms_per_sample = 30;
static int rounds = 5;

enum op { OP_MEMCPY, OP_XOR, OP_GEN, OP_REC2, OP_RMW, OP_CRC };

struct row {
	const char *name;
	enum op op;
	unsigned n;   /* data chunks (CRC: bytes) */
	size_t bytes; /* counted per call */
};

/* a contender: one of fsvol's kernel sets, or ISA-L (set NULL) */
struct who {
	const char *set;
};

#ifdef HAVE_ISAL
static unsigned char rec_tbl[2][32 * 8 * 2]; /* ISA-L decode tables for n = 4, 8 */

/* The two lost data chunks 1 and 2 as sums of the survivors (Anvin's closed
 * form, in ISA-L's own field arithmetic): the decode ISA-L's ec_encode_data runs. */
static void isal_rec_tables(unsigned n, unsigned char *tbl)
{
	const unsigned x = 1, y = 2;
	unsigned char gx = 1, gy, g = 1, coef[2 * 10], b, a;
	unsigned k = 0;

	for (unsigned j = 0; j < x; j++)
		gx = gf_mul(gx, 2);
	gy = gf_mul(gx, 2);
	b = gf_inv(gx ^ gy);
	a = gf_mul(gy, b);
	for (unsigned j = 0; j < n; j++, g = gf_mul(g, 2)) {
		if (j == x || j == y)
			continue;
		coef[k] = a ^ gf_mul(b, g);
		coef[n + k] = 1 ^ coef[k];
		k++;
	}
	coef[k] = a; /* P */
	coef[n + k] = 1 ^ a;
	coef[k + 1] = b; /* Q */
	coef[n + k + 1] = b;
	ec_init_tables((int)n, 2, coef, tbl);
}
#endif

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_fsvol(const struct row *r)
{
	static const unsigned lost[2] = { 1, 2 };
	void *blocks[NBUF];

	switch (r->op) {
	case OP_MEMCPY:
		memcpy(buf[NEWB + 1], buf[0], CHUNK);
		break;
	case OP_XOR:
		parity_xor(buf[PB], (const void *const *)buf, r->n, CHUNK);
		break;
	case OP_GEN:
		parity_gen((const void *const *)buf, r->n, buf[PB], buf[QB], CHUNK);
		break;
	case OP_REC2:
		memcpy(blocks, buf, r->n * sizeof(void *));
		blocks[r->n] = buf[PB];
		blocks[r->n + 1] = buf[QB];
		if (parity_recover(blocks, r->n, 2, lost, 2, CHUNK) != 0) {
			fprintf(stderr, "parity_bench: parity_recover failed\n");
			exit(1);
		}
		break;
	case OP_RMW: /* applied twice in a row it toggles back */
		parity_rmw(buf[PB], buf[QB], buf[3], buf[NEWB], 3, CHUNK);
		break;
	case OP_CRC:
		sink = crc32c(0, buf[0], r->n);
		break;
	}
}

/* false: ISA-L has no such kernel */
static bool run_isal(const struct row *r)
{
#ifdef HAVE_ISAL
	void *arr[NBUF];
	unsigned char *src[NBUF], *dst[2] = { buf[1], buf[2] };
	unsigned k = 0;

	switch (r->op) {
	case OP_XOR:
		memcpy(arr, buf, r->n * sizeof(void *));
		arr[r->n] = buf[PB];
		return xor_gen((int)r->n + 1, CHUNK, arr) == 0;
	case OP_GEN:
		memcpy(arr, buf, r->n * sizeof(void *));
		arr[r->n] = buf[PB];
		arr[r->n + 1] = buf[QB];
		return pq_gen((int)r->n + 2, CHUNK, arr) == 0;
	case OP_REC2:
		for (unsigned j = 0; j < r->n; j++)
			if (j != 1 && j != 2)
				src[k++] = buf[j];
		src[k++] = buf[PB];
		src[k] = buf[QB];
		ec_encode_data(CHUNK, (int)r->n, 2, rec_tbl[r->n == 8], src, dst);
		return true;
	case OP_CRC:
		sink = crc32_iscsi(buf[0], (int)r->n, 0xffffffffu);
		return true;
	default:
		return false;
	}
#else
	(void)r;
	return false;
#endif
}

/* ISA-L's assembly returns with the upper halves of the vector registers in
 * use (no vzeroupper): the SSE code that runs next (the portable set) then
 * pays for every instruction. Cleared after each of its samples. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx"))) static void upper_clear(void)
{
	if (__builtin_cpu_supports("avx"))
		_mm256_zeroupper();
}
#else
static void upper_clear(void)
{
}
#endif

/* GB/s over ms_per_sample of CPU time; 0: no such kernel */
static double sample(const struct row *r, const struct who *w)
{
	double t0, t;
	unsigned long calls = 0;

	if (w->set && (r->op == OP_CRC ? crc32c_isa_select(w->set) : parity_isa_select(w->set)))
		return 0;
	if (!w->set && !run_isal(r)) /* warms up too */
		return 0;
	if (w->set)
		run_fsvol(r);
	t0 = cpu_now();
	do {
		for (int i = 0; i < 16; i++) {
			if (w->set)
				run_fsvol(r);
			else
				run_isal(r);
		}
		calls += 16;
		t = cpu_now() - t0;
	} while (t < ms_per_sample / 1e3);
	if (!w->set)
		upper_clear();
	return (double)r->bytes * (double)calls / t / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the contenders: the default set first, ISA-L, the other sets the CPU runs */
static int contenders(bool crc, struct who *w)
{
	const char *def = crc ? crc32c_isa() : parity_isa(), *name;
	int n = 0;

	w[n++].set = def;
#ifdef HAVE_ISAL
	w[n++].set = NULL;
#endif
	for (unsigned i = 0; n < MAXC && (name = crc ? crc32c_isa_name(i) : parity_isa_name(i)); i++)
		if (strcmp(name, def) != 0 &&
		    (crc ? crc32c_isa_usable(name) : parity_isa_usable(name)) == 1)
			w[n++].set = name;
	return n;
}

static void header(bool crc, const struct who *w, int nw)
{
	printf("%-28s", crc ? "crc32c" : "parity, 64 KiB chunks");
	for (int c = 0; c < nw; c++) {
		printf(" %11s", w[c].set ? w[c].set : "ISA-L");
		if (!w[c].set)
			printf(" %7s", "fsvol/");
	}
	printf("\n");
}

/* the stripe for a recovery row: P and Q of its n chunks, chunks 1 and 2 saved */
static void rec_setup(const struct row *r, uint8_t *save1, uint8_t *save2)
{
	parity_gen((const void *const *)buf, r->n, buf[PB], buf[QB], CHUNK);
	memcpy(save1, buf[1], CHUNK);
	memcpy(save2, buf[2], CHUNK);
}

static int bench_rows(const struct row *rows, size_t nrows, bool crc)
{
	struct who w[MAXC];
	int nw = contenders(crc, w);
	uint8_t *save1 = malloc(CHUNK), *save2 = malloc(CHUNK);
	const char *def = crc ? crc32c_isa() : parity_isa();

	if (!save1 || !save2)
		return 1;
	header(crc, w, nw);
	for (size_t i = 0; i < nrows; i++) {
		double v[MAXC][MAXR], med[MAXC];

		if (rows[i].op == OP_REC2)
			rec_setup(&rows[i], save1, save2);
		for (int k = 0; k < rounds; k++)
			for (int c = 0; c < nw; c++)
				v[c][k] = sample(&rows[i], &w[c]);
		printf("%-28s", rows[i].name);
		for (int c = 0; c < nw; c++) {
			qsort(v[c], (size_t)rounds, sizeof(double), cmp_double);
			med[c] = v[c][rounds / 2];
			if (med[c] > 0)
				printf(" %11.1f", med[c]);
			else
				printf(" %11s", "-");
			if (!w[c].set && med[c] > 0)
				printf(" %7.2f", med[0] / med[c]);
			else if (!w[c].set)
				printf(" %7s", "-");
		}
		printf("\n");
		if (rows[i].op == OP_REC2 &&
		    (memcmp(save1, buf[1], CHUNK) != 0 || memcmp(save2, buf[2], CHUNK) != 0)) {
			fprintf(stderr, "parity_bench: %s: recovery produced wrong data\n",
				rows[i].name);
			return 1;
		}
	}
	if (crc)
		crc32c_isa_select(def);
	else
		parity_isa_select(def);
	free(save1);
	free(save2);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct row prows[] = {
		{ "memcpy (one chunk)", OP_MEMCPY, 0, CHUNK },
		{ "raid5 xor 4+1", OP_XOR, 4, 4 * CHUNK },
		{ "raid5 xor 8+1", OP_XOR, 8, 8 * CHUNK },
		{ "raid6 P+Q 4+2", OP_GEN, 4, 4 * CHUNK },
		{ "raid6 P+Q 8+2", OP_GEN, 8, 8 * CHUNK },
		{ "raid6 2-data recovery 4+2", OP_REC2, 4, 4 * CHUNK },
		{ "raid6 2-data recovery 8+2", OP_REC2, 8, 8 * CHUNK },
		{ "raid6 rmw P+Q (one chunk)", OP_RMW, 0, CHUNK },
	};
	static const struct row crows[] = {
		{ "crc32c 4 KiB", OP_CRC, 4096, 4096 },
		{ "crc32c 64 KiB", OP_CRC, CHUNK, CHUNK },
	};

	if (argc > 1)
		ms_per_sample = atof(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (argc > 3 || ms_per_sample <= 0 || rounds < 1 || rounds > MAXR) {
		fprintf(stderr, "usage: parity_bench [ms_per_sample > 0 [rounds 1..%d]]\n", MAXR);
		return 2;
	}
	srand(1);
	for (int i = 0; i < NBUF; i++) {
		if (posix_memalign((void **)&buf[i], 4096, CHUNK)) {
			fprintf(stderr, "parity_bench: out of memory\n");
			return 1;
		}
		for (size_t j = 0; j < CHUNK; j++) /* pre-touched, not trivial */
			buf[i][j] = (uint8_t)rand();
	}
#ifdef HAVE_ISAL
	isal_rec_tables(4, rec_tbl[0]);
	isal_rec_tables(8, rec_tbl[1]);
	printf("parity_bench: GB/s of data per CPU second, median of %d alternated rounds of %.0f ms;"
	       " fsvol/ = fsvol (%s, %s) / ISA-L %d.%d\n",
	       rounds, ms_per_sample, parity_isa(), crc32c_isa(), ISAL_MAJOR_VERSION,
	       ISAL_MINOR_VERSION);
#else
	printf("parity_bench: GB/s of data per CPU second, median of %d alternated rounds of %.0f ms;"
	       " built without ISA-L (libisal-dev): fsvol's kernel sets only\n",
	       rounds, ms_per_sample);
#endif
	if (bench_rows(prows, sizeof(prows) / sizeof(prows[0]), false) ||
	    bench_rows(crows, sizeof(crows) / sizeof(crows[0]), true))
		return 1;
	for (int i = 0; i < NBUF; i++)
		free(buf[i]);
	return 0;
}
