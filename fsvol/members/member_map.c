/* member_map: see member_map.h. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fsvol/members/member_map.h"

/* The bitmap costs a bit per page: 2 MiB for the largest member mapped. */
#define MAP_MAX_BYTES (64ull << 30)

struct member_map {
	uint8_t *base;
	uint64_t size;
	unsigned shift;            /* log2 of the page size */
	atomic_int broken;         /* a SIGBUS seen: read as before from now on */
	_Atomic uint64_t *data;    /* a bit per page: it holds data */
};

/* ---- the SIGBUS guard ---- */

static __thread sigjmp_buf *tl_guard; /* set while this thread copies from a mapping */
static struct sigaction map_old_bus;
static pthread_once_t map_once = PTHREAD_ONCE_INIT;

static void map_on_bus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = tl_guard;
	if (j) {
		tl_guard = NULL;
		siglongjmp(*j, 1); /* SA_NODEFER: the signal is not left blocked */
	}
	/* not a guarded copy: as before this module */
	if (map_old_bus.sa_flags & SA_SIGINFO) {
		if (map_old_bus.sa_sigaction) {
			map_old_bus.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (map_old_bus.sa_handler != SIG_DFL && map_old_bus.sa_handler != SIG_IGN) {
		map_old_bus.sa_handler(sig);
		return;
	}
	/* the default: the faulting access runs again and the signal kills */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
}

static void map_install(void)
{
	struct sigaction sa = { .sa_sigaction = map_on_bus, .sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &map_old_bus);
}

/* ---- the bitmap ---- */

/* The bits of pages [p, last] in p's word (*w): one word's share of a range. */
static uint64_t word_mask(uint64_t p, uint64_t last, uint64_t *w)
{
	*w = p >> 6;
	uint64_t lo = p & 63, hi = (last >> 6) == *w ? (last & 63) : 63;
	return (hi == 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);
}

/* Set (or clear) the bits of the pages [first, last]. */
static void bits_change(struct member_map *mm, uint64_t first, uint64_t last, int set)
{
	for (uint64_t p = first, w; p <= last; p = (w + 1) << 6) {
		uint64_t mask = word_mask(p, last, &w);
		if (set)
			atomic_fetch_or_explicit(&mm->data[w], mask, memory_order_release);
		else
			atomic_fetch_and_explicit(&mm->data[w], ~mask, memory_order_release);
	}
}

static int bits_all(struct member_map *mm, uint64_t first, uint64_t last)
{
	for (uint64_t p = first, w; p <= last; p = (w + 1) << 6) {
		uint64_t mask = word_mask(p, last, &w);
		if ((atomic_load_explicit(&mm->data[w], memory_order_acquire) & mask) != mask)
			return 0;
	}
	return 1;
}

/* The pages that hold data now (tmpfs allocates whole pages). */
static void bits_scan(struct member_map *mm, int fd)
{
	off_t at = 0;
	while ((uint64_t)at < mm->size) {
		off_t d = lseek(fd, at, SEEK_DATA);
		if (d < 0)
			return; /* ENXIO: no data after at */
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || (uint64_t)h > mm->size)
			h = (off_t)mm->size;
		if (h > d)
			bits_change(mm, (uint64_t)d >> mm->shift, ((uint64_t)h - 1) >> mm->shift, 1);
		at = h;
	}
}

/* ---- the member_map calls ---- */

void member_map_open(struct member_map **out, int fd, uint64_t size)
{
	*out = NULL;
	long ps = sysconf(_SC_PAGESIZE);
	if (!size || size > MAP_MAX_BYTES || ps <= 0 || (ps & (ps - 1)))
		return;
	struct member_map *mm = calloc(1, sizeof(*mm));
	if (!mm)
		return;
	mm->shift = (unsigned)__builtin_ctzl((unsigned long)ps);
	mm->size = size;
	uint64_t pages = (size + (uint64_t)ps - 1) >> mm->shift;
	mm->data = calloc((pages + 63) / 64, sizeof(*mm->data));
	void *m = mm->data ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (m == MAP_FAILED) {
		free(mm->data);
		free(mm);
		return;
	}
	mm->base = m;
	bits_scan(mm, fd);
	pthread_once(&map_once, map_install);
	*out = mm;
}

void member_map_close(struct member_map *mm)
{
	if (!mm)
		return;
	munmap(mm->base, mm->size);
	free(mm->data);
	free(mm);
}

/* Copy between iov and the mapping at off (write: into it); see member_map_read. */
static int map_copy(struct member_map *mm, const struct iovec *iov, unsigned niov, uint64_t off, uint64_t len,
		    int write)
{
	if (!mm || !len || off >= mm->size || len > mm->size - off ||
	    atomic_load_explicit(&mm->broken, memory_order_relaxed))
		return 0;
	if (!bits_all(mm, off >> mm->shift, (off + len - 1) >> mm->shift))
		return 0;
	sigjmp_buf guard;
	if (sigsetjmp(guard, 0)) {
		/* the file shrank under the mapping (SIGBUS) */
		atomic_store(&mm->broken, 1);
		return -EIO;
	}
	tl_guard = &guard;
	uint8_t *at = mm->base + off;
	for (unsigned i = 0; i < niov; i++) {
		if (write)
			memcpy(at, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, at, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	tl_guard = NULL;
	return 1;
}

int member_map_read(struct member_map *mm, const struct iovec *iov, unsigned niov, uint64_t off, uint64_t len)
{
	return map_copy(mm, iov, niov, off, len, 0);
}

int member_map_write(struct member_map *mm, const struct iovec *iov, unsigned niov, uint64_t off, uint64_t len)
{
	return map_copy(mm, iov, niov, off, len, 1);
}

void member_map_written(struct member_map *mm, uint64_t off, uint64_t len)
{
	if (!mm || !len || off >= mm->size)
		return;
	if (len > mm->size - off)
		len = mm->size - off;
	bits_change(mm, off >> mm->shift, (off + len - 1) >> mm->shift, 1);
}

void member_map_punched(struct member_map *mm, uint64_t off, uint64_t len)
{
	if (!mm || !len || off >= mm->size)
		return;
	if (len > mm->size - off)
		len = mm->size - off;
	/* pages only partly punched keep data (the kernel zeroes their part) */
	uint64_t ps = 1ull << mm->shift;
	uint64_t first = (off + ps - 1) >> mm->shift, end = (off + len) >> mm->shift;
	if (off + len == mm->size)
		end = (mm->size + ps - 1) >> mm->shift;
	if (end > first)
		bits_change(mm, first, end - 1, 0);
}
