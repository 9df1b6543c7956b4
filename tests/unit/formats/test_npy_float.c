/* Float arrays: the dtype check names the file and the dtype found; the
 * first non-finite element is found in f2, f4 and f8, at the start, in the
 * middle and at the end, and not in an all-finite or empty array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/half.h"
#include "formats/npy_float.h"

static void test_require(void **state)
{
	static const enum npy_dtype floats[] = {NPY_F2, NPY_F4, NPY_F8};
	struct sp_err err;
	for (int i = 0; i < 3; i++) {
		struct npy_array a = {floats[i], npy_dtype_size(floats[i]), 1, {0}, NULL};
		assert_int_equal(npy_float_require(&a, "x.npy", &err), 0);
	}
	struct npy_array a = {NPY_I4, 4, 1, {0}, NULL};
	assert_int_equal(npy_float_require(&a, "x.npy", &err), -1);
	assert_string_equal(err.msg, "x.npy: expected dtype f2, f4 or f8, found i4");
	a = (struct npy_array){NPY_U1, 1, 2, {0}, NULL};
	assert_int_equal(npy_float_require(&a, "y.npy", &err), -1);
	assert_string_equal(err.msg, "y.npy: expected dtype f2, f4 or f8, found u1");
}

/* A 2 x 5 array of dtype dt, all 1 but `bad` at index at (-1: none). */
static int64_t first_in(enum npy_dtype dt, int64_t at, double bad)
{
	union {
		uint16_t f2[10];
		float f4[10];
		double f8[10];
	} u;
	for (int i = 0; i < 10; i++) {
		double v = i == at ? bad : 1;
		if (dt == NPY_F2)
			u.f2[i] = half_from_float((float)v);
		else if (dt == NPY_F4)
			u.f4[i] = (float)v;
		else
			u.f8[i] = v;
	}
	struct npy_array a = {dt, npy_dtype_size(dt), 2, {2, 5}, &u};
	return npy_float_first_nonfinite(&a);
}

static void test_first_nonfinite(void **state)
{
	static const enum npy_dtype floats[] = {NPY_F2, NPY_F4, NPY_F8};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(first_in(floats[i], -1, 0), -1);
		assert_int_equal(first_in(floats[i], 0, NAN), 0);
		assert_int_equal(first_in(floats[i], 6, INFINITY), 6);
		assert_int_equal(first_in(floats[i], 9, -INFINITY), 9);
		/* the largest finite value of each is finite */
		assert_int_equal(first_in(floats[i], 3, floats[i] == NPY_F2 ? 65504 : 3e38), -1);
	}
	/* 1e10 is finite in f8 but was never stored as such in f2 */
	assert_int_equal(first_in(NPY_F8, 4, 1e300), -1);
	struct npy_array empty = {NPY_F4, 4, 2, {0, 7}, NULL};
	assert_int_equal(npy_float_first_nonfinite(&empty), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_require),
		cmocka_unit_test(test_first_nonfinite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
