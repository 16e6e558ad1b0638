/* nbd_launch: run nbdkit with fsvol's plugin (fsvol serve, fsvol mount --nbd). */
#ifndef FSVOL_NBD_LAUNCH_H
#define FSVOL_NBD_LAUNCH_H

#include "fsvol/cli/cmd.h"

#define NBD_LAUNCH_MAX_KV 32

struct nbd_launch {
	const char *addr;       /* unix:PATH or [ADDR:]PORT */
	int readonly;
	int foreground;         /* run nbdkit in place of this process */
	const char *pidfile;
	const char *log;        /* the daemon's messages once it runs in the background */
	const char *kv[NBD_LAUNCH_MAX_KV]; /* plugin key=value words, besides the members */
	unsigned nkv;
	char kvmem[16384];      /* where the words live (nothing to free) */
	size_t kvused;
	char *const *members;
	unsigned nmembers;
};

/* Add "key=value" to l->kv (value NULL: "key=1"). -1 when full. */
int nbd_launch_kv(struct nbd_launch *l, const char *key, const char *value);
/* Check an address: 0, or -1 after printing an error naming it. */
int nbd_launch_check_addr(const struct cmd *c, const char *addr);
/* Start nbdkit; in the background, return once it serves (0) or failed
 * (its messages already on stderr; 1). In the foreground, only on failure. */
int nbd_launch(const struct cmd *c, struct nbd_launch *l);

#endif
