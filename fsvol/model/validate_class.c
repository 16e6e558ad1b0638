/* validate_class: where a validation run's error comes from, per request class
 * (cache hit, sequential, short and long seek, write; see validate.h). */
#include <stdlib.h>

#include "fsvol/model/validate.h"

const char *const validate_class_name[VALIDATE_CLASSES] = {
	"hit", "sequential", "short seek", "long seek", "write",
};

void validate_classify(const struct spindle_params *p, const struct tracefile *t,
		       const unsigned char *hit, unsigned char *cls)
{
	static struct spindle sp; /* large: not on the stack */
	uint64_t disk = p->capacity_bytes ? p->capacity_bytes : t->max_end;
	spindle_init(&sp, p, disk);
	uint64_t third = sp.cylinders / 3, prev_end = 0, prev_cyl = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tracefile_rec *r = &t->rec[i];
		uint64_t cyl = spindle_cylinder(&sp, r->off < disk ? r->off : disk - 1);
		uint64_t d = cyl > prev_cyl ? cyl - prev_cyl : prev_cyl - cyl;
		if (r->op == TRACEFILE_WRITE)
			cls[i] = VALIDATE_WRITE;
		else if (hit[i])
			cls[i] = VALIDATE_HIT;
		else if (i && r->off == prev_end)
			cls[i] = VALIDATE_SEQ;
		else
			cls[i] = d <= third ? VALIDATE_SHORT : VALIDATE_LONG;
		prev_end = r->off + r->len;
		prev_cyl = spindle_cylinder(&sp, prev_end - 1 < disk ? prev_end - 1 : disk - 1);
	}
}

void validate_classes(FILE *f, const unsigned char *cls, const double *a_ms, const double *b_ms,
		      size_t n)
{
	double *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	fprintf(f, "by class (ms):     %7s %9s %9s %9s\n", "n", "measured", "emulated", "rms");
	for (unsigned k = 0; k < VALIDATE_CLASSES; k++) {
		size_t m = 0;
		double sa = 0, sb = 0;
		for (size_t i = 0; i < n; i++)
			if (cls[i] == k) {
				a[m] = a_ms[i];
				b[m++] = b_ms[i];
				sa += a_ms[i];
				sb += b_ms[i];
			}
		if (!m)
			continue;
		fprintf(f, "  %-16s %7zu %9.3f %9.3f %9.3f\n", validate_class_name[k], m,
			sa / (double)m, sb / (double)m, validate_rms(a, m, b, m));
	}
	free(a);
	free(b);
}
