/* A MACKO matrix written in each form: the .npz loads back the same arrays
 * (stored or deflated members), the dense .npy is macko_decompress's
 * matrix, and a failed write names the file and leaves nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "formats/npy.h"
#include "macko/macko_npz.h"
#include "macko/macko_output.h"
#include "macko/randmat.h"

enum { ROWS = 33, COLS = 90 };

static void random_macko(struct macko *m)
{
	static uint16_t dense[ROWS * COLS];
	struct sp_err err;
	randmat_fp16(dense, ROWS, COLS, 0.2, 3);
	assert_int_equal(macko_compress_dense(dense, ROWS, COLS, m, "test", &err), 0);
}

static void test_npz(void **state)
{
	struct macko m, back;
	struct sp_err err;
	random_macko(&m);
	const enum macko_output forms[] = {MACKO_OUTPUT_NPZ, MACKO_OUTPUT_NPZ_DEFLATED};
	size_t size[2];
	for (int k = 0; k < 2; k++) {
		const char *path = test_path("m%d.npz", k);
		assert_int_equal(macko_output_write(path, &m, forms[k], &err), 0);
		free(test_slurp(path, &size[k]));
		assert_int_equal(macko_load(path, &back, &err), 0);
		assert_int_equal(back.elements, m.elements);
		assert_memory_equal(back.values, m.values, (size_t)m.padded * 2);
		assert_memory_equal(back.deltas, m.deltas, (size_t)m.padded / 2);
		assert_memory_equal(back.row_indices, m.row_indices, (size_t)(ROWS + 1) * 4);
		macko_free(&back);
	}
	assert_true(size[1] < size[0]);
	macko_free(&m);
}

static void test_dense(void **state)
{
	struct macko m;
	struct sp_err err;
	struct npy_array a;
	static uint16_t want[ROWS * COLS];
	random_macko(&m);
	const char *path = test_path("d.npy");
	assert_int_equal(macko_output_write(path, &m, MACKO_OUTPUT_DENSE, &err), 0);
	assert_int_equal(npy_read(path, &a, &err), 0);
	assert_int_equal(a.dtype, NPY_F2);
	assert_int_equal(a.ndim, 2);
	assert_int_equal(a.shape[0], ROWS);
	assert_int_equal(a.shape[1], COLS);
	macko_decompress(&m, want);
	assert_memory_equal(a.data, want, sizeof want);
	npy_free(&a);
	macko_free(&m);
}

static void test_no_folder(void **state)
{
	struct macko m;
	struct sp_err err;
	random_macko(&m);
	const int before = test_dir_count();
	const enum macko_output forms[] = {MACKO_OUTPUT_NPZ, MACKO_OUTPUT_DENSE};
	for (int k = 0; k < 2; k++) {
		const char *path = test_path("no/such/m%d", k);
		assert_int_equal(macko_output_write(path, &m, forms[k], &err), -1);
		assert_non_null(strstr(err.msg, "No such file or directory"));
		assert_ptr_equal(strstr(err.msg, path), err.msg);
	}
	assert_int_equal(test_dir_count(), before);
	macko_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npz),
		cmocka_unit_test(test_dense),
		cmocka_unit_test(test_no_folder),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
