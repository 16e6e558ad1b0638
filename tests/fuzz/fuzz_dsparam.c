/* fuzz_dsparam: DiskSim parameter files through dsp_load (libparam syntax).
 *
 *   the input is the file's bytes (written to a memfd, loaded by its /proc path).
 *
 * Properties: a load either fails naming a file (an error that starts with the
 * path of the file at fault, with ":LINE:" for a syntax error) and keeps
 * nothing, or every block, parameter and value it returns is well formed. */
#include <sys/mman.h>
#include <unistd.h>

#include "fsvol/model/dsparam.h"
#include "tests/fuzz/fuzz.h"

static void check_block(const struct dsp_block *b, int depth);

static void check_val(const struct dsp_val *v, int depth)
{
	FUZZ_ASSERT(depth < 64);
	FUZZ_ASSERT(v->file && v->line >= 1);
	switch (v->kind) {
	case DSP_NUM:
	case DSP_WORD:
		FUZZ_ASSERT(v->word && *v->word);
		break;
	case DSP_LIST:
		FUZZ_ASSERT(v->nitem == 0 || v->item);
		for (size_t i = 0; i < v->nitem; i++)
			check_val(&v->item[i], depth + 1);
		break;
	case DSP_BLOCK:
		FUZZ_ASSERT(v->block);
		check_block(v->block, depth + 1);
		break;
	default:
		FUZZ_ASSERT(0);
	}
}

static void check_block(const struct dsp_block *b, int depth)
{
	FUZZ_ASSERT(b->type && *b->type && b->name && b->file && b->line >= 1);
	for (size_t i = 0; i < b->nparam; i++) {
		FUZZ_ASSERT(b->param[i].key && *b->param[i].key);
		FUZZ_ASSERT(!strchr(b->param[i].key, '='));
		check_val(&b->param[i].v, depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz_dsparam", 0);
		FUZZ_ASSERT(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FUZZ_ASSERT(ftruncate(fd, 0) == 0);
	FUZZ_ASSERT(pwrite(fd, data, size, 0) == (ssize_t)size);
	struct dsp_file f;
	char err[512];
	int r = dsp_load(path, &f, err, sizeof(err));
	if (r) {
		FUZZ_ASSERT(r < 0);
		FUZZ_ASSERT(!strncmp(err, "/proc/self/fd/", 14)); /* this file or one it sources */
		FUZZ_ASSERT(f.nblock == 0 && f.block == NULL && f.nfiles == 0);
		return 0;
	}
	FUZZ_ASSERT(f.nfiles >= 1);
	for (size_t i = 0; i < f.nblock; i++)
		check_block(f.block[i], 0);
	for (size_t i = 0; i < f.ninst; i++)
		FUZZ_ASSERT(f.inst_name[i] && f.inst_type[i]);
	dsp_free(&f);
	return 0;
}
