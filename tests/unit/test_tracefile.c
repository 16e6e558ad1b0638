/* tracefile: each format read from a real file, auto-detected and forced:
 * good traces give the requests they say (op, offset, length, time, device,
 * service time), bad lines fail the load naming FILE:LINE and what was
 * expected, and nothing is returned on failure. */
#include "fsvol/trace/tracefile.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void put(const char *text)
{
	strcpy(path, "/tmp/test_tracefile.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Load text as fmt; the result and the message. */
static int load(const char *text, enum tracefile_fmt fmt, struct tracefile *t, char *err, size_t len)
{
	put(text);
	int r = tracefile_load(path, fmt, t, err, len);
	unlink(path);
	return r;
}

struct want {
	uint64_t t_ns, off, len;
	int64_t service_ns;
	uint32_t dev, line;
	uint8_t op;
};

static void check_rec(const struct tracefile_rec *r, const struct want *w)
{
	ck_assert_uint_eq(r->t_ns, w->t_ns);
	ck_assert_uint_eq(r->off, w->off);
	ck_assert_uint_eq(r->len, w->len);
	ck_assert_int_eq(r->service_ns, w->service_ns);
	ck_assert_uint_eq(r->dev, w->dev);
	ck_assert_uint_eq(r->line, w->line);
	ck_assert_uint_eq(r->op, w->op);
}

static const struct good {
	const char *name;
	enum tracefile_fmt detected;
	const char *text;
	size_t n;
	uint64_t max_end;
	struct want first, last;
} good[] = {
	{ "fio2", TRACEFILE_FIO2,
	  "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 4096 8192\n"
	  "/dev/sdb wait 1500 0\n\n/dev/sdb read 0 512\n/dev/sdb sync 0 0\n/dev/sdb trim 1048576 65536\n/dev/sdb close\n",
	  4, 1048576 + 65536,
	  { 0, 4096, 8192, -1, 0, 4, TRACEFILE_WRITE }, { 1500000, 1048576, 65536, -1, 0, 9, TRACEFILE_TRIM } },
	{ "fio3", TRACEFILE_FIO3,
	  "fio version 3 iolog\n0 a add\n0 b add\n0 a open\n0 b open\n5 a read 0 4096\n7 b write 8192 4096\n"
	  "12 a datasync 0 0\n13 a close\n",
	  3, 12288, /* microseconds, as fio 3.33 writes them */
	  { 0, 0, 4096, -1, 0, 6, TRACEFILE_READ }, { 7000, 0, 0, -1, 0, 8, TRACEFILE_SYNC } },
	{ "blkparse", TRACEFILE_BLKPARSE,
	  "  8,0    3        1     0.000000000   697  Q  WS 1000 + 8 [jbd2/sda1-8]\n"
	  "  8,0    3        2     0.000001000   697  G  WS 1000 + 8 [jbd2/sda1-8]\n"
	  "  8,0    3        3     0.000210000     0  C  WS 1000 + 8 [0]\n"
	  "  8,16   1        1     0.002500000   698  Q   R 64 + 16 [dd]\n"
	  "  8,0    1        2     0.003000000   698  Q FWS [kworker/1:1]\n"
	  "  8,0    1        3     0.004000000   698  Q   D 2048 + 2048 [fstrim]\n"
	  "\nCPU0 (8,0):\n Reads Queued:           0,        0KiB\n",
	  4, (2048 + 2048) * 512ull,
	  { 0, 512000, 4096, -1, 0, 1, TRACEFILE_WRITE }, { 4000000, 1048576, 1048576, -1, 0, 6, TRACEFILE_TRIM } },
	{ "blkparse-C", TRACEFILE_BLKPARSE,
	  "  8,0    0        1     1.500000000     0  C   R 8 + 8 [0]\n  8,0    0        2     1.600000000     0  C   W 16 + 8 [0]\n",
	  2, 24 * 512,
	  { 0, 4096, 4096, -1, 0, 1, TRACEFILE_READ }, { 100000000, 8192, 4096, -1, 0, 2, TRACEFILE_WRITE } },
	{ "msr", TRACEFILE_MSR,
	  "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
	  "128166372003061629,hm,1,Read,3218653184,4096,2313\n128166372016382155,hm,1,Write,3219292160,16384,1000\n",
	  2, 3219292160ull + 16384,
	  { 0, 3218653184ull, 4096, 231300, 1, 2, TRACEFILE_READ },
	  { (128166372016382155ull - 128166372003061629ull) * 100, 3219292160ull, 16384, 100000, 1, 3, TRACEFILE_WRITE } },
	{ "disksim", TRACEFILE_DISKSIM,
	  "13.191135\t30\t0\t5\t1\n17.829285\t20\t576560\t6\t0\n",
	  2, (576560 + 6) * 512ull,
	  { 0, 0, 2560, -1, 30, 1, TRACEFILE_READ }, { 4638150, 576560 * 512ull, 3072, -1, 20, 2, TRACEFILE_WRITE } },
	/* Windows line ends, as the MSR files came */
	{ "msr-crlf", TRACEFILE_MSR,
	  "128166372003061629,hm,0,Write,8192,512,10\r\n128166372003061729,hm,0,Read,0,4096,20\r\n",
	  2, 8704,
	  { 0, 8192, 512, 1000, 0, 1, TRACEFILE_WRITE }, { 10000, 0, 4096, 2000, 0, 2, TRACEFILE_READ } },
	/* tf_valid.c (the validation work) behind the same dispatcher */
	{ "valid", TRACEFILE_VALID,
	  "R Hit    1975456   4  15362.00000  56074.00000\nW Miss 100 8 1000.5 0.0\n",
	  2, 1975456 * 512ull + 2048,
	  { 0, 1975456 * 512ull, 2048, 15362000, 0, 1, TRACEFILE_READ },
	  { 15362000 + 56074000, 51200, 4096, 1000500, 0, 2, TRACEFILE_WRITE } },
};

START_TEST(test_good)
{
	const struct good *g = &good[_i];
	struct tracefile t;
	char err[256];
	/* detected, then forced */
	for (int forced = 0; forced < 2; forced++) {
		int r = load(g->text, forced ? g->detected : TRACEFILE_AUTO, &t, err, sizeof(err));
		ck_assert_msg(r == 0, "%s: %s", g->name, err);
		ck_assert_int_eq(t.fmt, g->detected);
		ck_assert_uint_eq(t.n, g->n);
		ck_assert_uint_eq(t.max_end, g->max_end);
		check_rec(&t.rec[0], &g->first);
		check_rec(&t.rec[t.n - 1], &g->last);
		tracefile_free(&t);
	}
}
END_TEST

static const struct bad {
	const char *name;
	enum tracefile_fmt fmt;
	const char *text;
	const char *msg; /* expected in the error, after "PATH" */
} bad[] = {
	{ "unknown format", TRACEFILE_AUTO, "hello world\n", ":1: unknown trace format" },
	{ "empty", TRACEFILE_AUTO, "\n\n", ": empty" },
	{ "fio: no header", TRACEFILE_FIO2, "/dev/sdb add\n", ":1: expected \"fio version 2 iolog\"" },
	{ "fio2: truncated", TRACEFILE_AUTO, "fio version 2 iolog\nf add\nf read 4096\n", ":3: expected OFFSET LENGTH" },
	{ "fio2: bad action", TRACEFILE_AUTO, "fio version 2 iolog\nf add\nf frob 0 1\n", ":3: unknown action \"frob\"" },
	{ "fio2: not added", TRACEFILE_AUTO, "fio version 2 iolog\nf add\ng read 0 512\n", ":3: file \"g\" was not added" },
	{ "fio2: zero length", TRACEFILE_AUTO, "fio version 2 iolog\nf add\nf write 0 0\n", ":3: a write of 0 bytes" },
	{ "fio3: no time", TRACEFILE_AUTO, "fio version 3 iolog\n0 f add\nf read 0 512\n", ":3: expected a timestamp" },
	{ "fio3: junk after", TRACEFILE_AUTO, "fio version 3 iolog\n0 f add\n1 f read 0 512 9\n", ":3: expected OFFSET LENGTH" },
	{ "fio: only files", TRACEFILE_AUTO, "fio version 3 iolog\n0 f add\n", ": no requests" },
	{ "blkparse: truncated", TRACEFILE_AUTO,
	  "  8,0 3 1 0.000000000 697 Q WS 1000 + 8 [a]\n  8,0 3 2 0.000001000 697 Q WS 1000 +\n", ":2: expected SECTOR + COUNT" },
	{ "blkparse: short event", TRACEFILE_AUTO,
	  "  8,0 3 1 0.000000000 697 Q WS 1000 + 8 [a]\n  8,0 3 2 0.5\n", ":2: expected MAJ,MIN" },
	{ "blkparse: garbage", TRACEFILE_AUTO,
	  "  8,0 3 1 0.000000000 697 Q WS 1000 + 8 [a]\nnonsense here\n", ":2: expected an event" },
	{ "msr: bad type", TRACEFILE_AUTO,
	  "128166372003061629,hm,1,Read,0,4096,2313\n128166372003061630,hm,1,Erase,0,4096,2313\n", ":2: expected Type Read or Write" },
	{ "msr: truncated", TRACEFILE_AUTO,
	  "128166372003061629,hm,1,Read,0,4096,2313\n128166372003061630,hm,1,Read,0,4096\n", ":2: expected Offset,Size,ResponseTime" },
	{ "msr: no host", TRACEFILE_MSR, "128166372003061629,,1,Read,0,4096,2313\n", ":1: expected a Hostname" },
	{ "disksim: truncated", TRACEFILE_AUTO, "0.5 0 100 8 1\n1.0 0 200 8\n", ":2: expected TIME_MS DEVNO BLKNO BCOUNT FLAGS" },
	{ "disksim: zero", TRACEFILE_AUTO, "0.5 0 100 0 1\n", ":1: a request of 0 blocks" },
	{ "disksim: forced on fio", TRACEFILE_DISKSIM, "fio version 2 iolog\n", ":1: expected TIME_MS" },
	{ "msr: forced on disksim", TRACEFILE_MSR, "0.5 0 100 8 1\n", ":1: expected a Timestamp" },
	{ "valid: truncated", TRACEFILE_AUTO, "R Hit 1975456 4 15362.0 1.0\nR Hit 1975456 4 15362.0\n", ":2: too few fields" },
};

START_TEST(test_bad)
{
	const struct bad *b = &bad[_i];
	struct tracefile t;
	char err[256], want[300];
	int r = load(b->text, b->fmt, &t, err, sizeof(err));
	ck_assert_msg(r == -EINVAL, "%s: loaded (%d)", b->name, r);
	snprintf(want, sizeof(want), "%s%s", path, b->msg);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s: got \"%s\", want \"%s...\"", b->name, err, want);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_ptr_null(t.rec);
}
END_TEST

START_TEST(test_unreadable)
{
	struct tracefile t;
	char err[256];
	ck_assert_int_eq(tracefile_load("/nonexistent/trace", TRACEFILE_AUTO, &t, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/trace: No such file or directory");
}
END_TEST

START_TEST(test_names)
{
	enum tracefile_fmt f;
	for (unsigned i = 1; i < TRACEFILE_FMT_COUNT; i++) {
		ck_assert_int_eq(tracefile_fmt_parse(tracefile_fmt_name((enum tracefile_fmt)i), &f), 0);
		ck_assert_int_eq(f, i);
	}
	ck_assert_int_eq(tracefile_fmt_parse("fio", &f), 0);
	ck_assert_int_eq(tracefile_fmt_parse("csv", &f), -EINVAL);
}
END_TEST

START_TEST(test_push_grows)
{
	struct tracefile t = { 0 };
	for (uint64_t i = 0; i < 5000; i++) {
		struct tracefile_rec r = { .off = i * 4096, .len = 4096 };
		ck_assert_int_eq(tracefile_push(&t, &r), 0);
	}
	ck_assert_uint_eq(t.n, 5000);
	ck_assert_uint_eq(t.max_end, 5000 * 4096);
	ck_assert_uint_eq(t.rec[4999].off, 4999 * 4096);
	tracefile_free(&t);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracefile");
	TCase *tc = tcase_create("tracefile");
	tcase_add_loop_test(tc, test_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_push_grows);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
