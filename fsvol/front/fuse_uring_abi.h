/* fuse_uring_abi: the few FUSE-over-io_uring definitions fsvol needs.
 *
 * They come from the Linux kernel's include/uapi/linux/fuse.h (protocol 7.42,
 * Linux 6.14 and later; Documentation/filesystems/fuse-io-uring.rst), which
 * Debian 12's kernel headers (6.1) and libfuse 3.14 do not carry yet. Names
 * keep the kernel's, with an FU_ prefix, so they cannot clash once the system
 * headers catch up.
 */
#ifndef FSVOL_FUSE_URING_ABI_H
#define FSVOL_FUSE_URING_ABI_H

#include <stdint.h>

#define FU_FUSE_INIT 26                      /* opcode FUSE_INIT */
#define FU_FUSE_INIT_EXT (1u << 30)          /* init flags: flags2 is valid */
#define FU_FUSE_OVER_IO_URING_FLAGS2 (1u << 9) /* FUSE_OVER_IO_URING (1ULL << 41) in flags2 */

/* struct fuse_in_header and struct fuse_out_header */
struct fu_in_header {
	uint32_t len;
	uint32_t opcode;
	uint64_t unique;
	uint64_t nodeid;
	uint32_t uid, gid, pid;
	uint16_t total_extlen;
	uint16_t padding;
};

struct fu_out_header {
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

/* The leading fields of struct fuse_init_in / fuse_init_out (7.36+). */
struct fu_init_in {
	uint32_t major, minor, max_readahead, flags;
	uint32_t flags2;
};

struct fu_init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write, time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2;
};

#define FU_URING_IN_OUT_HEADER_SZ 128
#define FU_URING_OP_IN_OUT_SZ 128

/* struct fuse_uring_ent_in_out */
struct fu_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;   /* the request's unique: what COMMIT_AND_FETCH names */
	uint32_t payload_sz;  /* bytes in the payload buffer (both ways) */
	uint32_t padding;
	uint64_t reserved;
};

/* struct fuse_uring_req_header: iov[0] of a ring entry (288 bytes) */
struct fu_uring_req_header {
	char in_out[FU_URING_IN_OUT_HEADER_SZ]; /* fuse_in_header in, fuse_out_header out */
	char op_in[FU_URING_OP_IN_OUT_SZ];      /* the opcode's own header (fuse_read_in, ...) */
	struct fu_uring_ent_in_out ring_ent_in_out;
};

/* enum fuse_uring_cmd: sqe->cmd_op of an IORING_OP_URING_CMD on /dev/fuse */
enum { FU_IO_URING_CMD_REGISTER = 1, FU_IO_URING_CMD_COMMIT_AND_FETCH = 2 };

/* struct fuse_uring_cmd_req: in the SQE's command area (an SQE128 ring) */
struct fu_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct fu_in_header) == 40, "fuse_in_header is 40 bytes");
_Static_assert(sizeof(struct fu_out_header) == 16, "fuse_out_header is 16 bytes");
_Static_assert(sizeof(struct fu_uring_req_header) == 288, "fuse_uring_req_header is 288 bytes");
_Static_assert(sizeof(struct fu_uring_cmd_req) == 24, "fuse_uring_cmd_req is 24 bytes");

#endif
