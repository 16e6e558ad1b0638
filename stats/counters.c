/* counters: devices, per-thread shards, the begin/end hooks, snapshots, reset.
 *
 * Hot path design (numbers in docs/counters.md, "Cost"):
 *  - Every thread that calls a hook claims one of STATS_SLOTS exclusive shard
 *    slots (global, the same index in every device) on first use and frees it
 *    when it exits (pthread key destructor). The owner is the only writer of
 *    its shard, so counters are updated with a relaxed load + store: no locked
 *    instruction. Threads beyond STATS_SLOTS share one extra shard updated with
 *    atomic fetch_add, and retry for a free slot every 4096 calls.
 *  - queue_ns needs no shared state: completed requests contribute their
 *    latency (read_ns + write_ns + flush_ns); in-flight ones contribute
 *    now - start, computed at snapshot time from per-shard sums of start times
 *    (begun_t - ended_t, modulo 2^64, exact).
 *  - busy_ns needs to know when the device goes 0 -> 1 -> 0 requests: one
 *    per-device atomic in-flight count, changed by CAS while it stays >= 1,
 *    and under a tiny spinlock for the 0 <-> 1 transitions, which are then
 *    serialised and paired, so busy_ns is the exact integral.
 *  - Sequential detection: one relaxed load + store of the device's last end
 *    offset (a racing pair may miss a sequential hit; counts are never torn).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "stats/stats.h"

#define STATS_SLOTS 16         /* exclusive shards; index STATS_SLOTS is shared */
#define SHARED_RETRY_MASK 4095 /* a shared-shard thread retries a claim this often */
#define CACHELINE 64

struct shard {
	_Alignas(CACHELINE) _Atomic uint64_t begun, begun_t; /* begin side */
	_Alignas(CACHELINE) _Atomic uint64_t ended, ended_t;  /* end side */
	_Atomic uint64_t ops[STATS_NOPS], bytes[2], ns[STATS_NOPS], seq[2], errors;
	_Atomic uint64_t size[2][STATS_SIZE_BUCKETS];
	_Atomic uint64_t lat[STATS_NOPS][STATS_LAT_BUCKETS];
};

struct stats_dev {
	/* the one line every request on this device touches */
	_Alignas(CACHELINE) _Atomic uint64_t inflight;
	_Atomic uint64_t last_end;
	_Atomic int lock;      /* guards the three fields below */
	uint64_t busy_acc;     /* completed busy periods */
	uint64_t busy_since;   /* start of the current busy period */
	uint64_t idle_mark;    /* end of the last one: periods never overlap */
	_Alignas(CACHELINE) pthread_mutex_t base_lock;
	struct stats_snap *base; /* raw totals at the last reset */
	struct shard *shards;    /* STATS_SLOTS + 1 */
};

/* ---- slot ownership ---- */

static _Atomic unsigned char slot_used[STATS_SLOTS];
static _Thread_local unsigned tls_slot; /* 0: none yet, else shard index + 1 */
static _Thread_local unsigned tls_retry;
static pthread_key_t slot_key;
static int slot_key_ok;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;

static void slot_release(void *p)
{
	unsigned i = (unsigned)(uintptr_t)p - 1;
	/* hooks called later by this exiting thread go to the shared shard */
	tls_slot = STATS_SLOTS + 1;
	if (i < STATS_SLOTS)
		atomic_store_explicit(&slot_used[i], 0, memory_order_release);
}

static void slot_key_init(void)
{
	slot_key_ok = pthread_key_create(&slot_key, slot_release) == 0;
}

static unsigned slot_claim(void)
{
	pthread_once(&slot_once, slot_key_init);
	if (slot_key_ok) {
		for (unsigned i = 0; i < STATS_SLOTS; i++) {
			unsigned char z = 0;
			if (atomic_load_explicit(&slot_used[i], memory_order_relaxed) == 0 &&
			    atomic_compare_exchange_strong_explicit(&slot_used[i], &z, 1,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				if (pthread_setspecific(slot_key, (void *)(uintptr_t)(i + 1)) == 0)
					return i + 1;
				atomic_store_explicit(&slot_used[i], 0, memory_order_release);
				break;
			}
		}
	}
	return STATS_SLOTS + 1;
}

static inline unsigned my_shard(void)
{
	unsigned s = tls_slot;
	if (__builtin_expect(s == 0, 0) ||
	    (s == STATS_SLOTS + 1 && (++tls_retry & SHARED_RETRY_MASK) == 0))
		s = tls_slot = slot_claim();
	return s - 1;
}

/* owner: plain add (only writer); shared: locked add */
static inline __attribute__((always_inline)) void cadd(_Atomic uint64_t *p, uint64_t v, int excl)
{
	if (excl)
		atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v,
				      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t ld(const _Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

/* ---- busy-time transitions ---- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void dev_lock(struct stats_dev *d)
{
	unsigned spins = 0;
	while (atomic_exchange_explicit(&d->lock, 1, memory_order_acquire)) {
		while (atomic_load_explicit(&d->lock, memory_order_relaxed)) {
			if (++spins > 128) /* holder preempted: let it run */
				sched_yield();
			else
				cpu_relax();
		}
	}
}

static void dev_unlock(struct stats_dev *d)
{
	atomic_store_explicit(&d->lock, 0, memory_order_release);
}

static inline void busy_enter(struct stats_dev *d, uint64_t now)
{
	uint64_t n = atomic_load_explicit(&d->inflight, memory_order_relaxed);
	while (n != 0)
		if (atomic_compare_exchange_weak_explicit(&d->inflight, &n, n + 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return;
	dev_lock(d);
	if (atomic_fetch_add_explicit(&d->inflight, 1, memory_order_relaxed) == 0)
		d->busy_since = now > d->idle_mark ? now : d->idle_mark;
	dev_unlock(d);
}

static inline void busy_leave(struct stats_dev *d, uint64_t now)
{
	uint64_t n = atomic_load_explicit(&d->inflight, memory_order_relaxed);
	while (n > 1)
		if (atomic_compare_exchange_weak_explicit(&d->inflight, &n, n - 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return;
	dev_lock(d);
	n = atomic_fetch_sub_explicit(&d->inflight, 1, memory_order_relaxed);
	if (n == 1) {
		if (now > d->busy_since)
			d->busy_acc += now - d->busy_since;
		d->idle_mark = now > d->busy_since ? now : d->busy_since;
	} else if (n == 0) {
		/* an end without a begin: caller bug; keep the count sane */
		atomic_fetch_add_explicit(&d->inflight, 1, memory_order_relaxed);
	}
	dev_unlock(d);
}

/* ---- hooks ---- */

uint64_t stats_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) void shard_begin(struct shard *s, uint64_t now,
							      int excl)
{
	cadd(&s->begun, 1, excl);
	cadd(&s->begun_t, now, excl);
}

void stats_begin(struct stats_dev *d, uint64_t now)
{
	unsigned i = my_shard();
	if (i < STATS_SLOTS)
		shard_begin(&d->shards[i], now, 1);
	else
		shard_begin(&d->shards[i], now, 0);
	busy_enter(d, now);
}

static inline __attribute__((always_inline)) void
shard_end(struct stats_dev *d, struct shard *s, unsigned op, uint64_t offset, uint64_t bytes,
	  uint64_t start, uint64_t lat, int error, int excl)
{
	cadd(&s->ended, 1, excl);
	cadd(&s->ended_t, start, excl);
	cadd(&s->ops[op], 1, excl);
	cadd(&s->ns[op], lat, excl);
	cadd(&s->lat[op][stats_lat_bucket(lat)], 1, excl);
	if (op != STATS_FLUSH) {
		cadd(&s->bytes[op], bytes, excl);
		cadd(&s->size[op][stats_size_bucket(bytes)], 1, excl);
		uint64_t prev = atomic_load_explicit(&d->last_end, memory_order_relaxed);
		atomic_store_explicit(&d->last_end, offset + bytes, memory_order_relaxed);
		if (prev == offset)
			cadd(&s->seq[op], 1, excl);
	}
	if (error)
		cadd(&s->errors, 1, excl);
}

void stats_end(struct stats_dev *d, enum stats_op op, uint64_t offset, uint64_t bytes,
	       uint64_t start_ns, uint64_t now, int error)
{
	unsigned o = (unsigned)op < STATS_NOPS ? (unsigned)op : STATS_FLUSH;
	uint64_t lat = now > start_ns ? now - start_ns : 0;
	unsigned i = my_shard();
	if (i < STATS_SLOTS)
		shard_end(d, &d->shards[i], o, offset, bytes, start_ns, lat, error, 1);
	else
		shard_end(d, &d->shards[i], o, offset, bytes, start_ns, lat, error, 0);
	busy_leave(d, now);
}

/* ---- devices ---- */

struct stats_dev *stats_dev_create(void)
{
	struct stats_dev *d = aligned_alloc(CACHELINE, sizeof(*d));
	if (!d)
		return NULL;
	memset(d, 0, sizeof(*d));
	size_t sz = (STATS_SLOTS + 1) * sizeof(struct shard);
	d->shards = aligned_alloc(CACHELINE, sz);
	d->base = malloc(sizeof(*d->base));
	if (!d->shards || !d->base || pthread_mutex_init(&d->base_lock, NULL) != 0) {
		free(d->shards);
		free(d->base);
		free(d);
		return NULL;
	}
	/* touch every page now: first touch costs ~14 us a page on the hot path */
	memset(d->shards, 0, sz);
	memset(d->base, 0, sizeof(*d->base));
	atomic_store(&d->last_end, UINT64_MAX); /* the first request is not sequential */
	return d;
}

void stats_dev_destroy(struct stats_dev *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->base_lock);
	free(d->shards);
	free(d->base);
	free(d);
}

/* Raw totals since creation. Reads the end side of every shard before the
 * begin side so a racing request is never seen ended but not begun. */
static void snapshot_raw(struct stats_dev *d, uint64_t now, struct stats_snap *out)
{
	uint64_t ended = 0, ended_t = 0, begun = 0, begun_t = 0;
	memset(out, 0, sizeof(*out));
	out->t_ns = now;
	for (unsigned i = 0; i <= STATS_SLOTS; i++) {
		const struct shard *s = &d->shards[i];
		ended += ld(&s->ended);
		ended_t += ld(&s->ended_t);
		out->reads += ld(&s->ops[STATS_READ]);
		out->writes += ld(&s->ops[STATS_WRITE]);
		out->flushes += ld(&s->ops[STATS_FLUSH]);
		out->read_bytes += ld(&s->bytes[STATS_READ]);
		out->write_bytes += ld(&s->bytes[STATS_WRITE]);
		out->read_ns += ld(&s->ns[STATS_READ]);
		out->write_ns += ld(&s->ns[STATS_WRITE]);
		out->flush_ns += ld(&s->ns[STATS_FLUSH]);
		out->seq_reads += ld(&s->seq[STATS_READ]);
		out->seq_writes += ld(&s->seq[STATS_WRITE]);
		out->errors += ld(&s->errors);
		for (unsigned o = 0; o < 2; o++)
			for (unsigned b = 0; b < STATS_SIZE_BUCKETS; b++)
				out->size[o][b] += ld(&s->size[o][b]);
		for (unsigned o = 0; o < STATS_NOPS; o++)
			for (unsigned b = 0; b < STATS_LAT_BUCKETS; b++)
				out->lat[o][b] += ld(&s->lat[o][b]);
	}
	atomic_thread_fence(memory_order_acquire);
	for (unsigned i = 0; i <= STATS_SLOTS; i++) {
		begun += ld(&d->shards[i].begun);
		begun_t += ld(&d->shards[i].begun_t);
	}
	/* in flight: sum over them of (now - start); modular sums are exact */
	uint64_t n = begun - ended;
	int64_t part = (int64_t)(n * now - (begun_t - ended_t));
	if ((int64_t)n < 0 || part < 0)
		part = 0; /* a racing snapshot; never report a negative integral */
	out->queue_ns = out->read_ns + out->write_ns + out->flush_ns + (uint64_t)part;

	dev_lock(d);
	uint64_t inflight = atomic_load_explicit(&d->inflight, memory_order_relaxed);
	out->busy_ns = d->busy_acc;
	if (inflight > 0 && now > d->busy_since)
		out->busy_ns += now - d->busy_since;
	dev_unlock(d);
	out->inflight = inflight;
}

void stats_snapshot(const struct stats_dev *cd, uint64_t now, struct stats_snap *out)
{
	struct stats_dev *d = (struct stats_dev *)cd; /* locks only; counters are not changed */
	snapshot_raw(d, now, out);
	pthread_mutex_lock(&d->base_lock);
	stats_snap_sub(out, d->base, out);
	pthread_mutex_unlock(&d->base_lock);
	out->t_ns = now;
}

void stats_reset(struct stats_dev *d, uint64_t now)
{
	pthread_mutex_lock(&d->base_lock);
	snapshot_raw(d, now, d->base);
	pthread_mutex_unlock(&d->base_lock);
}

void stats_clock_restart(struct stats_dev *d)
{
	dev_lock(d);
	if (!atomic_load_explicit(&d->inflight, memory_order_relaxed))
		d->idle_mark = d->busy_since = 0;
	dev_unlock(d);
}

static inline uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

#define SNAP_SCALARS(X) \
	X(reads) X(writes) X(flushes) X(read_bytes) X(write_bytes) X(read_ns) X(write_ns) \
	X(flush_ns) X(busy_ns) X(queue_ns) X(errors) X(seq_reads) X(seq_writes)

void stats_snap_sub(const struct stats_snap *a, const struct stats_snap *b, struct stats_snap *out)
{
	/* out may alias a or b: read both before writing each field */
#define SUB(f) out->f = sub0(a->f, b->f);
	uint64_t t = sub0(a->t_ns, b->t_ns), infl = a->inflight;
	SNAP_SCALARS(SUB)
#undef SUB
	for (unsigned o = 0; o < STATS_NOPS; o++)
		for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
			out->lat[o][i] = sub0(a->lat[o][i], b->lat[o][i]);
	for (unsigned o = 0; o < 2; o++)
		for (unsigned i = 0; i < STATS_SIZE_BUCKETS; i++)
			out->size[o][i] = sub0(a->size[o][i], b->size[o][i]);
	out->t_ns = t;
	out->inflight = infl;
}

void stats_snap_add(const struct stats_snap *a, const struct stats_snap *b, struct stats_snap *out)
{
#define ADD(f) out->f = a->f + b->f;
	uint64_t t = a->t_ns > b->t_ns ? a->t_ns : b->t_ns;
	SNAP_SCALARS(ADD)
	ADD(inflight)
#undef ADD
	for (unsigned o = 0; o < STATS_NOPS; o++)
		for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++)
			out->lat[o][i] = a->lat[o][i] + b->lat[o][i];
	for (unsigned o = 0; o < 2; o++)
		for (unsigned i = 0; i < STATS_SIZE_BUCKETS; i++)
			out->size[o][i] = a->size[o][i] + b->size[o][i];
	out->t_ns = t;
}

/* ---- levels ---- */

static const char *const level_names[] = {
	[STATS_LEVEL_ALL] = "all",
	[STATS_LEVEL_VOLUME] = "volume",
	[STATS_LEVEL_OFF] = "off",
};

int stats_parse_level(const char *s, enum stats_level *out)
{
	for (unsigned i = 0; s && i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcasecmp(s, level_names[i]) == 0) {
			*out = (enum stats_level)i;
			return 0;
		}
	return -EINVAL;
}

const char *stats_level_name(enum stats_level l)
{
	return (unsigned)l < sizeof(level_names) / sizeof(level_names[0]) ? level_names[l] : "?";
}
