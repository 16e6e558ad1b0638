/* nbd_handshake: fixed newstyle (OPT_EXPORT_NAME, OPT_GO, OPT_INFO,
 * OPT_LIST, OPT_ABORT; others are answered NBD_REP_ERR_UNSUP) and the
 * export's properties it tells: size, transmission flags, block sizes. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/front/nbd_int.h"

uint64_t nbds_size(const struct nbd_server *s)
{
	return vol_geom(s->v)->capacity;
}

static uint16_t nbds_tflags(const struct nbd_server *s)
{
	uint16_t f = TF_HAS_FLAGS | TF_SEND_FLUSH | TF_CAN_MULTI_CONN;
	if (s->readonly)
		f |= TF_READ_ONLY;
	else
		f |= TF_SEND_FUA | TF_SEND_TRIM | TF_SEND_WRITE_ZEROES;
	if (vol_rotational(s->v)) /* some member carries an emulated hard disk */
		f |= TF_ROTATIONAL;
	return f;
}

/* minimum: a sector; preferred: the chunk on striped levels (a request within
 * one chunk touches one member), else a page; maximum: 32 MiB. */
static void nbds_block_size(const struct nbd_server *s, uint32_t bs[3])
{
	const struct layout_geom *g = vol_geom(s->v);
	bs[0] = 512;
	bs[1] = 4096;
	if (g->level == LAYOUT_RAID0 || g->level == LAYOUT_RAID10 || layout_is_parity(g))
		bs[1] = g->chunk < NBDS_MAX_BLOCK ? (uint32_t)g->chunk : NBDS_MAX_BLOCK;
	bs[2] = NBDS_MAX_BLOCK;
}

/* The server's first words, on a new connection. */
void nbds_greet(struct nbds_conn *c)
{
	unsigned char g[18];
	uint64_t m1 = htobe64(NBD_MAGIC), m2 = htobe64(NBD_IHAVEOPT);
	uint16_t hf = htobe16(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	memcpy(g, &m1, 8);
	memcpy(g + 8, &m2, 8);
	memcpy(g + 16, &hf, 2);
	nbds_send_copy(c, g, sizeof(g));
}

static void nbds_opt_reply(struct nbds_conn *c, uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	unsigned char h[NBD_OPT_REPLY_SIZE];
	void *m = len ? malloc(len) : NULL;
	uint64_t magic = htobe64(NBD_REP_MAGIC);
	uint32_t w[3] = { htobe32(opt), htobe32(type), htobe32(len) };
	memcpy(h, &magic, 8);
	memcpy(h + 8, w, 12);
	pthread_mutex_lock(&c->lock);
	if (len && !m) {
		c->broken = 1;
	} else {
		if (len)
			memcpy(m, data, len);
		nbds_queue(c, &(struct nbds_msg){ .head = h, .hlen = sizeof(h), .p = m, .len = len, .mem = m });
	}
	pthread_mutex_unlock(&c->lock);
}

/* The empty name is the default export (this one), as in nbdkit and qemu-nbd. */
static int nbds_name_ok(const struct nbd_server *s, const unsigned char *name, uint32_t len)
{
	return s->any_name || !len || (len == strlen(s->name) && !memcmp(name, s->name, len));
}

static void nbds_info(struct nbds_conn *c, uint32_t opt, uint16_t type, const void *body, size_t len)
{
	unsigned char b[2 + 4096 + 16];
	uint16_t t = htobe16(type);
	memcpy(b, &t, 2);
	memcpy(b + 2, body, len);
	nbds_opt_reply(c, opt, REP_INFO, b, (uint32_t)(2 + len));
}

void nbds_enter_transmission(struct nbds_conn *c)
{
	c->state = ST_REQ_HDR;
	c->dst = c->hdr;
	c->need = NBD_REQ_SIZE;
	c->have = 0;
}

/* OPT_INFO and OPT_GO: name, then the info types asked for. */
static void nbds_opt_go(struct nbds_conn *c, uint32_t opt, const unsigned char *d, uint32_t len)
{
	struct nbd_server *s = c->s;
	uint32_t nlen;
	uint16_t nreq;
	if (len < 6 || (memcpy(&nlen, d, 4), nlen = be32toh(nlen)) > len - 6 ||
	    (memcpy(&nreq, d + 4 + nlen, 2), nreq = be16toh(nreq), 6u + nlen + 2u * nreq != len)) {
		static const char msg[] = "malformed option";
		nbds_opt_reply(c, opt, REP_ERR_INVALID, msg, sizeof(msg) - 1);
		return;
	}
	if (!nbds_name_ok(s, d + 4, nlen)) {
		char msg[128];
		int n = snprintf(msg, sizeof(msg), "no such export (this server exports '%s')", s->name);
		nbds_opt_reply(c, opt, REP_ERR_UNKNOWN, msg, (uint32_t)(n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1));
		return;
	}
	unsigned char b[12];
	uint64_t size = htobe64(nbds_size(s));
	uint16_t tf = htobe16(nbds_tflags(s));
	memcpy(b, &size, 8);
	memcpy(b + 8, &tf, 2);
	nbds_info(c, opt, INFO_EXPORT, b, 10);
	for (uint16_t i = 0; i < nreq; i++) {
		uint16_t t;
		memcpy(&t, d + 6 + nlen + 2u * i, 2);
		t = be16toh(t);
		if (t == INFO_NAME)
			nbds_info(c, opt, INFO_NAME, s->name, strlen(s->name));
		else if (t == INFO_DESCRIPTION)
			nbds_info(c, opt, INFO_DESCRIPTION, NBDS_DESCRIPTION, sizeof(NBDS_DESCRIPTION) - 1);
	}
	/* the block sizes go out asked or not: a client that ignores them loses nothing */
	uint32_t bs[3];
	nbds_block_size(s, bs);
	for (int i = 0; i < 3; i++)
		bs[i] = htobe32(bs[i]);
	nbds_info(c, opt, INFO_BLOCK_SIZE, bs, 12);
	nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
	if (opt == OPT_GO)
		nbds_enter_transmission(c);
}

static void nbds_opt_export_name(struct nbds_conn *c, const unsigned char *d, uint32_t len)
{
	struct nbd_server *s = c->s;
	if (!nbds_name_ok(s, d, len)) {
		nbds_end(c); /* the protocol has no error reply here */
		return;
	}
	unsigned char b[10 + 124] = { 0 };
	uint64_t size = htobe64(nbds_size(s));
	uint16_t tf = htobe16(nbds_tflags(s));
	memcpy(b, &size, 8);
	memcpy(b + 8, &tf, 2);
	nbds_send_copy(c, b, c->no_zeroes ? 10 : sizeof(b));
	nbds_enter_transmission(c);
}

static void nbds_opt_list(struct nbds_conn *c, uint32_t opt, uint32_t len)
{
	struct nbd_server *s = c->s;
	if (len) {
		nbds_opt_reply(c, opt, REP_ERR_INVALID, NULL, 0);
		return;
	}
	unsigned char b[4 + 4096];
	uint32_t n = (uint32_t)strlen(s->name), bn = htobe32(n);
	memcpy(b, &bn, 4);
	memcpy(b + 4, s->name, n);
	nbds_opt_reply(c, opt, REP_SERVER, b, 4 + n);
	nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
}

static void nbds_opt_header(struct nbds_conn *c)
{
	c->state = ST_OPT_HDR;
	c->dst = c->hdr;
	c->need = NBD_OPT_HDR_SIZE;
	c->have = 0;
}

/* One whole option (header in c->opt/optlen, data in c->optbuf). */
static void nbds_option(struct nbds_conn *c)
{
	const unsigned char *d = c->optbuf;
	uint32_t opt = c->opt, len = c->optlen;
	nbds_opt_header(c);
	switch (opt) {
	case OPT_EXPORT_NAME:
		nbds_opt_export_name(c, d, len);
		break;
	case OPT_ABORT:
		nbds_opt_reply(c, opt, REP_ACK, NULL, 0);
		nbds_end(c);
		break;
	case OPT_LIST:
		nbds_opt_list(c, opt, len);
		break;
	case OPT_INFO:
	case OPT_GO:
		nbds_opt_go(c, opt, d, len);
		break;
	default: /* STARTTLS, STRUCTURED_REPLY, meta contexts, unknown */
		nbds_opt_reply(c, opt, REP_ERR_UNSUP, NULL, 0);
		break;
	}
	free(c->optbuf);
	c->optbuf = NULL;
}

int nbds_handshake_got(struct nbds_conn *c)
{
	switch (c->state) {
	case ST_FLAGS: {
		uint32_t f;
		memcpy(&f, c->hdr, 4);
		f = be32toh(f);
		if (f & ~(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES))
			return -1; /* the spec: unknown client flags end the handshake */
		c->no_zeroes = !!(f & NBD_FLAG_NO_ZEROES);
		nbds_opt_header(c);
		return 0;
	}
	case ST_OPT_HDR: {
		uint64_t magic;
		memcpy(&magic, c->hdr, 8);
		memcpy(&c->opt, c->hdr + 8, 4);
		memcpy(&c->optlen, c->hdr + 12, 4);
		c->opt = be32toh(c->opt);
		c->optlen = be32toh(c->optlen);
		if (be64toh(magic) != NBD_IHAVEOPT || c->optlen > NBDS_MAX_OPTION)
			return -1;
		c->optbuf = malloc(c->optlen + 1);
		if (!c->optbuf)
			return -1;
		if (!c->optlen) {
			nbds_option(c);
			return 0;
		}
		c->state = ST_OPT_DATA;
		c->dst = c->optbuf;
		c->need = c->optlen;
		c->have = 0;
		return 0;
	}
	case ST_OPT_DATA:
		nbds_option(c);
		return 0;
	default:
		return -1;
	}
}
