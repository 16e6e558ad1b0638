/* sb: the on-disk superblock at offset 0 of every member (spec: docs/format.md).
 * Little-endian, versioned, CRC32C over the whole block. Pure encode/decode,
 * no I/O. */
#ifndef FSVOL_SB_H
#define FSVOL_SB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/util/crc32c.h"

#define SB_SIZE 4096u            /* bytes reserved for the superblock */
#define SB_MAGIC 0x4c4f5653u     /* "SVOL" read as little-endian u32 of "SVOL" */
#define SB_VERSION 5u          /* 5: the features word (docs/format.md, "Version history") */
#define SB_MAX_SLOTS 64          /* members + spares */
#define SB_DEFAULT_DATA_OFFSET (1u << 20)

enum sb_state {
	SB_EMPTY = 0,      /* slot unused */
	SB_ACTIVE = 1,
	SB_FAILED = 2,
	SB_SPARE = 3,
	SB_REBUILDING = 4,
	SB_MISSING = 5,    /* removed while the volume ran */
};

/* Per-slot flags (md's per-device flags). */
enum sb_slot_flag {
	SB_SLOT_WRITE_MOSTLY = 1u << 0, /* raid1: not read from while another copy serves */
	SB_SLOT_FAILFAST = 1u << 1,     /* raid1/raid10: failed at once when its I/O overruns */
	SB_SLOT_JOURNAL = 1u << 2,      /* raid4/5/6: the write journal member */
	SB_SLOT_REPLACEMENT = 1u << 3,  /* version 4: built to take role `replaces` (md's Replacement) */
};
#define SB_SLOT_FLAGS_ALL 0x0fu
#define SB_SLOT_FLAGS_V3 0x07u

/* md's consistency policies (the bitmap is told by bitmap_offset). */
enum sb_consistency {
	SB_CONS_RESYNC = 0,  /* resync after a dirty stop (bitmap-limited when there is one) */
	SB_CONS_PPL = 1,     /* raid5 partial parity log in each member's metadata area */
	SB_CONS_JOURNAL = 2, /* raid4/5/6 write journal member */
};

/* features (version 5): what the data on the members follows */
enum sb_feature {
	/* raid6's Q is in md's syndrome order (raid6_d0), as every build from
	 * version 5 writes it. Absent on a raid6 left-/right-asymmetric volume
	 * written before: its Q used the data order, and the mount rewrites it
	 * (a resync) before setting the bit. Other levels and layouts: the two
	 * orders are the same, and the bit is set at the first mount. */
	SB_FEAT_MD_Q = 1u << 0,
};
#define SB_FEATURES_ALL 0x1u

#define SB_RESHAPE_ACTIVE 1u   /* reshape_flags: a reshape is under way */
#define SB_NO_NUMBER 0xffffu

struct sb_slot {
	uint8_t state;          /* enum sb_state */
	uint8_t flags;          /* enum sb_slot_flag */
	uint16_t number;        /* the device's Number (md): stays with the device
				 * across fail/remove/add; the slot index is its role */
	uint16_t replaces;      /* SB_SLOT_REPLACEMENT: the role it is built for (md's
				 * dev_roles entry of a replacement); else 0 */
	uint8_t uuid[16];       /* member UUID recorded for this slot */
	uint64_t data_size;     /* usable data bytes of that member */
	uint64_t rebuild_pos;   /* REBUILDING, or a replacement: bytes of the member's
				 * data area in sync (md's recovery_offset); decode
				 * restarts (0) what version 1 stored or what is out of
				 * range */
};

struct sb {
	uint32_t version;
	uint8_t volume_uuid[16];
	uint64_t ctime;         /* creation, seconds since the epoch */
	uint64_t utime;         /* last update */
	uint32_t level;         /* enum layout_level */
	uint32_t layout;        /* algorithm (layout_geom.alg) */
	uint32_t copies;        /* raid10 copies, raid1 members, else 1 */
	uint64_t chunk;         /* bytes */
	uint32_t members;       /* raid members (slots 0..members-1) */
	uint32_t spares;        /* slots members..members+spares-1 */
	uint64_t data_offset;   /* where the data area starts on every member */
	uint64_t volume_size;   /* capacity in bytes at creation */
	uint32_t index;         /* this member's slot */
	uint8_t member_uuid[16];
	uint64_t events;        /* bumped on every state change */
	uint32_t clean;         /* 1: shut down cleanly; 0: dirty (parity may be stale) */
	uint32_t features;      /* version 5: enum sb_feature (zero before) */
	uint64_t bitmap_offset; /* 0: no write-intent bitmap */
	uint64_t bitmap_chunk;
	char name[32];          /* volume name, NUL-padded */
	/* version 3 (zero in older versions) */
	uint32_t consistency;   /* enum sb_consistency */
	uint32_t write_behind;  /* raid1: writes that may complete before a write-mostly leg has them */
	uint64_t ppl_offset;    /* SB_CONS_PPL: this member's log area, bytes from member start */
	uint32_t ppl_size;      /* bytes of that area */
	uint32_t reshape_flags; /* SB_RESHAPE_* */
	uint64_t reshape_pos;   /* reshape progress (docs/format.md, "Reshape") */
	uint32_t new_level;     /* geometry the reshape goes to */
	uint32_t new_layout;
	uint64_t new_chunk;
	uint32_t new_members;
	uint32_t new_copies;
	uint64_t reshape_backup; /* member offset of the critical-section backup, 0: none */
	uint64_t bbl_offset;    /* this member's bad-block list area, 0: none */
	uint32_t bbl_size;      /* bytes of that area */
	struct sb_slot slots[SB_MAX_SLOTS];
	uint32_t checksum;      /* set by sb_decode (the stored CRC); ignored by sb_encode */
	/* not stored in fsvol's format: which format the members carry */
	uint32_t md_minor;      /* 0: fsvol's; 1 + x: md's version 1.x (fsvol/meta/md1_sb.h) */
};

/* CRC32C's old name, kept for code written against it: new code calls crc32c()
 * (fsvol/util/crc32c.h). */
static inline uint32_t sb_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}

/* Encode into exactly SB_SIZE bytes (checksum filled in). */
void sb_encode(const struct sb *s, uint8_t *buf);

/* Decode and verify magic, version, checksum and field sanity.
 * Returns 0, or -EINVAL with a reason in err ("bad magic", "checksum mismatch
 * (stored 0x..., computed 0x...)", "unsupported version 7", ...). */
int sb_decode(const uint8_t *buf, size_t len, struct sb *s, char *err, size_t errlen);

/* Print every field, mdadm --examine style: names right-aligned, the colons
 * in one column (the longest name, "Consistency Policy", sets it). */
void sb_dump(FILE *f, const struct sb *s, const char *path);
#define SB_DUMP_NAME_WIDTH 18
/* One "              Name : value" line of that dump. */
void sb_dump_field(FILE *f, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void sb_uuid_generate(uint8_t uuid[16]);         /* random v4, from getrandom() */
void sb_uuid_format(const uint8_t uuid[16], char out[37]);
const char *sb_state_name(unsigned state);       /* "active", "failed" (md's word), ... */

/* Volume names: 1..31 bytes of [A-Za-z0-9_.-], starting with a letter or a
 * digit, so a name is safe as a file name, a diskstats device and a
 * Prometheus label. 0, or -EINVAL with a reason naming the name. */
#define SB_NAME_MAX 31
int sb_name_check(const char *name, char *err, size_t errlen);
/* The volume's name: the stored one, or (volumes created before names, or
 * without one) "fsvol-" and the first 8 hex digits of the volume UUID. */
void sb_volume_name(const struct sb *s, char out[SB_NAME_MAX + 1]);

/* Assembly: decide, from the superblocks read off the given members (in any
 * order), which member plays which slot. Pure: the caller does the reading. */
struct sb_candidate {
	const char *path;
	int read_error;     /* 0, or -errno when the member could not be opened/read */
	int decode_error;   /* 0, or -EINVAL when sb_decode failed */
	char why[160];      /* reason text for read/decode errors */
	uint64_t size;      /* bytes of the member file/device */
	uint64_t dev, ino;  /* identity of the file (st_dev/st_ino, st_rdev for devices): same member twice */
	struct sb sb;       /* valid when both errors are 0 */
	/* set by sb_assemble */
	int used;           /* 1: plays slot sb.index in the assembly */
	int forced;         /* 1: used only because of force (taken back beyond redundancy: may be stale) */
	char note[256];     /* when not used: why ("stale (events 5, volume at 7)", ...); when
			     * forced: what may be stale. Empty otherwise. */
};

struct sb_assembly {
	struct sb sb;                        /* the superblock taken as truth (highest events) */
	int slot_of[SB_MAX_SLOTS];           /* candidate index for each slot, -1 when missing */
	unsigned missing;                    /* active slots with no usable member */
	uint64_t missing_mask;               /* bit i: slot i missing or failed */
};

/* Returns 0 and fills out, or -EINVAL with a message that names the member and
 * the reason (rules in docs/format.md, "Assembly"): no valid superblock,
 * different volume UUID, a field that must agree differing, volume_size not the
 * geometry's capacity, split brain (members that record each other as failed),
 * duplicate slot, the same member given twice, stale (events lower than the
 * newest: refused unless force, then it is treated as missing), member smaller
 * than recorded, too few members for the level to run. With force, a volume
 * whose failures went beyond redundancy takes back the most recently failed
 * members (highest events), as few as the level needs, as mdadm --assemble
 * --force does; they are marked forced and their note says what may be stale. */
int sb_assemble(struct sb_candidate *c, unsigned n, int force,
		struct sb_assembly *out, char *err, size_t errlen);

/* The geometry a superblock describes (layout_init done: capacity derived).
 * Returns 0, or -EINVAL with layout_init's reason in err. */
struct layout_geom;
int sb_geom(const struct sb *s, struct layout_geom *g, char *err, size_t errlen);

#endif
