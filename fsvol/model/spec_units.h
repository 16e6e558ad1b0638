/* spec_units: numbers with units in a model spec (spindle_spec.c's keys,
 * adapter specs). */
#ifndef FSVOL_MODEL_SPEC_UNITS_H
#define FSVOL_MODEL_SPEC_UNITS_H

struct spec_unit {
	const char *name;
	double mult;
};

/* ns, us, ms, s; bytes with K, M, G, T (powers of 1024); rates as data sheets
 * write them (MB/s is 10^6 bytes/s, MiB/s 2^20). NULL-terminated. */
extern const struct spec_unit spec_time_units[], spec_size_units[], spec_rate_units[];

/* A bare unsigned decimal ("12", "4.5", ".5") and nothing else. 0 or -EINVAL. */
int spec_parse_plain(const char *s, double *v);
/* A number followed by one of the units (exact match); bare "0" needs none;
 * bare numbers use bare_mult when it is non-zero. 0 or -EINVAL. */
int spec_parse_unit(const char *s, const struct spec_unit *u, double bare_mult, double *out);

#endif
