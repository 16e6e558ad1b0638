/* vol_opts: struct vol_opts from words (the CLI's option values and the NBD
 * plugin's key=value configuration share these parsers). */
#ifndef FSVOL_VOL_OPTS_H
#define FSVOL_VOL_OPTS_H

#include <stddef.h>

#include "fsvol/core/volume.h"

/* "md", "round-robin", "prefer:N", "split:SIZE" (a multiple of 4K). 0 or -EINVAL. */
int vol_opts_parse_policy(const char *s, struct vol_opts *o);
/* "all", "volume", "off". 0 or -EINVAL. */
int vol_opts_parse_stats(const char *s, struct vol_opts *o);
/* One key=value: buffered, force (any value), read-policy, stats, model.
 * 0, or -EINVAL with a message naming the key in err. */
int vol_opts_set(struct vol_opts *o, const char *key, const char *value, char *err, size_t errlen);

#endif
