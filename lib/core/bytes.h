/* Little-endian integers in byte buffers, for the binary formats (.npy
 * headers, ZIP records), independent of the host's byte order and of
 * alignment. */
#ifndef SPKIT_BYTES_H
#define SPKIT_BYTES_H

#include <stdint.h>

static inline uint64_t le_load(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint16_t le16(const unsigned char *p)
{
	return (uint16_t)le_load(p, 2);
}

static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le_load(p, 4);
}

static inline uint64_t le64(const unsigned char *p)
{
	return le_load(p, 8);
}

/* Store n bytes of v at p; returns p + n, so records are built in sequence. */
static inline unsigned char *le_store(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	return p + n;
}

#endif
