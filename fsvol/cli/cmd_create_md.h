/* cmd_create_md: fsvol create --metadata 1.0|1.1|1.2 (md's own format). */
#ifndef FSVOL_CMD_CREATE_MD_H
#define FSVOL_CMD_CREATE_MD_H

struct cmd;
struct vol_create;
/* Write md's metadata (version 1.minor) on the n members paths (the last
 * vc->spares of them spares), after create's own checks. The exit status. */
int cmd_create_md(const struct cmd *c, const struct vol_create *vc, unsigned minor, char *const *paths,
		  unsigned n);

#endif
