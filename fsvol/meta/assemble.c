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

int sb_assemble(struct sb_candidate *c, unsigned n, int force,
		struct sb_assembly *out, char *err, size_t errlen)
{
	char u1[37], u2[37];
	const struct sb *ref = NULL;
	unsigned nslots;

	memset(out, 0, sizeof(*out));
	for (unsigned s = 0; s < SB_MAX_SLOTS; s++)
		out->slot_of[s] = -1;
	if (n == 0)
		return sb_refuse(err, errlen, "no members given");
	if (n > SB_MAX_SLOTS)
		return sb_refuse(err, errlen, "too many members (%u given, a volume has at most %d slots)",
			      n, SB_MAX_SLOTS);
	for (unsigned i = 0; i < n; i++) {
		c[i].used = 0;
		c[i].note[0] = '\0';
	}

	/* The same file twice would otherwise look like a duplicate slot claim. */
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if ((c[i].dev || c[i].ino) && c[i].dev == c[j].dev && c[i].ino == c[j].ino)
				return sb_refuse(err, errlen, "%s given twice (also as %s)", pname(&c[i]),
					      pname(&c[j]));

	/* Unreadable members: refused, or absent with force. */
	for (unsigned i = 0; i < n; i++) {
		if (!c[i].read_error && !c[i].decode_error)
			continue;
		if (!force)
			return sb_refuse(err, errlen, "%s: cannot read superblock: %s", pname(&c[i]),
				      c[i].why[0] ? c[i].why : strerror(c[i].read_error ? -c[i].read_error : EINVAL));
		set_note(&c[i], "cannot read superblock: %s", c[i].why);
	}

	/* The newest superblock is the truth (first one on a tie). */
	for (unsigned i = 0; i < n; i++)
		if (!c[i].read_error && !c[i].decode_error && (!ref || c[i].sb.events > ref->events))
			ref = &c[i].sb;
	if (!ref)
		return sb_refuse(err, errlen, "no valid fsvol superblock on any of the %u members", n);

	/* Never mix volumes, even with force: that would write one volume's data
	 * into another's member. */
	for (unsigned i = 0; i < n; i++) {
		if (c[i].read_error || c[i].decode_error)
			continue;
		if (memcmp(c[i].sb.volume_uuid, ref->volume_uuid, 16)) {
			sb_uuid_format(c[i].sb.volume_uuid, u1);
			sb_uuid_format(ref->volume_uuid, u2);
			return sb_refuse(err, errlen, "%s: belongs to another volume (uuid %s, expected %s)",
				      pname(&c[i]), u1, u2);
		}
	}

	nslots = ref->members + ref->spares; /* <= SB_MAX_SLOTS: checked by sb_decode */
	if (n > nslots)
		return sb_refuse(err, errlen, "too many members: %u given, the volume has %u slots (%" PRIu32
			      " members + %" PRIu32 " spares)", n, nslots, ref->members, ref->spares);

	/* Candidates still in the running: valid, same volume. */
	for (unsigned i = 0; i < n; i++)
		c[i].used = !c[i].read_error && !c[i].decode_error;

	/* Stale: missed state changes, its data may be out of date. */
	for (unsigned i = 0; i < n; i++) {
		if (!c[i].used || c[i].sb.events >= ref->events)
			continue;
		if (!force)
			return sb_refuse(err, errlen, "%s: stale (events %" PRIu64 ", volume at %" PRIu64
				      "): it was failed or removed; re-add it or use --force",
				      pname(&c[i]), c[i].sb.events, ref->events);
		set_note(&c[i], "stale (events %" PRIu64 ", volume at %" PRIu64 "): not used",
			 c[i].sb.events, ref->events);
	}

	for (unsigned i = 0; i < n; i++)
		if (c[i].used && c[i].sb.index >= nslots)
			return sb_refuse(err, errlen, "%s: claims slot %" PRIu32 " but the volume has %u slots",
				      pname(&c[i]), c[i].sb.index, nslots);

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (c[i].used && c[j].used && c[i].sb.index == c[j].sb.index)
				return sb_refuse(err, errlen, "%s and %s both claim slot %" PRIu32,
					      pname(&c[i]), pname(&c[j]), c[i].sb.index);

	for (unsigned i = 0; i < n; i++) {
		const struct sb_slot *sl;

		if (!c[i].used)
			continue;
		sl = &ref->slots[c[i].sb.index];
		if (memcmp(c[i].sb.member_uuid, sl->uuid, 16)) {
			sb_uuid_format(c[i].sb.member_uuid, u1);
			sb_uuid_format(sl->uuid, u2);
			return sb_refuse(err, errlen, "%s: not the member recorded in slot %" PRIu32
				      " (uuid %s, slot records %s)", pname(&c[i]), c[i].sb.index, u1, u2);
		}
	}

	/* Recorded failed or removed by the volume itself: absent, not an error. */
	for (unsigned i = 0; i < n; i++) {
		unsigned st;

		if (!c[i].used)
			continue;
		st = ref->slots[c[i].sb.index].state;
		if (st == SB_FAILED || st == SB_MISSING || st == SB_EMPTY)
			set_note(&c[i], "slot %" PRIu32 " is recorded %s: not used", c[i].sb.index,
				 sb_state_name(st));
	}

	for (unsigned i = 0; i < n; i++) {
		const struct sb_slot *sl;
		uint64_t need;

		if (!c[i].used)
			continue;
		sl = &ref->slots[c[i].sb.index];
		need = ref->data_offset + sl->data_size;
		if (need < ref->data_offset)
			need = UINT64_MAX; /* overflow: no member is that large */
		if (c[i].size < need)
			return sb_refuse(err, errlen, "%s: truncated (%" PRIu64 " bytes, needs %" PRIu64 ")",
				      pname(&c[i]), c[i].size, need);
	}

	out->sb = *ref;
	for (unsigned i = 0; i < n; i++)
		if (c[i].used)
			out->slot_of[c[i].sb.index] = (int)i;
	/* Only raid slots count as missing: an absent spare degrades nothing. */
	for (unsigned s = 0; s < ref->members; s++)
		if (out->slot_of[s] < 0) {
			out->missing++;
			out->missing_mask |= 1ull << s;
		}
	return 0;
}
