/* Resumable sweeps (sweep.h): the flow kernel-sample and ksmm-tune use,
 * a kill in the middle of a row, a rerun that does only what is left, and
 * a sweep of 10^5 configurations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "sweep/sweep.h"
#include "sweep/table.h"
#include "testutil.h"

static void ok(int rc, const struct sp_err *e)
{
	if (rc)
		fail_msg("%s", e->msg);
}

/* kernel-sample's loop, as the program would write it: a grid of (mp, b)
 * shapes, skip what is done, time the rest. Stops after `budget` new
 * rows (a job running out of time); returns how many it ran. */
static int sample(const char *path, int budget)
{
	static const char *const cols[] = {"mp", "b", "F_dur(us)", "B_dur(us)"};
	struct sweep s;
	struct sp_err err;
	ok(sweep_open(&s, path, cols, 4, cols, 2, &err), &err);
	int ran = 0;
	for (int mp = 1; mp <= 8 && ran < budget; mp *= 2) {
		for (int b = 4; b <= 16 && ran < budget; b += 4) {
			char mp_s[24], b_s[24];
			snprintf(mp_s, sizeof mp_s, "%d", mp);
			snprintf(b_s, sizeof b_s, "%d", b);
			if (sweep_done(&s, (const char *[]){mp_s, b_s}))
				continue;
			csv_writer_int(&s.w, mp);
			csv_writer_int(&s.w, b);
			csv_writer_double(&s.w, mp * b * 1.5, 6);
			csv_writer_double(&s.w, mp * b * 3.25, 6);
			ok(sweep_end_row(&s, &err), &err);
			ran++;
		}
	}
	ok(sweep_close(&s, &err), &err);
	return ran;
}

static void test_resume_flow(void **state)
{
	const char *path = test_path("sampling.csv");
	assert_int_equal(sample(path, 5), 5); /* 4 x 4 = 16 shapes; a first job does 5 */
	assert_int_equal(sample(path, 100), 11);
	assert_int_equal(sample(path, 100), 0); /* nothing left */

	/* A kill mid-row on a later run: the half row goes, the shape reruns. */
	char *text = test_read(path);
	size_t len = strlen(text);
	const char *last = strrchr(text, '\n');
	while (last > text && last[-1] != '\n')
		last--;
	/* Cut the last row in half, as a kill during its write would. */
	test_spit(path, text, (size_t)(last - text) + 4);
	assert_int_equal(sample(path, 100), 1);
	char *again = test_read(path);
	assert_string_equal(again, text);
	assert_int_equal(strlen(again), len);
	free(again);
	free(text);

	struct table t;
	struct sp_err e;
	ok(table_read(path, &t, &e), &e);
	assert_int_equal(t.nrows, 16);
	assert_string_equal(table_cell(&t, 15, 0), "8");
	assert_string_equal(table_cell(&t, 15, 3), "416");
	table_free(&t);
}

/* ksmm-tune's rows: every column before the timings is the key, strings
 * included, and a configuration listed twice in one run is done once. */
static void test_string_keys_and_repeats(void **state)
{
	static const char *const cols[] = {"dtype", "layout", "tile", "ms", "status"};
	const char *path = test_path("tune.csv");
	struct sweep s;
	struct sp_err e;
	ok(sweep_open(&s, path, cols, 5, cols, 3, &e), &e);
	const char *configs[][3] = {
		{"fp16", "bs-first", "64,32"},
		{"fp32", "bs \"last\"", "16,16"},
		{"fp16", "bs-first", "64,32"},
	};
	int ran = 0;
	for (int i = 0; i < 3; i++) {
		if (sweep_done(&s, configs[i]))
			continue;
		for (int j = 0; j < 3; j++)
			csv_writer_str(&s.w, configs[i][j]);
		csv_writer_double(&s.w, 0.25, 0);
		csv_writer_str(&s.w, "ok");
		ok(sweep_end_row(&s, &e), &e);
		ran++;
	}
	assert_int_equal(ran, 2);
	ok(sweep_close(&s, &e), &e);
	ok(sweep_open(&s, path, cols, 5, cols, 3, &e), &e);
	assert_int_equal(s.resumed, 2);
	assert_true(sweep_done(&s, configs[1]));
	assert_false(sweep_done(&s, (const char *[]){"fp16", "bs-first", "64"}));
	assert_false(sweep_done(&s, (const char *[]){"fp16", "bs-first,64", ""}));
	ok(sweep_close(&s, &e), &e);
}

/* estimate-train-time writes its shapes as NumPy floats ("1024.0"): its
 * part files resume as kernel-sample's own, and only whole numbers are
 * read that way ("1.5", "10.", "1e3" and "x.0" stay distinct keys). */
static void test_float_written_keys(void **state)
{
	static const char *const cols[] = {"mp", "b", "F_dur(us)", "B_dur(us)"};
	const char *path = test_path("original.csv");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("mp,b,F_dur(us),B_dur(us)\n1.0,4.00,6.0,13.0\n-2.0,1.5,1,1\n10.,1e3,1,1\nx.0,0,1,1\n", f);
	assert_int_equal(fclose(f), 0);
	struct sweep s;
	struct sp_err e;
	ok(sweep_open(&s, path, cols, 4, cols, 2, &e), &e);
	assert_int_equal(s.resumed, 4);
	assert_true(sweep_done(&s, (const char *[]){"1", "4"}));
	assert_true(sweep_done(&s, (const char *[]){"-2", "1.5"}));
	assert_false(sweep_done(&s, (const char *[]){"-2", "1"}));
	assert_false(sweep_done(&s, (const char *[]){"10", "1000"}));
	assert_true(sweep_done(&s, (const char *[]){"10.", "1e3"}));
	assert_false(sweep_done(&s, (const char *[]){"x", "0"}));
	ok(sweep_close(&s, &e), &e);
	/* the rest of the grid after the original's rows: 4 - 1 done */
	assert_int_equal(sample(path, 100), 15);
}

static void test_errors(void **state)
{
	static const char *const cols[] = {"a", "b", "ms"};
	struct sweep s;
	struct sp_err e;
	assert_int_equal(sweep_open(&s, test_path("e.csv"), cols, 3, (const char *[]){"c"}, 1, &e),
			 -1);
	assert_non_null(strstr(e.msg, "e.csv: key column 'c' is not among the columns"));
	assert_int_equal(sweep_open(&s, test_path("e.csv"), cols, 3, cols, 0, &e), -1);
	assert_non_null(strstr(e.msg, "a sweep needs at least one key column"));
	const char *other = "a,ms\n1,2\n";
	test_spit(test_path("e.csv"), other, strlen(other));
	assert_int_equal(sweep_open(&s, test_path("e.csv"), cols, 3, cols, 2, &e), -1);
	assert_non_null(strstr(e.msg, "e.csv: header has columns a,ms but this run writes a,b,ms"));
	/* A row missing its key fields is the writer's field-count error. */
	unlink(test_path("e.csv"));
	ok(sweep_open(&s, test_path("e.csv"), cols, 3, cols, 2, &e), &e);
	csv_writer_int(&s.w, 1);
	assert_int_equal(sweep_end_row(&s, &e), -1);
	assert_non_null(strstr(e.msg, "row has 1 fields, the header 3"));
	ok(sweep_close(&s, &e), &e);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 10^5 rows: resuming reads them all into the set, and each question is
 * a hash lookup (a linear scan would take minutes here). */
static void test_many_keys(void **state)
{
	enum { N = 100000 };
	static const char *const cols[] = {"m", "n", "k", "ms"};
	const char *path = test_path("big.csv");
	struct sweep s;
	struct sp_err e;
	ok(sweep_open(&s, path, cols, 4, cols, 3, &e), &e);
	for (int i = 0; i < N; i++) {
		csv_writer_int(&s.w, i);
		csv_writer_int(&s.w, i % 7);
		csv_writer_int(&s.w, 3);
		csv_writer_double(&s.w, i * 0.001, 0);
		ok(sweep_end_row(&s, &e), &e);
	}
	ok(sweep_close(&s, &e), &e);

	double t0 = now();
	ok(sweep_open(&s, path, cols, 4, cols, 3, &e), &e);
	assert_int_equal(s.resumed, N);
	char m[24], n[24];
	int done = 0;
	for (int round = 0; round < 7; round++)
		for (int i = 0; i < N; i++) {
			snprintf(m, sizeof m, "%d", i);
			snprintf(n, sizeof n, "%d", (i + round) % 7);
			done += sweep_done(&s, (const char *[]){m, n, "3"});
		}
	double seconds = now() - t0;
	ok(sweep_close(&s, &e), &e);
	assert_int_equal(done, N); /* only round 0 asks for keys that exist */
	assert_true(seconds < 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_flow),
		cmocka_unit_test(test_string_keys_and_repeats),
		cmocka_unit_test(test_float_written_keys),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many_keys),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
