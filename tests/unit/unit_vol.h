/* unit_vol: what the unit tests on a whole volume share: a fresh volume
 * of memory members (mkvol, mkvol_alg), seeded data (fill) and a fault spec set on a
 * slot (set_fault), each failing the test on error. Include once, after
 * <check.h>. */
#ifndef FSVOL_TESTS_UNIT_VOL_H
#define FSVOL_TESTS_UNIT_VOL_H

#include <stdio.h>
#include <string.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/members/fault.h"

#define K 1024ull
#define MEMBER_SIZE (9 * 1024 * K) /* 1 MiB superblock area + 8 MiB data */

static unsigned vol_serial;

/* A fresh volume of n memory members (alg: NULL for the level's default). */
static inline struct vol *mkvol_alg(const char *level, const char *alg, unsigned n, uint64_t chunk)
{
	char names[16][64], *paths[16], err[512];
	struct vol_create c = { 0 };
	struct vol *v = NULL;
	ck_assert(layout_parse_level_msg(level, &c.geom.level, err, sizeof(err)) == 0);
	c.geom.alg = layout_default_alg(c.geom.level);
	if (alg)
		ck_assert_msg(layout_parse_alg_msg(c.geom.level, alg, &c.geom.alg, &c.geom.copies, err, sizeof(err)) == 0,
			      "%s", err);
	c.geom.chunk = chunk;
	vol_serial++;
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "mem:t%u_%u:%llu", vol_serial, i, (unsigned long long)MEMBER_SIZE);
		paths[i] = names[i];
	}
	int r = vol_create(&c, paths, n, err, sizeof(err));
	ck_assert_msg(r == 0, "create %s: %s", level, err);
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	r = vol_open(&v, paths, n, &o, err, sizeof(err));
	ck_assert_msg(r == 0, "open %s: %s", level, err);
	ck_assert_int_eq(vol_start(v), 0);
	return v;
}

static inline struct vol *mkvol(const char *level, unsigned n, uint64_t chunk)
{
	return mkvol_alg(level, NULL, n, chunk);
}

static inline void fill(uint8_t *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(seed >> 56);
	}
}

static inline int set_fault(struct vol *v, unsigned slot, const char *spec)
{
	char err[256];
	int r = member_fault_set(v->slot[slot], spec, err, sizeof(err));
	ck_assert_msg(r == 0, "%s: %s", spec, err);
	return r;
}

#endif
