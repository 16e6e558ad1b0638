/* tracefile: workload traces read from files, one in-memory form for all of
 * them (fio iolog v2/v3, blkparse text, SNIA MSR Cambridge CSV, DiskSim ASCII,
 * DiskSim validation traces), so replay and validation share one reader.
 * Loading is all or nothing: a malformed line fails the load with
 * "FILE:LINE: what was expected", before anything is issued. */
#ifndef FSVOL_TRACEFILE_H
#define FSVOL_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tracefile_fmt {
	TRACEFILE_AUTO,     /* detect from the first lines */
	TRACEFILE_FIO2,     /* fio iolog version 2 */
	TRACEFILE_FIO3,     /* fio iolog version 3 (leading timestamp, ms) */
	TRACEFILE_BLKPARSE, /* blkparse's default text output, Q or C events */
	TRACEFILE_MSR,      /* SNIA MSR Cambridge CSV */
	TRACEFILE_DISKSIM,  /* DiskSim ASCII: time_ms devno blkno bcount flags */
	TRACEFILE_VALID,    /* DiskSim validation: R|W Hit|Miss blkno bcount service_us next_us */
	TRACEFILE_FMT_COUNT
};

enum tracefile_op { TRACEFILE_READ, TRACEFILE_WRITE, TRACEFILE_SYNC, TRACEFILE_TRIM };

struct tracefile_rec {
	uint64_t t_ns;       /* issue time, from the trace's first request */
	uint64_t off, len;   /* bytes */
	int64_t service_ns;  /* measured service/response time; -1 when the trace has none */
	uint32_t dev;        /* device or file index as the trace numbers it (0 when one) */
	uint32_t line;       /* source line, for messages */
	uint8_t op;          /* enum tracefile_op */
	uint8_t hit;         /* DiskSim validation: the drive reported a cache hit */
};

struct tracefile {
	enum tracefile_fmt fmt;
	struct tracefile_rec *rec;
	size_t n, cap;
	uint64_t max_end;    /* highest off + len: what the trace addresses */
};

/* Load PATH in format FMT (TRACEFILE_AUTO detects); 0 or -errno with ERR set. */
int tracefile_load(const char *path, enum tracefile_fmt fmt, struct tracefile *out,
		   char *err, size_t errlen);
void tracefile_free(struct tracefile *t);
const char *tracefile_fmt_name(enum tracefile_fmt fmt);
/* "fio", "fio2", "fio3", "blkparse", "msr", "disksim", "valid"; -EINVAL if unknown. */
int tracefile_fmt_parse(const char *name, enum tracefile_fmt *out);

/* Per-format parsers over an open stream (tracefile_load dispatches to them).
 * PATH only names the file in messages. Each appends to OUT. */
int tracefile_parse_valid(const char *path, FILE *f, struct tracefile *out,
			  char *err, size_t errlen);
/* Append one record (grows the array); -ENOMEM. */
int tracefile_push(struct tracefile *t, const struct tracefile_rec *r);

#endif
