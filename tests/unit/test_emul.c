/* emul, live: completions never come before their emulated time, and a
 * disk's next request starts when the previous one completed in emulated time
 * (however late the release); a request for an idle disk is released at its own time even
 * while the timer thread sleeps towards a far deadline of another disk (the
 * push wakes it), while pushes for a busy disk need no wake-up to be served in
 * turn; destroying an emulator with a far deadline pending does not wait for it.
 * Real spindles, the real timer thread; nothing here waits on a sleep. */
#include <check.h>
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/model/emul.h"
#include "fsvol/model/spindle.h"
#include "stats/stats.h"

struct tio {
	struct emul_io io;
	uint64_t released_at;   /* real time of the release, 0: not yet */
};

static sem_t released;
static atomic_uint nreleased;

static void on_release(struct emul_io *io)
{
	struct tio *t = (struct tio *)io;
	t->released_at = stats_now();
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

int main(void)
{
	Suite *su = suite_create("emul");
	TCase *tc = tcase_create("live");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, never_early_and_lateness_not_carried);
	tcase_add_test(tc, an_idle_disk_does_not_wait_for_a_far_deadline);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
