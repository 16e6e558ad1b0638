/* filter_delay: completions arrive later, after nbdkit's delay filter. Keys:
 * delay, rdelay, wdelay (fault_spec.h). One thread releases every member's
 * held completions in time order. Superblock I/O is never delayed: a member
 * failure rewrites superblocks from whichever thread saw it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fsvol/members/filter.h"
#include "stats/stats.h"

struct fdelay {
	struct filter f;
	_Atomic uint64_t rdelay_ns, wdelay_ns;
};

/* A completion held back. */
struct fdelay_io {
	struct member_io io;       /* what the member below sees */
	struct member_io *orig;
	uint64_t due;              /* release at (ns, stats_now clock) */
	struct fdelay_io *next;
};

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fdelay_io *list; /* sorted by due */
	int ok;
} delay_line = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

static void fdelay_finish(struct fdelay_io *di)
{
	struct member_io *o = di->orig;
	o->res = di->io.res;
	free(di);
	o->done(o);
}

static void *delay_line_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-delay"); /* top -H, ps -L */
	(void)arg;
	pthread_mutex_lock(&delay_line.lock);
	for (;;) {
		struct fdelay_io *di = delay_line.list;
		if (!di) {
			pthread_cond_wait(&delay_line.cond, &delay_line.lock);
			continue;
		}
		uint64_t now = stats_now();
		if (di->due > now) {
			/* stats_now is CLOCK_MONOTONIC: so is the condition's clock */
			struct timespec ts = { (time_t)(di->due / 1000000000u), (long)(di->due % 1000000000u) };
			pthread_cond_timedwait(&delay_line.cond, &delay_line.lock, &ts);
			continue;
		}
		delay_line.list = di->next;
		pthread_mutex_unlock(&delay_line.lock);
		fdelay_finish(di);
		pthread_mutex_lock(&delay_line.lock);
	}
	return NULL;
}

static void delay_line_init(void)
{
	pthread_condattr_t ca;
	pthread_t t;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&delay_line.cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, delay_line_main, NULL) == 0) {
		pthread_detach(t);
		delay_line.ok = 1;
	}
}

static void delay_line_add(struct fdelay_io *di)
{
	pthread_once(&delay_line.once, delay_line_init);
	if (!delay_line.ok) {
		fdelay_finish(di); /* no thread: no delay rather than no completion */
		return;
	}
	pthread_mutex_lock(&delay_line.lock);
	struct fdelay_io **p = &delay_line.list;
	while (*p && (*p)->due <= di->due)
		p = &(*p)->next;
	di->next = *p;
	*p = di;
	if (delay_line.list == di)
		pthread_cond_signal(&delay_line.cond);
	pthread_mutex_unlock(&delay_line.lock);
}

static void fdelay_done(struct member_io *io)
{
	struct fdelay_io *di = (struct fdelay_io *)io;
	if (di->due > stats_now())
		delay_line_add(di);
	else
		fdelay_finish(di);
}

static void fdelay_queue(struct member *m, struct member_io *io)
{
	struct fdelay *fd = m->priv;
	struct member *next = fd->f.next;
	if (filter_dead(&fd->f))
		return; /* the power is off: it never completes */
	int in_data = io->op != MEMBER_FLUSH && io->off >= fd->f.top->data_offset;
	uint64_t delay = !in_data ? 0
			 : atomic_load_explicit(io->op == MEMBER_READ ? &fd->rdelay_ns : &fd->wdelay_ns,
						memory_order_relaxed);
	if (!delay) {
		next->ops->queue(next, io);
		return;
	}
	struct fdelay_io *di = malloc(sizeof(*di));
	if (!di) {
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	di->io = *io;
	di->io.done = fdelay_done;
	di->orig = io;
	di->due = stats_now() + delay;
	next->ops->queue(next, &di->io);
}

static int fdelay_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	(void)m, (void)direct;
	snprintf(err, errlen, "%s: a delay wraps a member (fsvol mount --fault N=delay=T)", name);
	return -EINVAL;
}

static void fdelay_close(struct member *m)
{
	struct fdelay *fd = m->priv;
	filter_close_next(&fd->f);
	free(fd);
	m->priv = NULL;
}

const struct member_ops filter_delay_ops = {
	.name = "delay",
	.filter = 1,
	.open = fdelay_open,
	.close = fdelay_close,
	.queue = fdelay_queue,
	.commit = filter_commit,
	.zero = filter_zero,
	.grow = filter_grow,
	.alloc = filter_alloc,
	.lock = filter_lock,
};

int filter_delay_push(struct member *m, const struct member *top)
{
	struct fdelay *fd = calloc(1, sizeof(*fd));
	if (!fd)
		return -ENOMEM;
	int r = filter_push(m, &filter_delay_ops, &fd->f, top);
	if (r)
		free(fd);
	return r;
}

void filter_delay_set(struct member *m, const struct fault_spec *s)
{
	struct fdelay *fd = m->priv;
	atomic_store_explicit(&fd->rdelay_ns, s->rdelay_ns, memory_order_relaxed);
	atomic_store_explicit(&fd->wdelay_ns, s->wdelay_ns, memory_order_relaxed);
}

void filter_delay_get(struct member *m, struct fault_spec *s)
{
	struct fdelay *fd = m->priv;
	s->rdelay_ns = atomic_load_explicit(&fd->rdelay_ns, memory_order_relaxed);
	s->wdelay_ns = atomic_load_explicit(&fd->wdelay_ns, memory_order_relaxed);
}
