/* top: the `fsvol stat` table, gstat's way: iostat -x names in a header,
 * their units in a second row, the volume row then one row per member,
 * columns chosen to fit the terminal (80 columns by default; a wider
 * terminal or --wide adds the rest), optional ANSI colours. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_REV "\033[7m"
#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"

/* One figure: its name (as in JSON and CSV), unit, width, preferred
 * decimals, and whether the 80-column set has it (else: priority among the
 * extra ones, 1 first). */
struct top_col {
	const char *name, *unit;
	int width, decimals;
	int extra; /* 0: always shown; k > 0: k-th to add when room allows */
	size_t off; /* a double in struct stats_rates */
};
#define R(f) offsetof(struct stats_rates, f)
static const struct top_col top_cols[] = {
	{ "r/s", "IO/s", 6, 1, 0, R(r_s) },
	{ "w/s", "IO/s", 6, 1, 0, R(w_s) },
	{ "f/s", "IO/s", 6, 1, 3, R(f_s) },
	{ "rMB/s", "MB/s", 6, 2, 0, R(rmb_s) },
	{ "wMB/s", "MB/s", 6, 2, 0, R(wmb_s) },
	{ "areq-sz", "kB", 7, 1, 2, R(areq_kb) },
	{ "r_await", "ms", 7, 2, 0, R(r_await_ms) },
	{ "w_await", "ms", 7, 2, 0, R(w_await_ms) },
	{ "f_await", "ms", 7, 2, 4, R(f_await_ms) },
	{ "aqu-sz", "reqs", 6, 2, 0, R(aqu_sz) },
	{ "%util", "%", 5, 1, 0, R(util_pct) },
	{ "p50", "ms", 6, 2, 1, R(p50_ms) },
	{ "p99", "ms", 6, 2, 0, R(p99_ms) },
	{ "p99.9", "ms", 6, 2, 5, R(p999_ms) },
	{ "seq%", "%", 5, 0, 6, R(seq_pct) },
};
#define NCOLS (sizeof(top_cols) / sizeof(top_cols[0]))
#define DEV_W 6   /* "volume", "  m63" */
#define STATE_W 8 /* "active", "degraded", "rebuild" */

static double col_get(const struct stats_rates *r, unsigned c)
{
	double v;
	memcpy(&v, (const char *)r + top_cols[c].off, sizeof(v));
	return v;
}

/* v in at most w characters: the column's decimals, fewer when it does not
 * fit, then k/M/G with one decimal (a rate of 1234567 IO/s reads "1.2M"). */
static void fit(char *out, size_t len, double v, int w, int decimals)
{
	static const char sfx[] = "kMGT";
	if (v == 0) {
		snprintf(out, len, "0");
		return;
	}
	for (int d = decimals; d >= 0; d--)
		if (snprintf(out, len, "%.*f", d, v) <= w)
			return;
	for (unsigned i = 0; i < sizeof(sfx) - 1; i++) {
		v /= 1000;
		if (snprintf(out, len, "%.1f%c", v, sfx[i]) <= w ||
		    snprintf(out, len, "%.0f%c", v, sfx[i]) <= w)
			return;
	}
	snprintf(out, len, "%.*s", w, "#########");
}

/* Which columns to show: the 80-column set, then extras by priority while
 * the line stays within cols - 1 (never the last column: no auto-wrap). */
static void choose(const struct stats_top_opts *o, int show[NCOLS])
{
	int used = DEV_W + 1 + STATE_W;
	for (unsigned c = 0; c < NCOLS; c++) {
		show[c] = !top_cols[c].extra || o->wide;
		if (show[c])
			used += 1 + top_cols[c].width;
	}
	if (o->wide || o->cols == 0)
		return;
	for (int pr = 1;; pr++) {
		unsigned c;
		for (c = 0; c < NCOLS && top_cols[c].extra != pr; c++)
			;
		if (c == NCOLS || used + 1 + top_cols[c].width > (int)o->cols - 1)
			return;
		show[c] = 1;
		used += 1 + top_cols[c].width;
	}
}

static const char *state_short(const char *s)
{
	if (!s)
		return "";
	return !strcmp(s, "rebuilding") ? "rebuild" : s;
}

static const char *state_color(const char *s)
{
	if (!s || !strcmp(s, "active"))
		return "";
	if (!strcmp(s, "failed") || !strcmp(s, "missing"))
		return C_RED;
	if (!strcmp(s, "rebuilding") || !strcmp(s, "degraded"))
		return C_YELLOW;
	return C_CYAN;
}

static const char *util_color(double u)
{
	return u < 50 ? C_GREEN : u < 80 ? C_YELLOW : C_RED; /* gstat's %busy colours */
}

int stats_render_top(FILE *f, const struct stats_top_opts *o, const struct stats_view_dev *prev,
		     const struct stats_view_dev *cur, size_t n)
{
	int show[NCOLS];
	int color = o->color;
	struct stats_rates r;
	choose(o, show);
	if (o->title)
		fprintf(f, "%s%s%s\n", color ? C_BOLD : "", o->title, color ? C_RESET : "");
	if (o->header) {
		fprintf(f, "%s%-*s %-*s", color ? C_REV : "", DEV_W, "device", STATE_W, "state");
		for (unsigned c = 0; c < NCOLS; c++)
			if (show[c])
				fprintf(f, " %*s", top_cols[c].width, top_cols[c].name);
		fprintf(f, "%s\n%-*s %-*s", color ? C_RESET : "", DEV_W, "", STATE_W, "");
		for (unsigned c = 0; c < NCOLS; c++)
			if (show[c])
				fprintf(f, " %*s", top_cols[c].width, top_cols[c].unit);
		fputc('\n', f);
	}
	size_t rows = n;
	if (o->max_rows && rows > o->max_rows)
		rows = o->max_rows > 1 ? o->max_rows - 1 : 1; /* room for the "more" line */
	for (size_t i = 0; i < rows; i++) {
		char dev[16], num[32];
		if (stats_rates_compute(&prev[i].snap, &cur[i].snap, &r))
			return -EINVAL;
		if (cur[i].index < 0)
			snprintf(dev, sizeof(dev), "volume");
		else
			snprintf(dev, sizeof(dev), "  m%d", cur[i].index);
		fprintf(f, "%s%-*s%s %s%-*s%s", color && cur[i].index < 0 ? C_BOLD : "", DEV_W, dev,
			color && cur[i].index < 0 ? C_RESET : "", color ? state_color(cur[i].state) : "",
			STATE_W, state_short(cur[i].state), color ? C_RESET : "");
		if (cur[i].not_counted) {
			/* --stats volume|off: a figure here would be a made-up 0 */
			fprintf(f, " %s%s%s\n", color ? C_DIM : "", "not counted (stats level)",
				color ? C_RESET : "");
			continue;
		}
		for (unsigned c = 0; c < NCOLS; c++) {
			if (!show[c])
				continue;
			double v = col_get(&r, c);
			fit(num, sizeof(num), v, top_cols[c].width, top_cols[c].decimals);
			int hot = color && top_cols[c].off == R(util_pct);
			fprintf(f, " %s%*s%s", hot ? util_color(v) : "", top_cols[c].width, num,
				hot ? C_RESET : "");
		}
		fputc('\n', f);
	}
	if (rows < n)
		fprintf(f, "%s(%zu more members: a taller terminal shows them)%s\n", color ? C_DIM : "",
			n - rows, color ? C_RESET : "");
	return ferror(f) ? -EIO : 0;
}
