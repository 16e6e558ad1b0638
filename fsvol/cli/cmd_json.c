/* cmd_json: a small JSON reader for the CLI's own use (MNT/status.json for
 * detail and monitor): the whole document into a tree, looked up by key.
 * Depth is bounded, every read is bounded by the buffer's end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd_json.h"

#define CMD_JSON_MAX_DEPTH 16

struct cj_in {
	const char *p, *end;
	int bad;
};

static void cj_ws(struct cj_in *in)
{
	while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

static int cj_lit(struct cj_in *in, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(in->end - in->p) < n || memcmp(in->p, w, n))
		return 0;
	in->p += n;
	return 1;
}

/* A string's bytes, escapes decoded (\uXXXX below 0x80 only; others as '?'). */
static char *cj_string(struct cj_in *in)
{
	if (in->p >= in->end || *in->p != '"')
		return NULL;
	in->p++;
	size_t cap = 16, n = 0;
	char *s = malloc(cap);
	while (s && in->p < in->end && *in->p != '"') {
		char c = *in->p++;
		if (c == '\\' && in->p < in->end) {
			char e = *in->p++;
			c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
			if (e == 'u') {
				if (in->end - in->p < 4)
					break;
				char hex[5] = { in->p[0], in->p[1], in->p[2], in->p[3], 0 };
				unsigned long u = strtoul(hex, NULL, 16);
				c = u < 0x80 ? (char)u : '?';
				in->p += 4;
			}
		}
		if (n + 2 > cap) {
			char *t = realloc(s, cap *= 2);
			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		s[n++] = c;
	}
	if (!s || in->p >= in->end) {
		free(s);
		return NULL;
	}
	in->p++;
	s[n] = 0;
	return s;
}

static int cj_value(struct cj_in *in, struct cmd_json *v, int depth);

static int cj_push(struct cmd_json *v, char *key, struct cmd_json *kid)
{
	if (!v->n || (v->n >= 4 && !(v->n & (v->n - 1)))) { /* full at 4, 8, 16, ... */
		size_t cap = v->n ? v->n * 2 : 4;
		struct cmd_json *k = realloc(v->kids, cap * sizeof(*k));
		char **ks = realloc(v->keys, cap * sizeof(*ks));
		if (k)
			v->kids = k;
		if (ks)
			v->keys = ks;
		if (!k || !ks)
			return -ENOMEM;
	}
	v->kids[v->n] = *kid;
	v->keys[v->n++] = key;
	return 0;
}

static int cj_container(struct cj_in *in, struct cmd_json *v, int depth, int obj)
{
	char close = obj ? '}' : ']';
	v->t = obj ? CMD_JSON_OBJ : CMD_JSON_ARR;
	in->p++;
	cj_ws(in);
	if (in->p < in->end && *in->p == close) {
		in->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct cmd_json kid = { 0 };
		cj_ws(in);
		if (obj) {
			if (!(key = cj_string(in)))
				return -EINVAL;
			cj_ws(in);
			if (in->p >= in->end || *in->p++ != ':') {
				free(key);
				return -EINVAL;
			}
		}
		if (cj_value(in, &kid, depth + 1) || cj_push(v, key, &kid)) {
			free(key);
			cmd_json_free_value(&kid);
			return -EINVAL;
		}
		cj_ws(in);
		if (in->p < in->end && *in->p == ',') {
			in->p++;
			continue;
		}
		if (in->p < in->end && *in->p == close) {
			in->p++;
			return 0;
		}
		return -EINVAL;
	}
}

static int cj_value(struct cj_in *in, struct cmd_json *v, int depth)
{
	memset(v, 0, sizeof(*v));
	cj_ws(in);
	if (depth > CMD_JSON_MAX_DEPTH || in->p >= in->end)
		return -EINVAL;
	char c = *in->p;
	if (c == '{' || c == '[')
		return cj_container(in, v, depth, c == '{');
	if (c == '"') {
		v->t = CMD_JSON_STR;
		return (v->str = cj_string(in)) ? 0 : -EINVAL;
	}
	if (cj_lit(in, "null"))
		return v->t = CMD_JSON_NULL, 0;
	if (cj_lit(in, "true"))
		return v->t = CMD_JSON_BOOL, v->num = 1, 0;
	if (cj_lit(in, "false"))
		return v->t = CMD_JSON_BOOL, v->num = 0, 0;
	char buf[64];
	size_t n = 0;
	while (in->p + n < in->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", in->p[n]))
		n++;
	if (!n)
		return -EINVAL;
	memcpy(buf, in->p, n);
	buf[n] = 0;
	in->p += n;
	v->t = CMD_JSON_NUM;
	v->num = strtod(buf, NULL);
	v->u64 = strtoull(buf, NULL, 10); /* exact for the integers status.json carries */
	return 0;
}

struct cmd_json *cmd_json_parse(const char *buf, size_t len)
{
	struct cj_in in = { buf, buf + len, 0 };
	struct cmd_json *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	if (cj_value(&in, v, 0)) {
		cmd_json_free(v);
		return NULL;
	}
	cj_ws(&in);
	if (in.p != in.end) {
		cmd_json_free(v);
		return NULL;
	}
	return v;
}

const struct cmd_json *cmd_json_get(const struct cmd_json *o, const char *key)
{
	for (size_t i = 0; o && o->t == CMD_JSON_OBJ && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

const char *cmd_json_str(const struct cmd_json *o, const char *key)
{
	const struct cmd_json *v = cmd_json_get(o, key);
	return v && v->t == CMD_JSON_STR ? v->str : NULL;
}

uint64_t cmd_json_u64(const struct cmd_json *o, const char *key, uint64_t dflt)
{
	const struct cmd_json *v = cmd_json_get(o, key);
	return v && v->t == CMD_JSON_NUM ? v->u64 : dflt;
}

double cmd_json_num(const struct cmd_json *o, const char *key, double dflt)
{
	const struct cmd_json *v = cmd_json_get(o, key);
	return v && v->t == CMD_JSON_NUM ? v->num : dflt;
}

void cmd_json_free_value(struct cmd_json *v)
{
	for (size_t i = 0; i < v->n; i++) {
		cmd_json_free_value(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
}

void cmd_json_free(struct cmd_json *v)
{
	if (v)
		cmd_json_free_value(v);
	free(v);
}

struct cmd_json *cmd_json_read_file(const char *path, int *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	*err = 0;
	if (!f) {
		*err = errno;
		return NULL;
	}
	do {
		if (len + 4096 > cap) {
			char *t = realloc(buf, cap = cap ? cap * 2 : 8192);
			if (!t) {
				*err = ENOMEM;
				break;
			}
			buf = t;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f) && !*err)
		*err = errno ? errno : EIO;
	fclose(f);
	struct cmd_json *v = *err ? NULL : cmd_json_parse(buf, len);
	if (!*err && !v)
		*err = EBADMSG;
	free(buf);
	return v;
}
