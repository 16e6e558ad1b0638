/* filter_fault: errors, flaky periods, bad ranges and silent corruption, after
 * nbdkit's error filter, dm-flakey, dm-dust and gnop. A failed I/O never
 * reaches the member below, as with a dead disk. With nothing set it costs one
 * atomic load per I/O. Keys: error, rate, after, errno, bad, flaky, corrupt,
 * seed (fault_spec.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/members/filter.h"
#include "stats/stats.h"

struct ffault {
	struct filter f;
	atomic_int active;         /* a key of ours is set */
	pthread_mutex_t lock;      /* everything below */
	struct fault_spec s;       /* our keys (bad ranges heal as writes cover them) */
	uint64_t nerr_ops;         /* I/Os of the failing kind seen */
	uint64_t nio;              /* every I/O seen (flaky in I/Os) */
	uint64_t t0;               /* flaky periods start here */
	uint64_t rng;
};

/* A read that will come back with one byte flipped. */
struct ffault_io {
	struct member_io io;       /* what the member below sees */
	struct member_io *orig;
	struct ffault *ff;
};

static uint64_t ffault_rand(struct ffault *ff)
{
	/* splitmix64: reproducible from seed= */
	uint64_t z = (ff->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int ffault_chance(struct ffault *ff, double p)
{
	return p >= 1 || (p > 0 && (double)(ffault_rand(ff) >> 11) * 0x1.0p-53 < p);
}

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* A write heals what it covers of each bad range (dm-dust). */
static void ffault_heal(struct fault_spec *s, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < s->nbad;) {
		uint64_t b = s->bad[i].off, e = b + s->bad[i].len;
		if (!overlaps(off, len, b, e - b)) {
			i++;
			continue;
		}
		if (off <= b && off + len >= e) { /* covered: gone */
			s->bad[i] = s->bad[--s->nbad];
			continue;
		}
		if (off > b && off + len < e && s->nbad < FAULT_MAX_BAD) { /* a hole in the middle */
			s->bad[s->nbad].off = off + len;
			s->bad[s->nbad].sticky = s->bad[i].sticky;
			s->bad[s->nbad++].len = e - (off + len);
			s->bad[i].len = off - b;
		} else if (off <= b) {
			s->bad[i].off = off + len;
			s->bad[i].len = e - (off + len);
		} else {
			s->bad[i].len = off - b;
		}
		i++;
	}
}

/* Decide under the lock: 0 to pass, else the positive errno to fail with. */
static int ffault_decide(struct ffault *ff, const struct member_io *io, int *corrupt)
{
	struct fault_spec *s = &ff->s;
	int kind = io->op == MEMBER_READ ? FAULT_READ : FAULT_WRITE;
	uint64_t doff_base = ff->f.top->data_offset;
	/* bad ranges live in the data area: superblock I/O never meets them */
	int in_data = io->op != MEMBER_FLUSH && io->off >= doff_base;
	uint64_t doff = in_data ? io->off - doff_base : 0;
	int e = 0;
	ff->nio++;
	*corrupt = 0;
	if (s->up) {
		uint64_t t = s->flaky_io ? ff->nio - 1 : stats_now() - ff->t0;
		if (t % (s->up + s->down) >= s->up)
			e = s->err;
	}
	if (!e && (s->error_ops & kind) && ff->nerr_ops++ >= s->after && ffault_chance(ff, s->rate))
		e = s->err;
	if (!e && in_data && s->nbad) {
		/* a write fails on a sticky range (badw=), else heals what it covers */
		for (unsigned i = 0; i < s->nbad && !e; i++)
			if ((kind == FAULT_READ || s->bad[i].sticky) && overlaps(doff, io->len, s->bad[i].off, s->bad[i].len))
				e = EIO;
		if (!e && kind == FAULT_WRITE)
			ffault_heal(s, doff, io->len);
	}
	if (!e && io->op == MEMBER_READ && ffault_chance(ff, s->corrupt))
		*corrupt = 1;
	return e;
}

static void ffault_corrupt_done(struct member_io *io)
{
	struct ffault_io *fi = (struct ffault_io *)io;
	struct member_io *o = fi->orig;
	o->res = io->res;
	if (!o->res && o->len) {
		/* flip one byte somewhere in what was read */
		pthread_mutex_lock(&fi->ff->lock);
		uint64_t at = ffault_rand(fi->ff) % o->len;
		pthread_mutex_unlock(&fi->ff->lock);
		for (unsigned i = 0; i < o->niov; i++) {
			if (at < o->iov[i].iov_len) {
				((uint8_t *)o->iov[i].iov_base)[at] ^= 0xff;
				break;
			}
			at -= o->iov[i].iov_len;
		}
	}
	free(fi);
	o->done(o);
}

static void ffault_queue(struct member *m, struct member_io *io)
{
	struct ffault *ff = m->priv;
	struct member *next = ff->f.next;
	if (filter_dead(&ff->f))
		return; /* the power is off: it never completes */
	if (!atomic_load_explicit(&ff->active, memory_order_acquire)) {
		next->ops->queue(next, io);
		return;
	}
	int corrupt;
	pthread_mutex_lock(&ff->lock);
	int e = ffault_decide(ff, io, &corrupt);
	pthread_mutex_unlock(&ff->lock);
	if (e) {
		io->res = -e;
		io->done(io);
		return;
	}
	if (!corrupt) {
		next->ops->queue(next, io);
		return;
	}
	struct ffault_io *fi = malloc(sizeof(*fi));
	if (!fi) {
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	fi->io = *io;
	fi->io.done = ffault_corrupt_done;
	fi->orig = io;
	fi->ff = ff;
	next->ops->queue(next, &fi->io);
}

static int ffault_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	(void)m, (void)direct;
	snprintf(err, errlen, "%s: faults wrap a member (fsvol mount --fault N=SPEC)", name);
	return -EINVAL;
}

static void ffault_close(struct member *m)
{
	struct ffault *ff = m->priv;
	filter_close_next(&ff->f);
	pthread_mutex_destroy(&ff->lock);
	free(ff);
	m->priv = NULL;
}

const struct member_ops filter_fault_ops = {
	.name = "fault",
	.filter = 1,
	.open = ffault_open,
	.close = ffault_close,
	.queue = ffault_queue,
	.commit = filter_commit,
	.zero = filter_zero,
	.grow = filter_grow,
	.alloc = filter_alloc,
	.lock = filter_lock,
};

int filter_fault_push(struct member *m, const struct member *top)
{
	struct ffault *ff = calloc(1, sizeof(*ff));
	if (!ff)
		return -ENOMEM;
	pthread_mutex_init(&ff->lock, NULL);
	int r = filter_push(m, &filter_fault_ops, &ff->f, top);
	if (r) {
		pthread_mutex_destroy(&ff->lock);
		free(ff);
	}
	return r;
}

void filter_fault_set(struct member *m, const struct fault_spec *s)
{
	struct ffault *ff = m->priv;
	pthread_mutex_lock(&ff->lock);
	ff->s = *s;
	ff->nerr_ops = ff->nio = 0;
	ff->t0 = stats_now();
	ff->rng = s->seed;
	atomic_store_explicit(&ff->active, s->error_ops || s->nbad || s->up || s->corrupt > 0,
			      memory_order_release);
	pthread_mutex_unlock(&ff->lock);
}

void filter_fault_get(struct member *m, struct fault_spec *s)
{
	struct ffault *ff = m->priv;
	pthread_mutex_lock(&ff->lock);
	const struct fault_spec *o = &ff->s;
	s->error_ops = o->error_ops;
	s->rate = o->rate;
	s->after = o->after;
	s->err = o->err;
	s->nbad = o->nbad;
	memcpy(s->bad, o->bad, sizeof(s->bad));
	s->up = o->up;
	s->down = o->down;
	s->flaky_io = o->flaky_io;
	s->corrupt = o->corrupt;
	s->seed = o->seed;
	pthread_mutex_unlock(&ff->lock);
}
