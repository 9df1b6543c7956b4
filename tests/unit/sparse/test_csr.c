/* The CSR type's own functions: every csr_validate failure and its
 * message, csr_from_coo (stable, duplicates kept, range checked),
 * csr_sort_rows, csr_drop_duplicates and csr_alloc's size checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "sparse/csr.h"
#include "testutil.h"

/* A 3 x 4 matrix, valid under every check:
 *   row 0: (0, 1.0) (2, 2.0)
 *   row 1: (1, 3.0) (2, 4.0) (3, 5.0)
 *   row 2: empty */
struct sample {
	int64_t indptr[4];
	int32_t indices[5];
	float values[5];
	struct csr g;
};

static void sample_init(struct sample *s)
{
	*s = (struct sample){{0, 2, 5, 5}, {0, 2, 1, 2, 3}, {1, 2, 3, 4, 5}, {0}};
	s->g = (struct csr){3, 4, 5, s->indptr, s->indices, s->values};
}

static const unsigned all_checks =
	CSR_CHECK_SORTED | CSR_CHECK_UNIQUE | CSR_CHECK_NONEMPTY | CSR_CHECK_FINITE;

static void test_validate_accepts(void **state)
{
	struct sample s;
	struct sp_err e;
	sample_init(&s);
	assert_int_equal(csr_validate(&s.g, all_checks, "m", &e), 0);
	s.g.values = NULL; /* a pattern */
	assert_int_equal(csr_validate(&s.g, all_checks, "m", &e), 0);
}

/* One broken sample: what to break, the checks asked for, the message
 * (NULL: it must pass, the check not being asked for). */
static void expect_validate(void (*breakit)(struct sample *), unsigned checks, const char *msg)
{
	struct sample s;
	struct sp_err e = {""};
	sample_init(&s);
	breakit(&s);
	int rc = csr_validate(&s.g, checks, "m.npz", &e);
	if (!msg) {
		if (rc != 0)
			fail_msg("unexpected failure: %s", e.msg);
		return;
	}
	assert_int_equal(rc, -1);
	assert_string_equal(e.msg, msg);
}

static void first_not_zero(struct sample *s)
{
	s->indptr[0] = 1;
}
static void decreasing(struct sample *s)
{
	s->indptr[1] = 3;
	s->indptr[2] = 2;
}
static void wrong_end(struct sample *s)
{
	s->g.nnz = 4;
}
static void column_too_large(struct sample *s)
{
	s->indices[3] = 4;
}
static void column_negative(struct sample *s)
{
	s->indices[0] = -1;
}
static void unsorted(struct sample *s)
{
	s->indices[2] = 3;
	s->indices[4] = 1;
}
static void duplicate(struct sample *s)
{
	s->indices[3] = 1;
}
static void no_rows(struct sample *s)
{
	s->g.nrows = 0;
	s->g.nnz = 0;
	s->indptr[0] = 0;
}
static void nan_value(struct sample *s)
{
	s->values[2] = NAN;
}
static void inf_value(struct sample *s)
{
	s->values[4] = -INFINITY;
}
static void negative_shape(struct sample *s)
{
	s->g.ncols = -4;
}

static void test_validate_failures(void **state)
{
	expect_validate(first_not_zero, 0, "m.npz: indptr[0] is 1, expected 0");
	expect_validate(decreasing, 0, "m.npz: indptr decreases at row 1 (2 after 3)");
	expect_validate(wrong_end, 0, "m.npz: indptr ends at 5 but there are 4 entries");
	expect_validate(column_too_large, 0, "m.npz: row 1 has column 4 outside [0, 4)");
	expect_validate(column_negative, 0, "m.npz: row 0 has column -1 outside [0, 4)");
	expect_validate(unsorted, CSR_CHECK_SORTED, "m.npz: row 1 is not sorted (column 2 after 3)");
	expect_validate(unsorted, 0, NULL);
	expect_validate(unsorted, CSR_CHECK_UNIQUE, "m.npz: row 1 is not sorted (column 2 after 3)");
	expect_validate(duplicate, CSR_CHECK_UNIQUE, "m.npz: row 1 repeats column 1");
	expect_validate(duplicate, CSR_CHECK_SORTED, NULL);
	expect_validate(no_rows, CSR_CHECK_NONEMPTY, "m.npz: graph has no rows");
	expect_validate(no_rows, 0, NULL);
	expect_validate(nan_value, CSR_CHECK_FINITE, "m.npz: entry 2 is not finite");
	expect_validate(inf_value, CSR_CHECK_FINITE, "m.npz: entry 4 is not finite");
	expect_validate(nan_value, 0, NULL);
	expect_validate(negative_shape, 0, "m.npz: negative shape");
}

static void test_validate_indptr(void **state)
{
	const int64_t good[] = {0, 0, 3, 3};
	const int64_t bad[] = {0, 2, 1, 3};
	struct sp_err e;
	assert_int_equal(csr_validate_indptr(good, 3, 3, "p", &e), 0);
	assert_int_equal(csr_validate_indptr(bad, 3, 3, "p", &e), -1);
	assert_string_equal(e.msg, "p: indptr decreases at row 1 (1 after 2)");
	assert_int_equal(csr_validate_indptr(good, 3, 4, "p", &e), -1);
	assert_string_equal(e.msg, "p: indptr ends at 3 but there are 4 entries");
}

static void test_from_coo(void **state)
{
	/* Row order by a stable counting sort: within a row, input order, not
	 * column order; duplicates stay. */
	const int64_t rows[] = {2, 0, 2, 0, 2, 0};
	const int64_t cols[] = {3, 2, 0, 0, 3, 2};
	const float vals[] = {1, 2, 3, 4, 5, 6};
	struct csr g;
	struct sp_err e;
	assert_int_equal(csr_from_coo(&g, 3, 4, 6, rows, cols, vals, "c", &e), 0);
	const int64_t p[] = {0, 3, 3, 6};
	const int32_t i[] = {2, 0, 2, 3, 0, 3};
	const float v[] = {2, 4, 6, 1, 3, 5};
	assert_csr(&g, 3, 4, 6, p, i, v);

	assert_int_equal(csr_sort_rows(&g, "c", &e), 0);
	const int32_t is[] = {0, 2, 2, 0, 3, 3};
	const float vs[] = {4, 2, 6, 3, 1, 5}; /* stable: repeated columns keep their order */
	assert_csr(&g, 3, 4, 6, p, is, vs);
	assert_int_equal(csr_validate(&g, CSR_CHECK_SORTED, "c", &e), 0);
	/* Repeats dropped, each first one kept with its value; the empty row
	 * and a row of one repeat stay right. */
	csr_drop_duplicates(&g);
	const int64_t pu[] = {0, 2, 2, 4};
	const int32_t iu[] = {0, 2, 0, 3};
	const float vu[] = {4, 2, 3, 1};
	assert_csr(&g, 3, 4, 4, pu, iu, vu);
	assert_int_equal(csr_validate(&g, CSR_CHECK_UNIQUE, "c", &e), 0);
	csr_free(&g);
	assert_null(g.indptr);

	assert_int_equal(csr_from_coo(&g, 3, 4, 6, rows, cols, NULL, "c", &e), 0);
	assert_null(g.values);
	assert_int_equal(csr_sort_rows(&g, "c", &e), 0);
	assert_csr(&g, 3, 4, 6, p, is, NULL);
	csr_free(&g);

	assert_int_equal(csr_from_coo(&g, 3, 4, 0, rows, cols, vals, "c", &e), 0);
	const int64_t p0[] = {0, 0, 0, 0};
	assert_csr(&g, 3, 4, 0, p0, NULL, vals);
	csr_free(&g);
}

static void test_transpose(void **state)
{
	/* 3 x 4: row 0 {1:a, 3:b}, row 1 {}, row 2 {0:c, 1:d, 3:e} */
	int64_t indptr[] = {0, 2, 2, 5};
	int32_t indices[] = {1, 3, 0, 1, 3};
	float vals[] = {1, 2, 3, 4, 5};
	struct csr g = {3, 4, 5, indptr, indices, NULL}, t;
	struct sp_err e;
	assert_int_equal(csr_transpose(&g, vals, &t, &e), 0);
	const int64_t tp[] = {0, 1, 3, 3, 5};
	const int32_t ti[] = {2, 0, 2, 0, 2};
	const float tv[] = {3, 1, 4, 2, 5};
	assert_csr(&t, 4, 3, 5, tp, ti, tv);
	csr_free(&t);
	assert_int_equal(csr_transpose(&g, NULL, &t, &e), 0); /* a pattern stays a pattern */
	assert_csr(&t, 4, 3, 5, tp, ti, NULL);
	csr_free(&t);
}

static void test_from_coo_out_of_range(void **state)
{
	const int64_t rows[] = {0, 3, 1};
	const int64_t cols[] = {0, 0, -1};
	struct csr g;
	struct sp_err e;
	assert_int_equal(csr_from_coo(&g, 3, 3, 3, rows, cols, NULL, "c.npz", &e), -1);
	assert_string_equal(e.msg, "c.npz: entry 1 at (3, 0) is outside the 3 x 3 shape");
	assert_int_equal(csr_from_coo(&g, 4, 3, 3, rows, cols, NULL, "c.npz", &e), -1);
	assert_string_equal(e.msg, "c.npz: entry 2 at (1, -1) is outside the 4 x 3 shape");
}

static void test_alloc_limits(void **state)
{
	struct csr g;
	struct sp_err e;
	assert_int_equal(csr_alloc(&g, CSR_MAX_DIM + 1, 2, 0, 0, "a", &e), -1);
	assert_string_equal(e.msg, "a: absurd size 2147483648 x 2 with 0 entries");
	assert_int_equal(csr_alloc(&g, 2, 2, CSR_MAX_NNZ + 1, 1, "a", &e), -1);
	assert_int_equal(csr_alloc(&g, -1, 2, 0, 1, "a", &e), -1);
	assert_null(g.indptr);
	assert_int_equal(csr_alloc(&g, 0, 0, 0, 1, "a", &e), 0);
	assert_non_null(g.indptr);
	assert_int_equal(g.indptr[0], 0);
	assert_non_null(g.values);
	csr_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_accepts),
		cmocka_unit_test(test_validate_failures),
		cmocka_unit_test(test_validate_indptr),
		cmocka_unit_test(test_from_coo),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_from_coo_out_of_range),
		cmocka_unit_test(test_alloc_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
