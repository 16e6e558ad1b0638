/* member_file: regular files and block devices. Data I/O goes through the
 * engine's io_uring rings on the fd; this file opens, sizes and does the
 * synchronous superblock I/O. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsvol/members/member.h"

static int file_open(struct member *m, const char *path, int direct, char *err, size_t errlen)
{
	struct stat st;
	/* the type first: a FIFO or character device fails O_DIRECT with
	 * EINVAL too, and is no member whatever the filesystem */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
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
	} else if (S_ISREG(st.st_mode)) {
		m->size = (uint64_t)st.st_size;
		m->is_blockdev = 0;
		m->dev = st.st_dev;
		m->ino = st.st_ino;
	} else {
		snprintf(err, errlen, "%s: not a regular file or block device", path);
		close(fd);
		return -EINVAL;
	}
	m->fd = fd;
	m->direct = direct;
	/* 4 KiB covers every logical block size we meet (512e and 4Kn). */
	m->align = 4096;
	snprintf(m->path, sizeof(m->path), "%s", path);
	return 0;
}

static void file_close(struct member *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

static int file_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(m->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* short member: the caller checked sizes */
		done += (size_t)r;
	}
	return 0;
}

static int file_pwrite(struct member *m, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pwrite(m->fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

static int file_zero(struct member *m, uint64_t off, uint64_t len)
{
	if (m->is_blockdev) {
		uint64_t range[2] = { off, len };
		return ioctl(m->fd, BLKZEROOUT, range) < 0 ? -errno : 0;
	}
	if (fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	/* No hole punching here: write zeros (aligned for O_DIRECT). */
	static const char zeros[1 << 16] __attribute__((aligned(4096)));
	for (uint64_t o = 0; o < len; o += sizeof(zeros)) {
		size_t n = len - o < sizeof(zeros) ? (size_t)(len - o) : sizeof(zeros);
		int r = file_pwrite(m, zeros, n, off + o);
		if (r < 0)
			return r;
	}
	return 0;
}

const struct member_ops member_file_ops = {
	.name = "file",
	.open = file_open,
	.close = file_close,
	.pread = file_pread,
	.pwrite = file_pwrite,
	.zero = file_zero,
};

int member_open(struct member *m, const char *path, int direct, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->slot = -1;
	m->ops = &member_file_ops;
	return m->ops->open(m, path, direct, err, errlen);
}

int member_lock(struct member *m)
{
	/* An advisory lock for as long as the fd is open (the daemon's life). */
	return flock(m->fd, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
}

void member_close(struct member *m)
{
	if (m->ops)
		m->ops->close(m);
}
