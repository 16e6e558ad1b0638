/* cmd_same_file: whether two member arguments name one member, whatever
 * their spelling ($PWD/b, ./b, b, a symbolic link), for the options that name
 * a member (create --write-mostly / --failfast, add's flags). */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/members/member.h"

/* What a path names: the device number of a block device, else st_dev and
 * st_ino, as members tell one another apart (member_file.c). 0: no such file. */
static int file_id(const char *p, dev_t *dev, ino_t *ino)
{
	struct stat st;
	if (stat(p, &st))
		return 0;
	*dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	*ino = S_ISBLK(st.st_mode) ? 0 : st.st_ino;
	return 1;
}

/* A file yet to be created: its directory resolved (links and all), then
 * its name; the spelling made absolute when the directory does not exist. */
static const char *future_name(const char *p, char *out, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", p);
	snprintf(base, sizeof(base), "%s", p);
	if (realpath(dirname(dir), real)) {
		snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", basename(base));
		return out;
	}
	return cmd_abs_path(p, out, len);
}

int cmd_same_file(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return 1;
	/* an NBD export or process memory: its spelling is its name */
	if (member_backend(a) != &member_file_ops || member_backend(b) != &member_file_ops)
		return 0;
	dev_t da = 0, db = 0;
	ino_t ia = 0, ib = 0;
	int ea = file_id(a, &da, &ia), eb = file_id(b, &db, &ib);
	if (ea || eb)
		return ea && eb && da == db && ia == ib;
	char na[PATH_MAX + 2], nb[PATH_MAX + 2];
	return !strcmp(future_name(a, na, sizeof(na)), future_name(b, nb, sizeof(nb)));
}
