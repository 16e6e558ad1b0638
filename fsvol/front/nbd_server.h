/* nbd_server: fsvol's own NBD server (fixed newstyle, simple replies), run
 * inside the daemon by `fsvol serve` and `fsvol mount --nbd`.
 *
 * One thread whatever the number of clients: the event thread (epoll:
 * accepts, handshakes, reads requests and hands each to engine_submit,
 * writes replies that could not be sent at once). A request's completion
 * sends its reply from whichever thread finished it (a member's ring
 * thread, say); no thread waits on the volume. An idle connection costs a
 * socket and about 17 KiB (its read-ahead), no thread. */
#ifndef FSVOL_NBD_SERVER_H
#define FSVOL_NBD_SERVER_H

#include <stddef.h>

#include "fsvol/core/volume.h"

#define NBD_SERVER_INFLIGHT 4096u    /* requests in the engine at once, all connections together */
#define NBD_SERVER_MAX_CONNS 4096u   /* connections at once (fewer if the fd limit is lower) */
#define NBD_SERVER_CONN_INFLIGHT 64u /* requests read but not yet answered, per connection */
#define NBD_SERVER_CONN_BYTES (64u << 20)   /* their buffers' bytes (payloads, replies), per connection */
#define NBD_SERVER_TOTAL_BYTES (256u << 20) /* the same, all connections together ... */
#define NBD_SERVER_RESERVE_BYTES (32u << 20) /* ... and past it, a request each for connections with none */
#define NBD_SERVER_HANDSHAKE_S 30    /* a client must finish the handshake within this */
#define NBD_SERVER_STALL_S 30        /* replies unread for this long: the client is dropped */

struct nbd_server;

struct nbd_server_opts {
	const char *name; /* the export's name; NULL: "" listed, any name accepted */
	int readonly;
};

/* Check unix:PATH or [ADDR:]PORT. 0, or -EINVAL with a message naming it. */
int nbd_server_check_addr(const char *addr, char *err, size_t errlen);
/* Listen on addr before daemonising (a taken address is the user's error at
 * once). A socket file nobody listens on is replaced. The socket, or -errno
 * with a message. */
int nbd_server_listen(const char *addr, char *err, size_t errlen);
/* Serve v on the listening socket fd (taken over), from threads of the
 * server's own: call after daemonising. NULL with a message on failure. */
struct nbd_server *nbd_server_start(struct vol *v, int fd, const struct nbd_server_opts *o, char *err,
				    size_t errlen);
/* Stop: no new connections, every client is disconnected once the requests
 * it has in flight have finished; threads joined, the unix socket file
 * removed. NULL is a no-op. */
void nbd_server_stop(struct nbd_server *s);

#endif
