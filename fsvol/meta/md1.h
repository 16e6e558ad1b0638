/* md1: Linux md's version-1 superblock (metadata 1.0, 1.1, 1.2), its internal
 * write-intent bitmap header and its bad-block log, as md and mdadm read and
 * write them (spec: docs/format.md, "md's format"). Pure encode/decode and
 * placement arithmetic, no I/O, like sb.c. Field names are md's
 * (drivers/md/md_p.h `struct mdp_superblock_1`, md-bitmap.h `bitmap_super_t`);
 * all on-disk integers are little-endian; sizes and offsets are 512-byte
 * sectors unless a name says bytes. */
#ifndef FSVOL_MD1_H
#define FSVOL_MD1_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MD1_MAGIC 0xa92b4efcu
#define MD1_SB_BYTES 4096u            /* the block read and written (mdadm's MAX_SB_SIZE) */
#define MD1_HEADER 256u               /* fixed part; dev_roles[] follow */
#define MD1_MAX_DEV ((MD1_SB_BYTES - MD1_HEADER) / 2) /* 1920 roles fit the block */
#define MD1_SECTOR 512u
#define MD1_MAX_SECTOR UINT64_MAX     /* resync_offset of a clean array (md's MaxSector) */

/* dev_roles[] values besides a raid role 0..0xff00 */
#define MD1_ROLE_SPARE 0xffffu
#define MD1_ROLE_FAULTY 0xfffeu
#define MD1_ROLE_JOURNAL 0xfffdu
#define MD1_ROLE_MAX 0xff00u

/* feature_map bits (md_p.h; 0x100 is MD_FEATURE_CLUSTERED in the kernel) */
enum md1_feature {
	MD1_F_BITMAP_OFFSET = 1u << 0,     /* bitmap_offset is meaningful */
	MD1_F_RECOVERY_OFFSET = 1u << 1,   /* recovery_offset must be honoured */
	MD1_F_RESHAPE_ACTIVE = 1u << 2,
	MD1_F_BAD_BLOCKS = 1u << 3,        /* the bad-block log is not empty */
	MD1_F_REPLACEMENT = 1u << 4,       /* this device replaces the one in its role */
	MD1_F_RESHAPE_BACKWARDS = 1u << 5,
	MD1_F_NEW_OFFSET = 1u << 6,        /* new_offset must be honoured */
	MD1_F_RECOVERY_BITMAP = 1u << 7,   /* the recovery is guided by the bitmap */
	MD1_F_CLUSTERED = 1u << 8,         /* md-cluster */
	MD1_F_JOURNAL = 1u << 9,           /* the array has a write journal */
	MD1_F_PPL = 1u << 10,              /* partial parity log */
	MD1_F_MULTIPLE_PPLS = 1u << 11,
	MD1_F_RAID0_LAYOUT = 1u << 12,     /* layout is meaningful for raid0 */
};
#define MD1_F_ALL 0x1fffu

/* devflags */
#define MD1_WRITE_MOSTLY 1u
#define MD1_FAILFAST 2u

/* md's level numbers */
#define MD1_LEVEL_LINEAR (-1)

struct md1_sb {
	uint32_t feature_map;
	uint8_t set_uuid[16];
	char set_name[33];            /* 32 on disk, NUL-padded (not always terminated there) */
	uint64_t ctime;               /* low 40 bits seconds, top 24 microseconds */
	int32_t level;                /* -1 linear, 0, 1, 4, 5, 6, 10 */
	uint32_t layout;
	uint64_t size;                /* used sectors of each component */
	uint32_t chunksize;           /* sectors */
	uint32_t raid_disks;
	int32_t bitmap_offset;        /* sectors from the superblock (signed); or the PPL's: */
	int16_t ppl_offset;           /*   with MD1_F_PPL the same 4 bytes are ppl.offset (signed) */
	uint16_t ppl_size;            /*   and ppl.size, sectors */
	uint32_t new_level;
	uint64_t reshape_position;    /* sectors of the array already reshaped */
	int32_t delta_disks;
	uint32_t new_layout;
	uint32_t new_chunk;           /* sectors */
	int32_t new_offset;           /* sectors added to data_offset in the new layout */
	uint64_t data_offset;         /* sector where this device's data starts */
	uint64_t data_size;           /* sectors of this device usable for data */
	uint64_t super_offset;        /* sector of this superblock */
	uint64_t recovery_offset;     /* sectors of the data area recovered */
	uint32_t dev_number;          /* the device's permanent number: index into dev_roles */
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;             /* MD1_WRITE_MOSTLY, MD1_FAILFAST */
	uint8_t bblog_shift;          /* log entries count blocks of 1 << shift sectors */
	uint16_t bblog_size;          /* sectors reserved for the log */
	int32_t bblog_offset;         /* sectors from the superblock (signed) */
	uint64_t utime;               /* as ctime */
	uint64_t events;
	uint64_t resync_offset;       /* MD1_MAX_SECTOR: clean; else where a resync is to go on */
	uint32_t sb_csum;             /* set by md1_decode (the stored one); md1_encode computes it */
	uint32_t csum_computed;       /* set by md1_decode: md's sum of the block as read */
	uint32_t max_dev;             /* dev_roles entries covered, <= MD1_MAX_DEV */
	uint16_t dev_roles[MD1_MAX_DEV];
};

/* md's checksum of an encoded block: 32-bit little-endian words of the
 * first 256 + 2 * max_dev bytes summed in 64 bits (a trailing half word
 * added as is), with sb_csum read as zero, then the carry folded once. */
uint32_t md1_csum(const uint8_t *buf);
/* Encode into MD1_SB_BYTES (bytes past the roles zero), sb_csum computed. */
void md1_encode(const struct md1_sb *s, uint8_t *buf);
/* Decode and check magic, major_version, max_dev, checksum and the
 * feature bits md defines (others refused, naming them). When where is
 * not UINT64_MAX it is the sector the block was read from, and super_offset
 * must equal it (md's rule). 0, or -EINVAL with the reason in err. Accepts
 * every feature md defines: md1_usable says what fsvol can serve. */
int md1_decode(const uint8_t *buf, size_t len, uint64_t where, struct md1_sb *s, char *err, size_t errlen);
/* Refuse, with a message naming the feature, what fsvol does not support
 * (md-cluster, ...). 0 or -EOPNOTSUPP. */
int md1_usable(const struct md1_sb *s, char *err, size_t errlen);
/* This device's role: dev_roles[dev_number], spare when beyond max_dev. */
unsigned md1_role(const struct md1_sb *s);
/* 0, 1 or 2 (metadata 1.0, 1.1, 1.2) from super_offset, as mdadm tells them. */
unsigned md1_minor(const struct md1_sb *s);

/* ---- placement (mdadm's rules; docs/format.md) ---- */

/* Where the superblock lives on a device of dev sectors: 1.0 at least 8K and
 * less than 12K from the end, 4K aligned; 1.1 at 0; 1.2 at 4K. */
uint64_t md1_super_offset(unsigned minor, uint64_t dev);
/* mdadm's space for a bitmap by device size (choose_bm_space): sectors. */
uint64_t md1_bm_space(uint64_t dev);
/* mdadm's default data_offset for 1.1/1.2 (1.0: 0): room for the
 * superblock, a bitmap and reshape headroom (about 0.1% of the device, at
 * most 128M, not below four chunks), rounded up to 1M. chunk in bytes. */
uint64_t md1_default_data_offset(unsigned minor, uint64_t dev, uint64_t chunk);
/* Sectors a device offers for data (mdadm's validate_geometry freesize). */
uint64_t md1_avail(unsigned minor, uint64_t dev, uint64_t data_offset);
/* mdadm's internal bitmap chunk (bytes) for components of size sectors:
 * the smallest power of two >= 4K whose bits fit the room mdadm leaves
 * (at most 128K less the header), at least 64M. */
uint64_t md1_bitmap_default_chunk(uint64_t size);
/* Bytes of an internal bitmap (header + bits) rounded up to boundary. */
uint64_t md1_bitmap_bytes(uint64_t sync_size, uint64_t chunk, uint64_t boundary);

struct md1_place {
	/* in */
	unsigned minor;         /* 0, 1, 2 */
	uint64_t dev;           /* sectors of the device */
	uint64_t data_offset;   /* sectors (1.1/1.2: md1_default_data_offset or given; 1.0: 0) */
	uint64_t size;          /* component sectors used (sb size) */
	uint64_t bitmap_chunk;  /* bytes; 0: no bitmap */
	int bblog;              /* reserve md's 8-sector bad-block log */
	/* out */
	uint64_t super_offset;
	uint64_t data_size;
	int32_t bitmap_offset;  /* from the superblock */
	int32_t bblog_offset;
	uint16_t bblog_size;
};
/* Fill the outs as mdadm's write_init_super1 does. 0, or -ENOSPC with a
 * reason when the device cannot hold the metadata and size. */
int md1_place(struct md1_place *p, char *err, size_t errlen);

/* ---- the internal bitmap's header (md-bitmap.h bitmap_super_t) ---- */

#define MD1_BITMAP_MAGIC 0x6d746962u
#define MD1_BITMAP_HEADER 256u
#define MD1_BITMAP_V4 4u               /* BITMAP_MAJOR_HI: what mdadm writes */
#define MD1_BITMAP_CLUSTERED 5u
#define MD1_BITMAP_STALE (1u << 1)     /* state bits */
#define MD1_BITMAP_WRITE_ERROR (1u << 2)
#define MD1_BITMAP_HOSTENDIAN (1u << 15)
#define MD1_BITMAP_DAEMON_SLEEP 5u     /* seconds, mdadm's default */

struct md1_bitmap {
	uint32_t version;
	uint8_t uuid[16];              /* the array's set_uuid */
	uint64_t events;
	uint64_t events_cleared;
	uint64_t sync_size;            /* sectors of a component the bits cover */
	uint32_t state;
	uint32_t chunksize;            /* bytes per bit */
	uint32_t daemon_sleep;         /* seconds */
	uint32_t write_behind;
	uint32_t sectors_reserved;
	uint32_t nodes;
	char cluster_name[65];
};
void md1_bitmap_encode(const struct md1_bitmap *b, uint8_t *buf); /* MD1_BITMAP_HEADER bytes */
/* 0, or -EINVAL (bad magic, version outside 3..5, chunk not a power of two). */
int md1_bitmap_decode(const uint8_t *buf, struct md1_bitmap *b, char *err, size_t errlen);
/* Bits the bitmap has: one per chunksize bytes of a component. */
uint64_t md1_bitmap_bits(const struct md1_bitmap *b);

/* ---- the bad-block log ----
 * bblog_size sectors of little-endian u64 entries: bits 63..10 the first
 * block, bits 9..0 the count (blocks are 1 << bblog_shift sectors, counted
 * from the start of the device, not of its data area); the first all-ones
 * entry ends the list. Entries are on disk only once acknowledged. */
#define MD1_BB_MAX_LEN 1023u
static inline uint64_t md1_bb_pack(uint64_t start, unsigned len)
{
	return start << 10 | (len & 0x3ffu);
}
static inline uint64_t md1_bb_start(uint64_t e) { return e >> 10; }
static inline unsigned md1_bb_len(uint64_t e) { return (unsigned)(e & 0x3ffu); }
/* Entries in the log of bytes bytes (up to the first all-ones one, at
 * most max); *out gets them unpacked. */
unsigned md1_bblog_decode(const uint8_t *buf, size_t bytes, uint64_t *out, unsigned max);
/* Write n packed entries, the rest all ones. */
void md1_bblog_encode(const uint64_t *e, unsigned n, uint8_t *buf, size_t bytes);

/* ---- md's levels and layouts against fsvol's geometry ---- */
struct layout_geom;
/* md's level, layout and chunksize (sectors) for a geometry; -EINVAL when md
 * has no such level (single). */
int md1_from_geom(const struct layout_geom *g, int32_t *level, uint32_t *layout, uint32_t *chunksize,
		  char *err, size_t errlen);
/* The geometry's level, alg, copies and chunk from md's (members not set). */
int md1_to_geom(int32_t level, uint32_t layout, uint32_t chunksize, struct layout_geom *g, char *err,
		size_t errlen);
const char *md1_level_name(int32_t level);  /* mdadm's: "raid5", "linear", ... */

/* mdadm --examine's text for a member (path for the headings). The bitmap
 * header, when given, adds its summary. */
void md1_dump(FILE *f, const struct md1_sb *s, const struct md1_bitmap *bm);
/* UUIDs as mdadm prints them: 8 hex digits in four groups with ':'. */
void md1_uuid_format(const uint8_t uuid[16], char out[36]);

#endif
