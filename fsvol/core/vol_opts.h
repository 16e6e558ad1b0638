/* vol_opts: struct vol_opts from words (the CLI's option values and the NBD
 * plugin's key=value configuration share these parsers). */
#ifndef FSVOL_VOL_OPTS_H
#define FSVOL_VOL_OPTS_H

#include <stddef.h>
#include <stdint.h>

enum vol_read_policy {
	VOL_READ_DEFAULT,    /* md: stay on a sequential stream, else fewest pending, else nearest head */
	VOL_READ_ROUNDROBIN, /* gmirror round-robin */
	VOL_READ_PREFER,     /* prefer:N, then the default */
	VOL_READ_SPLIT,      /* split:SIZE: larger requests are split over the copies */
};

enum vol_stats_level { VOL_STATS_OFF, VOL_STATS_VOLUME, VOL_STATS_ALL };

struct vol_opts {
	int buffered;          /* members without O_DIRECT */
	int force;             /* assemble stale/unreadable members as missing; take back beyond redundancy */
	enum vol_read_policy read_policy;
	unsigned prefer;       /* VOL_READ_PREFER */
	uint64_t split;        /* VOL_READ_SPLIT */
	enum vol_stats_level stats;
	int readonly;          /* examine-like opens: never write superblocks */
	const char *model;     /* spindle model spec (fsvol mount --model), NULL = none */
	int virtual_time;      /* the model's clock is virtual: vol_run drives it (in-process only) */
	int journal_write_back; /* a write journal starts in md's write-back mode (--journal-mode) */
};


/* "md", "round-robin", "prefer:N", "split:SIZE" (a multiple of 4K). 0 or -EINVAL. */
int vol_opts_parse_policy(const char *s, struct vol_opts *o);
/* "all", "volume", "off". 0 or -EINVAL. */
int vol_opts_parse_stats(const char *s, struct vol_opts *o);
/* One key=value: buffered, force (any value), read-policy, stats, model.
 * 0, or -EINVAL with a message naming the key in err. */
int vol_opts_set(struct vol_opts *o, const char *key, const char *value, char *err, size_t errlen);

#endif
