/* layout internals: one const ops table per level family (linear.c, raid0.c,
 * raid1.c, raid10.c, raid456.c), dispatched from layout.c. Not for use
 * outside layout/.
 */
#ifndef FSVOL_LAYOUT_INT_H
#define FSVOL_LAYOUT_INT_H

#include "layout/layout.h"

/* mdadm's default chunk, used when the caller leaves chunk at 0 */
#define LAYOUT_DEFAULT_CHUNK (512u * 1024u)
/* linear rounds members to this unit whatever the chunk */
#define LAYOUT_LINEAR_UNIT 4096u
/* capacities stay representable as off_t */
#define LAYOUT_MAX_CAPACITY ((uint64_t)INT64_MAX)

struct layout_ops {
	const char *name;
	unsigned min_members, max_members;
	/* Level-specific checks and derivation. Called after the common checks
	 * (member count, chunk); sets data_members, member_used, capacity,
	 * stripes. Returns 0 or -EINVAL with err filled. */
	int (*init)(struct layout_geom *g, char *err, size_t errlen);
	/* off < capacity and copy < copies already checked */
	void (*locate)(const struct layout_geom *g, uint64_t off, unsigned copy,
		       struct layout_extent *e);
	/* moff < member_used (linear: < that member's size) already checked */
	int (*unmap)(const struct layout_geom *g, unsigned member, uint64_t moff,
		     uint64_t *logical, unsigned *copy);
	/* failed_mask already cut to the members */
	int (*survives)(const struct layout_geom *g, uint64_t failed_mask);
};

extern const struct layout_ops layout_single_ops;
extern const struct layout_ops layout_linear_ops;
extern const struct layout_ops layout_raid0_ops;
extern const struct layout_ops layout_raid1_ops;
extern const struct layout_ops layout_raid10_ops;
extern const struct layout_ops layout_raid4_ops;
extern const struct layout_ops layout_raid5_ops;
extern const struct layout_ops layout_raid6_ops;

const struct layout_ops *layout_ops_of(enum layout_level level);

/* Human size: "64K", "3M", "1G" when exact, else "1536 bytes" (or bare
 * "3000" when bare != 0). Returns buf. */
const char *layout_fmt_size(uint64_t v, int bare, char *buf, size_t len);

/* snprintf into err (may be NULL), returns -EINVAL */
int layout_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Smallest member size rounded down to `unit` (a power of two); reports a
 * member smaller than one unit, naming it. */
int layout_smallest_member(const struct layout_geom *g, uint64_t unit, uint64_t *out,
			   char *err, size_t errlen);

/* mask of the g->members low bits */
static inline uint64_t layout_members_mask(unsigned members)
{
	return members >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << members) - 1);
}

/* raid4/5/6: where P and Q sit in stripe s and which member holds data index di
 * (raid456.c, shared with plan.c and draw.c). q is -1 without Q. */
void layout_r456_parity(const struct layout_geom *g, uint64_t s, unsigned *p, int *q);
unsigned layout_r456_data_member(const struct layout_geom *g, uint64_t s, unsigned di);

/* raid10: mdadm's numeric layout (near | far << 8 | offset-bit 16) for the header */
unsigned layout_r10_md_layout(const struct layout_geom *g);

#endif
