/* dsparam: a reader for DiskSim's parameter files (its libparam syntax):
 *
 *   TYPE NAME { Key words = VALUE, ... }     blocks
 *   source FILE                              includes (also as a VALUE)
 *   instantiate [ NAME, ... ] as TYPE        instances
 *   topology TYPE NAME [ ... ]               the bus tree (kept unparsed)
 *   # comment
 *
 * VALUE: a number, a word, [ VALUE, ... ], TYPE { ... } or source FILE (the
 * block that file holds). Every node remembers its file and line, and each
 * parameter whether a reader used it, so what was ignored can be listed. */
#ifndef FSVOL_DSPARAM_H
#define FSVOL_DSPARAM_H

#include <stddef.h>
#include <stdio.h>

enum dsp_kind { DSP_NUM, DSP_WORD, DSP_LIST, DSP_BLOCK };

struct dsp_block;

struct dsp_val {
	enum dsp_kind kind;
	double num;
	char *word;                /* DSP_WORD (and the text of a DSP_NUM) */
	struct dsp_val *item;      /* DSP_LIST */
	size_t nitem;
	struct dsp_block *block;   /* DSP_BLOCK */
	const char *file;
	int line;
};

struct dsp_param {
	char *key;                 /* "Number of data surfaces" */
	struct dsp_val v;
	int used;
};

struct dsp_block {
	char *type, *name;         /* name is "" for a block given as a value */
	struct dsp_param *param;
	size_t nparam;
	const char *file;
	int line;
};

struct dsp_file {
	struct dsp_block **block;  /* top-level blocks, every file included */
	size_t nblock;
	char **inst_name, **inst_type; /* instantiate [ name ] as type */
	size_t ninst;
	char **files;              /* every path read (nodes point into these) */
	size_t nfiles;
};

/* Read PATH and what it sources. 0, or -errno with "FILE:LINE: what was
 * expected" (or "FILE: strerror") in err. */
int dsp_load(const char *path, struct dsp_file *out, char *err, size_t errlen);
void dsp_free(struct dsp_file *f);

/* The parameter KEY of block b (exact, case-sensitive as DiskSim is), marked
 * used; NULL when absent. */
struct dsp_param *dsp_get(struct dsp_block *b, const char *key);

#endif
