/* bench: fsvol-bench, a diskspd-style load generator. Options (opts.c),
 * access patterns (pattern.c), the run (run.c) with its two engines
 * (uring.c for files and devices, volume.c for an fsvol volume opened
 * in-process), CPU and fsvol counters (sample.c), and the report (report.c);
 * --replay: a trace instead of a pattern (replay.c the engine, replay_target.c
 * load and map, replay_report.c, replay_cmp.c for --compare).
 * bench_run() fills a struct bench_result and prints nothing, so sweeps can
 * call it and render rows of their own. */
#ifndef FSVOL_BENCH_H
#define FSVOL_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/trace/tracefile.h"
#include "stats/stats.h"

#define BENCH_MAX_TARGETS 16
#define BENCH_MAX_MEMBERS 64

/* ---- options (opts.c) ---- */
enum bench_dist_kind { BENCH_DIST_UNIFORM, BENCH_DIST_NORMAL, BENCH_DIST_ZIPF, BENCH_DIST_HOT };

struct bench_dist {
	enum bench_dist_kind kind;
	double sigma;  /* normal: standard deviation as a fraction of the records */
	double theta;  /* zipf: P(rank k) ~ 1 / k^theta */
	double hot_data, hot_io; /* hot: fraction hot_io of I/Os go to the first hot_data of records */
};

/* --replay-map: what to do with a trace that addresses more than the target. */
enum bench_replay_map { BENCH_MAP_NONE, BENCH_MAP_WRAP, BENCH_MAP_SCALE };

/* diskspd's write buffers: by default a repeating pattern (byte i is i % 256);
 * -Z zeros; -Zr fresh random bytes for every write; -ZSIZE one random buffer
 * of SIZE that each write takes its block from, at a random offset. */
enum bench_wbuf { BENCH_WBUF_PATTERN, BENCH_WBUF_ZERO, BENCH_WBUF_RANDOM_EACH, BENCH_WBUF_SOURCE };

struct bench_opts {
	uint64_t block;       /* -b, bytes */
	double duration;      /* -d, seconds */
	double warmup;        /* -W */
	double cooldown;      /* -C */
	unsigned outstanding; /* -o, per thread per target */
	unsigned threads;     /* -t, per target */
	unsigned fixed;       /* -F: threads in all, each on every target (diskspd); 0 = -t's model */
	int threads_set;      /* -t was given (it conflicts with -F) */
	int random;           /* -r (1) or -s (0) */
	int pattern_set;      /* -r or -s was given */
	uint64_t align;       /* -r ALIGN, 0 = block */
	int rs_pct;           /* -rsPCT: that share of I/Os random, the rest continue a sequential run; -1 = not set */
	int interlocked;      /* -si: the threads of a target share one sequential position */
	uint64_t stride;      /* -s STRIDE, 0 = block */
	uint64_t thread_stride; /* -T: thread i starts at i * T (sequential) */
	uint64_t base;        /* -B: I/O starts this far into the target */
	uint64_t max_off;     /* -f, or -B base:length: I/O stays below this offset; 0 = the end */
	unsigned write_pct;   /* -w */
	uint64_t create_size; /* -c, 0 = use the target's size */
	int direct;           /* -S/-Su/-Sh/-h: O_DIRECT (no software cache) */
	int writethrough;     /* -Sw/-Sh/-h: O_DSYNC (every write on stable media before it completes) */
	int latency;          /* -L */
	uint64_t seed;        /* -z */
	int seed_time;        /* -z without a value: seed from the clock */
	enum bench_wbuf wbuf; /* -Z, -Zr, -ZSIZE: what writes carry */
	uint64_t wbuf_size;   /* -ZSIZE: the random source buffer's size */
	struct bench_dist dist; /* --dist */
	int dist_set;
	uint64_t think_us;    /* --think */
	uint64_t rate;        /* -g: per thread per target, bytes per ms (or I/Os per s with rate_iops); 0 = none */
	int rate_iops;        /* -g VALUEi */
	unsigned iops_ms;     /* -D: I/Os counted per interval of this many ms; 0 = not */
	int json, quiet;
	int xml;              /* -Rxml (-Rtext: the default) */
	char *members[BENCH_MAX_MEMBERS]; /* --members (pointers into members_buf) */
	unsigned nmembers;
	char *members_buf;
	int create;           /* --create LEVEL,CHUNK: a fresh volume on the members (mem: only) */
	int create_level;     /* enum layout_level */
	unsigned create_alg, create_copies;
	uint64_t create_chunk;
	char *targets[BENCH_MAX_TARGETS];
	unsigned ntargets;
	char cmdline[1024];
	/* --replay (replay.c): the trace's requests instead of a pattern */
	const char *replay;      /* the trace file */
	int replay_fmt;          /* enum tracefile_fmt (0: detect) */
	double replay_speed;     /* --replay-speed: times faster than recorded (0: as recorded) */
	int replay_afap;         /* --replay-afap: no waits, -o in flight */
	int replay_map;          /* enum bench_replay_map */
	const char *latency_log; /* --latency-log FILE: one line per request */
	int virtual_time;        /* --virtual: the in-process model's clock is virtual */
	const char *ctl[8];      /* --ctl: MNT/ctl settings for the in-process volume, in order */
	unsigned nctl;
	const char *compare;     /* --compare LEVEL:N,... (replay_cmp.c) */
	const char *out;         /* --out DIR: with --compare, data files and plots */
	const struct tracefile *trace; /* loaded before bench_run (bench_replay_load) */
	/* For callers of bench_run (sweeps); the command line sets neither. */
	const char *model;    /* spindle model spec for --members (fsvol's --model), NULL = none */
	/* Called about twice a second in place of the progress line: fraction of
	 * this run done (warm-up and cool-down included), seconds so far, IOPS
	 * over the last half second. Called from bench_run's own thread. */
	void (*progress)(void *arg, double frac, double elapsed_s, double iops);
	void *progress_arg;
};

void bench_opts_default(struct bench_opts *o);
/* -g as the time between two I/O starts of one thread on one target, ns
 * (0: no limit): I/O k of the thread starts no earlier than k gaps after the
 * run's start, so a late start is caught up and the rate holds on average. */
double bench_rate_gap_ns(const struct bench_opts *o);
void bench_opts_free(struct bench_opts *o);
/* Parse argv (argv[0] is the program). 0 = run; 1 = --help was printed;
 * -EINVAL with a message naming the flag in err ("-b 3X: not a size"). */
int bench_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen);
/* The flag table bench_parse uses, and the operands its synopsis shows. */
struct bench_flag;
extern const struct bench_flag *const bench_run_flags;
#define BENCH_OPERANDS "TARGET..."
/* man.c: fsvol-bench(1) in roff and a bash completion script, from the flag
 * tables of the run and the sweep (fsvol-bench --man, --bash-completion). */
void bench_man(FILE *f, const char *version);
void bench_bash_completion(FILE *f);
const char *bench_dist_name(const struct bench_dist *d, char *buf, size_t len);

/* ---- access patterns (pattern.c) ----
 * I/O number k of a thread is a pure function of (seed, thread, k), so a
 * thread's sequence does not depend on completion order or on how many
 * workers draw from it (the in-process engine runs several per thread). */
struct bench_pattern {
	uint64_t key;     /* from seed and thread */
	uint64_t block;
	uint64_t unit;    /* random: alignment; sequential: stride */
	uint64_t npos;    /* offsets k * unit with k < npos fit a block */
	uint64_t start;   /* sequential: first position */
	uint64_t base;    /* offset of position 0 (-B) */
	int random;
	int rs_pct;       /* -rs: percent random, -1 = all random (plain -r) */
	unsigned write_pct;
	struct bench_dist dist;
	double z_hx1, z_hn, z_s; /* zipf rejection-inversion constants */
	uint64_t hot_n;   /* hot: records in the hot area */
};

/* size: the target's; the range is [-B, min(-f, size)). 0, or -EINVAL when
 * no block fits in the range. */
int bench_pattern_init(struct bench_pattern *p, const struct bench_opts *o, uint64_t size,
		       unsigned thread);
/* I/O number k of the thread: byte offset and direction. */
void bench_pattern_at(const struct bench_pattern *p, uint64_t k, uint64_t *off, int *is_write);
/* The distribution alone: a record in [0, p->npos) for I/O k (random only). */
uint64_t bench_pattern_record(const struct bench_pattern *p, uint64_t k);

/* ---- results (run.c) ---- */
struct bench_opstat {
	uint64_t ios, bytes;
	double lat_sum, lat_sq; /* ns, ns^2: mean and standard deviation */
	uint64_t lat_min, lat_max;
	uint64_t hist[STATS_LAT_BUCKETS];
};

struct bench_thread_result {
	unsigned id;      /* the thread's number: rows of one -F thread (one per target) share it */
	unsigned target;  /* index in bench_result.target */
	struct bench_opstat op[2]; /* [STATS_READ], [STATS_WRITE] */
	uint64_t *iv;     /* -D: I/Os completed per interval, [op * niv + i]; NULL without -D */
};

struct bench_cpu {
	unsigned id;      /* the core's number (cpuN in /proc/stat; online cores may have gaps) */
	double usage, user, kernel, idle; /* percent of the interval */
};

/* A device below the mapping layer (the volume first, then each member). */
struct bench_below_dev {
	char name[16];    /* "volume", "m0" ... */
	char path[256];
	char state[16];
	struct stats_snap d; /* delta over the measured interval */
	struct stats_rates r;
};

struct bench_conservation {
	const char *what;  /* "reads", "writes", "member reads for writes" */
	uint64_t member_bytes, volume_bytes;
	double ratio;
	char note[96];     /* "raid1: every copy" */
	int ok;            /* reads: equal; else 1 */
};

struct bench_below {
	char level[16];
	unsigned ndev;     /* 1 + members */
	struct bench_below_dev *dev;
	unsigned ncons;
	struct bench_conservation cons[3];
};

struct bench_target_result {
	char path[4096];
	uint64_t size;
	const char *engine;  /* "io_uring", "io_uring (registered buffers)", "fsvol in-process" */
	unsigned workers;    /* OS threads driving it */
	struct bench_below *below; /* NULL unless the target is an fsvol volume */
	char holes[400];     /* the warning that the run reads holes (a sparse file, or members no model hides), or "" */
};

/* One request of a replayed trace, in trace order. */
struct bench_replay_req {
	uint64_t t_ns;       /* issued, from the start of the replay */
	uint64_t lat_ns;     /* its latency */
	uint64_t off;        /* where it went (after --replay-map) */
	int done;            /* 0: not issued (a trim: skipped) */
};

struct bench_result {
	double test_s;       /* measured window */
	struct bench_replay_req *req; /* --replay: one per trace request */
	size_t nreq;
	uint64_t late_max_ns; /* --replay: the latest issue behind its time */
	double late_mean_ns;
	uint64_t skipped;    /* --replay: trims, not replayed */
	uint64_t seed;
	unsigned nthreads;   /* rows of thread: threads per target x targets, or with -F, -F x targets */
	unsigned threads;    /* threads in all (-F, or -t x targets): diskspd's "thread count" */
	struct bench_thread_result *thread;
	unsigned ntargets;
	struct bench_target_result target[BENCH_MAX_TARGETS];
	unsigned niv;        /* -D: intervals in the window (the last may be partial) */
	unsigned niv_full;   /* of those, whole ones: what the standard deviation is over */
	unsigned ncpu;
	struct bench_cpu *cpu; /* per core */
	struct bench_cpu cpu_avg;
	/* This process's CPU over the measured window (getrusage): the cost of
	 * fsvol-bench plus, in-process (--members), the engine's. */
	double proc_user_s, proc_sys_s;
	int have_proc;
};
/* The process's CPU per completed I/O in the window, microseconds (user,
 * system); 0 when nothing completed. */
void bench_proc_cpu_per_io(const struct bench_result *r, double *user_us, double *sys_us);

/* Derived figures of one op (or a sum), the same for text and JSON. */
struct bench_figs {
	uint64_t bytes, ios;
	double mb_s, iops, avg_ms, std_ms;
};
void bench_figs_of(const struct bench_opstat *s, double test_s, struct bench_figs *f);
/* -D: the standard deviation of the per-interval IOPS of thread t (-1: all
 * threads summed) for op 0 read, 1 write, 2 both; over the whole intervals. */
double bench_iops_stddev(const struct bench_result *r, const struct bench_opts *o, int t, int op);
/* The same thread's (or all threads') I/O count of interval i for op. */
uint64_t bench_iops_count(const struct bench_result *r, int t, int op, unsigned i);
void bench_opstat_add(struct bench_opstat *a, const struct bench_opstat *b);
/* The percentile rows: p = 0 is min, p = 100 is max. */
#define BENCH_NPCT 15
extern const double bench_pct[BENCH_NPCT];
extern const char *const bench_pct_name[BENCH_NPCT];
/* Values in ms for each row (monotonic, within [min, max]); 0 rows when empty. */
int bench_percentiles(const struct bench_opstat *s, double ms[BENCH_NPCT]);

/* Run the workload of o against its targets (files, devices, MNT/volume, or
 * the --members volume in-process). 0 or -errno with a message in err. */
int bench_run(const struct bench_opts *o, struct bench_result **out, char *err, size_t errlen);
void bench_result_free(struct bench_result *r);

/* ---- replay (replay.c, replay_cmp.c) ---- */
/* Open loop: at most this many requests in flight (a block queue's depth);
 * beyond, the schedule slips and the lateness shows in the report. */
#define BENCH_REPLAY_MAX_INFLIGHT 256
struct tracefile;
/* Load o->replay into t and check it against the flags (-S alignment). 0 or
 * -errno with "FILE:LINE: ..." in err; nothing is issued before this. */
int bench_replay_load(const struct bench_opts *o, struct tracefile *t, char *err, size_t errlen);
/* The share of the trace's requests that write (sync and trim count), 1 at
 * least when there is one: the target is opened for writing then. */
unsigned bench_replay_write_pct(const struct tracefile *t);
/* Does the trace fit a target of size bytes (or does --replay-map fold it)? */
int bench_replay_fits(const struct bench_opts *o, uint64_t size, const char *path, char *err, size_t errlen);
/* Where request r goes on a target of size bytes, after --replay-map. */
uint64_t bench_replay_offset(const struct bench_opts *o, const struct tracefile_rec *r, uint64_t size);
/* --latency-log: "index issue_us op offset length latency_us" per request. */
int bench_replay_latency_log(const char *path, const struct tracefile *t, const struct bench_result *r,
			     char *err, size_t errlen);
/* The replay's own lines of the report (the trace, timing, lateness). */
void bench_replay_report(FILE *f, const struct bench_opts *o, const struct bench_result *r);
/* --compare: build each layout, replay on each, one table (and plots with --out). Exit status. */
int bench_replay_compare(const struct bench_opts *o);

/* ---- samplers (sample.c) ---- */
/* Per-core jiffies from /proc/stat (the summary line left out); n cores.
 * 0 or -errno. bench_cpu_parse reads the same from any stream. */
struct bench_cpu_raw { unsigned id; uint64_t user, kernel, idle; };
/* This process's user and system CPU seconds so far (getrusage RUSAGE_SELF). */
void bench_proc_cpu(double *user_s, double *sys_s);
int bench_cpu_read(struct bench_cpu_raw **out, unsigned *n);
int bench_cpu_parse(FILE *f, struct bench_cpu_raw **out, unsigned *n);
void bench_cpu_delta(const struct bench_cpu_raw *a, const struct bench_cpu_raw *b, unsigned n,
		     struct bench_cpu *out, struct bench_cpu *avg);
/* MNT/volume with MNT/stats.json next to it: the mount directory in dir. */
int bench_fsvol_mount_dir(const char *target, char *dir, size_t len);
/* Read MNT/stats.json into a doc. 0 or -errno with a message. */
int bench_fsvol_read(const char *dir, struct stats_doc *doc, char *err, size_t errlen);
/* The level name from MNT/status ("raid5"), or "" when unknown. */
void bench_fsvol_level(const char *dir, char *level, size_t len);
/* The model spec from MNT/status ("hdd-legacy:cache=0"), or "" without one. */
void bench_fsvol_model(const char *dir, char *spec, size_t len);
/* Fill the conservation lines of b from its volume and member deltas. */
void bench_conserve(struct bench_below *b);

/* ---- holes (holes.c) ---- */
struct layout_geom;
/* Each member's data-area range [mlo, mhi) under the volume range [lo, hi)
 * (mhi = 0: untouched), copies and, on parity levels, the stripes' parity
 * included. */
void bench_holes_ranges(const struct layout_geom *g, uint64_t lo, uint64_t hi, uint64_t *mlo, uint64_t *mhi);
/* Never-written blocks (holes) in the member files under the volume range
 * [lo, hi): paths are the member files in any order (their superblocks say
 * which is which); writes_only: the run only writes (only parity levels then
 * read). msg gets a warning, or "" when there are none. 0 or -errno. */
int bench_holes_check(char *const *paths, unsigned n, uint64_t lo, uint64_t hi, int writes_only, char *msg,
		      size_t len);
/* The same for a plain file target: holes in [lo, hi) of the file itself. */
int bench_holes_file(const char *path, uint64_t lo, uint64_t hi, char *msg, size_t len);
/* A model spec that sets the timing of every member (not absent, not "none"). */
int bench_model_hides(const char *spec);

/* ---- report (report.c) ---- */
int bench_report_text(FILE *f, const struct bench_opts *o, const struct bench_result *r);
int bench_report_json(FILE *f, const struct bench_opts *o, const struct bench_result *r);
/* report_xml.c: -Rxml, diskspd's XML layout. */
int bench_report_xml(FILE *f, const struct bench_opts *o, const struct bench_result *r);

#endif
