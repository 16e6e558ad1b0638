/* nbd_cmd: the commands (READ WRITE FLUSH TRIM WRITE_ZEROES DISC, simple
 * replies). The event thread decodes and checks a request, then hands the
 * whole request to engine_submit and goes back to reading: no thread waits
 * on the volume. The completion, on whichever thread finished the request
 * (often a member's ring thread), builds the reply and queues it (nbd_conn.c);
 * replies go out in the order requests complete (a simple reply carries the
 * client's cookie). */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/core/bufpool.h"
#include "fsvol/core/engine.h"
#include "fsvol/front/nbd_int.h"

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

static void nbds_reply_hdr(unsigned char *b, int err, uint64_t cookie)
{
	uint32_t m = htobe32(NBD_SIMPLE_MAGIC), e = htobe32(nbds_errno(err));
	uint64_t ck = htobe64(cookie);
	memcpy(b, &m, 4);
	memcpy(b + 4, &e, 4);
	memcpy(b + 8, &ck, 8);
}

/* A reply without data, from the event thread (errors found at reading). */
static void nbds_reply_now(struct nbds_conn *c, int err, uint64_t cookie)
{
	unsigned char h[NBD_REPLY_SIZE];
	nbds_reply_hdr(h, err, cookie);
	pthread_mutex_lock(&c->lock);
	nbds_queue(c, &(struct nbds_msg){ .head = h, .hlen = sizeof(h) });
	pthread_mutex_unlock(&c->lock);
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

unsigned nbds_jobs(struct nbd_server *s)
{
	pthread_mutex_lock(&s->jlock);
	unsigned n = s->jobs;
	pthread_mutex_unlock(&s->jlock);
	return n;
}

/* The request's reply goes out (or is dropped on a dead connection), its
 * budgets are released: the last thing done with j, exactly once. */
static void nbds_finish(struct nbds_job *j, int r)
{
	struct nbds_conn *c = j->c;
	struct nbd_server *s = c->s;
	unsigned char h[NBD_REPLY_SIZE];
	nbds_reply_hdr(h, -r, j->cookie);
	pthread_mutex_lock(&c->lock);
	c->inflight--;
	if (j->type == CMD_READ && !r) {
		/* the data's buffer and budget go with the reply, given back once sent */
		nbds_queue(c, &(struct nbds_msg){ .head = h, .hlen = sizeof(h), .p = j->buf, .len = j->len,
						  .mem = j->buf, .cap = j->cap, .acct = j->acct });
		j->buf = NULL;
	} else {
		nbds_queue(c, &(struct nbds_msg){ .head = h, .hlen = sizeof(h) });
		nbds_release(c, j->acct);
	}
	/* the event thread looks again when there is output left, the budgets
	 * held the reading back, or the connection ends once this was answered */
	if (!c->dead && !c->batched && (c->out_head || c->broken || c->throttled || c->ending))
		nbds_kick(c);
	pthread_mutex_unlock(&c->lock);
	bufpool_put(j->buf, j->cap);
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

/* The data part of j is done (r: 0 or -errno): FUA's flush, then the reply. */
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
		r = engine_submit(s->v, ENGINE_READ, j->buf, j->off, j->len, nbds_io_done, j);
		break;
	case CMD_WRITE:
		r = engine_submit(s->v, ENGINE_WRITE, j->buf, j->off, j->len, nbds_io_done, j);
		break;
	case CMD_FLUSH:
		r = engine_submit(s->v, ENGINE_FLUSH, NULL, 0, 0, nbds_io_done, j);
		break;
	default: /* CMD_TRIM, CMD_WRITE_ZEROES */
		nbds_zero_start(j, nbds_data_done);
		return;
	}
	if (r) /* refused: done is not called */
		nbds_finish(j, r);
}

/* A request that passed its checks: counted against the budgets (a read's
 * or write's buffer by its capacity: what it really holds), then into the
 * engine, or first its payload for a write. 0, or -1 to end the connection. */
static int nbds_accept_request(struct nbds_conn *c, uint16_t type, uint16_t flags, uint64_t cookie, uint64_t off,
			       uint32_t len)
{
	struct nbd_server *s = c->s;
	struct nbds_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -1;
	*j = (struct nbds_job){ .c = c, .flags = flags, .type = type, .cookie = cookie, .off = off, .len = len };
	if (type == CMD_READ || type == CMD_WRITE) {
		if (!(j->buf = bufpool_get(len, &j->cap))) {
			free(j);
			return -1;
		}
		j->acct = j->cap;
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

int nbds_request(struct nbds_conn *c)
{
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
	int err = nbds_check(c->s, type, flags, off, len);
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
	return nbds_accept_request(c, type, flags, cookie, off, len);
}

void nbds_payload_done(struct nbds_conn *c)
{
	struct nbds_job *j = c->job;
	c->job = NULL;
	nbds_enter_transmission(c);
	nbds_start(c->s, j);
}

void nbds_discard_done(struct nbds_conn *c)
{
	uint64_t cookie;
	memcpy(&cookie, c->hdr + 8, 8);
	nbds_reply_now(c, c->err_after_discard, be64toh(cookie));
	nbds_enter_transmission(c);
}
