/* fuse_uring: FUSE over io_uring beside libfuse 3.14 (see fuse_uring.h).
 *
 * The protocol, as the kernel (6.14+, Documentation/filesystems/fuse-io-uring.rst)
 * runs it and as seen working here:
 *   1. INIT: the kernel offers FUSE_OVER_IO_URING in init_in.flags2 when the
 *      fuse module's enable_uring is Y; the server sets it in its reply
 *      (with FUSE_INIT_EXT). libfuse builds that reply: our writev hook adds
 *      the bit.
 *   2. Once the reply is written (REGISTER before it answers -EAGAIN), one
 *      thread per possible CPU (FU_THREADS_PER_QUEUE), with its own
 *      IORING_SETUP_SQE128 ring, registers its share of FU_DEPTH entries
 *      on queue qid = that CPU: an
 *      IORING_OP_URING_CMD on /dev/fuse, cmd_op REGISTER, addr = iovec[2]
 *      (the 288-byte header, a payload buffer of max_write). The kernel
 *      serves through the ring only when every queue holds an entry; a
 *      request goes to the queue of the CPU that issued it.
 *   3. A request arrives as the completion of an entry's command: its
 *      fuse_in_header in header.in_out, the opcode's own header in op_in, the
 *      rest (a write's data, a LOOKUP's name) in the payload. We lay them
 *      out as /dev/fuse would and hand them to libfuse's dispatcher.
 *   4. The reply (libfuse's writev, from any thread) goes into the same
 *      buffers: fuse_out_header in in_out, every out argument in the payload,
 *      ring_ent_in_out.payload_sz = the payload bytes; the entry's thread
 *      then submits COMMIT_AND_FETCH naming commit_id (the unique), which
 *      also waits for the entry's next request.
 * Forgets, interrupts and whatever comes before the ring is ready still
 * arrive on /dev/fuse, served by libfuse's own loop.
 *
 * Threads: a queue's ring belongs to its thread (SINGLE_ISSUER); replies
 * from other threads go on the queue's list and, when the thread said it
 * sleeps, wake it (util/ring_wake.h, as member_file.c's ring threads).
 * An emulated volume's clock (model/emul.h) lives on one queue thread's ring
 * (a read of the emulator's timerfd kept outstanding there): its releases
 * reply on that thread and commit on its ring, which moves their entries
 * there (the kernel posts a command's next request to the ring it was issued
 * on). So the entries of an emulated volume gather on the clock's thread,
 * and no release wakes another thread.
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/front/fuse_uring.h"
#include "fsvol/front/fuse_uring_abi.h"
#include "fsvol/members/member.h"
#include "fsvol/model/emul.h"
#include "fsvol/util/log.h"
#include "fsvol/util/ring_wake.h"
#include "fsvol/util/uring_loop.h"

/* Entries per queue: an entry holds its request until the reply, so this
 * bounds the requests in flight from one CPU (as many as an application's
 * async direct I/O keeps: 1024, tests/integration/20-inflight.sh). Their
 * payloads are mapped, not touched: a mount's memory grows with the largest
 * requests it has served at once. */
#define FU_DEPTH 1024u
#define FU_PAYLOAD (1u << 20)     /* >= max_write and max_pages x 4K (fuse_front: 1 MiB) */
#define FU_STAGE 4096u            /* header and staging area before each payload */
#define FU_MAX_QUEUES 256u
/* Ring threads per queue (on a machine of at most FU_SMALL CPUs; larger ones
 * have a queue thread on every CPU already). A request goes to the queue of
 * the CPU that issued it, so one application thread fills one queue; more
 * threads serve it from other CPUs too (the entries shared). Measured on 2
 * vCPUs, 7 alternated pairs, one thread against two: tmpfs 96k vs 69k IOPS,
 * a device-backed volume 63k vs 61k; so one. */
#define FU_THREADS_PER_QUEUE 1u
#define FU_SMALL 4u
#define FU_HASH 1024u
#define FU_WAKE_TAG uring_tag(NULL, URING_WAKE)
#define FU_CLOCK_TAG uring_tag(NULL, URING_TIMER)  /* the model's timerfd read */
#define FU_CLOCK_EVERY 16u  /* requests between the clock's rounds within a batch */

struct fu_queue;

struct fu_ent {
	struct fu_queue *q;              /* the thread whose ring holds its command now */
	struct fu_queue *home;           /* the thread that registered it: its kernel queue (qid) */
	struct fu_uring_req_header *hdr; /* at the start of the entry's mapping */
	uint8_t *payload;                /* FU_STAGE bytes further */
	struct iovec iov[2];
	uint64_t unique;                 /* the request it holds */
	struct fu_ent *hnext;            /* in the unique -> entry table */
	struct fu_ent *cnext;            /* on the queue's commit list */
};

struct fu_queue {
	_Alignas(64) _Atomic(struct fu_ent *) commits; /* replies ready, pushed by any thread */
	struct ring_wake wake;
	unsigned qid, cpu, depth; /* the kernel's queue it serves, where it runs, its entries */
	struct io_uring ring;
	pthread_t tid;
	int started, ring_ok;
	struct emul *emul;        /* the model whose clock this thread keeps */
	_Atomic uint64_t served;  /* requests dispatched on this thread (MNT/status) */
	uint64_t tick;            /* its timerfd read's buffer */
	unsigned rounds;          /* requests since the last wait (FU_CLOCK_EVERY) */
	struct fu_ent ents[FU_DEPTH];
};

enum { FU_IDLE, FU_WAITING_INIT, FU_STARTED, FU_READY, FU_REFUSED, FU_OFF };

static struct {
	struct fuse_session *se;
	int want, fd, quiet;
	_Atomic uint64_t init_unique;
	atomic_int offered, state;
	char why[200];
	pthread_mutex_t why_lock;
	unsigned nq, nt;            /* the kernel's queues (possible CPUs); ring threads */
	struct fu_queue *q;
	atomic_uint registered;     /* queues whose entries the kernel took */
	atomic_uint settled;        /* queues that registered or failed */
	pthread_mutex_t settle_lock;
	pthread_cond_t settle_cond;
	atomic_int closing;         /* the session ended: requests are no longer dispatched */
	atomic_int dispatching;     /* ring threads inside a dispatch */
	atomic_int stopping;
	pthread_mutex_t hlock;
	struct fu_ent *hash[FU_HASH];
	struct emul *(*emul_of)(void *arg); /* the volume's emulator (fu_model_clock) */
	void *emul_arg;
	_Atomic(struct fu_queue *) clock_q;   /* the queue keeping the model's clock */
	_Atomic(struct emul *) clock_refused; /* an emulator that cannot be driven (virtual) */
} fu = { .why_lock = PTHREAD_MUTEX_INITIALIZER, .hlock = PTHREAD_MUTEX_INITIALIZER,
	  .settle_lock = PTHREAD_MUTEX_INITIALIZER, .settle_cond = PTHREAD_COND_INITIALIZER };

static __thread struct fu_queue *tl_queue; /* set on a queue's own thread */
static __thread struct fu_ent *tl_dispatching; /* the entry whose request is being dispatched */
static __thread int tl_releasing; /* in the model's round, on the clock's thread */

void *fu_request_buffer(size_t len)
{
	return tl_dispatching && len <= FU_PAYLOAD ? tl_dispatching->payload : NULL;
}

int fu_on_ring_thread(void)
{
	return tl_queue != NULL;
}

int fu_transport_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return FU_TRANSPORT_AUTO;
	if (!strcmp(s, "dev"))
		return FU_TRANSPORT_DEV;
	if (!strcmp(s, "uring"))
		return FU_TRANSPORT_URING;
	return -1;
}

const char *fu_transport_name(int t)
{
	return t == FU_TRANSPORT_DEV ? "dev" : t == FU_TRANSPORT_URING ? "uring" : "auto";
}

static void fu_set_why(int state, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fu_set_why(int state, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&fu.why_lock);
	va_start(ap, fmt);
	vsnprintf(fu.why, sizeof(fu.why), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&fu.why_lock);
	atomic_store(&fu.state, state);
}

void fu_describe(char *buf, size_t len)
{
	int st = atomic_load(&fu.state);
	pthread_mutex_lock(&fu.why_lock);
	if (st == FU_READY)
		snprintf(buf, len, "uring (%u queues x %u entries)", fu.nq, FU_DEPTH);
	else if (st == FU_STARTED || st == FU_WAITING_INIT)
		snprintf(buf, len, "dev (the ring is being registered)");
	else if (fu.why[0])
		snprintf(buf, len, "dev (%s)", fu.why);
	else
		snprintf(buf, len, "dev");
	pthread_mutex_unlock(&fu.why_lock);
}

void fu_describe_threads(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	if (atomic_load(&fu.state) != FU_READY)
		return;
	for (unsigned i = 0; i < fu.nt && n < len; i++) {
		/* named as the threads are (fsvol-fuse-q0, fsvol-fuse-q0.1) */
		struct fu_queue *q = &fu.q[i];
		unsigned long long c = atomic_load_explicit(&q->served, memory_order_relaxed);
		int w = q->cpu == q->qid ? snprintf(buf + n, len - n, "%sq%u %llu", i ? ", " : "", q->qid, c)
					 : snprintf(buf + n, len - n, "%sq%u.%u %llu", i ? ", " : "", q->qid, q->cpu, c);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* ---- unique -> entry, for replies ---- */

static void fu_hash_put(struct fu_ent *e)
{
	unsigned h = (unsigned)(e->unique % FU_HASH);
	pthread_mutex_lock(&fu.hlock);
	e->hnext = fu.hash[h];
	fu.hash[h] = e;
	pthread_mutex_unlock(&fu.hlock);
}

static struct fu_ent *fu_hash_take(uint64_t unique)
{
	unsigned h = (unsigned)(unique % FU_HASH);
	struct fu_ent *e = NULL;
	pthread_mutex_lock(&fu.hlock);
	for (struct fu_ent **p = &fu.hash[h]; *p; p = &(*p)->hnext)
		if ((*p)->unique == unique) {
			e = *p;
			*p = e->hnext;
			break;
		}
	pthread_mutex_unlock(&fu.hlock);
	return e;
}

/* ---- the ring threads ---- */

static struct io_uring_sqe *fu_sqe(struct fu_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	if (!sqe) {
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	return sqe;
}

static void fu_prep_cmd(struct fu_queue *q, struct fu_ent *e, unsigned op)
{
	struct io_uring_sqe *sqe = fu_sqe(q);
	if (!sqe)
		return; /* cannot happen: the ring holds every entry twice */
	memset(sqe, 0, 2 * sizeof(*sqe)); /* an SQE128 slot */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fu.fd;
	sqe->cmd_op = op;
	sqe->addr = (uintptr_t)e->iov;
	sqe->len = 2;
	struct fu_uring_cmd_req *c = (struct fu_uring_cmd_req *)sqe->cmd;
	c->qid = (uint16_t)e->home->qid;
	c->commit_id = op == FU_IO_URING_CMD_COMMIT_AND_FETCH ? e->unique : 0;
	io_uring_sqe_set_data(sqe, e);
}

/* e's reply is in its buffers: its ring's thread commits it. The clock's
 * thread commits the releases it makes on its own ring instead of waking
 * the entry's: the entry then lives on that ring (the kernel posts a
 * command's next request where the command was issued), so an emulated
 * volume's entries gather on the clock's thread and no release wakes
 * another. An entry away from home answered there otherwise (the model
 * set to none at run time) goes home, so a volume without a model is
 * served by every queue's thread again. */
static void fu_push_commit(struct fu_ent *e)
{
	if (tl_releasing)
		e->q = tl_queue;
	else if (tl_queue == e->q && e->q != e->home)
		e->q = e->home;
	struct fu_queue *q = e->q;
	struct fu_ent *head = atomic_load_explicit(&q->commits, memory_order_relaxed);
	do
		e->cnext = head;
	while (!atomic_compare_exchange_weak_explicit(&q->commits, &head, e, memory_order_seq_cst,
						      memory_order_relaxed));
	if (tl_queue != q)
		ring_wake_kick(&q->wake);
}

static void fu_take_commits(struct fu_queue *q)
{
	struct fu_ent *e = atomic_exchange_explicit(&q->commits, NULL, memory_order_acquire);
	for (; e; e = e->cnext)
		fu_prep_cmd(q, e, FU_IO_URING_CMD_COMMIT_AND_FETCH);
}

/* ---- the model's clock ---- */

void fu_model_clock(struct emul *(*emul_of)(void *arg), void *arg)
{
	fu.emul_arg = arg;
	fu.emul_of = emul_of;
}

static void fu_clock_read(struct fu_queue *q)
{
	struct io_uring_sqe *sqe = fu_sqe(q);
	if (!sqe)
		return; /* cannot happen: the ring holds every entry twice */
	io_uring_prep_read(sqe, emul_drive_fd(q->emul), &q->tick, sizeof(q->tick), 0);
	io_uring_sqe_set_data(sqe, FU_CLOCK_TAG);
}

static void fu_clock_who(char *who, size_t len, struct fu_queue *q)
{
	char name[16];
	if (pthread_getname_np(pthread_self(), name, sizeof(name)))
		snprintf(name, sizeof(name), "queue %u", q->qid);
	snprintf(who, len, "%s (its FUSE queue's ring)", name);
}

/* While the ring serves, the first queue thread that finds a live emulator
 * nobody drives takes its clock (a model set at run time too). */
static void fu_clock_take(struct fu_queue *q)
{
	if (atomic_load_explicit(&fu.clock_q, memory_order_relaxed) || !fu.emul_of ||
	    atomic_load_explicit(&fu.state, memory_order_relaxed) != FU_READY)
		return;
	struct emul *e = fu.emul_of(fu.emul_arg);
	struct fu_queue *none = NULL;
	if (!e || e == atomic_load(&fu.clock_refused) || !atomic_compare_exchange_strong(&fu.clock_q, &none, q))
		return;
	char who[64];
	fu_clock_who(who, sizeof(who), q);
	int r = emul_drive_begin(e, who);
	if (r) {
		if (r != -EINVAL) /* virtual time keeps no real clock: nothing to say */
			fsvol_log(LOG_WARNING, "FUSE over io_uring: queue %u cannot keep the model's clock: %s; "
				  "its own thread keeps it", q->qid, strerror(-r));
		atomic_store(&fu.clock_refused, e);
		atomic_store(&fu.clock_q, NULL);
		return;
	}
	q->emul = e;
	fu_clock_read(q);
}

/* The model's round: its releases reply here, and commit on this ring. */
static void fu_clock_round(struct fu_queue *q)
{
	tl_releasing = 1;
	emul_drive_round(q->emul);
	tl_releasing = 0;
}

/* The thread stops (or its timer read failed): the emulator's thread takes
 * the clock back; a read still outstanding goes with the ring. */
static void fu_clock_give_back(struct fu_queue *q)
{
	if (!q->emul)
		return;
	emul_drive_end(q->emul);
	q->emul = NULL;
}

/* A request arrived in e: lay it out as /dev/fuse delivers it (in header,
 * the opcode's header, the payload, contiguous) and dispatch it. */
static void fu_request(struct fu_ent *e)
{
	struct fu_in_header h;
	memcpy(&h, e->hdr->in_out, sizeof(h));
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	if (h.len < sizeof(h) + psz || h.len - sizeof(h) - psz > FU_URING_OP_IN_OUT_SZ || psz > FU_PAYLOAD) {
		/* not what the protocol promises: answer EIO rather than guess */
		struct fu_out_header o = { .len = sizeof(o), .error = -EIO, .unique = h.unique };
		memcpy(e->hdr->in_out, &o, sizeof(o));
		e->hdr->ring_ent_in_out.payload_sz = 0;
		e->unique = h.unique;
		fu_push_commit(e);
		return;
	}
	size_t oplen = h.len - sizeof(h) - psz;
	uint8_t *start = e->payload - sizeof(h) - oplen;
	memcpy(start, &h, sizeof(h));
	memcpy(start + sizeof(h), e->hdr->op_in, oplen);
	e->unique = h.unique;
	/* the session has ended (fu_quiesce): leave the request unanswered, as
	 * the stopped /dev/fuse loop leaves its own; the kernel fails it with
	 * ENOTCONN when the device closes */
	atomic_fetch_add_explicit(&fu.dispatching, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&fu.closing, memory_order_seq_cst)) {
		atomic_fetch_sub_explicit(&fu.dispatching, 1, memory_order_release);
		return;
	}
	fu_hash_put(e);
	atomic_store_explicit(&tl_queue->served, atomic_load_explicit(&tl_queue->served, memory_order_relaxed) + 1,
			      memory_order_relaxed); /* its own counter: no locked add */
	struct fuse_buf fb = { .size = h.len, .mem = start };
	tl_dispatching = e;
	fuse_session_process_buf(fu.se, &fb);
	tl_dispatching = NULL;
	atomic_fetch_sub_explicit(&fu.dispatching, 1, memory_order_release);
}

/* This queue's registration is known (ok or not): fu_start waits for all. */
static void fu_settle(int ok)
{
	pthread_mutex_lock(&fu.settle_lock);
	/* every queue holds entries: the kernel serves through the ring from now */
	if (ok && atomic_fetch_add(&fu.registered, 1) + 1 == fu.nt) {
		int was = FU_STARTED;
		if (atomic_compare_exchange_strong(&fu.state, &was, FU_READY) && !fu.quiet)
			fsvol_log(LOG_INFO, "FUSE transport: io_uring, %u queues x %u entries, %u threads", fu.nq, FU_DEPTH,
				  fu.nt);
	}
	atomic_fetch_add(&fu.settled, 1);
	pthread_cond_broadcast(&fu.settle_cond);
	pthread_mutex_unlock(&fu.settle_lock);
}

/* A completion for entry e failed with res. */
static void fu_ent_failed(struct fu_queue *q, struct fu_ent *e, int res)
{
	if (res == -ENOTCONN || res == -ECANCELED || res == -ENODEV || res == -ECONNABORTED)
		return; /* the mount went away */
	if (atomic_load(&fu.state) == FU_READY)
		fsvol_log(LOG_ERR, "FUSE over io_uring: queue %u: entry %u: %s (unique %llu)", e->home->qid,
			  (unsigned)(e - e->home->ents), strerror(-res), (unsigned long long)e->unique);
	if (atomic_load(&fu.state) != FU_READY && atomic_load(&fu.state) != FU_REFUSED) {
		fu_set_why(FU_REFUSED, "the kernel refused the ring: %s", strerror(-res));
		fsvol_log(LOG_WARNING, "FUSE over io_uring: the kernel refused queue %u: %s; "
			  "serving through /dev/fuse", q->qid, strerror(-res));
	}
}

static int fu_ring_init(struct fu_queue *q)
{
	return uring_loop_init(&q->ring, 2 * FU_DEPTH + 8, 0, IORING_SETUP_SQE128);
}

/* ---- the loop's completions, by kind (util/uring_loop.h) ---- */

static void fu_cqe_wake(void *ctx, void *ptr, int res)
{
	struct fu_queue *q = ctx;
	(void)ptr, (void)res;
	if (!atomic_load(&fu.stopping))
		ring_wake_arm(&q->wake, &q->ring);
}

static void fu_cqe_clock(void *ctx, void *ptr, int res)
{
	struct fu_queue *q = ctx;
	(void)ptr;
	if (!q->emul)
		return;
	if (res < 0 && res != -EINTR && res != -EAGAIN) {
		fsvol_log(LOG_ERR, "FUSE over io_uring: queue %u: the model's timer: %s; its own thread keeps it",
			  q->qid, strerror(-res));
		fu_clock_give_back(q);
		return;
	}
	if (res >= 0)
		emul_drive_fired(q->emul);
	fu_clock_read(q);
}

/* An entry's command completed: a request arrived in it (or it failed). */
static void fu_cqe_ent(void *ctx, void *ptr, int res)
{
	struct fu_queue *q = ctx;
	struct fu_ent *e = ptr;
	if (res < 0) {
		fu_ent_failed(q, e, res);
		return;
	}
	fu_request(e);
	/* the clock's thread serves every request of an emulated volume:
	 * releases fall due within a long batch too */
	if (q->emul && !(++q->rounds % FU_CLOCK_EVERY)) {
		fu_clock_round(q);
		fu_take_commits(q);
	}
	/* the member I/O it started goes out now, not after the whole batch:
	 * on a disk each request's wait starts sooner (replies still go out
	 * together, at the top of the loop) */
	if (io_uring_sq_ready(&q->ring))
		io_uring_submit(&q->ring);
}

static uring_cqe_fn *const fu_handlers[URING_KINDS] = {
	[URING_OWN] = fu_cqe_ent,
	[URING_LENT] = member_file_complete, /* a file member's I/O (member_file_lend_ring) */
	[URING_WAKE] = fu_cqe_wake,
	[URING_TIMER] = fu_cqe_clock,
};

static void *fu_queue_main(void *arg)
{
	struct fu_queue *q = arg;
	char name[16];
	if (q->cpu == q->qid)
		snprintf(name, sizeof(name), "fsvol-fuse-q%u", q->qid);
	else
		snprintf(name, sizeof(name), "fsvol-fuse-q%u.%u", q->qid, q->cpu);
	pthread_setname_np(pthread_self(), name);
	tl_queue = q;
	/* a request goes to the queue of the CPU it was issued on: serve it there */
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(q->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* an offline CPU: stay unpinned */
	int r = fu_ring_init(q);
	if (r < 0) {
		fu_set_why(FU_REFUSED, "io_uring setup with SQE128: %s", strerror(-r));
		fsvol_log(LOG_WARNING, "FUSE over io_uring: queue %u: io_uring setup: %s; serving through /dev/fuse",
			  q->qid, strerror(-r));
		fu_settle(0);
		return NULL;
	}
	q->ring_ok = 1;
	/* file members' I/O from this thread goes on this ring: no hand-off */
	member_file_lend_ring(&q->ring);
	for (unsigned i = 0; i < q->depth; i++)
		fu_prep_cmd(q, &q->ents[i], FU_IO_URING_CMD_REGISTER);
	ring_wake_arm(&q->wake, &q->ring);
	/* A REGISTER the kernel takes stays pending (its completion is the first
	 * request); a refused one completes at once, within the submit. */
	r = io_uring_submit(&q->ring);
	int refused = r < 0 ? r : 0;
	struct io_uring_cqe *cqe;
	unsigned head;
	io_uring_for_each_cqe(&q->ring, head, cqe) /* looked at only: the loop below reaps them */
		if (cqe->res < 0 && io_uring_cqe_get_data(cqe) != FU_WAKE_TAG && !refused)
			refused = cqe->res;
	if (refused)
		fu_ent_failed(q, q->ents, refused);
	fu_settle(!refused);
	/* Runs until fu_stop, even once every entry is gone (the mount ended):
	 * file members' I/O lent to this ring completes here. */
	while (!atomic_load(&fu.stopping)) {
		if (!q->emul)
			fu_clock_take(q);
		/* the model's round: its releases join the commits */
		if (q->emul)
			fu_clock_round(q);
		fu_take_commits(q);
		/* say we sleep, then look again: a reply pushed after this either
		 * is seen here or wakes us; sleep only when there was none (nor a
		 * request for the model) */
		ring_wake_sleepy(&q->wake);
		int busy = atomic_load_explicit(&q->commits, memory_order_seq_cst) != NULL;
		if (q->emul && !busy && !emul_drive_sleepy(q->emul))
			busy = 1;
		r = ring_wake_wait(&q->wake, &q->ring, busy);
		if (q->emul)
			emul_drive_woke(q->emul);
		if (uring_loop_fatal(r)) {
			fu_set_why(FU_REFUSED, "io_uring_enter: %s", strerror(-r));
			fsvol_log(LOG_ERR, "FUSE over io_uring: queue %u: %s", q->qid, strerror(-r));
			break;
		}
		q->rounds = 0;
		uring_loop_reap(&q->ring, fu_handlers, q);
	}
	fu_clock_give_back(q);
	return NULL;
}

static int fu_queue_alloc(struct fu_queue *q, unsigned qid, unsigned cpu, unsigned depth)
{
	q->qid = qid;
	q->cpu = cpu;
	q->depth = depth;
	atomic_init(&q->commits, NULL);
	int r = ring_wake_init(&q->wake, FU_WAKE_TAG);
	if (r)
		return r;
	for (unsigned i = 0; i < q->depth; i++) {
		struct fu_ent *e = &q->ents[i];
		/* mapped, not touched: the kernel faults in what requests use */
		void *m = mmap(NULL, FU_STAGE + FU_PAYLOAD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (m == MAP_FAILED)
			return -ENOMEM;
		e->q = e->home = q;
		e->hdr = m;
		e->payload = (uint8_t *)m + FU_STAGE;
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, FU_PAYLOAD };
	}
	return 0;
}

static void fu_queue_free(struct fu_queue *q)
{
	for (unsigned i = 0; i < q->depth; i++)
		if (q->ents[i].hdr)
			munmap(q->ents[i].hdr, FU_STAGE + FU_PAYLOAD);
	if (q->wake.efd > 0)
		ring_wake_close(&q->wake);
}

/* Possible CPUs: the kernel makes one queue for each, and serves through the
 * ring only once every one holds an entry. */
static unsigned fu_possible_cpus(void)
{
	char buf[128];
	unsigned n = 0;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k > 0) {
			buf[k] = 0;
			/* "0-3" or "0,2-5": the highest number + 1 */
			for (char *p = buf; *p;) {
				char *end;
				if (*p < '0' || *p > '9') { /* '-' and ',' separate numbers here */
					p++;
					continue;
				}
				unsigned long v = strtoul(p, &end, 10);
				if (v + 1 > n)
					n = (unsigned)v + 1;
				p = end;
			}
		}
	}
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		n = c > 0 ? (unsigned)c : 1;
	}
	return n > FU_MAX_QUEUES ? FU_MAX_QUEUES : n;
}

/* INIT is answered: register the ring. */
static void fu_start(void)
{
	unsigned n = fu_possible_cpus();
	unsigned tpq = n > FU_SMALL ? 1 : n < FU_THREADS_PER_QUEUE ? n : FU_THREADS_PER_QUEUE;
	unsigned nt = n * tpq;
	struct fu_queue *q = aligned_alloc(64, ((nt * sizeof(*q)) + 63) & ~(size_t)63);
	if (!q) {
		fu_set_why(FU_REFUSED, "out of memory for the ring");
		return;
	}
	memset(q, 0, nt * sizeof(*q));
	/* thread i serves queue i mod n from CPU (queue + i div n) mod n: the
	 * queue's own CPU first, then its neighbours */
	for (unsigned i = 0; i < nt; i++)
		if (fu_queue_alloc(&q[i], i % n, (i % n + i / n) % n, FU_DEPTH / tpq)) {
			for (unsigned k = 0; k <= i; k++)
				fu_queue_free(&q[k]);
			free(q);
			fu_set_why(FU_REFUSED, "out of memory for %u ring entries", n * FU_DEPTH);
			fsvol_log(LOG_WARNING, "FUSE over io_uring: %s; serving through /dev/fuse", fu.why);
			return;
		}
	fu.q = q;
	fu.nq = n;
	fu.nt = nt;
	atomic_store(&fu.state, FU_STARTED);
	unsigned want = 0;
	for (unsigned i = 0; i < nt; i++)
		if ((q[i].started = pthread_create(&q[i].tid, NULL, fu_queue_main, &q[i]) == 0))
			want++;
	if (want < nt) {
		fu_set_why(FU_REFUSED, "cannot start the ring threads");
		fsvol_log(LOG_WARNING, "FUSE over io_uring: %s; serving through /dev/fuse", fu.why);
	}
	/* Wait (briefly) until every queue has registered or failed, so the
	 * transport told right after the mount is the one that serves. Requests
	 * meanwhile go through /dev/fuse, served by the other workers. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&fu.settle_lock);
	while (atomic_load(&fu.settled) < want)
		if (pthread_cond_timedwait(&fu.settle_cond, &fu.settle_lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&fu.settle_lock);
}

/* ---- libfuse's device I/O ---- */

static ssize_t fu_dev_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	ssize_t n = read(fd, buf, len);
	if (n >= (ssize_t)(sizeof(struct fu_in_header) + sizeof(struct fu_init_in))) {
		const struct fu_in_header *h = buf;
		if (h->opcode == FU_FUSE_INIT) {
			struct fu_init_in in;
			memcpy(&in, (const uint8_t *)buf + sizeof(*h), sizeof(in));
			atomic_store(&fu.offered, (in.flags & FU_FUSE_INIT_EXT) && (in.flags2 & FU_FUSE_OVER_IO_URING_FLAGS2));
			atomic_store(&fu.init_unique, h->unique);
		}
	}
	return n;
}

/* A reply for a ring entry: into its buffers, then the entry's thread commits. */
static ssize_t fu_reply(struct fu_ent *e, const struct iovec *iov, int count)
{
	size_t total = 0, off = 0;
	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	struct fu_out_header o;
	memcpy(&o, iov[0].iov_base, sizeof(o));
	for (int i = 1; i < count; i++) {
		size_t n = iov[i].iov_len;
		if (off + n > FU_PAYLOAD) { /* cannot happen below max_write; never overrun */
			o.error = -EIO;
			off = 0;
			break;
		}
		if (iov[i].iov_base != e->payload + off) /* a read made in place (fu_request_buffer) */
			memcpy(e->payload + off, iov[i].iov_base, n);
		off += n;
	}
	o.len = (uint32_t)(sizeof(o) + off);
	memcpy(e->hdr->in_out, &o, sizeof(o));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)off;
	fu_push_commit(e);
	return (ssize_t)total;
}

static ssize_t fu_dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	struct fu_out_header *oh = iov[0].iov_base;
	if (oh->unique && fu.q) {
		struct fu_ent *e = fu_hash_take(oh->unique);
		if (e)
			return fu_reply(e, iov, count);
	}
	int init = oh->unique && oh->unique == atomic_load(&fu.init_unique) && atomic_load(&fu.state) == FU_WAITING_INIT;
	int ring = init && atomic_load(&fu.offered) && !oh->error && count >= 2 &&
		   iov[1].iov_len >= sizeof(struct fu_init_out);
	if (ring) {
		struct fu_init_out *o = iov[1].iov_base;
		o->flags |= FU_FUSE_INIT_EXT;
		o->flags2 |= FU_FUSE_OVER_IO_URING_FLAGS2;
	}
	ssize_t n = writev(fd, iov, count);
	if (init) {
		if (ring && n >= 0) {
			fu_start();
		} else {
			char p = 'N';
			int pf = open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);
			if (pf >= 0) {
				if (read(pf, &p, 1) != 1)
					p = '?';
				close(pf);
			}
			fu_set_why(FU_OFF, "the kernel does not offer FUSE over io_uring%s",
				   pf < 0 ? ": no enable_uring parameter (it needs Linux 6.14+ with CONFIG_FUSE_IO_URING)"
				   : p != 'Y' ? ": /sys/module/fuse/parameters/enable_uring is N" : "");
			if (fu.want == FU_TRANSPORT_URING || !fu.quiet)
				fsvol_log(fu.want == FU_TRANSPORT_URING ? LOG_WARNING : LOG_INFO,
					  "FUSE transport: /dev/fuse: %s", fu.why);
		}
	}
	return n;
}

int fu_attach(struct fuse_session *se, int want, int quiet, char *err, size_t errlen)
{
	fu.want = want;
	fu.quiet = quiet;
	if (want == FU_TRANSPORT_DEV) {
		fu_set_why(FU_OFF, "--fuse-transport dev");
		return 0;
	}
	static const struct fuse_custom_io io = { .read = fu_dev_read, .writev = fu_dev_writev };
	fu.se = se;
	fu.fd = fuse_session_fd(se);
	atomic_store(&fu.state, FU_WAITING_INIT);
	if (fuse_session_custom_io(se, &io, fu.fd)) {
		snprintf(err, errlen, "cannot hook the FUSE device I/O for io_uring");
		fu_set_why(FU_OFF, "%s", err);
		return -EIO;
	}
	return 0;
}

void fu_quiesce(void)
{
	atomic_store_explicit(&fu.closing, 1, memory_order_seq_cst);
	/* a thread that saw closing unset finishes handing its request over */
	while (atomic_load_explicit(&fu.dispatching, memory_order_seq_cst))
		sched_yield();
}

void fu_stop(void)
{
	if (!fu.q)
		return;
	atomic_store(&fu.stopping, 1);
	for (unsigned i = 0; i < fu.nt; i++)
		if (fu.q[i].started)
			ring_wake_force(&fu.q[i].wake);
	for (unsigned i = 0; i < fu.nt; i++)
		if (fu.q[i].started) {
			pthread_join(fu.q[i].tid, NULL);
			if (fu.q[i].ring_ok)
				io_uring_queue_exit(&fu.q[i].ring);
		}
	/* a thread that failed its setup left no ring to exit */
	for (unsigned i = 0; i < fu.nt; i++)
		fu_queue_free(&fu.q[i]);
	free(fu.q);
	fu.q = NULL;
}
