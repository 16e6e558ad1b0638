/* io_mirror: raid1 and raid10, where every byte has several copies.
 * A read goes to one copy (chosen by the read policy), a write to every
 * copy that is present; resync compares the copies with the first present. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/write_behind.h"

#define MIRROR_WINDOW (256u << 10) /* resync compares this much at a time */

/* Which copy serves a read at off in geometry g (a reshape's new one below
 * its position); its extent in *e (clipped to len), or copies when none is
 * present. */
static unsigned pick_copy(struct vol *v, const struct layout_geom *g, uint64_t off, uint64_t len, uint64_t failed,
			  struct layout_extent *e)
{
	unsigned copies = layout_copies(g), best = copies, i;
	struct layout_extent ex[LAYOUT_MAX_MEMBERS];
	for (i = 0; i < copies; i++)
		layout_locate(g, off, i, &ex[i]);
	switch (v->opts.read_policy) {
	case VOL_READ_PREFER:
		for (i = 0; i < copies; i++)
			if (ex[i].member == v->opts.prefer && !(failed & (1ull << ex[i].member)))
				best = i;
		break;
	case VOL_READ_ROUNDROBIN:
	case VOL_READ_SPLIT: {
		unsigned start = atomic_fetch_add_explicit(&v->rr, 1, memory_order_relaxed);
		for (unsigned k = 0; k < copies && best == copies; k++) {
			i = (start + k) % copies;
			if (!(failed & (1ull << ex[i].member)))
				best = i;
		}
		break;
	}
	default:
		break;
	}
	if (best == copies) {
		/* md: a copy whose head sits where this read starts keeps the stream;
		 * else the fewest pending; ties to the nearest head. */
		unsigned bpend = ~0u;
		uint64_t bdist = UINT64_MAX;
		for (i = 0; i < copies; i++) {
			struct member *m = v->slot[ex[i].member];
			if ((failed & (1ull << ex[i].member)) || !m)
				continue;
			const struct vol_mstate *ms = vol_ms(v, m);
			uint64_t head = atomic_load_explicit(&ms->head, memory_order_relaxed);
			if (head == ex[i].offset && head != 0) {
				best = i;
				break;
			}
			unsigned pend = atomic_load_explicit(&ms->pending, memory_order_relaxed);
			uint64_t dist = head > ex[i].offset ? head - ex[i].offset : ex[i].offset - head;
			if (pend < bpend || (pend == bpend && dist < bdist)) {
				best = i;
				bpend = pend;
				bdist = dist;
			}
		}
	}
	if (best == copies)
		return copies;
	*e = ex[best];
	if (e->length > len)
		e->length = len;
	return best;
}

/* The write-mostly roles (md's WriteMostly, raid1 only): read from only
 * when no other copy can serve. */
static uint64_t mirror_slow(const struct vol *v)
{
	uint64_t m = 0;
	if (v->geom.level == LAYOUT_RAID1)
		for (unsigned i = 0; i < v->geom.members; i++)
			if (vol_slot_flags(v, i) & SB_SLOT_WRITE_MOSTLY)
				m |= 1ull << i;
	return m;
}

static uint64_t mirror_roles(const struct vol *v)
{
	return v->geom.members >= 64 ? ~0ull : (1ull << v->geom.members) - 1;
}

static int mirror_read(struct eng_req *rq)
{
	struct vol *v = rq->v;
	uint64_t end = rq->seg_off + rq->seg_len, slow = mirror_slow(v);
	if (rq->phase == ENG_ONCE_DONE)
		return ENG_DONE;
	/* only a write-mostly leg can serve: it must not overtake a write-behind
	 * still on its way to it (md waits for behind writes here too) */
	if (slow && v->wb && !(~(eng_failed_at(rq, rq->seg_off) | slow) & mirror_roles(v)) &&
	    !wb_read_ok(rq, rq->seg_off, rq->seg_len))
		return ENG_WAIT;
	rq->phase = ENG_ONCE_DONE;
	for (uint64_t pos = rq->seg_off; pos < end;) {
		struct layout_extent e;
		uint64_t failed = eng_failed_at(rq, pos);
		if (pick_copy(v, rq->geom, pos, end - pos, failed | slow, &e) == layout_copies(rq->geom) &&
		    pick_copy(v, rq->geom, pos, end - pos, failed, &e) == layout_copies(rq->geom))
			return -EIO;
		if (v->opts.read_policy == VOL_READ_SPLIT && v->opts.split && e.length > v->opts.split)
			e.length = v->opts.split; /* gmirror split: big reads spread over the copies */
		int r = eng_piece(rq, e.member, MEMBER_READ, rq->why, e.offset, e.length, rq->seg_buf + (pos - rq->seg_off));
		if (r)
			return r;
		pos += e.length;
	}
	return ENG_ISSUE;
}

/* Write-behind (write_behind.c): the write-mostly legs rq leaves to its
 * behind write (*skip), and the legs it may write (*only: a behind write
 * itself writes the write-mostly legs alone). ENG_WAIT when rq was queued. */
static int mirror_wb_plan(struct eng_req *rq, uint64_t *skip, uint64_t *only)
{
	struct vol *v = rq->v;
	uint64_t slow = mirror_slow(v) & ~eng_failed_at(rq, rq->seg_off);
	*skip = 0;
	*only = ~0ull;
	if (rq->flags & ENG_F_BEHIND) {
		*only = mirror_slow(v);
		return 0;
	}
	/* behind only while another copy takes the write now (the caller is
	 * answered by a copy that has it, never by the slow leg's promise) */
	if (!v->wb || !slow || !(~(eng_failed_at(rq, rq->seg_off) | mirror_slow(v)) & mirror_roles(v)))
		return 0;
	if (rq->wb_seg == rq->seg_off + 1) {
		*skip = slow; /* a replan: the behind write of this segment is on its way */
		return 0;
	}
	int r = wb_admit(rq, rq->seg_off, rq->seg_len);
	if (r == ENG_WAIT)
		return r;
	if (r == 1 && !wb_start(rq, rq->seg_off, rq->seg_len, rq->seg_buf)) {
		rq->wb_seg = rq->seg_off + 1;
		*skip = slow;
	}
	return 0;
}

static int mirror_write(struct eng_req *rq)
{
	const struct layout_geom *g = rq->geom;
	uint64_t end = rq->seg_off + rq->seg_len, skip, only;
	unsigned copies = layout_copies(g);
	if (rq->phase == ENG_ONCE_DONE)
		return ENG_DONE;
	if (mirror_wb_plan(rq, &skip, &only) == ENG_WAIT)
		return ENG_WAIT;
	rq->phase = ENG_ONCE_DONE;
	for (uint64_t pos = rq->seg_off; pos < end;) {
		uint64_t step = end - pos, failed = eng_failed_at(rq, pos);
		unsigned written = 0;
		struct layout_extent e;
		for (unsigned cp = 0; cp < copies; cp++) {
			int r = layout_locate(g, pos, cp, &e);
			if (r)
				return r;
			if (e.length < step)
				step = e.length;
		}
		for (unsigned cp = 0; cp < copies; cp++) {
			layout_locate(g, pos, cp, &e);
			if (skip & (1ull << e.member)) {
				written++; /* its behind write has it */
				continue;
			}
			if ((failed & (1ull << e.member)) || !(only & (1ull << e.member)))
				continue;
			int r = eng_piece(rq, e.member, MEMBER_WRITE, cp ? STATS_WHY_MIRROR : STATS_WHY_DATA, e.offset,
					  step, rq->seg_buf + (pos - rq->seg_off));
			if (r)
				return r;
			written++;
		}
		if (!written && !(rq->flags & ENG_F_BEHIND))
			return -EIO; /* a behind write whose legs failed: the other copies have it */
		pos += step;
	}
	return rq->npieces ? ENG_ISSUE : ENG_DONE;
}

/* A window of a chunk: every copy's extent, and which of them are present. */
struct mirror_win {
	struct layout_extent e[LAYOUT_MAX_MEMBERS];
	unsigned copies, first, present, src, dst;
	uint64_t failed;
};

/* The window at rq->rpos: at most MIRROR_WINDOW, within every copy's extent. */
static int mirror_window(struct eng_req *rq, struct mirror_win *w, uint64_t *win, uint64_t failed)
{
	const struct layout_geom *g = rq->geom;
	uint64_t end = rq->seg_off + rq->seg_len;
	if (rq->rpos >= end)
		return ENG_DONE;
	*win = end - rq->rpos < MIRROR_WINDOW ? end - rq->rpos : MIRROR_WINDOW;
	w->copies = layout_copies(g);
	w->first = w->src = w->dst = w->copies;
	w->present = 0;
	w->failed = failed;
	uint64_t slow = mirror_slow(rq->v);
	for (unsigned k = 0; k < w->copies; k++) {
		layout_locate(g, rq->rpos, k, &w->e[k]);
		if (w->e[k].length < *win)
			*win = w->e[k].length;
		if ((int)w->e[k].member == rq->target && rq->kind >= ENG_K_REBUILD)
			w->dst = k;
		else if (!(failed & (1ull << w->e[k].member))) {
			w->present++;
			/* md reads a resync or rebuild from a copy that is not
			 * write-mostly when it can: the write-mostly one may lag */
			if (w->first == w->copies || ((slow >> w->e[w->first].member) & 1 && !((slow >> w->e[k].member) & 1)))
				w->first = k;
		}
	}
	w->src = w->first;
	return ENG_WIN_GO;
}

/* Resync: read every present copy of the window, compare them with the
 * first and rewrite the others (repair). */
static int resync_window(struct eng_req *rq, void *wp, uint64_t *win)
{
	struct mirror_win *w = wp;
	int r = mirror_window(rq, w, win, eng_failed_at(rq, rq->rpos));
	if (r != ENG_WIN_GO)
		return r;
	if (w->first == w->copies)
		return -EIO;
	/* a write-behind still on its way is no mismatch: let it land first */
	if (rq->phase == ENG_WIN_READ && rq->v->wb && !wb_read_ok(rq, rq->rpos, *win))
		return ENG_WAIT;
	if (rq->phase == ENG_WIN_READ && w->present < 2) {
		/* nothing to compare this window with: say so */
		rq->skipped++;
		return ENG_WIN_PASS;
	}
	return ENG_WIN_GO;
}

static int resync_read(struct eng_req *rq, void *wp, uint64_t win)
{
	struct mirror_win *w = wp;
	uint64_t failed = w->failed;
	uint8_t **buf = eng_alloc(rq, w->copies * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	rq->fam_priv = buf;
	for (unsigned k = 0; k < w->copies; k++) {
		buf[k] = NULL;
		if (failed & (1ull << w->e[k].member))
			continue;
		void *b = buf[k] = eng_alloc(rq, win);
		if (!b)
			return -ENOMEM;
		int r = eng_piece(rq, w->e[k].member, MEMBER_READ, k == w->first ? STATS_WHY_DATA : STATS_WHY_MIRROR,
				  w->e[k].offset, win, b);
		if (r)
			return r;
	}
	return 0;
}

static int resync_write(struct eng_req *rq, void *wp, uint64_t win)
{
	struct mirror_win *w = wp;
	/* the copies read (the failed mask may have moved since) */
	uint8_t **buf = rq->fam_priv;
	unsigned f = w->first < w->copies && buf[w->first] ? w->first : 0;
	while (!buf[f])
		f++;
	uint8_t *ref = buf[f];
	int differs = 0;
	for (unsigned k = 0; k < w->copies; k++) {
		if (k == f || !buf[k] || !memcmp(buf[k], ref, win))
			continue;
		differs = 1;
		if (rq->repair) {
			int r = eng_piece(rq, w->e[k].member, MEMBER_WRITE, STATS_WHY_MIRROR, w->e[k].offset, win, ref);
			if (r)
				return r;
		}
	}
	rq->mismatches += differs;
	return 0;
}

static const struct eng_window_ops mirror_resync_ops = {
	.window = resync_window, .read = resync_read, .write = resync_write,
};

static int mirror_resync(struct eng_req *rq)
{
	struct mirror_win w;
	return eng_window_loop(rq, &mirror_resync_ops, &w);
}

/* Rebuild (and replace's copy): read a copy that is in sync, write it to the
 * slot that rebuilds the target's copy. */
static int rebuild_window(struct eng_req *rq, void *wp, uint64_t *win)
{
	struct mirror_win *w = wp;
	int r = mirror_window(rq, w, win, eng_failed_at(rq, rq->rpos) | (1ull << rq->target));
	if (r != ENG_WIN_GO)
		return r;
	if (w->dst == w->copies) /* the target holds no copy of this window */
		return ENG_WIN_PASS;
	return w->src == w->copies ? -EIO : ENG_WIN_GO;
}

static int rebuild_read(struct eng_req *rq, void *wp, uint64_t win)
{
	struct mirror_win *w = wp;
	if (!(rq->fam_priv = eng_alloc(rq, win)))
		return -ENOMEM;
	return eng_piece(rq, w->e[w->src].member, MEMBER_READ, STATS_WHY_REBUILD, w->e[w->src].offset, win,
			 rq->fam_priv);
}

static int rebuild_write(struct eng_req *rq, void *wp, uint64_t win)
{
	struct mirror_win *w = wp;
	return eng_piece(rq, (unsigned)rq->dest, MEMBER_WRITE, STATS_WHY_REBUILD, w->e[w->dst].offset, win,
			 rq->fam_priv);
}

static const struct eng_window_ops mirror_rebuild_ops = {
	.window = rebuild_window, .read = rebuild_read, .write = rebuild_write,
};

static int mirror_rebuild(struct eng_req *rq)
{
	struct mirror_win w;
	return eng_window_loop(rq, &mirror_rebuild_ops, &w);
}

static uint64_t mirror_units(const struct layout_geom *g)
{
	return (g->capacity + g->chunk - 1) / g->chunk;
}

static void mirror_range(const struct layout_geom *g, uint64_t unit, uint64_t *off, uint64_t *len)
{
	*off = unit * g->chunk;
	*len = g->capacity - *off < g->chunk ? g->capacity - *off : g->chunk;
}

static uint64_t mirror_lock_unit(const struct layout_geom *g)
{
	(void)g;
	return 1u << 20;
}

const struct eng_family eng_mirror = {
	.name = "mirror",
	.read = mirror_read,
	.write = mirror_write,
	.resync = mirror_resync,
	.rebuild = mirror_rebuild,
	.resync_units = mirror_units,
	.resync_range = mirror_range,
	.lock_unit = mirror_lock_unit,
	.parity = 0,
};
