/* nbd_listen: the export's address (unix:PATH or [ADDR:]PORT) and its
 * listening socket, taken before the daemon forks. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fsvol/front/nbd_server.h"

/* Split [ADDR:]PORT; ADDR may be [IPv6]. 0 or -1. */
static int nbds_split(const char *a, char *host, size_t hlen, char *port, size_t plen)
{
	const char *p;
	host[0] = 0;
	if (a[0] == '[') {
		const char *e = strchr(a, ']');
		if (!e || e[1] != ':' || (size_t)(e - a - 1) >= hlen)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(e - a - 1), a + 1);
		p = e + 2;
	} else if ((p = strrchr(a, ':'))) {
		if ((size_t)(p - a) >= hlen || p == a)
			return -1;
		snprintf(host, hlen, "%.*s", (int)(p - a), a);
		p++;
	} else {
		p = a;
	}
	char *end;
	long v = strtol(p, &end, 10);
	if (!*p || *end || v < 1 || v > 65535)
		return -1;
	snprintf(port, plen, "%ld", v);
	return 0;
}

int nbd_server_check_addr(const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	if (!strncmp(addr, "unix:", 5)) {
		if (!addr[5]) {
			snprintf(err, errlen, "--nbd %s: needs a socket path after unix:", addr);
			return -EINVAL;
		}
		if (strlen(addr + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, errlen, "--nbd %s: socket path longer than 107 bytes", addr);
			return -EINVAL;
		}
		return 0;
	}
	if (nbds_split(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "--nbd %s: expected unix:PATH or [ADDR:]PORT (port 1-65535)", addr);
		return -EINVAL;
	}
	return 0;
}

/* A socket file nobody listens on (a server that ended without removing it)
 * is removed; one in use, or another kind of file, is an error. */
static int nbds_clear_socket(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--nbd unix:%s: exists and is not a socket", path);
		return -EEXIST;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	int r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	close(fd);
	if (r == 0) {
		snprintf(err, errlen, "--nbd unix:%s: a server is already listening there", path);
		return -EADDRINUSE;
	}
	if (e == ECONNREFUSED && unlink(path) == 0)
		return 0;
	snprintf(err, errlen, "--nbd unix:%s: %s", path, strerror(e));
	return -e;
}

int nbd_server_listen(const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	int r = nbd_server_check_addr(addr, err, errlen), fd = -1, one = 1;
	if (r)
		return r;
	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if ((r = nbds_clear_socket(addr + 5, err, errlen)))
			return r;
		/* bound by its absolute name when it fits: a daemon that moved to /
		 * still removes it at the end */
		char cwd[PATH_MAX];
		if (addr[5] != '/' && getcwd(cwd, sizeof(cwd)) &&
		    strlen(cwd) + 1 + strlen(addr + 5) < sizeof(a.sun_path))
			memcpy(a.sun_path, cwd, strlen(cwd)), a.sun_path[strlen(cwd)] = '/',
				memcpy(a.sun_path + strlen(cwd) + 1, addr + 5, strlen(addr + 5) + 1);
		else
			snprintf(a.sun_path, sizeof(a.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, SOMAXCONN) < 0) {
			r = -errno;
			snprintf(err, errlen, "--nbd %s: cannot listen: %s", addr, strerror(-r));
			if (fd >= 0)
				close(fd);
			return r;
		}
		return fd;
	}
	nbds_split(addr, host, sizeof(host), port, sizeof(port));
	/* without ADDR: every address, IPv6 and IPv4 on one socket, or IPv4
	 * alone where the machine has no IPv6 */
	static const int families[] = { AF_INET6, AF_INET };
	r = -EADDRNOTAVAIL;
	for (unsigned f = 0; fd < 0 && f < (host[0] ? 1u : 2u); f++) {
		struct addrinfo hints = { .ai_family = host[0] ? AF_UNSPEC : families[f], .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai = NULL;
		int g = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
		if (g) {
			if (host[0]) {
				snprintf(err, errlen, "--nbd %s: %s", addr, gai_strerror(g));
				return -EINVAL;
			}
			continue;
		}
		for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
			int zero = 0;
			fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (fd < 0) {
				r = -errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (p->ai_family == AF_INET6 && !host[0])
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
			if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
				break;
			r = -errno;
			close(fd);
			fd = -1;
		}
		freeaddrinfo(ai);
		if (r == -EADDRINUSE)
			break; /* the port is taken: IPv4 alone would not help */
	}
	if (fd < 0) {
		snprintf(err, errlen, "--nbd %s: cannot listen: %s%s", addr, strerror(-r),
			 r == -EADDRINUSE ? " (another server has that port)" : "");
		return r;
	}
	return fd;
}
