/* fault_spec: the --fault / ctl `fault N SPEC` language (docs/faults.md), parsed
 * once and handed to each filter of a member's stack (fault, delay, cache),
 * which takes its own keys. */
#ifndef FSVOL_FAULT_SPEC_H
#define FSVOL_FAULT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define FAULT_MAX_BAD 16
#define FAULT_CACHE_DEFAULT (8ull << 20)

enum { FAULT_READ = 1, FAULT_WRITE = 2 };

struct fault_spec {
	/* the fault filter */
	int error_ops;             /* FAULT_READ | FAULT_WRITE, 0: none */
	double rate;
	uint64_t after;
	int err;                   /* positive errno */
	unsigned nbad;
	struct { uint64_t off, len; int sticky; } bad[FAULT_MAX_BAD]; /* sticky (badw=): writes fail too */
	uint64_t up, down;         /* flaky periods, 0: not flaky */
	int flaky_io;              /* periods counted in I/Os, not ns */
	double corrupt;
	uint64_t seed;
	/* the delay filter */
	uint64_t rdelay_ns, wdelay_ns;
	/* the cache filter */
	int cache;                 /* 1: volatile write-back cache */
	uint64_t cache_size;
	int powercut;              /* (describe only) the power is off */
};

/* Parse spec ("none" or KEY=VALUE,...). 0, or -EINVAL naming the key in err. */
int fault_spec_parse(const char *spec, struct fault_spec *s, char *err, size_t errlen);
/* The canonical spec ("none" when nothing is set). */
void fault_spec_format(const struct fault_spec *s, char *buf, size_t len);

#endif
