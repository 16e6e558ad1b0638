/* eng_req: the engine's requests (a bounded pool, a few idle ones per
 * thread) and their scratch memory (chunks, plans, pieces). No step of the
 * machine is here (engine.c); nothing here calls back up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/feature.h"
#include "stats/stats.h"

/* ---- requests: a bounded pool ---- */

void eng_req_free_arrays(struct eng_req *rq)
{
	free(rq->pieces);
	free(rq->mio);
	free(rq->iov);
	free(rq->plans);
	rq->pieces = NULL;
	rq->mio = NULL;
	rq->iov = NULL;
	rq->plans = NULL;
	rq->cap_pieces = rq->cap_mio = rq->cap_iov = rq->cap_plans = 0;
}

/* Each thread keeps a few idle requests of its own (any volume's: a request
 * carries nothing of its volume while idle), so a steady stream takes no lock
 * and allocates nothing; the volume's pool takes the overflow. */
#define ENG_TL_REQS 32u
static __thread struct eng_req *tl_reqs;
static __thread unsigned tl_nreqs;
static pthread_key_t tl_req_key;
static pthread_once_t tl_req_once = PTHREAD_ONCE_INIT;

static void tl_reqs_free(void *p)
{
	(void)p;
	while (tl_reqs) {
		struct eng_req *rq = tl_reqs;
		tl_reqs = rq->next;
		eng_req_free_arrays(rq);
		free(rq);
	}
	tl_nreqs = 0;
}

static void tl_req_key_make(void)
{
	pthread_key_create(&tl_req_key, tl_reqs_free);
}


struct eng_req *eng_req_get(struct vol *v)
{
	struct eng_state *es = v->eng;
	struct eng_req *rq = tl_reqs;
	if (rq) {
		tl_reqs = rq->next;
		tl_nreqs--;
	} else {
		pthread_mutex_lock(&es->pool_lock);
		if ((rq = es->pool)) {
			es->pool = rq->next;
			es->pooled--;
		}
		pthread_mutex_unlock(&es->pool_lock);
	}
	if (!rq && !(rq = calloc(1, sizeof(*rq))))
		return NULL;
	/* keep the arrays, reset the rest */
	struct eng_req keep = *rq;
	memset(rq, 0, sizeof(*rq));
	rq->pieces = keep.pieces;
	rq->cap_pieces = keep.cap_pieces;
	rq->mio = keep.mio;
	rq->cap_mio = keep.cap_mio;
	rq->iov = keep.iov;
	rq->cap_iov = keep.cap_iov;
	rq->plans = keep.plans;
	rq->cap_plans = keep.cap_plans;
	rq->v = v;
	rq->geom = &v->geom;
	rq->wait.resume = es->resume;
	return rq;
}

void eng_req_put(struct eng_req *rq)
{
	struct eng_state *es = rq->v->eng;
	/* arrays sized for a rare huge request are not kept */
	if (rq->cap_pieces > 256 || rq->cap_plans > ENG_ROUND_PLANS)
		eng_req_free_arrays(rq);
	if (tl_nreqs < ENG_TL_REQS) {
		if (!tl_reqs) /* freed when the thread ends */
			pthread_once(&tl_req_once, tl_req_key_make), pthread_setspecific(tl_req_key, (void *)1);
		rq->next = tl_reqs;
		tl_reqs = rq;
		tl_nreqs++;
		return;
	}
	pthread_mutex_lock(&es->pool_lock);
	if (es->pooled < ENG_POOL_IDLE_REQS) {
		rq->next = es->pool;
		es->pool = rq;
		es->pooled++;
		rq = NULL;
	}
	pthread_mutex_unlock(&es->pool_lock);
	if (rq) {
		eng_req_free_arrays(rq);
		free(rq);
	}
}

/* ---- scratch memory ---- */

struct eng_chunk *eng_chunk_new(size_t len)
{
	struct eng_chunk *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	if (!(c->mem = bufpool_get(len, &c->cap))) {
		free(c);
		return NULL;
	}
	c->used = 0;
	c->next = NULL;
	return c;
}

void eng_chunk_free(struct eng_chunk *c)
{
	while (c) {
		struct eng_chunk *n = c->next;
		bufpool_put(c->mem, c->cap);
		free(c);
		c = n;
	}
}

void *eng_alloc(struct eng_req *rq, size_t len)
{
	size_t need = (len + ENG_ALIGN - 1) & ~(size_t)(ENG_ALIGN - 1);
	struct eng_chunk *c = rq->scratch;
	if (!c || c->cap - c->used < need) {
		/* a new chunk: at least 64 KiB, so small pieces share one */
		if (!(c = eng_chunk_new(need > (64u << 10) ? need : (64u << 10))))
			return NULL;
		c->next = rq->scratch;
		rq->scratch = c;
	}
	void *p = c->mem + c->used;
	c->used += need;
	return p;
}

void eng_scratch_free(struct eng_req *rq)
{
	if (rq->ppl) /* the stripe log's hold: before the records' memory goes */
		VOL_FEAT_EACH(rq->v, f)
			if (f->scratch_free)
				f->scratch_free(rq);
	eng_chunk_free(rq->scratch);
	rq->scratch = NULL;
	rq->nplans = 0;
}

struct eng_plan *eng_plan_new(struct eng_req *rq)
{
	if (rq->nplans == rq->cap_plans) {
		unsigned cap = rq->cap_plans ? 2 * rq->cap_plans : 1;
		struct eng_plan *p = realloc(rq->plans, cap * sizeof(*p));
		if (!p)
			return NULL;
		rq->plans = p;
		rq->cap_plans = cap;
	}
	return &rq->plans[rq->nplans++];
}

/* ---- pieces and batches ---- */

int eng_piece(struct eng_req *rq, unsigned slot, int op, int why, uint64_t off, uint64_t len, void *buf)
{
	if (rq->npieces == rq->cap_pieces) {
		unsigned cap = rq->cap_pieces ? 2 * rq->cap_pieces : 16;
		struct eng_piece *p = realloc(rq->pieces, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		rq->pieces = p;
		rq->cap_pieces = cap;
	}
	if (rq->flags & ENG_F_RESHAPE)
		why = STATS_WHY_RESHAPE; /* a reshape's member I/O shows as such in the trace */
	rq->pieces[rq->npieces++] = (struct eng_piece){
		.slot = slot, .op = (uint8_t)op, .why = (uint8_t)why, .off = off, .len = len, .buf = buf
	};
	/* a role being replaced: its replacement gets every write too, so each
	 * unit it holds stays equal to the role once copied (md's replacement) */
	int rs = atomic_load_explicit(&rq->v->replace_slot, memory_order_acquire);
	if (op == MEMBER_WRITE && rs >= 0 && (unsigned)rs == slot && !eng_why_meta(why))
		return eng_piece(rq, (unsigned)atomic_load(&rq->v->replace_with), op, STATS_WHY_MIRROR, off, len, buf);
	return 0;
}

/* The one maker: a request from the pool with what its descriptor says. A
 * child whose parent holds the locks takes no trace id of its own: a
 * write-behind has none, a reshape I/O its hold's. */
struct eng_req *eng_new(struct vol *v, const struct eng_desc *d)
{
	struct eng_req *rq = eng_req_get(v);
	if (!rq)
		return NULL;
	if (eng_req_counted(d->flags))
		atomic_fetch_add_explicit(&v->eng->active, 1, memory_order_relaxed);
	rq->kind = d->kind;
	rq->flags = d->flags;
	rq->why = d->why;
	rq->buf = d->buf;
	rq->off = d->off;
	rq->len = d->len;
	if (d->geom)
		rq->geom = d->geom;
	rq->unit = d->unit;
	rq->repair = d->repair;
	rq->gen = d->gen;
	rq->target = d->target;
	rq->dest = d->dest;
	rq->done = d->done;
	rq->parked = d->parked;
	rq->arg = d->arg;
	rq->t0 = vol_now(v);
	rq->trace_parent = d->trace_parent;
	if (!(d->flags & ENG_F_NOLOCK) && stats_trace_on(v->trace))
		rq->trace_parent = stats_trace_id(v->trace);
	rq->wait.trace_id = rq->trace_parent; /* the metadata I/O it waits for shows under it */
	return rq;
}
