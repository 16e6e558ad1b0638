/* fsvol model list | show SPEC [SIZE] | validate --model SPEC TRACE: the spindle
 * presets, what a spec implies, and a drive model against a measured trace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/size.h"
#include "fsvol/model/spindle.h"
#include "fsvol/model/validate.h"
#include "fsvol/trace/tracefile.h"

static const struct cmd_opt model_opts[] = {
	{ "size", 's', "SIZE", "member size the figures assume, on the spec's disk (default: the whole disk; 1G with capacity=member; also the operand SIZE)" },
	{ "model", 'm', "SPEC", "validate: the drive (a preset spec, or disksim:PATH.parv)" },
	{ "out", 'o', "FILE", "validate: write 'measured_us emulated_us' per request, in trace order" },
	{ 0 },
};

struct model_ctx {
	uint64_t size;
	const char *model, *out;
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
	struct model_ctx *m = ctx;
	if (i == 1)
		m->model = arg;
	else if (i == 2)
		m->out = arg;
	else
		return model_size("--size", arg, &m->size);
	return 0;
}

/* Requests of t that end past byte `end`. */
static size_t past_count(const struct tracefile *t, uint64_t end)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->rec[i].off + t->rec[i].len > end;
	return n;
}

/* fsvol model validate: DiskSim's validation run and its rms, on our model. */
static int model_validate(const struct cmd *c, const struct model_ctx *m, const char *path)
{
	char err[512];
	struct spindle_params p;
	struct tracefile t = { 0 };
	if (!m->model)
		return cmd_uerr(c, "validate: --model SPEC is required");
	if (spindle_parse(m->model, &p, err, sizeof(err)))
		return cmd_uerr(c, "%s", err);
	if (p.kind != SPINDLE_HDD)
		return cmd_uerr(c, "validate: %s is not a disk drive model", m->model);
	FILE *f = fopen(path, "r");
	if (!f)
		return cmd_err(c, "%s: %s", path, strerror(errno));
	int rc = tracefile_parse_valid(path, f, &t, err, sizeof(err));
	fclose(f);
	if (rc)
		return cmd_err(c, "%s", err);
	uint64_t *emul = calloc(t.n, sizeof(*emul));
	unsigned char *hit = calloc(t.n ? t.n : 1, 1);
	double *a = calloc(t.n, sizeof(*a)), *b = calloc(t.n, sizeof(*b));
	if (!emul || !a || !b || !hit) {
		rc = cmd_err(c, "out of memory");
		goto out;
	}
	if ((rc = validate_run_hits(&p, &t, emul, hit, err, sizeof(err)))) {
		rc = cmd_err(c, "%s: %s", path, err);
		goto out;
	}
	for (size_t i = 0; i < t.n; i++) {
		a[i] = (double)t.rec[i].service_ns / 1e6;
		b[i] = (double)emul[i] / 1e6;
	}
	if (m->out) {
		FILE *o = fopen(m->out, "w");
		if (!o) {
			rc = cmd_err(c, "%s: %s", m->out, strerror(errno));
			goto out;
		}
		for (size_t i = 0; i < t.n; i++)
			fprintf(o, "%.3f %.3f\n", (double)t.rec[i].service_ns / 1e3, (double)emul[i] / 1e3);
		if (fclose(o)) {
			rc = cmd_err(c, "%s: %s", m->out, strerror(errno));
			goto out;
		}
	}
	double mean[2], p50[2], p90[2], rms = validate_rms(a, t.n, b, t.n);
	if (validate_summary(a, t.n, &mean[0], &p50[0], &p90[0]) ||
	    validate_summary(b, t.n, &mean[1], &p50[1], &p90[1])) {
		rc = cmd_err(c, "out of memory");
		goto out;
	}
	printf("%zu requests, service time (ms):\n", t.n);
	printf("  %-9s %8s %8s %8s\n", "", "mean", "p50", "p90");
	printf("  %-9s %8.3f %8.3f %8.3f\n", "measured", mean[0], p50[0], p90[0]);
	printf("  %-9s %8.3f %8.3f %8.3f\n", "emulated", mean[1], p50[1], p90[1]);
	if (p.tab && p.tab->file_blocks && p.tab->file_blocks != p.tab->blocks)
		printf("capacity: %llu blocks from the zones (as DiskSim counts them; the file's"
		       " Block count says %llu); %zu requests end past the Block count\n",
		       (unsigned long long)p.tab->blocks, (unsigned long long)p.tab->file_blocks,
		       past_count(&t, p.tab->file_blocks * 512));
	uint64_t *naive = calloc(t.n ? t.n : 1, sizeof(*naive));
	if (!naive) {
		rc = cmd_err(c, "out of memory");
		goto out;
	}
	validate_naive(&p, &t, naive);
	for (size_t i = 0; i < t.n; i++)
		b[i] = (double)naive[i] / 1e6;
	free(naive);
	printf("naive model (mean seek + half a turn + transfer): rms = %.6f\n",
	       validate_rms(a, t.n, b, t.n));
	unsigned char *cls = malloc(t.n ? t.n : 1);
	if (cls) {
		validate_classify(&p, &t, hit, cls);
		for (size_t i = 0; i < t.n; i++) /* the model's figures again */
			b[i] = (double)emul[i] / 1e6;
		validate_classes(stdout, cls, a, b, t.n);
		free(cls);
	}
	printf("rms = %.6f\n", rms);
	rc = 0;
out:
	free(hit);
	free(emul);
	free(a);
	free(b);
	tracefile_free(&t);
	return rc;
}

static int model_run(const struct cmd *c, int argc, char **argv)
{
	struct model_ctx m = { 0 }; /* size 0: the whole disk, or 1G when the member is the disk */
	char err[256];
	struct spindle_params p;
	int first, r = cmd_parse(c, argc, argv, &first, model_opt, &m);
	uint64_t size = m.size;
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
	if (nops == 2 && !strcmp(argv[first], "validate"))
		return model_validate(c, &m, argv[first + 1]);
	return cmd_uerr(c, "expected 'list', 'show SPEC [SIZE]' or 'validate --model SPEC TRACE'"
			" (see fsvol model --help)");
}

const struct cmd cmd_model = {
	.name = "model",
	.operands = "list\nshow SPEC [SIZE]\nvalidate --model SPEC TRACE",
	.summary = "emulated disk models: presets, what a spec implies, validation",
	.more = "SPEC is a preset (hdd, hdd-legacy, ssd, nvme, none) with optional key=value changes: "
		"PRESET:key=val,... (fsvol model list shows every key). SIZE (or -s) is the member size "
		"the figures assume: a small member uses a few cylinders of the disk. validate replays a "
		"DiskSim validation trace (R|W Hit|Miss blkno bcount service_us next_us) on one drive "
		"of SPEC in virtual time, one request outstanding, and prints the mean, p50 and p90 "
		"service times (measured and emulated) and rms = X: the RMS horizontal distance in ms "
		"between the two service-time distributions, as DiskSim's rms tool computes it "
		"(docs/validation.md).",
	.opts = model_opts,
	.run = model_run,
};
