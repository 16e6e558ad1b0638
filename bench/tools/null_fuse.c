/* null_fuse: the FUSE path's own ceiling. One file, MNT/file, whose every read
 * is answered with zeros at once (no storage behind it), served with the
 * same loop settings as fsvol's mount (clone_fd, 2 workers per CPU,
 * max_background 4096, 1 MiB requests) over /dev/fuse or FUSE over io_uring
 * (fsvol's front/fuse_uring.c). make bench measures fsvol against it.
 * Given FROM, a file of at least SIZE_MIB, every read is answered with FROM's
 * bytes at the read's offset instead, copied from a mapping: the one copy any
 * server that returns stored data makes, and nothing else.
 *
 *   null_fuse dev|uring MNT [SIZE_MIB [FROM]]   (foreground; SIGTERM or umount ends it)
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsvol/front/fuse_uring.h"

static uint64_t null_size;
static char *null_zeros; /* 1 MiB of zeros, the answer to every read */
static const char *null_from; /* or FROM's bytes, mapped (NULL: zeros) */

static void null_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ino == 1 ? S_IFDIR | 0755 : S_IFREG | 0644;
	st->st_nlink = ino == 1 ? 2 : 1;
	st->st_size = ino == 1 ? 0 : (off_t)null_size;
}

static void null_init(void *ud, struct fuse_conn_info *c)
{
	(void)ud;
	c->max_write = c->max_readahead = 1u << 20;
	c->max_background = 4096;
	c->congestion_threshold = 3072;
	if (c->capable & FUSE_CAP_ASYNC_DIO)
		c->want |= FUSE_CAP_ASYNC_DIO;
	c->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .ino = 2, .attr_timeout = 1, .entry_timeout = 1 };
	if (parent != 1 || strcmp(name, "file")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	null_stat(2, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	(void)fi;
	null_stat(ino, &st);
	fuse_reply_attr(req, &st, 1);
}

static void null_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void null_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	if (off < 0 || (uint64_t)off >= null_size)
		size = 0;
	else if (size > null_size - (uint64_t)off)
		size = null_size - (uint64_t)off;
	size = size > (1u << 20) ? 1u << 20 : size;
	fuse_reply_buf(req, null_from && size ? null_from + off : null_zeros, size);
}

/* FROM mapped whole and populated, so a read's copy is the only cost */
static int null_map(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "null_fuse: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if ((uint64_t)st.st_size < null_size) {
		fprintf(stderr, "null_fuse: %s: %lld bytes, shorter than the file's %llu MiB\n", path,
			(long long)st.st_size, (unsigned long long)(null_size >> 20));
		close(fd);
		return 1;
	}
	void *m = mmap(NULL, null_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "null_fuse: %s: mmap: %s\n", path, strerror(e));
		return 1;
	}
	null_from = m;
	return 0;
}

static const struct fuse_lowlevel_ops null_ops = {
	.init = null_init, .lookup = null_lookup, .getattr = null_getattr, .open = null_open, .read = null_read,
};

int main(int argc, char **argv)
{
	int t = argc >= 3 ? fu_transport_parse(argv[1]) : -1;
	if (t < 0 || t == FU_TRANSPORT_AUTO) {
		fprintf(stderr, "usage: null_fuse dev|uring MNT [SIZE_MIB [FROM]]\n");
		return 2;
	}
	null_size = (argc > 3 ? strtoull(argv[3], NULL, 10) : 1024) << 20;
	if (argc > 4 && null_map(argv[4]))
		return 1;
	null_zeros = calloc(1, 1u << 20);
	char *fargv[] = { argv[0], NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, fargv);
	struct fuse_session *se = fuse_session_new(&args, &null_ops, sizeof(null_ops), NULL);
	char err[256];
	if (!se || !null_zeros || fuse_set_signal_handlers(se) || fuse_session_mount(se, argv[2])) {
		fprintf(stderr, "null_fuse: cannot mount on %s\n", argv[2]);
		return 1;
	}
	if (fu_attach(se, t, 0, err, sizeof(err)))
		fprintf(stderr, "null_fuse: %s\n", err);
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	fuse_loop_cfg_set_clone_fd(cfg, 1);
	fuse_loop_cfg_set_max_threads(cfg, cpus > 0 ? 2 * (unsigned)cpus : 2);
	fuse_loop_cfg_set_idle_threads(cfg, cpus > 0 ? 2 * (unsigned)cpus : 2);
	int r = fuse_session_loop_mt(se, cfg);
	char how[300];
	fu_describe(how, sizeof(how));
	fprintf(stderr, "null_fuse: served through %s\n", how);
	fu_stop();
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	free(null_zeros);
	return r < 0 ? 1 : 0;
}
