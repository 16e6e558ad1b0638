/* cmd_json: a small JSON reader for documents the daemon writes (status.json). */
#ifndef FSVOL_CMD_JSON_H
#define FSVOL_CMD_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cmd_json_type { CMD_JSON_NULL, CMD_JSON_BOOL, CMD_JSON_NUM, CMD_JSON_STR, CMD_JSON_ARR, CMD_JSON_OBJ };

struct cmd_json {
	enum cmd_json_type t;
	double num;       /* CMD_JSON_NUM, CMD_JSON_BOOL (0/1) */
	uint64_t u64;     /* CMD_JSON_NUM as an unsigned integer */
	char *str;        /* CMD_JSON_STR */
	struct cmd_json *kids;  /* CMD_JSON_ARR, CMD_JSON_OBJ: n values */
	char **keys;      /* CMD_JSON_OBJ: their keys (NULL entries in an array) */
	size_t n;
};

/* The whole of buf as one value, or NULL (malformed, out of memory). */
struct cmd_json *cmd_json_parse(const char *buf, size_t len);
/* A file read and parsed; NULL with *err an errno (EBADMSG: not JSON). */
struct cmd_json *cmd_json_read_file(const char *path, int *err);
void cmd_json_free(struct cmd_json *v);
void cmd_json_free_value(struct cmd_json *v);
/* Object members by key; NULL / dflt when absent or of another type. */
const struct cmd_json *cmd_json_get(const struct cmd_json *o, const char *key);
const char *cmd_json_str(const struct cmd_json *o, const char *key);
uint64_t cmd_json_u64(const struct cmd_json *o, const char *key, uint64_t dflt);
double cmd_json_num(const struct cmd_json *o, const char *key, double dflt);

#endif
