/* member: one member of a volume (a "spindle") and its backend.
 * A backend is one file implementing a const struct member_ops. */
#ifndef FSVOL_MEMBER_H
#define FSVOL_MEMBER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct member;

struct member_ops {
	const char *name;
	/* Open path for read/write. direct: O_DIRECT. Fills m->fd, m->size,
	 * m->align. Returns 0 or -errno with a message naming the path in err. */
	int (*open)(struct member *m, const char *path, int direct, char *err, size_t errlen);
	void (*close)(struct member *m);
	/* Data I/O is submitted by the engine through io_uring on m->fd
	 * (readv/writev/fsync): every backend so far has a file descriptor. */
	/* Synchronous I/O outside the hot path (superblocks): 0 or -errno. */
	int (*pread)(struct member *m, void *buf, size_t len, uint64_t off);
	int (*pwrite)(struct member *m, const void *buf, size_t len, uint64_t off);
	/* Make the data area read as zeros (fresh volume): punch hole / BLKZEROOUT. */
	int (*zero)(struct member *m, uint64_t off, uint64_t len);
};

extern const struct member_ops member_file_ops;

struct member {
	const struct member_ops *ops;
	char path[4096];
	int fd;
	int direct;         /* opened with O_DIRECT */
	int is_blockdev;
	uint64_t size;      /* bytes of the file or device */
	uint64_t dev, ino;  /* identity, to catch the same member given twice */
	unsigned align;     /* required buffer/offset alignment for I/O */
	int slot;           /* superblock slot, -1 before assembly */
	uint64_t data_offset;
	/* read balancing state (raid1/raid10) */
	atomic_uint pending;
	atomic_uint_fast64_t head; /* member offset where the last I/O ended */
	struct stats_dev *stats;   /* below-the-mapping counters */
	struct spindle *spindle;   /* emulated disk (allocated once, kept till close) */
	atomic_int modeled;        /* 1: completions wait for the spindle model */
	atomic_int inject_eio;     /* fault injection: every I/O fails with EIO */
};

/* Open with the file backend (regular file or block device). */
int member_open(struct member *m, const char *path, int direct, char *err, size_t errlen);
void member_close(struct member *m);
/* Claim the member for this process (flock): -EWOULDBLOCK when another
 * mounted volume holds it. */
int member_lock(struct member *m);

#endif
