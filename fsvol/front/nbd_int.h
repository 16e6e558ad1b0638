/* nbd_int: the NBD server's insides, shared by its files (nbdkit's server is
 * split the same way):
 *
 *   nbd_listen.c     addresses and the listening socket
 *   nbd_handshake.c  the greeting, options, the export's properties
 *   nbd_conn.c       a connection's life and its out queue (replies, batching)
 *   nbd_input.c      reading a connection's bytes into its states, the budgets
 *   nbd_cmd.c        commands: checked, handed to the engine, answered
 *   nbd_zero.c       trim and write-zeroes, written as zeros in pieces
 *   nbd_server.c     the event loop, accepting, start and stop
 *
 * Threads and locks (nbd_server.c has the whole picture): the event thread
 * owns every socket's reading side and the connection list; a completion
 * answers from whichever thread finished the request. A connection's lock
 * covers its out queue, socket writes, dead, inflight, pending and a trim's
 * progress; the job lock the server's count of requests in the engine; the
 * kick lock the kick list. Never two at once, except a connection's lock then
 * the kick lock (nbds_kick). No engine call is made under a lock. Fsvol/front
 * only. */
#ifndef FSVOL_NBD_INT_H
#define FSVOL_NBD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>
#include <time.h>

#include "fsvol/core/volume.h"
#include "fsvol/front/nbd_proto.h"
#include "fsvol/front/nbd_server.h"

#define NBDS_MAX_BLOCK (32u << 20) /* largest request advertised (NBD's usual limit) */
#define NBDS_ZERO_BUF (1u << 20)   /* zeros and trims are written in pieces of this */
#define NBDS_ZERO_WINDOW 4u        /* pieces of one trim or zero in the engine at once */
#define NBDS_MAX_OPTION 65536u     /* an option longer than this ends the connection */
#define NBDS_DESCRIPTION "fsvol volume"
#define NBDS_SNDBUF (4 << 20)      /* socket send buffer asked for */
#define NBDS_INBUF 16384u          /* read-ahead per connection */

enum nbds_state { ST_FLAGS, ST_OPT_HDR, ST_OPT_DATA, ST_REQ_HDR, ST_REQ_DATA, ST_DISCARD };

/* What goes on the out queue: head (copied; at most NBD_OPT_REPLY_SIZE
 * bytes), then len bytes at p. mem is given back once sent (to bufpool when
 * cap, else free()), and acct bytes of the budgets released. */
struct nbds_msg {
	const void *head;
	size_t hlen;
	const void *p;
	size_t len;
	void *mem;
	size_t cap;
	size_t acct;
};

struct nbds_out {
	struct nbds_out *next;
	unsigned char head[NBD_OPT_REPLY_SIZE];
	size_t hoff, hlen;  /* head[hoff..hlen) still to send */
	const char *p;
	size_t len;
	void *mem;
	size_t cap;
	size_t acct;
};

struct nbds_job {
	struct nbds_conn *c;
	uint16_t flags, type;
	uint64_t cookie, off;
	uint32_t len;
	void *buf;        /* a write's payload or a read's data (bufpool's, cap bytes) */
	size_t cap;
	size_t acct;      /* bytes of the budgets it holds */
	/* a trim or zero, under c->lock: what is left, pieces in the engine */
	uint64_t zoff, zleft;
	unsigned zinflight;
	int zerr, zdriving, zagain;
	void (*zdone)(struct nbds_job *j, int r);
};

struct nbds_conn {
	struct nbd_server *s;
	int fd;
	atomic_int refs;
	struct nbds_conn *prev, *next; /* the event thread's list */
	/* reading side: the event thread only */
	enum nbds_state state;
	unsigned char hdr[NBD_REQ_SIZE];
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
};

/* nbd_handshake.c */
uint64_t nbds_size(const struct nbd_server *s);
void nbds_greet(struct nbds_conn *c);
/* The handshake's states (ST_FLAGS, ST_OPT_HDR, ST_OPT_DATA): c->need bytes
 * arrived. 0, or -1 to end the connection. */
int nbds_handshake_got(struct nbds_conn *c);
void nbds_enter_transmission(struct nbds_conn *c);

/* nbd_conn.c */
void nbds_conn_unref(struct nbds_conn *c);
void nbds_release(struct nbds_conn *c, size_t acct);
/* Queue m (sent at once if the socket takes it, or with the batch); under c->lock. */
void nbds_queue(struct nbds_conn *c, const struct nbds_msg *m);
/* Copy a small message to the out queue (takes c->lock). */
void nbds_send_copy(struct nbds_conn *c, const void *p, size_t len);
/* Send what the socket takes now, under c->lock. 0, or -errno. */
int nbds_flush_out(struct nbds_conn *c);
void nbds_kick(struct nbds_conn *c);
void nbds_close(struct nbds_conn *c);
void nbds_end(struct nbds_conn *c);
void nbds_batching(int on);
void nbds_batch_flush(void (*look)(struct nbds_conn *c));
void nbds_bury(struct nbd_server *s);

/* nbd_input.c */
void nbds_readable(struct nbds_conn *c);
void nbds_writable(struct nbds_conn *c);
void nbds_update(struct nbds_conn *c);
/* A connection on the accepted socket fd (taken over), greeted. 0, or -errno. */
int nbds_conn_new(struct nbd_server *s, int fd);

/* nbd_cmd.c */
unsigned nbds_jobs(struct nbd_server *s);
/* A request header is in c->hdr. 0, or -1 to end the connection. */
int nbds_request(struct nbds_conn *c);
/* A write's payload arrived: into the engine. */
void nbds_payload_done(struct nbds_conn *c);
/* A refused write's payload was skipped: its error goes out. */
void nbds_discard_done(struct nbds_conn *c);

/* nbd_zero.c: zeros written over j's range, then done(j, 0 or -errno) (the
 * command's completion, passed down: nbd_cmd.c calls this file, not back). */
void nbds_zero_start(struct nbds_job *j, void (*done)(struct nbds_job *j, int r));

#endif
