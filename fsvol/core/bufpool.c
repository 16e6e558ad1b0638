/* bufpool: aligned buffers for requests, by power-of-two class (4 KiB up).
 *
 * Fresh memory costs 12-16 us per 4 KiB page here (DESIGN.md), so a buffer
 * is touched once when made and kept for reuse; but memory follows the load
 * down: at most ENG_POOL_IDLE bytes wait idle, the rest goes back at once
 * (buffers of 128 KiB and more are their own mappings and unmap on free).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
	void *p = NULL;
	if (posix_memalign(&p, ENG_ALIGN, *cap))
		return NULL;
	memset(p, 0, *cap); /* touch it now, once */
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
		if (pool.idle + cap <= ENG_POOL_IDLE) {
			struct pool_buf *b = p;
			b->next = pool.free[c];
			pool.free[c] = b;
			pool.idle += cap;
			p = NULL;
		}
		pthread_mutex_unlock(&pool.lock);
	}
	free(p);
}
