/* fuzz_ctl: what a write to MNT/ctl may carry (any bytes, any length) through
 * the command parser; a parsed command is well formed. */
#include <errno.h>

#include "fsvol/front/ctl.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so ASan sees any read past them */
	char *buf = malloc(size ? size : 1), err[256];
	static struct ctl_cmd c;
	if (!buf)
		abort();
	memcpy(buf, data, size);
	err[0] = 0;
	int r = ctl_parse(buf, size, &c, err, sizeof(err));
	FUZZ_ASSERT(r == 0 || r == -EINVAL);
	if (r) {
		FUZZ_ASSERT(err[0] != 0); /* every refusal says why */
	} else {
		FUZZ_ASSERT(memchr(buf, 0, size) == NULL);
		FUZZ_ASSERT(memchr(c.arg, 0, sizeof(c.arg)) != NULL);
		FUZZ_ASSERT(memchr(c.arg2, 0, sizeof(c.arg2)) != NULL);
		FUZZ_ASSERT(c.verb <= CTL_LAST_VERB);
		if (c.verb == CTL_FAIL || c.verb == CTL_ERROR || c.verb == CTL_FAULT ||
		    c.verb == CTL_REMOVE)
			FUZZ_ASSERT(c.index < SB_MAX_SLOTS || c.index == CTL_NO_INDEX);
		if (c.verb == CTL_MODEL || c.verb == CTL_ADD || c.verb == CTL_READD || c.verb == CTL_REPLACE ||
		    c.verb == CTL_GROW || c.verb == CTL_JOURNAL_MODE)
			FUZZ_ASSERT(c.arg[0] != 0);
		if (c.verb == CTL_FAULT)
			FUZZ_ASSERT(c.arg2[0] != 0);
		if (c.verb == CTL_SPEED_MIN || c.verb == CTL_SPEED_MAX)
			FUZZ_ASSERT(c.number >= 1 && c.number <= 100000000);
	}
	free(buf);
	return 0;
}
