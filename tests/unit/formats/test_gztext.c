/* Gzipped text: lines handed out whole and numbered across the reader's
 * chunks (and past a line longer than a chunk), CRLF and a last line
 * without a newline, plain text read as is, the whole-file read, and the
 * messages for a missing, a directory and a truncated file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/gztext.h"
#include "testutil.h"

/* Every line of path, each checked against want[i] and its number. */
static void expect_lines(const char *path, const char *const *want, int n)
{
	struct gztext t;
	struct text_span line;
	struct sp_err e;
	if (gztext_open(&t, path, &e))
		fail_msg("%s", e.msg);
	for (int i = 0; i < n; i++) {
		assert_int_equal(gztext_line(&t, &line, &e), 1);
		assert_int_equal(t.scan.line, i + 1);
		assert_int_equal(line.end - line.p, strlen(want[i]));
		assert_memory_equal(line.p, want[i], strlen(want[i]));
	}
	assert_int_equal(gztext_line(&t, &line, &e), 0);
	assert_int_equal(gztext_line(&t, &line, &e), 0);
	gztext_close(&t);
}

static void test_small_file(void **state)
{
	static const char text[] = "0,1\r\n2,3\n\nlast";
	static const char *const want[] = {"0,1", "2,3", "", "last"};
	expect_lines(test_write_gz("small.csv.gz", text, sizeof text - 1), want, 4);
	/* Not gzip: read as it is. */
	expect_lines(test_write("plain.csv.gz", text), want, 4);
	expect_lines(test_write_gz("empty.csv.gz", "", 0), NULL, 0);
}

/* Some 10 MB of lines, so they cross the 4 MiB chunks at every offset the
 * data happens to give, with one line longer than a chunk in the middle. */
static void test_lines_across_chunks(void **state)
{
	enum { LINES = 1000000, LONG_AT = 500000, LONG_LEN = 5 << 20 };
	size_t cap = (size_t)LINES * 16 + LONG_LEN, len = 0;
	char *text = malloc(cap);
	for (int i = 0; i < LINES; i++) {
		if (i == LONG_AT) {
			memset(text + len, 'x', LONG_LEN);
			len += LONG_LEN;
			text[len++] = '\n';
			continue;
		}
		len += (size_t)snprintf(text + len, cap - len, "%d,%d\n", i, i * 7);
	}
	const char *path = test_write_gz("big.csv.gz", text, len);
	struct gztext t;
	struct text_span line;
	struct sp_err e;
	assert_int_equal(gztext_open(&t, path, &e), 0);
	for (int i = 0; i < LINES; i++) {
		assert_int_equal(gztext_line(&t, &line, &e), 1);
		assert_int_equal(t.scan.line, i + 1);
		if (i == LONG_AT) {
			assert_int_equal(line.end - line.p, LONG_LEN);
			assert_true(line.p[0] == 'x' && line.end[-1] == 'x');
			continue;
		}
		char want[32];
		int n = snprintf(want, sizeof want, "%d,%d", i, i * 7);
		if (line.end - line.p != n || memcmp(line.p, want, (size_t)n))
			fail_msg("line %d is not '%s'", i + 1, want);
	}
	assert_int_equal(gztext_line(&t, &line, &e), 0);
	gztext_close(&t);

	char *whole;
	size_t whole_len;
	assert_int_equal(gztext_read(path, &whole, &whole_len, &e), 0);
	assert_int_equal(whole_len, len);
	assert_memory_equal(whole, text, len);
	assert_int_equal(whole[len], '\0');
	free(whole);
	free(text);
}

static void test_errors(void **state)
{
	struct gztext t;
	struct sp_err e;
	char *whole;
	size_t len;
	const char *missing = test_path("missing.csv.gz");
	assert_int_equal(gztext_open(&t, missing, &e), -1);
	assert_msg_has(&e, missing, ": cannot open: No such file", NULL);
	assert_null(t.buf);
	assert_int_equal(gztext_read(test_dir, &whole, &len, &e), -1);
	assert_msg_has(&e, test_dir, ": is a directory", NULL);
	assert_null(whole);

	/* A gzip stream cut in half fails at the cut, never passing for a
	 * shorter file. */
	enum { LINES = 200000 };
	char *text = malloc((size_t)LINES * 16);
	size_t n = 0;
	for (int i = 0; i < LINES; i++)
		n += (size_t)sprintf(text + n, "%d\n", i * 7919 % 100003);
	const char *path = test_write_gz("cut.csv.gz", text, n);
	size_t size;
	unsigned char *gz = test_slurp(path, &size);
	test_spit(path, gz, size / 2);
	assert_int_equal(gztext_open(&t, path, &e), 0);
	struct text_span line;
	int rc;
	while ((rc = gztext_line(&t, &line, &e)) == 1)
		;
	assert_int_equal(rc, -1);
	assert_msg_has(&e, path, ": corrupt or truncated gzip data after line ", NULL);
	gztext_close(&t);
	assert_int_equal(gztext_read(path, &whole, &len, &e), -1);
	assert_msg_has(&e, path, ": corrupt or truncated gzip data after ", " bytes", NULL);
	free(gz);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_file),
		cmocka_unit_test(test_lines_across_chunks),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
