/* validate: replay a DiskSim validation trace on one emulated drive in virtual
 * time and compare the service times with the drive's measured ones, as
 * DiskSim's validation runs and its `rms` tool do. */
#ifndef FSVOL_VALIDATE_H
#define FSVOL_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fsvol/model/spindle.h"
#include "fsvol/trace/tracefile.h"

/* Replay t on one drive of p (the member is the whole disk): request i+1 is
 * issued at the emulated completion of request i plus the idle gap the trace
 * recorded after it, so at most one is outstanding. emul_ns[i] gets request
 * i's emulated service time (issue to completion). 0 or -errno with err set
 * (a request beyond the disk, out of memory). */
int validate_run(const struct spindle_params *p, const struct tracefile *t, uint64_t *emul_ns,
		 char *err, size_t errlen);

/* The same; hit[i] (when not NULL) gets 1 where the model served read i
 * from its cache. */
int validate_run_hits(const struct spindle_params *p, const struct tracefile *t,
		      uint64_t *emul_ns, unsigned char *hit, char *err, size_t errlen);

/* The naive model's service times for t (the baseline of docs/validation.md):
 * every request costs the drive's mean random seek + half a revolution + its
 * transfer at the mean media rate, no cache, no queue, no overheads. */
void validate_naive(const struct spindle_params *p, const struct tracefile *t, uint64_t *emul_ns);

/* DiskSim's rms: both samples (ms) binned as its "access time" distributions
 * (statdefs: 1750 buckets, 1 us wide growing by 1% of their start), each a CDF
 * printed at 6 decimals, then the RMS of the horizontal distance between them
 * sampled at every 0.0001 of probability, linear between bucket edges. */
double validate_rms(const double *a_ms, size_t na, const double *b_ms, size_t nb);

/* Mean, p50, p90 of n values (sorts a copy); 0 or -ENOMEM. */
int validate_summary(const double *v, size_t n, double *mean, double *p50, double *p90);

/* Request classes of the per-class breakdown (validate_classes). */
enum validate_class {
	VALIDATE_HIT,        /* a read the model served from its cache */
	VALIDATE_SEQ,        /* a read miss starting where the previous request ended */
	VALIDATE_SHORT,      /* another read miss within a third of the stroke */
	VALIDATE_LONG,       /* a read miss further away */
	VALIDATE_WRITE,
	VALIDATE_CLASSES
};
extern const char *const validate_class_name[VALIDATE_CLASSES];

/* The class of each request of t on p's drive (hit[] from validate_run_hits;
 * cylinder distance from the end of the previous request, by p's geometry)
 * into cls[t->n]. */
void validate_classify(const struct spindle_params *p, const struct tracefile *t,
		       const unsigned char *hit, unsigned char *cls);

/* Print per class: requests, measured and emulated mean (ms), and the rms
 * between the class's measured and emulated distributions. */
void validate_classes(FILE *f, const unsigned char *cls, const double *a_ms, const double *b_ms,
		      size_t n);

#endif
