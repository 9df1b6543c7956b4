/* IEEE 754 binary16 ("half", NumPy's f2) to and from float, inline because
 * the MACKO and dense-matrix loops call them per element. Every half is
 * exactly representable as a float, so half_to_float is exact; the other
 * way rounds to nearest, ties to even, overflows to infinity, keeps
 * subnormals, and keeps NaN payloads the way NumPy does (so that
 * half -> float -> half is the identity on all 65536 bit patterns). */
#ifndef SPKIT_HALF_H
#define SPKIT_HALF_H

#include <stdint.h>
#include <string.h>

#define HALF_SIGN 0x8000u
#define HALF_INF 0x7c00u
#define HALF_ABS 0x7fffu

static inline uint32_t half_float_bits_(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	return x;
}

static inline float half_bits_float_(uint32_t x)
{
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

/* +0 and -0. */
static inline int half_is_zero(uint16_t h)
{
	return (h & HALF_ABS) == 0;
}

/* Inf and NaN. */
static inline int half_is_nonfinite(uint16_t h)
{
	return (h & HALF_INF) == HALF_INF;
}

static inline float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & HALF_SIGN) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
	if (exp == 0x1f) /* inf, or NaN with its payload */
		return half_bits_float_(sign | 0x7f800000u | man << 13);
	if (exp != 0) /* normal: rebias 15 -> 127 */
		return half_bits_float_(sign | (exp + 112) << 23 | man << 13);
	/* zero or subnormal: man * 2^-24, exact in float */
	return half_bits_float_(sign | half_float_bits_((float)man * 0x1p-24f));
}

static inline uint16_t half_from_float(float f)
{
	uint32_t x = half_float_bits_(f);
	uint16_t sign = (uint16_t)((x >> 16) & HALF_SIGN);
	uint32_t ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u) {
		/* NaN: keep the top payload bits as NumPy does, but never let
		 * them truncate to an infinity. */
		uint32_t payload = (ax >> 13) & 0x3ffu;
		return (uint16_t)(sign | HALF_INF | (payload ? payload : 1));
	}
	if (ax >= 0x477ff000u) /* 65520 and up (inf included) */
		return (uint16_t)(sign | HALF_INF);
	if (ax < 0x38800000u) {
		/* Below 2^-14, the half subnormals: adding 0.5 puts the float's
		 * last mantissa bit at 2^-24, the subnormal step, so the FPU's
		 * own round-to-nearest-even does the rounding; the result's
		 * mantissa is the half. */
		float r = half_bits_float_(ax) + 0.5f;
		return (uint16_t)(sign | (half_float_bits_(r) - 0x3f000000u));
	}
	/* Normal: rebias, then round the 13 dropped bits to nearest even (adding
	 * 0xfff plus the kept lsb carries exactly when above half, or at half
	 * with an odd lsb; a carry out of the mantissa bumps the exponent, which
	 * is the right answer, up to inf at the top). */
	uint32_t odd = (ax >> 13) & 1;
	ax += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
	return (uint16_t)(sign | ax >> 13);
}

/* A double to half, rounded once, as NumPy's astype(float16) does. Rounding
 * to the nearest float first would round twice: 1 + 2^-11 + 2^-40 would
 * become the tie 1 + 2^-11 and then 1 (even), not 1 + 2^-10. So the float
 * step rounds to odd (an inexact float gets an odd last bit, the one of the
 * two floats around d that has it), which keeps whether d was above or below
 * a half tie: float has 13 more bits than half, round-to-odd needs 2. */
static inline uint16_t half_from_double(double d)
{
	float f = (float)d;
	uint32_t x = half_float_bits_(f);
	if ((double)f != d && d == d && !(x & 1)) {
		double af = f < 0 ? -(double)f : f, ad = d < 0 ? -d : d;
		f = half_bits_float_(af < ad ? x + 1 : x - 1); /* magnitude up or down */
	}
	return half_from_float(f);
}

#endif
