/* emul, live: completions never come before their emulated time, and a
 * disk's next request starts when the previous one completed in emulated time
 * (however late the release); a request for an idle disk is released at its own time even
 * while the timer thread sleeps towards a far deadline of another disk (the
 * push wakes it), while pushes for a busy disk need no wake-up to be served in
 * turn; destroying an emulator with a far deadline pending does not wait for it.
 * Driven (emul_drive_*): another thread's io_uring loop keeps the clock, the
 * releases run there and keep the same rules; holds and the lock work
 * meanwhile; given back with its timerfd read still outstanding on the
 * driver's ring, the timer thread keeps the clock again (a stale read must
 * not take its wake-ups); virtual time cannot be driven.
 * Timer slack: these run with slack 0 (exact, as before there was one); with
 * a slack, a completion due within it of a wake-up goes in that wake-up,
 * early by at most the slack and 1% of its service time, and the emulated
 * times stay exact.
 * Real spindles, the real timer thread; nothing here waits on a sleep. */
#include <check.h>
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fsvol/model/emul.h"
#include "fsvol/model/spindle.h"
#include "stats/stats.h"

struct tio {
	struct emul_io io;
	uint64_t released_at;   /* real time of the release, 0: not yet */
	int on_driver;          /* released on the driver's thread */
};

static pthread_t driver_tid;
static atomic_int driving;

static sem_t released;
static atomic_uint nreleased;

static void on_release(struct emul_io *io)
{
	struct tio *t = (struct tio *)io;
	t->released_at = stats_now();
	t->on_driver = atomic_load(&driving) && pthread_equal(pthread_self(), driver_tid);
	atomic_fetch_add(&nreleased, 1);
	sem_post(&released);
}

static void disk(struct spindle *s, const char *spec)
{
	struct spindle_params p;
	char err[128];
	ck_assert_msg(spindle_parse(spec, &p, err, sizeof(err)) == 0, "%s: %s", spec, err);
	spindle_init(s, &p, 64ull << 20);
}

static void submit(struct emul *e, struct tio *t, struct spindle *s, uint64_t off)
{
	memset(t, 0, sizeof(*t));
	t->io.r = (struct spindle_req){ .offset = off, .length = 4096, .arrival_ns = stats_now() };
	t->io.sp = s;
	t->io.release = on_release;
	emul_submit(e, &t->io);
}

static void wait_released(unsigned n)
{
	while (atomic_load(&nreleased) < n)
		while (sem_wait(&released) < 0 && errno == EINTR)
			;
}

static void setup(void)
{
	emul_set_default_slack(0);
	sem_init(&released, 0, 0);
	atomic_store(&nreleased, 0);
}

static void teardown(void)
{
	sem_destroy(&released);
}

static int by_start(const void *a, const void *b)
{
	const struct tio *x = *(struct tio *const *)a, *y = *(struct tio *const *)b;
	return x->io.r.start_ns < y->io.r.start_ns ? -1 : x->io.r.start_ns > y->io.r.start_ns;
}

START_TEST(never_early_and_lateness_not_carried)
{
	enum { DISKS = 5, N = 600 };
	static struct spindle sp[DISKS];
	static struct tio t[N];
	disk(&sp[0], "hdd");
	disk(&sp[1], "hdd:sched=sstf");
	disk(&sp[2], "ssd:channels=1");
	disk(&sp[3], "ssd");
	disk(&sp[4], "nvme");
	struct emul *e;
	ck_assert_int_eq(emul_create(&e), 0);
	uint64_t x = 88172645463325252ull;
	/* bursts: most land on a disk whose slots are taken (no wake-up needed),
	 * some on an idle one (a wake-up needed) */
	for (unsigned i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		submit(e, &t[i], &sp[x % DISKS], (x >> 8) % (60ull << 20) & ~4095ull);
		if (i % 50 == 49)
			wait_released(i + 1 - 25);
	}
	wait_released(N);
	emul_destroy(e);
	struct tio *one[N];
	unsigned n = 0;
	for (unsigned i = 0; i < N; i++) {
		ck_assert_uint_ge(t[i].released_at, t[i].io.r.done_ns); /* never early */
		ck_assert_uint_ge(t[i].io.r.done_ns, t[i].io.r.arrival_ns);
		if (t[i].io.sp == &sp[0])
			one[n++] = &t[i];
	}
	/* one slot, FIFO: each starts at its arrival or at the previous one's
	 * emulated completion, exactly, whenever the thread got round to it */
	ck_assert_uint_gt(n, 50);
	qsort(one, n, sizeof(one[0]), by_start);
	for (unsigned k = 1; k < n; k++) {
		uint64_t prev = one[k - 1]->io.r.done_ns, arr = one[k]->io.r.arrival_ns;
		ck_assert_uint_eq(one[k]->io.r.start_ns, arr > prev ? arr : prev);
	}
}
END_TEST

START_TEST(an_idle_disk_does_not_wait_for_a_far_deadline)
{
	static struct spindle slow, fast;
	static struct tio s, f1, f2, f3;
	disk(&slow, "ssd:read=1s,overhead=1s,channels=1"); /* 2 s a read */
	disk(&fast, "ssd:channels=1");
	struct emul *e;
	ck_assert_int_eq(emul_create(&e), 0);
	submit(e, &s, &slow, 0);
	submit(e, &f1, &fast, 0);
	wait_released(1);
	/* the thread now sleeps (or is about to) towards the slow disk's deadline:
	 * a push for the idle fast disk must wake it */
	submit(e, &f2, &fast, 8192);
	submit(e, &f3, &fast, 16384); /* behind f2: the disk is full, no wake-up */
	wait_released(3);
	ck_assert_uint_eq(s.released_at, 0);
	ck_assert_uint_lt(f3.released_at, s.io.r.done_ns);
	ck_assert_uint_ge(f2.released_at, f2.io.r.done_ns);
	ck_assert_uint_ge(f3.io.r.start_ns, f2.io.r.done_ns); /* one slot: in turn */
	ck_assert_uint_ge(f3.released_at, f3.io.r.done_ns);
	/* stopping does not wait for the slow deadline */
	emul_destroy(e);
	ck_assert_uint_lt(stats_now(), s.io.r.done_ns);
	ck_assert_uint_eq(s.released_at, 0);
}
END_TEST

/* A driver as FUSE over io_uring's queue thread is one: its own ring with a
 * read of the emulator's timerfd outstanding, and an eventfd to stop it. */
struct driver {
	struct emul *e;
	int stopfd, begun;
	uint64_t tick, stopbuf;
	struct io_uring ring;
	sem_t ended, may_exit;
};

static void drv_read(struct driver *d, int fd, uint64_t *buf, uintptr_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	io_uring_prep_read(sqe, fd, buf, sizeof(*buf), 0);
	io_uring_sqe_set_data(sqe, (void *)tag);
}

static void *driver_main(void *arg)
{
	struct driver *d = arg;
	ck_assert_int_eq(io_uring_queue_init(8, &d->ring, 0), 0);
	d->begun = emul_drive_begin(d->e, "test-driver");
	driver_tid = pthread_self();
	atomic_store(&driving, d->begun == 0);
	sem_post(&d->ended); /* begun */
	if (d->begun)
		return NULL;
	drv_read(d, emul_drive_fd(d->e), &d->tick, 1);
	drv_read(d, d->stopfd, &d->stopbuf, 2);
	for (int stop = 0; !stop;) {
		emul_drive_round(d->e);
		int sleep = emul_drive_sleepy(d->e);
		ck_assert_int_ge(io_uring_submit_and_wait(&d->ring, sleep ? 1 : 0), 0);
		emul_drive_woke(d->e);
		struct io_uring_cqe *cqe;
		while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
			uintptr_t tag = (uintptr_t)io_uring_cqe_get_data(cqe);
			int res = cqe->res;
			io_uring_cqe_seen(&d->ring, cqe);
			if (tag == 2) {
				stop = 1;
			} else if (tag == 1 && !stop) {
				ck_assert_int_eq(res, 8);
				emul_drive_fired(d->e);
				drv_read(d, emul_drive_fd(d->e), &d->tick, 1);
			}
		}
	}
	atomic_store(&driving, 0);
	/* ending: the timerfd read stays outstanding on the ring, as when a
	 * mount ends */
	emul_drive_end(d->e);
	sem_post(&d->ended);
	while (sem_wait(&d->may_exit) < 0 && errno == EINTR)
		;
	io_uring_queue_exit(&d->ring);
	return NULL;
}

static int locked_ok(void *arg)
{
	return *(int *)arg;
}

/* N requests from this thread over the disks (some full, some idle). */
static void burst(struct emul *e, struct tio *t, unsigned n, struct spindle *sp, unsigned disks, uint64_t *x,
		  unsigned base)
{
	for (unsigned i = 0; i < n; i++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		submit(e, &t[i], &sp[*x % disks], (*x >> 8) % (60ull << 20) & ~4095ull);
		if (i % 50 == 49)
			wait_released(base + i + 1 - 25);
	}
	wait_released(base + n);
}

static void check_times(struct tio *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_ge(t[i].released_at, t[i].io.r.done_ns); /* never early */
		ck_assert_uint_ge(t[i].io.r.done_ns, t[i].io.r.arrival_ns);
	}
}

START_TEST(a_driver_keeps_the_clock_and_gives_it_back)
{
	enum { DISKS = 4, N = 300 };
	static struct spindle sp[DISKS];
	static struct tio a[N], b[N], held;
	disk(&sp[0], "hdd");
	disk(&sp[1], "ssd:channels=1");
	disk(&sp[2], "ssd");
	disk(&sp[3], "nvme");
	struct emul *e, *v;
	char who[64];
	ck_assert_int_eq(emul_create_virtual(&v), 0);
	ck_assert_int_eq(emul_drive_begin(v, "x"), -EINVAL); /* no real clock to keep */
	emul_destroy(v);
	ck_assert_int_eq(emul_create(&e), 0);
	emul_keeper(e, who, sizeof(who));
	ck_assert_str_eq(who, "fsvol-model (its own thread)");
	static struct driver d;
	d.e = e;
	d.stopfd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(d.stopfd, 0);
	sem_init(&d.ended, 0, 0);
	sem_init(&d.may_exit, 0, 0);
	ck_assert_int_eq(pthread_create(&driver_tid, NULL, driver_main, &d), 0);
	while (sem_wait(&d.ended) < 0 && errno == EINTR)
		;
	ck_assert_int_eq(d.begun, 0);
	ck_assert_int_eq(emul_drive_begin(e, "another"), -EBUSY);
	emul_keeper(e, who, sizeof(who));
	ck_assert_str_eq(who, "test-driver");
	/* driven: every release on the driver's thread, never early */
	uint64_t x = 88172645463325252ull;
	burst(e, a, N, sp, DISKS, &x, 0);
	check_times(a, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_msg(a[i].on_driver, "release %u not on the driver's thread", i);
	/* holds and the lock work while driven */
	int ok = 7;
	ck_assert_int_eq(emul_locked(e, locked_ok, &ok), 7);
	emul_hold(e, 1);
	submit(e, &held, &sp[3], 0);
	emul_hold(e, 0);
	wait_released(N + 1);
	ck_assert(held.on_driver);
	/* given back with the driver's read still outstanding on its ring: the
	 * timer thread keeps the clock, idle disks and full ones alike */
	uint64_t one = 1;
	pthread_t first = driver_tid;
	ck_assert_int_eq(write(d.stopfd, &one, sizeof(one)), sizeof(one));
	while (sem_wait(&d.ended) < 0 && errno == EINTR)
		;
	emul_keeper(e, who, sizeof(who));
	ck_assert_str_eq(who, "fsvol-model (its own thread)");
	burst(e, b, N, sp, DISKS, &x, N + 1);
	check_times(b, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert(!b[i].on_driver);
	double p50, p99;
	uint64_t count;
	emul_lateness(e, &p50, &p99, &count);
	ck_assert_uint_eq(count, 2 * N + 1); /* measured on every release, every way */
	emul_destroy(e);
	sem_post(&d.may_exit);
	pthread_join(first, NULL);
	close(d.stopfd);
	sem_destroy(&d.ended);
	sem_destroy(&d.may_exit);
}
END_TEST

/* Submit a request on s that arrived long ago: due `ahead` ns from now. */
static void submit_due(struct emul *e, struct tio *t, struct spindle *s, uint64_t service, uint64_t ahead)
{
	memset(t, 0, sizeof(*t));
	t->io.r = (struct spindle_req){ .offset = 0, .length = 4096, .arrival_ns = stats_now() + ahead - service };
	t->io.sp = s;
	t->io.release = on_release;
	emul_submit(e, &t->io);
}

START_TEST(slack_serves_what_is_due_within_it_at_once)
{
	static struct spindle slow;
	static struct tio a, b, c, o[40];
	static struct spindle other;
	const uint64_t svc = 2000000000u; /* 2 s a read: 1% is 20 ms */
	disk(&slow, "ssd:read=1s,overhead=1s,channels=2");
	disk(&other, "hdd");
	struct emul *e, *v;
	/* taken from the process's setting when created, changed live */
	emul_set_default_slack(7000);
	ck_assert_int_eq(emul_create(&e), 0);
	ck_assert_uint_eq(emul_slack(e), 7000);
	ck_assert_int_eq(emul_create_virtual(&v), 0);
	ck_assert_uint_eq(emul_slack(v), 0); /* virtual time: exact */
	emul_destroy(v);
	/* slack 0: due 15 ms from now, released at its time, not before */
	emul_set_slack(e, 0);
	submit_due(e, &a, &slow, svc, 15000000);
	wait_released(1);
	ck_assert_uint_ge(a.released_at, a.io.r.done_ns);
	/* slack 2 s, but never more than 1% of the service (20 ms) early: due
	 * 15 ms from now, served at once; its emulated times are the model's */
	emul_set_slack(e, svc);
	ck_assert_uint_eq(emul_slack(e), svc);
	submit_due(e, &b, &slow, svc, 15000000);
	wait_released(2);
	ck_assert_uint_lt(b.released_at, b.io.r.done_ns);
	ck_assert_uint_ge(b.released_at + svc / 100, b.io.r.done_ns);
	ck_assert_uint_ge(b.io.r.done_ns, b.io.r.arrival_ns + svc);
	/* hdd requests of one slot under a 3 ms slack: never earlier than the
	 * bound, and each starts at the previous one's emulated completion
	 * however early that was released */
	emul_set_slack(e, 3000000);
	uint64_t x = 88172645463325252ull;
	for (unsigned i = 0; i < 40; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		submit(e, &o[i], &other, (x >> 8) % (60ull << 20) & ~4095ull);
	}
	wait_released(42);
	struct tio *one[40];
	for (unsigned i = 0; i < 40; i++) {
		uint64_t svc_i = o[i].io.r.done_ns - o[i].io.r.start_ns;
		one[i] = &o[i];
		ck_assert_uint_ge(o[i].released_at + svc_i / 100, o[i].io.r.done_ns);
	}
	qsort(one, 40, sizeof(one[0]), by_start);
	for (unsigned k = 1; k < 40; k++) {
		uint64_t prev = one[k - 1]->io.r.done_ns, arr = one[k]->io.r.arrival_ns;
		ck_assert_uint_eq(one[k]->io.r.start_ns, arr > prev ? arr : prev);
	}
	/* a far one is not taken by the slack: due in 1 s, more than 20 ms away */
	submit_due(e, &c, &slow, svc, 1000000000);
	double p50, p99;
	uint64_t count;
	emul_lateness(e, &p50, &p99, &count);
	ck_assert_uint_eq(count, 42);
	emul_destroy(e); /* does not wait for it */
	ck_assert_uint_eq(c.released_at, 0);
	emul_set_default_slack(0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("emul");
	TCase *tc = tcase_create("live");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, never_early_and_lateness_not_carried);
	tcase_add_test(tc, an_idle_disk_does_not_wait_for_a_far_deadline);
	tcase_add_test(tc, a_driver_keeps_the_clock_and_gives_it_back);
	tcase_add_test(tc, slack_serves_what_is_due_within_it_at_once);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
