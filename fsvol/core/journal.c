/* journal: md's write journal (raid5-cache.c's idea, fsvol's own code; see
 * journal.h). A record is one stripe write of a round:
 *
 *   | header: seq, stripe, (slot, offset, length) per member write | bytes of write 0 | write 1 | ... |
 *
 * The ring, its room and the order of the writes (record, then members) are
 * ppl.c's (its state: ppl_int.h); the member writes of the plan are then
 * issued from the record's copy of their bytes. Here: the record codec, the
 * record of a plan, the replay, opening the journal (missing or failed: writes
 * refused) and md's journal_mode. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/eng_int.h"
#include "fsvol/core/journal.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/ppl_int.h"
#include "fsvol/meta/sb.h"
#include "fsvol/util/crc32c.h"
#include "fsvol/util/log.h"
#include "fsvol/meta/rec.h"
#include "fsvol/util/le.h"

enum {
	JH_MAGIC = 0, JH_VERSION = 4, JH_CRC = 8, JH_BLOCKS = 12, JH_UUID = 16, JH_SEQ = 32, JH_STRIPE = 40,
	JH_PAYLOAD_CRC = 48, JH_NWRITES = 52, JH_WRITES = 64, JH_WRITE_SIZE = 24,
};
#define JNL_VERSION 1u
#define JNL_BLOCK 4096u

void jnl_rec_encode(const struct jnl_rec *r, uint8_t *buf)
{
	memset(buf, 0, JNL_BLOCK);
	put_le32(buf + JH_MAGIC, JNL_MAGIC);
	put_le32(buf + JH_VERSION, JNL_VERSION);
	put_le32(buf + JH_BLOCKS, r->blocks);
	memcpy(buf + JH_UUID, r->volume_uuid, 16);
	put_le64(buf + JH_SEQ, r->seq);
	put_le64(buf + JH_STRIPE, r->stripe);
	put_le32(buf + JH_PAYLOAD_CRC, r->payload_crc);
	put_le32(buf + JH_NWRITES, r->nwrites);
	for (unsigned i = 0; i < r->nwrites && i < JNL_MAX_WRITES; i++) {
		uint8_t *w = buf + JH_WRITES + JH_WRITE_SIZE * i;
		put_le32(w, r->w[i].slot);
		put_le64(w + 8, r->w[i].off);
		put_le64(w + 16, r->w[i].len);
	}
	rec_seal(buf, JNL_BLOCK);
}

int jnl_rec_decode(const uint8_t *buf, struct jnl_rec *r, char *err, size_t errlen)
{
	if (rec_check(buf, JNL_BLOCK, JNL_MAGIC, JNL_VERSION, err, errlen))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->blocks = get_le32(buf + JH_BLOCKS);
	memcpy(r->volume_uuid, buf + JH_UUID, 16);
	r->seq = get_le64(buf + JH_SEQ);
	r->stripe = get_le64(buf + JH_STRIPE);
	r->payload_crc = get_le32(buf + JH_PAYLOAD_CRC);
	r->nwrites = get_le32(buf + JH_NWRITES);
	if (!r->nwrites || r->nwrites > JNL_MAX_WRITES) {
		snprintf(err, errlen, "bad nwrites %u (must be 1..%u)", r->nwrites, JNL_MAX_WRITES);
		return -EINVAL;
	}
	uint64_t sum = 0;
	for (unsigned i = 0; i < r->nwrites; i++) {
		const uint8_t *w = buf + JH_WRITES + JH_WRITE_SIZE * i;
		r->w[i].slot = get_le32(w);
		r->w[i].off = get_le64(w + 8);
		r->w[i].len = get_le64(w + 16);
		if (r->w[i].slot >= SB_MAX_SLOTS || !r->w[i].len || r->w[i].len % JNL_BLOCK || r->w[i].off % JNL_BLOCK ||
		    r->w[i].len > (1ull << 40)) {
			snprintf(err, errlen, "bad write %u (slot %u, offset %llu, %llu bytes)", i, r->w[i].slot,
				 (unsigned long long)r->w[i].off, (unsigned long long)r->w[i].len);
			return -EINVAL;
		}
		sum += r->w[i].len;
	}
	if ((uint64_t)r->blocks != 1 + sum / JNL_BLOCK) {
		snprintf(err, errlen, "bad blocks %u for %llu payload bytes", r->blocks, (unsigned long long)sum);
		return -EINVAL;
	}
	return 0;
}

uint64_t jnl_plan_blocks(const struct layout_plan *p)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < p->nwrites; i++)
		sum += (p->writes[i].length + JNL_BLOCK - 1) / JNL_BLOCK;
	return 1 + sum;
}

int jnl_record(struct eng_req *rq, const struct eng_plan *pl, unsigned first)
{
	struct vol *v = rq->v;
	struct jnl_rec *r = eng_alloc(rq, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	uint64_t bytes = 0;
	for (unsigned i = first; i < rq->npieces; i++)
		if (rq->pieces[i].slot < v->geom.members) /* a replacement's copy is not the role's */
			bytes += rq->pieces[i].len;
	if (!bytes)
		return 0;
	uint8_t *buf = eng_alloc(rq, JNL_BLOCK + bytes);
	if (!buf)
		return -ENOMEM;
	uint8_t *at = buf + JNL_BLOCK;
	for (unsigned i = first; i < rq->npieces; i++) {
		struct eng_piece *p = &rq->pieces[i];
		if (p->slot >= v->geom.members)
			continue;
		if (r->nwrites == JNL_MAX_WRITES)
			return -EIO; /* cannot happen: a plan writes each column once */
		r->w[r->nwrites].slot = p->slot;
		r->w[r->nwrites].off = p->off;
		r->w[r->nwrites].len = p->len;
		r->nwrites++;
		memcpy(at, p->buf, p->len);
		p->buf = at; /* the member write goes from the journal's copy */
		at += p->len;
	}
	/* the replacement's copies follow their role's piece: point them at
	 * the copy too (same offset and length) */
	for (unsigned i = first; i < rq->npieces; i++) {
		struct eng_piece *p = &rq->pieces[i];
		if (p->slot < v->geom.members)
			continue;
		for (unsigned k = first; k < rq->npieces; k++)
			if (rq->pieces[k].slot < v->geom.members && rq->pieces[k].off == p->off &&
			    rq->pieces[k].len == p->len && rq->pieces[k].slot == (unsigned)atomic_load(&v->replace_slot))
				p->buf = rq->pieces[k].buf;
	}
	memcpy(r->volume_uuid, v->sb.volume_uuid, 16);
	r->stripe = pl->p.s.stripe;
	r->blocks = (uint32_t)(1 + bytes / JNL_BLOCK);
	r->payload_crc = crc32c(0, buf + JNL_BLOCK, bytes);
	r->seq = ppl_next_seq(v);
	jnl_rec_encode(r, buf);
	return ppl_hold_add(rq, ppl_journal_slot(v), r->blocks, buf);
}

/* ---- replay ---- */

struct jnl_found {
	struct jnl_rec *r;
	uint64_t block;          /* where its header is in the ring */
};

static int found_cmp(const void *a, const void *b)
{
	const struct jnl_found *x = a, *y = b;
	return x->r->seq < y->r->seq ? -1 : x->r->seq > y->r->seq;
}

/* A record's payload, which may wrap from the ring's end to its start. */
static int read_payload(struct member *m, uint64_t area, uint64_t nblocks, uint64_t hdr, uint64_t pb, uint8_t *buf)
{
	uint64_t first = (hdr + 1) % nblocks, n1 = nblocks - first < pb ? nblocks - first : pb;
	int r = member_pread(m, buf, n1 * JNL_BLOCK, area + first * JNL_BLOCK);
	if (!r && n1 < pb)
		r = member_pread(m, buf + n1 * JNL_BLOCK, (pb - n1) * JNL_BLOCK, area);
	return r;
}

#define JNL_SCAN (1u << 20) /* the ring is read in windows of this, never whole */

int jnl_replay(struct vol *v, unsigned jslot, uint64_t area, uint64_t nblocks, char *err, size_t errlen)
{
	uint64_t failed = atomic_load(&v->failed), maxp = 0;
	struct member *jm = v->slot[jslot];
	uint8_t *win = NULL, *payload = NULL;
	struct jnl_found *f = NULL;
	unsigned nf = 0, cap = 0, writes = 0, skipped = 0;
	int r = posix_memalign((void **)&win, JNL_BLOCK, JNL_SCAN) ? -ENOMEM : 0;
	/* 1. the complete records: header and payload checksums hold */
	for (uint64_t w = 0; !r && w < nblocks; w += JNL_SCAN / JNL_BLOCK) {
		uint64_t nb = nblocks - w < JNL_SCAN / JNL_BLOCK ? nblocks - w : JNL_SCAN / JNL_BLOCK;
		if ((r = member_pread(jm, win, nb * JNL_BLOCK, area + w * JNL_BLOCK)))
			break;
		for (uint64_t b = 0; !r && b < nb; b++) {
			struct jnl_rec rec;
			char why[128];
			if (jnl_rec_decode(win + b * JNL_BLOCK, &rec, why, sizeof(why)) ||
			    memcmp(rec.volume_uuid, v->sb.volume_uuid, 16) || rec.blocks > nblocks)
				continue;
			uint64_t pb = rec.blocks - 1;
			if (pb > maxp) {
				free(payload);
				maxp = 0;
				if (posix_memalign((void **)&payload, JNL_BLOCK, pb * JNL_BLOCK)) {
					payload = NULL;
					r = -ENOMEM;
					break;
				}
				maxp = pb;
			}
			if ((r = read_payload(jm, area, nblocks, w + b, pb, payload)))
				break;
			if (crc32c(0, payload, pb * JNL_BLOCK) != rec.payload_crc)
				continue; /* torn: its member writes were never issued */
			struct jnl_rec *keep = malloc(sizeof(*keep));
			if (nf == cap) {
				cap = cap ? 2 * cap : 64;
				struct jnl_found *nfp = realloc(f, cap * sizeof(*nfp));
				if (nfp)
					f = nfp;
				else
					cap = nf;
			}
			if (!keep || nf == cap) {
				free(keep);
				r = -ENOMEM;
				break;
			}
			*keep = rec;
			f[nf++] = (struct jnl_found){ keep, w + b };
		}
	}
	if (r)
		snprintf(err, errlen, "%s: reading the write journal: %s", jm->path, strerror(-r));
	/* only the last session's (as the PPL's: an earlier one ended consistent,
	 * and its records past the last session's head may be stale) */
	uint64_t last = 0;
	for (unsigned i = 0; i < nf; i++)
		last = PPL_SESSION(f[i].r->seq) > last ? PPL_SESSION(f[i].r->seq) : last;
	unsigned keep = 0;
	for (unsigned i = 0; i < nf; i++) {
		if (PPL_SESSION(f[i].r->seq) == last)
			f[keep++] = f[i];
		else
			free(f[i].r);
	}
	nf = keep;
	/* 2. written again, oldest first */
	if (!r && nf)
		qsort(f, nf, sizeof(*f), found_cmp);
	for (unsigned i = 0; !r && i < nf; i++) {
		uint64_t at = 0;
		if ((r = read_payload(jm, area, nblocks, f[i].block, f[i].r->blocks - 1, payload))) {
			snprintf(err, errlen, "%s: reading the write journal: %s", jm->path, strerror(-r));
			break;
		}
		for (unsigned k = 0; !r && k < f[i].r->nwrites; k++) {
			unsigned s = f[i].r->w[k].slot;
			uint64_t len = f[i].r->w[k].len, off = f[i].r->w[k].off;
			if (s < v->geom.members && v->slot[s] && !(failed & (1ull << s)) &&
			    off + len <= v->sb.slots[s].data_size) {
				if ((r = member_pwrite(v->slot[s], payload + at, len, v->data_offset + off)))
					snprintf(err, errlen, "%s: replaying the write journal: %s", v->slot[s]->path,
						 strerror(-r));
				writes++;
			} else {
				skipped++; /* a missing member: the record's parity stands for it */
			}
			at += len;
		}
	}
	for (unsigned m = 0; !r && m < v->geom.members; m++)
		if (v->slot[m] && !(failed & (1ull << m)))
			member_flush(v->slot[m]);
	if (!r)
		fsvol_log(LOG_NOTICE, "journal: not shut down cleanly: %u record%s replayed (%u member writes, %u for "
			  "missing members left to parity); no resync owed", nf, nf == 1 ? "" : "s", writes, skipped);
	for (unsigned i = 0; i < nf; i++)
		free(f[i].r);
	free(f);
	free(win);
	free(payload);
	return r < 0 ? r : (int)nf;
}

/* ---- open and mode ---- */

/* The write journal's ring: the journal member's data area. */
static int jnl_open(struct vol *v, char *err, size_t errlen)
{
	const struct sb *s = &v->sb;
	unsigned j = v->nslots;
	for (unsigned i = v->geom.members; i < v->nslots; i++)
		if (s->slots[i].flags & SB_SLOT_JOURNAL)
			j = i;
	if (j == v->nslots) {
		snprintf(err, errlen, "consistency policy journal, but no slot is the journal");
		return -EINVAL;
	}
	struct ppl_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	v->ppl = l;
	pthread_mutex_init(&l->lock, NULL);
	l->journal = 1;
	l->jslot = j;
	l->area = s->data_offset;
	l->nblocks = s->slots[j].data_size / PPL_BLOCK;
	l->seq = (s->events + 1) << 32;
	atomic_store(&l->write_back, v->opts.journal_write_back);
	atomic_store(&l->wb_seen, v->opts.journal_write_back);
	if (!(l->ring[j].q = calloc(l->nblocks, sizeof(*l->ring[j].q))))
		return -ENOMEM;
	if (!v->slot[j] || s->slots[j].state == SB_FAILED) {
		atomic_store(&l->dead, 1);
		if (!v->opts.readonly)
			fsvol_log(LOG_ERR, "journal: the write journal (slot %u) is %s: writes are refused (read-only), "
				  "as md does", j, v->slot[j] ? "failed" : "missing");
		if (v->was_dirty && !v->opts.readonly && !v->opts.force) {
			snprintf(err, errlen, "the write journal (slot %u) is %s and the volume was not shut down "
				 "cleanly: the writes it holds cannot be replayed; give the journal, or --force to start "
				 "without it (writes refused, a resync runs)", j, v->slot[j] ? "failed" : "missing");
			return -EINVAL;
		}
		return 0;
	}
	if (!v->was_dirty || v->opts.readonly)
		return 0;
	int r = jnl_kind.replay(v, j, l->area, l->nblocks, err, errlen);
	if (r < 0)
		return r;
	atomic_store(&l->replayed, (uint64_t)r);
	v->was_dirty = 0; /* every interrupted stripe write ended whole */
	return 0;
}

int vol_journal_mode(struct vol *v, const char *mode, char *err, size_t errlen)
{
	int wb = !strcmp(mode, "write-back");
	if (!wb && strcmp(mode, "write-through")) {
		snprintf(err, errlen, "journal_mode %s: give write-through or write-back", mode);
		return -EINVAL;
	}
	if (!v->ppl || !v->ppl->journal) {
		snprintf(err, errlen, "journal_mode: this volume has no write journal (create --write-journal PATH)");
		return -EINVAL;
	}
	if (wb)
		atomic_store(&v->ppl->wb_seen, 1);
	if (atomic_exchange(&v->ppl->write_back, wb) != wb)
		fsvol_log(LOG_NOTICE, "journal: mode %s", mode);
	return 0;
}

const struct ppl_kind jnl_kind = {
	.open = jnl_open,
	.plan_blocks = jnl_plan_blocks,
	.record = jnl_record,
	.replay = jnl_replay,
};
