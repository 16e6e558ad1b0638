/* size: byte counts with K, M, G, T suffixes (powers of 1024). */
#ifndef FSVOL_SIZE_H
#define FSVOL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "64K", "1M", "2g", "0x1000". 0, or -EINVAL (garbage) / -ERANGE (overflow). */
int size_parse(const char *s, uint64_t *out);
/* The shortest exact form: 65536 -> "64K", 1000 -> "1000". */
void size_format(uint64_t bytes, char *out, size_t len);

#endif
