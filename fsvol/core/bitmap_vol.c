/* bitmap_vol: the write-intent bitmap of a running volume (md's internal
 * bitmap, drivers/md/md-bitmap.c, in miniature).
 *
 * Three images of the bits, all under one mutex:
 *   want    what writers need: a write sets its regions' bits here;
 *   ondisk  what the members hold (the last image written);
 *   sure    bits known durable: ondisk, less any bit an image being written
 *           right now clears (a writer may not trust a bit that is going).
 * A write segment whose bits are all in `sure` goes on at once; otherwise it
 * waits, queued (never a blocked thread), for the metadata thread
 * (core/vol_md.c, which runs this file's work): it takes a
 * snapshot of `want`, writes the 4 KiB blocks that changed to every member
 * in a role (then flushes them), and kicks the writers the snapshot covered.
 *
 * Clearing is lazy (md's daemon_sleep): every BM_TICK_NS the thread ages the
 * set regions that have no write in flight; one idle for BM_AGE ticks is a
 * candidate, the members are flushed (its data is durable), and, if no write
 * touched it meanwhile, its bit goes. Nothing is cleared while the volume is
 * degraded, rebuilding or owed a resync: those bits are what a re-add or the
 * next assembly catches up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/feature.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/meta/bitmap.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "fsvol/util/size.h"
#include "stats/stats.h"

#define BM_TICK_NS 2000000000ull /* md's daemon_sleep is 5 s; a lesson wants it sooner */
#define BM_AGE 2                 /* idle ticks before a bit may clear */

struct vol_bitmap {
	uint64_t chunk, nbits, bytes, offset;
	uint8_t *want, *ondisk, *sure, *snap; /* bytes each, 4 KiB aligned */
	uint32_t *inflight;                   /* write segments in flight per region */
	uint8_t *age;                         /* ticks left before a bit may clear */
	uint8_t *cand;                        /* the clearing pass's candidates (a bit each) */
	pthread_mutex_t lock;
	int need_write;
	uint64_t next_tick;                   /* when the lazy clearing is due (ns, monotonic) */
	struct vol_waiter *waiters;
	int partial;                          /* slot + 1 of a re-add's partial recovery */
	atomic_uint_fast64_t writes;          /* bitmap block writes (per member) */
	struct member *whole[SB_MAX_SLOTS];   /* the member each slot last got the whole image on */
};

static void *alloc_img(uint64_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, bytes))
		return NULL;
	memset(p, 0, bytes);
	return p;
}

void vol_bitmap_free(struct vol *v)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b)
		return;
	free(b->want);
	free(b->ondisk);
	free(b->sure);
	free(b->snap);
	free(b->inflight);
	free(b->age);
	free(b->cand);
	pthread_mutex_destroy(&b->lock);
	free(b);
	v->bitmap = NULL;
}

int vol_bitmap_fits(const struct vol *v, uint64_t capacity)
{
	const struct vol_bitmap *b = v->bitmap;
	return !b || bitmap_image_bytes(bitmap_bits(capacity, b->chunk)) == b->bytes;
}

int vol_bitmap_grow(struct vol *v)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b)
		return 0;
	uint64_t nbits = bitmap_bits(v->geom.capacity, b->chunk);
	if (nbits <= b->nbits)
		return 0;
	if (!vol_bitmap_fits(v, v->geom.capacity))
		return -EFBIG;
	/* the images keep their blocks (the new bits are zero padding now);
	 * the per-region state grows */
	uint32_t *inflight = calloc(nbits, sizeof(*inflight));
	uint8_t *age = calloc(nbits, 1), *cand = calloc((nbits + 7) / 8, 1);
	if (!inflight || !age || !cand) {
		free(inflight);
		free(age);
		free(cand);
		return -ENOMEM;
	}
	pthread_mutex_lock(&b->lock);
	memcpy(inflight, b->inflight, b->nbits * sizeof(*inflight));
	memcpy(age, b->age, b->nbits);
	memcpy(cand, b->cand, (b->nbits + 7) / 8);
	free(b->inflight);
	free(b->age);
	free(b->cand);
	b->inflight = inflight;
	b->age = age;
	b->cand = cand;
	b->nbits = nbits;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/* The members that must hold the image: every present role member, failed
 * ones aside (a member being rebuilt included). */
static int bm_target(const struct vol *v, unsigned i)
{
	uint64_t failed = atomic_load(&v->failed);
	return v->slot[i] && v->slot[i]->ops &&
	       (!(failed & (1ull << i)) || (int)i == atomic_load(&v->rebuild_slot));
}

int vol_bitmap_open(struct vol *v, char *err, size_t errlen)
{
	const struct sb *s = &v->sb;
	if (!s->bitmap_offset)
		return 0;
	/* a bad-block list after the bitmap ends its area */
	uint64_t end = s->bbl_offset > s->bitmap_offset ? s->bbl_offset : s->data_offset;
	int r = bitmap_check(v->geom.capacity, s->bitmap_chunk, end - s->bitmap_offset, err, errlen);
	if (r)
		return r;
	struct vol_bitmap *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	v->bitmap = b;
	pthread_mutex_init(&b->lock, NULL);
	b->chunk = s->bitmap_chunk;
	b->offset = s->bitmap_offset;
	b->nbits = bitmap_bits(v->geom.capacity, b->chunk);
	b->bytes = bitmap_image_bytes(b->nbits);
	if (!(b->want = alloc_img(b->bytes)) || !(b->ondisk = alloc_img(b->bytes)) ||
	    !(b->sure = alloc_img(b->bytes)) || !(b->snap = alloc_img(b->bytes)) ||
	    !(b->inflight = calloc(b->nbits, sizeof(*b->inflight))) || !(b->age = calloc(b->nbits, 1)) ||
	    !(b->cand = calloc((b->nbits + 7) / 8, 1))) {
		vol_bitmap_free(v);
		return -ENOMEM;
	}
	/* the union of every member's image: a bit any of them holds may cover
	 * a write that reached some members and not others */
	for (unsigned i = 0; i < v->geom.members; i++) {
		if (!v->slot[i])
			continue;
		if ((r = vol_meta_io(v, v->slot[i], MEMBER_READ, STATS_WHY_BITMAP, b->snap, b->bytes, b->offset)) < 0) {
			snprintf(err, errlen, "%s: reading the write-intent bitmap: %s", v->slot[i]->path, strerror(-r));
			vol_bitmap_free(v);
			return r;
		}
		bitmap_or(b->want, b->snap, b->nbits);
	}
	memcpy(b->ondisk, b->want, b->bytes);
	memcpy(b->sure, b->want, b->bytes);
	return 0;
}

/* The target members, held: each one's pending count keeps vol_remove from
 * closing it while the metadata thread writes (no state lock across I/O, so a
 * member failing meanwhile never waits for a bitmap write). */
static unsigned bm_hold(struct vol *v, struct member **ms, unsigned *slots)
{
	unsigned n = 0;
	pthread_mutex_lock(&v->state_lock);
	for (unsigned i = 0; i < v->geom.members; i++)
		if (bm_target(v, i)) {
			atomic_fetch_add(&vol_ms(v, v->slot[i])->pending, 1);
			ms[n] = v->slot[i];
			slots[n++] = i;
		}
	pthread_mutex_unlock(&v->state_lock);
	return n;
}

/* Write the blocks of snap that differ from ondisk to every target member,
 * then flush them. Bitmap lock NOT held. Each member's result in res[slot]. */
static void bm_write(struct vol *v, struct vol_bitmap *b, int *res)
{
	struct member *ms[SB_MAX_SLOTS];
	unsigned slots[SB_MAX_SLOTS], n = bm_hold(v, ms, slots);
	for (unsigned k = 0; k < n; k++) {
		struct member *m = ms[k];
		/* a member new to its slot (the first write of this mount, a re-add,
		 * a spare taking over) gets every block: its own image may be stale */
		int r = 0, wrote = 0, whole = b->whole[slots[k]] != m;
		for (uint64_t o = 0; o < b->bytes && !r; o += BITMAP_BLOCK)
			if (whole || memcmp(b->snap + o, b->ondisk + o, BITMAP_BLOCK)) {
				r = vol_meta_io(v, m, MEMBER_WRITE, STATS_WHY_BITMAP, b->snap + o, BITMAP_BLOCK,
						b->offset + o);
				wrote = 1;
				atomic_fetch_add(&b->writes, 1);
			}
		if (!r && wrote && (m->caps & MEMBER_CAN_FLUSH))
			r = vol_meta_flush(v, m, STATS_WHY_BITMAP); /* both counted, traced, under failfast */
		res[slots[k]] = r;
		if (!r)
			b->whole[slots[k]] = m;
		atomic_fetch_sub(&vol_ms(v, m)->pending, 1);
	}
}

static void bm_flush_members(struct vol *v)
{
	struct member *ms[SB_MAX_SLOTS];
	unsigned slots[SB_MAX_SLOTS], n = bm_hold(v, ms, slots);
	for (unsigned k = 0; k < n; k++) {
		if (ms[k]->caps & MEMBER_CAN_FLUSH)
			vol_meta_flush(v, ms[k], STATS_WHY_BITMAP); /* an error shows on the next write */
		atomic_fetch_sub(&vol_ms(v, ms[k])->pending, 1);
	}
}

static int may_clear(const struct vol *v)
{
	return !atomic_load(&v->failed) && atomic_load(&v->rebuild_slot) < 0 && !v->was_dirty && !v->opts.readonly;
}

/* One write round: snapshot want, write what changed, kick the writers the
 * snapshot covered. Called and returns with the bitmap lock held. */
static void bm_round(struct vol *v, struct vol_bitmap *b)
{
	struct vol_waiter *w = b->waiters;
	b->waiters = NULL;
	b->need_write = 0;
	memcpy(b->snap, b->want, b->bytes);
	for (uint64_t i = 0; i < b->bytes; i++)
		b->sure[i] = b->ondisk[i] & b->snap[i];
	pthread_mutex_unlock(&b->lock);
	int res[SB_MAX_SLOTS] = { 0 }, host = 0;
	/* the trace shows the blocks under a write that waited for them */
	uint64_t cause = 0;
	for (struct vol_waiter *x = w; x; x = x->next) /* newest first: the oldest */
		cause = x->trace_id ? x->trace_id : cause;
	uint64_t prev = vol_meta_cause(cause);
	bm_write(v, b, res);
	vol_meta_cause(prev);
	for (unsigned i = 0; i < v->geom.members; i++)
		if (vol_host_errno(res[i]))
			host = res[i]; /* the host's condition, not the disk's (engine.md) */
		else if (res[i])
			vol_fail_slot(v, i, res[i]); /* durable on what survives, as md */
	pthread_mutex_lock(&b->lock);
	if (!host) {
		memcpy(b->ondisk, b->snap, b->bytes);
		memcpy(b->sure, b->snap, b->bytes);
	} /* else ondisk stays: the next writer's round writes the blocks again */
	pthread_mutex_unlock(&b->lock);
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	while (w) {
		struct vol_waiter *n = w->next;
		w->res = host; /* its segment ends with the host's errno, if any */
		w->resume(w);
		if (e && emul_is_virtual(e))
			emul_expect(e, -1); /* its member I/O is announced by now */
		w = n;
	}
	pthread_mutex_lock(&b->lock);
}

/* md's daemon pass: age idle bits; flush; clear those still idle. Lock held. */
static void bm_tick(struct vol *v, struct vol_bitmap *b)
{
	if (!may_clear(v))
		return;
	uint64_t ncand = 0;
	memset(b->cand, 0, (b->nbits + 7) / 8);
	for (uint64_t r = 0; r < b->nbits; r++) {
		if (!(r & 7) && !b->want[r >> 3]) {
			r += 7;
			continue;
		}
		if (!bitmap_test(b->want, r) || b->inflight[r])
			continue;
		if (b->age[r])
			b->age[r]--;
		if (!b->age[r]) {
			bitmap_set(b->cand, r);
			ncand++;
		}
	}
	if (!ncand)
		return;
	pthread_mutex_unlock(&b->lock);
	/* what the candidates' writes left in volatile caches becomes durable
	 * before their bits go */
	bm_flush_members(v);
	pthread_mutex_lock(&b->lock);
	if (!may_clear(v))
		return;
	for (uint64_t r = 0; r < b->nbits; r++)
		if (bitmap_test(b->cand, r) && !b->inflight[r] && !b->age[r]) {
			bitmap_clear(b->want, r);
			b->need_write = 1;
		}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vol_bitmap_run(struct vol *v)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || v->opts.readonly)
		return;
	pthread_mutex_lock(&b->lock);
	while (b->waiters || b->need_write)
		bm_round(v, b);
	pthread_mutex_unlock(&b->lock);
}

void vol_bitmap_tick(struct vol *v)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || v->opts.readonly)
		return;
	pthread_mutex_lock(&b->lock);
	uint64_t now = now_ns();
	if (!b->next_tick)
		b->next_tick = now + BM_TICK_NS;
	if (now >= b->next_tick) {
		bm_tick(v, b);
		b->next_tick = now_ns() + BM_TICK_NS;
	}
	while (b->waiters || b->need_write)
		bm_round(v, b);
	pthread_mutex_unlock(&b->lock);
}

int vol_bitmap_begin(struct vol *v, uint64_t off, uint64_t len, struct vol_waiter *w)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || !len)
		return 1;
	uint64_t first, last;
	int durable = 1;
	bitmap_range(b->chunk, off, len, &first, &last);
	pthread_mutex_lock(&b->lock);
	for (uint64_t r = first; r <= last; r++) {
		b->inflight[r]++;
		b->age[r] = BM_AGE;
		if (!bitmap_test(b->want, r)) {
			bitmap_set(b->want, r);
			b->need_write = 1;
		}
		if (!bitmap_test(b->sure, r))
			durable = 0;
	}
	if (!durable) {
		w->next = b->waiters;
		b->waiters = w;
		/* virtual time waits for it: the bitmap costs no emulated time */
		struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
		if (e && emul_is_virtual(e))
			emul_expect(e, 1);
	}
	pthread_mutex_unlock(&b->lock);
	if (!durable)
		vol_md_wake(v, VOL_MD_BITMAP);
	return durable;
}

void vol_bitmap_end(struct vol *v, uint64_t off, uint64_t len)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || !len)
		return;
	uint64_t first, last;
	bitmap_range(b->chunk, off, len, &first, &last);
	pthread_mutex_lock(&b->lock);
	for (uint64_t r = first; r <= last; r++)
		b->inflight[r]--;
	pthread_mutex_unlock(&b->lock);
}

/* The regions [off, off+len) touches, within the bitmap. */
static void bm_regions(const struct vol_bitmap *b, uint64_t off, uint64_t len, uint64_t *first, uint64_t *last)
{
	bitmap_range(b->chunk, off, len, first, last);
	if (*last >= b->nbits)
		*last = b->nbits - 1;
}

int vol_bitmap_dirty(struct vol *v, uint64_t off, uint64_t len)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || !len)
		return 1;
	uint64_t first, last;
	bm_regions(b, off, len, &first, &last);
	pthread_mutex_lock(&b->lock);
	int r = bitmap_any(b->want, first, last);
	pthread_mutex_unlock(&b->lock);
	return r;
}

int vol_bitmap_skip(struct vol *v, unsigned gen, uint64_t off, uint64_t len)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b || !len)
		return 0;
	uint64_t first, last;
	bm_regions(b, off, len, &first, &last);
	pthread_mutex_lock(&b->lock);
	/* under the lock a writer sets bits with: a writer that sets one after
	 * this check plans after the checkpoint moved, so it writes the member */
	int skip = !bitmap_any(b->want, first, last) && vol_rebuild_advance(v, gen, off + len);
	pthread_mutex_unlock(&b->lock);
	return skip;
}

void vol_bitmap_partial(struct vol *v, int slot)
{
	if (v->bitmap) {
		pthread_mutex_lock(&v->bitmap->lock);
		v->bitmap->partial = slot + 1;
		pthread_mutex_unlock(&v->bitmap->lock);
	}
}

int vol_bitmap_take_partial(struct vol *v, int slot)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	int r = b->partial == slot + 1;
	b->partial = 0;
	pthread_mutex_unlock(&b->lock);
	return r;
}

void vol_bitmap_close(struct vol *v)
{
	struct vol_bitmap *b = v->bitmap;
	if (!b)
		return;
	/* the metadata thread stopped (vol_md_stop): everything was flushed (vol_close): a healthy volume starts clean
	 * next time; a degraded one keeps its bits for a re-add */
	if (may_clear(v)) {
		pthread_mutex_lock(&b->lock);
		memset(b->want, 0, b->bytes);
		bm_round(v, b);
		pthread_mutex_unlock(&b->lock);
	}
	vol_bitmap_free(v);
}

void vol_bitmap_counts(struct vol *v, uint64_t *regions, uint64_t *dirty, uint64_t *writes)
{
	struct vol_bitmap *b = v->bitmap;
	*regions = *dirty = *writes = 0;
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	*regions = b->nbits;
	*dirty = bitmap_count(b->want, b->nbits);
	*writes = atomic_load(&b->writes);
	pthread_mutex_unlock(&b->lock);
}

void vol_bitmap_status(struct vol *v, FILE *f)
{
	uint64_t regions, dirty, writes;
	char chunk[32];
	if (!v->bitmap)
		return;
	vol_bitmap_counts(v, &regions, &dirty, &writes);
	size_format(v->bitmap->chunk, chunk, sizeof(chunk));
	fprintf(f, "      bitmap: %llu/%llu regions dirty, %s chunk, %llu block writes\n", (unsigned long long)dirty,
		(unsigned long long)regions, chunk, (unsigned long long)writes);
}

/* ---- the bitmap as a feature (core/feature.h) ---- */

static int bm_feat_open(struct vol *v, char *err, size_t errlen)
{
	int r = vol_bitmap_open(v, err, errlen);
	return r < 0 ? r : v->bitmap != NULL;
}

static void bm_feat_close(struct vol *v)
{
	if (!v->opts.readonly)
		vol_bitmap_close(v);
}

static void bm_feat_md_work(struct vol *v, unsigned flags, int stopping)
{
	(void)stopping;
	if (flags & VOL_MD_BITMAP)
		vol_bitmap_run(v); /* may fail members: their change is the next round's */
	if (flags & VOL_MD_TICK)
		vol_bitmap_tick(v);
}

const struct vol_feature vol_feat_bitmap = {
	.name = "bitmap",
	.open = bm_feat_open,
	.close = bm_feat_close,
	.free = vol_bitmap_free,
	.md_work = bm_feat_md_work,
	.status = vol_bitmap_status,
	.write_begin = vol_bitmap_begin,
	.write_end = vol_bitmap_end,
};
