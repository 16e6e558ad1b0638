/* trace: a bounded ring of per-request records (volume requests and their
 * member sub-requests), appended lock-free by any thread, read by a cursor.
 *
 * Slot protocol (a per-slot seqlock keyed by the ring ticket t):
 *   seq == 2t+1  slot being written for ticket t
 *   seq == 2t+2  slot holds ticket t's record
 * A producer takes a ticket with one fetch_add, then claims its slot by CAS
 * from an even value older than its own. If the slot is odd (an older
 * producer is still writing: it was preempted for a whole lap) or already
 * newer, the record is dropped and counted: producers never wait and never
 * share a slot. A reader checks seq before and after copying, so a slot
 * overwritten under it is skipped, never returned torn. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define NWORDS 7

struct stats_trace_slot {
	_Alignas(64) _Atomic uint64_t seq;
	_Atomic uint64_t w[NWORDS];
};

static const char *const why_names[STATS_WHY_COUNT] = {
	[STATS_WHY_DATA] = "data",
	[STATS_WHY_PARITY_READ] = "parity_read",
	[STATS_WHY_PARITY_WRITE] = "parity_write",
	[STATS_WHY_OLD_DATA] = "old_data",
	[STATS_WHY_RECONSTRUCT] = "reconstruct",
	[STATS_WHY_MIRROR] = "mirror",
	[STATS_WHY_ALIGN] = "align",
	[STATS_WHY_REBUILD] = "rebuild",
	[STATS_WHY_PPL] = "ppl",
	[STATS_WHY_JOURNAL] = "journal",
	[STATS_WHY_RESHAPE] = "reshape",
	[STATS_WHY_SB] = "sb",
	[STATS_WHY_BITMAP] = "bitmap",
	[STATS_WHY_BBL] = "bbl",
};

const char *stats_why_name(enum stats_why w)
{
	return (unsigned)w < STATS_WHY_COUNT ? why_names[w] : "?";
}

static const char *op_name(unsigned op)
{
	static const char *const n[] = {"read", "write", "flush"};
	return op < STATS_NOPS ? n[op] : "?";
}

struct stats_trace *stats_trace_create(size_t capacity)
{
	size_t cap = 2;
	while (cap < capacity && cap < ((size_t)1 << 40))
		cap <<= 1;
	struct stats_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->slot = aligned_alloc(64, cap * sizeof(*t->slot));
	if (!t->slot) {
		free(t);
		return NULL;
	}
	memset(t->slot, 0, cap * sizeof(*t->slot)); /* seq 0: never a published ticket */
	t->mask = cap - 1;
	return t;
}

void stats_trace_destroy(struct stats_trace *t)
{
	if (!t)
		return;
	free(t->slot);
	free(t);
}

void stats_trace_enable(struct stats_trace *t, int on)
{
	/* a count of readers (MNT/trace, the dashboard's chunk heat map): the
	 * ring records while any wants it; never below 0 */
	int e = atomic_load_explicit(&t->enabled, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&t->enabled, &e, on ? e + 1 : e > 0 ? e - 1 : 0,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

uint64_t stats_trace_id(struct stats_trace *t)
{
	return atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
}

static void pack(const struct stats_trace_rec *r, uint64_t w[NWORDS])
{
	w[0] = r->seq;
	w[1] = r->parent;
	w[2] = r->t_start_ns;
	w[3] = r->latency_ns;
	w[4] = r->offset;
	w[5] = r->length;
	w[6] = (uint64_t)(uint32_t)r->dev | (uint64_t)r->op << 32 | (uint64_t)r->why << 40 |
	       (uint64_t)(uint16_t)r->error << 48;
}

static void unpack(const uint64_t w[NWORDS], struct stats_trace_rec *r)
{
	r->seq = w[0];
	r->parent = w[1];
	r->t_start_ns = w[2];
	r->latency_ns = w[3];
	r->offset = w[4];
	r->length = w[5];
	r->dev = (int32_t)(uint32_t)w[6];
	r->op = (uint8_t)(w[6] >> 32);
	r->why = (uint8_t)(w[6] >> 40);
	r->error = (int16_t)(uint16_t)(w[6] >> 48);
}

void stats_trace_add(struct stats_trace *t, const struct stats_trace_rec *r)
{
	if (!stats_trace_on(t))
		return;
	uint64_t tk = atomic_fetch_add_explicit(&t->head, 1, memory_order_relaxed);
	struct stats_trace_slot *s = &t->slot[tk & t->mask];
	uint64_t cur = atomic_load_explicit(&s->seq, memory_order_relaxed);
	for (;;) {
		if ((cur & 1) || cur >= 2 * tk + 1) {
			atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
			return;
		}
		if (atomic_compare_exchange_weak_explicit(&s->seq, &cur, 2 * tk + 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			break;
	}
	/* the odd seq is visible before any word of the new record */
	atomic_thread_fence(memory_order_release);
	uint64_t w[NWORDS];
	pack(r, w);
	for (unsigned i = 0; i < NWORDS; i++)
		atomic_store_explicit(&s->w[i], w[i], memory_order_relaxed);
	atomic_store_explicit(&s->seq, 2 * tk + 2, memory_order_release);
}

size_t stats_trace_read(struct stats_trace *t, uint64_t *cursor, struct stats_trace_rec *out,
			size_t max)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	uint64_t cap = t->mask + 1, pos = *cursor;
	size_t n = 0;
	if (head > cap && pos < head - cap)
		pos = head - cap; /* older tickets are overwritten */
	while (n < max && pos < head) {
		struct stats_trace_slot *s = &t->slot[pos & t->mask];
		uint64_t want = 2 * pos + 2;
		uint64_t s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (s1 < want)
			break; /* not published yet: resume here next time */
		if (s1 == want) {
			uint64_t w[NWORDS];
			for (unsigned i = 0; i < NWORDS; i++)
				w[i] = atomic_load_explicit(&s->w[i], memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&s->seq, memory_order_relaxed) == s1)
				unpack(w, &out[n++]);
		}
		pos++; /* published, or overwritten by a later lap: either way, past it */
	}
	*cursor = pos;
	return n;
}

/* ---- renderers ---- */

static void text_line(FILE *f, const struct stats_trace_rec *r, uint64_t t0, int indent)
{
	char dev[16];
	if (r->dev < 0)
		snprintf(dev, sizeof(dev), "vol");
	else
		snprintf(dev, sizeof(dev), "m%d", (int)r->dev);
	double ts = r->t_start_ns >= t0 ? (double)(r->t_start_ns - t0) / 1e9
					 : -(double)(t0 - r->t_start_ns) / 1e9;
	fprintf(f, "%s%-14.9f %8" PRIu64 " %-4s %c %12" PRIu64 " + %-8" PRIu64 " %10.1f us %s",
		indent ? "  " : "", ts, r->seq, dev, "RWF?"[r->op < STATS_NOPS ? r->op : 3],
		r->offset, r->length, (double)r->latency_ns / 1e3,
		stats_why_name((enum stats_why)r->why));
	if (r->parent && !indent)
		fprintf(f, " (of %" PRIu64 ")", r->parent);
	if (r->error)
		fprintf(f, " err=%d", r->error);
	fputc('\n', f);
}

static int in_batch(const struct stats_trace_rec *r, size_t n, uint64_t seq)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].parent == 0 && r[i].seq == seq)
			return 1;
	return 0;
}

int stats_trace_render_text(FILE *f, const struct stats_trace_rec *r, size_t n, uint64_t t0)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].parent == 0) {
			text_line(f, &r[i], t0, 0);
			for (size_t k = 0; k < n; k++)
				if (r[k].parent == r[i].seq)
					text_line(f, &r[k], t0, 1);
		} else if (!in_batch(r, n, r[i].parent)) {
			text_line(f, &r[i], t0, 0); /* its volume request is not in this batch */
		}
	}
	return ferror(f) ? -EIO : 0;
}

int stats_trace_render_json(FILE *f, const struct stats_trace_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f,
			"{\"seq\":%" PRIu64 ",\"parent\":%" PRIu64 ",\"t_start_ns\":%" PRIu64
			",\"latency_ns\":%" PRIu64 ",\"dev\":%d,\"op\":\"%s\",\"why\":\"%s\","
			"\"offset\":%" PRIu64 ",\"length\":%" PRIu64 ",\"error\":%d}\n",
			r[i].seq, r[i].parent, r[i].t_start_ns, r[i].latency_ns, (int)r[i].dev,
			op_name(r[i].op), stats_why_name((enum stats_why)r[i].why), r[i].offset,
			r[i].length, (int)r[i].error);
	return ferror(f) ? -EIO : 0;
}
