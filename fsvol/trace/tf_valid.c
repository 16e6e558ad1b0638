/* tf_valid: DiskSim validation traces, one request per line as DiskSim's
 * "validate" trace format reads them:
 *
 *   R|W  Hit|Miss|Doub|Trip  blkno  bcount  service_us  next_interarrival_us
 *
 * blkno and bcount in 512-byte blocks; service_us is the drive's measured
 * service time; next_interarrival_us is the idle time from this request's
 * completion to the next request's issue (one request outstanding). So the
 * recorded issue times are t[i+1] = t[i] + service[i] + next[i]; the replay
 * gets the gap back as t[i+1] - t[i] - service[i]. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

#define VALID_EXPECT "expected 'R|W Hit|Miss|Doub|Trip blkno bcount service_us next_interarrival_us'"

/* A non-negative decimal in microseconds ("14095.370"), to whole ns. */
static int us_to_ns(const char *s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 1000;
	int digits = 0;
	for (; isdigit((unsigned char)*s); s++, digits++) {
		if (whole > UINT64_MAX / 10000)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++, digits++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			}
	if (!digits || *s)
		return -EINVAL;
	*ns = whole * 1000 + frac;
	return 0;
}

static int to_u64(const char *s, uint64_t *v)
{
	char *e;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 10);
	if (*e || errno)
		return -EINVAL;
	*v = x;
	return 0;
}

/* "R Hit 1975456 4 15362.00000 56074.00000" */
static int looks_valid(const char *s)
{
	s = tf_skip(s);
	if ((*s != 'R' && *s != 'W') || (s[1] != ' ' && s[1] != '\t'))
		return 0;
	s = tf_skip(s + 1);
	return !strncmp(s, "Hit", 3) || !strncmp(s, "Miss", 4);
}

int tracefile_parse_valid(const char *path, FILE *f, struct tracefile *out,
			  char *err, size_t errlen)
{
	char line[512];
	uint32_t lineno = 0;
	uint64_t t = 0;
	int have_prev = 0;
	out->fmt = TRACEFILE_VALID;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long; " VALID_EXPECT, path, lineno);
			return -EINVAL;
		}
		char *tok[7], *save = NULL;
		int n = 0;
		for (char *p = strtok_r(line, " \t\r\n", &save); p && n < 7;
		     p = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = p;
		if (n == 0)
			continue; /* blank line */
		uint64_t blk, cnt, svc, next;
		const char *why = NULL;
		if (n != 6)
			why = n < 6 ? "too few fields" : "too many fields";
		else if (strcmp(tok[0], "R") && strcmp(tok[0], "W"))
			why = "the first field is R or W";
		else if (strcmp(tok[1], "Hit") && strcmp(tok[1], "Miss") && strcmp(tok[1], "Doub") &&
			 strcmp(tok[1], "Trip"))
			why = "the second field is Hit, Miss, Doub or Trip";
		else if (to_u64(tok[2], &blk) || blk > (UINT64_MAX >> 10))
			why = "blkno is a block number";
		else if (to_u64(tok[3], &cnt) || cnt == 0 || cnt > (1u << 22))
			why = "bcount is a block count > 0";
		else if (us_to_ns(tok[4], &svc))
			why = "service_us is a time in microseconds";
		else if (us_to_ns(tok[5], &next))
			why = "next_interarrival_us is a time in microseconds";
		if (why) {
			snprintf(err, errlen, "%s:%u: %s; " VALID_EXPECT, path, lineno, why);
			return -EINVAL;
		}
		struct tracefile_rec r = {
			.t_ns = t, .off = blk * 512, .len = cnt * 512, .service_ns = (int64_t)svc,
			.dev = 0, .line = lineno, .op = tok[0][0] == 'R' ? TRACEFILE_READ : TRACEFILE_WRITE,
			.hit = !strcmp(tok[1], "Hit"),
		};
		int rc = tracefile_push(out, &r);
		if (rc) {
			snprintf(err, errlen, "%s:%u: out of memory", path, lineno);
			return rc;
		}
		t += svc + next; /* the next request's issue time */
		have_prev = 1;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	if (!have_prev) {
		snprintf(err, errlen, "%s: no requests; " VALID_EXPECT, path);
		return -EINVAL;
	}
	return 0;
}

const struct tf_format tf_format_valid = {
	.fmt = TRACEFILE_VALID, .name = "valid", .looks = looks_valid, .parse = tracefile_parse_valid,
};
