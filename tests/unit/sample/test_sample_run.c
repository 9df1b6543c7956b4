/* kernel-sample's driver (sample_run.h, sample_sweep.h) with a toy operator
 * of this test and a scripted clock: the schedule (warm-up runs on the
 * warm-up shape, timed runs on the shape, inputs made once per shape), the
 * original's average, the NVTX range names, and get_all's files: rows,
 * skipped and failed shapes, the log lines, parts, and resuming after a
 * kill (a cut last row) with nothing lost or repeated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "sample/sample_config.h"
#include "sample/sample_run.h"
#include "sample/sample_sweep.h"
#include "testutil.h"

/* The toy: shape (n, m); m = 3 is refused, n = 4 fails in setup (as an
 * allocation would, its message naming an operand with a backslash and a
 * newline, as a name from a file may hold), everything else runs and
 * counts its calls. */
struct toy {
	int64_t n, m;
	int fwd, bwd;
};

static int setups, teardowns, last_fwd, last_bwd;
/* When set, the setup of a shape with n = 5 caps the size of files at this
 * many bytes (RLIMIT_FSIZE), so that its row cannot be written. */
static rlim_t cap_files_at_n5;

static int toy_check(const int64_t *shape, struct sp_err *why)
{
	return shape[1] == 3 ? sp_fail(why, "m 3 is refused") : 0;
}

static int toy_setup(const int64_t *shape, enum sample_precision p, uint64_t seed, void **state,
		     struct sp_err *err)
{
	if (shape[0] == 4)
		return sp_fail(err, "out of memory for 'x\\y\n' (4 MB)");
	if (shape[0] == 5 && cap_files_at_n5) {
		struct rlimit rl;
		getrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = cap_files_at_n5;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	struct toy *t = calloc(1, sizeof *t);
	t->n = shape[0], t->m = shape[1];
	*state = t;
	setups++;
	return 0;
}

static int toy_forward(void *state, struct sp_err *err)
{
	((struct toy *)state)->fwd++;
	return 0;
}

static int toy_backward(void *state, struct sp_err *err)
{
	((struct toy *)state)->bwd++;
	return 0;
}

static void toy_teardown(void *state)
{
	struct toy *t = state;
	last_fwd = t->fwd, last_bwd = t->bwd;
	teardowns++;
	free(t);
}

static const char *const toy_names[] = {"n", "m"};
static const struct sample_op toy = {"toy", 2, toy_names, toy_check, toy_setup, toy_forward,
				     toy_backward, toy_teardown};

/* The clock: runs the call, and says it took 10 * n + the run's place in a
 * fixed shuffle of 1..10 microseconds (forward), twice that (backward). */
static const double shuffle[10] = {7, 2, 9, 1, 10, 4, 6, 3, 8, 5};
static int ticks;
static char ranges[64][64];
static int nranges, depth;

static int script_time(void *ctx, sample_call_fn fn, void *state, double *us, struct sp_err *err)
{
	struct toy *t = state;
	int backward = fn == toy_backward;
	if (fn(state, err))
		return -1;
	*us = (10.0 * (double)t->n + shuffle[ticks++ / 2 % 10]) * (backward ? 2 : 1);
	return 0;
}

static void push(const char *name)
{
	snprintf(ranges[nranges++ % 64], sizeof ranges[0], "%s", name);
	depth++;
}

static void pop(void)
{
	depth--;
}

static struct sample_clock script_clock(void)
{
	struct sample_clock c = {.device = "ToyGPU", .time = script_time, .range_push = push,
				 .range_pop = pop};
	return c;
}

static const char config[] = "kernel_name: toy\n"
			     "columns_name: [n, m, F_dur(us), B_dur(us)]\n"
			     "first_n_column: 2\n"
			     "starts: [1, 1]\n"
			     "steps: [1, 1]\n"
			     "ends: [4, 3]\n"
			     "operators: [add, add]\n"
			     "warmup_shapes: [1, 1]\n"
			     "wait: 2\n"
			     "warmup: 3\n"
			     "active: 10\n"
			     "shapes: [2, 2]\n";

static struct sample_config read_config(const char *text)
{
	struct sample_config c;
	struct sp_err e;
	if (sample_config_read_buffer(text, strlen(text), "toy.yml", &c, &e))
		fail_msg("%s", e.msg);
	return c;
}

static struct sample_job job_of(const struct sample_config *cfg, const struct sample_clock *c)
{
	struct sample_job j = {.cfg = cfg, .op = &toy, .clock = c, .precision = SAMPLE_FP32,
			       .parts = 1, .part = 1, .output_dir = test_dir};
	return j;
}

static void test_trimmed_mean(void **state)
{
	double ten[10] = {7, 2, 9, 1, 10, 4, 6, 3, 8, 5};
	assert_true(sample_trimmed_mean(ten, 10) == 5.0); /* (3 + 4 + 5 + 6 + 7) / 5 */
	double four[4] = {40, 10, 30, 20};
	assert_true(sample_trimmed_mean(four, 4) == 35.0); /* sorted[2:4] */
	double two[2] = {3, 1};
	assert_true(sample_trimmed_mean(two, 2) == 2.0); /* all */
	double one[1] = {42};
	assert_true(sample_trimmed_mean(one, 1) == 42.0);
}

static void test_measure_schedule(void **state)
{
	struct sample_config cfg = read_config(config);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sample_times t;
	struct sp_err e;
	setups = teardowns = ticks = nranges = depth = 0;
	if (sample_one(&j, (const int64_t[]){2, 2}, &t, &e))
		fail_msg("%s", e.msg);
	assert_true(t.fwd_us == 25.0); /* 20 + the mean of the 3rd..7th of 1..10 */
	assert_true(t.bwd_us == 50.0);
	/* the warm-up shape and the shape: set up once each, torn down */
	assert_int_equal(setups, 2);
	assert_int_equal(teardowns, 2);
	/* torn down last: the warm-up's state ran wait + warmup times, untimed;
	 * the shape's state (before it) only the 10 timed runs */
	assert_int_equal(last_fwd, 5);
	assert_int_equal(last_bwd, 5);
	assert_int_equal(ticks, 20);
	assert_int_equal(nranges, 1);
	assert_string_equal(ranges[0], "toy_fp32_2_2");
	assert_int_equal(depth, 0);

	/* refused and failing shapes name the config and the shape */
	assert_int_equal(sample_one(&j, (const int64_t[]){2, 3}, &t, &e), -1);
	assert_string_equal(e.msg, "toy.yml: toy [2, 3]: m 3 is refused");
	assert_int_equal(sample_one(&j, (const int64_t[]){4, 1}, &t, &e), -1);
	assert_string_equal(e.msg, "toy.yml: toy [4, 1]: out of memory for 'x\\y\n' (4 MB)");
	assert_int_equal(depth, 0);
	sample_config_free(&cfg);
}

static void test_profile_and_run_once(void **state)
{
	struct sample_config cfg = read_config(config);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sp_err e;
	setups = teardowns = ticks = nranges = 0;
	if (sample_profile(&j, (const int64_t[]){3, 1}, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ticks, 0); /* untimed */
	assert_int_equal(nranges, 1);
	assert_string_equal(ranges[0], "toy_fp32_3_1");
	assert_int_equal(setups, 2);
	assert_int_equal(last_fwd, 5); /* the warm-up state, torn down last */
	if (sample_run_once(&j, (const int64_t[]){3, 2}, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(setups, 3); /* no warm-up shape */
	assert_int_equal(last_fwd, 1);
	assert_int_equal(last_bwd, 1);
	assert_int_equal(nranges, 1);
	sample_config_free(&cfg);
}

static void test_job_check(void **state)
{
	static const char other[] = "kernel_name: toy\n"
				    "columns_name: [m, n, F, B]\n"
				    "first_n_column: 2\n"
				    "starts: [1, 1]\n"
				    "steps: [1, 1]\n"
				    "ends: [2, 2]\n"
				    "operators: [add, add]\n";
	struct sample_config cfg = read_config(other);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sp_err e;
	assert_int_equal(sample_job_check(&j, &e), -1);
	assert_string_equal(e.msg, "toy.yml:2: columns_name: toy takes the shape (n, m), the "
				   "config names (m, n)");
	sample_config_free(&cfg);

	char bad_warm[sizeof config + 8];
	snprintf(bad_warm, sizeof bad_warm, "%s", config);
	memcpy(strstr(bad_warm, "warmup_shapes: [1, 1]"), "warmup_shapes: [1, 3]", 21);
	cfg = read_config(bad_warm);
	j = job_of(&cfg, &c);
	assert_int_equal(sample_job_check(&j, &e), -1);
	assert_string_equal(e.msg, "toy.yml: warmup_shapes [1, 3]: m 3 is refused");
	sample_config_free(&cfg);
}

static void test_log_line(void **state)
{
	char buf[256];
	sample_log_progress(buf, sizeof buf, "2024-01-15 10:30:45", "flash_atten", "fp16", 100,
			    1000, 1.23);
	assert_string_equal(buf, "[2024-01-15 10:30:45]Kernel: flash_atten_fp16 | "
				 "Progress: 100/1000=10.00% | Speed: 1.23s/sample | "
				 "Remaining: 0d0h18m27s");
	sample_log_progress(buf, sizeof buf, "2024-01-15 10:30:45", "bmm", "bf16", 1, 90001,
			    3.5);
	assert_string_equal(buf, "[2024-01-15 10:30:45]Kernel: bmm_bf16 | "
				 "Progress: 1/90001=0.00% | Speed: 3.50s/sample | "
				 "Remaining: 3d15h30m0s");
}

static const char *csv_path(int parts, int part)
{
	return test_path("sampling_data/ToyGPU_toy_fp32_%d_%d.csv", parts, part);
}

static struct sample_sweep_result sweep(int parts, int part)
{
	struct sample_config cfg = read_config(config);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sample_sweep_result r;
	struct sp_err e;
	j.parts = parts, j.part = part;
	ticks = 0;
	if (sample_sweep(&j, &r, &e))
		fail_msg("%s", e.msg);
	sample_config_free(&cfg);
	return r;
}

/* Lines of a file that hold `what`. */
static int count_lines(const char *path, const char *what)
{
	char *text = test_read(path);
	int n = 0;
	assert_non_null(text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		n += strstr(line, what) != NULL;
	free(text);
	return n;
}

static void test_sweep_and_resume(void **state)
{
	/* 4 x 3 shapes: m = 3 refused (4), n = 4 failing (2 more), 6 rows */
	struct sample_sweep_result r = sweep(1, 1);
	assert_int_equal(r.total, 12);
	assert_int_equal(r.measured, 6);
	assert_int_equal(r.skipped, 4);
	assert_int_equal(r.failed, 2);
	assert_int_equal(r.resumed, 0);
	assert_string_equal(r.csv, csv_path(1, 1));
	char *text = test_read(r.csv);
	assert_string_equal(text, "n,m,F_dur(us),B_dur(us)\n"
				  "1,1,15,30\n1,2,15,30\n2,1,25,50\n2,2,25,50\n"
				  "3,1,35,70\n3,2,35,70\n");
	const char *log = test_path("sampling_log/ToyGPU_toy_fp32_1_1.txt");
	assert_int_equal(count_lines(log, "]Kernel: toy_fp32 | Start: part 1 of 1, 12 shapes"), 1);
	assert_int_equal(count_lines(log, "| Skipped: [2, 3]: m 3 is refused"), 1);
	/* the message escaped, once, on the log's one line */
	assert_int_equal(count_lines(log, "| Failed: [4, 1]: out of memory for 'x\\\\y\\n' (4 MB)"),
			 1);
	assert_int_equal(count_lines(log, "| Progress: 5/12=41.67% | Speed: "), 1);
	assert_int_equal(count_lines(log, "| Progress: 10/12=83.33% | "), 1);
	assert_int_equal(count_lines(log, "| Progress: 12/12=100.00% | "), 1);

	/* A rerun times nothing done: only the refused and failed are tried. */
	r = sweep(1, 1);
	assert_int_equal(r.resumed, 6);
	assert_int_equal(r.measured, 0);
	assert_int_equal(r.skipped + r.failed, 6);
	assert_int_equal(ticks, 0);

	/* A kill in the middle of writing the last row: it is cut off and the
	 * shape is timed again; the file ends as it was, nothing repeated. */
	size_t len = strlen(text);
	test_spit(r.csv, text, len - 4);
	r = sweep(1, 1);
	assert_int_equal(r.resumed, 5);
	assert_int_equal(r.measured, 1);
	char *again = test_read(r.csv);
	assert_string_equal(again, text);
	free(again);
	free(text);
	assert_false(test_dir_has_temporaries());
}

/* A sweep of the shapes (first_n, 1) to (5, 1) into output_dir, whose
 * files are capped at `cap` bytes once shape (5, 1) is set up, so that its
 * row cannot be written (EFBIG): the sweep's return code, its message in e. */
static int sweep_capped_at_n5(int first_n, const char *output_dir, rlim_t cap, struct sp_err *e)
{
	char text[512];
	snprintf(text, sizeof text,
		 "kernel_name: toy\ncolumns_name: [n, m, F_dur(us), B_dur(us)]\n"
		 "first_n_column: 2\nstarts: [%d, 1]\nsteps: [1, 1]\n"
		 "ends: [5, 1]\noperators: [add, add]\n"
		 "warmup_shapes: [1, 1]\nactive: 2\n",
		 first_n);
	struct sample_config cfg = read_config(text);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sample_sweep_result r;
	j.output_dir = output_dir;
	struct rlimit was;
	getrlimit(RLIMIT_FSIZE, &was);
	signal(SIGXFSZ, SIG_IGN); /* a write past the cap fails with EFBIG */
	cap_files_at_n5 = cap;
	int rc = sample_sweep(&j, &r, e);
	setrlimit(RLIMIT_FSIZE, &was);
	signal(SIGXFSZ, SIG_DFL);
	cap_files_at_n5 = 0;
	sample_config_free(&cfg);
	return rc;
}

/* A new log that tells of a shape (failed here) is a record to keep: a
 * sweep that then fails before its first row keeps it, and the CSV it goes
 * with, header-only, and their folders. */
static void test_failure_after_a_shape_logged(void **state)
{
	static const char header[] = "n,m,F_dur(us),B_dur(us)\n";
	struct sp_err e;
	/* (4, 1) fails, (5, 1) runs */
	assert_int_equal(sweep_capped_at_n5(4, test_path("logged"), sizeof header - 1, &e), -1);
	assert_msg_has(&e, "ToyGPU_toy_fp32_1_1.csv", NULL);
	char *text = test_read(test_path("logged/sampling_data/ToyGPU_toy_fp32_1_1.csv"));
	assert_non_null(text);
	assert_string_equal(text, header);
	free(text);
	const char *log = test_path("logged/sampling_log/ToyGPU_toy_fp32_1_1.txt");
	assert_true(test_exists(log));
	assert_int_equal(count_lines(log, "| Failed: [4, 1]: out of memory for 'x\\\\y\\n' (4 MB)"),
			 1);
}

/* A CSV there before, empty, and a sweep that fails before its first row
 * with no shape logged: as a kill does, it leaves the CSV empty and
 * removes the log and the folder it made. */
static void test_failure_before_a_row_with_an_empty_csv(void **state)
{
	struct sp_err e;
	assert_int_equal(mkdir(test_path("emptied"), 0755), 0);
	assert_int_equal(mkdir(test_path("emptied/sampling_data"), 0755), 0);
	test_spit(test_path("emptied/sampling_data/ToyGPU_toy_fp32_1_1.csv"), "", 0);
	/* only (5, 1): the header is written, the row is not */
	assert_int_equal(sweep_capped_at_n5(5, test_path("emptied"), 1, &e), -1);
	struct stat st;
	assert_int_equal(stat(test_path("emptied/sampling_data/ToyGPU_toy_fp32_1_1.csv"), &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_false(test_exists(test_path("emptied/sampling_log/ToyGPU_toy_fp32_1_1.txt")));
	assert_false(test_exists(test_path("emptied/sampling_log")));
	assert_true(test_exists(test_path("emptied/sampling_data")));
}

static void test_parts_cover_grid(void **state)
{
	/* 3 parts: positions 3, 6, 9, 12 are part 1's, 1, 4, 7, 10 part 2's */
	int measured = 0;
	for (int p = 1; p <= 3; p++) {
		struct sample_sweep_result r = sweep(3, p);
		assert_int_equal(r.total, 4);
		measured += (int)r.measured;
	}
	assert_int_equal(measured, 6);
	char *one = test_read(csv_path(3, 1)), *two = test_read(csv_path(3, 2));
	/* part 1: (1,3) refused, (2,3) refused, (3,3) refused, (4,3) refused */
	assert_string_equal(one, "n,m,F_dur(us),B_dur(us)\n");
	assert_string_equal(two, "n,m,F_dur(us),B_dur(us)\n1,1,15,30\n2,1,25,50\n3,1,35,70\n");
	free(one);
	free(two);
}

static void test_foreign_header(void **state)
{
	test_write("sampling_data/ToyGPU_toy_fp32_5_1.csv", "n,k,F_dur(us),B_dur(us)\n1,1,2,3\n");
	struct sample_config cfg = read_config(config);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sample_sweep_result r;
	struct sp_err e;
	j.parts = 5;
	assert_int_equal(sample_sweep(&j, &r, &e), -1);
	assert_msg_has(&e, "ToyGPU_toy_fp32_5_1.csv", "header", NULL);
	char *text = test_read(csv_path(5, 1));
	assert_string_equal(text, "n,k,F_dur(us),B_dur(us)\n1,1,2,3\n"); /* untouched */
	free(text);
	sample_config_free(&cfg);
}

static void test_unwritable_folder(void **state)
{
	const char *ro = test_path("read-only");
	assert_int_equal(mkdir(ro, 0555), 0);
	struct sample_config cfg = read_config(config);
	struct sample_clock c = script_clock();
	struct sample_job j = job_of(&cfg, &c);
	struct sample_sweep_result r;
	struct sp_err e;
	j.output_dir = ro;
	if (geteuid() == 0) /* root writes anywhere: a file where the folder goes */
		j.output_dir = test_write("a-file", "x");
	assert_int_equal(sample_sweep(&j, &r, &e), -1);
	assert_msg_has(&e, "/sampling_data: cannot create the folder", NULL);
	sample_config_free(&cfg);
}

static void test_device_names(void **state)
{
	char buf[64];
	sample_device_name("NVIDIA H100 80GB HBM3", buf, sizeof buf);
	assert_string_equal(buf, "NVIDIAH10080GBHBM3");
	sample_device_name(" Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz_x\n", buf, sizeof buf);
	assert_string_equal(buf, "IntelRXeonRPlatinum8480+2.00GHzx");
	sample_device_name("NVIDIA A100-SXM4-80GB", buf, 8);
	assert_string_equal(buf, "NVIDIAA");
	struct sample_clock c;
	sample_cpu_clock(&c);
	assert_true(c.device[0] != '\0');
	assert_null(strchr(c.device, '_'));
	assert_null(c.range_push);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trimmed_mean),
		cmocka_unit_test(test_measure_schedule),
		cmocka_unit_test(test_profile_and_run_once),
		cmocka_unit_test(test_job_check),
		cmocka_unit_test(test_log_line),
		cmocka_unit_test(test_sweep_and_resume),
		cmocka_unit_test(test_failure_after_a_shape_logged),
		cmocka_unit_test(test_failure_before_a_row_with_an_empty_csv),
		cmocka_unit_test(test_parts_cover_grid),
		cmocka_unit_test(test_foreign_header),
		cmocka_unit_test(test_unwritable_folder),
		cmocka_unit_test(test_device_names),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
