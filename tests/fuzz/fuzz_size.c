/* fuzz_size: size_parse on any string; what it accepts, size_format prints and
 * size_parse reads back (below 1P: P is not an input suffix). */
#include <errno.h>

#include "fsvol/util/size.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), buf[32];
	uint64_t v = 7, back = 0;
	int r = size_parse(s, &v);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r)
		FUZZ_ASSERT(v == 7); /* untouched on error */
	if (r == 0 && v < (1ull << 50)) {
		size_format(v, buf, sizeof(buf));
		FUZZ_ASSERT(size_parse(buf, &back) == 0 && back == v);
	}
	/* any 64-bit value formats within the buffer */
	if (size >= 8) {
		memcpy(&v, data, 8);
		size_format(v, buf, sizeof(buf));
		FUZZ_ASSERT(strlen(buf) < sizeof(buf));
	}
	free(s);
	return 0;
}
