/* cmd_scan: fsvol members found by looking (examine --scan, and mount naming
 * where a missing member may be): superblocks read from files and block
 * devices under given paths, directories walked without following links. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/meta/md1_sb.h"
#include "fsvol/meta/sb.h"

/* md's version-1 superblock at 1.2's, 1.1's or 1.0's place, as struct sb:
 * 1, or 0 when there is none fsvol serves. */
static int cmd_read_md(int fd, uint8_t *buf, struct sb *s)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint64_t sec = end > 0 ? (uint64_t)end / MD1_SECTOR : 0, where[3] = { 8, 0, md1_super_offset(0, sec) };
	struct md1_sb *m = malloc(sizeof(*m));
	int found = 0;
	for (unsigned i = 0; m && i < 3 && !found; i++) {
		char err[256];
		found = (where[i] + 8) <= sec && pread(fd, buf, SB_SIZE, (off_t)(where[i] * MD1_SECTOR)) == SB_SIZE &&
			!md1_decode(buf, SB_SIZE, where[i], m, err, sizeof(err)) &&
			!md1_to_sb(m, (uint64_t)end, s, err, sizeof(err));
	}
	free(m);
	return found;
}

int cmd_read_sb(const char *path, struct sb *s, char *err, size_t len)
{
	uint8_t *buf = malloc(SB_SIZE);
	if (!buf) {
		snprintf(err, len, "%s: out of memory", path);
		return -ENOMEM;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), r = 0;
	ssize_t got = fd < 0 ? -1 : pread(fd, buf, SB_SIZE, 0);
	if (got < 0) {
		r = -errno;
		snprintf(err, len, "%s: %s", path, strerror(errno));
	} else if ((size_t)got < SB_SIZE) {
		r = -EINVAL;
		snprintf(err, len, "%s: too small to hold a superblock (%zd bytes)", path, got);
	} else if ((r = sb_decode(buf, SB_SIZE, s, err + 0, len)) && cmd_read_md(fd, buf, s) > 0) {
		r = 0; /* md's own format (issue 31), seen as fsvol's */
	} else if (r) {
		char why[256];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, len, "%s: %s", path, why);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* nftw has no context argument: one walk at a time */
static struct {
	cmd_scan_fn fn;
	void *ctx;
	unsigned found;
	int depth;
} walk;

static int scan_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct sb s;
	char err[512];
	if (type == FTW_D && walk.depth >= 0 && ftw->level >= walk.depth)
		return ftw->level ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	if (type != FTW_F || (!S_ISREG(st->st_mode) && !S_ISBLK(st->st_mode)) ||
	    (S_ISREG(st->st_mode) && st->st_size < (off_t)SB_SIZE))
		return 0;
	if (cmd_read_sb(path, &s, err, sizeof(err)) == 0) {
		walk.found++;
		walk.fn(path, &s, walk.ctx);
	}
	return 0;
}

unsigned cmd_scan(char *const *paths, unsigned n, int depth, cmd_scan_fn fn, void *ctx)
{
	walk.depth = depth;
	walk.fn = fn;
	walk.ctx = ctx;
	walk.found = 0;
	for (unsigned i = 0; i < n; i++)
		nftw(paths[i], scan_one, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	return walk.found;
}
