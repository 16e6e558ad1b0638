/* member_fault: fault injection as a wrapping backend, after nbdkit's error and
 * delay filters, dm-flakey, dm-dust and gnop. Spec (docs/faults.md):
 *
 *   none | KEY=VALUE[,KEY=VALUE...]
 *   error=read|write|all   which I/Os fail (flushes count as writes)
 *   rate=P                 ... with probability P (0..1, default 1)
 *   after=N                ... after the first N of them succeeded
 *   errno=eio|enospc|edquot|enodev   the error returned (default eio)
 *   bad=OFF+LEN            reads touching it fail until a write covers it (dm-dust);
 *                          OFF is in the member's data area, as `fsvol map` prints
 *   flaky=UP/DOWN          up for UP, then every I/O fails for DOWN, repeating
 *                          (dm-flakey); times (5ms, 2s) or I/O counts (100io)
 *   delay=T, rdelay=T, wdelay=T   completions arrive T later (5ms, 200us)
 *   corrupt=P              a read returns one flipped byte with probability P
 *   seed=N                 the random sequence for rate and corrupt
 *
 * With no spec the wrapper costs one atomic load per I/O. A failed I/O never
 * reaches the member below, as with a dead disk.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fsvol/members/member.h"
#include "fsvol/util/size.h"
#include "stats/stats.h"

#define FAULT_MAX_BAD 16

enum { FAULT_READ = 1, FAULT_WRITE = 2 };

struct fault_spec {
	int error_ops;             /* FAULT_READ | FAULT_WRITE, 0: none */
	double rate;
	uint64_t after;
	int err;                   /* positive errno */
	unsigned nbad;
	struct { uint64_t off, len; } bad[FAULT_MAX_BAD];
	uint64_t up, down;         /* flaky periods, 0: not flaky */
	int flaky_io;              /* periods counted in I/Os, not ns */
	uint64_t rdelay_ns, wdelay_ns;
	double corrupt;
	uint64_t seed;
};

struct fault_state {
	struct member inner;       /* the wrapped backend's member */
	atomic_int active;         /* a spec is set */
	pthread_mutex_t lock;      /* the spec and the counters below */
	struct fault_spec s;
	uint64_t nerr_ops;         /* I/Os of the failing kind seen */
	uint64_t nio;              /* every I/O seen (flaky in I/Os) */
	uint64_t t0;               /* flaky periods start here */
	uint64_t rng;
};

/* A completion held back for a delay or to corrupt what was read. */
struct fault_io {
	struct member_io io;       /* what the member below sees */
	struct member_io *orig;
	struct fault_state *f;
	uint64_t due;              /* release at (ns, stats_now clock) */
	int corrupt;
	struct fault_io *next;
};

/* ---- parsing ---- */

static int fault_time(const char *v, uint64_t *ns, int *is_io)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || x < 0)
		return -1;
	if (is_io && !strcmp(end, "io")) {
		*is_io = 1;
		*ns = (uint64_t)x;
		return x == (double)(uint64_t)x ? 0 : -1;
	}
	double mul = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6
		   : !strcmp(end, "s") ? 1e9 : -1;
	if (mul < 0 || x * mul > 3.6e12)
		return -1;
	*ns = (uint64_t)(x * mul);
	return 0;
}

static int fault_prob(const char *v, double *p)
{
	char *end;
	*p = strtod(v, &end);
	return end == v || *end || !(*p >= 0 && *p <= 1) ? -1 : 0;
}

static int fault_parse(const char *spec, struct fault_spec *s, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;
	memset(s, 0, sizeof(*s));
	s->rate = 1;
	s->err = EIO;
	s->seed = 1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "fault spec too long");
		return -EINVAL;
	}
	if (!strcmp(spec, "none") || !strcmp(spec, "off"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	int have_rate = 0;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v || !v[1]) {
			snprintf(err, errlen, "fault '%s': expected KEY=VALUE", kv);
			return -EINVAL;
		}
		*v++ = 0;
		int bad = 0;
		if (!strcmp(kv, "error")) {
			s->error_ops = !strcmp(v, "read") ? FAULT_READ : !strcmp(v, "write") ? FAULT_WRITE
				       : !strcmp(v, "all") ? FAULT_READ | FAULT_WRITE : 0;
			bad = !s->error_ops;
		} else if (!strcmp(kv, "rate")) {
			bad = fault_prob(v, &s->rate);
			have_rate = 1;
		} else if (!strcmp(kv, "after")) {
			char *end;
			s->after = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else if (!strcmp(kv, "errno")) {
			s->err = !strcasecmp(v, "eio") ? EIO : !strcasecmp(v, "enospc") ? ENOSPC
				 : !strcasecmp(v, "edquot") ? EDQUOT : !strcasecmp(v, "enodev") ? ENODEV : 0;
			bad = !s->err;
		} else if (!strcmp(kv, "bad")) {
			char *plus = strchr(v, '+');
			if (s->nbad == FAULT_MAX_BAD) {
				snprintf(err, errlen, "fault bad=%s: at most %d bad ranges", v, FAULT_MAX_BAD);
				return -EINVAL;
			}
			if (plus)
				*plus = 0;
			bad = !plus || size_parse(v, &s->bad[s->nbad].off) || size_parse(plus + 1, &s->bad[s->nbad].len) ||
			      !s->bad[s->nbad].len;
			if (plus)
				*plus = '+';
			s->nbad++;
		} else if (!strcmp(kv, "flaky")) {
			char *slash = strchr(v, '/');
			int io_up = 0, io_down = 0;
			if (slash)
				*slash = 0;
			bad = !slash || fault_time(v, &s->up, &io_up) || fault_time(slash + 1, &s->down, &io_down) ||
			      io_up != io_down || !s->up || !s->down;
			if (slash)
				*slash = '/';
			s->flaky_io = io_up;
		} else if (!strcmp(kv, "delay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
			s->wdelay_ns = s->rdelay_ns;
		} else if (!strcmp(kv, "rdelay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
		} else if (!strcmp(kv, "wdelay")) {
			bad = fault_time(v, &s->wdelay_ns, NULL);
		} else if (!strcmp(kv, "corrupt")) {
			bad = fault_prob(v, &s->corrupt);
		} else if (!strcmp(kv, "seed")) {
			char *end;
			s->seed = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else {
			snprintf(err, errlen, "fault: unknown key '%s' (error, rate, after, errno, bad, flaky, "
				 "delay, rdelay, wdelay, corrupt, seed)", kv);
			return -EINVAL;
		}
		if (bad) {
			snprintf(err, errlen, "fault %s=%s: bad value", kv, v);
			return -EINVAL;
		}
	}
	if ((have_rate || s->after) && !s->error_ops) {
		snprintf(err, errlen, "fault: rate and after need error=read|write|all");
		return -EINVAL;
	}
	return 0;
}

static int fault_spec_empty(const struct fault_spec *s)
{
	return !s->error_ops && !s->nbad && !s->up && !s->rdelay_ns && !s->wdelay_ns && !s->corrupt;
}

/* ---- the delay line: one thread releases held completions in time order ---- */

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fault_io *list; /* sorted by due */
	int ok;
} fault_line = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

static void fault_finish(struct fault_io *fi);

static void *fault_line_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fault_line.lock);
	for (;;) {
		struct fault_io *fi = fault_line.list;
		if (!fi) {
			pthread_cond_wait(&fault_line.cond, &fault_line.lock);
			continue;
		}
		uint64_t now = stats_now();
		if (fi->due > now) {
			/* stats_now is CLOCK_MONOTONIC: so is the condition's clock */
			struct timespec ts = { (time_t)(fi->due / 1000000000u), (long)(fi->due % 1000000000u) };
			pthread_cond_timedwait(&fault_line.cond, &fault_line.lock, &ts);
			continue;
		}
		fault_line.list = fi->next;
		pthread_mutex_unlock(&fault_line.lock);
		fault_finish(fi);
		pthread_mutex_lock(&fault_line.lock);
	}
	return NULL;
}

static void fault_line_init(void)
{
	pthread_condattr_t ca;
	pthread_t t;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fault_line.cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, fault_line_main, NULL) == 0) {
		pthread_detach(t);
		fault_line.ok = 1;
	}
}

static void fault_line_add(struct fault_io *fi)
{
	pthread_once(&fault_line.once, fault_line_init);
	if (!fault_line.ok) {
		fault_finish(fi); /* no thread: no delay rather than no completion */
		return;
	}
	pthread_mutex_lock(&fault_line.lock);
	struct fault_io **p = &fault_line.list;
	while (*p && (*p)->due <= fi->due)
		p = &(*p)->next;
	fi->next = *p;
	*p = fi;
	if (fault_line.list == fi)
		pthread_cond_signal(&fault_line.cond);
	pthread_mutex_unlock(&fault_line.lock);
}

/* ---- I/O ---- */

static uint64_t fault_rand(struct fault_state *f)
{
	/* splitmix64: reproducible from seed= */
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int fault_chance(struct fault_state *f, double p)
{
	return p >= 1 || (p > 0 && (double)(fault_rand(f) >> 11) * 0x1.0p-53 < p);
}

static int fault_overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* A write heals what it covers of each bad range (dm-dust). */
static void fault_heal(struct fault_spec *s, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < s->nbad;) {
		uint64_t b = s->bad[i].off, e = b + s->bad[i].len;
		if (!fault_overlaps(off, len, b, e - b)) {
			i++;
			continue;
		}
		if (off <= b && off + len >= e) { /* covered: gone */
			s->bad[i] = s->bad[--s->nbad];
			continue;
		}
		if (off > b && off + len < e && s->nbad < FAULT_MAX_BAD) { /* a hole in the middle */
			s->bad[s->nbad].off = off + len;
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
static int fault_decide(struct fault_state *f, struct member *m, const struct member_io *io, int *corrupt,
			uint64_t *delay)
{
	struct fault_spec *s = &f->s;
	int kind = io->op == MEMBER_READ ? FAULT_READ : FAULT_WRITE;
	/* bad ranges live in the data area: superblock I/O never meets them */
	int in_data = io->op != MEMBER_FLUSH && io->off >= m->data_offset;
	uint64_t doff = in_data ? io->off - m->data_offset : 0;
	int e = 0;
	f->nio++;
	/* superblock I/O is never delayed: a member failure rewrites superblocks
	 * from whichever thread saw it, possibly this wrapper's own */
	*delay = !in_data ? 0 : kind == FAULT_READ ? s->rdelay_ns : s->wdelay_ns;
	*corrupt = 0;
	if (s->up) {
		uint64_t t = s->flaky_io ? f->nio - 1 : stats_now() - f->t0;
		if (t % (s->up + s->down) >= s->up)
			e = s->err;
	}
	if (!e && (s->error_ops & kind) && f->nerr_ops++ >= s->after && fault_chance(f, s->rate))
		e = s->err;
	if (!e && in_data && s->nbad) {
		if (kind == FAULT_WRITE) {
			fault_heal(s, doff, io->len);
		} else {
			for (unsigned i = 0; i < s->nbad && !e; i++)
				if (fault_overlaps(doff, io->len, s->bad[i].off, s->bad[i].len))
					e = EIO;
		}
	}
	if (!e && kind == FAULT_READ && io->op == MEMBER_READ && fault_chance(f, s->corrupt))
		*corrupt = 1;
	return e;
}

static void fault_finish(struct fault_io *fi)
{
	struct member_io *o = fi->orig;
	o->res = fi->io.res;
	if (fi->corrupt && !o->res && o->len) {
		/* flip one byte somewhere in what was read */
		pthread_mutex_lock(&fi->f->lock);
		uint64_t at = fault_rand(fi->f) % o->len;
		pthread_mutex_unlock(&fi->f->lock);
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

static void fault_inner_done(struct member_io *io)
{
	struct fault_io *fi = (struct fault_io *)io;
	if (fi->due > stats_now())
		fault_line_add(fi);
	else
		fault_finish(fi);
}

static void fault_queue(struct member *m, struct member_io *io)
{
	struct fault_state *f = m->priv;
	if (!atomic_load_explicit(&f->active, memory_order_acquire)) {
		f->inner.ops->queue(&f->inner, io);
		return;
	}
	int corrupt;
	uint64_t delay;
	pthread_mutex_lock(&f->lock);
	int e = fault_decide(f, m, io, &corrupt, &delay);
	pthread_mutex_unlock(&f->lock);
	if (!corrupt && !delay) {
		if (e) {
			io->res = -e;
			io->done(io);
		} else {
			f->inner.ops->queue(&f->inner, io);
		}
		return;
	}
	struct fault_io *fi = calloc(1, sizeof(*fi));
	if (!fi) {
		io->res = -ENOMEM;
		io->done(io);
		return;
	}
	fi->io = *io;
	fi->io.done = fault_inner_done;
	fi->orig = io;
	fi->f = f;
	fi->corrupt = corrupt;
	fi->due = stats_now() + delay;
	if (e) {
		fi->io.res = -e;
		fault_inner_done(&fi->io);
	} else {
		f->inner.ops->queue(&f->inner, &fi->io);
	}
}

static void fault_commit(struct member *m)
{
	struct fault_state *f = m->priv;
	f->inner.ops->commit(&f->inner);
}

/* ---- the rest passes through ---- */

static int fault_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	(void)m, (void)name, (void)direct;
	snprintf(err, errlen, "%s: faults wrap a member (fsvol mount --fault N=SPEC)", name);
	return -EINVAL;
}

static void fault_close(struct member *m)
{
	struct fault_state *f = m->priv;
	if (!f)
		return;
	member_close(&f->inner);
	pthread_mutex_destroy(&f->lock);
	free(f);
	m->priv = NULL;
}

static int fault_zero(struct member *m, uint64_t off, uint64_t len)
{
	struct fault_state *f = m->priv;
	return f->inner.ops->zero(&f->inner, off, len);
}

static int fault_lock(struct member *m)
{
	struct fault_state *f = m->priv;
	return member_lock(&f->inner);
}

static int fault_grow(struct member *m, uint64_t size)
{
	struct fault_state *f = m->priv;
	int r = f->inner.ops->grow ? f->inner.ops->grow(&f->inner, size) : -ENOTSUP;
	if (!r)
		m->size = size;
	return r;
}

const struct member_ops member_fault_ops = {
	.name = "fault",
	.prefix = NULL,
	.open = fault_open,
	.close = fault_close,
	.queue = fault_queue,
	.commit = fault_commit,
	.zero = fault_zero,
	.grow = fault_grow,
	.lock = fault_lock,
};

int member_fault_wrap(struct member *m)
{
	if (m->ops == &member_fault_ops)
		return 0;
	struct fault_state *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->inner = *m;
	pthread_mutex_init(&f->lock, NULL);
	m->ops = &member_fault_ops;
	m->priv = f;
	return 0;
}

int member_fault_set(struct member *m, const char *spec, char *err, size_t errlen)
{
	struct fault_spec s;
	if (m->ops != &member_fault_ops) {
		snprintf(err, errlen, "%s: faults can only be set on a mounted volume's members", m->path);
		return -EINVAL;
	}
	int r = fault_parse(spec, &s, err, errlen);
	if (r)
		return r;
	struct fault_state *f = m->priv;
	pthread_mutex_lock(&f->lock);
	f->s = s;
	f->nerr_ops = f->nio = 0;
	f->t0 = stats_now();
	f->rng = s.seed;
	atomic_store_explicit(&f->active, !fault_spec_empty(&s), memory_order_release);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

void member_fault_describe(struct member *m, char *buf, size_t len)
{
	if (m->ops != &member_fault_ops) {
		snprintf(buf, len, "none");
		return;
	}
	struct fault_state *f = m->priv;
	static const char *const ops[] = { "", "read", "write", "all" };
	size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__)
	pthread_mutex_lock(&f->lock);
	const struct fault_spec *s = &f->s;
	buf[0] = 0;
	if (s->error_ops)
		PUT(",error=%s,rate=%g,after=%llu", ops[s->error_ops], s->rate, (unsigned long long)s->after);
	if (s->error_ops || s->up)
		PUT(",errno=%s", s->err == ENOSPC ? "enospc" : s->err == EDQUOT ? "edquot" : s->err == ENODEV ? "enodev" : "eio");
	for (unsigned i = 0; i < s->nbad; i++)
		PUT(",bad=%llu+%llu", (unsigned long long)s->bad[i].off, (unsigned long long)s->bad[i].len);
	if (s->up && s->flaky_io)
		PUT(",flaky=%lluio/%lluio", (unsigned long long)s->up, (unsigned long long)s->down);
	else if (s->up)
		PUT(",flaky=%lluus/%lluus", (unsigned long long)(s->up / 1000), (unsigned long long)(s->down / 1000));
	if (s->rdelay_ns)
		PUT(",rdelay=%lluus", (unsigned long long)(s->rdelay_ns / 1000));
	if (s->wdelay_ns)
		PUT(",wdelay=%lluus", (unsigned long long)(s->wdelay_ns / 1000));
	if (s->corrupt)
		PUT(",corrupt=%g", s->corrupt);
	if (s->error_ops || s->corrupt)
		PUT(",seed=%llu", (unsigned long long)s->seed);
	pthread_mutex_unlock(&f->lock);
#undef PUT
	if (!buf[0])
		snprintf(buf, len, "none");
	else
		memmove(buf, buf + 1, strlen(buf)); /* drop the leading comma */
}
