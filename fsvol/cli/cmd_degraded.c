/* cmd_degraded: mdadm --assemble's rule for a degraded start. A member the
 * superblocks record as active, not given, would start the volume degraded
 * (and make that member stale): refused without --run, naming the member and
 * where a file of it was found, and the way back ('fsvol re-add'). */
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/core/volume.h"

struct degraded_find {
	const struct sb *ref;
	uint64_t missing;
	char found[SB_MAX_SLOTS][PATH_MAX];
	uint64_t events[SB_MAX_SLOTS];
};

static void degraded_match(const char *path, const struct sb *s, void *ctx)
{
	struct degraded_find *d = ctx;
	unsigned i = s->index;
	if (i >= SB_MAX_SLOTS || !(d->missing & (1ull << i)) || d->found[i][0] ||
	    memcmp(s->volume_uuid, d->ref->volume_uuid, 16) || memcmp(s->member_uuid, d->ref->slots[i].uuid, 16))
		return;
	snprintf(d->found[i], sizeof(d->found[i]), "%s", path);
	d->events[i] = s->events;
}

int cmd_degraded_refuse(const struct cmd *c, char **members, unsigned n)
{
	struct vol *v;
	char err[1024];
	struct vol_opts o = { .readonly = 1, .buffered = 1, .stats = VOL_STATS_OFF };
	if (vol_open(&v, members, n, &o, err, sizeof(err)))
		return 0; /* the assembly proper says why */
	if (vol_was_dirty(v)) {
		vol_close(v); /* dirty and degraded: the assembly's own refusal (--force), as mdadm's */
		return 0;
	}
	const struct sb *s = vol_sb(v);
	struct degraded_find *d = calloc(1, sizeof(*d));
	if (!d) {
		vol_close(v);
		return cmd_err(c, "out of memory");
	}
	d->ref = s;
	/* during a reshape the slots it adds too (the superblocks call them
	 * spares until its end) */
	unsigned roles = vol_roles(v);
	for (unsigned i = 0; i < roles; i++)
		if (!vol_member(v, i) && (s->slots[i].state == SB_ACTIVE || s->slots[i].state == SB_REBUILDING ||
					  (i >= vol_geom(v)->members && s->slots[i].state == SB_SPARE)))
			d->missing |= 1ull << i;
	if (!d->missing) {
		free(d);
		vol_close(v);
		return 0;
	}
	/* where the missing ones may be: next to the members given (files only) */
	char *dirs[SB_MAX_SLOTS];
	unsigned nd = 0;
	for (unsigned i = 0; i < n && nd < SB_MAX_SLOTS; i++) {
		if (strchr(members[i], ':'))
			continue;
		char *dup = strdup(members[i]);
		if (!dup)
			continue;
		char *dir = dirname(dup);
		int seen = !strcmp(dir, "/dev");
		for (unsigned k = 0; k < nd && !seen; k++)
			seen = !strcmp(dirs[k], dir);
		if (!seen && (dirs[nd] = strdup(dir)))
			nd++;
		free(dup);
	}
	cmd_scan(dirs, nd, 1, degraded_match, d);
	for (unsigned k = 0; k < nd; k++)
		free(dirs[k]);
	char name[SB_NAME_MAX + 1], list[4096];
	size_t len = 0;
	sb_volume_name(s, name);
	for (unsigned i = 0; i < roles && len < sizeof(list); i++) {
		if (!(d->missing & (1ull << i)))
			continue;
		if (d->found[i][0])
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%sm%d (not given; %s holds it, events "
						"%llu of %llu)", len ? ", " : "", vol_slot_number(v, i), d->found[i],
						(unsigned long long)d->events[i], (unsigned long long)s->events);
		else
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%sm%d (not given)", len ? ", " : "",
						vol_slot_number(v, i));
	}
	int k = __builtin_popcountll(d->missing);
	cmd_err(c, "%s would start degraded: %s %s missing, recorded as active by the superblocks. "
		   "Give every member, or --run to start it degraded; then 'fsvol re-add MNT PATH' brings "
		   "a member back", name, list, k == 1 ? "is" : "are");
	free(d);
	vol_close(v);
	return CMD_EXIT_FAIL;
}

void cmd_degraded_note(const struct cmd *c, const struct vol *v, const char *status)
{
	uint64_t failed = vol_failed_mask(v);
	char list[1024];
	size_t len = 0;
	for (unsigned i = 0; i < vol_roles(v) && len < sizeof(list); i++)
		if (failed & (1ull << i))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%sm%d %s", len ? ", " : "", vol_slot_number(v, i),
						vol_member(v, i) ? sb_state_name(vol_sb(v)->slots[i].state) : "missing");
	if (failed)
		fprintf(stderr, "fsvol %s: starting degraded: %s\n", c->name, list);
	if (vol_was_dirty(v) && layout_copies(vol_geom(v)) + layout_parity_count(vol_geom(v)) > 1)
		fprintf(stderr, "fsvol %s: warning: the volume was not shut down cleanly; resyncing "
				"parity and copies in the background (see %s)\n", c->name, status);
}
