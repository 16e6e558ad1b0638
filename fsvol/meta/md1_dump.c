/* md1_dump: a member's md superblock in mdadm --examine's words (md1.h).
 * Same names, order and units as mdadm, so the two outputs compare line by
 * line; mdadm's "Unused Space" (it needs the device's size) is left out. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fsvol/meta/md1.h"

static void md1_field(FILE *f, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void md1_field(FILE *f, const char *name, const char *fmt, ...)
{
	va_list ap;
	fprintf(f, "%15s : ", name);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

void md1_uuid_format(const uint8_t uuid[16], char out[36])
{
	char *p = out;
	for (int i = 0; i < 16; i++)
		p += sprintf(p, "%s%02x", i && !(i & 3) ? ":" : "", uuid[i]);
}

/* mdadm's human_size: " (x.yy MiB x.yy MB)" and so on, rounded as mdadm rounds. */
static const char *md1_human(unsigned long long bytes, char *buf, size_t len)
{
	static const char *const bin[] = { "MiB", "GiB", "TiB" }, *const dec[] = { "MB", "GB", "TB" };
	if (bytes < 5000 * 1024ull) {
		buf[0] = 0;
		return buf;
	}
	unsigned u = bytes < (2ull << 30) ? 0 : bytes < (2ull << 40) ? 1 : 2;
	unsigned long long b = 1ull << (20 + 10 * u), d = u == 0 ? 1000000ull : u == 1 ? 1000000000ull : 1000000000000ull;
	unsigned long long cb = (bytes * 200 / b + 1) / 2, cd = (bytes / (d / 200) + 1) / 2;
	snprintf(buf, len, " (%llu.%02llu %s %llu.%02llu %s)", cb / 100, cb % 100, bin[u], cd / 100, cd % 100, dec[u]);
	return buf;
}

static void md1_time(FILE *f, const char *name, uint64_t t)
{
	time_t s = (time_t)(t & 0xffffffffffull);
	char buf[32];
	ctime_r(&s, buf);
	md1_field(f, name, "%.24s", buf);
}

static const char *const md1_r5[] = { "left-asymmetric", "right-asymmetric", "left-symmetric",
				      "right-symmetric", "parity-first", "parity-last" };

static void md1_r10_layout(FILE *f, uint32_t layout)
{
	unsigned near = layout & 255, far = (layout >> 8) & 255;
	const char *sep = "";
	fprintf(f, "%15s :", "Layout");
	if (near != 1) {
		fprintf(f, " near=%u", near);
		sep = ",";
	}
	if (far != 1)
		fprintf(f, "%s %s=%u", sep, layout & 0x10000 ? "offset" : "far", far);
	if (near * far == 1)
		fprintf(f, "NO REDUNDANCY");
	fputc('\n', f);
}

static void md1_dump_sizes(FILE *f, const struct md1_sb *s)
{
	char h[64];
	md1_field(f, "Avail Dev Size", "%llu sectors%s", (unsigned long long)s->data_size,
		  md1_human(s->data_size << 9, h, sizeof(h)));
	if (s->level > 0) {
		unsigned long long ddsks = 0, denom = 1;
		switch (s->level) {
		case 1: ddsks = 1; break;
		case 4: case 5: ddsks = s->raid_disks - 1; break;
		case 6: ddsks = s->raid_disks - 2; break;
		case 10:
			ddsks = s->raid_disks;
			denom = (s->layout & 255) * ((s->layout >> 8) & 255);
			break;
		}
		if (ddsks && denom) {
			unsigned long long asize = (s->size << 9) * ddsks / denom;
			md1_field(f, "Array Size", "%llu KiB%s", asize >> 10, md1_human(asize, h, sizeof(h)));
		}
		if (s->size != s->data_size)
			md1_field(f, "Used Dev Size", "%llu sectors%s", (unsigned long long)s->size,
				  md1_human(s->size << 9, h, sizeof(h)));
	}
	if (s->data_offset)
		md1_field(f, "Data Offset", "%llu sectors", (unsigned long long)s->data_offset);
	if (s->new_offset && (s->feature_map & MD1_F_NEW_OFFSET))
		md1_field(f, "New Offset", "%llu sectors", (unsigned long long)(s->data_offset + (int64_t)s->new_offset));
	md1_field(f, "Super Offset", "%llu sectors", (unsigned long long)s->super_offset);
	if (s->feature_map & MD1_F_RECOVERY_OFFSET)
		md1_field(f, "Recovery Offset", "%llu sectors", (unsigned long long)s->recovery_offset);
}

static void md1_dump_reshape(FILE *f, const struct md1_sb *s)
{
	char h[64];
	md1_field(f, "Reshape pos'n", "%llu%s", (unsigned long long)(s->reshape_position / 2),
		  md1_human(s->reshape_position << 9, h, sizeof(h)));
	if (s->delta_disks)
		md1_field(f, "Delta Devices", "%d (%d->%u)", s->delta_disks, (int)s->raid_disks - s->delta_disks,
			  s->raid_disks);
	if ((int32_t)s->new_level != s->level) {
		const char *c = md1_level_name((int32_t)s->new_level);
		md1_field(f, "New Level", "%s", c ? c : "-unknown-");
	}
	if (s->new_layout != s->layout && (s->level == 5 || s->level == 6))
		md1_field(f, "New Layout", "%s", s->new_layout < 6 ? md1_r5[s->new_layout] : "-unknown-");
	if (s->new_chunk != s->chunksize)
		md1_field(f, "New Chunksize", "%uK", s->new_chunk / 2);
	fputc('\n', f);
}

static void md1_dump_geom(FILE *f, const struct md1_sb *s)
{
	if (s->level == 5 || s->level == 6)
		md1_field(f, "Layout", "%s", s->layout < 6 ? md1_r5[s->layout] : "-unknown-");
	if (s->level == 10)
		md1_r10_layout(f, s->layout);
	if (s->level == 0 || s->level == 4 || s->level == 5 || s->level == 6 || s->level == 10)
		md1_field(f, "Chunk Size", "%uK", s->chunksize / 2);
	else if (s->level == MD1_LEVEL_LINEAR)
		md1_field(f, "Rounding", "%uK", s->chunksize / 2);
	fputc('\n', f);
}

static void md1_dump_roles(FILE *f, const struct md1_sb *s)
{
	unsigned role = md1_role(s), extra = s->delta_disks < 0 ? (unsigned)-s->delta_disks : 0;
	if (role >= MD1_ROLE_FAULTY)
		fprintf(f, "   Device Role : spare\n");
	else if (role == MD1_ROLE_JOURNAL)
		fprintf(f, "   Device Role : Journal\n");
	else if (s->feature_map & MD1_F_REPLACEMENT)
		fprintf(f, "   Device Role : Replacement device %u\n", role);
	else
		fprintf(f, "   Device Role : Active device %u\n", role);
	fprintf(f, "   Array State : ");
	for (unsigned d = 0; d < s->raid_disks + extra; d++) {
		unsigned cnt = 0;
		for (unsigned i = 0; i < s->max_dev; i++)
			cnt += s->dev_roles[i] == d;
		fputc(cnt == 2 && s->level > 0 ? 'R' : cnt == 1 ? 'A' : cnt == 0 ? '.' : '?', f);
	}
	fprintf(f, " ('A' == active, '.' == missing, 'R' == replacing)\n");
}

void md1_dump(FILE *f, const struct md1_sb *s, const struct md1_bitmap *bm)
{
	char u[36];
	uint32_t expected = s->csum_computed; /* md's sum of the block as it was read */
	md1_field(f, "Magic", "%08x", MD1_MAGIC);
	md1_field(f, "Version", "1.%u", md1_minor(s));
	md1_field(f, "Feature Map", "0x%x", s->feature_map);
	md1_uuid_format(s->set_uuid, u);
	md1_field(f, "Array UUID", "%s", u);
	md1_field(f, "Name", "%.32s", s->set_name);
	md1_time(f, "Creation Time", s->ctime);
	const char *lvl = md1_level_name(s->level);
	md1_field(f, "Raid Level", "%s", lvl ? lvl : "-unknown-");
	md1_field(f, "Raid Devices", "%u", s->raid_disks);
	fputc('\n', f);
	md1_dump_sizes(f, s);
	md1_field(f, "State", "%s", s->resync_offset == MD1_MAX_SECTOR ? "clean" : "active");
	md1_uuid_format(s->device_uuid, u);
	md1_field(f, "Device UUID", "%s", u);
	fputc('\n', f);
	if (s->feature_map & MD1_F_BITMAP_OFFSET)
		md1_field(f, "Internal Bitmap", "%ld sectors from superblock", (long)s->bitmap_offset);
	else if (s->feature_map & (MD1_F_PPL | MD1_F_MULTIPLE_PPLS))
		md1_field(f, "PPL", "%u sectors at offset %d sectors from superblock", s->ppl_size, s->ppl_offset);
	if (s->feature_map & MD1_F_RESHAPE_ACTIVE)
		md1_dump_reshape(f, s);
	if (s->devflags)
		fprintf(f, "%15s :%s%s\n", "Flags", s->devflags & MD1_WRITE_MOSTLY ? " write-mostly" : "",
			s->devflags & MD1_FAILFAST ? " failfast" : "");
	md1_time(f, "Update Time", s->utime);
	if (s->bblog_size && s->bblog_offset)
		md1_field(f, "Bad Block Log", "%u entries available at offset %ld sectors%s", s->bblog_size * 512u / 8,
			  (long)s->bblog_offset, s->feature_map & MD1_F_BAD_BLOCKS ? " - bad blocks present." : "");
	if (expected == s->sb_csum)
		md1_field(f, "Checksum", "%x - correct", s->sb_csum);
	else
		md1_field(f, "Checksum", "%x - expected %x", s->sb_csum, expected);
	md1_field(f, "Events", "%llu", (unsigned long long)s->events);
	fputc('\n', f);
	md1_dump_geom(f, s);
	md1_dump_roles(f, s);
	if (bm) {
		fputc('\n', f);
		md1_field(f, "Bitmap Chunk", "%uK (%llu bits)", bm->chunksize >> 10,
			  (unsigned long long)md1_bitmap_bits(bm));
		md1_field(f, "Bitmap Events", "%llu (cleared %llu)", (unsigned long long)bm->events,
			  (unsigned long long)bm->events_cleared);
		if (bm->write_behind)
			md1_field(f, "Write Behind", "%u", bm->write_behind);
	}
}
