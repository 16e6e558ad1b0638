/* reshape: grow onto more members, change the chunk or raid5 -> raid6, online
 * (md's reshape_request; the idea, not the code). Rules on disk:
 * docs/format.md, "Reshape".
 *
 * The pass walks the new geometry's logical space in windows (a multiple of
 * both geometries' stripes). For each window, under its stripe locks (both
 * geometries' units, so no foreground request touches it meanwhile):
 *
 *   read [L, L+W) in the old geometry (zeros past the old capacity)
 *   if the new rows overlap old rows still holding data at or past L:
 *       write the window to the backup area, flush, superblock: backup
 *   write [L, L+W) in the new geometry (full stripes: parity computed)
 *   flush; superblock: reshape_pos = L+W, no backup; pos in memory
 *
 * So the superblock always tells where each byte is: below reshape_pos in
 * the new geometry, at or above it in the old one, and the window at
 * reshape_pos in the backup when one is recorded. A crash anywhere redoes at
 * most one window, from the backup or from the old rows (intact: the new
 * rows of a window without backup lie below every old row it reads).
 *
 * A member may fail meanwhile (md goes on degraded): the backup has the new
 * geometry's redundancy (the window in data shares, then P, and Q for
 * raid6, one share per member; raid10: the window in one piece per member,
 * each piece's copies on the members and rows of the new geometry's chunk of
 * the same index), so a failed member's share is left out and rebuilt (or
 * read from another copy) at a restore; a mount resumes a degraded reshape.
 *
 * raid10 reshapes in its near and offset layouts (md's raid10_check_reshape):
 * more members, another chunk, near <-> offset; the copies stay, and the far
 * layout, whose copies lie in another section of each member, is refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/eng_int.h"
#include "fsvol/core/reshape.h"
#include "fsvol/meta/bitmap.h"
#include "layout/parity.h"
#include "fsvol/util/log.h"
#include "fsvol/util/size.h"

#define RESHAPE_MIN_WINDOW (1ull << 20)   /* at least this much moved per superblock write */
#define RESHAPE_MAX_WINDOW (64ull << 20)  /* refused above (memory, backup room) */

/* The logical bytes of g's smallest run of whole rows (a parity stripe, a
 * raid10 near or offset row group), and its bytes on each member. */
static void period_of(const struct layout_geom *g, uint64_t *logical, uint64_t *member_bytes)
{
	if (layout_period(g, logical, member_bytes)) {
		*logical = (uint64_t)g->data_members * g->chunk; /* refused by the plan before it gets here */
		*member_bytes = g->chunk;
	}
}

static uint64_t stripe_of(const struct layout_geom *g)
{
	uint64_t l, m;
	period_of(g, &l, &m);
	return l;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

int vol_reshape_plan(const struct layout_geom *old, const struct layout_geom *new, uint64_t *window,
		     uint64_t *backup_len, char *err, size_t errlen)
{
	uint64_t os, ns, om, nm;
	int bo = layout_period(old, &os, &om), bn = layout_period(new, &ns, &nm);
	if (bo || bn) {
		const struct layout_geom *b = bo ? old : new;
		snprintf(err, errlen, "%s (layout '%s'): its rows do not repeat as a reshape moves them",
			 layout_level_name(b->level), layout_alg_name(b));
		return -EOPNOTSUPP;
	}
	/* lcm: both geometries' rows end together at every window's edge */
	uint64_t w = os / gcd64(os, ns) * ns;
	if (w < RESHAPE_MIN_WINDOW)
		w *= (RESHAPE_MIN_WINDOW + w - 1) / w;
	if (w > RESHAPE_MAX_WINDOW) {
		snprintf(err, errlen, "the window of this reshape (the common multiple of both stripes) would be %" PRIu64
			 " bytes, more than %llu", w, RESHAPE_MAX_WINDOW);
		return -EINVAL;
	}
	*window = w;
	if (layout_copies(new) > 1) {
		/* raid10: one piece per member, each stored copies times */
		uint64_t piece = ((w + new->members - 1) / new->members + 4095) & ~4095ull;
		if ((uint64_t)new->members * new->chunk > new->capacity) {
			snprintf(err, errlen, "the new %s holds fewer than %u chunks", layout_level_name(new->level),
				 new->members);
			return -EINVAL;
		}
		*backup_len = piece * layout_copies(new);
		return 0;
	}
	/* the window over the data shares: P and Q shares come on top */
	unsigned d = new->members - layout_parity_count(new);
	*backup_len = ((w + d - 1) / d + 4095) & ~4095ull;
	return 0;
}

/* The top of the metadata zone's free part: the bad-block list, when there
 * is one, lies last in front of the data. */
static uint64_t backup_top(const struct vol *v)
{
	return v->sb.bbl_offset ? v->sb.bbl_offset : v->data_offset;
}

/* The backup area: the end of the metadata zone's free part, in front of the
 * data (or of the bad-block list). */
static uint64_t backup_off(const struct vol *v)
{
	return backup_top(v) - v->reshape->backup_len;
}

/* bl: the backup's bytes per member; cap: the new capacity (its bitmap). */
static int backup_room(const struct vol *v, uint64_t bl, uint64_t cap, char *err, size_t errlen)
{
	const struct sb *s = &v->sb;
	uint64_t hi = backup_top(v), floor = SB_SIZE;
	if (bl > hi - SB_SIZE) {
		snprintf(err, errlen, "no room for the reshape's backup (%" PRIu64 " bytes per member) in front of the data "
			 "(data_offset %" PRIu64 "): a smaller chunk makes the window smaller; or a volume created with "
			 "a larger --data-offset", bl, v->data_offset);
		return -ENOSPC;
	}
	uint64_t lo = hi - bl;
	if (s->bitmap_offset) {
		uint64_t img = bitmap_image_bytes(bitmap_bits(cap, s->bitmap_chunk));
		floor = s->bitmap_offset + ((img + 4095) & ~4095ull);
	}
	if (lo < floor || (s->ppl_offset && s->ppl_offset < hi && s->ppl_offset + s->ppl_size > lo) ||
	    (s->bbl_offset && s->bbl_offset < hi && s->bbl_offset + s->bbl_size > lo)) {
		snprintf(err, errlen, "no room for the reshape's backup (%" PRIu64 " bytes per member at %" PRIu64
			 ") beside the bitmap, PPL or bad-block areas", bl, lo);
		return -ENOSPC;
	}
	return 0;
}

uint64_t vol_reshape_windows(const struct vol *v)
{
	const struct vol_reshape *rs = v->reshape;
	return (rs->geom.capacity + rs->window - 1) / rs->window;
}

void vol_reshape_window_range(const struct vol *v, uint64_t u, uint64_t *off, uint64_t *len)
{
	const struct vol_reshape *rs = v->reshape;
	*off = u * rs->window;
	*len = rs->geom.capacity - *off < rs->window ? rs->geom.capacity - *off : rs->window;
}

uint64_t vol_reshape_first(const struct vol *v)
{
	return atomic_load(&v->reshape->pos) / v->reshape->window;
}

int vol_reshape_overlap(const struct layout_geom *old, const struct layout_geom *new, uint64_t off, uint64_t len)
{
	if (off >= old->capacity)
		return 0; /* nothing old at or past it */
	/* the window's new rows end at new_end (member bytes; a last row group
	 * cut by the capacity counts whole); the old data at or past off starts
	 * at old_start (off is an old row group's start) */
	uint64_t os, om, ns, nm;
	period_of(old, &os, &om);
	period_of(new, &ns, &nm);
	uint64_t new_end = (off + len + ns - 1) / ns * nm;
	uint64_t old_start = off / os * om;
	return new_end > old_start;
}

static int needs_backup(const struct vol *v, uint64_t off, uint64_t len)
{
	return vol_reshape_overlap(&v->geom, &v->reshape->geom, off, len);
}

static int counted(const struct vol *v)
{
	return atomic_load_explicit(&v->stats_level, memory_order_relaxed) == VOL_STATS_ALL;
}

/* One backup I/O on slot s, counted below the layer and traced under hold. */
static int backup_io(struct vol *v, struct eng_req *hold, unsigned s, int write, void *buf, uint64_t len,
		     uint64_t at)
{
	struct member *m = v->slot[s];
	uint64_t off = backup_off(v) + at, t0 = stats_now();
	if (!m)
		return -ENODEV;
	if (counted(v))
		stats_begin(m->stats, t0);
	int r = write ? member_pwrite(m, buf, len, off) : member_pread(m, buf, len, off);
	uint64_t t1 = stats_now();
	if (counted(v))
		stats_end(m->stats, write ? STATS_WRITE : STATS_READ, off, len, t0, t1, r);
	if (hold->trace_parent && stats_trace_on(v->trace)) {
		struct stats_trace_rec rec = {
			.seq = stats_trace_id(v->trace), .parent = hold->trace_parent, .t_start_ns = t0,
			.latency_ns = t1 - t0, .offset = off, .length = len, .dev = (int32_t)s,
			.op = write ? STATS_WRITE : STATS_READ, .why = STATS_WHY_RESHAPE, .error = (int16_t)r,
		};
		stats_trace_add(v->trace, &rec);
	}
	return r;
}

static int slot_failed(const struct vol *v, unsigned i)
{
	return (atomic_load(&v->failed) >> i) & 1;
}

/* A share that could not be written or read: its member fails (md_error),
 * unless it had already. */
static void share_lost(struct vol *v, unsigned i, int r)
{
	if (r != -ENODEV && !slot_failed(v, i))
		vol_fail_slot(v, i, r);
}

/* raid10's backup: piece j of the window (bytes [j S, (j+1) S), S =
 * backup_len / copies) lies where the new geometry puts copy k of its chunk
 * j, on that member at row r < copies of the area (r S), so that it survives
 * the members the new geometry survives. */
static void piece_at(const struct layout_geom *g, unsigned j, unsigned k, unsigned *member, uint64_t *row)
{
	struct layout_extent e;
	layout_locate(g, (uint64_t)j * g->chunk, k, &e); /* the plan checked chunk j < capacity */
	*member = e.member;
	*row = e.offset / g->chunk;
}

/* Every piece on each member that has not failed; the members left out in
 * *lost; -errno when a piece kept no copy. */
static int backup_write_copies(struct vol *v, struct eng_req *hold, uint8_t *buf, uint64_t *lost)
{
	struct vol_reshape *rs = v->reshape;
	unsigned n = rs->geom.members, k = layout_copies(&rs->geom);
	uint64_t piece = rs->backup_len / k, row;
	int last = -EIO;
	*lost = 0;
	for (unsigned j = 0; j < n; j++)
		for (unsigned c = 0; c < k; c++) {
			unsigned m;
			piece_at(&rs->geom, j, c, &m, &row);
			int r = slot_failed(v, m) ? -ENODEV : backup_io(v, hold, m, 1, buf + j * piece, piece, row * piece);
			if (r) {
				share_lost(v, m, r);
				*lost |= 1ull << m;
				last = r == -ENODEV ? -EIO : r;
			}
		}
	/* a member that failed at a later piece holds none it had either */
	for (unsigned j = 0; j < n; j++) {
		unsigned kept = 0;
		for (unsigned c = 0; c < k; c++) {
			unsigned m;
			piece_at(&rs->geom, j, c, &m, &row);
			kept += !((*lost >> m) & 1) && !slot_failed(v, m);
		}
		if (!kept)
			return last;
	}
	return 0;
}

/* raid10's window back from its backup: each piece from its first copy on a
 * member that has not failed (and reads). */
static int backup_read_copies(struct vol *v, struct eng_req *hold, uint8_t *buf)
{
	struct vol_reshape *rs = v->reshape;
	unsigned n = rs->geom.members, k = layout_copies(&rs->geom), other = 0;
	uint64_t piece = rs->backup_len / k, row;
	for (unsigned j = 0; j < n; j++) {
		int r = -ENODEV;
		unsigned c, m = 0;
		for (c = 0; c < k && r; c++) {
			piece_at(&rs->geom, j, c, &m, &row);
			r = slot_failed(v, m) ? -ENODEV : backup_io(v, hold, m, 0, buf + j * piece, piece, row * piece);
			if (r)
				share_lost(v, m, r);
		}
		if (r) {
			fsvol_log(LOG_ERR, "reshape: the backup of the window at %" PRIu64 " lost every copy of its piece %u "
				  "(slot %u last: %s)", atomic_load(&rs->pos), j, m, strerror(r == -ENODEV ? EIO : -r));
			return r == -ENODEV ? -EIO : r;
		}
		other += c > 1;
	}
	if (other)
		fsvol_log(LOG_NOTICE, "reshape: %u piece%s of the window's backup read from another copy", other,
			  other == 1 ? "" : "s");
	return 0;
}

/* The window's backup: data shares of backup_len (slot i holds [i *
 * backup_len, (i+1) * backup_len) of the window), then P (and Q) computed over
 * them on the last slots, each written where its member has not failed. The
 * slots left out in *lost; -errno when more than the parity could rebuild. */
static int backup_write(struct vol *v, struct eng_req *hold, uint8_t *buf, uint64_t *lost)
{
	struct vol_reshape *rs = v->reshape;
	unsigned n = rs->geom.members, p = layout_parity_count(&rs->geom), d = n - p, nlost = 0;
	uint64_t bl = rs->backup_len;
	if (layout_copies(&rs->geom) > 1)
		return backup_write_copies(v, hold, buf, lost);
	if (p) {
		const void *data[LAYOUT_MAX_MEMBERS];
		for (unsigned i = 0; i < d; i++)
			data[i] = buf + i * bl;
		parity_gen(data, d, buf + d * bl, p == 2 ? buf + (d + 1) * bl : NULL, bl);
	}
	*lost = 0;
	for (unsigned i = 0; i < n; i++) {
		int r = slot_failed(v, i) ? -ENODEV : backup_io(v, hold, i, 1, buf + i * bl, bl, 0);
		if (!r)
			continue;
		share_lost(v, i, r);
		*lost |= 1ull << i;
		if (++nlost > p)
			return r == -ENODEV ? -EIO : r;
	}
	return 0;
}

/* The window back from its backup: the shares of the members that have not
 * failed, the others rebuilt from P (and Q). */
static int backup_read(struct vol *v, struct eng_req *hold, uint8_t *buf)
{
	struct vol_reshape *rs = v->reshape;
	unsigned n = rs->geom.members, p = layout_parity_count(&rs->geom), lost[2], nlost = 0;
	uint64_t bl = rs->backup_len;
	void *blk[LAYOUT_MAX_MEMBERS];
	if (layout_copies(&rs->geom) > 1)
		return backup_read_copies(v, hold, buf);
	for (unsigned i = 0; i < n; i++) {
		blk[i] = buf + i * bl;
		int r = slot_failed(v, i) ? -ENODEV : backup_io(v, hold, i, 0, blk[i], bl, 0);
		if (!r)
			continue;
		share_lost(v, i, r);
		if (nlost == p) {
			fsvol_log(LOG_ERR, "reshape: the backup of the window at %" PRIu64 " lacks more shares than its "
				  "parity rebuilds (slot %u: %s)", atomic_load(&rs->pos), i, strerror(r == -ENODEV ? EIO : -r));
			return r == -ENODEV ? -EIO : r;
		}
		lost[nlost++] = i;
	}
	if (nlost)
		fsvol_log(LOG_NOTICE, "reshape: %u share%s of the window's backup rebuilt from its parity", nlost,
			  nlost == 1 ? "" : "s");
	return nlost ? parity_recover(blk, n - p, p, lost, nlost, bl) : 0;
}

/* Every member of the new geometry holds what was written (a power cut).
 * One that cannot flush fails (md_error), and the window goes on without it
 * while both geometries survive (a flush error used to stop the pass). */
static int flush_members(struct vol *v)
{
	for (unsigned i = 0; i < v->reshape->geom.members; i++) {
		struct member *m = v->slot[i];
		if (m && !slot_failed(v, i) && (m->caps & MEMBER_CAN_FLUSH)) {
			int r = member_flush(m);
			if (r) {
				share_lost(v, i, r);
				if (!vol_reshape_survives(v, atomic_load(&v->failed)))
					return r;
			}
		}
	}
	return 0;
}

/* The superblocks say pos and backup (through the metadata thread); lost:
 * the slots whose backup share was not written. */
static void record(struct vol *v, uint64_t pos, uint64_t backup, uint64_t lost)
{
	vol_state_lock(v);
	/* the superblocks that record a backup call the members without a share
	 * failed (a restore rebuilds those), even when the failure is still only
	 * marked in memory (vol_fail_slot: the mask before the superblock) */
	for (unsigned i = 0; i < v->nslots; i++)
		if (((lost >> i) & 1) && (v->sb.slots[i].state == SB_ACTIVE || v->sb.slots[i].state == SB_SPARE))
			v->sb.slots[i].state = v->slot[i] ? SB_FAILED : SB_MISSING;
	v->sb.reshape_pos = pos;
	v->sb.reshape_backup = backup;
	vol_sb_change_locked(v);
	pthread_mutex_unlock(&v->state_lock);
	vol_md_sync(v);
}

static uint8_t *window_buf(struct vol *v)
{
	struct vol_reshape *rs = v->reshape;
	if (!rs->buf) {
		/* room for the backup's last member's whole block too */
		size_t len = rs->backup_len * rs->geom.members;
		if (len < rs->window)
			len = rs->window;
		void *p = NULL;
		if (posix_memalign(&p, 4096, len))
			return NULL;
		memset(p, 0, len);
		rs->buf = p;
	}
	return rs->buf;
}

/* Write [off, off+len) in the new geometry in whole stripes: the engine
 * serves a request in segments of ENG_SEG, and a stripe cut by a segment's
 * edge would be read back to compute its parity. */
static int write_new(struct eng_req *hold, const struct layout_geom *g, uint8_t *buf, uint64_t off, uint64_t len)
{
	uint64_t ns = stripe_of(g), step = ns <= ENG_SEG ? ENG_SEG / ns * ns : ns;
	for (uint64_t done = 0; done < len; done += step) {
		uint64_t n = len - done < step ? len - done : step;
		int r = eng_reshape_io(hold, ENG_K_WRITE, g, buf + done, off + done, n);
		if (r)
			return r;
	}
	return 0;
}

/* The window is in the new geometry: say so, on disk first. */
static void advance(struct vol *v, uint64_t end)
{
	record(v, end, 0, 0);
	atomic_store(&v->reshape->pos, end);
	atomic_fetch_add(&v->reshape->epoch, 1);
}

int vol_reshape_window(struct vol *v, uint64_t u)
{
	struct vol_reshape *rs = v->reshape;
	uint64_t off, len;
	vol_reshape_window_range(v, u, &off, &len);
	uint8_t *buf = window_buf(v);
	if (!buf)
		return -ENOMEM;
	struct eng_req *hold = eng_reshape_hold(v, &rs->geom, off, len, 0);
	if (!hold)
		return -ENOMEM;
	uint64_t src = off < rs->old_capacity ? rs->old_capacity - off : 0;
	if (src > len)
		src = len;
	int r = src ? eng_reshape_io(hold, ENG_K_READ, &v->geom, buf, off, src) : 0;
	memset(buf + src, 0, rs->backup_len * rs->geom.members - src);
	if (!r && needs_backup(v, off, len)) {
		uint64_t lost = 0;
		r = backup_write(v, hold, buf, &lost);
		if (!r)
			r = flush_members(v);
		if (!r) {
			record(v, off, backup_off(v), lost);
			rs->windows_backed++;
		}
	}
	if (!r)
		r = write_new(hold, &rs->geom, buf, off, len);
	if (!r)
		r = flush_members(v);
	if (!r) {
		advance(v, off + len);
	}
	eng_reshape_release(hold, r);
	return r;
}

int vol_reshape_restore(struct vol *v)
{
	struct vol_reshape *rs = v->reshape;
	if (!v->sb.reshape_backup)
		return 0;
	uint64_t off = atomic_load(&rs->pos), len;
	if (v->sb.reshape_backup != backup_off(v)) {
		/* an fsvol before the backup had its parity put it elsewhere, spread
		 * differently: never read it as this one's */
		fsvol_log(LOG_ERR, "reshape: the window at %" PRIu64 " has its backup at %" PRIu64 ", this fsvol keeps it at "
			  "%" PRIu64 " (written by another version): finish the reshape with that one", off,
			  v->sb.reshape_backup, backup_off(v));
		return -EINVAL;
	}
	vol_reshape_window_range(v, off / rs->window, &off, &len);
	uint8_t *buf = window_buf(v);
	if (!buf)
		return -ENOMEM;
	struct eng_req *hold = eng_reshape_hold(v, &rs->geom, off, len, 0);
	if (!hold)
		return -ENOMEM;
	int r = backup_read(v, hold, buf);
	if (!r)
		r = write_new(hold, &rs->geom, buf, off, len);
	if (!r)
		r = flush_members(v);
	if (!r) {
		fsvol_log(LOG_NOTICE, "reshape: window at %" PRIu64 " written back from its backup", off);
		advance(v, off + len);
	}
	eng_reshape_release(hold, r);
	return r;
}

int vol_reshape_finish(struct vol *v)
{
	struct vol_reshape *rs = v->reshape;
	/* the volume stands still while its geometry changes */
	struct eng_req *hold = eng_reshape_hold(v, &rs->geom, 0, rs->geom.capacity, 1);
	if (!hold)
		return -ENOMEM;
	vol_state_lock(v);
	struct sb *s = &v->sb;
	unsigned was = s->members;
	uint64_t failed = atomic_load(&v->failed);
	for (unsigned i = was; i < rs->geom.members; i++)
		/* a member the reshape added that failed on the way stays failed
		 * (made active, a remount would read what it never got) */
		s->slots[i].state = !((failed >> i) & 1) ? SB_ACTIVE : v->slot[i] ? SB_FAILED : SB_MISSING;
	s->spares -= rs->geom.members - was;
	s->members = rs->geom.members;
	s->level = rs->geom.level;
	s->layout = rs->geom.alg;
	s->chunk = rs->geom.chunk;
	s->copies = s->new_copies;
	s->volume_size = rs->geom.capacity;
	s->reshape_flags = 0;
	s->reshape_pos = s->reshape_backup = 0;
	s->new_level = s->new_layout = s->new_members = s->new_copies = 0;
	s->new_chunk = 0;
	s->events++;
	vol_sb_change_locked(v);
	v->geom = rs->geom;
	eng_geom_changed(v);
	int rb = vol_bitmap_grow(v); /* checked to fit when the reshape began */
	atomic_store(&rs->active, 0);
	atomic_fetch_add(&rs->epoch, 1);
	pthread_mutex_unlock(&v->state_lock);
	vol_md_sync(v);
	eng_reshape_release(hold, 0);
	if (rb)
		fsvol_log(LOG_ERR, "reshape: the write-intent bitmap keeps its old regions: %s", strerror(-rb));
	char cap[32];
	size_format(v->geom.capacity, cap, sizeof(cap));
	fsvol_log(LOG_NOTICE, "reshape done: %s, %u members, chunk %llu, capacity %s (%" PRIu64 " windows, %" PRIu64
		  " through the backup)", layout_level_name(v->geom.level), v->geom.members,
		  (unsigned long long)v->geom.chunk, cap, vol_reshape_windows(v), rs->windows_backed);
	return 0;
}

/* The geometry a superblock's reshape goes to. */
static int target_geom(const struct sb *s, struct layout_geom *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->level = (enum layout_level)s->new_level;
	g->alg = s->new_layout;
	g->copies = s->new_copies;
	g->members = s->new_members;
	g->chunk = s->new_chunk;
	for (unsigned i = 0; i < s->new_members && i < LAYOUT_MAX_MEMBERS; i++)
		g->member_size[i] = s->slots[i].data_size ? s->slots[i].data_size : s->slots[0].data_size;
	return layout_init(g, err, errlen);
}

static int setup(struct vol *v, char *err, size_t errlen)
{
	struct vol_reshape *rs = v->reshape;
	if (!rs && !(rs = v->reshape = calloc(1, sizeof(*rs))))
		return -ENOMEM;
	free(rs->buf); /* an earlier reshape's window may have been smaller */
	rs->buf = NULL;
	int r = target_geom(&v->sb, &rs->geom, err, errlen);
	if (r)
		return r;
	rs->old_capacity = v->geom.capacity;
	return vol_reshape_plan(&v->geom, &rs->geom, &rs->window, &rs->backup_len, err, errlen);
}

int vol_reshape_load(struct vol *v, char *err, size_t errlen)
{
	if (!(v->sb.reshape_flags & SB_RESHAPE_ACTIVE))
		return 0;
	int r = setup(v, err, errlen);
	if (r)
		return r;
	struct vol_reshape *rs = v->reshape;
	/* it resumes degraded (md), as far as both geometries survive; vol_open
	 * counted the slots it adds among the roles */
	uint64_t failed = atomic_load(&v->failed);
	if (!layout_survives(&rs->geom, failed)) {
		int n = snprintf(err, errlen, "a reshape to %s %u members is under way and cannot go on without member slot(s)",
				 layout_level_name(rs->geom.level), rs->geom.members);
		for (unsigned i = 0; i < rs->geom.members && n > 0 && (size_t)n < errlen; i++)
			if ((failed >> i) & 1)
				n += snprintf(err + n, errlen - (size_t)n, " %u", i);
		return -ENODEV;
	}
	if (v->sb.reshape_pos > rs->geom.capacity || v->sb.reshape_pos % rs->window) {
		snprintf(err, errlen, "reshape_pos %" PRIu64 " is not a window's edge (window %" PRIu64 ", end %" PRIu64 ")",
			 v->sb.reshape_pos, rs->window, rs->geom.capacity);
		return -EINVAL;
	}
	atomic_store(&rs->pos, v->sb.reshape_pos);
	atomic_store(&rs->active, 1);
	atomic_fetch_add(&rs->epoch, 1);
	fsvol_log(LOG_NOTICE, "reshape to %s, %u members resumes at %" PRIu64 " of %" PRIu64 " bytes%s",
		  layout_level_name(rs->geom.level), rs->geom.members, v->sb.reshape_pos, rs->geom.capacity,
		  v->sb.reshape_backup ? " (its window from the backup)" : "");
	return 0;
}

/* ---- the request: fsvol grow ---- */

/* "raid-devices=N,chunk=BYTES,level=NAME,layout=NAME,dry-run=1" (the ctl
 * edge; any subset); raid-devices=+K: K more than now; dry-run: only the
 * rules that do not depend on spares (fsvol grow --add asks before adding). */
static int parse_spec(const char *spec, unsigned *n, int *plus, uint64_t *chunk, int *level, char *layout,
		      size_t layoutlen, int *dry, char *err, size_t errlen)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		if (!eq) {
			snprintf(err, errlen, "grow: '%s': expected raid-devices=N, chunk=SIZE, level=L or layout=L", t);
			return -EINVAL;
		}
		*eq++ = 0;
		if (!strcmp(t, "raid-devices")) {
			*plus = *eq == '+';
			unsigned long x = strtoul(eq + *plus, &end, 10);
			if (*end || !x || x > SB_MAX_SLOTS) {
				snprintf(err, errlen, "grow: raid-devices %s: expected 1..%d", eq, SB_MAX_SLOTS);
				return -EINVAL;
			}
			*n = (unsigned)x;
		} else if (!strcmp(t, "chunk")) {
			uint64_t c;
			if (size_parse(eq, &c) || !c) {
				snprintf(err, errlen, "grow: chunk %s: expected a size (64K, 1M)", eq);
				return -EINVAL;
			}
			*chunk = c;
		} else if (!strcmp(t, "level")) {
			enum layout_level l;
			if (layout_parse_level_msg(eq, &l, err, errlen))
				return -EINVAL;
			*level = (int)l;
		} else if (!strcmp(t, "layout")) {
			snprintf(layout, layoutlen, "%s", eq);
		} else if (!strcmp(t, "dry-run")) {
			*dry = !strcmp(eq, "1");
		} else {
			snprintf(err, errlen, "grow: unknown '%s' (raid-devices, chunk, level, layout)", t);
			return -EINVAL;
		}
	}
	return 0;
}

static int refuse(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return r;
}

/* md's raid10 rules (raid10_check_reshape): no reshape of the far layout,
 * none to it, the copies stay; near <-> offset is allowed. lay: a --layout
 * asked for ("" none); *alg the layout to go to. Other levels take none. */
static int r10_rules(const struct layout_geom *g, const char *lay, unsigned *alg, char *err, size_t errlen)
{
	const char *lname = layout_level_name(g->level);
	unsigned copies = 0;
	if (*lay && g->level != LAYOUT_RAID10)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: %s: --layout is for raid10 only (near <-> offset)", lname);
	if (g->level != LAYOUT_RAID10)
		return 0;
	if (g->alg == LAYOUT_R10_FAR)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: raid10 in the far layout (%s) cannot be reshaped: each copy "
			      "lies in another section of every member (md refuses it too); near and offset layouts can",
			      layout_alg_name(g));
	if (!*lay)
		return 0;
	char why[256];
	if (layout_parse_alg_msg(g->level, lay, alg, &copies, why, sizeof(why)))
		return refuse(err, errlen, -EINVAL, "grow: --layout %s", why);
	if (*alg == LAYOUT_R10_FAR)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: raid10 cannot be reshaped to the far layout (%s; md refuses "
			      "it too): near or offset", lay);
	if (copies != layout_copies(g))
		return refuse(err, errlen, -EOPNOTSUPP, "grow: raid10 keeps its %u copies (%s asks %u): md cannot change "
			      "the number of copies", layout_copies(g), lay, copies);
	return 0;
}

/* A dry run (fsvol grow --add asks before adding): the geometry it would go
 * to, the members it adds as large as their slots say (or as member 0), and
 * what does not depend on their sizes: md's raid10 chunk rule, the backup's
 * room, the bitmap's. */
static int dry_plan(struct vol *v, int to6, unsigned alg, unsigned n, uint64_t chunk, char *err, size_t errlen)
{
	struct layout_geom t = v->geom;
	uint64_t w, bl;
	if (n > LAYOUT_MAX_MEMBERS)
		return refuse(err, errlen, -EINVAL, "grow: %u members: at most %d", n, LAYOUT_MAX_MEMBERS);
	t.level = to6 ? LAYOUT_RAID6 : v->geom.level;
	t.alg = to6 ? layout_default_alg(LAYOUT_RAID6) : alg;
	t.members = n;
	t.chunk = chunk;
	for (unsigned i = 0; i < n; i++)
		t.member_size[i] = v->sb.slots[i].data_size ? v->sb.slots[i].data_size : v->sb.slots[0].data_size;
	char why[256];
	int r = layout_init(&t, why, sizeof(why));
	if (!r)
		r = vol_reshape_plan(&v->geom, &t, &w, &bl, why, sizeof(why));
	if (r)
		return refuse(err, errlen, r, "grow: %s", why);
	if (t.level == LAYOUT_RAID10 && v->geom.capacity % t.chunk)
		return refuse(err, errlen, -EINVAL, "grow: the raid10's capacity (%" PRIu64 " bytes) is not a multiple of the "
			      "new chunk %llu: md refuses such a chunk too", v->geom.capacity, (unsigned long long)t.chunk);
	if ((r = backup_room(v, bl, t.capacity, err, errlen)))
		return r;
	if (!vol_bitmap_fits(v, t.capacity))
		return refuse(err, errlen, -EFBIG, "grow: the write-intent bitmap (chunk %llu) has no room for the new "
			      "capacity's regions", (unsigned long long)v->sb.bitmap_chunk);
	return 0;
}

/* linear appends a member, raid1 gains a copy: no data moves, so the
 * geometry changes at once, with the volume still (raid1's new copy is then
 * rebuilt: md's recovery onto the new mirror leg). */
static int grow_now(struct vol *v, unsigned n, char *err, size_t errlen)
{
	struct layout_geom g = v->geom;
	int mirror = g.level == LAYOUT_RAID1;
	if (mirror && n != g.members + 1)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: raid1 gains one copy at a time (%u -> %u asked)",
			      g.members, n);
	g.members = n;
	g.copies = mirror ? n : g.copies;
	for (unsigned i = 0; i < n; i++)
		g.member_size[i] = v->sb.slots[i].data_size;
	int r = layout_init(&g, err, errlen);
	if (r)
		return r;
	struct eng_req *hold = eng_reshape_hold(v, &g, 0, g.capacity, 1);
	if (!hold)
		return -ENOMEM;
	vol_state_lock(v);
	struct sb *s = &v->sb;
	unsigned was = s->members;
	if (mirror) /* out of the reads before it is in the geometry */
		atomic_fetch_or(&v->failed, 1ull << was);
	for (unsigned i = was; i < n; i++) {
		s->slots[i].state = mirror ? SB_REBUILDING : SB_ACTIVE;
		s->slots[i].rebuild_pos = 0;
	}
	s->spares -= n - was;
	s->members = n;
	s->copies = mirror ? n : s->copies;
	s->volume_size = g.capacity;
	s->events++;
	v->geom = g;
	eng_geom_changed(v);
	int rb = vol_bitmap_grow(v);
	if (mirror)
		vol_rebuild_set(v, (int)was, 0);
	vol_sb_change_locked(v);
	pthread_mutex_unlock(&v->state_lock);
	vol_md_sync(v);
	eng_reshape_release(hold, 0);
	if (rb)
		fsvol_log(LOG_ERR, "grow: the write-intent bitmap keeps its old regions: %s", strerror(-rb));
	fsvol_log(LOG_NOTICE, "grow: %s now %u members, capacity %" PRIu64 "%s", layout_level_name(g.level), n,
		  g.capacity, mirror ? ": the new copy is rebuilt" : "");
	if (mirror)
		vol_recovery_kick(v);
	return 0;
}

int vol_reshape_grow(struct vol *v, const char *spec, char *err, size_t errlen)
{
	VOL_NOT_ON_COMPLETION("vol_grow");
	const struct layout_geom *g = &v->geom;
	const char *lname = layout_level_name(g->level);
	unsigned n = 0;
	uint64_t chunk = 0;
	char lay[32] = "";
	int level = -1, plus = 0, dry = 0;
	int r = parse_spec(spec, &n, &plus, &chunk, &level, lay, sizeof(lay), &dry, err, errlen);
	if (r)
		return r;
	if (v->opts.readonly)
		return refuse(err, errlen, -EROFS, "grow: the volume is read-only");
	if (vol_reshaping(v))
		return refuse(err, errlen, -EBUSY, "grow: a reshape of this %s is already under way", lname);
	int now = g->level == LAYOUT_LINEAR || g->level == LAYOUT_RAID1;
	if (g->level != LAYOUT_RAID4 && g->level != LAYOUT_RAID5 && g->level != LAYOUT_RAID6 &&
	    g->level != LAYOUT_RAID0 && g->level != LAYOUT_RAID10 && !now)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: %s cannot be reshaped here (linear, raid0, raid1, raid4, "
			      "raid5, raid6, raid10)", lname);
	if (now && (chunk || level >= 0))
		return refuse(err, errlen, -EOPNOTSUPP, "grow: %s only grows by members (no --chunk, no --level)", lname);
	if (level >= 0 && level != (int)g->level && !(g->level == LAYOUT_RAID5 && level == LAYOUT_RAID6))
		return refuse(err, errlen, -EOPNOTSUPP, "grow: %s to another level: only raid5 -> raid6", lname);
	unsigned alg = g->alg;
	if ((r = r10_rules(g, lay, &alg, err, errlen)))
		return r;
	if (atomic_load(&v->failed))
		return refuse(err, errlen, -EINVAL, "grow: the %s is degraded: recover it first (md refuses too)", lname);
	int to6 = level == LAYOUT_RAID6 && g->level == LAYOUT_RAID5;
	if (plus)
		n += g->members;
	if (!n)
		n = g->members + (unsigned)to6; /* raid5 -> raid6 takes one more member for Q */
	if (n < g->members)
		return refuse(err, errlen, -EOPNOTSUPP, "grow: %s from %u to %u members: shrinking is not supported", lname,
			      g->members, n);
	if (dry)
		return now ? 0 : dry_plan(v, to6, alg, n, chunk ? chunk : g->chunk, err, errlen);
	vol_spares_first(v); /* the new roles are the first spare slots: a failed member parked there moves out */
	for (unsigned s = g->members; s < n; s++)
		if (s >= v->nslots || !v->slot[s] || v->sb.slots[s].state != SB_SPARE)
			return refuse(err, errlen, -EINVAL, "grow: %s to %u members needs a spare for raid device %u (fsvol grow --add PATH, "
				      "or fsvol add first)", lname, n, s);
	if (now)
		return n == g->members ? refuse(err, errlen, -EINVAL, "grow: nothing to change (%s, %u members)", lname, n)
				       : grow_now(v, n, err, errlen);
	vol_state_lock(v);
	struct sb was = v->sb;
	struct sb *s = &v->sb;
	s->new_level = to6 ? LAYOUT_RAID6 : g->level;
	s->new_layout = to6 ? layout_default_alg(LAYOUT_RAID6) : alg;
	s->new_chunk = chunk ? chunk : g->chunk;
	s->new_members = n;
	s->new_copies = layout_copies(g); /* raid10 keeps its copies; 1 elsewhere */
	s->reshape_pos = 0;
	s->reshape_backup = 0;
	s->reshape_flags = SB_RESHAPE_ACTIVE;
	r = setup(v, err, errlen);
	struct vol_reshape *rs = v->reshape;
	if (!r && rs->geom.data_members < g->data_members)
		r = refuse(err, errlen, -EOPNOTSUPP, "grow: %s from %u to %u data members per stripe: fewer is not supported",
			   lname, g->data_members, rs->geom.data_members);
	if (!r && g->level == LAYOUT_RAID10 && g->capacity % rs->geom.chunk)
		r = refuse(err, errlen, -EINVAL, "grow: the raid10's capacity (%" PRIu64 " bytes) is not a multiple of the "
			   "new chunk %llu: md refuses such a chunk too", g->capacity, (unsigned long long)rs->geom.chunk);
	if (!r && rs->geom.capacity < g->capacity)
		r = refuse(err, errlen, -EOPNOTSUPP, "grow: the new %s would be smaller than this one (members %u, data "
			   "members %u): not supported", layout_level_name(rs->geom.level), n, rs->geom.data_members);
	if (!r && rs->geom.members == g->members && rs->geom.chunk == g->chunk && rs->geom.level == g->level &&
	    rs->geom.alg == g->alg)
		r = refuse(err, errlen, -EINVAL, "grow: nothing to change (%s, %u members, same chunk)", lname, n);
	if (!r)
		r = backup_room(v, rs->backup_len, rs->geom.capacity, err, errlen);
	if (!r && !vol_bitmap_fits(v, rs->geom.capacity))
		r = refuse(err, errlen, -EFBIG, "grow: the write-intent bitmap (chunk %llu) has no room for the new "
			   "capacity's regions", (unsigned long long)v->sb.bitmap_chunk);
	if (r) {
		v->sb = was;
		pthread_mutex_unlock(&v->state_lock);
		return r;
	}
	v->sb.events++;
	vol_sb_change_locked(v);
	atomic_store(&rs->pos, 0);
	rs->windows_backed = 0;
	atomic_store(&rs->active, 1);
	atomic_fetch_add(&rs->epoch, 1);
	pthread_mutex_unlock(&v->state_lock);
	vol_md_sync(v);
	fsvol_log(LOG_NOTICE, "reshape starts: %s %u -> %s %u members, chunk %llu -> %llu, window %" PRIu64 " bytes",
		  lname, g->members, layout_level_name(rs->geom.level), n, (unsigned long long)g->chunk,
		  (unsigned long long)rs->geom.chunk, rs->window);
	r = vol_pass_start(v, VOL_PASS_RESHAPE);
	if (r == -EBUSY) {
		vol_pass_want(v, VOL_PASS_RESHAPE); /* a pass began meanwhile: it gives way */
		r = 0;
	}
	return r;
}

/* ---- what it shows ---- */

static double percent(const struct vol_reshape *rs)
{
	return rs->geom.capacity ? 100.0 * (double)atomic_load(&rs->pos) / (double)rs->geom.capacity : 100.0;
}

void vol_reshape_status(struct vol *v, FILE *f)
{
	struct vol_reshape *rs = v->reshape;
	if (!vol_reshaping(v))
		return;
	char c0[32], c1[32];
	size_format(v->geom.chunk, c0, sizeof(c0));
	size_format(rs->geom.chunk, c1, sizeof(c1));
	fprintf(f, "      reshape = %.1f%% (%" PRIu64 "/%" PRIu64 ") %s %u -> %s %u members, chunk %s -> %s, delta %+d",
		percent(rs), atomic_load(&rs->pos) / 1024, rs->geom.capacity / 1024, layout_level_name(v->geom.level),
		v->geom.members, layout_level_name(rs->geom.level), rs->geom.members, c0, c1,
		(int)rs->geom.members - (int)v->geom.members);
	if (strcmp(layout_alg_name(&v->geom), layout_alg_name(&rs->geom)))
		fprintf(f, ", layout %s -> %s", layout_alg_name(&v->geom), layout_alg_name(&rs->geom));
	fputc('\n', f);
}

void vol_reshape_json(struct vol *v, FILE *f)
{
	struct vol_reshape *rs = v->reshape;
	if (!vol_reshaping(v)) {
		fputs(",\"reshape\":null", f);
		return;
	}
	fprintf(f, ",\"reshape\":{\"pos\":%" PRIu64 ",\"end\":%" PRIu64 ",\"percent\":%.2f,\"old_level\":\"%s\","
		"\"new_level\":\"%s\",\"old_members\":%u,\"new_members\":%u,\"old_chunk\":%llu,\"new_chunk\":%llu,"
		"\"new_capacity\":%" PRIu64 ",\"window\":%" PRIu64 ",\"backup_windows\":%" PRIu64 ",\"old_layout\":\"%s\","
		"\"new_layout\":\"%s\"}",
		atomic_load(&rs->pos), rs->geom.capacity, percent(rs), layout_level_name(v->geom.level),
		layout_level_name(rs->geom.level), v->geom.members, rs->geom.members, (unsigned long long)v->geom.chunk,
		(unsigned long long)rs->geom.chunk, rs->geom.capacity, rs->window, rs->windows_backed,
		layout_alg_name(&v->geom), layout_alg_name(&rs->geom));
}

void vol_reshape_free(struct vol *v)
{
	if (!v->reshape)
		return;
	free(v->reshape->buf);
	free(v->reshape);
	v->reshape = NULL;
}
