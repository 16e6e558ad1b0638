/* md1: md's version-1 superblock, encode/decode and checksum (md1.h). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "fsvol/meta/md1.h"
#include "fsvol/util/le.h"

static int md1_refuse(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int md1_refuse(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* The words covered: the header and max_dev roles (max_dev bounded by the
 * caller); sb_csum (bytes 216..219) counts as zero. */
static uint32_t md1_csum_n(const uint8_t *buf, uint32_t max_dev)
{
	size_t size = MD1_HEADER + 2 * (size_t)max_dev, i;
	uint64_t sum = 0;
	for (i = 0; i + 4 <= size; i += 4)
		if (i != 216)
			sum += get_le32(buf + i);
	if (size - i == 2)
		sum += get_le16(buf + i);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

uint32_t md1_csum(const uint8_t *buf)
{
	uint32_t max_dev = get_le32(buf + 220);
	return md1_csum_n(buf, max_dev > MD1_MAX_DEV ? MD1_MAX_DEV : max_dev);
}

void md1_encode(const struct md1_sb *s, uint8_t *buf)
{
	memset(buf, 0, MD1_SB_BYTES);
	put_le32(buf + 0, MD1_MAGIC);
	put_le32(buf + 4, 1);
	put_le32(buf + 8, s->feature_map);
	memcpy(buf + 16, s->set_uuid, 16);
	memcpy(buf + 32, s->set_name, strnlen(s->set_name, 32));
	put_le64(buf + 64, s->ctime);
	put_le32(buf + 72, (uint32_t)s->level);
	put_le32(buf + 76, s->layout);
	put_le64(buf + 80, s->size);
	put_le32(buf + 88, s->chunksize);
	put_le32(buf + 92, s->raid_disks);
	if (s->feature_map & (MD1_F_PPL | MD1_F_MULTIPLE_PPLS)) {
		put_le16(buf + 96, (uint16_t)s->ppl_offset);
		put_le16(buf + 98, s->ppl_size);
	} else {
		put_le32(buf + 96, (uint32_t)s->bitmap_offset);
	}
	put_le32(buf + 100, s->new_level);
	put_le64(buf + 104, s->reshape_position);
	put_le32(buf + 112, (uint32_t)s->delta_disks);
	put_le32(buf + 116, s->new_layout);
	put_le32(buf + 120, s->new_chunk);
	put_le32(buf + 124, (uint32_t)s->new_offset);
	put_le64(buf + 128, s->data_offset);
	put_le64(buf + 136, s->data_size);
	put_le64(buf + 144, s->super_offset);
	put_le64(buf + 152, s->recovery_offset);
	put_le32(buf + 160, s->dev_number);
	put_le32(buf + 164, s->cnt_corrected_read);
	memcpy(buf + 168, s->device_uuid, 16);
	buf[184] = s->devflags;
	buf[185] = s->bblog_shift;
	put_le16(buf + 186, s->bblog_size);
	put_le32(buf + 188, (uint32_t)s->bblog_offset);
	put_le64(buf + 192, s->utime);
	put_le64(buf + 200, s->events);
	put_le64(buf + 208, s->resync_offset);
	uint32_t max_dev = s->max_dev > MD1_MAX_DEV ? MD1_MAX_DEV : s->max_dev;
	put_le32(buf + 220, max_dev);
	for (uint32_t i = 0; i < max_dev; i++)
		put_le16(buf + MD1_HEADER + 2 * i, s->dev_roles[i]);
	put_le32(buf + 216, md1_csum_n(buf, max_dev));
}

/* Names of feature bits for messages. */
static const char *const md1_feature_names[] = {
	"bitmap", "recovery offset", "reshape", "bad blocks", "replacement", "reshape backwards",
	"new offset", "recovery bitmap", "md-cluster", "journal", "ppl", "multiple ppls", "raid0 layout",
};

int md1_decode(const uint8_t *buf, size_t len, uint64_t where, struct md1_sb *s, char *err, size_t errlen)
{
	if (len < MD1_SB_BYTES)
		return md1_refuse(err, errlen, -EINVAL, "short md superblock (%zu bytes)", len);
	if (get_le32(buf) != MD1_MAGIC)
		return md1_refuse(err, errlen, -EINVAL, "no md superblock (bad magic 0x%08x)", get_le32(buf));
	if (get_le32(buf + 4) != 1)
		return md1_refuse(err, errlen, -EINVAL, "md superblock major_version %u (only 1 is known)",
				  get_le32(buf + 4));
	uint32_t max_dev = get_le32(buf + 220);
	if (max_dev > MD1_MAX_DEV)
		return md1_refuse(err, errlen, -EINVAL, "md superblock max_dev %u (at most %u fit its 4K)", max_dev,
				  MD1_MAX_DEV);
	uint32_t stored = get_le32(buf + 216), computed = md1_csum_n(buf, max_dev);
	if (stored != computed)
		return md1_refuse(err, errlen, -EINVAL, "md superblock checksum mismatch (stored 0x%x, computed 0x%x)",
				  stored, computed);
	uint32_t f = get_le32(buf + 8);
	if (f & ~MD1_F_ALL)
		return md1_refuse(err, errlen, -EINVAL, "md superblock feature_map 0x%x has bits md does not define "
				  "(0x%x): written by a newer md; refused rather than misread", f, f & ~MD1_F_ALL);
	memset(s, 0, sizeof(*s));
	s->feature_map = f;
	memcpy(s->set_uuid, buf + 16, 16);
	memcpy(s->set_name, buf + 32, 32);
	s->set_name[32] = 0;
	s->ctime = get_le64(buf + 64);
	s->level = (int32_t)get_le32(buf + 72);
	s->layout = get_le32(buf + 76);
	s->size = get_le64(buf + 80);
	s->chunksize = get_le32(buf + 88);
	s->raid_disks = get_le32(buf + 92);
	s->bitmap_offset = (int32_t)get_le32(buf + 96);
	s->ppl_offset = (int16_t)get_le16(buf + 96);
	s->ppl_size = get_le16(buf + 98);
	s->new_level = get_le32(buf + 100);
	s->reshape_position = get_le64(buf + 104);
	s->delta_disks = (int32_t)get_le32(buf + 112);
	s->new_layout = get_le32(buf + 116);
	s->new_chunk = get_le32(buf + 120);
	s->new_offset = (int32_t)get_le32(buf + 124);
	s->data_offset = get_le64(buf + 128);
	s->data_size = get_le64(buf + 136);
	s->super_offset = get_le64(buf + 144);
	s->recovery_offset = get_le64(buf + 152);
	s->dev_number = get_le32(buf + 160);
	s->cnt_corrected_read = get_le32(buf + 164);
	memcpy(s->device_uuid, buf + 168, 16);
	s->devflags = buf[184];
	s->bblog_shift = buf[185];
	s->bblog_size = get_le16(buf + 186);
	s->bblog_offset = (int32_t)get_le32(buf + 188);
	s->utime = get_le64(buf + 192);
	s->events = get_le64(buf + 200);
	s->resync_offset = get_le64(buf + 208);
	s->sb_csum = stored;
	s->csum_computed = computed;
	s->max_dev = max_dev;
	for (uint32_t i = 0; i < max_dev; i++)
		s->dev_roles[i] = get_le16(buf + MD1_HEADER + 2 * i);
	if (where != UINT64_MAX && s->super_offset != where)
		return md1_refuse(err, errlen, -EINVAL, "md superblock read at sector %llu records super_offset %llu "
				  "(a copy from elsewhere, e.g. a partition's; md refuses it too)",
				  (unsigned long long)where, (unsigned long long)s->super_offset);
	if (s->raid_disks > MD1_ROLE_MAX)
		return md1_refuse(err, errlen, -EINVAL, "md superblock raid_disks %u", s->raid_disks);
	return 0;
}

int md1_usable(const struct md1_sb *s, char *err, size_t errlen)
{
	/* md-cluster shares the array between hosts through a DLM; fsvol has
	 * no cluster locking, so serving one would corrupt it */
	static const uint32_t unsupported = MD1_F_CLUSTERED | MD1_F_RESHAPE_BACKWARDS | MD1_F_NEW_OFFSET |
					    MD1_F_MULTIPLE_PPLS;
	uint32_t bad = s->feature_map & unsupported;
	if (!bad)
		return 0;
	char names[160] = "";
	size_t used = 0;
	for (unsigned b = 0; b < sizeof(md1_feature_names) / sizeof(*md1_feature_names); b++)
		if (bad & (1u << b)) {
			int k = snprintf(names + used, sizeof(names) - used, "%s%s (0x%x)", used ? ", " : "",
					 md1_feature_names[b], 1u << b);
			if (k > 0 && (size_t)k < sizeof(names) - used)
				used += (size_t)k;
		}
	return md1_refuse(err, errlen, -EOPNOTSUPP, "md feature%s %s not supported by fsvol%s",
			  bad & (bad - 1) ? "s" : "", names,
			  bad & MD1_F_CLUSTERED ? " (a clustered array is shared between hosts through a lock "
			  "manager fsvol does not have)" : "");
}

unsigned md1_role(const struct md1_sb *s)
{
	return s->dev_number < s->max_dev ? s->dev_roles[s->dev_number] : MD1_ROLE_SPARE;
}

unsigned md1_minor(const struct md1_sb *s)
{
	return s->super_offset <= 4 ? 1 : s->super_offset <= 8 ? 2 : 0;
}
