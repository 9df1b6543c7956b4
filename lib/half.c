#include "half.h"

#include <string.h>

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0x1f) {
		bits = sign | 0x7f800000 | man << 13; /* inf, or NaN with its payload */
	} else if (exp) {
		bits = sign | (exp + 112) << 23 | man << 13; /* rebias 15 -> 127 */
	} else if (man) {
		/* Subnormal half, normal float: shift the leading 1 up to the
		 * implicit bit, lowering the exponent as we go. */
		uint32_t e = 113;
		while (!(man & 0x400)) {
			man <<= 1;
			e--;
		}
		bits = sign | e << 23 | (man & 0x3ff) << 13;
	} else {
		bits = sign;
	}
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

/* Round m >> shift to nearest, ties to even. */
static uint32_t shift_round(uint32_t m, int shift)
{
	uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	return q + (rem > half || (rem == half && (q & 1)));
}

uint16_t half_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint16_t sign = (x >> 16) & 0x8000;
	uint32_t mag = x & 0x7fffffff;
	if (mag > 0x7f800000) {
		/* NaN: keep the top payload bits, as NumPy does, but never let
		 * them round away to an infinity. */
		uint16_t payload = (mag >> 13) & 0x3ff;
		return sign | 0x7c00 | (payload ? payload : 1);
	}
	if (mag >= 0x477ff000) /* 65520 and up round to infinity */
		return sign | 0x7c00;
	if (mag >= 0x38800000) {
		/* Normal half. Rebias the exponent (127 -> 15) and round the
		 * mantissa; a carry out of the mantissa bumps the exponent,
		 * which is the correct result. */
		return sign | shift_round(mag - 0x38000000, 13);
	}
	if (mag < 0x33000000) /* below 2^-25: rounds to zero (2^-25 itself ties to 0) */
		return sign;
	/* Subnormal half: value / 2^-24, rounded. A result of 0x400 is the
	 * smallest normal, which is again the correct encoding. */
	uint32_t exp = mag >> 23, man = (mag & 0x7fffff) | 0x800000;
	return sign | shift_round(man, 126 - (int)exp);
}
