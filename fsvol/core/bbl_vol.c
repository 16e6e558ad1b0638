/* bbl_vol: the members' bad-block lists at run time (bbl_vol.h).
 *
 * Lists are kept per opened member (v->members[i]), not per slot, because a
 * list belongs to the disk: it goes where the member goes. The engine asks
 * which members are "failed" for a unit (vol_failed_at adds the listed ones),
 * so every family serves listed blocks the way it serves a missing member:
 * degraded reads and writes, resync that skips, rebuild that reconstructs.
 * A unit (parity stripe, mirror chunk) is the grain: a member whose list
 * touches its part of the unit is bypassed for the whole unit, so the rest
 * of that part goes stale on it and stays bypassed until a fix rewrites the
 * whole part and clears the entries, under the unit's lock.
 *
 * Lock: b->lock is a leaf (no I/O, no other lock taken under it); the engine
 * calls in here on completions. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bbl_vol.h"
#include "fsvol/core/eng_int.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/meta/bbl.h"
#include "fsvol/util/log.h"

#define BBL_JOBS 64u /* probes and fixes queued for the metadata thread */

struct bbl_member {
	struct bbl list;
	unsigned gen;     /* bumped on every change */
	unsigned written; /* the gen on the member */
	int loaded;       /* the member's own list was read (members added at run time: before the first write) */
};

struct bbl_job {
	struct member *m;
	unsigned slot;
	uint64_t off, len; /* member data-area bytes that erred */
};

struct vol_bbl {
	pthread_mutex_t lock;
	atomic_uint total;                     /* entries over every member: 0 is the fast path */
	struct bbl_member *mem[SB_MAX_SLOTS];  /* by opened member */
	struct bbl_job q[BBL_JOBS];
	unsigned nq;
	int quiesced;                          /* closing: no fix starts */
	atomic_uint fixing;                    /* fixes in flight */
};

static unsigned midx(const struct vol *v, const struct member *m)
{
	return (unsigned)(m - v->members);
}

static void recount(struct vol_bbl *b)
{
	unsigned t = 0;
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		if (b->mem[i])
			t += b->mem[i]->list.n;
	atomic_store_explicit(&b->total, t, memory_order_release);
}

static struct bbl_member *bm_get(struct vol_bbl *b, unsigned i)
{
	if (!b->mem[i] && (b->mem[i] = calloc(1, sizeof(*b->mem[i]))))
		bbl_init(&b->mem[i]->list);
	return b->mem[i];
}

/* Read m's list area into l. 0, or -errno / -EINVAL with why. */
static int area_read(struct vol *v, struct member *m, struct bbl *l, char *why, size_t whylen)
{
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, BBL_AREA))
		return -ENOMEM;
	int r = vol_meta_io(v, m, MEMBER_READ, STATS_WHY_BBL, buf, BBL_AREA, v->sb.bbl_offset);
	if (r < 0)
		snprintf(why, whylen, "%s", strerror(-r));
	else
		r = bbl_area_decode(buf, l, why, whylen);
	free(buf);
	return r;
}

int vol_bbl_open(struct vol *v)
{
	if (!v->sb.bbl_offset || v->sb.bbl_size < BBL_AREA)
		return 0; /* a volume without lists: an erring member fails, as before */
	struct vol_bbl *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	v->bbl = b;
	for (unsigned s = 0; s < v->nslots; s++) {
		struct member *m = v->slot[s];
		char why[256];
		if (!m)
			continue;
		struct bbl_member *bm = bm_get(b, midx(v, m));
		if (!bm)
			return -ENOMEM;
		bm->loaded = 1;
		if (area_read(v, m, &bm->list, why, sizeof(why)) < 0) {
			fsvol_log(LOG_WARNING, "%s: bad-block list unreadable (%s): taken as empty", m->path, why);
			bbl_init(&bm->list);
		}
	}
	recount(b);
	return 0;
}

void vol_bbl_attach(struct vol *v, struct member *m)
{
	struct vol_bbl *b = v->bbl;
	static struct bbl disk; /* state lock held: one caller at a time */
	char why[256];
	if (!b)
		return;
	if (area_read(v, m, &disk, why, sizeof(why)) < 0) {
		fsvol_log(LOG_WARNING, "%s: bad-block list unreadable (%s): taken as empty", m->path, why);
		bbl_init(&disk);
	}
	pthread_mutex_lock(&b->lock);
	struct bbl_member *bm = bm_get(b, midx(v, m));
	if (bm) {
		bm->list = disk;
		bm->gen = bm->written = 0;
		bm->loaded = 1;
		recount(b);
	}
	pthread_mutex_unlock(&b->lock);
}

void vol_bbl_quiesce(struct vol *v)
{
	struct vol_bbl *b = v->bbl;
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->quiesced = 1;
	pthread_mutex_unlock(&b->lock);
	while (atomic_load(&b->fixing)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

void vol_bbl_close(struct vol *v)
{
	struct vol_bbl *b = v->bbl;
	if (!b)
		return;
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		free(b->mem[i]);
	pthread_mutex_destroy(&b->lock);
	free(b);
	v->bbl = NULL;
}

int vol_bbl_any(const struct vol *v)
{
	return v->bbl && atomic_load_explicit(&v->bbl->total, memory_order_acquire);
}

/* Lock held: slot's member lists something in member bytes [off, off + len). */
static int listed(const struct vol *v, unsigned slot, uint64_t off, uint64_t len)
{
	const struct member *m = slot < v->nslots ? v->slot[slot] : NULL;
	const struct bbl_member *bm = m ? v->bbl->mem[midx(v, m)] : NULL;
	return bm && bm->list.n && bbl_overlaps(&bm->list, off / BBL_SECTOR, (len + BBL_SECTOR - 1) / BBL_SECTOR);
}

/* slot's part of unit u (member bytes): 1 when it holds one. */
static int unit_part(const struct vol *v, uint64_t u, unsigned slot, uint64_t *off, uint64_t *len)
{
	const struct layout_geom *g = &v->geom;
	if (layout_is_parity(g)) {
		/* every member holds a column of every stripe, at row u */
		*off = u * g->chunk;
		*len = g->chunk;
		return 1;
	}
	for (unsigned cp = 0; cp < layout_copies(g); cp++) {
		struct layout_extent e;
		if (!layout_locate(g, u * g->chunk, cp, &e) && e.member == slot) {
			*off = e.offset;
			*len = g->chunk;
			return 1;
		}
	}
	return 0;
}

/* The engine's unit holding logical off (engine_resync_units numbering). */
static uint64_t unit_of(const struct vol *v, uint64_t off)
{
	const struct layout_geom *g = &v->geom;
	return layout_is_parity(g) ? off / (g->chunk * g->data_members) : off / g->chunk;
}

uint64_t vol_bbl_failed_at(const struct vol *v, uint64_t off)
{
	struct vol_bbl *b = v->bbl;
	if (!b || !atomic_load_explicit(&b->total, memory_order_acquire))
		return 0;
	const struct layout_geom *g = &v->geom;
	uint64_t u = unit_of(v, off), mask = 0, moff, mlen;
	pthread_mutex_lock(&b->lock);
	for (unsigned s = 0; s < g->members; s++)
		if (unit_part(v, u, s, &moff, &mlen) && listed(v, s, moff, mlen))
			mask |= 1ull << s;
	pthread_mutex_unlock(&b->lock);
	return mask;
}

/* The superblock sequence moves: acknowledgements wait until the lists
 * that changed are on the members (md acknowledges entries the same way). */
static void lists_changed(struct vol *v, int ack_waits)
{
	if (ack_waits)
		atomic_fetch_add(&v->sb_seq_want, 1);
	vol_md_wake(v, VOL_MD_SB_CHANGE);
}

/* List member bytes [off, off + len) of m. 0, -ENOSPC (full), -ENOMEM. */
static int note(struct vol *v, struct member *m, uint64_t off, uint64_t len)
{
	struct vol_bbl *b = v->bbl;
	uint64_t s = off / BBL_SECTOR, e = (off + len + BBL_SECTOR - 1) / BBL_SECTOR;
	pthread_mutex_lock(&b->lock);
	struct bbl_member *bm = bm_get(b, midx(v, m));
	int r = bm ? bbl_add(&bm->list, s, e - s, 0) : -ENOMEM;
	if (!r) {
		bm->gen++;
		recount(b);
	}
	pthread_mutex_unlock(&b->lock);
	if (!r)
		lists_changed(v, 1);
	return r;
}

static void queue_job(struct vol *v, unsigned slot, uint64_t off, uint64_t len)
{
	struct vol_bbl *b = v->bbl;
	pthread_mutex_lock(&b->lock);
	if (b->nq < BBL_JOBS) /* else the blocks just stay listed */
		b->q[b->nq++] = (struct bbl_job){ .m = v->slot[slot], .slot = slot, .off = off, .len = len };
	pthread_mutex_unlock(&b->lock);
	vol_md_wake(v, VOL_MD_BBL);
}

int vol_bbl_settle(struct eng_req *rq, uint64_t *bad)
{
	struct vol *v = rq->v;
	uint64_t listed_mask = 0, unlisted = 0;
	int end = 0;
	if (!v->bbl)
		return 0;
	for (unsigned k = 0; k < rq->nmio; k++) {
		struct eng_mio *s = &rq->mio[k];
		int res = s->io.res;
		uint64_t bit = 1ull << s->slot;
		/* a failfast timeout (failfast.c) is no media error: the member fails */
		if (res >= 0 || vol_host_errno(res) || res == -ETIMEDOUT || !(*bad & bit))
			continue;
		if (rq->kind == ENG_K_FIX && (int)s->slot == rq->dest) {
			/* the rewrite failed: the blocks stay listed, the member serves on */
			listed_mask |= bit;
			rq->res = res;
			end = 1;
			continue;
		}
		if (s->slot >= v->geom.members || s->op == MEMBER_FLUSH || !v->slot[s->slot] ||
		    note(v, v->slot[s->slot], s->off, s->len)) {
			unlisted |= bit; /* not sector-local, or the list is full: the member fails */
			continue;
		}
		listed_mask |= bit;
		fsvol_log(LOG_WARNING, "member %u (%s): %s error (%s) at %" PRIu64 "+%" PRIu64 ": listed in its bad-block list, "
			  "served from redundancy", s->slot, v->slot[s->slot]->path, s->op == MEMBER_READ ? "read" : "write",
			  strerror(-res), s->off, s->len);
		queue_job(v, s->slot, s->off, s->len);
		if (rq->kind == ENG_K_REBUILD && (int)s->slot == rq->dest)
			end = 1; /* the unit's part on the new member is listed: on to the next unit */
	}
	*bad &= ~(listed_mask & ~unlisted);
	return end;
}

/* List slot's part of unit u. 0 or -errno. */
static int note_unit(struct vol *v, unsigned slot, uint64_t u)
{
	uint64_t off, len;
	if (!v->slot[slot] || !unit_part(v, u, slot, &off, &len))
		return -EIO;
	return note(v, v->slot[slot], off, len);
}

int vol_bbl_unit_lost(struct eng_req *rq)
{
	struct vol *v = rq->v;
	/* lost because of listed blocks only: the volume itself still runs */
	if (!vol_bbl_any(v) || rq->kind != ENG_K_REBUILD || rq->dest < 0 || (unsigned)rq->dest >= v->geom.members ||
	    !layout_survives(&v->geom, eng_failed(v)) || note_unit(v, (unsigned)rq->dest, rq->unit))
		return -EIO;
	fsvol_log(LOG_WARNING, "rebuild of member %d: unit %" PRIu64 " cannot be recovered (bad blocks listed on the "
		  "other members): listed as bad on it", rq->dest, rq->unit);
	return 0;
}

void vol_bbl_fixed(struct eng_req *rq)
{
	struct vol *v = rq->v;
	struct vol_bbl *b = v->bbl;
	uint64_t off, len;
	if (!b || rq->kind != ENG_K_FIX || rq->res || !v->slot[rq->dest] ||
	    !unit_part(v, rq->unit, (unsigned)rq->dest, &off, &len))
		return;
	pthread_mutex_lock(&b->lock);
	struct bbl_member *bm = b->mem[midx(v, v->slot[rq->dest])];
	int cleared = bm && bbl_overlaps(&bm->list, off / BBL_SECTOR, len / BBL_SECTOR) &&
		      !bbl_clear(&bm->list, off / BBL_SECTOR, len / BBL_SECTOR);
	if (cleared) {
		bm->gen++;
		recount(b);
	}
	pthread_mutex_unlock(&b->lock);
	if (cleared) {
		fsvol_log(LOG_NOTICE, "member %d (%s): %" PRIu64 "+%" PRIu64 " rewritten from redundancy: read error "
			  "corrected, taken off its bad-block list", rq->dest, v->slot[rq->dest]->path, off, len);
		lists_changed(v, 0);
	}
}

static void fix_done(void *arg, int res)
{
	struct vol *v = arg;
	(void)res; /* failed: the blocks stay listed (vol_bbl_settle) */
	atomic_fetch_sub(&v->bbl->fixing, 1);
}

/* Rewrite slot's part of unit u from redundancy (engine_fix), unless closing. */
static void fix_start(struct vol *v, unsigned slot, uint64_t u)
{
	struct vol_bbl *b = v->bbl;
	pthread_mutex_lock(&b->lock);
	uint64_t off, len;
	int go = !b->quiesced && unit_part(v, u, slot, &off, &len) && listed(v, slot, off, len);
	if (go)
		atomic_fetch_add(&b->fixing, 1);
	pthread_mutex_unlock(&b->lock);
	if (go && engine_fix(v, slot, u, fix_done, v))
		atomic_fetch_sub(&b->fixing, 1);
}

void vol_bbl_run(struct vol *v)
{
	struct vol_bbl *b = v->bbl;
	struct bbl_job q[BBL_JOBS];
	const struct layout_geom *g = &v->geom;
	void *buf = NULL;
	if (!b || posix_memalign(&buf, 4096, SB_SIZE))
		return;
	pthread_mutex_lock(&b->lock);
	unsigned n = b->nq;
	memcpy(q, b->q, n * sizeof(q[0]));
	b->nq = 0;
	pthread_mutex_unlock(&b->lock);
	for (unsigned j = 0; j < n; j++) {
		struct bbl_job *jb = &q[j];
		uint64_t bit = 1ull << jb->slot;
		if (v->slot[jb->slot] != jb->m || ((eng_failed(v) & bit) && (int)jb->slot != atomic_load(&v->rebuild_slot)))
			continue; /* gone or failed meanwhile */
		/* sector-local? a member whose superblock cannot be read either is
		 * failing as a whole (md fails it once its errors pile up) */
		int r = vol_meta_io(v, jb->m, MEMBER_READ, STATS_WHY_SB, buf, SB_SIZE, 0);
		if (r < 0) {
			fsvol_log(LOG_ERR, "member %u (%s): its superblock cannot be read either (%s): the errors are not "
				  "sector-local; failing it", jb->slot, jb->m->path, strerror(-r));
			vol_fail_slot(v, jb->slot, r);
			continue;
		}
		uint64_t first = jb->off / g->chunk, last = (jb->off + jb->len - 1) / g->chunk;
		for (uint64_t row = first; row <= last; row++) {
			uint64_t logical;
			unsigned copy;
			if (layout_is_parity(g)) {
				if (row < g->stripes)
					fix_start(v, jb->slot, row);
			} else if (layout_unmap(g, jb->slot, row * g->chunk, &logical, &copy) == LAYOUT_DATA) {
				fix_start(v, jb->slot, logical / g->chunk);
			}
		}
	}
	free(buf);
}

/* A member opened at run time: its own list joins what was noted. Lock not held. */
static void load_late(struct vol *v, struct member *m, struct bbl_member *bm)
{
	static struct bbl disk; /* the metadata thread only */
	char why[256];
	int r = area_read(v, m, &disk, why, sizeof(why));
	pthread_mutex_lock(&v->bbl->lock);
	if (!r) {
		for (unsigned i = 0; i < disk.n; i++)
			bbl_add(&bm->list, disk.e[i].start, disk.e[i].len, 1);
		if (disk.seq > bm->list.seq)
			bm->list.seq = disk.seq;
	}
	bm->loaded = 1;
	pthread_mutex_unlock(&v->bbl->lock);
}

int vol_bbl_write(struct vol *v)
{
	struct vol_bbl *b = v->bbl;
	static struct bbl copy; /* the metadata thread only (or vol_close after it) */
	void *buf = NULL;
	int failed_one = 0;
	if (!b || v->opts.readonly || posix_memalign(&buf, 4096, BBL_COPY))
		return 0;
	uint64_t failed = eng_failed(v);
	int rebuilding = atomic_load(&v->rebuild_slot);
	for (unsigned s = 0; s < v->geom.members; s++) {
		struct member *m = v->slot[s];
		if (!m || !m->ops || ((failed & (1ull << s)) && (int)s != rebuilding))
			continue; /* a failed member is left alone, as its superblock */
		pthread_mutex_lock(&b->lock);
		struct bbl_member *bm = b->mem[midx(v, m)];
		int dirty = bm && bm->gen != bm->written, loaded = bm && bm->loaded;
		pthread_mutex_unlock(&b->lock);
		if (!dirty)
			continue;
		if (!loaded)
			load_late(v, m, bm);
		pthread_mutex_lock(&b->lock);
		copy = bm->list;
		unsigned gen = bm->gen;
		uint64_t seq = bm->list.seq + 1;
		pthread_mutex_unlock(&b->lock);
		bbl_ack_all(&copy);
		bbl_encode(&copy, seq, buf);
		/* the other copy keeps the previous list while this one is written */
		int r = vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_BBL, buf, BBL_COPY, v->sb.bbl_offset + bbl_copy_off(seq));
		if (!r)
			r = vol_meta_flush(v, m, STATS_WHY_BBL);
		pthread_mutex_lock(&b->lock);
		if (!r) {
			bm->list.seq = seq;
			bm->written = gen;
			if (bm->gen == gen)
				bbl_ack_all(&bm->list);
		}
		pthread_mutex_unlock(&b->lock);
		if (r) {
			fsvol_log(LOG_ERR, "member %u (%s): cannot write its bad-block list (%s): failing it", s, m->path,
				  strerror(-r));
			vol_fail_slot(v, s, r);
			failed_one = 1;
		}
	}
	free(buf);
	return failed_one;
}

unsigned vol_bbl_count(const struct vol *v, unsigned slot, uint64_t *sectors)
{
	struct vol_bbl *b = v->bbl;
	unsigned n = 0;
	if (sectors)
		*sectors = 0;
	if (!b || slot >= v->nslots || !v->slot[slot])
		return 0;
	pthread_mutex_lock(&b->lock);
	const struct bbl_member *bm = b->mem[midx(v, v->slot[slot])];
	if (bm) {
		n = bm->list.n;
		if (sectors)
			*sectors = bbl_sectors(&bm->list);
	}
	pthread_mutex_unlock(&b->lock);
	return n;
}

int vol_bbl_get(const struct vol *v, unsigned slot, struct bbl *out)
{
	struct vol_bbl *b = v->bbl;
	if (!b || slot >= v->nslots || !v->slot[slot])
		return -ENOENT;
	pthread_mutex_lock(&b->lock);
	const struct bbl_member *bm = b->mem[midx(v, v->slot[slot])];
	if (bm)
		*out = bm->list;
	else
		bbl_init(out);
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/* ---- the bad-block lists as a feature (core/feature.h) ---- */

static int bbl_feat_open(struct vol *v, char *err, size_t errlen)
{
	int r = vol_bbl_open(v);
	if (r < 0) {
		snprintf(err, errlen, "reading the bad-block lists: %s", strerror(-r));
		return r;
	}
	return v->bbl != NULL;
}

static void bbl_feat_md_work(struct vol *v, unsigned flags, int stopping)
{
	if ((flags & VOL_MD_BBL) && !stopping)
		vol_bbl_run(v); /* probe the members with new bad blocks, start their fixes */
}

const struct vol_feature vol_feat_bbl = {
	.name = "bad-block lists",
	.open = bbl_feat_open,
	.quiesce = vol_bbl_quiesce,
	.free = vol_bbl_close,
	.sb_write = vol_bbl_write,
	.md_work = bbl_feat_md_work,
	.read_locks = vol_bbl_any,
	.failed_at = vol_bbl_failed_at,
	.settle = vol_bbl_settle,
	.unit_lost = vol_bbl_unit_lost,
	.unit_done = vol_bbl_fixed,
};
