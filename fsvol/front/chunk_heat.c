/* chunk_heat: per-chunk I/O counts from the trace ring (see chunk_heat.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "fsvol/front/chunk_heat.h"
#include "layout/layout.h"
#include "stats/stats.h"

#define CHUNK_HEAT_BATCH 512

struct chunk_heat {
	pthread_mutex_t lock;
	struct vol *v;
	int tracing;         /* holds one of the ring's reader counts */
	uint64_t asked_ns;   /* the last render */
	uint64_t cursor;     /* ring position read up to */
	uint64_t since_ns;   /* tracing on since */
	uint64_t records, lost;
	unsigned members, cells;
	uint64_t rows, rows_per_cell;
	uint64_t *count;     /* [op (read, write)][member][cell] */
	struct stats_trace_rec batch[CHUNK_HEAT_BATCH];
};

struct chunk_heat *chunk_heat_create(struct vol *v)
{
	const struct layout_geom *g = vol_geom(v);
	struct chunk_heat *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	h->v = v;
	h->members = g->members;
	h->rows = g->chunk ? (g->member_used + g->chunk - 1) / g->chunk : 1;
	/* rows_per_cell = ceil(rows / CHUNK_HEAT_MAX_ROWS) */
	h->rows_per_cell = (h->rows + CHUNK_HEAT_MAX_ROWS - 1) / CHUNK_HEAT_MAX_ROWS;
	if (!h->rows_per_cell)
		h->rows_per_cell = 1;
	h->cells = (unsigned)((h->rows + h->rows_per_cell - 1) / h->rows_per_cell);
	if (!h->cells)
		h->cells = 1;
	h->count = calloc(2 * (size_t)h->members * h->cells, sizeof(*h->count));
	if (!h->count) {
		free(h);
		return NULL;
	}
	return h;
}

/* Count one member request in every cell its range touches. */
static void count_rec(struct chunk_heat *h, const struct stats_trace_rec *r)
{
	uint64_t chunk = vol_geom(h->v)->chunk;
	if (r->dev < 0 || (unsigned)r->dev >= h->members || r->op > STATS_WRITE || !r->length || !chunk ||
	    stats_why_meta(r->why))
		return; /* the volume's own records, spare slots, flushes, metadata (not in the grid) */
	uint64_t c0 = r->offset / chunk / h->rows_per_cell, c1 = (r->offset + r->length - 1) / chunk / h->rows_per_cell;
	uint64_t *row = h->count + ((size_t)r->op * h->members + (size_t)r->dev) * h->cells;
	for (uint64_t c = c0; c <= c1 && c < h->cells; c++)
		row[c]++;
}

static void drain(struct chunk_heat *h)
{
	struct stats_trace *t = vol_trace(h->v);
	uint64_t head = atomic_load(&t->head), cap = t->mask + 1;
	if (head - h->cursor > cap) { /* overwritten before we read them */
		h->lost += head - h->cursor - cap;
		h->cursor = head - cap;
	}
	size_t n;
	while ((n = stats_trace_read(t, &h->cursor, h->batch, CHUNK_HEAT_BATCH)) > 0)
		for (size_t i = 0; i < n; i++) {
			h->records++;
			count_rec(h, &h->batch[i]);
		}
}

int chunk_heat_render(struct chunk_heat *h, FILE *f)
{
	const struct layout_geom *g = vol_geom(h->v);
	pthread_mutex_lock(&h->lock);
	h->asked_ns = stats_now();
	if (!h->tracing) {
		h->tracing = 1;
		h->cursor = atomic_load(&vol_trace(h->v)->head); /* only what comes from now on */
		h->since_ns = h->asked_ns;
		stats_trace_enable(vol_trace(h->v), 1);
	}
	drain(h);
	fprintf(f, "{\"t_ns\":%" PRIu64 ",\"tracing_since_ns\":%" PRIu64 ",\"members\":%u,\"chunk\":%" PRIu64
		",\"rows\":%" PRIu64 ",\"rows_per_cell\":%" PRIu64 ",\"cells\":%u,\"records\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"dropped\":%" PRIu64,
		h->asked_ns, h->since_ns, h->members, g->chunk, h->rows, h->rows_per_cell, h->cells, h->records, h->lost,
		(uint64_t)atomic_load(&vol_trace(h->v)->dropped));
	for (int op = 0; op < 2; op++) {
		fprintf(f, ",\"%s\":[", op ? "writes" : "reads");
		for (unsigned m = 0; m < h->members; m++) {
			const uint64_t *row = h->count + ((size_t)op * h->members + m) * h->cells;
			fputs(m ? ",[" : "[", f);
			for (unsigned c = 0; c < h->cells; c++)
				fprintf(f, c ? ",%" PRIu64 : "%" PRIu64, row[c]);
			fputc(']', f);
		}
		fputc(']', f);
	}
	fputs("}\n", f);
	pthread_mutex_unlock(&h->lock);
	return ferror(f) ? -EIO : 0;
}

static void stop_tracing(struct chunk_heat *h)
{
	if (h->tracing) {
		h->tracing = 0;
		stats_trace_enable(vol_trace(h->v), 0);
	}
}

void chunk_heat_idle(struct chunk_heat *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	if (h->tracing && stats_now() - h->asked_ns > (uint64_t)CHUNK_HEAT_LEASE_S * 1000000000u)
		stop_tracing(h);
	pthread_mutex_unlock(&h->lock);
}

void chunk_heat_destroy(struct chunk_heat *h)
{
	if (!h)
		return;
	stop_tracing(h);
	pthread_mutex_destroy(&h->lock);
	free(h->count);
	free(h);
}
