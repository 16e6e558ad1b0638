/* meta_io: a volume's metadata I/O on its members, counted and traced as data
 * is (the project's first promise: every member I/O below the mapping layer).
 *
 * The superblocks, the write-intent bitmap, the bad-block lists and the PPL
 * and journal areas read or written outside the engine's batches (their
 * replay at mount, the metadata thread's writes) go through here: the
 * member's counters (MNT/stats, stats.json, diskstats, metrics, fsvol stat),
 * a trace record labelled with its reason (sb, bitmap, bbl, ppl, journal),
 * the member's filters (its ops: fault, delay, cache), its failfast deadline
 * and its emulated disk, whose time the caller waits for, as a data I/O's
 * completion does (virtual time excepted: there metadata costs no emulated
 * time, as the bitmap's wait never did). Synchronous: never on a completion. */
#ifndef FSVOL_META_IO_H
#define FSVOL_META_IO_H

#include <stddef.h>
#include <stdint.h>

#include "fsvol/members/member.h"

struct vol;

/* One I/O of m (a member of v; its slot is m->slot, -1 before assembly):
 * op MEMBER_READ, MEMBER_WRITE or MEMBER_FLUSH (buf, len, off unused), why a
 * metadata stats_why (stats_why_meta), off from the member's start. 0 or
 * -errno. Counted when the volume counts its members and m has counters;
 * traced while someone traces, under the request vol_meta_cause names. */
int vol_meta_io(struct vol *v, struct member *m, int op, int why, void *buf, size_t len, uint64_t off);
static inline int vol_meta_flush(struct vol *v, struct member *m, int why)
{
	return vol_meta_io(v, m, MEMBER_FLUSH, why, NULL, 0, 0);
}

/* The volume request (its trace id, 0: none) this thread's metadata I/O is
 * done for from now on: the first write that waited for the bitmap bits or
 * the dirty mark, so the trace shows that I/O under it. Returns the
 * previous one, to put back. */
uint64_t vol_meta_cause(uint64_t trace_id);

#endif
