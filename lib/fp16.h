/* IEEE binary16 ("half") bits <-> float, private to the MACKO code until the
 * formats branch's lib/half.h lands and the two are merged.
 *
 * Exact both ways where exactness is possible: every half is a float, so
 * fp16_to_float is exact; fp16_from_float rounds to nearest, ties to even,
 * as the hardware does, through the subnormals (steps of 2^-24) and up to
 * infinity (|x| >= 65520, the midpoint past 65504, rounds to inf). NaNs keep
 * their sign and the top 10 bits of their payload, so every half, signalling
 * NaNs included, comes back bit for bit through float; a float NaN whose top
 * 10 payload bits are zero becomes the quiet NaN 0x7e00 (with its sign) rather
 * than an infinity. */
#ifndef SPKIT_FP16_H
#define SPKIT_FP16_H

#include <stdint.h>
#include <string.h>

#define FP16_SIGN 0x8000u
#define FP16_ABS 0x7fffu
#define FP16_INF 0x7c00u

static inline uint32_t fp16_float_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	return x;
}

static inline float fp16_bits_float(uint32_t x)
{
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

/* +0 and -0: the two halves that MACKO treats as zero. */
static inline int fp16_is_zero(uint16_t h)
{
	return (h & FP16_ABS) == 0;
}

static inline float fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & FP16_SIGN) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
	if (exp == 0x1f) /* inf, nan: payload kept */
		return fp16_bits_float(sign | 0x7f800000u | man << 13);
	if (exp != 0) /* normal: rebias 15 -> 127 */
		return fp16_bits_float(sign | (exp + 112) << 23 | man << 13);
	/* zero or subnormal: man * 2^-24, exact in float */
	return fp16_bits_float(sign | fp16_float_bits((float)man * 0x1p-24f));
}

static inline uint16_t fp16_from_float(float f)
{
	uint32_t x = fp16_float_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & FP16_SIGN);
	uint32_t ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u) { /* nan */
		uint32_t payload = (ax >> 13) & 0x3ffu;
		return (uint16_t)(sign | FP16_INF | (payload ? payload : 0x200u));
	}
	if (ax >= 0x477ff000u) /* >= 65520 (inf included) */
		return (uint16_t)(sign | FP16_INF);
	if (ax < 0x38800000u) {
		/* Below 2^-14, the half subnormals: adding 0.5 puts the float's
		 * last mantissa bit at 2^-24, the subnormal step, so the FPU's
		 * own round-to-nearest-even does the rounding; the result's
		 * mantissa is the half. */
		float r = fp16_bits_float(ax) + 0.5f;
		return (uint16_t)(sign | (fp16_float_bits(r) - 0x3f000000u));
	}
	/* Normal: rebias, then round the 13 dropped bits to nearest even (adding
	 * 0xfff plus the kept lsb carries exactly when above half, or at half
	 * with an odd lsb; a carry out of the mantissa bumps the exponent, which
	 * is the right answer, up to inf at the top). */
	uint32_t odd = (ax >> 13) & 1;
	ax += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
	return (uint16_t)(sign | ax >> 13);
}

#endif
