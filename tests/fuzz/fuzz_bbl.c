/* fuzz_bbl: bad-block list areas as read off members, through bbl_area_decode.
 *
 *   byte 0: bit 0   give copy 0 a good magic, version and CRC32C first
 *           bit 1   the same for copy 1
 *   then BBL_AREA bytes (short input padded with zeros).
 *
 * Properties: a decoded list is sorted, disjoint, within bounds, encodes and
 * decodes to itself; every refusal says why; adding and clearing its own
 * entries keeps the invariants. */
#include <errno.h>

#include "fsvol/meta/bbl.h"
#include "fsvol/util/crc32c.h"
#include "tests/fuzz/fuzz.h"

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Header offsets as docs/format.md, "Bad-block list", pins them. */
static void fix_copy(uint8_t *b)
{
	static const uint8_t zero[4];
	put_le32(b + 0, BBL_MAGIC);
	put_le32(b + 4, BBL_VERSION);
	uint32_t c = crc32c(0, b, 8);
	c = crc32c(c, zero, 4);
	c = crc32c(c, b + 12, BBL_COPY - 12);
	put_le32(b + 8, c);
}

static void check(const struct bbl *l)
{
	FUZZ_ASSERT(l->n <= BBL_MAX);
	for (unsigned i = 0; i < l->n; i++) {
		FUZZ_ASSERT(l->e[i].len >= 1 && l->e[i].len <= BBL_MAX_LEN);
		FUZZ_ASSERT(l->e[i].start + l->e[i].len <= BBL_MAX_SECTOR + 1);
		if (i)
			FUZZ_ASSERT(l->e[i].start >= l->e[i - 1].start + l->e[i - 1].len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t area[BBL_AREA], again[BBL_COPY];
	static struct bbl l, twice;
	char err[512];
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	data++, size--;
	memset(area, 0, sizeof(area));
	memcpy(area, data, size < BBL_AREA ? size : BBL_AREA);
	if (flags & 1)
		fix_copy(area);
	if (flags & 2)
		fix_copy(area + BBL_COPY);
	err[0] = 0;
	int r = bbl_area_decode(area, &l, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == -EINVAL);
	if (r) {
		FUZZ_ASSERT(err[0] != 0);
		return 0;
	}
	check(&l);
	bbl_dump(fuzz_null(), &l, "member");
	bbl_encode(&l, l.seq, again);
	FUZZ_ASSERT(bbl_decode(again, &twice, err, sizeof(err)) == 0);
	FUZZ_ASSERT(twice.n == l.n && twice.seq == l.seq);
	FUZZ_ASSERT(!memcmp(twice.e, l.e, l.n * sizeof(l.e[0])));
	/* the list's own arithmetic keeps its invariants */
	for (unsigned i = 0; i < l.n && i < 8; i++) {
		int a = bbl_add(&twice, l.e[i].start + l.e[i].len, 1 + (flags >> 4), 0);
		FUZZ_ASSERT(a == 0 || a == -ENOSPC || a == -EINVAL);
		check(&twice);
		a = bbl_clear(&twice, l.e[i].start, 1 + (flags >> 2));
		FUZZ_ASSERT(a == 0 || a == -ENOSPC);
		check(&twice);
	}
	return 0;
}
