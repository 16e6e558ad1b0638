/* nbd_conn: a connection's life and its out queue.
 *
 * Lifetime: the event thread holds one reference to a connection until it
 * closes it, each request in the engine one more, a kick one more, the batch
 * one more. The socket is closed under the connection's lock with dead set,
 * so a completion never writes to a descriptor number that was reused.
 *
 * Output: a reply is sent by the thread that made it when the socket takes it
 * at once; what it does not take waits on the out queue, which the event
 * thread drains (EPOLLOUT). Replies made on the event thread wait for the end
 * of its turn and go out together, one sendmsg per connection. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/front/nbd_int.h"

void nbds_conn_unref(struct nbds_conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->optbuf);
	free(c);
}

void nbds_release(struct nbds_conn *c, size_t acct)
{
	c->pending -= acct;
	atomic_fetch_sub(&c->s->total, acct);
}

static void mem_put(void *mem, size_t cap)
{
	if (cap)
		bufpool_put(mem, cap);
	else
		free(mem);
}

static void out_free(struct nbds_conn *c, struct nbds_out *o)
{
	nbds_release(c, o->acct);
	mem_put(o->mem, o->cap);
	free(o);
}

/* Take n sent bytes off the queue's head. */
static void out_sent(struct nbds_conn *c, size_t n)
{
	while (c->out_head) {
		struct nbds_out *o = c->out_head;
		size_t h = n < o->hlen - o->hoff ? n : o->hlen - o->hoff;
		o->hoff += h;
		n -= h;
		size_t m = n < o->len ? n : o->len;
		o->p += m;
		o->len -= m;
		n -= m;
		if (o->hoff < o->hlen || o->len)
			break; /* the socket took part of it: try again, EAGAIN likely */
		c->out_head = o->next;
		if (!c->out_head)
			c->out_tail = NULL;
		out_free(c, o);
	}
}

/* Many replies in one sendmsg. */
#define NBDS_IOV 64
int nbds_flush_out(struct nbds_conn *c)
{
	while (c->out_head) {
		struct iovec iov[NBDS_IOV];
		int k = 0;
		for (struct nbds_out *o = c->out_head; o && k + 2 <= NBDS_IOV; o = o->next) {
			if (o->hoff < o->hlen)
				iov[k++] = (struct iovec){ o->head + o->hoff, o->hlen - o->hoff };
			if (o->len)
				iov[k++] = (struct iovec){ (void *)o->p, o->len };
		}
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)k };
		ssize_t n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		}
		c->out_since = time(NULL);
		out_sent(c, (size_t)n);
	}
	return 0;
}

/* The event thread batches its sends: a reply made on it (a completion in
 * its ring, a memory member's inline one, a handshake message) waits on the
 * out queue until the end of the loop's turn, then each connection's
 * replies go out in one sendmsg (nbds_batch_flush). */
static __thread int tl_batching;
static __thread struct nbds_conn *tl_batch;

void nbds_batching(int on)
{
	tl_batching = on;
}

void nbds_queue(struct nbds_conn *c, const struct nbds_msg *m)
{
	struct nbds_out *o = c->dead ? NULL : malloc(sizeof(*o));
	if (!o) {
		if (!c->dead)
			c->broken = 1; /* out of memory: the reply is lost, so is the connection */
		nbds_release(c, m->acct);
		mem_put(m->mem, m->cap);
		return;
	}
	*o = (struct nbds_out){ .hlen = m->hlen, .p = m->p, .len = m->len, .mem = m->mem, .cap = m->cap,
				.acct = m->acct };
	if (m->hlen)
		memcpy(o->head, m->head, m->hlen);
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

void nbds_send_copy(struct nbds_conn *c, const void *p, size_t len)
{
	void *m = malloc(len);
	pthread_mutex_lock(&c->lock);
	if (m) {
		memcpy(m, p, len);
		nbds_queue(c, &(struct nbds_msg){ .p = m, .len = len, .mem = m });
	} else {
		c->broken = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Ask the event thread to look at c again (from a completion, under c->lock). */
void nbds_kick(struct nbds_conn *c)
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

/* Event thread: close the socket, give back what waits to be sent; requests
 * in flight finish and drop their replies. */
void nbds_close(struct nbds_conn *c)
{
	struct nbd_server *s = c->s;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	pthread_mutex_lock(&c->lock);
	c->dead = 1;
	while (c->out_head) {
		struct nbds_out *o = c->out_head;
		c->out_head = o->next;
		out_free(c, o);
	}
	c->out_tail = NULL;
	close(c->fd);
	c->fd = -1;
	if (c->job) {
		nbds_release(c, c->job->acct);
		c->inflight--;
	}
	pthread_mutex_unlock(&c->lock);
	if (c->job) {
		bufpool_put(c->job->buf, c->job->cap);
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
void nbds_end(struct nbds_conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->ending = 1;
	pthread_mutex_unlock(&c->lock);
}

/* The end of the event thread's turn: the batched replies go out, one
 * sendmsg per connection; a connection whose socket did not take them all,
 * or that now has to end or be throttled, is looked at again (look: the reading side's update, passed down). */
void nbds_batch_flush(void (*look)(struct nbds_conn *c))
{
	while (tl_batch) {
		struct nbds_conn *c = tl_batch;
		tl_batch = c->batch_next;
		pthread_mutex_lock(&c->lock);
		c->batched = 0;
		if (!c->dead && nbds_flush_out(c))
			c->broken = 1;
		int again = !c->dead && (c->out_head || c->broken || c->throttled || c->ending || (c->events & EPOLLOUT));
		pthread_mutex_unlock(&c->lock);
		if (again)
			look(c);
		nbds_conn_unref(c);
	}
}

void nbds_bury(struct nbd_server *s)
{
	while (s->closed) {
		struct nbds_conn *c = s->closed;
		s->closed = c->next;
		nbds_conn_unref(c);
	}
}
