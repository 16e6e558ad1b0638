/* crc32c: the CRC32C API, its dispatch and the portable kernel (slice-by-8);
 * the x86 kernels are in crc32c_x86.c (sse4.2, pclmul, avx512+vpclmulqdq). */
#include "fsvol/util/crc32c.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fsvol/util/crc32c_int.h"

#define POLY_REFLECTED 0x82f63b78u
#define POLY_NORMAL 0x1edc6f41u /* the same polynomial, x^31 at bit 31 (x^32 implied) */

uint64_t crc32c_fold[CRC32C_FOLDS][2];

/* Slice-by-8: tab[k][b] is the CRC of byte b followed by k zero bytes. */
static uint32_t tab[8][256];

/* slowest first: the last one the CPU runs is the default */
static const struct crc32c_impl *const impls[] = {
	&crc32c_impl_portable,
#ifdef CRC32C_X86
	&crc32c_impl_sse42,
	&crc32c_impl_pclmul,
	&crc32c_impl_vpclmul,
#endif
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* the set in use; read relaxed on every call (crc32c_isa_select may swap it) */
static const struct crc32c_impl *impl;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* a * b mod P, x^i at bit i */
static uint32_t mulmod(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 31; i >= 0; i--) {
		r = (r << 1) ^ ((r >> 31) ? POLY_NORMAL : 0);
		if (b >> i & 1)
			r ^= a;
	}
	return r;
}

/* x^n mod P by squaring */
static uint32_t xpow_mod(unsigned n)
{
	uint32_t r = 1, sq = 2; /* x^(2^k) */

	for (; n; n >>= 1, sq = mulmod(sq, sq))
		if (n & 1)
			r = mulmod(r, sq);
	return r;
}

/* x^i at bit 63 - i, as PCLMULQDQ's reflected operands want */
static uint64_t reflect_high(uint32_t v)
{
	uint64_t r = 0;

	for (unsigned i = 0; i < 32; i++)
		if (v >> i & 1)
			r |= 1ull << (63 - i);
	return r;
}

void crc32c_fold_pair(size_t bytes, uint64_t k[2])
{
	k[0] = reflect_high(xpow_mod((unsigned)(8 * bytes + 63)));
	k[1] = reflect_high(xpow_mod((unsigned)(8 * bytes - 1)));
}

static void tables_init(void)
{
	for (unsigned b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY_REFLECTED & -(c & 1u));
		tab[0][b] = c;
	}
	for (unsigned b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++)
			tab[k][b] = (tab[k - 1][b] >> 8) ^ tab[0][tab[k - 1][b] & 0xff];
	for (unsigned i = 0; i < CRC32C_FOLDS; i++)
		crc32c_fold_pair(16 * (i + 1), crc32c_fold[i]);
}

static const struct crc32c_impl *find_impl(const char *name)
{
	for (size_t i = 0; name && i < NIMPLS; i++)
		if (strcmp(impls[i]->name, name) == 0)
			return impls[i];
	return NULL;
}

static void crc32c_init(void)
{
	const struct crc32c_impl *want = find_impl(getenv("FSVOL_CRC32C_ISA"));

	tables_init();
	impl = &crc32c_impl_portable;
	for (size_t i = 0; i < NIMPLS; i++)
		if (impls[i]->usable()) {
			if (impls[i]->init)
				impls[i]->init();
			impl = impls[i];
		}
	if (want && want->usable())
		impl = want;
}

static inline const struct crc32c_impl *cur(void)
{
	pthread_once(&init_once, crc32c_init);
	return __atomic_load_n(&impl, __ATOMIC_RELAXED);
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	return cur()->fn(crc, buf, len);
}

const char *crc32c_isa(void)
{
	return cur()->name;
}

const char *crc32c_isa_name(unsigned i)
{
	return i < NIMPLS ? impls[i]->name : NULL;
}

int crc32c_isa_usable(const char *name)
{
	const struct crc32c_impl *p = find_impl(name);

	if (!p)
		return -EINVAL;
	return p->usable() ? 1 : 0;
}

int crc32c_isa_select(const char *name)
{
	const struct crc32c_impl *p = find_impl(name);

	if (!p)
		return -EINVAL;
	if (!p->usable())
		return -ENOTSUP;
	(void)cur();
	__atomic_store_n(&impl, p, __ATOMIC_RELAXED);
	return 0;
}

/* ---- portable: slice-by-8 ---- */

static bool portable_usable(void)
{
	return true;
}

static uint32_t crc_portable(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len >= 8) {
		/* the low word is folded into the running CRC, the high word is not */
		uint32_t lo = ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			       (uint32_t)p[3] << 24) ^ crc;

		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^ tab[5][(lo >> 16) & 0xff] ^
		      tab[4][lo >> 24] ^ tab[3][p[4]] ^ tab[2][p[5]] ^ tab[1][p[6]] ^ tab[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

const struct crc32c_impl crc32c_impl_portable = {
	.name = "portable",
	.usable = portable_usable,
	.fn = crc_portable,
};
