/* vol_status_json: MNT/status.json, the machine-readable MNT/status (the
 * schema: docs/status.schema.json). Read as MNT/status reads the volume:
 * without the state lock, a snapshot that may be a moment old. */
#include <stdio.h>
#include <string.h>

#include "fsvol/core/bbl_vol.h"
#include "fsvol/core/bitmap_vol.h"
#include "fsvol/core/ppl.h"
#include "fsvol/core/write_behind.h"
#include "fsvol/core/failfast.h"
#include "fsvol/core/reshape.h"
#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"
#include "fsvol/model/emul.h"
#include "stats/stats.h"

/* md's words for a member (mdadm --detail, sysfs state), as MNT/status says them */
static const char *member_word(const struct vol *v, unsigned i)
{
	const char *s = vol_slot_state(v, i);
	if (!strcmp(s, "empty"))
		return "removed";
	if (!strcmp(s, "active") && ppl_is_journal(v, i))
		return "journal"; /* mdadm --detail's word for the journal device */
	return s;
}

/* One member's object in "members" (rk, rw: a replace's pair, or -1). */
static void json_member(struct vol *v, FILE *f, unsigned i, int rebuilding, int rk, int rw)
{
	const struct layout_geom *g = &v->geom;
	char u[37];
	int num = vol_slot_number(v, i);
	fprintf(f, "{\"slot\":%u,\"number\":", i);
	if (num >= 0)
		fprintf(f, "%d", num);
	else
		fputs("null", f);
	fputs(",\"uuid\":", f);
	sb_uuid_format(v->sb.slots[i].uuid, u);
	if (num >= 0)
		fprintf(f, "\"%s\"", u);
	else
		fputs("null", f);
	fputs(",\"role\":", f);
	if (i < g->members)
		fprintf(f, "%u", i);
	else
		fputs("null", f);
	fputs(",\"path\":", f);
	const struct member *m = v->slot[i]; /* one look: a remove may empty the slot */
	if (m)
		stats_json_string(f, m->path);
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
	uint64_t bad_sectors;
	unsigned bad = vol_bbl_count(v, i, &bad_sectors);
	fprintf(f, ",\"bad_blocks\":%u,\"bad_sectors\":%llu", bad, (unsigned long long)bad_sectors);
	/* md's per-device flags (mdadm --detail's writemostly, failfast) */
	fprintf(f, ",\"write_mostly\":%s,\"failfast\":%s",
		vol_slot_flags(v, i) & SB_SLOT_WRITE_MOSTLY ? "true" : "false",
		vol_slot_flags(v, i) & SB_SLOT_FAILFAST ? "true" : "false");
	fputc('}', f);
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
	int first = 1;
	for (unsigned i = 0; i < v->nslots; i++) {
		if (i >= g->members && !v->slot[i] && v->sb.slots[i].state == SB_EMPTY)
			continue; /* a removed spare's entry (MNT/status leaves it out too) */
		fputs(first ? "" : ",", f);
		first = 0;
		json_member(v, f, i, rebuilding, rk, rw);
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
		fprintf(f, ",\"mismatches\":%llu,\"skipped\":%llu,\"sync_completed\":[%llu,%llu],\"held\":%s}",
			(unsigned long long)si.mismatches, (unsigned long long)si.skipped,
			(unsigned long long)si.done_sectors, (unsigned long long)si.total_sectors,
			si.held ? "true" : "false");
	}
	vol_reshape_json(v, f);
	fprintf(f, ",\"resync_pending\":%s", vol_resync_pending(v) ? "true" : "false");
	/* raid6 la/ra from before format 5: the resync owed rewrites Q (q_order.c) */
	fprintf(f, ",\"q_rewrite\":%s", v->q_rewrite ? "true" : "false");
	fprintf(f, ",\"mismatch_count\":%llu,\"sync_speed_min\":%u,\"sync_speed_max\":%u,\"sync_max\":",
		(unsigned long long)si.mismatches, si.speed_min, si.speed_max);
	if (si.sync_max == UINT64_MAX)
		fputs("\"max\"", f);
	else
		fprintf(f, "%llu", (unsigned long long)si.sync_max);
	fputs(",\"bitmap\":", f);
	if (v->bitmap) {
		uint64_t regions, dirty, writes;
		vol_bitmap_counts(v, &regions, &dirty, &writes);
		fprintf(f, "{\"chunk\":%llu,\"regions\":%llu,\"dirty\":%llu,\"block_writes\":%llu}",
			(unsigned long long)v->sb.bitmap_chunk, (unsigned long long)regions, (unsigned long long)dirty,
			(unsigned long long)writes);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"consistency_policy\":\"%s\",\"ppl\":", vol_consistency_name(v));
	if (ppl_on(v)) {
		uint64_t rec, blk, rep;
		ppl_counts(v, &rec, &blk, &rep);
		fprintf(f, "{\"records\":%llu,\"blocks\":%llu,\"replayed\":%llu}", (unsigned long long)rec,
			(unsigned long long)blk, (unsigned long long)rep);
	} else {
		fputs("null", f);
	}
	wb_status_json(v, f);
	fprintf(f, ",\"failfast_ms\":%u,\"failfast_timeouts\":%lu", vol_failfast_ms(v), ff_timeouts(v));
	struct emul *e = vol_model_emul(v);
	if (e) /* the model's clock (ctl timer_slack_us) */
		fprintf(f, ",\"timer_slack_us\":%llu", (unsigned long long)(emul_slack(e) / 1000));
	vol_safe_json(v, f);
	fputs("}\n", f);
}
