/* cmd: the fsvol CLI's subcommands and their option tables. The tables
 * drive both the parser and --help, so usage text cannot drift. */
#ifndef FSVOL_CMD_H
#define FSVOL_CMD_H

#include <stdint.h>
#include <stdio.h>

struct cmd_opt {
	const char *lname; /* long name, without -- */
	int sname;         /* short letter, or 0 */
	const char *arg;   /* argument name, NULL for a flag */
	const char *help;
};

struct cmd {
	const char *name;
	const char *usage;   /* after "fsvol NAME " */
	const char *summary;
	const struct cmd_opt *opts; /* terminated by an all-zero entry */
	int (*run)(const struct cmd *c, int argc, char **argv);
};

/* Parse argv with c->opts; calls on(i, arg, ctx) for option i (index in the
 * table). Prints usage for --help (returns 1) and an error naming the option
 * for bad input (returns -1). On 0, *first is the first operand. */
int cmd_parse(const struct cmd *c, int argc, char **argv, int *first,
	      int (*on)(int i, const char *arg, void *ctx), void *ctx);
void cmd_usage(const struct cmd *c, FILE *f);
/* Print "fsvol NAME: message" to stderr; returns 1 (the exit status). */
int cmd_err(const struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a size option value; prints an error naming the option. */
int cmd_size(const struct cmd *c, const char *opt, const char *s, uint64_t *out);

extern const struct cmd cmd_create, cmd_examine, cmd_mount, cmd_umount, cmd_status, cmd_map,
	cmd_layout, cmd_model, cmd_stat, cmd_trace, cmd_scrub, cmd_serve;

#endif
