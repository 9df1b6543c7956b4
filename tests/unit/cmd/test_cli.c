/* Unit tests of the CLI layer (cmd/common): progress formatting and
 * lines, SLURM part defaults, choices. */
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

#include "common/cli.h"
#include "core/err.h"
#include "common/progress.h"
#include "testutil.h"

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
		cmocka_unit_test(test_progress_format),
		cmocka_unit_test(test_progress_lines_when_not_a_terminal),
		cmocka_unit_test(test_parts_from_slurm),
		cmocka_unit_test(test_choice),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
