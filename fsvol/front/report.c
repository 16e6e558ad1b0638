/* report: what the text files of a served volume show (stats, stats.json,
 * diskstats, metrics, status, status.json, layout.json), rendered for FUSE,
 * HTTP and the ctl dir alike. Control commands are ctl.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/front/report.h"
#include "stats/stats.h"

#define VIEW_NAME 48 /* NAME (31) + ".m63" */

/* Snapshot the volume and every member into a view (volume first). Devices
 * are named NAME (the volume's) and NAME.mN (the member of Number N, as
 * status says mN), in Number order: a device keeps its place, its name and
 * its series whatever role it moves to (md's Number). Entries of removed
 * members are left out. */
static struct stats_view_dev *view_build(struct vol *v, size_t *n, char names[][VIEW_NAME],
					 char uuids[][37])
{
	struct stats_view_dev *d = calloc(vol_nslots(v) + 1, sizeof(*d));
	uint64_t now = stats_now();
	if (!d)
		return NULL;
	char vname[SB_NAME_MAX + 1];
	sb_volume_name(vol_sb(v), vname);
	snprintf(names[0], VIEW_NAME, "%s", vname);
	uint64_t failed = vol_failed_mask(v);
	d[0] = (struct stats_view_dev){ .name = names[0], .path = NULL, .index = -1, .role = -1,
					.state = !failed ? "active"
						 : layout_survives(vol_geom(v), failed) ? "degraded" : "failed" };
	int level = vol_stats_level(v);
	d[0].not_counted = level == VOL_STATS_OFF;
	stats_snapshot(vol_stats(v), now, &d[0].snap);
	/* the used entries by slot, then in Number order (read without the state
	 * lock: a swap in progress may show one Number twice for a moment, but
	 * never changes how many there are, which fsvol stat relies on) */
	int order[SB_MAX_SLOTS], num_of[SB_MAX_SLOTS];
	size_t used = 0;
	for (unsigned i = 0; i < vol_nslots(v); i++) {
		int num = vol_slot_number(v, i);
		if (num < 0)
			continue;
		size_t j = used++;
		for (; j > 0 && num_of[j - 1] > num; j--) {
			order[j] = order[j - 1];
			num_of[j] = num_of[j - 1];
		}
		order[j] = (int)i;
		num_of[j] = num;
	}
	size_t k = 1;
	for (size_t o = 0; o < used; o++) {
		int i = order[o];
		unsigned num = (unsigned)num_of[o];
		struct stats_view_dev *e = &d[k];
		struct member *m = vol_member(v, (unsigned)i);
		snprintf(names[k], VIEW_NAME, "%s.m%u", vname, num);
		sb_uuid_format(vol_sb(v)->slots[i].uuid, uuids[k]);
		e->name = names[k];
		e->uuid = uuids[k];
		e->path = m ? m->path : "(missing)";
		e->state = vol_slot_state(v, (unsigned)i);
		e->index = (int)num;
		/* a role is played by a member in it, not by one failed out of it */
		e->bad_blocks = vol_bad_blocks(v, (unsigned)i, NULL);
		e->role = (unsigned)i < vol_geom(v)->members && strcmp(e->state, "failed") && strcmp(e->state, "missing")
			  ? i : -1;
		e->not_counted = level != VOL_STATS_ALL || !m || !m->stats;
		if (m && m->stats)
			stats_snapshot(m->stats, now, &e->snap);
		else
			e->snap.t_ns = now;
		k++;
	}
	*n = k;
	return d;
}

/* The md state each background pass shows as (md's mdstat says "recovery"
 * for a replace too, "resync" for a repair). */
static const struct {
	const char *action; /* vol_sync_info's what */
	enum stats_md_state md;
} md_of_action[] = {
	{ "recovery", STATS_MD_RECOVERING }, { "replace", STATS_MD_RECOVERING },
	{ "resync", STATS_MD_RESYNC },       { "repair", STATS_MD_RESYNC },
	{ "check", STATS_MD_CHECK },         { "reshape", STATS_MD_RESHAPE },
};

/* md-like state for MNT/metrics, read as MNT/status reads it (no lock:
 * each field is one atomic load or fixed after assembly). */
static void md_state(struct vol *v, struct stats_prom_md *md)
{
	uint64_t failed = vol_failed_mask(v);
	uint64_t mask = vol_geom(v)->members >= 64 ? ~0ull : (1ull << vol_geom(v)->members) - 1;
	md->disks_required = vol_geom(v)->members;
	md->degraded = (unsigned)__builtin_popcountll(failed & mask);
	md->blocks = vol_geom(v)->capacity / 1024;
	md->blocks_synced = md->blocks;
	md->state = STATS_MD_ACTIVE;
	struct vol_sync_info si;
	vol_sync_info(v, &si);
	if (si.running && si.what) {
		md->state = STATS_MD_RESYNC; /* a pass this table does not know yet still shows as a pass */
		for (size_t i = 0; i < sizeof(md_of_action) / sizeof(md_of_action[0]); i++)
			if (!strcmp(si.what, md_of_action[i].action))
				md->state = md_of_action[i].md;
		if (si.total)
			md->blocks_synced = (uint64_t)((double)md->blocks * (double)si.pos / (double)si.total);
	}
}

/* layout.json: the first rows of the layout grid (as fsvol layout draws it,
 * from layout_unmap), each cell [role, chunk, copy]: role "D", "P", "Q" or
 * "-" (member space holding nothing), chunk the logical chunk number of a D. */
#define REPORT_LAYOUT_ROWS 32
static void layout_json(struct vol *v, FILE *f)
{
	const struct layout_geom *g = vol_geom(v);
	uint64_t total = g->member_used / g->chunk, rows = 2 * (uint64_t)g->members;
	rows = rows < 8 ? 8 : rows > REPORT_LAYOUT_ROWS ? REPORT_LAYOUT_ROWS : rows;
	rows = rows < total ? rows : total;
	fprintf(f, "{\"level\":\"%s\",\"layout\":\"%s\",\"members\":%u,\"chunk\":%llu,\"data_members\":%u,"
		"\"parity\":%u,\"copies\":%u,\"stripes\":%llu,\"rows\":[", layout_level_name(g->level),
		layout_alg_name(g), g->members, (unsigned long long)g->chunk, g->data_members,
		layout_parity_count(g), layout_copies(g), (unsigned long long)total);
	for (uint64_t r = 0; r < rows; r++) {
		fputs(r ? ",\n[" : "\n[", f);
		for (unsigned m = 0; m < g->members; m++) {
			uint64_t logical = 0;
			unsigned copy = 0;
			int role = layout_unmap(g, m, r * g->chunk, &logical, &copy);
			fprintf(f, "%s[\"%s\",%llu,%u]", m ? "," : "",
				role == LAYOUT_P ? "P" : role == LAYOUT_Q ? "Q" : role < 0 ? "-" : "D",
				(unsigned long long)(role == LAYOUT_DATA ? logical / g->chunk : 0), copy);
		}
		fputc(']', f);
	}
	fputs("]}\n", f);
}

int report_render(struct vol *v, enum report_kind kind, char **out, size_t *len)
{
	char names[SB_MAX_SLOTS + 1][VIEW_NAME], uuids[SB_MAX_SLOTS + 1][37];
	FILE *f = open_memstream(out, len);
	size_t n = 0;
	int r = 0;
	if (!f)
		return -ENOMEM;
	if (kind == REPORT_STATUS) {
		vol_status(v, f);
	} else if (kind == REPORT_STATUS_JSON) {
		vol_status_json(v, f);
	} else if (kind == REPORT_LAYOUT_JSON) {
		layout_json(v, f);
	} else {
		/* read before the snapshots: a reset racing with them can only
		 * make the covered time look longer, never negative */
		uint64_t reset_ns = vol_reset_ns(v);
		struct stats_view_dev *d = view_build(v, &n, names, uuids);
		if (!d) {
			fclose(f);
			free(*out);
			return -ENOMEM;
		}
		if (kind == REPORT_TABLE)
			r = stats_render_table(f, d, n);
		else if (kind == REPORT_METRICS) {
			struct stats_prom_md md;
			md_state(v, &md);
			r = stats_render_prom(f, d, n, &md);
		} else if (kind == REPORT_JSON)
			r = stats_render_json(f, d[0].snap.t_ns - vol_start_ns(v),
					      d[0].snap.t_ns - reset_ns, d, n);
		else
			r = stats_render_diskstats(f, d, n);
		free(d);
	}
	if (fclose(f) || r) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}
