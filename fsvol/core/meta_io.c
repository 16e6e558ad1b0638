/* meta_io: metadata I/O on a volume's members, counted, traced, modelled
 * (meta_io.h). The same steps as a data I/O's (engine.c, batch_issue and
 * mio_complete), for one synchronous I/O: counters begin, the model gets the
 * request while the data moves, the backend (through the member's filters,
 * under its failfast deadline), then the later of the two completes it. */
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "fsvol/core/failfast.h"
#include "fsvol/core/meta_io.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/model/emul.h"
#include "stats/stats.h"

struct meta_wait {
	struct member_io io;
	struct emul_io eio;
	atomic_int parts; /* backend + model: the last one posts */
	sem_t sem;
};

static __thread uint64_t tl_cause;

uint64_t vol_meta_cause(uint64_t trace_id)
{
	uint64_t prev = tl_cause;
	tl_cause = trace_id;
	return prev;
}

static void part_done(struct meta_wait *w)
{
	if (atomic_fetch_sub_explicit(&w->parts, 1, memory_order_acq_rel) == 1)
		sem_post(&w->sem);
}

static void backend_done(struct member_io *io)
{
	part_done((struct meta_wait *)io->owner);
}

static void model_done(struct emul_io *eio)
{
	part_done((struct meta_wait *)((char *)eio - offsetof(struct meta_wait, eio)));
}

static void trace_meta(struct vol *v, int slot, int op, int why, uint64_t off, uint64_t len, uint64_t t0,
		       uint64_t end, int res)
{
	struct stats_trace_rec r = {
		.seq = stats_trace_id(v->trace), .parent = tl_cause, .t_start_ns = t0, .latency_ns = end - t0,
		.offset = off, .length = len, .dev = slot, .op = (uint8_t)op, .why = (uint8_t)why,
		.error = (int16_t)res,
	};
	stats_trace_add(v->trace, &r);
}

int vol_meta_io(struct vol *v, struct member *m, int op, int why, void *buf, size_t len, uint64_t off)
{
	VOL_NOT_ON_COMPLETION("vol_meta_io");
	struct iovec iov = { buf, len };
	struct meta_wait w = {
		.io = { .op = (uint8_t)op, .off = op == MEMBER_FLUSH ? 0 : off, .len = op == MEMBER_FLUSH ? 0 : len,
			.iov = &iov, .niov = op == MEMBER_FLUSH ? 0 : 1 },
	};
	int slot = m->slot >= 0 && (unsigned)m->slot < v->nslots && v->slot[m->slot] == m ? m->slot : -1;
	struct emul *e = atomic_load_explicit(&v->emul, memory_order_acquire);
	/* virtual time: the clock belongs to whoever runs the simulation */
	int model = e && !emul_is_virtual(e) && op != MEMBER_FLUSH &&
		    atomic_load_explicit(&vol_ms(v, m)->modeled, memory_order_acquire);
	int counted = m->stats && atomic_load_explicit(&v->stats_level, memory_order_relaxed) == VOL_STATS_ALL;
	uint64_t t0 = vol_now(v); /* virtual time: the simulation's clock, which waits for it */
	sem_init(&w.sem, 0, 0);
	atomic_store_explicit(&w.parts, 1 + model, memory_order_relaxed);
	w.io.done = backend_done;
	w.io.owner = &w;
	if (counted)
		stats_begin(m->stats, t0);
	if (model) {
		w.eio.r = (struct spindle_req){ .offset = off, .length = len, .write = op == MEMBER_WRITE,
						.arrival_ns = t0 };
		w.eio.sp = vol_ms(v, m)->spindle;
		w.eio.release = model_done;
		emul_submit(e, &w.eio);
	}
	if (slot >= 0 && ff_wanted(v, (unsigned)slot))
		ff_queue(v, m, (unsigned)slot, &w.io); /* under the deadline; our done follows */
	else
		m->ops->queue(m, &w.io);
	m->ops->commit(m);
	while (sem_wait(&w.sem) < 0 && errno == EINTR)
		;
	sem_destroy(&w.sem);
	uint64_t end = model ? w.eio.r.done_ns : vol_now(v);
	int res = w.io.res;
	if (counted)
		stats_end(m->stats, (enum stats_op)op, w.io.off, w.io.len, t0, end, res);
	if (slot >= 0 && v->trace && stats_trace_on(v->trace))
		trace_meta(v, slot, op, why, w.io.off, w.io.len, t0, end, res);
	return res;
}
