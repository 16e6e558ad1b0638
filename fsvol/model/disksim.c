/* disksim: map DiskSim's disk parameters onto fsvol's spindle model.
 *
 * What maps (docs/validation.md): rpm, surfaces, the g1 layout's zones (cylinders,
 * sectors per track, track and cylinder skews, first-block offset, spares), the
 * seek curve (an extracted table, or the HPL equation with the first ten seeks,
 * tabulated), head switch, write settling, the eight command overheads,
 * completion/reselection/data preparation overheads, the per-sector transfer
 * time of the disk and its bus, the read and write water marks (and holding
 * the bus for a write's whole transfer), the cache segments and read-ahead,
 * and write caching (fast write). Everything else is listed as ignored. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/model/disksim.h"
#include "fsvol/model/dsparam.h"

#define MS_NS 1e6

struct ds_ctx {
	char *err;
	size_t errlen;
};

static int ds_err(struct ds_ctx *c, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int ds_err(struct ds_ctx *c, const char *file, int line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%d: %s", file, line, msg);
	return -EINVAL;
}

/* A number parameter; *v left alone (and 0 returned) when absent and optional. */
static int num(struct ds_ctx *c, struct dsp_block *b, const char *key, int required, double *v)
{
	struct dsp_param *p = dsp_get(b, key);
	if (!p) {
		if (required)
			return ds_err(c, b->file, b->line, "%s %s: missing '%s'", b->type, b->name, key);
		return 0;
	}
	if (p->v.kind != DSP_NUM)
		return ds_err(c, p->v.file, p->v.line, "%s: expected a number", key);
	*v = p->v.num;
	return 0;
}

static struct dsp_block *sub(struct ds_ctx *c, struct dsp_block *b, const char *key, int *rc)
{
	struct dsp_param *p = dsp_get(b, key);
	*rc = 0;
	if (!p)
		*rc = ds_err(c, b->file, b->line, "%s %s: missing '%s'", b->type, b->name, key);
	else if (p->v.kind != DSP_BLOCK)
		*rc = ds_err(c, p->v.file, p->v.line, "%s: expected a block (TYPE { ... } or source"
			     " FILE)", key);
	return *rc ? NULL : p->v.block;
}

/* The seek file of an "extracted" curve: "Seek distances measured: N" then
 * N lines "distance, ms". */
static int load_seek(struct ds_ctx *c, const char *base, const struct dsp_val *v,
		     struct spindle_table *t)
{
	char path[1200];
	const char *slash = strrchr(base, '/');
	if (v->kind != DSP_WORD)
		return ds_err(c, v->file, v->line, "Full seek curve: expected a file name");
	if (v->word[0] != '/' && slash)
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - base), base, v->word);
	else
		snprintf(path, sizeof(path), "%s", v->word);
	FILE *f = fopen(path, "r");
	struct stat st;
	if (!f)
		return ds_err(c, v->file, v->line, "Full seek curve %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return ds_err(c, v->file, v->line, "Full seek curve %s: not a regular file", path);
	}
	char line[256];
	int n = -1, ln = 0, rc = 0;
	t->nseek = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		ln++;
		double d, ms;
		if (n < 0) {
			if (sscanf(line, "Seek distances measured: %d", &n) != 1 || n < 1)
				rc = ds_err(c, path, ln, "expected 'Seek distances measured: N'");
			continue;
		}
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (sscanf(line, "%lf , %lf", &d, &ms) != 2 || d < 1 || ms < 0 ||
		    (t->nseek && d <= t->seek_d[t->nseek - 1]))
			rc = ds_err(c, path, ln, "expected 'distance, milliseconds' with rising distances");
		else if (t->nseek == SPINDLE_SEEK_POINTS)
			rc = ds_err(c, path, ln, "more than %d seek distances", SPINDLE_SEEK_POINTS);
		else {
			t->seek_d[t->nseek] = (uint32_t)d;
			t->seek_ns[t->nseek++] = ms * MS_NS;
		}
	}
	fclose(f);
	if (!rc && t->nseek != (unsigned)n)
		rc = ds_err(c, path, ln, "%u seek distances, the header says %d", t->nseek, n);
	return rc;
}

/* The HPL seek equation (Ruemmler & Wilkes) as a table: the first ten seeks
 * as measured, then a + b*sqrt(d) below the knee and c + e*d above, sampled
 * densely enough that linear interpolation stays within a microsecond. */
static int hpl_table(struct ds_ctx *c, struct dsp_block *m, int first10, double one_ms,
		     struct spindle_table *t)
{
	struct dsp_param *h = dsp_get(m, "HPL seek equation values");
	double hp[6], f10[10];
	if (!h || h->v.kind != DSP_LIST || h->v.nitem != 6)
		return ds_err(c, h ? h->v.file : m->file, h ? h->v.line : m->line,
			      "HPL seek equation values: expected a list of 6 numbers");
	for (int i = 0; i < 6; i++) {
		if (h->v.item[i].kind != DSP_NUM)
			return ds_err(c, h->v.item[i].file, h->v.item[i].line, "expected a number");
		hp[i] = h->v.item[i].num;
	}
	if (first10) {
		struct dsp_param *f = dsp_get(m, "First ten seek times");
		if (!f || f->v.kind != DSP_LIST || f->v.nitem != 10)
			return ds_err(c, f ? f->v.file : m->file, f ? f->v.line : m->line,
				      "First ten seek times: expected a list of 10 numbers");
		for (int i = 0; i < 10; i++) {
			if (f->v.item[i].kind != DSP_NUM)
				return ds_err(c, f->v.item[i].file, f->v.item[i].line, "expected a number");
			f10[i] = f->v.item[i].num;
		}
	}
	t->nseek = 0;
	double d = 1;
	while (d <= t->cylinders && t->nseek < SPINDLE_SEEK_POINTS) {
		double ms;
		if (first10 && d <= 10)
			ms = f10[(int)d - 1];
		else if (d == 1 && hp[5] != -1)
			ms = one_ms;
		else if (d < hp[0])
			ms = hp[1] + hp[2] * sqrt(d);
		else
			ms = hp[3] + hp[4] * d;
		t->seek_d[t->nseek] = (uint32_t)d;
		t->seek_ns[t->nseek++] = ms * MS_NS;
		double next = d < 16 ? d + 1 : ceil(d * 1.06);
		if (d < hp[0] && next > hp[0])
			next = hp[0]; /* the knee itself */
		d = next;
	}
	return 0;
}

/* A zone's sparing as DiskSim's layout_g1 lays it out: user blocks fill the
 * zone's physical blocks from `dead` on, in units of `unit` physical blocks of
 * which the last `spare` are spares (0: one unit, the whole zone). The zone's
 * user blocks are what is left, as dm_layout_g1_compute_blksinband counts them;
 * their sum is the drive's capacity (DiskSim overrides the file's Block count). */
static void zone_spares(int scheme, double range, uint64_t cyls, uint64_t heads, uint64_t spt,
			uint64_t spares, uint64_t slips, uint64_t dead, struct spindle_table *t,
			unsigned i)
{
	uint64_t all = cyls * heads * spt, lost = 0, unit = 0, per = 0;
	uint64_t rsz = range >= 1 ? (uint64_t)range : 1;
	switch (scheme) {
	case 1:  /* spare tracks at the zone's end */
		lost = spares * spt;
		break;
	case 2: case 5:  /* sectors per cylinder */
		unit = heads * spt, per = spares, lost = cyls * spares;
		break;
	case 4: case 6:  /* ... and slips pushed to the zone's end */
		unit = heads * spt, per = spares, lost = cyls * spares + slips;
		break;
	case 3:  /* sectors per track */
		unit = spt, per = spares, lost = cyls * heads * spares;
		break;
	case 7:  /* spares at the disk's end: only the slips cost the zone */
		lost = slips;
		break;
	case 8:  /* sectors per range of cylinders (whole ranges only) */
		unit = rsz * heads * spt, per = spares, lost = cyls / rsz * spares;
		break;
	case 9:
		lost = spares;
		break;
	case 10:
		lost = spares + slips;
		break;
	default: /* 0: none */
		break;
	}
	lost += dead;
	t->zone[i].lbns = lost < all ? all - lost : 0;
	t->zone[i].dead = dead;
	t->zone[i].unit = per < unit ? unit : 0;
	t->zone[i].spare = per < unit ? per : 0;
}

/* A zone's slips, kept in the table's list in the order given. */
static int zone_slips(struct ds_ctx *c, struct dsp_param *sl, struct spindle_table *t, unsigned z)
{
	t->zone[z].slip0 = t->nslips;
	t->zone[z].nslip = 0;
	if (!sl || sl->v.kind != DSP_LIST)
		return 0;
	sl->used = 1;
	for (size_t k = 0; k < sl->v.nitem; k++) {
		const struct dsp_val *v = &sl->v.item[k];
		if (v->kind != DSP_NUM || v->num < 0)
			return ds_err(c, v->file, v->line, "slips: expected block numbers");
		if (t->nslips >= SPINDLE_MAX_SLIPS)
			return ds_err(c, v->file, v->line, "slips: more than %d in the drive",
				      SPINDLE_MAX_SLIPS);
		t->slip[t->nslips++] = (uint32_t)v->num;
		t->zone[z].nslip++;
	}
	return 0;
}

static int map_layout(struct ds_ctx *c, struct dsp_block *l, uint32_t heads, struct spindle_table *t)
{
	double scheme = 0, range = 1;
	int rc = num(c, l, "Sparing scheme used", 0, &scheme);
	rc = rc ? rc : num(c, l, "Rangesize for sparing", 0, &range);
	struct dsp_param *z = dsp_get(l, "Zones");
	if (rc)
		return rc;
	if (!z || z->v.kind != DSP_LIST || !z->v.nitem)
		return ds_err(c, z ? z->v.file : l->file, z ? z->v.line : l->line,
			      "Zones: expected a list of dm_layout_g1_zone blocks");
	if (z->v.nitem > SPINDLE_MAX_ZONES)
		return ds_err(c, z->v.file, z->v.line, "%zu zones: at most %d", z->v.nitem,
			      SPINDLE_MAX_ZONES);
	uint64_t sum = 0;
	t->nzones = 0;
	t->nslips = 0;
	t->scheme = (int)scheme;
	t->range = range >= 1 ? (uint32_t)range : 1;
	for (size_t i = 0; i < z->v.nitem; i++) {
		struct dsp_val *v = &z->v.item[i];
		if (v->kind != DSP_BLOCK)
			return ds_err(c, v->file, v->line, "Zones: expected dm_layout_g1_zone { ... }");
		struct dsp_block *b = v->block;
		double c0, c1, spt, off = 0, ts = 0, cs = 0, sp = 0, dead = 0;
		if ((rc = num(c, b, "First cylinder number", 1, &c0)) ||
		    (rc = num(c, b, "Last cylinder number", 1, &c1)) ||
		    (rc = num(c, b, "Blocks per track", 1, &spt)) ||
		    (rc = num(c, b, "Offset of first block", 0, &off)) ||
		    (rc = num(c, b, "Empty space at zone front", 0, &dead)) ||
		    (rc = num(c, b, "Skew for track switch", 0, &ts)) ||
		    (rc = num(c, b, "Skew for cylinder switch", 0, &cs)) ||
		    (rc = num(c, b, "Number of spares", 0, &sp)))
			return rc;
		/* slips: where each is moves the blocks after it (spindle_map.c) */
		struct dsp_param *sl = dsp_get(b, "slips");
		uint64_t slips = sl && sl->v.kind == DSP_LIST ? sl->v.nitem : 0;
		if ((rc = zone_slips(c, sl, t, (unsigned)i)))
			return rc;
		t->zone[i].spares = sp > 0 ? (uint32_t)sp : 0;
		if (c1 == t->cylinders)
			t->cylinders++; /* some files count the last cylinder from 1 */
		if (c1 < c0 || c0 < 0 || spt < 1 || c1 >= t->cylinders || dead < 0)
			return ds_err(c, b->file, b->line, "zone: cylinders %g..%g, %g blocks per track"
				      " (the disk has %u cylinders)", c0, c1, spt, t->cylinders);
		t->zone[i].cyl0 = (uint32_t)c0;
		t->zone[i].cyl1 = (uint32_t)c1;
		t->zone[i].spt = (uint32_t)spt;
		t->zone[i].tskew = ts;
		t->zone[i].cskew = cs;
		t->zone[i].first = off;
		zone_spares((int)scheme, range, (uint64_t)(c1 - c0 + 1), heads, (uint64_t)spt,
			    (uint64_t)sp, slips, (uint64_t)dead, t, (unsigned)i);
		if (!t->zone[i].lbns)
			return ds_err(c, b->file, b->line, "zone: no user blocks left after %g spares"
				      " and %g empty", sp, dead);
		sum += t->zone[i].lbns;
		t->nzones++;
	}
	t->file_blocks = t->blocks;
	t->blocks = sum;
	return 0;
}

static int map_mech(struct ds_ctx *c, struct dsp_block *m, struct spindle_params *p,
		    struct spindle_table *t)
{
	double rpm = 0, hs = 0, settle = 0, one = 0;
	int rc = num(c, m, "Rotation speed (in rpms)", 1, &rpm);
	rc = rc ? rc : num(c, m, "Head switch time", 0, &hs);
	rc = rc ? rc : num(c, m, "Add. write settling delay", 0, &settle);
	rc = rc ? rc : num(c, m, "Single cylinder seek time", 0, &one);
	if (rc)
		return rc;
	if (rpm < 1 || rpm > 100000)
		return ds_err(c, m->file, m->line, "Rotation speed (in rpms) %g: out of range", rpm);
	p->rpm = (uint32_t)llround(rpm);
	p->switch_ns = (uint64_t)llround(hs * MS_NS);
	t->settle_ns = (int64_t)llround(settle * MS_NS);
	struct dsp_param *at = dsp_get(m, "Access time type");
	if (at && (at->v.kind != DSP_WORD || strcmp(at->v.word, "trackSwitchPlusRotation")))
		return ds_err(c, at->v.file, at->v.line, "Access time type %s: only"
			      " trackSwitchPlusRotation is modelled", at->v.word ? at->v.word : "?");
	struct dsp_param *st = dsp_get(m, "Seek type");
	if (!st || st->v.kind != DSP_WORD)
		return ds_err(c, st ? st->v.file : m->file, st ? st->v.line : m->line,
			      "Seek type: expected extracted, hpl or hplplus10");
	if (!strcmp(st->v.word, "extracted")) {
		struct dsp_param *f = dsp_get(m, "Full seek curve");
		if (!f)
			return ds_err(c, m->file, m->line, "Seek type extracted: missing 'Full seek curve'");
		rc = load_seek(c, f->v.file, &f->v, t);
	} else if (!strcmp(st->v.word, "hpl") || !strcmp(st->v.word, "hplplus10")) {
		rc = hpl_table(c, m, !strcmp(st->v.word, "hplplus10"), one, t);
	} else {
		rc = ds_err(c, st->v.file, st->v.line, "Seek type %s: not modelled (extracted, hpl,"
			    " hplplus10)", st->v.word);
	}
	return rc;
}

static double get0(struct ds_ctx *c, struct dsp_block *b, const char *key, int *rc)
{
	double v = 0;
	if (!*rc)
		*rc = num(c, b, key, 0, &v);
	return v;
}

static uint64_t ms_ns(double ms)
{
	return ms > 0 ? (uint64_t)llround(ms * MS_NS) : 0;
}

/* The disk block's controller, cache and overhead parameters. */
static int map_disk(struct ds_ctx *c, struct dsp_file *f, struct dsp_block *d,
		    struct spindle_params *p, struct spindle_table *t)
{
	int rc = 0;
	static const char *const ovh[SPINDLE_OVH_KINDS][2] = {
		{ "Read miss over. after read", "Read miss over. after write" },
		{ "Read hit over. after read", "Read hit over. after write" },
		{ "Write miss over. after read", "Write miss over. after write" },
		{ "Write hit over. after read", "Write hit over. after write" },
	};
	double scale = 1, per = get0(c, d, "Per-request overhead time", &rc);
	if (dsp_get(d, "Time scale for overheads"))
		scale = get0(c, d, "Time scale for overheads", &rc);
	for (int k = 0; k < SPINDLE_OVH_KINDS; k++)
		for (int w = 0; w < 2; w++)
			t->ovh_ns[k][w] = ms_ns((get0(c, d, ovh[k][w], &rc) + per) * scale);
	t->rhit_done_ns = ms_ns((get0(c, d, "Read completion overhead", &rc) +
				 get0(c, d, "Data preparation overhead", &rc)) * scale);
	t->rdone_ns = ms_ns((get0(c, d, "Read completion overhead", &rc) +
			     get0(c, d, "First reselect overhead", &rc) +
			     get0(c, d, "Data preparation overhead", &rc)) * scale);
	t->wdone_ns = ms_ns(get0(c, d, "Write completion overhead", &rc) * scale);
	t->wprep_ns = ms_ns(get0(c, d, "Data preparation overhead", &rc) * scale);
	/* a drive that disconnects while it writes (it does not hold the bus for
	 * the whole write) reselects before it reports the completion */
	if (get0(c, d, "Hold bus entire write xfer", &rc) == 0 &&
	    get0(c, d, "Never disconnect", &rc) == 0)
		t->wreselect_ns = ms_ns(get0(c, d, "First reselect overhead", &rc) * scale);
	/* The transfer to the host goes at the slowest of the disk's and the
	 * buses' per-sector times (DiskSim takes the largest along the path). */
	double bulk = get0(c, d, "Bulk sector transfer time", &rc), rb = bulk, wb = bulk;
	for (size_t i = 0; i < f->nblock; i++) {
		struct dsp_block *b = f->block[i];
		if (!strcmp(b->type, "disksim_bus")) {
			double r = get0(c, b, "Read block transfer time", &rc);
			double w = get0(c, b, "Write block transfer time", &rc);
			rb = r > rb ? r : rb;
			wb = w > wb ? w : wb;
		} else if (!strcmp(b->type, "disksim_ctlr")) {
			double x = get0(c, b, "Bulk sector transfer time", &rc);
			rb = x > rb ? x : rb;
			wb = x > wb ? x : wb;
		}
	}
	t->rsect_ns = ms_ns(rb);
	t->wsect_ns = ms_ns(wb);
	/* "Set watermark by reqsize": the share of the request, else of the segment */
	double wm = get0(c, d, "High (read) water mark", &rc);
	t->read_wm = wm > 0 && wm <= 1 ? wm : 0; /* 1: the whole read is buffered first */
	/* a low water mark of 1, or a drive that holds the bus for a write's
	 * whole transfer, takes all of a write's data before it writes; others
	 * write block by block as the data comes in */
	wm = get0(c, d, "Low (write) water mark", &rc);
	t->write_wm = wm >= 1 ? 1 : 0;
	if (get0(c, d, "Hold bus entire write xfer", &rc) != 0)
		t->write_wm = 1;
	t->extra_wdisc = get0(c, d, "Extra write disconnect", &rc) != 0;
	t->min_wseek_ns = ms_ns(get0(c, d, "Minimum seek delay", &rc));
	double segs = get0(c, d, "Number of buffer segments", &rc);
	double seg = get0(c, d, "Segment size (in blks)", &rc);
	double ra = get0(c, d, "Maximum read-ahead (blks)", &rc);
	double over = get0(c, d, "Read-ahead over requested", &rc);
	double cont = dsp_get(d, "Buffer continuous read") ? get0(c, d, "Buffer continuous read", &rc) : 3;
	double wsegs = get0(c, d, "Maximum number of write segments", &rc);
	double fast = get0(c, d, "Fast write level", &rc);
	double hitw = get0(c, d, "Allow read hits on write data", &rc);
	double on = dsp_get(d, "Enable caching in buffer") ? get0(c, d, "Enable caching in buffer", &rc) : 1;
	if (rc)
		return rc;
	if (!on)
		segs = 0;
	t->segments = segs < 0 ? 0 : segs > SPINDLE_MAX_SEGS ? SPINDLE_MAX_SEGS : (unsigned)segs;
	t->seg_bytes = t->segments && seg > 0 ? (uint64_t)seg * SPINDLE_SECTOR : 0;
	t->ra_bytes = ra > 0 ? (uint64_t)ra * SPINDLE_SECTOR : 0;
	t->ra_over = over != 0;
	t->contread = cont >= 0 && cont <= 4 ? (int)cont : 3;
	t->write_seg = hitw != 0;
	t->ra_idle_hit = !dsp_get(d, "Read-ahead on idle hit") ||
			 get0(c, d, "Read-ahead on idle hit", &rc) != 0;
	p->wcache = fast > 0 && t->seg_bytes;
	p->cache_bytes = (uint64_t)(wsegs > 0 ? wsegs : 1) * t->seg_bytes;
	p->overhead_ns = t->ovh_ns[SPINDLE_OVH_RMISS][0];
	p->hit_overhead_ns = t->ovh_ns[SPINDLE_OVH_RHIT][0];
	p->iface_Bps = t->rsect_ns ? (uint64_t)(SPINDLE_SECTOR * 1e9 / (double)t->rsect_ns) : 1000000000000ull;
	return 0;
}

/* The disk to use: the one instantiated as a disksim_disk type, or the only one. */
static struct dsp_block *find_disk(struct dsp_file *f)
{
	struct dsp_block *only = NULL;
	int n = 0;
	for (size_t i = 0; i < f->nblock; i++)
		if (!strcmp(f->block[i]->type, "disksim_disk")) {
			only = f->block[i];
			n++;
			for (size_t k = 0; k < f->ninst; k++)
				if (!strcmp(f->inst_type[k], f->block[i]->name))
					return f->block[i];
		}
	return n == 1 ? only : NULL;
}

/* Keys already listed, so a parameter every zone repeats is listed once. */
struct ign {
	const char *key[512];
	size_t n;
};

static int ign_seen(struct ign *g, const char *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->key[i], key))
			return 1;
	if (g->n < 512)
		g->key[g->n++] = key;
	return 0;
}

static void list_ignored(struct dsp_block *b, FILE *log, const char *path, struct ign *g)
{
	for (size_t i = 0; i < b->nparam; i++) {
		struct dsp_param *p = &b->param[i];
		if (p->v.kind == DSP_BLOCK && p->used) {
			list_ignored(p->v.block, log, path, g);
			continue;
		}
		if (p->v.kind == DSP_LIST && p->used) {
			for (size_t k = 0; k < p->v.nitem; k++)
				if (p->v.item[k].kind == DSP_BLOCK)
					list_ignored(p->v.item[k].block, log, path, g);
			continue;
		}
		if (p->used)
			continue;
		if (!ign_seen(g, p->key))
			fprintf(log, "disksim:%s: ignored: %s (%s:%d, in %s %s)\n", path, p->key,
				p->v.file, p->v.line, b->type, b->name[0] ? b->name : "");
	}
}

static int load(const char *path, struct spindle_params *p, struct spindle_table *t, FILE *log,
		char *err, size_t errlen)
{
	struct dsp_file f;
	struct ds_ctx c = { err, errlen };
	int rc = dsp_load(path, &f, err, errlen);
	if (rc)
		return rc;
	struct dsp_block *d = find_disk(&f), *m, *lay, *mech;
	if (!d) {
		snprintf(err, errlen, "%s: no disksim_disk block (or several and none instantiated)", path);
		dsp_free(&f);
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	p->kind = SPINDLE_HDD;
	p->sched = SPINDLE_FIFO;
	snprintf(p->preset, sizeof(p->preset), "disksim");
	snprintf(t->path, sizeof(t->path), "%s", path);
	snprintf(t->name, sizeof(t->name), "%s", d->name);
	double heads = 0, cyls = 0, blocks = 0;
	if (!(m = sub(&c, d, "Model", &rc)) ||
	    (rc = num(&c, m, "Number of data surfaces", 1, &heads)) ||
	    (rc = num(&c, m, "Number of cylinders", 1, &cyls)) ||
	    (rc = num(&c, m, "Block count", 1, &blocks)))
		goto out;
	if (heads < 1 || heads > 1024 || cyls < 2 || blocks < 1) {
		rc = ds_err(&c, m->file, m->line, "%g surfaces, %g cylinders, %g blocks: not a disk",
			    heads, cyls, blocks);
		goto out;
	}
	p->heads = (uint32_t)heads;
	t->cylinders = (uint32_t)cyls;
	t->blocks = (uint64_t)blocks;
	if (!(lay = sub(&c, m, "Layout Model", &rc)) || !(mech = sub(&c, m, "Mechanical Model", &rc)))
		goto out;
	if (strcmp(lay->type, "dm_layout_g1")) {
		rc = ds_err(&c, lay->file, lay->line, "Layout Model %s: only dm_layout_g1 is modelled",
			    lay->type);
		goto out;
	}
	if ((rc = map_layout(&c, lay, p->heads, t)) || (rc = map_mech(&c, mech, p, t)) ||
	    (rc = map_disk(&c, &f, d, p, t)))
		goto out;
	p->zones = t->nzones;
	/* the data-sheet figures `fsvol model show` prints, from the table */
	p->seek_t2t_ns = (uint64_t)spindle_table_seek_ns(t, 1);
	p->seek_avg_ns = (uint64_t)spindle_table_seek_ns(t, (t->cylinders - 1) / 3.0);
	p->seek_full_ns = (uint64_t)spindle_table_seek_ns(t, t->cylinders - 1);
	p->capacity_bytes = t->blocks * SPINDLE_SECTOR;
	p->seek_knee = 0.2;
	/* the figures `fsvol model show` prints beside the table */
	double rev = 60e9 / p->rpm;
	p->rate_outer_Bps = (uint64_t)(t->zone[0].spt * 512.0 * 1e9 / rev);
	p->rate_inner_Bps = (uint64_t)(t->zone[t->nzones - 1].spt * 512.0 * 1e9 / rev);
	p->tab = t;
	static struct ign g;
	g.n = 0;
	list_ignored(d, log, path, &g);
	for (size_t i = 0; i < f.nblock; i++)
		if (f.block[i] != d && strcmp(f.block[i]->type, "disksim_bus") &&
		    strcmp(f.block[i]->type, "disksim_ctlr") && f.block[i] != m &&
		    strcmp(f.block[i]->type, "dm_disk"))
			fprintf(log, "disksim:%s: ignored: %s %s (%s:%d)\n", path, f.block[i]->type,
				f.block[i]->name, f.block[i]->file, f.block[i]->line);
		else if (f.block[i] != d && f.block[i] != m && strcmp(f.block[i]->type, "dm_disk"))
			list_ignored(f.block[i], log, path, &g);
out:
	dsp_free(&f);
	return rc;
}

/* Tables live as long as the process: parameters copied by value point at them. */
static struct ds_cache {
	struct spindle_params p;
	struct spindle_table t;
	struct ds_cache *next;
} *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

int disksim_load(const char *path, struct spindle_params *out, FILE *log, char *err,
		 size_t errlen)
{
	pthread_mutex_lock(&cache_lock);
	for (struct ds_cache *e = cache; e; e = e->next)
		if (!strcmp(e->t.path, path)) {
			*out = e->p;
			pthread_mutex_unlock(&cache_lock);
			return 0;
		}
	struct ds_cache *e = calloc(1, sizeof(*e));
	int rc = e ? 0 : -ENOMEM;
	if (!e)
		snprintf(err, errlen, "%s: out of memory", path);
	if (!rc && strlen(path) >= sizeof(e->t.path)) {
		snprintf(err, errlen, "disksim:%.40s...: path too long", path);
		rc = -ENAMETOOLONG;
	}
	if (!rc)
		rc = load(path, &e->p, &e->t, log ? log : stderr, err, errlen);
	if (rc) {
		free(e);
	} else {
		e->p.tab = &e->t;
		e->next = cache;
		cache = e;
		*out = e->p;
	}
	pthread_mutex_unlock(&cache_lock);
	return rc;
}
