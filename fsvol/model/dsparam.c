/* dsparam: DiskSim's libparam syntax, read by hand (see dsparam.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsvol/model/dsparam.h"

#define DSP_MAX_DEPTH 16    /* source nesting and block nesting */
#define DSP_MAX_FILE (64 << 20) /* the largest parameter file (DiskSim's are < 2 MiB) */

struct lex {
	const char *file;       /* owned by the dsp_file */
	const char *s;          /* the text */
	size_t pos;
	int line;
	struct dsp_file *out;
	char *err;
	size_t errlen;
	int depth;
};

static int fail(struct lex *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct lex *l, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->err && !l->err[0])
		snprintf(l->err, l->errlen, "%s:%d: %s", l->file, l->line, msg);
	return -EINVAL;
}

static void skip(struct lex *l)
{
	for (;;) {
		char c = l->s[l->pos];
		if (c == '\n') {
			l->line++;
			l->pos++;
		} else if (isspace((unsigned char)c)) {
			l->pos++;
		} else if (c == '#') {
			while (l->s[l->pos] && l->s[l->pos] != '\n')
				l->pos++;
		} else {
			return;
		}
	}
}

static char peek(struct lex *l)
{
	skip(l);
	return l->s[l->pos];
}

static int is_word_char(char c)
{
	return c && !isspace((unsigned char)c) && !strchr(",[]{}=#", c);
}

/* A word (no spaces); NULL when none starts here. */
static char *word(struct lex *l)
{
	skip(l);
	size_t b = l->pos;
	while (is_word_char(l->s[l->pos]))
		l->pos++;
	if (l->pos == b)
		return NULL;
	return strndup(l->s + b, l->pos - b);
}

static char *read_text(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	/* a parameter file, not a device or a pipe that never ends */
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > DSP_MAX_FILE) {
		snprintf(err, errlen, "%s: not a regular file of at most %d MiB", path, DSP_MAX_FILE >> 20);
		fclose(f);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
		n += got;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (strlen(buf) != n) {
		snprintf(err, errlen, "%s: not a text file (a NUL byte)", path);
		free(buf);
		return NULL;
	}
	return buf;
}

static int parse_file(struct lex *parent, const char *name, struct dsp_file *out, char *err,
		      size_t errlen, int depth, struct dsp_block **only);

static int push_ptr(void ***arr, size_t *n, void *p)
{
	void **a = realloc(*arr, (*n + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	a[(*n)++] = p;
	*arr = a;
	return 0;
}

static int block_body(struct lex *l, struct dsp_block *b);

/* The file name after `source`. */
static int source_name(struct lex *l, char **name)
{
	*name = word(l);
	if (!*name)
		return fail(l, "expected a file name after 'source'");
	return 0;
}

static int value(struct lex *l, struct dsp_val *v)
{
	memset(v, 0, sizeof(*v));
	char c = peek(l);
	v->file = l->file;
	v->line = l->line;
	if (c == '[') {
		l->pos++;
		v->kind = DSP_LIST;
		for (;;) {
			if (peek(l) == ']') {
				l->pos++;
				return 0;
			}
			struct dsp_val *it = realloc(v->item, (v->nitem + 1) * sizeof(*it));
			if (!it)
				return -ENOMEM;
			v->item = it;
			/* the list owns the item from here, whole or half parsed */
			memset(&v->item[v->nitem], 0, sizeof(*it));
			int rc = value(l, &v->item[v->nitem++]);
			if (rc)
				return rc;
			c = peek(l);
			if (c == ',')
				l->pos++;
			else if (c != ']')
				return fail(l, "expected ',' or ']' in a list");
		}
	}
	char *w = word(l);
	if (!w && !c)
		return fail(l, "expected a value, found the end of the file");
	if (!w)
		return fail(l, "expected a value (a number, a word, [ list ], TYPE { ... } or"
			    " source FILE), found '%c'", c);
	if (!strcmp(w, "source") && peek(l) != ',' && peek(l) != '}' && peek(l) != ']') {
		char *name;
		free(w);
		int rc = source_name(l, &name);
		if (rc)
			return rc;
		v->kind = DSP_BLOCK;
		rc = parse_file(l, name, l->out, l->err, l->errlen, l->depth + 1, &v->block);
		free(name);
		if (rc)
			return rc;
		if (!v->block)
			return fail(l, "the sourced file holds no block to use as a value");
		return 0;
	}
	if (peek(l) == '{') {
		v->kind = DSP_BLOCK;
		v->block = calloc(1, sizeof(*v->block));
		if (!v->block) {
			free(w);
			return -ENOMEM;
		}
		v->block->type = w;
		v->block->name = strdup("");
		v->block->file = l->file;
		v->block->line = l->line;
		l->pos++;
		return block_body(l, v->block);
	}
	char *e;
	double x = strtod(w, &e);
	v->word = w;
	if (*e == 0 && e != w && (isdigit((unsigned char)w[0]) || strchr("-+.", w[0]))) {
		v->kind = DSP_NUM;
		v->num = x;
	} else {
		v->kind = DSP_WORD;
	}
	return 0;
}

/* Parameters up to the closing '}': "Key words = VALUE" separated by ','. */
static int block_body(struct lex *l, struct dsp_block *b)
{
	if (++l->depth > DSP_MAX_DEPTH)
		return fail(l, "blocks nested more than %d deep", DSP_MAX_DEPTH);
	for (;;) {
		char c = peek(l);
		if (c == '}') {
			l->pos++;
			l->depth--;
			return 0;
		}
		if (!c)
			return fail(l, "expected '}' to close %s %s (opened at line %d), found the end"
				    " of the file", b->type, b->name, b->line);
		size_t k0 = l->pos;
		int kline = l->line;
		while (l->s[l->pos] && l->s[l->pos] != '=' && l->s[l->pos] != '\n' &&
		       !strchr(",[]{}#", l->s[l->pos]))
			l->pos++;
		if (l->s[l->pos] != '=') {
			l->line = kline;
			return fail(l, "expected 'Parameter name = value' in %s %s", b->type, b->name);
		}
		size_t k1 = l->pos;
		while (k1 > k0 && isspace((unsigned char)l->s[k1 - 1]))
			k1--;
		if (k1 == k0)
			return fail(l, "expected a parameter name before '='");
		l->pos++;
		struct dsp_param *p = realloc(b->param, (b->nparam + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		b->param = p;
		p = &b->param[b->nparam];
		memset(p, 0, sizeof(*p));
		p->key = strndup(l->s + k0, k1 - k0);
		if (!p->key)
			return -ENOMEM;
		b->nparam++;
		int rc = value(l, &p->v);
		if (rc)
			return rc;
		c = peek(l);
		if (c == ',')
			l->pos++;
		else if (c != '}')
			return fail(l, "expected ',' or '}' after the value of '%s'", p->key);
	}
}

/* Skip a balanced [ ... ] (the topology). */
static int skip_brackets(struct lex *l)
{
	int depth = 0;
	if (peek(l) != '[')
		return fail(l, "expected '[' after topology TYPE NAME");
	for (;;) {
		char c = peek(l);
		if (!c)
			return fail(l, "expected ']' to close the topology, found the end of the file");
		l->pos++;
		if (c == '[')
			depth++;
		else if (c == ']' && --depth == 0)
			return 0;
	}
}

static int top(struct lex *l, struct dsp_block **only)
{
	for (;;) {
		if (!peek(l))
			return 0;
		int line = l->line;
		char *w = word(l);
		if (!w)
			return fail(l, "expected a block (TYPE NAME { ... }), source, instantiate or"
				    " topology, found '%c'", l->s[l->pos]);
		int rc = 0;
		if (!strcmp(w, "source")) {
			char *name;
			free(w);
			if ((rc = source_name(l, &name)))
				return rc;
			rc = parse_file(l, name, l->out, l->err, l->errlen, l->depth + 1, NULL);
			free(name);
			if (rc)
				return rc;
			continue;
		}
		if (!strcmp(w, "instantiate")) {
			free(w);
			if (peek(l) != '[')
				return fail(l, "expected 'instantiate [ NAME, ... ] as TYPE'");
			l->pos++;
			char *names[64];
			size_t n = 0;
			while (peek(l) != ']') {
				char *nm = word(l);
				if (!nm || n == 64) {
					free(nm);
					while (n)
						free(names[--n]);
					return fail(l, "expected 'instantiate [ NAME, ... ] as TYPE'");
				}
				names[n++] = nm;
				if (peek(l) == ',')
					l->pos++;
			}
			l->pos++;
			char *as = word(l), *type = as && !strcmp(as, "as") ? word(l) : NULL;
			free(as);
			if (!type) {
				while (n)
					free(names[--n]);
				return fail(l, "expected 'as TYPE' after instantiate [ ... ]");
			}
			for (size_t i = 0; i < n && !rc; i++) {
				rc = push_ptr((void ***)&l->out->inst_name, &l->out->ninst, names[i]);
				l->out->ninst--;
				rc = rc ? rc : push_ptr((void ***)&l->out->inst_type, &l->out->ninst,
							strdup(type));
			}
			free(type);
			if (rc)
				return rc;
			continue;
		}
		if (!strcmp(w, "topology")) {
			free(w);
			char *t = word(l), *n = t ? word(l) : NULL;
			free(t);
			free(n);
			if (!n)
				return fail(l, "expected 'topology TYPE NAME [ ... ]'");
			if ((rc = skip_brackets(l)))
				return rc;
			continue;
		}
		char *name = word(l);
		if (!name || peek(l) != '{') {
			free(w);
			free(name);
			l->line = line;
			return fail(l, "expected a block (TYPE NAME { ... }), source, instantiate or"
				    " topology");
		}
		l->pos++;
		struct dsp_block *b = calloc(1, sizeof(*b));
		if (!b) {
			free(w);
			free(name);
			return -ENOMEM;
		}
		b->type = w;
		b->name = name;
		b->file = l->file;
		b->line = line;
		if ((rc = push_ptr((void ***)&l->out->block, &l->out->nblock, b))) {
			free(w);
			free(name);
			free(b);
			return rc;
		}
		if ((rc = block_body(l, b)))
			return rc;
		if (only && !*only)
			*only = b;
	}
}

/* name relative to the directory of the including file, as DiskSim runs from it. */
static int parse_file(struct lex *parent, const char *name, struct dsp_file *out, char *err,
		      size_t errlen, int depth, struct dsp_block **only)
{
	char path[1024];
	if (depth > DSP_MAX_DEPTH) {
		if (parent)
			return fail(parent, "'source %s': includes nested more than %d deep", name,
				    DSP_MAX_DEPTH);
		return -EINVAL;
	}
	const char *slash = parent ? strrchr(parent->file, '/') : NULL;
	if (name[0] != '/' && slash)
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - parent->file), parent->file, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	char sub[1200] = "";
	char *text = read_text(path, sub, sizeof(sub));
	if (!text) {
		if (parent)
			return fail(parent, "source %s: %s", name, sub);
		snprintf(err, errlen, "%s", sub);
		return -ENOENT;
	}
	char *keep = strdup(path);
	if (!keep || push_ptr((void ***)&out->files, &out->nfiles, keep)) {
		free(keep);
		free(text);
		return -ENOMEM;
	}
	struct lex l = { .file = keep, .s = text, .line = 1, .out = out, .err = err,
			 .errlen = errlen, .depth = depth };
	if (only)
		*only = NULL;
	int rc = top(&l, only);
	free(text);
	return rc;
}

int dsp_load(const char *path, struct dsp_file *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	int rc = parse_file(NULL, path, out, err, errlen, 0, NULL);
	if (rc == -ENOMEM && err && !err[0])
		snprintf(err, errlen, "%s: out of memory", path);
	if (rc)
		dsp_free(out);
	return rc;
}

static void free_block(struct dsp_block *b);

static void free_val(struct dsp_val *v)
{
	free(v->word);
	for (size_t i = 0; i < v->nitem; i++)
		free_val(&v->item[i]);
	free(v->item);
	if (v->block && !v->block->name[0])
		free_block(v->block); /* anonymous: owned here; a sourced block is top-level */
}

static void free_block(struct dsp_block *b)
{
	for (size_t i = 0; i < b->nparam; i++) {
		free(b->param[i].key);
		free_val(&b->param[i].v);
	}
	free(b->param);
	free(b->type);
	free(b->name);
	free(b);
}

void dsp_free(struct dsp_file *f)
{
	for (size_t i = 0; i < f->nblock; i++)
		free_block(f->block[i]);
	free(f->block);
	for (size_t i = 0; i < f->ninst; i++) {
		free(f->inst_name[i]);
		free(f->inst_type[i]);
	}
	free(f->inst_name);
	free(f->inst_type);
	for (size_t i = 0; i < f->nfiles; i++)
		free(f->files[i]);
	free(f->files);
	memset(f, 0, sizeof(*f));
}

struct dsp_param *dsp_get(struct dsp_block *b, const char *key)
{
	for (size_t i = 0; i < b->nparam; i++)
		if (!strcmp(b->param[i].key, key)) {
			b->param[i].used = 1;
			return &b->param[i];
		}
	return NULL;
}
