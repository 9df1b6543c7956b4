/* fp16 conversions against an independent reference: half values from the
 * IEEE formula (ldexp), float -> half by searching the sorted halves for the
 * nearest one (ties to even), all in double, where every half, every float
 * and every midpoint between two halves is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "fp16.h"
#include "rng.h"

/* The value of half bits by the definition; NaN for the NaNs. */
static double half_value(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	double sign = (h & 0x8000) ? -1.0 : 1.0;
	if (exp == 0x1f)
		return man ? NAN : sign * INFINITY;
	if (exp == 0)
		return sign * ldexp(man, -24);
	return sign * ldexp(1024 + man, exp - 25);
}

/* Magnitude of non-negative half bits h in 0..0x7c00, with 0x7c00 standing
 * for 65536, the next step past 65504 (where rounding to inf starts). */
static double step_value(uint16_t h)
{
	return h == 0x7c00 ? 65536.0 : half_value(h);
}

static uint16_t ref_from_float(float f)
{
	if (isnan(f))
		return 0x7e00; /* callers compare NaNs by class, not bits */
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	double a = fabs((double)f);
	if (a >= 65520.0)
		return sign | 0x7c00;
	uint16_t lo = 0, hi = 0x7c00; /* step_value(lo) <= a < step_value(hi) */
	while (hi - lo > 1) {
		uint16_t mid = (uint16_t)((lo + hi) / 2);
		if (step_value(mid) <= a)
			lo = mid;
		else
			hi = mid;
	}
	double below = a - step_value(lo), above = step_value(hi) - a;
	if (below < above || (below == above && (lo & 1) == 0))
		return sign | lo;
	return sign | hi;
}

static void test_fp16_to_float_all_halves(void **state)
{
	for (uint32_t h = 0; h < 65536; h++) {
		float f = fp16_to_float((uint16_t)h);
		double want = half_value((uint16_t)h);
		if (isnan(want)) {
			assert_true(isnan(f));
			assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0);
		} else {
			assert_true((double)f == want);
			assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0); /* -0 stays -0 */
		}
	}
}

static void test_fp16_round_trip_all_halves(void **state)
{
	for (uint32_t h = 0; h < 65536; h++)
		assert_int_equal(fp16_from_float(fp16_to_float((uint16_t)h)), h);
}

static void check_from_float(float f)
{
	uint16_t got = fp16_from_float(f), want = ref_from_float(f);
	if (isnan(f)) {
		assert_true((got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0);
		assert_int_equal(got & 0x8000, signbit(f) ? 0x8000 : 0);
		return;
	}
	if (got != want)
		fail_msg("%a: got 0x%04x, want 0x%04x", (double)f, got, want);
#ifdef __FLT16_MAX__
	/* And the compiler's own conversion (F16C or libgcc), where it has one. */
	_Float16 hw = (_Float16)f;
	uint16_t hw_bits;
	memcpy(&hw_bits, &hw, sizeof hw_bits);
	assert_int_equal(got, hw_bits);
#endif
}

/* Every rounding decision: each midpoint between neighbouring halves, one
 * float ulp either side of it, and the halves themselves, both signs. */
static void test_fp16_from_float_midpoints(void **state)
{
	for (uint32_t h = 0; h < 0x7c00; h++) {
		float mid = (float)((step_value((uint16_t)h) + step_value((uint16_t)(h + 1))) / 2);
		float probes[] = {fp16_to_float((uint16_t)h), mid, nextafterf(mid, 0.0f),
				  nextafterf(mid, INFINITY)};
		for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
			check_from_float(probes[i]);
			check_from_float(-probes[i]);
		}
	}
	assert_int_equal(fp16_from_float(65519.99f), 0x7bff);
	assert_int_equal(fp16_from_float(65520.0f), 0x7c00);
	assert_int_equal(fp16_from_float(0x1p-25f), 0x0000); /* tie to even: 0 */
	assert_int_equal(fp16_from_float(0x1.8p-24f), 0x0002); /* tie to even: 2 */
	assert_int_equal(fp16_from_float(nextafterf(0x1p-25f, 1.0f)), 0x0001);
	assert_int_equal(fp16_from_float(-1e-30f), 0x8000);
	assert_int_equal(fp16_from_float(-INFINITY), 0xfc00);
	assert_int_equal(fp16_from_float(1e30f), 0x7c00);
}

static void test_fp16_from_float_random(void **state)
{
	struct rng r;
	rng_init(&r, 16, 0);
	for (int i = 0; i < 1000000; i++) {
		uint64_t u = rng_u64(&r);
		check_from_float(fp16_bits_float((uint32_t)u)); /* any bits: all exponents */
		/* and the range halves live in, where the mantissa rounding matters */
		check_from_float((float)ldexp((double)(u >> 40) / (1 << 24), (int)(u % 44) - 28));
	}
}

static void test_fp16_nan(void **state)
{
	assert_int_equal(fp16_from_float(NAN) & 0x7fff, 0x7e00);
	/* a float NaN with only low payload bits must not become inf */
	assert_int_equal(fp16_from_float(fp16_bits_float(0x7f800001u)), 0x7e00);
	assert_int_equal(fp16_from_float(fp16_bits_float(0xff800001u)), 0xfe00);
	assert_int_equal(fp16_from_float(fp16_bits_float(0x7fc02000u)), 0x7e01);
	assert_true(fp16_is_zero(0x0000) && fp16_is_zero(0x8000));
	assert_false(fp16_is_zero(0x0001) || fp16_is_zero(0x7e00) || fp16_is_zero(0xfc00));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp16_to_float_all_halves),
		cmocka_unit_test(test_fp16_round_trip_all_halves),
		cmocka_unit_test(test_fp16_from_float_midpoints),
		cmocka_unit_test(test_fp16_from_float_random),
		cmocka_unit_test(test_fp16_nan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
