/* warp4 records: construction, statistics, file round trip, validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maxk/warp4.h"

/* Degrees 0, 1, 64, 65, 130, 0: the chunk edges that matter for N = 64. */
static const int64_t indptr[] = {0, 0, 1, 65, 130, 260, 260};
enum { ROWS = 6 };

static void test_count_and_build(void **state)
{
	assert_int_equal(warp4_count(indptr, ROWS, 64), 0 + 1 + 1 + 2 + 3 + 0);
	int32_t rec[7 * 4];
	struct sp_err e;
	assert_int_equal(warp4_build(indptr, ROWS, 64, rec, "t", &e), 0);
	const int32_t want[7][4] = {
		{1, 0, 1, 0},   {2, 1, 64, 0},   {3, 65, 64, 0}, {3, 129, 1, 0},
		{4, 130, 64, 0}, {4, 194, 64, 0}, {4, 258, 2, 0},
	};
	assert_memory_equal(rec, want, sizeof want);
	assert_int_equal(warp4_validate(rec, 7, indptr, ROWS, 64, "t", &e), 0);
	assert_int_equal(warp4_count(indptr, ROWS, 1), 260);
}

static void test_stats(void **state)
{
	struct warp4_stats s;
	warp4_stats(indptr, ROWS, 64, &s);
	assert_int_equal(s.rows, 6);
	assert_int_equal(s.edges, 260);
	assert_int_equal(s.records, 7);
	assert_int_equal(s.empty_rows, 2);
	assert_int_equal(s.max_degree, 130);
	assert_true(fabs(s.fill - 260.0 / (7 * 64)) < 1e-12);
	assert_true(fabs(s.degree_imbalance - 130 / (260.0 / 6)) < 1e-12);
}

static void test_validate_rejects(void **state)
{
	int32_t rec[7 * 4], bad[8 * 4];
	struct sp_err e;
	warp4_build(indptr, ROWS, 64, rec, "t", &e);

	memcpy(bad, rec, sizeof rec);
	bad[4 * 1 + 2] = 65; /* over the limit */
	assert_int_equal(warp4_validate(bad, 7, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_non_null(strstr(e.msg, "m.warp4: record 1 has length 65"));

	memcpy(bad, rec, sizeof rec);
	bad[4 * 3 + 0] = 4; /* wrong row */
	assert_int_equal(warp4_validate(bad, 7, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_non_null(strstr(e.msg, "record 3 is (row 4, offset 129)"));

	assert_int_equal(warp4_validate(rec, 6, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_non_null(strstr(e.msg, "row 4 is not covered"));

	memcpy(bad, rec, sizeof rec);
	memcpy(bad + 28, rec + 24, 16); /* one record too many */
	assert_int_equal(warp4_validate(bad, 8, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_non_null(strstr(e.msg, "1 records beyond the last edge"));

	memcpy(bad, rec, sizeof rec);
	bad[4 * 0 + 2] = 0; /* an empty record never advances */
	assert_int_equal(warp4_validate(bad, 7, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_non_null(strstr(e.msg, "has length 0"));

	memcpy(bad, rec, sizeof rec);
	bad[4 * 3 + 3] = 7; /* the fourth field is always 0 */
	assert_int_equal(warp4_validate(bad, 7, indptr, ROWS, 64, "m.warp4", &e), -1);
	assert_string_equal(e.msg, "m.warp4: record 3 has 7 in its fourth field, which is 0");
}

static void test_offsets_must_fit_int32(void **state)
{
	int64_t big[] = {0, (int64_t)INT32_MAX + 5};
	struct sp_err e;
	int32_t rec[4];
	assert_int_equal(warp4_build(big, 1, 64, rec, "huge.npz", &e), -1);
	assert_non_null(strstr(e.msg, "huge.npz: 1 rows and 2147483652 edges do not fit"));
}

static void test_file_round_trip(void **state)
{
	char dir[] = "/tmp/spkit-warp4-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/g.warp4", dir);
	int32_t rec[7 * 4], *back;
	int64_t n;
	struct sp_err e;
	warp4_build(indptr, ROWS, 64, rec, "t", &e);
	struct outfile f;
	assert_int_equal(outfile_open(&f, path, &e), 0);
	assert_int_equal(warp4_write(&f, rec, 7, &e), 0);
	assert_int_equal(outfile_commit(&f, &e), 0);
	assert_int_equal(warp4_read(path, &back, &n, &e), 0);
	assert_int_equal(n, 7);
	assert_memory_equal(back, rec, sizeof rec);
	free(back);

	FILE *fp = fopen(path, "ab");
	fputc(1, fp);
	fclose(fp);
	assert_int_equal(warp4_read(path, &back, &n, &e), -1);
	assert_non_null(strstr(e.msg, "is not a multiple of 16"));
	assert_int_equal(warp4_read(dir, &back, &n, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
	unlink(path);
	assert_int_equal(warp4_read(path, &back, &n, &e), -1);
	assert_non_null(strstr(e.msg, "No such file"));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_and_build),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_validate_rejects),
		cmocka_unit_test(test_offsets_must_fit_int32),
		cmocka_unit_test(test_file_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
