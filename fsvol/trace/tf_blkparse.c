/* tf_blkparse: blkparse's default text output.
 *   MAJ,MIN CPU SEQ SECONDS.NS PID ACTION RWBS [SECTOR + COUNT] [PROCESS]
 *     8,0    3     1     0.000000000   697  Q  WS 1234567 + 8 [jbd2/sda1-8]
 * Requests are the Q (queued) events, or the C (completed) events when the
 * trace has no Q; sectors are 512 bytes. RWBS: D discard (trim), W write,
 * R read, F alone a flush (sync). Other actions (G, I, D, M, P, U ...) and the
 * summary blkparse prints at the end (lines with a ':') are not requests. */
#include <errno.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

#define TF_BLK_MAX_DEVS 256

static const char *const form = "MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS [SECTOR + COUNT]";

/* "8,0    3   1   0.000000000  697  Q ..." */
static int looks_blkparse(const char *s)
{
	uint64_t v;
	if (tf_u64(&s, &v) || *s++ != ',' || tf_u64(&s, &v) || tf_u64(&s, &v) || tf_u64(&s, &v))
		return 0;
	return !tf_fixed(&s, 1000000000, &v);
}

static int tf_parse_blkparse(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen)
{
	struct tf_reader r = { .f = f, .path = path };
	struct tracefile cev = { 0 }; /* C events, used when there is no Q */
	uint32_t devs[TF_BLK_MAX_DEVS];
	unsigned ndev = 0;
	int ret = 0;

	while (!ret && tf_getline(&r) >= 0) {
		const char *p = tf_skip(r.line);
		uint64_t maj, min, v, t_ns;
		char act[8], rwbs[16];
		if (!*p)
			continue;
		if (*p < '0' || *p > '9') {
			if (!strchr(p, ':')) /* the summary's lines all have one */
				ret = tf_err(&r, err, errlen, "expected an event (%s)", form);
			continue;
		}
		if (tf_u64(&p, &maj) || *p++ != ',' || tf_u64(&p, &min) || tf_u64(&p, &v) || tf_u64(&p, &v) ||
		    tf_fixed(&p, 1000000000, &t_ns) || tf_u64(&p, &v) || tf_word(&p, act, sizeof(act))) {
			ret = tf_err(&r, err, errlen, "expected %s", form);
			break;
		}
		if (strcmp(act, "Q") && strcmp(act, "C"))
			continue;
		if (tf_word(&p, rwbs, sizeof(rwbs))) {
			ret = tf_err(&r, err, errlen, "expected RWBS after %s (%s)", act, form);
			break;
		}
		struct tracefile_rec rec = { .t_ns = t_ns, .service_ns = -1 };
		uint64_t sector = 0, count = 0;
		if (strchr(rwbs, 'D'))
			rec.op = TRACEFILE_TRIM;
		else if (strchr(rwbs, 'W'))
			rec.op = TRACEFILE_WRITE;
		else if (strchr(rwbs, 'R'))
			rec.op = TRACEFILE_READ;
		else if (strchr(rwbs, 'F'))
			rec.op = TRACEFILE_SYNC;
		else
			continue; /* N (no data) and the like: nothing to replay */
		const char *q = tf_skip(p);
		if (*q >= '0' && *q <= '9') {
			if (tf_u64(&q, &sector) || *(q = tf_skip(q)) != '+' || (q++, tf_u64(&q, &count))) {
				ret = tf_err(&r, err, errlen, "expected SECTOR + COUNT after %s %s", act, rwbs);
				break;
			}
		} else if (strchr(rwbs, 'F')) {
			rec.op = TRACEFILE_SYNC; /* a flush without data ("FWS") */
		} else if (rec.op != TRACEFILE_SYNC) {
			ret = tf_err(&r, err, errlen, "expected SECTOR + COUNT after %s %s", act, rwbs);
			break;
		}
		if (rec.op != TRACEFILE_SYNC && count == 0) {
			/* a flush with the data flags (an empty WS/FWS) carries no sectors */
			if (!strchr(rwbs, 'F')) {
				ret = tf_err(&r, err, errlen, "a %s of 0 sectors", rwbs);
				break;
			}
			rec.op = TRACEFILE_SYNC;
		}
		if (sector > UINT64_MAX / 512 - count) {
			ret = tf_err(&r, err, errlen, "sector out of range");
			break;
		}
		rec.off = rec.op == TRACEFILE_SYNC ? 0 : sector * 512;
		rec.len = rec.op == TRACEFILE_SYNC ? 0 : count * 512;
		uint32_t dev = (uint32_t)(maj << 20 | (min & 0xfffff));
		unsigned i;
		for (i = 0; i < ndev && devs[i] != dev; i++)
			;
		if (i == ndev) {
			if (ndev == TF_BLK_MAX_DEVS) {
				ret = tf_err(&r, err, errlen, "more than %d devices", TF_BLK_MAX_DEVS);
				break;
			}
			devs[ndev++] = dev;
		}
		rec.dev = i;
		if ((ret = tf_push(act[0] == 'Q' ? out : &cev, &r, &rec)))
			snprintf(err, errlen, "out of memory");
	}
	if (!ret && out->n == 0 && cev.n) {
		/* no Q events: the completions are the requests */
		struct tracefile tmp = *out;
		out->rec = cev.rec, out->n = cev.n, out->cap = cev.cap, out->max_end = cev.max_end;
		cev = tmp;
	}
	tracefile_free(&cev);
	tf_reader_free(&r);
	return ret;
}

const struct tf_format tf_format_blkparse = {
	.fmt = TRACEFILE_BLKPARSE, .name = "blkparse", .looks = looks_blkparse, .parse = tf_parse_blkparse,
};
