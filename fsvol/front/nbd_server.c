/* nbd_server: the NBD export (docs/network.md), in the daemon itself: its
 * event loop, accepting, start and stop. The protocol's parts are the other
 * nbd_*.c files (nbd_int.h lists them).
 *
 * Threads: one event thread owns every socket's reading side and the
 * connection list. It hands each whole request to engine_submit and goes
 * back to reading: no thread waits on the volume. The completion, on
 * whichever thread finished the request (often a member's ring thread),
 * builds the reply and sends it when the socket takes it at once; what it
 * does not take waits on the connection's out queue, which the event thread
 * drains (EPOLLOUT).
 *
 * Locks: nbd_int.h. Stopping waits until every request handed to the engine
 * has completed.
 */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/engine.h"
#include "fsvol/front/nbd_int.h"
#include "fsvol/members/member.h"
#include "fsvol/util/log.h"
#include "fsvol/util/uring_loop.h"

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
		if (nbds_conn_new(s, fd) == -ENOMEM)
			return;
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

/* The event thread's own ring (NULL: none, member I/O goes to the ring
 * threads). File members' I/O submitted on this thread goes on it
 * (member_file_lend_ring) and completes in this loop: no hand-off to another
 * thread and back. The epoll set is watched through it (a one-shot poll,
 * armed before each sleep),
 * so one wait covers sockets and member I/O. */
#define NBDS_RING 1024u

static struct io_uring *nbds_ring_setup(struct io_uring *ring)
{
	int r = uring_loop_init(ring, NBDS_RING, 8 * NBDS_RING, 0);
	if (r < 0) {
		fsvol_log(LOG_WARNING, "nbd: io_uring: %s; member I/O goes through the ring threads", strerror(-r));
		return NULL;
	}
	member_file_lend_ring(ring);
	return ring;
}

/* The epoll set's one-shot poll completed. */
static void nbds_ep_polled(void *ctx, void *ptr, int res)
{
	struct nbd_server *s = ctx;
	(void)ptr;
	if (res < 0 && res != -ECANCELED) {
		/* cannot happen on a live epoll set; never spin on it: poll it instead */
		fsvol_log(LOG_WARNING, "nbd: io_uring poll: %s; polling every 10 ms", strerror(-res));
		s->ring_poll_off = 1;
	} else {
		s->ring_poll_armed = 0; /* one-shot: armed again before the next sleep */
	}
}

static uring_cqe_fn *const nbds_handlers[URING_KINDS] = {
	[URING_LENT] = member_file_complete, /* a file member's I/O: its reply goes out from here */
	[URING_TIMER] = nbds_ep_polled,
};

/* Submit what this thread queued; wait (at most timeout_ms) for a member
 * completion or an epoll event unless wait is 0; run the member completions
 * (their replies go out from here). */
static void nbds_ring_turn(struct nbd_server *s, struct io_uring *ring, int wait, unsigned timeout_ms)
{
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
			io_uring_sqe_set_data(sqe, uring_tag(NULL, URING_TIMER));
			s->ring_poll_armed = 1;
		}
	}
	if (wait)
		uring_loop_wait(ring, 1, timeout_ms * 1000000ull);
	else
		io_uring_submit(ring);
	/* completions may queue more I/O on this ring: sent after each round */
	while (uring_loop_reap(ring, nbds_handlers, s))
		io_uring_submit(ring);
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
	nbds_batching(1);
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
				/* gone, or hung up while its reading was held back (RDHUP):
				 * what it left unread is given back now, not at the stall */
				if (ev[i].events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP) && !(ev[i].events & EPOLLIN)) {
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
		nbds_batch_flush(nbds_update);
		time_t now = time(NULL);
		if (now != last || s->any_throttled) {
			if (now != last)
				bufpool_shrink(); /* buffers a burst of requests left idle go back */
			last = now;
			nbds_tick(s);
		}
		nbds_bury(s);
	}
	nbds_batch_flush(nbds_update);
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
	nbds_batch_flush(nbds_update); /* the connections are dead: only references to drop */
	nbds_batching(0);
	return NULL;
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
	free(s->zeros);
	free(s);
}
