/* spindle: an emulated disk per member, pure computation in emulated nanoseconds.
 *
 * The engine does the real I/O at once and releases its completion at the time the
 * model gives. Nothing here reads a clock or allocates: requests are owned by the
 * caller and linked through r->next while queued. Event-driven use:
 *
 *   on arrival at t:     r->arrival_ns = t; spindle_enqueue(s, r);
 *                        while ((d = spindle_dispatch(s, t))) arm timer at d->done_ns
 *   on timer at T for d: spindle_complete(s, d);
 *                        while ((d = spindle_dispatch(s, T))) arm timer at d->done_ns
 *
 * Model description, parameters and their sources: docs/model.md. */
#ifndef FSVOL_SPINDLE_H
#define FSVOL_SPINDLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/model/adapter.h"

#define SPINDLE_MAX_ZONES 64      /* zoned recording bands, outer (0) to inner */
#define SPINDLE_PRESET_ZONES 32   /* the zones= key's bound (equal-width bands) */
#define SPINDLE_SEEK_POINTS 256   /* measured seek table entries */
#define SPINDLE_MAX_SEGS 16       /* read cache segments */
#define SPINDLE_WB_SLOTS 32       /* write-back destages tracked at once */
#define SPINDLE_SECTOR 512u       /* sectors per track are whole 512-byte sectors */
#define SPINDLE_MAX_MEMBERS 64    /* members of one volume (= SB_MAX_SLOTS) */
#define SPINDLE_NAME 16           /* disk and adapter names, with the NUL */
#define SPINDLE_MAX_SLIPS 4096    /* slipped blocks (or tracks) of a measured drive */

enum spindle_kind {
	SPINDLE_NONE = 0,         /* no model: the engine uses real timing */
	SPINDLE_HDD = 1,
	SPINDLE_SSD = 2,
};

/* Where the member starts on its disk (spec key start=). */
enum spindle_start {
	SPINDLE_START_AUTO = 0,   /* outer edge; on a shared disk, after the previous member */
	SPINDLE_START_BYTES = 1,  /* start_bytes */
	SPINDLE_START_FRAC = 2,   /* start_frac of the stroke (cylinders), 0 = outer edge */
	SPINDLE_START_INNER = 3,  /* the member ends at the disk's last byte */
};

enum spindle_sched {
	SPINDLE_FIFO = 0,         /* arrival order */
	SPINDLE_SSTF = 1,         /* shortest seek (cylinder distance) first */
	SPINDLE_CSCAN = 2,        /* ascending offsets from the head, then wrap */
};

/* Command overhead kinds of a measured drive (spindle_table.ovh_ns). */
enum { SPINDLE_OVH_RMISS, SPINDLE_OVH_RHIT, SPINDLE_OVH_WMISS, SPINDLE_OVH_WHIT, SPINDLE_OVH_KINDS };

/* A measured drive's layout and timing, read from DiskSim's parameter files
 * (fsvol/model/disksim.c). Loaded once per path and never freed: parameters
 * copied by value share it. Where it is set it replaces the preset model's
 * equal-width zones, fitted seek curve and single overheads. */
struct spindle_table {
	char path[256];            /* the .parv it came from (spindle_format) */
	char name[64];             /* the disk's block name */
	uint64_t blocks;           /* LBNs (512-byte): the zones' user blocks, as DiskSim counts */
	uint64_t file_blocks;      /* the file's "Block count" (DiskSim does not use it) */
	uint32_t cylinders;
	unsigned nzones;
	struct {
		uint32_t cyl0, cyl1;   /* first and last cylinder */
		uint32_t spt;          /* sectors per track */
		uint64_t lbns;         /* user blocks in the zone (spares taken out) */
		uint64_t dead;         /* physical blocks before the zone's first user block */
		uint64_t unit, spare;  /* every unit physical blocks end in spare spares (0: none) */
		double tskew, cskew;   /* track and cylinder switch skew, sectors */
		double first;          /* angle of the zone's first block, sectors */
		uint32_t spares;       /* the zone's "Number of spares" (per unit of the scheme) */
		uint32_t slip0, nslip; /* its slips: slip[slip0 .. slip0 + nslip) */
	} zone[SPINDLE_MAX_ZONES];
	int scheme;                /* DiskSim's sparing scheme, 0..10 (layout_g1) */
	uint32_t range;            /* cylinders per sparing range (scheme 8) */
	uint32_t nslips;
	uint32_t slip[SPINDLE_MAX_SLIPS]; /* physical block (track, under track sparing)
				    * of each slip, from the zone's start, as listed */
	unsigned nseek;            /* seek table: time over seek_d cylinders, linear */
	uint32_t seek_d[SPINDLE_SEEK_POINTS];  /* between points, extrapolated past the last */
	double seek_ns[SPINDLE_SEEK_POINTS];
	int64_t settle_ns;         /* added to a write's seek (some drives: negative) */
	uint64_t min_wseek_ns;     /* a write's positioning takes at least this */
	uint64_t ovh_ns[SPINDLE_OVH_KINDS][2]; /* command overhead, after a read [0] or write [1] */
	uint64_t rdone_ns, wdone_ns;   /* after the transfer: reselect, data prep, completion */
	uint64_t wreselect_ns;     /* a media write's reselection before its completion */
	uint64_t wprep_ns;         /* before a write's data starts to come in */
	uint64_t rhit_done_ns;     /* after a read hit's transfer (no reselection) */
	uint64_t rsect_ns, wsect_ns;   /* host transfer per 512-byte sector */
	double read_wm;            /* a read reconnects once this share of it is read */
	double write_wm;           /* 1: a write starts on the media once all of it is in */
	int extra_wdisc;           /* "Extra write disconnect": the media write waits for 10-15 blocks */
	unsigned segments;         /* read cache segments, 1..SPINDLE_MAX_SEGS */
	uint64_t seg_bytes;        /* segment size */
	uint64_t ra_bytes;         /* read-ahead after a read */
	int ra_over;               /* read-ahead counts from the request's end (else its start) */
	int contread;              /* DiskSim's "Buffer continuous read": where a read-ahead stops:
				    * 0 none, 1 track end, 2 cylinder end, 3 segment full (or the
				    * maximum), 4 the end of the track after the request's (one
				    * track more when the segment began on an earlier track) */
	int write_seg;             /* written data stays in a segment (read hits on it) */
	int ra_idle_hit;           /* a hit after the read-ahead is done starts another */
};

/* Every parameter in SI-like units: ns, bytes, bytes/s, rpm. */
struct spindle_params {
	enum spindle_kind kind;
	enum spindle_sched sched;
	char preset[16];           /* preset the spec started from */
	uint64_t overhead_ns;      /* command overhead: media access (HDD), each op (SSD) */
	/* HDD */
	uint64_t hit_overhead_ns;  /* command overhead of a read served by the cache */
	uint64_t iface_Bps;        /* host interface rate */
	uint32_t rpm;
	uint32_t heads;            /* recording surfaces = tracks per cylinder */
	uint32_t zones;            /* 1..SPINDLE_MAX_ZONES */
	uint64_t seek_t2t_ns;      /* seek over 1 cylinder */
	uint64_t seek_avg_ns;      /* seek over 1/3 of the full stroke */
	uint64_t seek_full_ns;     /* seek over the full stroke */
	double seek_knee;          /* sqrt part ends here, fraction of stroke, (0, 1/3] */
	uint64_t switch_ns;        /* head/track switch during a transfer */
	uint64_t rate_outer_Bps;   /* sustained media rate, outermost zone */
	uint64_t rate_inner_Bps;   /* sustained media rate, innermost zone */
	uint64_t cache_bytes;      /* read-ahead segment and write-back limit; 0 = none */
	int wcache;                /* write-back cache on (no effect when cache_bytes == 0) */
	/* SSD */
	uint64_t read_ns;          /* flash read latency per op */
	uint64_t write_ns;         /* program latency per op (as seen through its buffer) */
	uint32_t channels;         /* requests in service at once */
	uint64_t bw_Bps;           /* transfer bandwidth shared by all channels */
	/* placement (both kinds) */
	uint64_t capacity_bytes;   /* the whole disk; 0: the member is the whole disk */
	enum spindle_start start_mode;
	uint64_t start_bytes;      /* SPINDLE_START_BYTES */
	double start_frac;         /* SPINDLE_START_FRAC, [0, 1) */
	char disk[SPINDLE_NAME];   /* members naming one disk share its spindle ("": own) */
	char adapter[SPINDLE_NAME];/* the adapter (bus) the disk is on ("": its own link) */
	const struct spindle_table *tab; /* a measured drive (disksim:PATH), or NULL */
};

/* Where a request's service time went; the parts add up to done - start. */
struct spindle_cost {
	uint64_t wait_ns;          /* mechanism busy with background writes, or no cache room */
	uint64_t overhead_ns;
	uint64_t seek_ns;          /* includes a head switch on the same cylinder */
	uint64_t rotate_ns;        /* rotational latency */
	uint64_t access_ns;        /* SSD: flash read or program latency */
	uint64_t transfer_ns;      /* media/bus transfer (a cache hit: waiting for read-ahead
				    * plus the interface) */
	int cache_hit;             /* read served from the read-ahead segment */
	int write_back;            /* write acknowledged from the cache */
};

/* A member I/O. The caller owns it and fills the first four fields; the model
 * fills disk_offset at enqueue, start_ns, done_ns and cost at dispatch. */
struct spindle_req {
	uint64_t offset;           /* member byte offset (the model adds the member's start) */
	uint64_t length;           /* bytes, > 0 */
	int write;
	uint64_t arrival_ns;       /* emulated time it reached the member queue */
	uint64_t start_ns;         /* service began (left the queue) */
	uint64_t done_ns;          /* completion to release */
	struct spindle_cost cost;
	uint64_t disk_offset;      /* byte on the disk: the member's base + offset */
	void *cookie;              /* caller's */
	struct spindle_req *next;  /* queue link, owned by the model while queued */
};

struct spindle_zone {
	uint64_t start;            /* first disk byte of the zone */
	uint64_t bytes;            /* disk bytes in the zone */
	uint64_t cyl0;             /* first cylinder */
	uint64_t cyls;
	uint32_t spt;              /* sectors per track */
	uint64_t track_bytes;      /* spt * SPINDLE_SECTOR */
	uint64_t cyl_bytes;        /* user bytes per cylinder (heads * track_bytes less spares) */
	double tskew, cskew;       /* angle a track / cylinder switch advances, turns */
	double first;              /* angle of the zone's first byte, turns */
	uint64_t dead;             /* measured drives: physical bytes before the first user byte */
	uint64_t unit, ubytes;     /* ... every unit physical bytes hold ubytes user bytes, the
				    * rest spares (unit 0: user bytes run on to the zone's end) */
};

/* A member's emulated disk. The member is a partition [base, base + member_bytes)
 * of a disk of disk_bytes. Members on one disk each have a struct spindle whose
 * `disk` points at the first one's: that one holds the geometry, the queue, the
 * head and the caches; the others hold only their partition. A member alone on
 * its disk has disk == itself. Every call below takes the member's spindle. */
struct spindle {
	struct spindle_params p;
	struct spindle *disk;      /* the mechanism (itself unless shared) */
	uint64_t member_bytes;
	uint64_t base;             /* first disk byte of the member */
	uint64_t want_base;        /* where start= put it before clamping (spindle_place) */
	uint64_t disk_bytes;       /* capacity of the whole disk */
	struct adapter *adapter;   /* shared bus (on the disk's spindle), or NULL */
	uint64_t phase_ns;         /* platter angle offset; set after init so members
				    * of one volume do not spin in lock-step */
	/* geometry (HDD) */
	unsigned nzones;
	struct spindle_zone zone[SPINDLE_MAX_ZONES];
	uint64_t cylinders;
	double rev_ns;             /* one revolution */
	double skew;               /* track skew, fraction of a turn (= switch / rev) */
	double seek_a, seek_b;     /* short seeks: a + b sqrt(d) for 1 <= d < knee */
	double seek_c, seek_e;     /* long seeks:  c + e d       for d >= knee */
	double seek_knee_cyl;
	int seek_linear;           /* stroke too short for the fit: piecewise linear */
	/* queue */
	struct spindle_req *qhead, *qtail;
	unsigned queued;
	unsigned busy;             /* requests in service */
	/* mechanism (HDD) */
	uint64_t free_ns;          /* the single service slot frees at */
	uint64_t pos;              /* byte after the last media access (scheduling) */
	uint64_t mech_free_ns;     /* background destage finishes at */
	int seg_valid;             /* read-ahead segment [seg_lo, seg_hi(t)) */
	uint64_t seg_lo, seg_h0, seg_t0; /* prefetch reached seg_h0 at seg_t0 and goes on */
	uint64_t seg_cap;          /* ... up to seg_cap */
	unsigned nfrozen;          /* other segments (measured drives): data kept, no prefetch */
	struct { uint64_t lo, hi, used; } frozen[SPINDLE_MAX_SEGS];
	uint64_t stamp;            /* LRU clock of the segments */
	int last_write;            /* the last command was a write (overheads differ) */
	unsigned wb_first, wb_n;   /* ring of pending destages, ends ascending */
	struct { uint64_t end_ns, bytes; } wb[SPINDLE_WB_SLOTS];
	/* SSD */
	uint64_t bus_free_ns;
};

/* Spec parsing (fsvol/spindle_spec.c). "PRESET[:key=value,...]". Returns 0 or -EINVAL
 * with a message naming the key at fault in err. */
int spindle_parse(const char *spec, struct spindle_params *out, char *err, size_t errlen);

/* One spec for all members, or one per member or range of members:
 * "0=SPEC;1-3=SPEC" (';' always splits; ',' also splits before "N=" and "@",
 * since keys never start with a digit or '@', so "0=hdd,1=ssd" works). Every
 * member needs a spec. Adapter definitions "@NAME=ADAPTER-SPEC" may appear
 * among them (checked, then ignored here: see spindle_plan). */
int spindle_parse_multi(const char *spec, unsigned members, struct spindle_params *out,
			char *err, size_t errlen);
/* The same, keeping the adapter definitions: names and parameters, *nad of them
 * (at most ADAPTER_MAX). */
int spindle_parse_volume(const char *spec, unsigned members, struct spindle_params *out,
			 char (*adname)[SPINDLE_NAME], struct adapter_params *ad, unsigned *nad,
			 char *err, size_t errlen);

/* A volume's models resolved from a spec (fsvol/model/spindle_plan.c): which
 * members share a disk, where each starts on it, which adapter each disk is on. */
struct spindle_plan {
	unsigned members, nadapters;
	struct spindle_params p[SPINDLE_MAX_MEMBERS];
	uint64_t base[SPINDLE_MAX_MEMBERS];     /* first disk byte of each member */
	unsigned disk[SPINDLE_MAX_MEMBERS];     /* the first member on the same disk */
	int adapter[SPINDLE_MAX_MEMBERS];       /* index into ad[], -1: none */
	char adname[ADAPTER_MAX][SPINDLE_NAME];
	struct adapter_params ad[ADAPTER_MAX];
};

/* Parse spec for members of member_bytes[i] bytes and resolve it: disks shared
 * (same disk=NAME), starts (start=, or after the previous member on a shared
 * disk), adapters (adapter=NAME with "@NAME=PRESET[:key=value]", or a preset
 * name for one adapter of that preset). Refuses, naming the member and both
 * sizes, a member that does not fit on its disk or overlaps another. */
int spindle_plan(const char *spec, unsigned members, const uint64_t *member_bytes,
		 struct spindle_plan *out, char *err, size_t errlen);

/* Where a member of member_bytes starts on its own disk under p (start=), or
 * -EINVAL with a message naming both sizes when it does not fit. */
int spindle_place(const struct spindle_params *p, uint64_t member_bytes, uint64_t *base,
		  char *err, size_t errlen);

/* The complete spec of p ("hdd:rpm=7200,..."), parseable by spindle_parse.
 * Returns the length snprintf would (truncated when >= len). */
int spindle_format(const struct spindle_params *p, char *buf, size_t len);

/* Names of the presets, NULL-terminated. */
extern const char *const spindle_presets[];

/* Every parameter, one per line, in spec syntax (for `fsvol model list`). */
void spindle_describe(const struct spindle_params *p, FILE *f);

/* Derived figures for a member of member_bytes on its disk (for `fsvol model
 * show`). Returns 0, or -EINVAL with the reason in err when it does not fit. */
int spindle_show(const struct spindle_params *p, uint64_t member_bytes, FILE *f,
		 char *err, size_t errlen);

/* Model (fsvol/spindle.c). */
/* A member alone on its disk (capacity_bytes, or the member's size when 0),
 * placed as p says (spindle_place; a member that does not fit is moved or the
 * disk grown so nothing breaks: check with spindle_place first). */
void spindle_init(struct spindle *s, const struct spindle_params *p, uint64_t member_bytes);
/* Move the member to disk byte base (clamped so it fits). */
void spindle_set_base(struct spindle *s, uint64_t base);
/* Make s another partition of disk's disk (already spindle_init'ed): one queue,
 * one head. The partition [base, base + member_bytes) is clamped to the disk. */
void spindle_share(struct spindle *s, struct spindle *disk, uint64_t member_bytes,
		   uint64_t base);
/* Put the disk s is on onto adapter a (NULL: its own link only). */
void spindle_set_adapter(struct spindle *s, struct adapter *a);
/* Nothing queued or in service on s's disk. */
int spindle_idle(const struct spindle *s);
/* Every service slot of s's disk is taken: nothing more starts before one of
 * the requests in service completes. */
int spindle_full(const struct spindle *s);
void spindle_enqueue(struct spindle *s, struct spindle_req *r);
/* Start the next request if a service slot is free; NULL when none can start.
 * Sets start_ns = max(now, arrival, slot free), done_ns and cost. On a shared
 * disk the request may be another member's (find yours through r->cookie). */
struct spindle_req *spindle_dispatch(struct spindle *s, uint64_t now_ns);
/* Free r's service slot (call at r->done_ns; any member's spindle of the disk). */
void spindle_complete(struct spindle *s, struct spindle_req *r);

/* Serve r on disk s (the disk's spindle) from t: sets start_ns, done_ns and
 * cost and moves the head and caches (spindle_dispatch's service step). */
uint64_t spindle_serve(struct spindle *s, struct spindle_req *r, uint64_t t);

/* What r would cost if it started at start_ns in the current state; changes nothing. */
uint64_t spindle_service_ns(const struct spindle *s, const struct spindle_req *r,
			    uint64_t start_ns, struct spindle_cost *cost);

/* Seek time over dist cylinders from a measured table (linear between its
 * points, extrapolated past the last), in ns. */
/* Fit s->seek_* to the data sheet's points (spindle_init; spindle_seek.c). */
void spindle_fit_seek(struct spindle *s);
double spindle_table_seek_ns(const struct spindle_table *t, double dist);
/* Seek time over dist cylinders of the disk (HDD), in ns. */
double spindle_seek_ns(const struct spindle *s, double dist);
/* Cylinder and zone of a byte of the disk (disk: the disk's spindle, s->disk). */
uint64_t spindle_disk_cylinder(const struct spindle *disk, uint64_t off);
unsigned spindle_disk_zone(const struct spindle *disk, uint64_t off);
/* Disk cylinder and zone of a member offset (HDD). */
uint64_t spindle_cylinder(const struct spindle *s, uint64_t offset);
unsigned spindle_zone_of(const struct spindle *s, uint64_t offset);
/* Sustained sequential media rate of zone z, bytes/s (track bytes per rev + switch). */
double spindle_zone_rate(const struct spindle *s, unsigned z);
/* Mean seek between two uniformly random bytes of the member (HDD), in ns: the
 * seek curve weighted by the bytes each cylinder holds. Below seek_avg, because
 * the sqrt part is concave and the outer zones hold more. */
double spindle_mean_seek_ns(const struct spindle *s);
/* The same over the whole disk (what a member filling the disk would see). */
double spindle_disk_mean_seek_ns(const struct spindle *s);
/* Analytic mean service time of a random read of len bytes at QD1:
 * HDD: overhead + mean seek + rev/2 + len / (byte-weighted media rate);
 * SSD: overhead + read + len / bw. */
double spindle_random_read_ns(const struct spindle *s, uint64_t len);

/* A measured drive's logical-to-physical map (spindle_map.c), as DiskSim's
 * layout_g1 maps it under the drive's sparing scheme, slips included: block
 * rel of zone z (counted from the zone's first user block) lies on cylinder
 * cyl, surface head, sector; slipoffs is the number of slips that push the
 * track's angle on (the sectors-per-cylinder and per-track schemes). */
struct spindle_pbn {
	uint64_t cyl;
	uint32_t head, sector, slipoffs;
};
void spindle_map_ltop(const struct spindle_table *t, uint32_t heads, unsigned z, uint64_t rel,
		      struct spindle_pbn *p);
/* Blocks from rel on that follow it on the same track, rel's own included
 * (at most left, the blocks left in the zone). */
uint64_t spindle_map_run(const struct spindle_table *t, uint32_t heads, unsigned z, uint64_t rel,
			 uint64_t left);

/* spindle_spec.c: format a message into err (when err and len are set). */
void spindle_seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
