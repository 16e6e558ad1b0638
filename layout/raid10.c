/* raid10: md's near, far and offset layouts with K copies on n >= K members,
 * one kind of copy at a time (mdadm --layout nK, fK or oK). Members are equal
 * (the smallest, rounded down to the chunk); mc = chunks per member.
 *
 *   near n2, 3 members       far f2, 3 members          offset o2, 3 members
 *   (c*K + k: m, row)        (S = mc/K rows per section)  (rows interleaved)
 *        m0  m1  m2               m0  m1  m2                 m0  m1  m2
 *   r0   D0  D0' D1          r0   D0  D1  D2            r0   D0  D1  D2
 *   r1   D1' D2  D2'         r1   D3  D4  D5            r1   D2' D0' D1'
 *   r2   D3  D3' D4          ...                        r2   D3  D4  D5
 *                            rS   D2' D0' D1'           r3   D5' D3' D4'
 *                            rS+1 D5' D3' D4'
 *
 * near:   position p = c*K + k, member p mod n, row p div n;  cap = mc*n/K chunks
 * far:    r = c div n, d = c mod n: member (d+k) mod n, row k*S + r;  cap = S*n
 * offset: r = c div n, d = c mod n: member (d+k) mod n, row r*K + k;  cap = (mc/K)*n
 */
#include "layout/layout_int.h"

#include <errno.h>

/* far: rows per section (member_used holds exactly K sections) */
static uint64_t far_section(const struct layout_geom *g)
{
	return g->member_used / g->chunk / g->copies;
}

static int raid10_init(struct layout_geom *g, char *err, size_t errlen)
{
	uint64_t used, mc, cap = 0, rows = 0, total;
	unsigned n = g->members, k = g->copies;
	char a[32], b[32];
	int r;

	if (k < 2)
		return layout_errf(err, errlen, "raid10 needs at least 2 copies, got %u", k);
	if (k > n)
		return layout_errf(err, errlen, "raid10 copies %u exceeds the %u members", k, n);
	r = layout_smallest_member(g, g->chunk, &used, err, errlen);
	if (r)
		return r;
	mc = used / g->chunk;

	switch (g->alg) {
	case LAYOUT_R10_NEAR:
		/* every position c*K+k up to the last full chunk; the last row may be partial */
		cap = mc * n / k; /* mc < 2^52, n <= 64: no overflow */
		rows = (cap * k + n - 1) / n;
		break;
	case LAYOUT_R10_FAR:
		cap = (mc / k) * n;
		rows = (mc / k) * k;
		break;
	case LAYOUT_R10_OFFSET:
		cap = (mc / k) * n;
		rows = (mc / k) * k;
		break;
	}
	if (cap == 0) {
		unsigned small = 0;
		for (unsigned i = 1; i < n; i++)
			if (g->member_size[i] < g->member_size[small])
				small = i;
		return layout_errf(err, errlen, "member %u (%s) is too small for %u copies of chunk %s",
				   small, layout_fmt_size(g->member_size[small], 0, a, sizeof(a)), k,
				   layout_fmt_size(g->chunk, 0, b, sizeof(b)));
	}
	if (__builtin_mul_overflow(cap, g->chunk, &total) || total > LAYOUT_MAX_CAPACITY)
		return layout_errf(err, errlen, "capacity overflows: %llu chunks of %s exceed 2^63 - 1 bytes",
				   (unsigned long long)cap, layout_fmt_size(g->chunk, 0, b, sizeof(b)));
	g->data_members = n;
	g->capacity = total;
	g->member_used = rows * g->chunk;
	g->stripes = rows;
	return 0;
}

static void raid10_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			  struct layout_extent *e)
{
	uint64_t c = off / g->chunk, in = off % g->chunk, row, p;
	unsigned n = g->members, k = g->copies;

	switch (g->alg) {
	case LAYOUT_R10_NEAR:
		p = c * k + copy;
		e->member = (unsigned)(p % n);
		row = p / n;
		break;
	case LAYOUT_R10_FAR:
		e->member = (unsigned)((c % n + copy) % n);
		row = copy * far_section(g) + c / n;
		break;
	default: /* offset */
		e->member = (unsigned)((c % n + copy) % n);
		row = (c / n) * k + copy;
		break;
	}
	e->logical = off;
	e->offset = row * g->chunk + in;
	e->length = g->chunk - in;
	e->copy = copy;
}

static int raid10_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
			uint64_t *logical, unsigned *copy)
{
	uint64_t row = moff / g->chunk, c, p, s;
	unsigned n = g->members, k = g->copies, cp;

	switch (g->alg) {
	case LAYOUT_R10_NEAR:
		p = row * n + member;
		c = p / k;
		cp = (unsigned)(p % k);
		break;
	case LAYOUT_R10_FAR:
		s = far_section(g);
		cp = (unsigned)(row / s);
		/* member = (d + cp) mod n  =>  d = (member - cp) mod n */
		c = (row % s) * n + (member + n - cp) % n;
		break;
	default: /* offset */
		cp = (unsigned)(row % k);
		c = (row / k) * n + (member + n - cp) % n;
		break;
	}
	if (c >= g->capacity / g->chunk)
		return -ENOENT; /* near: tail of the last row */
	*logical = c * g->chunk + moff % g->chunk;
	*copy = cp;
	return LAYOUT_DATA;
}

/* Every chunk needs one present copy. The member set of chunk c depends on
 * c mod n only (near: (c*K) mod n repeats with a period dividing n), so the
 * first n chunks cover every pattern. */
static int raid10_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	uint64_t nchunks = g->capacity / g->chunk;
	unsigned n = g->members, k = g->copies;

	for (uint64_t c = 0; c < n && c < nchunks; c++) {
		int alive = 0;
		for (unsigned cp = 0; cp < k && !alive; cp++) {
			uint64_t m = g->alg == LAYOUT_R10_NEAR ? (c * k + cp) % n : (c + cp) % n;
			alive = !(failed_mask >> m & 1);
		}
		if (!alive)
			return 0;
	}
	return 1;
}

unsigned layout_r10_md_layout(const struct layout_geom *g)
{
	unsigned k = g->copies ? g->copies : 2;

	switch (g->alg) {
	case LAYOUT_R10_NEAR:
		return k | 1u << 8;
	case LAYOUT_R10_FAR:
		return 1u | k << 8;
	default:
		return 1u | k << 8 | 1u << 16;
	}
}

const struct layout_ops layout_raid10_ops = {
	.name = "raid10",
	.min_members = 2,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = raid10_init,
	.locate = raid10_locate,
	.unmap = raid10_unmap,
	.survives = raid10_survives,
};
