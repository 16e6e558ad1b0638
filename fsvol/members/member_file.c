/* member_file: regular files and block devices.
 *
 * Two ways to run a batch, chosen by the caller's io->nowait:
 * - a synchronous caller that may block (superblocks, the CLI, nbdkit's
 *   threads) runs the batch in commit: one I/O as a plain syscall, several
 *   through this thread's own ring, submitted and reaped together;
 * - every other caller (FUSE workers, the model's clock, a completion, the
 *   load generator) hands the batch to a ring thread and goes back to work:
 *   no thread waits on a member; the completion runs on the ring thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <liburing.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsvol/members/member.h"
#include "fsvol/members/member_map.h"
#include "fsvol/util/ring_wake.h"
#include "fsvol/util/uring_loop.h"

#define FILE_RING 256u
#define FILE_ASYNC_RING 1024u
/* A tmpfs I/O this large, from a FUSE ring thread, is copied on a ring
 * thread (file_commit). */
#define FILE_COPY_AWAY (64u << 10)

struct file_priv {
	int fd;
	int in_memory; /* tmpfs: a read or write is a copy that never waits for a disk */
	struct member_map *map; /* tmpfs: reads and writes copied through a mapping (member_map.h) */
};

static int file_fd(const struct member *m)
{
	return ((const struct file_priv *)m->priv)->fd;
}

/* ---- open, close, create ---- */

static int file_rotational(const struct stat *st)
{
	char path[128], c = '0';
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational", major(st->st_rdev),
		 minor(st->st_rdev));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '1';
}

static int file_open(struct member *m, const char *path, int direct, char *err, size_t errlen)
{
	struct stat st;
	/* Look before opening: O_DIRECT on a FIFO or a character device fails
	 * with a message about O_DIRECT that would mislead. */
	if (stat(path, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file or block device", path);
		return -EINVAL;
	}
	int fd = open(path, O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0));
	if (fd < 0 && direct && errno == EINVAL) {
		snprintf(err, errlen, "%s: this filesystem does not support O_DIRECT; mount with --buffered", path);
		return -EINVAL;
	}
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	m->caps = MEMBER_CAN_FLUSH | MEMBER_CAN_ZERO | MEMBER_CAN_BLOCK;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
			int e = errno;
			snprintf(err, errlen, "%s: BLKGETSIZE64: %s", path, strerror(e));
			close(fd);
			return -e;
		}
		m->size = bytes;
		m->is_blockdev = 1;
		m->dev = st.st_rdev;
		m->ino = 0;
		if (file_rotational(&st))
			m->caps |= MEMBER_ROTATIONAL;
	} else {
		m->size = (uint64_t)st.st_size;
		m->dev = st.st_dev;
		m->ino = st.st_ino;
	}
	struct file_priv *p = malloc(sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->fd = fd;
	struct statfs sfs;
	p->in_memory = !S_ISBLK(st.st_mode) && fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
	p->map = NULL;
	if (p->in_memory)
		member_map_open(&p->map, fd, m->size);
	m->priv = p;
	m->direct = direct;
	/* 4 KiB covers every logical block size we meet (512e and 4Kn). */
	m->align = 4096;
	return 0;
}

static void file_close(struct member *m)
{
	struct file_priv *p = m->priv;
	if (p) {
		member_map_close(p->map);
		close(p->fd);
		free(p);
	}
	m->priv = NULL;
}

static int file_create(const char *path, uint64_t size, char *err, size_t errlen)
{
	/* a member holds a raw volume: only its owner reads it (like md's 0660 root:disk) */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return -e;
	}
	close(fd);
	return 0;
}

static int file_grow(struct member *m, uint64_t size)
{
	if (m->is_blockdev)
		return -EINVAL;
	if (ftruncate(file_fd(m), (off_t)size) < 0)
		return -errno;
	m->size = size;
	return 0;
}

static int file_alloc(struct member *m, uint64_t off, uint64_t len)
{
	if (m->is_blockdev)
		return 0; /* a device has no holes */
	return fallocate(file_fd(m), 0, (off_t)off, (off_t)len) < 0 ? -errno : 0;
}

static int file_lock(struct member *m)
{
	/* An advisory lock for as long as the fd is open (the daemon's life). */
	return flock(file_fd(m), LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
}

static int file_zero(struct member *m, uint64_t off, uint64_t len)
{
	int fd = file_fd(m);
	if (m->is_blockdev) {
		uint64_t range[2] = { off, len };
		return ioctl(fd, BLKZEROOUT, range) < 0 ? -errno : 0;
	}
	member_map_punched(((struct file_priv *)m->priv)->map, off, len);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	return member_write_zeros(m, off, len); /* no hole punching here */
}

/* ---- data I/O ---- */

/* A short transfer means the member is shorter than its superblock says. */
static int file_result(const struct member_io *io, int res)
{
	if (res >= 0 && io->op != MEMBER_FLUSH && (uint64_t)res != io->len)
		return -EIO;
	if (res >= 0 && io->op == MEMBER_WRITE) /* those pages hold data now */
		member_map_written(((struct file_priv *)((struct member *)io->bpriv[0])->priv)->map, io->off, io->len);
	return res < 0 ? res : 0;
}

static void file_prep(struct io_uring_sqe *sqe, struct member_io *io)
{
	int fd = file_fd(io->bpriv[0]);
	/* one buffer: the plain op, no iovec for the kernel to copy in and check */
	if (io->op == MEMBER_READ && io->niov == 1 && io->iov[0].iov_len <= UINT_MAX)
		io_uring_prep_read(sqe, fd, io->iov[0].iov_base, (unsigned)io->iov[0].iov_len, io->off);
	else if (io->op == MEMBER_WRITE && io->niov == 1 && io->iov[0].iov_len <= UINT_MAX)
		io_uring_prep_write(sqe, fd, io->iov[0].iov_base, (unsigned)io->iov[0].iov_len, io->off);
	else if (io->op == MEMBER_READ)
		io_uring_prep_readv(sqe, fd, io->iov, io->niov, io->off);
	else if (io->op == MEMBER_WRITE)
		io_uring_prep_writev(sqe, fd, io->iov, io->niov, io->off);
	else
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data(sqe, io);
}

static void file_sync_one(struct member_io *io)
{
	int fd = file_fd(io->bpriv[0]);
	struct member_map *mm = ((struct file_priv *)((struct member *)io->bpriv[0])->priv)->map;
	if (mm && io->op != MEMBER_FLUSH) {
		int r = io->op == MEMBER_READ ? member_map_read(mm, io->iov, io->niov, io->off, io->len)
					      : member_map_write(mm, io->iov, io->niov, io->off, io->len);
		if (r) {
			io->res = r < 0 ? r : 0;
			return;
		}
	}
	ssize_t r;
	do {
		if (io->op == MEMBER_READ)
			r = preadv(fd, io->iov, (int)io->niov, (off_t)io->off);
		else if (io->op == MEMBER_WRITE)
			r = pwritev(fd, io->iov, (int)io->niov, (off_t)io->off);
		else
			r = fdatasync(fd);
	} while (r < 0 && errno == EINTR);
	io->res = file_result(io, r < 0 ? -errno : (int)r);
}

/* This thread's queue and ring (blocking callers). */
static __thread struct member_io *tl_head, *tl_last;
static __thread struct io_uring *tl_ring;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_ring_free(void *p)
{
	io_uring_queue_exit(p);
	free(p);
}

static void tl_key_make(void)
{
	pthread_key_create(&tl_key, tl_ring_free);
}

static struct io_uring *tl_ring_get(void)
{
	if (tl_ring)
		return tl_ring;
	pthread_once(&tl_once, tl_key_make);
	struct io_uring *r = malloc(sizeof(*r));
	if (!r || io_uring_queue_init(FILE_RING, r, 0) < 0) {
		free(r);
		return NULL;
	}
	pthread_setspecific(tl_key, r);
	return tl_ring = r;
}

/* Run n queued I/Os (blocking): submit together, reap together. */
static void file_run_batch(struct member_io *list, unsigned n)
{
	struct io_uring *ring = n > 1 ? tl_ring_get() : NULL;
	if (!ring) {
		for (struct member_io *io = list, *next; io; io = next) {
			next = io->next;
			file_sync_one(io);
			io->done(io);
		}
		return;
	}
	while (list) {
		unsigned k = 0;
		struct member_io *first = list;
		for (; list && k < FILE_RING; k++) {
			struct member_io *io = list;
			list = io->next;
			file_prep(io_uring_get_sqe(ring), io);
		}
		int r;
		while ((r = io_uring_submit_and_wait(ring, k)) == -EINTR || r == -EAGAIN || r == -EBUSY)
			;
		if (r < 0) {
			/* The ring is unusable: drop it (and what it holds unsent), run
			 * this part one by one. */
			pthread_setspecific(tl_key, NULL);
			tl_ring_free(ring);
			tl_ring = NULL;
			for (struct member_io *io = first; io != list;) {
				struct member_io *next = io->next;
				file_sync_one(io);
				io->done(io);
				io = next;
			}
			file_run_batch(list, 1);
			return;
		}
		for (unsigned got = 0; got < k;) {
			struct io_uring_cqe *cqe;
			int w = io_uring_wait_cqe(ring, &cqe);
			if (w == -EINTR)
				continue;
			if (w < 0)
				break;
			struct member_io *io = io_uring_cqe_get_data(cqe);
			io->res = file_result(io, cqe->res);
			io_uring_cqe_seen(ring, cqe);
			got++;
			io->done(io);
		}
	}
}

/* Ring threads for callers that must not block (a FUSE worker, the model's
 * clock, a completion, an asynchronous load generator): a bounded set, one
 * per CPU up to FILE_RING_THREADS. A caller pushes its batch on one thread's
 * list and goes back to work; the ring thread submits it on its own ring and
 * runs the completions. Its ring completes inline what the kernel can
 * (tmpfs, the page cache: COOP_TASKRUN and SINGLE_ISSUER, as fio sets up its
 * own), and a submit that would block the thread goes to io-wq, not to the
 * caller. A caller wakes the thread only when it sleeps (util/ring_wake.h). */
#define FILE_RING_THREADS 4u

struct file_rt {
	_Alignas(64) _Atomic(struct member_io *) in; /* pushed by callers (a stack) */
	struct ring_wake wake;
	_Alignas(64) struct io_uring ring;
	unsigned inflight;
	pthread_t tid;
	sem_t started;
	atomic_int ok;
};

static struct {
	pthread_once_t once;
	unsigned n;
	atomic_uint next;
	struct file_rt *rt;
} file_async = { .once = PTHREAD_ONCE_INIT };

static __thread struct file_rt *tl_rt; /* the ring thread this thread feeds */
static __thread int tl_is_rt;

static int file_in_memory(const struct member_io *io)
{
	return io->op != MEMBER_FLUSH && ((struct file_priv *)((struct member *)io->bpriv[0])->priv)->in_memory;
}

/* Put what callers pushed on the ring, oldest first; a tmpfs member's copy
 * (file_commit sends the large ones here) is done on this thread. */
static void rt_take(struct file_rt *t)
{
	struct member_io *list = atomic_exchange_explicit(&t->in, NULL, memory_order_acquire), *fifo = NULL;
	while (list) { /* the stack holds the newest first */
		struct member_io *io = list;
		list = io->next;
		io->next = fifo;
		fifo = io;
	}
	for (struct member_io *io = fifo, *next; io; io = next) {
		next = io->next;
		if (file_in_memory(io)) {
			file_sync_one(io);
			io->done(io);
			continue;
		}
		struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
		if (!sqe) {
			io_uring_submit(&t->ring);
			sqe = io_uring_get_sqe(&t->ring);
		}
		if (!sqe) { /* the ring is full of what it cannot start: try later */
			for (struct member_io *r = io, *rn; r; r = rn) {
				rn = r->next;
				struct member_io *head = atomic_load_explicit(&t->in, memory_order_relaxed);
				do
					r->next = head;
				while (!atomic_compare_exchange_weak_explicit(&t->in, &head, r, memory_order_release,
									      memory_order_relaxed));
			}
			return;
		}
		file_prep(sqe, io);
		t->inflight++;
	}
}

/* A completion of the ring thread's own: the member I/O's. */
static void rt_done(void *ctx, void *ptr, int res)
{
	struct file_rt *t = ctx;
	struct member_io *io = ptr;
	io->res = file_result(io, res);
	t->inflight--;
	io->done(io); /* it may queue more I/O (on this thread too): the CQ slot is free */
}

static void rt_woken(void *ctx, void *ptr, int res)
{
	struct file_rt *t = ctx;
	(void)ptr, (void)res;
	ring_wake_arm(&t->wake, &t->ring);
}

static uring_cqe_fn *const rt_handlers[URING_KINDS] = {
	[URING_OWN] = rt_done,
	[URING_WAKE] = rt_woken,
};

static void *file_ring_thread(void *arg)
{
	struct file_rt *t = arg;
	pthread_setname_np(pthread_self(), "fsvol-ring"); /* top -H, ps -L */
	/* SINGLE_ISSUER: the ring belongs to the task that creates it, so each
	 * ring thread makes its own and reports how that went */
	int r = uring_loop_init(&t->ring, FILE_ASYNC_RING, 8 * FILE_ASYNC_RING, 0);
	atomic_store(&t->ok, r == 0);
	sem_post(&t->started); /* t->ok tells */
	if (r < 0)
		return NULL;
	tl_is_rt = 1;
	tl_rt = t;
	ring_wake_arm(&t->wake, &t->ring);
	for (;;) {
		rt_take(t);
		/* say we sleep, then look again: a batch pushed after this either is
		 * seen here or wakes us; sleep only when there was none */
		ring_wake_sleepy(&t->wake);
		r = ring_wake_wait(&t->wake, &t->ring, atomic_load_explicit(&t->in, memory_order_seq_cst) != NULL);
		if (uring_loop_fatal(r)) {
			fprintf(stderr, "fsvol: member ring thread: %s\n", strerror(-r));
			abort(); /* I/O in flight would never complete: fail loudly */
		}
		uring_loop_reap(&t->ring, rt_handlers, t);
	}
}

static int rt_init(struct file_rt *t)
{
	atomic_init(&t->in, NULL);
	int r = ring_wake_init(&t->wake, uring_tag(NULL, URING_WAKE));
	if (r)
		return r;
	sem_init(&t->started, 0, 0);
	r = -pthread_create(&t->tid, NULL, file_ring_thread, t);
	if (!r) {
		while (sem_wait(&t->started) < 0 && errno == EINTR)
			;
		pthread_detach(t->tid);
		if (!atomic_load(&t->ok))
			r = -ENOMEM;
	}
	sem_destroy(&t->started);
	if (r)
		ring_wake_close(&t->wake);
	return r;
}

static void file_async_init(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cpus < 1 ? 1 : cpus > (long)FILE_RING_THREADS ? FILE_RING_THREADS : (unsigned)cpus;
	struct file_rt *rt = aligned_alloc(64, n * sizeof(*rt));
	if (!rt)
		return;
	memset(rt, 0, n * sizeof(*rt));
	unsigned ok = 0;
	for (unsigned i = 0; i < n; i++)
		if (rt_init(&rt[ok]) == 0)
			ok++;
	if (!ok) {
		free(rt);
		return;
	}
	file_async.rt = rt;
	file_async.n = ok;
}

static void file_run_async(struct member_io *list)
{
	pthread_once(&file_async.once, file_async_init);
	if (!file_async.n) {
		file_run_batch(list, 1); /* no ring threads: run them here, one by one */
		return;
	}
	struct file_rt *t = tl_rt;
	if (!t) /* each thread feeds one ring thread, so its I/O keeps its order */
		t = tl_rt = &file_async.rt[atomic_fetch_add_explicit(&file_async.next, 1, memory_order_relaxed) %
					   file_async.n];
	/* the stack holds the newest first: reverse the batch on the way in */
	struct member_io *rev = NULL, *last = list;
	for (struct member_io *io = list, *next; io; io = next) {
		next = io->next;
		io->next = rev;
		rev = io;
	}
	/* last, the oldest, is now the bottom of the pushed chain */
	struct member_io *head = atomic_load_explicit(&t->in, memory_order_relaxed);
	do
		last->next = head;
	while (!atomic_compare_exchange_weak_explicit(&t->in, &head, rev, memory_order_seq_cst, memory_order_relaxed));
	if (!tl_is_rt || t != tl_rt)
		ring_wake_kick(&t->wake);
}

static void file_queue(struct member *m, struct member_io *io)
{
	io->bpriv[0] = m;
	io->next = NULL;
	if (tl_last)
		tl_last->next = io;
	else
		tl_head = io;
	tl_last = io;
}

/* A thread that runs its own io_uring loop (FUSE over io_uring's queue
 * threads) lends it: its members' I/O goes on that ring, tagged, and its loop
 * hands the completions back (member_file_complete). No hand-off, no wake-up:
 * what the kernel completes inline is done by the next turn of that loop. */
static __thread struct io_uring *tl_lent;
static __thread unsigned tl_lent_inflight; /* I/Os on it not yet completed */

void member_file_lend_ring(struct io_uring *ring)
{
	tl_lent = ring;
}

unsigned member_file_lent_inflight(void)
{
	return tl_lent_inflight;
}

void member_file_complete(void *ctx, void *ptr, int res)
{
	struct member_io *io = ptr;
	(void)ctx;
	tl_lent_inflight--;
	io->res = file_result(io, res);
	io->done(io);
}

static void file_run_lent(struct member_io *list)
{
	for (struct member_io *io = list, *next; io; io = next) {
		next = io->next;
		struct io_uring_sqe *sqe = io_uring_get_sqe(tl_lent);
		if (!sqe) {
			io_uring_submit(tl_lent);
			sqe = io_uring_get_sqe(tl_lent);
		}
		if (!sqe) { /* the host's ring is full: the ring threads take the rest */
			file_run_async(io);
			return;
		}
		file_prep(sqe, io);
		io_uring_sqe_set_data(sqe, uring_tag(io, URING_LENT));
		tl_lent_inflight++;
	}
}

static void file_commit(struct member *m)
{
	(void)m;
	/* Whatever this thread queued (on any file member) goes out now. */
	struct member_io *list = tl_head, *wait = NULL, **wt = &wait, *nowait = NULL, **nt = &nowait;
	struct member_io *away = NULL, **at = &away;
	unsigned nwait = 0;
	tl_head = tl_last = NULL;
	for (struct member_io *io = list, *next; io; io = next) {
		next = io->next;
		io->next = NULL;
		if (io->nowait && file_in_memory(io) && io->len >= FILE_COPY_AWAY && tl_lent) {
			/* a FUSE ring thread copies each reply into the caller's
			 * pages itself: a large member copy goes to a ring thread
			 * (run_async), on another CPU, so the two copies overlap */
			*at = io;
			at = &io->next;
			continue;
		}
		if (io->nowait && file_in_memory(io)) {
			/* a tmpfs member: the copy is the whole I/O (io_uring would hand
			 * it to an io-wq worker), so do it here, as memory members do */
			file_sync_one(io);
			io->done(io);
			continue;
		}
		if (io->nowait) {
			*nt = io;
			nt = &io->next;
		} else {
			*wt = io;
			wt = &io->next;
			nwait++;
		}
	}
	if (away)
		file_run_async(away);
	if (nowait && tl_lent)
		file_run_lent(nowait);
	else if (nowait)
		file_run_async(nowait);
	if (wait)
		file_run_batch(wait, nwait);
}

const struct member_ops member_file_ops = {
	.name = "file",
	.prefix = NULL,
	.open = file_open,
	.close = file_close,
	.queue = file_queue,
	.commit = file_commit,
	.zero = file_zero,
	.create = file_create,
	.grow = file_grow,
	.alloc = file_alloc,
	.lock = file_lock,
};
