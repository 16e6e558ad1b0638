/* slurp: read(2) until the end, the buffer doubled as it fills (a FUSE file's
 * size in stat is not to be trusted: MNT/status.json is rendered on open). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fsvol/util/slurp.h"

int slurp_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
	size_t cap = 1 << 16, n = 0;
	char *b = NULL;
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!b || n + 1 >= cap) {
			char *nb = realloc(b, b ? (cap *= 2) : cap);
			if (!nb) {
				e = -ENOMEM;
				break;
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (e) {
		free(b);
		return e;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}
