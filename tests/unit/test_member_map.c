/* member_map: a tmpfs member read or written through its mapping sees what
 * preadv and pwritev see, never allocates a hole (a sparse member stays sparse however much
 * of it is read), forgets punched pages, and turns a file shrunk under it
 * into -EIO, not a SIGBUS; the same through the file backend's member_pread. */
#include "fsvol/members/member.h"
#include "fsvol/members/member_map.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#define SZ (4u << 20)
#define PG 4096u

static char path[64];

/* A sparse tmpfs file of SZ bytes; skips (returns -1) where /dev/shm is not tmpfs. */
static int shm_file(void)
{
	struct statfs s;
	if (statfs("/dev/shm", &s) || s.f_type != TMPFS_MAGIC)
		return -1;
	snprintf(path, sizeof(path), "/dev/shm/test_member_map.%d", (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, SZ), 0);
	return fd;
}

static long blocks(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	return (long)st.st_blocks;
}

static int map_read(struct member_map *mm, void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { buf, len };
	return member_map_read(mm, &iov, 1, off, len);
}

START_TEST(test_map_pages)
{
	int fd = shm_file();
	if (fd < 0)
		return;
	static uint8_t w[2 * PG], r[2 * PG];
	memset(w, 0xa5, sizeof(w));
	ck_assert_int_eq(pwrite(fd, w, PG, 1u << 20), PG); /* data before the mapping: found by SEEK_DATA */
	struct member_map *mm;
	member_map_open(&mm, fd, SZ);
	ck_assert_ptr_nonnull(mm);
	ck_assert_int_eq(map_read(mm, r, PG, 1u << 20), 1);
	ck_assert_mem_eq(r, w, PG);
	/* a hole, a range half hole, beyond the end: the caller reads them */
	ck_assert_int_eq(map_read(mm, r, PG, 0), 0);
	ck_assert_int_eq(map_read(mm, r, 2 * PG, (1u << 20) - PG), 0);
	ck_assert_int_eq(map_read(mm, r, PG, SZ), 0);
	ck_assert_int_eq(map_read(mm, r, 2 * PG, SZ - PG), 0);
	ck_assert_int_eq(blocks(fd), PG / 512); /* no hole was touched */
	/* a write: into pages that hold data only (a hole goes to pwritev) */
	static uint8_t x[PG];
	memset(x, 0x3c, sizeof(x));
	struct iovec xi = { x, PG };
	ck_assert_int_eq(member_map_write(mm, &xi, 1, 1u << 20, PG), 1);
	ck_assert_int_eq(pread(fd, r, PG, 1u << 20), PG);
	ck_assert_mem_eq(r, x, PG);
	ck_assert_int_eq(member_map_write(mm, &xi, 1, 0, PG), 0);
	ck_assert_int_eq(blocks(fd), PG / 512);
	/* a write after the open: its pages are known once it completed */
	ck_assert_int_eq(pwrite(fd, w, 2 * PG, 2u << 20), 2 * PG);
	ck_assert_int_eq(map_read(mm, r, 2 * PG, 2u << 20), 0);
	member_map_written(mm, 2u << 20, 2 * PG);
	ck_assert_int_eq(map_read(mm, r, 2 * PG, 2u << 20), 1);
	ck_assert_mem_eq(r, w, 2 * PG);
	/* punched: forgotten (a partly punched page keeps its data) */
	member_map_punched(mm, (2u << 20) + 100, PG);
	ck_assert_int_eq(map_read(mm, r, PG, 2u << 20), 1);
	ck_assert_int_eq(map_read(mm, r, PG, (2u << 20) + PG), 1);
	member_map_punched(mm, 2u << 20, 2 * PG);
	ck_assert_int_eq(map_read(mm, r, PG, 2u << 20), 0);
	ck_assert_int_eq(map_read(mm, r, PG, (2u << 20) + PG), 0);
	/* shrunk under the mapping: -EIO (a SIGBUS caught), then never again */
	ck_assert_int_eq(ftruncate(fd, 1u << 19), 0);
	ck_assert_int_eq(map_read(mm, r, PG, 1u << 20), -EIO);
	ck_assert_int_eq(map_read(mm, r, PG, 1u << 20), 0);
	ck_assert_int_eq(member_map_write(mm, &xi, 1, 1u << 20, PG), 0);
	member_map_close(mm);
	close(fd);
	unlink(path);
}
END_TEST

/* The bitmap against a byte per page: random ranges written and punched,
 * every read through the mapping taken exactly when all its pages hold data. */
START_TEST(test_map_bitmap_model)
{
	int fd = shm_file();
	if (fd < 0)
		return;
	enum { PAGES = SZ / PG };
	static uint8_t model[PAGES], buf[64 * PG];
	memset(buf, 1, sizeof(buf));
	for (uint64_t off = 0; off < SZ; off += sizeof(buf)) /* dense: any page may be mapped */
		ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), (off_t)off), (ssize_t)sizeof(buf));
	struct member_map *mm;
	member_map_open(&mm, fd, SZ);
	ck_assert_ptr_nonnull(mm);
	memset(model, 1, sizeof(model));
	srand(11);
	for (int step = 0; step < 2000; step++) {
		uint64_t first = (uint64_t)rand() % PAGES, n = 1 + (uint64_t)rand() % 200;
		if (first + n > PAGES)
			n = PAGES - first;
		if (rand() % 3 == 0) {
			member_map_written(mm, first * PG, n * PG);
			memset(model + first, 1, n);
		} else if (rand() % 2) {
			member_map_punched(mm, first * PG, n * PG);
			memset(model + first, 0, n);
		}
		uint64_t rf = (uint64_t)rand() % PAGES, rn = 1 + (uint64_t)rand() % 64;
		if (rf + rn > PAGES)
			rn = PAGES - rf;
		int all = 1;
		for (uint64_t i = rf; i < rf + rn; i++)
			all &= model[i];
		ck_assert_int_eq(map_read(mm, buf, rn * PG, rf * PG), all);
	}
	member_map_close(mm);
	close(fd);
	unlink(path);
}
END_TEST

/* Through the file backend: what a volume's member reads do. */
START_TEST(test_file_member_sparse)
{
	int fd = shm_file();
	if (fd < 0)
		return;
	struct member m;
	memset(&m, 0, sizeof(m));
	char err[256];
	ck_assert_int_eq(member_open(&m, path, 0, err, sizeof(err)), 0);
	static uint8_t buf[64 * 1024], pat[64 * 1024], zero[64 * 1024];
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 1);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t off = 0; off < SZ; off += sizeof(buf)) {
			ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), off), 0);
			ck_assert_mem_eq(buf, zero, sizeof(buf));
		}
	ck_assert_int_eq(blocks(fd), 0); /* read twice, still sparse */
	ck_assert_int_eq(member_pwrite(&m, pat, sizeof(pat), 1u << 20), 0);
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 1u << 20), 0);
		ck_assert_mem_eq(buf, pat, sizeof(buf));
		ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), (1u << 20) + sizeof(buf)), 0);
		ck_assert_mem_eq(buf, zero, sizeof(buf));
	}
	ck_assert_int_eq(blocks(fd), (long)(sizeof(pat) / 512));
	/* rewritten in place (through the mapping): read back by preadv too */
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] ^= 0x5a;
	ck_assert_int_eq(member_pwrite(&m, pat, sizeof(pat), 1u << 20), 0);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 1u << 20), (ssize_t)sizeof(buf));
	ck_assert_mem_eq(buf, pat, sizeof(buf));
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 1u << 20), 0);
	ck_assert_mem_eq(buf, pat, sizeof(buf));
	ck_assert_int_eq(m.ops->zero(&m, 1u << 20, sizeof(pat)), 0);
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 1u << 20), 0);
	ck_assert_mem_eq(buf, zero, sizeof(buf));
	ck_assert_int_eq(blocks(fd), 0);
	/* shrunk by someone else: the read fails, the process lives */
	ck_assert_int_eq(member_pwrite(&m, pat, sizeof(pat), 2u << 20), 0);
	ck_assert_int_eq(ftruncate(fd, 1u << 20), 0);
	ck_assert_int_eq(member_pread(&m, buf, sizeof(buf), 2u << 20), -EIO);
	member_close(&m);
	close(fd);
	unlink(path);
}
END_TEST

static Suite *map_suite(void)
{
	Suite *s = suite_create("member_map");
	TCase *t = tcase_create("tmpfs");
	tcase_add_test(t, test_map_pages);
	tcase_add_test(t, test_map_bitmap_model);
	tcase_add_test(t, test_file_member_sparse);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(map_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
