/* volume: an assembled volume (members + geometry + state), opaque outside
 * fsvol/core: assembly, state changes (the engine reports a member error
 * through vol_fail_slot only), recovery, and what front ends may read. */
#ifndef FSVOL_VOLUME_H
#define FSVOL_VOLUME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/core/engine.h"
#include "fsvol/core/vol_opts.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/sb.h"
#include "layout/layout.h"

/* An assembled volume: opaque outside fsvol/core (its fields: core/vol_int.h).
 * Front ends, the CLI and the bench use the calls below. */
struct vol;
struct stats_dev;
struct stats_trace;

/* ---- what front ends may read (and the few knobs they may turn) ---- */
const struct layout_geom *vol_geom(const struct vol *v);
/* Slots (members + spares); the member in a slot, NULL when missing. */
unsigned vol_nslots(const struct vol *v);
struct member *vol_member(const struct vol *v, unsigned slot);
/* Bit i: role slot i cannot be used (failed, missing, being rebuilt). */
uint64_t vol_failed_mask(const struct vol *v);
const struct sb *vol_sb(const struct vol *v);
uint64_t vol_data_offset(const struct vol *v);
int vol_was_dirty(const struct vol *v);
/* Counters above the mapping layer, the trace ring, their clocks. */
struct stats_dev *vol_stats(const struct vol *v);
struct stats_trace *vol_trace(const struct vol *v);
uint64_t vol_start_ns(const struct vol *v);
uint64_t vol_reset_ns(const struct vol *v);
void vol_set_reset_ns(struct vol *v, uint64_t ns);
enum vol_stats_level vol_stats_level(const struct vol *v);
void vol_set_stats_level(struct vol *v, enum vol_stats_level l);
/* md's sync_speed_min / sync_speed_max, KiB/s. */
void vol_set_sync_speed(struct vol *v, int max, unsigned kibs);
/* md's sync_max, in 512-byte sectors of the pass's span (UINT64_MAX: no
 * limit): the running pass, and every later one, waits before a unit that
 * would end past it (status: held), until it is raised or the volume stops. */
void vol_set_sync_max(struct vol *v, uint64_t sectors);
/* The background pass (resync, check, repair, recovery), for reports. */
struct vol_sync_info {
	const char *what;          /* NULL: none since mount */
	int running, done;
	uint64_t pos, total;       /* units */
	uint64_t mismatches, skipped;
	int rebuild_slot;          /* -1: none */
	int replace_with;          /* the spare slot a replace builds; -1: none */
	uint64_t rebuild_pos;      /* logical bytes in sync on the rebuilding member */
	double speed_kibs;         /* since the pass started */
	double eta_s;              /* at that speed; 0 when not running */
	uint64_t start_ns;         /* when the pass began (stats_now): tells two passes apart */
	unsigned speed_min, speed_max; /* KiB/s, md's sync_speed_min/max */
	uint64_t done_sectors, total_sectors; /* md's sync_completed: the span's 512-byte sectors */
	uint64_t sync_max;         /* md's sync_max, sectors; UINT64_MAX: max */
	int held;                  /* the pass waits at sync_max */
};
void vol_sync_info(const struct vol *v, struct vol_sync_info *out);

/* Assemble from member paths (any order). Returns 0 or -errno with a message
 * naming the culprit. Unless opts->readonly, marks the volume dirty on disk. */
int vol_open(struct vol **out, char *const *paths, unsigned n, const struct vol_opts *opts,
	     char *err, size_t errlen);
/* Start the volume's threads (model timer, a pending resync); call in the
 * process that will serve I/O (after any fork). 0 or -errno. */
int vol_start(struct vol *v);
/* Start a background pass by its name (the ctl edge): "resync" or "repair"
 * rewrite what disagrees, "check" only counts, "recovery" rebuilds the
 * rebuilding member, "replace" builds a replacement. -EBUSY while one runs,
 * -EINVAL when the level has no redundancy or the name is none of these. */
int vol_sync_start(struct vol *v, const char *what);

/* Reshape (core/reshape.c, md's grow; also the MNT/ctl verb "grow SPEC"):
 * spec is "raid-devices=N,chunk=BYTES,level=L" (any of them). New members
 * are the spares in slots members..N-1. Starts the pass: 0, or -errno with a
 * message in err. */
int vol_grow(struct vol *v, const char *spec, char *err, size_t errlen);
/* The raid roles: the members, and during a reshape the slots it adds too
 * (the windows already moved live on them). */
unsigned vol_roles(const struct vol *v);

/* Recovery (core/recovery.c), each also a MNT/ctl verb. 0 or -errno with a
 * message in err. */
/* Add a spare; it replaces a failed member at once when the volume is degraded. */
int vol_add(struct vol *v, const char *path, char *err, size_t errlen);
/* A former member comes back: rebuilt onto its old slot. */
int vol_readd(struct vol *v, const char *path, char *err, size_t errlen);
/* Remove a failed or spare member (slot, or its path). */
int vol_remove(struct vol *v, const char *which, char *err, size_t errlen);
/* A member's Number ("mN" or "N", as status names it) or its path -> its
 * slot, or -1. */
int vol_slot_of(const struct vol *v, const char *which);
/* Device Numbers (core/vol_numbers.c, md's): they stay with the device
 * whatever slot (role) it moves to. The Number of the entry in slot, -1
 * when none; the slot of Number n, -1 when none; "mN" ("m-": none). */
#define VOL_NAME_LEN 8
int vol_slot_number(const struct vol *v, unsigned slot);
int vol_slot_of_number(const struct vol *v, unsigned number);
void vol_slot_name(const struct vol *v, unsigned slot, char out[VOL_NAME_LEN]);
/* "mN" or "N" -> N (below SB_MAX_SLOTS), else -1. */
int vol_parse_number(const char *which);
/* Replace role M (slot or path) with PATH (added as a spare first) or with a
 * spare: the new member is built while the old one serves, then takes the
 * role; the old one is marked faulty (md). 0 or -errno with a message. */
int vol_replace(struct vol *v, const char *which, const char *path, char *err, size_t errlen);
/* Set (or change, at run time) the members' spindle models from a spec
 * (fsvol mount --model, MNT/ctl "model SPEC"). -EBUSY while a model has
 * requests queued; -EINVAL with a message for a bad spec. */
int vol_model(struct vol *v, const char *spec, char *err, size_t errlen);
/* Virtual time (vol_opts.virtual_time): the volume's clock, and the
 * discrete-event loop that moves it. vol_run releases every completion due by
 * until_ns (UINT64_MAX: all) on the caller's thread; vol_run_next only those
 * of the next completion time, if it is at or before until_ns (else the clock
 * moves to until_ns). Without virtual time: stats_now(), and both return at
 * once. One thread drives the clock. */
uint64_t vol_clock(const struct vol *v);
uint64_t vol_run(struct vol *v, uint64_t until_ns);
uint64_t vol_run_next(struct vol *v, uint64_t until_ns);
struct emul;
/* The volume's emulator, once a model runs (NULL before): for a front end
 * whose event loop keeps the model's clock (emul_drive_begin). */
struct emul *vol_model_emul(struct vol *v);
/* Flush, mark clean (unless readonly), close everything. */
void vol_close(struct vol *v);
/* 1 when some member carries an emulated hard disk (a rotational device to
 * the NBD client). */
int vol_rotational(const struct vol *v);

/* md's per-device flags (core/vol_flags.c): SB_SLOT_WRITE_MOSTLY (raid1: not
 * read from while another copy serves) and SB_SLOT_FAILFAST (raid1/raid10:
 * failed at once when an I/O overruns the failfast deadline). */
unsigned vol_slot_flags(const struct vol *v, unsigned slot);
const char *vol_flag_name(unsigned flag); /* md's sysfs word: "writemostly", "failfast" */
/* The levels a flag is for: 0, or -EINVAL with why in err. */
int vol_flags_check(const struct layout_geom *g, unsigned flags, char *err, size_t errlen);
/* Set or clear flag on a member (slot or path), written to every superblock. */
int vol_set_flag(struct vol *v, const char *which, unsigned flag, int on, char *err, size_t errlen);
unsigned vol_failfast_ms(const struct vol *v);
void vol_set_failfast_ms(struct vol *v, unsigned ms);
/* md's safe mode (core/safe_mode.c): safe_mode_delay in ms (0: off, dirty
 * from the first write to the umount); md's array_state word ("clean",
 * "active", "write-pending"); the clean and dirty marks written since mount. */
unsigned vol_safe_delay(const struct vol *v);
void vol_safe_set_delay(struct vol *v, unsigned ms);
const char *vol_array_state(const struct vol *v);
uint64_t vol_safe_marks(const struct vol *v);
/* md's rmw_level for raid4/5/6 writes (layout.h's LAYOUT_RMW_*; io_parity.c). */
unsigned vol_rmw_level(const struct vol *v);
void vol_set_rmw_level(struct vol *v, unsigned level);
/* vol_add with md's device flags for the new member (SB_SLOT_*). */
int vol_add_flags(struct vol *v, const char *path, unsigned flags, char *err, size_t errlen);

int vol_fail_request(struct vol *v, unsigned slot, int force, char *err, size_t errlen); /* vol_fail.c: md's policy */
const char *vol_slot_state(const struct vol *v, unsigned slot);
/* Entries (and, when sectors is set, 512-byte sectors) in the bad-block list
 * of slot's member (md's bad block log); 0 without a member or a list. */
unsigned vol_bad_blocks(const struct vol *v, unsigned slot, uint64_t *sectors);
/* Render MNT/status (mdstat-like) into f. */
void vol_status(struct vol *v, FILE *f);
/* Render MNT/status.json (docs/status.schema.json) into f. */
void vol_status_json(struct vol *v, FILE *f);

/* create: write fresh superblocks on members (see fsvol create). */
struct vol_create {
	struct layout_geom geom;       /* level, alg, copies, chunk, members set */
	unsigned spares;
	uint64_t size;                 /* per-member data size, 0 = from the files */
	uint64_t data_offset;
	const char *name;
	int force;                     /* overwrite an existing fsvol superblock */
	int assume_clean;              /* skip zeroing the data areas */
	int prealloc;                  /* allocate the data areas of member files */
	char *warn;                    /* if set: a warning for the caller to print */
	size_t warnlen;
	int bitmap;                    /* -1 none, 0 default (internal when redundant), 1 internal */
	uint64_t bitmap_chunk;         /* 0: md's default (bitmap_default_chunk) */
	int consistency;               /* SB_CONS_*: ppl puts a log where the bitmap would be;
					* journal: the last device given is the write journal */
	int bbl;                       /* bad-block list: -1 none, 0 default (when redundant and room), 1 internal */
	uint8_t flags[SB_MAX_SLOTS];   /* each device's SB_SLOT_* (write-mostly, failfast) */
	unsigned write_behind;         /* raid1 with a bitmap: md's --write-behind */
};
int vol_create(const struct vol_create *c, char *const *paths, unsigned n, char *err, size_t errlen);
/* md's journal_mode of a volume with a write journal: "write-through" (a
 * write is acknowledged once the members have it) or "write-back" (once the
 * journal has it). 0, or -EINVAL with a reason. */
int vol_journal_mode(struct vol *v, const char *mode, char *err, size_t errlen);

#endif
