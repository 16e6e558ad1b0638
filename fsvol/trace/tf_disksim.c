/* tf_disksim: DiskSim's ASCII trace format (its manual, "ascii"):
 *   TIME_MS DEVNO BLKNO BCOUNT FLAGS      13.191135  30  0  5  1
 * one request a line, blocks of 512 bytes, FLAGS bit 0 set for a read. */
#include <errno.h>

#include "fsvol/trace/tf_int.h"

static const char *const form = "TIME_MS DEVNO BLKNO BCOUNT FLAGS";

/* five numbers: "13.191135 30 0 5 1" */
static int looks_disksim(const char *s)
{
	uint64_t v;
	if (tf_fixed(&s, 1000000, &v))
		return 0;
	for (int i = 0; i < 4; i++)
		if (tf_u64(&s, &v))
			return 0;
	return !*tf_skip(s);
}

static int tf_parse_disksim(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen)
{
	struct tf_reader r = { .f = f, .path = path };
	int ret = 0;
	while (!ret && tf_getline(&r) >= 0) {
		const char *p = tf_skip(r.line);
		uint64_t t_ns, dev, blk, cnt, flags;
		if (!*p)
			continue;
		if (tf_fixed(&p, 1000000, &t_ns) || tf_u64(&p, &dev) || tf_u64(&p, &blk) || tf_u64(&p, &cnt) ||
		    tf_u64(&p, &flags) || *tf_skip(p)) {
			ret = tf_err(&r, err, errlen, "expected %s (five numbers)", form);
			break;
		}
		if (cnt == 0 || dev > UINT32_MAX || blk > UINT64_MAX / 512 - cnt) {
			ret = tf_err(&r, err, errlen, cnt ? "a value out of range" : "a request of 0 blocks");
			break;
		}
		struct tracefile_rec rec = {
			.t_ns = t_ns, .off = blk * 512, .len = cnt * 512, .service_ns = -1, .dev = (uint32_t)dev,
			.op = (flags & 1) ? TRACEFILE_READ : TRACEFILE_WRITE,
		};
		if ((ret = tf_push(out, &r, &rec)))
			snprintf(err, errlen, "out of memory");
	}
	tf_reader_free(&r);
	return ret;
}

const struct tf_format tf_format_disksim = {
	.fmt = TRACEFILE_DISKSIM, .name = "disksim", .looks = looks_disksim, .parse = tf_parse_disksim,
};
