/* json: the one JSON reader of fsvol (RFC 8259), for the documents the daemon
 * writes and the tools read back (MNT/stats.json, MNT/status.json): the whole
 * text into a tree, looked up by key. In stats/, the lowest folder, so the
 * CLI, the bench and the tests share it.
 *   strings  escapes decoded to UTF-8, surrogate pairs joined; a lone
 *            surrogate, \u0000 (strings are C strings) and raw control bytes
 *            refused; other bytes kept as they are (file names are bytes, and
 *            stats_json_string writes them so)
 *   numbers  every one as a double; an integer (no fraction, no exponent)
 *            also exact as int64 and/or uint64 when it fits
 *   limits   nesting at most STATS_JSON_MAX_DEPTH; never reads past the end
 *   errors   "byte N: what", N the offset in the text */
#ifndef FSVOL_STATS_JSON_H
#define FSVOL_STATS_JSON_H

#include <stddef.h>
#include <stdint.h>

#define STATS_JSON_MAX_DEPTH 32

enum stats_json_type {
	STATS_JSON_NULL,
	STATS_JSON_BOOL,
	STATS_JSON_NUM,
	STATS_JSON_STR,
	STATS_JSON_ARR,
	STATS_JSON_OBJ,
};

/* stats_json.fits: which exact integer forms a number has */
#define STATS_JSON_I64 1u /* an integer within int64: i64 */
#define STATS_JSON_U64 2u /* a non-negative integer within uint64: u64 */

struct stats_json {
	enum stats_json_type t;
	int b;                    /* BOOL */
	unsigned fits;            /* NUM: STATS_JSON_I64 | STATS_JSON_U64, or 0 */
	double num;               /* NUM */
	int64_t i64;              /* NUM with STATS_JSON_I64 */
	uint64_t u64;             /* NUM with STATS_JSON_U64 */
	char *str;                /* STR: NUL-terminated, no NUL inside */
	struct stats_json *kids;  /* ARR, OBJ: n values in document order */
	char **keys;              /* OBJ: their keys */
	size_t n;
	size_t off;               /* where the value starts in the text (for messages) */
};

/* The whole of buf as one value (whitespace around it allowed): 0 and *out
 * (free with stats_json_free); -EINVAL with "byte N: ..." in err; -ENOMEM. */
int stats_json_read(const char *buf, size_t len, struct stats_json **out, char *err, size_t errlen);
void stats_json_free(struct stats_json *v);

/* An object's member by key (the first, should a key repeat); NULL when o is
 * no object or has no such key. */
const struct stats_json *stats_json_get(const struct stats_json *o, const char *key);
/* The same, typed: NULL / dflt when absent or of another type (a number
 * that is not an exact integer of that type counts as another type). */
const char *stats_json_str(const struct stats_json *o, const char *key);
uint64_t stats_json_u64(const struct stats_json *o, const char *key, uint64_t dflt);
int64_t stats_json_i64(const struct stats_json *o, const char *key, int64_t dflt);
double stats_json_num(const struct stats_json *o, const char *key, double dflt);
int stats_json_bool(const struct stats_json *o, const char *key, int dflt);

#endif
