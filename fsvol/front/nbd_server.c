/* nbd_server: the NBD export (docs/network.md), in the daemon itself.
 *
 * Protocol: fixed newstyle handshake (OPT_EXPORT_NAME, OPT_GO, OPT_INFO,
 * OPT_LIST, OPT_ABORT; others are answered NBD_REP_ERR_UNSUP), simple
 * replies, commands READ WRITE FLUSH TRIM WRITE_ZEROES DISC.
 *
 * Threads: one event thread owns every socket's reading side and the
 * connection list. It hands each whole request to engine_submit and goes
 * back to reading: no thread waits on the volume. The completion, on
 * whichever thread finished the request (often a member's ring thread),
 * builds the reply and sends it when the socket takes it at once; what it
 * does not take waits on the connection's out queue, which the event thread
 * drains (EPOLLOUT). Replies go out in the order requests complete (simple
 * replies carry the client's cookie).
 *
 * Locks: a connection's lock covers its out queue, socket writes, dead,
 * inflight, pending and a trim's progress; the job lock the server's count
 * of requests in the engine; the kick lock the kick list. Never two at once,
 * except a connection's lock then the kick lock (nbds_kick). No engine call
 * is made under a lock: a completion may run inside engine_submit.
 *
 * Lifetime: the event thread holds one reference to a connection until it
 * closes it, each request in the engine one more, a kick one more. The
 * socket is closed under the connection's lock with dead set, so a
 * completion never writes to a descriptor number that was reused. Stopping
 * waits until every request handed to the engine has completed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <liburing.h>
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/core/engine.h"
#include "fsvol/front/nbd_server.h"
#include "fsvol/members/member.h"
#include "fsvol/util/log.h"

/* protocol constants (NBD's doc/proto.md) */
#define NBD_MAGIC 0x4e42444d41474943ull    /* "NBDMAGIC" */
#define NBD_IHAVEOPT 0x49484156454f5054ull /* "IHAVEOPT" */
#define NBD_REP_MAGIC 0x3e889045565a9ull
#define NBD_REQ_MAGIC 0x25609513u
#define NBD_SIMPLE_MAGIC 0x67446698u
#define NBD_FLAG_FIXED_NEWSTYLE 1u
#define NBD_FLAG_NO_ZEROES 2u
enum { OPT_EXPORT_NAME = 1, OPT_ABORT = 2, OPT_LIST = 3, OPT_INFO = 6, OPT_GO = 7 };
#define REP_ACK 1u
#define REP_SERVER 2u
#define REP_INFO 3u
#define REP_ERR_UNSUP 0x80000001u
#define REP_ERR_INVALID 0x80000003u
#define REP_ERR_UNKNOWN 0x80000006u
enum { INFO_EXPORT = 0, INFO_NAME = 1, INFO_DESCRIPTION = 2, INFO_BLOCK_SIZE = 3 };
enum { CMD_READ = 0, CMD_WRITE = 1, CMD_DISC = 2, CMD_FLUSH = 3, CMD_TRIM = 4, CMD_WRITE_ZEROES = 6 };
#define CMD_FLAG_FUA 1u
#define CMD_FLAG_NO_HOLE 2u
#define TF_HAS_FLAGS 0x1u
#define TF_READ_ONLY 0x2u
#define TF_SEND_FLUSH 0x4u
#define TF_SEND_FUA 0x8u
#define TF_ROTATIONAL 0x10u
#define TF_SEND_TRIM 0x20u
#define TF_SEND_WRITE_ZEROES 0x40u
#define TF_CAN_MULTI_CONN 0x100u

#define NBDS_MAX_BLOCK (32u << 20) /* largest request advertised (NBD's usual limit) */
#define NBDS_ZERO_BUF (1u << 20)   /* zeros and trims are written in pieces of this */
#define NBDS_MAX_OPTION 65536u     /* an option longer than this ends the connection */
#define NBDS_DESCRIPTION "fsvol volume"
#define NBDS_REPLY_ROOM 4096u      /* a read's data starts page-aligned, its header before it */
#define NBDS_SNDBUF (4 << 20)      /* socket send buffer asked for */
#define NBDS_INBUF 16384u          /* read-ahead per connection */
/* Buffers of 64 KiB and more (payloads, read replies) are kept for reuse, up
 * to NBDS_POOL_BYTES: fresh ones cost a page fault per page (measured: a
 * tenth of the server's CPU at 1 MiB reads). Class k holds 64 KiB << k of
 * data plus the reply's header room. */
#define NBDS_POOL_MIN (64u << 10)
#define NBDS_POOL_CLASSES 10
#define NBDS_POOL_BYTES (64u << 20)
#define NBDS_ZERO_WINDOW 4u /* pieces of one trim or zero in the engine at once */

enum nbds_state { ST_FLAGS, ST_OPT_HDR, ST_OPT_DATA, ST_REQ_HDR, ST_REQ_DATA, ST_DISCARD };

struct nbds_out {
	struct nbds_out *next;
	void *mem;        /* freed when sent (nbds_buf_put) */
	size_t memsize;   /* its pool size (0: a plain malloc) */
	const char *p;
	size_t len;
	size_t acct;      /* bytes of the budgets released when sent */
};

struct nbds_job {
	struct nbds_conn *c;
	uint16_t flags, type;
	uint64_t cookie, off;
	uint32_t len;
	void *buf;        /* a write's payload */
	size_t bufsize;   /* its pool size */
	void *reply;      /* a read's reply: header room, then the data */
	size_t reply_size;
	size_t acct;
	/* a trim or zero, under c->lock: what is left, pieces in the engine */
	uint64_t zoff, zleft;
	unsigned zinflight;
	int zerr, zdriving, zagain;
};

struct nbds_conn {
	struct nbd_server *s;
	int fd;
	atomic_int refs;
	struct nbds_conn *prev, *next; /* the event thread's list */
	/* reading side: the event thread only */
	enum nbds_state state;
	unsigned char hdr[28];
	unsigned char in[NBDS_INBUF]; /* read ahead: headers and small options, many at a time */
	size_t in_off, in_len;
	unsigned char *dst;
	size_t need, have;
	struct nbds_job *job;   /* a write whose payload is being read */
	uint32_t opt, optlen;
	unsigned char *optbuf;
	uint64_t discard;       /* payload bytes still to skip */
	int err_after_discard;  /* the reply once skipped */
	int no_zeroes;
	int ending;             /* DISC, ABORT or an error: close when drained (set under lock) */
	time_t deadline;        /* of the handshake */
	uint32_t events;        /* the epoll mask now */
	/* under lock */
	pthread_mutex_t lock;
	struct nbds_out *out_head, *out_tail;
	time_t out_since;       /* the out queue's last progress */
	int dead, broken;       /* closed; a send failed */
	unsigned inflight;
	size_t pending;
	int throttled;          /* EPOLLIN off for a budget */
	int kicked;             /* on the kick list */
	int batched;            /* on the event thread's batch (nbds_queue) */
	struct nbds_conn *batch_next;
	struct nbds_conn *kick_next;
};

struct nbd_server {
	struct vol *v;
	char name[4097];
	int any_name, readonly;
	int lfd, ep, wake;
	int listening;          /* lfd in the epoll set */
	int ring_poll_off;      /* the event thread's ring cannot watch the epoll set */
	int ring_poll_armed;    /* a poll of the epoll set is on the ring */
	char sockpath[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t event;
	int event_running;
	pthread_mutex_t jlock;
	pthread_cond_t jcond;
	unsigned jobs;          /* requests handed to the engine, not yet completed */
	pthread_mutex_t kick_lock;
	struct nbds_conn *kicks;
	atomic_size_t total;    /* pending bytes of every connection */
	atomic_int stopping;
	struct nbds_conn *conns;
	struct nbds_conn *closed; /* closed this turn: freed once no event can name them */
	unsigned nconns, max_conns;
	int any_throttled;
	time_t last_full_log;
	void *zeros;
	pthread_mutex_t pool_lock;
	void *pool[NBDS_POOL_CLASSES]; /* free buffers, linked through their first word */
	size_t pool_bytes;
};

static size_t nbds_class_size(unsigned k)
{
	return ((size_t)NBDS_POOL_MIN << k) + NBDS_REPLY_ROOM;
}

/* A page-aligned buffer of at least len bytes; *size is what to give back. */
static void *nbds_buf_get(struct nbd_server *s, size_t len, size_t *size)
{
	void *b = NULL;
	unsigned k = 0;
	if (len < NBDS_POOL_MIN) {
		*size = 0;
		return posix_memalign(&b, 4096, len ? len : 1) ? NULL : b;
	}
	while (k < NBDS_POOL_CLASSES && nbds_class_size(k) < len)
		k++;
	if (k == NBDS_POOL_CLASSES) { /* beyond the classes: not pooled */
		*size = 0;
		return posix_memalign(&b, 4096, len) ? NULL : b;
	}
	*size = nbds_class_size(k);
	pthread_mutex_lock(&s->pool_lock);
	if ((b = s->pool[k])) {
		s->pool[k] = *(void **)b;
		s->pool_bytes -= *size;
	}
	pthread_mutex_unlock(&s->pool_lock);
	if (!b && posix_memalign(&b, 4096, *size))
		b = NULL;
	return b;
}

static void nbds_buf_put(struct nbd_server *s, void *b, size_t size)
{
	unsigned k = 0;
	if (!b)
		return;
	while (size && k < NBDS_POOL_CLASSES && nbds_class_size(k) != size)
		k++;
	if (size && k < NBDS_POOL_CLASSES) {
		pthread_mutex_lock(&s->pool_lock);
		if (s->pool_bytes + size <= NBDS_POOL_BYTES) {
			*(void **)b = s->pool[k];
			s->pool[k] = b;
			s->pool_bytes += size;
			b = NULL;
		}
		pthread_mutex_unlock(&s->pool_lock);
	}
	free(b);
}

/* ---- addresses */

/* Split [ADDR:]PORT; ADDR may be [IPv6]. 0 or -1. */
static int nbds_split(const char *a, char *host, size_t hlen, char *port, size_t plen)
{
	const char *p;
	host[0] = 0;
	if (a[0] == '[') {
		const char *e = strchr(a, ']');
		if (!e || e[1] != ':' || (size_t)(e - a - 1) >= hlen)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(e - a - 1), a + 1);
		p = e + 2;
	} else if ((p = strrchr(a, ':'))) {
		if ((size_t)(p - a) >= hlen || p == a)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(p - a), a);
		p++;
	} else {
		p = a;
	}
	char *end;
	long v = strtol(p, &end, 10);
	if (!*p || *end || v < 1 || v > 65535)
		return -1;
	snprintf(port, plen, "%ld", v);
	return 0;
}

int nbd_server_check_addr(const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	if (!strncmp(addr, "unix:", 5)) {
		if (!addr[5]) {
			snprintf(err, errlen, "--nbd %s: needs a socket path after unix:", addr);
			return -EINVAL;
		}
		if (strlen(addr + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, errlen, "--nbd %s: socket path longer than 107 bytes", addr);
			return -EINVAL;
		}
		return 0;
	}
	if (nbds_split(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "--nbd %s: expected unix:PATH or [ADDR:]PORT (port 1-65535)", addr);
		return -EINVAL;
	}
	return 0;
}

/* A socket file nobody listens on (a server that ended without removing it)
 * is removed; one in use, or another kind of file, is an error. */
static int nbds_clear_socket(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--nbd unix:%s: exists and is not a socket", path);
		return -EEXIST;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	int r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	close(fd);
	if (r == 0) {
		snprintf(err, errlen, "--nbd unix:%s: a server is already listening there", path);
		return -EADDRINUSE;
	}
	if (e == ECONNREFUSED && unlink(path) == 0)
		return 0;
	snprintf(err, errlen, "--nbd unix:%s: %s", path, strerror(e));
	return -e;
}

int nbd_server_listen(const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	int r = nbd_server_check_addr(addr, err, errlen), fd = -1, one = 1;
	if (r)
		return r;
	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if ((r = nbds_clear_socket(addr + 5, err, errlen)))
			return r;
		/* bound by its absolute name when it fits: a daemon that moved to /
		 * still removes it at the end */
		char cwd[PATH_MAX];
		if (addr[5] != '/' && getcwd(cwd, sizeof(cwd)) &&
		    strlen(cwd) + 1 + strlen(addr + 5) < sizeof(a.sun_path))
			memcpy(a.sun_path, cwd, strlen(cwd)), a.sun_path[strlen(cwd)] = '/',
				memcpy(a.sun_path + strlen(cwd) + 1, addr + 5, strlen(addr + 5) + 1);
		else
			snprintf(a.sun_path, sizeof(a.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, SOMAXCONN) < 0) {
			r = -errno;
			snprintf(err, errlen, "--nbd %s: cannot listen: %s", addr, strerror(-r));
			if (fd >= 0)
				close(fd);
			return r;
		}
		return fd;
	}
	nbds_split(addr, host, sizeof(host), port, sizeof(port));
	/* without ADDR: every address, IPv6 and IPv4 on one socket, or IPv4
	 * alone where the machine has no IPv6 */
	static const int families[] = { AF_INET6, AF_INET };
	r = -EADDRNOTAVAIL;
	for (unsigned f = 0; fd < 0 && f < (host[0] ? 1u : 2u); f++) {
		struct addrinfo hints = { .ai_family = host[0] ? AF_UNSPEC : families[f], .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai = NULL;
		int g = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
		if (g) {
			if (host[0]) {
				snprintf(err, errlen, "--nbd %s: %s", addr, gai_strerror(g));
				return -EINVAL;
			}
			continue;
		}
		for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
			int zero = 0;
			fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (fd < 0) {
				r = -errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (p->ai_family == AF_INET6 && !host[0])
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
			if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
				break;
			r = -errno;
			close(fd);
			fd = -1;
		}
		freeaddrinfo(ai);
		if (r == -EADDRINUSE)
			break; /* the port is taken: IPv4 alone would not help */
	}
	if (fd < 0) {
		snprintf(err, errlen, "--nbd %s: cannot listen: %s%s", addr, strerror(-r),
			 r == -EADDRINUSE ? " (another server has that port)" : "");
		return r;
	}
	return fd;
}

/* ---- connections: references, output, closing */

static void nbds_conn_unref(struct nbds_conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->optbuf);
	free(c);
}

static void nbds_release(struct nbds_conn *c, size_t acct)
{
	c->pending -= acct;
	atomic_fetch_sub(&c->s->total, acct);
}

/* Send what the socket takes now, under c->lock: many replies in one
 * sendmsg. 0, or -errno (the client is gone or broke the connection). */
#define NBDS_IOV 64
static int nbds_flush_out(struct nbds_conn *c)
{
	while (c->out_head) {
		struct iovec iov[NBDS_IOV];
		int k = 0;
		for (struct nbds_out *o = c->out_head; o && k < NBDS_IOV; o = o->next)
			iov[k++] = (struct iovec){ (void *)o->p, o->len };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)k };
		ssize_t n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		}
		c->out_since = time(NULL);
		while (c->out_head) {
			struct nbds_out *o = c->out_head;
			size_t m = (size_t)n < o->len ? (size_t)n : o->len;
			o->p += m;
			o->len -= m;
			n -= (ssize_t)m;
			if (o->len)
				break; /* the socket took part of it: try again, EAGAIN likely */
			c->out_head = o->next;
			if (!c->out_head)
				c->out_tail = NULL;
			nbds_release(c, o->acct);
			nbds_buf_put(c->s, o->mem, o->memsize);
			free(o);
		}
	}
	return 0;
}

/* The event thread batches its sends: a reply made on it (a completion in
 * its ring, a memory member's inline one, a handshake message) waits on the
 * out queue until the end of the loop's turn, then each connection's
 * replies go out in one sendmsg (nbds_batch_flush). */
static __thread int tl_batching;
static __thread struct nbds_conn *tl_batch;

/* Queue len bytes at p (mem freed once sent, acct released) and send what
 * the socket takes, or leave it to the batch; under c->lock. A dead
 * connection drops it. */
static void nbds_queue(struct nbds_conn *c, void *mem, size_t memsize, const void *p, size_t len, size_t acct)
{
	struct nbds_out *o = c->dead ? NULL : malloc(sizeof(*o));
	if (!o) {
		if (!c->dead)
			c->broken = 1; /* out of memory: the reply is lost, so is the connection */
		nbds_release(c, acct);
		nbds_buf_put(c->s, mem, memsize);
		return;
	}
	*o = (struct nbds_out){ .mem = mem, .memsize = memsize, .p = p, .len = len, .acct = acct };
	if (!c->out_head)
		c->out_since = time(NULL);
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	if (c->out_head != o)
		return; /* sent after what is queued already (EPOLLOUT, or the batch) */
	if (tl_batching) {
		if (!c->batched) {
			c->batched = 1;
			atomic_fetch_add(&c->refs, 1);
			c->batch_next = tl_batch;
			tl_batch = c;
		}
	} else if (nbds_flush_out(c)) {
		c->broken = 1;
	}
}

/* Copy a small message to the out queue (handshake, error replies). */
static void nbds_send_copy(struct nbds_conn *c, const void *p, size_t len)
{
	void *m = malloc(len);
	pthread_mutex_lock(&c->lock);
	if (m) {
		memcpy(m, p, len);
		nbds_queue(c, m, 0, m, len, 0);
	} else {
		c->broken = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Ask the event thread to look at c again (from a completion, under c->lock). */
static void nbds_kick(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	if (c->kicked)
		return;
	c->kicked = 1;
	atomic_fetch_add(&c->refs, 1);
	pthread_mutex_lock(&s->kick_lock);
	c->kick_next = s->kicks;
	s->kicks = c;
	pthread_mutex_unlock(&s->kick_lock);
	uint64_t one = 1;
	ssize_t w = write(s->wake, &one, sizeof(one));
	(void)w;
}

/* Event thread: close the socket; requests in flight finish and drop their replies. */
static void nbds_close(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	pthread_mutex_lock(&c->lock);
	c->dead = 1;
	while (c->out_head) {
		struct nbds_out *o = c->out_head;
		c->out_head = o->next;
		nbds_release(c, o->acct);
		nbds_buf_put(s, o->mem, o->memsize);
		free(o);
	}
	c->out_tail = NULL;
	close(c->fd);
	c->fd = -1;
	pthread_mutex_unlock(&c->lock);
	if (c->job) {
		pthread_mutex_lock(&c->lock);
		nbds_release(c, c->job->acct);
		c->inflight--;
		pthread_mutex_unlock(&c->lock);
		nbds_buf_put(s, c->job->buf, c->job->bufsize);
		free(c->job);
		c->job = NULL;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	c->next = s->closed;
	s->closed = c;
}

/* Read no more from c; close it once what it has in flight is answered. Under
 * the lock: a completion answering the last request must see it (and kick). */
static void nbds_end(struct nbds_conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->ending = 1;
	pthread_mutex_unlock(&c->lock);
}

/* ---- the export's properties */

static uint64_t nbds_size(const struct nbd_server *s)
{
	return vol_geom(s->v)->capacity;
}

/* Rotational when some member carries an emulated hard disk. */
static int nbds_rotational(const struct nbd_server *s)
{
	return vol_rotational(s->v);
}

static uint16_t nbds_tflags(const struct nbd_server *s)
{
	uint16_t f = TF_HAS_FLAGS | TF_SEND_FLUSH | TF_CAN_MULTI_CONN;
	if (s->readonly)
		f |= TF_READ_ONLY;
	else
		f |= TF_SEND_FUA | TF_SEND_TRIM | TF_SEND_WRITE_ZEROES;
	if (nbds_rotational(s))
		f |= TF_ROTATIONAL;
	return f;
}

/* minimum: a sector; preferred: the chunk on striped levels (a request within
 * one chunk touches one member), else a page; maximum: 32 MiB. */
static void nbds_block_size(const struct nbd_server *s, uint32_t bs[3])
{
	const struct layout_geom *g = vol_geom(s->v);
	bs[0] = 512;
	bs[1] = 4096;
	if (g->level == LAYOUT_RAID0 || g->level == LAYOUT_RAID10 || layout_is_parity(g))
		bs[1] = g->chunk < NBDS_MAX_BLOCK ? (uint32_t)g->chunk : NBDS_MAX_BLOCK;
	bs[2] = NBDS_MAX_BLOCK;
}

/* ---- handshake */

static void nbds_opt_reply(struct nbds_conn *c, uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	unsigned char *m = malloc(20 + (size_t)len);
	if (!m) {
		pthread_mutex_lock(&c->lock);
		c->broken = 1;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	uint64_t magic = htobe64(NBD_REP_MAGIC);
	uint32_t w[3] = { htobe32(opt), htobe32(type), htobe32(len) };
	memcpy(m, &magic, 8);
	memcpy(m + 8, w, 12);
	if (len)
		memcpy(m + 20, data, len);
	pthread_mutex_lock(&c->lock);
	nbds_queue(c, m, 0, m, 20 + (size_t)len, 0);
	pthread_mutex_unlock(&c->lock);
}

/* The empty name is the default export (this one), as in nbdkit and qemu-nbd. */
static int nbds_name_ok(const struct nbd_server *s, const unsigned char *name, uint32_t len)
{
	return s->any_name || !len || (len == strlen(s->name) && !memcmp(name, s->name, len));
}

static void nbds_info(struct nbds_conn *c, uint32_t opt, uint16_t type, const void *body, size_t len)
{
	unsigned char b[2 + 4096 + 16];
	uint16_t t = htobe16(type);
	memcpy(b, &t, 2);
	memcpy(b + 2, body, len);
	nbds_opt_reply(c, opt, REP_INFO, b, (uint32_t)(2 + len));
}

static void nbds_enter_transmission(struct nbds_conn *c)
{
	c->state = ST_REQ_HDR;
	c->dst = c->hdr;
	c->need = 28;
	c->have = 0;
}

/* OPT_INFO and OPT_GO: name, then the info types asked for. */
static void nbds_opt_go(struct nbds_conn *c, uint32_t opt, const unsigned char *d, uint32_t len)
{
	struct nbd_server *s = c->s;
	uint32_t nlen;
	uint16_t nreq;
	if (len < 6 || (memcpy(&nlen, d, 4), nlen = be32toh(nlen)) > len - 6 ||
	    (memcpy(&nreq, d + 4 + nlen, 2), nreq = be16toh(nreq), 6u + nlen + 2u * nreq != len)) {
		static const char msg[] = "malformed option";
		nbds_opt_reply(c, opt, REP_ERR_INVALID, msg, sizeof(msg) - 1);
		return;
	}
	if (!nbds_name_ok(s, d + 4, nlen)) {
		char msg[128];
		int n = snprintf(msg, sizeof(msg), "no such export (this server exports '%s')", s->name);
		nbds_opt_reply(c, opt, REP_ERR_UNKNOWN, msg, (uint32_t)(n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1));
		return;
	}
	unsigned char b[12];
	uint64_t size = htobe64(nbds_size(s));
	uint16_t tf = htobe16(nbds_tflags(s));
	memcpy(b, &size, 8);
	memcpy(b + 8, &tf, 2);
	nbds_info(c, opt, INFO_EXPORT, b, 10);
	for (uint16_t i = 0; i < nreq; i++) {
		uint16_t t;
		memcpy(&t, d + 6 + nlen + 2u * i, 2);
		t = be16toh(t);
		if (t == INFO_NAME)
			nbds_info(c, opt, INFO_NAME, s->name, strlen(s->name));
		else if (t == INFO_DESCRIPTION)
			nbds_info(c, opt, INFO_DESCRIPTION, NBDS_DESCRIPTION, sizeof(NBDS_DESCRIPTION) - 1);
	}
	/* the block sizes go out asked or not: a client that ignores them loses nothing */
	uint32_t bs[3];
	nbds_block_size(s, bs);
	for (int i = 0; i < 3; i++)
		bs[i] = htobe32(bs[i]);
	nbds_info(c, opt, INFO_BLOCK_SIZE, bs, 12);
	nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
	if (opt == OPT_GO)
		nbds_enter_transmission(c);
}

/* One whole option (header in c->opt/optlen, data in c->optbuf). */
static void nbds_option(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	const unsigned char *d = c->optbuf;
	uint32_t opt = c->opt, len = c->optlen;
	c->state = ST_OPT_HDR;
	c->dst = c->hdr;
	c->need = 16;
	c->have = 0;
	switch (opt) {
	case OPT_EXPORT_NAME:
		if (!nbds_name_ok(s, d, len)) {
			nbds_end(c); /* the protocol has no error reply here */
			break;
		}
		{
			unsigned char b[10 + 124] = { 0 };
			uint64_t size = htobe64(nbds_size(s));
			uint16_t tf = htobe16(nbds_tflags(s));
			memcpy(b, &size, 8);
			memcpy(b + 8, &tf, 2);
			nbds_send_copy(c, b, c->no_zeroes ? 10 : sizeof(b));
			nbds_enter_transmission(c);
		}
		break;
	case OPT_ABORT:
		nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
		nbds_end(c);
		break;
	case OPT_LIST:
		if (len) {
			nbds_opt_reply(c, opt, REP_ERR_INVALID, NULL, 0);
			break;
		} else {
			unsigned char b[4 + 4096];
			uint32_t n = (uint32_t)strlen(s->name), bn = htobe32(n);
			memcpy(b, &bn, 4);
			memcpy(b + 4, s->name, n);
			nbds_opt_reply(c, opt, REP_SERVER, b, 4 + n);
			nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
		}
		break;
	case OPT_INFO:
	case OPT_GO:
		nbds_opt_go(c, opt, d, len);
		break;
	default: /* STARTTLS, STRUCTURED_REPLY, meta contexts, unknown */
		nbds_opt_reply(c, opt, REP_ERR_UNSUP, NULL, 0);
		break;
	}
	free(c->optbuf);
	c->optbuf = NULL;
}

/* ---- transmission */

/* NBD's error numbers are Linux's for the ones it has; the rest are EIO. */
static uint32_t nbds_errno(int e)
{
	switch (e) {
	case 0: return 0;
	case EPERM: case EROFS: return 1;
	case ENOMEM: return 12;
	case EINVAL: return 22;
	case ENOSPC: case EDQUOT: case EFBIG: return 28;
	case EOVERFLOW: return 75;
	case ENOTSUP: return 95;
	case ESHUTDOWN: return 108;
	default: return 5;
	}
}

static void nbds_reply_hdr(unsigned char *b, uint32_t err, uint64_t cookie)
{
	uint32_t m = htobe32(NBD_SIMPLE_MAGIC), e = htobe32(nbds_errno((int)err));
	uint64_t ck = htobe64(cookie);
	memcpy(b, &m, 4);
	memcpy(b + 4, &e, 4);
	memcpy(b + 8, &ck, 8);
}

/* A reply without data, from the event thread (errors found at reading). */
static void nbds_reply_now(struct nbds_conn *c, int err, uint64_t cookie)
{
	unsigned char b[16];
	nbds_reply_hdr(b, (uint32_t)err, cookie);
	nbds_send_copy(c, b, sizeof(b));
}

/* The error a request gets before the engine sees it (0: none). */
static int nbds_check(const struct nbd_server *s, uint16_t type, uint16_t flags, uint64_t off, uint32_t len)
{
	uint64_t size = nbds_size(s);
	int beyond = off > size || len > size - off;
	switch (type) {
	case CMD_READ:
		if (flags)
			return EINVAL;
		return beyond || len > NBDS_MAX_BLOCK ? EINVAL : 0;
	case CMD_WRITE:
		if (flags & ~CMD_FLAG_FUA)
			return EINVAL;
		if (s->readonly)
			return EPERM;
		return beyond ? ENOSPC : 0;
	case CMD_FLUSH:
		return flags ? EINVAL : 0;
	case CMD_TRIM:
		if (flags & ~CMD_FLAG_FUA)
			return EINVAL;
		if (s->readonly)
			return EPERM;
		return beyond ? EINVAL : 0;
	case CMD_WRITE_ZEROES:
		/* FAST_ZERO is not advertised (a zero costs a write): EINVAL, as the spec asks */
		if (flags & ~(CMD_FLAG_FUA | CMD_FLAG_NO_HOLE))
			return EINVAL;
		if (s->readonly)
			return EPERM;
		return beyond ? ENOSPC : 0;
	default: /* CACHE, BLOCK_STATUS, unknown: not advertised */
		return EINVAL;
	}
}

static void nbds_start(struct nbd_server *s, struct nbds_job *j);

/* A request header is in c->hdr. 0, or -1 to end the connection. */
static int nbds_request(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	uint32_t magic, len;
	uint16_t flags, type;
	uint64_t cookie, off;
	memcpy(&magic, c->hdr, 4);
	memcpy(&flags, c->hdr + 4, 2);
	memcpy(&type, c->hdr + 6, 2);
	memcpy(&cookie, c->hdr + 8, 8);
	memcpy(&off, c->hdr + 16, 8);
	memcpy(&len, c->hdr + 24, 4);
	magic = be32toh(magic), flags = be16toh(flags), type = be16toh(type);
	off = be64toh(off), len = be32toh(len);
	cookie = be64toh(cookie);
	c->have = 0;
	if (magic != NBD_REQ_MAGIC)
		return -1; /* out of step with the client: nothing after this can be parsed */
	if (type == CMD_DISC) {
		nbds_end(c); /* replies to what came before still go out */
		return 0;
	}
	int err = nbds_check(s, type, flags, off, len);
	if (type == CMD_WRITE && len > NBDS_MAX_BLOCK)
		return -1; /* a payload too large to take in or to skip */
	if (err) {
		if (type == CMD_WRITE && len) {
			c->state = ST_DISCARD;
			c->discard = len;
			c->err_after_discard = err;
			/* the cookie stays in hdr for the reply once the payload is skipped */
			return 0;
		}
		nbds_reply_now(c, err, cookie);
		return 0;
	}
	if (!len && type != CMD_FLUSH) {
		/* a zero-length request is a no-op: success, as its range is valid
		 * (the spec leaves it to the server, short of a disconnect) */
		nbds_reply_now(c, 0, cookie);
		return 0;
	}
	struct nbds_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -1;
	*j = (struct nbds_job){ .c = c, .flags = flags, .type = type, .cookie = cookie, .off = off, .len = len };
	j->acct = type == CMD_READ || type == CMD_WRITE ? len : 0;
	if (type == CMD_WRITE && !(j->buf = nbds_buf_get(s, len, &j->bufsize))) {
		free(j);
		return -1;
	}
	pthread_mutex_lock(&c->lock);
	c->inflight++;
	c->pending += j->acct;
	pthread_mutex_unlock(&c->lock);
	atomic_fetch_add(&s->total, j->acct);
	if (type == CMD_WRITE) {
		c->job = j;
		c->state = ST_REQ_DATA;
		c->dst = j->buf;
		c->need = len;
		return 0;
	}
	nbds_start(s, j);
	return 0;
}

/* c->need bytes arrived at c->dst: act on them. 0, or -1 to end the connection. */
static int nbds_got(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	switch (c->state) {
	case ST_FLAGS: {
		uint32_t f;
		memcpy(&f, c->hdr, 4);
		f = be32toh(f);
		if (f & ~(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES))
			return -1; /* the spec: unknown client flags end the handshake */
		c->no_zeroes = !!(f & NBD_FLAG_NO_ZEROES);
		c->state = ST_OPT_HDR;
		c->dst = c->hdr;
		c->need = 16;
		c->have = 0;
		return 0;
	}
	case ST_OPT_HDR: {
		uint64_t magic;
		memcpy(&magic, c->hdr, 8);
		memcpy(&c->opt, c->hdr + 8, 4);
		memcpy(&c->optlen, c->hdr + 12, 4);
		c->opt = be32toh(c->opt);
		c->optlen = be32toh(c->optlen);
		if (be64toh(magic) != NBD_IHAVEOPT || c->optlen > NBDS_MAX_OPTION)
			return -1;
		c->optbuf = malloc(c->optlen + 1);
		if (!c->optbuf)
			return -1;
		if (!c->optlen) {
			nbds_option(c);
			return 0;
		}
		c->state = ST_OPT_DATA;
		c->dst = c->optbuf;
		c->need = c->optlen;
		c->have = 0;
		return 0;
	}
	case ST_OPT_DATA:
		nbds_option(c);
		return 0;
	case ST_REQ_HDR:
		return nbds_request(c);
	case ST_REQ_DATA: {
		struct nbds_job *j = c->job;
		c->job = NULL;
		nbds_enter_transmission(c);
		nbds_start(s, j);
		return 0;
	}
	case ST_DISCARD:
		break;
	}
	return 0;
}

static void nbds_readable(struct nbds_conn *c);

static unsigned nbds_jobs(struct nbd_server *s)
{
	pthread_mutex_lock(&s->jlock);
	unsigned n = s->jobs;
	pthread_mutex_unlock(&s->jlock);
	return n;
}

/* Work a connection's socket may need now, from its state and budgets. */
static void nbds_update(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	pthread_mutex_lock(&c->lock);
	/* batched output goes at the end of the turn (nbds_batch_flush), no EPOLLOUT for it */
	int broken = c->broken, out = c->out_head != NULL && !c->batched, batched = c->batched;
	unsigned inflight = c->inflight;
	size_t pending = c->pending;
	pthread_mutex_unlock(&c->lock);
	if (broken || (c->ending && !inflight && !out && !batched && !c->job)) {
		nbds_close(c);
		return;
	}
	int over_total = atomic_load(&s->total) >= NBD_SERVER_TOTAL_BYTES || nbds_jobs(s) >= NBD_SERVER_INFLIGHT;
	int in = !c->ending && inflight < NBD_SERVER_CONN_INFLIGHT && pending < NBD_SERVER_CONN_BYTES && !over_total;
	/* a payload being read is taken whole: its bytes are counted already */
	if (c->state == ST_REQ_DATA || c->state == ST_DISCARD)
		in = !c->ending;
	pthread_mutex_lock(&c->lock);
	c->throttled = !in && !c->ending;
	pthread_mutex_unlock(&c->lock);
	if (!in && !c->ending && over_total)
		s->any_throttled = 1;
	uint32_t ev = (in ? EPOLLIN : 0) | (out ? EPOLLOUT : 0);
	if (ev != c->events) {
		struct epoll_event e = { .events = ev, .data.ptr = c };
		epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &e);
		c->events = ev;
	}
	/* requests already read ahead into c->in raise no event: take them now */
	if (in && c->in_off < c->in_len)
		nbds_readable(c);
}

/* Readable: take what is there, a bounded amount per turn so one busy
 * client cannot starve the others. Small things (headers, options) come
 * through c->in, many at a time; a large payload goes straight to its place. */
static void nbds_readable(struct nbds_conn *c)
{
	static unsigned char sink[65536];
	int drained = 0; /* a short read emptied the socket: the next would only say EAGAIN */
	for (int steps = 0; !c->ending && steps < 256; steps++) {
		size_t avail = c->in_len - c->in_off;
		size_t want = c->state == ST_DISCARD ? (c->discard < sizeof(sink) ? (size_t)c->discard : sizeof(sink))
						     : c->need - c->have;
		ssize_t n;
		if (avail) {
			n = (ssize_t)(avail < want ? avail : want);
			if (c->state != ST_DISCARD)
				memcpy(c->dst + c->have, c->in + c->in_off, (size_t)n);
			c->in_off += (size_t)n;
		} else {
			c->in_off = c->in_len = 0;
			if (drained)
				break; /* level-triggered epoll says when more comes */
			if (want >= sizeof(c->in)) {
				n = read(c->fd, c->state == ST_DISCARD ? sink : c->dst + c->have, want);
				drained = n > 0 && (size_t)n < want;
			} else {
				n = read(c->fd, c->in, sizeof(c->in));
				if (n > 0) {
					c->in_len = (size_t)n;
					drained = (size_t)n < sizeof(c->in);
					continue;
				}
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				/* the client hung up or broke the connection: nobody reads replies now */
				pthread_mutex_lock(&c->lock);
				c->broken = 1;
				pthread_mutex_unlock(&c->lock);
				break;
			}
			if (n < 0)
				break;
		}
		if (c->state == ST_DISCARD) {
			if (!(c->discard -= (uint64_t)n)) {
				uint64_t cookie;
				memcpy(&cookie, c->hdr + 8, 8);
				nbds_reply_now(c, c->err_after_discard, be64toh(cookie));
				nbds_enter_transmission(c);
			}
			continue;
		}
		if ((c->have += (size_t)n) < c->need)
			continue;
		if (nbds_got(c)) {
			pthread_mutex_lock(&c->lock);
			c->ending = c->broken = 1;
			pthread_mutex_unlock(&c->lock);
			break;
		}
		if (c->state == ST_REQ_HDR) {
			/* re-check the budgets between requests */
			pthread_mutex_lock(&c->lock);
			int full = c->inflight >= NBD_SERVER_CONN_INFLIGHT || c->pending >= NBD_SERVER_CONN_BYTES;
			pthread_mutex_unlock(&c->lock);
			if (full || atomic_load(&c->s->total) >= NBD_SERVER_TOTAL_BYTES ||
			    nbds_jobs(c->s) >= NBD_SERVER_INFLIGHT)
				break;
		}
	}
	nbds_update(c);
}

static void nbds_writable(struct nbds_conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (nbds_flush_out(c))
		c->broken = 1;
	pthread_mutex_unlock(&c->lock);
	nbds_update(c);
}

static void nbds_accept(struct nbd_server *s)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* out of descriptors: stop accepting for a second */
				epoll_ctl(s->ep, EPOLL_CTL_DEL, s->lfd, NULL);
				s->listening = 0;
			}
			return;
		}
		if (s->nconns >= s->max_conns || atomic_load(&s->stopping)) {
			time_t now = time(NULL);
			if (now != s->last_full_log) {
				fsvol_log(LOG_WARNING, "nbd: %u connections already: refusing more", s->nconns);
				s->last_full_log = now;
			}
			close(fd);
			continue;
		}
		int one = 1, sndbuf = NBDS_SNDBUF;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* fails on unix sockets: fine */
		/* room for a whole large read reply: a worker's send then completes at
		 * once instead of leaving the rest to the event thread (the kernel
		 * caps it at net.core.wmem_max) */
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		struct nbds_conn *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		c->s = s;
		c->fd = fd;
		atomic_init(&c->refs, 1);
		pthread_mutex_init(&c->lock, NULL);
		c->state = ST_FLAGS;
		c->dst = c->hdr;
		c->need = 4;
		c->deadline = time(NULL) + NBD_SERVER_HANDSHAKE_S;
		c->events = EPOLLIN;
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &e) < 0) {
			pthread_mutex_destroy(&c->lock);
			free(c);
			close(fd);
			continue;
		}
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
		unsigned char g[18];
		uint64_t m1 = htobe64(NBD_MAGIC), m2 = htobe64(NBD_IHAVEOPT);
		uint16_t hf = htobe16(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
		memcpy(g, &m1, 8);
		memcpy(g + 8, &m2, 8);
		memcpy(g + 16, &hf, 2);
		nbds_send_copy(c, g, sizeof(g));
		nbds_update(c);
	}
}

/* Once a second: handshakes past their deadline, clients that left their
 * replies unread too long, throttled connections to look at again. */
static void nbds_tick(struct nbd_server *s)
{
	time_t now = time(NULL);
	struct nbds_conn *c = s->conns, *next;
	int rescan = s->any_throttled;
	s->any_throttled = 0;
	for (; c; c = next) {
		next = c->next;
		pthread_mutex_lock(&c->lock);
		int stalled = c->out_head && now - c->out_since > NBD_SERVER_STALL_S;
		pthread_mutex_unlock(&c->lock);
		if (stalled || (c->state < ST_REQ_HDR && now > c->deadline)) {
			nbds_close(c);
			continue;
		}
		if (rescan && c->throttled)
			nbds_update(c);
	}
	if (!s->listening && !atomic_load(&s->stopping)) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &e) == 0)
			s->listening = 1;
	}
}

/* The end of the event thread's turn: the batched replies go out, one
 * sendmsg per connection; a connection whose socket did not take them all,
 * or that now has to end or be throttled, is looked at again. */
static void nbds_batch_flush(void)
{
	while (tl_batch) {
		struct nbds_conn *c = tl_batch;
		tl_batch = c->batch_next;
		pthread_mutex_lock(&c->lock);
		c->batched = 0;
		if (!c->dead && nbds_flush_out(c))
			c->broken = 1;
		int look = !c->dead && (c->out_head || c->broken || c->throttled || c->ending || (c->events & EPOLLOUT));
		pthread_mutex_unlock(&c->lock);
		if (look)
			nbds_update(c);
		nbds_conn_unref(c);
	}
}

static void nbds_bury(struct nbd_server *s)
{
	while (s->closed) {
		struct nbds_conn *c = s->closed;
		s->closed = c->next;
		nbds_conn_unref(c);
	}
}

/* The event thread's own ring (NULL: none, member I/O goes to the ring
 * threads). File members' I/O submitted on this thread goes on it
 * (member_file_lend_ring) and completes in this loop: no hand-off to another
 * thread and back. The epoll set is watched through it (a one-shot poll,
 * armed before each sleep),
 * so one wait covers sockets and member I/O. */
#define NBDS_RING 1024u
#define NBDS_EP_TAG ((void *)2)

static struct io_uring *nbds_ring_setup(struct io_uring *ring)
{
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN |
					      IORING_SETUP_SINGLE_ISSUER,
				     .cq_entries = 8 * NBDS_RING };
	int r = io_uring_queue_init_params(NBDS_RING, ring, &p);
	if (r == -EINVAL) { /* an older kernel: no COOP_TASKRUN or SINGLE_ISSUER */
		p = (struct io_uring_params){ .flags = IORING_SETUP_CQSIZE, .cq_entries = 8 * NBDS_RING };
		r = io_uring_queue_init_params(NBDS_RING, ring, &p);
	}
	if (r < 0) {
		fsvol_log(LOG_WARNING, "nbd: io_uring: %s; member I/O goes through the ring threads", strerror(-r));
		return NULL;
	}
	member_file_lend_ring(ring);
	return ring;
}

/* Submit what this thread queued; wait (at most timeout_ms) for a member
 * completion or an epoll event unless wait is 0; run the member completions
 * (their replies go out from here). */
static void nbds_ring_turn(struct nbd_server *s, struct io_uring *ring, int wait, unsigned timeout_ms)
{
	struct io_uring_cqe *cqe;
	if (wait && !s->ring_poll_armed) {
		/* armed only now, when the epoll set was just found empty: armed
		 * on a ready set it would fire at once, again and again */
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		if (!sqe) {
			io_uring_submit(ring);
			sqe = io_uring_get_sqe(ring);
		}
		if (sqe) {
			io_uring_prep_poll_add(sqe, s->ep, POLLIN);
			io_uring_sqe_set_data(sqe, NBDS_EP_TAG);
			s->ring_poll_armed = 1;
		}
	}
	if (wait) {
		struct __kernel_timespec ts = { timeout_ms / 1000, (long long)(timeout_ms % 1000) * 1000000 };
		io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
	} else {
		io_uring_submit(ring);
	}
	void *tags[64];
	int res[64];
	for (;;) {
		unsigned head, n = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			if (n == 64)
				break;
			tags[n] = io_uring_cqe_get_data(cqe);
			res[n] = cqe->res;
			n++;
		}
		if (!n)
			return;
		io_uring_cq_advance(ring, n);
		/* completions may queue more I/O on this ring: after the CQ is free */
		for (unsigned i = 0; i < n; i++) {
			if (tags[i] == NBDS_EP_TAG && res[i] < 0 && res[i] != -ECANCELED) {
				/* cannot happen on a live epoll set; never spin on it: poll it instead */
				fsvol_log(LOG_WARNING, "nbd: io_uring poll: %s; polling every 10 ms", strerror(-res[i]));
				s->ring_poll_off = 1;
			} else if (tags[i] == NBDS_EP_TAG) { /* one-shot: armed again before the next sleep */
				s->ring_poll_armed = 0;
			} else if ((uintptr_t)tags[i] & 1) {
				member_file_complete(tags[i], res[i]);
			}
		}
		io_uring_submit(ring);
	}
}

static void *nbds_event_main(void *arg)
{
	struct nbd_server *s = arg;
	struct epoll_event ev[64];
	time_t last = time(NULL);
	struct io_uring ring_mem, *ring;
	pthread_setname_np(pthread_self(), "fsvol-export-ev"); /* top -H, ps -L */
	engine_thread_may_block(0); /* no waiting on members: this thread reads, submits and answers */
	ring = nbds_ring_setup(&ring_mem);
	tl_batching = 1;
	while (!atomic_load(&s->stopping)) {
		int n = epoll_wait(s->ep, ev, 64, !ring ? 1000 : s->ring_poll_off ? 10 : 0);
		if (ring && !s->ring_poll_off && n <= 0) { /* nothing ready: sleep in the ring (member I/O, the epoll set) */
			nbds_ring_turn(s, ring, 1, 1000);
			n = epoll_wait(s->ep, ev, 64, 0);
		}
		for (int i = 0; i < n; i++) {
			struct nbds_conn *c = ev[i].data.ptr;
			if (c == NULL) {
				nbds_accept(s);
			} else if ((void *)c == (void *)&s->wake) {
				uint64_t x;
				ssize_t r = read(s->wake, &x, sizeof(x));
				(void)r;
			} else if (c->fd >= 0) {
				if (ev[i].events & (EPOLLERR | EPOLLHUP) && !(ev[i].events & EPOLLIN)) {
					nbds_close(c);
					continue;
				}
				if (ev[i].events & EPOLLOUT)
					nbds_writable(c);
				if (c->fd >= 0 && ev[i].events & EPOLLIN)
					nbds_readable(c);
			}
		}
		/* connections the completions asked about */
		pthread_mutex_lock(&s->kick_lock);
		struct nbds_conn *k = s->kicks;
		s->kicks = NULL;
		pthread_mutex_unlock(&s->kick_lock);
		while (k) {
			struct nbds_conn *next = k->kick_next;
			pthread_mutex_lock(&k->lock);
			k->kicked = 0;
			int dead = k->dead;
			pthread_mutex_unlock(&k->lock);
			if (!dead)
				nbds_update(k);
			nbds_conn_unref(k);
			k = next;
		}
		if (ring) /* the requests just read go out; what completed is answered */
			nbds_ring_turn(s, ring, 0, 0);
		nbds_batch_flush();
		time_t now = time(NULL);
		if (now != last || s->any_throttled) {
			last = now;
			nbds_tick(s);
		}
		nbds_bury(s);
	}
	nbds_batch_flush();
	while (s->conns)
		nbds_close(s->conns);
	nbds_bury(s);
	if (ring) {
		/* member I/O still on this ring (requests of closed connections, or
		 * of another front end that a completion here moved on) completes
		 * here before the ring goes */
		while (member_file_lent_inflight())
			nbds_ring_turn(s, ring, 1, 10);
		member_file_lend_ring(NULL);
		io_uring_queue_exit(ring);
	}
	nbds_batch_flush(); /* the connections are dead: only references to drop */
	tl_batching = 0;
	return NULL;
}

/* ---- requests in the engine */

/* The request's reply goes out (or is dropped on a dead connection), its
 * budgets are released: the last thing done with j, exactly once. */
static void nbds_finish(struct nbds_job *j, int r)
{
	struct nbds_conn *c = j->c;
	struct nbd_server *s = c->s;
	pthread_mutex_lock(&c->lock);
	c->inflight--;
	if (j->type == CMD_READ && !r) {
		char *h = (char *)j->reply + NBDS_REPLY_ROOM - 16;
		nbds_reply_hdr((unsigned char *)h, 0, j->cookie);
		nbds_queue(c, j->reply, j->reply_size, h, 16 + (size_t)j->len, j->acct);
	} else {
		unsigned char *b = malloc(16);
		nbds_buf_put(s, j->reply, j->reply_size);
		if (b) {
			nbds_reply_hdr(b, (uint32_t)-r, j->cookie);
			nbds_queue(c, b, 0, b, 16, 0);
		} else if (!c->dead) {
			c->broken = 1;
		}
		nbds_release(c, j->acct);
	}
	/* the event thread looks again when there is output left, the budgets
	 * held the reading back, or the connection ends once this was answered */
	if (!c->dead && !c->batched && (c->out_head || c->broken || c->throttled || c->ending))
		nbds_kick(c);
	pthread_mutex_unlock(&c->lock);
	nbds_buf_put(s, j->buf, j->bufsize);
	free(j);
	nbds_conn_unref(c);
	/* last: nbd_server_stop may free s once the count is 0 */
	pthread_mutex_lock(&s->jlock);
	if (--s->jobs == NBD_SERVER_INFLIGHT - 1) {
		/* below the limit again: the event thread looks at throttled connections */
		uint64_t one = 1;
		ssize_t w = write(s->wake, &one, sizeof(one));
		(void)w;
	}
	if (!s->jobs)
		pthread_cond_broadcast(&s->jcond);
	pthread_mutex_unlock(&s->jlock);
}

static void nbds_fua_done(void *arg, int r)
{
	nbds_finish(arg, r);
}

/* The data part is done: a write with FUA is the write, then a volume flush. */
static void nbds_data_done(struct nbds_job *j, int r)
{
	if (!r && (j->flags & CMD_FLAG_FUA) && j->type != CMD_READ) {
		r = engine_submit(j->c->s->v, ENGINE_FLUSH, NULL, 0, 0, nbds_fua_done, j);
		if (!r)
			return;
	}
	nbds_finish(j, r);
}

static void nbds_io_done(void *arg, int r)
{
	nbds_data_done(arg, r);
}

/* A trim or zero: zeros written through the engine, NBDS_ZERO_BUF at a
 * time, up to NBDS_ZERO_WINDOW pieces at once (counted, and every level's
 * redundancy stays consistent, which a hole punched below would not; a
 * trim leaves zeros too, so reads after it are defined). Whoever finds no
 * one driving drives: submits what the window allows, with c->lock
 * dropped (a piece may complete inside engine_submit and only note that
 * the driver must look again), and finishes the job once nothing is left
 * in flight. A completion touches j only under the lock, so the driver may
 * free it as soon as it decides. done: a piece completed with r. */
static void nbds_zero_piece_done(void *arg, int r);

static void nbds_zero_pump(struct nbds_job *j, int done, int r)
{
	struct nbds_conn *c = j->c;
	struct vol *v = c->s->v;
	pthread_mutex_lock(&c->lock);
	if (done) {
		j->zinflight--;
		if (r && !j->zerr)
			j->zerr = r;
	}
	if (j->zdriving) {
		j->zagain = 1;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	j->zdriving = 1;
	do {
		j->zagain = 0;
		while (!j->zerr && j->zleft && j->zinflight < NBDS_ZERO_WINDOW) {
			uint64_t off = j->zoff, n = j->zleft < NBDS_ZERO_BUF ? j->zleft : NBDS_ZERO_BUF;
			j->zoff += n;
			j->zleft -= n;
			j->zinflight++;
			pthread_mutex_unlock(&c->lock);
			int e = engine_submit(v, ENGINE_WRITE, c->s->zeros, off, n, nbds_zero_piece_done, j);
			pthread_mutex_lock(&c->lock);
			if (e) {
				j->zinflight--;
				if (!j->zerr)
					j->zerr = e;
			}
		}
	} while (j->zagain);
	j->zdriving = 0;
	int end = !j->zinflight && (j->zerr || !j->zleft);
	r = j->zerr;
	pthread_mutex_unlock(&c->lock);
	if (end)
		nbds_data_done(j, r);
}

static void nbds_zero_piece_done(void *arg, int r)
{
	nbds_zero_pump(arg, 1, r);
}

/* Hand a whole request (c->inflight and the budgets counted) to the engine;
 * its completion answers. From the event thread, which goes back to reading. */
static void nbds_start(struct nbd_server *s, struct nbds_job *j)
{
	int r = 0;
	atomic_fetch_add(&j->c->refs, 1);
	pthread_mutex_lock(&s->jlock);
	s->jobs++;
	pthread_mutex_unlock(&s->jlock);
	switch (j->type) {
	case CMD_READ:
		if (!(j->reply = nbds_buf_get(s, NBDS_REPLY_ROOM + (size_t)j->len, &j->reply_size)))
			r = -ENOMEM;
		else
			r = engine_submit(s->v, ENGINE_READ, (char *)j->reply + NBDS_REPLY_ROOM, j->off, j->len,
					  nbds_io_done, j);
		break;
	case CMD_WRITE:
		r = engine_submit(s->v, ENGINE_WRITE, j->buf, j->off, j->len, nbds_io_done, j);
		break;
	case CMD_FLUSH:
		r = engine_submit(s->v, ENGINE_FLUSH, NULL, 0, 0, nbds_io_done, j);
		break;
	default: /* CMD_TRIM, CMD_WRITE_ZEROES */
		j->zoff = j->off;
		j->zleft = j->len;
		nbds_zero_pump(j, 0, 0);
		return;
	}
	if (r) /* refused: done is not called */
		nbds_finish(j, r);
}

/* ---- start, stop */

/* Enough descriptors for the connection limit: raise the soft limit to the
 * hard one; the limit is what that allows (members and files keep 64). */
static unsigned nbds_max_conns(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 256;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t room = rl.rlim_cur > 320 ? rl.rlim_cur - 256 : 64;
	return room < NBD_SERVER_MAX_CONNS ? (unsigned)room : NBD_SERVER_MAX_CONNS;
}

struct nbd_server *nbd_server_start(struct vol *v, int fd, const struct nbd_server_opts *o, char *err,
				    size_t errlen)
{
	struct nbd_server *s = calloc(1, sizeof(*s));
	if (!s || posix_memalign(&s->zeros, 4096, NBDS_ZERO_BUF)) {
		snprintf(err, errlen, "--nbd: out of memory");
		free(s);
		close(fd);
		return NULL;
	}
	memset(s->zeros, 0, NBDS_ZERO_BUF);
	s->v = v;
	s->lfd = fd;
	s->wake = s->ep = -1;
	s->any_name = !o->name;
	snprintf(s->name, sizeof(s->name), "%s", o->name ? o->name : "");
	s->readonly = o->readonly;
	s->max_conns = nbds_max_conns();
	struct sockaddr_un sa;
	socklen_t salen = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0 && sa.sun_family == AF_UNIX)
		snprintf(s->sockpath, sizeof(s->sockpath), "%s", sa.sun_path);
	pthread_mutex_init(&s->jlock, NULL);
	pthread_cond_init(&s->jcond, NULL);
	pthread_mutex_init(&s->kick_lock, NULL);
	pthread_mutex_init(&s->pool_lock, NULL);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event el = { .events = EPOLLIN, .data.ptr = NULL };
	struct epoll_event ew = { .events = EPOLLIN, .data.ptr = &s->wake };
	if (s->ep < 0 || s->wake < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &el) < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wake, &ew) < 0) {
		snprintf(err, errlen, "--nbd: epoll: %s", strerror(errno));
		goto fail;
	}
	s->listening = 1;
	if (pthread_create(&s->event, NULL, nbds_event_main, s)) {
		snprintf(err, errlen, "--nbd: cannot start its thread");
		goto fail;
	}
	s->event_running = 1;
	return s;
fail:
	nbd_server_stop(s);
	return NULL;
}

void nbd_server_stop(struct nbd_server *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, 1);
	if (s->event_running) {
		uint64_t one = 1;
		ssize_t w = write(s->wake, &one, sizeof(one));
		(void)w;
		pthread_join(s->event, NULL);
	}
	/* requests in the engine finish (their replies are dropped) */
	pthread_mutex_lock(&s->jlock);
	while (s->jobs)
		pthread_cond_wait(&s->jcond, &s->jlock);
	pthread_mutex_unlock(&s->jlock);
	/* kicks left by the last requests hold references */
	while (s->kicks) {
		struct nbds_conn *k = s->kicks;
		s->kicks = k->kick_next;
		nbds_conn_unref(k);
	}
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->sockpath[0])
		unlink(s->sockpath);
	if (s->ep >= 0)
		close(s->ep);
	if (s->wake >= 0)
		close(s->wake);
	pthread_mutex_destroy(&s->jlock);
	pthread_cond_destroy(&s->jcond);
	pthread_mutex_destroy(&s->kick_lock);
	for (unsigned k = 0; k < NBDS_POOL_CLASSES; k++)
		while (s->pool[k]) {
			void *b = s->pool[k];
			s->pool[k] = *(void **)b;
			free(b);
		}
	pthread_mutex_destroy(&s->pool_lock);
	free(s->zeros);
	free(s);
}
