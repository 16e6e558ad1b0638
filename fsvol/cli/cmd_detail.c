/* fsvol detail: a mounted volume as mdadm --detail lays an array out (the
 * counts, consistency policy, resync status, and the device table with the
 * failed and spare members after it), from MNT/status.json and the
 * superblock of one member (creation and update times); --json the same for
 * programs; --test an exit code from the state. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/cli/cmd_json.h"
#include "fsvol/meta/sb.h"
#include "fsvol/util/size.h"
#include "stats/stats.h"

static const struct cmd_opt detail_opts[] = {
	{ "test", 't', NULL, "exit 0 healthy, 1 degraded, 2 unusable, 4 status unreadable (mdadm --detail --test)" },
	{ "json", 0, NULL, "the same fields as JSON (keys in snake case: raid_devices, devices[], ...)" },
	{ 0 },
};

struct detail_args {
	int test, json;
};

static int detail_opt(int i, const char *arg, void *ctx)
{
	(void)arg;
	struct detail_args *a = ctx;
	if (i == 0)
		a->test = 1;
	else
		a->json = 1;
	return 0;
}

/* One row of the device table, as md's: Number, Major, Minor, RaidDevice, State, Device. */
struct detail_row {
	int number;      /* -1: "-" (a role with no device) */
	int raid_device; /* -1: "-" (not in a role) */
	int has_dev;     /* major/minor known (a block device) */
	unsigned major, minor;
	char state[48];
	const char *device;
	unsigned bad_blocks; /* entries in the member's bad-block list */
};

struct detail {
	const char *mnt;
	const struct cmd_json *st;
	struct sb sb;
	int have_sb;
	unsigned raid, total, active, working, failed, spare;
	char state[96];
	const char *policy;
	char sync_name[24];
	double sync_pct;
	int sync_running;
	struct detail_row rows[2 * SB_MAX_SLOTS];
	unsigned nrows, nroles; /* the rows in roles first, then the others */
	int test;               /* mdadm --test: 0, 1 degraded, 2 failed */
};

static void detail_dev(struct detail_row *r, const char *path)
{
	struct stat st;
	r->device = path;
	if (path && !stat(path, &st) && S_ISBLK(st.st_mode)) {
		r->has_dev = 1;
		r->major = major(st.st_rdev);
		r->minor = minor(st.st_rdev);
	}
}

/* The member table and counts from status.json's members[]. */
static void detail_rows(struct detail *d)
{
	const struct cmd_json *ms = cmd_json_get(d->st, "members");
	unsigned raid = (unsigned)cmd_json_u64(d->st, "raid_members", 0);
	struct detail_row other[SB_MAX_SLOTS];
	unsigned nother = 0;
	d->raid = raid;
	for (size_t k = 0; ms && ms->t == CMD_JSON_ARR && k < ms->n && k < SB_MAX_SLOTS; k++) {
		const struct cmd_json *m = &ms->kids[k];
		unsigned slot = (unsigned)cmd_json_u64(m, "slot", k);
		const char *path = cmd_json_str(m, "path"), *state = cmd_json_str(m, "state");
		state = state ? state : "?";
		/* Number: the device's, which stays with it (md's); RaidDevice: its role */
		const struct cmd_json *num = cmd_json_get(m, "number");
		int number = num && num->t == CMD_JSON_NUM ? (int)num->u64 : (int)slot;
		struct detail_row r = { .number = number, .raid_device = slot < raid ? (int)slot : -1 };
		detail_dev(&r, path);
		r.bad_blocks = (unsigned)cmd_json_u64(m, "bad_blocks", 0);
		d->total += path != NULL;
		if (!strcmp(state, "active") && slot < raid) {
			snprintf(r.state, sizeof(r.state), "active sync");
			d->active++, d->working++;
		} else if (!strcmp(state, "rebuilding")) {
			snprintf(r.state, sizeof(r.state), "spare rebuilding");
			d->working++, d->spare++;
		} else if (!strcmp(state, "spare")) {
			snprintf(r.state, sizeof(r.state), "spare");
			r.raid_device = -1;
			d->working++, d->spare++;
		} else if (!strcmp(state, "failed") && path) {
			snprintf(r.state, sizeof(r.state), "faulty");
			r.raid_device = -1;
			d->failed++;
		} else {
			snprintf(r.state, sizeof(r.state), "%s", state);
		}
		/* md's per-device flags after the state words, as mdadm --detail */
		const struct cmd_json *wm = cmd_json_get(m, "write_mostly"), *ff = cmd_json_get(m, "failfast");
		if (wm && wm->t == CMD_JSON_BOOL && wm->num)
			strncat(r.state, " writemostly", sizeof(r.state) - strlen(r.state) - 1);
		if (ff && ff->t == CMD_JSON_BOOL && ff->num)
			strncat(r.state, " failfast", sizeof(r.state) - strlen(r.state) - 1);
		/* a replace under way: md shows the new device as "replacement" */
		const struct cmd_json *rep = cmd_json_get(m, "replacing");
		if (rep && rep->t == CMD_JSON_NUM) {
			snprintf(r.state, sizeof(r.state), "spare rebuilding (replacement for %llu)",
				 (unsigned long long)rep->u64);
			r.raid_device = (int)rep->u64;
		}
		if (slot < raid && (r.state[0] == 'a' || !strcmp(state, "rebuilding"))) {
			d->rows[d->nrows++] = r;
			continue;
		}
		if (slot < raid) /* the role itself has no device: md's "removed" line */
			d->rows[d->nrows++] = (struct detail_row){ .number = -1, .raid_device = (int)slot,
								   .state = "removed" };
		if (path) /* the device itself, after the roles */
			other[nother++] = r;
	}
	d->nroles = d->nrows;
	for (unsigned i = 0; i < nother; i++)
		d->rows[d->nrows++] = other[i];
}

static void detail_state(struct detail *d)
{
	const char *st = cmd_json_str(d->st, "state"), *level = cmd_json_str(d->st, "level");
	const struct cmd_json *sync = cmd_json_get(d->st, "sync");
	const char *action = sync ? cmd_json_str(sync, "action") : NULL, *sstate = sync ? cmd_json_str(sync, "state") : NULL;
	st = st ? st : "?";
	d->sync_running = sstate && !strcmp(sstate, "running");
	/* md's safe mode: clean while idle, active while writes may be in flight
	 * (the daemon's array_state; a daemon without it: the superblock) */
	const char *as = cmd_json_str(d->st, "array_state");
	int clean = as ? !strcmp(as, "clean") : d->have_sb && d->sb.clean;
	size_t n = (size_t)snprintf(d->state, sizeof(d->state), "%s", clean ? "clean" : "active");
	if (!strcmp(st, "degraded") || !strcmp(st, "rebuilding"))
		n += (size_t)snprintf(d->state + n, sizeof(d->state) - n, ", degraded");
	if (!strcmp(st, "failed"))
		n += (size_t)snprintf(d->state + n, sizeof(d->state) - n, ", FAILED");
	if (d->sync_running && action)
		snprintf(d->state + n, sizeof(d->state) - n, ", %s",
			 !strcmp(action, "recovery") ? "recovering" : !strcmp(action, "resync") ? "resyncing"
			 : !strcmp(action, "check") ? "checking" : !strcmp(action, "reshape") ? "reshaping" : "repairing");
	if (d->sync_running && action) {
		snprintf(d->sync_name, sizeof(d->sync_name), "%s", !strcmp(action, "recovery") ? "Rebuild"
			 : !strcmp(action, "resync") ? "Resync" : !strcmp(action, "reshape") ? "Reshape" : "Check");
		d->sync_pct = cmd_json_num(sync, "percent", 0);
	}
	const struct cmd_json *bm = cmd_json_get(d->st, "bitmap");
	int redundant = level && strcmp(level, "raid0") && strcmp(level, "linear") && strcmp(level, "single");
	d->policy = bm && bm->t == CMD_JSON_OBJ ? "bitmap" : redundant ? "resync" : "none";
	if (cmd_json_str(d->st, "consistency_policy")) /* ppl, journal: the daemon says */
		d->policy = cmd_json_str(d->st, "consistency_policy");
	d->test = !strcmp(st, "failed") ? 2 : strcmp(st, "healthy") ? 1 : 0;
}

/* Creation and update time, used size: from a member's superblock. */
static void detail_sb(struct detail *d)
{
	const struct cmd_json *ms = cmd_json_get(d->st, "members");
	char err[512];
	for (size_t k = 0; ms && ms->t == CMD_JSON_ARR && k < ms->n && !d->have_sb; k++) {
		const char *path = cmd_json_str(&ms->kids[k], "path"), *state = cmd_json_str(&ms->kids[k], "state");
		if (path && state && !strcmp(state, "active") && !strchr(path, ':'))
			d->have_sb = !cmd_read_sb(path, &d->sb, err, sizeof(err));
	}
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

static void fmt_time(uint64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(out, len, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(out, len, "%llu", (unsigned long long)t);
}

/* mdadm's "16384 (16.00 MiB 16.78 MB)": KiB, then binary and decimal units. */
static void fmt_kib(uint64_t bytes, char *out, size_t len)
{
	double b = (double)bytes;
	const char *bu = b >= 1099511627776.0 ? "TiB" : b >= 1073741824.0 ? "GiB" : "MiB";
	double bv = b / (b >= 1099511627776.0 ? 1099511627776.0 : b >= 1073741824.0 ? 1073741824.0 : 1048576.0);
	const char *du = b >= 1e12 ? "TB" : b >= 1e9 ? "GB" : "MB";
	double dv = b / (b >= 1e12 ? 1e12 : b >= 1e9 ? 1e9 : 1e6);
	snprintf(out, len, "%llu (%.2f %s %.2f %s)", (unsigned long long)(bytes / 1024), bv, bu, dv, du);
}

/* mdadm's lines under "Reshape Status" (what the reshape goes to); 1 when
 * there were some. */
static int detail_reshape(const struct detail *d)
{
	const struct cmd_json *rs = cmd_json_get(d->st, "reshape");
	if (!rs || rs->t != CMD_JSON_OBJ)
		return 0;
	unsigned from = (unsigned)cmd_json_u64(rs, "old_members", 0), to = (unsigned)cmd_json_u64(rs, "new_members", 0);
	const char *l0 = cmd_json_str(rs, "old_level"), *l1 = cmd_json_str(rs, "new_level");
	uint64_t c0 = cmd_json_u64(rs, "old_chunk", 0), c1 = cmd_json_u64(rs, "new_chunk", 0);
	char chunk[32];
	if (to != from)
		printf("     Delta Devices : %d, (%u->%u)\n", (int)to - (int)from, from, to);
	if (l0 && l1 && strcmp(l0, l1))
		printf("         New Level : %s\n", l1);
	if (c0 != c1) {
		size_format(c1, chunk, sizeof(chunk));
		printf("     New Chunksize : %s\n", chunk);
	}
	const char *a0 = cmd_json_str(rs, "old_layout"), *a1 = cmd_json_str(rs, "new_layout");
	if (a0 && a1 && strcmp(a0, a1) && !(l0 && l1 && strcmp(l0, l1))) /* a new level says its layout itself */
		printf("        New Layout : %s\n", a1);
	putchar('\n');
	return 1;
}

static void detail_text(const struct detail *d)
{
	char t[64], sz[64], chunk[32];
	const char *layout = cmd_json_str(d->st, "layout");
	uint64_t used = d->have_sb ? d->sb.slots[0].data_size : 0;
	printf("%s:\n", d->mnt);
	printf("           Version : fsvol %u\n", d->have_sb ? d->sb.version : SB_VERSION);
	if (d->have_sb) {
		fmt_time(d->sb.ctime, t, sizeof(t));
		printf("     Creation Time : %s\n", t);
	}
	printf("        Raid Level : %s\n", or_q(cmd_json_str(d->st, "level")));
	fmt_kib(cmd_json_u64(d->st, "capacity", 0), sz, sizeof(sz));
	printf("        Array Size : %s\n", sz);
	if (used) {
		fmt_kib(used, sz, sizeof(sz));
		printf("     Used Dev Size : %s\n", sz);
	}
	printf("      Raid Devices : %u\n     Total Devices : %u\n       Persistence : Superblock is persistent\n\n",
	       d->raid, d->total);
	if (!strcmp(d->policy, "bitmap"))
		printf("     Intent Bitmap : Internal\n\n");
	if (d->have_sb) {
		fmt_time(d->sb.utime, t, sizeof(t));
		printf("       Update Time : %s\n", t);
	}
	printf("             State : %s\n", d->state);
	printf("    Active Devices : %u\n   Working Devices : %u\n    Failed Devices : %u\n     Spare Devices : %u\n\n",
	       d->active, d->working, d->failed, d->spare);
	if (layout)
		printf("            Layout : %s\n", layout);
	const struct cmd_json *qr = cmd_json_get(d->st, "q_rewrite");
	if (qr && qr->t == CMD_JSON_BOOL && qr->num != 0) /* a raid6 la/ra volume from before format 5 */
		printf("           Q Order : data order (fsvol before format 5), being rewritten in md's by the resync\n");
	size_format(cmd_json_u64(d->st, "chunk", 0), chunk, sizeof(chunk));
	printf("        Chunk Size : %s\n\n", chunk);
	printf("Consistency Policy : %s\n\n", d->policy);
	if (d->sync_name[0]) {
		printf("%*s Status : %.0f%% complete\n", 11, d->sync_name, d->sync_pct);
		if (!detail_reshape(d))
			putchar('\n');
	}
	printf("              Name : %s\n              UUID : %s\n            Events : %llu\n\n",
	       or_q(cmd_json_str(d->st, "name")), or_q(cmd_json_str(d->st, "uuid")),
	       (unsigned long long)cmd_json_u64(d->st, "events", 0));
	printf("    Number   Major   Minor   RaidDevice State\n");
	for (unsigned i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		char num[16] = "-", maj[16] = "-", min[16] = "-", rd[16] = "-";
		if (i == d->nroles && i)
			putchar('\n');
		if (r->number >= 0)
			snprintf(num, sizeof(num), "%d", r->number);
		if (r->has_dev || r->number < 0) {
			snprintf(maj, sizeof(maj), "%u", r->major);
			snprintf(min, sizeof(min), "%u", r->minor);
		}
		if (r->raid_device >= 0)
			snprintf(rd, sizeof(rd), "%d", r->raid_device);
		printf("    %6s   %5s   %5s   %6s     %-16s %s", num, maj, min, rd, r->state, r->device ? r->device : "");
		if (r->bad_blocks) /* md's bad block log (fsvol examine --examine-badblocks lists it) */
			printf("   (%u bad blocks)", r->bad_blocks);
		putchar('\n');
	}
}

static void json_num_or_null(const char *key, int has, long long v)
{
	if (has)
		printf(",\"%s\":%lld", key, v);
	else
		printf(",\"%s\":null", key);
}

static void detail_json(const struct detail *d)
{
	printf("{\"device\":");
	stats_json_string(stdout, d->mnt);
	printf(",\"version\":\"fsvol %u\"", d->have_sb ? d->sb.version : SB_VERSION);
	json_num_or_null("creation_time", d->have_sb, d->have_sb ? (long long)d->sb.ctime : 0);
	json_num_or_null("update_time", d->have_sb, d->have_sb ? (long long)d->sb.utime : 0);
	printf(",\"raid_level\":");
	stats_json_string(stdout, cmd_json_str(d->st, "level"));
	printf(",\"array_size\":%llu", (unsigned long long)cmd_json_u64(d->st, "capacity", 0));
	json_num_or_null("used_dev_size", d->have_sb, d->have_sb ? (long long)d->sb.slots[0].data_size : 0);
	printf(",\"raid_devices\":%u,\"total_devices\":%u,\"persistence\":\"superblock\",\"intent_bitmap\":%s,"
	       "\"state\":", d->raid, d->total, !strcmp(d->policy, "bitmap") ? "\"internal\"" : "null");
	stats_json_string(stdout, d->state);
	printf(",\"active_devices\":%u,\"working_devices\":%u,\"failed_devices\":%u,\"spare_devices\":%u,\"layout\":",
	       d->active, d->working, d->failed, d->spare);
	stats_json_string(stdout, cmd_json_str(d->st, "layout"));
	printf(",\"chunk_size\":%llu,\"consistency_policy\":\"%s\",\"sync_status\":",
	       (unsigned long long)cmd_json_u64(d->st, "chunk", 0), d->policy);
	if (d->sync_name[0])
		printf("{\"action\":\"%s\",\"percent\":%.1f}", d->sync_name, d->sync_pct);
	else
		printf("null");
	const struct cmd_json *rs = cmd_json_get(d->st, "reshape");
	if (rs && rs->t == CMD_JSON_OBJ)
		printf(",\"delta_devices\":%d", (int)cmd_json_u64(rs, "new_members", 0) - (int)cmd_json_u64(rs, "old_members", 0));
	printf(",\"name\":");
	stats_json_string(stdout, cmd_json_str(d->st, "name"));
	printf(",\"uuid\":");
	stats_json_string(stdout, cmd_json_str(d->st, "uuid"));
	printf(",\"events\":%llu,\"devices\":[", (unsigned long long)cmd_json_u64(d->st, "events", 0));
	for (unsigned i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		printf("%s{\"number\":", i ? "," : "");
		if (r->number >= 0)
			printf("%d", r->number);
		else
			printf("null");
		json_num_or_null("major", r->has_dev, r->major);
		json_num_or_null("minor", r->has_dev, r->minor);
		json_num_or_null("raid_device", r->raid_device >= 0, r->raid_device);
		printf(",\"state\":");
		stats_json_string(stdout, r->state);
		printf(",\"device\":");
		stats_json_string(stdout, r->device);
		printf(",\"bad_blocks\":%u}", r->bad_blocks);
	}
	printf("]}\n");
}

static int detail_run(const struct cmd *c, int argc, char **argv)
{
	struct detail_args a = { 0 };
	int first, r = cmd_parse(c, argc, argv, &first, detail_opt, &a), e;
	if (r)
		return r > 0 ? 0 : 2;
	if (argc - first != 1)
		return cmd_uerr(c, "need exactly one mount point");
	char path[PATH_MAX + 16], why[PATH_MAX + 400];
	if (cmd_is_ctl_dir(argv[first]))
		cmd_ctl_dir_refresh(argv[first]); /* current figures; a stopped server's last ones */
	snprintf(path, sizeof(path), "%s/status.json", argv[first]);
	struct cmd_json *st = cmd_json_read_file(path, &e);
	if (!st) {
		if (e == EBADMSG)
			snprintf(why, sizeof(why), "%s: not an fsvol status", path);
		else
			cmd_mnt_problem(argv[first], path, e, why, sizeof(why));
		cmd_err(c, "%s", why);
		return a.test ? 4 : 1;
	}
	struct detail *d = calloc(1, sizeof(*d));
	if (!d) {
		cmd_json_free(st);
		return cmd_err(c, "out of memory");
	}
	d->mnt = argv[first];
	d->st = st;
	detail_sb(d);
	detail_rows(d);
	detail_state(d);
	if (a.json)
		detail_json(d);
	else
		detail_text(d);
	r = a.test ? d->test : 0;
	free(d);
	cmd_json_free(st);
	return fflush(stdout) ? 1 : r;
}

const struct cmd cmd_detail = {
	.name = "detail",
	.operands = "MNT",
	.summary = "the volume's counts, state, members and recovery, as mdadm --detail",
	.opts = detail_opts,
	.run = detail_run,
};
