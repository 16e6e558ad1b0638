/* stats: I/O counters above (volume) and below (members) the mapping layer.
 * Raw running totals named after /proc/diskstats, exact time integrals
 * (busy_ns, queue_ns), latency and size histograms, snapshots, interval
 * metrics (iostat and PerfMon names), renderers, a JSON reader for our own
 * stats.json, and a trace ring. No I/O, no RAID knowledge.
 * Formulas and tool equivalents: docs/counters.md. */
#ifndef FSVOL_STATS_H
#define FSVOL_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum stats_op { STATS_READ = 0, STATS_WRITE = 1, STATS_FLUSH = 2, STATS_NOPS = 3 };

/* Per-volume level; the engine simply does not call the hooks when off. */
enum stats_level { STATS_LEVEL_ALL = 0, STATS_LEVEL_VOLUME = 1, STATS_LEVEL_OFF = 2 };
int stats_parse_level(const char *s, enum stats_level *out); /* 0 or -EINVAL */
const char *stats_level_name(enum stats_level l);            /* "all", "volume", "off" */

/* ---- histograms (hist.c) ----
 * Latency: log-linear over nanoseconds, 64 linear sub-buckets per power of two
 * (exact below 128 ns), 2048 buckets covering [0, 2^37 ns = 137 s); larger
 * values land in the last bucket. Relative error <= 1/128 (derivation in
 * hist.c). Size: power-of-two upper bounds, bucket 0 = <= 512 B, bucket k =
 * (512<<(k-1), 512<<k] bytes, bucket 16 = > 16 MiB. Merge = add buckets. */
#define STATS_LAT_SUB_BITS 6
#define STATS_LAT_BUCKETS 2048
#define STATS_SIZE_BUCKETS 17

unsigned stats_lat_bucket(uint64_t ns);
uint64_t stats_lat_bucket_lo(unsigned idx);    /* smallest ns in the bucket */
uint64_t stats_lat_bucket_width(unsigned idx); /* ns values in the bucket */
double stats_lat_bucket_mid(unsigned idx);     /* representative value */
unsigned stats_size_bucket(uint64_t bytes);
uint64_t stats_size_bucket_hi(unsigned idx);   /* upper bound, 0 for the overflow bucket */
/* Value (ns) at percentile p (0 < p <= 100) of a latency histogram made of
 * nh histograms added together (e.g. read + write); 0 when empty. */
double stats_lat_percentile(const uint64_t *const h[], unsigned nh, double p);

/* ---- devices, hooks, snapshots (counters.c) ---- */
struct stats_dev; /* opaque; one per volume and per member */

struct stats_snap {
	uint64_t t_ns;       /* the `now` of the snapshot (interval for a delta) */
	uint64_t reads, writes, flushes;
	uint64_t read_bytes, write_bytes;
	uint64_t read_ns, write_ns, flush_ns; /* sums of completion latency */
	uint64_t inflight;   /* gauge at t_ns */
	uint64_t busy_ns;    /* integral of [inflight > 0] dt */
	uint64_t queue_ns;   /* integral of inflight dt */
	uint64_t errors;
	uint64_t seq_reads, seq_writes;
	uint64_t lat[STATS_NOPS][STATS_LAT_BUCKETS];
	uint64_t size[2][STATS_SIZE_BUCKETS]; /* [STATS_READ], [STATS_WRITE] */
};

/* Mount-time only: allocates and pre-touches every shard. NULL on ENOMEM. */
struct stats_dev *stats_dev_create(void);
void stats_dev_destroy(struct stats_dev *d);

uint64_t stats_now(void); /* CLOCK_MONOTONIC, ns */
/* Hot path, any thread. Contract: `start_ns` given to stats_end is the `now`
 * given to the matching stats_begin (the pair may run on different threads).
 * A failed request (error != 0) counts in its op's totals and in `errors`. */
void stats_begin(struct stats_dev *d, uint64_t now);
void stats_end(struct stats_dev *d, enum stats_op op, uint64_t offset, uint64_t bytes,
	       uint64_t start_ns, uint64_t now, int error);

/* Sum of shards minus the last reset, with in-flight time up to `now`. */
void stats_snapshot(const struct stats_dev *d, uint64_t now, struct stats_snap *out);
/* Counters read zero from here on (a baseline: nothing is ever lost or torn). */
void stats_reset(struct stats_dev *d, uint64_t now);
/* The device's I/O is timed on another clock from here on (a volume going
 * into virtual time after its assembly's metadata I/O on the real one): the
 * busy periods start afresh, so %util is not held back by a mark of the old
 * clock. Idle devices only (nothing in flight); counts and sums are kept. */
void stats_clock_restart(struct stats_dev *d);
/* out = a - b (clamped at 0, inflight = a's, t_ns = a.t_ns - b.t_ns); out = a + b. */
void stats_snap_sub(const struct stats_snap *a, const struct stats_snap *b, struct stats_snap *out);
void stats_snap_add(const struct stats_snap *a, const struct stats_snap *b, struct stats_snap *out);

/* ---- derived interval metrics (derive.c) ----
 * MB = 2^20 bytes and kB = 1024 bytes, as iostat -m / -k print them. */
struct stats_rates {
	double interval_s;
	/* iostat -x */
	double r_s, w_s, f_s, rmb_s, wmb_s;
	double areq_kb, rareq_kb, wareq_kb;        /* KiB per read+write, read, write */
	double r_await_ms, w_await_ms, f_await_ms;
	double aqu_sz;                             /* delta queue_ns / interval */
	double util_pct;                           /* delta busy_ns / interval * 100 */
	double p50_ms, p99_ms, p999_ms;            /* reads + writes in the interval */
	double seq_pct;
	/* PerfMon (reads + writes are transfers; flushes are not) */
	double transfers_s, read_bytes_s, write_bytes_s;
	double avg_bytes_read, avg_bytes_write, avg_bytes_transfer;
	double avg_sec_read, avg_sec_write, avg_sec_transfer;
	double avg_queue, avg_read_queue, avg_write_queue; /* sum of latencies / interval */
	double pct_disk_time, pct_read_time, pct_write_time, pct_idle_time;
	double cur_queue;                          /* instantaneous inflight at the end */
};
/* 0, or -EINVAL when cur is not later than prev. */
int stats_rates_compute(const struct stats_snap *prev, const struct stats_snap *cur,
			struct stats_rates *out);

/* ---- renderers (render.c): all write to a FILE* (open_memstream works) ---- */
struct stats_view_dev {
	const char *name;  /* "NAME" for the volume, "NAME.m1" for the member of Number 1 */
	const char *path;  /* member path; may be NULL for the volume */
	const char *state; /* member: "active|failed|spare|rebuilding|missing"; volume:
			    * "active|degraded|failed"; may be NULL */
	int index;         /* the member's Number (md's: it stays with the device); -1 for the volume */
	const char *uuid;  /* member UUID; NULL: none known (the volume, an in-process view) */
	int role;          /* with uuid: the raid role (md's RaidDevice), -1 none (a spare, a failed one) */
	int not_counted;   /* 1: the stats level leaves this device out (its
			    * figures are "not counted", not zeros) */
	unsigned bad_blocks; /* member: entries in its bad-block list (md's bad block log) */
	struct stats_snap snap;
};
/* A view is an array: the volume first, then its members. Each returns 0 or
 * -EIO when the stream reports an error. */
int stats_render_table(FILE *f, const struct stats_view_dev *v, size_t n);
/* uptime_ns: since mount; since_reset_ns: the time the counters cover (since
 * the last reset, or since mount), which a first interval divides by. */
int stats_render_json(FILE *f, uint64_t uptime_ns, uint64_t since_reset_ns,
		      const struct stats_view_dev *v, size_t n);
/* A JSON string (or null for NULL), escaped as stats.json's are. */
void stats_json_string(FILE *f, const char *s);
#define STATS_DISKSTATS_MAJOR 240 /* "local/experimental use" in devices.txt */
int stats_render_diskstats(FILE *f, const struct stats_view_dev *v, size_t n);

/* Prometheus text format (prom.c), node_exporter's names under fsvol_:
 * counters, io_now, latency and size histograms per device and op, and,
 * when md is given, md-like volume state (node_exporter's mdadm names).
 * The volume is v[0]; its name is the `volume` label. Names, labels and
 * units: docs/counters.md. */
/* node_exporter's md states (node_md_state{state}); fsvol_md_state has one
 * series per state, the current one 1. The names live in prom.c only, so a
 * caller picks a state by this enum and cannot spell one the metric lacks. */
enum stats_md_state {
	STATS_MD_ACTIVE,     /* running, no background pass */
	STATS_MD_INACTIVE,
	STATS_MD_RECOVERING, /* a recovery or replace rebuilds a member */
	STATS_MD_RESYNC,     /* resync or repair */
	STATS_MD_CHECK,
	STATS_MD_RESHAPE,    /* a reshape moves the data to a new geometry */
	STATS_MD_NSTATES
};
/* The label value of state s ("recovering"); "?" out of range. */
const char *stats_md_state_name(enum stats_md_state s);

struct stats_prom_md {
	unsigned disks_required; /* members the level needs (spares not included) */
	unsigned degraded;       /* of those, how many are not active */
	enum stats_md_state state;
	uint64_t blocks;         /* capacity in 1 KiB blocks */
	uint64_t blocks_synced;  /* of a running resync/check; = blocks when none runs */
};
int stats_render_prom(FILE *f, const struct stats_view_dev *v, size_t n, const struct stats_prom_md *md);

/* The `fsvol stat` table (top.c), gstat-like: a header of iostat -x names,
 * a row of their units, the volume row then "  mK" member rows; a device
 * that is not counted says so instead of showing zeros. The columns fit
 * 80 characters; cols > 80 adds more while they fit, wide adds them all. */
struct stats_top_opts {
	unsigned cols;      /* terminal width; 0: the 80-column set */
	unsigned max_rows;  /* device rows at most (a terminal's height); 0: all */
	int wide;           /* every column, whatever the width */
	int color;          /* ANSI colours (a TTY) */
	int header;         /* the header and units rows */
	const char *title;  /* a first line (volume name, time), or NULL */
};
int stats_render_top(FILE *f, const struct stats_top_opts *o, const struct stats_view_dev *prev,
		     const struct stats_view_dev *cur, size_t n);

enum stats_fmt { STATS_FMT_IOSTAT, STATS_FMT_CSV, STATS_FMT_JSON, STATS_FMT_PERFMON };
struct stats_interval_opts {
	enum stats_fmt fmt;
	int header;         /* CSV: once per run; the table and PerfMon: per interval */
	double t_s;         /* "timestamp" (CSV, JSON): seconds since mount */
	const char *time;   /* "time" (CSV, JSON): wall clock, ISO 8601; NULL: "" */
	struct stats_top_opts top; /* STATS_FMT_IOSTAT (its header is the one above) */
};
/* One interval for `fsvol stat`: prev[i] and cur[i] are the same device.
 * Figures carry one name everywhere (iostat's: r/s, rMB/s, r_await, aqu-sz,
 * %util, ...); units and formulas: docs/counters.md. */
int stats_render_interval(FILE *f, const struct stats_interval_opts *o, const struct stats_view_dev *prev,
			  const struct stats_view_dev *cur, size_t n);

/* ---- stats.json reader (json.c) ---- */
struct stats_doc {
	uint64_t uptime_ns;
	uint64_t since_reset_ns;
	size_t n;                   /* volume + members */
	struct stats_view_dev *dev; /* heap; strings owned by the doc */
};
/* Strict: accepts what stats_render_json emits (any whitespace), nothing else.
 * 0, or -EINVAL with a message in err; -ENOMEM. */
int stats_json_parse(const char *buf, size_t len, struct stats_doc *out, char *err, size_t errlen);
void stats_doc_free(struct stats_doc *doc);

/* ---- trace ring (trace.c) ---- */
enum stats_why {
	STATS_WHY_DATA = 0,
	STATS_WHY_PARITY_READ,
	STATS_WHY_PARITY_WRITE,
	STATS_WHY_OLD_DATA,    /* read-modify-write: old data read */
	STATS_WHY_RECONSTRUCT, /* degraded read: rebuild a lost chunk */
	STATS_WHY_MIRROR,      /* extra copy of a mirrored write */
	STATS_WHY_ALIGN,       /* read for an unaligned write */
	STATS_WHY_REBUILD,     /* recovery: reading redundancy, writing the new member */
	STATS_WHY_PPL,         /* partial parity log record (metadata area, before the stripe write) */
	STATS_WHY_JOURNAL,     /* write journal record (the journal member) */
	STATS_WHY_RESHAPE,     /* reshape: moving data to a new geometry */
	STATS_WHY_SB,          /* superblock (a state change, safe mode's clean/dirty marks) */
	STATS_WHY_BITMAP,      /* write-intent bitmap blocks (and the flush before bits clear) */
	STATS_WHY_BBL,         /* bad-block list */
	STATS_WHY_COUNT
};
const char *stats_why_name(enum stats_why w);
/* Metadata I/O: at a member offset of its own, outside the data area. */
static inline int stats_why_meta(int w)
{
	return w == STATS_WHY_PPL || w == STATS_WHY_JOURNAL || w == STATS_WHY_SB || w == STATS_WHY_BITMAP ||
	       w == STATS_WHY_BBL;
}

struct stats_trace_rec {
	uint64_t seq;        /* from stats_trace_id */
	uint64_t parent;     /* 0 for a volume request */
	uint64_t t_start_ns;
	uint64_t latency_ns;
	uint64_t offset, length; /* a member's: in its data area, or from its start for
				  * metadata (stats_why_meta) */
	int32_t dev;         /* member index, -1 for the volume */
	uint8_t op;          /* enum stats_op */
	uint8_t why;         /* enum stats_why */
	int16_t error;       /* 0 or -errno */
};

struct stats_trace_slot;
struct stats_trace {
	_Atomic int enabled;        /* readers; the only thing read when nobody traces */
	_Atomic uint64_t next_id;
	_Atomic uint64_t head;      /* next ticket */
	_Atomic uint64_t dropped;   /* appends abandoned on a slot still being written */
	uint64_t mask;
	struct stats_trace_slot *slot;
};

/* capacity is rounded up to a power of two (>= 2). NULL on ENOMEM. */
struct stats_trace *stats_trace_create(size_t capacity);
void stats_trace_destroy(struct stats_trace *t);
/* on: one more reader wants records; !on: one fewer. The ring records while
 * at least one does. */
void stats_trace_enable(struct stats_trace *t, int on);
static inline int stats_trace_on(const struct stats_trace *t)
{
	return t && atomic_load_explicit(&t->enabled, memory_order_relaxed);
}
/* A request id (never 0) for a record's seq, taken when the request starts so
 * its sub-requests can name it as parent. */
uint64_t stats_trace_id(struct stats_trace *t);
/* Lock-free multi-producer append; a no-op when disabled. */
void stats_trace_add(struct stats_trace *t, const struct stats_trace_rec *r);
/* Copy up to max records appended at or after *cursor (a ring position, start
 * at 0), in append order, skipping overwritten ones; advances *cursor. */
size_t stats_trace_read(struct stats_trace *t, uint64_t *cursor, struct stats_trace_rec *out,
			size_t max);
/* Text like blkparse (each volume request, then its member sub-requests
 * indented) or one JSON object per line. t0 is the time origin. */
int stats_trace_render_text(FILE *f, const struct stats_trace_rec *r, size_t n, uint64_t t0);
int stats_trace_render_json(FILE *f, const struct stats_trace_rec *r, size_t n);

#endif
