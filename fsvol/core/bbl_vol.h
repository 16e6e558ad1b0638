/* bbl_vol: the volume's side of the members' bad-block lists (md's
 * badblocks; the list itself: fsvol/meta/bbl.h). fsvol/core only.
 *
 * A member I/O error on a redundant volume whose members carry a list does
 * not fail the member: the erring range goes into the member's list (on the
 * completion, memory only), the request is replanned around it (the engine
 * treats a member as failed for every unit its list touches: reads come from
 * the other copies or parity, writes skip it), and the metadata thread
 *   - writes the list before any write that depends on it is acknowledged
 *     (the range joins the superblock sequence, as md acknowledges entries);
 *   - probes the member (its superblock block): when that fails too, the
 *     errors are not sector-local and the member is failed as before;
 *   - rewrites each listed unit on the member from redundancy (a fix, under
 *     the unit's lock): when the rewrite lands, the entries go (the disk
 *     remapped the sector, md's "read error corrected"); when it fails they
 *     stay, and writes keep skipping them.
 * A member whose list is full, or whose list cannot be written, is failed. */
#ifndef FSVOL_BBL_VOL_H
#define FSVOL_BBL_VOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct vol;
struct member;
struct eng_req;
struct bbl;

/* Read the lists of the present members (vol_open). 0 (nothing when the
 * volume has no list area), or -ENOMEM. An unreadable list is logged and
 * taken as empty. */
int vol_bbl_open(struct vol *v);
/* A member opened at run time (add, re-add): its own list, read now, is
 * honoured from the start (a re-added member's listed units are stale). */
void vol_bbl_attach(struct vol *v, struct member *m);
/* No fix starts after this (vol_close, before the engine drains). */
void vol_bbl_quiesce(struct vol *v);
void vol_bbl_close(struct vol *v);

/* 1 when some member lists something (the engine's fast test). */
int vol_bbl_any(const struct vol *v);
/* The members whose list touches their part of the unit (stripe, mirror
 * chunk) holding logical offset off: the engine treats them as failed there. */
uint64_t vol_bbl_failed_at(const struct vol *v, uint64_t off);
/* After a batch (engine, on a completion): the erring members of *bad whose
 * errors went into their lists are taken out of *bad. 1 when the request's
 * unit ends here with rq->res set (a fix that failed, a rebuild whose target
 * block failed: recorded), else 0 (replan on what remains). */
int vol_bbl_settle(struct eng_req *rq, uint64_t *bad);
/* A rebuild unit that cannot be recovered because of listed blocks on the
 * sources: listed on the target instead. 0 (the unit is done), or -EIO. */
int vol_bbl_unit_lost(struct eng_req *rq);
/* A fix unit was rewritten: its entries on the member go (unit locks held). */
void vol_bbl_fixed(struct eng_req *rq);

/* The metadata thread: probes and fixes asked for (VOL_MD_BBL). */
void vol_bbl_run(struct vol *v);
/* The metadata thread: write the lists that changed; a member whose list
 * cannot be written is failed (1 then, else 0). */
int vol_bbl_write(struct vol *v);

/* Entries and sectors listed for slot's member (0 without a member or lists). */
unsigned vol_bbl_count(const struct vol *v, unsigned slot, uint64_t *sectors);
/* A copy of slot's member's list: 0, or -ENOENT. */
int vol_bbl_get(const struct vol *v, unsigned slot, struct bbl *out);

#endif
