/* raid4, raid5, raid6: md's stripe placement (drivers/md/raid5.c,
 * raid5_compute_sector). A stripe is one chunk row across all n members:
 * data_disks = n - parity chunks of data and P (raid6: P and Q), all at
 * member offset stripe * chunk. Data index j = logical order in the stripe.
 *
 * raid5, 4 members, rows = stripes 0..3 (P moves one member per stripe):
 *
 *   left-asymmetric     right-asymmetric    left-symmetric      right-symmetric
 *   D0  D1  D2  P       P   D0  D1  D2      D0  D1  D2  P       P   D0  D1  D2
 *   D3  D4  P   D5      D3  P   D4  D5      D4  D5  P   D3      D5  P   D3  D4
 *   D6  P   D7  D8      D6  D7  P   D8      D8  P   D6  D7      D7  D8  P   D6
 *   P   D9  D10 D11     D9  D10 D11 P       P   D9  D10 D11     D9  D10 D11 P
 *
 * raid6 left-symmetric, 5 members (Q follows P, data follows Q, all wrapping):
 *   Q   D0  D1  D2  P
 *   D3  D4  D5  P   Q
 *   D7  D8  P   Q   D6
 *   D11 P   Q   D9  D10
 *   P   Q   D12 D13 D14
 *
 * parity-first: P (Q) D0 D1 ...   parity-last (raid4): D0 D1 ... P (Q)
 *
 * Q's coefficients follow md's syndrome order, not the data order: walking
 * from the member after Q, the data members get g^0, g^1, ... On the
 * symmetric layouts data follows Q, so the two agree; on the asymmetric ones
 * (left-asymmetric, 5 members, stripe 2: D6 D7 P Q D8) D8 gets g^0, D6 g^1,
 * D7 g^2.
 */
#include "layout/layout_int.h"

#include <errno.h>

/* P (and Q, or -1) of stripe s */
void layout_r456_parity(const struct layout_geom *g, uint64_t s, unsigned *p, int *q)
{
	unsigned n = g->members, dd = g->data_members, rot = (unsigned)(s % n);
	unsigned pd;

	if (g->level != LAYOUT_RAID6) {
		switch (g->alg) {
		case LAYOUT_LEFT_ASYMMETRIC:
		case LAYOUT_LEFT_SYMMETRIC:
			pd = dd - rot; /* P walks left from the last member */
			break;
		case LAYOUT_RIGHT_ASYMMETRIC:
		case LAYOUT_RIGHT_SYMMETRIC:
			pd = rot; /* P walks right from the first member */
			break;
		case LAYOUT_PARITY_0:
			pd = 0;
			break;
		default: /* PARITY_N, raid4 */
			pd = dd;
			break;
		}
		*p = pd;
		*q = -1;
		return;
	}
	switch (g->alg) {
	case LAYOUT_LEFT_ASYMMETRIC:
	case LAYOUT_LEFT_SYMMETRIC:
		pd = n - 1 - rot;
		break;
	case LAYOUT_RIGHT_ASYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC:
		pd = rot;
		break;
	case LAYOUT_PARITY_0:
		*p = 0;
		*q = 1;
		return;
	default: /* PARITY_N */
		*p = dd;
		*q = (int)n - 1;
		return;
	}
	*p = pd;
	if (g->alg <= LAYOUT_RIGHT_ASYMMETRIC)
		*q = pd == n - 1 ? 0 : (int)pd + 1; /* asymmetric: Q wraps to member 0 */
	else
		*q = (int)((pd + 1) % n);
}

/* member holding data index di of stripe s */
unsigned layout_r456_data_member(const struct layout_geom *g, uint64_t s, unsigned di)
{
	unsigned n = g->members, pd;
	int qd;

	layout_r456_parity(g, s, &pd, &qd);
	switch (g->alg) {
	case LAYOUT_LEFT_ASYMMETRIC:
	case LAYOUT_RIGHT_ASYMMETRIC:
		/* data in member order, skipping the parity member(s) */
		if (g->level != LAYOUT_RAID6)
			return di >= pd ? di + 1 : di;
		if (pd == n - 1)
			return di + 1; /* Q sits on member 0 */
		return di >= pd ? di + 2 : di;
	case LAYOUT_LEFT_SYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC:
		/* data starts right after the parity, wrapping */
		return (pd + layout_parity_count(g) + di) % n;
	case LAYOUT_PARITY_0:
		return di + layout_parity_count(g);
	default: /* PARITY_N */
		return di;
	}
}

/* data index of member m in stripe s, or -1 (P) / -2 (Q) */
static int member_role(const struct layout_geom *g, uint64_t s, unsigned m)
{
	unsigned n = g->members, pc = layout_parity_count(g), pd;
	int qd;

	layout_r456_parity(g, s, &pd, &qd);
	if (m == pd)
		return -1;
	if ((int)m == qd)
		return -2;
	switch (g->alg) {
	case LAYOUT_LEFT_ASYMMETRIC:
	case LAYOUT_RIGHT_ASYMMETRIC:
		if (pc == 2 && pd == n - 1)
			return (int)m - 1;
		return m > pd ? (int)(m - pc) : (int)m;
	case LAYOUT_LEFT_SYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC:
		return (int)((m + 2 * n - pd - pc) % n);
	case LAYOUT_PARITY_0:
		return (int)(m - pc);
	default:
		return (int)m;
	}
}

/* md's syndrome order: walk the members from the one after Q (wrapping),
 * the data members numbered 0, 1, ... as they come. */
static void q_slots(const struct layout_geom *g, struct layout_stripe *s)
{
	unsigned n = g->members, dd = g->data_members, k = 0;
	int idx[LAYOUT_MAX_MEMBERS]; /* member -> data index, -1 for P/Q */

	s->q_natural = 1;
	for (unsigned j = 0; j < dd; j++)
		s->qslot[j] = (uint8_t)j;
	if (s->q < 0)
		return;
	for (unsigned m = 0; m < n; m++)
		idx[m] = -1;
	for (unsigned j = 0; j < dd; j++)
		idx[s->data[j]] = (int)j;
	for (unsigned i = 1; i <= n; i++) {
		int j = idx[((unsigned)s->q + i) % n];
		if (j < 0)
			continue;
		s->qslot[j] = (uint8_t)k;
		s->q_natural &= (unsigned)j == k;
		k++;
	}
}

void layout_stripe(const struct layout_geom *g, uint64_t stripe, struct layout_stripe *s)
{
	unsigned pd;

	s->stripe = stripe;
	s->member_offset = stripe * g->chunk;
	s->logical = stripe * g->data_members * g->chunk;
	layout_r456_parity(g, stripe, &pd, &s->q);
	s->p = (int)pd;
	for (unsigned j = 0; j < g->data_members; j++)
		s->data[j] = layout_r456_data_member(g, stripe, j);
	q_slots(g, s);
}

static int r456_init(struct layout_geom *g, char *err, size_t errlen)
{
	int r = layout_smallest_member(g, g->chunk, &g->member_used, err, errlen);
	uint64_t cap;
	char a[32];

	if (r)
		return r;
	g->data_members = g->members - layout_parity_count(g);
	g->stripes = g->member_used / g->chunk;
	if (__builtin_mul_overflow(g->member_used, (uint64_t)g->data_members, &cap) ||
	    cap > LAYOUT_MAX_CAPACITY)
		return layout_errf(err, errlen, "capacity overflows: %u data members x %s exceeds 2^63 - 1 bytes",
				   g->data_members, layout_fmt_size(g->member_used, 0, a, sizeof(a)));
	g->capacity = cap;
	return 0;
}

static void r456_locate(const struct layout_geom *g, uint64_t off, unsigned copy,
			struct layout_extent *e)
{
	/* stripe = chunk / data_disks, data index = chunk % data_disks */
	uint64_t c = off / g->chunk, in = off % g->chunk;
	uint64_t s = c / g->data_members;

	(void)copy;
	e->logical = off;
	e->member = layout_r456_data_member(g, s, (unsigned)(c % g->data_members));
	e->offset = s * g->chunk + in;
	e->length = g->chunk - in;
	e->copy = 0;
}

static int r456_unmap(const struct layout_geom *g, unsigned member, uint64_t moff,
		      uint64_t *logical, unsigned *copy)
{
	uint64_t s = moff / g->chunk, in = moff % g->chunk;
	uint64_t first = s * g->data_members * g->chunk + in;
	int j = member_role(g, s, member);
	struct layout_extent e;

	*copy = 0;
	if (j < 0) {
		*logical = first; /* parity: data index 0 at the same in-chunk offset */
		return j == -1 ? LAYOUT_P : LAYOUT_Q;
	}
	*logical = first + (uint64_t)j * g->chunk;
	/* self-check, as md's compute_blocknr does: the forward map must agree */
	r456_locate(g, *logical, 0, &e);
	if (e.member != member || e.offset != moff)
		return -EIO;
	return LAYOUT_DATA;
}

static int r456_survives(const struct layout_geom *g, uint64_t failed_mask)
{
	return (unsigned)__builtin_popcountll(failed_mask) <= layout_parity_count(g);
}

const struct layout_ops layout_raid4_ops = {
	.name = "raid4",
	.min_members = 3,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = r456_init,
	.locate = r456_locate,
	.unmap = r456_unmap,
	.survives = r456_survives,
};

const struct layout_ops layout_raid5_ops = {
	.name = "raid5",
	.min_members = 3,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = r456_init,
	.locate = r456_locate,
	.unmap = r456_unmap,
	.survives = r456_survives,
};

const struct layout_ops layout_raid6_ops = {
	.name = "raid6",
	.min_members = 4,
	.max_members = LAYOUT_MAX_MEMBERS,
	.init = r456_init,
	.locate = r456_locate,
	.unmap = r456_unmap,
	.survives = r456_survives,
};
