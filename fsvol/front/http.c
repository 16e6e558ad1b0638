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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsvol/front/chunk_heat.h"
#include "fsvol/front/http.h"
#include "fsvol/front/report.h"
#include "fsvol/util/log.h"

/* http_dashboard[]: dashboard.html as bytes, NUL-terminated (Makefile, xxd -i) */
#include "dashboard_html.h"

#define HTTP_MAX_CONNECTIONS 32u
#define HTTP_TIMEOUT_S 10u /* an idle client's connection is closed after this */

struct http_server {
	struct MHD_Daemon *d;
	struct vol *v;
	struct chunk_heat *heat; /* /chunks.json */
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
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		r = -errno;
		snprintf(err, errlen, "--http %s: cannot listen: %s%s", spec, strerror(-r),
			 r == -EADDRINUSE ? " (another server has that port)"
			 : r == -EADDRNOTAVAIL ? " (not an address of this machine)" : "");
		close(fd);
		return r;
	}
	return fd;
}

static void http_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
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

static enum MHD_Result http_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				   const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
	struct http_server *s = cls;
	const struct http_route *route = NULL;
	(void)version, (void)upload, (void)req_cls;
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

struct http_server *http_start(struct vol *v, int fd, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "--http: out of memory");
		close(fd);
		return NULL;
	}
	s->v = v;
	if (!(s->heat = chunk_heat_create(v))) {
		snprintf(err, errlen, "--http: out of memory");
		close(fd);
		free(s);
		return NULL;
	}
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, http_answer, s,
				MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				HTTP_TIMEOUT_S, MHD_OPTION_END);
	if (!s->d) {
		snprintf(err, errlen, "--http: libmicrohttpd could not start its server");
		close(fd);
		chunk_heat_destroy(s->heat);
		free(s);
		return NULL;
	}
	return s;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d); /* joins its thread, closes the socket */
	chunk_heat_destroy(s->heat);
	free(s);
}
