/* run: one workload against its targets. Opens (and with -c creates) the
 * targets, starts every worker, keeps the clock (warm-up, measured window,
 * cool-down), samples CPU and fsvol counters at the window's edges, shows
 * progress, and gathers the per-thread figures into a bench_result. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/run.h"
#include "fsvol/core/volume.h"
#include "fsvol/front/ctl.h"

/* The start gate: workers check in when set up, leave when the clock is set. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static unsigned gate_ready;
static int gate_open;

void bench_wait_start(struct bench_worker *w)
{
	(void)w;
	pthread_mutex_lock(&gate_lock);
	gate_ready++;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

void bench_fail(struct bench_worker *w, int err, const char *fmt, ...)
{
	va_list ap;
	if (w->error)
		return; /* keep the first */
	w->error = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	atomic_store(&w->clk->stop, 1);
}

void bench_account(struct bench_worker *w, int is_write, uint64_t bytes, uint64_t t0, uint64_t t1)
{
	atomic_store_explicit(&w->done, atomic_load_explicit(&w->done, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (t1 < w->clk->t_meas || t1 >= w->clk->t_meas_end)
		return;
	struct bench_opstat *s = &w->op[is_write];
	uint64_t lat = t1 - t0;
	s->ios++;
	s->bytes += bytes;
	s->lat_sum += (double)lat;
	s->lat_sq += (double)lat * (double)lat;
	if (lat < s->lat_min)
		s->lat_min = lat;
	if (lat > s->lat_max)
		s->lat_max = lat;
	s->hist[stats_lat_bucket(lat)]++;
	if (w->iv) {
		uint64_t i = (t1 - w->clk->t_meas) / w->iv_ns;
		if (i < w->niv)
			w->iv[(size_t)is_write * w->niv + i]++;
	}
}

/* len random bytes from seed (xorshift64). */
static void fill_random(unsigned char *b, size_t len, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		memcpy(b + i, &s, 8);
	}
	for (; i < len; i++)
		b[i] = (unsigned char)(s >> (8 * (i & 7)));
}

/* n buffers of -b bytes, page-aligned and touched now (a first touch costs
 * 12-16 us per page here, too much for the hot path). As diskspd's: byte i
 * of the pattern is i % 256; -Z zeros; -Zr and -ZSIZE start random (and
 * bench_write_data refills them per write). */
void *bench_buffers(const struct bench_opts *o, size_t n, uint64_t seed)
{
	void *p;
	size_t len = n * o->block;
	if (posix_memalign(&p, 4096, len))
		return NULL;
	unsigned char *b = p;
	if (o->wbuf == BENCH_WBUF_RANDOM_EACH || o->wbuf == BENCH_WBUF_SOURCE)
		fill_random(b, len, seed);
	else if (o->wbuf == BENCH_WBUF_ZERO)
		memset(b, 0, len);
	else
		for (size_t i = 0; i < len; i++)
			b[i] = (unsigned char)i;
	return p;
}

void bench_write_data(const struct bench_worker *w, char *buf, uint64_t k)
{
	const struct bench_opts *o = w->o;
	if (o->wbuf == BENCH_WBUF_RANDOM_EACH) {
		fill_random((unsigned char *)buf, o->block, o->seed ^ ((uint64_t)w->thread << 40) ^ (k + 1));
	} else if (o->wbuf == BENCH_WBUF_SOURCE && w->wsrc) {
		/* a 4K-aligned place in the source where a whole block fits */
		uint64_t places = (o->wbuf_size - o->block) / 4096 + 1;
		uint64_t x = (k + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)w->thread << 32);
		x ^= x >> 29, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 32;
		memcpy(buf, w->wsrc + x % places * 4096, o->block);
	}
}

static void err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* -c: write the file out to size (reads of holes would cost nothing). */
static int create_file(const char *path, uint64_t size, const struct bench_opts *o, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) == 0 && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= size))
		return 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_set(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return -errno;
	}
	struct bench_opts one = *o;
	one.block = 1 << 20;
	char *buf = bench_buffers(&one, 1, o->seed);
	int r = buf ? 0 : -ENOMEM;
	for (uint64_t off = 0; !r && off < size;) {
		size_t n = size - off < one.block ? (size_t)(size - off) : one.block;
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w <= 0)
			r = w < 0 ? -errno : -EIO;
		else
			off += (uint64_t)w;
	}
	if (!r && fsync(fd))
		r = -errno;
	if (r)
		err_set(err, errlen, "%s: cannot fill to %llu bytes: %s", path, (unsigned long long)size,
			strerror(-r));
	free(buf);
	close(fd);
	return r;
}

static int open_target(struct bench_target *t, const struct bench_opts *o, char *err, size_t errlen)
{
	struct stat st;
	int r, flags = O_CLOEXEC | (o->write_pct ? O_RDWR : O_RDONLY) | (o->direct ? O_DIRECT : 0) |
		       (o->writethrough ? O_DSYNC : 0);
	if (o->create_size && (r = create_file(t->path, o->create_size, o, err, errlen)))
		return r;
	if ((t->fd = open(t->path, flags)) < 0) {
		r = -errno;
		err_set(err, errlen, "%s: %s%s", t->path, strerror(errno),
			errno == EINVAL && o->direct ? " (no O_DIRECT here? drop -S)" : "");
		return r;
	}
	if (fstat(t->fd, &st)) {
		r = -errno;
		err_set(err, errlen, "%s: %s", t->path, strerror(errno));
		return r;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(t->fd, BLKGETSIZE64, &t->size)) {
			r = -errno;
			err_set(err, errlen, "%s: BLKGETSIZE64: %s", t->path, strerror(errno));
			return r;
		}
	} else if (S_ISREG(st.st_mode)) {
		t->size = (uint64_t)st.st_size;
	} else {
		err_set(err, errlen, "%s: not a regular file or block device", t->path);
		return -EINVAL;
	}
	if (o->create_size) {
		if (o->create_size > t->size) {
			err_set(err, errlen, "%s: -c %llu is larger than the device (%llu bytes)", t->path,
				(unsigned long long)o->create_size, (unsigned long long)t->size);
			return -EINVAL;
		}
		t->size = o->create_size;
	}
	return 0;
}

static int open_volume(struct bench_target *t, const struct bench_opts *o, char *err, size_t errlen)
{
	struct vol_opts vo = { .stats = VOL_STATS_ALL, .buffered = !o->direct, .model = o->model,
			       .virtual_time = o->virtual_time };
	int r;
	if (o->create) {
		/* a fresh volume: memory members are created by their names'
		 * sizes (mem:NAME:SIZE), an existing one is overwritten */
		struct vol_create vc = { .force = 1 };
		vc.geom.level = (enum layout_level)o->create_level;
		vc.geom.alg = o->create_alg;
		vc.geom.copies = o->create_copies;
		vc.geom.chunk = o->create_chunk;
		if ((r = vol_create(&vc, (char *const *)o->members, o->nmembers, err, errlen)))
			return r;
	}
	r = vol_open(&t->vol, (char *const *)o->members, o->nmembers, &vo, err, errlen);
	if (r)
		return r;
	for (unsigned i = 0; i < o->nctl; i++)
		if ((r = ctl_exec_setting(t->vol, o->ctl[i], err, errlen)))
			return r;
	if ((r = vol_start(t->vol))) {
		err_set(err, errlen, "starting the volume: %s", strerror(-r));
		return r;
	}
	t->size = vol_geom(t->vol)->capacity;
	if (o->create_size) {
		if (o->create_size > t->size) {
			err_set(err, errlen, "-c %llu: larger than the volume (%llu bytes)",
				(unsigned long long)o->create_size, (unsigned long long)t->size);
			return -EINVAL;
		}
		t->size = o->create_size;
	}
	return 0;
}

/* ---- fsvol counters at the window's edges ---- */
struct below_src {
	struct vol *vol;   /* in-process */
	char dir[4096];    /* or a mount */
	struct stats_snap *a, *b; /* [ndev] */
	/* Conservation holds only at rest: a volume request completes after its
	 * member requests, so a snapshot taken mid-run can catch members ahead.
	 * These two are taken before the first I/O and after the last. */
	struct stats_snap *r0, *r1;
	unsigned ndev;
	int have_a, have_b, have_r0;
};

/* The window's edges sampled from the worker, at virtual instants (--virtual). */
struct edge_ctx {
	struct below_src *src;
	struct bench_result *res;
	unsigned nt;
	struct bench_cpu_raw **cpu[2];
	unsigned *ncpu[2];
	char *err;
	size_t errlen;
};

static int below_snap(struct below_src *s, struct stats_snap *out, char *err, size_t errlen);

static void edge_sample(void *arg, int which)
{
	struct edge_ctx *x = arg;
	free(*x->cpu[which]);
	*x->cpu[which] = NULL;
	bench_cpu_read(x->cpu[which], x->ncpu[which]);
	for (unsigned i = 0; i < x->nt; i++) {
		struct below_src *s = &x->src[i];
		if (x->res->target[i].below && !below_snap(s, which ? s->b : s->a, x->err, x->errlen)) {
			if (which)
				s->have_b = 1;
			else
				s->have_a = 1;
		}
	}
}

static int below_snap(struct below_src *s, struct stats_snap *out, char *err, size_t errlen)
{
	if (s->vol) {
		uint64_t now = vol_clock(s->vol); /* the model's, in virtual time */
		stats_snapshot(vol_stats(s->vol), now, &out[0]);
		for (unsigned i = 0; i + 1 < s->ndev; i++) {
			struct member *m = vol_member(s->vol, i);
			if (m && m->stats)
				stats_snapshot(m->stats, now, &out[i + 1]);
			else
				memset(&out[i + 1], 0, sizeof(out[i + 1]));
			out[i + 1].t_ns = now;
		}
		return 0;
	}
	struct stats_doc doc;
	int r = bench_fsvol_read(s->dir, &doc, err, errlen);
	if (r)
		return r;
	for (unsigned i = 0; i < s->ndev; i++)
		if (i < doc.n)
			out[i] = doc.dev[i].snap;
	stats_doc_free(&doc);
	return 0;
}

static int below_init(struct below_src *s, struct bench_target *t, struct bench_below **out,
		      char *err, size_t errlen)
{
	struct bench_below *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*out = b;
	if (t->vol) {
		s->vol = t->vol;
		s->ndev = 1 + vol_nslots(t->vol);
		snprintf(b->level, sizeof(b->level), "%s", layout_level_name(vol_geom(t->vol)->level));
	} else {
		struct stats_doc doc;
		int r = bench_fsvol_read(s->dir, &doc, err, errlen);
		if (r)
			return r;
		s->ndev = (unsigned)doc.n;
		bench_fsvol_level(s->dir, b->level, sizeof(b->level));
		b->dev = calloc(s->ndev, sizeof(*b->dev));
		for (unsigned i = 0; b->dev && i < s->ndev; i++) {
			snprintf(b->dev[i].path, sizeof(b->dev[i].path), "%s", doc.dev[i].path ? doc.dev[i].path : "");
			snprintf(b->dev[i].state, sizeof(b->dev[i].state), "%s",
				 doc.dev[i].state ? doc.dev[i].state : "");
		}
		stats_doc_free(&doc);
	}
	if (!b->dev)
		b->dev = calloc(s->ndev, sizeof(*b->dev));
	s->a = calloc(s->ndev, sizeof(*s->a));
	s->b = calloc(s->ndev, sizeof(*s->b));
	s->r0 = calloc(s->ndev, sizeof(*s->r0));
	s->r1 = calloc(s->ndev, sizeof(*s->r1));
	if (!b->dev || !s->a || !s->b || !s->r0 || !s->r1)
		return -ENOMEM;
	b->ndev = s->ndev;
	for (unsigned i = 0; i < s->ndev; i++) {
		struct bench_below_dev *d = &b->dev[i];
		if (i == 0) {
			snprintf(d->name, sizeof(d->name), "volume");
			snprintf(d->path, sizeof(d->path), "%.255s", t->path);
		}
		else
			snprintf(d->name, sizeof(d->name), "m%u", i - 1);
		if (t->vol && i) {
			struct member *m = vol_member(t->vol, i - 1);
			snprintf(d->path, sizeof(d->path), "%.255s", m ? m->path : "(missing)");
			snprintf(d->state, sizeof(d->state), "%s", vol_slot_state(t->vol, i - 1));
		}
	}
	return 0;
}

static void below_finish(struct below_src *s, struct bench_below *b, char *err, size_t errlen)
{
	for (unsigned i = 0; i < s->ndev; i++) {
		stats_snap_sub(&s->b[i], &s->a[i], &b->dev[i].d);
		if (stats_rates_compute(&s->a[i], &s->b[i], &b->dev[i].r))
			memset(&b->dev[i].r, 0, sizeof(b->dev[i].r));
	}
	/* conservation over the whole run, from the snapshots at rest */
	struct bench_below rest = *b;
	struct bench_below_dev *dev = calloc(s->ndev, sizeof(*dev));
	if (!s->have_r0 || !dev || below_snap(s, s->r1, err, errlen)) {
		free(dev);
		bench_conserve(b);
		return;
	}
	for (unsigned i = 0; i < s->ndev; i++)
		stats_snap_sub(&s->r1[i], &s->r0[i], &dev[i].d);
	rest.dev = dev;
	bench_conserve(&rest);
	memcpy(b->cons, rest.cons, sizeof(b->cons));
	b->ncons = rest.ncons;
	free(dev);
}

/* Before any I/O: does this run read never-written blocks that no model hides? */
static void holes_warn(struct bench_target_result *tr, const struct below_src *src, const struct bench_opts *o)
{
	char spec[256], *paths[BENCH_MAX_MEMBERS];
	unsigned n = 0;
	uint64_t hi = o->max_off && o->max_off < tr->size ? o->max_off : tr->size;
	if (o->nmembers) {
		if (bench_model_hides(o->model))
			return;
		for (n = 0; n < o->nmembers; n++)
			paths[n] = o->members[n];
	} else {
		bench_fsvol_model(src->dir, spec, sizeof(spec));
		if (bench_model_hides(spec))
			return;
		for (unsigned i = 1; i < tr->below->ndev && n < BENCH_MAX_MEMBERS; i++)
			paths[n++] = tr->below->dev[i].path;
	}
	bench_holes_check(paths, n, o->base, hi, o->write_pct == 100, tr->holes, sizeof(tr->holes));
}

static const struct bench_engine_ops *engine_of(const struct bench_opts *o)
{
	return o->trace ? &bench_replay_ops : o->nmembers ? &bench_volume_ops : &bench_uring_ops;
}

/* ---- progress ---- */
static void progress(const struct bench_clock *c, struct bench_worker *w, unsigned nw, uint64_t now,
		     uint64_t *last_done, uint64_t *last_t)
{
	uint64_t done = 0;
	for (unsigned i = 0; i < nw; i++)
		done += atomic_load_explicit(&w[i].done, memory_order_relaxed);
	double total = (double)(c->t_end - c->t_start) / 1e9, el = (double)(now - c->t_start) / 1e9;
	double iops = now > *last_t ? (double)(done - *last_done) * 1e9 / (double)(now - *last_t) : 0;
	const char *phase = now < c->t_meas ? "warm-up" : now < c->t_meas_end ? "measuring" : "cool-down";
	if (w->o->trace) { /* a replay ends with its trace: the share of requests done */
		double frac = (double)done / (double)w->o->trace->n;
		total = frac > 0 ? el / frac : 0;
		phase = "replaying";
	}
	if (w->o->progress)
		w->o->progress(w->o->progress_arg, total > 0 ? el / total : 1, el, iops);
	else
		fprintf(stderr, "\r%3.0f%%  %.1fs elapsed  ETA %.1fs  %.0f IOPS  (%s)\033[K",
			total > 0 ? 100 * el / total : 100, el, total > el ? total - el : 0, iops, phase);
	*last_done = done;
	*last_t = now;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000), (long)(t_ns % 1000000000) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t secs_ns(double s) { return (uint64_t)(s * 1e9 + 0.5); }

void bench_result_free(struct bench_result *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->ntargets; i++) {
		if (r->target[i].below)
			free(r->target[i].below->dev);
		free(r->target[i].below);
	}
	for (unsigned t = 0; r->thread && t < r->nthreads; t++)
		free(r->thread[t].iv);
	free(r->thread);
	free(r->cpu);
	free(r->req);
	free(r);
}

/* A core went on- or offline between the two samples: no table then. */
static int cpu_ids_differ(const struct bench_cpu_raw *a, const struct bench_cpu_raw *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].id != b[i].id)
			return 1;
	return 0;
}

/* What every worker takes: its target t (number `target`), result row `thread`,
 * the clock, the options, the write source; -D: its I/Os per interval and its
 * row's (made by the row's first worker). 0 or -ENOMEM. */
static int worker_init(struct bench_worker *x, struct bench_clock *clk, const struct bench_opts *o,
		       struct bench_target *t, unsigned target, unsigned thread, const char *wsrc,
		       struct bench_result *res)
{
	x->clk = clk;
	x->o = o;
	x->tgt = t;
	x->thread = thread;
	x->op[0].lat_min = x->op[1].lat_min = UINT64_MAX;
	x->wsrc = wsrc;
	res->thread[thread].target = target;
	if (!o->iops_ms)
		return 0;
	x->iv_ns = (uint64_t)o->iops_ms * 1000000u;
	x->niv = res->niv;
	if (!(x->iv = calloc(2 * (size_t)x->niv, sizeof(*x->iv))) ||
	    (!res->thread[thread].iv && !(res->thread[thread].iv = calloc(2 * (size_t)x->niv, sizeof(uint64_t)))))
		return -ENOMEM;
	return 0;
}

/* One run's state, shared by the steps of bench_run. */
struct run {
	struct bench_opts o; /* the caller's, -F and the seed settled */
	struct bench_target tgt[BENCH_MAX_TARGETS];
	struct below_src src[BENCH_MAX_TARGETS];
	struct bench_clock clk;
	struct bench_worker *w;
	struct bench_result *res;
	struct bench_cpu_raw *cpu_a, *cpu_b;
	struct edge_ctx ex; /* --virtual: the worker samples the edges through it */
	char *wsrc;         /* -ZSIZE */
	unsigned ncpu_a, ncpu_b, nt, nw, started, nfixed;
	double pu_a, ps_a, pu_b, ps_b;
	int show, virt_pattern, sampled_a, sampled_b, proc_b; /* proc_b: process CPU sampled at the end */
	char *err;
	size_t errlen;
};

/* Target i opened (a file or device, or the in-process volume), its size
 * checked against the pattern, its engine and what is counted below it. */
static int run_target(struct run *x, unsigned i)
{
	const struct bench_opts *o = &x->o;
	struct bench_target *t = &x->tgt[i];
	struct bench_target_result *tr = &x->res->target[i];
	char *err = x->err;
	size_t errlen = x->errlen;
	int r;
	if (o->nmembers) {
		if (o->ntargets)
			snprintf(tr->path, sizeof(tr->path), "%s", o->targets[0]);
		else
			snprintf(tr->path, sizeof(tr->path), "fsvol:%s%s", o->members[0], o->nmembers > 1 ? ",..." : "");
		t->path = tr->path;
		r = open_volume(t, o, err, errlen);
	} else {
		snprintf(tr->path, sizeof(tr->path), "%s", o->targets[i]);
		t->path = tr->path;
		r = open_target(t, o, err, errlen);
	}
	if (r)
		return r;
	tr->size = t->size;
	struct bench_pattern probe;
	if (o->trace) {
		if ((r = bench_replay_fits(o, t->size, tr->path, err, errlen)))
			return r;
	} else if (bench_pattern_init(&probe, o, t->size, 0)) {
		if (o->base || o->max_off)
			err_set(err, errlen, "%s: no block of %llu bytes (-b) fits between -B %llu and %llu"
				" (-f, or the size %llu)", tr->path, (unsigned long long)o->block,
				(unsigned long long)o->base,
				(unsigned long long)(o->max_off && o->max_off < t->size ? o->max_off : t->size),
				(unsigned long long)t->size);
		else
			err_set(err, errlen, "%s: size %llu is smaller than the block size (-b %llu)",
				tr->path, (unsigned long long)t->size, (unsigned long long)o->block);
		return -EINVAL;
	}
	const struct bench_engine_ops *eng = engine_of(o);
	tr->engine = eng->name;
	tr->workers = o->threads * eng->workers_per_thread(o);
	x->nw += o->fixed ? o->fixed : tr->workers;
	if (o->fixed)
		tr->workers = o->fixed; /* the F threads, each also on the other targets */
	if (o->nmembers || bench_fsvol_mount_dir(t->path, x->src[i].dir, sizeof(x->src[i].dir)) == 0)
		r = below_init(&x->src[i], t, &tr->below, err, errlen);
	if (o->nmembers && !r && !(t->next_k = calloc(o->threads, sizeof(*t->next_k))))
		r = -ENOMEM;
	if (!r && tr->below)
		holes_warn(tr, &x->src[i], o);
	else if (!r && !o->nmembers && o->write_pct < 100)
		bench_holes_file(tr->path, o->base, o->max_off && o->max_off < tr->size ? o->max_off : tr->size,
				 tr->holes, sizeof(tr->holes));
	return r;
}

/* The workers and the result's rows: thread t of target i is result thread
 * i * threads + t; with -F (several targets, the uring engine) F-thread f
 * drives stream f x nt + i for each target i, and that row is thread f on
 * target i. */
static int run_workers(struct run *x)
{
	const struct bench_opts *o = &x->o;
	struct bench_result *res = x->res;
	unsigned nt = x->nt;
	int r = 0;
	res->nthreads = o->fixed ? o->fixed * nt : nt * o->threads;
	res->threads = x->nfixed ? x->nfixed : nt * o->threads;
	if (!(x->w = calloc(x->nw, sizeof(*x->w))) || !(res->thread = calloc(res->nthreads, sizeof(*res->thread))))
		return -ENOMEM;
	if (o->wbuf == BENCH_WBUF_SOURCE &&
	    !(x->wsrc = bench_buffers(&(struct bench_opts){ .block = o->wbuf_size, .wbuf = o->wbuf }, 1, o->seed)))
		return -ENOMEM;
	if (o->iops_ms) { /* -D: whole intervals in the window, and a partial one */
		uint64_t win = secs_ns(o->duration), iv = (uint64_t)o->iops_ms * 1000000u;
		res->niv = (unsigned)((win + iv - 1) / iv);
		res->niv_full = (unsigned)(win / iv);
	}
	for (unsigned f = 0; o->fixed && f < o->fixed; f++)
		for (unsigned i = 0; i < nt; i++) {
			struct bench_worker *w = &x->w[f * nt + i];
			int e = worker_init(w, &x->clk, o, &x->tgt[i], i, f * nt + i, x->wsrc, res);
			r = r ? r : e; /* the first error */
			w->lead = i == 0;
			w->nstreams = i == 0 ? nt : 0;
			res->thread[w->thread].id = f;
			bench_pattern_init(&w->pat, o, x->tgt[i].size, f);
		}
	for (unsigned i = 0, k = 0; !o->fixed && i < nt; i++) {
		unsigned per = engine_of(o)->workers_per_thread(o);
		for (unsigned t = 0; t < o->threads; t++)
			for (unsigned s = 0; s < per; s++, k++) {
				struct bench_worker *w = &x->w[k];
				int e = worker_init(w, &x->clk, o, &x->tgt[i], i, i * o->threads + t, x->wsrc, res);
				r = r ? r : e;
				w->lead = 1;
				res->thread[w->thread].id = w->thread;
				w->slot = s;
				if (!o->trace)
					bench_pattern_init(&w->pat, o, x->tgt[i].size, t);
			}
	}
	return r;
}

/* The OS threads started (one per lead worker) and waited on until each
 * is set up; then the snapshots at rest, the window set and the gate
 * opened. The first error starting a thread, or 0. */
static int run_start(struct run *x)
{
	const struct bench_opts *o = &x->o;
	struct bench_clock *clk = &x->clk;
	int r = 0;
	gate_ready = 0;
	gate_open = 0;
	/* the window is unknown until everyone is set up: nothing counts */
	clk->t_meas = clk->t_meas_end = clk->t_end = UINT64_MAX;
	unsigned nos = 0; /* OS threads started */
	for (; x->started < x->nw; x->started++) {
		struct bench_worker *w = &x->w[x->started];
		if (!w->lead)
			continue;
		if ((r = -pthread_create(&w->tid, NULL, engine_of(o)->worker, w))) {
			err_set(x->err, x->errlen, "cannot start thread %u: %s", nos, strerror(-r));
			break;
		}
		nos++;
	}
	pthread_mutex_lock(&gate_lock);
	while (gate_ready < nos)
		pthread_cond_wait(&gate_cond, &gate_lock);
	for (unsigned i = 0; i < x->started; i++)
		if (x->w[i].error)
			atomic_store(&clk->stop, 1);
	if (r)
		atomic_store(&clk->stop, 1);
	for (unsigned i = 0; i < x->nt; i++)
		if (x->res->target[i].below && !below_snap(&x->src[i], x->src[i].r0, x->err, x->errlen))
			x->src[i].have_r0 = 1;
	bench_cpu_read(&x->cpu_a, &x->ncpu_a);
	x->ex = (struct edge_ctx){ x->src, x->res, x->nt, { &x->cpu_a, &x->cpu_b }, { &x->ncpu_a, &x->ncpu_b },
				   x->err, x->errlen };
	x->virt_pattern = o->virtual_time && !o->trace;
	if (x->virt_pattern) {
		clk->edge = edge_sample;
		clk->edge_arg = &x->ex;
	}
	clk->t_start = stats_now();
	clk->t_meas = clk->t_start + secs_ns(o->warmup);
	clk->t_meas_end = clk->t_meas + secs_ns(o->duration);
	clk->t_end = clk->t_meas_end + secs_ns(o->cooldown);
	if (o->trace) /* measured from the first request to the last: the replay ends the run */
		clk->t_meas = clk->t_start, clk->t_meas_end = clk->t_end = UINT64_MAX - 1;
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	return r;
}

/* CPU (the machine's and the process's) and the counters below each target
 * at one edge of the window: a (its start) or b (its end). */
static void run_sample(struct run *x, int end)
{
	if (!end) {
		free(x->cpu_a);
		x->cpu_a = NULL;
	}
	bench_cpu_read(end ? &x->cpu_b : &x->cpu_a, end ? &x->ncpu_b : &x->ncpu_a);
	bench_proc_cpu(end ? &x->pu_b : &x->pu_a, end ? &x->ps_b : &x->ps_a);
	x->proc_b |= end;
	for (unsigned i = 0; i < x->nt; i++) {
		struct below_src *s = &x->src[i];
		if (x->res->target[i].below && !below_snap(s, end ? s->b : s->a, x->err, x->errlen))
			*(end ? &s->have_b : &s->have_a) = 1;
	}
	*(end ? &x->sampled_b : &x->sampled_a) = 1;
}

/* The main thread while the workers run: samples at the window's edges,
 * progress in between, until the end, a stop or (a replay) every worker's
 * end; then the workers joined. */
static void run_wait(struct run *x)
{
	const struct bench_opts *o = &x->o;
	struct bench_clock *clk = &x->clk;
	if (o->trace) { /* a replay is measured from before its first request */
		for (unsigned i = 0; i < x->nt; i++)
			if (x->src[i].have_r0) {
				memcpy(x->src[i].a, x->src[i].r0, x->src[i].ndev * sizeof(*x->src[i].a));
				x->src[i].have_a = 1;
			}
		bench_proc_cpu(&x->pu_a, &x->ps_a);
		x->sampled_a = 1;
	}
	if (x->virt_pattern) /* the worker samples the edges: wait for it */
		x->sampled_a = x->sampled_b = 1;
	uint64_t last_done = 0, last_t = clk->t_start, next_tick = clk->t_start + 500000000ull;
	while (x->virt_pattern && !atomic_load(&clk->stop) && atomic_load(&clk->finished) < x->started) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	while (!x->virt_pattern && !atomic_load(&clk->stop)) {
		uint64_t now = stats_now();
		if (o->trace && atomic_load(&clk->finished) == x->started)
			clk->t_meas_end = clk->t_end = now; /* the window closes here */
		if (!x->sampled_a && now >= clk->t_meas)
			run_sample(x, 0);
		if (!x->sampled_b && now >= clk->t_meas_end)
			run_sample(x, 1);
		if (now >= clk->t_end)
			break;
		if (x->show && now >= next_tick) {
			progress(clk, x->w, x->nw, now, &last_done, &last_t);
			next_tick += 500000000ull;
		}
		uint64_t wake = clk->t_end;
		if (!x->sampled_a && clk->t_meas < wake)
			wake = clk->t_meas;
		if (!x->sampled_b && clk->t_meas_end < wake)
			wake = clk->t_meas_end;
		if (x->show && next_tick < wake)
			wake = next_tick;
		/* short naps so an error stops the wait early */
		uint64_t nap = o->trace ? 10000000ull : 100000000ull; /* a replay's end is its own */
		if (wake > now + nap)
			wake = now + nap;
		sleep_until(wake);
	}
	if (x->show && !o->progress)
		fprintf(stderr, "\r\033[K");
	for (unsigned i = 0; i < x->started; i++)
		if (x->w[i].lead)
			pthread_join(x->w[i].tid, NULL);
}

/* The workers' figures summed into the result's rows, with the CPU and the
 * counters below each target over the window. */
static void run_gather(struct run *x)
{
	const struct bench_opts *o = &x->o;
	struct bench_result *res = x->res;
	struct bench_worker *w = x->w;
	res->test_s = o->duration;
	if (o->trace) {
		uint64_t last = x->clk.t_start;
		for (unsigned i = 0; i < x->nw; i++) {
			if (w[i].t_done > last)
				last = w[i].t_done;
			res->skipped += w[i].skipped;
			if (w[i].late_max > res->late_max_ns)
				res->late_max_ns = w[i].late_max;
		}
		res->test_s = (double)(last - x->clk.t_start) / 1e9;
		res->nreq = o->trace->n;
		res->req = w[0].req; /* one worker replays */
		w[0].req = NULL;
		if (res->nreq > res->skipped)
			res->late_mean_ns = (double)w[0].late_sum / (double)(res->nreq - res->skipped);
	}
	for (unsigned i = 0; i < x->nw; i++)
		for (int op = 0; op < 2; op++) {
			if (!w[i].op[op].ios)
				continue;
			struct bench_opstat *dst = &res->thread[w[i].thread].op[op];
			bench_opstat_add(dst, &w[i].op[op]);
		}
	for (unsigned i = 0; i < x->nw; i++)
		for (unsigned j = 0; w[i].iv && j < 2 * w[i].niv; j++)
			res->thread[w[i].thread].iv[j] += w[i].iv[j];
	if (x->sampled_a && x->proc_b) {
		res->proc_user_s = x->pu_b - x->pu_a;
		res->proc_sys_s = x->ps_b - x->ps_a;
		res->have_proc = 1;
	}
	if (x->cpu_a && x->cpu_b && x->ncpu_a == x->ncpu_b && !cpu_ids_differ(x->cpu_a, x->cpu_b, x->ncpu_a) &&
	    (res->cpu = calloc(x->ncpu_a, sizeof(*res->cpu)))) {
		res->ncpu = x->ncpu_a;
		bench_cpu_delta(x->cpu_a, x->cpu_b, x->ncpu_a, res->cpu, &res->cpu_avg);
	}
	for (unsigned i = 0; i < x->nt; i++)
		if (res->target[i].below && x->src[i].have_a && x->src[i].have_b)
			below_finish(&x->src[i], res->target[i].below, x->err, x->errlen);
		else if (res->target[i].below) {
			free(res->target[i].below->dev);
			free(res->target[i].below);
			res->target[i].below = NULL;
		}
}

static void run_free(struct run *x)
{
	for (unsigned i = 0; i < x->nt; i++) {
		if (x->tgt[i].fd >= 0)
			close(x->tgt[i].fd);
		if (x->tgt[i].vol)
			vol_close(x->tgt[i].vol);
		free(x->tgt[i].next_k);
		free(x->src[i].a);
		free(x->src[i].b);
		free(x->src[i].r0);
		free(x->src[i].r1);
	}
	for (unsigned i = 0; x->w && i < x->nw; i++) {
		free(x->w[i].req);
		free(x->w[i].iv);
	}
	free(x->w);
	free(x->wsrc);
	free(x->cpu_a);
	free(x->cpu_b);
}

int bench_run(const struct bench_opts *opts, struct bench_result **out, char *err, size_t errlen)
{
	struct run *x = calloc(1, sizeof(*x));
	int r = 0;
	err[0] = 0;
	*out = NULL;
	if (!x || !(x->res = calloc(1, sizeof(*x->res)))) {
		free(x);
		return -ENOMEM;
	}
	struct bench_opts *o = &x->o;
	*o = *opts;
	x->err = err;
	x->errlen = errlen;
	x->show = o->progress || (!o->quiet && isatty(STDERR_FILENO));
	if (o->seed_time)
		o->seed = (uint64_t)time(NULL) ^ stats_now();
	/* -F on one target is -t: the thread model differs only with several */
	x->nfixed = o->fixed;
	if (o->fixed && (o->nmembers || o->ntargets == 1)) {
		o->threads = o->fixed;
		o->fixed = 0;
	} else if (o->fixed) {
		o->threads = 1; /* per target and F-thread: one stream */
	}
	x->res->seed = o->seed;
	x->nt = x->res->ntargets = o->nmembers ? 1 : o->ntargets;
	for (unsigned i = 0; i < BENCH_MAX_TARGETS; i++)
		x->tgt[i].fd = -1;
	for (unsigned i = 0; i < x->nt && !r; i++)
		r = run_target(x, i);
	if (!r)
		r = run_workers(x);
	if (!r) {
		r = run_start(x);
		run_wait(x);
	}
	for (unsigned i = 0; i < x->started && !r; i++)
		if (x->w[i].error) {
			err_set(err, errlen, "%s: %s", x->res->target[x->res->thread[x->w[i].thread].target].path,
				x->w[i].errmsg);
			r = x->w[i].error;
		}
	if (!r) {
		err[0] = 0;
		run_gather(x);
	}
	run_free(x);
	if (r) {
		if (!err[0])
			err_set(err, errlen, "%s", strerror(-r));
		bench_result_free(x->res);
	} else {
		*out = x->res;
	}
	free(x);
	return r;
}
