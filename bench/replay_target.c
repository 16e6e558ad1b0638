/* replay_target: a trace against a target (fsvol-bench --replay): loading it
 * whole before anything is issued, whether it fits the target, and where
 * --replay-map wrap|scale puts each request. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

int bench_replay_load(const struct bench_opts *o, struct tracefile *t, char *err, size_t errlen)
{
	int r = tracefile_load(o->replay, (enum tracefile_fmt)o->replay_fmt, t, err, errlen);
	if (r)
		return r;
	for (size_t i = 0; o->direct && i < t->n; i++) {
		const struct tracefile_rec *q = &t->rec[i];
		if ((q->op == TRACEFILE_READ || q->op == TRACEFILE_WRITE) && ((q->off | q->len) % 512)) {
			snprintf(err, errlen, "%s:%u: offset %" PRIu64 " or length %" PRIu64
				 " is not a multiple of 512, which -S (O_DIRECT) needs: drop -S",
				 o->replay, q->line, q->off, q->len);
			tracefile_free(t);
			return -EINVAL;
		}
	}
	return 0;
}

unsigned bench_replay_write_pct(const struct tracefile *t)
{
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++)
		w += t->rec[i].op != TRACEFILE_READ;
	if (!w)
		return 0;
	unsigned pct = (unsigned)(100 * w / t->n);
	return pct ? pct : 1; /* any write (or sync) opens the target for writing */
}

int bench_replay_fits(const struct bench_opts *o, uint64_t size, const char *path, char *err, size_t errlen)
{
	const struct tracefile *t = o->trace;
	for (size_t i = 0; i < t->n; i++) {
		const struct tracefile_rec *q = &t->rec[i];
		if (q->op != TRACEFILE_READ && q->op != TRACEFILE_WRITE)
			continue;
		if (q->len > size) {
			snprintf(err, errlen, "%s:%u: a request of %" PRIu64 " bytes is larger than %s (%" PRIu64
				 " bytes)", o->replay, q->line, q->len, path, size);
			return -EINVAL;
		}
		if (o->replay_map == BENCH_MAP_NONE && q->off + q->len > size) {
			snprintf(err, errlen, "%s:%u: the trace addresses up to %" PRIu64 " bytes, beyond the end of "
				 "%s (%" PRIu64 " bytes): nothing was issued; --replay-map wrap|scale folds it in",
				 o->replay, q->line, t->max_end, path, size);
			return -ERANGE;
		}
	}
	return 0;
}

uint64_t bench_replay_offset(const struct bench_opts *o, const struct tracefile_rec *r, uint64_t size)
{
	uint64_t x = r->off;
	if (o->replay_map == BENCH_MAP_NONE || o->trace->max_end <= size)
		return x;
	if (o->replay_map == BENCH_MAP_WRAP)
		x = r->off % size;
	else /* scale: the trace's span onto the target's, in proportion */
		x = (uint64_t)((unsigned __int128)r->off * size / o->trace->max_end);
	x &= ~511ull; /* sector-aligned as the trace was */
	if (x + r->len > size)
		x = (size - r->len) & ~511ull;
	return x;
}
