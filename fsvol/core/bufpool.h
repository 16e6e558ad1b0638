/* bufpool: aligned, pre-touched I/O buffers by power-of-two class, kept for
 * reuse as the load needs them and given back when it goes down (for the
 * engine and the front ends, whose requests outlive the thread that received
 * them). */
#ifndef FSVOL_BUFPOOL_H
#define FSVOL_BUFPOOL_H

#include <stddef.h>

/* Buffers of this capacity and more are mappings of their own: given back
 * beyond the idle bound, their memory returns to the system at once. */
#define BUFPOOL_MAP_MIN ((size_t)128 << 10)

/* A buffer of at least len bytes, 4 KiB aligned; its capacity in *cap. NULL
 * when out of memory. */
void *bufpool_get(size_t len, size_t *cap);
/* Give back a buffer bufpool_get returned with capacity cap. */
void bufpool_put(void *p, size_t cap);
/* Give idle buffers the load no longer needs back to the system: call about
 * once a second from a thread that ticks (the NBD server's does). */
void bufpool_shrink(void);

#endif
