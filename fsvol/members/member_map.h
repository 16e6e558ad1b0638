/* member_map: a tmpfs member's reads and writes as copies to and from a
 * shared mapping.
 *
 * On tmpfs a member read is a copy from the page cache either way; preadv
 * adds a syscall and a page-cache lookup per page (xas_load,
 * filemap_get_entry: a third of the daemon's CPU per 4K read in perf).
 * Copying from a MAP_SHARED mapping of the file skips both (measured through
 * FUSE over io_uring, a single volume, 4K random reads: +22-30% IOPS, a
 * quarter less daemon CPU per read); a write to pages that hold data is a
 * copy into it the same way.
 *
 * Two things a mapping does that preadv does not, and how they are kept out:
 * - A read fault on a tmpfs hole allocates the page (preadv reads a hole as
 *   zeros and allocates nothing), so reading a sparse member would fill the
 *   tmpfs. Only pages known to hold data are read through the mapping: a
 *   bitmap, filled from SEEK_DATA at open and set by every write that
 *   completes, cleared before a hole is punched. Anything else goes to preadv.
 * - A file shrunk under the mapping by someone else raises SIGBUS. The copy
 *   runs under a guard that turns the signal into -EIO (the member then
 *   fails as a short read would fail it) and the mapping is not used again;
 *   a SIGBUS outside a guarded copy goes to the handler that was there before.
 */
#ifndef FSVOL_MEMBER_MAP_H
#define FSVOL_MEMBER_MAP_H

#include <stdint.h>
#include <sys/uio.h>

struct member_map;

/* Map fd's first size bytes, or leave *out NULL where a mapping would not
 * pay (too large for its bitmap, mmap refused): the caller reads as before. */
void member_map_open(struct member_map **out, int fd, uint64_t size);
void member_map_close(struct member_map *mm);
/* Copy [off, off + the iovecs' length) into iov. Returns 1 when done, 0 when
 * the caller must read it itself (a page not known to hold data, beyond the
 * mapping, no mapping), -EIO when the file shrank under the mapping. */
int member_map_read(struct member_map *mm, const struct iovec *iov, unsigned niov, uint64_t off, uint64_t len);
/* The same, into the mapping: only where every page holds data already (a
 * write into a hole goes to pwritev, which can say ENOSPC where a store into
 * the mapping would raise SIGBUS). */
int member_map_write(struct member_map *mm, const struct iovec *iov, unsigned niov, uint64_t off, uint64_t len);
/* A write of [off, off + len) completed: those pages hold data. */
void member_map_written(struct member_map *mm, uint64_t off, uint64_t len);
/* [off, off + len) is about to become a hole. */
void member_map_punched(struct member_map *mm, uint64_t off, uint64_t len);

#endif
