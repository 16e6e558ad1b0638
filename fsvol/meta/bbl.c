/* bbl: the bad-block list's arithmetic and its on-disk copies (bbl.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "fsvol/meta/bbl.h"
#include "fsvol/util/crc32c.h"
#include "fsvol/util/le.h"

/* A run of sectors while a list is rebuilt: [start, end), not yet cut. */
struct run {
	uint64_t start, end;
	uint8_t ack;
};

void bbl_init(struct bbl *l)
{
	l->seq = 0;
	l->n = 0;
}

/* Entries a run becomes: pieces of at most BBL_MAX_LEN. */
static uint64_t run_entries(const struct run *r)
{
	return (r->end - r->start + BBL_MAX_LEN - 1) / BBL_MAX_LEN;
}

/* Sorted runs -> merged (overlapping or touching) -> cut into l. 0, or
 * -ENOSPC with l unchanged. */
static int runs_store(struct bbl *l, struct run *r, unsigned n)
{
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++) {
		if (r[i].start >= r[i].end)
			continue;
		if (m && r[i].start <= r[m - 1].end) {
			if (r[i].end > r[m - 1].end)
				r[m - 1].end = r[i].end;
			r[m - 1].ack &= r[i].ack;
			continue;
		}
		r[m++] = r[i];
	}
	uint64_t need = 0;
	for (unsigned i = 0; i < m; i++)
		need += run_entries(&r[i]);
	if (need > BBL_MAX)
		return -ENOSPC;
	unsigned k = 0;
	for (unsigned i = 0; i < m; i++)
		for (uint64_t s = r[i].start; s < r[i].end; s += BBL_MAX_LEN) {
			uint64_t len = r[i].end - s < BBL_MAX_LEN ? r[i].end - s : BBL_MAX_LEN;
			l->e[k++] = (struct bbl_entry){ .start = s, .len = (uint32_t)len, .ack = r[i].ack };
		}
	l->n = k;
	return 0;
}

int bbl_add(struct bbl *l, uint64_t start, uint64_t len, int ack)
{
	if (!len || start > BBL_MAX_SECTOR || len > BBL_MAX_SECTOR + 1 - start)
		return -EINVAL;
	struct run r[BBL_MAX + 1];
	unsigned n = 0, placed = 0;
	for (unsigned i = 0; i < l->n; i++) {
		if (!placed && start < l->e[i].start) {
			r[n++] = (struct run){ start, start + len, (uint8_t)!!ack };
			placed = 1;
		}
		r[n++] = (struct run){ l->e[i].start, l->e[i].start + l->e[i].len, l->e[i].ack };
	}
	if (!placed)
		r[n++] = (struct run){ start, start + len, (uint8_t)!!ack };
	return runs_store(l, r, n);
}

int bbl_clear(struct bbl *l, uint64_t start, uint64_t len)
{
	uint64_t end = start + len;
	struct run r[BBL_MAX + 1];
	unsigned n = 0;
	if (end < start)
		end = UINT64_MAX;
	for (unsigned i = 0; i < l->n; i++) {
		uint64_t a = l->e[i].start, b = a + l->e[i].len;
		uint8_t ack = l->e[i].ack;
		if (b <= start || a >= end) {
			r[n++] = (struct run){ a, b, ack };
			continue;
		}
		/* the parts outside [start, end); a clear splits at most one entry */
		if (a < start)
			r[n++] = (struct run){ a, start, ack };
		if (b > end && n < BBL_MAX + 1)
			r[n++] = (struct run){ end, b, ack };
	}
	return runs_store(l, r, n);
}

int bbl_overlaps(const struct bbl *l, uint64_t start, uint64_t len)
{
	uint64_t end = start + len;
	/* the first entry ending past start (entries are sorted, disjoint) */
	unsigned lo = 0, hi = l->n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (l->e[mid].start + l->e[mid].len <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->e[lo].start < end;
}

uint64_t bbl_sectors(const struct bbl *l)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < l->n; i++)
		s += l->e[i].len;
	return s;
}

void bbl_ack_all(struct bbl *l)
{
	for (unsigned i = 0; i < l->n; i++)
		l->e[i].ack = 1;
}

/* Header: 0 magic, 4 version, 8 crc, 12 count, 16 seq, 24 reserved (zero). */
enum { OFF_MAGIC = 0, OFF_VERSION = 4, OFF_CRC = 8, OFF_COUNT = 12, OFF_SEQ = 16 };

static uint32_t copy_crc(const uint8_t *buf)
{
	static const uint8_t zero[4];
	uint32_t c = crc32c(0, buf, OFF_CRC);
	c = crc32c(c, zero, 4);
	return crc32c(c, buf + OFF_CRC + 4, BBL_COPY - OFF_CRC - 4);
}

void bbl_encode(const struct bbl *l, uint64_t seq, uint8_t *buf)
{
	memset(buf, 0, BBL_COPY);
	put_le32(buf + OFF_MAGIC, BBL_MAGIC);
	put_le32(buf + OFF_VERSION, BBL_VERSION);
	put_le32(buf + OFF_COUNT, l->n);
	put_le64(buf + OFF_SEQ, seq);
	for (unsigned i = 0; i < l->n; i++) {
		const struct bbl_entry *e = &l->e[i];
		put_le64(buf + BBL_HEADER + 8 * i,
			 (uint64_t)e->ack << 63 | (e->start & BBL_MAX_SECTOR) << 9 | (uint64_t)(e->len - 1));
	}
	put_le32(buf + OFF_CRC, copy_crc(buf));
}

static int refuse(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

int bbl_decode(const uint8_t *buf, struct bbl *l, char *err, size_t errlen)
{
	size_t i;
	for (i = 0; i < BBL_COPY && !buf[i]; i++)
		;
	if (i == BBL_COPY) {
		bbl_init(l);
		return 1;
	}
	uint32_t magic = get_le32(buf + OFF_MAGIC), crc = get_le32(buf + OFF_CRC), calc = copy_crc(buf);
	if (magic != BBL_MAGIC) {
		snprintf(err, errlen, "bad magic 0x%08" PRIx32, magic);
		return -EINVAL;
	}
	if (get_le32(buf + OFF_VERSION) != BBL_VERSION) {
		snprintf(err, errlen, "unsupported version %" PRIu32, get_le32(buf + OFF_VERSION));
		return -EINVAL;
	}
	if (crc != calc) {
		snprintf(err, errlen, "checksum mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", crc, calc);
		return -EINVAL;
	}
	uint32_t n = get_le32(buf + OFF_COUNT);
	if (n > BBL_MAX) {
		snprintf(err, errlen, "bad count %" PRIu32 " (at most %u)", n, BBL_MAX);
		return -EINVAL;
	}
	for (i = 24; i < BBL_HEADER; i++)
		if (buf[i])
			return refuse(err, errlen, "reserved header bytes not zero");
	uint64_t prev_end = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t w = get_le64(buf + BBL_HEADER + 8 * k);
		struct bbl_entry e = { .start = (w >> 9) & BBL_MAX_SECTOR, .len = (uint32_t)(w & 511) + 1,
				       .ack = (uint8_t)(w >> 63) };
		if (k && e.start < prev_end) {
			snprintf(err, errlen, "entry %" PRIu32 " (sector %" PRIu64 ") out of order or overlapping", k, e.start);
			return -EINVAL;
		}
		if (e.start + e.len > BBL_MAX_SECTOR + 1) {
			snprintf(err, errlen, "entry %" PRIu32 " past the last sector", k);
			return -EINVAL;
		}
		prev_end = e.start + e.len;
		l->e[k] = e;
	}
	for (i = BBL_HEADER + 8 * (size_t)n; i < BBL_COPY; i++)
		if (buf[i])
			return refuse(err, errlen, "bytes past the last entry not zero");
	l->n = n;
	l->seq = get_le64(buf + OFF_SEQ);
	return 0;
}

int bbl_area_decode(const uint8_t *area, struct bbl *l, char *err, size_t errlen)
{
	char why[2][128];
	struct bbl t; /* copy 1, kept when newer than copy 0 */
	int r0 = bbl_decode(area, l, why[0], sizeof(why[0]));
	int r1 = bbl_decode(area + BBL_COPY, &t, why[1], sizeof(why[1]));
	if (r1 == 0 && (r0 != 0 || t.seq > l->seq)) {
		memcpy(l, &t, sizeof(*l));
		return 0;
	}
	if (r0 == 0)
		return 0;
	if (r0 == 1 && r1 == 1) {
		bbl_init(l);
		return 0;
	}
	snprintf(err, errlen, "no valid copy of the bad-block list (copy 0: %s; copy 1: %s)",
		 r0 == 1 ? "blank" : why[0], r1 == 1 ? "blank" : why[1]);
	return -EINVAL;
}

void bbl_dump(FILE *f, const struct bbl *l, const char *path)
{
	fprintf(f, "Bad-blocks on %s:\n", path);
	for (unsigned i = 0; i < l->n; i++)
		fprintf(f, "%20" PRIu64 " for %" PRIu32 " sectors%s\n", l->e[i].start, l->e[i].len,
			l->e[i].ack ? "" : " (not yet acknowledged)");
}
