/* cmd: the fsvol CLI's subcommands and their option tables. The tables
 * drive the parser, --help (synopsis included), the man page and the bash
 * completion, so none of them can drift from what the parser accepts. */
#ifndef FSVOL_CMD_H
#define FSVOL_CMD_H

#include <stdint.h>
#include <stdio.h>

/* Exit statuses, the same for every command (README "Exit codes"). */
enum { CMD_EXIT_OK = 0, CMD_EXIT_FAIL = 1, CMD_EXIT_USAGE = 2 };

/* cmd_opt.flags */
#define CMD_OPT_REQUIRED 1u /* shown without brackets in the synopsis */

struct cmd_opt {
	const char *lname; /* long name, without -- */
	int sname;         /* short letter, or 0 */
	const char *arg;   /* argument name, NULL for a flag */
	const char *help;
	unsigned flags;    /* CMD_OPT_* */
	const char *values; /* words the completion offers for the argument, space-separated */
	const char *alias;  /* another long name for it (mdadm's --parity beside --layout), or NULL */
	int salias;         /* another short letter (fsvol's -s beside mdadm's -z), or 0 */
};

struct cmd {
	const char *name;
	const char *operands; /* synopsis after the options ("MNT MEMBER..."); forms split by '\n' */
	const char *usage;    /* old hand-written synopsis: only its operands are used, when
			       * .operands is NULL (the bracketed "[-x ...]" groups are dropped) */
	const char *summary;
	const char *more;     /* optional notes after the options, in --help and the man page */
	const struct cmd_opt *opts; /* terminated by an all-zero entry */
	int (*run)(const struct cmd *c, int argc, char **argv);
};

/* Parse argv with c->opts; calls on(i, arg, ctx) for option i (index in the
 * table). Prints usage for --help (returns 1) and an error naming the option
 * for bad input (returns -1). On 0, *first is the first operand. */
int cmd_parse(const struct cmd *c, int argc, char **argv, int *first,
	      int (*on)(int i, const char *arg, void *ctx), void *ctx);
void cmd_usage(const struct cmd *c, FILE *f);
/* s's words printed from column col (the cursor's), wrapped at 80 columns and
 * continued at column indent, then a newline. */
void cmd_put_wrapped(FILE *f, const char *s, size_t col, size_t indent);
/* The operands part of the synopsis, one form per line (see struct cmd). */
void cmd_operands(const struct cmd *c, char *out, size_t len);
/* Print "fsvol NAME: message" to stderr; returns CMD_EXIT_FAIL (1): the
 * command was well formed but could not be done. */
int cmd_err(const struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a usage error (a wrong operand, a missing option); returns
 * CMD_EXIT_USAGE (2). */
int cmd_uerr(const struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a size option value; prints an error naming the option. */
int cmd_size(const struct cmd *c, const char *opt, const char *s, uint64_t *out);
/* The same for the sizes mdadm takes in KiB (--chunk, --size, --bitmap-chunk,
 * --data-offset): a bare number is KiB, as mdadm's parse_size reads it. */
int cmd_size_kib(const struct cmd *c, const char *opt, const char *s, uint64_t *out);
/* What the user wrote and what it was read as, for messages: "64 (64K: a bare
 * number is KiB)" for a bare number, else "64K". */
void cmd_size_said(const char *s, uint64_t v, char *out, size_t len);
/* An option's names joined by sep: "-z, -s, --size" (sep ", "), "-z | -s |
 * --size" (" | "). */
void cmd_opt_names(const struct cmd_opt *o, const char *sep, char *out, size_t len);

extern const struct cmd cmd_create, cmd_examine, cmd_mount, cmd_umount, cmd_status, cmd_map,
	cmd_layout, cmd_model, cmd_stat, cmd_trace, cmd_scrub, cmd_fail, cmd_add, cmd_readd, cmd_remove,
	cmd_detail, cmd_ctl, cmd_serve, cmd_replace, cmd_monitor, cmd_grow, cmd_stop, cmd_convert;

/* Write one command to MNT/ctl (or a serve's DIR/ctl). 0, or -errno with the
 * reason in reason: the daemon's own words for a refused command (EINVAL),
 * else the error. */
int cmd_ctl_send(const char *mnt, const char *command, char *reason, size_t len);

/* cmd_mnt.c. A member operand made absolute (URIs and mem: as they are),
 * in buf when it had to change; the same for n of them (malloc'd, NULL on
 * ENOMEM; free with cmd_free_paths). */
const char *cmd_abs_path(const char *a, char *buf, size_t len);
char **cmd_abs_paths(char *const *in, unsigned n);
void cmd_free_paths(char **p, unsigned n);
/* cmd_samefile.c: 1 when member arguments a and b name one member, whatever
 * the spelling (the same file or device; for a file yet to be created, the
 * same name in the same resolved directory; URIs and mem: as spelt). */
int cmd_same_file(const char *a, const char *b);
/* fn(ctx, dir) for every fsvol FUSE mount in /proc/self/mounts, its mount
 * point unescaped, until fn returns non-zero: that value, 0, or -errno. */
int cmd_fsvol_mounts(int (*fn)(void *ctx, const char *dir), void *ctx);
/* Is mnt an fsvol FUSE mount (/proc/self/mounts)? */
int cmd_is_fsvol_mount(const char *mnt);
/* What errno e on path, a file of mnt, means in words: a dead daemon, not
 * an fsvol mount, or path and strerror. */
void cmd_mnt_problem(const char *mnt, const char *path, int e, char *out, size_t len);
/* 0 when mnt is an fsvol mount with a live daemon; else prints why, returns 1. */
int cmd_mnt_check(const struct cmd *c, const char *mnt);
/* MNT/status.json (a serve's DIR rewritten first) read into a tree: 0 and
 * *out (free with stats_json_free), or -errno with why in words (-EINVAL:
 * not JSON, the byte named). */
struct stats_json;
int cmd_status_json(const char *mnt, struct stats_json **out, char *why, size_t len);

/* cmd_ctldir.c: the --ctl-dir of fsvol serve where a mount is taken. Is dir
 * one (DIR/ctl a FIFO)? */
int cmd_is_ctl_dir(const char *dir);
/* One command through DIR/ctl, its outcome read back from DIR/ctl.log: as
 * cmd_ctl_send (0, or -errno with the daemon's reason). */
int cmd_ctl_dir_send(const char *dir, const char *command, char *reason, size_t len);
/* Ask the server to rewrite DIR's files now, and wait until it has: 0, or
 * -errno (no server: the files are its last). */
int cmd_ctl_dir_refresh(const char *dir);
/* Stop the server (its volume closed clean), waiting up to timeout s for it
 * to end; the exit status. */
int cmd_ctl_dir_stop(const struct cmd *c, const char *dir, long timeout);

/* cmd_newmember.c: a member file named to add (add, grow --add, replace
 * --with) made when missing (or empty), at the size of the volume's members,
 * as create makes its own; one too small refused in human units. 0, or 1
 * after a message; *made says what was done: the caller removes a file it
 * MADE should the add be refused, and says so (cmd_new_member_note) once
 * it is done. */
enum { CMD_MEMBER_AS_IS = 0, CMD_MEMBER_MADE = 1, CMD_MEMBER_SIZED = 2 };
int cmd_new_member(const struct cmd *c, const char *mnt, const char *path, int *made);
void cmd_new_member_note(const char *mnt, const char *path, int made);

/* cmd_scan.c. One member's superblock (a file or block device): 0, or
 * -errno with a message naming the path. */
struct sb;
int cmd_read_sb(const char *path, struct sb *s, char *err, size_t len);
/* Every fsvol member under paths (files, block devices, directories walked
 * without following links, depth levels down, -1 all): fn(path, superblock,
 * ctx) each; the count. */
typedef void (*cmd_scan_fn)(const char *path, const struct sb *s, void *ctx);
unsigned cmd_scan(char *const *paths, unsigned n, int depth, cmd_scan_fn fn, void *ctx);

/* cmd_degraded.c. Members (absolute paths) that would start a volume
 * degraded, against superblocks that record them active: prints why and
 * returns 1 (mdadm --assemble without --run), else 0. */
int cmd_degraded_refuse(const struct cmd *c, char **members, unsigned n);
/* "starting degraded: m1 missing, m2 failed" on stderr, when it is; and
 * when the volume was not shut down cleanly, that it resyncs (progress in
 * the file status names). */
struct vol;
void cmd_degraded_note(const struct cmd *c, const struct vol *v, const char *status);

/* The commands, in the order --help lists them (main.c), NULL-terminated. */
extern const struct cmd *const cmd_all[];

/* trace_record.c: `fsvol trace --record FILE`: MNT's volume requests as a
 * fio iolog v3, until COUNT requests (0: no limit), DURATION seconds (0: no
 * limit) or a signal. Returns the exit status. */
int cmd_trace_record(const struct cmd *c, const char *mnt, const char *file, long count, double duration);

/* cmd_doc.c: fsvol(8) in roff, and a bash completion script, from the tables. */
void cmd_man(FILE *f, const char *version);
void cmd_bash_completion(FILE *f);

#endif
