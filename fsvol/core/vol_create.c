/* vol_create: a new volume on its members (mdadm --create): each member
 * probed before anything changes, the space each area needs (bitmap, PPL,
 * journal, bad-block lists) laid out, the members zeroed where it matters and
 * their superblocks written (vol_sb.c; the format: fsvol/meta/sb.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/meta/bbl.h"
#include "fsvol/meta/bitmap.h"
#include "fsvol/members/fault.h"
#include "fsvol/util/log.h"
#include "fsvol/util/size.h"
/* ---- create ---- */

/* What create learns about a member before it changes anything. */
struct create_probe {
	int exists;
	uint64_t size; /* bytes it will have */
};

/* Look at a member without changing it: exists? size? already a member? in use? */
static int create_probe(const struct vol_create *c, const char *path, uint64_t need,
			struct create_probe *pr, struct member *m, char *err, size_t errlen)
{
	memset(pr, 0, sizeof(*pr));
	int r = member_open(m, path, 0, err, errlen);
	if (r == -ENOENT) {
		if (!need) {
			snprintf(err, errlen, "%s: does not exist; give -s SIZE to create it", path);
			return -ENOENT;
		}
		pr->size = need;
		return 0;
	}
	if (r)
		return r;
	pr->exists = 1;
	pr->size = m->size;
	if (!m->is_blockdev && need > pr->size)
		pr->size = need; /* a file is grown to -s */
	if (m->is_blockdev && need > pr->size) {
		snprintf(err, errlen, "%s: too small for -s (%llu bytes, needs %llu): a device or NBD export "
			 "cannot be grown", path, (unsigned long long)pr->size, (unsigned long long)need);
		return -EINVAL;
	}
	if (member_lock(m)) {
		snprintf(err, errlen, "%s: in use by a mounted fsvol volume", path);
		return -EBUSY;
	}
	if (!c->force && m->size >= SB_SIZE) {
		struct sb_candidate cand = { 0 };
		vol_read_sb(m, &cand);
		if (!cand.read_error && !cand.decode_error) {
			char u[37];
			sb_uuid_format(cand.sb.volume_uuid, u);
			snprintf(err, errlen, "%s: already a member of %s %s (%s); use --force to overwrite",
				 path, cand.sb.md_minor ? "md array" : "fsvol volume", u,
				 layout_level_name((enum layout_level)cand.sb.level));
			return -EEXIST;
		}
	}
	return 0;
}

/* A rounded size for messages about space: "78.1G" (df -h's habit). */
static void create_human(uint64_t b, char *out, size_t len)
{
	static const char unit[] = "KMGTPE";
	double x = (double)b;
	int u = -1;
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%llu bytes", (unsigned long long)b);
	else
		snprintf(out, len, "%.1f%c", x, unit[u]);
}

/* Member files are sparse: the host filesystem gives them space as the data
 * areas are written. When it cannot hold them in full, say so and by how
 * much (as LVM does for thin volumes larger than their pool): a warning, or
 * a refusal before anything changes when --prealloc is to allocate it all. */
static int create_space(const struct vol_create *c, char *const *paths, unsigned n, const struct create_probe *pr,
			const struct member *ms, char *err, size_t errlen)
{
	struct { dev_t dev; uint64_t need, avail; char dir[256], names[512]; } fs[SB_MAX_SLOTS];
	unsigned nfs = 0;
	for (unsigned i = 0; i < n; i++) {
		char dir[4096];
		struct stat st;
		struct statvfs sv;
		if (member_backend(paths[i]) != &member_file_ops || (pr[i].exists && ms[i].is_blockdev))
			continue;
		snprintf(dir, sizeof(dir), "%s", paths[i]);
		const char *d = dirname(dir); /* may be a constant ".", not dir */
		if (stat(d, &st) || statvfs(d, &sv))
			continue; /* create itself will say what is wrong */
		/* what the file holds already is reused (or freed by zeroing) */
		uint64_t held = 0;
		struct stat fst;
		if (pr[i].exists && !stat(paths[i], &fst))
			held = (uint64_t)fst.st_blocks * 512;
		uint64_t want = pr[i].size;
		unsigned k = 0;
		while (k < nfs && fs[k].dev != st.st_dev)
			k++;
		if (k == nfs) {
			fs[nfs].dev = st.st_dev;
			fs[nfs].need = 0;
			fs[nfs].avail = (uint64_t)sv.f_bavail * sv.f_frsize;
			snprintf(fs[nfs].dir, sizeof(fs[nfs].dir), "%.250s", d);
			fs[nfs++].names[0] = 0;
		}
		fs[k].need += want > held ? want - held : 0;
		size_t used = strlen(fs[k].names);
		snprintf(fs[k].names + used, sizeof(fs[k].names) - used, "%s%s", used ? ", " : "", paths[i]);
	}
	for (unsigned k = 0; k < nfs; k++) {
		if (fs[k].need <= fs[k].avail)
			continue;
		char need[32], avail[32], short_by[32];
		create_human(fs[k].need, need, sizeof(need));
		create_human(fs[k].avail, avail, sizeof(avail));
		create_human(fs[k].need - fs[k].avail, short_by, sizeof(short_by));
		if (c->prealloc) {
			snprintf(err, errlen, "--prealloc: the filesystem of %s has %s available; %s need %s (short by %s)",
				 fs[k].dir, avail, fs[k].names, need, short_by);
			return -ENOSPC;
		}
		if (c->warn && c->warnlen)
			snprintf(c->warn, c->warnlen, "the filesystem of %s has %s available; the sparse members %s "
				 "need %s once written in full (short by %s): writes beyond that fail with ENOSPC",
				 fs[k].dir, avail, fs[k].names, need, short_by);
	}
	return 0;
}

/* Create (sparse) or grow a member to size; then open it. */
static int create_file(struct member *m, const char *path, const struct create_probe *pr,
		       char *err, size_t errlen)
{
	int r;
	if (!pr->exists) {
		if ((r = member_create(path, pr->size, err, errlen)))
			return r;
		return member_open(m, path, 0, err, errlen);
	}
	if (!m->is_blockdev && m->size < pr->size) {
		r = m->ops->grow ? m->ops->grow(m, pr->size) : -ENOTSUP;
		if (r) {
			snprintf(err, errlen, "%s: cannot grow to %llu bytes: %s", path,
				 (unsigned long long)pr->size, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The write-intent bitmap's place and chunk (fsvol create --bitmap,
 * --bitmap-chunk): right after the superblock, up to the data. */
static int create_bitmap(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
			 char *err, size_t errlen)
{
	int redundant = layout_copies(g) > 1 || layout_parity_count(g) > 0;
	uint64_t area = (s->bbl_offset ? s->bbl_offset : doff) - SB_SIZE; /* the bad-block list ends the area */
	if (c->bitmap < 0 || (c->bitmap == 0 && !c->bitmap_chunk && (!redundant || area < BITMAP_BLOCK)))
		return 0; /* none asked, or (by default) nothing it could serve or no room */
	if (!redundant) {
		snprintf(err, errlen, "%s has no redundancy: a write-intent bitmap would serve nothing "
			 "(use --bitmap none)", layout_level_name(g->level));
		return -EINVAL;
	}
	uint64_t chunk = c->bitmap_chunk ? c->bitmap_chunk : bitmap_default_chunk(g->capacity, area);
	int r = bitmap_check(g->capacity, chunk, area, err, errlen);
	if (r)
		return r;
	s->bitmap_offset = SB_SIZE;
	s->bitmap_chunk = chunk;
	return 0;
}

/* md's partial parity log (--consistency-policy ppl): where the bitmap
 * would be, [4096, data_offset); raid5 only, never with a bitmap (md). */
static int create_ppl(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
		      char *err, size_t errlen)
{
	uint64_t area = (s->bbl_offset ? s->bbl_offset : doff) - SB_SIZE; /* below the bad-block list */
	if (g->level != LAYOUT_RAID5) {
		snprintf(err, errlen, "--consistency-policy ppl: raid5 only (md's partial parity log), not %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	if (c->bitmap > 0 || c->bitmap_chunk) {
		snprintf(err, errlen, "--consistency-policy ppl with a write-intent bitmap: md refuses both at once "
			 "(the log needs no resync to limit); use --bitmap none");
		return -EINVAL;
	}
	if (area > 0xfffff000u)
		area = 0xfffff000u;
	if (area < SB_SIZE + g->chunk) {
		snprintf(err, errlen, "--consistency-policy ppl: the log between the superblock and the data "
			 "(%llu bytes) must hold at least 4K + a chunk (%llu bytes): give a larger --data-offset or "
			 "a smaller --chunk", (unsigned long long)area, (unsigned long long)(SB_SIZE + g->chunk));
		return -EINVAL;
	}
	s->consistency = SB_CONS_PPL;
	s->ppl_offset = SB_SIZE;
	s->ppl_size = (uint32_t)(area & ~(uint64_t)(SB_SIZE - 1));
	return 0;
}

/* md's write journal (--write-journal PATH): raid4/5/6; a ring in the
 * journal device's data area, large enough for two full-stripe records. */
static int create_journal(const struct vol_create *c, const struct layout_geom *g, uint64_t size, uint64_t doff,
			  struct sb *s, const char *path, char *err, size_t errlen)
{
	uint64_t need = 2 * (SB_SIZE + (uint64_t)g->members * g->chunk);
	if (!layout_is_parity(g)) {
		snprintf(err, errlen, "--write-journal: raid4, raid5 or raid6 only (md's write journal), not %s",
			 layout_level_name(g->level));
		return -EINVAL;
	}
	if (c->bitmap > 0 || c->bitmap_chunk) {
		snprintf(err, errlen, "--write-journal with a write-intent bitmap: md refuses both at once (the "
			 "journal leaves no resync for a bitmap to limit); leave out --bitmap");
		return -EINVAL;
	}
	if (size < doff + need) {
		snprintf(err, errlen, "%s: too small for the write journal (%llu bytes of journal; needs at least "
			 "%llu: two full-stripe records)", path, (unsigned long long)(size > doff ? size - doff : 0),
			 (unsigned long long)need);
		return -EINVAL;
	}
	s->consistency = SB_CONS_JOURNAL;
	return 0;
}

/* The bad-block list's area (md's bblog, just before the data), when the
 * level has redundancy to recover a listed block from. */
static int create_bbl(const struct vol_create *c, const struct layout_geom *g, uint64_t doff, struct sb *s,
		      char *err, size_t errlen)
{
	int redundant = layout_copies(g) > 1 || layout_parity_count(g) > 0;
	/* the bitmap keeps its block when both would not fit */
	uint64_t room = doff - SB_SIZE, bitmap = c->bitmap >= 0 && redundant ? BITMAP_BLOCK : 0;
	if (c->bbl < 0 || (c->bbl == 0 && (!redundant || room < BBL_AREA + bitmap)))
		return 0;
	if (!redundant) {
		snprintf(err, errlen, "%s has no redundancy: a listed block could not be recovered "
			 "(use --bad-block-log none)", layout_level_name(g->level));
		return -EINVAL;
	}
	if (room < BBL_AREA + bitmap) {
		snprintf(err, errlen, "--bad-block-log: no room for its %u bytes below data offset %llu%s", BBL_AREA,
			 (unsigned long long)doff, bitmap ? " beside the bitmap" : "");
		return -EINVAL;
	}
	s->bbl_offset = doff - BBL_AREA;
	s->bbl_size = BBL_AREA;
	return 0;
}

/* md's per-device flags and --write-behind, checked against the level. */
static int create_flags(const struct vol_create *c, const struct layout_geom *g, unsigned n, struct sb *s,
			char *err, size_t errlen)
{
	for (unsigned i = 0; i < n; i++) {
		int r = vol_flags_check(g, c->flags[i], err, errlen);
		if (r)
			return r;
		s->slots[i].flags = c->flags[i];
	}
	if (!c->write_behind)
		return 0;
	if (g->level != LAYOUT_RAID1) {
		snprintf(err, errlen, "--write-behind is for raid1 only (md's), not %s", layout_level_name(g->level));
		return -EINVAL;
	}
	if (!s->bitmap_offset) {
		/* the bitmap is what records the writes a slow leg has yet to get */
		snprintf(err, errlen, "--write-behind needs the write-intent bitmap (md: \"write-behind mode "
			 "requires a bitmap\"); drop --bitmap none");
		return -EINVAL;
	}
	if (c->write_behind > 16383) {
		snprintf(err, errlen, "--write-behind %u: at most 16383 (md's limit)", c->write_behind);
		return -EINVAL;
	}
	s->write_behind = c->write_behind;
	return 0;
}

/* Step 3 for member i: zero its data area (consistent parity and copies)
 * and any stale metadata area, write its superblock. */
static int create_write(const struct vol_create *c, struct member *m, const char *path, const struct create_probe *pr,
			struct sb *s, unsigned i, char *err, size_t errlen)
{
	int r;
	uint64_t used = s->slots[i].data_size;
	if (!c->assume_clean && pr->exists && (r = m->ops->zero(m, s->data_offset, used))) {
		snprintf(err, errlen, "%s: cannot zero the data area: %s", path, strerror(-r));
		return r;
	}
	/* allocated but unwritten: reads as zeros, writes find their space */
	if (c->prealloc && m->ops->alloc && (r = m->ops->alloc(m, s->data_offset, used))) {
		snprintf(err, errlen, "%s: cannot preallocate the data area (%llu bytes): %s", path,
			 (unsigned long long)used, strerror(-r));
		return r;
	}
	/* a stale bitmap from an earlier life must not survive */
	if (s->bitmap_offset && pr->exists &&
	    (r = m->ops->zero(m, s->bitmap_offset, s->data_offset - s->bitmap_offset))) {
		snprintf(err, errlen, "%s: cannot zero the bitmap area: %s", path, strerror(-r));
		return r;
	}
	if (s->ppl_offset && pr->exists && (r = m->ops->zero(m, s->ppl_offset, s->ppl_size))) {
		snprintf(err, errlen, "%s: cannot zero the PPL area: %s", path, strerror(-r));
		return r;
	}
	/* nor a bad-block list */
	if (s->bbl_offset && pr->exists && (r = m->ops->zero(m, s->bbl_offset, s->bbl_size))) {
		snprintf(err, errlen, "%s: cannot zero the bad-block list: %s", path, strerror(-r));
		return r;
	}
	s->index = i;
	memcpy(s->member_uuid, s->slots[i].uuid, 16);
	if ((r = vol_sb_write(m, s, NULL))) {
		snprintf(err, errlen, "%s: writing the superblock: %s", path, strerror(-r));
		return r;
	}
	return 0;
}

/* The arguments alone, before any member is looked at. */
static int create_check(const struct vol_create *c, char *const *paths, unsigned n, unsigned journal, uint64_t doff,
			char *err, size_t errlen)
{
	int r;
	if (n > SB_MAX_SLOTS || c->spares + journal >= n) {
		snprintf(err, errlen, "%u members and %u spares: need 1 to %u devices with at least one member",
			 n - c->spares, c->spares, SB_MAX_SLOTS);
		return -EINVAL;
	}
	if (doff % 4096 || doff < SB_SIZE) {
		snprintf(err, errlen, "data offset %llu: must be a multiple of 4K", (unsigned long long)doff);
		return -EINVAL;
	}
	if (c->size && c->size > (UINT64_MAX >> 2) - doff) {
		snprintf(err, errlen, "size %llu: too large", (unsigned long long)c->size);
		return -EINVAL;
	}
	if (c->name && (r = sb_name_check(c->name, err, errlen)))
		return r;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(paths[i], paths[j])) {
				snprintf(err, errlen, "%s given twice", paths[i]);
				return -EINVAL;
			}
	return 0;
}

int vol_create(const struct vol_create *c, char *const *paths, unsigned n, char *err, size_t errlen)
{
	struct layout_geom g = c->geom;
	unsigned journal = c->consistency == SB_CONS_JOURNAL;
	unsigned members = n - c->spares - journal;
	struct member *ms;
	struct create_probe pr[SB_MAX_SLOTS];
	unsigned made = 0; /* files created so far: removed again on failure */
	uint64_t doff = c->data_offset ? c->data_offset : SB_DEFAULT_DATA_OFFSET;
	uint64_t need;
	int r = 0;

	if ((r = create_check(c, paths, n, journal, doff, err, errlen)))
		return r;
	need = c->size ? c->size + doff : 0;
	if (!(ms = calloc(n, sizeof(*ms))))
		return -ENOMEM;
	/* 1. Look, change nothing: every refusal happens before a file exists. */
	for (unsigned i = 0; i < n; i++) {
		if ((r = create_probe(c, paths[i], need, &pr[i], &ms[i], err, errlen)))
			goto out;
		for (unsigned j = 0; j < i; j++)
			if (pr[i].exists && pr[j].exists && ms[j].dev == ms[i].dev && ms[j].ino == ms[i].ino) {
				snprintf(err, errlen, "%s and %s are the same file", paths[j], paths[i]);
				r = -EINVAL;
				goto out;
			}
		if (pr[i].size < doff + LAYOUT_MIN_CHUNK) {
			snprintf(err, errlen, "%s: too small (%llu bytes; needs at least %llu)", paths[i],
				 (unsigned long long)pr[i].size, (unsigned long long)(doff + LAYOUT_MIN_CHUNK));
			r = -EINVAL;
			goto out;
		}
		if (i < members)
			g.member_size[i] = c->size ? c->size : pr[i].size - doff;
	}
	g.members = members;
	if ((r = layout_init(&g, err, errlen)))
		goto out;
	if (c->warn && c->warnlen)
		c->warn[0] = 0;
	if ((r = create_space(c, paths, n, pr, ms, err, errlen)))
		goto out;
	/* 2. Create the missing files, grow short ones. */
	for (unsigned i = 0; i < n; i++) {
		if ((r = create_file(&ms[i], paths[i], &pr[i], err, errlen)))
			goto out;
		made = i + 1;
	}

	struct sb s;
	memset(&s, 0, sizeof(s));
	s.version = SB_VERSION;
	sb_uuid_generate(s.volume_uuid);
	s.ctime = s.utime = (uint64_t)time(NULL);
	s.level = g.level;
	s.layout = g.alg;
	s.copies = layout_copies(&g);
	s.chunk = g.chunk;
	s.members = members;
	s.spares = c->spares + journal; /* the journal's slot is the last: not in the layout */
	s.data_offset = doff;
	s.volume_size = g.capacity;
	s.events = 1;
	s.clean = 1;
	s.features = SB_FEAT_MD_Q; /* Q in md's order from the first write */
	if ((r = create_bbl(c, &g, doff, &s, err, errlen)) ||
	    (c->consistency == SB_CONS_PPL ? (r = create_ppl(c, &g, doff, &s, err, errlen))
	     : journal ? (r = create_journal(c, &g, pr[n - 1].size, doff, &s, paths[n - 1], err, errlen))
		       : (r = create_bitmap(c, &g, doff, &s, err, errlen))))
		goto out;
	if ((r = create_flags(c, &g, n, &s, err, errlen)))
		goto out;
	if (c->name)
		snprintf(s.name, sizeof(s.name), "%s", c->name);
	else
		sb_volume_name(&s, s.name); /* a unique default, stored like a given one */
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		s.slots[i].number = i < n ? (uint16_t)i : SB_NO_NUMBER;
	for (unsigned i = 0; i < n; i++) {
		s.slots[i].state = i < members ? SB_ACTIVE : SB_SPARE;
		sb_uuid_generate(s.slots[i].uuid);
		s.slots[i].data_size = g.level == LAYOUT_LINEAR && i < members ? g.member_size[i] : g.member_used;
	}
	if (journal) { /* active, flagged, its whole data area a ring */
		s.slots[n - 1].flags = SB_SLOT_JOURNAL;
		s.slots[n - 1].state = SB_ACTIVE;
		s.slots[n - 1].data_size = (pr[n - 1].size - doff) & ~(uint64_t)(SB_SIZE - 1);
	}
	/* 3. Zero the data areas (consistent parity and copies), write superblocks. */
	for (unsigned i = 0; i < n; i++)
		if ((r = create_write(c, &ms[i], paths[i], &pr[i], &s, i, err, errlen)))
			goto out;
out:
	for (unsigned i = 0; i < n; i++) {
		member_close(&ms[i]);
		if (r && i < made && !pr[i].exists)
			unlink(paths[i]);
	}
	free(ms);
	return r;
}

/* ---- what front ends may read (volume.h) ---- */
