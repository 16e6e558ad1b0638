/* nbd_input: a connection's reading side (the event thread's): bytes read
 * ahead into c->in, then into the state each waits for (the handshake's,
 * a request header, a write's payload, a refused payload skipped), and the
 * budgets that stop the reading while too much waits on the engine or on
 * the client; a new connection. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fsvol/front/nbd_int.h"

/* c->need bytes arrived at c->dst: act on them. 0, or -1 to end the connection. */
static int nbds_got(struct nbds_conn *c)
{
	switch (c->state) {
	case ST_REQ_HDR:
		return nbds_request(c);
	case ST_REQ_DATA:
		nbds_payload_done(c);
		return 0;
	case ST_DISCARD:
		return 0;
	default:
		return nbds_handshake_got(c);
	}
}

/* May c's next request be read? Its own budgets (requests and bytes read and
 * not yet answered: in the engine or queued to go out), the engine's limit,
 * and the whole server's bytes: past NBD_SERVER_TOTAL_BYTES a connection with
 * nothing in flight may still have one request read, from a reserve, so that
 * clients that leave their replies unread cannot lock the others out. The
 * budgets are checked before a request is read: one request more (at most
 * NBDS_MAX_BLOCK) may pass each. *global: held back by the server's limits. */
static int nbds_may_read(const struct nbds_conn *c, unsigned inflight, size_t pending, int *global)
{
	struct nbd_server *s = c->s;
	size_t total = atomic_load(&s->total);
	*global = 0;
	if (inflight >= NBD_SERVER_CONN_INFLIGHT || pending >= NBD_SERVER_CONN_BYTES)
		return 0;
	*global = 1;
	if (nbds_jobs(s) >= NBD_SERVER_INFLIGHT)
		return 0;
	if (total < NBD_SERVER_TOTAL_BYTES)
		return 1;
	return total < NBD_SERVER_TOTAL_BYTES + NBD_SERVER_RESERVE_BYTES && !inflight && !pending;
}

/* Work a connection's socket may need now, from its state and budgets. */
void nbds_update(struct nbds_conn *c)
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
	int global, in = !c->ending && nbds_may_read(c, inflight, pending, &global);
	/* the handshake holds no buffer; a payload being read is taken whole:
	 * its bytes are counted already */
	if (c->state != ST_REQ_HDR)
		in = !c->ending;
	pthread_mutex_lock(&c->lock);
	c->throttled = !in && !c->ending;
	pthread_mutex_unlock(&c->lock);
	if (!in && !c->ending && global)
		s->any_throttled = 1;
	/* held back, it is not read: a client that hangs up then shows as RDHUP */
	uint32_t ev = (in ? EPOLLIN : c->ending ? 0 : EPOLLRDHUP) | (out ? EPOLLOUT : 0);
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
void nbds_readable(struct nbds_conn *c)
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
			if (!(c->discard -= (uint64_t)n))
				nbds_discard_done(c);
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
			unsigned inflight = c->inflight;
			size_t pending = c->pending;
			pthread_mutex_unlock(&c->lock);
			int global;
			if (!nbds_may_read(c, inflight, pending, &global))
				break;
		}
	}
	nbds_update(c);
}

void nbds_writable(struct nbds_conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (nbds_flush_out(c))
		c->broken = 1;
	pthread_mutex_unlock(&c->lock);
	nbds_update(c);
}

int nbds_conn_new(struct nbd_server *s, int fd)
{
	struct nbds_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
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
		int r = -errno;
		pthread_mutex_destroy(&c->lock);
		free(c);
		close(fd);
		return r;
	}
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	nbds_greet(c);
	nbds_update(c);
	return 0;
}
