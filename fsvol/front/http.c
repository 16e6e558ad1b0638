/* http: the daemon's HTTP endpoint (libmicrohttpd, one thread of its own).
 *
 *   /             the live dashboard (fsvol/front/dashboard.html, built in)
 *   /metrics      Prometheus text (MNT/metrics)
 *   /stats.json   raw counters (MNT/stats.json, docs/stats.schema.json)
 *   /status.json  slots, states, sync and recovery progress
 *   /layout.json  geometry and the first rows of the layout grid
 *   /chunks.json  I/Os per member chunk row, from the trace (chunk_heat.h)
 *
 * Every answer is rendered by report_render into a buffer of its own, as
 * opening a file of the mount does: the server reads counter snapshots and
 * never takes a lock the I/O path holds, so it cannot stall the volume.
 *
 * Slow clients cannot lock the others out: one polling thread (epoll) serves
 * up to HTTP_MAX_CONNECTIONS at once, HTTP_MAX_PER_IP from one address; a
 * connection past either limit shuts the socket of the oldest one (of that
 * address, or of all: the one that waited longest for its request or since
 * its last answer), so a client holding connections open cannot keep a new
 * one out, from another address or from its own (on loopback every local
 * client is 127.0.0.1). A request must arrive whole within HTTP_DEADLINE_S
 * of the connection's start or of its previous answer (a byte now and then
 * renews only the idle timeout): the deadline thread shuts the socket of a
 * connection past it. libmicrohttpd's own limits sit above ours, so that it
 * accepts the connection that makes room.
 * The Host header must name this server (its address, localhost, this
 * machine's name): a page served from elsewhere that rebinds its own name to
 * this address (DNS rebinding) gets 421.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fsvol/front/chunk_heat.h"
#include "fsvol/front/http.h"
#include "fsvol/front/report.h"
#include "fsvol/util/log.h"

/* http_dashboard[]: dashboard.html as bytes, NUL-terminated (Makefile, xxd -i) */
#include "dashboard_html.h"

#define HTTP_MHD_ROOM 64u /* libmicrohttpd's limits are ours + this: it accepts, we make room */
#define HTTP_BACKLOG 128   /* connections the kernel queues before they are accepted */
#define HTTP_LOG_PER_S 10  /* libmicrohttpd's messages logged per second, at most */

/* A connection the deadline thread watches (from MHD's notify callbacks). */
struct http_conn {
	struct http_conn *prev, *next;
	int fd;
	time_t since;     /* start, or the last answer */
	int cut;          /* shut down already */
	int family;       /* the client's address */
	unsigned char addr[16];
};

struct http_server {
	struct MHD_Daemon *d;
	struct vol *v;
	struct sockaddr_storage bound; /* the listening address, for the Host check */
	int wildcard;                  /* bound to every address */
	char hostname[256];
	pthread_mutex_t lock;          /* conns, stop */
	pthread_cond_t cond;
	struct http_conn *conns;
	int stop;
	pthread_t deadline;
	int deadline_running;
	struct chunk_heat *heat; /* /chunks.json */
	pthread_mutex_t log_lock;
	time_t log_second;
	unsigned logged, suppressed;
};

static const struct http_route {
	const char *path;
	int kind; /* enum report_kind, or -1 for the page, -2 for the chunk heat */
	const char *type;
} http_routes[] = {
	{ "/", -1, "text/html; charset=utf-8" },
	{ "/metrics", REPORT_METRICS, "text/plain; version=0.0.4; charset=utf-8" },
	{ "/stats.json", REPORT_JSON, "application/json" },
	{ "/status.json", REPORT_STATUS_JSON, "application/json" },
	{ "/layout.json", REPORT_LAYOUT_JSON, "application/json" },
	{ "/chunks.json", -2, "application/json" },
};

/* [ADDR:]PORT -> a socket address. 0 or -EINVAL with a message. */
static int http_parse(const char *spec, struct sockaddr_storage *sa, socklen_t *salen, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *port = spec, *colon = strrchr(spec, ':');
	if (spec[0] == '[') { /* [IPv6]:PORT */
		const char *e = strchr(spec, ']');
		if (!e || e[1] != ':' || (size_t)(e - spec - 1) >= sizeof(host)) {
			snprintf(err, errlen, "--http %s: expected [IPv6]:PORT, e.g. [::1]:9100", spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(e - spec - 1), spec + 1);
		port = e + 2;
	} else if (colon) {
		if (colon == spec || (size_t)(colon - spec) >= sizeof(host)) {
			snprintf(err, errlen, "--http %s: expected [ADDR:]PORT, e.g. 9100 or 127.0.0.1:9100", spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
		port = colon + 1;
	}
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || *end || p > 65535) {
		snprintf(err, errlen, "--http %s: port '%s' is not a number from 1 to 65535", spec, port);
		return -EINVAL;
	}
	if (p == 0) {
		snprintf(err, errlen, "--http %s: port 0 would be a random port nobody knows: give one from 1 to 65535", spec);
		return -EINVAL;
	}
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		*salen = sizeof(*in);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		*salen = sizeof(*in6);
	} else {
		/* numeric only: a daemon must not wait on a name server */
		snprintf(err, errlen, "--http %s: address '%s' is not a numeric IPv4 address, [IPv6] or localhost",
			 spec, host);
		return -EINVAL;
	}
	return 0;
}

int http_check_addr(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;
	return http_parse(spec, &sa, &len, err, errlen);
}

int http_listen(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int r = http_parse(spec, &sa, &len, err, errlen), one = 1;
	if (r)
		return r;
	int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "--http %s: socket: %s", spec, strerror(-r));
		return r;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, HTTP_BACKLOG) < 0) {
		r = -errno;
		snprintf(err, errlen, "--http %s: cannot listen: %s%s", spec, strerror(-r),
			 r == -EADDRINUSE ? " (another server has that port)"
			 : r == -EADDRNOTAVAIL ? " (not an address of this machine)" : "");
		close(fd);
		return r;
	}
	return fd;
}

/* libmicrohttpd's messages (a client that hung up mid-request, ...), at most
 * HTTP_LOG_PER_S a second: a thousand clients must not flood the log. */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	char msg[512];
	time_t now = time(NULL);
	unsigned suppressed = 0;
	pthread_mutex_lock(&s->log_lock);
	if (now != s->log_second) {
		suppressed = s->suppressed;
		s->log_second = now;
		s->logged = s->suppressed = 0;
	}
	int quiet = s->logged++ >= HTTP_LOG_PER_S;
	s->suppressed += (unsigned)quiet;
	pthread_mutex_unlock(&s->log_lock);
	if (suppressed)
		fsvol_log(LOG_WARNING, "http: %u more messages in the second before", suppressed);
	if (quiet)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	fsvol_log(LOG_WARNING, "http: %s", msg);
}

static enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status, struct MHD_Response *resp,
				  const char *type)
{
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result http_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	return http_reply(c, status, resp, "text/plain; charset=utf-8");
}

/* Does Host (the header, "NAME[:PORT]", "[IPv6][:PORT]") name this server?
 * Its address (any address when bound to every one), localhost, or this
 * machine's name; no Host (HTTP/1.0) passes: browsers always send one. */
static int http_host_ok(const struct http_server *s, const char *host)
{
	char name[256];
	if (!host)
		return 1;
	if (host[0] == '[') {
		const char *e = strchr(host, ']');
		if (!e || (size_t)(e - host - 1) >= sizeof(name))
			return 0;
		snprintf(name, sizeof(name), "%.*s", (int)(e - host - 1), host + 1);
	} else {
		size_t n = strcspn(host, ":");
		if (n >= sizeof(name))
			return 0;
		snprintf(name, sizeof(name), "%.*s", (int)n, host);
	}
	struct in_addr a4;
	struct in6_addr a6;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)&s->bound;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)&s->bound;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return s->wildcard || (s->bound.ss_family == AF_INET && a4.s_addr == b4->sin_addr.s_addr);
	if (inet_pton(AF_INET6, name, &a6) == 1)
		return s->wildcard || (s->bound.ss_family == AF_INET6 && !memcmp(&a6, &b6->sin6_addr, sizeof(a6)));
	if (!strcasecmp(name, "localhost"))
		return 1;
	/* this machine's name, short or fully qualified */
	size_t hn = strcspn(s->hostname, ".");
	return s->hostname[0] && (!strcasecmp(name, s->hostname) ||
				  (strlen(name) == hn && !strncasecmp(name, s->hostname, hn)));
}

static enum MHD_Result http_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				   const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
	struct http_server *s = cls;
	const struct http_route *route = NULL;
	(void)version, (void)upload, (void)req_cls;
	if (!http_host_ok(s, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
		return http_text(c, 421, "misdirected request: the Host header does not name this server "
				 "(use its address, localhost or the machine's name)\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET or HEAD\n");
	*upload_size = 0; /* a body on a GET is ignored */
	chunk_heat_idle(s->heat);
	for (size_t i = 0; i < sizeof(http_routes) / sizeof(http_routes[0]); i++)
		if (!strcmp(url, http_routes[i].path))
			route = &http_routes[i];
	if (!route)
		return http_text(c, MHD_HTTP_NOT_FOUND,
				 "not found (try /, /metrics, /stats.json, /status.json, /layout.json, /chunks.json)\n");
	if (route->kind == -1)
		return http_reply(c, MHD_HTTP_OK,
				  MHD_create_response_from_buffer(sizeof(http_dashboard) - 1, (void *)http_dashboard,
								  MHD_RESPMEM_PERSISTENT),
				  route->type);
	char *buf = NULL;
	size_t len = 0;
	int r;
	if (route->kind == -2) {
		FILE *f = open_memstream(&buf, &len);
		r = f ? chunk_heat_render(s->heat, f) : -ENOMEM;
		if (f && fclose(f) && !r)
			r = -EIO;
		if (r)
			free(buf);
	} else {
		r = report_render(s->v, (enum report_kind)route->kind, &buf, &len);
	}
	if (r) {
		char msg[128];
		snprintf(msg, sizeof(msg), "%s: %s\n", url, strerror(-r));
		return http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	/* MUST_FREE: libmicrohttpd free()s the rendered buffer when sent */
	return http_reply(c, MHD_HTTP_OK, MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE),
			  route->type);
}

static void http_cut(struct http_conn *hc)
{
	shutdown(hc->fd, SHUT_RDWR);
	hc->cut = 1;
}

/* The client's address, to count connections per address. */
static void http_peer(struct MHD_Connection *c, struct http_conn *hc)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	if (sa && sa->sa_family == AF_INET)
		memcpy(hc->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa && sa->sa_family == AF_INET6)
		memcpy(hc->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	hc->family = sa ? sa->sa_family : 0;
}

static int http_same_peer(const struct http_conn *a, const struct http_conn *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Under s->lock: the new connection hc is in; past a limit the oldest
 * connection (of hc's address, then of all) other than hc is cut. */
static void http_make_room(struct http_server *s, const struct http_conn *hc)
{
	for (int all = 0; all < 2; all++) {
		unsigned n, limit = all ? HTTP_MAX_CONNECTIONS : HTTP_MAX_PER_IP;
		do {
			struct http_conn *oldest = NULL;
			n = 0;
			for (struct http_conn *x = s->conns; x; x = x->next) {
				if (x->cut || (!all && !http_same_peer(x, hc)))
					continue;
				n++;
				if (x != hc && (!oldest || x->since <= oldest->since))
					oldest = x;
			}
			if (n <= limit || !oldest)
				break;
			http_cut(oldest);
		} while (--n > limit);
	}
}

/* MHD's thread: a connection starts (watched from now) or ends (before
 * MHD closes its socket, so a shutdown under the lock never hits a reused
 * descriptor). */
static void http_notify(void *cls, struct MHD_Connection *c, void **socket_ctx, enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct http_conn *hc = *socket_ctx;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		hc = ci ? calloc(1, sizeof(*hc)) : NULL;
		if (!hc)
			return; /* not watched: the idle timeout still applies */
		hc->fd = ci->connect_fd;
		hc->since = time(NULL);
		http_peer(c, hc);
		pthread_mutex_lock(&s->lock);
		hc->next = s->conns;
		if (s->conns)
			s->conns->prev = hc;
		s->conns = hc;
		http_make_room(s, hc);
		pthread_mutex_unlock(&s->lock);
		*socket_ctx = hc;
	} else if (hc) {
		pthread_mutex_lock(&s->lock);
		if (hc->prev)
			hc->prev->next = hc->next;
		else
			s->conns = hc->next;
		if (hc->next)
			hc->next->prev = hc->prev;
		pthread_mutex_unlock(&s->lock);
		free(hc);
		*socket_ctx = NULL;
	}
}

/* MHD's thread: a request was answered; the next one has a deadline of its own. */
static void http_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	(void)req_cls, (void)toe;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct http_conn *hc = ci ? ci->socket_context : NULL;
	if (!hc)
		return;
	pthread_mutex_lock(&s->lock);
	hc->since = time(NULL);
	pthread_mutex_unlock(&s->lock);
}

/* Once a second: shut the socket of each connection past its deadline;
 * MHD then sees the connection end and closes it. */
static void *http_deadline_main(void *arg)
{
	struct http_server *s = arg;
	pthread_setname_np(pthread_self(), "fsvol-http-dl"); /* top -H, ps -L */
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		time_t now = time(NULL);
		for (struct http_conn *hc = s->conns; hc; hc = hc->next)
			if (!hc->cut && now - hc->since > HTTP_DEADLINE_S)
				http_cut(hc);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct http_server *http_start(struct vol *v, int fd, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "--http: out of memory");
		close(fd);
		return NULL;
	}
	s->v = v;
	socklen_t blen = sizeof(s->bound);
	getsockname(fd, (struct sockaddr *)&s->bound, &blen);
	if (s->bound.ss_family == AF_INET)
		s->wildcard = ((struct sockaddr_in *)&s->bound)->sin_addr.s_addr == htonl(INADDR_ANY);
	else if (s->bound.ss_family == AF_INET6)
		s->wildcard = !memcmp(&((struct sockaddr_in6 *)&s->bound)->sin6_addr, &in6addr_any, sizeof(in6addr_any));
	if (gethostname(s->hostname, sizeof(s->hostname) - 1))
		s->hostname[0] = 0;
	if (!(s->heat = chunk_heat_create(v))) {
		snprintf(err, errlen, "--http: out of memory");
		close(fd);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_mutex_init(&s->log_lock, NULL);
	if (pthread_create(&s->deadline, NULL, http_deadline_main, s) == 0)
		s->deadline_running = 1;
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				http_answer, s, MHD_OPTION_EXTERNAL_LOGGER, http_log, s, MHD_OPTION_LISTEN_SOCKET,
				(MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNECTIONS + HTTP_MHD_ROOM,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_MAX_PER_IP + HTTP_MHD_ROOM,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION, http_notify, s,
				MHD_OPTION_NOTIFY_COMPLETED, http_completed, s, MHD_OPTION_END);
	if (!s->d) {
		snprintf(err, errlen, "--http: libmicrohttpd could not start its server");
		close(fd);
		s->d = NULL;
		http_stop(s);
		return NULL;
	}
	return s;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d); /* joins its thread, closes the socket and every connection */
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->deadline_running)
		pthread_join(s->deadline, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->log_lock);
	chunk_heat_destroy(s->heat);
	free(s);
}
