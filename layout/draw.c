/* layout_draw: the teaching picture. Every cell comes from layout_unmap, so
 * the drawing shows exactly what the mapping does:
 *
 *   raid5 left-symmetric (md layout 2), 4 members, chunk 64K, 3 data + 1 parity per stripe
 *   stripe  offset     m0    m1    m2    m3
 *        0       0     D0    D1    D2     P
 *        1     64K     D4    D5     P    D3
 */
#include "layout/layout_int.h"

#include <errno.h>
#include <string.h>

static const char *const r10_words[] = { "near", "far", "offset" };

/* cell text for member m at chunk row `row` */
static void cell(const struct layout_geom *g, unsigned m, uint64_t row, char *buf, size_t len)
{
	uint64_t logical;
	unsigned copy;
	int r = layout_unmap(g, m, row * g->chunk, &logical, &copy);

	if (r == LAYOUT_P)
		snprintf(buf, len, "P");
	else if (r == LAYOUT_Q)
		snprintf(buf, len, "Q");
	else if (r < 0)
		snprintf(buf, len, "-");
	else if (g->level == LAYOUT_RAID10)
		/* copy marks: D3 D3' D3'' ... (capped, the number says the rest) */
		snprintf(buf, len, "D%llu%.*s", (unsigned long long)(logical / g->chunk),
			 (int)(copy < 8 ? copy : 8), "''''''''");
	else
		snprintf(buf, len, "D%llu", (unsigned long long)(logical / g->chunk));
}

static void header(FILE *f, const struct layout_geom *g)
{
	char ch[32], cap[48], bytes[32];
	unsigned n = g->members;

	layout_fmt_size(g->chunk, 1, ch, sizeof(ch));
	layout_fmt_size(g->capacity, 1, bytes, sizeof(bytes));
	snprintf(cap, sizeof(cap), "capacity %s", bytes);
	switch (g->level) {
	case LAYOUT_SINGLE:
		fprintf(f, "single, 1 member, %s (identity: volume offset = member offset)\n", cap);
		break;
	case LAYOUT_LINEAR:
		fprintf(f, "linear, %u member%s, %s (members concatenated in order)\n", n,
			n == 1 ? "" : "s", cap);
		break;
	case LAYOUT_RAID0:
		fprintf(f, "raid0, %u member%s, chunk %s, %u data chunk%s per stripe, %s\n", n,
			n == 1 ? "" : "s", ch, n, n == 1 ? "" : "s", cap);
		break;
	case LAYOUT_RAID1:
		fprintf(f, "raid1, %u members, %u copies, chunk %s, %s\n", n, n, ch, cap);
		break;
	case LAYOUT_RAID10:
		fprintf(f, "raid10 %s (%s, %u copies, md layout 0x%x), %u members, chunk %s, %s\n",
			layout_alg_name(g), r10_words[g->alg], g->copies, layout_r10_md_layout(g), n,
			ch, cap);
		break;
	case LAYOUT_RAID4:
		fprintf(f, "raid4 (parity on the last member), %u members, chunk %s, "
			"%u data + 1 parity per stripe, %s\n", n, ch, g->data_members, cap);
		break;
	case LAYOUT_RAID5:
		fprintf(f, "raid5 %s (md layout %u), %u members, chunk %s, "
			"%u data + 1 parity per stripe, %s\n",
			layout_alg_name(g), g->alg, n, ch, g->data_members, cap);
		break;
	case LAYOUT_RAID6:
		fprintf(f, "raid6 %s (md layout %u), %u members, chunk %s, "
			"%u data + P + Q per stripe, %s\n",
			layout_alg_name(g), g->alg, n, ch, g->data_members, cap);
		break;
	}
}

static void legend(FILE *f, const struct layout_geom *g)
{
	char ch[32];

	layout_fmt_size(g->chunk, 1, ch, sizeof(ch));
	fprintf(f, "Dk = volume chunk k (bytes k*%s up to (k+1)*%s)", ch, ch);
	switch (g->level) {
	case LAYOUT_RAID1:
		fprintf(f, "; every member holds every chunk\n");
		break;
	case LAYOUT_RAID10:
		fprintf(f, "; Dk' = 2nd copy of Dk, Dk'' = 3rd ...; - = unused\n");
		break;
	case LAYOUT_RAID4:
	case LAYOUT_RAID5:
		fprintf(f, "; P = XOR of the stripe's data chunks\n");
		break;
	case LAYOUT_RAID6:
		fprintf(f, "; P = XOR, Q = GF(2^8) syndrome sum 2^j*Dj (j = data index)\n");
		break;
	case LAYOUT_RAID0:
		fprintf(f, "; no redundancy: losing any member loses data\n");
		break;
	default:
		fprintf(f, "\n");
		break;
	}
	if (layout_is_parity(g))
		fprintf(f, "each stripe's chunks sit at the same member offset; data index j = "
			"j-th D of the stripe in volume order\n");
}

static void linear_table(FILE *f, const struct layout_geom *g)
{
	uint64_t base = 0;
	char a[32], b[32], c[32];

	fprintf(f, "member  %14s  %14s  %10s\n", "volume start", "volume end", "size");
	for (unsigned i = 0; i < g->members; i++) {
		uint64_t sz = g->member_size[i] & ~(uint64_t)(LAYOUT_LINEAR_UNIT - 1);
		fprintf(f, "m%-6u  %14s  %14s  %10s\n", i, layout_fmt_size(base, 1, a, sizeof(a)),
			layout_fmt_size(base + sz, 1, b, sizeof(b)), layout_fmt_size(sz, 1, c, sizeof(c)));
		base += sz;
	}
	fprintf(f, "volume offset x on member i is at member offset x - (volume start of i)\n");
}

static void grid_row(FILE *f, const struct layout_geom *g, uint64_t row, int w)
{
	char off[32], buf[48];

	fprintf(f, "%6llu  %8s ", (unsigned long long)row,
		layout_fmt_size(row * g->chunk, 1, off, sizeof(off)));
	for (unsigned m = 0; m < g->members; m++) {
		cell(g, m, row, buf, sizeof(buf));
		fprintf(f, "%*s", w, buf);
	}
	fputc('\n', f);
}

void layout_draw(FILE *f, const struct layout_geom *g, unsigned rows)
{
	unsigned n = g->members, k = layout_copies(g);
	uint64_t nrows = g->stripes, sect = 0, nsect = 1;
	char buf[48];
	int w = 4;

	if (g->capacity == 0 || !layout_ops_of(g->level)) {
		fprintf(f, "(no layout: layout_init has not succeeded)\n");
		return;
	}
	header(f, g);
	if (g->level == LAYOUT_LINEAR) {
		linear_table(f, g);
		return;
	}
	if (rows == 0) {
		rows = n > 4 ? n : 4; /* a whole parity rotation */
		if (g->level == LAYOUT_RAID10 && g->alg == LAYOUT_R10_NEAR) {
			/* a whole near pattern: lcm(n, copies) / n rows */
			unsigned a = n, b = k;
			while (b) {
				unsigned t = a % b;
				a = b;
				b = t;
			}
			rows = k / a > 4 ? k / a : 4;
		} else if (g->level == LAYOUT_RAID10 && g->alg == LAYOUT_R10_OFFSET) {
			rows = 2 * k;
		} else if (g->level == LAYOUT_RAID10) {
			rows = 2; /* per far section */
		} else if (!layout_is_parity(g)) {
			rows = 4;
		}
	}
	if (g->level == LAYOUT_RAID10 && g->alg == LAYOUT_R10_FAR) {
		nsect = k;
		sect = g->stripes / k; /* rows per far section */
		nrows = sect;
	}
	if (rows > nrows)
		rows = (unsigned)nrows;

	/* column width from the widest cell drawn */
	for (uint64_t s = 0; s < nsect; s++)
		for (uint64_t r = 0; r < rows; r++)
			for (unsigned m = 0; m < n; m++) {
				cell(g, m, s * sect + r, buf, sizeof(buf));
				if ((int)strlen(buf) + 2 > w)
					w = (int)strlen(buf) + 2;
			}

	fprintf(f, "%6s  %8s ", layout_is_parity(g) ? "stripe" : "row", "offset");
	for (unsigned m = 0; m < n; m++) {
		snprintf(buf, sizeof(buf), "m%u", m);
		fprintf(f, "%*s", w, buf);
	}
	fputc('\n', f);
	for (uint64_t s = 0; s < nsect; s++) {
		if (nsect > 1)
			fprintf(f, "  -- far section %llu: copy %llu of every chunk --\n",
				(unsigned long long)s, (unsigned long long)s);
		for (uint64_t r = 0; r < rows; r++)
			grid_row(f, g, s * sect + r, w);
		if (rows < nrows)
			fprintf(f, "%6s\n", "...");
	}
	legend(f, g);
}
