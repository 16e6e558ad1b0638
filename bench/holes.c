/* holes: does a run read never-written blocks? `fsvol create` leaves the data
 * areas of file members sparse (holes that read as zeros), and a read of a
 * hole costs the member file nothing, so a benchmark of a fresh volume
 * without a model measures holes. This finds the member ranges under the
 * run's window (layout/ maps it) and asks each member file for holes there
 * (lseek SEEK_HOLE/SEEK_DATA), reading only the superblocks, so it works the
 * same for a volume opened in-process and for MNT/volume. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "fsvol/core/volume.h"

static void widen(uint64_t *mlo, uint64_t *mhi, unsigned m, uint64_t a, uint64_t b)
{
	if (a < mlo[m])
		mlo[m] = a;
	if (b > mhi[m])
		mhi[m] = b;
}

/* One extent of the window at off: every copy's member range; returns how
 * far the window moves (copy 0's extent). */
static uint64_t map_extent(const struct layout_geom *g, uint64_t off, uint64_t hi, uint64_t *mlo, uint64_t *mhi)
{
	struct layout_extent e;
	uint64_t step = 0;
	for (unsigned c = 0; c < layout_copies(g); c++) {
		if (layout_locate(g, off, c, &e))
			continue;
		uint64_t len = e.length < hi - off ? e.length : hi - off;
		widen(mlo, mhi, e.member, e.offset, e.offset + len);
		if (!c)
			step = e.length;
	}
	return step ? step : hi - off;
}

void bench_holes_ranges(const struct layout_geom *g, uint64_t lo, uint64_t hi, uint64_t *mlo, uint64_t *mhi)
{
	for (unsigned i = 0; i < g->members; i++)
		mlo[i] = UINT64_MAX, mhi[i] = 0;
	if (hi > g->capacity)
		hi = g->capacity;
	if (lo >= hi)
		return;
	/* Member offsets grow with the logical offset on every level (within each
	 * copy for raid10 far), and a few rows touch every member, so the extents
	 * at both ends of the window bound each member's range; linear's extents
	 * are whole members, so it is walked through. */
	uint64_t edge = 4ull * g->members * g->chunk, off = lo;
	int walk_all = g->level == LAYOUT_LINEAR || hi - lo <= 2 * edge;
	while (off < hi && (walk_all || off < lo + edge))
		off += map_extent(g, off, hi, mlo, mhi);
	if (!walk_all && off < hi - edge)
		off = hi - edge;
	while (off < hi)
		off += map_extent(g, off, hi, mlo, mhi);
	if (layout_is_parity(g)) {
		/* a stripe sits at one member offset on every member: parity included */
		uint64_t a = UINT64_MAX, b = 0;
		for (unsigned i = 0; i < g->members; i++)
			if (mhi[i])
				widen(&a, &b, 0, mlo[i], mhi[i]);
		a = a / g->chunk * g->chunk;
		b = (b + g->chunk - 1) / g->chunk * g->chunk;
		for (unsigned i = 0; i < g->members && b; i++)
			mlo[i] = a, mhi[i] = b;
	}
}

/* Bytes of holes in [a, b) of fd; 0 where the filesystem cannot tell. */
static uint64_t hole_bytes(int fd, uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	for (unsigned k = 0; a < b && k < 100000; k++) {
		off_t h = lseek(fd, (off_t)a, SEEK_HOLE);
		if (h < 0 || (uint64_t)h >= b)
			break;
		off_t d = lseek(fd, h, SEEK_DATA);
		uint64_t end = d < 0 || (uint64_t)d > b ? b : (uint64_t)d; /* ENXIO: a hole to the end */
		n += end - (uint64_t)h;
		a = end;
	}
	return n;
}

static int read_sb_at(const char *path, struct sb *s, int *fd)
{
	uint8_t buf[SB_SIZE];
	char why[128];
	if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (pread(*fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || sb_decode(buf, sizeof(buf), s, why, sizeof(why))) {
		close(*fd);
		*fd = -1;
		return -EINVAL;
	}
	return 0;
}

int bench_holes_check(char *const *paths, unsigned n, uint64_t lo, uint64_t hi, int writes_only, char *msg,
		      size_t len)
{
	int fd[SB_MAX_SLOTS], have_geom = 0;
	uint64_t doff = 0, mlo[LAYOUT_MAX_MEMBERS], mhi[LAYOUT_MAX_MEMBERS], holes = 0, range = 0;
	struct layout_geom g;
	struct sb s;
	char names[160] = "";
	size_t nl = 0;

	msg[0] = 0;
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		fd[i] = -1;
	for (unsigned i = 0; i < n; i++) {
		struct stat st;
		int f;
		if (stat(paths[i], &st) || !S_ISREG(st.st_mode) || read_sb_at(paths[i], &s, &f))
			continue; /* block devices and the like: no holes to find */
		if (s.index >= SB_MAX_SLOTS || fd[s.index] >= 0) {
			close(f);
			continue;
		}
		fd[s.index] = f;
		if (!have_geom && s.index < s.members && !sb_geom(&s, &g, names, sizeof(names))) {
			have_geom = 1;
			doff = s.data_offset;
		}
	}
	names[0] = 0;
	if (have_geom && (!writes_only || layout_is_parity(&g))) {
		bench_holes_ranges(&g, lo, hi, mlo, mhi);
		for (unsigned m = 0; m < g.members; m++) {
			if (fd[m] < 0 || !mhi[m])
				continue;
			uint64_t h = hole_bytes(fd[m], doff + mlo[m], doff + mhi[m]);
			range += mhi[m] - mlo[m];
			holes += h;
			if (h && nl < sizeof(names) - 8)
				nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%sm%u", nl ? "," : "", m);
		}
	}
	for (unsigned i = 0; i < SB_MAX_SLOTS; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (holes)
		snprintf(msg, len,
			 "%.3g%% of the member blocks under this run's range were never written (holes on %s): "
			 "they read as zeros at no cost, so without a model these figures measure holes, not "
			 "storage; write the volume once first (fsvol-bench sweep does; see docs/commands.md, 'What create "
			 "does to the data areas')",
			 100.0 * (double)holes / (double)range, names);
	return 0;
}

int bench_holes_file(const char *path, uint64_t lo, uint64_t hi, char *msg, size_t len)
{
	struct stat st;
	msg[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && lo < hi) {
		uint64_t h = hole_bytes(fd, lo, hi);
		if (h)
			snprintf(msg, len,
				 "%.3g%% of the range this run reads is holes (never written): they read as zeros "
				 "at no cost, so these figures measure holes, not storage; write the file first "
				 "(a new file made with -c SIZE is written out)",
				 100.0 * (double)h / (double)(hi - lo));
	}
	close(fd);
	return 0;
}

int bench_model_hides(const char *spec)
{
	return spec && *spec && !strstr(spec, "none");
}
