/* bufpool: aligned buffers for requests, by power-of-two class (4 KiB up).
 *
 * Fresh memory costs 12-16 us per 4 KiB page here (DESIGN.md), so a buffer
 * is touched once when made and kept for reuse; but memory follows the load
 * down: at most ENG_POOL_IDLE bytes wait idle, the rest goes back at once.
 * Buffers of BUFPOOL_MAP_MIN and more are mappings of their own, unmapped
 * when given back: glibc's malloc would keep them (its mmap threshold grows
 * to the size of the first large block freed, and what its heaps free inside
 * stays resident), and a burst of clients that left 1 MiB replies unread
 * kept the daemon's memory for good (issue 30 A7).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fsvol/core/bufpool.h"

#define ENG_ALIGN 4096u

#define ENG_POOL_CLASSES 16            /* 4 KiB .. 128 MiB */
#define ENG_POOL_IDLE (32u << 20)      /* idle bytes kept over every class */

struct pool_buf {
	struct pool_buf *next;
};

static struct {
	pthread_mutex_t lock;
	struct pool_buf *free[ENG_POOL_CLASSES];
	size_t idle;
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

void *bufpool_get(size_t len, size_t *cap)
{
	unsigned c = pool_class(len ? len : 1, cap);
	if (c < ENG_POOL_CLASSES) {
		pthread_mutex_lock(&pool.lock);
		struct pool_buf *b = pool.free[c];
		if (b) {
			pool.free[c] = b->next;
			pool.idle -= *cap;
		}
		pthread_mutex_unlock(&pool.lock);
		if (b)
			return b;
	}
	return buf_new(*cap);
}

void bufpool_put(void *p, size_t cap)
{
	size_t c2;
	if (!p)
		return;
	unsigned c = pool_class(cap, &c2);
	if (c < ENG_POOL_CLASSES && c2 == cap) {
		pthread_mutex_lock(&pool.lock);
		if (pool.idle + cap <= ENG_POOL_IDLE) {
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
