/* tf_fio: fio's iolog, versions 2 and 3 (fio's HOWTO, "Trace file format").
 *   fio version 2 iolog            fio version 3 iolog
 *   FILE add|open|close            US FILE add|open|close
 *   FILE read|write|sync|datasync|trim|wait OFFSET LENGTH
 *                                  US FILE read|write|sync|datasync|trim OFFSET LENGTH
 * Files are numbered in the order they are added (dev). v3's US is the issue
 * time from the start in microseconds: fio 3.33 writes them so (a 200 ms
 * thinktime shows as 200000) and waits that many microseconds on replay; the
 * HOWTO names no unit. v2's "wait" delays by OFFSET microseconds (the HOWTO's
 * word), so later requests start that much later. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/trace/tf_int.h"

#define TF_FIO_MAX_FILES 256

struct fio_files {
	char *name[TF_FIO_MAX_FILES];
	unsigned n;
};

static int file_index(const struct fio_files *fs, const char *name)
{
	for (unsigned i = 0; i < fs->n; i++)
		if (!strcmp(fs->name[i], name))
			return (int)i;
	return -1;
}

static int op_of(const char *act, uint8_t *op)
{
	static const struct { const char *name; uint8_t op; } ops[] = {
		{ "read", TRACEFILE_READ },  { "write", TRACEFILE_WRITE }, { "sync", TRACEFILE_SYNC },
		{ "datasync", TRACEFILE_SYNC }, { "trim", TRACEFILE_TRIM },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(act, ops[i].name)) {
			*op = ops[i].op;
			return 0;
		}
	return -EINVAL;
}

static int file_action(const char *act)
{
	return !strcmp(act, "add") || !strcmp(act, "open") || !strcmp(act, "close");
}

static int tf_parse_fio(const char *path, FILE *f, int version, struct tracefile *out, char *err, size_t errlen)
{
	struct tf_reader r = { .f = f, .path = path };
	struct fio_files fs = { 0 };
	uint64_t now_ns = 0; /* v2: the sum of the waits so far */
	int ret = 0;
	long n;

	while ((n = tf_getline(&r)) >= 0 && !*tf_skip(r.line))
		;
	if (n < 0 || (strncmp(r.line, "fio version 2 iolog", 19) && strncmp(r.line, "fio version 3 iolog", 19))) {
		ret = n < 0 ? (snprintf(err, errlen, "%s: empty (no requests)", path), -EINVAL)
			    : tf_err(&r, err, errlen, "expected \"fio version 2 iolog\" or \"fio version 3 iolog\"");
		goto out;
	}
	version = r.line[12] - '0'; /* the header says which, whatever was asked */
	out->fmt = version == 3 ? TRACEFILE_FIO3 : TRACEFILE_FIO2;
	const char *form = version == 3 ? "US FILE ACTION [OFFSET LENGTH]" : "FILE ACTION [OFFSET LENGTH]";
	while (!ret && tf_getline(&r) >= 0) {
		const char *p = r.line;
		char name[256], act[32];
		uint64_t us = 0, off, len;
		if (!*tf_skip(p))
			continue;
		if (version == 3 && tf_u64(&p, &us)) {
			ret = tf_err(&r, err, errlen, "expected a timestamp in microseconds first (%s)", form);
			break;
		}
		if (tf_word(&p, name, sizeof(name)) || tf_word(&p, act, sizeof(act))) {
			ret = tf_err(&r, err, errlen, "expected %s", form);
			break;
		}
		if (file_action(act)) {
			if (*tf_skip(p)) {
				ret = tf_err(&r, err, errlen, "\"%s\" takes no offset or length (%s)", act, form);
				break;
			}
			if (!strcmp(act, "add") && file_index(&fs, name) < 0) {
				if (fs.n == TF_FIO_MAX_FILES) {
					ret = tf_err(&r, err, errlen, "more than %d files", TF_FIO_MAX_FILES);
					break;
				}
				if (!(fs.name[fs.n] = strdup(name))) {
					ret = -ENOMEM;
					snprintf(err, errlen, "out of memory");
					break;
				}
				fs.n++;
			} else if (strcmp(act, "add") && file_index(&fs, name) < 0) {
				ret = tf_err(&r, err, errlen, "%s: file \"%s\" was not added first", act, name);
			}
			continue;
		}
		struct tracefile_rec rec = { .service_ns = -1 };
		if (tf_u64(&p, &off) || tf_u64(&p, &len) || *tf_skip(p)) {
			ret = tf_err(&r, err, errlen, "expected OFFSET LENGTH after \"%s\" (%s)", act, form);
			break;
		}
		if (version == 2 && !strcmp(act, "wait")) {
			now_ns += off * 1000;
			continue;
		}
		if (op_of(act, &rec.op)) {
			ret = tf_err(&r, err, errlen, "unknown action \"%s\": expected read, write, sync, datasync, "
				     "trim%s, add, open or close", act, version == 2 ? ", wait" : "");
			break;
		}
		int fi = file_index(&fs, name);
		if (fi < 0) {
			ret = tf_err(&r, err, errlen, "file \"%s\" was not added first (\"%s add\")", name, name);
			break;
		}
		if ((rec.op == TRACEFILE_READ || rec.op == TRACEFILE_WRITE) && len == 0) {
			ret = tf_err(&r, err, errlen, "a %s of 0 bytes", act);
			break;
		}
		if (len > UINT64_MAX - off || us > UINT64_MAX / 1000) {
			ret = tf_err(&r, err, errlen, "offset, length or time out of range");
			break;
		}
		rec.dev = (uint32_t)fi;
		rec.off = off;
		rec.len = len;
		rec.t_ns = version == 3 ? us * 1000 : now_ns;
		if ((ret = tf_push(out, &r, &rec)))
			snprintf(err, errlen, "out of memory");
	}
out:
	for (unsigned i = 0; i < fs.n; i++)
		free(fs.name[i]);
	tf_reader_free(&r);
	return ret;
}

static int looks_fio2(const char *line)
{
	return !strncmp(line, "fio version 2 iolog", 19);
}

static int looks_fio3(const char *line)
{
	return !strncmp(line, "fio version 3 iolog", 19);
}

static int parse_fio2(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen)
{
	return tf_parse_fio(path, f, 2, out, err, errlen);
}

static int parse_fio3(const char *path, FILE *f, struct tracefile *out, char *err, size_t errlen)
{
	return tf_parse_fio(path, f, 3, out, err, errlen);
}

const struct tf_format tf_format_fio2 = {
	.fmt = TRACEFILE_FIO2, .name = "fio2", .looks = looks_fio2, .parse = parse_fio2,
};
const struct tf_format tf_format_fio3 = {
	.fmt = TRACEFILE_FIO3, .name = "fio3", .looks = looks_fio3, .parse = parse_fio3,
};
