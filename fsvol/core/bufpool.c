/* bufpool: aligned buffers for requests, by power-of-two class (4 KiB up).
 *
 * Fresh memory costs 12-16 us per 4 KiB page here (DESIGN.md), so a buffer
 * is touched once when made and kept for reuse; but memory follows the load
 * down. The pool keeps idle as many bytes as were in use at the most in this
 * window of BUFPOOL_WINDOW_MS or the one before (at least BUFPOOL_IDLE_MIN, at
 * most BUFPOOL_IDLE_MAX): a steady load finds its buffers again, and once the
 * load has gone, bufpool_shrink gives back all but BUFPOOL_IDLE_MIN within two
 * windows. Buffers of BUFPOOL_MAP_MIN and more are mappings of their own,
 * unmapped when given back: glibc's malloc would keep them (its mmap
 * threshold grows to the size of the first large block freed, and what its
 * heaps free inside stays resident), and a burst of clients that left 1 MiB
 * replies unread kept the daemon's memory for good (issue 30 A7).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fsvol/core/bufpool.h"

#define ENG_ALIGN 4096u

#define ENG_POOL_CLASSES 16               /* 4 KiB .. 128 MiB */
#define BUFPOOL_IDLE_MIN ((size_t)32 << 20)  /* idle bytes always kept */
#define BUFPOOL_IDLE_MAX ((size_t)256 << 20) /* idle bytes kept at the most */
#define BUFPOOL_WINDOW_MS 1000u

struct pool_buf {
	struct pool_buf *next;
};

static struct {
	pthread_mutex_t lock;
	struct pool_buf *free[ENG_POOL_CLASSES];
	size_t idle;             /* bytes waiting in free[] */
	size_t used;             /* bytes of the classes given out, not back yet */
	size_t peak, prev;       /* the most used in this window, in the one before */
	uint64_t window;         /* this window's start, ms */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned pool_class(size_t len, size_t *cap)
{
	unsigned c = 0;
	size_t s = ENG_ALIGN;
	while (s < len && c + 1 < ENG_POOL_CLASSES) {
		s <<= 1;
		c++;
	}
	*cap = s < len ? len : s;
	return s < len ? ENG_POOL_CLASSES : c;
}

/* Made touched: a page fault now, none on the I/O path. */
static void *buf_new(size_t cap)
{
	void *p = NULL;
	if (cap >= BUFPOOL_MAP_MIN) {
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	if (posix_memalign(&p, ENG_ALIGN, cap))
		return NULL;
	memset(p, 0, cap);
	return p;
}

static void buf_free(void *p, size_t cap)
{
	if (cap >= BUFPOOL_MAP_MIN)
		munmap(p, cap);
	else
		free(p);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Under the lock: a new window once this one is over. */
static void pool_roll(void)
{
	uint64_t now = now_ms();
	if (now - pool.window < BUFPOOL_WINDOW_MS)
		return;
	pool.prev = now - pool.window < 2 * BUFPOOL_WINDOW_MS ? pool.peak : pool.used;
	pool.peak = pool.used;
	pool.window = now;
}

/* Under the lock: the idle bytes kept now. */
static size_t pool_idle_cap(void)
{
	size_t cap = pool.peak > pool.prev ? pool.peak : pool.prev;
	cap = cap < BUFPOOL_IDLE_MIN ? BUFPOOL_IDLE_MIN : cap;
	return cap > BUFPOOL_IDLE_MAX ? BUFPOOL_IDLE_MAX : cap;
}

void *bufpool_get(size_t len, size_t *cap)
{
	unsigned c = pool_class(len ? len : 1, cap);
	struct pool_buf *b = NULL;
	if (c < ENG_POOL_CLASSES) {
		pthread_mutex_lock(&pool.lock);
		if ((b = pool.free[c])) {
			pool.free[c] = b->next;
			pool.idle -= *cap;
		}
		pool.used += *cap;
		if (pool.used > pool.peak)
			pool.peak = pool.used;
		pthread_mutex_unlock(&pool.lock);
		if (b)
			return b;
	}
	void *p = buf_new(*cap);
	if (!p && c < ENG_POOL_CLASSES) {
		pthread_mutex_lock(&pool.lock);
		pool.used -= *cap;
		pthread_mutex_unlock(&pool.lock);
	}
	return p;
}

void bufpool_put(void *p, size_t cap)
{
	size_t c2;
	if (!p)
		return;
	unsigned c = pool_class(cap, &c2);
	if (c < ENG_POOL_CLASSES && c2 == cap) {
		pthread_mutex_lock(&pool.lock);
		pool.used -= cap;
		if (pool.idle + cap > pool_idle_cap())
			pool_roll();
		if (pool.idle + cap <= pool_idle_cap()) {
			struct pool_buf *b = p;
			b->next = pool.free[c];
			pool.free[c] = b;
			pool.idle += cap;
			p = NULL;
		}
		pthread_mutex_unlock(&pool.lock);
	}
	if (p)
		buf_free(p, cap);
}

void bufpool_shrink(void)
{
	struct pool_buf *out[ENG_POOL_CLASSES] = { 0 };
	pthread_mutex_lock(&pool.lock);
	pool_roll();
	size_t keep = pool_idle_cap();
	for (unsigned c = ENG_POOL_CLASSES; c-- > 0 && pool.idle > keep;)
		while (pool.free[c] && pool.idle > keep) {
			struct pool_buf *b = pool.free[c];
			pool.free[c] = b->next;
			pool.idle -= (size_t)ENG_ALIGN << c;
			b->next = out[c];
			out[c] = b;
		}
	pthread_mutex_unlock(&pool.lock);
	for (unsigned c = 0; c < ENG_POOL_CLASSES; c++)
		while (out[c]) {
			struct pool_buf *b = out[c];
			out[c] = b->next;
			buf_free(b, (size_t)ENG_ALIGN << c);
		}
}
