/* test_members: the member backends under a volume, deterministic where
 * they can be: the fault filters' every kind (error, after, bad range healed
 * by a write, flaky, corrupt, errno, delay, the volatile cache and a power
 * cut) behaves as specified, and NBD members are chosen by name, refuse what
 * cannot work by name, and complete each I/O once.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stats/stats.h"
#include "tests/unit/unit_vol.h"

/* ---- the fault wrapper, kind by kind ---- */

START_TEST(test_fault_reads_fail_writes_succeed)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	static uint8_t b[8192];
	set_fault(v, 0, "error=read");
	ck_assert_int_eq(engine_write(v, b, 0, sizeof(b)), 0);
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), -EIO);
	vol_close(v);
}
END_TEST

START_TEST(test_fault_after_n)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	static uint8_t b[4096];
	set_fault(v, 0, "error=write,after=3");
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(engine_write(v, b, (uint64_t)i * 4096, 4096), 0);
	ck_assert_int_eq(engine_write(v, b, 0, 4096), -EIO);
	vol_close(v);
}
END_TEST

START_TEST(test_fault_bad_range_heals)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	static uint8_t b[16384];
	set_fault(v, 0, "bad=8K+8K");
	ck_assert_int_eq(engine_read(v, b, 0, 8192), 0);      /* before it */
	ck_assert_int_eq(engine_read(v, b, 4096, 8192), -EIO); /* touches it */
	/* single has no redundancy: the member is failed now; bring a fresh one */
	vol_close(v);
	v = mkvol("raid1", 2, 64 * K);
	set_fault(v, 0, "bad=8K+8K");
	set_fault(v, 1, "bad=8K+8K");
	ck_assert_int_eq(engine_write(v, b, 8192, 4096), 0);  /* heals the first half on both */
	ck_assert_int_eq(engine_read(v, b, 8192, 4096), 0);
	ck_assert_int_eq(engine_read(v, b, 12288, 4096), -EIO); /* the rest is still bad on both */
	vol_close(v);
}
END_TEST

START_TEST(test_fault_flaky_comes_back)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	static uint8_t b[4096];
	char err[256];
	/* two I/Os up, one down: a member that fails is failed by the engine,
	 * so watch the wrapper through the backend directly */
	struct member *m = v->slot[0];
	ck_assert_int_eq(member_fault_set(m, "flaky=2io/1io", err, sizeof(err)), 0);
	int want[] = { 0, 0, -EIO, 0, 0, -EIO };
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(member_pread(m, b, 4096, MEMBER_SIZE - 4096), want[i]);
	vol_close(v);
}
END_TEST

START_TEST(test_fault_corrupt)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	static uint8_t a[4096], b[4096];
	fill(a, sizeof(a), 3);
	ck_assert_int_eq(engine_write(v, a, 0, 4096), 0);
	set_fault(v, 0, "corrupt=1");
	ck_assert_int_eq(engine_read(v, b, 0, 4096), 0);
	size_t diff = 0;
	for (size_t i = 0; i < 4096; i++)
		diff += a[i] != b[i];
	ck_assert_uint_eq(diff, 1);
	set_fault(v, 0, "none");
	ck_assert_int_eq(engine_read(v, b, 0, 4096), 0);
	ck_assert(!memcmp(a, b, 4096));
	vol_close(v);
}
END_TEST

START_TEST(test_fault_enospc_fails_no_member)
{
	struct vol *v = mkvol("raid1", 2, 64 * K);
	static uint8_t b[4096];
	set_fault(v, 0, "error=write,errno=enospc");
	ck_assert_int_eq(engine_write(v, b, 0, 4096), -ENOSPC);
	ck_assert_str_eq(vol_slot_state(v, 0), "active");
	ck_assert_uint_eq(atomic_load(&v->failed), 0);
	vol_close(v);
}
END_TEST

START_TEST(test_fault_delay_counted)
{
	struct vol *v = mkvol("raid0", 2, 64 * K);
	static uint8_t b[4096];
	static struct stats_snap s;
	set_fault(v, 1, "rdelay=20ms");
	ck_assert_int_eq(engine_read(v, b, 64 * K, 4096), 0); /* on member 1 */
	stats_snapshot(v->slot[1]->stats, stats_now(), &s);
	ck_assert_uint_eq(s.reads, 1);
	/* the member's own counters carry the delay (a lower bound: never early) */
	ck_assert_uint_ge(s.read_ns, 20000000ull);
	vol_close(v);
}
END_TEST

START_TEST(test_fault_spec_errors)
{
	struct vol *v = mkvol("single", 1, 64 * K);
	char err[256];
	const char *bad[] = { "error=sometimes", "rate=2", "rate=0.5", "bad=8K", "flaky=1s/2io", "delay=fast", "nope=1",
			      "error", "errno=EPERM", "cache=fast", "cache_size=1M", "cache=volatile,cache_size=0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(member_fault_set(v->slot[0], bad[i], err, sizeof(err)) == -EINVAL, "%s accepted", bad[i]);
		ck_assert_msg(err[0], "%s: no message", bad[i]);
	}
	char d[256];
	set_fault(v, 0, "error=read,rate=0.25,seed=9,bad=1M+4K");
	member_fault_describe(v->slot[0], d, sizeof(d));
	ck_assert_str_eq(d, "error=read,rate=0.25,after=0,errno=eio,bad=1048576+4096,seed=9");
	vol_close(v);
}
END_TEST

/* ---- the volatile write-back cache (cache=volatile) ---- */

/* Each case runs ops on one wrapped memory member, 16 sectors of 4 KiB:
 * "wOFF+LEN/G" writes generation G (KiB), "f" flushes, "n" clears the cache
 * ("none"), "p" cuts the power, "c" closes cleanly. Before a "p" every
 * sector reads back the newest write (the cache is readable); at the end the
 * member below holds `below`, one character per sector ('0': never written). */
static const struct cache_case {
	const char *name, *spec, *ops, *below;
} cache_cases[] = {
	{ "acknowledged, not flushed: lost", "cache=volatile", "w0+8/1 p", "0000000000000000" },
	{ "flushed: survives", "cache=volatile", "w0+8/1 w8+8/2 f w16+4/3 p", "1122000000000000" },
	{ "a newer write after the flush: lost", "cache=volatile", "w0+8/1 f w4+8/2 p", "1100000000000000" },
	{ "overlapping writes reach the member in order", "cache=volatile", "w0+16/1 w4+8/2 w8+4/3 f p",
	  "1231000000000000" },
	{ "over cache_size the oldest go out", "cache=volatile,cache_size=16K", "w0+16/1 w16+16/2 w32+16/3 p",
	  "1111222200000000" },
	{ "a clean close writes the cache out", "cache=volatile", "w0+8/1 w12+4/2 c", "1102000000000000" },
	{ "cleared: what it held goes out, then writes go through", "cache=volatile", "w0+8/1 n w8+4/2 p",
	  "1120000000000000" },
	{ "no cache: a power cut loses nothing", "none", "w0+4/1 w60+4/2 p", "1000000000000002" },
};

static void cache_sector(uint8_t *p, int g)
{
	memset(p, g ? 'A' + g : 0, 4096);
}

START_TEST(test_fault_cache)
{
	const struct cache_case *c = &cache_cases[_i];
	char name[64], err[256];
	struct member m = { 0 }, raw = { 0 };
	static uint8_t buf[64 * K], want[64 * K];
	int view[16] = { 0 }, closed = 0;
	snprintf(name, sizeof(name), "mem:cache%d:1M", _i);
	ck_assert_int_eq(member_open(&m, name, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(member_fault_wrap(&m), 0);
	ck_assert_msg(member_fault_set(&m, c->spec, err, sizeof(err)) == 0, "%s: %s", c->spec, err);
	snprintf(name, sizeof(name), "mem:cache%d", _i);
	ck_assert_int_eq(member_open(&raw, name, 0, err, sizeof(err)), 0);
	for (const char *op = c->ops; *op; op += strcspn(op, " "), op += strspn(op, " ")) {
		if (*op == 'w') {
			unsigned off, len, g;
			ck_assert_int_eq(sscanf(op, "w%u+%u/%u", &off, &len, &g), 3);
			for (unsigned s = off / 4; s < (off + len) / 4; s++) {
				cache_sector(buf + (s - off / 4) * 4096, (int)g);
				view[s] = (int)g;
			}
			ck_assert_int_eq(member_pwrite(&m, buf, len * K, off * K), 0);
		} else if (*op == 'f') {
			ck_assert_int_eq(member_flush(&m), 0);
		} else if (*op == 'n') {
			ck_assert_int_eq(member_fault_set(&m, "none", err, sizeof(err)), 0);
		} else if (*op == 'p') {
			member_fault_powercut(&m);
			continue; /* no I/O completes any more: nothing to read */
		} else if (*op == 'c') {
			member_close(&m);
			closed = 1;
			continue;
		}
		/* the cache is readable: every sector reads its newest write */
		ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 0), 0);
		for (unsigned s = 0; s < 16; s++)
			cache_sector(want + s * 4096, view[s]);
		ck_assert_msg(!memcmp(buf, want, sizeof(buf)), "%s: after '%.12s' a read misses a cached write", c->name, op);
	}
	ck_assert_int_eq(member_pread(&raw, buf, sizeof(buf), 0), 0);
	for (unsigned s = 0; s < 16; s++) {
		cache_sector(want, c->below[s] - '0');
		ck_assert_msg(!memcmp(buf + s * 4096, want, 4096), "%s: sector %u below is not '%c'", c->name, s,
			      c->below[s]);
	}
	if (!closed)
		member_close(&m);
	member_close(&raw);
}
END_TEST

/* A disk that completes a batch newest first (as NCQ may): memory, with the
 * writes of one commit applied in reverse order. */
struct rev_disk {
	uint8_t data[64 * K];
	struct member_io *q;
};

static void rev_queue(struct member *m, struct member_io *io)
{
	struct rev_disk *d = m->priv;
	io->next = d->q; /* a stack: commit runs it newest first */
	d->q = io;
}

static void rev_commit(struct member *m)
{
	struct rev_disk *d = m->priv;
	struct member_io *io = d->q;
	d->q = NULL;
	for (struct member_io *next; io; io = next) {
		next = io->next;
		io->res = 0;
		if (io->op != MEMBER_FLUSH) {
			uint64_t at = io->off;
			for (unsigned i = 0; i < io->niov; i++, at += io->iov[i - 1].iov_len)
				if (io->op == MEMBER_WRITE)
					memcpy(d->data + at, io->iov[i].iov_base, io->iov[i].iov_len);
				else
					memcpy(io->iov[i].iov_base, d->data + at, io->iov[i].iov_len);
		}
		io->done(io);
	}
}

static void rev_close(struct member *m)
{
	(void)m;
}

static const struct member_ops rev_ops = {
	.name = "reverse", .queue = rev_queue, .commit = rev_commit, .close = rev_close,
};

/* Writes of one range never go out together: the disk below could land them
 * in either order. */
START_TEST(test_fault_cache_order)
{
	static struct rev_disk d;
	static uint8_t a[8 * K], b[8 * K];
	char err[256];
	struct member m = { .ops = &rev_ops, .priv = &d, .size = sizeof(d.data), .align = 1, .caps = MEMBER_CAN_FLUSH };
	ck_assert_int_eq(member_fault_wrap(&m), 0);
	ck_assert_msg(member_fault_set(&m, "cache=volatile", err, sizeof(err)) == 0, "%s", err);
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	ck_assert_int_eq(member_pwrite(&m, a, sizeof(a), 0), 0);
	ck_assert_int_eq(member_pwrite(&m, b, sizeof(b), 4 * K), 0);
	ck_assert_int_eq(member_pwrite(&m, a, 4 * K, 16 * K), 0); /* apart: may go out with either */
	ck_assert_int_eq(member_flush(&m), 0);
	ck_assert_msg(!memcmp(d.data, a, 4 * K) && !memcmp(d.data + 4 * K, b, sizeof(b)),
		      "an older write landed over a newer one");
	ck_assert(!memcmp(d.data + 16 * K, a, 4 * K));
	member_close(&m);
}
END_TEST

/* Through the engine: a parity volume on cached members reads what it was
 * told, the members hold nothing until a flush, and then a check agrees. */
START_TEST(test_fault_cache_volume)
{
	struct vol *v = mkvol("raid5", 4, 64 * K);
	static uint8_t a[384 * K], b[384 * K], z[64 * K];
	uint64_t bad = 0, skipped = 0;
	char err[256];
	struct member raw = { 0 };
	for (unsigned i = 0; i < 4; i++)
		set_fault(v, i, "cache=volatile,cache_size=1M");
	fill(a, sizeof(a), 11);
	ck_assert_int_eq(engine_write(v, a, 0, sizeof(a)), 0);
	ck_assert_int_eq(engine_read(v, b, 0, sizeof(b)), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert_int_eq(member_open(&raw, v->slot[0]->path, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(member_pread(&raw, b, sizeof(z), v->data_offset), 0);
	ck_assert_msg(!memcmp(b, z, sizeof(z)), "a member holds data that was never flushed");
	ck_assert_int_eq(engine_flush(v), 0);
	ck_assert_int_eq(member_pread(&raw, b, sizeof(z), v->data_offset), 0);
	ck_assert_msg(!memcmp(b, a, sizeof(z)), "a flush did not reach the member"); /* chunk 0 is on member 0 */
	member_close(&raw);
	ck_assert_int_eq(engine_resync(v, 0, 0, &bad, &skipped), 0);
	ck_assert_uint_eq(bad, 0);
	char d[256];
	member_fault_describe(v->slot[1], d, sizeof(d));
	ck_assert_str_eq(d, "cache=volatile,cache_size=1M");
	vol_close(v);
}
END_TEST

/* NBD members: names pick the backend; a server that is not there is a clear
 * error naming the URI, never a member create could make. */
START_TEST(test_nbd_names_and_refusals)
{
	ck_assert_ptr_eq(member_backend("nbd://127.0.0.1:1/x"), &member_nbd_ops);
	ck_assert_ptr_eq(member_backend("nbd+unix:///e?socket=/tmp/s"), &member_nbd_ops);
	ck_assert_ptr_eq(member_backend("nbds://h/e"), &member_nbd_ops);
	ck_assert_ptr_eq(member_backend("nbdfile.img"), &member_file_ops); /* a file named nbd... */
	ck_assert_ptr_eq(member_backend("mem:a:1M"), &member_mem_ops);
	struct member m;
	char err[512];
	const char *gone = "nbd+unix:///?socket=/nonexistent/fsvol-test.sock";
	int r = member_open(&m, gone, 1, err, sizeof(err));
	ck_assert_int_eq(r, -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(err, gone));
	ck_assert_ptr_nonnull(strstr(err, "cannot connect"));
	r = member_open(&m, "nbd://", 1, err, sizeof(err));
	ck_assert_int_lt(r, 0);
	ck_assert_ptr_nonnull(strstr(err, "nbd://"));
	/* create cannot make an export */
	r = member_create(gone, 1 << 20, err, sizeof(err));
	ck_assert_int_eq(r, -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "nbd"));
}
END_TEST

/* An NBD member completes each I/O exactly once (its event thread does,
 * for synchronous calls too), against a real nbdkit memory export. */
static atomic_int nbd_done_calls;
static void nbd_count_done(struct member_io *io)
{
	(void)io;
	atomic_fetch_add(&nbd_done_calls, 1);
}

START_TEST(test_nbd_completes_once)
{
	char dir[] = "/tmp/fsvol-nbdt.XXXXXX", cmd[512], uri[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "nbdkit -U %s/s -P %s/p memory 1M 2>/dev/null", dir, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_nbd_completes_once: nbdkit not available, skipped\n");
		rmdir(dir);
		return;
	}
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s/s", dir);
	struct member m;
	char err[512];
	ck_assert_int_eq(member_open(&m, uri, 1, err, sizeof(err)), 0);
	static char buf[4096] __attribute__((aligned(4096)));
	memset(buf, 0x5a, sizeof(buf));
	struct iovec iov = { buf, sizeof(buf) };
	/* twice: the second on a handle whose event thread already runs (the
	 * synchronous calls below take the same way since issue 19) */
	for (int pass = 0; pass <= 1; pass++) {
		atomic_store(&nbd_done_calls, 0);
		struct member_io io = { .op = MEMBER_WRITE, .off = 8192, .len = sizeof(buf), .iov = &iov, .niov = 1,
					.done = nbd_count_done };
		m.ops->queue(&m, &io);
		m.ops->commit(&m);
		for (int i = 0; i < 5000 && !atomic_load(&nbd_done_calls); i++)
			usleep(1000);
		usleep(20000); /* a second completion would come now */
		ck_assert_int_eq(atomic_load(&nbd_done_calls), 1);
		ck_assert_int_eq(io.res, 0);
	}
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 8192), 0);
	ck_assert_int_eq(buf[100], 0x5a);
	member_close(&m);
	snprintf(cmd, sizeof(cmd), "kill $(cat %s/p); rm -rf %s", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *members_suite(void)
{
	Suite *s = suite_create("members");
	TCase *t = tcase_create("faults");
	tcase_add_test(t, test_fault_reads_fail_writes_succeed);
	tcase_add_test(t, test_fault_after_n);
	tcase_add_test(t, test_fault_bad_range_heals);
	tcase_add_test(t, test_fault_flaky_comes_back);
	tcase_add_test(t, test_fault_corrupt);
	tcase_add_test(t, test_fault_enospc_fails_no_member);
	tcase_add_test(t, test_fault_delay_counted);
	tcase_add_test(t, test_fault_spec_errors);
	tcase_add_loop_test(t, test_fault_cache, 0, sizeof(cache_cases) / sizeof(cache_cases[0]));
	tcase_add_test(t, test_fault_cache_order);
	tcase_add_test(t, test_fault_cache_volume);
	suite_add_tcase(s, t);
	t = tcase_create("nbd");
	tcase_add_test(t, test_nbd_names_and_refusals);
	tcase_add_test(t, test_nbd_completes_once);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(members_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
