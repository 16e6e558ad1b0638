/* test_ppl: the partial parity log (fsvol/core/ppl.c, docs/format.md
 * "Partial parity log"): the record codec (round trip, every corrupted byte
 * refused, bad fields named), and its replay on memory members: a stripe
 * whose parity write never landed gets its parity back from the log, whole
 * and degraded (the missing member's chunk, which nobody wrote, reads as it
 * was), with no resync owed. The write journal's record codec too
 * (journal.c); its replay is 77-journal.sh's.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/engine.h"
#include "fsvol/core/journal.h"
#include "fsvol/core/ppl.h"
#include "tests/unit/unit_vol.h"

#define CHUNK (16 * K)

static struct ppl_rec sample(void)
{
	struct ppl_rec r = { .seq = 77, .stripe = 5, .span_lo = 4096, .span_hi = 12288, .blocks = 3,
			     .pp_crc = 0xdeadbeef, .ndata = 3 };
	for (unsigned i = 0; i < 16; i++)
		r.volume_uuid[i] = (uint8_t)(i * 7 + 1);
	r.lo[1] = 4096;
	r.hi[1] = 12288;
	return r;
}

START_TEST(test_codec_roundtrip)
{
	uint8_t buf[PPL_BLOCK];
	struct ppl_rec r = sample(), d;
	char err[128];
	ppl_rec_encode(&r, buf);
	ck_assert_msg(ppl_rec_decode(buf, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(memcmp(&r, &d, sizeof(r)), 0);
}
END_TEST

START_TEST(test_codec_every_byte)
{
	uint8_t buf[PPL_BLOCK];
	struct ppl_rec r = sample(), d;
	char err[128];
	ppl_rec_encode(&r, buf);
	for (unsigned i = 0; i < PPL_BLOCK; i++) {
		buf[i] ^= 0x40;
		ck_assert_msg(ppl_rec_decode(buf, &d, err, sizeof(err)) == -EINVAL, "byte %u flipped: accepted", i);
		buf[i] ^= 0x40;
	}
}
END_TEST

START_TEST(test_codec_fields)
{
	uint8_t buf[PPL_BLOCK];
	struct ppl_rec r = sample(), d;
	char err[128];
	r.span_hi = r.span_lo; /* empty span */
	ppl_rec_encode(&r, buf);
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad span"));
	r = sample();
	r.blocks = 5; /* partial parity of the wrong size */
	ppl_rec_encode(&r, buf);
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad blocks"));
	r = sample();
	r.lo[2] = 0;
	r.hi[2] = 16384; /* outside the span */
	ppl_rec_encode(&r, buf);
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad column 2"));
	r = sample();
	r.blocks = 1; /* a full-stripe record: no partial parity */
	ppl_rec_encode(&r, buf);
	ck_assert_msg(ppl_rec_decode(buf, &d, err, sizeof(err)) == 0, "%s", err);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no record"));
}
END_TEST

static struct jnl_rec jsample(void)
{
	struct jnl_rec r = { .seq = 9, .stripe = 3, .blocks = 1 + 3, .payload_crc = 0x12345678, .nwrites = 2 };
	for (unsigned i = 0; i < 16; i++)
		r.volume_uuid[i] = (uint8_t)(i + 3);
	r.w[0].slot = 1;
	r.w[0].off = 3 * 16384;
	r.w[0].len = 8192;
	r.w[1].slot = 4;
	r.w[1].off = 3 * 16384;
	r.w[1].len = 4096;
	return r;
}

START_TEST(test_journal_codec)
{
	uint8_t buf[PPL_BLOCK];
	struct jnl_rec r = jsample(), d;
	char err[128];
	jnl_rec_encode(&r, buf);
	ck_assert_msg(jnl_rec_decode(buf, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(memcmp(&r, &d, sizeof(r)), 0);
	for (unsigned i = 0; i < PPL_BLOCK; i++) {
		buf[i] ^= 0x01;
		ck_assert_msg(jnl_rec_decode(buf, &d, err, sizeof(err)) == -EINVAL, "byte %u flipped: accepted", i);
		buf[i] ^= 0x01;
	}
	r.blocks = 3; /* the payload is 3 blocks, the header one more */
	jnl_rec_encode(&r, buf);
	ck_assert_int_eq(jnl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad blocks"));
	r = jsample();
	r.w[1].len = 100; /* not whole blocks */
	jnl_rec_encode(&r, buf);
	ck_assert_int_eq(jnl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad write 1"));
	r = jsample();
	r.nwrites = 0;
	jnl_rec_encode(&r, buf);
	ck_assert_int_eq(jnl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad nwrites"));
}
END_TEST

/* Offsets and lengths at the edges of 64 bits (issue 30 A2: a record with
 * good checksums, offset 2^64 - 1 MiB and 1 MiB + 4 KiB, passed the bound
 * off + len <= data_size because the sum wrapped to 4096, and was written
 * over the superblock). A write must end at or below 2^63 (an off_t). */
START_TEST(test_journal_wrap)
{
	static const struct {
		uint64_t off, len;
		int ok;
	} cases[] = {
		{ (uint64_t)0 - (1u << 20), (1u << 20) + 4096, 0 }, /* wraps to 4096 */
		{ (uint64_t)0 - 4096, 4096, 0 },                    /* wraps to 0 */
		{ (uint64_t)0 - (2u << 20), 1u << 20, 0 },          /* data_offset + off + len wraps */
		{ 1ull << 63, 4096, 0 },
		{ (1ull << 63) - 4096, 4096, 0 },                   /* ends at 2^63: one past */
		{ (1ull << 63) - 8192, 4096, 1 },                   /* ends at 2^63 - 4096 */
		{ 0, (1ull << 40) + 4096, 0 },                      /* longer than any write */
		{ (1ull << 63) - (1ull << 40) - 4096, 1ull << 40, 1 },
	};
	uint8_t buf[PPL_BLOCK];
	char err[128];
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jnl_rec r = jsample(), d;
		r.nwrites = 1;
		r.w[0].off = cases[i].off;
		r.w[0].len = cases[i].len;
		r.blocks = (uint32_t)(1 + cases[i].len / 4096);
		jnl_rec_encode(&r, buf);
		int got = jnl_rec_decode(buf, &d, err, sizeof(err));
		ck_assert_msg(cases[i].ok ? got == 0 : got == -EINVAL, "case %u (offset %llu, %llu bytes): %d %s", i,
			      (unsigned long long)cases[i].off, (unsigned long long)cases[i].len, got, got ? err : "");
		if (!cases[i].ok)
			ck_assert_msg(strstr(err, "bad write 0"), "case %u: %s", i, err);
	}
}
END_TEST

/* The partial parity log's codec at the same edges: a span that wraps, or a
 * block count whose bytes do not match the span, is refused (the scan then
 * bounds the span by the chunk before any I/O). */
START_TEST(test_ppl_wrap)
{
	uint8_t buf[PPL_BLOCK];
	struct ppl_rec r = sample(), d;
	char err[128];
	r.span_lo = (uint64_t)0 - 4096; /* [2^64 - 4K, 0): wraps */
	r.span_hi = 0;
	r.lo[1] = r.hi[1] = 0;
	r.blocks = 2;
	ppl_rec_encode(&r, buf);
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad span"));
	r.span_lo = (uint64_t)0 - 8192; /* no wrap, but 2^32 - 1 blocks are not its 4 KiB */
	r.span_hi = (uint64_t)0 - 4096;
	r.blocks = UINT32_MAX;
	ppl_rec_encode(&r, buf);
	ck_assert_int_eq(ppl_rec_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad blocks"));
}
END_TEST

/* ---- replay on memory members ---- */

static char names[4][64];
static char *paths[4];

static struct vol *ppl_vol_at(uint64_t data_offset)
{
	char err[512];
	struct vol_create c = { 0 };
	struct vol *v = NULL;
	c.geom.level = LAYOUT_RAID5;
	c.geom.alg = layout_default_alg(LAYOUT_RAID5);
	c.geom.chunk = CHUNK;
	c.consistency = SB_CONS_PPL;
	c.bitmap = -1;
	c.data_offset = data_offset;
	vol_serial++;
	for (unsigned i = 0; i < 4; i++) {
		snprintf(names[i], sizeof(names[i]), "mem:ppl%u_%u:%llu", vol_serial, i, (unsigned long long)MEMBER_SIZE);
		paths[i] = names[i];
	}
	ck_assert_msg(vol_create(&c, paths, 4, err, sizeof(err)) == 0, "create: %s", err);
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	ck_assert_msg(vol_open(&v, paths, 4, &o, err, sizeof(err)) == 0, "open: %s", err);
	ck_assert_int_eq(vol_start(v), 0);
	return v;
}

static struct vol *ppl_vol(void)
{
	return ppl_vol_at(0);
}

/* The members' superblocks say dirty again: a crash after the close. */
static void make_dirty(void)
{
	char err[256];
	uint8_t *b;
	ck_assert_int_eq(posix_memalign((void **)&b, 4096, SB_SIZE), 0);
	for (unsigned i = 0; i < 4; i++) {
		struct member m = { 0 };
		struct sb s;
		ck_assert_msg(member_open(&m, paths[i], 0, err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(member_pread(&m, b, SB_SIZE, 0), 0);
		ck_assert_int_eq(sb_decode(b, SB_SIZE, &s, err, sizeof(err)), 0);
		s.clean = 0;
		sb_encode(&s, b);
		ck_assert_int_eq(member_pwrite(&m, b, SB_SIZE, 0), 0);
		member_close(&m);
	}
	free(b);
}

static void member_io_at(unsigned i, void *buf, uint64_t len, uint64_t off, int write, uint64_t doff)
{
	char err[256];
	struct member m = { 0 };
	ck_assert_msg(member_open(&m, paths[i], 0, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(write ? member_pwrite(&m, buf, len, doff + off) : member_pread(&m, buf, len, doff + off), 0);
	member_close(&m);
}

static void member_io(unsigned i, void *buf, uint64_t len, uint64_t off, int write)
{
	member_io_at(i, buf, len, off, write, SB_DEFAULT_DATA_OFFSET);
}

/* A write to column 0 of stripe 0 whose parity write never landed (the old
 * parity put back), then a dirty start: whole (all) or without the member of
 * column 1 (which the write left alone). The log gives the parity back. */
static void torn_parity(int degraded)
{
	struct vol *v = ppl_vol();
	struct layout_stripe st;
	layout_stripe(&v->geom, 0, &st);
	static uint8_t old[3 * CHUNK], newc[CHUNK], oldp[CHUNK], got[3 * CHUNK];
	fill(old, sizeof(old), 11);
	ck_assert_int_eq(engine_write(v, old, 0, sizeof(old)), 0); /* a full stripe */
	member_io((unsigned)st.p, oldp, CHUNK, 0, 0);
	fill(newc, sizeof(newc), 12);
	ck_assert_int_eq(engine_write(v, newc, 0, CHUNK), 0);  /* column 0: a partial-stripe write */
	uint64_t rec, blk, rep;
	ppl_counts(v, &rec, &blk, &rep);
	ck_assert_uint_eq(rec, 2);
	ck_assert_uint_eq(blk, 1 + 1 + CHUNK / PPL_BLOCK); /* full stripe: a header; partial: + its parity */
	vol_close(v);
	member_io((unsigned)st.p, oldp, CHUNK, 0, 1); /* the parity write "never landed" */
	make_dirty();
	char err[512];
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	char *use[4];
	unsigned n = 0;
	for (unsigned i = 0; i < 4; i++)
		if (!degraded || i != st.data[1])
			use[n++] = paths[i];
	/* md: with a PPL a dirty degraded raid5 starts without --force */
	ck_assert_msg(vol_open(&v, use, n, &o, err, sizeof(err)) == 0, "open: %s", err);
	ck_assert_int_eq(vol_was_dirty(v), 0); /* no resync owed */
	ppl_counts(v, &rec, &blk, &rep);
	ck_assert_uint_ge(rep, 1);
	ck_assert_int_eq(engine_read(v, got, 0, sizeof(got)), 0);
	ck_assert_int_eq(memcmp(got, newc, CHUNK), 0);
	ck_assert_int_eq(memcmp(got + CHUNK, old + CHUNK, 2 * CHUNK), 0); /* column 1 as it was */
	if (!degraded) {
		uint64_t mism = 0, skipped = 0;
		ck_assert_int_eq(engine_resync(v, 0, 0, &mism, &skipped), 0);
		ck_assert_uint_eq(mism, 0);
	}
	vol_close(v);
}

START_TEST(test_replay_whole)
{
	torn_parity(0);
}
END_TEST

START_TEST(test_replay_degraded)
{
	torn_parity(1);
}
END_TEST

/* Without the log's replay the same degraded start would read column 1 wrong:
 * the test above can fail. */
START_TEST(test_hole_without_replay)
{
	struct vol *v = ppl_vol();
	struct layout_stripe st;
	layout_stripe(&v->geom, 0, &st);
	static uint8_t old[3 * CHUNK], newc[CHUNK], oldp[CHUNK], got[CHUNK];
	fill(old, sizeof(old), 21);
	ck_assert_int_eq(engine_write(v, old, 0, sizeof(old)), 0);
	member_io((unsigned)st.p, oldp, CHUNK, 0, 0);
	fill(newc, sizeof(newc), 22);
	ck_assert_int_eq(engine_write(v, newc, 0, CHUNK), 0);
	vol_close(v);
	member_io((unsigned)st.p, oldp, CHUNK, 0, 1);
	/* clean: nothing is replayed; the stale parity stays */
	char err[512];
	struct vol_opts o = { .stats = VOL_STATS_ALL, .force = 1 };
	char *use[3];
	unsigned n = 0;
	for (unsigned i = 0; i < 4; i++)
		if (i != st.data[1])
			use[n++] = paths[i];
	ck_assert_msg(vol_open(&v, use, n, &o, err, sizeof(err)) == 0, "open: %s", err);
	ck_assert_int_eq(engine_read(v, got, CHUNK, CHUNK), 0);
	ck_assert_int_ne(memcmp(got, old + CHUNK, CHUNK), 0);
	vol_close(v);
}
END_TEST

/* A start writes its ring from the start again: an earlier session's record
 * past the new head can be older than one the new session overwrote. Ring
 * of 9 blocks, 4 KiB writes (records of 2 blocks) to stripes 0 and 4 (both
 * with their parity on member 3):
 *   session 1:  A 0-1, B 2-3, C 4-5, OLD (stripe 0, column 0) 6-7, D 8+0,
 *               NEW (stripe 0, column 1) 1-2
 *   session 2:  E 0-1 (NEW's header gone; OLD still there), then a crash.
 * Replaying OLD would put back a parity that ignores NEW's column 1. */
START_TEST(test_replay_last_session_only)
{
	static uint8_t b[4096];
	struct vol *v = ppl_vol_at(40 * K);
	uint64_t st = 3 * CHUNK; /* a stripe's logical bytes */
	const uint64_t at[] = { 4 * st, 4 * st + CHUNK, 4 * st + 2 * CHUNK, 0, 4 * st, CHUNK };
	for (unsigned i = 0; i < 6; i++) {
		fill(b, sizeof(b), 100 + i);
		ck_assert_int_eq(engine_write(v, b, at[i], sizeof(b)), 0);
	}
	vol_close(v);
	char err[512];
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	ck_assert_msg(vol_open(&v, paths, 4, &o, err, sizeof(err)) == 0, "open: %s", err);
	fill(b, sizeof(b), 200);
	ck_assert_int_eq(engine_write(v, b, 4 * st + CHUNK, sizeof(b)), 0); /* E */
	vol_close(v);
	make_dirty();
	ck_assert_msg(vol_open(&v, paths, 4, &o, err, sizeof(err)) == 0, "open: %s", err);
	uint64_t mism = 0, skipped = 0;
	ck_assert_int_eq(engine_resync(v, 0, 0, &mism, &skipped), 0);
	ck_assert_uint_eq(mism, 0); /* stripe 0's parity matches its data */
	ck_assert_int_eq(engine_resync(v, 4, 0, &mism, &skipped), 0);
	ck_assert_uint_eq(mism, 0);
	vol_close(v);
}
END_TEST

static Suite *ppl_suite(void)
{
	Suite *s = suite_create("ppl");
	TCase *c = tcase_create("codec");
	tcase_add_test(c, test_codec_roundtrip);
	tcase_add_test(c, test_codec_every_byte);
	tcase_add_test(c, test_codec_fields);
	tcase_add_test(c, test_journal_codec);
	tcase_add_test(c, test_journal_wrap);
	tcase_add_test(c, test_ppl_wrap);
	suite_add_tcase(s, c);
	c = tcase_create("replay");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, test_replay_whole);
	tcase_add_test(c, test_replay_degraded);
	tcase_add_test(c, test_hole_without_replay);
	tcase_add_test(c, test_replay_last_session_only);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(ppl_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
