/* emul: one timer thread, one heap of emulated completions (see emul.h).
 *
 * The timer thread owns the spindles and the heap; I/O threads never share a
 * lock with it. They push requests onto a lock-free stack and kick a
 * semaphore; the timer thread takes the whole stack, queues and dispatches,
 * and calls each request's release at its emulated time, with no lock held.
 * So a preempted I/O thread can never hold up a release, and no thread waits
 * for a request.
 *
 * Sleeping wake-ups here are ~55 us late on average even with 1 ns timer
 * slack, so the thread sleeps until EMUL_SPIN_NS before a deadline and spins
 * the rest of the way. Lateness is measured on every release.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "fsvol/model/emul.h"
#include "stats/stats.h"

struct emul {
	pthread_t thread;
	atomic_int stop;
	atomic_int hold;                    /* > 0: leave new requests in incoming */
	_Atomic(struct emul_io *) incoming; /* lock-free stack of new requests */
	sem_t kick;                         /* posted after every push */
	/* Held by the timer thread while it works (not while it sleeps), and by
	 * emul_locked and emul_lateness: the model state is stable under it. */
	pthread_mutex_t work;
	struct emul_io **heap;
	size_t n, cap;
	uint64_t late[STATS_LAT_BUCKETS];
	uint64_t released;
	/* The clock: real (stats_now) for live emulation; in virtual time no
	 * thread runs, the caller drives emul_run and vnow is the model's time. */
	int virt;
	uint64_t vnow;
	atomic_uint expected;   /* virtual: requests announced, not yet submitted */
};

static uint64_t clock_now(const struct emul *e)
{
	return e->virt ? e->vnow : stats_now();
}

static int before(const struct emul_io *a, const struct emul_io *b)
{
	return a->r.done_ns < b->r.done_ns;
}

static int heap_push(struct emul *e, struct emul_io *io)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		struct emul_io **h = realloc(e->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		e->heap = h;
		e->cap = cap;
	}
	size_t i = e->n++;
	while (i && before(io, e->heap[(i - 1) / 2])) {
		e->heap[i] = e->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->heap[i] = io;
	return 0;
}

static struct emul_io *heap_pop(struct emul *e)
{
	struct emul_io *top = e->heap[0], *last = e->heap[--e->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		if (c + 1 < e->n && before(e->heap[c + 1], e->heap[c]))
			c++;
		if (!before(e->heap[c], last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->n)
		e->heap[i] = last;
	return top;
}

/* Start what the spindle can start at time t. */
static void dispatch(struct emul *e, struct spindle *sp, uint64_t t, struct emul_io ***due)
{
	struct spindle_req *r;
	while ((r = spindle_dispatch(sp, t))) {
		struct emul_io *io = r->cookie;
		if (heap_push(e, io)) {
			/* Out of memory: release at once rather than lose the request. */
			io->r.done_ns = t;
			spindle_complete(sp, r);
			io->next = NULL;
			**due = io;
			*due = &io->next;
		}
	}
}

/* The order requests of one instant reach their queues in virtual time. */
static int virt_before(const struct emul_io *a, const struct emul_io *b)
{
	const struct spindle_req *x = &a->r, *y = &b->r;
	if (x->arrival_ns != y->arrival_ns)
		return x->arrival_ns < y->arrival_ns;
	if (x->offset != y->offset)
		return x->offset < y->offset;
	if (x->write != y->write)
		return x->write < y->write;
	return x->length < y->length;
}

/* Queue what the I/O threads pushed, oldest first (the stack is LIFO). */
static void take_incoming(struct emul *e, struct emul_io ***due)
{
	struct emul_io *list = atomic_exchange_explicit(&e->incoming, NULL, memory_order_acquire);
	struct emul_io *rev = NULL;
	while (list) {
		struct emul_io *next = list->next;
		if (e->virt) {
			/* virtual time: requests of one instant are queued in an order
			 * of their own (arrival, offset, ...), not in the order other
			 * threads happened to move their data: the same run gives the
			 * same figures however loaded the machine */
			struct emul_io **p = &rev;
			while (*p && !virt_before(list, *p))
				p = &(*p)->next;
			list->next = *p;
			*p = list;
		} else {
			list->next = rev;
			rev = list;
		}
		list = next;
	}
	for (struct emul_io *io = rev, *next; io; io = next) {
		next = io->next;
		spindle_enqueue(io->sp, &io->r);
		dispatch(e, io->sp, io->r.arrival_ns, due);
	}
}

static void sleep_until(struct emul *e, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
	while (sem_clockwait(&e->kick, CLOCK_MONOTONIC, &ts) < 0 && errno == EINTR)
		;
}

/* One round at the clock's now: queue what the I/O threads pushed (unless held)
 * and take off the heap, in emulated-time order, everything due by now, onto
 * *tail. Returns the next deadline (UINT64_MAX: none). Called with work held. */
static uint64_t emul_round(struct emul *e, struct emul_io ***tail)
{
	if (!atomic_load_explicit(&e->hold, memory_order_acquire))
		take_incoming(e, tail);
	uint64_t now = clock_now(e);
	while (e->n) {
		struct emul_io *io = e->heap[0];
		uint64_t due = io->r.done_ns;
		if (due > now)
			return due;
		heap_pop(e);
		e->late[stats_lat_bucket(now - due)]++;
		e->released++;
		spindle_complete(io->sp, &io->r);
		struct spindle *s = io->sp;
		io->next = NULL;
		**tail = io;
		*tail = &io->next;
		/* The member's next request starts when this one finished
		 * in emulated time, not when we got round to it. */
		dispatch(e, s, due, tail);
		now = clock_now(e);
	}
	return UINT64_MAX;
}

static void release_all(struct emul_io *out)
{
	/* Releases run without the lock: they may submit more. */
	for (struct emul_io *io = out, *next; io; io = next) {
		next = io->next;
		io->release(io);
	}
}

static void *emul_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-model"); /* top -H, ps -L */
	struct emul *e = arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	/* Releases are the model's clock: run ahead of the I/O threads when the
	 * system lets us (root); otherwise stay a normal thread. */
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!atomic_load(&e->stop)) {
		struct emul_io *out = NULL, **tail = &out;
		pthread_mutex_lock(&e->work);
		while (sem_trywait(&e->kick) == 0)
			; /* every push is seen by the take below */
		uint64_t due = emul_round(e, &tail);
		uint64_t now = stats_now();
		pthread_mutex_unlock(&e->work);
		release_all(out);
		if (out)
			continue; /* releases took time: look at the clock again */
		/* Posts only wake us; take_incoming finds every push anyway. */
		if (due == UINT64_MAX) {
			while (sem_wait(&e->kick) < 0 && errno == EINTR)
				;
		} else if (due > now && due - now > EMUL_SPIN_NS) {
			sleep_until(e, due - EMUL_SPIN_NS);
		} else {
			while (stats_now() < due && (atomic_load_explicit(&e->hold, memory_order_relaxed) ||
						     !atomic_load_explicit(&e->incoming, memory_order_relaxed)))
				__builtin_ia32_pause();
		}
	}
	return NULL;
}

int emul_create_virtual(struct emul **out)
{
	struct emul *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->work, NULL);
	sem_init(&e->kick, 0, 0);
	e->virt = 1;
	*out = e;
	return 0;
}

uint64_t emul_now(const struct emul *e)
{
	return clock_now(e);
}

int emul_is_virtual(const struct emul *e)
{
	return e->virt;
}

void emul_expect(struct emul *e, int delta)
{
	if (delta > 0) {
		atomic_fetch_add_explicit(&e->expected, (unsigned)delta, memory_order_acq_rel);
		return;
	}
	atomic_fetch_sub_explicit(&e->expected, (unsigned)-delta, memory_order_acq_rel);
	sem_post(&e->kick);
}

/* Virtual time must not move while a request announced at the current time
 * is still on its way (its data moving on another thread). */
static void wait_expected(struct emul *e)
{
	while (atomic_load_explicit(&e->expected, memory_order_acquire))
		while (sem_wait(&e->kick) < 0 && errno == EINTR)
			;
}

/* The discrete-event loop: jump the clock to the next completion, release
 * everything due then (releases may submit more, at or after now), repeat.
 * once: stop after the first instant that released something. */
static uint64_t run(struct emul *e, uint64_t until_ns, int once)
{
	for (;;) {
		struct emul_io *out = NULL, **tail = &out;
		wait_expected(e);
		pthread_mutex_lock(&e->work);
		uint64_t due = emul_round(e, &tail);
		pthread_mutex_unlock(&e->work);
		if (out) {
			release_all(out);
			if (once)
				return e->vnow;
			continue;
		}
		if (atomic_load_explicit(&e->incoming, memory_order_acquire) &&
		    !atomic_load_explicit(&e->hold, memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&e->expected, memory_order_acquire))
			continue;
		if (due == UINT64_MAX || due > until_ns) {
			if (until_ns != UINT64_MAX && until_ns > e->vnow)
				e->vnow = until_ns;
			return e->vnow;
		}
		e->vnow = due;
	}
}

uint64_t emul_run(struct emul *e, uint64_t until_ns)
{
	return run(e, until_ns, 0);
}

uint64_t emul_step(struct emul *e, uint64_t until_ns)
{
	return run(e, until_ns, 1);
}

int emul_create(struct emul **out)
{
	struct emul *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->work, NULL);
	sem_init(&e->kick, 0, 0);
	if (pthread_create(&e->thread, NULL, emul_main, e)) {
		sem_destroy(&e->kick);
		pthread_mutex_destroy(&e->work);
		free(e);
		return -EAGAIN;
	}
	*out = e;
	return 0;
}

void emul_destroy(struct emul *e)
{
	if (!e)
		return;
	if (!e->virt) {
		atomic_store(&e->stop, 1);
		sem_post(&e->kick);
		pthread_join(e->thread, NULL);
	}
	sem_destroy(&e->kick);
	pthread_mutex_destroy(&e->work);
	free(e->heap);
	free(e);
}

void emul_submit(struct emul *e, struct emul_io *io)
{
	io->r.cookie = io;
	struct emul_io *head = atomic_load_explicit(&e->incoming, memory_order_relaxed);
	do
		io->next = head;
	while (!atomic_compare_exchange_weak_explicit(&e->incoming, &head, io, memory_order_release,
						      memory_order_relaxed));
	sem_post(&e->kick);
}

int emul_locked(struct emul *e, int (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&e->work);
	int r = fn(arg);
	pthread_mutex_unlock(&e->work);
	return r;
}

void emul_hold(struct emul *e, int hold)
{
	atomic_fetch_add_explicit(&e->hold, hold ? 1 : -1, memory_order_acq_rel);
	sem_post(&e->kick); /* let go: take what waited */
}

void emul_lateness(struct emul *e, double *p50, double *p99, uint64_t *count)
{
	pthread_mutex_lock(&e->work);
	const uint64_t *h[1] = { e->late };
	*p50 = stats_lat_percentile(h, 1, 50);
	*p99 = stats_lat_percentile(h, 1, 99);
	*count = e->released;
	pthread_mutex_unlock(&e->work);
}
