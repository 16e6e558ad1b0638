/* tf_msr: SNIA's MSR Cambridge block traces (CSV).
 *   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
 *   128166372003061629,hm,1,Read,3218653184,4096,2313
 * Timestamp is a Windows FILETIME (100 ns ticks), ResponseTime in the same
 * ticks, Offset and Size in bytes. A header line is allowed first. */
#include <errno.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

static const char *const form = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

/* A number ending at a comma (or at the end when last). */
static int field_u64(const char **p, uint64_t *v, int last)
{
	if (**p < '0' || **p > '9' || tf_u64(p, v))
		return -EINVAL;
	if (last)
		return *tf_skip(*p) ? -EINVAL : 0;
	return *(*p)++ == ',' ? 0 : -EINVAL;
}

/* "Timestamp,Hostname,..." or "128166372003061629,hm,1,Read,3218653184,4096,2313" */
static int looks_msr(const char *s)
{
	if (!strncmp(s, "Timestamp,", 10))
		return 1;
	unsigned commas = 0;
	for (const char *p = s; *p; p++)
		commas += *p == ',';
	return commas == 6 && (strstr(s, ",Read,") || strstr(s, ",Write,"));
}

static int tf_parse_msr(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen)
{
	struct tf_reader r = { .f = f, .path = path };
	int ret = 0, first = 1;
	while (!ret && tf_getline(&r) >= 0) {
		const char *p = tf_skip(r.line);
		uint64_t ts, disk, off, size, resp;
		if (!*p)
			continue;
		if (first && !strncmp(p, "Timestamp,", 10)) {
			first = 0;
			continue;
		}
		first = 0;
		if (field_u64(&p, &ts, 0)) {
			ret = tf_err(&r, err, errlen, "expected a Timestamp (FILETIME ticks) first (%s)", form);
			break;
		}
		const char *host = p;
		while (*p && *p != ',')
			p++;
		if (*p++ != ',' || p - 1 == host) {
			ret = tf_err(&r, err, errlen, "expected a Hostname after the timestamp (%s)", form);
			break;
		}
		if (field_u64(&p, &disk, 0) || disk > UINT32_MAX) {
			ret = tf_err(&r, err, errlen, "expected a DiskNumber (%s)", form);
			break;
		}
		struct tracefile_rec rec = { 0 };
		if (!strncmp(p, "Read,", 5))
			rec.op = TRACEFILE_READ, p += 5;
		else if (!strncmp(p, "Write,", 6))
			rec.op = TRACEFILE_WRITE, p += 6;
		else {
			ret = tf_err(&r, err, errlen, "expected Type Read or Write (%s)", form);
			break;
		}
		if (field_u64(&p, &off, 0) || field_u64(&p, &size, 0) || field_u64(&p, &resp, 1)) {
			ret = tf_err(&r, err, errlen, "expected Offset,Size,ResponseTime in numbers (%s)", form);
			break;
		}
		if (size == 0 || size > UINT64_MAX - off || ts > UINT64_MAX / 100 || resp > INT64_MAX / 100) {
			ret = tf_err(&r, err, errlen, size ? "a value out of range" : "a request of 0 bytes");
			break;
		}
		rec.t_ns = ts * 100;
		rec.service_ns = (int64_t)(resp * 100);
		rec.dev = (uint32_t)disk;
		rec.off = off;
		rec.len = size;
		if ((ret = tf_push(out, &r, &rec)))
			snprintf(err, errlen, "out of memory");
	}
	tf_reader_free(&r);
	return ret;
}

const struct tf_format tf_format_msr = {
	.fmt = TRACEFILE_MSR, .name = "msr", .looks = looks_msr, .parse = tf_parse_msr,
};
