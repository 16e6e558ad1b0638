/* volume: the engine for an fsvol volume opened in-process (--members).
 * engine_read/engine_write block until the I/O is done, so each of the
 * -o outstanding I/Os of a thread is its own OS thread (t x o workers).
 * The slots of one thread draw I/O numbers from one shared counter, so the
 * thread's sequence (offsets in order of issue) is the same as with io_uring. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/run.h"
#include "fsvol/core/volume.h"

static unsigned volume_workers(const struct bench_opts *o)
{
	return o->outstanding;
}

static void think(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000 * 1000) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *volume_worker(void *arg)
{
	struct bench_worker *w = arg;
	const struct bench_opts *o = w->o;
	struct bench_clock *c = w->clk;
	struct vol *v = w->tgt->vol;
	_Atomic uint64_t *next_k = &w->tgt->next_k[w->thread % o->threads];
	char *buf = bench_buffers(o, 1, o->seed + w->thread * 1024 + w->slot);

	if (!buf)
		bench_fail(w, -ENOMEM, "out of memory for a buffer of %llu bytes", (unsigned long long)o->block);
	bench_wait_start(w);
	while (buf && !w->error) {
		uint64_t off, k = atomic_fetch_add_explicit(next_k, 1, memory_order_relaxed);
		int is_write;
		bench_pattern_at(&w->pat, k, &off, &is_write);
		uint64_t t0 = stats_now();
		if (t0 >= c->t_end || atomic_load_explicit(&c->stop, memory_order_relaxed))
			break;
		int r = is_write ? engine_write(v, buf, off, o->block) : engine_read(v, buf, off, o->block);
		uint64_t t1 = stats_now();
		if (r) {
			bench_fail(w, r, "%s at offset %llu: %s", is_write ? "write" : "read",
				   (unsigned long long)off, strerror(-r));
			break;
		}
		bench_account(w, is_write, o->block, t0, t1);
		if (o->think_us)
			think(o->think_us);
	}
	free(buf);
	return NULL;
}

const struct bench_engine_ops bench_volume_ops = {
	.name = "fsvol in-process (one blocking thread per outstanding I/O)",
	.workers_per_thread = volume_workers,
	.worker = volume_worker,
};
