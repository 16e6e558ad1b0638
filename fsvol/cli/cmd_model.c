/* fsvol model list | show SPEC: the spindle presets and what a spec implies. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"
#include "fsvol/model/spindle.h"

static const struct cmd_opt model_opts[] = {
	{ "size", 's', "SIZE", "member size the figures assume, on the spec's disk (default: the whole disk; 1G with capacity=member)" },
	{ 0 },
};

static int model_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	uint64_t *size = ctx;
	if (cmd_size(&cmd_model, "--size", arg, size))
		return -1;
	if (*size < 4096) { /* the figures are for 4K reads */
		cmd_err(&cmd_model, "--size %s: must be at least 4K", arg);
		return -1;
	}
	return 0;
}

static int model_run(const struct cmd *c, int argc, char **argv)
{
	uint64_t size = 0; /* not given: the whole disk, or 1G when the member is the disk */
	char err[256];
	struct spindle_params p;
	int first, r = cmd_parse(c, argc, argv, &first, model_opt, &size);
	if (r)
		return r > 0 ? 0 : 2;
	if (first < argc && !strcmp(argv[first], "list") && first + 1 == argc) {
		for (const char *const *n = spindle_presets; *n; n++) {
			if (spindle_parse(*n, &p, err, sizeof(err)))
				return cmd_err(c, "preset %s: %s", *n, err);
			printf("%s:\n", *n);
			spindle_describe(&p, stdout);
			putchar('\n');
		}
		/* adapters: what a disk's transfers share (adapter=NAME, @NAME=PRESET) */
		for (const char *const *n = adapter_presets; *n; n++) {
			struct adapter_params ap;
			char spec[128];
			if (adapter_parse(*n, &ap, err, sizeof(err)))
				return cmd_err(c, "adapter %s: %s", *n, err);
			adapter_format(&ap, spec, sizeof(spec));
			printf("adapter %s: %s\n  %s\n", *n, adapter_help(*n), spec);
		}
		return 0;
	}
	if ((first + 2 == argc || first + 3 == argc) && !strcmp(argv[first], "show")) {
		if (first + 3 == argc && model_opt(0, argv[first + 2], &size))
			return 2;
		if (spindle_parse(argv[first + 1], &p, err, sizeof(err)))
			return cmd_err(c, "%s", err);
		if (!size)
			size = p.capacity_bytes ? p.capacity_bytes : 1ull << 30;
		if (spindle_show(&p, size, stdout, err, sizeof(err)))
			return cmd_err(c, "%s: %s", argv[first + 1], err);
		return 0;
	}
	return cmd_err(c, "expected 'list' or 'show SPEC [SIZE]' (see fsvol model --help)");
}

const struct cmd cmd_model = {
	.name = "model",
	.usage = "list | show SPEC [SIZE | -s SIZE]",
	.summary = "emulated disk models: the presets, and the figures a spec implies",
	.opts = model_opts,
	.run = model_run,
};
