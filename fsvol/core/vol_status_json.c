/* vol_status_json: MNT/status.json, the machine-readable MNT/status (the
 * schema: docs/status.schema.json). Read as MNT/status reads the volume:
 * without the state lock, a snapshot that may be a moment old. */
#include <stdio.h>
#include <string.h>

#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "stats/stats.h"

/* md's words for a member (mdadm --detail, sysfs state): faulty, not failed */
static const char *member_word(const struct vol *v, unsigned i)
{
	const char *s = vol_slot_state(v, i);
	if (!strcmp(s, "failed"))
		return "faulty";
	if (!strcmp(s, "empty"))
		return "removed";
	return s;
}

void vol_status_json(struct vol *v, FILE *f)
{
	const struct layout_geom *g = &v->geom;
	uint64_t failed = atomic_load(&v->failed);
	int rebuilding = atomic_load(&v->rebuild_slot);
	/* a replace: role rk is being rebuilt onto the member in slot rw; both
	 * read once so the pair is one replace (they change together) */
	int rk = atomic_load(&v->replace_slot), rw = atomic_load(&v->replace_with);
	if (rk < 0 || rw < 0 || (unsigned)rk >= v->nslots || (unsigned)rw >= v->nslots)
		rk = rw = -1;
	char uuid[37], name[SB_NAME_MAX + 1];
	sb_uuid_format(v->sb.volume_uuid, uuid);
	sb_volume_name(&v->sb, name);
	struct vol_sync_info si;
	vol_sync_info(v, &si);
	const char *state = !failed ? "healthy" : !layout_survives(g, failed) ? "failed"
			    : rebuilding >= 0 && si.running && !strcmp(si.what, "recovery") ? "rebuilding"
			    : "degraded";
	fputs("{\"name\":", f);
	stats_json_string(f, name);
	fprintf(f, ",\"uuid\":\"%s\",\"level\":\"%s\",\"layout\":", uuid, layout_level_name(g->level));
	if (layout_alg_name(g)[0])
		stats_json_string(f, layout_alg_name(g));
	else
		fputs("null", f);
	fprintf(f, ",\"chunk\":%llu,\"raid_members\":%u,\"capacity\":%llu,\"events\":%llu,\"state\":\"%s\"",
		(unsigned long long)g->chunk, g->members, (unsigned long long)g->capacity,
		(unsigned long long)v->sb.events, state);
	unsigned active = 0;
	for (unsigned i = 0; i < g->members; i++)
		active += !(failed & (1ull << i));
	fprintf(f, ",\"active_members\":%u,\"members\":[", active);
	for (unsigned i = 0; i < v->nslots; i++) {
		fprintf(f, "%s{\"slot\":%u,\"role\":", i ? "," : "", i);
		if (i < g->members)
			fprintf(f, "%u", i);
		else
			fputs("null", f);
		fputs(",\"path\":", f);
		if (v->slot[i])
			stats_json_string(f, v->slot[i]->path);
		else
			fputs("null", f);
		fprintf(f, ",\"state\":\"%s\",\"rebuild_pos\":", member_word(v, i));
		if ((int)i == rebuilding)
			fprintf(f, "%llu", (unsigned long long)atomic_load(&v->rebuild_pos));
		else
			fputs("null", f);
		fputs(",\"replaced_by\":", f);
		if ((int)i == rk)
			fprintf(f, "%d", rw);
		else
			fputs("null", f);
		fputs(",\"replacing\":", f);
		if ((int)i == rw)
			fprintf(f, "%d", rk);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("],\"replace\":", f);
	if (rk >= 0) {
		fprintf(f, "{\"slot\":%d,\"path\":", rk);
		stats_json_string(f, v->slot[rk] ? v->slot[rk]->path : "");
		fprintf(f, ",\"with_slot\":%d,\"with_path\":", rw);
		stats_json_string(f, v->slot[rw] ? v->slot[rw]->path : "");
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs(",\"sync\":", f);
	if (!si.what) {
		fputs("null", f);
	} else {
		double frac = si.total ? (double)si.pos / (double)si.total : 1;
		fprintf(f, "{\"action\":\"%s\",\"state\":\"%s\",\"position\":%llu,\"total\":%llu,\"percent\":%.1f,"
			"\"speed_kib_s\":%.0f,\"eta_s\":", si.what, si.running ? "running" : si.done ? "done" : "stopped",
			(unsigned long long)si.pos, (unsigned long long)si.total, 100 * frac, si.speed_kibs);
		if (si.running && frac > 0 && frac < 1)
			fprintf(f, "%.1f", si.eta_s);
		else
			fputs("null", f);
		fprintf(f, ",\"mismatches\":%llu,\"skipped\":%llu}", (unsigned long long)si.mismatches,
			(unsigned long long)si.skipped);
	}
	vol_reshape_json(v, f);
	fprintf(f, ",\"resync_pending\":%s", vol_resync_pending(v) ? "true" : "false");
	fprintf(f, ",\"mismatch_count\":%llu,\"sync_speed_min\":%u,\"sync_speed_max\":%u,\"bitmap\":",
		(unsigned long long)si.mismatches, si.speed_min, si.speed_max);
	if (v->bitmap) {
		uint64_t regions, dirty, writes;
		vol_bitmap_counts(v, &regions, &dirty, &writes);
		fprintf(f, "{\"chunk\":%llu,\"regions\":%llu,\"dirty\":%llu,\"block_writes\":%llu}",
			(unsigned long long)v->sb.bitmap_chunk, (unsigned long long)regions, (unsigned long long)dirty,
			(unsigned long long)writes);
	} else {
		fputs("null", f);
	}
	fputs("}\n", f);
}
