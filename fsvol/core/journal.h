/* journal: md's write journal for raid4/5/6 (create --write-journal PATH;
 * the record format is docs/format.md, "Write journal").
 *
 * Every stripe write's data and parity go to the journal member first, as
 * one record (the member writes it stands for, their bytes, checksums, a
 * sequence number), then to the members. After a dirty stop the complete
 * records still in the journal are written again, oldest first: every
 * interrupted stripe update ends whole, even when a chunk it changed lives
 * on a missing member. The journal's ring and the write path's phases are
 * the partial parity log's (ppl.c); this file makes and replays records.
 * Fsvol/core only. */
#ifndef FSVOL_JOURNAL_H
#define FSVOL_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "layout/layout.h"

struct vol;
struct eng_req;
struct eng_plan;

#define JNL_MAGIC 0x314c4e4au /* "JNL1" */
#define JNL_MAX_WRITES 128u

/* A record's header (block 0; the writes' bytes follow, in order). */
struct jnl_rec {
	uint8_t volume_uuid[16];
	uint64_t seq;            /* replay order */
	uint64_t stripe;
	uint32_t blocks;         /* header + payload blocks */
	uint32_t payload_crc;    /* CRC32C of the payload */
	uint32_t nwrites;
	struct {
		uint32_t slot;       /* the member slot written */
		uint64_t off, len;   /* data-area offset and bytes (multiples of 4 KiB) */
	} w[JNL_MAX_WRITES];
};

/* Pure codec, as ppl's: 0, or -EINVAL with a reason. */
void jnl_rec_encode(const struct jnl_rec *r, uint8_t *buf);
int jnl_rec_decode(const uint8_t *buf, struct jnl_rec *r, char *err, size_t errlen);

/* Blocks of the record a plan makes. */
uint64_t jnl_plan_blocks(const struct layout_plan *p);
/* io_parity's hook, after a plan's write pieces were queued (from piece
 * first on): the record of them, held with the round's (ppl.c). */
int jnl_record(struct eng_req *rq, const struct eng_plan *pl, unsigned first);
/* After a dirty stop: write the complete records again, oldest first. */
int jnl_replay(struct vol *v, unsigned jslot, uint64_t area, uint64_t nblocks, char *err, size_t errlen);

#endif
