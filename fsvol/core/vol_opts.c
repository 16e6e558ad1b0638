/* vol_opts: parse the words that set a volume's options. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/vol_opts.h"
#include "fsvol/meta/sb.h"
#include "fsvol/util/size.h"

int vol_opts_parse_policy(const char *s, struct vol_opts *o)
{
	char *end;
	if (!strcmp(s, "md") || !strcmp(s, "default")) {
		o->read_policy = VOL_READ_DEFAULT;
	} else if (!strcmp(s, "round-robin") || !strcmp(s, "rr")) {
		o->read_policy = VOL_READ_ROUNDROBIN;
	} else if (!strncmp(s, "prefer:", 7)) {
		unsigned long n = strtoul(s + 7, &end, 10);
		if (!s[7] || *end || n >= SB_MAX_SLOTS)
			return -EINVAL;
		o->read_policy = VOL_READ_PREFER;
		o->prefer = (unsigned)n;
	} else if (!strncmp(s, "split:", 6)) {
		uint64_t split;
		if (size_parse(s + 6, &split) || split < 4096 || split % 4096)
			return -EINVAL; /* a refusal changes nothing */
		o->read_policy = VOL_READ_SPLIT;
		o->split = split;
	} else {
		return -EINVAL;
	}
	return 0;
}

int vol_opts_parse_stats(const char *s, struct vol_opts *o)
{
	if (!strcmp(s, "all"))
		o->stats = VOL_STATS_ALL;
	else if (!strcmp(s, "volume"))
		o->stats = VOL_STATS_VOLUME;
	else if (!strcmp(s, "off"))
		o->stats = VOL_STATS_OFF;
	else
		return -EINVAL;
	return 0;
}

int vol_opts_set(struct vol_opts *o, const char *key, const char *value, char *err, size_t errlen)
{
	if (!strcmp(key, "buffered")) {
		o->buffered = 1;
	} else if (!strcmp(key, "force")) {
		o->force = 1;
	} else if (!strcmp(key, "model")) {
		o->model = value;
	} else if (!strcmp(key, "read-policy")) {
		if (vol_opts_parse_policy(value, o)) {
			snprintf(err, errlen, "read-policy %s: expected md, round-robin, prefer:N or split:SIZE (a multiple of 4K)", value);
			return -EINVAL;
		}
	} else if (!strcmp(key, "stats")) {
		if (vol_opts_parse_stats(value, o)) {
			snprintf(err, errlen, "stats %s: expected all, volume or off", value);
			return -EINVAL;
		}
	} else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -EINVAL;
	}
	return 0;
}
