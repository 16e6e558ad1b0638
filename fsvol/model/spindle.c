/* spindle: per-member disk model (HDD geometry, seek, rotation, read-ahead,
 * write-back; SSD channels), partitions of one disk, the adapter's share of a
 * transfer, and the queue disciplines. Pure computation in emulated ns; see
 * docs/model.md for the derivations.
 *
 * Inside this file `s` is the disk's spindle (s->disk == s) and offsets are disk
 * bytes, unless a function says otherwise; the public calls take a member's
 * spindle and member offsets and translate once (spindle_enqueue fills
 * r->disk_offset). */
#include "fsvol/model/spindle.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

#define NS_PER_S 1e9
#define MINUTE_NS 60000000000ull /* holds exactly rpm revolutions */

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Round a non-negative ns figure computed in double. */
static uint64_t ns_round(double ns) { return ns <= 0 ? 0 : (uint64_t)llround(ns); }

/* ---- geometry ------------------------------------------------------------ */

/* A measured drive's zones (spindle_table): user blocks fill whole tracks and
 * cylinders from the zone's empty front on, skipping the spares where the
 * sparing scheme puts them (locate); skews in turns. cyl_bytes is the mean of
 * user bytes per cylinder (for the mean-seek estimates). */
static void table_geometry(struct spindle *s)
{
	const struct spindle_table *t = s->p.tab;
	uint64_t start = 0;
	s->nzones = 0;
	for (unsigned z = 0; z < t->nzones && z < SPINDLE_MAX_ZONES; z++) {
		struct spindle_zone *zn = &s->zone[s->nzones++];
		zn->start = start;
		zn->bytes = t->zone[z].lbns * SPINDLE_SECTOR;
		zn->cyl0 = t->zone[z].cyl0;
		zn->cyls = t->zone[z].cyl1 - t->zone[z].cyl0 + 1;
		zn->spt = t->zone[z].spt;
		zn->track_bytes = (uint64_t)zn->spt * SPINDLE_SECTOR;
		zn->cyl_bytes = zn->cyls ? (zn->bytes + zn->cyls - 1) / zn->cyls : zn->bytes;
		if (zn->cyl_bytes < SPINDLE_SECTOR)
			zn->cyl_bytes = SPINDLE_SECTOR;
		zn->tskew = t->zone[z].tskew / zn->spt;
		zn->cskew = t->zone[z].cskew / zn->spt;
		zn->first = t->zone[z].first / zn->spt;
		zn->dead = t->zone[z].dead * SPINDLE_SECTOR;
		zn->unit = t->zone[z].unit * SPINDLE_SECTOR;
		zn->ubytes = (t->zone[z].unit - t->zone[z].spare) * SPINDLE_SECTOR;
		start += zn->bytes;
	}
	s->cylinders = t->cylinders;
}

/* Zoned recording: the sustained rate falls linearly from the outer to the inner
 * zone (bits per inch roughly constant, track length proportional to radius, and
 * equal-width bands). A track holds what the head passes in one revolution plus
 * one switch, so reading track after track sustains exactly the zone's rate:
 *   track_bytes = rate * (rev + switch).
 * Every zone gets the same number of cylinders, sized so the member fills the
 * whole stroke; the innermost zone takes the remainder. */
static void build_geometry(struct spindle *s)
{
	const struct spindle_params *p = &s->p;
	unsigned nz = p->zones ? p->zones : 1;
	uint64_t m = s->disk_bytes ? s->disk_bytes : 1;
	uint64_t cyl_bytes[SPINDLE_MAX_ZONES], sum = 0;
	uint32_t spt[SPINDLE_MAX_ZONES];

	if (nz > SPINDLE_MAX_ZONES)
		nz = SPINDLE_MAX_ZONES;
	s->rev_ns = (double)MINUTE_NS / (double)p->rpm;
	s->skew = (double)p->switch_ns / s->rev_ns;
	s->skew -= floor(s->skew);
	for (unsigned z = 0; z < nz; z++) {
		double rate = (double)p->rate_outer_Bps;
		if (nz > 1)
			rate += ((double)p->rate_inner_Bps - rate) * z / (nz - 1);
		double tb = rate * (s->rev_ns + (double)p->switch_ns) / NS_PER_S;
		spt[z] = tb >= SPINDLE_SECTOR ? (uint32_t)(tb / SPINDLE_SECTOR) : 1;
		cyl_bytes[z] = (uint64_t)p->heads * spt[z] * SPINDLE_SECTOR;
		sum += cyl_bytes[z];
	}
	if (p->tab) {
		table_geometry(s);
		return;
	}
	uint64_t per_zone = m / sum ? m / sum : 1;
	uint64_t left = m, cyl = 0;
	s->nzones = 0;
	for (unsigned z = 0; z < nz && left; z++) {
		uint64_t cyls = per_zone;
		if (z == nz - 1)
			cyls = (left + cyl_bytes[z] - 1) / cyl_bytes[z];
		uint64_t bytes = min_u64(left, cyls * cyl_bytes[z]);
		struct spindle_zone *zn = &s->zone[s->nzones++];
		zn->start = m - left;
		zn->bytes = bytes;
		zn->cyl0 = cyl;
		zn->cyls = (bytes + cyl_bytes[z] - 1) / cyl_bytes[z];
		zn->spt = spt[z];
		zn->track_bytes = (uint64_t)spt[z] * SPINDLE_SECTOR;
		zn->cyl_bytes = zn->track_bytes * p->heads;
		/* one skew per track switch, head or cylinder: byte angle =
		 * global track * skew + place in the track */
		zn->tskew = zn->cskew = s->skew;
		zn->first = (double)cyl * p->heads * s->skew;
		zn->first -= floor(zn->first);
		cyl += zn->cyls;
		left -= bytes;
	}
	s->cylinders = cyl;
}

static unsigned zone_at(const struct spindle *s, uint64_t offset)
{
	unsigned z = s->nzones ? s->nzones - 1 : 0;
	while (z > 0 && offset < s->zone[z].start)
		z--;
	return z;
}

/* Time a sequential transfer loses per track switch in zone z: the skew. */
static double switch_loss_ns(const struct spindle *s, unsigned z)
{
	const struct spindle_zone *zn = &s->zone[z];
	if (!s->p.tab)
		return (double)s->p.switch_ns;
	/* heads - 1 head switches and one cylinder switch per cylinder */
	double h = s->p.heads ? s->p.heads : 1;
	return ((h - 1) * zn->tskew + zn->cskew) / h * s->rev_ns;
}

double spindle_zone_rate(const struct spindle *sp, unsigned z)
{
	const struct spindle *s = sp->disk;
	return (double)s->zone[z].track_bytes * NS_PER_S / (s->rev_ns + switch_loss_ns(s, z));
}

struct loc {
	unsigned zone;
	uint64_t cyl;
	uint64_t track;   /* global track = cylinder * heads + head */
	uint64_t head;
	uint64_t in;      /* byte within the track */
	uint64_t run;     /* user bytes from here on, contiguous on this track */
	uint32_t slipoffs; /* slips that push the track's angle on, sectors */
};

/* A measured drive: DiskSim's map, slips included (spindle_map.c). */
static struct loc locate_tab(const struct spindle *s, uint64_t off, unsigned z)
{
	const struct spindle_zone *zn = &s->zone[z];
	uint64_t rel = (off - zn->start) / SPINDLE_SECTOR, left = (zn->bytes - (off - zn->start) +
		SPINDLE_SECTOR - 1) / SPINDLE_SECTOR;
	struct spindle_pbn p;
	struct loc l;
	spindle_map_ltop(s->p.tab, s->p.heads, z, rel, &p);
	l.zone = z;
	l.cyl = p.cyl;
	l.head = p.head < s->p.heads ? p.head : s->p.heads - 1;
	l.track = l.cyl * s->p.heads + l.head;
	l.in = (uint64_t)p.sector * SPINDLE_SECTOR + off % SPINDLE_SECTOR;
	l.slipoffs = p.slipoffs;
	l.run = spindle_map_run(s->p.tab, s->p.heads, z, rel, left) * SPINDLE_SECTOR - off % SPINDLE_SECTOR;
	return l;
}

static struct loc locate(const struct spindle *s, uint64_t off)
{
	struct loc l;
	if (off >= s->disk_bytes)
		off = s->disk_bytes ? s->disk_bytes - 1 : 0;
	l.zone = zone_at(s, off);
	if (s->p.tab)
		return locate_tab(s, off, l.zone);
	l.slipoffs = 0;
	const struct spindle_zone *zn = &s->zone[l.zone];
	uint64_t rel = off - zn->start, phys = rel, run = zn->bytes - rel;
	if (zn->unit) { /* spares at the end of each unit (track, cylinder, range) */
		phys = rel / zn->ubytes * zn->unit + rel % zn->ubytes;
		run = min_u64(run, zn->ubytes - rel % zn->ubytes);
	}
	phys += zn->dead;
	uint64_t pc = zn->track_bytes * s->p.heads;
	if (!s->p.tab)
		pc = zn->cyl_bytes;
	uint64_t c = phys / pc, in_cyl = phys % pc;
	l.head = in_cyl / zn->track_bytes;
	if (l.head >= s->p.heads)
		l.head = s->p.heads - 1;
	l.cyl = zn->cyl0 + c;
	l.track = l.cyl * s->p.heads + l.head;
	l.in = in_cyl - l.head * zn->track_bytes;
	if (l.in >= zn->track_bytes)
		l.in = zn->track_bytes - 1;
	l.run = min_u64(run, zn->track_bytes - l.in);
	return l;
}

uint64_t spindle_disk_cylinder(const struct spindle *disk, uint64_t off)
{
	return locate(disk, off).cyl;
}

unsigned spindle_disk_zone(const struct spindle *disk, uint64_t off)
{
	return zone_at(disk, off);
}

uint64_t spindle_cylinder(const struct spindle *s, uint64_t offset)
{
	return locate(s->disk, s->base + offset).cyl;
}

unsigned spindle_zone_of(const struct spindle *s, uint64_t offset)
{
	return zone_at(s->disk, s->base + offset);
}

/* Platter angle at emulated time t, in turns [0, 1). A minute holds exactly rpm
 * turns, so angle = frac(((t mod 1 min) * rpm) / 1 min), all in integers. */
static double angle_at(const struct spindle *s, uint64_t t)
{
	uint64_t q = (t + s->phase_ns) % MINUTE_NS;
	return (double)((q * s->p.rpm) % MINUTE_NS) / (double)MINUTE_NS;
}

/* Angle of a byte: its place in the track, plus the track skew that makes the
 * first byte of the next track arrive just after a switch (sequential transfers
 * then lose only the switch time, see media_ns). */
static double angle_of(const struct spindle *s, const struct loc *l)
{
	const struct spindle_zone *zn = &s->zone[l->zone];
	double c = (double)(l->cyl - zn->cyl0);
	double a = zn->first + c * ((double)(s->p.heads - 1) * zn->tskew + zn->cskew)
		 + (double)l->head * zn->tskew + (double)(l->in + (uint64_t)l->slipoffs * SPINDLE_SECTOR) /
		 (double)zn->track_bytes;
	return a - floor(a);
}

/* Time for the target to come under the head when it arrives at t. */
static double rotate_ns(const struct spindle *s, const struct loc *l, uint64_t t)
{
	double f = angle_of(s, l) - angle_at(s, t);
	f -= floor(f);
	double w = f * s->rev_ns;
	return w >= s->rev_ns - 0.5 ? 0 : w; /* rounding: "now" is not a full turn away */
}

/* Media time of [off, off + len): bytes at the zone's track rate, one switch per
 * track boundary crossed. */
static double media_ns(const struct spindle *s, uint64_t off, uint64_t len)
{
	double ns = 0;
	while (len) {
		if (off >= s->disk_bytes) { /* past the end: bill at the last zone's rate */
			ns += (double)len * s->rev_ns / (double)s->zone[s->nzones - 1].track_bytes;
			break;
		}
		struct loc l = locate(s, off);
		const struct spindle_zone *zn = &s->zone[l.zone];
		uint64_t n = min_u64(len, l.run ? l.run : 1);
		ns += (double)n * s->rev_ns / (double)zn->track_bytes;
		off += n;
		len -= n;
		if (len && !s->p.tab) {
			ns += (double)s->p.switch_ns;
		} else if (len) {
			/* the next track's first byte comes round after its skew */
			struct loc b = locate(s, off);
			double f = angle_of(s, &b) - angle_of(s, &l) - (double)(l.in + n) /
				   (double)zn->track_bytes + (double)l.in / (double)zn->track_bytes;
			f -= floor(f);
			ns += f * s->rev_ns;
		}
	}
	return ns;
}

/* Read-ahead: after a media read the drive goes on reading into its segment from
 * seg_h0 (reached at seg_t0) at the zone's sustained rate, until it reaches
 * seg_cap (the segment full, the read-ahead done) or the disk ends (a
 * partition's end does not stop it). */
static uint64_t seg_hi(const struct spindle *s, uint64_t t)
{
	uint64_t cap = min_u64(s->seg_cap, s->disk_bytes);
	if (s->seg_h0 >= cap || t <= s->seg_t0)
		return s->seg_h0; /* full (paused) or no time has passed */
	double rate = spindle_zone_rate(s, zone_at(s, s->seg_h0));
	/* The epsilon keeps a byte promised at a ceil()ed time (hdd_hit) from
	 * flooring to one short. */
	double got = (double)(t - s->seg_t0) * rate / NS_PER_S + 1e-6;
	if (got >= (double)(cap - s->seg_h0))
		return cap;
	return s->seg_h0 + (uint64_t)got;
}

/* The first byte the segment still holds when the prefetch has reached hi:
 * a measured drive's segment keeps the last seg_bytes read (a ring). */
static uint64_t seg_low(const struct spindle *s, uint64_t hi)
{
	uint64_t size = s->p.tab ? s->p.tab->seg_bytes : 0;
	if (size && hi > s->seg_lo + size)
		return hi - size;
	return s->seg_lo;
}

/* The byte under the head at t: the last one the prefetch or the last access
 * read (pos and seg_hi are exclusive ends). */
static uint64_t head_at(const struct spindle *s, uint64_t t)
{
	uint64_t end = s->seg_valid ? seg_hi(s, t) : s->pos;
	return end ? end - 1 : 0;
}

/* Largest request the read segment holds. */
static uint64_t seg_size(const struct spindle *s)
{
	return s->p.tab ? s->p.tab->seg_bytes : s->p.cache_bytes;
}

/* The end of the track that holds disk byte off (user bytes). */
static uint64_t track_end(const struct spindle *s, uint64_t off)
{
	if (off >= s->disk_bytes)
		return s->disk_bytes;
	return off + locate(s, off).run;
}

/* The segment a read of [off, end) leaves: its start and where the prefetch
 * stops. The preset model keeps cache_bytes from the read's start; a measured
 * drive reads ahead as its "Buffer continuous read" says (DiskSim's
 * disk_buffer_get_max_readahead): to a track's or cylinder's end, to the
 * segment's end or the maximum read-ahead (from the end, or counting the
 * request), or (DEC's scheme) to the end of the track after the request's,
 * one track further when the segment (started at seg0) began on an earlier
 * track: a sequential stream stays a track ahead. */
static void seg_span(const struct spindle *s, uint64_t seg0, uint64_t off, uint64_t end,
		     uint64_t *lo, uint64_t *cap)
{
	uint64_t size = seg_size(s);
	*lo = end - off > size ? end - size : off;
	*cap = *lo + size;
	if (!s->p.tab)
		return;
	const struct spindle_table *t = s->p.tab;
	/* DiskSim's disk_buffer_get_max_readahead: the maximum read-ahead past
	 * the request's end; without one, the segment from the request's start
	 * ("Read-ahead over requested" 0) or past its end */
	uint64_t ra = t->ra_bytes ? end + t->ra_bytes :
		      !t->ra_over ? max_u64(end, off + size) : end + size;
	switch (t->contread) {
	case 0:
		ra = end;
		break;
	case 1:
		ra = min_u64(ra, track_end(s, end - 1));
		break;
	case 2: {
		struct loc l = locate(s, end - 1);
		uint64_t e = end - 1;
		while (e < s->disk_bytes && locate(s, e).cyl == l.cyl)
			e = track_end(s, e);
		ra = min_u64(ra, e);
		break;
	}
	case 4: {
		uint64_t next0 = end - locate(s, end).in; /* first byte of end's track, about */
		ra = track_end(s, end);
		if (seg0 < next0 && ra < s->disk_bytes)
			ra = track_end(s, ra);
		break;
	}
	default:
		break;
	}
	/* The segment is a ring: a read-ahead past its size goes on to its
	 * target and overwrites the oldest blocks (seg_low). */
	*cap = max_u64(ra, end);
}

/* ---- service ------------------------------------------------------------- */

/* State changes a dispatch makes; computed by service(), applied by commit(). */
struct effect {
	int seg_valid;
	uint64_t seg_lo, seg_h0, seg_t0, seg_cap;
	uint64_t pos;
	uint64_t mech_free_ns;
	unsigned wb_pop;          /* destages finished by the ack */
	int wb_push;
	uint64_t wb_end, wb_bytes;
	uint64_t bus_free_ns;
	int resv;                 /* an adapter reservation to take */
	uint64_t resv_ready, resv_start, resv_hold, resv_bytes;
	int last_write;
	/* other segments (measured drives), applied in this order: */
	int inval;                /* drop those overlapping [inv_lo, inv_hi) */
	uint64_t inv_lo, inv_hi;
	int freeze;               /* keep [fz_lo, fz_hi) (the prefetch stopped there) */
	uint64_t fz_lo, fz_hi;
	int keep;                 /* keep [kp_lo, kp_hi) (written data) */
	uint64_t kp_lo, kp_hi;
	int touch;                /* a frozen segment hit: index, or -1 */
};

/* Command overhead of a request of kind k (SPINDLE_OVH_*). */
static uint64_t overhead(const struct spindle *s, int k)
{
	if (s->p.tab)
		return s->p.tab->ovh_ns[k][s->last_write ? 1 : 0];
	return k == SPINDLE_OVH_RHIT ? s->p.hit_overhead_ns : s->p.overhead_ns;
}

/* After the data: reselection, data preparation, completion (measured drives). */
static uint64_t done_overhead(const struct spindle *s, int write)
{
	return s->p.tab ? (write ? s->p.tab->wdone_ns : s->p.tab->rdone_ns) : 0;
}

/* Seek + rotation from the head at `from` to `off`, starting at ts; returns the
 * time the first byte is under the head. A write settles longer. */
static uint64_t position(const struct spindle *s, uint64_t from, uint64_t off, uint64_t ts,
			 int write, struct spindle_cost *c)
{
	struct loc a = locate(s, from), b = locate(s, off);
	uint64_t dist = a.cyl > b.cyl ? a.cyl - b.cyl : b.cyl - a.cyl;
	double seek = spindle_seek_ns(s, (double)dist);
	if (a.track != b.track && seek < (double)s->p.switch_ns)
		seek = (double)s->p.switch_ns; /* other surface */
	if (write && s->p.tab && a.track != b.track) {
		seek += (double)s->p.tab->settle_ns;
		if (seek < 0)
			seek = 0;
	}
	if (write && s->p.tab && seek < (double)s->p.tab->min_wseek_ns)
		seek = (double)s->p.tab->min_wseek_ns; /* "Minimum seek delay" */
	c->seek_ns = ns_round(seek);
	uint64_t arrive = ts + c->seek_ns;
	c->rotate_ns = ns_round(rotate_ns(s, &b, arrive));
	if (getenv("FS_DBG"))
		fprintf(stderr, "POS ts %.6f off %llu from %llu/%llu to %llu/%llu/%llu seek %.4f rot %.4f ang %.5f at %.5f\n",
			ts / 1e6, (unsigned long long)(off / 512), (unsigned long long)a.cyl,
			(unsigned long long)a.head, (unsigned long long)b.cyl, (unsigned long long)b.head,
			(unsigned long long)(b.in / 512), c->seek_ns / 1e6, c->rotate_ns / 1e6,
			angle_of(s, &b), angle_at(s, arrive));
	return arrive + c->rotate_ns;
}

static uint64_t iface_ns(const struct spindle *s, uint64_t len, int write)
{
	if (s->p.tab)
		return (len + SPINDLE_SECTOR - 1) / SPINDLE_SECTOR *
		       (write ? s->p.tab->wsect_ns : s->p.tab->rsect_ns);
	return ns_round((double)len * NS_PER_S / (double)s->p.iface_Bps);
}

/* The shared bus for len bytes that can go from `ready` on, and must not end
 * before `not_before` (a read's last byte leaves the media then): the drive
 * reconnects so its transfer ends then if the bus is free, later if not.
 * Returns the time the transfer ends on the bus (not_before when no adapter);
 * *late gets how much the bus being taken delayed it. */
static uint64_t bus(const struct spindle *s, uint64_t ready, uint64_t not_before, uint64_t len,
		    struct effect *e, uint64_t *late)
{
	const struct adapter *a = s->adapter;
	*late = 0;
	if (!a)
		return not_before;
	uint64_t hold = adapter_hold_ns(a, len);
	uint64_t want = not_before > ready + hold ? not_before - hold : ready;
	uint64_t start = adapter_find(a, want, hold);
	e->resv = 1;
	e->resv_ready = want;
	e->resv_start = start;
	e->resv_hold = hold;
	e->resv_bytes = len;
	*late = start - want;
	return start + hold > not_before ? start + hold : not_before;
}

/* A write changes what the other segments hold: overlapping data is dropped,
 * and a measured drive that allows read hits on write data keeps it. */
static void write_segments(const struct spindle *s, uint64_t off, uint64_t end, struct effect *e)
{
	if (!s->p.tab || s->p.tab->segments < 2)
		return;
	e->inval = 1;
	e->inv_lo = off;
	e->inv_hi = end;
	if (s->p.tab->write_seg && end - off <= s->p.tab->seg_bytes) {
		e->keep = 1;
		e->kp_lo = off;
		e->kp_hi = end;
	}
}

/* A measured drive with several segments keeps what the prefetching segment
 * read when another command takes the mechanism; a write over any of that
 * data empties the segment instead (DiskSim: a clean segment overlapping a
 * write is emptied). */
static void freeze_active(const struct spindle *s, const struct spindle_req *r, uint64_t t,
			  struct effect *e)
{
	if (!s->p.tab || s->p.tab->segments < 2 || !s->seg_valid)
		return;
	uint64_t hi = seg_hi(s, t), lo = seg_low(s, hi);
	if (r->write && r->disk_offset < hi && lo < r->disk_offset + r->length)
		return;
	e->freeze = 1;
	e->fz_lo = lo;
	e->fz_hi = hi;
}

/* How long after the command a measured drive's media write may start: when
 * the block under the head is in the buffer (DiskSim's
 * disk_buffer_block_available): the first block, or with "Extra write
 * disconnect" 10 blocks (a write under 45 blocks: 10 or all of it) or 15; a
 * drive holding the bus for the whole write waits for all of it. */
static uint64_t write_ready_ns(const struct spindle *s, uint64_t len, double link)
{
	const struct spindle_table *t = s->p.tab;
	uint64_t n = (len + SPINDLE_SECTOR - 1) / SPINDLE_SECTOR, k = 1;
	if (t->write_wm >= 1)
		return (uint64_t)link;
	if (t->extra_wdisc)
		k = n < 45 ? (n < 10 ? n : 10) : 15;
	return iface_ns(s, k * SPINDLE_SECTOR, 1);
}

/* Bytes a measured drive reads into its buffer before it reconnects to send
 * a read: the high water mark's share of the request (or the segment, if
 * smaller) in whole blocks, at least one (DiskSim's watermark). */
static uint64_t read_mark(const struct spindle *s, uint64_t len)
{
	uint64_t n = len / SPINDLE_SECTOR, seg = s->p.tab->seg_bytes / SPINDLE_SECTOR;
	if (seg && seg < n)
		n = seg;
	uint64_t k = (uint64_t)((double)n * s->p.tab->read_wm);
	return (k ? k : 1) * SPINDLE_SECTOR;
}

/* When a measured drive's media write of [off, off + len), its first sector
 * under the head at `at`, ends: sector by sector, each written only once its
 * block is in the buffer (and, with "Extra write disconnect", 10-15 blocks
 * are), else a turn later (DiskSim's disk_buffer_block_available); a track
 * switch within the write takes the head switch and the write settling. The
 * data comes in from t_cmd, one block per wsect. */
static uint64_t write_media_end(const struct spindle *s, uint64_t off, uint64_t len, uint64_t at,
				uint64_t t_cmd)
{
	const struct spindle_table *tb = s->p.tab;
	uint64_t n = (len + SPINDLE_SECTOR - 1) / SPINDLE_SECTOR, i = 0, o = off;
	uint64_t k = write_ready_ns(s, len, (double)iface_ns(s, len, 1)) / (tb->wsect_ns ? tb->wsect_ns : 1);
	double t = (double)at, x0 = (double)(t_cmd + tb->wprep_ns), ws = (double)tb->wsect_ns;
	while (i < n) {
		struct loc l = locate(s, o);
		const struct spindle_zone *zn = &s->zone[l.zone];
		double sect = s->rev_ns / zn->spt;
		uint64_t run = l.run / SPINDLE_SECTOR ? l.run / SPINDLE_SECTOR : 1;
		run = run < n - i ? run : n - i;
		for (uint64_t j = 0; j < run; j++, i++) {
			double ready = x0 + (double)(i + 1 > k ? i + 1 : k) * ws;
			if (t + 0.5 < ready)
				t += ceil((ready - t) / s->rev_ns) * s->rev_ns;
			t += sect;
		}
		o += run * SPINDLE_SECTOR;
		if (i < n) { /* the next track's first sector, after its skew */
			struct loc b = locate(s, o);
			double f = angle_of(s, &b) - angle_of(s, &l) - (double)(run * SPINDLE_SECTOR) /
				   (double)zn->track_bytes;
			f -= floor(f);
			double sw = (double)s->p.switch_ns + (double)tb->settle_ns;
			if (b.cyl != l.cyl)
				sw = spindle_seek_ns(s, 1) + (double)tb->settle_ns;
			double gap = f * s->rev_ns;
			while (gap + 0.5 < sw)
				gap += s->rev_ns;
			t += gap;
		}
	}
	return ns_round(t);
}

/* A media access (read miss, write-through): overhead, wait for the mechanism,
 * seek, rotate, transfer; with an adapter the data also crosses the shared bus
 * (a read's after the media, a write's before its media write can end). */
static uint64_t hdd_media(const struct spindle *s, const struct spindle_req *r, uint64_t t,
			  struct spindle_cost *c, struct effect *e)
{
	uint64_t off = r->disk_offset, late;
	c->overhead_ns = overhead(s, r->write ? SPINDLE_OVH_WMISS : SPINDLE_OVH_RMISS);
	uint64_t t_cmd = t + c->overhead_ns;
	uint64_t ts = max_u64(t_cmd, s->mech_free_ns);
	c->wait_ns = ts - t_cmd;
	double link = (double)iface_ns(s, r->length, r->write);
	uint64_t at = position(s, head_at(s, t), off, ts, r->write, c);
	if (r->write && s->p.tab) {
		uint64_t ready = t_cmd + write_ready_ns(s, r->length, link);
		if (ready > at) {
			struct loc b = locate(s, off);
			uint64_t arrive = ts + c->seek_ns;
			uint64_t from = max_u64(arrive, ready);
			c->rotate_ns = from - arrive + ns_round(rotate_ns(s, &b, from));
			at = arrive + c->rotate_ns;
		}
	}
	double media = media_ns(s, off, r->length);
	c->transfer_ns = ns_round(media > link ? media : link);
	uint64_t done = at + c->transfer_ns;
	if (r->write && s->p.tab) /* sector by sector, as the data comes in */
		done = write_media_end(s, off, r->length, at, t_cmd);
	else if (s->p.tab) /* reconnect at the high-water mark: whole blocks, one at least;
			    * the last block crosses the bus after it is read */
		done = max_u64(max_u64(done, at + ns_round(media_ns(s, off, read_mark(s, r->length)) + link)),
			       at + ns_round(media) + iface_ns(s, SPINDLE_SECTOR, 0));
	if (r->write)
		done = max_u64(done, bus(s, t_cmd, t_cmd, r->length, e, &late));
	else
		done = bus(s, at, done, r->length, e, &late);
	/* time the bus made us wait shows as wait; the rest is transfer */
	c->wait_ns += late < done - at ? late : done - at;
	c->transfer_ns = done - at - (late < done - at ? late : done - at);
	uint64_t fin = done_overhead(s, r->write);
	if (r->write && s->p.tab) /* the drive disconnected for the media write */
		fin += s->p.tab->wreselect_ns;
	c->overhead_ns += fin;
	uint64_t end = off + r->length;

	e->pos = end;
	e->seg_valid = 0;
	freeze_active(s, r, t, e); /* the prefetching segment keeps what it read */
	if (r->write)
		write_segments(s, off, end, e);
	if (!r->write && seg_size(s)) {
		/* The segment keeps the tail of what was read and prefetches on. */
		e->seg_valid = 1;
		seg_span(s, off, off, end, &e->seg_lo, &e->seg_cap);
		e->seg_h0 = end;
		e->seg_t0 = done;
	}
	return done + fin;
}

/* A read whose first byte is already in the segment (or is the next byte the
 * prefetch will bring): served through the interface once the data is there;
 * the prefetch goes on, now keeping the segment from the read's offset. A
 * measured drive also hits on a whole read held by another segment. */
static int hdd_hit(const struct spindle *s, const struct spindle_req *r, uint64_t t,
		   struct spindle_cost *c, struct effect *e, uint64_t *done)
{
	uint64_t off = r->disk_offset, late, end = off + r->length;
	if (r->write || r->length > seg_size(s))
		return 0;
	uint64_t hi = s->seg_valid ? seg_hi(s, t) : 0, avail = t;
	/* the segment holds the start, and the prefetch (still going) brings
	 * the rest; a measured drive's stops at seg_cap: a read from there on
	 * is a miss, one that starts in the data and ends past it a partial
	 * hit (the media read goes on to its end) */
	uint64_t cap = s->seg_valid ? min_u64(s->seg_cap, s->disk_bytes) : 0, t0 = t;
	int active = s->seg_valid && off >= seg_low(s, hi) && off <= hi &&
		     (!s->p.tab || end <= hi || end <= cap || off < hi);
	int f = -1;
	for (unsigned i = 0; !active && i < s->nfrozen; i++)
		if (off >= s->frozen[i].lo && end <= s->frozen[i].hi)
			f = (int)i;
	if (!active && f < 0)
		return 0;
	if (active && end > hi && hi >= cap && s->p.tab) {
		/* the prefetch had stopped: the media read starts again at hi */
		struct spindle_cost pc;
		t0 = position(s, hi - 1, hi, t + overhead(s, SPINDLE_OVH_RHIT), 0, &pc);
		avail = t0 + ns_round(media_ns(s, hi, end - hi));
	} else if (active && end > hi) {
		double rate = spindle_zone_rate(s, zone_at(s, hi));
		avail = t + (uint64_t)ceil((double)(end - hi) * NS_PER_S / rate);
	}
	c->overhead_ns = overhead(s, SPINDLE_OVH_RHIT);
	uint64_t bus_done = t + c->overhead_ns + iface_ns(s, r->length, 0);
	if (s->p.tab && avail > t) /* the last block crosses the bus once it is read */
		avail += iface_ns(s, SPINDLE_SECTOR, 0);
	*done = max_u64(bus_done, avail);
	*done = bus(s, t + c->overhead_ns, *done, r->length, e, &late);
	c->wait_ns = late < *done - t - c->overhead_ns ? late : *done - t - c->overhead_ns;
	c->transfer_ns = *done - t - c->overhead_ns - c->wait_ns;
	uint64_t fin = s->p.tab ? s->p.tab->rhit_done_ns : 0; /* no reselection */
	c->overhead_ns += fin;
	*done += fin;
	c->cache_hit = 1;
	if (!active) {
		e->touch = f; /* the prefetch (if any) goes on */
		return 1;
	}
	e->seg_valid = 1;
	e->seg_lo = off;
	e->seg_h0 = hi;   /* restart the prefetch clock: it may have paused when full */
	e->seg_t0 = t0;
	if (s->p.tab && !s->p.tab->ra_idle_hit && hi >= cap) {
		/* a hit while the read-ahead is done starts none ("Read-ahead on
		 * idle hit" off): the segment keeps what it holds */
		e->seg_lo = s->seg_lo;
		e->seg_cap = max_u64(cap, end);
	} else if (s->p.tab) {
		seg_span(s, s->seg_lo, off, end, &e->seg_lo, &e->seg_cap);
		/* the segment keeps what it holds before the hit (a ring: the
		 * oldest blocks go as the prefetch goes on) */
		if (seg_low(s, hi) < e->seg_lo)
			e->seg_lo = seg_low(s, hi);
	} else
		e->seg_cap = off + s->p.cache_bytes;
	if (e->seg_cap < hi)
		e->seg_cap = hi;
	e->pos = end;
	return 1;
}

/* Write-back: acknowledged once the data crossed the interface (and the adapter)
 * and fits in the cache beside the dirty data not yet destaged; the media write
 * is queued on the mechanism behind earlier destages (mech_free_ns) and delays
 * later media access. */
static int hdd_write_back(const struct spindle *s, const struct spindle_req *r, uint64_t t,
			  struct spindle_cost *c, struct effect *e, uint64_t *done)
{
	uint64_t off = r->disk_offset, late;
	if (!r->write || !s->p.wcache || r->length > s->p.cache_bytes)
		return 0;
	c->overhead_ns = overhead(s, SPINDLE_OVH_WHIT);
	uint64_t t_cmd = t + c->overhead_ns;
	uint64_t in_buf = bus(s, t_cmd, t_cmd + iface_ns(s, r->length, 1), r->length, e, &late);
	uint64_t ack = in_buf, dirty = 0;
	unsigned pop = 0;
	for (unsigned i = 0; i < s->wb_n; i++)
		dirty += s->wb[(s->wb_first + i) % SPINDLE_WB_SLOTS].bytes;
	for (;;) {
		while (pop < s->wb_n) {
			const unsigned i = (s->wb_first + pop) % SPINDLE_WB_SLOTS;
			if (s->wb[i].end_ns > ack)
				break;
			dirty -= s->wb[i].bytes;
			pop++;
		}
		if (dirty + r->length <= s->p.cache_bytes && s->wb_n - pop < SPINDLE_WB_SLOTS)
			break;
		ack = s->wb[(s->wb_first + pop) % SPINDLE_WB_SLOTS].end_ns; /* wait for room */
	}
	struct spindle_cost bg = {0};
	uint64_t ds = max_u64(in_buf, s->mech_free_ns);
	uint64_t at = position(s, head_at(s, t), off, ds, 1, &bg);
	uint64_t dend = at + ns_round(media_ns(s, off, r->length));
	uint64_t fin = done_overhead(s, 1);

	*done = ack + fin;
	c->overhead_ns += fin;
	c->transfer_ns = in_buf - t_cmd - late;
	c->wait_ns = ack - in_buf + late;
	c->write_back = 1;
	e->seg_valid = 0;
	freeze_active(s, r, t, e);
	write_segments(s, off, off + r->length, e);
	e->pos = off + r->length;
	e->mech_free_ns = dend;
	e->wb_pop = pop;
	e->wb_push = 1;
	e->wb_end = dend;
	e->wb_bytes = r->length;
	return 1;
}

/* SSD: overhead and flash latency on the request's channel, then the transfer
 * over the bandwidth shared by all channels (serialised in dispatch order), and
 * over the adapter when there is one. */
static uint64_t ssd_service(const struct spindle *s, const struct spindle_req *r, uint64_t t,
			    struct spindle_cost *c, struct effect *e)
{
	uint64_t late;
	c->overhead_ns = s->p.overhead_ns;
	c->access_ns = r->write ? s->p.write_ns : s->p.read_ns;
	uint64_t ready = t + c->overhead_ns + c->access_ns;
	uint64_t xs = max_u64(ready, s->bus_free_ns);
	c->wait_ns = xs - ready;
	c->transfer_ns = ns_round((double)r->length * NS_PER_S / (double)s->p.bw_Bps);
	e->bus_free_ns = xs + c->transfer_ns;
	uint64_t done = bus(s, xs, e->bus_free_ns, r->length, e, &late);
	c->wait_ns += late;
	c->transfer_ns = done - xs - late;
	return done;
}

static uint64_t service(const struct spindle *s, const struct spindle_req *r, uint64_t t,
			struct spindle_cost *c, struct effect *e)
{
	uint64_t done;
	memset(c, 0, sizeof(*c));
	memset(e, 0, sizeof(*e));
	e->seg_valid = s->seg_valid;
	e->seg_lo = s->seg_lo;
	e->seg_h0 = s->seg_h0;
	e->seg_t0 = s->seg_t0;
	e->seg_cap = s->seg_cap;
	e->pos = s->pos;
	e->mech_free_ns = s->mech_free_ns;
	e->bus_free_ns = s->bus_free_ns;
	e->last_write = r->write;
	e->touch = -1;
	switch (s->p.kind) {
	case SPINDLE_HDD:
		if (hdd_hit(s, r, t, c, e, &done) || hdd_write_back(s, r, t, c, e, &done))
			return done;
		return hdd_media(s, r, t, c, e);
	case SPINDLE_SSD:
		return ssd_service(s, r, t, c, e);
	case SPINDLE_NONE:
		break;
	}
	return t;
}

/* Keep [lo, hi) as a segment of its own, in the least recently used one's
 * place when all are taken (one segment always prefetches). */
static void frozen_add(struct spindle *s, uint64_t lo, uint64_t hi)
{
	unsigned max = s->p.tab->segments - 1, v = 0;
	if (hi <= lo || !max)
		return;
	if (max > SPINDLE_MAX_SEGS)
		max = SPINDLE_MAX_SEGS;
	if (s->nfrozen < max) {
		v = s->nfrozen++;
	} else {
		for (unsigned i = 1; i < s->nfrozen; i++)
			if (s->frozen[i].used < s->frozen[v].used)
				v = i;
	}
	s->frozen[v].lo = lo;
	s->frozen[v].hi = hi;
	s->frozen[v].used = ++s->stamp;
}

static void commit(struct spindle *s, const struct effect *e)
{
	s->seg_valid = e->seg_valid;
	s->seg_lo = e->seg_lo;
	s->seg_h0 = e->seg_h0;
	s->seg_t0 = e->seg_t0;
	s->seg_cap = e->seg_cap;
	s->pos = e->pos;
	s->mech_free_ns = e->mech_free_ns;
	s->bus_free_ns = e->bus_free_ns;
	s->last_write = e->last_write;
	s->wb_first = (s->wb_first + e->wb_pop) % SPINDLE_WB_SLOTS;
	s->wb_n -= e->wb_pop;
	if (e->wb_push) {
		assert(s->wb_n < SPINDLE_WB_SLOTS);
		unsigned i = (s->wb_first + s->wb_n++) % SPINDLE_WB_SLOTS;
		s->wb[i].end_ns = e->wb_end;
		s->wb[i].bytes = e->wb_bytes;
	}
	if (e->touch >= 0)
		s->frozen[e->touch].used = ++s->stamp;
	if (e->inval) {
		for (unsigned i = 0; i < s->nfrozen;) {
			if (s->frozen[i].lo < e->inv_hi && e->inv_lo < s->frozen[i].hi)
				s->frozen[i] = s->frozen[--s->nfrozen];
			else
				i++;
		}
	}
	if (e->freeze)
		frozen_add(s, e->fz_lo, e->fz_hi);
	if (e->keep)
		frozen_add(s, e->kp_lo, e->kp_hi);
	if (e->resv && s->adapter)
		adapter_reserve(s->adapter, e->resv_ready, e->resv_start, e->resv_hold,
				e->resv_bytes);
}
uint64_t spindle_service_ns(const struct spindle *s, const struct spindle_req *r,
			    uint64_t start_ns, struct spindle_cost *cost)
{
	struct spindle_cost c;
	struct effect e;
	struct spindle_req q = *r;
	q.disk_offset = s->base + r->offset;
	uint64_t done = service(s->disk, &q, start_ns, &c, &e);
	if (cost)
		*cost = c;
	return done - start_ns;
}

/* ---- placement --------------------------------------------------------------- */

/* First disk byte of a member of member_bytes under p's start= on disk d (its
 * geometry built); it may not fit. */
static uint64_t start_of(const struct spindle *d, const struct spindle_params *p,
			 uint64_t member_bytes)
{
	switch (p->start_mode) {
	case SPINDLE_START_BYTES:
		return p->start_bytes;
	case SPINDLE_START_FRAC:
		if (p->kind == SPINDLE_HDD && d->cylinders) {
			/* the first byte of the cylinder that far across the stroke */
			uint64_t c = (uint64_t)(p->start_frac * (double)d->cylinders);
			if (c >= d->cylinders)
				c = d->cylinders - 1;
			for (unsigned z = 0; z < d->nzones; z++) {
				const struct spindle_zone *zn = &d->zone[z];
				if (c < zn->cyl0 + zn->cyls)
					return zn->start + (c - zn->cyl0) * zn->track_bytes * d->p.heads;
			}
			return d->disk_bytes;
		}
		return (uint64_t)(p->start_frac * (double)d->disk_bytes) / 4096 * 4096;
	case SPINDLE_START_INNER:
		return d->disk_bytes > member_bytes ? d->disk_bytes - member_bytes : 0;
	case SPINDLE_START_AUTO:
		break;
	}
	return 0;
}

void spindle_init(struct spindle *s, const struct spindle_params *p, uint64_t member_bytes)
{
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->disk = s;
	s->member_bytes = member_bytes;
	/* a member larger than its disk grows the disk: callers check first */
	s->disk_bytes = p->capacity_bytes > member_bytes ? p->capacity_bytes : member_bytes;
	if (p->kind == SPINDLE_HDD) {
		if (!s->p.heads)
			s->p.heads = 1;
		if (!s->p.rpm)
			s->p.rpm = 1;
		if (!s->p.iface_Bps)
			s->p.iface_Bps = 1;
		if (!s->p.rate_outer_Bps)
			s->p.rate_outer_Bps = 1;
		build_geometry(s);
		spindle_fit_seek(s);
	} else if (p->kind == SPINDLE_SSD) {
		if (!s->p.channels)
			s->p.channels = 1;
		if (!s->p.bw_Bps)
			s->p.bw_Bps = 1;
	}
	s->want_base = start_of(s, &s->p, member_bytes);
	spindle_set_base(s, s->want_base);
}

void spindle_set_base(struct spindle *s, uint64_t base)
{
	uint64_t room = s->disk_bytes > s->member_bytes ? s->disk_bytes - s->member_bytes : 0;
	s->base = base < room ? base : room;
}

void spindle_share(struct spindle *s, struct spindle *disk, uint64_t member_bytes,
		   uint64_t base)
{
	struct spindle *d = disk->disk;
	memset(s, 0, sizeof(*s));
	s->p = d->p;
	s->disk = d;
	s->disk_bytes = d->disk_bytes;
	s->member_bytes = member_bytes < d->disk_bytes ? member_bytes : d->disk_bytes;
	spindle_set_base(s, base);
}

void spindle_set_adapter(struct spindle *s, struct adapter *a)
{
	s->disk->adapter = a;
}

uint64_t spindle_serve(struct spindle *s, struct spindle_req *r, uint64_t t)
{
	struct effect e;
	r->start_ns = t;
	r->done_ns = service(s, r, t, &r->cost, &e);
	commit(s, &e);
	return r->done_ns;
}
