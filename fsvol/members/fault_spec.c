/* fault_spec: parsing and printing the fault language of docs/faults.md.
 *
 *   none | KEY=VALUE[,KEY=VALUE...]
 *   error=read|write|all   which I/Os fail (flushes count as writes)
 *   rate=P                 ... with probability P (0..1, default 1)
 *   after=N                ... after the first N of them succeeded
 *   errno=eio|enospc|edquot|enodev   the error returned (default eio)
 *   bad=OFF+LEN            reads touching it fail until a write covers it (dm-dust);
 *   badw=OFF+LEN           reads and writes touching it fail (a sector the disk cannot remap);
 *                          OFF is in the member's data area, as `fsvol map` prints
 *   flaky=UP/DOWN          up for UP, then every I/O fails for DOWN, repeating
 *                          (dm-flakey); times (5ms, 2s) or I/O counts (100io)
 *   corrupt=P              a read returns one flipped byte with probability P
 *   seed=N                 the random sequence for rate and corrupt
 *   delay=T, rdelay=T, wdelay=T   completions arrive T later (5ms, 200us)
 *   cache=volatile|none    a volatile write-back cache, as a disk's
 *   cache_size=SIZE        over this the oldest writes go out (default 8M)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsvol/members/fault_spec.h"
#include "fsvol/util/size.h"

static int fault_time(const char *v, uint64_t *ns, int *is_io)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || x < 0)
		return -1;
	if (is_io && !strcmp(end, "io")) {
		*is_io = 1;
		*ns = (uint64_t)x;
		return x == (double)(uint64_t)x ? 0 : -1;
	}
	double mul = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6
		   : !strcmp(end, "s") ? 1e9 : -1;
	if (mul < 0 || x * mul > 3.6e12)
		return -1;
	*ns = (uint64_t)(x * mul);
	return 0;
}

static int fault_prob(const char *v, double *p)
{
	char *end;
	*p = strtod(v, &end);
	return end == v || *end || !(*p >= 0 && *p <= 1) ? -1 : 0;
}

int fault_spec_parse(const char *spec, struct fault_spec *s, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;
	memset(s, 0, sizeof(*s));
	s->rate = 1;
	s->err = EIO;
	s->seed = 1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "fault spec too long");
		return -EINVAL;
	}
	if (!strcmp(spec, "none") || !strcmp(spec, "off"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	int have_rate = 0;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v || !v[1]) {
			snprintf(err, errlen, "fault '%s': expected KEY=VALUE", kv);
			return -EINVAL;
		}
		*v++ = 0;
		int bad = 0;
		if (!strcmp(kv, "error")) {
			s->error_ops = !strcmp(v, "read") ? FAULT_READ : !strcmp(v, "write") ? FAULT_WRITE
				       : !strcmp(v, "all") ? FAULT_READ | FAULT_WRITE : 0;
			bad = !s->error_ops;
		} else if (!strcmp(kv, "rate")) {
			bad = fault_prob(v, &s->rate);
			have_rate = 1;
		} else if (!strcmp(kv, "after")) {
			char *end;
			s->after = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else if (!strcmp(kv, "errno")) {
			s->err = !strcasecmp(v, "eio") ? EIO : !strcasecmp(v, "enospc") ? ENOSPC
				 : !strcasecmp(v, "edquot") ? EDQUOT : !strcasecmp(v, "enodev") ? ENODEV : 0;
			bad = !s->err;
		} else if (!strcmp(kv, "bad") || !strcmp(kv, "badw")) {
			char *plus = strchr(v, '+');
			if (s->nbad == FAULT_MAX_BAD) {
				snprintf(err, errlen, "fault %s=%s: at most %d bad ranges", kv, v, FAULT_MAX_BAD);
				return -EINVAL;
			}
			if (plus)
				*plus = 0;
			bad = !plus || size_parse(v, &s->bad[s->nbad].off) || size_parse(plus + 1, &s->bad[s->nbad].len) ||
			      !s->bad[s->nbad].len;
			if (plus)
				*plus = '+';
			s->bad[s->nbad++].sticky = kv[3] == 'w';
		} else if (!strcmp(kv, "flaky")) {
			char *slash = strchr(v, '/');
			int io_up = 0, io_down = 0;
			if (slash)
				*slash = 0;
			bad = !slash || fault_time(v, &s->up, &io_up) || fault_time(slash + 1, &s->down, &io_down) ||
			      io_up != io_down || !s->up || !s->down;
			if (slash)
				*slash = '/';
			s->flaky_io = io_up;
		} else if (!strcmp(kv, "delay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
			s->wdelay_ns = s->rdelay_ns;
		} else if (!strcmp(kv, "rdelay")) {
			bad = fault_time(v, &s->rdelay_ns, NULL);
		} else if (!strcmp(kv, "wdelay")) {
			bad = fault_time(v, &s->wdelay_ns, NULL);
		} else if (!strcmp(kv, "corrupt")) {
			bad = fault_prob(v, &s->corrupt);
		} else if (!strcmp(kv, "cache")) {
			s->cache = !strcmp(v, "volatile") ? 1 : !strcmp(v, "none") ? 0 : -1;
			bad = s->cache < 0;
		} else if (!strcmp(kv, "cache_size")) {
			bad = size_parse(v, &s->cache_size) || !s->cache_size;
		} else if (!strcmp(kv, "seed")) {
			char *end;
			s->seed = strtoull(v, &end, 10);
			bad = *end || *v == '-';
		} else {
			snprintf(err, errlen, "fault: unknown key '%s' (error, rate, after, errno, bad, badw, flaky, "
				 "delay, rdelay, wdelay, corrupt, seed, cache, cache_size)", kv);
			return -EINVAL;
		}
		if (bad) {
			snprintf(err, errlen, "fault %s=%s: bad value", kv, v);
			return -EINVAL;
		}
	}
	if ((have_rate || s->after) && !s->error_ops) {
		snprintf(err, errlen, "fault: rate and after need error=read|write|all");
		return -EINVAL;
	}
	if (s->cache_size && !s->cache) {
		snprintf(err, errlen, "fault: cache_size needs cache=volatile");
		return -EINVAL;
	}
	if (s->cache && !s->cache_size)
		s->cache_size = FAULT_CACHE_DEFAULT;
	return 0;
}

void fault_spec_format(const struct fault_spec *s, char *buf, size_t len)
{
	static const char *const ops[] = { "", "read", "write", "all" };
	size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__)
	buf[0] = 0;
	if (s->error_ops)
		PUT(",error=%s,rate=%g,after=%llu", ops[s->error_ops], s->rate, (unsigned long long)s->after);
	if (s->error_ops || s->up)
		PUT(",errno=%s", s->err == ENOSPC ? "enospc" : s->err == EDQUOT ? "edquot" : s->err == ENODEV ? "enodev" : "eio");
	for (unsigned i = 0; i < s->nbad; i++)
		PUT(",%s=%llu+%llu", s->bad[i].sticky ? "badw" : "bad", (unsigned long long)s->bad[i].off,
		    (unsigned long long)s->bad[i].len);
	if (s->up && s->flaky_io)
		PUT(",flaky=%lluio/%lluio", (unsigned long long)s->up, (unsigned long long)s->down);
	else if (s->up)
		PUT(",flaky=%lluus/%lluus", (unsigned long long)(s->up / 1000), (unsigned long long)(s->down / 1000));
	if (s->rdelay_ns)
		PUT(",rdelay=%lluus", (unsigned long long)(s->rdelay_ns / 1000));
	if (s->wdelay_ns)
		PUT(",wdelay=%lluus", (unsigned long long)(s->wdelay_ns / 1000));
	if (s->corrupt)
		PUT(",corrupt=%g", s->corrupt);
	if (s->error_ops || s->corrupt)
		PUT(",seed=%llu", (unsigned long long)s->seed);
	if (s->cache) {
		char sz[32];
		size_format(s->cache_size, sz, sizeof(sz));
		PUT(",cache=volatile,cache_size=%s", sz);
	}
	if (s->powercut)
		PUT(",powercut");
#undef PUT
	if (!buf[0])
		snprintf(buf, len, "none");
	else
		memmove(buf, buf + 1, strlen(buf)); /* drop the leading comma */
}
