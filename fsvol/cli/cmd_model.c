/* fsvol model list | show SPEC [SIZE]: the spindle presets and what a spec implies. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"
#include "fsvol/model/spindle.h"

static const struct cmd_opt model_opts[] = {
	{ "size", 's', "SIZE", "member size the figures assume, on the spec's disk (default: the whole disk; 1G with capacity=member; also the operand SIZE)" },
	{ 0 },
};

/* The member size, from -s or the operand SIZE: at least 4K (the figures are
 * for 4K reads). what names it in the message. */
static int model_size(const char *what, const char *arg, uint64_t *size)
{
	if (cmd_size(&cmd_model, what, arg, size))
		return -1;
	if (*size < 4096) {
		cmd_err(&cmd_model, "%s %s: must be at least 4K", what, arg);
		return -1;
	}
	return 0;
}

static int model_opt(int i, const char *arg, void *ctx)
{
	(void)i;
	return model_size("--size", arg, ctx);
}

static int model_run(const struct cmd *c, int argc, char **argv)
{
	uint64_t size = 0; /* not given: the whole disk, or 1G when the member is the disk */
	char err[256];
	struct spindle_params p;
	int first, r = cmd_parse(c, argc, argv, &first, model_opt, &size);
	if (r)
		return r > 0 ? 0 : 2;
	int nops = argc - first;
	if (nops == 1 && !strcmp(argv[first], "list")) {
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
	if ((nops == 2 || nops == 3) && !strcmp(argv[first], "show")) {
		if (nops == 3 && model_size("SIZE", argv[first + 2], &size))
			return CMD_EXIT_USAGE;
		if (spindle_parse(argv[first + 1], &p, err, sizeof(err)))
			return cmd_uerr(c, "%s", err);
		if (!size)
			size = p.capacity_bytes ? p.capacity_bytes : 1ull << 30;
		if (spindle_show(&p, size, stdout, err, sizeof(err)))
			return cmd_err(c, "%s: %s", argv[first + 1], err);
		return 0;
	}
	return cmd_uerr(c, "expected 'list' or 'show SPEC [SIZE]' (see fsvol model --help)");
}

const struct cmd cmd_model = {
	.name = "model",
	.operands = "list\nshow SPEC [SIZE]",
	.summary = "emulated disk models: the presets, and the figures a spec implies",
	.more = "SPEC is a preset (hdd, hdd-legacy, ssd, nvme, none) with optional key=value changes: "
		"PRESET:key=val,... (fsvol model list shows every key). SIZE (or -s) is the member size "
		"the figures assume: a small member uses a few cylinders of the disk.",
	.opts = model_opts,
	.run = model_run,
};
