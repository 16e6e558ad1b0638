/* size: parse and print byte counts with binary suffixes. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsvol/util/size.h"

int size_parse(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	/* decimal, or hex with 0x (as fio); never octal: "010" is ten */
	int base = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case 'b': case 'B': break;
	default: return -EINVAL;
	}
	if (*end) {
		end++;
		/* accept "64K", "64KB", "64KiB" */
		if ((*end == 'i' || *end == 'I') && shift)
			end++;
		if ((*end == 'b' || *end == 'B') && shift)
			end++;
		if (*end)
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

void size_format(uint64_t b, char *out, size_t len)
{
	static const char unit[] = "KMGTP";
	int i = -1;
	while (b >= 1024 && b % 1024 == 0 && i < 4) {
		b /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(out, len, "%llu", (unsigned long long)b);
	else
		snprintf(out, len, "%llu%c", (unsigned long long)b, unit[i]);
}
