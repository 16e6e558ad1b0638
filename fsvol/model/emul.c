/* emul: one timer thread, one heap of emulated completions (see emul.h).
 *
 * The timer thread owns the spindles and the heap; I/O threads never share a
 * lock with it. They push requests onto a lock-free stack; the timer thread
 * takes the whole stack, queues and dispatches, and calls each request's
 * release at its emulated time, with no lock held. So a preempted I/O thread
 * can never hold up a release, and no thread waits for a request.
 *
 * The thread sleeps in read() on a timerfd armed (TFD_TIMER_ABSTIME,
 * CLOCK_MONOTONIC) for the earliest deadline; it never spins. A push wakes it
 * only when it is asleep and the request might complete before that deadline:
 * its disk has a free service slot (the `full` table says which disks have
 * none). A wake-up fires the same timerfd (an absolute time long past), so
 * the thread waits on one descriptor. A late wake releases everything due,
 * each at its own emulated time: the model's clock never takes the lateness
 * in. Lateness is measured on every release.
 *
 * Driven (emul_drive_begin): another thread's loop keeps the clock (a FUSE
 * queue thread, with a read of the same timerfd outstanding on its io_uring)
 * and the timer thread parks on a condition variable. Both run the same
 * round (emul_work), the same arming and sleep check (clock_sleepy) and the
 * same lead learning; only the wait differs. One reader of the timerfd at a
 * time: begin returns once the thread has parked (it is out of read()), and
 * end gives the thread a fresh timerfd, because the driver's read may still
 * be outstanding on its ring and would take the thread's expiries.
 *
 * Virtual time has no thread: kicks are a semaphore its caller waits on.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/model/emul.h"
#include "stats/stats.h"

/* Disks with every service slot taken, hashed by address (a collision only
 * costs wake-ups: a disk not found here is woken for). */
#define EMUL_FULL_SLOTS 64

struct emul {
	pthread_t thread;
	atomic_int stop;
	atomic_int hold;                    /* > 0: leave new requests in incoming */
	_Atomic(struct emul_io *) incoming; /* lock-free stack of new requests */
	sem_t kick;                         /* virtual: posted after every push */
	/* Live: the clock's one wait. Armed for the earliest deadline by whoever
	 * keeps the clock (the thread or its driver), fired at once by whoever
	 * wakes it. Replaced when a driver gives the clock back (see above). */
	atomic_int tfd;
	atomic_int asleep;                  /* live: the clock is going to wait on tfd */
	_Atomic(const struct spindle *) full[EMUL_FULL_SLOTS]; /* set and cleared by the clock */
	/* Held by whoever keeps the clock while it works (not while it sleeps),
	 * and by emul_locked and emul_lateness: the model state is stable under it. */
	pthread_mutex_t work;
	/* The clock's arming, kept by whoever keeps the clock (under no lock:
	 * one keeper at a time). lead: the wake-up's floor, learnt: arm this much
	 * early; armed: the timer's time, when is_armed; at/learn: the last arm.
	 * A driver's: due, its next deadline; woke, when its wait returned;
	 * slept, whether that wait was a sleep (said by emul_drive_sleepy). */
	uint64_t lead, armed, at, due;
	int is_armed, learn, slept;
	uint64_t woke;
	/* Driven: another thread keeps the clock; the thread is parked (both
	 * under work, drive_cv signalled on each change). */
	atomic_int driven;
	int parked;
	pthread_cond_t drive_cv;
	int spare;                          /* the thread's next timerfd, made by begin */
	int drv_policy;                     /* the driver's own scheduling, put back by end */
	struct sched_param drv_param;
	int *retired;                       /* timerfds a driver read: closed by destroy */
	unsigned nretired;
	char keeper[48];                    /* who keeps the clock, for status (under work) */
	struct emul_io **heap;
	size_t n, cap;
	uint64_t late[STATS_LAT_BUCKETS];
	uint64_t released;
	/* Timer slack (live only): a completion due within this of now is
	 * released at once, so deadlines closer than it share one wake-up. */
	_Atomic uint64_t slack;
	/* The clock: real (stats_now) for live emulation; in virtual time no
	 * thread runs, the caller drives emul_run and vnow is the model's time. */
	int virt;
	uint64_t vnow;
	atomic_uint expected;   /* virtual: requests announced, not yet submitted */
};

static _Atomic uint64_t default_slack = EMUL_SLACK_DEFAULT_NS;
/* A release comes at most 1/this of its service time early (1%). */
#define EMUL_SLACK_SHARE 100u

void emul_set_default_slack(uint64_t ns)
{
	atomic_store_explicit(&default_slack, ns, memory_order_relaxed);
}

uint64_t emul_default_slack(void)
{
	return atomic_load_explicit(&default_slack, memory_order_relaxed);
}

void emul_set_slack(struct emul *e, uint64_t ns)
{
	atomic_store_explicit(&e->slack, ns, memory_order_relaxed);
}

uint64_t emul_slack(const struct emul *e)
{
	return e->virt ? 0 : atomic_load_explicit(&((struct emul *)e)->slack, memory_order_relaxed);
}

static uint64_t clock_now(const struct emul *e)
{
	return e->virt ? e->vnow : stats_now();
}

static size_t full_slot(const struct spindle *d)
{
	return (size_t)(((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ull >> 58) % EMUL_FULL_SLOTS;
}

/* Live: after the thread changed sp's disk, say whether it is full. */
static void full_publish(struct emul *e, const struct spindle *sp)
{
	const struct spindle *d = sp->disk;
	_Atomic(const struct spindle *) *f = &e->full[full_slot(d)];
	if (spindle_full(d))
		atomic_store_explicit(f, d, memory_order_relaxed);
	else if (atomic_load_explicit(f, memory_order_relaxed) == d)
		atomic_store_explicit(f, NULL, memory_order_relaxed);
}

/* A request pushed for sp cannot start before the armed deadline: its disk
 * is full (a partition of a shared disk is never found: always woken for). */
static int full_now(struct emul *e, const struct spindle *sp)
{
	return atomic_load_explicit(&e->full[full_slot(sp)], memory_order_relaxed) == sp;
}

/* Live: wake the clock (fire its timerfd now). */
static void timer_fire(struct emul *e)
{
	struct itimerspec it = { .it_value = { 0, 1 } }; /* absolute: long past */
	timerfd_settime(atomic_load(&e->tfd), TFD_TIMER_ABSTIME, &it, NULL);
}

/* Live: arm the timerfd for due (UINT64_MAX: disarm). */
static void timer_arm(struct emul *e, uint64_t due)
{
	struct itimerspec it = { 0 };
	if (due != UINT64_MAX)
		it.it_value = (struct timespec){ (time_t)(due / 1000000000u), (long)(due % 1000000000u) };
	if (due != UINT64_MAX && !it.it_value.tv_sec && !it.it_value.tv_nsec)
		it.it_value.tv_nsec = 1; /* 0 would disarm */
	timerfd_settime(atomic_load_explicit(&e->tfd, memory_order_relaxed), TFD_TIMER_ABSTIME, &it, NULL);
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
	if (!e->virt)
		full_publish(e, sp);
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

/* One round at the clock's now: queue what the I/O threads pushed (unless held)
 * and take off the heap, in emulated-time order, everything due by now, onto
 * *tail. Returns the next deadline (UINT64_MAX: none). Called with work held. */
static uint64_t emul_round(struct emul *e, struct emul_io ***tail)
{
	if (!atomic_load_explicit(&e->hold, memory_order_acquire))
		take_incoming(e, tail);
	uint64_t now = clock_now(e);
	/* live: what falls due within the slack goes now, in this wake-up (its
	 * own counters keep its emulated time; an early one counts as on time),
	 * but never earlier than EMUL_SLACK_SHARE of its own service time: a
	 * fast disk's reply stays where its model puts it */
	uint64_t slack = emul_slack(e);
	while (e->n) {
		struct emul_io *io = e->heap[0];
		uint64_t due = io->r.done_ns, early = (due - io->r.start_ns) / EMUL_SLACK_SHARE;
		if (due > now + (early < slack ? early : slack))
			return due;
		heap_pop(e);
		e->late[stats_lat_bucket(now > due ? now - due : 0)]++;
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

/* The lead follows a low quantile (EMUL_LEAD_Q) of how late wake-ups are
 * (stochastic gradient: up by Q of a step when a wake-up was later, down by
 * 1 - Q when it was earlier), so about Q of them wake before the deadline and
 * sleep again for the rest. A wake-up before the time armed is a push's and
 * teaches nothing; one after it may be a push's too, which only makes the
 * lead a little shorter than it could be. */
#define EMUL_LEAD_Q 0.02
#define EMUL_LEAD_STEP 2000.0   /* ns */
#define EMUL_LEAD_MAX 200000u   /* ns */

uint64_t emul_lead_learn(uint64_t lead, uint64_t late)
{
	double l = (double)lead;
	if (late > lead)
		l += EMUL_LEAD_Q * EMUL_LEAD_STEP;
	else
		l -= (1 - EMUL_LEAD_Q) * EMUL_LEAD_STEP;
	return l < 0 ? 0 : l > EMUL_LEAD_MAX ? EMUL_LEAD_MAX : (uint64_t)l;
}

/* The keeper of the clock runs ahead of the I/O threads when the system lets
 * us (root), as the timer thread does: a release waits for no one's slice. */
static void keeper_priority(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* Take what came in and release what is due, until a round releases
 * nothing (releases take time: look at the clock again); returns the next
 * deadline (UINT64_MAX: none). The round both keepers of the clock run. */
static uint64_t emul_work(struct emul *e)
{
	for (;;) {
		struct emul_io *out = NULL, **tail = &out;
		pthread_mutex_lock(&e->work);
		uint64_t due = emul_round(e, &tail);
		pthread_mutex_unlock(&e->work);
		if (!out)
			return due;
		release_all(out);
	}
}

/* Before the keeper of the clock sleeps: arm the timer for due, say it
 * sleeps, then look once more. 1: sleep; 0: something came in (a pusher
 * stores then loads `asleep`; we store `asleep` then load what it pushed, so
 * one of us sees the other; a fire after the arm always wakes us). */
static int clock_sleepy(struct emul *e, uint64_t due)
{
	/* A wake-up comes at least `lead` after the timer's time: arm that much
	 * early. Within the lead already (an early wake): arm for due. */
	uint64_t now = stats_now(), at = due;
	e->learn = due != UINT64_MAX && due > now + e->lead;
	if (e->learn)
		at = due - e->lead;
	if (!e->is_armed || e->armed != at)
		timer_arm(e, at);
	e->armed = e->at = at;
	e->is_armed = 1;
	atomic_store(&e->asleep, 1);
	if (atomic_load(&e->stop) || (!atomic_load(&e->hold) && atomic_load(&e->incoming))) {
		atomic_store(&e->asleep, 0);
		return 0;
	}
	return 1;
}

/* The timer fired (ours, or a wake-up's); woke: when the keeper woke. */
static void clock_fired(struct emul *e, uint64_t woke)
{
	e->is_armed = 0;
	if (e->learn && woke >= e->at)
		e->lead = emul_lead_learn(e->lead, woke - e->at);
	e->learn = 0;
}

/* The thread, while a driver keeps the clock: park until it gives it back
 * (or the emulator ends). 1 when it parked. */
static int thread_park(struct emul *e)
{
	if (!atomic_load(&e->driven))
		return 0;
	pthread_mutex_lock(&e->work);
	while (atomic_load(&e->driven) && !atomic_load(&e->stop)) {
		e->parked = 1;
		pthread_cond_broadcast(&e->drive_cv);
		pthread_cond_wait(&e->drive_cv, &e->work);
	}
	e->parked = 0;
	pthread_mutex_unlock(&e->work);
	return 1;
}

static void *emul_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-model"); /* top -H, ps -L */
	struct emul *e = arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	keeper_priority();
	while (!atomic_load(&e->stop)) {
		if (thread_park(e))
			continue; /* the clock is back: on a fresh timerfd, e->is_armed 0 */
		uint64_t due = emul_work(e);
		if (!clock_sleepy(e, due))
			continue;
		/* a driver asked for the clock after the arm: its fire wakes us, or
		 * we see it here */
		if (atomic_load(&e->driven)) {
			atomic_store(&e->asleep, 0);
			continue;
		}
		uint64_t fired;
		while (read(atomic_load(&e->tfd), &fired, sizeof(fired)) < 0 && errno == EINTR)
			;
		atomic_store(&e->asleep, 0);
		clock_fired(e, stats_now());
	}
	return NULL;
}

/* ---- driven by another thread's loop ---- */

int emul_drive_begin(struct emul *e, const char *who)
{
	if (e->virt)
		return -EINVAL;
	int spare = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (spare < 0)
		return -errno;
	pthread_mutex_lock(&e->work);
	if (atomic_load(&e->driven)) {
		pthread_mutex_unlock(&e->work);
		close(spare);
		return -EBUSY;
	}
	e->spare = spare;
	snprintf(e->keeper, sizeof(e->keeper), "%s", who);
	atomic_store(&e->driven, 1);
	pthread_mutex_unlock(&e->work);
	/* the thread may sleep in read(tfd): wake it, and wait until it parked,
	 * so that only the driver reads tfd from now */
	timer_fire(e);
	pthread_mutex_lock(&e->work);
	while (!e->parked)
		pthread_cond_wait(&e->drive_cv, &e->work);
	pthread_mutex_unlock(&e->work);
	atomic_store(&e->asleep, 0);
	e->is_armed = 0; /* the fire disarmed it */
	e->due = UINT64_MAX;
	if (pthread_getschedparam(pthread_self(), &e->drv_policy, &e->drv_param))
		e->drv_policy = -1;
	keeper_priority();
	return 0;
}

int emul_drive_fd(const struct emul *e)
{
	return atomic_load(&((struct emul *)e)->tfd);
}

void emul_drive_round(struct emul *e)
{
	e->due = emul_work(e);
}

int emul_drive_sleepy(struct emul *e)
{
	return clock_sleepy(e, e->due);
}

void emul_drive_woke(struct emul *e)
{
	e->slept = atomic_exchange(&e->asleep, 0);
	e->woke = stats_now();
}

void emul_drive_fired(struct emul *e)
{
	/* only a wake-up from a sleep says how late the timer is */
	if (!e->slept)
		e->learn = 0;
	clock_fired(e, e->woke);
}

void emul_drive_end(struct emul *e)
{
	if (e->drv_policy >= 0)
		pthread_setschedparam(pthread_self(), e->drv_policy, &e->drv_param);
	pthread_mutex_lock(&e->work);
	int *r = realloc(e->retired, (e->nretired + 1) * sizeof(*r));
	if (r) {
		e->retired = r;
		e->retired[e->nretired++] = atomic_load(&e->tfd);
	} /* else: it stays open, unnamed, till the process ends */
	/* The driver's read may still be outstanding on its ring: the thread
	 * waits on a timerfd nobody else reads. A pusher that loaded the old one
	 * fires it in vain, but its push was taken: it came before the thread's
	 * first round, which follows this under the lock. */
	atomic_store(&e->tfd, e->spare);
	e->spare = -1;
	e->is_armed = 0;
	atomic_store(&e->asleep, 0);
	snprintf(e->keeper, sizeof(e->keeper), "fsvol-model (its own thread)");
	atomic_store(&e->driven, 0);
	pthread_cond_broadcast(&e->drive_cv);
	pthread_mutex_unlock(&e->work);
}

void emul_keeper(struct emul *e, char *buf, size_t len)
{
	pthread_mutex_lock(&e->work);
	snprintf(buf, len, "%s", e->virt ? "virtual" : e->keeper);
	pthread_mutex_unlock(&e->work);
}

int emul_create_virtual(struct emul **out)
{
	struct emul *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->work, NULL);
	pthread_cond_init(&e->drive_cv, NULL);
	sem_init(&e->kick, 0, 0);
	e->virt = 1;
	atomic_init(&e->tfd, -1);
	e->spare = -1;
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
	pthread_cond_init(&e->drive_cv, NULL);
	sem_init(&e->kick, 0, 0);
	e->spare = -1;
	atomic_init(&e->slack, emul_default_slack());
	snprintf(e->keeper, sizeof(e->keeper), "fsvol-model (its own thread)");
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	atomic_init(&e->tfd, tfd);
	if (tfd < 0 || pthread_create(&e->thread, NULL, emul_main, e)) {
		int r = tfd < 0 ? -errno : -EAGAIN;
		if (tfd >= 0)
			close(tfd);
		sem_destroy(&e->kick);
		pthread_cond_destroy(&e->drive_cv);
		pthread_mutex_destroy(&e->work);
		free(e);
		return r;
	}
	*out = e;
	return 0;
}

void emul_destroy(struct emul *e)
{
	if (!e)
		return;
	if (!e->virt) {
		/* a parked thread wakes on the signal, a sleeping one on the fire */
		pthread_mutex_lock(&e->work);
		atomic_store(&e->stop, 1);
		pthread_cond_broadcast(&e->drive_cv);
		pthread_mutex_unlock(&e->work);
		timer_fire(e);
		pthread_join(e->thread, NULL);
		close(atomic_load(&e->tfd));
		if (e->spare >= 0)
			close(e->spare);
		for (unsigned i = 0; i < e->nretired; i++)
			close(e->retired[i]);
		free(e->retired);
	}
	sem_destroy(&e->kick);
	pthread_cond_destroy(&e->drive_cv);
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
	while (!atomic_compare_exchange_weak_explicit(&e->incoming, &head, io, memory_order_seq_cst,
						      memory_order_relaxed));
	if (e->virt) {
		sem_post(&e->kick);
		return;
	}
	/* Awake, the thread looks at incoming before it sleeps; asleep, it
	 * wakes at its deadline, before which nothing starts on a full disk. */
	if (atomic_load(&e->asleep) && !full_now(e, io->sp))
		timer_fire(e);
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
	atomic_fetch_add(&e->hold, hold ? 1 : -1);
	/* let go: take what waited */
	if (e->virt)
		sem_post(&e->kick);
	else
		timer_fire(e);
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
