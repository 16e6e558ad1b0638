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
#include "fsvol/core/meta_io.h"
#include "fsvol/core/journal.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/ppl_int.h"
#include "fsvol/core/volume.h"
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
#define JNL_MAX_LEN (1ull << 40)          /* one write's bytes, at most */
#define JNL_MAX_END ((uint64_t)INT64_MAX) /* a write's end, at most: member offsets are off_t */

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
		    r->w[i].len > JNL_MAX_LEN) {
			snprintf(err, errlen, "bad write %u (slot %u, offset %llu, %llu bytes)", i, r->w[i].slot,
				 (unsigned long long)r->w[i].off, (unsigned long long)r->w[i].len);
			return -EINVAL;
		}
		/* its end must be a member offset (an off_t): an end that wraps
		 * would land on the superblock at 0 */
		if (r->w[i].off > JNL_MAX_END - r->w[i].len) {
			snprintf(err, errlen, "bad write %u (slot %u, offset %llu + %llu bytes is past 2^63)", i,
				 r->w[i].slot, (unsigned long long)r->w[i].off, (unsigned long long)r->w[i].len);
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
static int read_payload(struct vol *v, struct member *m, uint64_t area, uint64_t nblocks, uint64_t hdr, uint64_t pb,
			uint8_t *buf)
{
	uint64_t first = (hdr + 1) % nblocks, n1 = nblocks - first < pb ? nblocks - first : pb;
	int r = vol_meta_io(v, m, MEMBER_READ, STATS_WHY_JOURNAL, buf, n1 * JNL_BLOCK, area + first * JNL_BLOCK);
	if (!r && n1 < pb)
		r = vol_meta_io(v, m, MEMBER_READ, STATS_WHY_JOURNAL, buf + n1 * JNL_BLOCK, (pb - n1) * JNL_BLOCK, area);
	return r;
}

#define JNL_SCAN (1u << 20) /* the ring is read in windows of this, never whole */

/* The replay's state: the ring, the records found, the payload buffer. */
struct jnl_scan {
	struct vol *v;
	struct member *jm;
	uint64_t area, nblocks;
	struct jnl_found *f;
	unsigned nf, cap, refused;
	uint8_t *payload;
	uint64_t maxp;           /* payload's blocks */
};

/* Does every write of a record lie in a role member's data area? A record
 * with good checksums may still be forged: refused whole (none of its writes
 * made), naming the journal, the record and the write. */
static int rec_fits(struct jnl_scan *sc, const struct jnl_rec *rec, uint64_t block)
{
	const struct vol *v = sc->v;
	for (unsigned k = 0; k < rec->nwrites; k++) {
		unsigned s = rec->w[k].slot;
		uint64_t off = rec->w[k].off, len = rec->w[k].len, ds = s < v->geom.members ? v->sb.slots[s].data_size : 0;
		if (s < v->geom.members && len <= ds && off <= ds - len)
			continue;
		char name[VOL_NAME_LEN] = "no role";
		if (s < v->geom.members)
			vol_slot_name(v, s, name);
		fsvol_log(LOG_ERR, "journal: %s: record at block %llu (seq %llu, stripe %llu) refused: its write %u "
			  "(%s, %s, offset %llu, %llu bytes) is outside %s; none of its writes made, a resync is owed",
			  sc->jm->path, (unsigned long long)block, (unsigned long long)rec->seq,
			  (unsigned long long)rec->stripe, k, name,
			  s < v->geom.members && v->slot[s] ? v->slot[s]->path : "no member",
			  (unsigned long long)off, (unsigned long long)len,
			  s < v->geom.members ? "the member's data area" : "the volume's members");
		sc->refused++;
		return 0;
	}
	return 1;
}

/* Read a record's payload into sc->payload (grown as needed). */
static int scan_payload(struct jnl_scan *sc, uint64_t hdr, uint64_t pb)
{
	if (pb > sc->maxp) {
		free(sc->payload);
		sc->maxp = 0;
		if (posix_memalign((void **)&sc->payload, JNL_BLOCK, pb * JNL_BLOCK)) {
			sc->payload = NULL;
			return -ENOMEM;
		}
		sc->maxp = pb;
	}
	return read_payload(sc->v, sc->jm, sc->area, sc->nblocks, hdr, pb, sc->payload);
}

/* The record whose header is at ring block b (hdr): kept when it is whole
 * (both checksums), this volume's and fits. 0, or -errno. */
static int scan_one(struct jnl_scan *sc, const uint8_t *hdr, uint64_t b)
{
	struct jnl_rec rec;
	char why[128];
	if (rec_check(hdr, JNL_BLOCK, JNL_MAGIC, JNL_VERSION, why, sizeof(why)))
		return 0; /* no record here */
	if (jnl_rec_decode(hdr, &rec, why, sizeof(why))) {
		/* whole (its checksum holds) yet impossible: forged or a bug */
		fsvol_log(LOG_ERR, "journal: %s: record at block %llu refused: %s; a resync is owed", sc->jm->path,
			  (unsigned long long)b, why);
		sc->refused++;
		return 0;
	}
	if (memcmp(rec.volume_uuid, sc->v->sb.volume_uuid, 16))
		return 0; /* another volume's */
	if (rec.blocks > sc->nblocks) {
		fsvol_log(LOG_ERR, "journal: %s: record at block %llu (seq %llu) refused: %u blocks, the ring has %llu; "
			  "a resync is owed", sc->jm->path, (unsigned long long)b, (unsigned long long)rec.seq, rec.blocks,
			  (unsigned long long)sc->nblocks);
		sc->refused++;
		return 0;
	}
	int r = scan_payload(sc, b, rec.blocks - 1);
	if (r)
		return r;
	if (crc32c(0, sc->payload, (rec.blocks - 1) * JNL_BLOCK) != rec.payload_crc)
		return 0; /* torn: its member writes were never issued */
	if (!rec_fits(sc, &rec, b))
		return 0;
	if (sc->nf == sc->cap) {
		unsigned cap = sc->cap ? 2 * sc->cap : 64;
		struct jnl_found *nfp = realloc(sc->f, cap * sizeof(*nfp));
		if (!nfp)
			return -ENOMEM;
		sc->f = nfp;
		sc->cap = cap;
	}
	struct jnl_rec *keep = malloc(sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	*keep = rec;
	sc->f[sc->nf++] = (struct jnl_found){ keep, b };
	return 0;
}

/* 1. the complete records: header and payload checksums hold */
static int scan_ring(struct jnl_scan *sc)
{
	uint8_t *win = NULL;
	int r = posix_memalign((void **)&win, JNL_BLOCK, JNL_SCAN) ? -ENOMEM : 0;
	for (uint64_t w = 0; !r && w < sc->nblocks; w += JNL_SCAN / JNL_BLOCK) {
		uint64_t nb = sc->nblocks - w < JNL_SCAN / JNL_BLOCK ? sc->nblocks - w : JNL_SCAN / JNL_BLOCK;
		r = vol_meta_io(sc->v, sc->jm, MEMBER_READ, STATS_WHY_JOURNAL, win, nb * JNL_BLOCK, sc->area + w * JNL_BLOCK);
		for (uint64_t b = 0; !r && b < nb; b++)
			r = scan_one(sc, win + b * JNL_BLOCK, w + b);
	}
	free(win);
	return r;
}

/* 2. written again, oldest first (those of the last session) */
static int write_records(struct jnl_scan *sc, unsigned *writes, unsigned *skipped, char *err, size_t errlen)
{
	struct vol *v = sc->v;
	uint64_t failed = atomic_load(&v->failed);
	int r = 0;
	for (unsigned i = 0; !r && i < sc->nf; i++) {
		const struct jnl_rec *rec = sc->f[i].r;
		uint64_t at = 0;
		if ((r = read_payload(v, sc->jm, sc->area, sc->nblocks, sc->f[i].block, rec->blocks - 1, sc->payload))) {
			snprintf(err, errlen, "%s: reading the write journal: %s", sc->jm->path, strerror(-r));
			break;
		}
		for (unsigned k = 0; !r && k < rec->nwrites; k++) {
			unsigned s = rec->w[k].slot; /* < members, in its data area: rec_fits */
			uint64_t len = rec->w[k].len, off = rec->w[k].off;
			if (v->slot[s] && !(failed & (1ull << s))) {
				if ((r = vol_meta_io(v, v->slot[s], MEMBER_WRITE, STATS_WHY_JOURNAL, sc->payload + at, len,
						     v->data_offset + off)))
					snprintf(err, errlen, "%s: replaying the write journal: %s", v->slot[s]->path,
						 strerror(-r));
				(*writes)++;
			} else {
				(*skipped)++; /* a missing member: the record's parity stands for it */
			}
			at += len;
		}
	}
	for (unsigned m = 0; !r && m < v->geom.members; m++)
		if (v->slot[m] && !(failed & (1ull << m)))
			member_flush(v->slot[m]);
	return r;
}

/* The replay; *refused: records refused (forged: a resync is owed). */
static int replay(struct vol *v, unsigned jslot, uint64_t area, uint64_t nblocks, unsigned *refused, char *err,
		  size_t errlen)
{
	struct jnl_scan sc = { .v = v, .jm = v->slot[jslot], .area = area, .nblocks = nblocks };
	unsigned writes = 0, skipped = 0;
	int r = scan_ring(&sc);
	if (r)
		snprintf(err, errlen, "%s: reading the write journal: %s", sc.jm->path, strerror(-r));
	/* only the last session's (as the PPL's: an earlier one ended consistent,
	 * and its records past the last session's head may be stale) */
	uint64_t last = 0;
	for (unsigned i = 0; i < sc.nf; i++)
		last = PPL_SESSION(sc.f[i].r->seq) > last ? PPL_SESSION(sc.f[i].r->seq) : last;
	unsigned keep = 0;
	for (unsigned i = 0; i < sc.nf; i++) {
		if (PPL_SESSION(sc.f[i].r->seq) == last)
			sc.f[keep++] = sc.f[i];
		else
			free(sc.f[i].r);
	}
	sc.nf = keep;
	if (!r && sc.nf)
		qsort(sc.f, sc.nf, sizeof(*sc.f), found_cmp);
	if (!r)
		r = write_records(&sc, &writes, &skipped, err, errlen);
	if (!r)
		fsvol_log(LOG_NOTICE, "journal: not shut down cleanly: %u record%s replayed (%u member writes, %u for "
			  "missing members left to parity)%s%s", sc.nf, sc.nf == 1 ? "" : "s", writes, skipped,
			  sc.refused ? ", forged records refused" : "", sc.refused ? "" : "; no resync owed");
	for (unsigned i = 0; i < sc.nf; i++)
		free(sc.f[i].r);
	free(sc.f);
	free(sc.payload);
	*refused = sc.refused;
	return r < 0 ? r : (int)sc.nf;
}

int jnl_replay(struct vol *v, unsigned jslot, uint64_t area, uint64_t nblocks, char *err, size_t errlen)
{
	unsigned refused;
	return replay(v, jslot, area, nblocks, &refused, err, errlen);
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
	unsigned refused;
	int r = replay(v, j, l->area, l->nblocks, &refused, err, errlen);
	if (r < 0)
		return r;
	atomic_store(&l->replayed, (uint64_t)r);
	if (!refused)
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
