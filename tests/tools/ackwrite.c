/* fsvol-ackwrite: a writer that records which writes were acknowledged, and
 * the checker that holds a volume to them (the crash tests' oracle).
 *
 *   fsvol-ackwrite write [-j THREADS] [-b BLOCK] [-s SEED] [-t SEC] [-n MAX] [-f N] [-F] [-L BYTES] VOLUME LOG
 *   fsvol-ackwrite verify [-b BLOCK] [-s SEED] [-L BYTES] VOLUME LOG
 *
 * -L: only the first BYTES of VOLUME (another tool owns the rest; give the
 * same -L to verify).
 *
 * The LOG's first record "S seed 0" fixes the seed for later runs (-s only
 * seeds a new LOG).
 * write: THREADS threads (default 4) each own the blocks k with k mod THREADS
 * == thread and rewrite random ones of them, one at a time, with O_DIRECT
 * pwrite + fdatasync. Before a write the LOG gets "I k g" (issued), after its
 * fdatasync returned "A k g" (acknowledged); g is the block's generation, one
 * more than the last issued in LOG (so several runs append to one LOG). A
 * thread stops at its first error (the daemon was killed: ENOTCONN), after
 * -n writes, after -t seconds (default 60), or on SIGTERM/SIGINT (the write
 * under way is finished and logged first; exit 0).
 * -F: each thread first writes every one of its blocks once, in order, then
 * goes on at random: the whole volume holds known data (a rebuild that skips a
 * range then shows as lost blocks, where zeros would pass for never written).
 * -f N: a thread's fdatasync follows every N writes (default 1): each pwrite
 * that returned is logged "W k g" (written, not yet flushed), and only after
 * the fdatasync "A k g" for each write of the batch (the power-cut test:
 * what a volatile cache may lose). verify then also counts "lost": blocks
 * whose newest completed write (W) is not what they hold (the cache dropped
 * it).
 * Every 4 KiB sector of a block carries a header (magic, seed, block, g,
 * sector) and a pattern derived from it, so a torn write is seen sector by
 * sector.
 * verify: every sector of every block must hold the last acknowledged
 * generation of its block, or one issued after it (not acknowledged: may or
 * may not have landed); a block never acknowledged may also still be zero.
 * Prints "blocks N, written W, acknowledged A, mismatches M" (and ", in flight F"
 * when F of them are in blocks whose last issued write was never
 * acknowledged: the writes a crash interrupted); exit 0 when M is
 * 0, 1 on a mismatch (the first 10 are described), 2 on a usage or I/O error.
 * Build: make build/bin/fsvol-ackwrite */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SECTOR 4096u
#define MAGIC 0x4b43414c4f565346ull /* "FSVOLACK" */
#define MAX_THREADS 64

struct state {
	const char *volume;
	int fd, logfd;
	uint64_t block, nblocks, seed, max_writes;
	unsigned threads;
	double seconds;
	uint32_t *acked, *issued; /* per block: last acknowledged / last issued generation */
	uint32_t *written;        /* per block: last written, not yet flushed (-f) */
	unsigned flush_every;
	int fill; /* -F */
};

static volatile sig_atomic_t stop_asked; /* SIGTERM/SIGINT: stop after the write under way */

/* The signals stay blocked in the writers (a FUSE write they interrupt could
 * fail with EINTR, leaving its fate unknown); this thread alone takes them. */
static void *stopper(void *arg)
{
	int sig;

	if (!sigwait(arg, &sig))
		stop_asked = 1;
	return NULL;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("fsvol-ackwrite: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The content of sector s of block k at generation g. */
static void fill_sector(uint8_t *p, uint64_t seed, uint64_t k, uint32_t g, unsigned s)
{
	uint64_t h[5] = { MAGIC, seed, k, g, s };
	uint64_t x = mix(seed ^ mix(k ^ mix(((uint64_t)g << 20) ^ s)));

	memcpy(p, h, sizeof(h));
	for (unsigned i = sizeof(h); i < SECTOR; i += 8) {
		x = mix(x + 0x9e3779b97f4a7c15ull);
		memcpy(p + i, &x, 8);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void log_line(struct state *st, char what, uint64_t k, uint32_t g)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu32 "\n", what, k, g);

	/* one write per record on an O_APPEND file: records never interleave */
	if (write(st->logfd, line, (size_t)n) != n)
		die("writing the log: %s", strerror(errno));
}

/* Reads LOG (if any) into acked[] / issued[]. */
static void load_log(struct state *st, const char *path)
{
	FILE *f = fopen(path, "r");
	char what;
	uint64_t k;
	uint32_t g;
	unsigned long line = 0;

	if (!f) {
		if (errno == ENOENT)
			return;
		die("%s: %s", path, strerror(errno));
	}
	while (fscanf(f, " %c %" SCNu64 " %" SCNu32, &what, &k, &g) == 3) {
		line++;
		if (what == 'S' && line == 1) { /* the seed the log was started with */
			st->seed = k;
			continue;
		}
		if (k >= st->nblocks || (what != 'I' && what != 'A' && what != 'W'))
			die("%s: record %lu: bad record '%c %" PRIu64 " %" PRIu32 "'", path, line, what, k, g);
		if (what == 'I' && g > st->issued[k])
			st->issued[k] = g;
		if (what == 'A' && g > st->acked[k])
			st->acked[k] = g;
		if (what == 'W' && g > st->written[k])
			st->written[k] = g;
	}
	if (!feof(f))
		die("%s: unreadable after record %lu", path, line);
	fclose(f);
}

struct worker {
	struct state *st;
	unsigned id;
	uint64_t acked, rng, filled;
	int err;
	pthread_t th;
};

static void *writer(void *arg)
{
	struct worker *w = arg;
	struct state *st = w->st;
	uint64_t mine = (st->nblocks - w->id + st->threads - 1) / st->threads;
	double end = now() + st->seconds;
	uint8_t *buf;

	if (!mine || posix_memalign((void **)&buf, SECTOR, st->block))
		return NULL;
	struct { uint64_t k; uint32_t g; } batch[256];
	unsigned nb = 0;
	while (w->acked + nb < st->max_writes && now() < end && !stop_asked) {
		uint64_t k;
		uint32_t g;

		if (st->fill && w->filled < mine) {
			k = w->id + w->filled++ * st->threads;
		} else {
			w->rng = mix(w->rng + 1);
			k = w->id + (w->rng % mine) * st->threads;
		}
		g = ++st->issued[k]; /* this thread alone touches block k */
		for (unsigned s = 0; s < st->block / SECTOR; s++)
			fill_sector(buf + (size_t)s * SECTOR, st->seed, k, g, s);
		log_line(st, 'I', k, g);
		ssize_t r = pwrite(st->fd, buf, st->block, (off_t)(k * st->block));
		if (r != (ssize_t)st->block) {
			w->err = r < 0 ? errno : EIO;
			break;
		}
		if (st->flush_every > 1)
			log_line(st, 'W', k, g);
		batch[nb].k = k;
		batch[nb++].g = g;
		if (nb < st->flush_every && w->acked + nb < st->max_writes && now() < end && !stop_asked)
			continue;
		if (fdatasync(st->fd) < 0) {
			w->err = errno;
			break;
		}
		for (unsigned i = 0; i < nb; i++)
			log_line(st, 'A', batch[i].k, batch[i].g);
		w->acked += nb;
		nb = 0;
	}
	free(buf);
	return NULL;
}

static int verify(struct state *st)
{
	uint8_t *buf, want[SECTOR];
	uint64_t written = 0, acked = 0, bad = 0, lost = 0, unflushed = 0, inflight = 0;

	if (posix_memalign((void **)&buf, SECTOR, st->block))
		die("out of memory");
	for (uint64_t k = 0; k < st->nblocks; k++) {
		written += st->issued[k] != 0;
		acked += st->acked[k] != 0;
		ssize_t r = pread(st->fd, buf, st->block, (off_t)(k * st->block));
		if (r != (ssize_t)st->block)
			die("%s: reading block %" PRIu64 ": %s", st->volume, k, r < 0 ? strerror(errno) : "short read");
		if (st->written[k] > st->acked[k]) { /* a completed write no flush covered */
			uint64_t h[5];
			memcpy(h, buf, sizeof(h));
			unflushed++;
			lost += h[0] != MAGIC || h[3] < st->written[k];
		}
		for (unsigned s = 0; s < st->block / SECTOR; s++) {
			const uint8_t *p = buf + (size_t)s * SECTOR;
			uint64_t h[5];
			const char *why = NULL;

			memcpy(h, p, sizeof(h));
			if (h[0] == 0 && !memcmp(p, p + 1, SECTOR - 1)) {
				if (st->acked[k])
					why = "zero";
			} else if (h[0] != MAGIC || h[1] != st->seed || h[2] != k || h[4] != s || h[3] > UINT32_MAX) {
				why = "foreign content";
			} else {
				uint32_t g = (uint32_t)h[3];
				fill_sector(want, st->seed, k, g, s);
				if (memcmp(p, want, SECTOR))
					why = "corrupt sector";
				else if (g != st->acked[k] && !(g > st->acked[k] && g <= st->issued[k]))
					why = g < st->acked[k] ? "older than acknowledged" : "never issued";
			}
			/* a block with a write issued and never acknowledged was in
			 * flight at the end: what a write hole may tear is elsewhere */
			if (why && st->issued[k] > st->acked[k])
				inflight++;
			if (why && bad++ < 10)
				fprintf(stderr, "fsvol-ackwrite: block %" PRIu64 " sector %u: %s (generation %" PRIu64
					", acknowledged %" PRIu32 ", issued up to %" PRIu32 ")\n", k, s, why,
					h[0] == MAGIC ? h[3] : 0, st->acked[k], st->issued[k]);
		}
	}
	free(buf);
	printf("blocks %" PRIu64 ", written %" PRIu64 ", acknowledged %" PRIu64 ", mismatches %" PRIu64, st->nblocks,
	       written, acked, bad);
	if (unflushed)
		printf(", unflushed %" PRIu64 ", lost %" PRIu64, unflushed, lost);
	if (inflight)
		printf(", in flight %" PRIu64, inflight);
	printf("\n");
	return bad ? 1 : 0;
}

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	if (end == s)
		die("%s '%s': expected a number", what, s);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M')
		v <<= 20, end++;
	if (*end)
		die("%s '%s': expected a number (K or M allowed)", what, s);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: fsvol-ackwrite write [-j THREADS] [-b BLOCK] [-s SEED] [-t SEC] [-n MAX] [-f N] [-F] [-L BYTES] VOLUME LOG\n"
			"       fsvol-ackwrite verify [-b BLOCK] [-s SEED] [-L BYTES] VOLUME LOG\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct state st = { .block = 12288, .seed = 1, .max_writes = UINT64_MAX, .threads = 4, .seconds = 60,
			    .flush_every = 1 };
	struct worker w[MAX_THREADS];
	struct stat sb;
	int wr, opt, rc = 0;
	uint64_t size;

	if (argc < 2)
		usage();
	wr = !strcmp(argv[1], "write");
	if (!wr && strcmp(argv[1], "verify"))
		usage();
	optind = 2;
	uint64_t limit = 0;
	while ((opt = getopt(argc, argv, "j:b:s:t:n:f:FL:")) != -1) {
		switch (opt) {
		case 'j': st.threads = (unsigned)parse_size(optarg, "-j"); break;
		case 'b': st.block = parse_size(optarg, "-b"); break;
		case 's': st.seed = parse_size(optarg, "-s"); break;
		case 't': st.seconds = (double)parse_size(optarg, "-t"); break;
		case 'n': st.max_writes = parse_size(optarg, "-n"); break;
		case 'f': st.flush_every = (unsigned)parse_size(optarg, "-f"); break;
		case 'F': st.fill = 1; break;
		case 'L': limit = parse_size(optarg, "-L"); break;
		default: usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (!st.block || st.block % SECTOR || st.block > (64u << 20))
		die("-b %" PRIu64 ": must be a multiple of 4096 up to 64M", st.block);
	if (!st.flush_every || st.flush_every > 256)
		die("-f %u: must be 1..256", st.flush_every);
	if (!st.threads || st.threads > MAX_THREADS)
		die("-j %u: must be 1..%d", st.threads, MAX_THREADS);
	st.volume = argv[optind];
	if ((st.fd = open(st.volume, (wr ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC)) < 0 || fstat(st.fd, &sb) < 0)
		die("%s: %s", st.volume, strerror(errno));
	size = (uint64_t)sb.st_size;
	if (limit && limit < size)
		size = limit;
	st.nblocks = size / st.block;
	if (!st.nblocks)
		die("%s: smaller than one block", st.volume);
	st.acked = calloc(st.nblocks, sizeof(*st.acked));
	st.issued = calloc(st.nblocks, sizeof(*st.issued));
	st.written = calloc(st.nblocks, sizeof(*st.written));
	if (!st.acked || !st.issued || !st.written)
		die("out of memory");
	load_log(&st, argv[optind + 1]);
	if (!wr) {
		rc = verify(&st);
		free(st.acked);
		free(st.issued);
		free(st.written);
		close(st.fd);
		return rc;
	}

	if ((st.logfd = open(argv[optind + 1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0)
		die("%s: %s", argv[optind + 1], strerror(errno));
	if (lseek(st.logfd, 0, SEEK_END) == 0)
		log_line(&st, 'S', st.seed, 0);
	static sigset_t stop_set;
	pthread_t stop_th;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &stop_set, NULL) || pthread_create(&stop_th, NULL, stopper, &stop_set))
		die("cannot set up the stop signals");
	for (unsigned i = 0; i < st.threads; i++) {
		w[i] = (struct worker){ .st = &st, .id = i, .rng = mix(st.seed * 1000003u + i + (uint64_t)getpid()) };
		if (pthread_create(&w[i].th, NULL, writer, &w[i]))
			die("cannot start a thread");
	}
	uint64_t total = 0;
	for (unsigned i = 0; i < st.threads; i++) {
		pthread_join(w[i].th, NULL);
		total += w[i].acked;
		if (w[i].err && !rc)
			rc = w[i].err;
	}
	printf("acknowledged %" PRIu64 " writes; %s\n", total,
	       rc ? strerror(rc) : stop_asked ? "stopped by a signal" : "stopped at the limit");
	free(st.acked);
	free(st.issued);
	free(st.written);
	close(st.logfd);
	close(st.fd);
	return 0;
}
