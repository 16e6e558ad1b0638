/* nbd_proto: the NBD protocol's numbers, as the server uses them (NBD's
 * doc/proto.md): fixed newstyle handshake, options and their replies,
 * simple replies, commands and transmission flags. No code. */
#ifndef FSVOL_NBD_PROTO_H
#define FSVOL_NBD_PROTO_H

#define NBD_MAGIC 0x4e42444d41474943ull    /* "NBDMAGIC" */
#define NBD_IHAVEOPT 0x49484156454f5054ull /* "IHAVEOPT" */
#define NBD_REP_MAGIC 0x3e889045565a9ull
#define NBD_REQ_MAGIC 0x25609513u
#define NBD_SIMPLE_MAGIC 0x67446698u

/* handshake flags: the server's, then the client's */
#define NBD_FLAG_FIXED_NEWSTYLE 1u
#define NBD_FLAG_NO_ZEROES 2u

/* options, their replies, the info types of OPT_INFO and OPT_GO */
enum { OPT_EXPORT_NAME = 1, OPT_ABORT = 2, OPT_LIST = 3, OPT_INFO = 6, OPT_GO = 7 };
#define REP_ACK 1u
#define REP_SERVER 2u
#define REP_INFO 3u
#define REP_ERR_UNSUP 0x80000001u
#define REP_ERR_INVALID 0x80000003u
#define REP_ERR_UNKNOWN 0x80000006u
enum { INFO_EXPORT = 0, INFO_NAME = 1, INFO_DESCRIPTION = 2, INFO_BLOCK_SIZE = 3 };

/* commands and their flags */
enum { CMD_READ = 0, CMD_WRITE = 1, CMD_DISC = 2, CMD_FLUSH = 3, CMD_TRIM = 4, CMD_WRITE_ZEROES = 6 };
#define CMD_FLAG_FUA 1u
#define CMD_FLAG_NO_HOLE 2u

/* transmission flags */
#define TF_HAS_FLAGS 0x1u
#define TF_READ_ONLY 0x2u
#define TF_SEND_FLUSH 0x4u
#define TF_SEND_FUA 0x8u
#define TF_ROTATIONAL 0x10u
#define TF_SEND_TRIM 0x20u
#define TF_SEND_WRITE_ZEROES 0x40u
#define TF_CAN_MULTI_CONN 0x100u

/* sizes on the wire */
#define NBD_REQ_SIZE 28u      /* a request header */
#define NBD_OPT_HDR_SIZE 16u  /* an option header */
#define NBD_REPLY_SIZE 16u    /* a simple reply header */
#define NBD_OPT_REPLY_SIZE 20u /* an option reply header */

#endif
