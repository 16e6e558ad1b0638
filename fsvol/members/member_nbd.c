/* member_nbd: a network block device through libnbd's asynchronous API.
 *
 *   nbd://HOST[:PORT]/EXPORT            TCP (nbds:// with TLS)
 *   nbd+unix:///EXPORT?socket=PATH      a unix socket (nbds+unix:// with TLS)
 *
 * Any number of requests are in flight per connection: queue issues
 * nbd_aio_pread/pwrite/flush/zero at once (libnbd sends without blocking) and
 * each command's completion callback settles its member_io. One event thread
 * serves every NBD member of the process: it polls each handle's socket in the
 * direction libnbd asks for and calls nbd_aio_notify_read/write (libnbd 1.14
 * has no nbd_poll2); an eventfd wakes it when a command left bytes unsent.
 *
 * A handle is not safe for concurrent calls from several threads: every libnbd
 * call on it is made under its mutex, so completion callbacks run under it too.
 * They only collect finished I/Os; io->done runs after the mutex is dropped
 * (a completion may queue more I/O on the same member).
 *
 * A lost connection, a refused command or a server silent for NBD_TIMEOUT_S
 * with commands outstanding fails the member: what was in flight and all
 * later I/O completes with -EIO at once; the engine fails the member, and the
 * user reconnects it with `fsvol re-add MNT URI`.
 *
 * The event thread does not survive fork(): a fork handler stops it and the
 * next I/O starts it in whichever process goes on (a daemon opens its members
 * before it daemonises; two processes must never read one socket).
 */
#include <errno.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsvol/members/member.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define NBD_OP_ZERO 3                       /* internal: member_io op for zero() */
#define NBD_PIECE_MAX (32u << 20)           /* largest read/write command sent */
#define NBD_ZERO_PIECE (1ull << 30)         /* largest zero command (32-bit lengths) */
#define NBD_TIMEOUT_NS (30ull * 1000000000) /* no reply for this long: the member is lost */

struct nbdm_priv {
	struct nbdm_priv *next;      /* the event thread's list (nbdm_ev.lock) */
	pthread_mutex_t lock;       /* every libnbd call on h, and the fields below */
	struct nbd_handle *h;
	int dead;                   /* the connection is gone: I/O fails at once */
	int holds;                  /* this member claimed its URI (lock) */
	uint64_t active_ns;         /* last issue or completion */
	struct member_io *done;     /* finished, to complete outside the lock */
	unsigned max_piece;
	unsigned polled;            /* the directions the event thread waits for */
	char uri[4096];
};

/* The event thread and every open NBD member. */
static struct {
	pthread_mutex_t lock;
	struct nbdm_priv *list;
	int efd;
	int running, stop;
	pid_t pid;                  /* the process the thread runs in */
	pthread_t thread;
	pthread_once_t once;
} nbdm_ev = { .lock = PTHREAD_MUTEX_INITIALIZER, .efd = -1, .once = PTHREAD_ONCE_INIT };

static void nbdm_wake(void)
{
	uint64_t one = 1;
	if (write(nbdm_ev.efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread is awake anyway */
	}
}

/* Complete a list of I/Os (never under a lock). */
static void nbdm_run_done(struct member_io *list)
{
	while (list) {
		struct member_io *io = list;
		list = io->next;
		io->done(io);
	}
}

/* The handle is gone (p->lock held): refuse new I/O; libnbd fails what was in flight. */
static void nbdm_mark_dead(struct nbdm_priv *p, const char *why)
{
	if (p->dead)
		return;
	p->dead = 1;
	fsvol_log(LOG_ERR, "%s: NBD connection lost (%s); the member fails, reconnect with fsvol re-add",
		  p->uri, why);
}

/* ---- completions ---- */

/* One NBD command finished (p->lock held: libnbd calls back from our calls). */
static int nbdm_cmd_done(void *ud, int *error)
{
	struct member_io *io = ud;
	struct nbdm_priv *p = io->bpriv[0];
	if (*error && !io->res)
		io->res = -*error;
	p->active_ns = stats_now();
	uintptr_t left = (uintptr_t)io->bpriv[1] - 1;
	io->bpriv[1] = (void *)left;
	if (!left) {
		io->next = p->done;
		p->done = io;
	}
	return 1; /* retire the command */
}

/* ---- the event thread ---- */

/* Poll buffers of one event loop (the thread's, or a nested one). */
struct nbdm_evbuf {
	size_t cap;
	struct pollfd *pfd;
	struct nbdm_priv **who;
};

static __thread int nbdm_on_ev;      /* this is the event thread */
/* I/Os queued on the event thread by a caller that may block (see commit) */
#define NBDM_TL_WAIT 64
static __thread struct member_io *tl_wait[NBDM_TL_WAIT];
static __thread unsigned tl_nwait;

/* One round of the event loop: wait (at most wait_ms; -1 for ever), move each
 * ready handle on, complete what finished. -1 when the thread must stop. */
static int nbdm_ev_once(struct nbdm_evbuf *b, int wait_ms)
{
	/* 1. what to wait for */
	size_t n = 1;
	int timeout = wait_ms;
	uint64_t now = stats_now();
	pthread_mutex_lock(&nbdm_ev.lock);
	if (nbdm_ev.stop) {
		pthread_mutex_unlock(&nbdm_ev.lock);
		return -1;
	}
	size_t want = 1;
	for (struct nbdm_priv *p = nbdm_ev.list; p; p = p->next)
		want++;
	if (want > b->cap) {
		struct pollfd *np = realloc(b->pfd, want * sizeof(*b->pfd));
		struct nbdm_priv **nw = np ? realloc(b->who, want * sizeof(*b->who)) : NULL;
		if (np)
			b->pfd = np;
		if (nw)
			b->who = nw;
		if (np && nw)
			b->cap = want;
	}
	if (!b->cap) {
		pthread_mutex_unlock(&nbdm_ev.lock);
		usleep(1000);
		return 0;
	}
	struct pollfd *pfd = b->pfd;
	pfd[0] = (struct pollfd){ .fd = nbdm_ev.efd, .events = POLLIN };
	for (struct nbdm_priv *p = nbdm_ev.list; p && n < b->cap; p = p->next) {
		pthread_mutex_lock(&p->lock);
		p->polled = 0;
		if (!p->dead) {
			int fd = nbd_aio_get_fd(p->h);
			unsigned dir = nbd_aio_get_direction(p->h);
			if (nbd_aio_in_flight(p->h) > 0) {
				if (now > p->active_ns && now - p->active_ns > NBD_TIMEOUT_NS && fd >= 0) {
					/* silent server: end the connection, libnbd fails the rest */
					fsvol_log(LOG_ERR, "%s: no reply for %llu s", p->uri,
						  (unsigned long long)(NBD_TIMEOUT_NS / 1000000000));
					shutdown(fd, SHUT_RDWR);
					dir |= LIBNBD_AIO_DIRECTION_READ;
				}
				if (timeout < 0 || timeout > 1000)
					timeout = 1000;
			}
			if (fd >= 0) {
				short ev = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
					   (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
				pfd[n] = (struct pollfd){ .fd = fd, .events = ev };
				p->polled = dir & LIBNBD_AIO_DIRECTION_BOTH;
				b->who[n++] = p;
			}
		}
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&nbdm_ev.lock);

	/* 2. wait */
	if (poll(pfd, n, timeout) < 0) {
		if (errno != EINTR) {
			fsvol_log(LOG_ERR, "NBD members: poll: %s", strerror(errno));
			usleep(1000);
		}
		return 0;
	}
	if (pfd[0].revents) {
		uint64_t v;
		if (read(nbdm_ev.efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another wake-up took it */
		}
	}

	/* 3. move each ready handle on; members closed meanwhile are skipped */
	struct member_io *done = NULL;
	pthread_mutex_lock(&nbdm_ev.lock);
	for (size_t i = 1; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		struct nbdm_priv *p = nbdm_ev.list;
		while (p && p != b->who[i])
			p = p->next;
		if (!p)
			continue;
		pthread_mutex_lock(&p->lock);
		int r = 0;
		if (!p->dead && nbd_aio_get_fd(p->h) == pfd[i].fd) {
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				r = nbd_aio_notify_read(p->h);
			if (r >= 0 && (pfd[i].revents & POLLOUT) &&
			    (nbd_aio_get_direction(p->h) & LIBNBD_AIO_DIRECTION_WRITE))
				r = nbd_aio_notify_write(p->h);
			if (r < 0 || nbd_aio_is_dead(p->h) || nbd_aio_is_closed(p->h))
				nbdm_mark_dead(p, r < 0 ? nbd_get_error() : "closed by the server");
		}
		while (p->done) {
			struct member_io *io = p->done;
			p->done = io->next;
			io->next = done;
			done = io;
		}
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&nbdm_ev.lock);
	nbdm_run_done(done);
	return 0;
}

static void *nbdm_ev_main(void *arg)
{
	(void)arg;
	struct nbdm_evbuf b = { 0 };
	nbdm_on_ev = 1;
	while (nbdm_ev_once(&b, -1) == 0)
		;
	free(b.pfd);
	free(b.who);
	return NULL;
}

/* Stop the thread before fork (see the top); it restarts on the next I/O. */
static void nbdm_fork_prepare(void)
{
	pthread_mutex_lock(&nbdm_ev.lock);
	int join = nbdm_ev.running && nbdm_ev.pid == getpid() && !pthread_equal(nbdm_ev.thread, pthread_self());
	if (join) {
		nbdm_ev.stop = 1;
		pthread_mutex_unlock(&nbdm_ev.lock);
		nbdm_wake();
		pthread_join(nbdm_ev.thread, NULL);
		pthread_mutex_lock(&nbdm_ev.lock);
		nbdm_ev.running = nbdm_ev.stop = 0;
	}
	/* held across fork: the child gets the list in a consistent state */
}

static int nbdm_ev_start_locked(void);

static void nbdm_fork_parent(void)
{
	/* commands in flight here need their thread back now */
	int busy = 0;
	for (struct nbdm_priv *p = nbdm_ev.list; p; p = p->next) {
		pthread_mutex_lock(&p->lock);
		busy |= !p->dead && nbd_aio_in_flight(p->h) > 0;
		pthread_mutex_unlock(&p->lock);
	}
	if (busy && !nbdm_ev.running)
		nbdm_ev_start_locked();
	pthread_mutex_unlock(&nbdm_ev.lock);
}

static void nbdm_fork_child(void)
{
	nbdm_ev.running = 0;
	pthread_mutex_unlock(&nbdm_ev.lock);
}

static void nbdm_ev_init(void)
{
	nbdm_ev.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_atfork(nbdm_fork_prepare, nbdm_fork_parent, nbdm_fork_child);
}

static int nbdm_ev_start_locked(void)
{
	if (nbdm_ev.running && nbdm_ev.pid == getpid())
		return 0;
	if (nbdm_ev.efd < 0)
		return -EMFILE;
	nbdm_ev.stop = 0;
	if (pthread_create(&nbdm_ev.thread, NULL, nbdm_ev_main, NULL))
		return -EAGAIN;
	nbdm_ev.running = 1;
	nbdm_ev.pid = getpid();
	return 0;
}

/* The thread runs in this process (cheap when it does). */
static int nbdm_ev_ensure(void)
{
	if (__atomic_load_n(&nbdm_ev.running, __ATOMIC_ACQUIRE) && nbdm_ev.pid == getpid())
		return 0;
	pthread_mutex_lock(&nbdm_ev.lock);
	int r = nbdm_ev_start_locked();
	pthread_mutex_unlock(&nbdm_ev.lock);
	return r;
}

/* ---- open, close, lock ---- */

/* A stable identity for the export, for "given twice" checks (no dev/ino over a network). */
static uint64_t nbdm_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

static int nbdm_open(struct member *m, const char *uri, int direct, char *err, size_t errlen)
{
	(void)direct; /* the server decides how it caches */
	pthread_once(&nbdm_ev.once, nbdm_ev_init);
	struct nbdm_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (strlen(uri) >= sizeof(p->uri)) {
		free(p);
		snprintf(err, errlen, "%.64s...: URI too long", uri);
		return -ENAMETOOLONG;
	}
	snprintf(p->uri, sizeof(p->uri), "%s", uri);
	pthread_mutex_init(&p->lock, NULL);
	int e = 0;
	const char *what = "";
	if (!(p->h = nbd_create())) {
		e = nbd_get_errno();
		what = nbd_get_error();
	} else if (nbd_connect_uri(p->h, uri) < 0) {
		e = nbd_get_errno();
		what = nbd_get_error();
	}
	if (!e && !what[0]) {
		int64_t size = nbd_get_size(p->h);
		int64_t minb = nbd_get_block_size(p->h, LIBNBD_SIZE_MINIMUM);
		int64_t maxb = nbd_get_block_size(p->h, LIBNBD_SIZE_MAXIMUM);
		if (size < 0) {
			e = nbd_get_errno();
			what = nbd_get_error();
		} else {
			m->size = (uint64_t)size;
			m->align = minb > 512 && minb <= 65536 ? (unsigned)minb : 512;
			p->max_piece = maxb >= 65536 && maxb < NBD_PIECE_MAX ? (unsigned)maxb : NBD_PIECE_MAX;
		}
	}
	if (e || what[0]) {
		/* a missing socket is a server that is not there, not a member create could make */
		if (!e || e == ENOENT)
			e = ECONNREFUSED;
		snprintf(err, errlen, "%s: cannot connect: %s", uri, what[0] ? what : strerror(e));
		if (p->h)
			nbd_close(p->h);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -e;
	}
	m->caps = 0;
	if (nbd_can_flush(p->h) > 0)
		m->caps |= MEMBER_CAN_FLUSH;
	if (nbd_can_zero(p->h) > 0)
		m->caps |= MEMBER_CAN_ZERO;
	if (nbd_is_rotational(p->h) > 0)
		m->caps |= MEMBER_ROTATIONAL;
	m->is_blockdev = 1; /* an export has the size its server gives: never grown */
	m->dev = nbdm_hash(uri) | 1ull << 63;
	m->ino = nbdm_hash(uri) ^ 0x6e6264; /* "nbd" */
	m->priv = p;
	p->active_ns = stats_now();
	pthread_mutex_lock(&nbdm_ev.lock);
	p->next = nbdm_ev.list;
	nbdm_ev.list = p;
	pthread_mutex_unlock(&nbdm_ev.lock);
	return 0;
}

static void nbdm_close_member(struct member *m)
{
	struct nbdm_priv *p = m->priv;
	if (!p)
		return;
	pthread_mutex_lock(&nbdm_ev.lock);
	for (struct nbdm_priv **pp = &nbdm_ev.list; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&nbdm_ev.lock);
	/* off the list: the event thread no longer touches it */
	pthread_mutex_lock(&p->lock);
	if (!p->dead && nbd_aio_in_flight(p->h) == 0)
		nbd_aio_disconnect(p->h, 0); /* NBD_CMD_DISC, not waited for: a hung server cannot hold us */
	struct member_io *done = p->done;
	p->done = NULL;
	pthread_mutex_unlock(&p->lock);
	nbd_close(p->h); /* fails anything still in flight through its callback */
	pthread_mutex_lock(&p->lock);
	while (p->done) {
		struct member_io *io = p->done;
		p->done = io->next;
		io->next = done;
		done = io;
	}
	pthread_mutex_unlock(&p->lock);
	nbdm_run_done(done);
	pthread_mutex_destroy(&p->lock);
	free(p);
	m->priv = NULL;
}

/* NBD has no lock: two processes can share an export (docs/network.md). In
 * one process a URI is claimed once. */
static int nbdm_lock(struct member *m)
{
	struct nbdm_priv *p = m->priv;
	int r = 0;
	pthread_mutex_lock(&nbdm_ev.lock);
	for (struct nbdm_priv *q = nbdm_ev.list; q; q = q->next)
		if (q != p && q->holds && !strcmp(q->uri, p->uri))
			r = -EWOULDBLOCK;
	if (!r)
		p->holds = 1;
	pthread_mutex_unlock(&nbdm_ev.lock);
	return r;
}

/* ---- I/O ---- */

/* Issue one command for io (p->lock held); 0, or -errno when it was not sent. */
static int nbdm_issue_one(struct nbdm_priv *p, struct member_io *io, int op, void *buf, uint64_t len, uint64_t off)
{
	nbd_completion_callback cb = { .callback = nbdm_cmd_done, .user_data = io };
	uintptr_t before = (uintptr_t)io->bpriv[1];
	int64_t r;
	if (op == MEMBER_READ)
		r = nbd_aio_pread(p->h, buf, len, off, cb, 0);
	else if (op == MEMBER_WRITE)
		r = nbd_aio_pwrite(p->h, buf, len, off, cb, 0);
	else if (op == MEMBER_FLUSH)
		r = nbd_aio_flush(p->h, cb, 0);
	else
		r = nbd_aio_zero(p->h, len, off, cb, 0);
	if (r >= 0)
		return 0;
	int e = nbd_get_errno();
	if (nbd_aio_is_dead(p->h) || nbd_aio_is_closed(p->h))
		nbdm_mark_dead(p, nbd_get_error());
	if ((uintptr_t)io->bpriv[1] == before) /* the callback did not run for it */
		io->bpriv[1] = (void *)(before - 1);
	if (!io->res)
		io->res = e ? -e : -EIO;
	return io->res;
}

/* Issue every command of io (p->lock held). bpriv[1] counts the commands
 * outstanding plus one held here, so io cannot finish before all are sent. */
static void nbdm_issue(struct member *m, struct nbdm_priv *p, struct member_io *io)
{
	io->res = 0;
	io->bpriv[0] = p;
	io->bpriv[1] = (void *)(uintptr_t)1;
	if (!p->dead && nbd_aio_in_flight(p->h) == 0)
		p->active_ns = stats_now(); /* the silence timer starts with the first command */
	if (p->dead) {
		io->res = -EIO;
	} else if (io->op != MEMBER_FLUSH && (io->off > m->size || io->len > m->size - io->off)) {
		io->res = -EIO; /* past the end: as a short read of a file */
	} else if (io->op == MEMBER_FLUSH) {
		if (m->caps & MEMBER_CAN_FLUSH) {
			io->bpriv[1] = (void *)((uintptr_t)io->bpriv[1] + 1);
			nbdm_issue_one(p, io, MEMBER_FLUSH, NULL, 0, 0);
		}
	} else if (io->op == NBD_OP_ZERO) {
		for (uint64_t o = 0; o < io->len && !io->res; o += NBD_ZERO_PIECE) {
			uint64_t n = io->len - o < NBD_ZERO_PIECE ? io->len - o : NBD_ZERO_PIECE;
			io->bpriv[1] = (void *)((uintptr_t)io->bpriv[1] + 1);
			nbdm_issue_one(p, io, NBD_OP_ZERO, NULL, n, io->off + o);
		}
	} else {
		uint64_t off = io->off;
		for (unsigned i = 0; i < io->niov && !io->res; i++) {
			uint8_t *b = io->iov[i].iov_base;
			for (size_t o = 0; o < io->iov[i].iov_len && !io->res; o += p->max_piece) {
				size_t n = io->iov[i].iov_len - o < p->max_piece ? io->iov[i].iov_len - o : p->max_piece;
				io->bpriv[1] = (void *)((uintptr_t)io->bpriv[1] + 1);
				nbdm_issue_one(p, io, io->op, b + o, n, off);
				off += n;
			}
		}
	}
	uintptr_t left = (uintptr_t)io->bpriv[1] - 1;
	io->bpriv[1] = (void *)left;
	if (!left) {
		io->next = p->done;
		p->done = io;
	}
}

/* Commands go out at once: libnbd sends without blocking, so a nowait
 * caller waits for nothing but the handle's mutex. */
static void nbdm_queue(struct member *m, struct member_io *io)
{
	struct nbdm_priv *p = m->priv;
	int started = nbdm_ev_ensure();
	if (nbdm_on_ev && !io->nowait && tl_nwait < NBDM_TL_WAIT)
		tl_wait[tl_nwait++] = io;
	pthread_mutex_lock(&p->lock);
	if (started && !p->dead)
		nbdm_mark_dead(p, "cannot start the event thread");
	nbdm_issue(m, p, io);
	unsigned dir = p->dead ? 0 : nbd_aio_get_direction(p->h) & LIBNBD_AIO_DIRECTION_BOTH;
	/* the thread must wait for what libnbd now waits for (a reply; bytes left unsent) */
	int wake = dir && (dir & ~p->polled);
	if (wake)
		p->polled |= dir;
	struct member_io *done = p->done;
	p->done = NULL;
	pthread_mutex_unlock(&p->lock);
	if (wake)
		nbdm_wake();
	nbdm_run_done(done);
}

/* A caller that may block, on the event thread itself (a completion that
 * rewrites superblocks, say): commit turns the event loop until its I/Os are
 * done, or nobody would. */

static void nbdm_commit(struct member *m)
{
	(void)m; /* queue already sent it */
	if (!nbdm_on_ev || !tl_nwait)
		return;
	struct member_io *mine[NBDM_TL_WAIT];
	unsigned n = tl_nwait;
	memcpy(mine, tl_wait, n * sizeof(*mine));
	tl_nwait = 0;
	struct nbdm_evbuf b = { 0 };
	for (unsigned i = 0; i < n; i++)
		while (__atomic_load_n((uintptr_t *)&mine[i]->bpriv[1], __ATOMIC_ACQUIRE))
			if (nbdm_ev_once(&b, 100) < 0)
				break;
	free(b.pfd);
	free(b.who);
}

static int nbdm_zero(struct member *m, uint64_t off, uint64_t len)
{
	if (off > m->size || len > m->size - off)
		return -EINVAL;
	if (m->caps & MEMBER_CAN_ZERO) {
		struct member_io io = { .op = NBD_OP_ZERO, .off = off, .len = len };
		return member_io_sync(m, &io);
	}
	/* no NBD_CMD_WRITE_ZEROES: write them, 1 MiB at a time */
	static const char zeros[1 << 20];
	for (uint64_t o = 0; o < len; o += sizeof(zeros)) {
		size_t n = len - o < sizeof(zeros) ? (size_t)(len - o) : sizeof(zeros);
		int r = member_pwrite(m, zeros, n, off + o);
		if (r < 0)
			return r;
	}
	return 0;
}

int member_nbd_owns_fd(int fd)
{
	int found = 0;
	pthread_mutex_lock(&nbdm_ev.lock);
	for (struct nbdm_priv *p = nbdm_ev.list; p && !found; p = p->next) {
		pthread_mutex_lock(&p->lock);
		found = !p->dead && nbd_aio_get_fd(p->h) == fd;
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&nbdm_ev.lock);
	return found;
}

const struct member_ops member_nbd_ops = {
	.name = "nbd",
	.prefix = "nbd://",
	.open = nbdm_open,
	.close = nbdm_close_member,
	.queue = nbdm_queue,
	.commit = nbdm_commit,
	.zero = nbdm_zero,
	.lock = nbdm_lock,
};
