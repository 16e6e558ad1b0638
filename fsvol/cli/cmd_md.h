/* cmd_md: md's own superblocks on members, for the commands that read them. */
#ifndef FSVOL_CMD_MD_H
#define FSVOL_CMD_MD_H

#include <stddef.h>

struct cmd;
struct member;
struct md1_sb;
/* Look for md's version-1 superblock at 1.2's, 1.1's and 1.0's places.
 * 1 and s filled; 0 none; -1 md's magic but refused (err says why), or
 * -ENOMEM. */
int cmd_md_probe(struct member *m, struct md1_sb *s, char *err, size_t errlen);
/* fsvol examine of an md member, mdadm --examine's words (badblocks: only
 * --examine-badblocks' list). The exit status, or -1 when the member has
 * no md superblock (the caller reports its own error). */
int cmd_md_examine(const struct cmd *c, struct member *m, const char *path, int badblocks);

#endif
