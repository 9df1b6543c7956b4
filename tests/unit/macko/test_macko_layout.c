/* The GPU layout of MACKO (rows from multiples of 8): a hand example pinned
 * element by element, then random matrices whose every row must read back
 * the same (value, delta) sequence, with zeros in the gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "macko/macko.h"
#include "macko/macko_layout.h"
#include "macko/randmat.h"

static void compress(const uint16_t *dense, int64_t rows, int64_t cols, struct macko *m)
{
	struct sp_err e;
	assert_int_equal(macko_compress_dense(dense, rows, cols, m, "test", &e), 0);
}

/* Every row of a holds m's elements in order, and everything else in a is
 * zero: the gaps, and the tail up to a->elements. */
static void assert_same_rows(const struct macko *m, const struct macko_layout *a)
{
	assert_int_equal(a->ends[0], 0);
	assert_int_equal(a->elements % 8, 0);
	int64_t next = 0; /* first element of a not yet checked */
	for (int64_t r = 0; r < m->rows; r++) {
		const int64_t start = macko_layout_start(a, r), from = m->row_indices[r];
		assert_int_equal(start % 8, 0);
		assert_int_equal(a->ends[r + 1] - start, m->row_indices[r + 1] - from);
		for (; next < start; next++) {
			assert_int_equal(a->values[next], 0);
			assert_int_equal(macko_delta(a->deltas, next), 0);
		}
		for (int64_t j = 0; j < a->ends[r + 1] - start; j++, next++) {
			assert_int_equal(a->values[next], m->values[from + j]);
			assert_int_equal(macko_delta(a->deltas, next), macko_delta(m->deltas, from + j));
		}
	}
	for (; next < a->elements; next++) {
		assert_int_equal(a->values[next], 0);
		assert_int_equal(macko_delta(a->deltas, next), 0);
	}
}

/* Rows of 4, 0, 10 and 2 stored elements (runs of 18, 24 and 17 zeros store
 * one zero each): they start at 0, 8, 8 and 24. */
static void test_hand_example(void **state)
{
	enum { ROWS = 4, COLS = 40 };
	uint16_t dense[ROWS * COLS] = {0};
	const int cols_of[ROWS][10] = {{0, 1, 20, -1}, {-1}, {0, 2, 4, 6, 8, 10, 12, 14, 39, -1}, {17, -1}};
	uint16_t v = 0x3c00;
	for (int r = 0; r < ROWS; r++)
		for (int k = 0; cols_of[r][k] >= 0; k++)
			dense[r * COLS + cols_of[r][k]] = v++;
	struct macko m;
	compress(dense, ROWS, COLS, &m);
	struct macko_layout a;
	struct sp_err e;
	assert_int_equal(macko_align(&m, &a, "test", &e), 0);
	const int32_t ends[ROWS + 1] = {0, 4, 8, 18, 26};
	assert_memory_equal(a.ends, ends, sizeof ends);
	assert_int_equal(a.elements, 32);
	assert_int_equal(a.values[8], 0x3c03);           /* row 2 starts at 8 */
	assert_int_equal(macko_delta(a.deltas, 9), 1);   /* column 2 after 0 */
	assert_int_equal(a.values[24], 0);               /* row 3 at 24: the 16th zero */
	assert_int_equal(macko_delta(a.deltas, 24), 15);
	assert_int_equal(a.values[25], 0x3c0c);          /* then column 17 */
	assert_int_equal(macko_delta(a.deltas, 25), 1);
	assert_same_rows(&m, &a);
	macko_layout_free(&a);
	macko_free(&m);
}

/* Random matrices at densities from dense to nearly empty, so rows start
 * at every offset mod 8 and odd and even nibbles; empty rows included. */
static void test_random_rows(void **state)
{
	const double densities[] = {1.0, 0.5, 0.1, 0.01, 0.0};
	const int64_t rows = 97, cols = 301;
	uint16_t *dense = malloc((size_t)(rows * cols) * sizeof *dense);
	assert_non_null(dense);
	for (int i = 0; i < 5; i++) {
		randmat_fp16(dense, rows, cols, densities[i], 7 + (uint64_t)i);
		for (int64_t c = 0; c < cols; c++)
			dense[5 * cols + c] = 0; /* an empty row among full ones */
		struct macko m;
		compress(dense, rows, cols, &m);
		struct macko_layout a;
		struct sp_err e;
		assert_int_equal(macko_align(&m, &a, "test", &e), 0);
		assert_int_equal(a.ends[6] - macko_layout_start(&a, 5), 0);
		assert_same_rows(&m, &a);
		macko_layout_free(&a);
		macko_free(&m);
	}
	free(dense);
}

/* Rows in several blocks on several threads (the copy runs in parallel). */
static void test_parallel_rows(void **state)
{
	const int64_t rows = 3000, cols = 333; /* four blocks of rows */
	uint16_t *dense = malloc((size_t)(rows * cols) * sizeof *dense);
	assert_non_null(dense);
	randmat_fp16(dense, rows, cols, 0.3, 5);
	struct macko m;
	compress(dense, rows, cols, &m);
	struct macko_layout a;
	struct sp_err e;
	setenv("SPKIT_THREADS", "3", 1);
	assert_int_equal(macko_align(&m, &a, "test", &e), 0);
	unsetenv("SPKIT_THREADS");
	assert_same_rows(&m, &a);
	macko_layout_free(&a);
	macko_free(&m);
	free(dense);
}

static void test_no_rows(void **state)
{
	struct macko m;
	compress(NULL, 0, 5, &m);
	struct macko_layout a;
	struct sp_err e;
	assert_int_equal(macko_align(&m, &a, "test", &e), 0);
	assert_int_equal(a.elements, 0);
	assert_int_equal(a.ends[0], 0);
	macko_layout_free(&a);
	macko_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_example),
		cmocka_unit_test(test_random_rows),
		cmocka_unit_test(test_parallel_rows),
		cmocka_unit_test(test_no_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
