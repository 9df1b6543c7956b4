/* The operands of a product from files: x and y_in of every accepted shape
 * and dtype converted, every wrong shape, count and dtype refused with one
 * message naming the file; the first non-finite value of the matrix, of x
 * (in fp16) and of y_in named; y shaped as x is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/half.h"
#include "formats/npy.h"
#include "macko/macko_npz.h"
#include "macko/macko_operands.h"

enum { ROWS = 4, COLS = 30 };

/* NAME (in the scratch folder) as an f8 or i4 .npy of shape d0 (ndim 1)
 * or d0 x d1, all ones but `bad` at index at (-1: none); returns its path. */
static const char *save(const char *name, enum npy_dtype dt, int ndim, int64_t d0, int64_t d1,
			int64_t at, double bad)
{
	struct npy_array a = {dt, npy_dtype_size(dt), ndim, {d0, d1}, NULL};
	struct sp_err err;
	const char *path = test_path("%s", name);
	assert_int_equal(npy_alloc(&a, path, &err), 0);
	for (int64_t i = 0; i < npy_count(&a); i++)
		if (dt == NPY_F8)
			((double *)a.data)[i] = i == at ? bad : 1;
		else
			((int32_t *)a.data)[i] = 1;
	assert_int_equal(npy_write(path, &a, &err), 0);
	npy_free(&a);
	return path;
}

/* A ROWS x COLS MACKO file, with element `at` of the dense matrix `bad`
 * (-1: none); returns its path. */
static const char *save_matrix(const char *name, int at, float bad)
{
	uint16_t dense[ROWS * COLS] = {0};
	for (int i = 0; i < ROWS * COLS; i += 3)
		dense[i] = 0x3c00;
	if (at >= 0)
		dense[at] = half_from_float(bad);
	struct macko m;
	struct sp_err err;
	const char *path = test_path("%s", name);
	assert_int_equal(macko_compress_dense(dense, ROWS, COLS, &m, name, &err), 0);
	assert_int_equal(macko_save(path, &m, 0, &err), 0);
	macko_free(&m);
	return path;
}

static void test_vectors_read(void **state)
{
	struct npy_array a;
	struct sp_err err;
	const char *one = save("one.npy", NPY_F8, 1, COLS, 0, 2, 0.25);
	assert_int_equal(macko_vectors_read(one, COLS, "columns", NPY_F2, &a, &err), 0);
	assert_int_equal(a.dtype, NPY_F2);
	assert_int_equal(a.ndim, 1);
	assert_int_equal(((uint16_t *)a.data)[2], 0x3400);
	npy_free(&a);
	/* more than one product takes: read, and run as several */
	const char *many = save("17.npy", NPY_F8, 2, MACKO_MAX_VECTORS + 1, COLS, -1, 0);
	assert_int_equal(macko_vectors_read(many, COLS, "columns", NPY_F4, &a, &err), 0);
	assert_int_equal(a.dtype, NPY_F4);
	assert_int_equal(a.shape[0], MACKO_MAX_VECTORS + 1);
	npy_free(&a);
	const struct {
		const char *path, *message;
	} cases[] = {
		{save("short.npy", NPY_F8, 1, COLS - 1, 0, -1, 0),
		 "short.npy: expected 30 columns (or N x 30), found shape of 1 dimensions ending in 29"},
		{save("0.npy", NPY_F8, 2, 0, COLS, -1, 0), "0.npy: 0 vectors, expected 1 to 2147483647"},
		{save("int.npy", NPY_I4, 1, COLS, 0, -1, 0),
		 "int.npy: expected dtype f2, f4 or f8, found i4"},
		{save("over.npy", NPY_F8, 1, COLS, 0, 5, 70000), "over.npy: element 5 (70000) overflows f2"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		assert_int_equal(macko_vectors_read(cases[k].path, COLS, "columns", NPY_F2, &a, &err),
				 -1);
		assert_non_null(strstr(err.msg, cases[k].message));
	}
}

static void test_load_and_y(void **state)
{
	struct macko_operands op;
	struct npy_array y;
	struct sp_err err;
	const char *m = save_matrix("m.npz", -1, 0);
	const char *x3 = save("x3.npy", NPY_F8, 2, 3, COLS, -1, 0);
	const char *x1 = save("x1.npy", NPY_F8, 1, COLS, 0, -1, 0);
	assert_int_equal(macko_operands_load(&op, m, x3, save("y3.npy", NPY_F8, 2, 3, ROWS, -1, 0),
					     &err),
			 0);
	assert_int_equal(op.nvec, 3);
	assert_int_equal(op.y_in.dtype, NPY_F4);
	assert_int_equal(macko_operands_alloc_y(&op, NPY_F2, &y, "y", &err), 0);
	assert_int_equal(y.dtype, NPY_F2);
	assert_int_equal(y.ndim, 2);
	assert_int_equal(y.shape[0], 3);
	assert_int_equal(y.shape[1], ROWS);
	npy_free(&y);
	macko_operands_free(&op);
	assert_int_equal(macko_operands_load(&op, m, x1, NULL, &err), 0);
	assert_int_equal(op.nvec, 1);
	assert_int_equal(macko_operands_alloc_y(&op, NPY_F4, &y, "y", &err), 0);
	assert_int_equal(y.ndim, 1);
	assert_int_equal(y.shape[0], ROWS);
	npy_free(&y);
	macko_operands_free(&op);
	/* y_in must have x's shape, with rows for columns */
	assert_int_equal(macko_operands_load(&op, m, x1, save("y1x4.npy", NPY_F8, 2, 1, ROWS, -1, 0),
					     &err),
			 -1);
	assert_non_null(strstr(err.msg, "y1x4.npy: shape does not match y (1 vectors of 4)"));
	assert_int_equal(macko_operands_load(&op, m, x3, save("y2x4.npy", NPY_F8, 2, 2, ROWS, -1, 0),
					     &err),
			 -1);
	assert_non_null(strstr(err.msg, "y2x4.npy: shape does not match y (3 vectors of 4)"));
	assert_int_equal(macko_operands_load(&op, m, x1, save("y5.npy", NPY_F8, 1, 5, 0, -1, 0),
					     &err),
			 -1);
	assert_non_null(strstr(err.msg, "y5.npy: expected 4 rows (or N x 4)"));
	assert_int_equal(macko_operands_load(&op, x1, x1, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "x1.npy: "));
}

static void test_check_finite(void **state)
{
	struct macko_operands op;
	struct sp_err err;
	const char *good = save_matrix("good.npz", -1, 0), *bad = save_matrix("bad.npz", 9, INFINITY);
	const char *x = save("x.npy", NPY_F8, 2, 2, COLS, -1, 0);
	const char *y = save("y.npy", NPY_F8, 2, 2, ROWS, -1, 0);
	assert_int_equal(macko_operands_load(&op, good, x, y, &err), 0);
	assert_int_equal(macko_operands_check_finite(&op, &err), 0);
	macko_operands_free(&op);
	/* element 9 of the dense matrix is stored element 3 (after 0, 3, 6) */
	assert_int_equal(macko_operands_load(&op, bad, x, NULL, &err), 0);
	assert_int_equal(macko_operands_check_finite(&op, &err), -1);
	assert_non_null(strstr(err.msg, "bad.npz: stored element 3 is not finite"));
	macko_operands_free(&op);
	const char *xnan = save("xnan.npy", NPY_F8, 2, 2, COLS, 37, NAN);
	assert_int_equal(macko_operands_load(&op, good, xnan, y, &err), 0);
	assert_int_equal(macko_operands_check_finite(&op, &err), -1);
	assert_non_null(strstr(err.msg, "xnan.npy: element 37 is not finite in fp16"));
	macko_operands_free(&op);
	const char *yinf = save("yinf.npy", NPY_F8, 2, 2, ROWS, 6, -INFINITY);
	assert_int_equal(macko_operands_load(&op, good, x, yinf, &err), 0);
	assert_int_equal(macko_operands_check_finite(&op, &err), -1);
	assert_non_null(strstr(err.msg, "yinf.npy: element 6 is not finite"));
	assert_null(strstr(err.msg, "fp16"));
	macko_operands_free(&op);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_read),
		cmocka_unit_test(test_load_and_y),
		cmocka_unit_test(test_check_finite),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
