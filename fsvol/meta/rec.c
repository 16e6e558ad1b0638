/* rec: the checksummed head of log record blocks (rec.h). */
#include "fsvol/meta/rec.h"

#include <errno.h>
#include <stdio.h>

#include "fsvol/util/crc32c.h"
#include "fsvol/util/le.h"

void rec_seal(uint8_t *buf, size_t len)
{
	put_le32(buf + REC_CRC, 0);
	put_le32(buf + REC_CRC, crc32c(0, buf, len));
}

int rec_check(const uint8_t *buf, size_t len, uint32_t magic, uint32_t version, char *err, size_t errlen)
{
	static const uint8_t zero[4];
	if (get_le32(buf + REC_MAGIC) != magic) {
		snprintf(err, errlen, "no record (magic 0x%08x)", get_le32(buf + REC_MAGIC));
		return -EINVAL;
	}
	if (get_le32(buf + REC_VERSION) != version) {
		snprintf(err, errlen, "unsupported record version %u", get_le32(buf + REC_VERSION));
		return -EINVAL;
	}
	/* the CRC field read as zero, without a copy of the block */
	uint32_t have = crc32c(0, buf, REC_CRC);
	have = crc32c(have, zero, 4);
	have = crc32c(have, buf + REC_CRC + 4, len - REC_CRC - 4);
	uint32_t want = get_le32(buf + REC_CRC);
	if (want != have) {
		snprintf(err, errlen, "checksum mismatch (stored 0x%08x, computed 0x%08x)", want, have);
		return -EINVAL;
	}
	return 0;
}
