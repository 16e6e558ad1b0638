/* md1_sb: md's version-1 superblock as fsvol's struct sb and back (md1_sb.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/meta/md1_sb.h"
#include "layout/layout.h"

/* A stand-in member UUID every member computes alike for device number d. */
static void md1_slot_uuid(const uint8_t set[16], unsigned d, uint8_t out[16])
{
	memcpy(out, set, 16);
	out[14] ^= (uint8_t)(d >> 8);
	out[15] ^= (uint8_t)(d + 1);
}

static int md1_not_yet(const struct md1_sb *m, char *err, size_t errlen)
{
	static const struct { uint32_t bit; const char *what; } f[] = {
		{ MD1_F_RESHAPE_ACTIVE, "a reshape in progress" },
		{ MD1_F_RECOVERY_OFFSET, "a recovery in progress (recovery_offset; mount the others with --run and "
					 "re-add it)" },
		{ MD1_F_REPLACEMENT, "a replacement in progress" },
		{ MD1_F_JOURNAL, "a write journal" },
		{ MD1_F_PPL, "a partial parity log" },
	};
	int r = md1_usable(m, err, errlen);
	if (r)
		return r;
	for (unsigned i = 0; i < sizeof(f) / sizeof(*f); i++)
		if (m->feature_map & f[i].bit)
			return snprintf(err, errlen, "md member with %s: fsvol does not assemble that from md's format yet",
					f[i].what), -EOPNOTSUPP;
	if (m->level == MD1_LEVEL_LINEAR)
		return snprintf(err, errlen, "md linear: fsvol does not assemble it from md's format yet (each "
				"member's size is only in its own superblock)"), -EOPNOTSUPP;
	if (md1_role(m) > MD1_ROLE_MAX)
		return snprintf(err, errlen, "md %s member (role 0x%x): fsvol assembles md's active members only, "
				"for now", md1_role(m) == MD1_ROLE_SPARE ? "spare" : "faulty", md1_role(m)), -EOPNOTSUPP;
	if (m->raid_disks < 1 || m->raid_disks > SB_MAX_SLOTS)
		return snprintf(err, errlen, "md raid_disks %u (fsvol: 1..%u)", m->raid_disks, SB_MAX_SLOTS), -EOPNOTSUPP;
	return 0;
}

int md1_to_sb(const struct md1_sb *m, uint64_t dev, struct sb *s, char *err, size_t errlen)
{
	struct layout_geom g;
	int r = md1_not_yet(m, err, errlen);
	if (r)
		return r;
	memset(s, 0, sizeof(*s));
	memset(&g, 0, sizeof(g));
	if ((r = md1_to_geom(m->level, m->layout, m->chunksize, &g, err, errlen)))
		return r;
	/* the component size: md's size, or (raid0) each device's data_size */
	uint64_t used = (m->size ? m->size : m->data_size) * MD1_SECTOR;
	if ((m->data_offset + used / MD1_SECTOR) * MD1_SECTOR > dev)
		return snprintf(err, errlen, "md member of %llu bytes: smaller than its data offset and size",
				(unsigned long long)dev), -EINVAL;
	g.members = m->raid_disks;
	for (unsigned i = 0; i < g.members; i++)
		g.member_size[i] = used;
	if ((r = layout_init(&g, err, errlen)))
		return r;
	s->version = SB_VERSION;
	s->features = SB_FEAT_MD_Q; /* md wrote it: md's Q order, nothing to rewrite */
	s->md_minor = 1 + md1_minor(m);
	memcpy(s->volume_uuid, m->set_uuid, 16);
	s->ctime = m->ctime & 0xffffffffffull;
	s->utime = m->utime & 0xffffffffffull;
	s->level = g.level;
	s->layout = g.alg;
	s->copies = layout_copies(&g);
	s->chunk = g.chunk;
	s->members = g.members;
	s->data_offset = m->data_offset * MD1_SECTOR;
	s->volume_size = g.capacity;
	s->events = m->events;
	s->clean = m->resync_offset == MD1_MAX_SECTOR;
	const char *name = strchr(m->set_name, ':');
	name = name ? name + 1 : m->set_name;
	if (strlen(name) <= SB_NAME_MAX && !sb_name_check(name, NULL, 0))
		memcpy(s->name, name, strlen(name) + 1);
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		s->slots[i].number = SB_NO_NUMBER;
	for (unsigned r0 = 0; r0 < g.members; r0++) {
		struct sb_slot *sl = &s->slots[r0];
		sl->state = SB_MISSING; /* until a device claims the role */
		sl->data_size = g.member_used;
		for (unsigned d = 0; d < m->max_dev && d < SB_MAX_SLOTS; d++)
			if (m->dev_roles[d] == r0) {
				sl->state = SB_ACTIVE;
				sl->number = (uint16_t)d;
				md1_slot_uuid(m->set_uuid, d, sl->uuid);
			}
	}
	unsigned role = md1_role(m);
	if (role >= g.members || m->dev_number >= SB_MAX_SLOTS)
		return snprintf(err, errlen, "md member with role %u and device number %u (fsvol: role below %u, "
				"number below %u)", role, m->dev_number, g.members, SB_MAX_SLOTS), -EOPNOTSUPP;
	s->index = role;
	md1_slot_uuid(m->set_uuid, m->dev_number, s->member_uuid);
	if (m->devflags & MD1_WRITE_MOSTLY)
		s->slots[role].flags |= SB_SLOT_WRITE_MOSTLY;
	if (m->devflags & MD1_FAILFAST)
		s->slots[role].flags |= SB_SLOT_FAILFAST;
	return 0;
}

void md1_update(struct md1_sb *m, const struct sb *s, unsigned index)
{
	m->events = s->events;
	m->utime = s->utime;
	m->resync_offset = s->clean ? MD1_MAX_SECTOR : 0;
	/* md's super_1_sync: every entry "no device" (0xffff, a spare's value),
	 * then each device it holds: faulty 0xfffe (failed but not removed yet),
	 * its role (in sync or being recovered into it), else spare. A device
	 * removed, or missing since assembly, is no longer there: 0xffff. */
	for (unsigned d = 0; d < m->max_dev; d++)
		m->dev_roles[d] = MD1_ROLE_SPARE;
	for (unsigned i = 0; i < s->members + s->spares && i < SB_MAX_SLOTS; i++) {
		const struct sb_slot *sl = &s->slots[i];
		if (sl->number >= MD1_MAX_DEV)
			continue;
		if (sl->number >= m->max_dev) {
			for (unsigned d = m->max_dev; d <= sl->number; d++)
				m->dev_roles[d] = MD1_ROLE_SPARE;
			m->max_dev = sl->number + 1u; /* a new device Number (an add) */
		}
		if (i < s->members && (sl->state == SB_ACTIVE || sl->state == SB_REBUILDING))
			m->dev_roles[sl->number] = (uint16_t)i;
		else if (sl->state == SB_FAILED)
			m->dev_roles[sl->number] = MD1_ROLE_FAULTY;
	}
	const struct sb_slot *me = index < SB_MAX_SLOTS ? &s->slots[index] : NULL;
	/* the device being recovered into its role: how far (md's
	 * recovery_offset, sectors of the data area) */
	m->feature_map &= ~(uint32_t)(MD1_F_RECOVERY_OFFSET | MD1_F_RECOVERY_BITMAP);
	m->recovery_offset = 0;
	if (me && index < s->members && me->state == SB_REBUILDING) {
		m->feature_map |= MD1_F_RECOVERY_OFFSET;
		m->recovery_offset = me->rebuild_pos / MD1_SECTOR;
	}
	if (me) {
		uint8_t f = (uint8_t)(m->devflags & ~(MD1_WRITE_MOSTLY | MD1_FAILFAST));
		f |= me->flags & SB_SLOT_WRITE_MOSTLY ? MD1_WRITE_MOSTLY : 0;
		f |= me->flags & SB_SLOT_FAILFAST ? MD1_FAILFAST : 0;
		m->devflags = f;
	}
}
