/* Unit tests for fsvol/meta/sb.c and fsvol/meta/assemble.c: CRC32C vectors, round trip,
 * fixed on-disk offsets, every corruption rejected, dump text, assembly rules. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/meta/sb.h"
#include "layout/layout.h"

/* xorshift64*: deterministic, so a failure reproduces */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void rnd_uuid(uint8_t u[16])
{
	do
		rnd_bytes(u, 16);
	while (!u[0]); /* never nil */
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Recompute the checksum at offset 8 after a deliberate edit. */
static void fix_csum(uint8_t *buf)
{
	put32(buf + 8, 0);
	put32(buf + 8, crc32c(0, buf, SB_SIZE));
}

/* A valid raid5 superblock: 4 members, 64K chunk, member `index`. */
static void base_sb(struct sb *s, unsigned members, unsigned spares)
{
	memset(s, 0, sizeof(*s));
	s->version = SB_VERSION;
	for (int i = 0; i < 16; i++)
		s->volume_uuid[i] = (uint8_t)(0x10 + i);
	s->ctime = 1700000000;
	s->utime = 1700000100;
	s->level = LAYOUT_RAID5;
	s->layout = LAYOUT_LEFT_SYMMETRIC;
	s->copies = 1;
	s->chunk = 64 << 10;
	s->members = members;
	s->spares = spares;
	s->data_offset = SB_DEFAULT_DATA_OFFSET;
	s->volume_size = (uint64_t)(members - 1) * (256 << 20);
	s->events = 3;
	s->clean = 1;
	s->features = SB_FEAT_MD_Q;
	snprintf(s->name, sizeof(s->name), "test-volume");
	for (unsigned i = 0; i < members + spares; i++) {
		s->slots[i].state = i < members ? SB_ACTIVE : SB_SPARE;
		s->slots[i].number = (uint16_t)i;
		for (int k = 0; k < 16; k++)
			s->slots[i].uuid[k] = (uint8_t)(0xa0 + i * 3 + k);
		s->slots[i].data_size = 256 << 20;
	}
	s->index = 2;
	memcpy(s->member_uuid, s->slots[2].uuid, 16);
}

static void rnd_sb(struct sb *s)
{
	memset(s, 0, sizeof(*s));
	s->version = SB_VERSION;
	rnd_uuid(s->volume_uuid);
	s->ctime = rnd();
	s->utime = rnd();
	s->level = (uint32_t)(rnd() % 8);
	s->members = (uint32_t)(1 + rnd() % SB_MAX_SLOTS);
	s->spares = (uint32_t)(rnd() % (SB_MAX_SLOTS - s->members + 1));
	s->layout = (uint32_t)(rnd() % 3);
	s->copies = (uint32_t)(1 + rnd() % s->members);
	s->chunk = 1ull << (12 + rnd() % 19);
	s->data_offset = 4096 * (1 + rnd() % 100000);
	s->volume_size = rnd();
	s->index = (uint32_t)(rnd() % (s->members + s->spares));
	rnd_uuid(s->member_uuid);
	s->events = rnd();
	s->clean = (uint32_t)(rnd() & 1);
	if (rnd() & 1) {
		s->bitmap_offset = SB_SIZE;
		s->bitmap_chunk = 1ull << (rnd() % 40);
	}
	size_t nl = rnd() % 32;
	for (size_t i = 0; i < nl; i++)
		s->name[i] = (char)(' ' + rnd() % 95);
	for (unsigned i = 0; i < s->members + s->spares; i++) {
		s->slots[i].state = (uint8_t)(rnd() % 6);
		s->slots[i].number = (uint16_t)(SB_MAX_SLOTS - 1 - i); /* unique, not the slot */
		rnd_bytes(s->slots[i].uuid, 16);
		s->slots[i].data_size = rnd();
		s->slots[i].rebuild_pos = s->slots[i].data_size ? rnd() % s->slots[i].data_size : 0;
	}
}

static void assert_sb_equal(const struct sb *a, const struct sb *b)
{
	ck_assert_uint_eq(a->version, b->version);
	ck_assert_uint_eq(a->features, b->features);
	ck_assert_mem_eq(a->volume_uuid, b->volume_uuid, 16);
	ck_assert_uint_eq(a->ctime, b->ctime);
	ck_assert_uint_eq(a->utime, b->utime);
	ck_assert_uint_eq(a->level, b->level);
	ck_assert_uint_eq(a->layout, b->layout);
	ck_assert_uint_eq(a->copies, b->copies);
	ck_assert_uint_eq(a->chunk, b->chunk);
	ck_assert_uint_eq(a->members, b->members);
	ck_assert_uint_eq(a->spares, b->spares);
	ck_assert_uint_eq(a->data_offset, b->data_offset);
	ck_assert_uint_eq(a->volume_size, b->volume_size);
	ck_assert_uint_eq(a->index, b->index);
	ck_assert_mem_eq(a->member_uuid, b->member_uuid, 16);
	ck_assert_uint_eq(a->events, b->events);
	ck_assert_uint_eq(a->clean, b->clean);
	ck_assert_uint_eq(a->bitmap_offset, b->bitmap_offset);
	ck_assert_uint_eq(a->bitmap_chunk, b->bitmap_chunk);
	ck_assert_mem_eq(a->name, b->name, sizeof(a->name));
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		ck_assert_uint_eq(a->slots[i].state, b->slots[i].state);
		ck_assert_mem_eq(a->slots[i].uuid, b->slots[i].uuid, 16);
		ck_assert_uint_eq(a->slots[i].data_size, b->slots[i].data_size);
		ck_assert_uint_eq(a->slots[i].rebuild_pos, b->slots[i].rebuild_pos);
	}
}

/* ---- encode/decode --------------------------------------------------- */

START_TEST(test_roundtrip_random)
{
	uint8_t buf[SB_SIZE], buf2[SB_SIZE];
	char err[256];

	for (int it = 0; it < 500; it++) {
		struct sb a, b;

		rnd_sb(&a);
		sb_encode(&a, buf);
		int r = sb_decode(buf, sizeof(buf), &b, err, sizeof(err));
		ck_assert_msg(r == 0, "iteration %d: %s", it, err);
		assert_sb_equal(&a, &b);
		ck_assert_uint_eq(b.checksum, le32(buf + 8));
		sb_encode(&b, buf2);
		ck_assert_mem_eq(buf, buf2, SB_SIZE);
	}
}
END_TEST

/* The byte offsets written down in docs/format.md. */
static const struct {
	const char *field;
	unsigned off, width;
	uint64_t value;
} layout_table[] = {
	{"magic", 0, 4, SB_MAGIC},
	{"version", 4, 4, SB_VERSION},
	{"header_size", 12, 4, 256},
	{"ctime", 32, 8, 1700000000},
	{"utime", 40, 8, 1700000100},
	{"level", 48, 4, LAYOUT_RAID5},
	{"layout", 52, 4, LAYOUT_LEFT_SYMMETRIC},
	{"copies", 56, 4, 1},
	{"members", 60, 4, 4},
	{"chunk", 64, 8, 64 << 10},
	{"spares", 72, 4, 1},
	{"index", 76, 4, 2},
	{"data_offset", 80, 8, SB_DEFAULT_DATA_OFFSET},
	{"volume_size", 88, 8, 3ull * (256 << 20)},
	{"events", 112, 8, 3},
	{"clean", 120, 4, 1},
	{"features", 124, 4, SB_FEAT_MD_Q},
	{"bitmap_offset", 128, 8, 0},
	{"bitmap_chunk", 136, 8, 0},
	{"slots[0].state", 256, 1, SB_ACTIVE},
	{"slots[0].data_size", 256 + 24, 8, 256 << 20},
	{"slots[1].state", 256 + 48, 1, SB_ACTIVE},
	{"slots[4].state", 256 + 4 * 48, 1, SB_SPARE},
	{"slots[4].rebuild_pos", 256 + 4 * 48 + 32, 8, 0},
};

START_TEST(test_fixed_offsets)
{
	struct sb s;
	uint8_t buf[SB_SIZE];
	uint64_t v = 0;

	base_sb(&s, 4, 1);
	sb_encode(&s, buf);
	for (unsigned k = 0; k < layout_table[_i].width; k++)
		v |= (uint64_t)buf[layout_table[_i].off + k] << (8 * k);
	ck_assert_msg(v == layout_table[_i].value, "%s at %u: 0x%llx", layout_table[_i].field,
		      layout_table[_i].off, (unsigned long long)v);
	/* fields that are byte strings */
	ck_assert_mem_eq(buf, "SVOL", 4);
	ck_assert_mem_eq(buf + 16, s.volume_uuid, 16);
	ck_assert_mem_eq(buf + 96, s.member_uuid, 16);
	ck_assert_str_eq((const char *)buf + 144, "test-volume");
	ck_assert_mem_eq(buf + 256 + 3 * 48 + 8, s.slots[3].uuid, 16);
	/* the checksum is the CRC of the block with its own field read as zero */
	uint32_t stored = le32(buf + 8);
	put32(buf + 8, 0);
	ck_assert_uint_eq(stored, crc32c(0, buf, SB_SIZE));
}
END_TEST

START_TEST(test_every_byte_flip)
{
	struct sb s, d;
	uint8_t good[SB_SIZE], buf[SB_SIZE];
	char err[256];
	static const uint8_t masks[] = {0x01, 0x80, 0xff};

	base_sb(&s, 4, 1);
	sb_encode(&s, good);
	ck_assert_int_eq(sb_decode(good, SB_SIZE, &d, err, sizeof(err)), 0);
	for (unsigned m = 0; m < sizeof(masks); m++)
		for (unsigned i = 0; i < SB_SIZE; i++) {
			memcpy(buf, good, SB_SIZE);
			buf[i] ^= masks[m];
			err[0] = '\0';
			int r = sb_decode(buf, SB_SIZE, &d, err, sizeof(err));
			ck_assert_msg(r == -EINVAL, "flip 0x%02x at byte %u accepted", masks[m], i);
			ck_assert_msg(err[0], "flip at %u: no message", i);
		}
}
END_TEST

START_TEST(test_garbage)
{
	uint8_t buf[SB_SIZE];
	char err[256];
	struct sb d;
	char *mem;
	size_t memlen;
	int accepted = 0;

	for (int it = 0; it < 1000; it++) {
		rnd_bytes(buf, sizeof(buf));
		ck_assert_int_eq(sb_decode(buf, sizeof(buf), &d, err, sizeof(err)), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "bad magic"));
	}
	/* Garbage that passes magic, version and checksum: only field checks stand
	 * between it and the engine. Must not crash; whatever is accepted must dump. */
	for (int it = 0; it < 3000; it++) {
		rnd_bytes(buf, sizeof(buf));
		put32(buf, SB_MAGIC);
		put32(buf + 4, SB_VERSION);
		put32(buf + 12, 256);
		if (it & 1) { /* plausible header so the deeper checks and the dump run */
			uint32_t m = (uint32_t)(1 + rnd() % 8), sp = (uint32_t)(rnd() % 3);
			put32(buf + 48, (uint32_t)(rnd() % 8));
			put32(buf + 52, (uint32_t)(rnd() % 3));
			put32(buf + 56, 1);
			put32(buf + 60, m);
			put64(buf + 64, 1ull << (12 + rnd() % 10));
			put32(buf + 72, sp);
			put32(buf + 76, (uint32_t)(rnd() % (m + sp)));
			put64(buf + 80, 4096ull * (1 + rnd() % 512));
			put32(buf + 120, (uint32_t)(rnd() % 2));
			put32(buf + 124, (uint32_t)(rnd() % 2)); /* version 5: features */
			put64(buf + 128, 0);
			buf[144 + rnd() % 32] = 0;
			memset(buf + 176, 0, 80); /* version-3 fields: none of the features */
			for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
				buf[256 + i * 48] = i < m + sp ? (uint8_t)(rnd() % 6) : 0;
				buf[256 + i * 48 + 1] = (uint8_t)(rnd() % 8);
				buf[256 + i * 48 + 2] = (uint8_t)i; /* Numbers unique (a duplicate is refused) */
				buf[256 + i * 48 + 3] = 0;
				buf[256 + i * 48 + 4] = buf[256 + i * 48 + 5] = 0; /* version 4: no replacement */
				put64(buf + 256 + i * 48 + 32, 0);
			}
			if (it % 4 == 1) /* then spoil one random header byte */
				buf[16 + rnd() % 240] = (uint8_t)rnd();
		}
		fix_csum(buf);
		err[0] = '\0';
		int r = sb_decode(buf, sizeof(buf), &d, err, sizeof(err));
		ck_assert(r == 0 || r == -EINVAL);
		if (r) {
			ck_assert_msg(err[0], "rejected without a message");
			continue;
		}
		FILE *f = open_memstream(&mem, &memlen);
		ck_assert_ptr_nonnull(f);
		sb_dump(f, &d, "garbage");
		fclose(f);
		ck_assert_ptr_nonnull(strstr(mem, "          Magic : SVOL\n"));
		free(mem);
		accepted++;
	}
	ck_assert_int_gt(accepted, 100); /* the dump path really ran */
	/* short buffers and a NULL buffer */
	ck_assert_int_eq(sb_decode(buf, SB_SIZE - 1, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "short"));
	ck_assert_int_eq(sb_decode(NULL, 0, &d, NULL, 0), -EINVAL);
}
END_TEST

/* Each insane field, written straight into an otherwise valid block with the
 * checksum fixed, must be rejected with a message naming the field. */
static const struct {
	const char *desc;
	unsigned off, width;
	uint64_t value;
	const char *expect;
	int keep_csum; /* 1: leave the checksum stale */
} insane[] = {
	{"magic", 0, 4, 0xdeadbeef, "no fsvol superblock (bad magic 0xdeadbeef)", 0},
	{"version 7", 4, 4, 7, "unsupported version 7", 0},
	{"version 0", 4, 4, 0, "unsupported version 0", 0},
	{"checksum", 8, 4, 0x1234abcd, "checksum mismatch (stored 0x1234abcd, computed 0x", 1},
	{"stale checksum", 60, 4, 5, "checksum mismatch", 1},
	{"header_size", 12, 4, 128, "header_size", 0},
	{"level 8", 48, 4, 8, "bad level 8", 0},
	{"members 0", 60, 4, 0, "bad members 0", 0},
	{"members 65", 60, 4, 65, "bad members 65", 0},
	{"members+spares", 72, 4, 61, "bad spares 61", 0},
	{"index", 76, 4, 5, "bad index 5", 0},
	{"chunk not pow2", 64, 8, 3 << 12, "bad chunk 12288", 0},
	{"chunk 0", 64, 8, 0, "bad chunk 0", 0},
	{"chunk tiny", 64, 8, 512, "bad chunk 512", 0},
	{"data_offset unaligned", 80, 8, (1 << 20) + 512, "bad data_offset", 0},
	{"data_offset small", 80, 8, 0, "bad data_offset 0", 0},
	{"copies 0", 56, 4, 0, "bad copies 0", 0},
	{"copies > members", 56, 4, 5, "bad copies 5", 0},
	{"raid5 layout", 52, 4, 6, "bad layout 6", 0},
	{"clean", 120, 4, 2, "bad clean 2", 0},
	{"bitmap_offset", 128, 8, 100, "bad bitmap_offset 100", 0},
	{"bitmap_offset past data", 128, 8, 1 << 20, "bad bitmap_offset", 0},
	{"volume_uuid nil", 16, 8, 0, "bad volume_uuid", 0},
	{"member_uuid nil", 96, 8, 0, "bad member_uuid", 0},
	{"name unterminated", 144, 8, 0x4141414141414141ull, "bad name", 0},
	{"slot state", 256 + 3 * 48, 1, 9, "bad slots[3].state 9", 0},
	{"slot beyond count", 256 + 7 * 48, 1, SB_ACTIVE, "bad slots[7].state active", 0},
};

START_TEST(test_insane_fields)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "";

	base_sb(&s, 4, 1);
	sb_encode(&s, buf);
	for (unsigned k = 0; k < insane[_i].width; k++)
		buf[insane[_i].off + k] = (uint8_t)(insane[_i].value >> (8 * k));
	if (!strcmp(insane[_i].desc, "volume_uuid nil") || !strcmp(insane[_i].desc, "member_uuid nil"))
		memset(buf + insane[_i].off, 0, 16);
	if (!strcmp(insane[_i].desc, "name unterminated"))
		memset(buf + 144, 'A', 32);
	if (!strcmp(insane[_i].desc, "bitmap_offset") || !strcmp(insane[_i].desc, "bitmap_offset past data"))
		put64(buf + 136, 4096);
	if (!insane[_i].keep_csum)
		fix_csum(buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, insane[_i].expect), "%s: message \"%s\" lacks \"%s\"",
		      insane[_i].desc, err, insane[_i].expect);
}
END_TEST

/* A recovery checkpoint is member bytes (version 2). One past the member's
 * data, or any one version 1 wrote (logical bytes of the volume, up to
 * data_members times the member's data), restarts the recovery from 0
 * instead of refusing the member: every member carries the slot table, so a
 * refusal would refuse them all (issue 22). */
/* Version 3's fields round-trip; a version-2 block reads with the features off
 * and each device's Number equal to its slot. */
START_TEST(test_v3_fields)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "";

	base_sb(&s, 4, 1);
	s.consistency = SB_CONS_PPL;
	s.ppl_offset = 8192;
	s.ppl_size = 65536;
	s.write_behind = 256;
	s.reshape_flags = SB_RESHAPE_ACTIVE;
	s.reshape_pos = 12345 * 4096ull;
	s.new_level = LAYOUT_RAID6;
	s.new_layout = 2;
	s.new_chunk = 128 << 10;
	s.new_members = 5;
	s.new_copies = 1;
	s.reshape_backup = 4096 * 3;
	s.bbl_offset = s.data_offset - 4096;
	s.bbl_size = 4096;
	s.slots[2].flags = SB_SLOT_WRITE_MOSTLY | SB_SLOT_FAILFAST;
	s.slots[2].number = 7;
	sb_encode(&s, buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.consistency, SB_CONS_PPL);
	ck_assert_uint_eq(d.ppl_offset, 8192);
	ck_assert_uint_eq(d.ppl_size, 65536);
	ck_assert_uint_eq(d.write_behind, 256);
	ck_assert_uint_eq(d.reshape_pos, 12345 * 4096ull);
	ck_assert_uint_eq(d.new_level, LAYOUT_RAID6);
	ck_assert_uint_eq(d.new_layout, 2);
	ck_assert_uint_eq(d.new_chunk, 128 << 10);
	ck_assert_uint_eq(d.new_members, 5);
	ck_assert_uint_eq(d.reshape_backup, 4096 * 3);
	ck_assert_uint_eq(d.bbl_offset, s.data_offset - 4096);
	ck_assert_uint_eq(d.bbl_size, 4096);
	ck_assert_uint_eq(d.slots[2].flags, SB_SLOT_WRITE_MOSTLY | SB_SLOT_FAILFAST);
	ck_assert_uint_eq(d.slots[2].number, 7);
	/* bad values are refused, naming the field */
	s.consistency = 3;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "consistency"));
	s.consistency = SB_CONS_PPL;
	s.ppl_offset = s.data_offset;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ppl area"));
	/* areas at the edge of 64 bits: offset + size would wrap (issue 30 A2's audit) */
	s.ppl_offset = (uint64_t)0 - 4096;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ppl area"));
	s.ppl_offset = 8192;
	s.bbl_offset = s.data_offset - 4096;
	s.bbl_size = UINT32_MAX & ~4095u; /* past data_offset, whatever the sum */
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad-block list area"));
	s.bbl_size = 4096;
	s.bitmap_offset = (uint64_t)0 - 4096;
	s.bitmap_chunk = 1 << 20;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bitmap_offset"));
	s.bitmap_offset = 0;
	s.slots[1].flags = 0x80;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "slots[1].flags"));
	/* version 2: Number = slot for used slots */
	base_sb(&s, 4, 1);
	s.slots[3].number = 9;
	sb_encode(&s, buf);
	put32(buf + 4, 2);
	fix_csum(buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.slots[3].number, 3);
	ck_assert_uint_eq(d.slots[SB_MAX_SLOTS - 1].number, SB_NO_NUMBER);
}
END_TEST

static char *dump_to_string(const struct sb *s, const char *path)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	ck_assert_ptr_nonnull(f);
	sb_dump(f, s, path);
	fclose(f);
	return mem;
}

/* Version 5: the features word at byte 124. md's Q order round-trips and
 * shows in the dump of a raid6 asymmetric volume; a version-4 block (the
 * bytes were reserved zero) reads with no feature, as a volume whose Q is in
 * the data order; an unknown bit is refused. */
START_TEST(test_v5_features)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "";

	base_sb(&s, 4, 0);
	s.level = LAYOUT_RAID6;
	s.layout = LAYOUT_LEFT_ASYMMETRIC;
	s.volume_size = 2ull * (256 << 20);
	sb_encode(&s, buf);
	ck_assert_uint_eq(buf[4], 5);
	ck_assert_uint_eq(buf[124], SB_FEAT_MD_Q);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.features, SB_FEAT_MD_Q);
	char *out = dump_to_string(&d, "m2");
	ck_assert_msg(strstr(out, "           Q Order : md (syndrome order)\n"), "%s", out);
	free(out);
	/* what version 4 wrote: the same bytes, zero at 124 */
	put32(buf + 4, 4);
	put32(buf + 124, 0);
	fix_csum(buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.version, 4);
	ck_assert_uint_eq(d.features, 0);
	out = dump_to_string(&d, "m2");
	ck_assert_msg(strstr(out, "           Q Order : data order (fsvol before format 5): rewritten at the next mount\n"),
		      "%s", out);
	free(out);
	/* a symmetric layout has no Q order to tell */
	d.layout = LAYOUT_LEFT_SYMMETRIC;
	out = dump_to_string(&d, "m2");
	ck_assert_ptr_null(strstr(out, "Q Order"));
	free(out);
	put32(buf + 4, SB_VERSION);
	put32(buf + 124, 0x6);
	fix_csum(buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "unknown features 0x00000006"), "%s", err);
}
END_TEST

/* Version 4: a replace in progress (md's Replacement: the role it is built
 * for and how far, its recovery_offset) round-trips and dumps; a version-3
 * block with the flag, a replacement that is no spare or has no role, two of
 * them, or a role without the flag are refused, naming the slot. */
START_TEST(test_v4_replacement)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "", *out = NULL;
	size_t outlen = 0;

	base_sb(&s, 4, 2);
	s.slots[5].flags = SB_SLOT_REPLACEMENT | SB_SLOT_WRITE_MOSTLY;
	s.slots[5].replaces = 1;
	s.slots[5].rebuild_pos = 40 << 20;
	s.index = 5;
	memcpy(s.member_uuid, s.slots[5].uuid, 16);
	sb_encode(&s, buf);
	ck_assert_uint_eq(buf[4] | buf[5] << 8, SB_VERSION);
	ck_assert_uint_eq(buf[256 + 5 * 48 + 4], 1); /* replaces: entry bytes 4..5 */
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.slots[5].flags, SB_SLOT_REPLACEMENT | SB_SLOT_WRITE_MOSTLY);
	ck_assert_uint_eq(d.slots[5].replaces, 1);
	ck_assert_uint_eq(d.slots[5].rebuild_pos, 40 << 20);
	FILE *f = open_memstream(&out, &outlen);
	sb_dump(f, &d, "m5");
	fclose(f);
	ck_assert_msg(strstr(out, "       Device Role : Replacement device 1 (built to 40M)\n"), "%s", out);
	ck_assert_msg(strstr(out, "write-mostly replacement for 1   <- this device"), "%s", out);
	free(out);
	/* version 3 had no such bit, and ignored entry bytes 4..7 */
	put32(buf + 4, 3);
	fix_csum(buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "bad slots[5].flags 0x09 (unknown bits)"), "%s", err);
	buf[256 + 5 * 48 + 1] = SB_SLOT_WRITE_MOSTLY;
	fix_csum(buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.slots[5].replaces, 0);
	static const struct {
		unsigned slot, state, flags, replaces;
		const char *msg;
	} bad[] = {
		{ 1, SB_ACTIVE, SB_SLOT_REPLACEMENT, 2, "bad slots[1]: a replacement must be a spare" },
		{ 5, SB_FAILED, SB_SLOT_REPLACEMENT, 1, "bad slots[5]: a replacement must be a spare beyond the 4 raid slots (state failed)" },
		{ 5, SB_SPARE, SB_SLOT_REPLACEMENT, 4, "bad slots[5].replaces 4 (must be < members = 4)" },
		{ 5, SB_SPARE, 0, 1, "bad slots[5].replaces 1 (not a replacement)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		base_sb(&s, 4, 2);
		s.slots[bad[i].slot].state = (uint8_t)bad[i].state;
		s.slots[bad[i].slot].flags = (uint8_t)bad[i].flags;
		s.slots[bad[i].slot].replaces = (uint16_t)bad[i].replaces;
		sb_encode(&s, buf);
		ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].msg), "case %zu: %s", i, err);
	}
	base_sb(&s, 4, 2);
	s.slots[4].flags = s.slots[5].flags = SB_SLOT_REPLACEMENT;
	s.slots[4].replaces = 0;
	s.slots[5].replaces = 1;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "bad slots[4] and slots[5]: both are replacements"), "%s", err);
}
END_TEST

/* Device Numbers: unique among used slots (a duplicate names both members),
 * below SB_MAX_SLOTS; a used slot without one passes (assembly gives one);
 * an empty slot's is ignored. */
START_TEST(test_numbers)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256];

	base_sb(&s, 4, 2);
	s.slots[1].number = 5; /* after fail + add: m5 in role 1, m1 parked in slot 5 */
	s.slots[5].number = 1;
	sb_encode(&s, buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.slots[1].number, 5);
	ck_assert_uint_eq(d.slots[5].number, 1);
	s.slots[4].number = 5;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "slots[1] and slots[4]: both record Number 5 (members "
			     "a3a4a5a6-a7a8-a9aa-abac-adaeafb0b1b2 and acadaeaf-b0b1-b2b3-b4b5-b6b7b8b9babb)"), "%s", err);
	s.slots[4].number = SB_MAX_SLOTS;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "slots[4].number 64"), "%s", err);
	s.slots[4].number = SB_NO_NUMBER;
	s.slots[7].number = 0; /* an empty slot: not checked */
	sb_encode(&s, buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
}
END_TEST

START_TEST(test_rebuild_pos_restart)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "";

	base_sb(&s, 4, 1);
	s.slots[1].state = SB_REBUILDING;
	s.slots[1].rebuild_pos = 100 << 20; /* in range: kept */
	sb_encode(&s, buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.version, SB_VERSION);
	ck_assert_uint_eq(d.slots[1].rebuild_pos, 100 << 20);
	s.slots[1].rebuild_pos = s.slots[1].data_size; /* all of it: kept */
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.slots[1].rebuild_pos, s.slots[1].data_size);
	put64(buf + 256 + 1 * 48 + 32, (256ull << 20) + 1); /* past the data */
	fix_csum(buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.slots[1].rebuild_pos, 0);
	ck_assert_uint_eq(d.slots[1].state, SB_REBUILDING);
	/* what today's version 1 wrote at 73.8% of a raid5 of 3 x 16M */
	put32(buf + 4, 1);
	put64(buf + 256 + 1 * 48 + 32, 24903680);
	fix_csum(buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.version, 1);
	ck_assert_uint_eq(d.slots[1].rebuild_pos, 0);
	put64(buf + 256 + 1 * 48 + 32, 1 << 20); /* in range, still logical: restarts too */
	fix_csum(buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.slots[1].rebuild_pos, 0);
}
END_TEST

/* The good block the insane table starts from must itself decode. */
START_TEST(test_base_valid)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256] = "";

	base_sb(&s, 4, 1);
	sb_encode(&s, buf);
	ck_assert_msg(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)) == 0, "%s", err);
	/* a longer-than-SB_SIZE buffer is fine: only the first SB_SIZE bytes count */
	uint8_t big[SB_SIZE + 100];
	memcpy(big, buf, SB_SIZE);
	memset(big + SB_SIZE, 0x5a, 100);
	ck_assert_int_eq(sb_decode(big, sizeof(big), &d, err, sizeof(err)), 0);
	/* encode truncates an over-long name to 31 bytes + NUL */
	memset(s.name, 'x', sizeof(s.name));
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(d.name), 31);
}
END_TEST

/* ---- uuid, names ----------------------------------------------------- */

START_TEST(test_uuid)
{
	uint8_t a[16], b[16];
	char s[37];
	static const uint8_t fixed[16] = {0x6f, 0x1c, 0x00, 0xff, 0x12, 0x34, 0x56, 0x78,
					  0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67};

	sb_uuid_format(fixed, s);
	ck_assert_str_eq(s, "6f1c00ff-1234-5678-9abc-def001234567");
	sb_uuid_generate(a);
	sb_uuid_generate(b);
	ck_assert(memcmp(a, b, 16) != 0);
	ck_assert_uint_eq(a[6] >> 4, 4);
	ck_assert_uint_eq(a[8] & 0xc0, 0x80);
	ck_assert_str_eq(sb_state_name(SB_EMPTY), "empty");
	ck_assert_str_eq(sb_state_name(SB_ACTIVE), "active");
	ck_assert_str_eq(sb_state_name(SB_FAILED), "failed"); /* md's word, as status says */
	ck_assert_str_eq(sb_state_name(SB_SPARE), "spare");
	ck_assert_str_eq(sb_state_name(SB_REBUILDING), "rebuilding");
	ck_assert_str_eq(sb_state_name(SB_MISSING), "missing");
	ck_assert_str_eq(sb_state_name(99), "unknown");
}
END_TEST

/* ---- dump ------------------------------------------------------------ */

/* volume names: the accepted charset and length, and the default */
static const struct {
	const char *name;
	int ok;
	const char *why; /* part of the reason when refused */
} name_cases[] = {
	{ "fsvol0", 1, NULL },
	{ "data_1.x-y", 1, NULL },
	{ "0123456789012345678901234567890", 1, NULL }, /* 31 bytes */
	{ "01234567890123456789012345678901", 0, "longer than 31 bytes" },
	{ "", 0, "empty" },
	{ "-x", 0, "must start with a letter or a digit" },
	{ ".x", 0, "must start with a letter or a digit" },
	{ "a b", 0, "character 2 (' ')" },
	{ "a/b", 0, "character 2 ('/')" },
	{ "a\"b", 0, "character 2 ('\"')" },
	{ "a\nb", 0, "character 2 ('?')" },
	{ "\xc3\xa9t\xc3\xa9", 0, "must start" },
};

START_TEST(test_names)
{
	char err[160] = "";
	int r = sb_name_check(name_cases[_i].name, err, sizeof(err));
	ck_assert_int_eq(r, name_cases[_i].ok ? 0 : -EINVAL);
	if (!name_cases[_i].ok)
		ck_assert_msg(strstr(err, name_cases[_i].why) != NULL, "%s", err);
}
END_TEST

START_TEST(test_default_name)
{
	struct sb s;
	char out[SB_NAME_MAX + 1];
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 16; i++)
		s.volume_uuid[i] = (uint8_t)(0xa0 + i);
	sb_volume_name(&s, out);
	ck_assert_str_eq(out, "fsvol-a0a1a2a3");
	snprintf(s.name, sizeof(s.name), "given");
	sb_volume_name(&s, out);
	ck_assert_str_eq(out, "given");
	snprintf(s.name, sizeof(s.name), "bad name"); /* from an older writer: not used as is */
	sb_volume_name(&s, out);
	ck_assert_str_eq(out, "fsvol-a0a1a2a3");
}
END_TEST

START_TEST(test_dump)
{
	struct sb s, d;
	uint8_t buf[SB_SIZE];
	char err[256], line[128];

	setenv("TZ", "UTC", 1);
	tzset();
	base_sb(&s, 4, 0);
	s.ctime = 1700000000; /* Tue Nov 14 22:13:20 2023 UTC */
	s.volume_size = 768ull << 20;
	s.slots[3].state = SB_REBUILDING;
	s.slots[3].rebuild_pos = 100 << 20;
	s.slots[1].state = SB_FAILED;
	sb_encode(&s, buf);
	ck_assert_int_eq(sb_decode(buf, SB_SIZE, &d, err, sizeof(err)), 0);
	char *out = dump_to_string(&d, "/tmp/v/m2");
	static const char *const want[] = {
		"/tmp/v/m2:\n",
		"             Magic : SVOL\n",
		"           Version : 5\n",
		"       Volume UUID : 10111213-1415-1617-1819-1a1b1c1d1e1f\n",
		"              Name : test-volume\n",
		"     Creation Time : Tue Nov 14 22:13:20 2023\n",
		"        Raid Level : raid5\n",
		"            Layout : left-symmetric\n",
		"        Chunk Size : 64K\n",
		"      Raid Devices : 4\n",
		"            Spares : 0\n",
		"       Data Offset : 1048576 (1M)\n",
		"     Data Size/Dev : 268435456 (256M)\n",
		"       Volume Size : 805306368 (768M)\n",
		"      Device Index : 2\n",
		"            Events : 3\n",
		"             State : clean\n",
		"       Device Role : Active device 2\n",
		"       Array State : A.AR ('A' == active, '.' == missing/failed, 'R' == rebuilding, 'S' == spare)\n",
		"failed ",
		"rebuilding ",
		"100M",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(out, want[i]), "dump lacks \"%s\":\n%s", want[i], out);
	char u[37];
	sb_uuid_format(d.member_uuid, u);
	snprintf(line, sizeof(line), "       Device UUID : %s\n", u);
	ck_assert_msg(strstr(out, line), "dump lacks device uuid:\n%s", out);
	snprintf(line, sizeof(line), "          Checksum : 0x%08x (correct)\n", le32(buf + 8));
	ck_assert_msg(strstr(out, line), "dump lacks \"%s\":\n%s", line, out);
	/* every slot has a row with its uuid */
	for (unsigned i = 0; i < 4; i++) {
		sb_uuid_format(d.slots[i].uuid, u);
		ck_assert_msg(strstr(out, u), "slot %u uuid missing", i);
	}
	free(out);

	/* a dirty spare with a non-exact size; a tampered checksum is shown */
	d.clean = 0;
	d.index = 4;
	d.spares = 1;
	d.slots[4].state = SB_SPARE;
	d.slots[4].data_size = (3ull << 29); /* 1.5G */
	d.checksum = 0x1;
	out = dump_to_string(&d, "m4");
	ck_assert_ptr_nonnull(strstr(out, "             State : active (dirty)\n"));
	ck_assert_ptr_nonnull(strstr(out, "       Device Role : spare\n"));
	ck_assert_ptr_nonnull(strstr(out, "     Data Size/Dev : 1610612736 (1.50G)\n"));
	ck_assert_ptr_nonnull(strstr(out, "       Array State : A.ARS ("));
	ck_assert_ptr_nonnull(strstr(out, "          Checksum : 0x00000001 (stored; the fields encode to 0x"));
	/* mdadm --examine's shape: every field's colon in one column */
	for (char *l = out; (l = strstr(l, " : ")); l++) {
		char *bol = l;
		while (bol > out && bol[-1] != '\n')
			bol--;
		ck_assert_msg(l - bol == SB_DUMP_NAME_WIDTH, "ragged field: %.40s", bol);
	}
	free(out);
}
END_TEST

/* ---- assembly -------------------------------------------------------- */

struct vol {
	struct sb ref;
	struct sb_candidate c[SB_MAX_SLOTS];
	unsigned n;
};

/* A healthy volume: one candidate per slot, in slot order, names "m<slot>". */
static void make_vol(struct vol *v, unsigned members, unsigned spares)
{
	static char names[SB_MAX_SLOTS][16];

	struct layout_geom g;
	char why[160];

	memset(v, 0, sizeof(*v));
	base_sb(&v->ref, members, spares);
	if (members < layout_min_members(LAYOUT_RAID5)) {
		v->ref.level = members > 1 ? LAYOUT_RAID1 : LAYOUT_SINGLE;
		v->ref.copies = members;
	}
	ck_assert_msg(sb_geom(&v->ref, &g, why, sizeof(why)) == 0, "%s", why);
	v->ref.volume_size = g.capacity;
	v->n = members + spares;
	for (unsigned i = 0; i < v->n; i++) {
		struct sb_candidate *c = &v->c[i];
		snprintf(names[i], sizeof(names[i]), "m%u", i);
		c->path = names[i];
		c->sb = v->ref;
		c->sb.index = i;
		memcpy(c->sb.member_uuid, v->ref.slots[i].uuid, 16);
		c->size = v->ref.data_offset + v->ref.slots[i].data_size;
		c->dev = 42;
		c->ino = 1000 + i;
	}
}

static void shuffle(struct sb_candidate *c, unsigned n)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)(rnd() % i);
		struct sb_candidate t = c[i - 1];
		c[i - 1] = c[j];
		c[j] = t;
	}
}

START_TEST(test_assemble_shuffled)
{
	struct vol v;
	struct sb_assembly a;
	char err[256];

	for (int it = 0; it < 200; it++) {
		unsigned members = 1 + (unsigned)(rnd() % 12), spares = (unsigned)(rnd() % 3);
		make_vol(&v, members, spares);
		shuffle(v.c, v.n);
		int r = sb_assemble(v.c, v.n, 0, &a, err, sizeof(err));
		ck_assert_msg(r == 0, "%s", err);
		ck_assert_uint_eq(a.missing, 0);
		ck_assert_uint_eq(a.missing_mask, 0);
		for (unsigned s = 0; s < members + spares; s++) {
			ck_assert_int_ge(a.slot_of[s], 0);
			ck_assert_uint_eq(v.c[a.slot_of[s]].sb.index, s);
			ck_assert(v.c[a.slot_of[s]].used);
		}
		for (unsigned s = members + spares; s < SB_MAX_SLOTS; s++)
			ck_assert_int_eq(a.slot_of[s], -1);
		ck_assert_mem_eq(a.sb.volume_uuid, v.ref.volume_uuid, 16);
	}
}
END_TEST

/* Refusals and degraded outcomes: each mutates a healthy 4+1 volume. */
static void mut_unreadable(struct vol *v)
{
	v->c[3].read_error = -EIO;
	snprintf(v->c[3].why, sizeof(v->c[3].why), "Input/output error");
}
static void mut_undecodable(struct vol *v)
{
	v->c[3].decode_error = -EINVAL;
	snprintf(v->c[3].why, sizeof(v->c[3].why), "no fsvol superblock (bad magic 0x00000000)");
}
static void mut_foreign(struct vol *v)
{
	v->c[2].sb.volume_uuid[5] ^= 1;
}
static void mut_foreign_newer(struct vol *v) /* the foreign one has more events: others are "foreign" */
{
	v->c[2].sb.volume_uuid[5] ^= 1;
	v->c[2].sb.events = 99;
}
static void mut_twice(struct vol *v)
{
	v->c[4] = v->c[0];
	v->c[4].path = "./m0";
}
static void mut_slot_clash(struct vol *v)
{
	v->c[4].sb.index = 1; /* spare m4 claims slot 1 with its own uuid */
}
static void mut_wrong_member(struct vol *v)
{
	v->c[2].sb.member_uuid[0] ^= 0xff;
}
static void mut_stale(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++)
		if (i != 2)
			v->c[i].sb.events = 7;
	v->c[2].sb.events = 5;
}
static void mut_stale_first_newest_last(struct vol *v) /* reference is not the first candidate */
{
	v->c[0].sb.events = 2;
}
static void mut_truncated(struct vol *v)
{
	v->c[3].size -= 4096;
}
static void mut_failed_slot(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++)
		v->c[i].sb.slots[1].state = SB_FAILED;
}
static void mut_missing_two(struct vol *v)
{
	v->c[1] = v->c[4]; /* drop m1 and m3 */
	v->c[3] = v->c[4];
	v->n = 3;
}
static void mut_too_many(struct vol *v)
{
	v->c[5] = v->c[0];
	v->c[5].path = "m5";
	v->c[5].ino = 9999;
	v->n = 6;
}
static void mut_all_unreadable(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++)
		v->c[i].read_error = -ENOENT;
}
static void mut_none(struct vol *v)
{
	v->n = 0;
}
static void mut_no_spare(struct vol *v)
{
	v->n = 4;
}
static void mut_copy_of_member(struct vol *v) /* cp m1 m4: same uuid, other file */
{
	v->c[4].sb = v->c[1].sb;
}
static void mut_slot_out_of_range(struct vol *v)
{
	v->c[0].sb.index = 9;
}

/* Failures beyond redundancy, as `fail 1`, `fail 2 force`, umount leave them:
 * m1 was failed at events 4 (its own superblock stays at 3), m2 at events 5
 * (its own superblock says 4 and records slot 1 failed), the rest end at 6. */
static void mut_beyond(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++) {
		v->c[i].sb.events = 6;
		v->c[i].sb.slots[1].state = SB_FAILED;
		v->c[i].sb.slots[2].state = SB_FAILED;
	}
	v->c[1].sb.events = 3;
	v->c[1].sb.slots[1].state = SB_ACTIVE;
	v->c[1].sb.slots[2].state = SB_ACTIVE;
	v->c[2].sb.events = 4;
	v->c[2].sb.slots[2].state = SB_ACTIVE;
}
static void mut_beyond_oldest_only(struct vol *v) /* m2 not given: only m1 can stand in */
{
	mut_beyond(v);
	v->c[2] = v->c[4];
	v->n = 4;
}
static void mut_beyond_none_given(struct vol *v) /* neither m1 nor m2 given */
{
	mut_beyond(v);
	v->c[1] = v->c[3];
	v->c[2] = v->c[4];
	v->n = 3;
}
static void mut_beyond_wrong_uuid(struct vol *v) /* the stale one is not the member of its slot */
{
	mut_beyond_oldest_only(v);
	v->c[1].sb.member_uuid[3] ^= 0x40;
}
/* raid1 of 2, each half mounted alone (degraded) and written: A, then B. */
static void split_raid1(struct vol *v, uint64_t ea, uint64_t eb)
{
	make_vol(v, 2, 0);
	v->c[0].sb.events = ea;
	v->c[0].sb.slots[1].state = SB_MISSING;
	v->c[1].sb.events = eb;
	v->c[1].sb.slots[0].state = SB_MISSING;
}
static void mut_split_tie(struct vol *v)
{
	split_raid1(v, 5, 5);
}
static void mut_split_b_newer(struct vol *v)
{
	split_raid1(v, 5, 7);
}
/* raid1 of 3: {m0, m1} ran without m2, m2 ran alone. */
static void mut_split_three(struct vol *v)
{
	make_vol(v, 3, 0);
	for (unsigned i = 0; i < 2; i++) {
		v->c[i].sb.events = 9;
		v->c[i].sb.slots[2].state = SB_MISSING;
	}
	v->c[2].sb.events = 6;
	v->c[2].sb.slots[0].state = SB_MISSING;
	v->c[2].sb.slots[1].state = SB_FAILED;
}
/* m3 records the newest members' slot 0 as failed while they record m3
 * active (torn superblock writes): md ignores m3, we refuse without force. */
static void mut_reports_truth_failed(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++)
		if (i != 3)
			v->c[i].sb.events = 4;
	v->c[3].sb.slots[0].state = SB_FAILED;
}
/* A member failed at run time is stale and records nobody failed: no split brain. */
static void mut_failed_member_back(struct vol *v)
{
	for (unsigned i = 0; i < v->n; i++) {
		v->c[i].sb.events = 5;
		v->c[i].sb.slots[3].state = SB_FAILED;
	}
	v->c[3].sb.events = 3;
	v->c[3].sb.slots[3].state = SB_ACTIVE;
}
static void mut_volume_size(struct vol *v) /* every member agrees, on a wrong size */
{
	for (unsigned i = 0; i < v->n; i++)
		v->c[i].sb.volume_size += 65536;
}
static void mut_no_geometry(struct vol *v) /* a level layout/ does not know (sb_decode refuses it too) */
{
	for (unsigned i = 0; i < v->n; i++)
		v->c[i].sb.level = 99;
}

static void mut_twice_unreadable(struct vol *v)
{
	v->c[0].read_error = -EIO;
	v->c[4] = v->c[0];
	v->c[4].path = "./m0";
}
/* raid10 near-2 of 4 (mirror pairs 0+1, 2+3): slot 1 failed, then 0, then 2;
 * m3 is the newest. The newest failed (m2) is not needed: only m0 is taken back. */
static void mut_beyond_raid10(struct vol *v)
{
	struct layout_geom g;
	char why[160];

	make_vol(v, 4, 0);
	for (unsigned i = 0; i < v->n; i++) {
		struct sb *s = &v->c[i].sb;
		s->level = LAYOUT_RAID10;
		s->layout = LAYOUT_R10_NEAR;
		s->copies = 2;
		ck_assert_msg(sb_geom(s, &g, why, sizeof(why)) == 0, "%s", why);
		s->volume_size = g.capacity;
		s->events = 7;
		s->slots[0].state = s->slots[1].state = s->slots[2].state = SB_FAILED;
	}
	v->c[1].sb.events = 3; /* failed first: records nobody failed */
	v->c[1].sb.slots[0].state = v->c[1].sb.slots[1].state = v->c[1].sb.slots[2].state = SB_ACTIVE;
	v->c[0].sb.events = 4; /* then m0 */
	v->c[0].sb.slots[0].state = v->c[0].sb.slots[2].state = SB_ACTIVE;
	v->c[2].sb.events = 5; /* then m2 */
	v->c[2].sb.slots[2].state = SB_ACTIVE;
}

static const struct {
	const char *name;
	void (*mut)(struct vol *);
	int force;
	int rc;
	const char *expect1, *expect2; /* substrings of the error (rc != 0) */
	uint64_t missing_mask;         /* rc == 0 */
	int unused;                    /* rc == 0: candidate index expected not used, or -1 */
	int forced;                    /* rc == 0: candidate taken back by force, or -1 */
} acases[] = {
	{"unreadable", mut_unreadable, 0, -EINVAL, "m3: cannot read superblock: Input/output error", NULL, 0, -1, -1},
	{"unreadable forced", mut_unreadable, 1, 0, NULL, NULL, 1u << 3, 3, -1},
	{"undecodable", mut_undecodable, 0, -EINVAL, "m3: cannot read superblock: no fsvol superblock", NULL, 0, -1, -1},
	{"undecodable forced", mut_undecodable, 1, 0, NULL, NULL, 1u << 3, 3, -1},
	{"foreign", mut_foreign, 0, -EINVAL, "m2: belongs to another volume (uuid ", "expected 10111213-", 0, -1, -1},
	{"foreign forced", mut_foreign, 1, -EINVAL, "m2: belongs to another volume", NULL, 0, -1, -1},
	{"foreign newer", mut_foreign_newer, 1, -EINVAL, "m0: belongs to another volume", NULL, 0, -1, -1},
	{"given twice", mut_twice, 1, -EINVAL, " both claim slot 0 (the same file, given twice)", "./m0", 0, -1, -1},
	{"slot clash", mut_slot_clash, 1, -EINVAL, "m1 and m4 both claim slot 1", NULL, 0, -1, -1},
	{"copy of a member", mut_copy_of_member, 1, -EINVAL, "m1 and m4 both claim slot 1", NULL, 0, -1, -1},
	{"wrong member", mut_wrong_member, 1, -EINVAL, "m2: not the member recorded in slot 2 (uuid ", NULL, 0, -1, -1},
	{"stale", mut_stale, 0, -EINVAL, "m2: stale (events 5, volume at 7): it missed changes while it was failed or left out; mount without it, then 'fsvol re-add MNT m2' brings it up to date, or use --force to assemble without it", NULL, 0, -1, -1},
	{"stale forced", mut_stale, 1, 0, NULL, NULL, 1u << 2, 2, -1},
	{"stale first", mut_stale_first_newest_last, 0, -EINVAL, "m0: stale (events 2, volume at 3)", NULL, 0, -1, -1},
	{"stale first forced", mut_stale_first_newest_last, 1, 0, NULL, NULL, 1u << 0, 0, -1},
	{"truncated", mut_truncated, 1, -EINVAL, "m3: truncated (269479936 bytes, needs 269484032)", NULL, 0, -1, -1},
	{"failed slot", mut_failed_slot, 0, 0, NULL, NULL, 1u << 1, 1, -1},
	{"missing two", mut_missing_two, 0, -EINVAL, "raid5 cannot run without member slot(s) 1 3, and no member given can stand in", NULL, 0, -1, -1},
	{"missing two forced", mut_missing_two, 1, -EINVAL, "raid5 cannot run without member slot(s) 1 3", NULL, 0, -1, -1},
	{"too many", mut_too_many, 1, -EINVAL, "too many members: 6 given, the volume has 5 slots", NULL, 0, -1, -1},
	{"all unreadable", mut_all_unreadable, 1, -EINVAL, "no valid fsvol superblock", NULL, 0, -1, -1},
	{"none", mut_none, 1, -EINVAL, "no members given", NULL, 0, -1, -1},
	{"no spare", mut_no_spare, 0, 0, NULL, NULL, 0, -1, -1},
	{"slot out of range", mut_slot_out_of_range, 1, -EINVAL, "m0: claims slot 9", NULL, 0, -1, -1},
	{"beyond redundancy", mut_beyond, 0, -EINVAL, "raid5 cannot run without member slot(s) 1 2 (failed beyond redundancy; volume at events 6)", "use --force to take back m2 (events 4)", 0, -1, -1},
	{"beyond redundancy forced", mut_beyond, 1, 0, NULL, NULL, 1u << 1, 1, 2},
	{"beyond, oldest only", mut_beyond_oldest_only, 0, -EINVAL, "use --force to take back m1 (events 3)", NULL, 0, -1, -1},
	{"beyond, oldest only forced", mut_beyond_oldest_only, 1, 0, NULL, NULL, 1u << 2, -1, 1},
	{"beyond, none given", mut_beyond_none_given, 1, -EINVAL, "raid5 cannot run without member slot(s) 1 2, and no member given can stand in", NULL, 0, -1, -1},
	{"beyond, wrong uuid", mut_beyond_wrong_uuid, 1, -EINVAL, "no member given can stand in", NULL, 0, -1, -1},
	{"split brain", mut_split_tie, 0, -EINVAL, "split brain: m", "records slot 1 (m1) as missing", 0, -1, -1},
	{"split brain, newer", mut_split_b_newer, 0, -EINVAL, "split brain: m1 (events 7) records slot 0 (m0) as missing, and m0 (events 5) records slot 1 (m1) as missing", "use --force to keep m1 and drop m0", 0, -1, -1},
	{"split brain, newer forced", mut_split_b_newer, 1, 0, NULL, NULL, 1u << 0, 0, -1},
	{"split brain of three", mut_split_three, 0, -EINVAL, "(events 9) records slot 2 (m2) as missing, and m2 (events 6) records slot ", NULL, 0, -1, -1},
	{"split brain of three forced", mut_split_three, 1, 0, NULL, NULL, 1u << 2, 2, -1},
	{"reports the truth failed", mut_reports_truth_failed, 0, -EINVAL, "split brain: m0 (events 4) records slot 3 (m3) as active, and m3 (events 3) records slot 0 (m0) as failed", NULL, 0, -1, -1},
	{"reports the truth failed forced", mut_reports_truth_failed, 1, 0, NULL, NULL, 1u << 3, 3, -1},
	{"failed member back", mut_failed_member_back, 0, -EINVAL, "m3: stale (events 3, volume at 5)", NULL, 0, -1, -1},
	{"failed member back forced", mut_failed_member_back, 1, 0, NULL, NULL, 1u << 3, 3, -1},
	{"volume_size", mut_volume_size, 1, -EINVAL, ": volume_size 805371904 is not the capacity of its geometry (raid5, 4 members: 805306368)", NULL, 0, -1, -1},
	{"no geometry", mut_no_geometry, 1, -EINVAL, ": superblock describes no valid geometry", NULL, 0, -1, -1},
	{"given twice, unreadable", mut_twice_unreadable, 1, -EINVAL, "m0 and ./m0 are the same file (given twice)", NULL, 0, -1, -1},
	{"beyond, raid10", mut_beyond_raid10, 0, -EINVAL, "raid10 cannot run without member slot(s) 0 1 2 (failed beyond redundancy; volume at events 7): use --force to take back m0 (events 4),", NULL, 0, -1, -1},
	{"beyond, raid10 forced", mut_beyond_raid10, 1, 0, NULL, NULL, (1u << 1) | (1u << 2), 1, 0},
};

START_TEST(test_assemble_cases)
{
	struct vol v;
	struct sb_assembly a;
	char err[512] = "";
	int unused = acases[_i].unused;

	make_vol(&v, 4, 1);
	acases[_i].mut(&v);
	/* the outcome must not depend on the order: the given order, then shuffles
	 * (which of two culprits a message names first may change with the order) */
	for (int round = 0; round < 8; round++) {
		if (round)
			shuffle(v.c, v.n);
		err[0] = '\0';
		int r = sb_assemble(v.c, v.n, acases[_i].force, &a, err, sizeof(err));
		ck_assert_msg(r == acases[_i].rc, "%s: rc %d, err \"%s\"", acases[_i].name, r, err);
		if (r && round) {
			ck_assert_msg(err[0], "%s: no message", acases[_i].name);
			continue;
		}
		if (r) {
			ck_assert_msg(strstr(err, acases[_i].expect1), "%s: \"%s\" lacks \"%s\"",
				      acases[_i].name, err, acases[_i].expect1);
			if (acases[_i].expect2)
				ck_assert_msg(strstr(err, acases[_i].expect2), "%s: \"%s\" lacks \"%s\"",
					      acases[_i].name, err, acases[_i].expect2);
			continue;
		}
		ck_assert_msg(a.missing_mask == acases[_i].missing_mask, "%s: mask 0x%llx",
			      acases[_i].name, (unsigned long long)a.missing_mask);
		ck_assert_uint_eq(a.missing, (unsigned)__builtin_popcountll(acases[_i].missing_mask));
		for (unsigned s = 0; s < a.sb.members + a.sb.spares; s++) {
			if (acases[_i].missing_mask >> s & 1) {
				ck_assert_int_eq(a.slot_of[s], -1);
				continue;
			}
			if (a.slot_of[s] < 0) { /* only a spare may be absent */
				ck_assert_uint_ge(s, a.sb.members);
				continue;
			}
			ck_assert_uint_eq(v.c[a.slot_of[s]].sb.index, s);
			ck_assert_int_eq(v.c[a.slot_of[s]].used, 1);
			ck_assert_msg(a.sb.slots[s].state == SB_ACTIVE || a.sb.slots[s].state == SB_SPARE,
				      "%s: slot %u used but recorded %s", acases[_i].name, s,
				      sb_state_name(a.sb.slots[s].state));
		}
		uint64_t newest = 0;
		for (unsigned i = 0; i < v.n; i++)
			if (!v.c[i].read_error && !v.c[i].decode_error && v.c[i].sb.events > newest)
				newest = v.c[i].sb.events;
		ck_assert_uint_eq(a.sb.events, newest);
		for (unsigned i = 0; i < v.n; i++) {
			char nm[16];
			snprintf(nm, sizeof(nm), "m%d", acases[_i].forced);
			/* taken back exactly when the case says so, with a note saying what may be stale */
			ck_assert_int_eq(v.c[i].forced, !strcmp(v.c[i].path, nm));
			if (v.c[i].forced) {
				ck_assert_int_eq(v.c[i].used, 1);
				ck_assert_msg(strstr(v.c[i].note, "taken back by --force"), "%s", v.c[i].note);
				ck_assert_msg(strstr(v.c[i].note, "may be stale"), "%s", v.c[i].note);
			}
		}
		if (unused >= 0) {
			/* find the candidate named m<unused>: it is not used and says why */
			char nm[16];
			snprintf(nm, sizeof(nm), "m%d", unused);
			int found = 0;
			for (unsigned i = 0; i < v.n; i++)
				if (!strcmp(v.c[i].path, nm)) {
					found = 1;
					ck_assert_int_eq(v.c[i].used, 0);
					ck_assert_msg(v.c[i].note[0], "%s: no note", acases[_i].name);
				}
			ck_assert(found);
		}
	}
}
END_TEST

/* Every field that must agree: m3 differs on one, events tie. The truth is
 * what the others agree on, whatever the order; m3 is refused by name and
 * field, or with force left out as not belonging. */
static const char *const fcases[] = {
	"level", "layout", "copies", "chunk", "members", "spares", "data_offset", "volume_size",
	"bitmap_offset", "bitmap_chunk", "ctime", "slots[1].data_size", "slots[4].data_size",
};

static void mutate_field(struct sb *s, const char *field)
{
	if (!strcmp(field, "level"))
		s->level = LAYOUT_RAID6;
	else if (!strcmp(field, "layout"))
		s->layout = LAYOUT_RIGHT_ASYMMETRIC;
	else if (!strcmp(field, "copies"))
		s->copies = 2;
	else if (!strcmp(field, "chunk"))
		s->chunk *= 2;
	else if (!strcmp(field, "members"))
		s->members = 5, s->spares = 0;
	else if (!strcmp(field, "spares"))
		s->spares = 2;
	else if (!strcmp(field, "data_offset"))
		s->data_offset += 4096;
	else if (!strcmp(field, "volume_size"))
		s->volume_size -= 65536;
	else if (!strcmp(field, "bitmap_offset"))
		s->bitmap_offset = 4096, s->bitmap_chunk = 1 << 20;
	else if (!strcmp(field, "bitmap_chunk"))
		s->bitmap_chunk = 1 << 20;
	else if (!strcmp(field, "ctime"))
		s->ctime++;
	else if (!strcmp(field, "slots[1].data_size"))
		s->slots[1].data_size -= 65536;
	else if (!strcmp(field, "slots[4].data_size"))
		s->slots[4].data_size += 65536;
	else
		ck_abort_msg("no mutation for %s", field);
}

START_TEST(test_assemble_fields)
{
	struct vol v;
	struct sb_assembly a;
	char err[512], want[96];
	const char *field = fcases[_i];

	for (int force = 0; force <= 1; force++) {
		make_vol(&v, 4, 1);
		mutate_field(&v.c[3].sb, field);
		for (int round = 0; round < 8; round++) {
			if (round)
				shuffle(v.c, v.n);
			err[0] = '\0';
			int r = sb_assemble(v.c, v.n, force, &a, err, sizeof(err));
			if (!force) {
				ck_assert_msg(r == -EINVAL, "%s: accepted", field);
				snprintf(want, sizeof(want), " on %s (", field);
				ck_assert_msg(strstr(err, "m3: disagrees with m") && strstr(err, want),
					      "%s: \"%s\"", field, err);
				continue;
			}
			ck_assert_msg(r == 0, "%s forced: %s", field, err);
			ck_assert_uint_eq(a.missing_mask, 1u << 3);
			ck_assert_uint_eq(a.sb.data_offset, v.ref.data_offset);
			for (unsigned i = 0; i < v.n; i++)
				if (!strcmp(v.c[i].path, "m3")) {
					ck_assert_int_eq(v.c[i].used, 0);
					ck_assert_msg(strstr(v.c[i].note, "does not belong: ") &&
						      strstr(v.c[i].note, field), "%s: note \"%s\"", field, v.c[i].note);
				}
		}
	}
}
END_TEST

/* A split brain forced on a tie keeps the member listed first. */
START_TEST(test_assemble_split_tie_order)
{
	struct vol v;
	struct sb_assembly a;
	char err[512];

	for (int first = 0; first < 2; first++) {
		split_raid1(&v, 5, 5);
		if (first) {
			struct sb_candidate t = v.c[0];
			v.c[0] = v.c[1];
			v.c[1] = t;
		}
		ck_assert_int_eq(sb_assemble(v.c, v.n, 1, &a, err, sizeof(err)), 0);
		ck_assert_int_eq(a.slot_of[first], 0);   /* the first listed plays its slot */
		ck_assert_int_eq(a.slot_of[!first], -1); /* the other is dropped */
		ck_assert_int_eq(v.c[1].used, 0);
		ck_assert_msg(strstr(v.c[1].note, "dropped (split brain"), "%s", v.c[1].note);
	}
}
END_TEST

/* A member whose geometry differs and that has the most events is the truth
 * no more: the others disagree with it, the volume cannot run. */
START_TEST(test_assemble_odd_newest)
{
	struct vol v;
	struct sb_assembly a;
	char err[512];

	make_vol(&v, 4, 1);
	v.c[3].sb.data_offset += 4096;
	v.c[3].sb.events = 9;
	v.c[3].size += 4096;
	ck_assert_int_eq(sb_assemble(v.c, v.n, 0, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "disagrees with m3 on data_offset"), "%s", err);
	ck_assert_int_eq(sb_assemble(v.c, v.n, 1, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "raid5 cannot run without member slot(s) 0 1 2"), "%s", err);
}
END_TEST

static Suite *sb_suite(void)
{
	Suite *s = suite_create("sb");
	TCase *t;

	t = tcase_create("codec");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, test_roundtrip_random);
	tcase_add_loop_test(t, test_fixed_offsets, 0, sizeof(layout_table) / sizeof(layout_table[0]));
	tcase_add_test(t, test_base_valid);
	tcase_add_test(t, test_rebuild_pos_restart);
	tcase_add_test(t, test_v3_fields);
	tcase_add_test(t, test_v4_replacement);
	tcase_add_test(t, test_numbers);
	tcase_add_loop_test(t, test_insane_fields, 0, sizeof(insane) / sizeof(insane[0]));
	tcase_add_test(t, test_every_byte_flip);
	tcase_add_test(t, test_garbage);
	tcase_add_test(t, test_uuid);
	tcase_add_test(t, test_dump);
	tcase_add_loop_test(t, test_names, 0, sizeof(name_cases) / sizeof(name_cases[0]));
	tcase_add_test(t, test_default_name);
	suite_add_tcase(s, t);

	t = tcase_create("assemble");
	tcase_add_test(t, test_assemble_shuffled);
	tcase_add_test(t, test_v5_features);
	tcase_add_loop_test(t, test_assemble_cases, 0, sizeof(acases) / sizeof(acases[0]));
	tcase_add_loop_test(t, test_assemble_fields, 0, sizeof(fcases) / sizeof(fcases[0]));
	tcase_add_test(t, test_assemble_split_tie_order);
	tcase_add_test(t, test_assemble_odd_newest);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
