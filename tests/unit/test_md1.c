/* md1: md's version-1 superblock codec (round trip, md's checksum, every
 * covered byte guarded), feature refusals, mdadm's placement for 1.0, 1.1
 * and 1.2, the bitmap header, the bad-block log and the level mapping. */
#include "fsvol/meta/md1.h"
#include "fsvol/meta/md1_sb.h"
#include "layout/layout.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct md1_sb sample(void)
{
	struct md1_sb s;
	memset(&s, 0, sizeof(s));
	s.feature_map = MD1_F_BITMAP_OFFSET | MD1_F_RECOVERY_OFFSET | MD1_F_RESHAPE_ACTIVE;
	for (int i = 0; i < 16; i++) {
		s.set_uuid[i] = (uint8_t)(0x10 + i);
		s.device_uuid[i] = (uint8_t)(0xa0 + i);
	}
	strcpy(s.set_name, "host:volume");
	s.ctime = 1700000000;
	s.level = 6;
	s.layout = 2;
	s.size = 123456;
	s.chunksize = 1024;
	s.raid_disks = 5;
	s.bitmap_offset = -24;
	s.new_level = 6;
	s.reshape_position = 0x123456789ull;
	s.delta_disks = -1;
	s.new_layout = 3;
	s.new_chunk = 128;
	s.new_offset = -2048;
	s.data_offset = 264192;
	s.data_size = 0x1122334455ull;
	s.super_offset = 8;
	s.recovery_offset = 777;
	s.dev_number = 3;
	s.cnt_corrected_read = 9;
	s.devflags = MD1_WRITE_MOSTLY | MD1_FAILFAST;
	s.bblog_shift = 1;
	s.bblog_size = 8;
	s.bblog_offset = -8;
	s.utime = 1700000123;
	s.events = 0xfedcba98ull;
	s.resync_offset = MD1_MAX_SECTOR;
	s.max_dev = 7; /* odd: the checksum's trailing half word */
	for (unsigned i = 0; i < MD1_MAX_DEV; i++)
		s.dev_roles[i] = i < 5 ? (uint16_t)(4 - i) : i == 5 ? MD1_ROLE_FAULTY : MD1_ROLE_SPARE;
	return s;
}

START_TEST(test_roundtrip)
{
	struct md1_sb s = sample(), d;
	static uint8_t a[MD1_SB_BYTES], b[MD1_SB_BYTES];
	char err[256];
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, sizeof(a), 8, &d, err, sizeof(err)), 0);
	md1_encode(&d, b);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_uint_eq(d.level, 6);
	ck_assert_int_eq(d.bitmap_offset, -24);
	ck_assert_int_eq(d.delta_disks, -1);
	ck_assert_int_eq(d.new_offset, -2048);
	ck_assert_int_eq(d.bblog_offset, -8);
	ck_assert_uint_eq(d.data_size, 0x1122334455ull);
	ck_assert_uint_eq(d.events, 0xfedcba98ull);
	ck_assert_str_eq(d.set_name, "host:volume");
	ck_assert_uint_eq(md1_role(&d), 1);
	ck_assert_uint_eq(md1_minor(&d), 2);
	/* md's byte offsets, read back raw */
	ck_assert_uint_eq(a[0] | a[1] << 8 | a[2] << 16 | (uint32_t)a[3] << 24, MD1_MAGIC);
	ck_assert_uint_eq(a[72], 6);            /* level */
	ck_assert_uint_eq(a[128 + 1] << 8 | a[128], 264192 & 0xffff); /* data_offset */
	ck_assert_uint_eq(a[160], 3);           /* dev_number */
	ck_assert_uint_eq(a[184], 3);           /* devflags */
	ck_assert_uint_eq(a[220], 7);           /* max_dev */
	ck_assert_uint_eq(a[256], 4);           /* dev_roles[0] */
	ck_assert_uint_eq(a[266] | a[267] << 8, MD1_ROLE_FAULTY);
	/* the PPL shares bitmap_offset's bytes */
	s.feature_map = MD1_F_PPL;
	s.ppl_offset = 8;
	s.ppl_size = 2048;
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(d.ppl_offset, 8);
	ck_assert_uint_eq(d.ppl_size, 2048);
}
END_TEST

/* md's sum written another way: 16-bit halves, carries counted apart. */
static uint32_t ref_csum(const uint8_t *b, unsigned max_dev)
{
	unsigned size = 256 + 2 * max_dev;
	uint64_t lo = 0, hi = 0;
	for (unsigned i = 0; i + 4 <= size; i += 4) {
		if (i == 216)
			continue;
		lo += (uint64_t)(b[i] | b[i + 1] << 8);
		hi += (uint64_t)(b[i + 2] | b[i + 3] << 8);
	}
	if (size % 4)
		lo += (uint64_t)(b[size - 2] | b[size - 1] << 8);
	uint64_t sum = lo + (hi << 16);
	return (uint32_t)(sum & 0xffffffffu) + (uint32_t)(sum >> 32);
}

START_TEST(test_checksum)
{
	struct md1_sb s = sample(), d;
	static uint8_t a[MD1_SB_BYTES];
	char err[256];
	/* large words so the 64-bit sum carries past 32 bits */
	s.size = UINT64_MAX - 5;
	s.data_size = UINT64_MAX - 7;
	s.max_dev = 7;
	md1_encode(&s, a);
	ck_assert_uint_eq(md1_csum(a), ref_csum(a, 7));
	ck_assert_uint_eq(a[216] | a[217] << 8 | a[218] << 16 | (uint32_t)a[219] << 24, ref_csum(a, 7));
	/* every covered byte is guarded (one bit flipped at a time) */
	for (unsigned i = 0; i < 256 + 2 * 7; i++) {
		if (i >= 216 && i < 224)
			continue; /* the checksum itself, and max_dev (changes what is covered) */
		a[i] ^= 0x20;
		int r = md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err));
		ck_assert_msg(r == -EINVAL, "byte %u changed but decoded", i);
		a[i] ^= 0x20;
	}
	/* past dev_roles[max_dev - 1]: md does not cover it */
	a[256 + 2 * 7 + 4] ^= 1;
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), 0);
	a[217] ^= 1;
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "checksum mismatch"));
}
END_TEST

START_TEST(test_refusals)
{
	struct md1_sb s = sample(), d;
	static uint8_t a[MD1_SB_BYTES];
	char err[256];
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, 100, UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(md1_decode(a, sizeof(a), 0, &d, err, sizeof(err)), -EINVAL); /* read at 0, says 8 */
	ck_assert_ptr_nonnull(strstr(err, "super_offset 8"));
	/* a feature bit md does not define */
	s.feature_map |= 1u << 13;
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "0x2000"));
	/* md-cluster: md's, decoded (examine shows it), but not served */
	s.feature_map = MD1_F_BITMAP_OFFSET | MD1_F_CLUSTERED;
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(md1_usable(&d, err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(err, "md-cluster (0x100)"));
	s.feature_map = MD1_F_BITMAP_OFFSET | MD1_F_BAD_BLOCKS;
	md1_encode(&s, a);
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(md1_usable(&d, err, sizeof(err)), 0);
	/* magic, version, max_dev */
	a[0] ^= 1;
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad magic"));
	a[0] ^= 1;
	a[4] = 2;
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "major_version 2"));
	a[4] = 1;
	a[220] = 0xff;
	a[221] = 0xff;
	ck_assert_int_eq(md1_decode(a, sizeof(a), UINT64_MAX, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "max_dev"));
}
END_TEST

START_TEST(test_offsets)
{
	char err[256];
	/* superblock places */
	ck_assert_uint_eq(md1_super_offset(1, 1 << 20), 0);
	ck_assert_uint_eq(md1_super_offset(2, 1 << 20), 8);
	ck_assert_uint_eq(md1_super_offset(0, 1000003), (1000003 - 16) & ~7ull); /* 8K..12K from the end */
	ck_assert_uint_ge(1000003 - md1_super_offset(0, 1000003), 16);
	ck_assert_uint_lt(1000003 - md1_super_offset(0, 1000003), 24);
	/* mdadm's bitmap space by device size */
	ck_assert_uint_eq(md1_bm_space(100), 0);
	ck_assert_uint_eq(md1_bm_space(1 << 21), 8);                 /* 1G: 4K */
	ck_assert_uint_eq(md1_bm_space(20ull << 21), 128);           /* 20G: 64K */
	ck_assert_uint_eq(md1_bm_space(300ull << 21), 256);          /* 300G: 128K */
	/* data offsets: large devices get mdadm's familiar 264192 sectors
	 * (128M headroom + 128K bitmap + 12K, rounded to 1M) */
	ck_assert_uint_eq(md1_default_data_offset(2, 4000ull << 21, 512 << 10), 264192);
	ck_assert_uint_eq(md1_default_data_offset(1, 4000ull << 21, 512 << 10), 264192);
	ck_assert_uint_eq(md1_default_data_offset(0, 4000ull << 21, 512 << 10), 0);
	/* small ones: headroom about 0.1% but at least 4 chunks */
	ck_assert_uint_eq(md1_default_data_offset(2, 135168, 512 << 10), 4096);
	ck_assert_uint_eq(md1_default_data_offset(2, 135168, 64 << 10), 2048);
	ck_assert_uint_eq(md1_default_data_offset(2, 1 << 21, 512 << 10), 4096); /* 1G */
	/* what mdadm wrote on a 10 MiB device (util-linux's blkid image mdraid-1.img) */
	ck_assert_uint_eq(md1_default_data_offset(2, 20480, 512 << 10), 4096);
	ck_assert_uint_eq(md1_default_data_offset(2, 10ull << 21, 512 << 10), 18432); /* 10G: 8M + 64K + 12K, to 9M */
	/* 1.2 with a bitmap: bitmap 4K after the superblock, log after it */
	struct md1_place p = { .minor = 2, .dev = 135168, .data_offset = 4096, .size = 131072,
			       .bitmap_chunk = 64 << 20, .bblog = 1 };
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.super_offset, 8);
	ck_assert_int_eq(p.bitmap_offset, 8);
	ck_assert_int_eq(p.bblog_offset, 16);
	ck_assert_uint_eq(p.bblog_size, 8);
	ck_assert_uint_eq(p.data_size, 131072);
	/* 1.1 without: the log after the space mdadm keeps for a bitmap */
	p = (struct md1_place){ .minor = 1, .dev = 135168, .data_offset = 4096, .size = 131072, .bblog = 1 };
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.super_offset, 0);
	ck_assert_int_eq(p.bitmap_offset, 0);
	ck_assert_int_eq(p.bblog_offset, 16);
	/* 1.0: superblock at the end, log just below, bitmap below that */
	p = (struct md1_place){ .minor = 0, .dev = 65576, .size = 65536, .bitmap_chunk = 64 << 20, .bblog = 1 };
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.super_offset, 65560);
	ck_assert_int_eq(p.bblog_offset, -8);
	ck_assert_int_eq(p.bitmap_offset, -16);
	ck_assert_uint_eq(p.data_size, 65544);
	ck_assert_uint_ge(p.data_size, p.size);
	/* too small */
	p = (struct md1_place){ .minor = 0, .dev = 65540, .size = 65536, .bitmap_chunk = 64 << 20, .bblog = 1 };
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), -ENOSPC);
	p = (struct md1_place){ .minor = 2, .dev = 135168, .data_offset = 8, .size = 1000, .bblog = 1 };
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), -ENOSPC);
	p.minor = 3;
	ck_assert_int_eq(md1_place(&p, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_bitmap)
{
	struct md1_bitmap b = { .version = MD1_BITMAP_V4, .events = 5, .events_cleared = 4, .sync_size = 131072,
				.state = MD1_BITMAP_STALE, .chunksize = 64 << 20, .daemon_sleep = 5, .write_behind = 256,
				.sectors_reserved = 0, .nodes = 0 }, d;
	uint8_t buf[MD1_BITMAP_HEADER];
	char err[256];
	for (int i = 0; i < 16; i++)
		b.uuid[i] = (uint8_t)i;
	md1_bitmap_encode(&b, buf);
	ck_assert_uint_eq(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24, MD1_BITMAP_MAGIC);
	ck_assert_uint_eq(buf[52 + 3], (64 << 20) >> 24); /* chunksize at 52 */
	ck_assert_int_eq(md1_bitmap_decode(buf, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.events, 5);
	ck_assert_uint_eq(d.events_cleared, 4);
	ck_assert_uint_eq(d.sync_size, 131072);
	ck_assert_uint_eq(d.write_behind, 256);
	ck_assert_uint_eq(md1_bitmap_bits(&d), 1);
	buf[52] = 3; /* not a power of two */
	ck_assert_int_eq(md1_bitmap_decode(buf, &d, err, sizeof(err)), -EINVAL);
	buf[0] = 0;
	ck_assert_int_eq(md1_bitmap_decode(buf, &d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad magic"));
	/* mdadm's default chunks: 64M floor, doubled while the bits overflow the room */
	ck_assert_uint_eq(md1_bitmap_default_chunk(131072), 64ull << 20);
	ck_assert_uint_eq(md1_bitmap_default_chunk(1ull << 40), 1ull << 30); /* 2^37 bits into < 2^20 */
	ck_assert_uint_eq(md1_bitmap_bytes(131072, 64 << 20, 4096), 4096);
	ck_assert_uint_eq(md1_bitmap_bytes(1ull << 30, 4096, 512), (((1ull << 30) / 8 + 7) / 8 + 256 + 511) / 512 * 512);
}
END_TEST

START_TEST(test_bblog)
{
	uint64_t e[3] = { md1_bb_pack(2048, 8), md1_bb_pack(1ull << 50, 1023), md1_bb_pack(7, 1) }, out[8];
	uint8_t buf[4096];
	md1_bblog_encode(e, 3, buf, sizeof(buf));
	ck_assert_uint_eq(buf[24], 0xff); /* the rest all ones */
	ck_assert_uint_eq(md1_bblog_decode(buf, sizeof(buf), out, 8), 3);
	ck_assert_uint_eq(md1_bb_start(out[0]), 2048);
	ck_assert_uint_eq(md1_bb_len(out[0]), 8);
	ck_assert_uint_eq(md1_bb_start(out[1]), 1ull << 50);
	ck_assert_uint_eq(md1_bb_len(out[1]), 1023);
	ck_assert_uint_eq(out[0], (2048ull << 10) | 8); /* md's packing: 54 bits of block, 10 of count */
	md1_bblog_encode(NULL, 0, buf, sizeof(buf));
	ck_assert_uint_eq(md1_bblog_decode(buf, sizeof(buf), out, 8), 0);
}
END_TEST

START_TEST(test_levels)
{
	static const struct { enum layout_level level; unsigned alg, copies; int32_t md; uint32_t layout; } t[] = {
		{ LAYOUT_LINEAR, 0, 0, -1, 0 }, { LAYOUT_RAID0, 0, 0, 0, 0 }, { LAYOUT_RAID1, 0, 0, 1, 0 },
		{ LAYOUT_RAID4, LAYOUT_PARITY_N, 0, 4, 0 }, { LAYOUT_RAID5, LAYOUT_LEFT_SYMMETRIC, 0, 5, 2 },
		{ LAYOUT_RAID5, LAYOUT_PARITY_0, 0, 5, 4 }, { LAYOUT_RAID6, LAYOUT_RIGHT_ASYMMETRIC, 0, 6, 1 },
		{ LAYOUT_RAID10, LAYOUT_R10_NEAR, 2, 10, 0x102 }, { LAYOUT_RAID10, LAYOUT_R10_FAR, 2, 10, 0x201 },
		{ LAYOUT_RAID10, LAYOUT_R10_OFFSET, 3, 10, 0x10301 },
	};
	char err[256];
	for (unsigned i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct layout_geom g = { .level = t[i].level, .alg = t[i].alg, .copies = t[i].copies, .chunk = 64 << 10 }, h;
		int32_t level;
		uint32_t layout, chunk;
		ck_assert_int_eq(md1_from_geom(&g, &level, &layout, &chunk, err, sizeof(err)), 0);
		ck_assert_int_eq(level, t[i].md);
		ck_assert_uint_eq(layout, t[i].layout);
		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(md1_to_geom(level, layout, chunk ? chunk : 128, &h, err, sizeof(err)), 0);
		ck_assert_int_eq(h.level, t[i].level);
		ck_assert_uint_eq(h.alg, t[i].alg);
		if (t[i].level == LAYOUT_RAID10)
			ck_assert_uint_eq(h.copies, t[i].copies);
	}
	struct layout_geom g = { .level = LAYOUT_SINGLE, .chunk = 4096 };
	int32_t level;
	uint32_t layout, chunk;
	ck_assert_int_eq(md1_from_geom(&g, &level, &layout, &chunk, err, sizeof(err)), -EINVAL);
	struct layout_geom h;
	ck_assert_int_eq(md1_to_geom(-4, 0, 128, &h, err, sizeof(err)), -EOPNOTSUPP); /* multipath */
	ck_assert_int_eq(md1_to_geom(10, 0x202, 128, &h, err, sizeof(err)), -EOPNOTSUPP); /* near and far */
	ck_assert_str_eq(md1_level_name(-1), "linear");
}
END_TEST

/* A 4-device raid5 member as create writes it, seen as fsvol's struct sb,
 * then the running volume's state written back into md's fields. */
START_TEST(test_as_sb)
{
	struct md1_sb m;
	struct sb s;
	char err[256];
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 16; i++)
		m.set_uuid[i] = (uint8_t)(i * 7);
	strcpy(m.set_name, "host:vol5");
	m.level = 5;
	m.layout = 2;
	m.chunksize = 128;
	m.raid_disks = 4;
	m.size = 65536;
	m.data_offset = 4096;
	m.data_size = 65536;
	m.super_offset = 8;
	m.dev_number = 2;
	m.events = 7;
	m.resync_offset = MD1_MAX_SECTOR;
	m.max_dev = 128;
	for (unsigned i = 0; i < MD1_MAX_DEV; i++)
		m.dev_roles[i] = MD1_ROLE_SPARE;
	m.dev_roles[0] = 0, m.dev_roles[1] = 1, m.dev_roles[2] = 2, m.dev_roles[3] = 3;
	uint64_t dev = (4096 + 65536) * 512ull;
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.md_minor, 3);
	ck_assert_uint_eq(s.level, LAYOUT_RAID5);
	ck_assert_uint_eq(s.members, 4);
	ck_assert_uint_eq(s.index, 2);
	ck_assert_uint_eq(s.data_offset, 4096 * 512);
	ck_assert_uint_eq(s.volume_size, 3ull * 65536 * 512);
	ck_assert_uint_eq(s.events, 7);
	ck_assert_uint_eq(s.clean, 1);
	ck_assert_str_eq(s.name, "vol5");
	ck_assert_uint_eq(s.features & SB_FEAT_MD_Q, SB_FEAT_MD_Q); /* md's Q order: no rewrite owed */
	ck_assert_uint_eq(s.slots[3].state, SB_ACTIVE);
	ck_assert_uint_eq(s.slots[3].number, 3);
	ck_assert_mem_eq(s.member_uuid, s.slots[2].uuid, 16);
	/* a role no device holds: a missing slot */
	m.dev_roles[1] = MD1_ROLE_FAULTY;
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.slots[1].state, SB_MISSING);
	m.dev_roles[1] = 1;
	/* written back: events, dirty as md writes it, a failed device's role */
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), 0);
	s.events = 9;
	s.clean = 0;
	s.slots[0].state = SB_FAILED;
	md1_update(&m, &s, 2);
	ck_assert_uint_eq(m.events, 9);
	ck_assert_uint_eq(m.resync_offset, 0);
	ck_assert_uint_eq(m.dev_roles[0], MD1_ROLE_FAULTY);
	ck_assert_uint_eq(m.dev_roles[2], 2);
	ck_assert_uint_eq(m.dev_roles[4], MD1_ROLE_SPARE);
	s.clean = 1;
	md1_update(&m, &s, 2);
	ck_assert_uint_eq(m.resync_offset, MD1_MAX_SECTOR);
	/* removed (or missing since assembly): md writes "no device", 0xffff */
	s.slots[0].state = SB_MISSING;
	md1_update(&m, &s, 2);
	ck_assert_uint_eq(m.dev_roles[0], MD1_ROLE_SPARE);
	/* being recovered into its role: the role, and on its own superblock
	 * recovery_offset (sectors) with the feature bit; the others' without */
	s.slots[0].state = SB_REBUILDING;
	s.slots[0].rebuild_pos = 3 * 65536;
	md1_update(&m, &s, 0);
	ck_assert_uint_eq(m.dev_roles[0], 0);
	ck_assert_uint_eq(m.feature_map & MD1_F_RECOVERY_OFFSET, MD1_F_RECOVERY_OFFSET);
	ck_assert_uint_eq(m.recovery_offset, 3 * 128);
	md1_update(&m, &s, 2);
	ck_assert_uint_eq(m.feature_map & MD1_F_RECOVERY_OFFSET, 0);
	ck_assert_uint_eq(m.recovery_offset, 0);
	/* a device Number beyond max_dev (an added member) widens the table */
	s.slots[0].state = SB_ACTIVE;
	s.slots[0].number = 200;
	md1_update(&m, &s, 2);
	ck_assert_uint_eq(m.max_dev, 201);
	ck_assert_uint_eq(m.dev_roles[200], 0);
	ck_assert_uint_eq(m.dev_roles[0], MD1_ROLE_SPARE);
	s.slots[0].number = 0;
	m.max_dev = 128;
	/* what fsvol cannot serve from md's format yet is refused, named */
	m.dev_roles[0] = 0;
	m.feature_map = MD1_F_RECOVERY_OFFSET;
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(err, "recovery"));
	m.feature_map = MD1_F_CLUSTERED;
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(err, "md-cluster"));
	m.feature_map = 0;
	m.dev_roles[2] = MD1_ROLE_SPARE;
	ck_assert_int_eq(md1_to_sb(&m, dev, &s, err, sizeof(err)), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(err, "spare"));
	m.dev_roles[2] = 2;
	ck_assert_int_eq(md1_to_sb(&m, dev - 512, &s, err, sizeof(err)), -EINVAL); /* device too small */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("md1");
	TCase *tc = tcase_create("md1");
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_checksum);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_offsets);
	tcase_add_test(tc, test_bitmap);
	tcase_add_test(tc, test_bblog);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_as_sb);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
