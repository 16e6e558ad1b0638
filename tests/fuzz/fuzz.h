/* fuzz.h: shared by the libFuzzer targets in tests/fuzz/ (one parser each).
 *   make fuzz FUZZ_SECONDS=600     long runs     make fuzz-check   bounded (make check)
 * A violated property aborts, so libFuzzer saves the input as a crash. */
#ifndef FSVOL_FUZZ_H
#define FSVOL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* The input as a NUL-terminated string (malloc'd, so ASan sees overreads);
 * bytes after an embedded NUL are cut, as a C caller would see them. */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Where renderers print: they must cope with any decoded value. */
static inline FILE *fuzz_null(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	return f;
}

#endif
