/* events: MNT/events (see events.h): snapshots of the volume's state every
 * 100 ms, the differences as mdadm --monitor's events, appended to a log in
 * memory that MNT/events reads. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsvol/front/events.h"
#include "fsvol/util/log.h"

#define EVENTS_POLL_MS 100

static void events_snap_take(struct vol *v, struct events_snap *s)
{
	const struct layout_geom *g = vol_geom(v);
	uint64_t failed = vol_failed_mask(v);
	struct vol_sync_info si;
	memset(s, 0, sizeof(*s));
	s->nslots = vol_nslots(v);
	s->members = vol_roles(v); /* during a reshape the slots it adds too, as md counts raid_disks */
	for (unsigned i = 0; i < s->nslots && i < SB_MAX_SLOTS; i++) {
		snprintf(s->state[i], sizeof(s->state[i]), "%s", vol_slot_state(v, i));
		s->number[i] = vol_slot_number(v, i);
		/* one look: a remove may empty the slot meanwhile (the struct stays) */
		const struct member *m = vol_member(v, i);
		if (m)
			snprintf(s->path[i], sizeof(s->path[i]), "%.*s", EVENTS_PATH_MAX - 1, m->path);
	}
	/* roles being rebuilt are in the mask too: count what md counts as failed */
	for (unsigned i = 0; i < s->members; i++)
		s->nfailed += (failed >> i) & 1;
	s->degraded = !failed ? 0 : layout_survives(g, failed) ? 1 : 2;
	vol_sync_info(v, &si);
	s->sync_what = si.what;
	s->sync_running = si.running;
	s->sync_done = si.done;
	s->sync_slot = si.rebuild_slot >= 0 ? si.rebuild_slot : si.replace_with;
	s->sync_pct = si.total ? (unsigned)(100 * si.pos / si.total) : 100;
	s->sync_start_ns = si.start_ns;
	s->sync_mismatches = si.mismatches;
}

static int is(const char *s, const char *w)
{
	return !strcmp(s, w);
}

static int same_pass(const struct events_snap *a, const struct events_snap *b)
{
	return a->sync_what && b->sync_what && a->sync_start_ns == b->sync_start_ns;
}

/* The pass of the last look was running and another began since (one
 * recovery after another: the sync thread goes straight on). */
static int pass_replaced(const struct events_snap *a, const struct events_snap *b)
{
	return a->sync_what && a->sync_running && b->sync_what && !same_pass(a, b);
}

/* The background pass: started (a new start time since the last look),
 * each fifth passed (md's --increment 20), finished (done or stopped). A
 * pass that ran entirely between two looks still shows all three. The end
 * of a pass another replaced is events_diff's. */
static void sync_events(const struct events_snap *a, const struct events_snap *b, events_emit_fn emit, void *ctx)
{
	char d[96], ev[16];
	int same = same_pass(a, b);
	if (!b->sync_what)
		return;
	int slot = is(b->sync_what, "recovery") && b->sync_slot >= 0 ? b->number[b->sync_slot] : -1;
	if (slot < 0 && same && is(a->sync_what, "recovery") && a->sync_slot >= 0) /* ended: the one it built */
		slot = a->number[a->sync_slot];
	if (!same)
		emit(ctx, "RebuildStarted", slot, b->sync_what);
	unsigned from = same ? a->sync_pct : 0, to = b->sync_running || !b->sync_done ? b->sync_pct : 100;
	for (unsigned nn = 20; nn <= 80; nn += 20)
		if (from < nn && to >= nn) {
			snprintf(ev, sizeof(ev), "Rebuild%u", nn);
			snprintf(d, sizeof(d), "%s %u%%", b->sync_what, nn);
			emit(ctx, ev, slot, d);
		}
	if (!b->sync_running && (!same || a->sync_running)) {
		snprintf(d, sizeof(d), "%s %s, %llu mismatch%s", b->sync_what, b->sync_done ? "done" : "stopped",
			 (unsigned long long)b->sync_mismatches, b->sync_mismatches == 1 ? "" : "es");
		emit(ctx, "RebuildFinished", slot, d);
	}
}

/* What a member was at the last look, found by its path (md moves a spare
 * into the failed role's slot, so slots do not follow members); a slot
 * without a member by the slot. NULL: it was not there. */
static const char *was(const struct events_snap *a, const struct events_snap *b, unsigned i)
{
	if (!b->path[i][0])
		return i < a->nslots ? a->state[i] : NULL;
	for (unsigned k = 0; k < a->nslots && k < SB_MAX_SLOTS; k++)
		if (!strcmp(a->path[k], b->path[i]))
			return a->state[k];
	return NULL;
}

void events_hold(const struct events_snap *a, struct events_snap *b)
{
	if (!same_pass(a, b) || !b->sync_running || !(is(b->sync_what, "recovery") || is(b->sync_what, "replace")))
		return;
	unsigned n = b->nslots < SB_MAX_SLOTS ? b->nslots : SB_MAX_SLOTS;
	for (unsigned i = 0; i < n; i++) {
		const char *o = was(a, b, i);
		if (!o || !b->path[i][0] || !is(b->state[i], "active") || is(o, "active"))
			continue;
		snprintf(b->state[i], sizeof(b->state[i]), "%s", o);
		if (b->sync_slot < 0 && a->sync_slot >= 0 && !strcmp(a->path[a->sync_slot], b->path[i]))
			b->sync_slot = (int)i; /* RebuildFinished still names the member it built */
	}
}

/* SpareActive for each member active now and not at the last look: rebuilt,
 * a replacement swapped in, or added and rebuilt between two looks. built
 * 1: only those the last look's pass was building; -1: all but those; 0: all. */
static void spare_active(const struct events_snap *a, const struct events_snap *b, int built, events_emit_fn emit,
			 void *ctx)
{
	unsigned n = b->nslots < SB_MAX_SLOTS ? b->nslots : SB_MAX_SLOTS;
	for (unsigned i = 0; i < n; i++) {
		const char *o = was(a, b, i);
		if (!is(b->state[i], "active") || !b->path[i][0] || (o && is(o, "active")))
			continue;
		int k = a->sync_slot, rebuilt = k >= 0 && k < SB_MAX_SLOTS && !strcmp(a->path[k], b->path[i]);
		if ((built == 1 && !rebuilt) || (built == -1 && rebuilt))
			continue;
		emit(ctx, "SpareActive", b->number[i], b->path[i]);
	}
}

void events_diff(const struct events_snap *a, const struct events_snap *b, events_emit_fn emit, void *ctx)
{
	char d[EVENTS_PATH_MAX + 64];
	unsigned n = b->nslots < SB_MAX_SLOTS ? b->nslots : SB_MAX_SLOTS;
	/* failures first: what a rebuild or a spare then does follows them */
	for (unsigned i = 0; i < n; i++) {
		const char *o = was(a, b, i), *s = b->state[i];
		const char *who = b->path[i][0] ? b->path[i] : i < a->nslots ? a->path[i] : "";
		if (!o || !(is(s, "failed") || is(s, "missing")))
			continue;
		if (is(o, "active"))
			emit(ctx, "Fail", b->number[i], who);
		else if (is(o, "rebuilding") || is(o, "spare"))
			emit(ctx, "FailSpare", b->number[i], who);
	}
	if (b->degraded && b->degraded > a->degraded) {
		snprintf(d, sizeof(d), "%u of %u members failed or missing%s", b->nfailed, b->members,
			 b->degraded == 2 ? ": beyond redundancy, the volume has FAILED" : "");
		emit(ctx, "DegradedArray", -1, d);
	}
	/* a pass's end comes before the spare it made active, and that before
	 * the next pass's start */
	int replaced = pass_replaced(a, b);
	if (replaced) {
		int slot = is(a->sync_what, "recovery") && a->sync_slot >= 0 ? a->number[a->sync_slot] : -1;
		snprintf(d, sizeof(d), "%s ended", a->sync_what);
		emit(ctx, "RebuildFinished", slot, d);
		spare_active(a, b, 1, emit, ctx);
	}
	sync_events(a, b, emit, ctx);
	spare_active(a, b, replaced ? -1 : 0, emit, ctx);
}

/* ---- the log ---- */

struct events_log {
	struct vol *v;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* events_stop */
	int stop;
	pthread_t thread;
	char name[SB_NAME_MAX + 1];
	char *buf;      /* bytes [base, base + len) of the log */
	size_t len, cap;
	uint64_t base;
	struct events_snap last, now;
};

static void events_append(void *ctx, const char *event, int number, const char *detail)
{
	struct events_log *e = ctx;
	char line[EVENTS_PATH_MAX + 256], when[32], slotw[16] = "-";
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	if (number >= 0)
		snprintf(slotw, sizeof(slotw), "m%d", number);
	int n = snprintf(line, sizeof(line), "%s.%03ldZ %s %s %s %s\n", when, ts.tv_nsec / 1000000, event, e->name,
			 slotw, detail && *detail ? detail : "-");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1, line[n - 1] = '\n';
	fsvol_log(LOG_NOTICE, "event: %s %s %s", event, slotw, detail && *detail ? detail : "-");
	pthread_mutex_lock(&e->lock);
	if (e->len + (size_t)n > EVENTS_KEEP) {
		/* drop the older half, at a line boundary */
		char *cut = memchr(e->buf + e->len / 2, '\n', e->len - e->len / 2);
		size_t drop = cut ? (size_t)(cut - e->buf) + 1 : e->len;
		memmove(e->buf, e->buf + drop, e->len - drop);
		e->len -= drop;
		e->base += drop;
	}
	if (e->len + (size_t)n > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		while (cap < e->len + (size_t)n)
			cap *= 2;
		char *b = realloc(e->buf, cap);
		if (!b) {
			pthread_mutex_unlock(&e->lock);
			return;
		}
		e->buf = b;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, line, (size_t)n);
	e->len += (size_t)n;
	pthread_mutex_unlock(&e->lock);
}

static void *events_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-events"); /* top -H, ps -L */
	struct events_log *e = arg;
	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += EVENTS_POLL_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L)
			t.tv_sec++, t.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&e->wake, &e->lock, &t);
		if (e->stop)
			break;
		pthread_mutex_unlock(&e->lock);
		events_snap_take(e->v, &e->now);
		events_hold(&e->last, &e->now);
		events_diff(&e->last, &e->now, events_append, e);
		e->last = e->now;
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int events_start(struct vol *v, struct events_log **out)
{
	struct events_log *e = calloc(1, sizeof(*e));
	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->v = v;
	sb_volume_name(vol_sb(v), e->name);
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->wake, NULL);
	/* the state at mount is the baseline; a volume started degraded says so
	 * first, as mdadm --monitor does for an array it finds degraded */
	struct events_snap none = { 0 };
	events_snap_take(v, &e->last);
	none.nslots = e->last.nslots;
	memcpy(none.state, e->last.state, sizeof(none.state));
	memcpy(none.path, e->last.path, sizeof(none.path));
	memcpy(none.number, e->last.number, sizeof(none.number));
	none.sync_slot = -1; /* a pass already running (a resync after a crash) is reported as started */
	events_diff(&none, &e->last, events_append, e);
	int r = pthread_create(&e->thread, NULL, events_main, e);
	if (r) {
		pthread_cond_destroy(&e->wake);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return -r;
	}
	*out = e;
	return 0;
}

void events_stop(struct events_log *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = 1;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->wake);
	pthread_mutex_destroy(&e->lock);
	free(e->buf);
	free(e);
}

uint64_t events_size(struct events_log *e)
{
	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	uint64_t n = e->base + e->len;
	pthread_mutex_unlock(&e->lock);
	return n;
}

size_t events_read(struct events_log *e, uint64_t off, char *buf, size_t len)
{
	size_t n = 0;
	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	if (off < e->base) {
		/* dropped: empty lines, so the offsets stay the whole log's */
		n = e->base - off < len ? (size_t)(e->base - off) : len;
		memset(buf, '\n', n);
	} else if (off < e->base + e->len) {
		size_t at = (size_t)(off - e->base);
		n = e->len - at < len ? e->len - at : len;
		memcpy(buf, e->buf + at, n);
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}
