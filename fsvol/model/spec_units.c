/* spec_units: numbers with units in a model spec (times, sizes, rates), read
 * locale-free and exactly as docs/model.md writes them. */
#include "fsvol/model/spec_units.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

/* Unsigned decimal "12", "4.5", ".5"; locale-free, no sign, exponent, hex, inf. */
static int parse_num(const char *s, double *v, const char **end)
{
	double x = 0, scale = 1;
	int digits = 0;
	while (isdigit((unsigned char)*s)) {
		x = x * 10 + (*s++ - '0');
		digits++;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			scale /= 10;
			x += (*s++ - '0') * scale;
			digits++;
		}
	}
	if (!digits || x > 1.8e19)
		return -EINVAL;
	*v = x;
	*end = s;
	return 0;
}

/* A bare number and nothing else. */
int spec_parse_plain(const char *s, double *v)
{
	const char *e;
	return parse_num(s, v, &e) || *e ? -EINVAL : 0;
}

/* A number followed by one of the units (exact match); bare "0" needs none;
 * bare numbers use bare_mult when it is non-zero. */
int spec_parse_unit(const char *s, const struct spec_unit *u, double bare_mult, double *out)
{
	double v;
	const char *e;
	if (parse_num(s, &v, &e))
		return -EINVAL;
	if (!*e) {
		if (bare_mult == 0 && v != 0)
			return -EINVAL;
		*out = v * (bare_mult ? bare_mult : 1);
		return 0;
	}
	for (; u->name; u++)
		if (!strcmp(e, u->name)) {
			*out = v * u->mult;
			return 0;
		}
	return -EINVAL;
}

const struct spec_unit spec_time_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { NULL, 0 } };
const struct spec_unit spec_size_units[] = {
	{ "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 }, { "T", 1099511627776.0 },
	{ "k", 1024.0 }, { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
	{ "B", 1 }, { NULL, 0 } };
/* Rates follow data sheets: MB/s is 10^6 bytes/s; MiB/s is 2^20. */
const struct spec_unit spec_rate_units[] = {
	{ "B/s", 1 }, { "KB/s", 1e3 }, { "kB/s", 1e3 }, { "MB/s", 1e6 }, { "GB/s", 1e9 },
	{ "KiB/s", 1024.0 }, { "MiB/s", 1048576.0 }, { "GiB/s", 1073741824.0 }, { NULL, 0 } };
