/* nbd_plugin: the NBD export, as an nbdkit plugin (fsvol-nbdkit.so).
 *
 * nbdkit gives the protocol (fixed newstyle, OPT_GO/INFO/LIST/ABORT, TLS,
 * multi-conn) and a thread pool; each callback is one synchronous engine call,
 * so NBD traffic passes the same volume counters as the FUSE file. `fsvol
 * serve` and `fsvol mount --nbd` run nbdkit with this plugin (the user never
 * names it). With mount=MNT the same process serves the FUSE mount from a
 * thread of its own; with ctl-dir=DIR it writes the counters there.
 *
 * Build: cc -shared -fPIC nbd_plugin.c <the library's PIC objects>
 *   -o fsvol-nbdkit.so $(pkg-config --libs fuse3 liburing) -lm
 */
#define NBDKIT_API_VERSION 2
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nbdkit-plugin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/core/vol_opts.h"
#include "fsvol/core/volume.h"
#include "fsvol/front/ctl_dir.h"
#include "fsvol/front/fuse_front.h"
#include "fsvol/members/member.h"
#include "fsvol/model/spindle.h"
#include "fsvol/util/size.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#define NBD_MAX_BLOCK (32u << 20) /* largest request advertised (NBD's usual limit) */
#define NBD_ZERO_BUF (1u << 20)

static struct {
	char *members[SB_MAX_SLOTS];
	unsigned nmembers;
	struct vol_opts vo;
	const char *name;      /* export name; NULL = any */
	const char *mount;     /* also serve MNT through FUSE */
	int page_cache;
	const char *ctl_dir;
	unsigned ctl_ms;
	const char *log;       /* stderr once ready (default /dev/null when ready-fd) */
	int ready_fd;          /* the launching fsvol waits for a byte here */
	struct vol *v;
	void *zeros;
	struct ctl_dir *ctl;
	pthread_t fuse_thread, watch_thread;
	int fuse_running, watch_running;
	volatile int stopping;
	volatile int fuse_done, fuse_result;
	char fuse_err[512];
} nbd = { .ready_fd = -1, .vo = { .stats = VOL_STATS_ALL } };

static int nbd_config(const char *key, const char *value)
{
	char err[256];
	if (!strcmp(key, "member")) {
		if (nbd.nmembers >= SB_MAX_SLOTS) {
			nbdkit_error("member %s: more than %u members", value, SB_MAX_SLOTS);
			return -1;
		}
		nbd.members[nbd.nmembers++] = (char *)value;
	} else if (!strcmp(key, "name")) {
		nbd.name = value;
	} else if (!strcmp(key, "mount")) {
		nbd.mount = value;
	} else if (!strcmp(key, "page-cache")) {
		nbd.page_cache = 1;
	} else if (!strcmp(key, "ctl-dir")) {
		nbd.ctl_dir = value;
	} else if (!strcmp(key, "ctl-interval-ms")) {
		nbd.ctl_ms = (unsigned)strtoul(value, NULL, 10);
	} else if (!strcmp(key, "log")) {
		nbd.log = value;
	} else if (!strcmp(key, "ready-fd")) {
		nbd.ready_fd = atoi(value);
	} else if (vol_opts_set(&nbd.vo, key, value, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	return 0;
}

static int nbd_config_complete(void)
{
	if (!nbd.nmembers) {
		nbdkit_error("no members (member=PATH, once per member)");
		return -1;
	}
	return 0;
}

/* Open the volume before nbdkit forks: errors still reach the user. */
static int nbd_get_ready(void)
{
	char err[1024];
	if (nbd.mount && ff_check_mountpoint(nbd.mount, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	if (posix_memalign(&nbd.zeros, 4096, NBD_ZERO_BUF)) {
		nbdkit_error("out of memory");
		return -1;
	}
	memset(nbd.zeros, 0, NBD_ZERO_BUF);
	if (vol_open(&nbd.v, nbd.members, nbd.nmembers, &nbd.vo, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	uint64_t failed = vol_failed_mask(nbd.v);
	/* the user still sees stderr here, as with fsvol mount */
	if (failed)
		fprintf(stderr, "fsvol: volume is degraded (missing or failed member slots: 0x%llx)\n",
			(unsigned long long)failed);
	if (vol_was_dirty(nbd.v) && layout_copies(vol_geom(nbd.v)) + layout_parity_count(vol_geom(nbd.v)) > 1)
		fprintf(stderr, "fsvol: warning: the volume was not shut down cleanly; resyncing "
				"parity and copies in the background (see status)\n");
	if (nbd.ctl_dir && ctl_dir_open(&nbd.ctl, nbd.v, nbd.ctl_dir, nbd.ctl_ms, err, sizeof(err))) {
		nbdkit_error("%s", err);
		vol_close(nbd.v);
		nbd.v = NULL;
		return -1;
	}
	return 0;
}

/* Is mnt in /proc/self/mounts as an fsvol FUSE mount? */
static int nbd_mounted(const char *mnt)
{
	char line[PATH_MAX * 2];
	int found = 0;
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[PATH_MAX], type[64];
		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) == 3 && !strcmp(dir, mnt) &&
		    !strcmp(type, "fuse.fsvol"))
			found = 1;
	}
	fclose(f);
	return found;
}

static void *nbd_fuse_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-fuse"); /* top -H, ps -L */
	struct ff_opts o = { .mountpoint = nbd.mount, .foreground = 1, .page_cache = nbd.page_cache };
	(void)arg;
	nbd.fuse_result = ff_serve(nbd.v, &o, nbd.fuse_err, sizeof(nbd.fuse_err));
	__atomic_store_n(&nbd.fuse_done, 1, __ATOMIC_RELEASE);
	/* unmounted (fsvol umount) or failed: the export ends with the mount */
	nbdkit_shutdown();
	return NULL;
}

/* End every client connection: shutdown(2) on each connected socket (the
 * listening ones accept connections; nothing else in the process is a
 * socket). nbdkit 1.32 otherwise waits, at shutdown, for idle clients to
 * hang up, and a kernel nbd-client never does: SIGTERM and fsvol umount
 * would wait forever. Requests in flight finish first (nbdkit waits for
 * its callbacks); a client sees the server go away. */
static void nbd_drop_clients(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		int fd = atoi(e->d_name), listening = 0;
		socklen_t len = sizeof(listening);
		if (fd <= 2 || fd == dirfd(d) || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (member_nbd_owns_fd(fd)) /* an NBD member's own connection */
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && !listening)
			shutdown(fd, SHUT_RDWR);
	}
	closedir(d);
}

/* Waits for the server's shutdown (a signal, or the FUSE mount gone). */
static void *nbd_watch_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-watch"); /* top -H, ps -L */
	(void)arg;
	/* nbdkit_nanosleep returns -1 early once the server is shutting down
	 * (and logs "aborting sleep because of server shut down") */
	while (!nbd.stopping && nbdkit_nanosleep(0, 200 * 1000 * 1000) == 0)
		;
	if (!nbd.stopping)
		nbd_drop_clients();
	return NULL;
}

/* Threads start here (they do not survive nbdkit's fork). */
static int nbd_after_fork(void)
{
	if (vol_start(nbd.v)) {
		nbdkit_error("cannot start the volume's threads");
		return -1;
	}
	if (nbd.mount) {
		int r = pthread_create(&nbd.fuse_thread, NULL, nbd_fuse_main, NULL);
		if (r) {
			nbdkit_error("cannot start the FUSE thread: %s", strerror(r));
			return -1;
		}
		nbd.fuse_running = 1;
		/* ready once the kernel shows the mount (or ff_serve gave up) */
		for (int i = 0; i < 30000 && !__atomic_load_n(&nbd.fuse_done, __ATOMIC_ACQUIRE) &&
				!nbd_mounted(nbd.mount); i++)
			nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
		if (__atomic_load_n(&nbd.fuse_done, __ATOMIC_ACQUIRE) || !nbd_mounted(nbd.mount)) {
			nbdkit_error("%s", nbd.fuse_err[0] ? nbd.fuse_err : "the FUSE mount did not appear");
			return -1;
		}
	}
	if (!pthread_create(&nbd.watch_thread, NULL, nbd_watch_main, NULL))
		nbd.watch_running = 1;
	if (nbd.ctl && ctl_dir_start(nbd.ctl)) {
		nbdkit_error("%s: cannot start its thread", nbd.ctl_dir);
		return -1;
	}
	if (nbd.ready_fd >= 0) {
		/* the launching fsvol returns now; later messages go to the log */
		ssize_t w = write(nbd.ready_fd, "1", 1);
		(void)w;
		close(nbd.ready_fd);
		nbd.ready_fd = -1;
		int fd = open(nbd.log ? nbd.log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
	}
	return 0;
}

/* Take the FUSE mount down (nbdkit was signalled) and wait for its thread. */
static void nbd_fuse_stop(void)
{
	if (!nbd.fuse_running)
		return;
	if (!__atomic_load_n(&nbd.fuse_done, __ATOMIC_ACQUIRE) && nbd_mounted(nbd.mount)) {
		if (geteuid() == 0) {
			umount2(nbd.mount, MNT_DETACH);
		} else {
			pid_t p = fork();
			if (p == 0) {
				execlp("fusermount3", "fusermount3", "-u", "-z", nbd.mount, (char *)NULL);
				_exit(127);
			}
			int st;
			if (p > 0)
				waitpid(p, &st, 0);
		}
	}
	pthread_join(nbd.fuse_thread, NULL);
	nbd.fuse_running = 0;
}

/* After the last connection: stop the mount, write the last counters, close clean. */
static void nbd_cleanup(void)
{
	nbd.stopping = 1;
	if (nbd.watch_running)
		pthread_join(nbd.watch_thread, NULL);
	nbd.watch_running = 0;
	nbd_fuse_stop();
	ctl_dir_close(nbd.ctl);
	nbd.ctl = NULL;
	if (nbd.v) {
		vol_close(nbd.v);
		nbd.v = NULL;
	}
	free(nbd.zeros);
	nbd.zeros = NULL;
}

static int nbd_list_exports(int readonly, int is_tls, struct nbdkit_exports *exports)
{
	(void)readonly, (void)is_tls;
	return nbdkit_add_export(exports, nbd.name ? nbd.name : "", "fsvol volume");
}

static const char *nbd_default_export(int readonly, int is_tls)
{
	(void)readonly, (void)is_tls;
	return nbd.name ? nbd.name : "";
}

static void *nbd_open(int readonly)
{
	const char *want = nbdkit_export_name();
	(void)readonly;
	if (nbd.name && want && strcmp(want, nbd.name)) {
		nbdkit_error("no export named '%s' (this server exports '%s')", want, nbd.name);
		nbdkit_set_error(ENOENT);
		return NULL;
	}
	return &nbd;
}

static int64_t nbd_get_size(void *h)
{
	(void)h;
	return (int64_t)vol_geom(nbd.v)->capacity;
}

static const char *nbd_export_description(void *h)
{
	(void)h;
	return "fsvol volume";
}

static int nbd_true(void *h)
{
	(void)h;
	return 1;
}

static int nbd_can_fua(void *h)
{
	(void)h;
	return NBDKIT_FUA_NATIVE; /* a write with FUA is a write, then a volume flush */
}

/* Rotational when some member carries an emulated hard disk. */
static int nbd_is_rotational(void *h)
{
	(void)h;
	for (unsigned i = 0; i < vol_nslots(nbd.v); i++) {
		struct member *m = vol_member(nbd.v, i);
		if (m && atomic_load(&m->modeled) && m->spindle && m->spindle->p.kind == SPINDLE_HDD)
			return 1;
	}
	return 0;
}

/* minimum: a sector; preferred: the chunk on striped levels (a request within
 * one chunk touches one member), else a page; maximum: 32 MiB. */
static int nbd_block_size(void *h, uint32_t *minimum, uint32_t *preferred, uint32_t *maximum)
{
	const struct layout_geom *g = vol_geom(nbd.v);
	(void)h;
	*minimum = 512;
	*preferred = 4096;
	if (g->level == LAYOUT_RAID0 || g->level == LAYOUT_RAID10 || layout_is_parity(g))
		*preferred = g->chunk < NBD_MAX_BLOCK ? (uint32_t)g->chunk : NBD_MAX_BLOCK;
	*maximum = NBD_MAX_BLOCK;
	return 0;
}

/* nbdkit checks ranges against get_size already; checked again at this edge. */
static int nbd_range(uint32_t count, uint64_t off)
{
	uint64_t cap = vol_geom(nbd.v)->capacity;
	if (off > cap || count > cap - off) {
		nbdkit_error("request [%llu, +%u) beyond the volume (%llu bytes)",
			     (unsigned long long)off, count, (unsigned long long)cap);
		nbdkit_set_error(EINVAL);
		return -1;
	}
	return 0;
}

/* -errno from the engine becomes nbdkit's error (the one edge). */
static int nbd_result(int r)
{
	if (!r)
		return 0;
	nbdkit_set_error(-r);
	return -1;
}

static int nbd_pread(void *h, void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	(void)h, (void)flags;
	if (nbd_range(count, off))
		return -1;
	return nbd_result(engine_read(nbd.v, buf, off, count));
}

static int nbd_pwrite(void *h, const void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	(void)h;
	if (nbd_range(count, off))
		return -1;
	int r = engine_write(nbd.v, buf, off, count);
	if (!r && (flags & NBDKIT_FLAG_FUA))
		r = engine_flush(nbd.v);
	return nbd_result(r);
}

static int nbd_flush(void *h, uint32_t flags)
{
	(void)h, (void)flags;
	/* the engine flushes every member: it covers writes of every connection */
	return nbd_result(engine_flush(nbd.v));
}

/* Zeros written through the engine: counted, and every level's redundancy
 * stays consistent (a hole punched below the mapping would not). */
static int nbd_zero(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	(void)h;
	if (nbd_range(count, off))
		return -1;
	int r = 0;
	while (!r && count) {
		uint32_t n = count < NBD_ZERO_BUF ? count : NBD_ZERO_BUF;
		r = engine_write(nbd.v, nbd.zeros, off, n);
		off += n;
		count -= n;
	}
	if (!r && (flags & NBDKIT_FLAG_FUA))
		r = engine_flush(nbd.v);
	return nbd_result(r);
}

/* Trim leaves zeros behind, like a zero (reads after a trim are defined). */
static int nbd_trim(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	return nbd_zero(h, count, off, flags);
}

static struct nbdkit_plugin plugin = {
	.name = "fsvol",
	.longname = "fsvol: a software RAID volume with instrumentation",
	.version = "0.1.0",
	.description = "Serves an fsvol volume (run it through 'fsvol serve').",
	.config = nbd_config,
	.config_complete = nbd_config_complete,
	.config_help = "member=PATH (repeated) [name=EXPORT] [mount=MNT] [ctl-dir=DIR] [log=FILE]\n"
		       "buffered=1 force=1 stats=all|volume|off model=SPEC read-policy=P",
	.magic_config_key = "member",
	.get_ready = nbd_get_ready,
	.after_fork = nbd_after_fork,
	.cleanup = nbd_cleanup,
	.unload = nbd_cleanup, /* get_ready opened the volume, after_fork never ran */
	.list_exports = nbd_list_exports,
	.default_export = nbd_default_export,
	.open = nbd_open,
	.get_size = nbd_get_size,
	.export_description = nbd_export_description,
	.block_size = nbd_block_size,
	.can_write = nbd_true,
	.can_flush = nbd_true,
	.can_trim = nbd_true,
	.can_zero = nbd_true,
	.can_fua = nbd_can_fua,
	.can_multi_conn = nbd_true,
	.is_rotational = nbd_is_rotational,
	.pread = nbd_pread,
	.pwrite = nbd_pwrite,
	.flush = nbd_flush,
	.trim = nbd_trim,
	.zero = nbd_zero,
	.errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
