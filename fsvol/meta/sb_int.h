/* sb internals: shared by the superblock codec (sb.c) and assembly
 * (assemble.c). Not for use outside those two files.
 */
#ifndef FSVOL_SB_INT_H
#define FSVOL_SB_INT_H

#include <stddef.h>

/* Format the reason into err (when there is room) and return -EINVAL. */
int sb_refuse(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
