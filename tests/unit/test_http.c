/* test_http: --http's address parser (every refusal names the culprit), and
 * the server on a real loopback socket over a volume of memory members:
 * each endpoint's status, content type and content, 404, 405, a taken port;
 * the Host check (421 for a name that is not this server's); slow clients
 * that trickle half a request do not lock others out, and are cut at the
 * request deadline. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsvol/core/volume.h"
#include "fsvol/front/http.h"

static const struct {
	const char *spec;
	const char *err; /* NULL: accepted; else a part of the message */
} addrs[] = {
	{ "9100", NULL },
	{ "127.0.0.1:9100", NULL },
	{ "localhost:1", NULL },
	{ "[::1]:65535", NULL },
	{ "0.0.0.0:80", NULL },
	{ "0", "--http 0: port 0 would be a random port" },
	{ "127.0.0.1:0", "port 0" },
	{ "65536", "port '65536' is not a number from 1 to 65535" },
	{ "-1", "port '-1'" },
	{ "", "port ''" },
	{ "web", "port 'web'" },
	{ "127.0.0.1:", "port ''" },
	{ ":80", "--http :80: expected [ADDR:]PORT" },
	{ "1.2.3:80", "address '1.2.3' is not a numeric IPv4 address" },
	{ "example.org:80", "address 'example.org'" },
	{ "[::1]80", "expected [IPv6]:PORT" },
	{ "[::1:80", "expected [IPv6]:PORT" },
	{ "[zz]:80", "address 'zz'" },
};

START_TEST(test_addr)
{
	char err[256] = "";
	int r = http_check_addr(addrs[_i].spec, err, sizeof(err));
	if (!addrs[_i].err) {
		ck_assert_msg(r == 0, "%s refused: %s", addrs[_i].spec, err);
	} else {
		ck_assert_msg(r == -EINVAL, "%s accepted", addrs[_i].spec);
		ck_assert_msg(strstr(err, addrs[_i].err), "%s: message '%s' lacks '%s'", addrs[_i].spec, err, addrs[_i].err);
	}
}
END_TEST

/* A raid5 of 4 memory members. */
static struct vol *mkvol(void)
{
	char names[4][64], *paths[4], err[512];
	struct vol_create c = { .geom = { .level = LAYOUT_RAID5, .chunk = 64 * 1024 } };
	struct vol *v = NULL;
	c.geom.alg = layout_default_alg(LAYOUT_RAID5);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(names[i], sizeof(names[i]), "mem:http%u:%u", i, 9u << 20);
		paths[i] = names[i];
	}
	ck_assert_msg(vol_create(&c, paths, 4, err, sizeof(err)) == 0, "create: %s", err);
	struct vol_opts o = { .stats = VOL_STATS_ALL };
	ck_assert_msg(vol_open(&v, paths, 4, &o, err, sizeof(err)) == 0, "open: %s", err);
	ck_assert_int_eq(vol_start(v), 0);
	return v;
}

static int dial(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(fd >= 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
	return fd;
}

/* One request with Host: host (NULL: none); the whole answer (headers and
 * body), NUL-terminated, malloc'd. */
static char *get_host(unsigned port, const char *method, const char *path, const char *host)
{
	int fd = dial(port);
	char req[512];
	int n = host ? snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: %s\r\n\r\n", method, path, host)
		     : snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\n\r\n", method, path);
	ck_assert(write(fd, req, (size_t)n) == n);
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t got;
	while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)got;
		if (cap - len < 4096)
			buf = realloc(buf, cap *= 2);
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static char *get(unsigned port, const char *method, const char *path)
{
	char host[64];
	snprintf(host, sizeof(host), "127.0.0.1:%u", port);
	return get_host(port, method, path, host);
}

/* Listen on a free loopback port of a range of our own (port 0 is refused by
 * design) and serve v there. */
static struct http_server *serve(struct vol *v, unsigned *port)
{
	char err[256], spec[32];
	int fd = -1;
	for (unsigned p = 20000 + (unsigned)getpid() % 20000, tries = 0; tries < 50 && fd < 0; p++, tries++) {
		snprintf(spec, sizeof(spec), "127.0.0.1:%u", p);
		fd = http_listen(spec, err, sizeof(err));
		*port = p;
	}
	ck_assert_msg(fd >= 0, "no free port: %s", err);
	struct http_server *s = http_start(v, fd, err, sizeof(err));
	ck_assert_msg(s, "start: %s", err);
	return s;
}

START_TEST(test_server)
{
	struct vol *v = mkvol();
	char err[256], spec[32];
	unsigned port = 0;
	int fd = -1;
	/* a free port from a range of our own (port 0 is refused by design) */
	for (unsigned p = 20000 + (unsigned)getpid() % 20000, tries = 0; tries < 50 && fd < 0; p++, tries++) {
		snprintf(spec, sizeof(spec), "127.0.0.1:%u", p);
		fd = http_listen(spec, err, sizeof(err));
		port = p;
	}
	ck_assert_msg(fd >= 0, "no free port: %s", err);
	snprintf(spec, sizeof(spec), "%u", port);
	ck_assert_int_eq(http_listen(spec, err, sizeof(err)), -EADDRINUSE);
	ck_assert_msg(strstr(err, "cannot listen: Address already in use"), "%s", err);
	struct http_server *s = http_start(v, fd, err, sizeof(err));
	ck_assert_msg(s, "start: %s", err);

	char *r = get(port, "GET", "/status.json");
	ck_assert_msg(strstr(r, "HTTP/1.0 200") || strstr(r, "HTTP/1.1 200"), "%s", r);
	ck_assert_msg(strstr(r, "Content-Type: application/json"), "%s", r);
	ck_assert_msg(strstr(r, "\"level\":\"raid5\",\"layout\":\"left-symmetric\",\"chunk\":65536"), "%s", r);
	ck_assert_msg(strstr(r, "{\"slot\":3,\"number\":3,\"uuid\":\"") &&
		      strstr(r, "\",\"role\":3,\"path\":\"mem:http3:9437184\",\"state\":\"active\""), "%s", r);
	ck_assert_msg(strstr(r, "\"state\":\"healthy\"") && strstr(r, "\"sync\":null"), "%s", r);
	free(r);
	/* left-symmetric, 4 members: md's grid */
	r = get(port, "GET", "/layout.json");
	ck_assert_msg(strstr(r, "\"members\":4,\"chunk\":65536,\"data_members\":3,\"parity\":1"), "%s", r);
	ck_assert_msg(strstr(r, "[[\"D\",0,0],[\"D\",1,0],[\"D\",2,0],[\"P\",0,0]],\n"
				"[[\"D\",4,0],[\"D\",5,0],[\"P\",0,0],[\"D\",3,0]]"), "%s", r);
	free(r);
	r = get(port, "GET", "/metrics");
	ck_assert_msg(strstr(r, "Content-Type: text/plain; version=0.0.4"), "%s", r);
	ck_assert_msg(strstr(r, "fsvol_disk_reads_completed_total{"), "metrics body missing");
	free(r);
	r = get(port, "GET", "/stats.json");
	ck_assert_msg(strstr(r, "\"members\":[") && strstr(r, "\"uptime_ns\":"), "stats.json body missing");
	free(r);
	r = get(port, "GET", "/");
	ck_assert_msg(strstr(r, "text/html") && strstr(r, "<title>fsvol dashboard</title>") && strstr(r, "</html>"),
		      "page missing");
	free(r);
	r = get(port, "GET", "/volume");
	ck_assert_msg(strstr(r, " 404 "), "%s", r);
	free(r);
	r = get(port, "POST", "/metrics");
	ck_assert_msg(strstr(r, " 405 ") && strstr(r, "Allow: GET, HEAD"), "%s", r);
	free(r);
	/* Host: this server's address, localhost, or none pass; another name
	 * (a page of evil.example rebound to 127.0.0.1) or address gets 421 */
	static const struct { const char *host; const char *status; } hosts[] = {
		{ "localhost", " 200 " }, { "LOCALHOST:9100", " 200 " }, { NULL, " 200 " }, { "127.0.0.1", " 200 " },
		{ "evil.example:9100", " 421 " }, { "evil.example", " 421 " }, { "10.1.2.3", " 421 " },
		{ "[::1]:9100", " 421 " }, { "127.0.0.1.evil.example", " 421 " },
	};
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		r = get_host(port, "GET", "/metrics", hosts[i].host);
		ck_assert_msg(strstr(r, hosts[i].status), "Host: %s: %s", hosts[i].host ? hosts[i].host : "(none)", r);
		free(r);
	}
	http_stop(s);
	http_stop(NULL);
	/* the port is free again once stopped */
	fd = http_listen(spec, err, sizeof(err));
	ck_assert_msg(fd >= 0, "after stop: %s", err);
	close(fd);
	vol_close(v);
}
END_TEST

/* 40 clients that send half a request and a byte now and then (more than
 * the 32 connections the server once had in all) do not keep a whole
 * request from being answered; and one of them is cut at the request
 * deadline although it never stays idle for the idle timeout. */
START_TEST(test_slow_clients)
{
	struct vol *v = mkvol();
	unsigned port;
	struct http_server *s = serve(v, &port);
	signal(SIGPIPE, SIG_IGN); /* a cut client's next write fails with EPIPE instead */
	enum { NSLOW = 40 };
	int slow[NSLOW];
	char half[64];
	int n = snprintf(half, sizeof(half), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Slow: ", port);
	for (int i = 0; i < NSLOW; i++) {
		slow[i] = dial(port);
		ck_assert(write(slow[i], half, (size_t)n) == n);
	}
	/* a whole request meanwhile: answered while the slow ones trickle */
	int fd = dial(port);
	char req[128];
	int m = snprintf(req, sizeof(req), "GET /status.json HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
	ck_assert(write(fd, req, (size_t)m) == m);
	char buf[65536];
	ssize_t got = 0;
	for (int turn = 0; turn < 25 && got <= 0; turn++) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 1000) == 1)
			got = read(fd, buf, sizeof(buf) - 1);
		else
			for (int i = 0; i < NSLOW; i++)
				ck_assert(write(slow[i], "x", 1) == 1);
	}
	ck_assert_msg(got > 0, "no answer while %d clients trickled half requests", NSLOW);
	buf[got] = 0;
	ck_assert_msg(strstr(buf, " 200 "), "%s", buf);
	close(fd);
	/* the slow ones, still trickling a byte a second, are cut at the deadline */
	int cut = 0;
	for (int turn = 0; turn < 40 && !cut; turn++) {
		struct pollfd p = { slow[0], POLLIN, 0 };
		if (poll(&p, 1, 1000) == 1 && read(slow[0], buf, sizeof(buf)) <= 0)
			cut = 1;
		else
			for (int i = 0; i < NSLOW; i++)
				if (write(slow[i], "x", 1) != 1)
					cut |= i == 0;
	}
	ck_assert_msg(cut, "a client trickling half a request for 40 s was never cut");
	for (int i = 0; i < NSLOW; i++)
		close(slow[i]);
	http_stop(s);
	vol_close(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("http");
	tcase_add_loop_test(tc, test_addr, 0, (int)(sizeof(addrs) / sizeof(addrs[0])));
	tcase_add_test(tc, test_server);
	tcase_add_test(tc, test_slow_clients);
	tcase_set_timeout(tc, 90); /* the deadline test waits for the server's 10 s */
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
