/* fsvol: the command-line tool. One subcommand per cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "fsvol/cli/cmd.h"

#define FSVOL_VERSION "0.1.0"

static const struct cmd *const cmds[] = {
	&cmd_create, &cmd_examine, &cmd_mount, &cmd_umount, &cmd_status, &cmd_map, &cmd_layout, &cmd_model, &cmd_stat, &cmd_trace, &cmd_scrub,
	&cmd_serve,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fsvol COMMAND [OPTIONS] ...\n"
		   "fsvol builds RAID volumes out of member files or devices, maps every\n"
		   "offset onto them and counts I/O above and below the mapping layer.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-9s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(f, "\n'fsvol COMMAND --help' shows a command's options. Sizes take K, M, G, T (powers of 1024).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (!strcmp(argv[2], cmds[i]->name)) {
					cmd_usage(cmds[i], stdout);
					return 0;
				}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("fsvol %s\n", FSVOL_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i]->name))
			return cmds[i]->run(cmds[i], argc - 1, argv + 1);
	fprintf(stderr, "fsvol: unknown command '%s' (see fsvol --help)\n", argv[1]);
	return 2;
}
