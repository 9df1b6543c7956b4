/* bfloat16 (the top half of an IEEE binary32) to and from float, inline
 * because the CPU references convert per element. Rounding to bfloat16
 * rounds the dropped 16 bits to nearest, ties to even, as PyTorch and the
 * GPU's __float2bfloat16 do; NaN stays NaN. */
#ifndef SPKIT_BF16_H
#define SPKIT_BF16_H

#include <stdint.h>
#include <string.h>

static inline float bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static inline uint16_t bf16_from_float(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, sizeof bits);
	if ((bits & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
		return (uint16_t)(bits >> 16 | 0x40);
	bits += 0x7fffu + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

#endif
