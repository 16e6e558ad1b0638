/* cmd_json: a small JSON reader for documents the daemon writes (status.json). */
#ifndef FSVOL_CMD_JSON_H
#define FSVOL_CMD_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cj_type { CJ_NULL, CJ_BOOL, CJ_NUM, CJ_STR, CJ_ARR, CJ_OBJ };

struct cj {
	enum cj_type t;
	double num;       /* CJ_NUM, CJ_BOOL (0/1) */
	uint64_t u64;     /* CJ_NUM as an unsigned integer */
	char *str;        /* CJ_STR */
	struct cj *kids;  /* CJ_ARR, CJ_OBJ: n values */
	char **keys;      /* CJ_OBJ: their keys (NULL entries in an array) */
	size_t n;
};

/* The whole of buf as one value, or NULL (malformed, out of memory). */
struct cj *cj_parse(const char *buf, size_t len);
/* A file read and parsed; NULL with *err an errno (EBADMSG: not JSON). */
struct cj *cj_read_file(const char *path, int *err);
void cj_free(struct cj *v);
void cj_free_value(struct cj *v);
/* Object members by key; NULL / dflt when absent or of another type. */
const struct cj *cj_get(const struct cj *o, const char *key);
const char *cj_str(const struct cj *o, const char *key);
uint64_t cj_u64(const struct cj *o, const char *key, uint64_t dflt);
double cj_num(const struct cj *o, const char *key, double dflt);

#endif
