/* http: the daemon's HTTP endpoint (fsvol mount --http [ADDR:]PORT), served
 * by libmicrohttpd: /metrics, /stats.json, /status.json, /layout.json and
 * the live dashboard page at /. */
#ifndef FSVOL_HTTP_H
#define FSVOL_HTTP_H

#include <stddef.h>

#include "fsvol/core/volume.h"

/* The limits (docs/counters.md, "HTTP"; the --http option's help). */
#define HTTP_MAX_CONNECTIONS 256 /* at once, all clients; one more closes the oldest */
#define HTTP_MAX_PER_IP 64       /* at once, from one address; one more closes its oldest */
#define HTTP_TIMEOUT_S 10        /* an idle client's connection is closed after this */
#define HTTP_DEADLINE_S 10       /* a whole request, from the connection's start or its last answer */
#define HTTP_STR(x) HTTP_STR_(x)  /* a limit in the option's help */
#define HTTP_STR_(x) #x

struct http_server;

/* Check [ADDR:]PORT (ADDR numeric IPv4, [IPv6] or localhost; 127.0.0.1 when
 * omitted; port 1-65535). 0, or -EINVAL with a message naming the culprit. */
int http_check_addr(const char *spec, char *err, size_t errlen);
/* Bind and listen on spec before daemonising, so a taken port is the
 * user's error at once. The socket, or -errno with a message. */
int http_listen(const char *spec, char *err, size_t errlen);
/* Serve v on the listening socket fd (taken over) from a thread of the
 * server's own; call after daemonising. NULL with a message on failure. */
struct http_server *http_start(struct vol *v, int fd, char *err, size_t errlen);
/* Stop serving and close the socket; NULL is a no-op. */
void http_stop(struct http_server *s);

#endif
