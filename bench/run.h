/* run: internals shared by the run (run.c) and its engines (uring.c,
 * volume.c). Not for users of bench.h. */
#ifndef FSVOL_BENCH_RUN_H
#define FSVOL_BENCH_RUN_H

#include <pthread.h>
#include <stdatomic.h>

#include "bench/bench.h"

struct vol;

/* The clock every worker obeys: I/Os are counted when they complete inside
 * [t_meas, t_meas_end); nothing new is issued at or after t_end. */
struct bench_clock {
	uint64_t t_start, t_meas, t_meas_end, t_end;
	_Atomic int stop; /* an error somewhere: everyone drains and leaves */
	_Atomic unsigned finished; /* workers done on their own (a replay's end) */
	/* --virtual pattern runs: the one worker drives the model's clock and
	 * calls this as it reaches t_meas (0) and t_meas_end (1), so the counters
	 * are sampled at exactly those instants of virtual time */
	void (*edge)(void *arg, int which);
	void *edge_arg;
	pthread_barrier_t ready, go;
};

struct bench_target {
	const char *path;
	int fd;             /* -1 for the in-process volume */
	uint64_t size;
	struct vol *vol;
	_Atomic uint64_t *next_k; /* volume engine: per thread, shared by its slots */
	_Atomic uint64_t si_next; /* -si: the next I/O number, shared by the target's threads */
};

/* One OS thread. The uring engine runs one per -t thread with -o in
 * flight; the volume engine one per slot (t x o), each blocking. */
struct bench_worker {
	struct bench_clock *clk;
	const struct bench_opts *o;
	struct bench_target *tgt;
	struct bench_pattern pat;
	unsigned thread;    /* index into the result's threads (rows) */
	unsigned nstreams;  /* uring, -F: this worker's OS thread also drives the next nstreams - 1
			     * workers (the same thread's other targets); 0 or 1: itself only */
	int lead;           /* runs an OS thread (not driven by another worker's) */
	uint64_t issued;    /* this stream's I/O count (uring engine) */
	unsigned slot;      /* volume engine: which of the thread's -o slots */
	pthread_t tid;
	int started;
	int error;          /* 0 or -errno */
	char errmsg[160];
	struct bench_opstat op[2];
	/* replay: per request figures, the last completion, lateness */
	struct bench_replay_req *req;
	uint64_t t_done, late_max, late_sum, skipped;
	const char *wsrc;   /* -ZSIZE: the shared random source of write data */
	uint64_t *iv;       /* -D: I/Os per interval, [is_write * niv + i] */
	unsigned niv;
	uint64_t iv_ns;
	_Alignas(64) _Atomic uint64_t done; /* progress, read by the main thread */
};

/* Shared by both engines */
void bench_account(struct bench_worker *w, int is_write, uint64_t bytes, uint64_t t0, uint64_t t1);
/* Aligned, pre-touched; write buffers carry the pattern or random bytes. */
void *bench_buffers(const struct bench_opts *o, size_t n, uint64_t seed);
/* Before write number k goes out from buf: -Zr fills it with fresh random
 * bytes, -ZSIZE copies a block of the source; else nothing (fixed content). */
void bench_write_data(const struct bench_worker *w, char *buf, uint64_t k);
void bench_fail(struct bench_worker *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bench_wait_start(struct bench_worker *w);

struct bench_engine_ops {
	const char *name;
	/* Threads the engine needs per -t thread. */
	unsigned (*workers_per_thread)(const struct bench_opts *o);
	void *(*worker)(void *arg);
};
extern const struct bench_engine_ops bench_uring_ops, bench_volume_ops, bench_replay_ops;

#endif
