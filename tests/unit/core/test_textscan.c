/* The text readers' shared parts: number parsers against strtod, field
 * splitting, line scanning, file mapping (and a pipe), and the COO to CSR
 * conversion with its stable sort and mirroring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sparse/coo.h"
#include "core/rng.h"
#include "core/textscan.h"
#include "testutil.h"

static struct text_span span(const char *s)
{
	return (struct text_span){s, s + strlen(s)};
}

static void test_parse_i64(void **state)
{
	int64_t v = 0;
	assert_int_equal(text_parse_i64(span("0"), &v), TEXT_OK);
	assert_int_equal(v, 0);
	assert_int_equal(text_parse_i64(span("+17"), &v), TEXT_OK);
	assert_int_equal(v, 17);
	assert_int_equal(text_parse_i64(span("-42"), &v), TEXT_OK);
	assert_int_equal(v, -42);
	assert_int_equal(text_parse_i64(span("9223372036854775807"), &v), TEXT_OK);
	assert_true(v == INT64_MAX);
	assert_int_equal(text_parse_i64(span("-9223372036854775807"), &v), TEXT_OK);
	assert_true(v == -INT64_MAX);
	assert_int_equal(text_parse_i64(span("0000000000000000000000012"), &v), TEXT_OK);
	assert_int_equal(v, 12);
	assert_int_equal(text_parse_i64(span("9223372036854775808"), &v), TEXT_RANGE);
	assert_int_equal(text_parse_i64(span("18446744073709551616"), &v), TEXT_RANGE);
	assert_int_equal(text_parse_i64(span("99999999999999999999999"), &v), TEXT_RANGE);
	static const char *const bad[] = {"", "-", "+", "1a", "a1", " 1", "1 ", "1.0", "1e3",
					  "0x10", "--1", "１"};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
		if (text_parse_i64(span(bad[k]), &v) != TEXT_SYNTAX)
			fail_msg("'%s' parsed as an integer", bad[k]);
}

static void assert_float_as_strtod(const char *text)
{
	float want = (float)strtod(text, NULL), got = 12345;
	enum text_num rc = text_parse_float(span(text), &got);
	if (!isfinite(want)) {
		if (rc != TEXT_NOT_FINITE)
			fail_msg("'%s': expected not finite, got %d", text, rc);
		return;
	}
	if (rc != TEXT_OK || memcmp(&got, &want, sizeof got) != 0)
		fail_msg("'%s': got %a (rc %d), strtod gives %a", text, got, rc, want);
}

static void test_parse_float_cases(void **state)
{
	static const char *const good[] = {
		"0", "-0", "+0.0", "1", "-1.5", ".5", "5.", "1e3", "1E+3", "2.5e-3", "00012.50",
		"3.4028234e38", "3.40282356e38", "1.17549435e-38", "1.4e-45", "7e-46", "1e-50",
		"0.1", "0.30000000000000004", "123456789012345678901234567890",
		"0.000000000000000000000000000000000000000000001234567890123456789",
		"9007199254740993", "9007199254740993e-30", "16777217", "1e22", "1e23", "8.5e-1",
		"1.00000005960464477539", "1.0000000596046447753906250000001",
		"0e99999999999", "1e-99999999999"};
	for (size_t k = 0; k < sizeof good / sizeof *good; k++)
		assert_float_as_strtod(good[k]);
	static const char *const infinite[] = {"nan", "NaN", "-nan", "inf", "-Inf", "+INFINITY",
					       "1e39", "-3.5e38", "1e99999999999"};
	float f;
	for (size_t k = 0; k < sizeof infinite / sizeof *infinite; k++)
		if (text_parse_float(span(infinite[k]), &f) != TEXT_NOT_FINITE)
			fail_msg("'%s' not reported as not finite", infinite[k]);
	static const char *const bad[] = {"", "-", ".", "e5", "1e", "1e+", "1.2.3", "0x10", " 1",
					  "1 ", "1,5", "1d5", "nana", "in", "1f", "--1", "+-1"};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
		if (text_parse_float(span(bad[k]), &f) != TEXT_SYNTAX)
			fail_msg("'%s' parsed as a float", bad[k]);
}

/* Random decimals of every length and exponent, and the hard ones: the
 * midpoints between neighbouring floats and the doubles just beside them,
 * and 19-digit decimals next to the points halfway between a float
 * midpoint and the double beside it, where rounding twice (to long double,
 * then to double) would land on the wrong float. */
static void test_parse_float_random(void **state)
{
	struct rng r;
	rng_init(&r, 99, 0);
	char text[96];
	for (int k = 0; k < 300000; k++) {
		int digits = 1 + (int)rng_below(&r, 24), point = (int)rng_below(&r, (uint64_t)digits + 2);
		int at = rng_below(&r, 2) ? sprintf(text, "-") : 0;
		for (int d = 0; d < digits; d++) {
			if (d == point)
				text[at++] = '.';
			text[at++] = (char)('0' + rng_below(&r, 10));
		}
		if (rng_below(&r, 3))
			at += sprintf(text + at, "e%d", (int)rng_below(&r, 100) - 55);
		text[at] = '\0';
		assert_float_as_strtod(text);
	}
	for (int k = 0; k < 100000; k++) {
		uint32_t bits = (uint32_t)rng_below(&r, 0x7f7fffff);
		float lo;
		memcpy(&lo, &bits, sizeof lo);
		double mid = ((double)lo + (double)nextafterf(lo, INFINITY)) / 2;
		const double near[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY)};
		for (int j = 0; j < 3; j++) {
			snprintf(text, sizeof text, "%.17g", near[j]);
			assert_float_as_strtod(text);
			snprintf(text, sizeof text, "%.25g", near[j]);
			assert_float_as_strtod(text);
		}
		long double tie = (long double)mid + ((long double)nextafter(mid, INFINITY) - mid) / 2;
		const long double beside[] = {tie, nextafterl(tie, 0), nextafterl(tie, INFINITY)};
		for (int j = 0; j < 3; j++) {
			snprintf(text, sizeof text, "%.18Le", beside[j]);
			assert_float_as_strtod(text);
		}
	}
}

static void test_fields(void **state)
{
	struct text_span rest = span(" 1,, 2 ,\t3\t,"), f;
	static const char *const want[] = {"1", "", "2", "3", ""};
	for (int k = 0; k < 5; k++) {
		assert_true(text_next_field(&rest, ',', &f));
		assert_int_equal(f.end - f.p, strlen(want[k]));
		assert_memory_equal(f.p, want[k], strlen(want[k]));
	}
	assert_false(text_next_field(&rest, ',', &f));

	rest = span("  a \t bb\t\tc  ");
	static const char *const words[] = {"a", "bb", "c"};
	for (int k = 0; k < 3; k++) {
		assert_true(text_next_field(&rest, ' ', &f));
		assert_memory_equal(f.p, words[k], strlen(words[k]));
		assert_int_equal(f.end - f.p, strlen(words[k]));
	}
	assert_false(text_next_field(&rest, ' ', &f));

	char shown[TEXT_SHOW_MAX];
	assert_string_equal(text_span_show(span("a'b\x01"), shown, sizeof shown), "a?b?");
	char long_text[100];
	memset(long_text, 'x', 99);
	long_text[99] = '\0';
	text_span_show(span(long_text), shown, sizeof shown);
	assert_int_equal(strlen(shown), TEXT_SHOW_MAX - 1);
	assert_string_equal(shown + TEXT_SHOW_MAX - 4, "...");
	assert_true(text_span_equal_nocase(span("MatrixMARKET"), "matrixmarket"));
	assert_false(text_span_equal_nocase(span("matrix"), "matrixmarket"));
}

static void test_lines(void **state)
{
	const char text[] = "one\r\n\n  # c\nfour\rx\nfive";
	struct text_scan s;
	struct text_span line;
	text_scan_init(&s, text, sizeof text - 1, "t.txt");
	static const char *const want[] = {"one", "", "  # c", "four\rx", "five"};
	for (int k = 0; k < 5; k++) {
		assert_true(text_scan_line(&s, &line));
		assert_int_equal(s.line, k + 1);
		assert_int_equal(line.end - line.p, strlen(want[k]));
		assert_memory_equal(line.p, want[k], strlen(want[k]));
	}
	assert_false(text_scan_line(&s, &line));

	text_scan_init(&s, text, sizeof text - 1, "t.txt");
	assert_true(text_scan_content(&s, "#", &line));
	assert_int_equal(s.line, 1);
	assert_true(text_scan_content(&s, "#", &line));
	assert_int_equal(s.line, 4);
	struct sp_err e;
	assert_int_equal(text_scan_fail(&s, &e, "bad %s", "thing"), -1);
	assert_string_equal(e.msg, "t.txt:4: bad thing");
}

static void test_files(void **state)
{
	struct text_file f;
	struct sp_err e;
	assert_int_equal(text_file_open(&f, test_write("a.txt", "hello\n"), &e), 0);
	assert_int_equal(f.len, 6);
	assert_memory_equal(f.data, "hello\n", 6);
	text_file_close(&f);
	assert_int_equal(text_file_open(&f, test_write("empty.txt", ""), &e), 0);
	assert_int_equal(f.len, 0);
	text_file_close(&f);
	assert_int_equal(text_file_open(&f, test_dir, &e), -1);
	assert_msg_has(&e, test_dir, ": is a directory", NULL);
	assert_int_equal(text_file_open(&f, "/no/such/file", &e), -1);
	assert_string_equal(e.msg, "/no/such/file: cannot open: No such file or directory");

	/* A pipe cannot be mapped: it is read to its end, past one block. */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		char block[4096];
		memset(block, 'z', sizeof block);
		for (int k = 0; k < 700; k++)
			if (write(fds[1], block, sizeof block) != (ssize_t)sizeof block)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
	assert_int_equal(text_file_open(&f, path, &e), 0);
	assert_int_equal(f.len, 700 * 4096);
	assert_int_equal(f.data[f.len - 1], 'z');
	text_file_close(&f);
	close(fds[0]);
	int status;
	waitpid(child, &status, 0);
	assert_int_equal(status, 0);
}

static struct coo coo_of(int64_t n, const int32_t *rows, const int32_t *cols, const float *vals)
{
	struct coo c;
	struct sp_err e;
	assert_int_equal(coo_init(&c, 1, vals != NULL, "c", &e), 0);
	for (int64_t k = 0; k < n; k++)
		assert_int_equal(coo_push(&c, rows[k], cols[k], vals ? vals[k] : 0, "c", &e), 0);
	return c;
}

static void test_coo_to_csr(void **state)
{
	const int32_t rows[] = {1, 0, 1, 2, 1, 0};
	const int32_t cols[] = {2, 1, 0, 2, 2, 1};
	const float vals[] = {1, 2, 3, 4, 5, 6};
	struct csr g;
	struct sp_err e;
	struct coo c = coo_of(6, rows, cols, vals);
	assert_int_equal(coo_to_csr(&c, 3, 3, COO_AS_GIVEN, &g, "c", &e), 0);
	assert_null(c.rows); /* consumed */
	const int64_t p[] = {0, 2, 5, 6};
	const int32_t i[] = {1, 1, 0, 2, 2, 2};
	const float v[] = {2, 6, 3, 1, 5, 4};
	assert_csr(&g, 3, 3, 6, p, i, v);
	csr_free(&g);

	/* Each mirror right after its entry in the input order. */
	c = coo_of(6, rows, cols, vals);
	assert_int_equal(coo_to_csr(&c, 3, 3, COO_MIRROR_NEGATED, &g, "c", &e), 0);
	const int64_t pn[] = {0, 3, 8, 11};
	const int32_t in[] = {1, 1, 1, 0, 0, 0, 2, 2, 1, 1, 2};
	const float vn[] = {2, -3, 6, -2, 3, -6, 1, 5, -1, -5, 4};
	assert_csr(&g, 3, 3, 11, pn, in, vn);
	csr_free(&g);

	c = coo_of(6, rows, cols, NULL);
	assert_int_equal(coo_to_csr(&c, 3, 3, COO_MIRROR, &g, "c", &e), 0);
	assert_csr(&g, 3, 3, 11, pn, in, NULL);
	csr_free(&g);

	c = coo_of(6, rows, cols, vals);
	assert_int_equal(coo_to_csr(&c, 3, 2, COO_AS_GIVEN, &g, "c", &e), -1);
	assert_string_equal(e.msg, "c: entry 0 at (1, 2) is outside the 3 x 2 shape");
	assert_null(c.rows);
	assert_null(g.indptr);
	c = coo_of(6, rows, cols, vals);
	assert_int_equal(coo_to_csr(&c, 3, 4, COO_MIRROR, &g, "c", &e), -1);
	assert_string_equal(e.msg, "c: a mirrored matrix must be square, not 3 x 4");
	assert_null(c.rows);
}

/* Long rows full of duplicates: with values numbering the input order,
 * a stable sort leaves every row ordered by (column, value). */
static void test_coo_stable_long_rows(void **state)
{
	enum { N = 20000, ROWS = 3, COLS = 50 };
	struct rng r;
	rng_init(&r, 5, 0);
	struct coo c;
	struct sp_err e;
	int64_t per_row[ROWS] = {0};
	assert_int_equal(coo_init(&c, 16, 1, "c", &e), 0);
	for (int k = 0; k < N; k++) {
		int32_t row = (int32_t)rng_below(&r, ROWS);
		per_row[row]++;
		assert_int_equal(coo_push(&c, row, (int32_t)rng_below(&r, COLS), (float)k, "c", &e), 0);
	}
	struct csr g;
	assert_int_equal(coo_to_csr(&c, ROWS, COLS, COO_AS_GIVEN, &g, "c", &e), 0);
	for (int row = 0; row < ROWS; row++) {
		assert_int_equal(g.indptr[row + 1] - g.indptr[row], per_row[row]);
		for (int64_t j = g.indptr[row] + 1; j < g.indptr[row + 1]; j++) {
			assert_true(g.indices[j - 1] <= g.indices[j]);
			if (g.indices[j - 1] == g.indices[j])
				assert_true(g.values[j - 1] < g.values[j]);
		}
	}
	csr_free(&g);
}

/* Many rows, so entries are spread into blocks of rows before placing:
 * the result must equal a plain stable sort by (row, column, input order). */
struct triple {
	int32_t row, col;
	int64_t seq;
	float val;
};

static int by_row_col_seq(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void test_coo_many_rows(void **state)
{
	enum { N = 60000, DIM = 30000 };
	struct rng r;
	rng_init(&r, 11, 0);
	struct coo c;
	struct sp_err e;
	struct triple *want = malloc(2 * N * sizeof *want);
	int64_t nwant = 0;
	assert_int_equal(coo_init(&c, N, 1, "c", &e), 0);
	for (int k = 0; k < N; k++) {
		/* Rows crowd the first block now and then, columns repeat. */
		int32_t row = (int32_t)rng_below(&r, k % 3 ? DIM : 100);
		int32_t col = (int32_t)rng_below(&r, k % 5 ? DIM : 10);
		assert_int_equal(coo_push(&c, row, col, (float)k, "c", &e), 0);
		want[nwant] = (struct triple){row, col, nwant, (float)k};
		nwant++;
		if (row != col) {
			want[nwant] = (struct triple){col, row, nwant, -(float)k};
			nwant++;
		}
	}
	qsort(want, (size_t)nwant, sizeof *want, by_row_col_seq);
	struct csr g;
	assert_int_equal(coo_to_csr(&c, DIM, DIM, COO_MIRROR_NEGATED, &g, "c", &e), 0);
	assert_int_equal(g.nnz, nwant);
	int64_t row = 0;
	for (int64_t j = 0; j < nwant; j++) {
		while (g.indptr[row + 1] <= j)
			row++;
		assert_int_equal(row, want[j].row);
		assert_int_equal(g.indices[j], want[j].col);
		assert_true(g.values[j] == want[j].val);
	}
	assert_int_equal(g.indptr[DIM], nwant);
	csr_free(&g);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_i64),
		cmocka_unit_test(test_parse_float_cases),
		cmocka_unit_test(test_parse_float_random),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_coo_to_csr),
		cmocka_unit_test(test_coo_stable_long_rows),
		cmocka_unit_test(test_coo_many_rows),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
