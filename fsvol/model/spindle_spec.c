/* spindle_spec: the disk and adapter preset tables, the model spec parser
 * ("PRESET[:key=value,...]", per-member "0=SPEC;1-3=SPEC;@a=ADAPTER"), placement
 * of a member on its disk, and the describe/show printers. Figures and their
 * sources: docs/model.md. */
#include "fsvol/model/spindle.h"
#include "fsvol/model/disksim.h"
#include "fsvol/model/spec_units.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#define MS 1000000ull
#define US 1000ull
#define KIB 1024ull
#define MIB (1024ull * 1024)
#define MB 1000000ull
#define GBD 1000000000ull
/* IDEMA LBA count of a 1 TB drive: 1,953,525,168 sectors of 512 bytes */
#define TB_IDEMA (1953525168ull * 512)

/* ---- presets (sources in docs/model.md) ----------------------------------- */

struct preset {
	const char *name;
	const char *help;
	struct spindle_params p;
};

static const struct preset presets[] = {
	{ "hdd-legacy", "mid-1990s 5400 rpm ~1 GB SCSI drive (NT-era class)", {
		.kind = SPINDLE_HDD, .sched = SPINDLE_FIFO,
		.overhead_ns = 500 * US, .hit_overhead_ns = 300 * US,
		.iface_Bps = 10 * MB,                 /* Fast SCSI-2 */
		.rpm = 5400, .heads = 8, .zones = 8,
		.seek_t2t_ns = 2 * MS, .seek_avg_ns = 11 * MS, .seek_full_ns = 22 * MS,
		.seek_knee = 0.2, .switch_ns = 1 * MS,
		.rate_outer_Bps = 5 * MB, .rate_inner_Bps = 3 * MB,
		.cache_bytes = 256 * KIB, .wcache = 0,
		.capacity_bytes = 1050 * MB } },      /* Hawk 1LP ST31200N: 1.05 GB */
	{ "hdd", "current 7200 rpm 3.5\" SATA drive", {
		.kind = SPINDLE_HDD, .sched = SPINDLE_FIFO,
		.overhead_ns = 100 * US, .hit_overhead_ns = 10 * US,
		.iface_Bps = 600 * MB,                /* SATA 6 Gb/s after 8b/10b */
		.rpm = 7200, .heads = 4, .zones = 16,
		.seek_t2t_ns = 1 * MS, .seek_avg_ns = 8500 * US, .seek_full_ns = 17 * MS,
		.seek_knee = 0.2, .switch_ns = 1 * MS,
		.rate_outer_Bps = 210 * MB, .rate_inner_Bps = 105 * MB,
		.cache_bytes = 4 * MIB, .wcache = 1,
		.capacity_bytes = TB_IDEMA } },       /* 1 TB */
	{ "ssd", "SATA SSD (Samsung 860 EVO class)", {
		.kind = SPINDLE_SSD,
		.overhead_ns = 10 * US, .read_ns = 85 * US, .write_ns = 7 * US,
		.channels = 10, .bw_Bps = 550 * MB,
		.capacity_bytes = 976773168ull * 512 } },  /* 500 GB */
	{ "nvme", "PCIe 3.0 x4 NVMe SSD (Samsung 970 EVO Plus class)", {
		.kind = SPINDLE_SSD,
		.overhead_ns = 5 * US, .read_ns = 46 * US, .write_ns = 10 * US,
		.channels = 32, .bw_Bps = 3500 * MB,
		.capacity_bytes = TB_IDEMA } },
	{ "none", "no model: real timing", { .kind = SPINDLE_NONE } },
};
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

const char *const spindle_presets[] = { "hdd-legacy", "hdd", "ssd", "nvme", "none", NULL };

/* Adapters: the bus a transfer holds (sources in docs/model.md). SCSI's
 * arbitration, selection, message, command, reselection and status phases take
 * ~15 us per command whatever the data rate (they run asynchronously). */
static const struct {
	const char *name;
	const char *help;
	struct adapter_params p;
} adapter_table[] = {
	{ "fast-scsi2", "Fast SCSI-2, narrow (10 MB/s), e.g. Adaptec AHA-2940 class",
	  { .rate_Bps = 10 * MB, .overhead_ns = 15 * US } },
	{ "fast-wide-scsi2", "Fast Wide SCSI-2 (20 MB/s)",
	  { .rate_Bps = 20 * MB, .overhead_ns = 15 * US } },
	{ "ultra-wide-scsi", "Ultra Wide SCSI, Fast-20 wide (40 MB/s)",
	  { .rate_Bps = 40 * MB, .overhead_ns = 15 * US } },
	{ "sas-hba", "SAS-3/SATA HBA on PCIe 3.0 x8 (LSI SAS 9300-8i class): the shared PCIe link",
	  { .rate_Bps = 7877 * MB, .overhead_ns = 1 * US } },
};
#define NADAPTERS (sizeof(adapter_table) / sizeof(adapter_table[0]))

const char *const adapter_presets[] = { "fast-scsi2", "fast-wide-scsi2", "ultra-wide-scsi",
					"sas-hba", NULL };

const char *adapter_help(const char *preset)
{
	for (size_t i = 0; i < NADAPTERS; i++)
		if (!strcmp(preset, adapter_table[i].name))
			return adapter_table[i].help;
	return NULL;
}

/* ---- keys: one table drives parsing, formatting and describe -------------- */

enum ktype { K_TIME, K_SIZE, K_RATE, K_UINT, K_BOOL, K_FRAC, K_SCHED, K_CAP, K_START, K_NAME };
#define FOR_HDD 1u
#define FOR_SSD 2u

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	unsigned kinds;
	uint64_t min, max;        /* K_TIME/K_SIZE/K_RATE/K_UINT bounds */
	const char *help;
};

#define F(field) offsetof(struct spindle_params, field)
static const struct key keys[] = {
	{ "sched", K_SCHED, F(sched), FOR_HDD, 0, 0, "queue discipline: fifo, sstf, cscan" },
	{ "overhead", K_TIME, F(overhead_ns), FOR_HDD | FOR_SSD, 0, 1000 * MS,
	  "command overhead (HDD: media access; SSD: every op)" },
	{ "hit_overhead", K_TIME, F(hit_overhead_ns), FOR_HDD, 0, 1000 * MS,
	  "command overhead of a read served by the cache" },
	{ "iface", K_RATE, F(iface_Bps), FOR_HDD, 1, UINT64_MAX, "host interface rate" },
	{ "rpm", K_UINT, F(rpm), FOR_HDD, 1, 100000, "spindle speed" },
	{ "heads", K_UINT, F(heads), FOR_HDD, 1, 1024, "recording surfaces (tracks per cylinder)" },
	{ "zones", K_UINT, F(zones), FOR_HDD, 1, SPINDLE_PRESET_ZONES,
	  "zoned-recording bands, outer to inner" },
	{ "seek_t2t", K_TIME, F(seek_t2t_ns), FOR_HDD, 1, 1000 * MS, "track-to-track seek (1 cylinder)" },
	{ "seek_avg", K_TIME, F(seek_avg_ns), FOR_HDD, 1, 1000 * MS, "average seek (1/3 of the stroke)" },
	{ "seek_full", K_TIME, F(seek_full_ns), FOR_HDD, 1, 1000 * MS, "full-stroke seek" },
	{ "seek_knee", K_FRAC, F(seek_knee), FOR_HDD, 0, 0,
	  "end of the sqrt part of the seek curve, fraction of the stroke (0, 1/3]" },
	{ "switch", K_TIME, F(switch_ns), FOR_HDD, 0, 1000 * MS, "head/track switch in a transfer" },
	{ "rate_outer", K_RATE, F(rate_outer_Bps), FOR_HDD, 1, UINT64_MAX,
	  "sustained media rate, outer zone" },
	{ "rate_inner", K_RATE, F(rate_inner_Bps), FOR_HDD, 1, UINT64_MAX,
	  "sustained media rate, inner zone" },
	{ "cache", K_SIZE, F(cache_bytes), FOR_HDD, 0, 1ull << 40,
	  "read-ahead segment and write-back limit (0: neither)" },
	{ "wcache", K_BOOL, F(wcache), FOR_HDD, 0, 1, "write-back cache (0/1; needs cache > 0)" },
	{ "read", K_TIME, F(read_ns), FOR_SSD, 0, 1000 * MS, "flash read latency per op" },
	{ "write", K_TIME, F(write_ns), FOR_SSD, 0, 1000 * MS, "write latency per op" },
	{ "channels", K_UINT, F(channels), FOR_SSD, 1, 4096, "requests in service at once" },
	{ "bw", K_RATE, F(bw_Bps), FOR_SSD, 1, UINT64_MAX, "bandwidth shared by all channels" },
	{ "capacity", K_CAP, F(capacity_bytes), FOR_HDD | FOR_SSD, 4096, 1ull << 60,
	  "the whole disk (member: the member is the whole disk)" },
	{ "start", K_START, F(start_mode), FOR_HDD | FOR_SSD, 0, 0,
	  "where the member starts: bytes (K, M, G), a fraction of the stroke (0.5), inner" },
	{ "disk", K_NAME, F(disk), FOR_HDD | FOR_SSD, 0, 0,
	  "members naming one disk are partitions of it (one queue, one head)" },
	{ "adapter", K_NAME, F(adapter), FOR_HDD | FOR_SSD, 0, 0,
	  "the adapter (bus) the disk is on: a name defined with @NAME=, or a preset" },
};
#undef F
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const sched_names[] = { "fifo", "sstf", "cscan" };

static unsigned kind_bit(enum spindle_kind k)
{
	return k == SPINDLE_HDD ? FOR_HDD : k == SPINDLE_SSD ? FOR_SSD : 0;
}

static const char *kind_name(enum spindle_kind k)
{
	return k == SPINDLE_HDD ? "hdd" : k == SPINDLE_SSD ? "ssd" : "none";
}

/* A message for the caller, when it wants one (spindle_plan.c uses it too). */
void spindle_seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* name=: a letter, then letters, digits, '-', '_' or '.' */
static int set_name(const struct key *k, const char *val, char *field, char *err, size_t errlen)
{
	size_t n = strlen(val);
	int ok = n > 0 && n < SPINDLE_NAME && isalpha((unsigned char)val[0]);
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)val[i]) || strchr("-_.", val[i]);
	if (!ok) {
		spindle_seterr(err, errlen, "%s=%s: a name is a letter, then letters, digits, '-', '_'"
		       " or '.' (at most %d)", k->name, val, SPINDLE_NAME - 1);
		return -EINVAL;
	}
	memcpy(field, val, n + 1);
	return 0;
}

/* start=: a fraction of the stroke, a size, or inner */
static int set_start(const char *val, struct spindle_params *p, char *err, size_t errlen)
{
	double v;

	if (!strcmp(val, "inner")) {
		p->start_mode = SPINDLE_START_INNER;
		return 0;
	}
	if (strchr(val, '.')) {
		if (spec_parse_plain(val, &v)) {
			spindle_seterr(err, errlen, "start=%s: not a fraction of the stroke (0.5),"
			       " a size (bytes, K, M, G) or inner", val);
			return -EINVAL;
		}
		if (v >= 1) {
			spindle_seterr(err, errlen, "start=%s: a fraction of the stroke is below 1"
			       " (start=inner puts the member at the inner edge)", val);
			return -EINVAL;
		}
		p->start_mode = SPINDLE_START_FRAC;
		p->start_frac = v;
		return 0;
	}
	if (spec_parse_unit(val, spec_size_units, 1, &v) || v >= 1.8e19) {
		spindle_seterr(err, errlen, "start=%s: not a size (bytes, K, M, G), a fraction of"
		       " the stroke (0.5) or inner", val);
		return -EINVAL;
	}
	p->start_mode = SPINDLE_START_BYTES;
	p->start_bytes = (uint64_t)(v + 0.5);
	return 0;
}

static int set_bool(const struct key *k, const char *val, char *field, char *err, size_t errlen)
{
	if (!strcmp(val, "1") || !strcmp(val, "on") || !strcmp(val, "yes") ||
	    !strcmp(val, "true")) {
		*(int *)field = 1;
		return 0;
	}
	if (!strcmp(val, "0") || !strcmp(val, "off") || !strcmp(val, "no") ||
	    !strcmp(val, "false")) {
		*(int *)field = 0;
		return 0;
	}
	spindle_seterr(err, errlen, "%s=%s: not a boolean (0/1, on/off, yes/no)", k->name, val);
	return -EINVAL;
}

static int set_value(const struct key *k, const char *val, struct spindle_params *p,
		     char *err, size_t errlen)
{
	char *field = (char *)p + k->off;
	double v;
	uint64_t u;

	switch (k->type) {
	case K_NAME:
		return set_name(k, val, field, err, errlen);
	case K_START:
		return set_start(val, p, err, errlen);
	case K_CAP:
		if (!strcmp(val, "member")) {
			*(uint64_t *)field = 0;
			return 0;
		}
		if (spec_parse_unit(val, spec_size_units, 1, &v)) {
			spindle_seterr(err, errlen, "%s=%s: not a size (bytes, or with K, M, G, T) or 'member'",
			       k->name, val);
			return -EINVAL;
		}
		break;
	case K_SCHED:
		for (unsigned i = 0; i < 3; i++)
			if (!strcmp(val, sched_names[i]) || (i == 2 && !strcmp(val, "c-scan"))) {
				*(enum spindle_sched *)field = (enum spindle_sched)i;
				return 0;
			}
		spindle_seterr(err, errlen, "%s=%s: unknown discipline (fifo, sstf, cscan)", k->name, val);
		return -EINVAL;
	case K_BOOL:
		return set_bool(k, val, field, err, errlen);
	case K_FRAC:
		if (spec_parse_plain(val, &v)) {
			spindle_seterr(err, errlen, "%s=%s: not a number", k->name, val);
			return -EINVAL;
		}
		/* (below 0.0001 of the stroke a knee means nothing, and %.6g would
		 * print it in an exponent form the parser does not take) */
		if (v < 1e-4 || v > 1.0 / 3 + 1e-6) {
			spindle_seterr(err, errlen, "%s: must be >= 0.0001 and <= 0.333 (1/3 of the stroke)", k->name);
			return -EINVAL;
		}
		*(double *)field = v > 1.0 / 3 ? 1.0 / 3 : v;
		return 0;
	case K_TIME:
		if (spec_parse_unit(val, spec_time_units, 0, &v)) {
			spindle_seterr(err, errlen, "%s=%s: not a time (a number with ns, us, ms or s)",
			       k->name, val);
			return -EINVAL;
		}
		break;
	case K_SIZE:
		if (spec_parse_unit(val, spec_size_units, 1, &v)) {
			spindle_seterr(err, errlen, "%s=%s: not a size (bytes, or with K, M, G)", k->name, val);
			return -EINVAL;
		}
		break;
	case K_RATE:
		if (spec_parse_unit(val, spec_rate_units, 0, &v)) {
			spindle_seterr(err, errlen, "%s=%s: not a rate (a number with B/s, KB/s, MB/s, GB/s,"
			       " KiB/s, MiB/s or GiB/s)", k->name, val);
			return -EINVAL;
		}
		break;
	case K_UINT:
		if (spec_parse_plain(val, &v) || strchr(val, '.')) {
			spindle_seterr(err, errlen, "%s=%s: not a whole number", k->name, val);
			return -EINVAL;
		}
		break;
	}
	if (v >= 1.8e19) {
		spindle_seterr(err, errlen, "%s=%s: too large", k->name, val);
		return -EINVAL;
	}
	u = (uint64_t)(v + 0.5);
	if (u < k->min || u > k->max) {
		if (u < k->min && k->min == 1)
			spindle_seterr(err, errlen, "%s: must be > 0", k->name);
		else
			spindle_seterr(err, errlen, "%s: must be between %llu and %llu", k->name,
			       (unsigned long long)k->min, (unsigned long long)k->max);
		return -EINVAL;
	}
	if (k->type == K_UINT)
		*(uint32_t *)field = (uint32_t)u;
	else
		*(uint64_t *)field = u;
	return 0;
}

/* Checks across keys, each naming the key to change. */
static int validate(const struct spindle_params *p, char *err, size_t errlen)
{
	if (!p->capacity_bytes && ((p->start_mode == SPINDLE_START_BYTES && p->start_bytes) ||
				   (p->start_mode == SPINDLE_START_FRAC && p->start_frac > 0) ||
				   p->start_mode == SPINDLE_START_INNER)) {
		spindle_seterr(err, errlen, "start: capacity=member makes the member the whole disk;"
		       " give the disk's capacity (capacity=SIZE) to place the member on it");
		return -EINVAL;
	}
	if (p->kind != SPINDLE_HDD)
		return 0;
	if (p->seek_t2t_ns >= p->seek_avg_ns) {
		spindle_seterr(err, errlen, "seek_t2t: must be < seek_avg");
		return -EINVAL;
	}
	if (p->seek_avg_ns >= p->seek_full_ns) {
		spindle_seterr(err, errlen, "seek_full: must be > seek_avg");
		return -EINVAL;
	}
	/* The fitted curve is monotonic when its long part, extended down to the knee,
	 * is still above the track-to-track time (see fit_seek in spindle.c):
	 *   avg - (full - avg) * (1/3 - knee) / (2/3) > t2t */
	double l = (double)p->seek_avg_ns - ((double)p->seek_full_ns - (double)p->seek_avg_ns)
		   * (1.0 / 3 - p->seek_knee) * 1.5;
	if (l <= (double)p->seek_t2t_ns) {
		spindle_seterr(err, errlen, "seek_full: too long for seek_avg, seek_t2t and seek_knee"
		       " (the seek curve would not rise monotonically)");
		return -EINVAL;
	}
	if (p->rate_inner_Bps > p->rate_outer_Bps) {
		spindle_seterr(err, errlen, "rate_inner: must be <= rate_outer");
		return -EINVAL;
	}
	return 0;
}

static void list_keys(unsigned kinds, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NKEYS && n < len; i++)
		if (keys[i].kinds & kinds)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys[i].name);
}

static void list_presets(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NPRESETS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", presets[i].name);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

int spindle_parse(const char *spec, struct spindle_params *out, char *err, size_t errlen)
{
	char buf[1024], names[512];
	struct spindle_params p;
	const struct preset *pr = NULL;

	if (!spec || strlen(spec) >= sizeof(buf)) {
		spindle_seterr(err, errlen, "model spec: %s", spec ? "too long" : "missing");
		return -EINVAL;
	}
	strcpy(buf, spec);
	if (!strncmp(buf, "disksim:", 8)) /* a drive from DiskSim's parameter files */
		return disksim_load(trim(buf + 8), out, NULL, err, errlen);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = 0;
	char *name = trim(buf);
	for (size_t i = 0; i < NPRESETS; i++)
		if (!strcmp(name, presets[i].name))
			pr = &presets[i];
	if (!pr) {
		list_presets(names, sizeof(names));
		if (!*name)
			spindle_seterr(err, errlen, "empty model spec (presets: %s)", names);
		else
			spindle_seterr(err, errlen, "unknown preset '%s' (presets: %s)", name, names);
		return -EINVAL;
	}
	p = pr->p;
	snprintf(p.preset, sizeof(p.preset), "%s", pr->name);
	if (colon) {
		if (pr->p.kind == SPINDLE_NONE) {
			spindle_seterr(err, errlen, "none: takes no parameters");
			return -EINVAL;
		}
		char *save = NULL;
		char *rest = colon + 1;
		if (!*trim(rest)) {
			spindle_seterr(err, errlen, "%s: no parameters after ':'", pr->name);
			return -EINVAL;
		}
		/* strtok_r would merge ",,": walk by hand so an empty item is an error. */
		for (char *item = rest; item; item = save) {
			char *comma = strchr(item, ',');
			save = comma ? comma + 1 : NULL;
			if (comma)
				*comma = 0;
			char *eq = strchr(item, '=');
			if (eq)
				*eq = 0;
			char *key = trim(item);
			if (!*key) {
				spindle_seterr(err, errlen, "%s: empty parameter (a key=value is missing"
				       " around ',')", pr->name);
				return -EINVAL;
			}
			const struct key *k = NULL;
			for (size_t i = 0; i < NKEYS; i++)
				if (!strcmp(key, keys[i].name))
					k = &keys[i];
			if (!k) {
				list_keys(kind_bit(p.kind), names, sizeof(names));
				spindle_seterr(err, errlen, "unknown key '%s' (keys for %s: %s)", key,
				       kind_name(p.kind), names);
				return -EINVAL;
			}
			if (!(k->kinds & kind_bit(p.kind))) {
				spindle_seterr(err, errlen, "%s: not a parameter of %s models", key,
				       kind_name(p.kind));
				return -EINVAL;
			}
			char *val = eq ? trim(eq + 1) : NULL;
			if (!val || !*val) {
				spindle_seterr(err, errlen, "%s: missing value (%s=VALUE)", key, key);
				return -EINVAL;
			}
			int rc = set_value(k, val, &p, err, errlen);
			if (rc)
				return rc;
		}
	}
	if (validate(&p, err, errlen))
		return -EINVAL;
	*out = p;
	return 0;
}

/* "N=" or "N-M=" at s: a member or a range of members. Keys never start with a
 * digit, so this also marks where the next member's spec starts after a ','. */
static int member_prefix(const char *s, unsigned long *lo, unsigned long *hi, const char **spec)
{
	const char *e = s;
	unsigned long v[2] = { 0, 0 };
	for (int part = 0; part < 2; part++) {
		const char *d = e;
		while (isdigit((unsigned char)*e)) {
			v[part] = v[part] * 10 + (unsigned long)(*e - '0');
			if (v[part] > 1000000)
				return 0;
			e++;
		}
		if (e == d)
			return 0;
		if (part == 0 && *e == '-')
			e++;
		else {
			if (part == 0)
				v[1] = v[0];
			break;
		}
	}
	if (*e != '=')
		return 0;
	*lo = v[0];
	*hi = v[1];
	*spec = e + 1;
	return 1;
}

/* "@NAME=" at s: an adapter definition. */
static int adapter_prefix(const char *s, char *name, const char **spec)
{
	const char *eq;
	if (*s != '@' || !(eq = strchr(s, '=')) || eq == s + 1 || eq - s > SPINDLE_NAME)
		return 0;
	memcpy(name, s + 1, (size_t)(eq - s - 1));
	name[eq - s - 1] = 0;
	*spec = eq + 1;
	return 1;
}

int adapter_parse(const char *spec, struct adapter_params *out, char *err, size_t errlen)
{
	char buf[256], names[256];
	struct adapter_params p;
	size_t n = 0;
	if (!spec || strlen(spec) >= sizeof(buf)) {
		spindle_seterr(err, errlen, "adapter spec: %s", spec ? "too long" : "missing");
		return -EINVAL;
	}
	strcpy(buf, spec);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = 0;
	char *name = trim(buf);
	size_t i;
	for (i = 0; i < NADAPTERS && strcmp(name, adapter_table[i].name); i++)
		;
	if (i == NADAPTERS) {
		names[0] = 0;
		for (size_t j = 0; j < NADAPTERS; j++)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", j ? ", " : "",
					      adapter_table[j].name);
		spindle_seterr(err, errlen, "unknown adapter '%s' (adapters: %s)", name, names);
		return -EINVAL;
	}
	p = adapter_table[i].p;
	snprintf(p.preset, sizeof(p.preset), "%s", adapter_table[i].name);
	for (char *item = colon ? colon + 1 : NULL, *next; item; item = next) {
		char *comma = strchr(item, ',');
		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = 0;
		char *eq = strchr(item, '=');
		if (eq)
			*eq = 0;
		char *key = trim(item), *val = eq ? trim(eq + 1) : NULL;
		double v;
		if (!strcmp(key, "rate")) {
			if (!val || spec_parse_unit(val, spec_rate_units, 0, &v) || v < 1 || v >= 1.8e19) {
				spindle_seterr(err, errlen, "adapter rate=%s: not a rate (a number > 0 with B/s,"
				       " KB/s, MB/s, GB/s, KiB/s, MiB/s or GiB/s)", val ? val : "");
				return -EINVAL;
			}
			p.rate_Bps = (uint64_t)(v + 0.5);
		} else if (!strcmp(key, "overhead")) {
			if (!val || spec_parse_unit(val, spec_time_units, 0, &v) || v > 1e9) {
				spindle_seterr(err, errlen, "adapter overhead=%s: not a time up to 1s (a number"
				       " with ns, us, ms or s)", val ? val : "");
				return -EINVAL;
			}
			p.overhead_ns = (uint64_t)(v + 0.5);
		} else {
			spindle_seterr(err, errlen, "unknown adapter key '%s' (keys: rate, overhead)", key);
			return -EINVAL;
		}
	}
	*out = p;
	return 0;
}

int spindle_parse_volume(const char *spec, unsigned members, struct spindle_params *out,
			 char (*adname)[SPINDLE_NAME], struct adapter_params *ad, unsigned *nad,
			 char *err, size_t errlen)
{
	char buf[1024], sub[512], name[SPINDLE_NAME];
	unsigned long lo, hi;
	const char *rest;
	int have_default = 0;
	struct spindle_params def;

	*nad = 0;
	if (!members || members > SPINDLE_MAX_MEMBERS) {
		spindle_seterr(err, errlen, "model spec: %s", members ? "too many members" : "no members");
		return -EINVAL;
	}
	if (!spec) {
		spindle_seterr(err, errlen, "model spec: missing");
		return -EINVAL;
	}
	for (unsigned i = 0; i < members; i++)
		out[i].preset[0] = 0; /* marks "not given" until parsed */
	int first = 1;
	for (const char *s = spec; first || *s; first = 0) {
		const char *end = s;
		const char *sp;
		/* The item ends at ';', or at a ',' that starts the next "N=" or "@". */
		while (*end && *end != ';' &&
		       !(*end == ',' && (member_prefix(end + 1, &lo, &hi, &sp) || end[1] == '@')))
			end++;
		size_t n = (size_t)(end - s);
		if (n >= sizeof(buf)) {
			spindle_seterr(err, errlen, "model spec: too long");
			return -EINVAL;
		}
		memcpy(buf, s, n);
		buf[n] = 0;
		s = *end ? end + 1 : end;
		if (buf[0] == '@') {
			if (!adapter_prefix(buf, name, &rest)) {
				spindle_seterr(err, errlen, "model spec '%s': expected @NAME=ADAPTER (e.g."
				       " @a=fast-scsi2)", buf);
				return -EINVAL;
			}
			unsigned k;
			for (k = 0; k < *nad && strcmp(adname[k], name); k++)
				;
			if (k < *nad) {
				spindle_seterr(err, errlen, "adapter %s: defined twice", name);
				return -EINVAL;
			}
			if (k == ADAPTER_MAX) {
				spindle_seterr(err, errlen, "adapter %s: more than %d adapters", name, ADAPTER_MAX);
				return -EINVAL;
			}
			if (adapter_parse(rest, &ad[k], sub, sizeof(sub))) {
				spindle_seterr(err, errlen, "adapter %s: %s", name, sub);
				return -EINVAL;
			}
			snprintf(adname[k], SPINDLE_NAME, "%s", name);
			(*nad)++;
			continue;
		}
		if (!member_prefix(buf, &lo, &hi, &rest)) {
			if (!first) {
				spindle_seterr(err, errlen, "model spec '%s': expected MEMBER=SPEC, FIRST-LAST=SPEC"
				       " or @ADAPTER=SPEC (e.g. 0=hdd;1-3=ssd; a spec for every other"
				       " member comes first)", buf);
				return -EINVAL;
			}
			if (spindle_parse(buf, &def, err, errlen))
				return -EINVAL;
			have_default = 1;
			continue;
		}
		if (lo > hi || hi >= members) {
			if (lo > hi)
				spindle_seterr(err, errlen, "members %lu-%lu: the range runs backwards", lo, hi);
			else
				spindle_seterr(err, errlen, "member %lu: out of range (the volume has %u members)",
				       hi, members);
			return -EINVAL;
		}
		for (unsigned long i = lo; i <= hi; i++)
			if (out[i].preset[0]) {
				spindle_seterr(err, errlen, "member %lu: model given twice", i);
				return -EINVAL;
			}
		if (spindle_parse(rest, &out[lo], sub, sizeof(sub))) {
			if (lo == hi)
				spindle_seterr(err, errlen, "member %lu: %s", lo, sub);
			else
				spindle_seterr(err, errlen, "members %lu-%lu: %s", lo, hi, sub);
			out[lo].preset[0] = 0;
			return -EINVAL;
		}
		for (unsigned long i = lo + 1; i <= hi; i++)
			out[i] = out[lo];
	}
	for (unsigned i = 0; i < members; i++)
		if (!out[i].preset[0]) {
			if (!have_default) {
				spindle_seterr(err, errlen, "member %u: no model given (give one per member,"
				       " or one spec for all)", i);
				return -EINVAL;
			}
			out[i] = def;
		}
	return 0;
}

int spindle_parse_multi(const char *spec, unsigned members, struct spindle_params *out,
			char *err, size_t errlen)
{
	char names[ADAPTER_MAX][SPINDLE_NAME];
	struct adapter_params ad[ADAPTER_MAX];
	unsigned nad;
	return spindle_parse_volume(spec, members, out, names, ad, &nad, err, errlen);
}

/* ---- printing -------------------------------------------------------------- */

static int fmt_size(uint64_t v, char *b, size_t n)
{
	if (v && v % (1ull << 30) == 0)
		return snprintf(b, n, "%lluG", (unsigned long long)(v >> 30));
	if (v && v % MIB == 0)
		return snprintf(b, n, "%lluM", (unsigned long long)(v >> 20));
	if (v && v % KIB == 0)
		return snprintf(b, n, "%lluK", (unsigned long long)(v >> 10));
	return snprintf(b, n, "%llu", (unsigned long long)v);
}

/* Values in a unit the parser takes back exactly; -1: the key is at its
 * default and is left out of a spec. */
static int fmt_value(const struct key *k, const struct spindle_params *p, char *b, size_t n)
{
	const char *field = (const char *)p + k->off;
	uint64_t v;
	switch (k->type) {
	case K_SCHED:
		return snprintf(b, n, "%s", sched_names[*(const enum spindle_sched *)field % 3]);
	case K_BOOL:
		return snprintf(b, n, "%d", *(const int *)field ? 1 : 0);
	case K_FRAC:
		return snprintf(b, n, "%.6g", *(const double *)field);
	case K_UINT:
		return snprintf(b, n, "%u", *(const uint32_t *)field);
	case K_NAME:
		return *field ? snprintf(b, n, "%s", field) : (snprintf(b, n, "-"), -1);
	case K_START:
		switch (p->start_mode) {
		case SPINDLE_START_BYTES:
			return fmt_size(p->start_bytes, b, n);
		case SPINDLE_START_FRAC: {
			int r = snprintf(b, n, "%.6g", p->start_frac);
			if (!strchr(b, '.') && r > 0 && (size_t)r + 2 < n)
				r += snprintf(b + r, n - (size_t)r, ".0"); /* a fraction, not bytes */
			return r;
		}
		case SPINDLE_START_INNER:
			return snprintf(b, n, "inner");
		case SPINDLE_START_AUTO:
			break;
		}
		snprintf(b, n, "auto");
		return -1;
	case K_CAP:
		if (!p->capacity_bytes)
			return snprintf(b, n, "member");
		return fmt_size(p->capacity_bytes, b, n);
	default:
		break;
	}
	v = *(const uint64_t *)field;
	if (k->type == K_TIME) {
		if (v == 0)
			return snprintf(b, n, "0");
		if (v >= MS && v % US == 0) /* "8.5ms": exact, parsed back exactly */
			return snprintf(b, n, "%.9gms", (double)v / 1e6);
		if (v % US == 0)
			return snprintf(b, n, "%lluus", (unsigned long long)(v / US));
		return snprintf(b, n, "%lluns", (unsigned long long)v);
	}
	if (k->type == K_SIZE)
		return fmt_size(v, b, n);
	if (v % 1000000000ull == 0)
		return snprintf(b, n, "%lluGB/s", (unsigned long long)(v / 1000000000ull));
	if (v % MB == 0)
		return snprintf(b, n, "%lluMB/s", (unsigned long long)(v / MB));
	if (v % 1000 == 0)
		return snprintf(b, n, "%lluKB/s", (unsigned long long)(v / 1000));
	return snprintf(b, n, "%lluB/s", (unsigned long long)v);
}

int adapter_format(const struct adapter_params *p, char *buf, size_t len)
{
	struct key rate = { "rate", K_RATE, offsetof(struct spindle_params, bw_Bps), 0, 0, 0, "" };
	struct key ovh = { "overhead", K_TIME, offsetof(struct spindle_params, overhead_ns), 0, 0, 0, "" };
	struct spindle_params q = { .bw_Bps = p->rate_Bps, .overhead_ns = p->overhead_ns };
	char r[64], o[64];
	fmt_value(&rate, &q, r, sizeof(r));
	fmt_value(&ovh, &q, o, sizeof(o));
	return snprintf(buf, len, "%s:rate=%s,overhead=%s", p->preset, r, o);
}

/* Decimal, data-sheet style: "1.05 GB", "62.9 MB" (the exact bytes go beside it). */
static void human(uint64_t b, char *out, size_t len)
{
	if (b >= 1000 * GBD)
		snprintf(out, len, "%.3g TB", (double)b / 1e12);
	else if (b >= GBD)
		snprintf(out, len, "%.3g GB", (double)b / 1e9);
	else if (b >= MB)
		snprintf(out, len, "%.3g MB", (double)b / 1e6);
	else
		snprintf(out, len, "%llu bytes", (unsigned long long)b);
}

int spindle_place(const struct spindle_params *p, uint64_t member_bytes, uint64_t *base,
		  char *err, size_t errlen)
{
	struct spindle s;
	char m[32], d[32];
	*base = 0;
	if (p->kind == SPINDLE_NONE)
		return 0;
	human(member_bytes, m, sizeof(m));
	human(p->capacity_bytes, d, sizeof(d));
	if (p->capacity_bytes && member_bytes > p->capacity_bytes) {
		spindle_seterr(err, errlen, "a member of %s (%llu bytes) is larger than its %s disk of %s"
		       " (%llu bytes; capacity=member makes the member the whole disk)", m,
		       (unsigned long long)member_bytes, p->preset, d,
		       (unsigned long long)p->capacity_bytes);
		return -EINVAL;
	}
	spindle_init(&s, p, member_bytes);
	if (s.want_base > s.disk_bytes || member_bytes > s.disk_bytes - s.want_base) {
		spindle_seterr(err, errlen, "a member of %s (%llu bytes) from byte %llu does not fit on its"
		       " %s disk of %s (%llu bytes)", m, (unsigned long long)member_bytes,
		       (unsigned long long)s.want_base, p->preset, d,
		       (unsigned long long)s.disk_bytes);
		return -EINVAL;
	}
	*base = s.want_base;
	return 0;
}

int spindle_format(const struct spindle_params *p, char *buf, size_t len)
{
	char v[64];
	const char *name = p->preset[0] ? p->preset : kind_name(p->kind);
	if (p->tab)
		return snprintf(buf, len, "disksim:%s", p->tab->path);
	int n = snprintf(buf, len, "%s", p->kind == SPINDLE_NONE ? "none" : name);
	char sep = ':';
	for (size_t i = 0; i < NKEYS && p->kind != SPINDLE_NONE; i++) {
		if (!(keys[i].kinds & kind_bit(p->kind)))
			continue;
		if (fmt_value(&keys[i], p, v, sizeof(v)) < 0)
			continue;
		size_t used = n > 0 && (size_t)n < len ? (size_t)n : len;
		n += snprintf(buf + used, len - used, "%c%s=%s", sep, keys[i].name, v);
		sep = ',';
	}
	return n;
}

void spindle_describe(const struct spindle_params *p, FILE *f)
{
	char v[64];
	const char *help = "";
	for (size_t i = 0; i < NPRESETS; i++)
		if (!strcmp(p->preset, presets[i].name))
			help = presets[i].help;
	fprintf(f, "%s (%s model)%s%s\n", p->preset[0] ? p->preset : kind_name(p->kind),
		kind_name(p->kind), *help ? ": " : "", help);
	for (size_t i = 0; i < NKEYS; i++) {
		if (!(keys[i].kinds & kind_bit(p->kind)))
			continue;
		fmt_value(&keys[i], p, v, sizeof(v));
		fprintf(f, "  %-13s %-10s %s\n", keys[i].name, v, keys[i].help);
	}
}

int spindle_show(const struct spindle_params *p, uint64_t member_bytes, FILE *f,
		 char *err, size_t errlen)
{
	struct spindle s;
	uint64_t base;
	char m[32], d[32];
	if (spindle_place(p, member_bytes, &base, err, errlen))
		return -EINVAL;
	spindle_init(&s, p, member_bytes);
	fprintf(f, "%s on a member of %llu bytes\n", p->preset[0] ? p->preset : kind_name(p->kind),
		(unsigned long long)member_bytes);
	if (p->kind == SPINDLE_NONE) {
		fprintf(f, "  no model: completions at real time\n");
		return 0;
	}
	human(member_bytes, m, sizeof(m));
	human(s.disk_bytes, d, sizeof(d));
	fprintf(f, "  disk                   %s (%llu bytes)%s, the member (%s) at bytes"
		" %llu..%llu\n", d, (unsigned long long)s.disk_bytes,
		p->capacity_bytes ? "" : " = the member (capacity=member)", m,
		(unsigned long long)s.base, (unsigned long long)(s.base + member_bytes));
	if (p->kind == SPINDLE_SSD) {
		double rd = spindle_random_read_ns(&s, 4096);
		double wr = (double)(p->overhead_ns + p->write_ns) + 4096 * 1e9 / (double)p->bw_Bps;
		double bus = (double)p->bw_Bps / 4096; /* IOPS the shared bandwidth allows */
		double qd = p->channels * 1e9 / rd;
		fprintf(f, "  random 4K read, QD1    %.1f us (%.0f IOPS)\n", rd / 1e3, 1e9 / rd);
		fprintf(f, "  random 4K write, QD1   %.1f us (%.0f IOPS)\n", wr / 1e3, 1e9 / wr);
		fprintf(f, "  random 4K read, QD>=%u %.0f IOPS (channels / latency, capped by bw)\n",
			p->channels, qd < bus ? qd : bus);
		fprintf(f, "  sequential             %.1f MB/s\n", (double)p->bw_Bps / 1e6);
		return 0;
	}
	double rev = s.rev_ns, rnd = spindle_random_read_ns(&s, 4096);
	double seek = spindle_mean_seek_ns(&s), whole = spindle_disk_mean_seek_ns(&s);
	double xfer = rnd - (double)p->overhead_ns - seek - rev / 2;
	uint64_t c0 = spindle_cylinder(&s, 0), c1 = spindle_cylinder(&s, member_bytes - 1);
	unsigned z0 = spindle_zone_of(&s, 0), z1 = spindle_zone_of(&s, member_bytes - 1);
	fprintf(f, "  revolution             %.3f ms (%u rpm), half: %.3f ms\n", rev / 1e6,
		p->rpm, rev / 2e6);
	fprintf(f, "  geometry               %llu cylinders x %u heads, %u zones,"
		" %u..%u sectors/track\n", (unsigned long long)s.cylinders, p->heads, s.nzones,
		s.zone[0].spt, s.zone[s.nzones - 1].spt);
	fprintf(f, "  placement              cylinders %llu..%llu (%.1f%% of the stroke from"
		" %.1f%%), zones %u..%u\n", (unsigned long long)c0, (unsigned long long)c1,
		100.0 * (double)(c1 - c0 + 1) / (double)s.cylinders,
		100.0 * (double)c0 / (double)s.cylinders, z0, z1);
	if (p->tab)
		fprintf(f, "  seek curve             measured table, %u points from %s (%s)\n",
			p->tab->nseek, p->tab->path, p->tab->name);
	else if (s.seek_linear)
		fprintf(f, "  seek curve             piecewise linear (stroke too short to fit)\n");
	else
		fprintf(f, "  seek curve             %.4f + %.5f*sqrt(d) ms below %.0f cyl,"
			" %.4f + %.7f*d ms above\n", s.seek_a / 1e6, s.seek_b / 1e6,
			s.seek_knee_cyl, s.seek_c / 1e6, s.seek_e / 1e6);
	fprintf(f, "  mean random seek       %.3f ms within the member (whole disk %.3f ms;"
		" data sheet average %.3f ms at 1/3 stroke)\n", seek / 1e6, whole / 1e6,
		(double)p->seek_avg_ns / 1e6);
	fprintf(f, "  random 4K read, QD1    %.3f ms = overhead %.3f + seek %.3f"
		" + rotation %.3f + transfer %.3f\n", rnd / 1e6, (double)p->overhead_ns / 1e6,
		seek / 1e6, rev / 2e6, xfer / 1e6);
	fprintf(f, "  IOPS, random 4K QD1    %.1f\n", 1e9 / rnd);
	fprintf(f, "  sequential             %.2f MB/s at the member's start, %.2f MB/s at its end"
		" (disk: %.2f outer, %.2f inner)\n", spindle_zone_rate(&s, z0) / 1e6,
		spindle_zone_rate(&s, z1) / 1e6, spindle_zone_rate(&s, 0) / 1e6,
		spindle_zone_rate(&s, s.nzones - 1) / 1e6);
	return 0;
}
