/* member_nbd: a network block device through libnbd's asynchronous API.
 *
 *   nbd://HOST[:PORT]/EXPORT            TCP (nbds:// with TLS)
 *   nbd+unix:///EXPORT?socket=PATH      a unix socket (nbds+unix:// with TLS)
 *
 * Any number of requests are in flight per connection: queue issues
 * nbd_aio_pread/pwrite/flush/zero at once (libnbd sends without blocking) and
 * each command's completion callback settles its member_io. Each member has
 * its own event thread: it polls the socket in the direction libnbd asks for
 * and calls nbd_aio_notify_read/write (libnbd 1.14 has no nbd_poll2); an
 * eventfd wakes it when a command left bytes unsent. One thread per member,
 * not one for all: replies from several servers are taken in parallel
 * (measured: raid0 over four nbdkit exports, 4K random reads at QD32 in
 * process, 1.3x the IOPS of one shared thread).
 *
 * A handle is not safe for concurrent calls from several threads: every libnbd
 * call on it is made under its mutex, so completion callbacks run under it too.
 * They only collect finished I/Os; io->done runs after the mutex is dropped
 * (a completion may queue more I/O on the same member).
 *
 * Synchronous I/O (member_io_sync: superblocks, the bitmap, zeroing) goes
 * the same way and its caller sleeps until the event thread completes it. A
 * waiter may hold the volume's state lock (superblock writes); that is safe
 * because no completion waits for a lock a superblock writer holds: a member
 * failure is only marked on the completion path (docs/engine.md, "Member
 * failures"), so the event thread never waits behind a waiter. A sync I/O
 * must never be issued from a completion (it would wait for its own thread).
 *
 * A lost connection, a refused command or a server silent for NBD_TIMEOUT_S
 * with commands outstanding fails the member: what was in flight and all
 * later I/O completes with -EIO at once; the engine fails the member, and the
 * user reconnects it with `fsvol re-add MNT URI`.
 *
 * Event threads do not survive fork(): a fork handler stops them and the
 * next I/O starts them in whichever process goes on (a daemon opens its
 * members before it daemonises; two processes must never read one socket).
 */
#include <errno.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsvol/members/member.h"
#include "fsvol/util/log.h"
#include "stats/stats.h"

#define NBD_OP_ZERO 3                       /* internal: member_io op for zero() */
#define NBD_PIECE_MAX (32u << 20)           /* largest read/write command sent */
#define NBD_ZERO_PIECE (1ull << 30)         /* largest zero command (32-bit lengths) */
#define NBD_TIMEOUT_NS (30ull * 1000000000) /* no reply for this long: the member is lost */
#define NBD_DRAIN_MAX 64                    /* replies taken per handle per poll */
#define NBD_CONNECT_S 10                    /* connect and handshake, at most */
#define NBD_CONNECT_S_STR "10"

struct nbdm_priv {
	struct nbdm_priv *next;      /* every open NBD member (nbdm_reg.lock) */
	pthread_mutex_t lock;       /* every libnbd call on h, and the fields below */
	struct nbd_handle *h;
	int dead;                   /* the connection is gone: I/O fails at once */
	int holds;                  /* this member claimed its URI (nbdm_reg.lock) */
	uint64_t active_ns;         /* last issue or completion */
	struct member_io *done;     /* finished, to complete outside the lock */
	unsigned max_piece;
	unsigned polled;            /* the directions the event thread waits for */
	int drain;                  /* socket bytes are reply bytes (no TLS): see nbdm_readable */
	/* the member's event thread (started by the first I/O in a process) */
	int efd;                    /* wakes it: a command left bytes unsent; stop */
	int running, stop;          /* (lock) */
	pid_t pid;                  /* the process it runs in */
	pthread_t thread;
	char uri[4096];
};

/* Every open NBD member, for the fork handlers and URI claims. */
static struct {
	pthread_mutex_t lock;
	struct nbdm_priv *list;
	pthread_once_t once;
} nbdm_reg = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

static void nbdm_wake(struct nbdm_priv *p)
{
	uint64_t one = 1;
	if (write(p->efd, &one, sizeof(one)) < 0) {
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

/* Take p's finished I/Os (p->lock held). */
static struct member_io *nbdm_take_done(struct nbdm_priv *p)
{
	struct member_io *done = p->done;
	p->done = NULL;
	return done;
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

/* ---- the event threads ---- */

/* More reply bytes wait in the socket (p->lock held). libnbd 1.14 must not
 * be told "readable" when nothing is: its reply state then stops sending the
 * commands queued behind it until some reply arrives, and none may come. So
 * a handle is read only when it has bytes. */
static int nbdm_readable(struct nbdm_priv *p, int fd, short revents)
{
	int n = 0;
	if (nbd_aio_get_fd(p->h) != fd || nbd_aio_is_dead(p->h) || nbd_aio_is_closed(p->h))
		return 0;
	if (revents & (POLLHUP | POLLERR))
		return 1; /* the read finds the end */
	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* What p's socket must be polled for; fd -1 for nothing (p->lock not held).
 * Ends a connection silent for NBD_TIMEOUT_S with commands outstanding. */
static struct pollfd nbdm_want(struct nbdm_priv *p, int *timeout)
{
	struct pollfd pfd = { .fd = -1 };
	pthread_mutex_lock(&p->lock);
	p->polled = 0;
	if (!p->dead) {
		int fd = nbd_aio_get_fd(p->h);
		unsigned dir = nbd_aio_get_direction(p->h);
		if (nbd_aio_in_flight(p->h) > 0) {
			uint64_t now = stats_now();
			if (now > p->active_ns && now - p->active_ns > NBD_TIMEOUT_NS && fd >= 0) {
				/* silent server: end the connection, libnbd fails the rest */
				fsvol_log(LOG_ERR, "%s: no reply for %llu s", p->uri,
					  (unsigned long long)(NBD_TIMEOUT_NS / 1000000000));
				shutdown(fd, SHUT_RDWR);
				dir |= LIBNBD_AIO_DIRECTION_READ;
			}
			if (*timeout < 0 || *timeout > 1000)
				*timeout = 1000;
		}
		if (fd >= 0) {
			pfd.fd = fd;
			pfd.events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
				     (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
			p->polled = dir & LIBNBD_AIO_DIRECTION_BOTH;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return pfd;
}

/* Move p's handle on after a poll said pfd is ready, then complete what
 * finished (p->lock not held). */
static void nbdm_move(struct nbdm_priv *p, const struct pollfd *pfd)
{
	pthread_mutex_lock(&p->lock);
	int r = 0;
	if (!p->dead && nbd_aio_get_fd(p->h) == pfd->fd) {
		/* libnbd reads one reply per call: take every reply that has
		 * arrived, not one per poll */
		for (int k = 0; k < NBD_DRAIN_MAX && r >= 0 && (pfd->revents & (POLLIN | POLLHUP | POLLERR)) &&
				(k == 0 || p->drain) && nbdm_readable(p, pfd->fd, pfd->revents);
		     k++)
			r = nbd_aio_notify_read(p->h);
		if (r >= 0 && (pfd->revents & POLLOUT) && (nbd_aio_get_direction(p->h) & LIBNBD_AIO_DIRECTION_WRITE))
			r = nbd_aio_notify_write(p->h);
		if (r < 0 || nbd_aio_is_dead(p->h) || nbd_aio_is_closed(p->h))
			nbdm_mark_dead(p, r < 0 ? nbd_get_error() : "closed by the server");
	}
	struct member_io *done = nbdm_take_done(p);
	pthread_mutex_unlock(&p->lock);
	nbdm_run_done(done);
}

static __thread struct nbdm_priv *nbdm_self; /* the member whose event thread this is */

/* One turn of p's event loop: wait, move the handle on. -1 when the thread
 * must stop. */
static int nbdm_turn(struct nbdm_priv *p)
{
	int timeout = -1;
	pthread_mutex_lock(&p->lock);
	int stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	if (stop)
		return -1;
	struct pollfd pfd[2] = { { .fd = p->efd, .events = POLLIN }, nbdm_want(p, &timeout) };
	if (poll(pfd, 2, timeout) < 0) {
		if (errno != EINTR) {
			fsvol_log(LOG_ERR, "%s: poll: %s", p->uri, strerror(errno));
			usleep(1000);
		}
		return 0;
	}
	if (pfd[0].revents) {
		uint64_t v;
		if (read(p->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another wake-up took it */
		}
	}
	nbdm_move(p, &pfd[1]);
	return 0;
}

static void *nbdm_ev_main(void *arg)
{
	pthread_setname_np(pthread_self(), "fsvol-nbd"); /* top -H, ps -L */
	struct nbdm_priv *p = arg;
	nbdm_self = p;
	while (nbdm_turn(p) == 0)
		;
	return NULL;
}

/* Start p's thread in this process (p->lock held). */
static int nbdm_ev_start_locked(struct nbdm_priv *p)
{
	if (p->running && p->pid == getpid())
		return 0;
	p->stop = 0;
	if (pthread_create(&p->thread, NULL, nbdm_ev_main, p))
		return -EAGAIN;
	p->running = 1;
	p->pid = getpid();
	return 0;
}

/* Stop p's thread (p->lock not held; never from the thread itself). */
static void nbdm_ev_stop(struct nbdm_priv *p)
{
	pthread_mutex_lock(&p->lock);
	int join = p->running && p->pid == getpid() && !pthread_equal(p->thread, pthread_self());
	p->stop = 1;
	pthread_mutex_unlock(&p->lock);
	if (join) {
		nbdm_wake(p);
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_lock(&p->lock);
	p->running = p->stop = 0;
	pthread_mutex_unlock(&p->lock);
}

/* The threads do not survive fork() (see the top): stop them before; the
 * parent restarts those with commands in flight, the next I/O the others. */
static void nbdm_fork_prepare(void)
{
	pthread_mutex_lock(&nbdm_reg.lock); /* held across fork: a consistent list */
	for (struct nbdm_priv *p = nbdm_reg.list; p; p = p->next)
		if (p != nbdm_self)
			nbdm_ev_stop(p);
}

static void nbdm_fork_parent(void)
{
	for (struct nbdm_priv *p = nbdm_reg.list; p; p = p->next) {
		pthread_mutex_lock(&p->lock);
		if (!p->dead && nbd_aio_in_flight(p->h) > 0)
			nbdm_ev_start_locked(p);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&nbdm_reg.lock);
}

static void nbdm_fork_child(void)
{
	for (struct nbdm_priv *p = nbdm_reg.list; p; p = p->next)
		p->running = 0;
	pthread_mutex_unlock(&nbdm_reg.lock);
}

static void nbdm_reg_init(void)
{
	pthread_atfork(nbdm_fork_prepare, nbdm_fork_parent, nbdm_fork_child);
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

/* nbd_connect_uri with a deadline: an unreachable host or a server that
 * never answers the handshake fails in NBD_CONNECT_S, not in the system's TCP
 * timeout (2 minutes and more). 0, -ETIMEDOUT, or -1 with libnbd's error. */
static int nbdm_connect(struct nbd_handle *h, const char *uri)
{
	/* the user's own URI may name its TLS files (tls-psk-file=, tls-certificates=) */
	nbd_set_uri_allow_local_file(h, true);
	if (nbd_aio_connect_uri(h, uri) < 0)
		return -1;
	uint64_t end = stats_now() + NBD_CONNECT_S * 1000000000ull;
	while (nbd_aio_is_connecting(h)) {
		uint64_t now = stats_now();
		if (now >= end)
			return -ETIMEDOUT;
		if (nbd_poll(h, (int)((end - now) / 1000000 + 1)) < 0)
			return -1;
	}
	return nbd_aio_is_ready(h) ? 0 : -1;
}

static int nbdm_open(struct member *m, const char *uri, int direct, char *err, size_t errlen)
{
	(void)direct; /* the server decides how it caches */
	pthread_once(&nbdm_reg.once, nbdm_reg_init);
	struct nbdm_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->efd = -1;
	if (strlen(uri) >= sizeof(p->uri)) {
		free(p);
		snprintf(err, errlen, "%.64s...: URI too long", uri);
		return -ENAMETOOLONG;
	}
	snprintf(p->uri, sizeof(p->uri), "%s", uri);
	pthread_mutex_init(&p->lock, NULL);
	int e = 0;
	const char *what = "";
	if ((p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		e = errno;
		what = strerror(e);
	} else if (!(p->h = nbd_create())) {
		e = nbd_get_errno();
		what = nbd_get_error();
	} else if ((e = nbdm_connect(p->h, uri)) == -ETIMEDOUT) {
		e = ETIMEDOUT;
		what = "no answer within " NBD_CONNECT_S_STR " s (connect and handshake)";
	} else if (e < 0) {
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
		if (p->efd >= 0)
			close(p->efd);
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
	p->drain = nbd_get_tls_negotiated(p->h) <= 0; /* TLS records: bytes are not replies */
	m->is_blockdev = 1; /* an export has the size its server gives: never grown */
	m->dev = nbdm_hash(uri) | 1ull << 63;
	m->ino = nbdm_hash(uri) ^ 0x6e6264; /* "nbd" */
	m->priv = p;
	p->active_ns = stats_now();
	pthread_mutex_lock(&nbdm_reg.lock);
	p->next = nbdm_reg.list;
	nbdm_reg.list = p;
	pthread_mutex_unlock(&nbdm_reg.lock);
	return 0;
}

static void nbdm_close_member(struct member *m)
{
	struct nbdm_priv *p = m->priv;
	if (!p)
		return;
	pthread_mutex_lock(&nbdm_reg.lock);
	for (struct nbdm_priv **pp = &nbdm_reg.list; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&nbdm_reg.lock);
	/* its own thread closing it (no caller does) cannot join itself: the
	 * thread ends after this completion and p stays allocated */
	int own = nbdm_self == p;
	if (own)
		pthread_detach(pthread_self());
	nbdm_ev_stop(p); /* no thread touches the handle now */
	pthread_mutex_lock(&p->lock);
	p->stop = own;
	if (!p->dead && nbd_aio_in_flight(p->h) == 0)
		nbd_aio_disconnect(p->h, 0); /* NBD_CMD_DISC, not waited for: a hung server cannot hold us */
	struct member_io *done = nbdm_take_done(p);
	pthread_mutex_unlock(&p->lock);
	nbd_close(p->h); /* fails anything still in flight through its callback */
	p->h = NULL;
	pthread_mutex_lock(&p->lock);
	for (struct member_io *io = nbdm_take_done(p), *next; io; io = next) {
		next = io->next;
		io->next = done;
		done = io;
	}
	pthread_mutex_unlock(&p->lock);
	nbdm_run_done(done);
	m->priv = NULL;
	if (own)
		return;
	close(p->efd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* NBD has no lock: two processes can share an export (docs/network.md). In
 * one process a URI is claimed once. */
static int nbdm_lock(struct member *m)
{
	struct nbdm_priv *p = m->priv;
	int r = 0;
	pthread_mutex_lock(&nbdm_reg.lock);
	for (struct nbdm_priv *q = nbdm_reg.list; q; q = q->next)
		if (q != p && q->holds && !strcmp(q->uri, p->uri))
			r = -EWOULDBLOCK;
	if (!r)
		p->holds = 1;
	pthread_mutex_unlock(&nbdm_reg.lock);
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
	pthread_mutex_lock(&p->lock);
	if (!p->dead && nbdm_ev_start_locked(p))
		nbdm_mark_dead(p, "cannot start the event thread");
	nbdm_issue(m, p, io);
	unsigned dir = p->dead ? 0 : nbd_aio_get_direction(p->h) & LIBNBD_AIO_DIRECTION_BOTH;
	/* the thread must wait for what libnbd now waits for (a reply; bytes left unsent) */
	int wake = dir && (dir & ~p->polled);
	if (wake)
		p->polled |= dir;
	struct member_io *done = nbdm_take_done(p);
	pthread_mutex_unlock(&p->lock);
	if (wake)
		nbdm_wake(p);
	nbdm_run_done(done);
}

static void nbdm_commit(struct member *m)
{
	(void)m; /* queue sent it */
}

static int nbdm_zero(struct member *m, uint64_t off, uint64_t len)
{
	if (off > m->size || len > m->size - off)
		return -EINVAL;
	if (m->caps & MEMBER_CAN_ZERO) {
		struct member_io io = { .op = NBD_OP_ZERO, .off = off, .len = len };
		return member_io_sync(m, &io);
	}
	return member_write_zeros(m, off, len); /* no NBD_CMD_WRITE_ZEROES */
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
