/* ppl_int: the log's state, shared by ppl.c (the partial parity log and the
 * ring both logs use) and journal.c (the write journal). Fsvol/core only. */
#ifndef FSVOL_PPL_INT_H
#define FSVOL_PPL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/meta/sb.h"

/* A record whose room in the ring is held. */
struct ppl_live {
	uint64_t start, n;
	int done;
};

struct ppl_ring {
	uint64_t head;             /* next block to write */
	unsigned qh, qn;           /* live records, oldest first (a circular queue) */
	struct ppl_live *q;
};

struct ppl_log {
	pthread_mutex_t lock;
	uint64_t area, nblocks;    /* member offset and blocks of every area */
	unsigned ndata;            /* data columns of a stripe */
	uint64_t seq;              /* under lock */
	struct vol_waiter *waiters;
	_Atomic uint64_t records, blocks, replayed;
	int journal;               /* 1: the write journal's ring (journal.c), on slot jslot */
	unsigned jslot;
	_Atomic int dead;          /* the journal is missing or failed: writes are refused */
	_Atomic int write_back;    /* md's journal_mode: acknowledge once the journal has it */
	_Atomic int wb_seen;       /* write-back was on this session: writes may still be on their way */
	struct ppl_ring ring[SB_MAX_SLOTS];
};

/* A round's records and its held writes (in the request's scratch). */
struct ppl_hold {
	unsigned n, nstash, allocated;
	struct {
		unsigned member, qi;
		uint64_t blocks, at;
		uint8_t *buf;
	} rec[ENG_ROUND_PLANS];
	struct eng_piece *stash;
};

#endif
