/* version: the one version string of fsvol and fsvol-bench (--version, the
 * man pages), and the --version text. */
#ifndef FSVOL_VERSION_H
#define FSVOL_VERSION_H

#include <stdio.h>

#define FSVOL_VERSION "0.1.0"

/* "PROG VERSION", then the kernel sets this CPU runs:
 * "parity: avx512+gfni, crc32c: avx512+vpclmulqdq" (docs/parity.md) */
void version_print(FILE *f, const char *prog);

#endif
