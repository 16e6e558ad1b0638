/* member: the backend table, and synchronous I/O over any backend. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#include "fsvol/members/member.h"

/* Backends chosen by name prefix; the last entry (no prefix) takes the rest. */
static const struct member_ops *const member_backends[] = {
	&member_mem_ops,
	&member_nbd_ops,
	&member_file_ops,
};

/* The other URI schemes libnbd opens (member_nbd_ops.prefix is "nbd://"). */
static const char *const member_nbd_schemes[] = { "nbd+unix://", "nbds://", "nbds+unix://" };

const struct member_ops *member_backend(const char *name)
{
	for (size_t i = 0; i < sizeof(member_nbd_schemes) / sizeof(member_nbd_schemes[0]); i++)
		if (!strncmp(name, member_nbd_schemes[i], strlen(member_nbd_schemes[i])))
			return &member_nbd_ops;
	size_t n = sizeof(member_backends) / sizeof(member_backends[0]);
	for (size_t i = 0; i < n; i++) {
		const char *p = member_backends[i]->prefix;
		if (!p || !strncmp(name, p, strlen(p)))
			return member_backends[i];
	}
	return &member_file_ops;
}

int member_open(struct member *m, const char *name, int direct, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->slot = -1;
	m->ops = member_backend(name);
	snprintf(m->path, sizeof(m->path), "%s", name);
	int r = m->ops->open(m, name, direct, err, errlen);
	if (r)
		m->ops = NULL;
	return r;
}

void member_close(struct member *m)
{
	if (m->ops)
		m->ops->close(m);
	m->ops = NULL;
}

int member_lock(struct member *m)
{
	return m->ops->lock ? m->ops->lock(m) : 0;
}

int member_create(const char *name, uint64_t size, char *err, size_t errlen)
{
	const struct member_ops *ops = member_backend(name);
	if (!ops->create) {
		snprintf(err, errlen, "%s: the %s backend cannot create members", name, ops->name);
		return -ENOTSUP;
	}
	return ops->create(name, size, err, errlen);
}

/* ---- synchronous I/O ---- */

struct member_waiter {
	sem_t done;
};

static void member_sync_done(struct member_io *io)
{
	sem_post(&((struct member_waiter *)io->owner)->done);
}

int member_io_sync(struct member *m, struct member_io *io)
{
	struct member_waiter w;
	sem_init(&w.done, 0, 0);
	io->done = member_sync_done;
	io->owner = &w;
	m->ops->queue(m, io);
	m->ops->commit(m);
	while (sem_wait(&w.done) < 0 && errno == EINTR)
		;
	sem_destroy(&w.done);
	return io->res;
}

static int member_rw(struct member *m, int op, void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { buf, len };
	struct member_io io = { .op = (uint8_t)op, .off = off, .len = len, .iov = &iov, .niov = 1 };
	return member_io_sync(m, &io);
}

int member_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	return member_rw(m, MEMBER_READ, buf, len, off);
}

int member_pwrite(struct member *m, const void *buf, size_t len, uint64_t off)
{
	return member_rw(m, MEMBER_WRITE, (void *)buf, len, off);
}

int member_flush(struct member *m)
{
	struct member_io io = { .op = MEMBER_FLUSH };
	return member_io_sync(m, &io);
}

int member_write_zeros(struct member *m, uint64_t off, uint64_t len)
{
	static const char zeros[1 << 16] __attribute__((aligned(4096))); /* O_DIRECT */
	for (uint64_t o = 0; o < len; o += sizeof(zeros)) {
		size_t n = len - o < sizeof(zeros) ? (size_t)(len - o) : sizeof(zeros);
		int r = member_pwrite(m, zeros, n, off + o);
		if (r < 0)
			return r;
	}
	return 0;
}
