/* cmd_newmember: a member file that add, grow --add or replace --with names
 * and that does not exist yet is made here, at the size the volume's members
 * have, as create makes its missing files (sparse, mode 0600); one too small
 * is refused in sizes a person reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/meta/sb.h"
#include "fsvol/util/size.h"
#include "stats/json.h"

/* What a member of the volume at mnt must hold: its data offset and data
 * size, from an active member's superblock (the daemon's own rule). 0, 1
 * when mnt is no mount (the ctl write says why), or -ENOENT. */
static int member_need(const char *mnt, uint64_t *need, uint64_t *doff)
{
	char why[4600], err[512];
	int r = -ENOENT;
	struct stats_json *st;
	if (cmd_status_json(mnt, &st, why, sizeof(why)))
		return 1;
	const struct stats_json *ms = stats_json_get(st, "members");
	for (size_t k = 0; r && ms && ms->t == STATS_JSON_ARR && k < ms->n; k++) {
		const char *p = stats_json_str(&ms->kids[k], "path"), *state = stats_json_str(&ms->kids[k], "state");
		struct sb s;
		if (!p || !state || strcmp(state, "active") || strchr(p, ':') || cmd_read_sb(p, &s, err, sizeof(err)))
			continue;
		*doff = s.data_offset;
		*need = s.data_offset + s.slots[0].data_size;
		r = 0;
	}
	stats_json_free(st);
	return r;
}

int cmd_new_member(const struct cmd *c, const char *mnt, const char *path, int *made)
{
	struct stat st;
	uint64_t need = 0, doff = 0;
	char h[32], hn[32], hd[32];
	*made = 0;
	if (strchr(path, ':')) /* nbd://..., mem:NAME: not files of ours */
		return 0;
	int exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return cmd_err(c, "%s: %s", path, strerror(errno));
	int r = exists && !S_ISREG(st.st_mode) ? 1 : member_need(mnt, &need, &doff);
	if (r) {
		if (exists || r > 0)
			return 0; /* a device, no mount, or no superblock to say: the daemon judges */
		return cmd_err(c, "%s does not exist, and no member superblock of %s says what size it needs: create it "
			       "(truncate -s SIZE %s)", path, mnt, path);
	}
	size_format(need, hn, sizeof(hn));
	if (exists && st.st_size) { /* a file of the user's: used as it is, or refused */
		if ((uint64_t)st.st_size >= need)
			return 0;
		size_format((uint64_t)st.st_size, h, sizeof(h));
		size_format(doff, hd, sizeof(hd));
		return cmd_err(c, "%s: too small: %s (%llu bytes), and a member of %s needs %s (%llu bytes: the %s data "
			       "offset, then the data); give a larger file, or a new path for fsvol to create", path, h,
			       (unsigned long long)st.st_size, mnt, hn, (unsigned long long)need, hd);
	}
	/* missing, or empty (touch): made the size of a member, sparse */
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (exists ? 0 : O_EXCL), 0600);
	if (fd < 0)
		return cmd_err(c, "%s: %s", path, strerror(errno));
	if (ftruncate(fd, (off_t)need) < 0) {
		int e = errno;
		close(fd);
		if (!exists)
			unlink(path);
		return cmd_err(c, "%s: %s", path, strerror(e));
	}
	close(fd);
	*made = exists ? CMD_MEMBER_SIZED : CMD_MEMBER_MADE;
	return 0;
}

void cmd_new_member_note(const char *mnt, const char *path, int made)
{
	struct stat st;
	char h[32];
	if (!made || stat(path, &st) < 0)
		return;
	size_format((uint64_t)st.st_size, h, sizeof(h));
	printf("fsvol: %s %s (%s, the size of a member of %s)\n", made == CMD_MEMBER_MADE ? "created" : "sized",
	       path, h, mnt);
}
