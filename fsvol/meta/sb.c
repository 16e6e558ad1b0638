/* sb: superblock encode/decode/dump and UUIDs (format: docs/format.md). */
#include "fsvol/meta/sb.h"
#include "fsvol/meta/sb_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "layout/layout.h"
#include "fsvol/util/crc32c.h"
#include "fsvol/util/le.h"

/* Byte offsets of the fixed header (versions 1 to 5); docs/format.md has the table. */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_CSUM = 8,
	OFF_HDR_SIZE = 12,
	OFF_VOLUME_UUID = 16,
	OFF_CTIME = 32,
	OFF_UTIME = 40,
	OFF_LEVEL = 48,
	OFF_LAYOUT = 52,
	OFF_COPIES = 56,
	OFF_MEMBERS = 60,
	OFF_CHUNK = 64,
	OFF_SPARES = 72,
	OFF_INDEX = 76,
	OFF_DATA_OFFSET = 80,
	OFF_VOLUME_SIZE = 88,
	OFF_MEMBER_UUID = 96,
	OFF_EVENTS = 112,
	OFF_CLEAN = 120,
	OFF_FEATURES = 124, /* version 5 */
	OFF_BITMAP_OFFSET = 128,
	OFF_BITMAP_CHUNK = 136,
	OFF_NAME = 144,
	OFF_CONSISTENCY = 176, /* version 3 from here */
	OFF_WRITE_BEHIND = 180,
	OFF_PPL_OFFSET = 184,
	OFF_PPL_SIZE = 192,
	OFF_RESHAPE_FLAGS = 196,
	OFF_RESHAPE_POS = 200,
	OFF_NEW_LEVEL = 208,
	OFF_NEW_LAYOUT = 212,
	OFF_NEW_CHUNK = 216,
	OFF_NEW_MEMBERS = 224,
	OFF_NEW_COPIES = 228,
	OFF_RESHAPE_BACKUP = 232,
	OFF_BBL_OFFSET = 240,
	OFF_BBL_SIZE = 248,
	OFF_SLOTS = 256, /* slot table: SB_MAX_SLOTS entries of SLOT_SIZE bytes */
	SLOT_SIZE = 48,
	SLOT_STATE = 0,
	SLOT_FLAGS = 1,
	SLOT_NUMBER = 2,
	SLOT_REPLACES = 4, /* version 4 */
	SLOT_UUID = 8,
	SLOT_DATA_SIZE = 24,
	SLOT_REBUILD_POS = 32,
};

_Static_assert(OFF_SLOTS + SB_MAX_SLOTS * SLOT_SIZE <= SB_SIZE, "slot table overflows the superblock");
_Static_assert(OFF_NAME + 32 <= OFF_SLOTS, "name overlaps the slot table");

/* CRC of the whole block with the checksum field read as zero. */
static uint32_t block_crc(const uint8_t *buf)
{
	static const uint8_t zero[4];
	uint32_t c = crc32c(0, buf, OFF_CSUM);

	c = crc32c(c, zero, 4);
	return crc32c(c, buf + OFF_CSUM + 4, SB_SIZE - OFF_CSUM - 4);
}

/* ---- encode / decode ------------------------------------------------- */

void sb_encode(const struct sb *s, uint8_t *buf)
{
	size_t nlen = strnlen(s->name, sizeof(s->name) - 1); /* always leave a NUL */

	memset(buf, 0, SB_SIZE);
	put_le32(buf + OFF_MAGIC, SB_MAGIC);
	put_le32(buf + OFF_VERSION, SB_VERSION);
	put_le32(buf + OFF_HDR_SIZE, OFF_SLOTS);
	memcpy(buf + OFF_VOLUME_UUID, s->volume_uuid, 16);
	put_le64(buf + OFF_CTIME, s->ctime);
	put_le64(buf + OFF_UTIME, s->utime);
	put_le32(buf + OFF_LEVEL, s->level);
	put_le32(buf + OFF_LAYOUT, s->layout);
	put_le32(buf + OFF_COPIES, s->copies);
	put_le32(buf + OFF_MEMBERS, s->members);
	put_le64(buf + OFF_CHUNK, s->chunk);
	put_le32(buf + OFF_SPARES, s->spares);
	put_le32(buf + OFF_INDEX, s->index);
	put_le64(buf + OFF_DATA_OFFSET, s->data_offset);
	put_le64(buf + OFF_VOLUME_SIZE, s->volume_size);
	memcpy(buf + OFF_MEMBER_UUID, s->member_uuid, 16);
	put_le64(buf + OFF_EVENTS, s->events);
	put_le32(buf + OFF_CLEAN, s->clean);
	put_le32(buf + OFF_FEATURES, s->features);
	put_le64(buf + OFF_BITMAP_OFFSET, s->bitmap_offset);
	put_le64(buf + OFF_BITMAP_CHUNK, s->bitmap_chunk);
	memcpy(buf + OFF_NAME, s->name, nlen);
	put_le32(buf + OFF_CONSISTENCY, s->consistency);
	put_le32(buf + OFF_WRITE_BEHIND, s->write_behind);
	put_le64(buf + OFF_PPL_OFFSET, s->ppl_offset);
	put_le32(buf + OFF_PPL_SIZE, s->ppl_size);
	put_le32(buf + OFF_RESHAPE_FLAGS, s->reshape_flags);
	put_le64(buf + OFF_RESHAPE_POS, s->reshape_pos);
	put_le32(buf + OFF_NEW_LEVEL, s->new_level);
	put_le32(buf + OFF_NEW_LAYOUT, s->new_layout);
	put_le64(buf + OFF_NEW_CHUNK, s->new_chunk);
	put_le32(buf + OFF_NEW_MEMBERS, s->new_members);
	put_le32(buf + OFF_NEW_COPIES, s->new_copies);
	put_le64(buf + OFF_RESHAPE_BACKUP, s->reshape_backup);
	put_le64(buf + OFF_BBL_OFFSET, s->bbl_offset);
	put_le32(buf + OFF_BBL_SIZE, s->bbl_size);
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		uint8_t *e = buf + OFF_SLOTS + i * SLOT_SIZE;
		const struct sb_slot *sl = &s->slots[i];

		e[SLOT_STATE] = sl->state;
		e[SLOT_FLAGS] = sl->flags;
		put_le16(e + SLOT_NUMBER, sl->number);
		put_le16(e + SLOT_REPLACES, sl->replaces);
		memcpy(e + SLOT_UUID, sl->uuid, 16);
		put_le64(e + SLOT_DATA_SIZE, sl->data_size);
		put_le64(e + SLOT_REBUILD_POS, sl->rebuild_pos);
	}
	put_le32(buf + OFF_CSUM, block_crc(buf));
}

int sb_refuse(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int uuid_is_nil(const uint8_t u[16])
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

/* An area of the metadata zone [4096, data_offset): 0 (none) or 4K-aligned inside it. */
static int check_area(const struct sb *s, const char *what, uint64_t off, uint64_t size, char *err,
		      size_t errlen)
{
	if (!off && !size)
		return 0;
	if (off < SB_SIZE || off % 4096 || !size || size % 4096 || off >= s->data_offset ||
	    size > s->data_offset - off)
		return sb_refuse(err, errlen,
				 "bad %s area (offset %" PRIu64 ", %" PRIu64 " bytes: must be 4K-aligned in [%u, data_offset %" PRIu64 "))",
				 what, off, size, SB_SIZE, s->data_offset);
	return 0;
}

/* The version-3 fields (md features). */
static int check_v3_fields(const struct sb *s, char *err, size_t errlen)
{
	int r;

	if (s->consistency > SB_CONS_JOURNAL)
		return sb_refuse(err, errlen, "bad consistency %" PRIu32 " (must be 0..%d)", s->consistency, SB_CONS_JOURNAL);
	if (s->write_behind > 16383)
		return sb_refuse(err, errlen, "bad write_behind %" PRIu32 " (must be 0..16383)", s->write_behind);
	if ((r = check_area(s, "ppl", s->ppl_offset, s->ppl_size, err, errlen)) ||
	    (r = check_area(s, "bad-block list", s->bbl_offset, s->bbl_size, err, errlen)))
		return r;
	if (s->reshape_flags & ~SB_RESHAPE_ACTIVE)
		return sb_refuse(err, errlen, "bad reshape_flags 0x%" PRIx32 " (unknown bits)", s->reshape_flags);
	if (s->reshape_flags & SB_RESHAPE_ACTIVE) {
		if (s->new_level > LAYOUT_RAID6)
			return sb_refuse(err, errlen, "bad new_level %" PRIu32 " (must be 0..%d)", s->new_level, LAYOUT_RAID6);
		if (s->new_members == 0 || s->new_members > SB_MAX_SLOTS)
			return sb_refuse(err, errlen, "bad new_members %" PRIu32 " (must be 1..%d)", s->new_members, SB_MAX_SLOTS);
		if (!is_pow2(s->new_chunk) || s->new_chunk < LAYOUT_MIN_CHUNK || s->new_chunk > LAYOUT_MAX_CHUNK)
			return sb_refuse(err, errlen, "bad new_chunk %" PRIu64 " (must be a power of two in %u..%u)",
					 s->new_chunk, LAYOUT_MIN_CHUNK, LAYOUT_MAX_CHUNK);
		if (s->new_copies == 0 || s->new_copies > s->new_members)
			return sb_refuse(err, errlen, "bad new_copies %" PRIu32 " (must be 1..new_members = %" PRIu32 ")",
					 s->new_copies, s->new_members);
	}
	return 0;
}

/* Device Numbers (md's): unique among the used slots and below SB_MAX_SLOTS
 * (the lowest free one is given, so at most 64 are ever taken). A used slot
 * without one (SB_NO_NUMBER) is let through: assembly gives it one. */
static int check_numbers(const struct sb *s, char *err, size_t errlen)
{
	int owner[SB_MAX_SLOTS];
	for (unsigned n = 0; n < SB_MAX_SLOTS; n++)
		owner[n] = -1;
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		const struct sb_slot *sl = &s->slots[i];
		if (sl->state == SB_EMPTY || sl->number == SB_NO_NUMBER)
			continue;
		if (sl->number >= SB_MAX_SLOTS)
			return sb_refuse(err, errlen, "bad slots[%u].number %u (must be < %d)", i, sl->number,
					 SB_MAX_SLOTS);
		int j = owner[sl->number];
		if (j >= 0) {
			char u1[37], u2[37];
			sb_uuid_format(s->slots[j].uuid, u1);
			sb_uuid_format(sl->uuid, u2);
			return sb_refuse(err, errlen, "bad slots[%d] and slots[%u]: both record Number %u (members %s and %s)",
					 j, i, sl->number, u1, u2);
		}
		owner[sl->number] = (int)i;
	}
	return 0;
}

/* A replace in progress (version 4, md's Replacement): one spare at most,
 * built for a raid role; a slot that is none has replaces 0. */
static int check_replacement(const struct sb *s, char *err, size_t errlen)
{
	int seen = -1;
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		const struct sb_slot *sl = &s->slots[i];
		if (!(sl->flags & SB_SLOT_REPLACEMENT)) {
			if (sl->replaces)
				return sb_refuse(err, errlen, "bad slots[%u].replaces %u (not a replacement)", i,
						 sl->replaces);
			continue;
		}
		if (i < s->members || sl->state != SB_SPARE)
			return sb_refuse(err, errlen, "bad slots[%u]: a replacement must be a spare beyond the %" PRIu32
					 " raid slots (state %s)", i, s->members, sb_state_name(sl->state));
		if (sl->replaces >= s->members)
			return sb_refuse(err, errlen, "bad slots[%u].replaces %u (must be < members = %" PRIu32 ")", i,
					 sl->replaces, s->members);
		if (seen >= 0)
			return sb_refuse(err, errlen, "bad slots[%d] and slots[%u]: both are replacements (one at a time)",
					 seen, i);
		seen = (int)i;
	}
	return 0;
}

/* Field sanity after a good checksum: a sane-looking block that lies would
 * otherwise drive the engine (e.g. index used as an array subscript). */
static int check_fields(const struct sb *s, char *err, size_t errlen)
{
	uint64_t slots = (uint64_t)s->members + s->spares;
	int r;

	if (s->level > LAYOUT_RAID6)
		return sb_refuse(err, errlen, "bad level %" PRIu32 " (must be 0..%d)", s->level, LAYOUT_RAID6);
	if (s->members == 0 || s->members > SB_MAX_SLOTS)
		return sb_refuse(err, errlen, "bad members %" PRIu32 " (must be 1..%d)", s->members, SB_MAX_SLOTS);
	if (slots > SB_MAX_SLOTS)
		return sb_refuse(err, errlen, "bad spares %" PRIu32 " (members + spares = %" PRIu64 " > %d)",
			    s->spares, slots, SB_MAX_SLOTS);
	if (s->index >= slots)
		return sb_refuse(err, errlen, "bad index %" PRIu32 " (must be < members + spares = %" PRIu64 ")",
			    s->index, slots);
	if (!is_pow2(s->chunk) || s->chunk < LAYOUT_MIN_CHUNK || s->chunk > LAYOUT_MAX_CHUNK)
		return sb_refuse(err, errlen, "bad chunk %" PRIu64 " (must be a power of two in %u..%u)",
			    s->chunk, LAYOUT_MIN_CHUNK, LAYOUT_MAX_CHUNK);
	if (s->copies == 0 || s->copies > s->members)
		return sb_refuse(err, errlen, "bad copies %" PRIu32 " (must be 1..members = %" PRIu32 ")",
			    s->copies, s->members);
	if ((s->level == LAYOUT_RAID4 || s->level == LAYOUT_RAID5 || s->level == LAYOUT_RAID6) &&
	    s->layout > LAYOUT_PARITY_N)
		return sb_refuse(err, errlen, "bad layout %" PRIu32 " for a parity level (must be 0..%d)",
			    s->layout, LAYOUT_PARITY_N);
	if (s->level == LAYOUT_RAID10 && s->layout > LAYOUT_R10_OFFSET)
		return sb_refuse(err, errlen, "bad layout %" PRIu32 " for raid10 (must be 0..%d)",
			    s->layout, LAYOUT_R10_OFFSET);
	if (s->data_offset < SB_SIZE || s->data_offset % 4096)
		return sb_refuse(err, errlen, "bad data_offset %" PRIu64 " (must be a multiple of 4096, >= %u)",
			    s->data_offset, SB_SIZE);
	if (s->clean > 1)
		return sb_refuse(err, errlen, "bad clean %" PRIu32 " (must be 0 or 1)", s->clean);
	if (s->bitmap_offset &&
	    (s->bitmap_offset < SB_SIZE || s->bitmap_offset % 4096 || s->bitmap_offset >= s->data_offset))
		return sb_refuse(err, errlen, "bad bitmap_offset %" PRIu64 " (must be 0 or 4K-aligned in [%u, data_offset))",
			    s->bitmap_offset, SB_SIZE);
	if (s->bitmap_offset && !is_pow2(s->bitmap_chunk))
		return sb_refuse(err, errlen, "bad bitmap_chunk %" PRIu64 " (must be a power of two)", s->bitmap_chunk);
	if ((r = check_v3_fields(s, err, errlen)))
		return r;
	if (uuid_is_nil(s->volume_uuid))
		return sb_refuse(err, errlen, "bad volume_uuid (nil)");
	if (uuid_is_nil(s->member_uuid))
		return sb_refuse(err, errlen, "bad member_uuid (nil)");
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		const struct sb_slot *sl = &s->slots[i];

		if (sl->state > SB_MISSING)
			return sb_refuse(err, errlen, "bad slots[%u].state %u (unknown)", i, sl->state);
		if (sl->flags & ~(s->version < 4 ? SB_SLOT_FLAGS_V3 : SB_SLOT_FLAGS_ALL))
			return sb_refuse(err, errlen, "bad slots[%u].flags 0x%02x (unknown bits)", i, sl->flags);
		if (i >= slots && sl->state != SB_EMPTY)
			return sb_refuse(err, errlen, "bad slots[%u].state %s (beyond members + spares = %" PRIu64 ")",
				    i, sb_state_name(sl->state), slots);
	}
	if ((r = check_replacement(s, err, errlen)))
		return r;
	return check_numbers(s, err, errlen);
}

int sb_decode(const uint8_t *buf, size_t len, struct sb *s, char *err, size_t errlen)
{
	uint32_t v, stored, computed;

	memset(s, 0, sizeof(*s));
	if (!buf || len < SB_SIZE)
		return sb_refuse(err, errlen, "short superblock (%zu bytes, need %u)", buf ? len : 0, SB_SIZE);
	v = get_le32(buf + OFF_MAGIC);
	if (v != SB_MAGIC)
		return sb_refuse(err, errlen, "no fsvol superblock (bad magic 0x%08" PRIx32 ")", v);
	v = get_le32(buf + OFF_VERSION);
	if (v == 0 || v > SB_VERSION)
		return sb_refuse(err, errlen, "unsupported version %" PRIu32 " (this build reads 1..%u)", v, SB_VERSION);
	stored = get_le32(buf + OFF_CSUM);
	computed = block_crc(buf);
	if (stored != computed)
		return sb_refuse(err, errlen, "checksum mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
			    stored, computed);
	v = get_le32(buf + OFF_HDR_SIZE);
	if (v != OFF_SLOTS)
		return sb_refuse(err, errlen, "bad header_size %" PRIu32 " (versions 1 to 5 have %d)", v, OFF_SLOTS);
	if (!memchr(buf + OFF_NAME, 0, 32))
		return sb_refuse(err, errlen, "bad name (not NUL-terminated within 32 bytes)");

	s->version = get_le32(buf + OFF_VERSION);
	s->checksum = stored;
	memcpy(s->volume_uuid, buf + OFF_VOLUME_UUID, 16);
	s->ctime = get_le64(buf + OFF_CTIME);
	s->utime = get_le64(buf + OFF_UTIME);
	s->level = get_le32(buf + OFF_LEVEL);
	s->layout = get_le32(buf + OFF_LAYOUT);
	s->copies = get_le32(buf + OFF_COPIES);
	s->members = get_le32(buf + OFF_MEMBERS);
	s->chunk = get_le64(buf + OFF_CHUNK);
	s->spares = get_le32(buf + OFF_SPARES);
	s->index = get_le32(buf + OFF_INDEX);
	s->data_offset = get_le64(buf + OFF_DATA_OFFSET);
	s->volume_size = get_le64(buf + OFF_VOLUME_SIZE);
	memcpy(s->member_uuid, buf + OFF_MEMBER_UUID, 16);
	s->events = get_le64(buf + OFF_EVENTS);
	s->clean = get_le32(buf + OFF_CLEAN);
	s->features = get_le32(buf + OFF_FEATURES); /* reserved (zero) before version 5 */
	if (s->features & ~(uint32_t)SB_FEATURES_ALL)
		return sb_refuse(err, errlen, "unknown features 0x%08" PRIx32 " (this build knows 0x%08x)", s->features,
				 SB_FEATURES_ALL);
	s->bitmap_offset = get_le64(buf + OFF_BITMAP_OFFSET);
	s->bitmap_chunk = get_le64(buf + OFF_BITMAP_CHUNK);
	memcpy(s->name, buf + OFF_NAME, 32);
	s->consistency = get_le32(buf + OFF_CONSISTENCY); /* reserved (zero) before version 3 */
	s->write_behind = get_le32(buf + OFF_WRITE_BEHIND);
	s->ppl_offset = get_le64(buf + OFF_PPL_OFFSET);
	s->ppl_size = get_le32(buf + OFF_PPL_SIZE);
	s->reshape_flags = get_le32(buf + OFF_RESHAPE_FLAGS);
	s->reshape_pos = get_le64(buf + OFF_RESHAPE_POS);
	s->new_level = get_le32(buf + OFF_NEW_LEVEL);
	s->new_layout = get_le32(buf + OFF_NEW_LAYOUT);
	s->new_chunk = get_le64(buf + OFF_NEW_CHUNK);
	s->new_members = get_le32(buf + OFF_NEW_MEMBERS);
	s->new_copies = get_le32(buf + OFF_NEW_COPIES);
	s->reshape_backup = get_le64(buf + OFF_RESHAPE_BACKUP);
	s->bbl_offset = get_le64(buf + OFF_BBL_OFFSET);
	s->bbl_size = get_le32(buf + OFF_BBL_SIZE);
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++) {
		const uint8_t *e = buf + OFF_SLOTS + i * SLOT_SIZE;
		struct sb_slot *sl = &s->slots[i];

		sl->state = e[SLOT_STATE];
		sl->flags = e[SLOT_FLAGS];
		/* before version 3 a device's Number was its slot */
		sl->number = s->version < 3 ? (sl->state ? (uint16_t)i : SB_NO_NUMBER) : get_le16(e + SLOT_NUMBER);
		sl->replaces = s->version < 4 ? 0 : get_le16(e + SLOT_REPLACES); /* reserved (zero) before */
		memcpy(sl->uuid, e + SLOT_UUID, 16);
		sl->data_size = get_le64(e + SLOT_DATA_SIZE);
		sl->rebuild_pos = get_le64(e + SLOT_REBUILD_POS);
		/* Version 1 kept the checkpoint in logical bytes of the volume,
		 * which cannot be read as member bytes; a position past the data
		 * is no checkpoint either. Either way the recovery restarts from
		 * 0: slower, never wrong, and no member is refused for it. */
		if (s->version < 2 || sl->rebuild_pos > sl->data_size)
			sl->rebuild_pos = 0;
	}
	return check_fields(s, err, errlen);
}

/* ---- UUIDs, names ---------------------------------------------------- */

void sb_uuid_generate(uint8_t uuid[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t r = getrandom(uuid + got, 16 - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* no entropy source at all: still unique enough per process and time */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			uint64_t a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
			uint64_t b = (uint64_t)(uintptr_t)&ts ^ (a * 0x9e3779b97f4a7c15u);
			put_le64(uuid, a);
			put_le64(uuid + 8, b);
			break;
		}
		got += (size_t)r;
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

void sb_uuid_format(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[uuid[i] >> 4];
		*o++ = hex[uuid[i] & 15];
	}
	*o = '\0';
}

int sb_name_check(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);
	if (n == 0)
		return sb_refuse(err, errlen, "name '': empty");
	if (n > SB_NAME_MAX)
		return sb_refuse(err, errlen, "name '%s': longer than %d bytes", name, SB_NAME_MAX);
	if (!isalnum((unsigned char)name[0]))
		return sb_refuse(err, errlen, "name '%s': must start with a letter or a digit", name);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return sb_refuse(err, errlen,
					 "name '%s': character %zu ('%c') is not allowed (letters, digits, '_', '.', '-')",
					 name, i + 1, isprint(c) ? c : '?');
	}
	return 0;
}

void sb_volume_name(const struct sb *s, char out[SB_NAME_MAX + 1])
{
	size_t n = strnlen(s->name, sizeof(s->name) - 1);
	if (n && !sb_name_check(s->name, NULL, 0)) {
		memcpy(out, s->name, n);
		out[n] = 0;
		return;
	}
	snprintf(out, SB_NAME_MAX + 1, "fsvol-%02x%02x%02x%02x", s->volume_uuid[0], s->volume_uuid[1],
		 s->volume_uuid[2], s->volume_uuid[3]);
}

const char *sb_state_name(unsigned state)
{
	static const char *const names[] = {
		[SB_EMPTY] = "empty",   [SB_ACTIVE] = "active",         [SB_FAILED] = "failed",
		[SB_SPARE] = "spare",   [SB_REBUILDING] = "rebuilding", [SB_MISSING] = "missing",
	};
	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}

/* ---- dump ------------------------------------------------------------ */

/* "768M", "1.50G": powers of 1024; exact values print without decimals. */
static void fmt_size(uint64_t v, char *out, size_t outlen)
{
	static const char units[] = "KMGTPE";
	int u = -1;
	uint64_t div = 1;

	while (u < 5 && v / div >= 1024) {
		div *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, outlen, "%" PRIu64 "B", v);
	else if (v % div == 0)
		snprintf(out, outlen, "%" PRIu64 "%c", v / div, units[u]);
	else
		snprintf(out, outlen, "%.2f%c", (double)v / (double)div, units[u]);
}

static void fmt_time(uint64_t t, char *out, size_t outlen)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t > (uint64_t)INT64_MAX / 2 || (uint64_t)tt != t || !localtime_r(&tt, &tm) ||
	    !strftime(out, outlen, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(out, outlen, "%" PRIu64 " (out of range)", t);
}

static char state_char(unsigned st)
{
	switch (st) {
	case SB_ACTIVE: return 'A';
	case SB_REBUILDING: return 'R';
	case SB_SPARE: return 'S';
	default: return '.';
	}
}

void sb_dump_field(FILE *f, const char *name, const char *fmt, ...)
{
	va_list ap;
	fprintf(f, "%*s : ", SB_DUMP_NAME_WIDTH, name);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

/* The slot table under the dump: one row per slot, this device marked. */
static void sb_dump_slots(FILE *f, const struct sb *s, unsigned nslots)
{
	char u[37], a[96], b[32];
	fprintf(f, "\n   Slot  Number  State       Device UUID                           Data Size              Rebuild  Flags\n");
	for (unsigned i = 0; i < nslots; i++) {
		const struct sb_slot *sl = &s->slots[i];
		char ds[128];

		sb_uuid_format(sl->uuid, u);
		fmt_size(sl->data_size, a, sizeof(a));
		snprintf(ds, sizeof(ds), "%" PRIu64 " (%s)", sl->data_size, a);
		if (sl->state == SB_REBUILDING || (sl->flags & SB_SLOT_REPLACEMENT))
			fmt_size(sl->rebuild_pos, b, sizeof(b));
		else
			snprintf(b, sizeof(b), "-");
		char num[8] = "-", fl[64] = "", rep[24] = "";
		if (sl->number != SB_NO_NUMBER)
			snprintf(num, sizeof(num), "%u", sl->number);
		if (sl->flags & SB_SLOT_REPLACEMENT)
			snprintf(rep, sizeof(rep), " replacement for %u", sl->replaces);
		snprintf(fl, sizeof(fl), "%s%s%s%s", sl->flags & SB_SLOT_WRITE_MOSTLY ? " write-mostly" : "",
			 sl->flags & SB_SLOT_FAILFAST ? " failfast" : "", sl->flags & SB_SLOT_JOURNAL ? " journal" : "", rep);
		fprintf(f, "   %4u  %6s  %-10s  %s  %-22s %-7s  %s%s\n", i, num, sb_state_name(sl->state), u, ds, b,
			*fl ? fl + 1 : "-", i == s->index ? "   <- this device" : "");
	}
}

void sb_dump(FILE *f, const struct sb *s, const char *path)
{
	uint8_t buf[SB_SIZE];
	char u[37], a[96], b[32];
	struct layout_geom g;
	unsigned nslots = s->members + s->spares;
	const struct sb_slot *me = s->index < SB_MAX_SLOTS ? &s->slots[s->index] : NULL;
	uint32_t computed;

	if (nslots > SB_MAX_SLOTS)
		nslots = SB_MAX_SLOTS;
	sb_encode(s, buf);
	computed = get_le32(buf + OFF_CSUM);
	memset(&g, 0, sizeof(g));
	g.level = (enum layout_level)s->level;
	g.alg = s->layout;
	g.copies = s->copies;
	g.members = s->members;
	g.chunk = s->chunk;

	fprintf(f, "%s:\n", path ? path : "(superblock)");
	sb_dump_field(f, "Magic", "SVOL");
	sb_dump_field(f, "Version", "%" PRIu32, s->version ? s->version : SB_VERSION);
	sb_uuid_format(s->volume_uuid, u);
	sb_dump_field(f, "Volume UUID", "%s", u);
	sb_dump_field(f, "Name", "%.*s", (int)strnlen(s->name, sizeof(s->name)), s->name);
	fmt_time(s->ctime, a, sizeof(a));
	sb_dump_field(f, "Creation Time", "%s", a);
	fmt_time(s->utime, a, sizeof(a));
	sb_dump_field(f, "Update Time", "%s", a);
	sb_dump_field(f, "Raid Level", "%s", s->level <= LAYOUT_RAID6 ? layout_level_name(g.level) : "unknown");
	if (s->level <= LAYOUT_RAID6) {
		const char *alg = layout_alg_name(&g);
		sb_dump_field(f, "Layout", "%s", alg && *alg ? alg : "-");
	} else {
		sb_dump_field(f, "Layout", "%" PRIu32, s->layout);
	}
	sb_dump_field(f, "Copies", "%" PRIu32, s->copies);
	fmt_size(s->chunk, a, sizeof(a));
	sb_dump_field(f, "Chunk Size", "%s", a);
	sb_dump_field(f, "Raid Devices", "%" PRIu32, s->members);
	sb_dump_field(f, "Spares", "%" PRIu32, s->spares);
	fmt_size(s->data_offset, a, sizeof(a));
	sb_dump_field(f, "Data Offset", "%" PRIu64 " (%s)", s->data_offset, a);
	if (me) {
		fmt_size(me->data_size, a, sizeof(a));
		sb_dump_field(f, "Data Size/Dev", "%" PRIu64 " (%s)", me->data_size, a);
	}
	fmt_size(s->volume_size, a, sizeof(a));
	sb_dump_field(f, "Volume Size", "%" PRIu64 " (%s)", s->volume_size, a);
	if (s->bitmap_offset) {
		fmt_size(s->bitmap_chunk, a, sizeof(a));
		sb_dump_field(f, "Bitmap Offset", "%" PRIu64 " (chunk %s)", s->bitmap_offset, a);
	} else {
		sb_dump_field(f, "Bitmap Offset", "none");
	}
	static const char *const cons[] = { "resync", "ppl", "journal" };
	sb_dump_field(f, "Consistency Policy", "%s", s->consistency == SB_CONS_RESYNC && s->bitmap_offset ? "bitmap"
		      : s->consistency <= SB_CONS_JOURNAL ? cons[s->consistency] : "unknown");
	if (s->ppl_offset)
		sb_dump_field(f, "PPL", "%" PRIu32 " bytes at offset %" PRIu64, s->ppl_size, s->ppl_offset);
	if (s->write_behind)
		sb_dump_field(f, "Write Behind", "%" PRIu32, s->write_behind);
	if (s->reshape_flags & SB_RESHAPE_ACTIVE) {
		g.level = (enum layout_level)s->new_level;
		g.alg = s->new_layout;
		fmt_size(s->new_chunk, b, sizeof(b));
		sb_dump_field(f, "Reshape pos'n", "%" PRIu64, s->reshape_pos);
		sb_dump_field(f, "New Geometry", "%s, %" PRIu32 " devices, chunk %s, copies %" PRIu32,
			      s->new_level <= LAYOUT_RAID6 ? layout_level_name(g.level) : "unknown", s->new_members, b,
			      s->new_copies);
		if (s->reshape_backup)
			sb_dump_field(f, "Reshape Backup", "offset %" PRIu64, s->reshape_backup);
	}
	if (s->bbl_offset)
		sb_dump_field(f, "Bad Block Log", "%" PRIu32 " bytes at offset %" PRIu64, s->bbl_size, s->bbl_offset);
	sb_uuid_format(s->member_uuid, u);
	sb_dump_field(f, "Device UUID", "%s", u);
	sb_dump_field(f, "Device Index", "%" PRIu32, s->index);
	sb_dump_field(f, "Events", "%" PRIu64, s->events);
	sb_dump_field(f, "State", "%s", s->clean ? "clean" : "active (dirty)");
	if (s->level == LAYOUT_RAID6 && s->layout <= LAYOUT_RIGHT_ASYMMETRIC) /* the orders differ */
		sb_dump_field(f, "Q Order", "%s", s->features & SB_FEAT_MD_Q ? "md (syndrome order)"
				  : "data order (fsvol before format 5): rewritten at the next mount");
	if (s->checksum == computed)
		sb_dump_field(f, "Checksum", "0x%08" PRIx32 " (correct)", computed);
	else if (s->checksum == 0)
		sb_dump_field(f, "Checksum", "0x%08" PRIx32 " (computed)", computed);
	else
		sb_dump_field(f, "Checksum", "0x%08" PRIx32 " (stored; the fields encode to 0x%08" PRIx32 ")",
			      s->checksum, computed);

	if (!me)
		snprintf(a, sizeof(a), "none (index out of range)");
	else if (me->state == SB_ACTIVE)
		snprintf(a, sizeof(a), "Active device %" PRIu32, s->index);
	else if (me->state == SB_REBUILDING) {
		fmt_size(me->rebuild_pos, b, sizeof(b));
		snprintf(a, sizeof(a), "Rebuilding device %" PRIu32 " (at %s)", s->index, b);
	} else if (me->state == SB_SPARE && (me->flags & SB_SLOT_REPLACEMENT)) {
		fmt_size(me->rebuild_pos, b, sizeof(b));
		snprintf(a, sizeof(a), "Replacement device %u (built to %s)", me->replaces, b);
	} else if (me->state == SB_SPARE)
		snprintf(a, sizeof(a), "spare");
	else
		snprintf(a, sizeof(a), "%s device %" PRIu32, sb_state_name(me->state), s->index);
	sb_dump_field(f, "Device Role", "%s", a);
	char states[SB_MAX_SLOTS + 1];
	for (unsigned i = 0; i < nslots; i++)
		states[i] = state_char(s->slots[i].state);
	states[nslots] = 0;
	sb_dump_field(f, "Array State", "%s ('A' == active, '.' == missing/failed, 'R' == rebuilding, 'S' == spare)",
		      states);

	sb_dump_slots(f, s, nslots);
}
