/* fuzz_sb: superblocks as read off members, through sb_decode and assembly.
 *
 *   byte 0: bit 0   give each block a good magic, version, header size and
 *                   CRC32C first (else random bytes rarely pass the checksum)
 *           bit 1   assemble with force
 *           bits 2-3  candidates - 1 (1..4)
 *           bit 4   the last candidate is the same file as the first
 *           bit 5   members are small (1 MiB + 64 KiB) instead of 1 TiB
 *   then one SB_SIZE block per candidate (short ones padded with zeros).
 *
 * Properties: a decoded superblock encodes and decodes to itself; every
 * refusal says why; an assembly only uses candidates that decoded, each
 * slot at most once. */
#include <errno.h>

#include "fsvol/meta/sb.h"
#include "fsvol/util/crc32c.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_CAND 4

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Offsets as docs/format.md pins them (sb.c asserts the same). */
static void fix_header(uint8_t *b)
{
	static const uint8_t zero[4];
	put_le32(b + 0, SB_MAGIC);
	put_le32(b + 4, SB_VERSION);
	put_le32(b + 12, 256); /* header size: where the slot table starts */
	b[144 + 31] = 0;       /* the name is NUL-terminated */
	uint32_t c = crc32c(0, b, 8);
	c = crc32c(c, zero, 4);
	c = crc32c(c, b + 12, SB_SIZE - 12);
	put_le32(b + 8, c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t blk[FUZZ_CAND][SB_SIZE], again[SB_SIZE];
	static struct sb_candidate c[FUZZ_CAND];
	static struct sb twice;
	static struct sb_assembly as;
	char err[512];
	if (size < 1)
		return 0;
	unsigned flags = data[0], n = ((flags >> 2) & 3) + 1;
	data++, size--;
	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < n; i++) {
		size_t off = (size_t)i * SB_SIZE, len = off < size ? size - off : 0;
		if (len > SB_SIZE)
			len = SB_SIZE;
		memset(blk[i], 0, SB_SIZE);
		memcpy(blk[i], data + (len ? off : 0), len);
		if (flags & 1)
			fix_header(blk[i]);
		c[i].path = "member";
		c[i].size = flags & 32 ? (1u << 20) + (64u << 10) : 1ull << 40;
		c[i].dev = 1;
		c[i].ino = i + 1;
		err[0] = 0;
		int r = sb_decode(blk[i], SB_SIZE, &c[i].sb, err, sizeof(err));
		FUZZ_ASSERT(r == 0 || r == -EINVAL);
		if (r) {
			FUZZ_ASSERT(err[0] != 0);
			c[i].decode_error = r;
			snprintf(c[i].why, sizeof(c[i].why), "%s", err);
			continue;
		}
		sb_dump(fuzz_null(), &c[i].sb, "member");
		sb_encode(&c[i].sb, again);
		FUZZ_ASSERT(sb_decode(again, SB_SIZE, &twice, err, sizeof(err)) == 0);
		/* the stored CRC also covers reserved bytes, which no field keeps;
		 * the name is kept up to its NUL, not the bytes after it */
		twice.checksum = c[i].sb.checksum;
		/* an older version is read, then written as the current one */
		FUZZ_ASSERT(twice.version == SB_VERSION);
		twice.version = c[i].sb.version;
		FUZZ_ASSERT(strcmp(twice.name, c[i].sb.name) == 0);
		memcpy(twice.name, c[i].sb.name, sizeof(twice.name));
		if (memcmp(&twice, &c[i].sb, sizeof(twice))) {
			sb_dump(stderr, &c[i].sb, "decoded");
			sb_dump(stderr, &twice, "encoded and decoded again");
			FUZZ_ASSERT(!"a decoded superblock encodes to itself");
		}
	}
	/* the short form is refused, never read past */
	FUZZ_ASSERT(sb_decode(blk[0], SB_SIZE - 1, &twice, err, sizeof(err)) == -EINVAL);
	if (n > 1 && (flags & 16))
		c[n - 1].ino = c[0].ino;
	err[0] = 0;
	int r = sb_assemble(c, n, !!(flags & 2), &as, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == -EINVAL);
	if (r) {
		FUZZ_ASSERT(err[0] != 0);
		return 0;
	}
	FUZZ_ASSERT(as.sb.members + as.sb.spares <= SB_MAX_SLOTS);
	for (unsigned s = 0; s < SB_MAX_SLOTS; s++) {
		int k = as.slot_of[s];
		FUZZ_ASSERT(k >= -1 && k < (int)n);
		if (k < 0)
			continue;
		FUZZ_ASSERT(!c[k].decode_error && c[k].used);
		for (unsigned t = s + 1; t < SB_MAX_SLOTS; t++)
			FUZZ_ASSERT(as.slot_of[t] != k);
	}
	return 0;
}
