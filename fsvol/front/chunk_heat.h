/* chunk_heat: which chunks of the layout are hot, from the trace ring, for
 * the dashboard's per-chunk heat map (GET /chunks.json). Member requests are
 * counted per member and chunk row (row = member offset / chunk), running
 * totals as every counter is, so a reader diffs two answers. The ring records
 * only while someone asks: the first answer turns tracing on, and it goes off
 * again when nobody asked for CHUNK_HEAT_LEASE_S seconds (checked on every
 * HTTP request, and at stop). */
#ifndef FSVOL_CHUNK_HEAT_H
#define FSVOL_CHUNK_HEAT_H

#include <stdio.h>

#include "fsvol/core/volume.h"

#define CHUNK_HEAT_LEASE_S 10
#define CHUNK_HEAT_MAX_ROWS 1024 /* more chunk rows are grouped, several per cell */

struct chunk_heat;

/* NULL on ENOMEM. Counts nothing until the first chunk_heat_render. */
struct chunk_heat *chunk_heat_create(struct vol *v);
/* Drain the trace ring into the counts and write them as JSON (schema in
 * docs/counters.md, "HTTP"). 0 or -errno. */
int chunk_heat_render(struct chunk_heat *h, FILE *f);
/* Stop tracing when the lease ran out. */
void chunk_heat_idle(struct chunk_heat *h);
/* Stop tracing, free. NULL is a no-op. */
void chunk_heat_destroy(struct chunk_heat *h);

#endif
