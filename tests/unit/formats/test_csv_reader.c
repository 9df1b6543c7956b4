/* Reading CSV (csv_reader.h, table.h): line numbers through multi-line fields,
 * blank lines and every line ending; BOM; strict errors with their lines;
 * typed getters; the unfinished tail a killed writer leaves; and a file
 * written by Python's csv module read back field for field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "formats/csv_reader.h"
#include "core/err.h"
#include "sweep/table.h"
#include "testutil.h"

/* Reads text as "runs.csv"; expects success. */
static void read_ok(struct table *t, const char *text)
{
	struct sp_err e = {{0}};
	int rc = table_read_buffer(text, strlen(text), "runs.csv", t, &e);
	if (rc)
		fail_msg("%s", e.msg);
}

/* Reads text as "runs.csv"; expects exactly this error. */
static void read_fails(const char *text, size_t len, const char *msg)
{
	struct table t;
	struct sp_err e = {{0}};
	assert_int_equal(table_read_buffer(text, len, "runs.csv", &t, &e), -1);
	assert_string_equal(e.msg, msg);
	assert_null(t.cells); /* nothing left to free */
}

static void test_basic(void **state)
{
	struct table t;
	read_ok(&t, "batch,a,ms\n16,2,0.5\n32,4,nan\n");
	assert_int_equal(t.ncols, 3);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(table_header(&t, 2), "ms");
	assert_string_equal(table_cell(&t, 1, 0), "32");
	assert_int_equal(table_col(&t, "a"), 1);
	assert_int_equal(table_col(&t, "nope"), -1);
	int64_t b;
	double ms;
	struct sp_err e;
	assert_int_equal(table_int(&t, 1, 0, &b, &e), 0);
	assert_int_equal(b, 32);
	assert_int_equal(table_double(&t, 0, 2, &ms, &e), 0);
	assert_true(ms == 0.5);
	assert_int_equal(table_double(&t, 1, 2, &ms, &e), 0); /* what csv_writer writes for NaN */
	assert_true(isnan(ms));
	assert_int_equal(table_line(&t, 0), 2);
	table_free(&t);
	table_free(&t); /* safe twice */
}

/* Line numbers are physical lines: multi-line quoted fields, blank lines
 * and the line ending in use all count. */
static void check_lines(const char *text, const char *multiline_cell)
{
	struct table t;
	struct sp_err e;
	double ms;
	read_ok(&t, text);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(table_cell(&t, 0, 1), multiline_cell);
	assert_int_equal(table_line(&t, 0), 2);
	assert_int_equal(table_line(&t, 1), 5);
	assert_int_equal(table_line(&t, 2), 6);
	assert_int_equal(table_double(&t, 1, 2, &ms, &e), -1);
	assert_string_equal(e.msg, "runs.csv:5: column 'ms': expected a number, found 'abc'");
	table_free(&t);
}

static void test_line_numbers(void **state)
{
	check_lines("a,b,ms\n1,\"x\ny\",2.5\n\n3,z,abc\n4,w,1\n", "x\ny");
	check_lines("a,b,ms\r\n1,\"x\r\ny\",2.5\r\n\r\n3,z,abc\r\n4,w,1\r\n", "x\r\ny");
	/* Old Mac line ends, and no final newline. */
	check_lines("a,b,ms\r1,\"x\ry\",2.5\r\r3,z,abc\r4,w,1", "x\ry");
}

static void test_bom_crlf_no_final_newline(void **state)
{
	struct table t;
	read_ok(&t, "\xef\xbb\xbf"
		    "a,b\r\n1,2\r\n3,4");
	assert_string_equal(table_header(&t, 0), "a");
	assert_int_equal(t.nrows, 2);
	assert_string_equal(table_cell(&t, 1, 1), "4");
	assert_int_equal(table_line(&t, 1), 3);
	table_free(&t);
}

static void test_fields_kept_as_written(void **state)
{
	struct table t;
	read_ok(&t, "a,b,c,d\n x ,\"y,\"\"z\"\" \",,\"\"\n");
	assert_string_equal(table_cell(&t, 0, 0), " x ");
	assert_string_equal(table_cell(&t, 0, 1), "y,\"z\" ");
	assert_string_equal(table_cell(&t, 0, 2), "");
	assert_string_equal(table_cell(&t, 0, 3), "");
	table_free(&t);
}

static void test_errors(void **state)
{
	read_fails("", 0, "runs.csv: no header");
	read_fails("\n\r\n\n", 4, "runs.csv: no header");
	read_fails("\xef\xbb\xbf", 3, "runs.csv: no header");
	read_fails("a,b,c\n1,2,3\n\n4,5\n", 16,
		   "runs.csv:4: expected 3 fields (as in the header), found 2");
	read_fails("a,b\n1,2,3\n", 10, "runs.csv:2: expected 2 fields (as in the header), found 3");
	read_fails("a,b\n1,\"abc\n2,3\n", 15, "runs.csv:2: unterminated quoted field");
	read_fails("a,b\n1,\"abc", 10, "runs.csv:2: unterminated quoted field");
	read_fails("a,b\n1,2\n3,ab\"c\n", 15, "runs.csv:3: quote inside an unquoted field");
	read_fails("a,b\n1, \"c\"\n", 11, "runs.csv:2: quote inside an unquoted field");
	read_fails("a,b\n1,\"x\ny\"z\n", 13, "runs.csv:3: 'z' after a closing quote");
	read_fails("a,b\n1,\"x\" \n", 11, "runs.csv:2: ' ' after a closing quote");
	read_fails("a,b\n1,x\0y\n", 10, "runs.csv:2: NUL byte in a field");

	struct table t;
	struct sp_err e;
	assert_int_equal(table_read(test_path("absent.csv"), &t, &e), -1);
	assert_non_null(strstr(e.msg, "absent.csv: cannot open: No such file or directory"));
}

static void test_typed_getters(void **state)
{
	struct table t;
	struct sp_err e;
	int64_t v;
	double d;
	read_ok(&t, "n,x\n1.5,1e999\n99999999999999999999,\n 7 ,-2e-3\n\"a\nb\",2\n");
	assert_int_equal(table_int(&t, 0, 0, &v, &e), -1);
	assert_string_equal(e.msg, "runs.csv:2: column 'n': expected an integer, found '1.5'");
	assert_int_equal(table_double(&t, 0, 1, &d, &e), -1);
	assert_string_equal(
		e.msg, "runs.csv:2: column 'x': expected a number in double range, found '1e999'");
	assert_int_equal(table_int(&t, 1, 0, &v, &e), -1);
	assert_string_equal(e.msg, "runs.csv:3: column 'n': expected a 64-bit integer, "
				   "found '99999999999999999999'");
	assert_int_equal(table_double(&t, 1, 1, &d, &e), -1);
	assert_string_equal(e.msg, "runs.csv:3: column 'x': expected a number, found ''");
	assert_int_equal(table_int(&t, 2, 0, &v, &e), 0);
	assert_int_equal(v, 7);
	assert_int_equal(table_double(&t, 2, 1, &d, &e), 0);
	assert_true(d == -2e-3);
	/* The cell as it is: the program escapes the line it prints. */
	assert_int_equal(table_int(&t, 3, 0, &v, &e), -1);
	assert_string_equal(e.msg, "runs.csv:5: column 'n': expected an integer, found 'a\nb'");
	table_free(&t);
}

static void test_require_cols(void **state)
{
	struct table t;
	struct sp_err e;
	size_t idx[2];
	read_ok(&t, "batch,ms,a,ms2,a\n1,2,3,4,5\n");
	assert_int_equal(table_require_cols(&t, (const char *[]){"ms", "batch"}, 2, idx, &e), 0);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 0);
	assert_int_equal(table_require_cols(&t, (const char *[]){"batch", "std"}, 2, idx, &e), -1);
	assert_string_equal(e.msg, "runs.csv: missing column 'std'");
	assert_int_equal(table_require_cols(&t, (const char *[]){"a"}, 1, NULL, &e), -1);
	assert_string_equal(e.msg, "runs.csv: column 'a' appears twice in the header");
	assert_int_equal(table_require_cols(&t, (const char *[]){"a\nb"}, 1, NULL, &e), -1);
	assert_string_equal(e.msg, "runs.csv: missing column 'a\nb'");
	table_free(&t);
}

struct collected {
	size_t rows;
	char last[64];
};

static int collect(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	struct collected *c = ctx;
	c->rows++;
	snprintf(c->last, sizeof c->last, "%s|%s", row->fields[0], row->fields[1]);
	return 0;
}

static int refuse(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	return sp_fail(err, "s.csv:%zu: refused", row->line);
}

static void test_partial_tail(void **state)
{
	struct csv_reader_result res;
	struct collected c = {0};
	struct sp_err e;
	const char *t1 = "a,b\n1,2\n3,4";
	assert_int_equal(
		csv_reader_scan_buffer(t1, strlen(t1), "s.csv", CSVR_PARTIAL_TAIL, collect, &c, &res, &e),
		0);
	assert_int_equal(c.rows, 2);
	assert_string_equal(c.last, "1|2");
	assert_int_equal(res.records, 2);
	assert_int_equal(res.complete_bytes, 8);
	assert_true(res.partial_tail);
	/* Cut inside a quoted field that holds a newline: the line ends, the
	 * record does not; the blank line before it is not kept either, so an
	 * appender continues right after the last record's CRLF. */
	const char *t2 = "a,b\r\n1,2\r\n\r\n3,\"x\ny";
	memset(&c, 0, sizeof c);
	assert_int_equal(
		csv_reader_scan_buffer(t2, strlen(t2), "s.csv", CSVR_PARTIAL_TAIL, collect, &c, &res, &e),
		0);
	assert_int_equal(res.records, 2);
	assert_int_equal(res.complete_bytes, 10);
	assert_true(res.partial_tail);
	/* Complete files: no tail; blank lines after the last record are not
	 * part of it. */
	const char *t3 = "a,b\n1,2\n";
	for (const char *t = t3; t; t = t == t3 ? "a,b\n1,2\n\n\r\n" : NULL) {
		assert_int_equal(csv_reader_scan_buffer(t, strlen(t), "s.csv", CSVR_PARTIAL_TAIL,
							NULL, NULL, &res, &e),
				 0);
		assert_int_equal(res.complete_bytes, 8);
		assert_false(res.partial_tail);
	}
	/* A callback's error stops the scan. */
	assert_int_equal(csv_reader_scan_buffer(t3, strlen(t3), "s.csv", 0, refuse, NULL, &res, &e), -1);
	assert_string_equal(e.msg, "s.csv:1: refused");
}

/* Records across read chunks (64 KiB), one of them split between the CR
 * and the LF that end it, with two-line fields throughout. */
static void test_large_file(void **state)
{
	enum { ROWS_MAX = 10000 };
	static size_t lines[ROWS_MAX];
	struct buf text = {0};
	buf_add(&text, "id,text\r\n", 9);
	size_t rows = 0, line = 2, crlf_split = SIZE_MAX;
	char row[512];
	while (text.len < 200000 && rows < ROWS_MAX) {
		int n;
		if (crlf_split == SIZE_MAX && text.len + 300 > 65536) {
			int prefix = snprintf(row, sizeof row, "%zu,", rows);
			int pad = (int)(65535 - text.len) - prefix; /* the CR at byte 65535 */
			memset(row + prefix, 'p', (size_t)pad);
			memcpy(row + prefix + pad, "\r\n", 2);
			n = prefix + pad + 2;
			crlf_split = rows;
		} else {
			n = snprintf(row, sizeof row, "%zu,\"line one, \"\"q\"\"\r\nline two\"\r\n",
				     rows);
		}
		buf_add(&text, row, (size_t)n);
		lines[rows++] = line;
		line += crlf_split == rows - 1 ? 1 : 2; /* the padded row has one line */
	}
	assert_int_equal(text.data[65535], '\r');
	assert_int_equal(text.data[65536], '\n');
	test_spit(test_path("large.csv"), text.data, text.len);
	buf_free(&text);

	struct table t;
	struct sp_err e;
	if (table_read(test_path("large.csv"), &t, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(t.nrows, rows);
	for (size_t i = 0; i < rows; i++) {
		int64_t id;
		assert_int_equal(table_int(&t, i, 0, &id, &e), 0);
		assert_int_equal(id, i);
		assert_int_equal(table_line(&t, i), lines[i]);
		if (i != crlf_split)
			assert_string_equal(table_cell(&t, i, 1), "line one, \"q\"\r\nline two");
	}
	assert_int_equal(strspn(table_cell(&t, crlf_split, 1), "p"),
			 strlen(table_cell(&t, crlf_split, 1)));
	table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_line_numbers),
		cmocka_unit_test(test_bom_crlf_no_final_newline),
		cmocka_unit_test(test_fields_kept_as_written),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_typed_getters),
		cmocka_unit_test(test_require_cols),
		cmocka_unit_test(test_partial_tail),
		cmocka_unit_test(test_large_file),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
