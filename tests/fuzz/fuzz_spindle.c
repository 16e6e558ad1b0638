/* fuzz_spindle: model specs (fsvol mount --model, ctl model) through
 * spindle_parse and spindle_parse_multi. What parses, formats to a spec that
 * parses to the same text again, and a model can be built from it. The first
 * byte is the member count for the multi form. */
#include "fsvol/model/spindle.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MEMBERS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct spindle_params p, q, multi[FUZZ_MEMBERS];
	static struct spindle sp;
	static char f1[8192], f2[8192];
	char err[512];
	if (size < 1)
		return 0;
	unsigned members = data[0] % FUZZ_MEMBERS + 1;
	char *s = fuzz_str(data + 1, size - 1);
	if (spindle_parse(s, &p, err, sizeof(err)) == 0) {
		int n = spindle_format(&p, f1, sizeof(f1));
		FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(f1));
		if (spindle_parse(f1, &q, err, sizeof(err)) != 0) {
			fprintf(stderr, "spec '%s' formats to '%s', which does not parse: %s\n", s, f1, err);
			abort();
		}
		spindle_format(&q, f2, sizeof(f2));
		if (strcmp(f1, f2)) {
			fprintf(stderr, "'%s' -> '%s' -> '%s'\n", s, f1, f2);
			abort();
		}
		spindle_describe(&p, fuzz_null());
		spindle_show(&p, 1ull << 30, fuzz_null());
		spindle_init(&sp, &p, 1ull << 30);
	} else {
		FUZZ_ASSERT(err[0] != 0);
	}
	if (spindle_parse_multi(s, members, multi, err, sizeof(err)) == 0) {
		for (unsigned i = 0; i < members; i++) {
			int n = spindle_format(&multi[i], f1, sizeof(f1));
			FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(f1));
			FUZZ_ASSERT(spindle_parse(f1, &q, err, sizeof(err)) == 0);
		}
	}
	free(s);
	return 0;
}
