/* cmd_md: finding and printing md's own superblocks on members (fsvol
 * examine of a member md or `fsvol create --metadata 1.x` wrote). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_md.h"
#include "fsvol/members/member.h"
#include "fsvol/meta/md1.h"

int cmd_md_probe(struct member *m, struct md1_sb *s, char *err, size_t errlen)
{
	/* mdadm's order of preference does not matter: a member has one */
	uint64_t sec = m->size / MD1_SECTOR, where[3] = { 8, 0, md1_super_offset(0, sec) };
	uint8_t *buf = NULL;
	int found = 0;
	if (posix_memalign((void **)&buf, 4096, MD1_SB_BYTES))
		return -ENOMEM;
	if (err && errlen)
		err[0] = 0;
	for (unsigned i = 0; i < 3 && found <= 0; i++) {
		char why[256];
		if ((where[i] + 8) * MD1_SECTOR > m->size || member_pread(m, buf, MD1_SB_BYTES, where[i] * MD1_SECTOR))
			continue;
		if (!md1_decode(buf, MD1_SB_BYTES, where[i], s, why, sizeof(why)))
			found = 1;
		else if (!strstr(why, "bad magic") && !found) { /* md's magic, but refused: say why */
			snprintf(err, errlen, "md superblock at sector %llu: %s", (unsigned long long)where[i], why);
			found = -1;
		}
	}
	free(buf);
	return found;
}

/* mdadm --examine-badblocks' words for one member. */
static int md_badblocks(const struct cmd *c, struct member *m, const struct md1_sb *s, const char *path)
{
	if (!s->bblog_size || !s->bblog_offset) {
		printf("No bad-blocks list configured on %s\n", path);
		return 0;
	}
	if (!(s->feature_map & MD1_F_BAD_BLOCKS)) {
		printf("Bad-blocks list is empty in %s\n", path);
		return 0;
	}
	size_t bytes = (size_t)s->bblog_size * MD1_SECTOR;
	uint8_t *buf = NULL;
	uint64_t e[512];
	int r = posix_memalign((void **)&buf, 4096, bytes) ? -ENOMEM
		: member_pread(m, buf, bytes, (uint64_t)((int64_t)s->super_offset + s->bblog_offset) * MD1_SECTOR);
	if (r) {
		free(buf);
		return cmd_err(c, "%s: cannot read the bad-block log: %s", path, strerror(-r));
	}
	unsigned n = md1_bblog_decode(buf, bytes, e, 512);
	free(buf);
	printf("Bad-blocks on %s:\n", path);
	for (unsigned i = 0; i < n; i++)
		printf("%20llu for %u sectors\n", (unsigned long long)(md1_bb_start(e[i]) << s->bblog_shift),
		       md1_bb_len(e[i]) << s->bblog_shift);
	return 0;
}

int cmd_md_examine(const struct cmd *c, struct member *m, const char *path, int badblocks)
{
	struct md1_sb *s = malloc(sizeof(*s));
	char err[320];
	if (!s)
		return cmd_err(c, "out of memory");
	int r = cmd_md_probe(m, s, err, sizeof(err));
	if (r <= 0) {
		free(s);
		if (r < 0 && err[0])
			return cmd_err(c, "%s: %s", path, err);
		return -1;
	}
	if (badblocks) {
		r = md_badblocks(c, m, s, path);
		free(s);
		return r;
	}
	struct md1_bitmap bm, *bmp = NULL;
	if (s->feature_map & MD1_F_BITMAP_OFFSET) {
		uint8_t *buf = NULL;
		uint64_t off = (uint64_t)((int64_t)s->super_offset + s->bitmap_offset) * MD1_SECTOR;
		if (!posix_memalign((void **)&buf, 4096, 4096) && !member_pread(m, buf, 4096, off) &&
		    !md1_bitmap_decode(buf, &bm, err, sizeof(err)))
			bmp = &bm;
		else
			fprintf(stderr, "fsvol examine: %s: md's bitmap at byte %llu: %s\n", path, (unsigned long long)off,
				buf ? err : "out of memory");
		free(buf);
	}
	printf("%s:\n", path);
	md1_dump(stdout, s, bmp);
	free(s);
	return 0;
}
