/* member: one member of a volume (a "spindle") and the backend that does its I/O.
 *
 * A backend is one file implementing a const struct member_ops, listed in the
 * table of members/member.c that picks it by the member's name:
 *
 *   /path/to/file, /dev/sdX   file    regular files and block devices (io_uring)
 *   mem:NAME[:SIZE]           memory  process memory, for tests and experiments
 *   nbd://HOST[:PORT]/EXPORT  nbd     a network block device through libnbd
 *   nbd+unix:///EXPORT?socket=PATH      (also nbds://, nbds+unix:// with TLS)
 *
 * Filters (filter.h) are members that wrap another member: every served
 * member carries fault, delay and cache filters (member_fault.c, fault.h).
 *
 * Data I/O is asynchronous, in fio's queue/commit manner: the engine queues
 * every member I/O of a batch, then commits each member once; every I/O then
 * completes exactly once through io->done, either before commit returns or
 * later from a backend's own thread. All offsets are bytes on the member.
 */
#ifndef FSVOL_MEMBER_H
#define FSVOL_MEMBER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct member;

enum member_op { MEMBER_READ = 0, MEMBER_WRITE = 1, MEMBER_FLUSH = 2 };

/* Capabilities (member->caps), discovered at open. */
#define MEMBER_CAN_FLUSH 0x01u  /* flush makes completed writes durable */
#define MEMBER_CAN_ZERO 0x02u   /* zero() is cheaper than writing zeros */
#define MEMBER_CAN_BLOCK 0x04u  /* commit may block the caller for the I/O (see nowait) */
#define MEMBER_ROTATIONAL 0x08u /* a spinning disk (a block device's own flag) */

/* One member I/O. The caller fills op, off, len, iov/niov, done (and nowait);
 * the backend sets res (0, or -errno; a short transfer is -EIO) before done. */
struct member_io {
	uint8_t op;               /* enum member_op */
	uint8_t nowait;           /* the caller must not block: a CAN_BLOCK backend
				   * hands the I/O to its own thread instead */
	unsigned niov;
	uint64_t off, len;        /* len 0 for a flush */
	struct iovec *iov;
	int res;
	void (*done)(struct member_io *io); /* exactly once, any thread */
	void *owner;              /* the caller's */
	struct member_io *next;   /* the backend's queue link */
	void *bpriv[2];           /* the backend's (a wrapper keeps the caller's done here) */
};

struct member_ops {
	const char *name;
	const char *prefix;       /* names this backend opens ("mem:"); NULL: the default */
	int filter;               /* 1: wraps another member (priv starts with struct
				   * filter, filter.h): fault, delay, cache */
	/* Open name for I/O; fill m->size, m->align, m->caps, m->dev/ino and
	 * m->priv. 0, or -errno with a message naming the member in err. */
	int (*open)(struct member *m, const char *name, int direct, char *err, size_t errlen);
	void (*close)(struct member *m);
	/* Queue io (see struct member_io); nothing need start before commit. */
	void (*queue)(struct member *m, struct member_io *io);
	/* Start what this thread queued on m. */
	void (*commit)(struct member *m);
	/* Make [off, off+len) read as zeros (a fresh volume). 0 or -errno. */
	int (*zero)(struct member *m, uint64_t off, uint64_t len);
	/* Create name with size bytes (fsvol create), or grow it. Optional. */
	int (*create)(const char *name, uint64_t size, char *err, size_t errlen);
	int (*grow)(struct member *m, uint64_t size);
	/* Allocate [off, off+len) on the host so writes there never meet a full
	 * filesystem (fsvol create --prealloc); reads stay zeros. Optional. */
	int (*alloc)(struct member *m, uint64_t off, uint64_t len);
	/* Claim the member for this process: -EWOULDBLOCK when another holds it. */
	int (*lock)(struct member *m);
};

extern const struct member_ops member_file_ops;
extern const struct member_ops member_mem_ops;
extern const struct member_ops member_nbd_ops;

struct member {
	const struct member_ops *ops;
	void *priv;                /* the backend's */
	char path[4096];
	unsigned caps;             /* MEMBER_CAN_* */
	int direct;                /* file: opened with O_DIRECT */
	int is_blockdev;           /* a fixed-size device: never grown */
	uint64_t size;             /* bytes of the member */
	uint64_t dev, ino;         /* identity, to catch the same member given twice */
	unsigned align;            /* required buffer/offset alignment for I/O */
	int slot;                  /* superblock slot, -1 before assembly */
	uint64_t data_offset;
	struct stats_dev *stats;   /* below-the-mapping counters */
};

/* The backend that opens name (by prefix; plain paths are files). */
const struct member_ops *member_backend(const char *name);
/* Open name with its backend. 0 or -errno with a message in err. */
int member_open(struct member *m, const char *name, int direct, char *err, size_t errlen);
void member_close(struct member *m);
int member_lock(struct member *m);
/* Create name with size bytes through its backend (-ENOTSUP when it cannot). */
int member_create(const char *name, uint64_t size, char *err, size_t errlen);

/* Synchronous I/O through the backend, for superblocks and tools: 0 or -errno. */
int member_pread(struct member *m, void *buf, size_t len, uint64_t off);
int member_pwrite(struct member *m, const void *buf, size_t len, uint64_t off);
int member_flush(struct member *m);
/* Write zeros over [off, off+len) (a backend's zero() with nothing cheaper). */
int member_write_zeros(struct member *m, uint64_t off, uint64_t len);
/* Queue, commit and wait for one io (it may complete on another thread). */
int member_io_sync(struct member *m, struct member_io *io);

/* File members (member_file.c): a thread that runs its own io_uring loop may
 * lend that ring; the file I/O it must not wait for then goes on it, tagged
 * URING_LENT (util/uring_loop.h), and the loop hands each such completion to
 * member_file_complete (its handler for that kind: ctx unused). The loop
 * must submit before it sleeps (io_uring_submit_and_wait does). NULL ends it;
 * member_file_lent_inflight says how many of this thread's I/Os are still
 * on the ring (a loop that ends waits for them first). */
struct io_uring;
void member_file_lend_ring(struct io_uring *ring);
void member_file_complete(void *ctx, void *io, int res);
unsigned member_file_lent_inflight(void);

#endif
