/* Unit tests of the small shared modules: errors, atomic files, RNG,
 * progress formatting, SLURM part defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/outfile.h"
#include "common/cli.h"
#include "core/err.h"
#include "common/progress.h"
#include "core/rng.h"
#include "testutil.h"

static void test_err_messages(void **state)
{
	struct sp_err e;
	assert_int_equal(sp_fail(&e, "%s: bad %d", "x.npy", 3), -1);
	assert_string_equal(e.msg, "x.npy: bad 3");
	sp_err_prefix(&e, "%s", "load");
	assert_string_equal(e.msg, "load: x.npy: bad 3");
	assert_int_equal(sp_fail(NULL, "ignored"), -1);
}


static void test_afile_commit_and_abort(void **state)
{
	char path[256];
	struct sp_err e;
	struct outfile f;
	snprintf(path, sizeof path, "%s/out.bin", test_dir);

	assert_int_equal(outfile_open(&f, path, &e), 0);
	assert_int_equal(outfile_write(&f, "abc", 3, &e), 0);
	assert_int_equal(access(path, F_OK), -1); /* nothing visible until commit */
	assert_int_equal(outfile_commit(&f, &e), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3);

	assert_int_equal(outfile_open(&f, path, &e), 0);
	outfile_write(&f, "abcdef", 6, &e);
	outfile_abort(&f);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3); /* old content untouched */
	assert_int_equal(test_dir_count(), 1);
}

static void test_afile_errors(void **state)
{
	struct sp_err e;
	struct outfile f;
	char path[256];
	snprintf(path, sizeof path, "%s/no/such/dir/out.bin", test_dir);
	assert_int_equal(outfile_open(&f, path, &e), -1);
	assert_non_null(strstr(e.msg, "No such file or directory"));
	assert_non_null(strstr(e.msg, "no/such/dir/out.bin"));
	assert_int_equal(outfile_open(&f, test_dir, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
}

static void test_afile_signal_cleanup(void **state)
{
	struct sp_err e;
	struct outfile f;
	char path[256];
	snprintf(path, sizeof path, "%s/sig.bin", test_dir);
	assert_int_equal(outfile_open(&f, path, &e), 0);
	assert_int_equal(test_dir_count(), 2);
	outfile_remove_all_unfinished();
	assert_int_equal(test_dir_count(), 1);
	outfile_abort(&f);
}

static void test_rng_reproducible(void **state)
{
	struct rng a, b, c;
	rng_init(&a, 42, 0);
	rng_init(&b, 42, 0);
	rng_init(&c, 42, 1);
	int same_stream = 1, other_stream = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rng_u64(&a), y = rng_u64(&b), z = rng_u64(&c);
		same_stream &= x == y;
		other_stream += x == z;
	}
	assert_true(same_stream);
	assert_int_equal(other_stream, 0);
	/* Pinned value: the generator must not change across versions or machines. */
	rng_init(&a, 1, 0);
	assert_true(rng_u64(&a) == 0xe32f8fa111e59733ULL);
}

static void test_rng_distributions(void **state)
{
	struct rng r;
	rng_init(&r, 7, 0);
	enum { N = 200000 };
	double sum = 0, sumsq = 0, usum = 0;
	int hist[10] = {0};
	for (int i = 0; i < N; i++) {
		double x = rng_normal(&r);
		sum += x;
		sumsq += x * x;
		double u = rng_uniform(&r);
		assert_true(u >= 0 && u < 1);
		usum += u;
		uint64_t k = rng_below(&r, 10);
		assert_true(k < 10);
		hist[k]++;
	}
	assert_true(fabs(sum / N) < 0.01);
	assert_true(fabs(sumsq / N - 1) < 0.02);
	assert_true(fabs(usum / N - 0.5) < 0.005);
	for (int k = 0; k < 10; k++)
		assert_true(abs(hist[k] - N / 10) < N / 100);
}

static void test_progress_format(void **state)
{
	char b[32];
	assert_string_equal(progress_format_seconds(4.25, b, sizeof b), "4.2s");
	assert_string_equal(progress_format_seconds(185, b, sizeof b), "3m05s");
	assert_string_equal(progress_format_seconds(3720, b, sizeof b), "1h02m");
	assert_string_equal(progress_format_seconds(-1, b, sizeof b), "?");
}

/* Runs a progress report with stderr sent to a file; returns what it wrote. */
static char *progress_output(int verbosity, uint64_t total)
{
	char path[300];
	snprintf(path, sizeof path, "%s/progress.txt", test_dir);
	fflush(stderr);
	int saved = dup(2);
	FILE *fp = freopen(path, "w", stderr);
	assert_non_null(fp);
	cli_verbosity = verbosity;
	setenv("SPKIT_PROGRESS_INTERVAL", "0.001", 1);
	struct progress p;
	progress_start(&p, "sweep", "shapes", total);
	for (uint64_t i = 1; i <= 3; i++) {
		struct timespec ts = {0, 3000000};
		nanosleep(&ts, NULL);
		progress_update(&p, i);
	}
	progress_finish(&p, 3);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cli_verbosity = 1;
	unsetenv("SPKIT_PROGRESS_INTERVAL");
	static char text[4096];
	FILE *in = fopen(path, "r");
	size_t n = fread(text, 1, sizeof text - 1, in);
	fclose(in);
	text[n] = '\0';
	return text;
}

static void test_progress_lines_when_not_a_terminal(void **state)
{
	/* Not a terminal: plain lines, one per interval, and a final one. */
	char *out = progress_output(1, 10);
	assert_non_null(strstr(out, "sweep: 1/10 shapes (10.0%)"));
	assert_non_null(strstr(out, "sweep: 3/10 shapes (30.0%)"));
	assert_non_null(strstr(out, "ETA"));
	assert_null(strchr(out, '\r')); /* no terminal redraws in a log file */
	int lines = 0;
	for (char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 4); /* three updates and the finish */
	/* Unknown total: counts and rates, no percentage. */
	out = progress_output(1, 0);
	assert_non_null(strstr(out, "sweep: 3 shapes"));
	assert_null(strstr(out, "%"));
	/* -q: nothing at all. */
	out = progress_output(0, 10);
	assert_string_equal(out, "");
}

static void test_parts_from_slurm(void **state)
{
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_PROCID");
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	setenv("SLURM_ARRAY_TASK_ID", "12", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
	struct cli_parts p = cli_parts(NULL, NULL);
	assert_int_equal(p.count, 4);
	assert_int_equal(p.index, 3);
	p = cli_parts("8", "8"); /* explicit options win */
	assert_int_equal(p.count, 8);
	assert_int_equal(p.index, 8);
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_MIN");
	setenv("SLURM_NTASKS", "2", 1);
	setenv("SLURM_PROCID", "1", 1);
	p = cli_parts(NULL, NULL);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.index, 2);
	assert_true(cli_parts_owns(p, 1) && cli_parts_owns(p, 3) && !cli_parts_owns(p, 2));
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_PROCID");
	p = cli_parts(NULL, NULL);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.index, 1);
}

static void test_choice(void **state)
{
	const char *const names[] = {"fp16", "bf16", "fp32", NULL};
	assert_int_equal(cli_choice("--precision", "bf16", names), 1);
	assert_int_equal(cli_choice("--precision", "fp32", names), 2);
	int got[3];
	assert_int_equal(cli_choice_list("--dtype", "fp32,fp16", names, got, 3), 2);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[1], 0);
	assert_int_equal(cli_choice_list("--dtype", "bf16", names, got, 3), 1);
	assert_int_equal(got[0], 1);
	assert_int_equal(cli_device("cpu"), DEVICE_CPU);
	assert_int_equal(cli_device("auto"), DEVICE_AUTO);
	assert_int_equal(cli_device("cuda"), DEVICE_CUDA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_messages),
		cmocka_unit_test(test_afile_commit_and_abort),
		cmocka_unit_test(test_afile_errors),
		cmocka_unit_test(test_afile_signal_cleanup),
		cmocka_unit_test(test_rng_reproducible),
		cmocka_unit_test(test_rng_distributions),
		cmocka_unit_test(test_progress_format),
		cmocka_unit_test(test_progress_lines_when_not_a_terminal),
		cmocka_unit_test(test_parts_from_slurm),
		cmocka_unit_test(test_choice),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
