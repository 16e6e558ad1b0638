/* version: the --version text of fsvol and fsvol-bench. */
#include "fsvol/util/version.h"

#include "fsvol/util/crc32c.h"
#include "layout/parity.h"

void version_print(FILE *f, const char *prog)
{
	fprintf(f, "%s %s\nparity: %s, crc32c: %s\n", prog, FSVOL_VERSION, parity_isa(),
		crc32c_isa());
}
