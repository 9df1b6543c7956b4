/* half <-> float: exhaustive over every half, and rounding at the edges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/half.h"

static uint32_t float_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	return x;
}

static float bits_float(uint32_t x)
{
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

static void test_round_trip_all_halves(void **state)
{
	for (uint32_t h = 0; h < 65536; h++)
		if (half_from_float(half_to_float((uint16_t)h)) != h)
			fail_msg("half 0x%04x -> %a -> 0x%04x", h, half_to_float((uint16_t)h),
				 half_from_float(half_to_float((uint16_t)h)));
}

static void test_to_float_values(void **state)
{
	assert_true(half_to_float(0x3c00) == 1.0f);
	assert_true(half_to_float(0xc000) == -2.0f);
	assert_true(half_to_float(0x7bff) == 65504.0f);
	assert_true(half_to_float(0x0001) == ldexpf(1, -24));
	assert_true(half_to_float(0x03ff) == ldexpf(1023, -24));
	assert_true(half_to_float(0x0400) == ldexpf(1, -14));
	assert_true(isinf(half_to_float(0x7c00)) && half_to_float(0x7c00) > 0);
	assert_true(isinf(half_to_float(0xfc00)) && half_to_float(0xfc00) < 0);
	assert_true(isnan(half_to_float(0x7e00)));
	assert_int_equal(float_bits(half_to_float(0x8000)), 0x80000000);
	/* Every finite half agrees with exact arithmetic. */
	for (uint32_t h = 0; h < 0x7c00; h++) {
		int e = h >> 10, m = h & 0x3ff;
		float want = e ? ldexpf(1024 + m, e - 25) : ldexpf(m, -24);
		assert_true(half_to_float((uint16_t)h) == want);
	}
}

/* Between two adjacent finite halves, the float midpoint (exact, since a
 * half has 11 significant bits) goes to the even one, and the floats just
 * beside it go to the nearer one. Likewise the doubles just beside it, which
 * are not floats: through the nearest float they would land on the tie. */
static void test_rounding_exhaustive(void **state)
{
	for (uint32_t h = 0; h < 0x7bff; h++) {
		float lo = half_to_float((uint16_t)h), hi = half_to_float((uint16_t)(h + 1));
		float mid = (lo + hi) / 2;
		uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
		assert_int_equal(half_from_float(mid), even);
		assert_int_equal(half_from_float(nextafterf(mid, 0)), h);
		assert_int_equal(half_from_float(nextafterf(mid, INFINITY)), h + 1);
		assert_int_equal(half_from_float(-mid), even | 0x8000);
		assert_int_equal(half_from_double(mid), even);
		assert_int_equal(half_from_double(nextafter(mid, 0)), h);
		assert_int_equal(half_from_double(nextafter(mid, INFINITY)), h + 1);
		assert_int_equal(half_from_double(-nextafter(mid, INFINITY)), (h + 1) | 0x8000);
	}
}

/* From double, rounded once, as NumPy does. */
static void test_from_double_edges(void **state)
{
	assert_int_equal(half_from_double(1 + ldexp(1, -11) + ldexp(1, -40)), 0x3c01);
	assert_int_equal(half_from_double(ldexp(1, -25) + ldexp(1, -60)), 0x0001);
	assert_int_equal(half_from_double(nextafter(65520.0, 0)), 0x7bff);
	assert_int_equal(half_from_double(65520.0), 0x7c00);
	assert_int_equal(half_from_double(1e300), 0x7c00);
	assert_int_equal(half_from_double(-1e300), 0xfc00);
	assert_int_equal(half_from_double(1e-300), 0x0000);
	assert_int_equal(half_from_double(-1e-300), 0x8000);
	assert_int_equal(half_from_double(-0.0), 0x8000);
	assert_int_equal(half_from_double(INFINITY), 0x7c00);
	assert_int_equal(half_from_double(NAN) & 0x7e00, 0x7e00);
}

static void test_from_float_edges(void **state)
{
	assert_int_equal(half_from_float(1.0f + ldexpf(1, -11)), 0x3c00); /* tie to even */
	assert_int_equal(half_from_float(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
	assert_int_equal(half_from_float(65504.0f), 0x7bff);
	assert_int_equal(half_from_float(nextafterf(65520.0f, 0)), 0x7bff);
	assert_int_equal(half_from_float(65520.0f), 0x7c00); /* overflow by rounding */
	assert_int_equal(half_from_float(1e10f), 0x7c00);
	assert_int_equal(half_from_float(-1e10f), 0xfc00);
	assert_int_equal(half_from_float(INFINITY), 0x7c00);
	assert_int_equal(half_from_float(-INFINITY), 0xfc00);
	assert_int_equal(half_from_float(NAN) & 0x7e00, 0x7e00);
	/* A payload only in the low bits is lost, but the result stays a NaN. */
	assert_int_equal(half_from_float(bits_float(0x7f800001)), 0x7c01);
	assert_int_equal(half_from_float(ldexpf(1, -24)), 0x0001);
	assert_int_equal(half_from_float(ldexpf(1, -25)), 0x0000); /* tie to even zero */
	assert_int_equal(half_from_float(nextafterf(ldexpf(1, -25), 1)), 0x0001);
	assert_int_equal(half_from_float(ldexpf(3, -26)), 0x0001);
	assert_int_equal(half_from_float(ldexpf(3, -25)), 0x0002); /* 1.5 ulp ties to even 2 */
	assert_int_equal(half_from_float(ldexpf(1, -30)), 0x0000);
	assert_int_equal(half_from_float(-ldexpf(1, -30)), 0x8000);
	assert_int_equal(half_from_float(ldexpf(1, -14)), 0x0400);
	/* Just below the smallest normal rounds up to it. */
	assert_int_equal(half_from_float(nextafterf(ldexpf(1, -14), 0)), 0x0400);
	assert_int_equal(half_from_float(bits_float(0x00000001)), 0x0000); /* float subnormal */
	assert_int_equal(half_from_float(-0.0f), 0x8000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_all_halves),
		cmocka_unit_test(test_to_float_values),
		cmocka_unit_test(test_rounding_exhaustive),
		cmocka_unit_test(test_from_double_edges),
		cmocka_unit_test(test_from_float_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
