/* events: MNT/events, the volume's state changes under mdadm --monitor's
 * names, one line each, appended for as long as the mount lives:
 *
 *   TIME EVENT VOLUME mN|- DETAIL
 *   2026-12-01T12:43:28.120Z Fail fsvol-1a2b3c4d m1 /var/tmp/v/d1
 *   2026-12-01T12:43:28.120Z DegradedArray fsvol-1a2b3c4d - 1 of 3 members failed or missing
 *   2026-12-01T12:43:28.220Z RebuildStarted fsvol-1a2b3c4d m1 recovery
 *   2026-12-01T12:43:29.020Z Rebuild20 fsvol-1a2b3c4d m1 recovery 20%
 *   2026-12-01T12:43:31.920Z RebuildFinished fsvol-1a2b3c4d m1 recovery done, 0 mismatches
 *   2026-12-01T12:43:31.920Z SpareActive fsvol-1a2b3c4d m1 /var/tmp/v/s0
 *
 * Events: Fail, FailSpare, DegradedArray, SpareActive, RebuildStarted,
 * Rebuild20/40/60/80, RebuildFinished (mdadm's; DeviceDisappeared and
 * NewArray come from fsvol monitor, which sees mounts come and go). The log
 * is found by comparing snapshots of the volume's state every 100 ms on a
 * thread of its own, as mdadm --monitor compares /proc/mdstat, so the core
 * needs no hook; a change undone within 100 ms may go unseen, a pass that
 * ran entirely between two looks is still reported (by its start time). */
#ifndef FSVOL_EVENTS_H
#define FSVOL_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "fsvol/core/volume.h"

#define EVENTS_PATH_MAX 256 /* of a member's path, in a snapshot */

/* What the events are found in: one look at the volume. */
struct events_snap {
	unsigned nslots;
	char state[SB_MAX_SLOTS][12];             /* vol_slot_state's word */
	char path[SB_MAX_SLOTS][EVENTS_PATH_MAX]; /* "" when no member */
	int number[SB_MAX_SLOTS];                 /* the member's Number (md's, it names it: mN), -1 none */
	int degraded;                             /* 0, 1 degraded, 2 failed */
	unsigned nfailed, members;
	const char *sync_what;                    /* NULL: no pass since mount */
	int sync_running, sync_done;
	int sync_slot;                            /* the member a recovery or replace builds, or -1 */
	unsigned sync_pct;
	uint64_t sync_start_ns, sync_mismatches;
};

/* The events between two looks, in order: emit(ctx, EVENT, the member's
 * Number or -1, DETAIL). */
typedef void (*events_emit_fn)(void *ctx, const char *event, int number, const char *detail);
void events_diff(const struct events_snap *a, const struct events_snap *b, events_emit_fn emit, void *ctx);
/* A member that a running recovery or replace made active keeps the state
 * of the last look, its pass the member it built, until the pass ends: md
 * marks the spare in sync after the pass, so RebuildFinished comes before
 * SpareActive however the look falls between the two changes. */
void events_hold(const struct events_snap *a, struct events_snap *b);

/* The log of a served volume (a thread). 0 or -errno. */
struct events_log;
int events_start(struct vol *v, struct events_log **out);
void events_stop(struct events_log *e);
/* Bytes written to the log so far (MNT/events' size). */
uint64_t events_size(struct events_log *e);
/* Up to len bytes from offset off into buf; 0 at the end. The log keeps its
 * last EVENTS_KEEP bytes or more: what was dropped before reads as empty
 * lines, so offsets stay those of the whole log. */
#define EVENTS_KEEP (1u << 20)
size_t events_read(struct events_log *e, uint64_t off, char *buf, size_t len);

#endif
