/* Writing CSV (csv_writer.h): quoting, proven by reading back with our reader
 * and with Python's csv module; numbers; whole-file atomicity; standard
 * output; append mode with header checks, locking, and the unfinished
 * row a kill leaves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "formats/csv_writer.h"
#include "core/err.h"
#include "core/rng.h"
#include "sweep/table.h"
#include "testutil.h"

#define PYTHON "/usr/bin/python3"

static const char *const nasty[] = {
	"plain", "a,b", "say \"hi\"", "\"", "\"\"", "line\nbreak", "cr\ronly", "crlf\r\nend",
	" lead", "trail ", "\ttab", "", "  ",
	"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80", /* UTF-8: café 日本 rocket */
	",", "\n", "nan", "-0", "x\"y\"z,\n",
};
enum { NNASTY = sizeof nasty / sizeof *nasty };

static const char *const cols3[] = {"id", "text", "ms"};

static void ok(int rc, const struct sp_err *e)
{
	if (rc)
		fail_msg("%s", e->msg);
}

/* Writes the nasty fields as rows (id, field, field again) to path. */
static void write_nasty(const char *path)
{
	struct csv_writer w;
	struct sp_err e;
	ok(csv_writer_open(&w, path, cols3, 3, &e), &e);
	for (int i = 0; i < NNASTY; i++) {
		csv_writer_int(&w, i);
		csv_writer_str(&w, nasty[i]);
		csv_writer_str(&w, nasty[i]);
		ok(csv_writer_end_row(&w, &e), &e);
	}
	ok(csv_writer_commit(&w, &e), &e);
}

static void test_quoting_exact(void **state)
{
	const char *path = test_path("q.csv");
	struct csv_writer w;
	struct sp_err e;
	const char *cols[] = {"a b", "c,d", "e"};
	ok(csv_writer_open(&w, path, cols, 3, &e), &e);
	const char *row[] = {
		"x", "say \"hi\"", " lead", /* a row per line */
		"a\nb", "", "trail\t",
		"\r", "é", "q\"\"",
	};
	for (int i = 0; i < 9; i++) {
		csv_writer_str(&w, row[i]);
		if (i % 3 == 2)
			ok(csv_writer_end_row(&w, &e), &e);
	}
	ok(csv_writer_commit(&w, &e), &e);
	char *text = test_read(path);
	assert_string_equal(text, "a b,\"c,d\",e\n"
				  "x,\"say \"\"hi\"\"\",\" lead\"\n"
				  "\"a\nb\",,\"trail\t\"\n"
				  "\"\r\",é,\"q\"\"\"\"\"\n");
	free(text);

	/* A BOM leading the first header name would be taken for the file's own. */
	const char *bom[] = {"\xef\xbb\xbfid"};
	ok(csv_writer_open(&w, path, bom, 1, &e), &e);
	ok(csv_writer_commit(&w, &e), &e);
	text = test_read(path);
	assert_string_equal(text, "\"\xef\xbb\xbfid\"\n");
	free(text);
	struct table t;
	ok(table_read(path, &t, &e), &e);
	assert_string_equal(table_header(&t, 0), bom[0]);
	table_free(&t);

	/* One column: an empty field is quoted, or the row would be a blank line. */
	const char *one[] = {"v"};
	ok(csv_writer_open(&w, path, one, 1, &e), &e);
	csv_writer_str(&w, "");
	ok(csv_writer_end_row(&w, &e), &e);
	csv_writer_str(&w, "x");
	ok(csv_writer_end_row(&w, &e), &e);
	ok(csv_writer_commit(&w, &e), &e);
	text = test_read(path);
	assert_string_equal(text, "v\n\"\"\nx\n");
	free(text);
	ok(table_read(path, &t, &e), &e);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(table_cell(&t, 0, 0), "");
	table_free(&t);
}

static void test_round_trip_nasty(void **state)
{
	const char *path = test_path("nasty.csv");
	write_nasty(path);
	struct table t;
	struct sp_err e;
	ok(table_read(path, &t, &e), &e);
	assert_int_equal(t.nrows, NNASTY);
	for (int i = 0; i < NNASTY; i++) {
		assert_string_equal(table_cell(&t, (size_t)i, 1), nasty[i]);
		assert_string_equal(table_cell(&t, (size_t)i, 2), nasty[i]);
	}
	table_free(&t);
}

/* Random fields from the characters that need care, many rows, through
 * the writer and back through the reader. */
static void test_round_trip_random(void **state)
{
	static const char alphabet[] = {'a', 'Z', '0', ',', '"', '\r', '\n', ' ', '\t', ';', '\''};
	enum { ROWS = 3000, COLS = 4, LEN = 12 };
	static char fields[ROWS][COLS][LEN + 1];
	struct rng r;
	rng_init(&r, 2024, 0);
	const char *path = test_path("random.csv");
	const char *cols[COLS] = {"c0", "c1", "c2", "c3"};
	struct csv_writer w;
	struct sp_err e;
	ok(csv_writer_open(&w, path, cols, COLS, &e), &e);
	for (int i = 0; i < ROWS; i++) {
		for (int j = 0; j < COLS; j++) {
			size_t n = (size_t)rng_below(&r, LEN + 1);
			for (size_t k = 0; k < n; k++)
				fields[i][j][k] = alphabet[rng_below(&r, sizeof alphabet)];
			fields[i][j][n] = '\0';
			csv_writer_str(&w, fields[i][j]);
		}
		ok(csv_writer_end_row(&w, &e), &e);
	}
	ok(csv_writer_commit(&w, &e), &e);
	struct table t;
	ok(table_read(path, &t, &e), &e);
	assert_int_equal(t.nrows, ROWS);
	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < COLS; j++)
			assert_string_equal(table_cell(&t, (size_t)i, (size_t)j), fields[i][j]);
	table_free(&t);
}

static void test_numbers(void **state)
{
	const char *path = test_path("n.csv");
	const char *cols[] = {"i", "short", "g6"};
	struct csv_writer w;
	struct sp_err e;
	ok(csv_writer_open(&w, path, cols, 3, &e), &e);
	csv_writer_int(&w, INT64_MIN);
	csv_writer_double(&w, 0.1, 0);
	csv_writer_double(&w, 1.0 / 3, 6);
	ok(csv_writer_end_row(&w, &e), &e);
	csv_writer_int(&w, 42);
	csv_writer_double(&w, NAN, 0);
	csv_writer_double(&w, -INFINITY, 6);
	ok(csv_writer_end_row(&w, &e), &e);
	ok(csv_writer_commit(&w, &e), &e);
	char *text = test_read(path);
	assert_string_equal(text, "i,short,g6\n-9223372036854775808,0.1,0.333333\n42,nan,-inf\n");
	free(text);
}

static void test_atomic(void **state)
{
	const char *path = test_path("atomic.csv");
	struct csv_writer w;
	struct sp_err e;
	int before = test_dir_count();
	ok(csv_writer_open(&w, path, cols3, 3, &e), &e);
	csv_writer_int(&w, 1);
	csv_writer_str(&w, "x");
	csv_writer_double(&w, 2.5, 0);
	ok(csv_writer_end_row(&w, &e), &e);
	assert_false(test_exists(path)); /* nothing visible before commit */
	csv_writer_abort(&w);
	assert_false(test_exists(path));
	assert_int_equal(test_dir_count(), before); /* and no temporary left */

	/* A row with the wrong number of fields is an error, and the file is
	 * still only committed on request. */
	ok(csv_writer_open(&w, path, cols3, 3, &e), &e);
	csv_writer_int(&w, 1);
	csv_writer_str(&w, "x");
	assert_int_equal(csv_writer_end_row(&w, &e), -1);
	assert_non_null(strstr(e.msg, "atomic.csv: row has 2 fields, the header 3"));
	for (int i = 0; i < 4; i++)
		csv_writer_int(&w, i);
	assert_int_equal(csv_writer_end_row(&w, &e), -1);
	assert_non_null(strstr(e.msg, "row has 4 fields, the header 3"));
	csv_writer_int(&w, 1); /* an unfinished row fails the commit */
	assert_int_equal(csv_writer_commit(&w, &e), -1);
	assert_non_null(strstr(e.msg, "a row was started but not ended"));
	assert_false(test_exists(path));
	assert_int_equal(test_dir_count(), before);

	assert_int_equal(csv_writer_open(&w, test_path("no/dir/x.csv"), cols3, 3, &e), -1);
	assert_non_null(strstr(e.msg, "no/dir/x.csv: cannot create output"));
	assert_int_equal(csv_writer_open(&w, path, cols3, 0, &e), -1);
	assert_non_null(strstr(e.msg, "atomic.csv: no columns to write"));
}

static void test_stdout(void **state)
{
	const char *path = test_path("stdout.txt");
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	struct csv_writer w;
	struct sp_err e;
	int rc = csv_writer_open(&w, "-", cols3, 3, &e);
	if (!rc) {
		csv_writer_int(&w, 7);
		csv_writer_str(&w, "a,b");
		csv_writer_double(&w, 1.5, 0);
		rc = csv_writer_end_row(&w, &e) || csv_writer_commit(&w, &e);
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ok(rc, &e);
	char *text = test_read(path);
	assert_string_equal(text, "id,text,ms\n7,\"a,b\",1.5\n");
	free(text);
	assert_int_equal(csv_writer_open_append(&w, "-", cols3, 3, &e), -1);
	assert_string_equal(e.msg, "-: appending needs a file, not standard output");
}

/* Opens path for appending, writes rows "id,text,1" for ids, closes. */
static void append_rows(const char *path, int from, int to)
{
	struct csv_writer w;
	struct sp_err e;
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	csv_writer_set_fsync(&w, 1);
	for (int i = from; i < to; i++) {
		csv_writer_int(&w, i);
		csv_writer_str(&w, i % 2 ? "multi\nline" : "t");
		csv_writer_int(&w, 1);
		ok(csv_writer_end_row(&w, &e), &e);
	}
	ok(csv_writer_commit(&w, &e), &e);
}

/* The file holding `before` (NULL: as it is), rows from..to-1 appended,
 * holds `after`. */
static void check_append(const char *before, int from, int to, const char *after)
{
	const char *path = test_path("sweep.csv");
	if (before)
		test_spit(path, before, strlen(before));
	append_rows(path, from, to);
	char *text = test_read(path);
	assert_string_equal(text, after);
	free(text);
}

/* Stream mode (a log followed with tail -f): the header and each row are
 * in the file as soon as they end, before any commit; an abort keeps them;
 * a file there before is replaced. */
static void test_stream(void **state)
{
	const char *path = test_path("log.csv");
	test_write("log.csv", "old,stuff\n1,2\n");
	struct csv_writer w;
	struct sp_err e;
	ok(csv_writer_open_stream(&w, path, cols3, 3, &e), &e);
	char *text = test_read(path);
	assert_string_equal(text, "id,text,ms\n");
	free(text);
	for (int i = 0; i < 2; i++) {
		csv_writer_int(&w, i);
		csv_writer_str(&w, "t");
		csv_writer_double(&w, 0.5, 0);
		ok(csv_writer_end_row(&w, &e), &e);
		text = test_read(path);
		assert_string_equal(text, i ? "id,text,ms\n0,t,0.5\n1,t,0.5\n" : "id,text,ms\n0,t,0.5\n");
		free(text);
	}
	csv_writer_abort(&w);
	text = test_read(path);
	assert_string_equal(text, "id,text,ms\n0,t,0.5\n1,t,0.5\n");
	free(text);
	/* a folder that is not there: the path in the message */
	assert_int_equal(csv_writer_open_stream(&w, test_path("no/such/log.csv"), cols3, 3, &e), -1);
	assert_non_null(strstr(e.msg, "no/such/log.csv: cannot open for writing"));
}

static void test_append(void **state)
{
	unlink(test_path("sweep.csv"));
	check_append(NULL, 0, 2, "id,text,ms\n0,t,1\n1,\"multi\nline\",1\n"); /* a new file */
	check_append(NULL, 2, 3, "id,text,ms\n0,t,1\n1,\"multi\nline\",1\n2,t,1\n");
	/* Killed mid-row: the unfinished row goes, the rest stays. */
	check_append("id,text,ms\n0,t,1\n1,\"multi\nli", 1, 2,
		     "id,text,ms\n0,t,1\n1,\"multi\nline\",1\n");
	check_append("id,text,ms\n0,t,1\n1,\"mul", 1, 2,
		     "id,text,ms\n0,t,1\n1,\"multi\nline\",1\n");
	/* Empty, blank or a header cut short: a fresh header. */
	check_append("", 0, 1, "id,text,ms\n0,t,1\n");
	check_append("\n\n", 0, 1, "id,text,ms\n0,t,1\n");
	check_append("id,te", 0, 1, "id,text,ms\n0,t,1\n");
	/* Someone else's file: BOM and CRLF are fine; rows go on after, their
	 * lines ending in CRLF as the file's do (a newline inside a field is
	 * data, kept as given). */
	check_append("\xef\xbb\xbfid,text,ms\r\n5,x,2\r\n", 6, 8,
		     "\xef\xbb\xbfid,text,ms\r\n5,x,2\r\n6,t,1\r\n7,\"multi\nline\",1\r\n");
	check_append("id,text,ms\r\n", 0, 1, "id,text,ms\r\n0,t,1\r\n");
	check_append("id,text,ms\r\n0,t,1\r\n1,\"mul", 1, 2,
		     "id,text,ms\r\n0,t,1\r\n1,\"multi\nline\",1\r\n");
}

/* An append that gives up before its first row removes the file only if
 * its open made it: a sweep that fails at once leaves no header-only CSV,
 * and a file there before (resumed, even one of a header alone, or empty:
 * cut back to nothing) stays byte for byte, unless csv_writer_keep kept
 * what the open wrote. */
static void test_append_abort(void **state)
{
	const char *path = test_path("aborted.csv");
	struct csv_writer w;
	struct sp_err e;
	unlink(path);
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	csv_writer_abort(&w);
	assert_int_equal(access(path, F_OK), -1);
	/* a row written: the file is kept */
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	csv_writer_int(&w, 1);
	csv_writer_str(&w, "t");
	csv_writer_int(&w, 2);
	ok(csv_writer_end_row(&w, &e), &e);
	csv_writer_abort(&w);
	char *text = test_read(path);
	assert_string_equal(text, "id,text,ms\n1,t,2\n");
	free(text);
	/* there before: kept as it was, with rows or without */
	static const char *const before[] = {"id,text,ms\n1,t,2\n", "id,text,ms\n", ""};
	for (size_t i = 0; i < sizeof before / sizeof *before; i++) {
		test_spit(path, before[i], strlen(before[i]));
		ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
		csv_writer_abort(&w);
		text = test_read(path);
		assert_string_equal(text, before[i]);
		free(text);
	}
	/* kept: a new file and an empty one keep the header the open wrote */
	for (int empty = 0; empty < 2; empty++) {
		unlink(path);
		if (empty)
			test_spit(path, "", 0);
		ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
		csv_writer_keep(&w);
		csv_writer_abort(&w);
		text = test_read(path);
		assert_string_equal(text, "id,text,ms\n");
		free(text);
	}
}

/* A file there empty is what a kill leaves too, until its first row: the
 * signal handler (outfile_remove_all_unfinished) cuts the header back off.
 * A row, or the writer closed, takes it out of the handler's hands. */
static void test_append_empty_on_signal(void **state)
{
	const char *path = test_path("killed.csv");
	struct csv_writer w;
	struct sp_err e;
	test_spit(path, "", 0);
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	outfile_remove_all_unfinished();
	char *text = test_read(path);
	assert_string_equal(text, "");
	free(text);
	csv_writer_abort(&w);
	/* a row written: kept */
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	csv_writer_int(&w, 1);
	csv_writer_str(&w, "t");
	csv_writer_int(&w, 2);
	ok(csv_writer_end_row(&w, &e), &e);
	outfile_remove_all_unfinished();
	text = test_read(path);
	assert_string_equal(text, "id,text,ms\n1,t,2\n");
	free(text);
	ok(csv_writer_commit(&w, &e), &e);
	/* committed without a row: the header stays */
	test_spit(path, "", 0);
	ok(csv_writer_open_append(&w, path, cols3, 3, &e), &e);
	ok(csv_writer_commit(&w, &e), &e);
	outfile_remove_all_unfinished();
	text = test_read(path);
	assert_string_equal(text, "id,text,ms\n");
	free(text);
}

static void test_append_errors(void **state)
{
	const char *path = test_path("mismatch.csv");
	struct csv_writer w, w2;
	struct sp_err e;
	const char *old = "id,text\n1,x\n";
	test_spit(path, old, strlen(old));
	assert_int_equal(csv_writer_open_append(&w, path, cols3, 3, &e), -1);
	assert_string_equal(
		strstr(e.msg, "mismatch.csv"),
		"mismatch.csv: header has columns id,text but this run writes id,text,ms");
	char *text = test_read(path);
	assert_string_equal(text, old); /* untouched */
	free(text);

	const char *ragged = "id,text,ms\n1,x,2\n3,y\n4,z,5\n";
	test_spit(path, ragged, strlen(ragged));
	assert_int_equal(csv_writer_open_append(&w, path, cols3, 3, &e), -1);
	assert_non_null(
		strstr(e.msg, "mismatch.csv:3: expected 3 fields (as in the header), found 2"));

	/* Two writers of one file: the second is refused while the first holds it. */
	const char *shared = test_path("shared.csv");
	ok(csv_writer_open_append(&w, shared, cols3, 3, &e), &e);
	assert_int_equal(csv_writer_open_append(&w2, shared, cols3, 3, &e), -1);
	assert_non_null(strstr(e.msg, "shared.csv: another process is appending to this file"));
	ok(csv_writer_commit(&w, &e), &e);
	ok(csv_writer_open_append(&w2, shared, cols3, 3, &e), &e);
	csv_writer_abort(&w2);
}

static void hex(struct buf *b, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	if (!*s)
		buf_addc(b, '-');
	for (; *s; s++) {
		buf_addc(b, digits[(unsigned char)*s >> 4]);
		buf_addc(b, digits[(unsigned char)*s & 15]);
	}
}

/* The nasty rows as Python's reader should print them: hex fields. */
static char *expected_hex(void)
{
	struct buf b = {0};
	for (int i = -1; i < NNASTY; i++) {
		char id[16];
		snprintf(id, sizeof id, "%d", i);
		hex(&b, i < 0 ? "id" : id);
		for (int j = 1; j < 3; j++) {
			buf_addc(&b, ' ');
			hex(&b, i < 0 ? cols3[j] : nasty[i]);
		}
		buf_addc(&b, '\n');
	}
	buf_addc(&b, '\0');
	return b.data;
}

static int have_python(void)
{
	return access(PYTHON, X_OK) == 0;
}

/* Our writer, Python's reader. */
static void test_python_reads_ours(void **state)
{
	if (!have_python())
		skip();
	const char *csv = test_path("for-python.csv");
	write_nasty(csv);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 PYTHON
		 " -c 'import csv, sys\n"
		 "with open(sys.argv[1], newline=\"\", encoding=\"utf-8\") as f:\n"
		 "    for row in csv.reader(f, strict=True):\n"
		 "        print(\" \".join(x.encode().hex() or \"-\" for x in row))' %s > %s",
		 csv, test_path("python-out.txt"));
	assert_int_equal(system(cmd), 0);
	char *got = test_read(test_path("python-out.txt"));
	char *want = expected_hex();
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* Python's writer, our reader. */
static void test_we_read_pythons(void **state)
{
	if (!have_python())
		skip();
	char *rows = expected_hex();
	test_spit(test_path("rows.hex"), rows, strlen(rows));
	free(rows);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 PYTHON
		 " -c 'import csv, sys\n"
		 "rows = [[\"\" if x == \"-\" else bytes.fromhex(x).decode() for x in l.split()]\n"
		 "        for l in open(sys.argv[1])]\n"
		 "with open(sys.argv[2], \"w\", newline=\"\", encoding=\"utf-8\") as f:\n"
		 "    csv.writer(f).writerows(rows)' %s %s",
		 test_path("rows.hex"), test_path("from-python.csv"));
	assert_int_equal(system(cmd), 0);
	struct table t;
	struct sp_err e;
	ok(table_read(test_path("from-python.csv"), &t, &e), &e);
	assert_int_equal(t.nrows, NNASTY);
	for (int i = 0; i < NNASTY; i++) {
		assert_string_equal(table_cell(&t, (size_t)i, 1), nasty[i]);
		assert_string_equal(table_cell(&t, (size_t)i, 2), nasty[i]);
	}
	table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting_exact),
		cmocka_unit_test(test_round_trip_nasty),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_stdout),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_append_abort),
		cmocka_unit_test(test_append_empty_on_signal),
		cmocka_unit_test(test_append_errors),
		cmocka_unit_test(test_python_reads_ours),
		cmocka_unit_test(test_we_read_pythons),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
