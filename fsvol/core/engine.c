/* engine: serves volume reads, writes and flushes on every level.
 *
 * A request is split with layout/ into member pieces; every piece of one
 * request is collected first, then sorted by member and merged where member
 * offsets are adjacent, then submitted with one io_uring_submit and reaped
 * together (fan-out; the first error wins). Parity writes run in phases:
 * plan every stripe, read what the plans need, compute, write.
 *
 * Each request borrows an engine context from a pool: its own ring, and an
 * arena of aligned, pre-touched memory (no malloc on the hot path).
 * Member I/O is always 4 KiB aligned in offset, length and memory: unaligned
 * requests are widened, misaligned buffers go through the arena.
 *
 * A member I/O error fails that member (superblocks updated) and the request
 * is replanned without it, so redundancy serves it; a volume that cannot
 * survive the loss returns -EIO.
 */
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fsvol/model/emul.h"
#include "fsvol/core/volume.h"
#include "layout/parity.h"
#include "stats/stats.h"

#define ENG_ALIGN 4096u
#define ENG_MAX_IO (1u << 20)
#define ENG_RING 256u
#define ENG_MAX_PIECES 1024u
#define ENG_MAX_PLANS 8u
#define ENG_PARITY_BUDGET (4u << 20)
#define ENG_MAX_TRIES 4

enum { ENG_READ = STATS_READ, ENG_WRITE = STATS_WRITE, ENG_FLUSH = STATS_FLUSH };

/* One contiguous run of memory for one member range. */
struct eng_piece {
	unsigned slot;
	uint8_t op, why;
	uint64_t off; /* member data-area offset */
	uint64_t len;
	void *buf;
};

/* One member request after merging: pieces [first, first+n) of the sorted array. */
struct eng_sub {
	unsigned slot;
	uint8_t op, why;
	uint64_t off, len;
	unsigned iov0, niov;
	uint64_t t0;
	int res;
	int injected; /* fail this one without touching the member (MNT/ctl "error N") */
	int emulated; /* its completion waits for the member's model */
};

struct eng_ctx {
	struct eng_ctx *next_free, *next_all;
	struct io_uring ring;
	uint8_t *arena;
	size_t arena_size, arena_used;
	unsigned npieces;
	struct eng_piece pieces[ENG_MAX_PIECES];
	struct eng_sub subs[ENG_MAX_PIECES];
	struct iovec iov[ENG_MAX_PIECES];
	uint64_t failed_now; /* members that returned errors in the last run */
	uint64_t trace_parent;
	unsigned nplans;
	struct layout_plan plans[ENG_MAX_PLANS];
	void *rbuf[ENG_MAX_PLANS][LAYOUT_PLAN_MAX_IO];
	struct emul_waiter waiter;       /* emulated completions of this context */
	struct emul_io eio[ENG_MAX_PIECES];
	const uint8_t *src[ENG_MAX_PLANS]; /* write source for the plan's request */
	uint64_t src_off[ENG_MAX_PLANS];   /* logical offset of src[0] */
};

/* ---- context pool ---- */

static size_t eng_arena_size(const struct vol *v)
{
	size_t s = ENG_MAX_IO + 4 * ENG_ALIGN;
	if (layout_is_parity(&v->geom))
		s += ENG_PARITY_BUDGET;
	return s;
}

static struct eng_ctx *ctx_new(struct vol *v)
{
	struct eng_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->arena_size = eng_arena_size(v);
	if (posix_memalign((void **)&c->arena, ENG_ALIGN, c->arena_size)) {
		free(c);
		return NULL;
	}
	/* Fresh pages cost 12-16 us each here: touch them once, now. */
	memset(c->arena, 0, c->arena_size);
	emul_waiter_init(&c->waiter);
	if (io_uring_queue_init(ENG_RING, &c->ring, 0) < 0) {
		free(c->arena);
		free(c);
		return NULL;
	}
	return c;
}

static struct eng_ctx *ctx_get(struct vol *v)
{
	pthread_mutex_lock(&v->ctx_lock);
	struct eng_ctx *c = v->ctx_free;
	if (c) {
		v->ctx_free = c->next_free;
		pthread_mutex_unlock(&v->ctx_lock);
	} else {
		pthread_mutex_unlock(&v->ctx_lock);
		c = ctx_new(v);
		if (!c)
			return NULL;
		pthread_mutex_lock(&v->ctx_lock);
		c->next_all = v->ctx_all;
		v->ctx_all = c;
		pthread_mutex_unlock(&v->ctx_lock);
	}
	c->arena_used = 0;
	c->npieces = 0;
	c->nplans = 0;
	c->failed_now = 0;
	c->trace_parent = 0;
	return c;
}

static void ctx_put(struct vol *v, struct eng_ctx *c)
{
	pthread_mutex_lock(&v->ctx_lock);
	c->next_free = v->ctx_free;
	v->ctx_free = c;
	pthread_mutex_unlock(&v->ctx_lock);
}

void engine_destroy_contexts(struct vol *v)
{
	struct eng_ctx *c = v->ctx_all;
	while (c) {
		struct eng_ctx *n = c->next_all;
		io_uring_queue_exit(&c->ring);
		emul_waiter_destroy(&c->waiter);
		free(c->arena);
		free(c);
		c = n;
	}
	v->ctx_all = v->ctx_free = NULL;
}

int engine_prepare(struct vol *v, unsigned n)
{
	struct eng_ctx *list[64];
	unsigned k = 0;
	if (n > 64)
		n = 64;
	for (; k < n; k++)
		if (!(list[k] = ctx_get(v)))
			break;
	for (unsigned i = 0; i < k; i++)
		ctx_put(v, list[i]);
	return k == n ? 0 : -ENOMEM;
}

static void *arena_alloc(struct eng_ctx *c, size_t len)
{
	size_t need = (len + ENG_ALIGN - 1) & ~(size_t)(ENG_ALIGN - 1);
	if (c->arena_used + need > c->arena_size)
		return NULL;
	void *p = c->arena + c->arena_used;
	c->arena_used += need;
	return p;
}

static size_t arena_free_bytes(const struct eng_ctx *c)
{
	return c->arena_size - c->arena_used;
}

/* ---- collecting, merging, submitting ---- */

static uint64_t vol_failed(const struct vol *v)
{
	return atomic_load_explicit(&v->failed, memory_order_acquire);
}

static int piece_add(struct eng_ctx *c, unsigned slot, int op, int why, uint64_t off,
		     uint64_t len, void *buf)
{
	if (c->npieces == ENG_MAX_PIECES)
		return -EAGAIN;
	c->pieces[c->npieces++] = (struct eng_piece){
		.slot = slot, .op = (uint8_t)op, .why = (uint8_t)why, .off = off, .len = len, .buf = buf
	};
	return 0;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct eng_piece *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

static void trace_sub(struct vol *v, struct eng_ctx *c, const struct eng_sub *s, uint64_t now)
{
	struct stats_trace_rec r = {
		.seq = stats_trace_id(v->trace),
		.parent = c->trace_parent,
		.t_start_ns = s->t0,
		.latency_ns = now - s->t0,
		.offset = s->off,
		.length = s->len,
		.dev = (int32_t)s->slot,
		.op = s->op,
		.why = s->why,
		.error = (int16_t)(s->res < 0 ? s->res : 0),
	};
	stats_trace_add(v->trace, &r);
}

static void eng_prep(struct vol *v, struct eng_ctx *c, struct eng_sub *s, unsigned k)
{
	struct member *m = v->slot[s->slot];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);
	uint64_t moff = s->off + v->data_offset;
	if (s->injected)
		io_uring_prep_nop(sqe);
	else if (s->op == ENG_READ)
		io_uring_prep_readv(sqe, m->fd, &c->iov[s->iov0], s->niov, moff);
	else if (s->op == ENG_WRITE)
		io_uring_prep_writev(sqe, m->fd, &c->iov[s->iov0], s->niov, moff);
	else
		io_uring_prep_fsync(sqe, m->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data64(sqe, k);
}

/* A short transfer means the member is shorter than its superblock says. */
static int eng_check(const struct eng_sub *s, int res)
{
	if (res >= 0 && s->op != ENG_FLUSH && (uint64_t)res != s->len)
		return -EIO;
	return res;
}

static void eng_sync(struct vol *v, struct eng_ctx *c, struct eng_sub *s)
{
	struct member *m = v->slot[s->slot];
	off_t moff = (off_t)(s->off + v->data_offset);
	ssize_t r;
	if (s->injected) {
		s->res = -EIO;
		return;
	}
	do {
		if (s->op == ENG_READ)
			r = preadv(m->fd, &c->iov[s->iov0], (int)s->niov, moff);
		else if (s->op == ENG_WRITE)
			r = pwritev(m->fd, &c->iov[s->iov0], (int)s->niov, moff);
		else
			r = fdatasync(m->fd);
	} while (r < 0 && errno == EINTR);
	s->res = eng_check(s, r < 0 ? -errno : (int)r);
}

/* Submit every collected piece (merged per member), wait for all.
 * Returns 0 or the first error; c->failed_now collects failing members. */
static int eng_run(struct vol *v, struct eng_ctx *c)
{
	unsigned n = c->npieces, nsub = 0;
	int first = 0;
	if (n == 0)
		return 0;
	if (n > 1)
		qsort(c->pieces, n, sizeof(c->pieces[0]), piece_cmp);
	/* Sorted by member and offset: adjacent pieces become one member I/O.
	 * The newest sub's iovs are always the last ones written. */
	unsigned ni = 0;
	for (unsigned i = 0; i < n; i++) {
		struct eng_piece *p = &c->pieces[i];
		struct eng_sub *s = nsub ? &c->subs[nsub - 1] : NULL;
		if (s && s->op == p->op && s->slot == p->slot && s->why == p->why &&
		    s->off + s->len == p->off && p->op != ENG_FLUSH && s->niov < IOV_MAX) {
			struct iovec *last = &c->iov[ni - 1];
			if ((uint8_t *)last->iov_base + last->iov_len == (uint8_t *)p->buf) {
				last->iov_len += p->len;
			} else {
				c->iov[ni++] = (struct iovec){ p->buf, p->len };
				s->niov++;
			}
			s->len += p->len;
			continue;
		}
		s = &c->subs[nsub++];
		*s = (struct eng_sub){ .slot = p->slot, .op = p->op, .why = p->why, .off = p->off,
				       .len = p->len, .iov0 = ni, .niov = 1 };
		c->iov[ni++] = (struct iovec){ p->buf, p->len };
	}

	unsigned done = 0;
	int member_stats = atomic_load_explicit(&v->stats_level, memory_order_relaxed) == VOL_STATS_ALL;
	while (done < nsub) {
		unsigned batch = nsub - done < ENG_RING ? nsub - done : ENG_RING;
		uint64_t now = stats_now();
		/* one emulator for the whole batch (ctl "model" may start one) */
		struct emul *emul = atomic_load_explicit(&v->emul, memory_order_acquire);
		if (emul)
			emul_begin(&c->waiter);
		for (unsigned k = done; k < done + batch; k++) {
			struct eng_sub *s = &c->subs[k];
			struct member *m = v->slot[s->slot];
			s->t0 = now;
			s->injected = atomic_load_explicit(&m->inject_eio, memory_order_relaxed);
			atomic_fetch_add_explicit(&m->pending, 1, memory_order_relaxed);
			if (member_stats)
				stats_begin(m->stats, now);
			s->emulated = emul && s->op != ENG_FLUSH &&
				      atomic_load_explicit(&m->modeled, memory_order_acquire);
			if (s->emulated) {
				/* the model decides when this completes; the data moves now */
				struct emul_io *io = &c->eio[k];
				io->r = (struct spindle_req){ .offset = s->off, .length = s->len,
							      .write = s->op == ENG_WRITE, .arrival_ns = now };
				io->sp = m->spindle;
				io->w = &c->waiter;
				emul_submit(emul, io);
			}
			if (batch > 1)
				eng_prep(v, c, s, k);
		}
		int r = 0;
		unsigned got = 0;
		if (batch == 1) {
			/* One member request: a plain syscall beats a ring round trip
			 * (and io-wq's thread hand-off where the member cannot do nowait). */
			eng_sync(v, c, &c->subs[done]);
			got = batch;
		} else {
			r = io_uring_submit_and_wait(&c->ring, batch);
		}
		if (r < 0 && r != -EINTR) {
			/* Could not submit: fail the batch without blaming members. */
			for (unsigned k = done; k < done + batch; k++)
				c->subs[k].res = r;
		}
		while (r >= 0 && got < batch) {
			struct io_uring_cqe *cqe;
			int w = io_uring_wait_cqe(&c->ring, &cqe);
			if (w == -EINTR)
				continue;
			if (w < 0)
				break;
			struct eng_sub *s = &c->subs[io_uring_cqe_get_data64(cqe)];
			s->res = s->injected ? -EIO : eng_check(s, cqe->res);
			io_uring_cqe_seen(&c->ring, cqe);
			got++;
		}
		if (emul)
			emul_wait(emul, &c->waiter);
		now = stats_now();
		/* a request is traced whole or not at all: one that began before
		 * someone opened the trace would leave orphan member records */
		int tracing = c->trace_parent && stats_trace_on(v->trace);
		for (unsigned k = done; k < done + batch; k++) {
			struct eng_sub *s = &c->subs[k];
			struct member *m = v->slot[s->slot];
			/* a modelled member completed at its emulated time */
			uint64_t end = s->emulated ? c->eio[k].r.done_ns : now;
			atomic_fetch_sub_explicit(&m->pending, 1, memory_order_relaxed);
			if (s->op != ENG_FLUSH)
				atomic_store_explicit(&m->head, s->off + s->len, memory_order_relaxed);
			if (member_stats)
				stats_end(m->stats, (enum stats_op)s->op, s->off, s->op == ENG_FLUSH ? 0 : s->len,
					  s->t0, end, s->res < 0 ? s->res : 0);
			if (tracing)
				trace_sub(v, c, s, end);
			if (s->res < 0) {
				if (!first)
					first = s->res;
				c->failed_now |= 1ull << s->slot;
			}
		}
		done += batch;
	}
	c->npieces = 0;
	return first;
}

/* After a failed run: fail the members that erred. Returns 1 when the
 * request should be retried without them, 0 when it cannot. */
static int eng_fail_members(struct vol *v, struct eng_ctx *c)
{
	uint64_t bad = c->failed_now;
	c->failed_now = 0;
	if (!bad)
		return 0;
	for (unsigned i = 0; i < v->geom.members; i++)
		if (bad & (1ull << i))
			vol_fail_slot(v, i, -EIO);
	return layout_survives(&v->geom, vol_failed(v));
}

/* ---- locks: stripes (parity levels) or 1 MiB regions ---- */

struct eng_locks {
	uint64_t bits[VOL_LOCKS / 64];
	int excl;
};

static void locks_take(struct vol *v, struct eng_locks *l, uint64_t off, uint64_t len, int excl)
{
	uint64_t unit = layout_is_parity(&v->geom) ? v->geom.chunk * v->geom.data_members : (1u << 20);
	uint64_t a = off / unit, b = (off + len - 1) / unit;
	memset(l->bits, 0, sizeof(l->bits));
	l->excl = excl;
	for (uint64_t u = a; u <= b && u - a < VOL_LOCKS; u++) {
		unsigned h = (unsigned)(u % VOL_LOCKS);
		l->bits[h / 64] |= 1ull << (h % 64);
	}
	/* Always in bucket order: no two requests wait on each other crosswise. */
	for (unsigned w = 0; w < VOL_LOCKS / 64; w++)
		for (uint64_t m = l->bits[w]; m; m &= m - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			if (excl)
				pthread_rwlock_wrlock(&v->locks[i]);
			else
				pthread_rwlock_rdlock(&v->locks[i]);
		}
}

static void locks_drop(struct vol *v, struct eng_locks *l)
{
	for (unsigned w = 0; w < VOL_LOCKS / 64; w++)
		for (uint64_t m = l->bits[w]; m; m &= m - 1)
			pthread_rwlock_unlock(&v->locks[w * 64 + (unsigned)__builtin_ctzll(m)]);
}

/* ---- mirrors: which copy serves a read ---- */

static unsigned pick_copy(struct vol *v, uint64_t off, uint64_t len, uint64_t failed,
			  struct layout_extent *e)
{
	unsigned copies = layout_copies(&v->geom), best = copies, i;
	struct layout_extent ex[LAYOUT_MAX_MEMBERS];
	for (i = 0; i < copies; i++)
		layout_locate(&v->geom, off, i, &ex[i]);
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
			uint64_t head = atomic_load_explicit(&m->head, memory_order_relaxed);
			if (head == ex[i].offset && head != 0) {
				best = i;
				break;
			}
			unsigned pend = atomic_load_explicit(&m->pending, memory_order_relaxed);
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

/* ---- reads ---- */

static int gather_lost(struct vol *v, const struct layout_plan *p, void *const rb[],
		       struct eng_ctx *c, void *blocks[], unsigned *nparity, unsigned lost[],
		       unsigned *nlost, uint64_t span);

/* Degraded read of one stripe piece: recover the lost columns, copy out. */
static int read_reconstruct(struct vol *v, struct eng_ctx *c, unsigned k, uint8_t *dst,
			    uint64_t dst_off)
{
	struct layout_plan *p = &c->plans[k];
	const struct layout_geom *g = &v->geom;
	uint64_t span = p->span_hi - p->span_lo;
	void *blocks[LAYOUT_MAX_MEMBERS + 2];
	unsigned lost[2], nlost, nparity;
	int r = gather_lost(v, p, c->rbuf[k], c, blocks, &nparity, lost, &nlost, span);
	if (r)
		return r;
	if (nlost && parity_recover(blocks, g->data_members, nparity, lost, nlost, span))
		return -EIO;
	for (unsigned j = 0; j < g->data_members; j++) {
		if (p->lo[j] == p->hi[j])
			continue;
		uint64_t logical = p->s.logical + j * g->chunk + p->lo[j];
		memcpy(dst + (logical - dst_off), (uint8_t *)blocks[j] + (p->lo[j] - p->span_lo),
		       p->hi[j] - p->lo[j]);
	}
	return 0;
}

/* Reads in a RECONSTRUCT plan (or a write plan's reads) give full-span
 * buffers for the columns they cover; fill blocks[] (data, P, Q) and list the
 * columns to recover. nparity: 1 when Q is not available, else 2. */
static int gather_lost(struct vol *v, const struct layout_plan *p, void *const rb[],
		       struct eng_ctx *c, void *blocks[], unsigned *nparity, unsigned lost[],
		       unsigned *nlost, uint64_t span)
{
	const struct layout_geom *g = &v->geom;
	unsigned nd = g->data_members, np = layout_parity_count(g);
	for (unsigned j = 0; j < nd + 2; j++)
		blocks[j] = NULL;
	for (unsigned i = 0; i < p->nreads; i++) {
		const struct layout_io *io = &p->reads[i];
		if (io->in_chunk != p->span_lo || io->length != span)
			continue;
		unsigned col = io->role == LAYOUT_DATA ? (unsigned)io->index
			       : io->role == LAYOUT_P ? nd : nd + 1;
		blocks[col] = rb[i];
	}
	*nparity = (np == 2 && blocks[nd + 1]) ? 2 : 1;
	*nlost = 0;
	for (unsigned j = 0; j < nd + *nparity; j++) {
		if (blocks[j])
			continue;
		if (*nlost == *nparity)
			return -EIO;
		if (!(blocks[j] = arena_alloc(c, span)))
			return -ENOMEM;
		lost[(*nlost)++] = j;
	}
	return 0;
}

static int read_range(struct vol *v, struct eng_ctx *c, uint8_t *dst, uint64_t off, uint64_t len,
		      int why)
{
	const struct layout_geom *g = &v->geom;
	uint64_t failed = vol_failed(v);
	int parity = layout_is_parity(g);
	uint64_t pos = off, end = off + len;
	size_t arena_mark = c->arena_used;
	int r = 0;

	c->nplans = 0;
	while (pos < end) {
		struct layout_extent e;
		if (parity) {
			uint64_t sbytes = g->chunk * g->data_members;
			uint64_t send = (pos / sbytes + 1) * sbytes;
			uint64_t plen = (send < end ? send : end) - pos;
			layout_locate(g, pos, 0, &e);
			int healthy = !failed;
			if (!healthy) {
				/* does any column of this piece sit on a failed member? */
				healthy = 1;
				for (uint64_t q = pos; q < pos + plen; q += e.length) {
					layout_locate(g, q, 0, &e);
					if (failed & (1ull << e.member))
						healthy = 0;
				}
			}
			if (healthy) {
				for (uint64_t q = pos; q < pos + plen; q += e.length) {
					layout_locate(g, q, 0, &e);
					if (e.length > pos + plen - q)
						e.length = pos + plen - q;
					if ((r = piece_add(c, e.member, ENG_READ, why, e.offset, e.length,
							   dst + (q - off))))
						return r;
				}
			} else {
				if (c->nplans == ENG_MAX_PLANS)
					return -EAGAIN;
				unsigned k = c->nplans;
				struct layout_plan *p = &c->plans[k];
				if ((r = layout_plan_read(g, pos, plen, failed, p)))
					return r;
				for (unsigned i = 0; i < p->nreads; i++) {
					const struct layout_io *io = &p->reads[i];
					if (!(c->rbuf[k][i] = arena_alloc(c, io->length)))
						return -EAGAIN;
					if ((r = piece_add(c, io->member, ENG_READ, STATS_WHY_RECONSTRUCT,
							   io->offset, io->length, c->rbuf[k][i])))
						return r;
				}
				c->src_off[k] = pos;
				c->nplans++;
			}
			pos += plen;
			continue;
		}
		if (layout_copies(g) > 1) {
			if (pick_copy(v, pos, end - pos, failed, &e) == layout_copies(g))
				return -EIO;
		} else {
			if ((r = layout_locate(g, pos, 0, &e)))
				return r;
			if (failed & (1ull << e.member))
				return -EIO;
			if (e.length > end - pos)
				e.length = end - pos;
		}
		if (v->opts.read_policy == VOL_READ_SPLIT && v->opts.split && e.length > v->opts.split)
			e.length = v->opts.split; /* gmirror split: big reads spread over the copies */
		if ((r = piece_add(c, e.member, ENG_READ, why, e.offset, e.length, dst + (pos - off))))
			return r;
		pos += e.length;
	}
	if ((r = eng_run(v, c)))
		return r;
	for (unsigned k = 0; k < c->nplans; k++)
		if ((r = read_reconstruct(v, c, k, dst, off)))
			return r;
	c->nplans = 0;
	c->arena_used = arena_mark;
	return 0;
}

/* Read [off, off+len) (aligned) into dst (aligned), splitting into batches
 * that fit the context, retrying without members that fail. */
static int read_aligned(struct vol *v, struct eng_ctx *c, uint8_t *dst, uint64_t off, uint64_t len,
			int why)
{
	uint64_t step = len;
	for (int tries = 0; len;) {
		uint64_t n = step < len ? step : len;
		size_t mark = c->arena_used;
		int r = read_range(v, c, dst, off, n, why);
		c->arena_used = mark;
		c->npieces = 0;
		if (r == -EAGAIN && n > ENG_ALIGN) {
			step = (n / 2 + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
			continue;
		}
		if (r < 0 && c->failed_now && ++tries < ENG_MAX_TRIES && eng_fail_members(v, c))
			continue;
		if (r)
			return r == -EAGAIN ? -ENOMEM : r;
		dst += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* ---- parity writes ---- */

static const uint8_t *col_src(struct eng_ctx *c, unsigned k, const struct layout_geom *g,
			      unsigned j, uint64_t in_chunk)
{
	const struct layout_plan *p = &c->plans[k];
	uint64_t logical = p->s.logical + j * g->chunk + in_chunk;
	return c->src[k] + (logical - c->src_off[k]);
}

/* Pointer to column j's bytes at in-chunk offset x from the plan's reads. */
static const uint8_t *col_read(struct eng_ctx *c, unsigned k, int role, int j, uint64_t x)
{
	const struct layout_plan *p = &c->plans[k];
	for (unsigned i = 0; i < p->nreads; i++) {
		const struct layout_io *io = &p->reads[i];
		if ((int)io->role == role && (role != LAYOUT_DATA || io->index == j) &&
		    io->in_chunk <= x && x < io->in_chunk + io->length)
			return (const uint8_t *)c->rbuf[k][i] + (x - io->in_chunk);
	}
	return NULL;
}

/* Compute the new parity of plan k into pbuf/qbuf (span-sized) and point the
 * write pieces at their sources. */
static int write_compute(struct vol *v, struct eng_ctx *c, unsigned k)
{
	const struct layout_geom *g = &v->geom;
	struct layout_plan *p = &c->plans[k];
	unsigned nd = g->data_members;
	uint64_t span = p->span_hi - p->span_lo;
	uint8_t *pbuf = NULL, *qbuf = NULL;
	/* Which parity to produce follows the plan (made with one failed mask),
	 * not the live mask, which another request may change meanwhile. */
	int want_p = 0, want_q = 0;
	for (unsigned i = 0; i < p->nwrites; i++) {
		want_p |= p->writes[i].role == LAYOUT_P;
		want_q |= p->writes[i].role == LAYOUT_Q;
	}

	if (p->mode == LAYOUT_PLAN_RMW) {
		pbuf = want_p ? (uint8_t *)col_read(c, k, LAYOUT_P, -1, p->span_lo) : NULL;
		qbuf = want_q ? (uint8_t *)col_read(c, k, LAYOUT_Q, -1, p->span_lo) : NULL;
		if ((want_p && !pbuf) || (want_q && !qbuf))
			return -EIO; /* a plan that reads no parity cannot update it */
		for (unsigned j = 0; j < nd; j++) {
			if (p->lo[j] == p->hi[j])
				continue;
			const uint8_t *old = col_read(c, k, LAYOUT_DATA, (int)j, p->lo[j]);
			if (!old)
				return -EIO;
			parity_rmw(pbuf ? pbuf + (p->lo[j] - p->span_lo) : NULL,
				   qbuf ? qbuf + (p->lo[j] - p->span_lo) : NULL, old,
				   col_src(c, k, g, j, p->lo[j]), j, p->hi[j] - p->lo[j]);
		}
	} else if (p->mode == LAYOUT_PLAN_RCW || p->mode == LAYOUT_PLAN_FULL) {
		/* parity_gen always needs a P target, even when P's member is gone */
		if (!(pbuf = arena_alloc(c, span)) || (want_q && !(qbuf = arena_alloc(c, span))))
			return -ENOMEM;
		/* Segments between column boundaries: in each, every column's bytes
		 * are contiguous, either new (src) or read. */
		uint64_t cuts[2 * LAYOUT_MAX_MEMBERS + 2];
		unsigned nc = 0;
		cuts[nc++] = p->span_lo;
		cuts[nc++] = p->span_hi;
		for (unsigned j = 0; j < nd; j++) {
			if (p->lo[j] > p->span_lo && p->lo[j] < p->span_hi)
				cuts[nc++] = p->lo[j];
			if (p->hi[j] > p->span_lo && p->hi[j] < p->span_hi)
				cuts[nc++] = p->hi[j];
		}
		for (unsigned a = 1; a < nc; a++) /* insertion sort: few cuts */
			for (unsigned b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
				uint64_t t = cuts[b];
				cuts[b] = cuts[b - 1];
				cuts[b - 1] = t;
			}
		for (unsigned s = 0; s + 1 < nc; s++) {
			uint64_t x = cuts[s], y = cuts[s + 1];
			const void *cols[LAYOUT_MAX_MEMBERS];
			if (x == y)
				continue;
			for (unsigned j = 0; j < nd; j++) {
				if (p->lo[j] <= x && y <= p->hi[j])
					cols[j] = col_src(c, k, g, j, x);
				else if (!(cols[j] = col_read(c, k, LAYOUT_DATA, (int)j, x)))
					return -EIO;
			}
			parity_gen(cols, nd, pbuf ? pbuf + (x - p->span_lo) : NULL,
				   qbuf ? qbuf + (x - p->span_lo) : NULL, y - x);
		}
	} else { /* RECONSTRUCT */
		void *blocks[LAYOUT_MAX_MEMBERS + 2];
		unsigned lost[2], nlost, nparity;
		int r = gather_lost(v, p, c->rbuf[k], c, blocks, &nparity, lost, &nlost, span);
		if (r)
			return r;
		if (nlost && parity_recover(blocks, nd, nparity, lost, nlost, span))
			return -EIO;
		for (unsigned j = 0; j < nd; j++)
			if (p->lo[j] != p->hi[j])
				memcpy((uint8_t *)blocks[j] + (p->lo[j] - p->span_lo), col_src(c, k, g, j, p->lo[j]),
				       p->hi[j] - p->lo[j]);
		pbuf = blocks[nd];
		if (!(qbuf = blocks[nd + 1]) && want_q && !(qbuf = arena_alloc(c, span)))
			return -ENOMEM;
		parity_gen((const void *const *)blocks, nd, pbuf, want_q ? qbuf : NULL, span);
	}

	for (unsigned i = 0; i < p->nwrites; i++) {
		const struct layout_io *io = &p->writes[i];
		const uint8_t *from;
		int why;
		if (io->role == LAYOUT_DATA) {
			from = col_src(c, k, g, (unsigned)io->index, io->in_chunk);
			why = STATS_WHY_DATA;
		} else {
			from = (io->role == LAYOUT_P ? pbuf : qbuf);
			if (!from)
				continue;
			from += io->in_chunk - p->span_lo;
			why = STATS_WHY_PARITY_WRITE;
		}
		int r = piece_add(c, io->member, ENG_WRITE, why, io->offset, io->length, (void *)from);
		if (r)
			return r;
	}
	return 0;
}

static int read_why(const struct layout_plan *p, const struct layout_io *io)
{
	if (io->role != LAYOUT_DATA)
		return p->mode == LAYOUT_PLAN_RECONSTRUCT ? STATS_WHY_RECONSTRUCT : STATS_WHY_PARITY_READ;
	if (p->mode == LAYOUT_PLAN_RMW)
		return STATS_WHY_OLD_DATA;
	return p->mode == LAYOUT_PLAN_RECONSTRUCT ? STATS_WHY_RECONSTRUCT : STATS_WHY_DATA;
}

/* Plans already collected: run their reads, compute, run their writes. */
static int parity_flush(struct vol *v, struct eng_ctx *c)
{
	int r = eng_run(v, c);
	if (r)
		return r;
	for (unsigned k = 0; k < c->nplans; k++)
		if ((r = write_compute(v, c, k)))
			return r;
	r = eng_run(v, c);
	c->nplans = 0;
	return r;
}

/* Bytes of arena a plan needs: its reads, new P/Q, recovered columns. */
static uint64_t plan_need(const struct vol *v, const struct layout_plan *p)
{
	uint64_t span = p->span_hi - p->span_lo, need = 0;
	for (unsigned i = 0; i < p->nreads; i++)
		need += (p->reads[i].length + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
	return need + (layout_parity_count(&v->geom) + 2) * span;
}

static int write_parity(struct vol *v, struct eng_ctx *c, const uint8_t *src, uint64_t off,
			uint64_t len)
{
	const struct layout_geom *g = &v->geom;
	uint64_t sbytes = g->chunk * g->data_members, pos = off, end = off + len;
	size_t base = c->arena_used;
	uint64_t failed = vol_failed(v);
	int r;

	c->nplans = 0;
	while (pos < end) {
		uint64_t send = (pos / sbytes + 1) * sbytes;
		uint64_t plen = (send < end ? send : end) - pos;
		struct layout_plan *p;
		for (;;) {
			if (c->nplans == ENG_MAX_PLANS) {
				if ((r = parity_flush(v, c)))
					return r;
				c->arena_used = base;
			}
			p = &c->plans[c->nplans];
			if ((r = layout_plan_write(g, pos, plen, failed, p)))
				return r;
			uint64_t need = plan_need(v, p);
			if (need <= arena_free_bytes(c) && c->npieces + p->nreads <= ENG_MAX_PIECES / 2)
				break;
			if (c->nplans) { /* make room: finish what is collected */
				if ((r = parity_flush(v, c)))
					return r;
				c->arena_used = base;
				continue;
			}
			if (plen <= ENG_ALIGN)
				return -ENOMEM;
			plen = (plen / 2 + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
		}
		unsigned k = c->nplans++;
		c->src[k] = src;
		c->src_off[k] = off;
		for (unsigned i = 0; i < p->nreads; i++) {
			const struct layout_io *io = &p->reads[i];
			c->rbuf[k][i] = arena_alloc(c, io->length);
			if ((r = piece_add(c, io->member, ENG_READ, read_why(p, io), io->offset, io->length,
					   c->rbuf[k][i])))
				return r;
		}
		pos += plen;
	}
	r = parity_flush(v, c);
	c->arena_used = base;
	return r;
}

static int write_mirror_or_plain(struct vol *v, struct eng_ctx *c, const uint8_t *src, uint64_t off,
				 uint64_t len)
{
	const struct layout_geom *g = &v->geom;
	uint64_t failed = vol_failed(v), pos = off, end = off + len;
	unsigned copies = layout_copies(g);
	int r;
	while (pos < end) {
		struct layout_extent e;
		uint64_t step = 0;
		unsigned written = 0;
		for (unsigned cp = 0; cp < copies; cp++) {
			if ((r = layout_locate(g, pos, cp, &e)))
				return r;
			if (e.length > end - pos)
				e.length = end - pos;
			step = e.length;
			if (failed & (1ull << e.member))
				continue;
			if (c->npieces == ENG_MAX_PIECES && (r = eng_run(v, c)))
				return r;
			piece_add(c, e.member, ENG_WRITE, cp ? STATS_WHY_MIRROR : STATS_WHY_DATA, e.offset,
				  e.length, (void *)(src + (pos - off)));
			written++;
		}
		if (!written)
			return -EIO;
		pos += step;
	}
	return eng_run(v, c);
}

static int write_aligned(struct vol *v, struct eng_ctx *c, const uint8_t *src, uint64_t off,
			 uint64_t len)
{
	for (int tries = 0;; tries++) {
		int r = layout_is_parity(&v->geom) ? write_parity(v, c, src, off, len)
						   : write_mirror_or_plain(v, c, src, off, len);
		c->npieces = 0;
		c->nplans = 0;
		if (r < 0 && c->failed_now && tries + 1 < ENG_MAX_TRIES && eng_fail_members(v, c))
			continue;
		if (r < 0 && c->failed_now) {
			/* A mirror write that reached a surviving copy is done. */
			eng_fail_members(v, c);
		}
		return r;
	}
}

/* ---- entry points ---- */

static int check_range(const struct vol *v, uint64_t off, uint64_t len)
{
	if (off > v->geom.capacity || len > v->geom.capacity - off)
		return -EINVAL;
	return 0;
}

static int vol_counted(struct vol *v)
{
	return atomic_load_explicit(&v->stats_level, memory_order_relaxed) != VOL_STATS_OFF;
}

static void vol_begin(struct vol *v, uint64_t *t0)
{
	*t0 = stats_now();
	if (vol_counted(v))
		stats_begin(v->vstats, *t0);
}

static void vol_end(struct vol *v, struct eng_ctx *c, int op, uint64_t off, uint64_t len,
		    uint64_t t0, int r)
{
	uint64_t now = stats_now();
	if (vol_counted(v))
		stats_end(v->vstats, (enum stats_op)op, off, len, t0, now, r);
	if (c && c->trace_parent) {
		struct stats_trace_rec rec = {
			.seq = c->trace_parent, .parent = 0, .t_start_ns = t0, .latency_ns = now - t0,
			.offset = off, .length = len, .dev = -1, .op = (uint8_t)op,
			.why = STATS_WHY_DATA, .error = (int16_t)r,
		};
		stats_trace_add(v->trace, &rec);
	}
}

/* A volume request starts: range check, a context, the counters above, a
 * trace id. NULL with *r set (0 for an empty request) when nothing is to do. */
static struct eng_ctx *req_begin(struct vol *v, uint64_t off, uint64_t len, uint64_t *t0, int *r)
{
	struct eng_ctx *c;
	if ((*r = check_range(v, off, len)) || !len)
		return NULL;
	if (!(c = ctx_get(v))) {
		*r = -ENOMEM;
		return NULL;
	}
	vol_begin(v, t0);
	if (stats_trace_on(v->trace))
		c->trace_parent = stats_trace_id(v->trace);
	return c;
}

static int req_end(struct vol *v, struct eng_ctx *c, int op, uint64_t off, uint64_t len, uint64_t t0, int r)
{
	vol_end(v, c, op, off, len, t0, r);
	ctx_put(v, c);
	return r;
}

static int is_aligned(const void *buf, uint64_t off, uint64_t len)
{
	return ((uintptr_t)buf % ENG_ALIGN) == 0 && off % ENG_ALIGN == 0 && len % ENG_ALIGN == 0;
}

int engine_read(struct vol *v, void *buf, uint64_t off, uint64_t len)
{
	uint64_t t0;
	int r;
	struct eng_ctx *c = req_begin(v, off, len, &t0, &r);
	if (!c)
		return r;
	uint64_t done = 0;
	while (!r && done < len) {
		uint64_t o = off + done, n = len - done < ENG_MAX_IO ? len - done : ENG_MAX_IO;
		uint8_t *dst = (uint8_t *)buf + done;
		struct eng_locks lk;
		int lock = layout_is_parity(&v->geom) && vol_failed(v);
		uint64_t a = o & ~(uint64_t)(ENG_ALIGN - 1);
		uint64_t b = (o + n + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
		/* A reconstructing read must not see a half-written stripe. */
		if (lock)
			locks_take(v, &lk, a, b - a, 0);
		if (is_aligned(dst, o, n)) {
			r = read_aligned(v, c, dst, o, n, STATS_WHY_DATA);
		} else {
			uint8_t *bounce = arena_alloc(c, b - a);
			r = bounce ? read_aligned(v, c, bounce, a, b - a, STATS_WHY_DATA) : -ENOMEM;
			if (!r)
				memcpy(dst, bounce + (o - a), n);
			c->arena_used = 0;
		}
		if (lock)
			locks_drop(v, &lk);
		done += n;
	}
	return req_end(v, c, ENG_READ, off, len, t0, r);
}

int engine_write(struct vol *v, const void *buf, uint64_t off, uint64_t len)
{
	uint64_t t0;
	int r;
	struct eng_ctx *c = req_begin(v, off, len, &t0, &r);
	if (!c)
		return r;
	uint64_t done = 0;
	while (!r && done < len) {
		uint64_t o = off + done, n = len - done < ENG_MAX_IO ? len - done : ENG_MAX_IO;
		const uint8_t *src = (const uint8_t *)buf + done;
		uint64_t a = o & ~(uint64_t)(ENG_ALIGN - 1);
		uint64_t b = (o + n + ENG_ALIGN - 1) & ~(uint64_t)(ENG_ALIGN - 1);
		int unaligned = a != o || b != o + n;
		struct eng_locks lk;
		/* Parity updates and partial-block merges need the region to
		 * themselves; plain aligned writes only exclude those. */
		locks_take(v, &lk, a, b - a, unaligned || layout_is_parity(&v->geom));
		if (is_aligned(src, o, n)) {
			r = write_aligned(v, c, src, o, n);
		} else {
			uint8_t *bounce = arena_alloc(c, b - a);
			if (!bounce)
				r = -ENOMEM;
			if (!r && a != o)
				r = read_aligned(v, c, bounce, a, ENG_ALIGN, STATS_WHY_ALIGN);
			if (!r && b != o + n && (b - ENG_ALIGN != a || a == o))
				r = read_aligned(v, c, bounce + (b - a - ENG_ALIGN), b - ENG_ALIGN, ENG_ALIGN,
						 STATS_WHY_ALIGN);
			if (!r) {
				memcpy(bounce + (o - a), src, n);
				r = write_aligned(v, c, bounce, a, b - a);
			}
			c->arena_used = 0;
		}
		locks_drop(v, &lk);
		done += n;
	}
	return req_end(v, c, ENG_WRITE, off, len, t0, r);
}

int engine_flush(struct vol *v)
{
	uint64_t t0;
	int r;
	/* a flush has no range of its own: 1 byte at 0 always passes the check */
	struct eng_ctx *c = req_begin(v, 0, 1, &t0, &r);
	if (!c)
		return r;
	uint64_t failed = vol_failed(v);
	for (unsigned i = 0; i < v->geom.members; i++)
		if (v->slot[i] && !(failed & (1ull << i)))
			piece_add(c, i, ENG_FLUSH, STATS_WHY_DATA, 0, 0, NULL);
	r = eng_run(v, c);
	if (r && c->failed_now && eng_fail_members(v, c))
		r = 0; /* the survivors hold the data */
	return req_end(v, c, ENG_FLUSH, 0, 0, t0, r);
}

/* ---- resync / check: make redundancy agree with the data ---- */

/* Parity stripe s: read every column over in-chunk windows, recompute P (and
 * Q), count windows that disagree, rewrite the parity when repairing. */
static int resync_parity(struct vol *v, struct eng_ctx *c, uint64_t s, int repair, uint64_t *bad)
{
	const struct layout_geom *g = &v->geom;
	unsigned nd = g->data_members, np = layout_parity_count(g);
	struct layout_stripe st;
	uint64_t failed = vol_failed(v);
	uint64_t win = (c->arena_size / (nd + 2 * np)) & ~(uint64_t)(ENG_ALIGN - 1);
	int r = 0;
	layout_stripe(g, s, &st);
	for (unsigned j = 0; j < nd; j++)
		if (failed & (1ull << st.data[j]))
			return 0; /* data missing: nothing to check parity against */
	if (win > g->chunk)
		win = g->chunk;
	for (uint64_t x = 0; x < g->chunk && !r; x += win) {
		const void *cols[LAYOUT_MAX_MEMBERS];
		uint8_t *par[2] = { NULL, NULL }, *fresh[2] = { NULL, NULL };
		int pm[2] = { st.p, st.q };
		c->arena_used = 0;
		for (unsigned j = 0; j < nd; j++) {
			cols[j] = arena_alloc(c, win);
			piece_add(c, st.data[j], ENG_READ, STATS_WHY_DATA, st.member_offset + x, win, (void *)cols[j]);
		}
		for (unsigned k = 0; k < np; k++) {
			fresh[k] = arena_alloc(c, win);
			if (!(failed & (1ull << pm[k]))) {
				par[k] = arena_alloc(c, win);
				piece_add(c, (unsigned)pm[k], ENG_READ, STATS_WHY_PARITY_READ, st.member_offset + x,
					  win, par[k]);
			}
		}
		if ((r = eng_run(v, c)))
			break;
		parity_gen(cols, nd, fresh[0], np > 1 ? fresh[1] : NULL, win);
		int differs = 0;
		for (unsigned k = 0; k < np; k++)
			if (par[k] && memcmp(par[k], fresh[k], win)) {
				differs = 1;
				if (repair)
					piece_add(c, (unsigned)pm[k], ENG_WRITE, STATS_WHY_PARITY_WRITE,
						  st.member_offset + x, win, fresh[k]);
			}
		*bad += differs;
		r = eng_run(v, c);
	}
	c->arena_used = 0;
	return r;
}

/* Mirrors: logical chunk at off; every present copy is compared with the
 * first present one, and made equal to it when repairing. */
static int resync_mirror(struct vol *v, struct eng_ctx *c, uint64_t off, int repair, uint64_t *bad)
{
	const struct layout_geom *g = &v->geom;
	unsigned copies = layout_copies(g), first = copies;
	uint64_t failed = vol_failed(v);
	struct layout_extent e[LAYOUT_MAX_MEMBERS];
	uint8_t *buf[LAYOUT_MAX_MEMBERS];
	int r;
	c->arena_used = 0;
	for (unsigned k = 0; k < copies; k++) {
		layout_locate(g, off, k, &e[k]);
		if (e[k].length > c->arena_size / copies)
			e[k].length = (c->arena_size / copies) & ~(uint64_t)(ENG_ALIGN - 1);
		buf[k] = NULL;
		if (failed & (1ull << e[k].member))
			continue;
		if (first == copies)
			first = k;
		buf[k] = arena_alloc(c, e[k].length);
		piece_add(c, e[k].member, ENG_READ, k == first ? STATS_WHY_DATA : STATS_WHY_MIRROR, e[k].offset,
			  e[k].length, buf[k]);
	}
	if (first == copies)
		return -EIO;
	if ((r = eng_run(v, c)))
		return r;
	int differs = 0;
	for (unsigned k = first + 1; k < copies; k++)
		if (buf[k] && memcmp(buf[k], buf[first], e[first].length)) {
			differs = 1;
			if (repair)
				piece_add(c, e[k].member, ENG_WRITE, STATS_WHY_MIRROR, e[k].offset, e[first].length,
					  buf[first]);
		}
	*bad += differs;
	r = eng_run(v, c);
	c->arena_used = 0;
	return r;
}

uint64_t engine_resync_units(const struct vol *v)
{
	const struct layout_geom *g = &v->geom;
	if (layout_is_parity(g))
		return g->stripes;
	if (layout_copies(g) > 1)
		return (g->capacity + g->chunk - 1) / g->chunk;
	return 0;
}

int engine_resync(struct vol *v, uint64_t unit, int repair, uint64_t *mismatches)
{
	const struct layout_geom *g = &v->geom;
	struct eng_locks lk;
	uint64_t off = layout_is_parity(g) ? unit * g->chunk * g->data_members : unit * g->chunk;
	uint64_t len = layout_is_parity(g) ? g->chunk * g->data_members : g->chunk;
	int r;
	if (unit >= engine_resync_units(v))
		return -EINVAL;
	if (len > g->capacity - off)
		len = g->capacity - off;
	struct eng_ctx *c = ctx_get(v);
	if (!c)
		return -ENOMEM;
	/* Writers wait for this unit: a half-updated stripe is never compared. */
	locks_take(v, &lk, off, len, 1);
	for (int tries = 0;; tries++) {
		if (layout_is_parity(g)) {
			r = resync_parity(v, c, unit, repair, mismatches);
		} else {
			r = 0;
			for (uint64_t o = off; !r && o < off + len;) {
				struct layout_extent e;
				layout_locate(g, o, 0, &e);
				r = resync_mirror(v, c, o, repair, mismatches);
				o += e.length < c->arena_size / layout_copies(g) ? e.length
					: (c->arena_size / layout_copies(g)) & ~(uint64_t)(ENG_ALIGN - 1);
			}
		}
		c->npieces = 0;
		if (r < 0 && c->failed_now && tries + 1 < ENG_MAX_TRIES && eng_fail_members(v, c))
			continue;
		break;
	}
	locks_drop(v, &lk);
	ctx_put(v, c);
	return r;
}
