/* adapter: a host adapter (bus) shared by emulated disks, pure computation in
 * emulated ns like the spindle model.
 *
 * A transfer holds the bus for the adapter's per-command overhead plus its bytes
 * at the adapter's rate; a disk's seek and rotation do not hold it (SCSI
 * disconnect/reselect). Transfers reserve the bus when their request is
 * dispatched, in the first free gap at or after the moment they are ready
 * (first fit in dispatch order; a reservation never moves). The counters live
 * here and are read with adapter_snapshot. Figures and sources: docs/model.md. */
#ifndef FSVOL_ADAPTER_H
#define FSVOL_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#define ADAPTER_MAX 16            /* adapters of one volume */
#define ADAPTER_SLOTS 64          /* reservations remembered (the oldest is dropped) */

struct adapter_params {
	char preset[24];
	uint64_t rate_Bps;        /* bus transfer rate shared by its disks */
	uint64_t overhead_ns;     /* bus held per command (arbitration, selection,
				   * command, reselection, status, messages) */
};

/* Running totals since adapter_init (counted at dispatch, when the bus is
 * reserved: a snapshot may include transfers a few ms ahead of emulated now). */
struct adapter_stats {
	uint64_t cmds;            /* transfers */
	uint64_t bytes;
	uint64_t busy_ns;         /* sum of bus holds (they never overlap) */
	uint64_t wait_ns;         /* sum of waits for the bus: its queue's time integral */
	uint64_t waited;          /* transfers that found the bus taken */
};

struct adapter {
	struct adapter_params p;
	char name[16];
	unsigned n;               /* reservations in resv, sorted, disjoint */
	struct { uint64_t lo, hi; } resv[ADAPTER_SLOTS];
	struct adapter_stats st;
};

/* "PRESET[:rate=RATE,overhead=TIME]". 0 or -EINVAL with the key at fault in err. */
int adapter_parse(const char *spec, struct adapter_params *out, char *err, size_t errlen);
/* The complete spec of p, parseable by adapter_parse (snprintf's return). */
int adapter_format(const struct adapter_params *p, char *buf, size_t len);
/* Names of the presets, NULL-terminated; one line of help for a preset name. */
extern const char *const adapter_presets[];
const char *adapter_help(const char *preset);

void adapter_init(struct adapter *a, const char *name, const struct adapter_params *p);
/* Bus time of one transfer of len bytes: overhead + len / rate. */
uint64_t adapter_hold_ns(const struct adapter *a, uint64_t len);
/* Earliest start >= ready of a free gap of hold ns; changes nothing. */
uint64_t adapter_find(const struct adapter *a, uint64_t ready, uint64_t hold);
/* Take [start, start + hold) (from adapter_find) and count it. */
void adapter_reserve(struct adapter *a, uint64_t ready, uint64_t start, uint64_t hold,
		     uint64_t bytes);
void adapter_snapshot(const struct adapter *a, struct adapter_stats *out);

#endif
