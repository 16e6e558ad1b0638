/* fuse_front: the FUSE front end (libfuse3 low-level API).
 *
 *   MNT/volume      the logical volume (direct_io unless page cache asked)
 *   MNT/stats       counters table          MNT/stats.json   the same as JSON
 *   MNT/diskstats   /proc/diskstats lines   MNT/status       mdstat-like
 *   MNT/ctl         control commands; opened read-write, a read after a
 *                   refused write returns the reason (fsvol ctl shows it)
 *   MNT/metrics     Prometheus text format  MNT/status.json  status, as JSON
 *   MNT/trace, MNT/trace.json   live trace while open: text like blkparse, or JSON lines
 *
 * Text files are rendered once when opened (like procfs' seq files), so a
 * reader sees one consistent snapshot and never blocks I/O.
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/front/events.h"
#include "fsvol/front/fuse_front.h"
#include "fsvol/front/ctl.h"
#include "fsvol/front/fuse_uring.h"
#include "fsvol/front/report.h"
#include "fsvol/members/member.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define FF_MAX_IO (1u << 20)
#define FF_WORKERS_PER_CPU 2 /* /dev/fuse readers; none waits on a member */
#define FF_MAX_BACKGROUND 4096 /* async direct I/O requests the kernel keeps in flight */

enum { INO_ROOT = 1, INO_VOLUME, INO_STATS, INO_JSON, INO_DISKSTATS, INO_STATUS, INO_CTL, INO_TRACE, INO_TRACE_JSON, INO_METRICS, INO_STATUS_JSON,
       INO_EVENTS, INO_END };

static const struct ff_file {
	const char *name;
	mode_t mode;
	int kind; /* enum report_kind, or -1 */
} ff_files[INO_END] = {
	[INO_VOLUME] = { "volume", S_IFREG | 0660, -1 }, /* mode, owner: ff_opts */
	[INO_STATS] = { "stats", S_IFREG | 0444, REPORT_TABLE },
	[INO_JSON] = { "stats.json", S_IFREG | 0444, REPORT_JSON },
	[INO_DISKSTATS] = { "diskstats", S_IFREG | 0444, REPORT_DISKSTATS },
	[INO_STATUS] = { "status", S_IFREG | 0444, REPORT_STATUS },
	/* root-only: ctl changes the volume, the trace shows every I/O */
	[INO_CTL] = { "ctl", S_IFREG | 0600, -1 },
	[INO_TRACE] = { "trace", S_IFREG | 0400, -1 },
	[INO_TRACE_JSON] = { "trace.json", S_IFREG | 0400, -1 },
	[INO_METRICS] = { "metrics", S_IFREG | 0444, REPORT_METRICS },
	[INO_STATUS_JSON] = { "status.json", S_IFREG | 0444, REPORT_STATUS_JSON },
	[INO_EVENTS] = { "events", S_IFREG | 0444, -1 }, /* an append-only log (events.h) */
};

/* An open text or trace file. fi->fh holds its id, not a pointer: the
 * kernel can deliver a release while a read of the same file is still being
 * served (seen with async direct I/O), so readers take a reference. */
struct ff_tracer;
struct ff_handle {
	struct ff_handle *next;
	uint64_t id;
	int refs;
	int closed;
	int trace;
	pthread_mutex_t lock; /* one reader of a trace at a time */
	char *buf; /* text content */
	size_t len;
	struct ff_tracer *tracer;
};

/* What chmod, chown and touch changed: kept for the mount's lifetime. */
struct ff_iattr {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
};

struct ff {
	struct vol *v;
	struct ff_opts o;
	struct fuse_session *se;
	char optbuf[512];
	char *argv[4];
	struct fuse_args args;
	time_t t0;
	pthread_mutex_t attr_lock;
	struct ff_iattr attr[INO_END];
	pthread_mutex_t handle_lock;
	struct ff_handle *handles;
	uint64_t next_handle;
	pthread_mutex_t trace_lock;
	unsigned tracers;
	struct events_log *events; /* MNT/events */
	atomic_int ctl_jobs;       /* ctl commands on threads of their own (ff_ctl) */
};

/* A reader of MNT/trace: its cursor into the ring. */
#define FF_TRACE_BATCH 256

struct ff_tracer {
	uint64_t cursor;
	uint64_t t0;
	int json;
	/* Member records arrive before their volume request (both are logged
	 * at completion): ones whose parent is not read yet wait here. */
	size_t ncarry;
	struct stats_trace_rec carry[FF_TRACE_BATCH];
};

static struct ff *ff_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void ff_attr(struct ff *f, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	pthread_mutex_lock(&f->attr_lock);
	st->st_mode = f->attr[ino].mode;
	st->st_uid = f->attr[ino].uid;
	st->st_gid = f->attr[ino].gid;
	st->st_atim = f->attr[ino].atime;
	st->st_mtim = f->attr[ino].mtime;
	st->st_ctim = f->attr[ino].ctime;
	pthread_mutex_unlock(&f->attr_lock);
	if (ino == INO_ROOT) {
		st->st_nlink = 2;
		return;
	}
	st->st_nlink = 1;
	st->st_blksize = 4096;
	if (ino == INO_VOLUME) {
		st->st_size = (off_t)vol_geom(f->v)->capacity;
		st->st_blocks = (blkcnt_t)(vol_geom(f->v)->capacity / 512);
	}
	if (ino == INO_EVENTS) /* its real size, so tail -f sees it grow */
		st->st_size = (off_t)events_size(f->events);
}

static void ff_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = FF_MAX_IO;
	conn->max_readahead = FF_MAX_IO;
	/* Async direct I/O (aio, io_uring) arrives as background requests: the
	 * kernel's default of 12 in flight would cap an application's queue.
	 * Requests wait as objects (no thread each), so thousands may. */
	conn->max_background = FF_MAX_BACKGROUND;
	conn->congestion_threshold = FF_MAX_BACKGROUND * 3 / 4;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO; /* let aio/io_uring clients keep a queue */
	conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	if (parent != INO_ROOT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	for (fuse_ino_t i = INO_VOLUME; i < INO_END; i++)
		if (!strcmp(name, ff_files[i].name)) {
			memset(&e, 0, sizeof(e));
			e.ino = i;
			e.attr_timeout = e.entry_timeout = 1.0;
			ff_attr(ff_of(req), i, &e.attr);
			fuse_reply_entry(req, &e);
			return;
		}
	fuse_reply_err(req, ENOENT);
}

static void ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	(void)fi;
	if (ino < INO_ROOT || ino >= INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	ff_attr(ff_of(req), ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

static void ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct ff *f = ff_of(req);
	/* The volume's size is fixed: only a no-op truncate to it is accepted. */
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (ino != INO_VOLUME || (uint64_t)attr->st_size != vol_geom(f->v)->capacity) && ino != INO_CTL) {
		fuse_reply_err(req, ino == INO_VOLUME ? EINVAL : EACCES);
		return;
	}
	if (ino < INO_ROOT || ino >= INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* The kernel checked who may (default_permissions): keep the change
	 * until unmounted, as a device node's inode in devtmpfs would. */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&f->attr_lock);
	struct ff_iattr *a = &f->attr[ino];
	if (to_set & FUSE_SET_ATTR_MODE)
		a->mode = (a->mode & S_IFMT) | (attr->st_mode & 07777);
	if (to_set & FUSE_SET_ATTR_UID)
		a->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		a->gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME)
		a->atime = to_set & FUSE_SET_ATTR_ATIME_NOW ? now : attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME)
		a->mtime = to_set & FUSE_SET_ATTR_MTIME_NOW ? now : attr->st_mtim;
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
		      FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))
		a->ctime = now;
	pthread_mutex_unlock(&f->attr_lock);
	ff_getattr(req, ino, fi);
}

static void ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	char buf[2048];
	size_t used = 0;
	(void)fi;
	if (ino != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	for (off_t i = off; i < INO_END; i++) { /* ff_files[INO_END] is past the table */
		struct stat st = { 0 };
		if (i >= 2 && i < INO_VOLUME)
			continue;
		const char *name = i == 0 ? "." : i == 1 ? ".." : ff_files[i].name;
		st.st_ino = i < 2 ? INO_ROOT : (ino_t)i;
		st.st_mode = i < 2 ? S_IFDIR : ff_files[i].mode;
		size_t n = fuse_add_direntry(req, buf + used, sizeof(buf) - used, name, &st, i + 1);
		if (used + n > sizeof(buf) || used + n > size)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

/* A handle with one reference (the open's); NULL when memory is short. */
static struct ff_handle *ff_handle_new(void)
{
	struct ff_handle *h = calloc(1, sizeof(*h));
	if (h) {
		pthread_mutex_init(&h->lock, NULL);
		h->refs = 1;
	}
	return h;
}

static void ff_handle_free(struct ff_handle *h)
{
	pthread_mutex_destroy(&h->lock);
	free(h->buf);
	free(h->tracer);
	free(h);
}

static uint64_t ff_handle_add(struct ff *f, struct ff_handle *h)
{
	pthread_mutex_lock(&f->handle_lock);
	h->id = ++f->next_handle;
	h->next = f->handles;
	f->handles = h;
	pthread_mutex_unlock(&f->handle_lock);
	return h->id;
}

/* Drop a reference; lock held. */
static void ff_handle_unref(struct ff *f, struct ff_handle *h)
{
	if (--h->refs)
		return;
	for (struct ff_handle **p = &f->handles; *p; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
	ff_handle_free(h);
}

/* A reference to an open handle, or NULL once it was released. */
static struct ff_handle *ff_handle_get(struct ff *f, uint64_t id)
{
	struct ff_handle *h;
	pthread_mutex_lock(&f->handle_lock);
	for (h = f->handles; h && h->id != id; h = h->next)
		;
	if (h && !h->closed)
		h->refs++;
	else
		h = NULL;
	pthread_mutex_unlock(&f->handle_lock);
	return h;
}

static void ff_handle_put(struct ff *f, struct ff_handle *h)
{
	pthread_mutex_lock(&f->handle_lock);
	ff_handle_unref(f, h);
	pthread_mutex_unlock(&f->handle_lock);
}

static void ff_handle_close(struct ff *f, uint64_t id)
{
	pthread_mutex_lock(&f->handle_lock);
	for (struct ff_handle *h = f->handles; h; h = h->next)
		if (h->id == id && !h->closed) {
			h->closed = 1;
			ff_handle_unref(f, h);
			break;
		}
	pthread_mutex_unlock(&f->handle_lock);
}

/* MNT/status ends with the FUSE transport in use (fuse_uring.c) and, over
 * io_uring, the requests each queue thread served. */
static int ff_status_transport(struct ff_handle *h)
{
	char line[640], transport[280], threads[280];
	fu_describe(transport, sizeof(transport));
	fu_describe_threads(threads, sizeof(threads));
	snprintf(line, sizeof(line), "fuse transport: %s\n%s%s%s", transport,
		 threads[0] ? "fuse requests by queue thread: " : "", threads, threads[0] ? "\n" : "");
	char *b = realloc(h->buf, h->len + strlen(line) + 1);
	if (!b)
		return -ENOMEM;
	memcpy(b + h->len, line, strlen(line) + 1);
	h->buf = b;
	h->len += strlen(line);
	return 0;
}

static void ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ff *f = ff_of(req);
	int acc = fi->flags & O_ACCMODE;
	if (ino == INO_ROOT) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (ino >= INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fi->direct_io = 1;
	if (ino == INO_VOLUME) {
		if (f->o.page_cache) {
			fi->direct_io = 0;
			fi->keep_cache = 1;
		}
		fuse_reply_open(req, fi);
		return;
	}
	/* ctl is written (its handle keeps the last refusal's reason, for a read); the rest is read only */
	if (ino == INO_CTL ? acc == O_RDONLY : acc != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	struct ff_handle *h = ff_handle_new();
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (ino == INO_CTL) {
		fi->fh = ff_handle_add(f, h);
		fi->nonseekable = 1;
		fuse_reply_open(req, fi);
		return;
	}
	if (ino == INO_TRACE || ino == INO_TRACE_JSON) {
		struct ff_tracer *t = calloc(1, sizeof(*t));
		if (!t) {
			ff_handle_free(h);
			fuse_reply_err(req, ENOMEM);
			return;
		}
		h->trace = 1;
		h->tracer = t;
		pthread_mutex_lock(&f->trace_lock);
		if (f->tracers++ == 0)
			stats_trace_enable(vol_trace(f->v), 1);
		pthread_mutex_unlock(&f->trace_lock);
		/* Start at the ring's present position: only new requests. */
		t->cursor = atomic_load(&vol_trace(f->v)->head);
		t->t0 = vol_start_ns(f->v);
		t->json = ino == INO_TRACE_JSON;
		fi->fh = ff_handle_add(f, h);
		fi->nonseekable = 1;
		fuse_reply_open(req, fi);
		return;
	}
	if (ino == INO_EVENTS) { /* read as it grows: nothing kept per handle */
		fi->fh = ff_handle_add(f, h);
		fuse_reply_open(req, fi);
		return;
	}
	int r = report_render(f->v, (enum report_kind)ff_files[ino].kind, &h->buf, &h->len);
	if (r) {
		ff_handle_free(h);
		fuse_reply_err(req, -r);
		return;
	}
	if (ino == INO_STATUS && (r = ff_status_transport(h))) {
		ff_handle_free(h);
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = ff_handle_add(f, h);
	fuse_reply_open(req, fi);
}

static void ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ff *f = ff_of(req);
	if ((ino == INO_TRACE || ino == INO_TRACE_JSON) && fi->fh) {
		pthread_mutex_lock(&f->trace_lock);
		if (--f->tracers == 0)
			stats_trace_enable(vol_trace(f->v), 0);
		pthread_mutex_unlock(&f->trace_lock);
	}
	if (ino != INO_VOLUME && fi->fh)
		ff_handle_close(f, fi->fh);
	fuse_reply_err(req, 0);
}

/* A volume request on its way: replied to from its completion, on whatever
 * thread finishes it. */
struct ff_io {
	fuse_req_t req;
	struct vol *v;
	void *buf;
	size_t cap, size; /* cap 0: buf is not the pool's (a ring entry's payload) */
	int op;
	int fua; /* an O_DSYNC/O_SYNC write: a volume flush follows before the reply */
};

static void ff_io_done(void *arg, int res)
{
	struct ff_io *io = arg;
	if (!res && io->fua) {
		/* the write is done; the reply waits for the flush that makes it stable */
		io->fua = 0;
		int r = engine_submit(io->v, ENGINE_FLUSH, NULL, 0, 0, ff_io_done, io);
		if (!r)
			return;
		res = r;
	}
	if (res)
		fuse_reply_err(io->req, res == -EINVAL ? EINVAL : res == -ENOMEM ? ENOMEM
				      : res == -ENOSPC || res == -EDQUOT || res == -EROFS ? -res : EIO);
	else if (io->op == ENGINE_READ)
		fuse_reply_buf(io->req, io->buf, io->size);
	else if (io->op == ENGINE_WRITE)
		fuse_reply_write(io->req, io->size);
	else
		fuse_reply_err(io->req, 0);
	if (io->cap)
		bufpool_put(io->buf, io->cap);
	free(io);
}

/* Hand a volume request to the engine; the reply follows from ff_io_done.
 * A write's payload is copied: libfuse reuses its buffer when we return (and
 * it is not aligned for O_DIRECT members anyway). */
static void ff_submit(fuse_req_t req, struct vol *v, int op, const void *data, uint64_t off, size_t size, int fua)
{
	struct ff_io *io = malloc(sizeof(*io));
	void *buf = NULL;
	size_t cap = 0;
	/* a read through FUSE over io_uring lands in the ring's buffer itself */
	if (io && op == ENGINE_READ)
		buf = fu_request_buffer(size);
	if (io && size && !buf && !(buf = bufpool_get(size, &cap))) {
		free(io);
		io = NULL;
	}
	if (!io) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	*io = (struct ff_io){ .req = req, .v = v, .buf = buf, .cap = cap, .size = size, .op = op, .fua = fua };
	if (op == ENGINE_WRITE)
		memcpy(buf, data, size);
	/* a FUSE worker never waits on a member: file members' I/O goes to their
	 * ring threads and the completion replies; the worker reads the next
	 * request at once */
	engine_thread_may_block(0);
	int r = engine_submit(v, op, buf, off, size, ff_io_done, io);
	if (r)
		ff_io_done(io, r);
}

static int ff_has_parent(const struct stats_trace_rec *r, size_t n, uint64_t seq)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].parent == 0 && r[i].seq == seq)
			return 1;
	return 0;
}

static void ff_read_trace(fuse_req_t req, struct ff *f, struct ff_tracer *t, size_t size)
{
	struct stats_trace_rec recs[2 * FF_TRACE_BATCH];
	char *out = NULL;
	size_t len = 0, n = t->ncarry, keep = 0;
	/* a rendered record takes well under 256 bytes: never clip one */
	size_t want = size / 256 ? size / 256 : 1;
	if (want > FF_TRACE_BATCH)
		want = FF_TRACE_BATCH;
	memcpy(recs, t->carry, n * sizeof(recs[0]));
	if (n < want)
		n += stats_trace_read(vol_trace(f->v), &t->cursor, recs + n, want - n);
	uint64_t now = stats_now();
	t->ncarry = 0;
	for (size_t i = 0; i < n; i++) {
		/* hold a member record back (briefly) until its volume request shows */
		if (recs[i].parent && !ff_has_parent(recs, n, recs[i].parent) &&
		    now - recs[i].t_start_ns < 1000000000ull && t->ncarry < FF_TRACE_BATCH) {
			t->carry[t->ncarry++] = recs[i];
			continue;
		}
		recs[keep++] = recs[i];
	}
	/* members are named by their Number (md's, as status names them), not their slot */
	for (size_t i = 0; i < keep; i++)
		if (recs[i].dev >= 0 && vol_slot_number(f->v, (unsigned)recs[i].dev) >= 0)
			recs[i].dev = vol_slot_number(f->v, (unsigned)recs[i].dev);
	FILE *m = open_memstream(&out, &len);
	if (!m) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (t->json)
		stats_trace_render_json(m, recs, keep);
	else
		stats_trace_render_text(m, recs, keep, t->t0);
	fclose(m);
	fuse_reply_buf(req, out, len < size ? len : size);
	free(out);
}

/* MNT/ctl read: the reason of the last refused write on this handle, once
 * (like a sysfs reply); nothing after an accepted one. */
static void ff_read_ctl(fuse_req_t req, struct ff *f, uint64_t id, size_t size)
{
	struct ff_handle *h = ff_handle_get(f, id);
	if (!h) {
		fuse_reply_err(req, EBADF);
		return;
	}
	pthread_mutex_lock(&h->lock);
	fuse_reply_buf(req, h->buf, h->len < size ? h->len : size);
	free(h->buf);
	h->buf = NULL;
	h->len = 0;
	pthread_mutex_unlock(&h->lock);
	ff_handle_put(f, h);
}

/* Keep (or clear, when err is NULL) the reply a read of MNT/ctl returns. */
static void ff_ctl_reply(struct ff *f, uint64_t id, const char *err)
{
	struct ff_handle *h = ff_handle_get(f, id);
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	free(h->buf);
	h->buf = NULL;
	h->len = 0;
	if (err && (h->buf = malloc(strlen(err) + 2)))
		h->len = (size_t)sprintf(h->buf, "%s\n", err);
	pthread_mutex_unlock(&h->lock);
	ff_handle_put(f, h);
}

/* MNT/events from off: what the log holds there now (0 bytes: no more yet). */
static void ff_read_events(fuse_req_t req, struct ff *f, off_t off, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t n = off < 0 ? 0 : events_read(f->events, (uint64_t)off, buf, size);
	fuse_reply_buf(req, buf, n);
	free(buf);
}

static void ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ff *f = ff_of(req);
	if (ino == INO_VOLUME) {
		uint64_t cap = vol_geom(f->v)->capacity;
		if (off < 0 || (uint64_t)off >= cap || size == 0) {
			fuse_reply_buf(req, NULL, 0);
			return;
		}
		if (size > cap - (uint64_t)off)
			size = (size_t)(cap - (uint64_t)off); /* short read at the end */
		if (size > FF_MAX_IO)
			size = FF_MAX_IO;
		ff_submit(req, f->v, ENGINE_READ, NULL, (uint64_t)off, size, 0);
		return;
	}
	if (ino == INO_CTL) {
		ff_read_ctl(req, f, fi->fh, size);
		return;
	}
	if (ino == INO_EVENTS) {
		ff_read_events(req, f, off, size);
		return;
	}
	struct ff_handle *h = ff_handle_get(f, fi->fh);
	if (!h) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (h->trace) {
		pthread_mutex_lock(&h->lock);
		ff_read_trace(req, f, h->tracer, size);
		pthread_mutex_unlock(&h->lock);
	} else if (off < 0 || (size_t)off >= h->len) {
		fuse_reply_buf(req, NULL, 0);
	} else {
		fuse_reply_buf(req, h->buf + off, h->len - (size_t)off < size ? h->len - (size_t)off : size);
	}
	ff_handle_put(f, h);
}

/* A command written to MNT/ctl, run and answered. */
static void ff_ctl_write(fuse_req_t req, struct ff *f, uint64_t fh, const char *buf, size_t size)
{
	char err[256];
	int r = ctl_exec(f->v, buf, size, err, sizeof(err));
	ff_ctl_reply(f, fh, r ? err : NULL);
	if (r) {
		fsvol_log(LOG_WARNING, "%s", err);
		fuse_reply_err(req, -r);
	} else {
		fuse_reply_write(req, size);
	}
}

struct ff_ctl_job {
	fuse_req_t req;
	struct ff *f;
	uint64_t fh;
	size_t size;
	char buf[];
};

static void *ff_ctl_main(void *arg)
{
	struct ff_ctl_job *j = arg;
	pthread_setname_np(pthread_self(), "fsvol-ctl");
	struct ff *f = j->f;
	ff_ctl_write(j->req, f, j->fh, j->buf, j->size);
	free(j);
	atomic_fetch_sub(&f->ctl_jobs, 1);
	return NULL;
}

/* A ctl command may wait (superblocks written, a pass joined, spindles
 * drained): on a FUSE ring thread, whose loop also completes file members'
 * I/O, that wait could be for itself. It runs on a thread of its own there. */
static void ff_ctl(fuse_req_t req, struct ff *f, uint64_t fh, const char *buf, size_t size)
{
	struct ff_ctl_job *j = fu_on_ring_thread() ? malloc(sizeof(*j) + size) : NULL;
	if (j) {
		*j = (struct ff_ctl_job){ .req = req, .f = f, .fh = fh, .size = size };
		memcpy(j->buf, buf, size);
		pthread_attr_t a;
		pthread_t t;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		atomic_fetch_add(&f->ctl_jobs, 1);
		int r = pthread_create(&t, &a, ff_ctl_main, j);
		pthread_attr_destroy(&a);
		if (!r)
			return;
		atomic_fetch_sub(&f->ctl_jobs, 1);
		free(j);
	}
	ff_ctl_write(req, f, fh, buf, size);
}

static void ff_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct ff *f = ff_of(req);
	if (ino == INO_CTL) {
		ff_ctl(req, f, fi->fh, buf, size);
		return;
	}
	if (ino != INO_VOLUME) {
		fuse_reply_err(req, EACCES);
		return;
	}
	uint64_t cap = vol_geom(f->v)->capacity;
	if (off < 0 || (uint64_t)off + size > cap) {
		/* A block device does not grow: writes past the end fail. */
		fuse_reply_err(req, (uint64_t)off >= cap ? ENOSPC : EFBIG);
		return;
	}
	/* the kernel marks a write O_DSYNC/O_SYNC (opened so, pwritev2's
	 * RWF_DSYNC): it must be on stable storage when it completes */
	ff_submit(req, f->v, ENGINE_WRITE, buf, (uint64_t)off, size, !!(fi->flags & (O_DSYNC | O_SYNC)));
}

static void ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	if (ino == INO_VOLUME)
		ff_submit(req, ff_of(req)->v, ENGINE_FLUSH, NULL, 0, 0, 0);
	else
		fuse_reply_err(req, 0);
}

static void ff_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs s = { 0 };
	(void)ino;
	s.f_bsize = s.f_frsize = 4096;
	s.f_blocks = vol_geom(ff_of(req)->v)->capacity / 4096;
	s.f_files = INO_END;
	s.f_namemax = 255;
	fuse_reply_statfs(req, &s);
}

static const struct fuse_lowlevel_ops ff_ops = {
	.init = ff_init,
	.lookup = ff_lookup,
	.getattr = ff_getattr,
	.setattr = ff_setattr,
	.readdir = ff_readdir,
	.open = ff_open,
	.release = ff_release,
	.read = ff_read,
	.write = ff_write,
	.flush = ff_flush,
	.fsync = ff_fsync,
	.statfs = ff_statfs,
};

int ff_check_mountpoint(const char *mnt, char *err, size_t errlen)
{
	struct stat st, parent;
	char up[4096];
	if (stat(mnt, &st) < 0) {
		snprintf(err, errlen, "mount point %s: %s", mnt, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "mount point %s: not a directory", mnt);
		return -ENOTDIR;
	}
	snprintf(up, sizeof(up), "%s/..", mnt);
	if (stat(up, &parent) == 0 && (parent.st_dev != st.st_dev || parent.st_ino == st.st_ino)) {
		snprintf(err, errlen, "mount point %s: busy (something is already mounted there)", mnt);
		return -EBUSY;
	}
	return 0;
}

void ff_opts_default(struct ff_opts *o)
{
	struct group *g = getuid() == 0 ? getgrnam("disk") : NULL;
	*o = (struct ff_opts){ .owner = getuid(), .group = g ? g->gr_gid : getgid(), .mode = 0660 };
}

void ff_close(struct ff *f)
{
	if (!f)
		return;
	fu_stop(); /* the engine has drained: no reply goes through the ring any more */
	if (f->se) {
		fuse_session_unmount(f->se);
		fuse_remove_signal_handlers(f->se);
		fuse_session_destroy(f->se);
	}
	fuse_opt_free_args(&f->args);
	pthread_mutex_destroy(&f->trace_lock);
	while (f->handles) {
		struct ff_handle *h = f->handles;
		f->handles = h->next;
		ff_handle_free(h);
	}
	pthread_mutex_destroy(&f->handle_lock);
	pthread_mutex_destroy(&f->attr_lock);
	free(f);
}

static struct emul *ff_model_emul(void *v)
{
	return vol_model_emul(v);
}

int ff_mount(struct ff **out, struct vol *v, const struct ff_opts *o, char *err, size_t errlen)
{
	struct ff *f = calloc(1, sizeof(*f));
	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->v = v;
	f->o = *o;
	f->t0 = time(NULL);
	/* default_permissions: the kernel checks the modes below; other users
	 * come in only when asked, as for any FUSE mount */
	snprintf(f->optbuf, sizeof(f->optbuf), "fsname=fsvol,subtype=fsvol,default_permissions%s",
		 o->allow_other ? ",allow_other" : "");
	f->argv[0] = "fsvol";
	f->argv[1] = "-o";
	f->argv[2] = f->optbuf;
	f->args = (struct fuse_args)FUSE_ARGS_INIT(3, f->argv);
	pthread_mutex_init(&f->handle_lock, NULL);
	pthread_mutex_init(&f->trace_lock, NULL);
	pthread_mutex_init(&f->attr_lock, NULL);
	for (fuse_ino_t i = INO_ROOT; i < INO_END; i++) {
		struct ff_iattr *a = &f->attr[i];
		a->mode = i == INO_ROOT ? S_IFDIR | 0755 : ff_files[i].mode;
		a->uid = getuid();
		a->gid = getgid();
		a->atime = a->mtime = a->ctime = (struct timespec){ f->t0, 0 };
	}
	f->attr[INO_VOLUME].mode = S_IFREG | (o->mode & 07777);
	f->attr[INO_VOLUME].uid = o->owner;
	f->attr[INO_VOLUME].gid = o->group;
	struct fuse_session *se = fuse_session_new(&f->args, &ff_ops, sizeof(ff_ops), f);
	if (!se) {
		snprintf(err, errlen, "cannot create the FUSE session");
		ff_close(f);
		return -EIO;
	}
	if (fuse_set_signal_handlers(se)) {
		snprintf(err, errlen, "cannot install signal handlers");
		fuse_session_destroy(se);
		ff_close(f);
		return -EIO;
	}
	if (fuse_session_mount(se, o->mountpoint)) {
		snprintf(err, errlen, "cannot mount on %s (is /dev/fuse usable? is fuse3 installed?%s)", o->mountpoint,
			 o->allow_other && getuid() ? " --allow-other needs user_allow_other in /etc/fuse.conf" : "");
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
		ff_close(f);
		return -EIO;
	}
	/* before any request is read: INIT decides the transport */
	if (fu_attach(se, o->transport, o->quiet, err, errlen))
		fsvol_log(LOG_WARNING, "%s; serving through /dev/fuse", err);
	fu_model_clock(ff_model_emul, v);
	f->se = se;
	*out = f;
	return 0;
}

int ff_run(struct ff *f, struct events_log *events, char *err, size_t errlen)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (!cfg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->events = events;
	/* No worker waits on a member (ff_submit), so a few workers keep the
	 * kernel's queue drained: each with its own /dev/fuse clone (clone_fd),
	 * so they do not queue on one file's wait list, and as many kept idle as
	 * may run, so none is started and ended per burst (measured with null
	 * servers here: with clone_fd, 2 threads beat 32; max_idle_threads=1
	 * churns threads and collapses to a tenth). */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned workers = cpus < 1 ? FF_WORKERS_PER_CPU : (unsigned)cpus * FF_WORKERS_PER_CPU;
	fuse_loop_cfg_set_clone_fd(cfg, 1);
	fuse_loop_cfg_set_max_threads(cfg, workers);
	fuse_loop_cfg_set_idle_threads(cfg, workers);
	/* > 0 is the signal that ended the loop (SIGTERM, SIGINT, SIGHUP): a
	 * clean stop, like an unmount */
	int r = fuse_session_loop_mt(f->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fu_quiesce(); /* no new request from the ring either: the drain sees them all */
	while (atomic_load(&f->ctl_jobs)) { /* a ctl command still running uses the volume */
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	if (r < 0) {
		snprintf(err, errlen, "serving %s failed: %s", f->o.mountpoint, strerror(-r));
		return -EIO;
	}
	return 0;
}
