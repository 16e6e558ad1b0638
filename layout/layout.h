/* layout: pure RAID geometry. Capacity, logical <-> member mapping for every
 * level and md algorithm, and write/read plans for the parity levels.
 * No I/O, no allocation. All offsets and lengths are in bytes; member offsets
 * are relative to the member's data area (the superblock lives in front of it).
 */
#ifndef FSVOL_LAYOUT_H
#define FSVOL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LAYOUT_MAX_MEMBERS 64
#define LAYOUT_MIN_CHUNK 4096u
#define LAYOUT_MAX_CHUNK (1u << 30)

enum layout_level {
	LAYOUT_SINGLE,
	LAYOUT_LINEAR,
	LAYOUT_RAID0,
	LAYOUT_RAID1,
	LAYOUT_RAID10,
	LAYOUT_RAID4,
	LAYOUT_RAID5,
	LAYOUT_RAID6,
};

/* raid5/raid6 algorithms: md's numbering (ALGORITHM_* in drivers/md/raid5.h).
 * raid4 always uses LAYOUT_PARITY_N. */
enum {
	LAYOUT_LEFT_ASYMMETRIC = 0,
	LAYOUT_RIGHT_ASYMMETRIC = 1,
	LAYOUT_LEFT_SYMMETRIC = 2, /* md's default */
	LAYOUT_RIGHT_SYMMETRIC = 3,
	LAYOUT_PARITY_0 = 4,
	LAYOUT_PARITY_N = 5,
};

/* raid10 layouts, as mdadm's --layout n2 / f2 / o2 */
enum {
	LAYOUT_R10_NEAR = 0,
	LAYOUT_R10_FAR = 1,
	LAYOUT_R10_OFFSET = 2,
};

enum layout_role {
	LAYOUT_DATA = 0,
	LAYOUT_P = 1,
	LAYOUT_Q = 2,
};

struct layout_geom {
	/* set by the caller */
	enum layout_level level;
	unsigned alg;     /* raid4/5/6 algorithm or raid10 layout; ignored elsewhere */
	unsigned copies;  /* raid10 copies (0 = default 2); raid1: set to members by init */
	unsigned members; /* members holding data (spares excluded) */
	uint64_t chunk;   /* bytes, power of two in [4K, 1G]; linear/single/raid1: rounding unit */
	uint64_t member_size[LAYOUT_MAX_MEMBERS]; /* usable bytes of each member's data area */

	/* derived by layout_init */
	unsigned data_members; /* chunks of data per stripe/row: raid0 n, raid4/5 n-1, raid6 n-2, raid10 n (per row) */
	uint64_t member_used;  /* bytes used on each member (all but linear: equal, multiple of chunk) */
	uint64_t capacity;     /* volume size in bytes */
	uint64_t stripes;      /* raid0/4/5/6/10: number of chunk rows */
};

/* Validate and derive. Rounds member sizes down to the chunk (linear: to 4 KiB),
 * uses the smallest member for the levels that need equal members.
 * Returns 0, or -EINVAL with a message naming the culprit in err. */
int layout_init(struct layout_geom *g, char *err, size_t errlen);

/* Names: "single" "linear" "raid0" "raid1" "raid10" "raid4" "raid5" "raid6"
 * (also accepts "0","1","4","5","6","10","stripe","mirror").
 * Algorithms: "left-asymmetric" "right-asymmetric" "left-symmetric"
 * "right-symmetric" "parity-first" "parity-last" (and md's short forms "la" "ra" "ls" "rs");
 * raid10: "n2" "f2" "o3" etc. (sets copies too). Return 0 or -EINVAL. */
int layout_parse_level(const char *s, enum layout_level *out);
int layout_parse_alg(enum layout_level level, const char *s, unsigned *alg, unsigned *copies);
/* The same, writing a message that names the bad input and lists the choices
 * into err (may be NULL), e.g. "unknown raid5 layout 'zigzag' (left-asymmetric, ...)". */
int layout_parse_level_msg(const char *s, enum layout_level *out, char *err, size_t errlen);
int layout_parse_alg_msg(enum layout_level level, const char *s, unsigned *alg,
			 unsigned *copies, char *err, size_t errlen);
const char *layout_level_name(enum layout_level level);
const char *layout_alg_name(const struct layout_geom *g); /* "left-symmetric", "n2", "" */
unsigned layout_default_alg(enum layout_level level);
unsigned layout_min_members(enum layout_level level); /* md's rules */
int layout_is_parity(const struct layout_geom *g);     /* raid4/5/6 */
unsigned layout_parity_count(const struct layout_geom *g); /* 0, 1 or 2 */
/* Can the volume serve all data with the members in failed_mask missing? */
int layout_survives(const struct layout_geom *g, uint64_t failed_mask);

/* One piece of a mapping: a logical range that sits contiguously on one member. */
struct layout_extent {
	uint64_t logical; /* volume offset */
	uint64_t offset;  /* member offset (data-area relative) */
	uint64_t length;
	unsigned member;
	unsigned copy; /* 0 .. copies-1 (always 0 for non-mirrored levels) */
};

/* Number of copies of each data byte: raid1 members, raid10 copies, else 1. */
unsigned layout_copies(const struct layout_geom *g);
/* The smallest logical span that fills whole rows on every member, from 0
 * and repeating (raid0/4/5/6: a stripe; raid10 near: lcm(members, copies)
 * positions; offset: members chunks over copies rows), and the bytes those
 * rows take on each member. 0, or -EINVAL where rows do not repeat so
 * (raid10 far, raid1, linear, single). */
int layout_period(const struct layout_geom *g, uint64_t *logical, uint64_t *member_bytes);

/* Locate logical offset off (< capacity), copy `copy`: fills e with the extent that
 * starts at off and runs to the end of its chunk (linear: end of member), clipped
 * to the capacity. Returns 0, or -EINVAL when off >= capacity or copy is out of range. */
int layout_locate(const struct layout_geom *g, uint64_t off, unsigned copy, struct layout_extent *e);

/* Inverse map. For data returns LAYOUT_DATA and sets *logical and *copy; for
 * parity returns LAYOUT_P/LAYOUT_Q and sets *logical to the logical offset of
 * the stripe's first data byte at the same in-chunk offset (copy 0);
 * returns -ENOENT for member space that holds nothing (beyond member_used or a
 * raid10 tail that maps past the capacity). */
int layout_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
		 uint64_t *logical, unsigned *copy);

/* Parity levels: the members of one stripe. All chunks of stripe s sit at member
 * offset s * chunk. */
struct layout_stripe {
	uint64_t stripe;
	uint64_t member_offset; /* stripe * chunk */
	uint64_t logical;       /* logical offset of data index 0 */
	unsigned data[LAYOUT_MAX_MEMBERS]; /* member holding data index j, j < data_members */
	int p, q; /* member of P; member of Q or -1 (raid4/5) */
	/* raid6: the syndrome slot of data index j, as md gives it (raid5.c
	 * raid6_d0/raid6_idx_to_slot: the data members counted walking from the
	 * member after Q): Q = sum of g^qslot[j] * D_j. qslot[j] == j for every j
	 * (q_natural) on the symmetric and parity-first/last layouts and on
	 * raid4/5; the asymmetric ones rotate it on most stripes. */
	uint8_t qslot[LAYOUT_MAX_MEMBERS];
	int q_natural;
};
void layout_stripe(const struct layout_geom *g, uint64_t stripe, struct layout_stripe *s);
/* The syndrome slots to hand the parity kernels (parity_gen_slots,
 * parity_recover_slots): NULL where they are the data order (the fast path). */
static inline const uint8_t *layout_q_slots(const struct layout_stripe *s)
{
	return s->q_natural ? NULL : s->qslot;
}

enum layout_plan_mode {
	LAYOUT_PLAN_READ,        /* plain read, every column present */
	LAYOUT_PLAN_RMW,         /* read old data + old parity, parity ^= old ^ new */
	LAYOUT_PLAN_RCW,         /* read the rest of the stripe, parity from all data */
	LAYOUT_PLAN_FULL,        /* every data byte of the rows is new: no reads */
	LAYOUT_PLAN_RECONSTRUCT, /* a needed column is missing: read every present
				    column over the span, recover the missing ones */
	LAYOUT_PLAN_MIXED,       /* a write's bands differ: RMW here, RCW there */
};

/* One member I/O of a plan. */
struct layout_io {
	unsigned member;
	enum layout_role role;
	int index;       /* data index within the stripe, or -1 for P/Q */
	uint64_t offset; /* member offset */
	uint64_t length;
	uint64_t in_chunk; /* offset within the chunk (offset - stripe.member_offset) */
	enum layout_plan_mode mode; /* of the band it serves (a read: old data under RMW) */
};

/* md's rmw_level (drivers/md/raid5.c, sysfs rmw_level): how a stripe write
 * chooses between read-modify-write and reconstruct-write. */
enum layout_rmw {
	LAYOUT_RMW_DISABLE = 0, /* always reconstruct-write */
	LAYOUT_RMW_ENABLE = 1,  /* fewer blocks read wins; a tie goes to reconstruct-write (md's default) */
	LAYOUT_RMW_PREFER = 2,  /* fewer blocks read wins; a tie goes to read-modify-write */
};
/* md chooses per page of its stripe cache (STRIPE_SIZE, 4 KiB): per row of
 * LAYOUT_PAGE bytes across the stripe's members. */
#define LAYOUT_PAGE 4096u

/* Rows of a stripe written alike (docs/engine.md, "raid4/5/6 writes"): md's
 * counts for each LAYOUT_PAGE row of them, and the mode they give. */
struct layout_band {
	uint64_t lo, hi;            /* in-chunk [lo, hi), within the span */
	enum layout_plan_mode mode; /* RMW, RCW or FULL */
	unsigned rmw, rcw;          /* blocks each would read per row (a missing one
				     * counts 2 x members: md's "cannot read it") */
};
#define LAYOUT_PLAN_MAX_BANDS 8
#define LAYOUT_PLAN_MAX_IO (4 * LAYOUT_MAX_MEMBERS + 8)

/* What a write plan may not decide alone. */
struct layout_write_opts {
	enum layout_rmw rmw_level;
	int dense; /* plan rows of the span no byte is written in too (a partial
		    * parity log record covers the whole span) */
};

/* A plan for a request that lies inside one stripe. */
struct layout_plan {
	struct layout_stripe s;
	enum layout_plan_mode mode; /* a write: its bands' mode, MIXED, or RECONSTRUCT */
	uint64_t span_lo, span_hi; /* in-chunk byte range the plan works on */
	/* per data index: in-chunk range the request covers (lo == hi: untouched) */
	uint64_t lo[LAYOUT_MAX_MEMBERS], hi[LAYOUT_MAX_MEMBERS];
	/* data indexes (or data_members for P, data_members+1 for Q) that must be
	 * recovered from redundancy before use (RECONSTRUCT only) */
	unsigned nlost;
	unsigned lost[2];
	/* a write's bands, ascending (not RECONSTRUCT) */
	unsigned nbands;
	struct layout_band band[LAYOUT_PLAN_MAX_BANDS];
	unsigned nreads, nwrites;
	struct layout_io reads[LAYOUT_PLAN_MAX_IO];
	struct layout_io writes[LAYOUT_PLAN_MAX_IO];
	uint64_t read_bytes;
};

/* Plan a write of logical [off, off+len) lying within one stripe of a parity
 * level. failed_mask: members that can be neither read nor written; o: NULL
 * for md's defaults. As md's handle_stripe_dirtying, per LAYOUT_PAGE row:
 * RMW reads the old data it overwrites and the parity, RCW the data it does
 * not overwrite; the fewer blocks wins, a tie as rmw_level says; FULL when
 * RCW reads nothing. Rows alike form a band; rows no byte is written in get
 * no I/O (unless o->dense). RECONSTRUCT, over the whole span, when the
 * mode chosen would read a missing member. Writes go to every present member
 * whose content changes: the new data, the parity of each band.
 * Returns 0, or -EIO when more members are missing than the level tolerates. */
int layout_plan_write(const struct layout_geom *g, uint64_t off, uint64_t len, uint64_t failed_mask,
		      const struct layout_write_opts *o, struct layout_plan *p);

/* Sort a few in-chunk offsets (a plan's cuts) ascending, in place. */
void layout_sort_offsets(uint64_t *v, unsigned n);

/* Plan a read of logical [off, off+len) within one stripe: READ when every
 * column needed is present (reads are the data extents), else RECONSTRUCT:
 * reads every other present data column and P (Q too when two are missing)
 * over the span, lost[] lists what to recover. Returns 0 or -EIO. */
int layout_plan_read(const struct layout_geom *g, uint64_t off, uint64_t len,
		     uint64_t failed_mask, struct layout_plan *p);

/* Draw the layout grid (rows = stripes or chunk rows, columns = members):
 * cells "D0", "D1", "P", "Q", and for mirrors "D3'" / copy marks. Teaching quality:
 * header with level, algorithm, chunk; legend below. */
void layout_draw(FILE *f, const struct layout_geom *g, unsigned rows);

#endif
