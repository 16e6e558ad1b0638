/* ppl: md's partial parity log for raid5 (create --consistency-policy ppl;
 * the record format is docs/format.md, "Partial parity log").
 *
 * Before a stripe write's data and parity go to the members, the parity
 * member's PPL area gets a record: the stripe, the in-chunk range of every
 * data column the write modifies, and the partial parity = the xor of what
 * it leaves alone. After a dirty stop, parity = partial parity xor the
 * modified columns as they are now, whatever subset of the writes landed;
 * no resync is owed. The write journal (journal.c) shares the ring and the
 * write path: its records hold the writes themselves. Fsvol/core only. */
#ifndef FSVOL_PPL_H
#define FSVOL_PPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "layout/layout.h"

struct vol;
struct eng_req;
struct eng_plan;

#define PPL_BLOCK 4096u
/* A record's seq is (session << 32) + n; the session grows with each start. */
#define PPL_SESSION(seq) ((seq) >> 32)
#define PPL_MAGIC 0x314c5050u /* "PPL1" */

/* A record's header (block 0 of the record; its partial parity follows). */
struct ppl_rec {
	uint8_t volume_uuid[16];
	uint64_t seq;            /* newer records of one stripe have higher seq */
	uint64_t stripe;
	uint64_t span_lo, span_hi; /* in-chunk bytes the record covers */
	uint32_t blocks;         /* header + partial parity blocks */
	uint32_t pp_crc;         /* CRC32C of the partial parity */
	uint32_t ndata;          /* data columns */
	uint32_t lo[LAYOUT_MAX_MEMBERS], hi[LAYOUT_MAX_MEMBERS]; /* modified in-chunk range per column */
};

/* Pure codec: encode into PPL_BLOCK bytes; decode checks magic, version,
 * checksum and field sanity (0, or -EINVAL with a reason). */
void ppl_rec_encode(const struct ppl_rec *r, uint8_t *buf);
int ppl_rec_decode(const uint8_t *buf, struct ppl_rec *r, char *err, size_t errlen);

/* At assembly, after the failed mask is known (sb.consistency PPL): set up
 * the log; after a dirty stop, replay it and owe no resync. 0 or -errno. */
int ppl_open(struct vol *v, char *err, size_t errlen);
void ppl_free(struct vol *v);
int ppl_on(const struct vol *v);

/* io_parity's hooks (a write round): build the plan's record from its new
 * parity (pbuf: NULL when the parity member is gone, no record then). */
int ppl_record(struct eng_req *rq, const struct eng_plan *pl, const uint8_t *pbuf, unsigned first);
/* journal.c's: a record of blocks at buf for slot member, held with the
 * round's; the next sequence number; the journal's slot. */
int ppl_hold_add(struct eng_req *rq, unsigned member, uint64_t blocks, uint8_t *buf);
uint64_t ppl_next_seq(struct vol *v);
unsigned ppl_journal_slot(const struct vol *v);
/* A batch's failed members (bit mask): the journal's failure is the log's
 * (writes refused from now on), not a raid member's; its bit is cleared and
 * 1 returned. */
int ppl_member_errors(struct vol *v, uint64_t *bad);
/* A round of a record's size more would not fit the log: end the round. */
int ppl_round_full(const struct eng_req *rq, const struct layout_plan *p);
/* After the round's writes were computed: hold them back and queue the
 * records instead. ENG_ISSUE (records queued), ENG_DONE (none to write),
 * ENG_WAIT (no room in the log yet: rq resumes in retry_phase when there
 * is; nothing of rq may be touched after) or -errno. */
int ppl_log(struct eng_req *rq, int retry_phase);
/* The records are durable: queue the held data and parity writes. */
void ppl_release_writes(struct eng_req *rq);
/* The round is over (or abandoned): its records' room may be reused. */
void ppl_release(struct eng_req *rq);

/* A member about to be rebuilt from 0 (or to replace a role): its log may
 * hold records from before it left, older than writes it missed; clear it.
 * May block: the sync thread. */
void ppl_member_reset(struct vol *v, int slot);

/* The journal's mode (md's journal_mode): 1 write-back, 0 write-through or
 * no journal. */
int ppl_write_back(const struct vol *v);
/* Reads must take the stripe lock: write-back was on (an acknowledged write
 * may still be on its way to the members), sticky for the session. */
int ppl_reads_lock(const struct vol *v);
/* 1 when slot i is the write journal (flushes reach it). */
int ppl_is_journal(const struct vol *v, unsigned i);

/* The write journal's records (journal.c, which includes this header; ppl.c
 * knows the journal only through this table, so no include circle). */
struct ppl_kind {
	int (*open)(struct vol *v, char *err, size_t errlen); /* ppl_open's, for sb.consistency journal */
	uint64_t (*plan_blocks)(const struct layout_plan *p);
	int (*record)(struct eng_req *rq, const struct eng_plan *pl, unsigned first);
	/* 0.. records replayed, or -errno (err) */
	int (*replay)(struct vol *v, unsigned slot, uint64_t area, uint64_t nblocks, char *err, size_t errlen);
};
extern const struct ppl_kind jnl_kind;

/* Counters for status: records written, their blocks, records replayed. */
void ppl_counts(const struct vol *v, uint64_t *records, uint64_t *blocks, uint64_t *replayed);
/* mdadm's Consistency Policy word: none, resync, bitmap, ppl, journal. */
const char *vol_consistency_name(const struct vol *v);
/* MNT/status's line for the log (nothing without one). */
void ppl_status(struct vol *v, FILE *f);

#endif
