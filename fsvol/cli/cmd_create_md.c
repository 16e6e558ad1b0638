/* fsvol create --metadata 1.0|1.1|1.2: members in Linux md's own format
 * (md's version-1 superblock, internal bitmap and bad-block log at
 * mdadm's offsets), so mdadm, the md driver, libblkid and GRUB take them as
 * md's. Placement and codec: fsvol/meta/md1.h; docs/format.md, "md's format". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_create_md.h"
#include "fsvol/cli/cmd_md.h"
#include "fsvol/core/volume.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/md1.h"
#include "fsvol/util/size.h"
#include "layout/layout.h"

struct md_create {
	const struct vol_create *vc;
	unsigned minor, n, members;
	struct member m[SB_MAX_SLOTS];
	int opened[SB_MAX_SLOTS], made[SB_MAX_SLOTS];
	uint64_t dev[SB_MAX_SLOTS];      /* sectors of each device */
	uint64_t doff;                   /* sectors */
	uint64_t bitmap_chunk;           /* bytes, 0: none */
	struct layout_geom g;
	struct md1_sb sb;
	struct md1_bitmap bm;
	const struct md_convert *conv;   /* fsvol convert: the volume's identity; NULL: create */
};

/* Any superblock fsvol knows (its own at 0, md's at any version's place):
 * a description for the refusal, or NULL. */
static const char *md_existing(struct member *m, char *what, size_t len)
{
	struct md1_sb *s = malloc(sizeof(*s));
	uint8_t *buf = NULL;
	const char *r = NULL;
	char err[256];
	if (s && cmd_md_probe(m, s, err, sizeof(err)) > 0) {
		char u[36];
		md1_uuid_format(s->set_uuid, u);
		snprintf(what, len, "md array %s (metadata 1.%u, name %.32s)", u, md1_minor(s), s->set_name);
		r = what;
	} else if (!posix_memalign((void **)&buf, 4096, SB_SIZE) && m->size >= SB_SIZE &&
		   !member_pread(m, buf, SB_SIZE, 0)) {
		struct sb f;
		if (!sb_decode(buf, SB_SIZE, &f, err, sizeof(err))) {
			char u[37];
			sb_uuid_format(f.volume_uuid, u);
			snprintf(what, len, "fsvol volume %s", u);
			r = what;
		}
	}
	free(buf);
	free(s);
	return r;
}

/* Sectors a new member file needs to hold size sectors of data. */
static uint64_t md_file_sectors(const struct md_create *x, uint64_t size)
{
	uint64_t dev = size;
	if (x->minor) {
		for (int k = 0; k < 4; k++) /* the default offset grows with the device: settle it */
			dev = size + (x->vc->data_offset ? x->vc->data_offset / MD1_SECTOR
					: md1_default_data_offset(x->minor, dev, x->g.chunk));
		return dev;
	}
	uint64_t meta = 16 + 8 + 8 + md1_bm_space(size) + (x->bitmap_chunk ?
			md1_bitmap_bytes(size, x->bitmap_chunk < 4096 ? 4096 : x->bitmap_chunk, 4096) / MD1_SECTOR : 0);
	return (size + meta + 7) & ~(uint64_t)7;
}

/* Open or create every member; sizes in sectors. */
static int md_open(const struct cmd *c, struct md_create *x, char *const *paths)
{
	char err[512], what[256];
	uint64_t need = x->vc->size ? md_file_sectors(x, x->vc->size / MD1_SECTOR) * MD1_SECTOR : 0;
	for (unsigned i = 0; i < x->n; i++) {
		int r = member_open(&x->m[i], paths[i], 0, err, sizeof(err));
		if (r == -ENOENT && need) {
			if ((r = member_create(paths[i], need, err, sizeof(err))))
				return cmd_err(c, "%s", err);
			x->made[i] = 1;
			r = member_open(&x->m[i], paths[i], 0, err, sizeof(err));
		} else if (r == -ENOENT) {
			return cmd_err(c, "%s: does not exist; give -z SIZE to create it", paths[i]);
		}
		if (r)
			return cmd_err(c, "%s", err);
		x->opened[i] = 1;
		if (member_lock(&x->m[i]))
			return cmd_err(c, "%s: in use by a mounted fsvol volume", paths[i]);
		if (!x->made[i] && !x->vc->force && md_existing(&x->m[i], what, sizeof(what)))
			return cmd_err(c, "%s: already a member of %s; use --force to overwrite", paths[i], what);
		if (!x->made[i] && x->m[i].size < need) {
			if (x->m[i].is_blockdev || !x->m[i].ops->grow || (r = x->m[i].ops->grow(&x->m[i], need)))
				return cmd_err(c, "%s: too small for -z (%llu bytes, needs %llu)%s", paths[i],
					       (unsigned long long)x->m[i].size, (unsigned long long)need,
					       x->m[i].is_blockdev ? ": a device cannot be grown" : "");
			x->m[i].size = need;
		}
		x->dev[i] = x->m[i].size / MD1_SECTOR;
	}
	return 0;
}

/* The geometry on what each device offers after md's metadata. */
static int md_geom(const struct cmd *c, struct md_create *x, char *const *paths)
{
	char err[512];
	x->g = x->vc->geom;
	x->g.members = x->members;
	x->doff = x->minor == 0 ? 0 : x->vc->data_offset ? x->vc->data_offset / MD1_SECTOR
			: md1_default_data_offset(x->minor, x->dev[0], x->g.chunk); /* mdadm: the first device's */
	for (unsigned i = 0; i < x->members; i++) {
		uint64_t avail = md1_avail(x->minor, x->dev[i], x->doff) * MD1_SECTOR;
		if (x->vc->size && x->vc->size > avail)
			return cmd_err(c, "%s: too small: %llu bytes of data after md's metadata, -z asks %llu", paths[i],
				       (unsigned long long)avail, (unsigned long long)x->vc->size);
		if (avail < LAYOUT_MIN_CHUNK)
			return cmd_err(c, "%s: too small for md's metadata (%llu sectors)", paths[i],
				       (unsigned long long)x->dev[i]);
		x->g.member_size[i] = x->vc->size ? x->vc->size : avail;
	}
	if (layout_init(&x->g, err, sizeof(err)))
		return cmd_err(c, "%s", err);
	int redundant = layout_copies(&x->g) > 1 || layout_parity_count(&x->g) > 0;
	if (x->vc->bitmap > 0 && !redundant)
		return cmd_uerr(c, "%s has no redundancy: a write-intent bitmap would serve nothing (use --bitmap none)",
				layout_level_name(x->g.level));
	if (x->vc->bitmap >= 0 && redundant) {
		uint64_t size = x->g.member_used / MD1_SECTOR;
		x->bitmap_chunk = x->vc->bitmap_chunk ? x->vc->bitmap_chunk : md1_bitmap_default_chunk(size);
		if (x->bitmap_chunk > UINT32_MAX)
			return cmd_uerr(c, "--bitmap-chunk: at most 2G in md's bitmap");
	}
	return 0;
}

/* The superblock fields every member shares. */
static int md_sb(const struct cmd *c, struct md_create *x)
{
	char err[256], host[64] = "", name[SB_NAME_MAX + 1];
	struct md1_sb *s = &x->sb;
	memset(s, 0, sizeof(*s));
	if (md1_from_geom(&x->g, &s->level, &s->layout, &s->chunksize, err, sizeof(err)))
		return cmd_uerr(c, "--metadata 1.%u: %s", x->minor, err);
	if (x->conv)
		memcpy(s->set_uuid, x->conv->uuid, 16); /* the volume keeps its UUID */
	else
		sb_uuid_generate(s->set_uuid);
	if (x->vc->name) {
		snprintf(name, sizeof(name), "%s", x->vc->name);
	} else {
		struct sb tmp = { 0 };
		memcpy(tmp.volume_uuid, s->set_uuid, 16);
		sb_volume_name(&tmp, name);
	}
	/* mdadm's form: homehost:name when it fits md's 32 bytes */
	gethostname(host, sizeof(host) - 1);
	size_t hl = strlen(host), nl = strlen(name);
	if (hl && hl + 1 + nl < 32) {
		memcpy(s->set_name, host, hl);
		s->set_name[hl] = ':';
		memcpy(s->set_name + hl + 1, name, nl + 1);
	} else {
		memcpy(s->set_name, name, nl + 1);
	}
	s->ctime = s->utime = (uint64_t)time(NULL);
	if (x->conv)
		s->ctime = x->conv->ctime;
	s->raid_disks = x->members;
	s->size = x->g.level == LAYOUT_LINEAR || x->g.level == LAYOUT_RAID0 ? 0 : x->g.member_used / MD1_SECTOR;
	s->data_offset = x->doff;
	s->events = 0; /* as mdadm writes it: the driver's first start bumps it */
	s->resync_offset = MD1_MAX_SECTOR; /* data areas zeroed: in sync (or --assume-clean) */
	s->max_dev = (uint32_t)(((MD1_HEADER + 2 * x->n + 511) / 512 * 512 - MD1_HEADER) / 2);
	for (unsigned i = 0; i < MD1_MAX_DEV; i++)
		s->dev_roles[i] = i < x->members ? (uint16_t)i : MD1_ROLE_SPARE;
	if (x->bitmap_chunk) {
		s->feature_map |= MD1_F_BITMAP_OFFSET;
		memset(&x->bm, 0, sizeof(x->bm));
		x->bm.version = MD1_BITMAP_V4;
		memcpy(x->bm.uuid, s->set_uuid, 16);
		x->bm.sync_size = x->g.member_used / MD1_SECTOR;
		x->bm.chunksize = (uint32_t)x->bitmap_chunk;
		x->bm.daemon_sleep = MD1_BITMAP_DAEMON_SLEEP;
		x->bm.write_behind = x->vc->write_behind;
	}
	return 0;
}

/* One member: place, zero, write the bitmap, the log and the superblock. */
static int md_write(const struct cmd *c, struct md_create *x, unsigned i, const char *path)
{
	char err[256];
	struct member *m = &x->m[i];
	struct md1_sb s = x->sb;
	uint64_t used = x->g.level == LAYOUT_LINEAR && i < x->members ? x->g.member_size[i] : x->g.member_used;
	struct md1_place p = { .minor = x->minor, .dev = x->dev[i], .data_offset = x->doff,
			       .size = used / MD1_SECTOR, .bitmap_chunk = x->bitmap_chunk, .bblog = x->vc->bbl >= 0 };
	if (md1_place(&p, err, sizeof(err)))
		return cmd_err(c, "%s: %s", path, err);
	s.super_offset = p.super_offset;
	/* raid0 and linear: md uses each device's data_size whole; make it what fsvol uses */
	s.data_size = x->g.level == LAYOUT_LINEAR || x->g.level == LAYOUT_RAID0 ? used / MD1_SECTOR : p.data_size;
	s.bitmap_offset = p.bitmap_offset;
	s.bblog_offset = p.bblog_offset;
	s.bblog_size = p.bblog_size;
	s.dev_number = i;
	s.devflags = (uint8_t)((x->vc->flags[i] & SB_SLOT_WRITE_MOSTLY ? MD1_WRITE_MOSTLY : 0) |
			       (x->vc->flags[i] & SB_SLOT_FAILFAST ? MD1_FAILFAST : 0));
	sb_uuid_generate(s.device_uuid);
	uint64_t data = x->doff * MD1_SECTOR;
	int r = 0;
	if (!x->vc->assume_clean && !x->made[i])
		r = m->ops->zero(m, data, used);
	if (!r && x->vc->prealloc && m->ops->alloc) /* --prealloc: the data area's space now */
		r = m->ops->alloc(m, data, used);
	/* the metadata gap (1.1/1.2: superblock to data; 1.0: data end to the
	 * device's end) holds nothing from an earlier life */
	uint64_t lo = x->minor ? 0 : s.data_size * MD1_SECTOR, hi = x->minor ? data : m->size;
	if (x->conv)
		lo = SB_SIZE; /* fsvol's superblock stays until every member has md's (md_convert_end) */
	if (!r && !x->made[i] && hi > lo)
		r = m->ops->zero(m, lo, hi - lo);
	uint8_t *buf = NULL;
	size_t bbytes = x->bitmap_chunk ? md1_bitmap_bytes(p.size, x->bitmap_chunk, 4096) : 0;
	size_t len = bbytes > MD1_SB_BYTES ? bbytes : MD1_SB_BYTES;
	if (!r && posix_memalign((void **)&buf, 4096, len))
		r = -ENOMEM;
	if (!r && bbytes) { /* header then zero bits: nothing to resync */
		memset(buf, 0, bbytes);
		md1_bitmap_encode(&x->bm, buf);
		r = member_pwrite(m, buf, bbytes, (uint64_t)((int64_t)s.super_offset + s.bitmap_offset) * MD1_SECTOR);
	}
	if (!r && s.bblog_size) {
		md1_bblog_encode(NULL, 0, buf, (size_t)s.bblog_size * MD1_SECTOR);
		r = member_pwrite(m, buf, (size_t)s.bblog_size * MD1_SECTOR,
				  (uint64_t)((int64_t)s.super_offset + s.bblog_offset) * MD1_SECTOR);
	}
	if (!r) {
		md1_encode(&s, buf);
		r = member_pwrite(m, buf, MD1_SB_BYTES, s.super_offset * MD1_SECTOR);
	}
	if (!r)
		r = member_flush(m);
	free(buf);
	if (r)
		return cmd_err(c, "%s: writing md's metadata: %s", path, strerror(-r));
	return 0;
}

/* convert's last step, once every member holds md's metadata: fsvol's own
 * superblock (at 0) zeroed on each, so md's is the one found. */
static int md_convert_end(const struct cmd *c, struct md_create *x, char *const *paths)
{
	for (unsigned i = 0; i < x->n; i++) {
		int r = x->m[i].ops->zero(&x->m[i], 0, SB_SIZE);
		if (!r)
			r = member_flush(&x->m[i]);
		if (r)
			return cmd_err(c, "%s: zeroing fsvol's superblock: %s (members before it are md's now, this "
				       "one and those after still fsvol's: fsvol examine shows which)", paths[i], strerror(-r));
	}
	return 0;
}

static int md_create_run(const struct cmd *c, const struct vol_create *vc, unsigned minor, char *const *paths,
			 unsigned n, const struct md_convert *conv)
{
	struct md_create *x = calloc(1, sizeof(*x));
	char cap[32], chunk[32];
	int r;
	if (!x)
		return cmd_err(c, "out of memory");
	x->conv = conv;
	x->vc = vc;
	x->minor = minor;
	x->n = n;
	x->members = n - vc->spares;
	if (vc->consistency != SB_CONS_RESYNC)
		r = cmd_uerr(c, "--metadata 1.%u with --consistency-policy %s: md's PPL and journal formats are not "
			     "written yet (issue 31); use --metadata fsvol", minor,
			     vc->consistency == SB_CONS_PPL ? "ppl" : "journal");
	else if (minor == 0 && vc->data_offset)
		r = cmd_uerr(c, "--data-offset with --metadata 1.0: md's 1.0 puts the data at 0 and the superblock "
			     "at the end");
	else if (vc->data_offset && vc->data_offset / MD1_SECTOR < md1_super_offset(minor, 0) + 16)
		r = cmd_uerr(c, "--data-offset: at least %lluK with --metadata 1.%u (the superblock and the "
			     "bad-block log come first)", (unsigned long long)(md1_super_offset(minor, 0) + 16) / 2, minor);
	else if (vc->geom.level == LAYOUT_SINGLE)
		r = cmd_uerr(c, "--metadata 1.%u: md has no level single (use raid1 with one member, or linear)", minor);
	else
		r = 0;
	x->g = vc->geom; /* md_file_sectors' chunk */
	if (!r && vc->bitmap > 0)
		x->bitmap_chunk = vc->bitmap_chunk ? vc->bitmap_chunk : md1_bitmap_default_chunk(vc->size / MD1_SECTOR);
	if (!r)
		r = md_open(c, x, paths);
	if (!r)
		r = md_geom(c, x, paths);
	if (!r)
		r = md_sb(c, x);
	for (unsigned i = 0; i < n && !r; i++)
		r = md_write(c, x, i, paths[i]);
	if (!r && conv)
		r = md_convert_end(c, x, paths);
	for (unsigned i = 0; i < n; i++) {
		if (x->opened[i])
			member_close(&x->m[i]);
		if (r && x->made[i])
			unlink(paths[i]);
	}
	if (!r) {
		char u[36];
		size_format(x->g.capacity, cap, sizeof(cap));
		size_format(x->g.chunk, chunk, sizeof(chunk));
		md1_uuid_format(x->sb.set_uuid, u);
		printf("fsvol: %s %s (md metadata 1.%u, UUID %s): %s%s%s, %u member%s, chunk %s, capacity %s "
		       "(%llu bytes)\n", conv ? "converted" : "created", x->sb.set_name, minor, u, layout_level_name(x->g.level),
		       layout_alg_name(&x->g)[0] ? " " : "", layout_alg_name(&x->g), x->members,
		       x->members == 1 ? "" : "s", chunk, cap, (unsigned long long)x->g.capacity);
	}
	free(x);
	return r;
}

int cmd_create_md(const struct cmd *c, const struct vol_create *vc, unsigned minor, char *const *paths, unsigned n)
{
	return md_create_run(c, vc, minor, paths, n, NULL);
}

int cmd_convert_md(const struct cmd *c, const struct vol_create *vc, const struct md_convert *conv,
		   char *const *paths, unsigned n)
{
	return md_create_run(c, vc, 2, paths, n, conv);
}
