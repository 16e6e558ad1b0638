/* sb_assemble: decide which candidate member plays which slot (docs/format.md,
 * "Assembly"). Pure: works on superblocks the caller has read. Rules are
 * applied one at a time over every candidate, so which rule refuses a bad set
 * does not depend on the order the members were given in. */
#include "fsvol/meta/sb.h"
#include "fsvol/meta/sb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout/layout.h"

static void set_note(struct sb_candidate *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_note(struct sb_candidate *c, const char *fmt, ...)
{
	va_list ap;

	c->used = 0;
	va_start(ap, fmt);
	vsnprintf(c->note, sizeof(c->note), fmt, ap);
	va_end(ap);
}

static const char *pname(const struct sb_candidate *c)
{
	return c->path ? c->path : "(unnamed member)";
}

static int valid(const struct sb_candidate *c)
{
	return !c->read_error && !c->decode_error;
}

/* A slot state that says "this member was not with us". */
static int gone(unsigned st)
{
	return st == SB_FAILED || st == SB_MISSING;
}

int sb_geom(const struct sb *s, struct layout_geom *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->level = (enum layout_level)s->level;
	g->alg = s->layout;
	g->copies = s->copies;
	g->members = s->members;
	g->chunk = s->chunk;
	for (unsigned i = 0; i < s->members && i < LAYOUT_MAX_MEMBERS; i++)
		g->member_size[i] = s->slots[i].data_size;
	return layout_init(g, err, errlen);
}

/* The first field that must be the same on every member of a volume and is
 * not: its name (into name) and both values. 0 when they all agree. State
 * (events, clean, slot states and UUIDs) may differ: it moves with time. */
static int disagree(const struct sb *a, const struct sb *b, char *name, size_t namelen,
		    uint64_t *va, uint64_t *vb)
{
#define FIELD(f)                                                   \
	if ((uint64_t)a->f != (uint64_t)b->f) {                    \
		snprintf(name, namelen, "%s", #f);                 \
		*va = a->f;                                        \
		*vb = b->f;                                        \
		return 1;                                          \
	}
	FIELD(level)
	FIELD(layout)
	FIELD(copies)
	FIELD(chunk)
	FIELD(members)
	FIELD(spares)
	FIELD(data_offset)
	FIELD(volume_size)
	FIELD(bitmap_offset)
	FIELD(bitmap_chunk)
	FIELD(ctime)
#undef FIELD
	for (unsigned i = 0; i < a->members + a->spares && i < SB_MAX_SLOTS; i++)
		if (a->slots[i].data_size != b->slots[i].data_size) {
			snprintf(name, namelen, "slots[%u].data_size", i);
			*va = a->slots[i].data_size;
			*vb = b->slots[i].data_size;
			return 1;
		}
	return 0;
}

/* How many valid candidates of ref's volume agree with it on every field. */
static unsigned agreeing(const struct sb_candidate *c, unsigned n, const struct sb *ref)
{
	char name[32];
	uint64_t a, b;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		if (valid(&c[i]) && !memcmp(c[i].sb.volume_uuid, ref->volume_uuid, 16) &&
		    !disagree(&c[i].sb, ref, name, sizeof(name), &a, &b))
			k++;
	return k;
}

static uint64_t need_bytes(const struct sb *ref, unsigned slot)
{
	uint64_t need = ref->data_offset + ref->slots[slot].data_size;

	return need < ref->data_offset ? UINT64_MAX : need; /* overflow: no member is that large */
}

/* " 1 2" for the bits of mask. */
static void fmt_slots(uint64_t mask, char *out, size_t outlen)
{
	size_t len = 0;

	out[0] = '\0';
	for (unsigned s = 0; s < 64 && len < outlen; s++)
		if (mask >> s & 1)
			len += (size_t)snprintf(out + len, outlen - len, " %u", s);
}

/* One assembly, md's way in three steps: examine what each member says,
 * select the truth and the members that agree with it, start (decide what is
 * missing and what force takes back). */
struct asm_ctx {
	struct sb_candidate *c;
	unsigned n;
	int force;
	struct sb_assembly *out;
	char *err;
	size_t errlen;
	int ri;                        /* the truth: the candidate whose superblock rules */
	int stale;                     /* the first stale candidate, -1: none */
	struct layout_geom g;
	unsigned order[SB_MAX_SLOTS];  /* candidates by rank: the truth, then events */
	int keep_out[SB_MAX_SLOTS];    /* never taken back: another geometry, split brain */
	uint64_t mask;                 /* raid slots with no member */
};

/* Examine: the list itself (count, the same file twice) and each member's
 * superblock (unreadable: refused, or absent with force). */
static int asm_examine(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	unsigned n = a->n;
	if (n == 0)
		return sb_refuse(a->err, a->errlen, "no members given");
	if (n > SB_MAX_SLOTS)
		return sb_refuse(a->err, a->errlen, "too many members (%u given, a volume has at most %d slots)",
			      n, SB_MAX_SLOTS);
	for (unsigned i = 0; i < n; i++) {
		c[i].used = 0;
		c[i].forced = 0;
		c[i].note[0] = '\0';
	}

	/* The same file twice would otherwise look like a duplicate slot claim:
	 * say that it is, naming both arguments. */
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if ((c[i].dev || c[i].ino) && c[i].dev == c[j].dev && c[i].ino == c[j].ino) {
				if (valid(&c[i]))
					return sb_refuse(a->err, a->errlen, "%s and %s both claim slot %" PRIu32
						      " (the same file, given twice)", pname(&c[i]), pname(&c[j]),
						      c[i].sb.index);
				return sb_refuse(a->err, a->errlen, "%s and %s are the same file (given twice)",
					      pname(&c[i]), pname(&c[j]));
			}

	for (unsigned i = 0; i < n; i++) {
		if (valid(&c[i]))
			continue;
		if (!a->force)
			return sb_refuse(a->err, a->errlen, "%s: cannot read superblock: %s", pname(&c[i]),
				      c[i].why[0] ? c[i].why : strerror(c[i].read_error ? -c[i].read_error : EINVAL));
		set_note(&c[i], "cannot read superblock: %s", c[i].why);
	}
	return 0;
}

/* Select the truth: the newest superblock; on a tie, the one most members
 * agree with (a single forged or mis-written block loses), then the first.
 * It must be of one volume with every member and describe a geometry. */
static int asm_select_truth(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	unsigned n = a->n;
	char u1[37], u2[37], why[160];
	int ri = -1;
	for (unsigned i = 0; i < n; i++)
		if (valid(&c[i]) && (ri < 0 || c[i].sb.events > c[ri].sb.events))
			ri = (int)i;
	if (ri < 0)
		return sb_refuse(a->err, a->errlen, "no valid fsvol superblock on any of the %u members", n);
	unsigned best = agreeing(c, n, &c[ri].sb);
	for (unsigned i = 0; i < n; i++) {
		unsigned k;
		if ((int)i == ri || !valid(&c[i]) || c[i].sb.events != c[ri].sb.events)
			continue;
		if ((k = agreeing(c, n, &c[i].sb)) > best) {
			best = k;
			ri = (int)i;
		}
	}
	a->ri = ri;
	const struct sb *ref = &c[ri].sb;

	/* Never mix volumes, even with force: that would write one volume's data
	 * into another's member. */
	for (unsigned i = 0; i < n; i++) {
		if (!valid(&c[i]))
			continue;
		if (memcmp(c[i].sb.volume_uuid, ref->volume_uuid, 16)) {
			sb_uuid_format(c[i].sb.volume_uuid, u1);
			sb_uuid_format(ref->volume_uuid, u2);
			return sb_refuse(a->err, a->errlen, "%s: belongs to another volume (uuid %s, expected %s)",
				      pname(&c[i]), u1, u2);
		}
	}

	/* The truth must describe a geometry, and its size must be that geometry's. */
	if (sb_geom(ref, &a->g, why, sizeof(why)))
		return sb_refuse(a->err, a->errlen, "%s: superblock describes no valid geometry: %s", pname(&c[ri]),
			      why);
	if (ref->volume_size != a->g.capacity)
		return sb_refuse(a->err, a->errlen, "%s: volume_size %" PRIu64 " is not the capacity of its geometry "
			      "(%s, %" PRIu32 " members: %" PRIu64 ")", pname(&c[ri]), ref->volume_size,
			      layout_level_name(a->g.level), ref->members, a->g.capacity);
	return 0;
}

/* Split brain (md: "ignoring X as it reports Y as failed"): two members
 * that each record the other as failed or missing were each used without
 * the other, and each may hold acknowledged writes the other lacks; so
 * does one that records the truth as failed. Candidates by rank (the
 * truth, then events, then order given): the lower-ranked one loses. */
static int asm_split_brain(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	unsigned n = a->n, k = 0;
	a->order[k++] = (unsigned)a->ri;
	for (unsigned i = 0; i < n; i++)
		if ((int)i != a->ri) {
			unsigned p = k++;
			while (p > 1 && c[a->order[p - 1]].sb.events < c[i].sb.events) {
				a->order[p] = a->order[p - 1];
				p--;
			}
			a->order[p] = i;
		}
	for (unsigned x = 0; x < n; x++) {
		struct sb_candidate *s = &c[a->order[x]];

		if (!s->used)
			continue;
		for (unsigned y = x + 1; y < n; y++) {
			struct sb_candidate *b = &c[a->order[y]];
			unsigned a_sees, b_sees;

			if (!b->used || b->sb.index == s->sb.index)
				continue;
			a_sees = s->sb.slots[b->sb.index].state;
			b_sees = b->sb.slots[s->sb.index].state;
			if (!gone(b_sees) || !(gone(a_sees) || x == 0))
				continue;
			if (!a->force)
				return sb_refuse(a->err, a->errlen, "split brain: %s (events %" PRIu64 ") records slot %"
					      PRIu32 " (%s) as %s, and %s (events %" PRIu64 ") records slot %" PRIu32
					      " (%s) as %s: each was used without the other and may hold writes "
					      "the other lacks; mount each alone to save its data, or use --force "
					      "to keep %s and drop %s",
					      pname(s), s->sb.events, b->sb.index, pname(b), sb_state_name(a_sees),
					      pname(b), b->sb.events, s->sb.index, pname(s), sb_state_name(b_sees),
					      pname(s), pname(b));
			set_note(b, "dropped (split brain: it records slot %" PRIu32 " (%s) as %s, %s records it as %s): "
				 "writes made on it without %s are lost", s->sb.index, pname(s), sb_state_name(b_sees),
				 pname(s), sb_state_name(a_sees), pname(s));
			a->keep_out[a->order[y]] = 1;
		}
	}
	return 0;
}

/* Select the members: those that agree with the truth on what every member
 * shares, claim a slot of it that records them, are not stale, lost no split
 * brain and hold the bytes their slot needs. */
static int asm_select_members(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	unsigned n = a->n, nslots;
	const struct sb *ref = &c[a->ri].sb;
	char u1[37], u2[37], field[32];
	uint64_t va, vb;
	int r;

	/* Fields every member must share: a member that differs is not of this
	 * volume as the truth describes it, whatever its event count. */
	for (unsigned i = 0; i < n; i++) {
		c[i].used = valid(&c[i]);
		if (!c[i].used || !disagree(&c[i].sb, ref, field, sizeof(field), &va, &vb))
			continue;
		if (!a->force)
			return sb_refuse(a->err, a->errlen, "%s: disagrees with %s on %s (%" PRIu64 ", %s has %" PRIu64 ")",
				      pname(&c[i]), pname(&c[a->ri]), field, va, pname(&c[a->ri]), vb);
		set_note(&c[i], "does not belong: %s %" PRIu64 " differs from %s's %" PRIu64, field, va,
			 pname(&c[a->ri]), vb);
		a->keep_out[i] = 1;
	}

	nslots = ref->members + ref->spares; /* <= SB_MAX_SLOTS: checked by sb_decode */
	if (n > nslots)
		return sb_refuse(a->err, a->errlen, "too many members: %u given, the volume has %u slots (%" PRIu32
			      " members + %" PRIu32 " spares)", n, nslots, ref->members, ref->spares);

	for (unsigned i = 0; i < n; i++)
		if (c[i].used && c[i].sb.index >= nslots)
			return sb_refuse(a->err, a->errlen, "%s: claims slot %" PRIu32 " but the volume has %u slots",
				      pname(&c[i]), c[i].sb.index, nslots);

	if ((r = asm_split_brain(a)))
		return r;

	/* Stale: missed state changes, its data may be out of date. Without
	 * force the refusal waits: whether the volume runs without it decides
	 * which message helps. */
	for (unsigned i = 0; i < n; i++) {
		if (!c[i].used || c[i].sb.events >= ref->events)
			continue;
		if (a->stale < 0)
			a->stale = (int)i;
		set_note(&c[i], "stale (events %" PRIu64 ", volume at %" PRIu64 "): not used",
			 c[i].sb.events, ref->events);
	}

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (c[i].used && c[j].used && c[i].sb.index == c[j].sb.index)
				return sb_refuse(a->err, a->errlen, "%s and %s both claim slot %" PRIu32,
					      pname(&c[i]), pname(&c[j]), c[i].sb.index);

	for (unsigned i = 0; i < n; i++) {
		const struct sb_slot *sl;

		if (!c[i].used)
			continue;
		sl = &ref->slots[c[i].sb.index];
		if (memcmp(c[i].sb.member_uuid, sl->uuid, 16)) {
			sb_uuid_format(c[i].sb.member_uuid, u1);
			sb_uuid_format(sl->uuid, u2);
			return sb_refuse(a->err, a->errlen, "%s: not the member recorded in slot %" PRIu32
				      " (uuid %s, slot records %s)", pname(&c[i]), c[i].sb.index, u1, u2);
		}
	}

	/* Recorded failed or removed by the volume itself: absent, not an error. */
	for (unsigned i = 0; i < n; i++) {
		unsigned st;

		if (!c[i].used)
			continue;
		st = ref->slots[c[i].sb.index].state;
		if (gone(st) || st == SB_EMPTY)
			set_note(&c[i], "slot %" PRIu32 " is recorded %s: not used", c[i].sb.index,
				 sb_state_name(st));
	}

	for (unsigned i = 0; i < n; i++) {
		uint64_t need;

		if (!c[i].used)
			continue;
		need = need_bytes(ref, c[i].sb.index);
		if (c[i].size < need)
			return sb_refuse(a->err, a->errlen, "%s: truncated (%" PRIu64 " bytes, needs %" PRIu64 ")",
				      pname(&c[i]), c[i].size, need);
	}
	return 0;
}

/* Beyond redundancy: the members that failed last (highest events) hold the
 * newest data of what is gone. Take back as few as the level needs (mdadm
 * --assemble --force), only with force. */
static int asm_take_back(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	const struct sb *ref = &c[a->ri].sb;
	const struct layout_geom *g = &a->g;
	int back[SB_MAX_SLOTS], nb = 0;
	uint64_t m = a->mask;
	char slots[200], names[400];
	size_t len = 0;

	for (unsigned x = 1; x < a->n && !layout_survives(g, m); x++) {
		const struct sb_candidate *b = &c[a->order[x]];
		unsigned s = b->sb.index;

		if (!valid(b) || b->used || a->keep_out[a->order[x]] || s >= ref->members || !(m >> s & 1) ||
		    memcmp(b->sb.member_uuid, ref->slots[s].uuid, 16) || b->size < need_bytes(ref, s))
			continue;
		back[nb++] = (int)a->order[x];
		m &= ~(1ull << s);
	}
	/* keep only the ones the level needs, dropping the oldest first */
	for (int k = nb - 1; k >= 0 && layout_survives(g, m); k--) {
		uint64_t bit = 1ull << c[back[k]].sb.index;
		if (layout_survives(g, m | bit)) {
			m |= bit;
			memmove(&back[k], &back[k + 1], (size_t)(nb - k - 1) * sizeof(back[0]));
			nb--;
		}
	}
	fmt_slots(a->mask, slots, sizeof(slots));
	if (!layout_survives(g, m))
		return sb_refuse(a->err, a->errlen, "%s cannot run without member slot(s)%s, and no member given "
			      "can stand in for them", layout_level_name(g->level), slots);
	names[0] = '\0';
	for (int k = 0; k < nb && len < sizeof(names); k++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s (events %" PRIu64 ")",
					k ? ", " : "", pname(&c[back[k]]), c[back[k]].sb.events);
	if (!a->force)
		return sb_refuse(a->err, a->errlen, "%s cannot run without member slot(s)%s (failed beyond "
			      "redundancy; volume at events %" PRIu64 "): use --force to take back %s, "
			      "the most recently failed of the members it needs; writes made after "
			      "it failed are missing from it",
			      layout_level_name(g->level), slots, ref->events, names);
	for (int k = 0; k < nb; k++) {
		struct sb_candidate *b = &c[back[k]];
		unsigned s = b->sb.index;

		b->used = 1;
		b->forced = 1;
		snprintf(b->note, sizeof(b->note), "taken back by --force into slot %u (events %" PRIu64
			 ", volume at %" PRIu64 "): writes made after it failed are missing from it, "
			 "data there may be stale", s, b->sb.events, ref->events);
		a->out->sb.slots[s].state = SB_ACTIVE;
		a->out->slot_of[s] = back[k];
		a->mask &= ~(1ull << s);
	}
	return 0;
}

/* Start: the slots the members play, what is missing, and whether the level
 * runs without it (force may take members back, a stale one is refused). */
static int asm_start(struct asm_ctx *a)
{
	struct sb_candidate *c = a->c;
	const struct sb *ref = &c[a->ri].sb;
	int r;

	a->out->sb = *ref;
	for (unsigned i = 0; i < a->n; i++)
		if (c[i].used)
			a->out->slot_of[c[i].sb.index] = (int)i;
	/* Only raid slots count as missing: an absent spare degrades nothing. */
	for (unsigned s = 0; s < ref->members; s++)
		if (a->out->slot_of[s] < 0)
			a->mask |= 1ull << s;

	if (!layout_survives(&a->g, a->mask)) {
		if ((r = asm_take_back(a)))
			return r;
	} else if (a->stale >= 0 && !a->force) {
		const struct sb_candidate *st = &c[a->stale];
		return sb_refuse(a->err, a->errlen, "%s: stale (events %" PRIu64 ", volume at %" PRIu64
			      "): it missed changes while it was failed or left out; mount without it, then "
			      "'fsvol re-add MNT %s' brings it up to date, or use --force to assemble without it",
			      pname(st), st->sb.events, ref->events, pname(st));
	}
	a->out->missing_mask = a->mask;
	a->out->missing = (unsigned)__builtin_popcountll(a->mask);
	return 0;
}

int sb_assemble(struct sb_candidate *c, unsigned n, int force,
		struct sb_assembly *out, char *err, size_t errlen)
{
	struct asm_ctx a = { .c = c, .n = n, .force = force, .out = out, .err = err, .errlen = errlen,
			     .ri = -1, .stale = -1 };
	int r;

	memset(out, 0, sizeof(*out));
	for (unsigned s = 0; s < SB_MAX_SLOTS; s++)
		out->slot_of[s] = -1;
	if ((r = asm_examine(&a)) || (r = asm_select_truth(&a)) || (r = asm_select_members(&a)))
		return r;
	return asm_start(&a);
}
