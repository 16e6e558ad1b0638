/* cmd_create_md: fsvol create --metadata 1.0|1.1|1.2 (md's own format). */
#ifndef FSVOL_CMD_CREATE_MD_H
#define FSVOL_CMD_CREATE_MD_H

struct cmd;
struct vol_create;
/* Write md's metadata (version 1.minor) on the n members paths (the last
 * vc->spares of them spares), after create's own checks. The exit status. */
int cmd_create_md(const struct cmd *c, const struct vol_create *vc, unsigned minor, char *const *paths,
		  unsigned n);

/* fsvol convert: a volume in fsvol's format rewritten as md's metadata 1.2
 * over the same data (vc: its geometry, data offset, size, name, bitmap;
 * assume_clean and force set): md's bitmap, bad-block log and superblock
 * on every member first (fsvol's superblock at 0 still the one found),
 * then fsvol's zeroed on each. The volume keeps its UUID and ctime. */
#include <stdint.h>
struct md_convert {
	uint8_t uuid[16];
	uint64_t ctime;
};
int cmd_convert_md(const struct cmd *c, const struct vol_create *vc, const struct md_convert *conv,
		   char *const *paths, unsigned n);

#endif
