/* member_mem: members in process memory, "mem:NAME[:SIZE]".
 *
 * For engine unit tests and quick experiments: a named region lives until the
 * process exits, so `create` then `mount` of the same names in one process
 * (fsvol-bench --members, the Check suites) sees the same bytes. Anonymous
 * mappings read as zeros until written, like a fresh sparse file. I/O is a
 * memcpy that completes before commit returns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fsvol/members/member.h"
#include "fsvol/util/size.h"

#define MEM_PREFIX "mem:"

struct mem_dev {
	struct mem_dev *next;
	char name[256];
	uint8_t *base;
	uint64_t size;
	int locked;
};

/* One open member: the region and whether this member holds its claim. */
struct mem_handle {
	struct mem_dev *d;
	int holds;
};

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_dev *mem_devs;

/* "mem:NAME[:SIZE]" -> name, size (0 when absent). */
static int mem_parse(const char *spec, char *name, size_t nlen, uint64_t *size, char *err, size_t errlen)
{
	const char *s = spec + strlen(MEM_PREFIX), *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	*size = 0;
	if (n == 0 || n >= nlen) {
		snprintf(err, errlen, "%s: expected mem:NAME[:SIZE] with a name of 1 to %zu characters", spec,
			 nlen - 1);
		return -EINVAL;
	}
	memcpy(name, s, n);
	name[n] = 0;
	if (colon && size_parse(colon + 1, size)) {
		snprintf(err, errlen, "%s: bad size '%s'", spec, colon + 1);
		return -EINVAL;
	}
	return 0;
}

static struct mem_dev *mem_find(const char *name)
{
	for (struct mem_dev *d = mem_devs; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

static int mem_create(const char *spec, uint64_t size, char *err, size_t errlen)
{
	char name[256];
	uint64_t want;
	int r = mem_parse(spec, name, sizeof(name), &want, err, errlen);
	if (r)
		return r;
	if (!size)
		size = want;
	if (!size || size > (1ull << 46)) {
		snprintf(err, errlen, "%s: give a size (mem:NAME:SIZE or -s)", spec);
		return -EINVAL;
	}
	pthread_mutex_lock(&mem_lock);
	if (mem_find(name)) {
		pthread_mutex_unlock(&mem_lock);
		snprintf(err, errlen, "%s: exists", spec);
		return -EEXIST;
	}
	struct mem_dev *d = calloc(1, sizeof(*d));
	void *base = MAP_FAILED;
	if (d)
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!d || base == MAP_FAILED) {
		pthread_mutex_unlock(&mem_lock);
		free(d);
		snprintf(err, errlen, "%s: cannot map %llu bytes", spec, (unsigned long long)size);
		return -ENOMEM;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->base = base;
	d->size = size;
	d->next = mem_devs;
	mem_devs = d;
	pthread_mutex_unlock(&mem_lock);
	return 0;
}

static int mem_open(struct member *m, const char *spec, int direct, char *err, size_t errlen)
{
	char name[256];
	uint64_t size;
	(void)direct;
	int r = mem_parse(spec, name, sizeof(name), &size, err, errlen);
	if (r)
		return r;
	pthread_mutex_lock(&mem_lock);
	struct mem_dev *d = mem_find(name);
	pthread_mutex_unlock(&mem_lock);
	if (!d && size) { /* mem:NAME:SIZE names a new one */
		if ((r = mem_create(spec, size, err, errlen)))
			return r;
		pthread_mutex_lock(&mem_lock);
		d = mem_find(name);
		pthread_mutex_unlock(&mem_lock);
	}
	if (!d) {
		snprintf(err, errlen, "%s: %s", spec, strerror(ENOENT));
		return -ENOENT;
	}
	struct mem_handle *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->d = d;
	m->priv = h;
	m->size = d->size;
	m->align = 1;
	m->caps = MEMBER_CAN_FLUSH | MEMBER_CAN_ZERO;
	m->dev = (uint64_t)(uintptr_t)d;
	m->ino = 1;
	return 0;
}

static void mem_close(struct member *m)
{
	struct mem_handle *h = m->priv;
	if (h && h->holds) {
		pthread_mutex_lock(&mem_lock);
		h->d->locked = 0; /* the claim ends with the member; the bytes stay */
		pthread_mutex_unlock(&mem_lock);
	}
	free(h);
	m->priv = NULL;
}

static int mem_lock_dev(struct member *m)
{
	struct mem_handle *h = m->priv;
	int r = 0;
	pthread_mutex_lock(&mem_lock);
	if (h->d->locked)
		r = -EWOULDBLOCK;
	else
		h->d->locked = h->holds = 1;
	pthread_mutex_unlock(&mem_lock);
	return r;
}

static void mem_queue(struct member *m, struct member_io *io)
{
	struct mem_dev *d = ((struct mem_handle *)m->priv)->d;
	io->res = 0;
	if (io->op != MEMBER_FLUSH) {
		if (io->off > d->size || io->len > d->size - io->off) {
			io->res = -EIO;
		} else {
			uint8_t *p = d->base + io->off;
			for (unsigned i = 0; i < io->niov; i++) {
				if (io->op == MEMBER_READ)
					memcpy(io->iov[i].iov_base, p, io->iov[i].iov_len);
				else
					memcpy(p, io->iov[i].iov_base, io->iov[i].iov_len);
				p += io->iov[i].iov_len;
			}
		}
	}
	io->done(io);
}

static void mem_commit(struct member *m)
{
	(void)m; /* everything completed in queue */
}

static int mem_zero(struct member *m, uint64_t off, uint64_t len)
{
	struct mem_dev *d = ((struct mem_handle *)m->priv)->d;
	if (off > d->size || len > d->size - off)
		return -EINVAL;
	/* give the pages back: they read as zeros again */
	uint64_t a = (off + 4095) & ~4095ull, b = (off + len) & ~4095ull;
	if (b > a) {
		memset(d->base + off, 0, a - off);
		madvise(d->base + a, b - a, MADV_DONTNEED);
		memset(d->base + b, 0, off + len - b);
	} else {
		memset(d->base + off, 0, len);
	}
	return 0;
}

const struct member_ops member_mem_ops = {
	.name = "memory",
	.prefix = MEM_PREFIX,
	.open = mem_open,
	.close = mem_close,
	.queue = mem_queue,
	.commit = mem_commit,
	.zero = mem_zero,
	.create = mem_create,
	.lock = mem_lock_dev,
};
