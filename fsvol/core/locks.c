/* locks: hashed stripe (parity) or 1 MiB region locks, shared or exclusive.
 *
 * A request takes its buckets in ascending order, so no two requests wait
 * on each other crosswise. One it cannot take yet queues the request on that
 * bucket (no thread waits); whoever frees the bucket kicks its waiters, which
 * resume taking buckets where they stopped. A new arrival queues behind
 * waiters already there, so writers are not starved by a stream of readers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/eng_int.h"

struct eng_bucket {
	unsigned readers;
	int writer;
	struct eng_req *wait_head, *wait_tail;
};

struct eng_locktab {
	void (*kick)(struct eng_req *rq); /* the engine's: a waiter got its buckets */
	pthread_mutex_t lock;
	struct eng_bucket b[ENG_LOCKS];
};

int eng_locks_create(struct eng_locktab **out, void (*kick)(struct eng_req *rq))
{
	struct eng_locktab *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->kick = kick;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void eng_locks_destroy(struct eng_locktab *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void eng_locks_set(struct eng_lockset *l, uint64_t unit, uint64_t off, uint64_t len, int excl)
{
	uint64_t a = off / unit, b = (off + len - 1) / unit;
	memset(l->bits, 0, sizeof(l->bits));
	l->excl = (uint8_t)excl;
	l->next = 0;
	l->held = 0;
	l->want = 1;
	for (uint64_t u = a; u <= b && u - a < ENG_LOCKS; u++) {
		unsigned h = (unsigned)(u % ENG_LOCKS);
		l->bits[h / 64] |= 1ull << (h % 64);
	}
}

void eng_locks_add(struct eng_lockset *l, uint64_t unit, uint64_t off, uint64_t len)
{
	uint64_t a = off / unit, b = (off + len - 1) / unit;
	for (uint64_t u = a; u <= b && u - a < ENG_LOCKS; u++) {
		unsigned h = (unsigned)(u % ENG_LOCKS);
		l->bits[h / 64] |= 1ull << (h % 64);
	}
}

static int bucket_free_for(const struct eng_bucket *b, int excl)
{
	return !b->writer && (!excl || !b->readers);
}

int eng_locks_take(struct eng_locktab *t, struct eng_req *rq)
{
	struct eng_lockset *l = &rq->lk;
	int fresh = l->next == 0;
	pthread_mutex_lock(&t->lock);
	/* visit only the buckets the set holds, from where it stopped */
	for (unsigned i = l->next; i < ENG_LOCKS; i++) {
		uint64_t m = l->bits[i / 64] >> (i % 64);
		if (!m) {
			i |= 63; /* the rest of this word is empty */
			continue;
		}
		i += (unsigned)__builtin_ctzll(m);
		struct eng_bucket *b = &t->b[i];
		/* a woken waiter retries at once; a new arrival lines up behind waiters */
		if (!bucket_free_for(b, l->excl) || (fresh && b->wait_head)) {
			l->next = i;
			rq->next = NULL;
			if (b->wait_tail)
				b->wait_tail->next = rq;
			else
				b->wait_head = rq;
			b->wait_tail = rq;
			pthread_mutex_unlock(&t->lock);
			return 0;
		}
		if (l->excl)
			b->writer = 1;
		else
			b->readers++;
		fresh = 0;
	}
	l->next = ENG_LOCKS;
	l->held = 1;
	pthread_mutex_unlock(&t->lock);
	return 1;
}

void eng_locks_drop(struct eng_locktab *t, struct eng_req *rq)
{
	struct eng_lockset *l = &rq->lk;
	struct eng_req *wake = NULL, **tail = &wake;
	if (!l->held)
		return;
	l->held = 0;
	pthread_mutex_lock(&t->lock);
	for (unsigned w = 0; w < ENG_LOCKS / 64; w++)
		for (uint64_t m = l->bits[w]; m; m &= m - 1) {
			struct eng_bucket *b = &t->b[w * 64 + (unsigned)__builtin_ctzll(m)];
			if (l->excl)
				b->writer = 0;
			else
				b->readers--;
			if (bucket_free_for(b, 1) && b->wait_head) {
				/* everyone waiting here tries again, in arrival order */
				*tail = b->wait_head;
				tail = &b->wait_tail->next;
				b->wait_head = b->wait_tail = NULL;
			}
		}
	pthread_mutex_unlock(&t->lock);
	for (struct eng_req *r = wake, *next; r; r = next) {
		next = r->next;
		t->kick(r);
	}
}
