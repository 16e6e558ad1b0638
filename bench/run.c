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

int bench_run(const struct bench_opts *opts, struct bench_result **out, char *err, size_t errlen)
{
	struct bench_opts o = *opts;
	struct bench_target tgt[BENCH_MAX_TARGETS] = { 0 };
	struct below_src src[BENCH_MAX_TARGETS] = { 0 };
	struct bench_clock clk = { 0 };
	struct bench_worker *w = NULL;
	struct bench_cpu_raw *cpu_a = NULL, *cpu_b = NULL;
	char *wsrc = NULL; /* -ZSIZE */
	unsigned ncpu_a = 0, ncpu_b = 0, nt, nw = 0, started = 0;
	double pu_a = 0, ps_a = 0, pu_b = 0, ps_b = 0;
	int r = 0, show = o.progress || (!o.quiet && isatty(STDERR_FILENO));
	struct bench_result *res = calloc(1, sizeof(*res));

	err[0] = 0;
	*out = NULL;
	if (!res)
		return -ENOMEM;
	if (o.seed_time)
		o.seed = (uint64_t)time(NULL) ^ stats_now();
	/* -F on one target is -t: the thread model differs only with several */
	unsigned nfixed = o.fixed;
	if (o.fixed && (o.nmembers || o.ntargets == 1)) {
		o.threads = o.fixed;
		o.fixed = 0;
	} else if (o.fixed) {
		o.threads = 1; /* per target and F-thread: one stream */
	}
	res->seed = o.seed;
	nt = o.nmembers ? 1 : o.ntargets;
	res->ntargets = nt;
	for (unsigned i = 0; i < BENCH_MAX_TARGETS; i++)
		tgt[i].fd = -1;

	/* targets */
	for (unsigned i = 0; i < nt && !r; i++) {
		struct bench_target_result *tr = &res->target[i];
		if (o.nmembers) {
			if (o.ntargets)
				snprintf(tr->path, sizeof(tr->path), "%s", o.targets[0]);
			else
				snprintf(tr->path, sizeof(tr->path), "fsvol:%s%s", o.members[0],
					 o.nmembers > 1 ? ",..." : "");
			tgt[i].path = tr->path;
			r = open_volume(&tgt[i], &o, err, errlen);
		} else {
			snprintf(tr->path, sizeof(tr->path), "%s", o.targets[i]);
			tgt[i].path = tr->path;
			r = open_target(&tgt[i], &o, err, errlen);
		}
		if (r)
			break;
		tr->size = tgt[i].size;
		struct bench_pattern probe;
		if (o.trace) {
			if ((r = bench_replay_fits(&o, tgt[i].size, tr->path, err, errlen)))
				break;
		} else if (bench_pattern_init(&probe, &o, tgt[i].size, 0)) {
			if (o.base || o.max_off)
				err_set(err, errlen, "%s: no block of %llu bytes (-b) fits between -B %llu and %llu"
					" (-f, or the size %llu)", tr->path, (unsigned long long)o.block,
					(unsigned long long)o.base,
					(unsigned long long)(o.max_off && o.max_off < tgt[i].size ? o.max_off
												   : tgt[i].size),
					(unsigned long long)tgt[i].size);
			else
				err_set(err, errlen, "%s: size %llu is smaller than the block size (-b %llu)",
					tr->path, (unsigned long long)tgt[i].size, (unsigned long long)o.block);
			r = -EINVAL;
			break;
		}
		const struct bench_engine_ops *eng = engine_of(&o);
		tr->engine = eng->name;
		tr->workers = o.threads * eng->workers_per_thread(&o);
		nw += o.fixed ? o.fixed : tr->workers;
		if (o.fixed)
			tr->workers = o.fixed; /* the F threads, each also on the other targets */
		if (o.nmembers || bench_fsvol_mount_dir(tgt[i].path, src[i].dir, sizeof(src[i].dir)) == 0)
			r = below_init(&src[i], &tgt[i], &tr->below, err, errlen);
		if (o.nmembers && !r && !(tgt[i].next_k = calloc(o.threads, sizeof(*tgt[i].next_k))))
			r = -ENOMEM;
		if (!r && tr->below)
			holes_warn(tr, &src[i], &o);
		else if (!r && !o.nmembers && o.write_pct < 100)
			bench_holes_file(tr->path, o.base, o.max_off && o.max_off < tr->size ? o.max_off : tr->size,
					 tr->holes, sizeof(tr->holes));
	}
	res->nthreads = o.fixed ? o.fixed * nt : nt * o.threads;
	res->threads = nfixed ? nfixed : nt * o.threads;
	if (!r && (!(w = calloc(nw, sizeof(*w))) ||
		   !(res->thread = calloc(res->nthreads, sizeof(*res->thread)))))
		r = -ENOMEM;
	if (!r && o.wbuf == BENCH_WBUF_SOURCE && !(wsrc = bench_buffers(&(struct bench_opts){ .block = o.wbuf_size,
											   .wbuf = o.wbuf }, 1, o.seed)))
		r = -ENOMEM;
	if (r)
		goto out;

	if (o.iops_ms) { /* -D: whole intervals in the window, and a partial one */
		uint64_t win = secs_ns(o.duration), iv = (uint64_t)o.iops_ms * 1000000u;
		res->niv = (unsigned)((win + iv - 1) / iv);
		res->niv_full = (unsigned)(win / iv);
	}
	/* workers: thread t of target i is result thread i * threads + t */
	gate_ready = 0;
	gate_open = 0;
	/* -F (several targets, the uring engine): F-thread f drives stream f x nt + i
	 * for each target i, and that row of the result is thread f on target i */
	for (unsigned f = 0; o.fixed && f < o.fixed; f++)
		for (unsigned i = 0; i < nt; i++) {
			struct bench_worker *x = &w[f * nt + i];
			int e = worker_init(x, &clk, &o, &tgt[i], i, f * nt + i, wsrc, res);
			r = r ? r : e; /* the first error */
			x->lead = i == 0;
			x->nstreams = i == 0 ? nt : 0;
			res->thread[x->thread].id = f;
			bench_pattern_init(&x->pat, &o, tgt[i].size, f);
		}
	for (unsigned i = 0, k = 0; !o.fixed && i < nt; i++) {
		const struct bench_engine_ops *eng = engine_of(&o);
		unsigned per = eng->workers_per_thread(&o);
		for (unsigned t = 0; t < o.threads; t++)
			for (unsigned s = 0; s < per; s++, k++) {
				struct bench_worker *x = &w[k];
				int e = worker_init(x, &clk, &o, &tgt[i], i, i * o.threads + t, wsrc, res);
				r = r ? r : e;
				x->lead = 1;
				res->thread[x->thread].id = x->thread;
				x->slot = s;
				if (!o.trace)
					bench_pattern_init(&x->pat, &o, tgt[i].size, t);
			}
	}
	if (r)
		goto out;
	/* the window is unknown until everyone is set up: nothing counts */
	clk.t_meas = clk.t_meas_end = clk.t_end = UINT64_MAX;
	unsigned nos = 0; /* OS threads started: one per lead worker */
	for (; started < nw; started++) {
		if (!w[started].lead)
			continue;
		if ((r = -pthread_create(&w[started].tid, NULL, engine_of(&o)->worker, &w[started]))) {
			err_set(err, errlen, "cannot start thread %u: %s", nos, strerror(-r));
			break;
		}
		nos++;
	}
	pthread_mutex_lock(&gate_lock);
	while (gate_ready < nos)
		pthread_cond_wait(&gate_cond, &gate_lock);
	for (unsigned i = 0; i < started; i++)
		if (w[i].error)
			atomic_store(&clk.stop, 1);
	if (r)
		atomic_store(&clk.stop, 1);
	for (unsigned i = 0; i < nt; i++)
		if (res->target[i].below && !below_snap(&src[i], src[i].r0, err, errlen))
			src[i].have_r0 = 1;
	bench_cpu_read(&cpu_a, &ncpu_a);
	struct edge_ctx ex = { src, res, nt, { &cpu_a, &cpu_b }, { &ncpu_a, &ncpu_b }, err, errlen };
	int virt_pattern = o.virtual_time && !o.trace;
	if (virt_pattern) {
		clk.edge = edge_sample;
		clk.edge_arg = &ex;
	}
	clk.t_start = stats_now();
	clk.t_meas = clk.t_start + secs_ns(o.warmup);
	clk.t_meas_end = clk.t_meas + secs_ns(o.duration);
	clk.t_end = clk.t_meas_end + secs_ns(o.cooldown);
	if (o.trace) /* measured from the first request to the last: the replay ends the run */
		clk.t_meas = clk.t_start, clk.t_meas_end = clk.t_end = UINT64_MAX - 1;
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);

	/* the main thread: samples at the window's edges, progress in between */
	int sampled_a = 0, sampled_b = 0, proc_b = 0; /* proc_b: process CPU sampled at the end */
	if (o.trace) { /* a replay is measured from before its first request */
		for (unsigned i = 0; i < nt; i++)
			if (src[i].have_r0) {
				memcpy(src[i].a, src[i].r0, src[i].ndev * sizeof(*src[i].a));
				src[i].have_a = 1;
			}
		bench_proc_cpu(&pu_a, &ps_a);
		sampled_a = 1;
	}
	if (virt_pattern) /* the worker samples the edges: wait for it */
		sampled_a = sampled_b = 1;
	uint64_t last_done = 0, last_t = clk.t_start, next_tick = clk.t_start + 500000000ull;
	while (virt_pattern && !atomic_load(&clk.stop) && atomic_load(&clk.finished) < started) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	while (!virt_pattern && !atomic_load(&clk.stop)) {
		uint64_t now = stats_now();
		if (o.trace && atomic_load(&clk.finished) == started)
			clk.t_meas_end = clk.t_end = now; /* the window closes here */
		if (!sampled_a && now >= clk.t_meas) {
			free(cpu_a);
			cpu_a = NULL;
			bench_cpu_read(&cpu_a, &ncpu_a);
			bench_proc_cpu(&pu_a, &ps_a);
			for (unsigned i = 0; i < nt; i++)
				if (res->target[i].below && !below_snap(&src[i], src[i].a, err, errlen))
					src[i].have_a = 1;
			sampled_a = 1;
		}
		if (!sampled_b && now >= clk.t_meas_end) {
			bench_cpu_read(&cpu_b, &ncpu_b);
			bench_proc_cpu(&pu_b, &ps_b);
			proc_b = 1;
			for (unsigned i = 0; i < nt; i++)
				if (res->target[i].below && !below_snap(&src[i], src[i].b, err, errlen))
					src[i].have_b = 1;
			sampled_b = 1;
		}
		if (now >= clk.t_end)
			break;
		if (show && now >= next_tick) {
			progress(&clk, w, nw, now, &last_done, &last_t);
			next_tick += 500000000ull;
		}
		uint64_t wake = clk.t_end;
		if (!sampled_a && clk.t_meas < wake)
			wake = clk.t_meas;
		if (!sampled_b && clk.t_meas_end < wake)
			wake = clk.t_meas_end;
		if (show && next_tick < wake)
			wake = next_tick;
		/* short naps so an error stops the wait early */
		uint64_t nap = o.trace ? 10000000ull : 100000000ull; /* a replay's end is its own */
		if (wake > now + nap)
			wake = now + nap;
		sleep_until(wake);
	}
	if (show && !o.progress)
		fprintf(stderr, "\r\033[K");
	for (unsigned i = 0; i < started; i++)
		if (w[i].lead)
			pthread_join(w[i].tid, NULL);
	for (unsigned i = 0; i < started && !r; i++)
		if (w[i].error) {
			err_set(err, errlen, "%s: %s", res->target[res->thread[w[i].thread].target].path, w[i].errmsg);
			r = w[i].error;
		}
	if (r)
		goto out;
	err[0] = 0;

	/* gather */
	res->test_s = o.duration;
	if (o.trace) {
		uint64_t last = clk.t_start;
		for (unsigned i = 0; i < nw; i++) {
			if (w[i].t_done > last)
				last = w[i].t_done;
			res->skipped += w[i].skipped;
			if (w[i].late_max > res->late_max_ns)
				res->late_max_ns = w[i].late_max;
		}
		res->test_s = (double)(last - clk.t_start) / 1e9;
		res->nreq = o.trace->n;
		res->req = w[0].req; /* one worker replays */
		w[0].req = NULL;
		if (res->nreq > res->skipped)
			res->late_mean_ns = (double)w[0].late_sum / (double)(res->nreq - res->skipped);
	}
	for (unsigned i = 0; i < nw; i++)
		for (int op = 0; op < 2; op++) {
			if (!w[i].op[op].ios)
				continue;
			struct bench_opstat *dst = &res->thread[w[i].thread].op[op];
			bench_opstat_add(dst, &w[i].op[op]);
		}
	for (unsigned i = 0; i < nw; i++)
		for (unsigned j = 0; w[i].iv && j < 2 * w[i].niv; j++)
			res->thread[w[i].thread].iv[j] += w[i].iv[j];
	if (sampled_a && proc_b) {
		res->proc_user_s = pu_b - pu_a;
		res->proc_sys_s = ps_b - ps_a;
		res->have_proc = 1;
	}
	if (cpu_a && cpu_b && ncpu_a == ncpu_b && !cpu_ids_differ(cpu_a, cpu_b, ncpu_a) &&
	    (res->cpu = calloc(ncpu_a, sizeof(*res->cpu)))) {
		res->ncpu = ncpu_a;
		bench_cpu_delta(cpu_a, cpu_b, ncpu_a, res->cpu, &res->cpu_avg);
	}
	for (unsigned i = 0; i < nt; i++)
		if (res->target[i].below && src[i].have_a && src[i].have_b)
			below_finish(&src[i], res->target[i].below, err, errlen);
		else if (res->target[i].below) {
			free(res->target[i].below->dev);
			free(res->target[i].below);
			res->target[i].below = NULL;
		}
out:
	for (unsigned i = 0; i < nt; i++) {
		if (tgt[i].fd >= 0)
			close(tgt[i].fd);
		if (tgt[i].vol)
			vol_close(tgt[i].vol);
		free(tgt[i].next_k);
		free(src[i].a);
		free(src[i].b);
		free(src[i].r0);
		free(src[i].r1);
	}
	for (unsigned i = 0; w && i < nw; i++) {
		free(w[i].req);
		free(w[i].iv);
	}
	free(w);
	free(wsrc);
	free(cpu_a);
	free(cpu_b);
	if (r) {
		if (!err[0])
			err_set(err, errlen, "%s", strerror(-r));
		bench_result_free(res);
		return r;
	}
	*out = res;
	return 0;
}
