/* fsvol-verify: an independent redundancy checker for the integration tests.
 *
 *   fsvol-verify MEMBER...
 *
 * Reads the superblocks (sb_decode) and takes placement from layout/
 * (layout_init, layout_stripe, layout_locate: unit-tested elsewhere), but
 * recomputes parity with its own byte-wise GF(2^8) arithmetic (poly 0x11d,
 * generator 2, Q = sum g^j * D_j with j md's syndrome order: the data members
 * as met walking from the member after Q, raid5.c's raid6_d0; found here from
 * P, Q and the member count alone, not from layout_stripe's qslot), so a bug
 * in layout/parity.c cannot hide a bug in the engine.
 * raid4/5/6: prints "stripes N, P mismatches N, Q mismatches N".
 * raid1/raid10: prints "chunks N, copy mismatches N" (every copy vs copy 0).
 * Exit 0 when everything matches, 1 on any mismatch, 2 on a usage or I/O error.
 * Build: make build/bin/fsvol-verify */
#include "fsvol/meta/sb.h"
#include "layout/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_BYTES (8u << 20) /* bytes of chunk rows read per member per pass */
#define MAX_REPORTED 10        /* mismatches described on stderr */

struct member {
	const char *path;
	int fd;
	struct sb sb;
};

static struct member slot[LAYOUT_MAX_MEMBERS];
static struct layout_geom geom;
static uint64_t data_offset;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("fsvol-verify: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* x * 2 in GF(2^8) with polynomial x^8+x^4+x^3+x^2+1 (0x11d). */
static inline uint8_t gf_mul2(uint8_t x)
{
	return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1d : 0));
}

static void read_full(const struct member *m, void *buf, uint64_t len, uint64_t moff)
{
	uint64_t done = 0;

	while (done < len) {
		ssize_t r = pread(m->fd, (char *)buf + done, len - done,
				  (off_t)(data_offset + moff + done));
		if (r < 0)
			die("%s: read at data offset %" PRIu64 ": %s", m->path, moff + done,
			    strerror(errno));
		if (r == 0)
			die("%s: short read at data offset %" PRIu64 " (member truncated?)", m->path,
			    moff + done);
		done += (uint64_t)r;
	}
}

static void open_members(int argc, char **argv)
{
	uint8_t buf[SB_SIZE];
	char err[256], u0[37], u1[37];
	int nmemb = argc - 1;
	struct member first = { 0 };

	if (nmemb < 1)
		die("usage: fsvol-verify MEMBER...");
	for (int i = 1; i < argc; i++) {
		struct member m = { .path = argv[i] };
		ssize_t r;

		m.fd = open(argv[i], O_RDONLY);
		if (m.fd < 0)
			die("%s: %s", argv[i], strerror(errno));
		r = pread(m.fd, buf, sizeof(buf), 0);
		if (r != (ssize_t)sizeof(buf))
			die("%s: cannot read the superblock", argv[i]);
		if (sb_decode(buf, sizeof(buf), &m.sb, err, sizeof(err)))
			die("%s: bad superblock: %s", argv[i], err);
		if (i == 1)
			first = m;
		else if (memcmp(m.sb.volume_uuid, first.sb.volume_uuid, 16)) {
			sb_uuid_format(m.sb.volume_uuid, u1);
			sb_uuid_format(first.sb.volume_uuid, u0);
			die("%s: volume %s, not %s (of %s)", argv[i], u1, u0, first.path);
		}
		if (m.sb.index >= m.sb.members || m.sb.members > LAYOUT_MAX_MEMBERS)
			die("%s: slot %" PRIu32 " is not a raid member (spare?)", argv[i], m.sb.index);
		if (slot[m.sb.index].path)
			die("%s: slot %" PRIu32 " already given as %s", argv[i], m.sb.index,
			    slot[m.sb.index].path);
		slot[m.sb.index] = m;
	}

	/* Geometry from the member with the highest event count. */
	const struct sb *ref = NULL;
	for (unsigned i = 0; i < LAYOUT_MAX_MEMBERS; i++)
		if (slot[i].path && (!ref || slot[i].sb.events > ref->events))
			ref = &slot[i].sb;
	for (unsigned i = 0; i < ref->members; i++)
		if (!slot[i].path)
			die("slot %u missing: every member must be given", i);
	memset(&geom, 0, sizeof(geom));
	geom.level = (enum layout_level)ref->level;
	geom.alg = ref->layout;
	geom.copies = ref->copies;
	geom.members = ref->members;
	geom.chunk = ref->chunk;
	for (unsigned i = 0; i < ref->members; i++)
		geom.member_size[i] = ref->slots[i].data_size;
	if (layout_init(&geom, err, sizeof(err)))
		die("geometry: %s", err);
	data_offset = ref->data_offset;
}

/* raid4/5/6: recompute P (and Q) of every stripe from the data chunks. */
static int verify_parity(void)
{
	const unsigned n = geom.members, k = geom.data_members;
	const uint64_t chunk = geom.chunk;
	uint64_t rows = BLOCK_BYTES / chunk ? BLOCK_BYTES / chunk : 1;
	uint64_t pbad = 0, qbad = 0, reported = 0;
	uint8_t *buf[LAYOUT_MAX_MEMBERS];
	uint8_t *p = malloc(chunk), *q = malloc(chunk);

	if (!p || !q)
		die("out of memory");
	for (unsigned m = 0; m < n; m++)
		if (!(buf[m] = malloc(rows * chunk)))
			die("out of memory");

	for (uint64_t s0 = 0; s0 < geom.stripes; s0 += rows) {
		uint64_t nr = geom.stripes - s0 < rows ? geom.stripes - s0 : rows;

		for (unsigned m = 0; m < n; m++)
			read_full(&slot[m], buf[m], nr * chunk, s0 * chunk);
		for (uint64_t r = 0; r < nr; r++) {
			struct layout_stripe st;
			uint64_t at = r * chunk;

			layout_stripe(&geom, s0 + r, &st);
			if (st.member_offset != (s0 + r) * chunk)
				die("stripe %" PRIu64 ": member offset %" PRIu64 ", expected %" PRIu64,
				    s0 + r, st.member_offset, (s0 + r) * chunk);
			/* md's syndrome order: members from the one after Q, P and Q left out */
			unsigned ord[LAYOUT_MAX_MEMBERS], no = 0;
			for (unsigned i = 1; i <= n; i++) {
				unsigned m = st.q < 0 ? i - 1 : ((unsigned)st.q + i) % n;
				if ((int)m != st.p && (int)m != st.q)
					ord[no++] = m;
			}
			if (no != k)
				die("stripe %" PRIu64 ": %u data members, expected %u", s0 + r, no, k);
			/* Horner: Q = (((D[k-1]) * 2 + D[k-2]) * 2 + ...) * 2 + D[0] */
			memset(p, 0, chunk);
			memset(q, 0, chunk);
			for (unsigned j = k; j-- > 0;) {
				const uint8_t *d = buf[ord[j]] + at;
				for (uint64_t b = 0; b < chunk; b++) {
					p[b] ^= d[b];
					q[b] = gf_mul2(q[b]) ^ d[b];
				}
			}
			if (memcmp(p, buf[st.p] + at, chunk)) {
				pbad++;
				if (reported++ < MAX_REPORTED)
					fprintf(stderr, "stripe %" PRIu64 ": P mismatch on member %d (%s) at data offset %" PRIu64 "\n",
						s0 + r, st.p, slot[st.p].path, st.member_offset);
			}
			if (st.q >= 0 && memcmp(q, buf[st.q] + at, chunk)) {
				qbad++;
				if (reported++ < MAX_REPORTED)
					fprintf(stderr, "stripe %" PRIu64 ": Q mismatch on member %d (%s) at data offset %" PRIu64 "\n",
						s0 + r, st.q, slot[st.q].path, st.member_offset);
			}
		}
	}
	printf("stripes %" PRIu64 ", P mismatches %" PRIu64 ", Q mismatches %" PRIu64 "\n",
	       geom.stripes, pbad, qbad);
	for (unsigned m = 0; m < n; m++)
		free(buf[m]);
	free(p);
	free(q);
	return pbad || qbad;
}

/* raid1/raid10: every copy of every chunk equals copy 0. */
static int verify_copies(void)
{
	const unsigned copies = layout_copies(&geom);
	const uint64_t max = BLOCK_BYTES;
	uint8_t *a = malloc(max), *b = malloc(max);
	uint64_t chunks = 0, bad = 0, reported = 0;

	if (!a || !b)
		die("out of memory");
	for (uint64_t off = 0; off < geom.capacity;) {
		struct layout_extent e0;
		uint64_t len;
		int differs = 0;

		if (layout_locate(&geom, off, 0, &e0))
			die("layout_locate(%" PRIu64 ", copy 0) failed", off);
		len = e0.length < max ? e0.length : max;
		read_full(&slot[e0.member], a, len, e0.offset);
		for (unsigned c = 1; c < copies; c++) {
			struct layout_extent e;

			if (layout_locate(&geom, off, c, &e))
				die("layout_locate(%" PRIu64 ", copy %u) failed", off, c);
			if (e.length < len)
				len = e.length;
			read_full(&slot[e.member], b, len, e.offset);
			if (memcmp(a, b, len)) {
				differs = 1;
				if (reported++ < MAX_REPORTED)
					fprintf(stderr, "logical %" PRIu64 "+%" PRIu64 ": copy %u on member %u (%s) at %" PRIu64 " differs from copy 0 on member %u at %" PRIu64 "\n",
						off, len, c, e.member, slot[e.member].path, e.offset,
						e0.member, e0.offset);
			}
		}
		chunks++;
		bad += differs;
		off += len;
	}
	printf("chunks %" PRIu64 ", copy mismatches %" PRIu64 "\n", chunks, bad);
	free(a);
	free(b);
	return bad != 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: fsvol-verify MEMBER...\n"
		       "  recompute parity (raid4/5/6) or compare copies (raid1/10) from member files\n");
		return 0;
	}
	open_members(argc, argv);
	switch (geom.level) {
	case LAYOUT_RAID4:
	case LAYOUT_RAID5:
	case LAYOUT_RAID6:
		return verify_parity();
	case LAYOUT_RAID1:
	case LAYOUT_RAID10:
		return verify_copies();
	default:
		printf("%s has no redundancy to verify\n", layout_level_name(geom.level));
		return 0;
	}
}
