/* fsvol: the command-line tool. One subcommand per cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"
#include "fsvol/util/version.h"

const struct cmd *const cmd_all[] = {
	&cmd_create, &cmd_convert, &cmd_examine, &cmd_mount, &cmd_umount, &cmd_stop, &cmd_status, &cmd_map, &cmd_layout, &cmd_model, &cmd_stat, &cmd_trace, &cmd_scrub,
	&cmd_fail, &cmd_add, &cmd_readd, &cmd_remove, &cmd_replace, &cmd_grow, &cmd_detail, &cmd_monitor, &cmd_ctl, &cmd_serve, NULL,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fsvol COMMAND [OPTIONS] ...\n"
		   "fsvol builds RAID volumes out of member files or devices, maps every\n"
		   "offset onto them and counts I/O above and below the mapping layer.\n\ncommands:\n");
	for (const struct cmd *const *c = cmd_all; *c; c++) {
		fprintf(f, "  %-9s ", (*c)->name);
		cmd_put_wrapped(f, (*c)->summary, 12, 12);
	}
	fprintf(f, "\n'fsvol COMMAND --help' shows a command's options. Where a command takes\n"
		   "a mount point MNT, the --ctl-dir DIR of fsvol serve does as well.\n"
		   "Sizes take K, M, G, T (powers of 1024); a bare number is bytes, but KiB\n"
		   "for mdadm's --chunk, --size, --bitmap-chunk, --data-offset (-c64 is 64K).\n"
		   "Exit status: 0 done, 1 failed, 2 usage error.\n"
		   "'fsvol --man' prints the manual page.\n");
}

static const struct cmd *find(const char *name)
{
	for (const struct cmd *const *c = cmd_all; *c; c++)
		if (!strcmp(name, (*c)->name))
			return *c;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	if (argc < 2) {
		usage(stderr);
		return CMD_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2) {
			if (!(c = find(argv[2]))) {
				fprintf(stderr, "fsvol: unknown command '%s' (see fsvol --help)\n", argv[2]);
				return CMD_EXIT_USAGE;
			}
			cmd_usage(c, stdout);
			return CMD_EXIT_OK;
		}
		usage(stdout);
		return CMD_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		version_print(stdout, "fsvol");
		return CMD_EXIT_OK;
	}
	/* generated documents (the Makefile installs them) */
	if (!strcmp(argv[1], "--man") || !strcmp(argv[1], "--bash-completion")) {
		if (argc > 2) {
			fprintf(stderr, "fsvol: %s takes no arguments\n", argv[1]);
			return CMD_EXIT_USAGE;
		}
		if (argv[1][2] == 'm')
			cmd_man(stdout, FSVOL_VERSION);
		else
			cmd_bash_completion(stdout);
		return fflush(stdout) ? CMD_EXIT_FAIL : CMD_EXIT_OK;
	}
	if ((c = find(argv[1])))
		return c->run(c, argc - 1, argv + 1);
	fprintf(stderr, "fsvol: unknown command '%s' (see fsvol --help)\n", argv[1]);
	return CMD_EXIT_USAGE;
}
