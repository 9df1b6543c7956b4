/* kernel-sample's timing models (sample_model.h, sample_fit.h): fitted from
 * a sampling CSV of a known law, the held-out error is small; saved and read
 * back, a model predicts the same; its file's every damage is one error
 * naming the file and the line; fit refuses too few rows and says how many. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_fit.h"
#include "sample/sample_layer.h"
#include "testutil.h"

/* A linear1 sweep (mp, b, l, dim) whose times follow a GEMM's law: a 6 us
 * floor plus the flops at 400 TFLOP/s, the backward twice that. */
static const char *linear1_csv(const char *name, int rows)
{
	char *text = malloc(65536);
	size_t n = (size_t)sprintf(text, "mp,b,l,dim,F_dur(us),B_dur(us)\n");
	int k = 0;
	for (int mp = 1; mp <= 8 && k < rows; mp *= 2)
		for (int b = 1; b <= 8 && k < rows; b *= 2)
			for (int l = 512; l <= 2048 && k < rows; l += 512)
				for (int dim = 1024; dim <= 4096 && k < rows; dim += 1024, k++) {
					double flops = 2.0 * b * l * dim * (3.0 * dim / mp);
					double us = 6 + flops / 4e8;
					n += (size_t)sprintf(text + n, "%d,%d,%d,%d,%.3f,%.3f\n", mp, b, l,
							     dim, us, 2 * us);
				}
	const char *path = test_write(name, text);
	free(text);
	return path;
}

static void fit_linear1(struct sample_model *m, struct sample_cv *cv, int folds)
{
	const char *path = linear1_csv("H100_linear1_fp16.csv", 1000);
	struct sample_data d;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	if (sample_data_read(&path, 1, &d, &e) || sample_fit(&d, SAMPLE_FWD, &p, folds, m, cv, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(d.n, 256);
	sample_data_free(&d);
}

static void test_fit_and_held_out_error(void **state)
{
	struct sample_model m;
	struct sample_cv cv;
	fit_linear1(&m, &cv, 5);
	assert_int_equal(cv.folds, 5);
	assert_true(cv.median < 0.03);
	assert_true(cv.p90 >= cv.median && cv.p90 < 0.10);
	assert_true(cv.mape > 0 && cv.mape < 0.05);
	assert_string_equal(m.op, "linear1");
	assert_string_equal(m.device, "H100");
	assert_int_equal(m.rows, 256);
	/* a shape between the grid's, and one beyond it */
	int64_t mid[4] = {2, 3, 1280, 2560}, big[4] = {1, 16, 2048, 4096};
	double us;
	struct sp_err e;
	assert_int_equal(sample_model_predict(&m, mid, &us, &e), 0);
	double want = 6 + 2.0 * 3 * 1280 * 2560 * (3.0 * 2560 / 2) / 4e8;
	assert_true(fabs(us / want - 1) < 0.10);
	assert_int_equal(sample_model_predict(&m, big, &us, &e), 0);
	/* twice the grid's largest: the trees are flat there, the power law's slope
	 * (0.91 per doubling of the flops, the floor in it) carries it */
	want = 6 + 2.0 * 16 * 2048 * 4096 * (3.0 * 4096) / 4e8;
	assert_true(fabs(us / want - 1) < 0.15);
	/* a shape linear1 cannot run */
	int64_t odd[4] = {8, 1, 512, 1004};
	assert_int_equal(sample_model_predict(&m, odd, &us, &e), -1);
	assert_msg_has(&e, "dim 1004 not divisible by mp 8", NULL);
	sample_model_free(&m);
}

static void test_save_and_read_back(void **state)
{
	struct sample_model m, back;
	struct sample_cv cv;
	struct sp_err e;
	fit_linear1(&m, &cv, 0);
	assert_int_equal(cv.folds, 0);
	const struct sample_model *list[1] = {&m};
	const char *path = test_path("H100_linear1_fp16_fwd.model");
	char name[256];
	assert_string_equal(sample_model_file_name(&m, name, sizeof name),
			    "H100_linear1_fp16_fwd.model");
	if (sample_model_save(list, &path, 1, &e) || sample_model_read(path, &back, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(back.gbt.ntrees, m.gbt.ntrees);
	for (int64_t dim = 1024; dim <= 8192; dim += 512) {
		int64_t s[4] = {1, 4, 2048, dim};
		double a, b;
		assert_int_equal(sample_model_predict(&m, s, &a, &e), 0);
		assert_int_equal(sample_model_predict(&back, s, &b, &e), 0);
		assert_true(a == b); /* doubles written to round-trip */
	}
	char dev[128] = "", found[4096];
	assert_int_equal(sample_model_find(test_dir, "linear1", SAMPLE_FP16, SAMPLE_FWD, dev,
					   sizeof dev, found, sizeof found, &e), 1);
	assert_string_equal(dev, "H100");
	assert_string_equal(found, path);
	assert_int_equal(sample_model_find(test_dir, "linear1", SAMPLE_BF16, SAMPLE_FWD, dev,
					   sizeof dev, found, sizeof found, &e), 0);
	assert_int_equal(sample_model_find(test_dir, "linear", SAMPLE_FP16, SAMPLE_FWD, dev,
					   sizeof dev, found, sizeof found, &e), 0);
	sample_model_free(&m);
	sample_model_free(&back);
}

/* A model file with one line replaced (or cut), and the error it gives. */
static void damaged(const char *good, const char *from, const char *to, const char *want)
{
	char *text = malloc(strlen(good) + strlen(to) + 1);
	const char *at = strstr(good, from);
	assert_non_null(at);
	size_t head = (size_t)(at - good);
	memcpy(text, good, head);
	strcpy(text + head, to);
	strcat(text, at + strlen(from));
	struct sample_model m;
	struct sp_err e;
	assert_int_equal(sample_model_read_buffer(text, strlen(text), "x.model", &m, &e), -1);
	assert_msg_has(&e, "x.model", want, NULL);
	free(text);
}

static const char good[] = "spkit-timing-model 1\n"
			   "operator linear1\n"
			   "precision fp16\n"
			   "direction fwd\n"
			   "device H100\n"
			   "columns mp b l dim\n"
			   "features m k n flops bytes\n"
			   "rows 9\n"
			   "base 2 1.5 0.5 0.25\n"
			   "trees 1\n"
			   "tree 3\n"
			   "s 3 1000 1 2\n"
			   "l -0.5\n"
			   "l 0.5\n"
			   "end\n";

static void test_model_file_damage(void **state)
{
	struct sample_model m;
	struct sp_err e;
	if (sample_model_read_buffer(good, strlen(good), "x.model", &m, &e))
		fail_msg("%s", e.msg);
	int64_t s[4] = {1, 1, 1, 8}; /* flops 2*1*8*24 = 384: the left leaf */
	double us;
	assert_int_equal(sample_model_predict(&m, s, &us, &e), 0);
	double x[5] = {1, 8, 24, 384, 2 * (8 + 192 + 24)};
	assert_true(fabs(us - exp(1.5 + 0.5 * log(x[3]) + 0.25 * log(x[4]) - 0.5)) < 1e-9 * us);
	sample_model_free(&m);
	damaged(good, "spkit-timing-model 1", "spkit-timing-modle 1", "x.model:1: not a kernel");
	damaged(good, "spkit-timing-model 1", "spkit-timing-model 2", "version 2");
	damaged(good, "operator linear1", "operator linear 1", "x.model:2: expected 'operator");
	damaged(good, "precision fp16", "precision fp8", "x.model:3: precision 'fp8'");
	damaged(good, "direction fwd", "direction up", "x.model:4: direction 'up'");
	/* a control character of the file, as it is: the program escapes the
	 * line it prints (found by fuzz_timing_model) */
	damaged(good, "precision fp16", "precision \xff\rfp16",
		"x.model:3: precision '\xff\rfp16'");
	damaged(good, "columns mp b l dim", "columns b l dim", "linear1 takes the shape");
	damaged(good, "features m k n flops bytes", "features m n k flops bytes",
		"x.model:7: features are not those");
	damaged(good, "features m k n flops bytes", "features m k n flops", "features are not");
	damaged(good, "rows 9", "rows 0", "x.model:8: rows '0'");
	damaged(good, "base 2 1.5 0.5 0.25", "base 1 1.5 0.5", "base: 1 terms");
	damaged(good, "base 2 1.5 0.5 0.25", "base 2 1.5 nan 0.25", "expected a finite number");
	damaged(good, "trees 1", "trees 2", "x.model:15: expected 'tree NODES'");
	damaged(good, "s 3 1000 1 2", "s 5 1000 1 2", "split feature");
	damaged(good, "s 3 1000 1 2", "s 3 1000 0 2", "split child");
	damaged(good, "s 3 1000 1 2", "s 3 1000 1 1", "two parents");
	damaged(good, "s 3 1000 1 2", "l 1", "node 1 has no parent");
	damaged(good, "l -0.5", "x -0.5", "expected a node");
	/* an empty line for a node (found by fuzz_timing_model: no message at all) */
	damaged(good, "l -0.5", "", "x.model:13: expected a node");
	damaged(good, "l 0.5\nend\n", "l 0.5\n", "truncated: no end");
	damaged(good, "end\n", "end\nmore\n", "unexpected text after 'end'");
	damaged(good, "tree 3", "tree 3 4", "unexpected text at the end");
	damaged(good, "tree 3", "tree 99999", "tree: expected a whole number");
}

static void test_too_few_rows_say_how_many(void **state)
{
	const char *path = linear1_csv("H_linear1_fp16_1_1.csv", 7);
	struct sample_data d;
	struct sample_model m;
	struct sample_cv cv;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	assert_int_equal(sample_data_read(&path, 1, &d, &e), 0);
	assert_int_equal(sample_fit(&d, SAMPLE_FWD, &p, 0, &m, &cv, &e), -1);
	assert_msg_has(&e, path, "7 rows, too few to fit: at least 8 are needed", NULL);
	sample_data_free(&d);
	path = linear1_csv("H_linear1_fp16_1_2.csv", 9);
	assert_int_equal(sample_data_read(&path, 1, &d, &e), 0);
	assert_int_equal(sample_fit(&d, SAMPLE_FWD, &p, 5, &m, &cv, &e), -1);
	assert_msg_has(&e, "9 rows", "at least 10 are needed", NULL);
	assert_int_equal(sample_fit(&d, SAMPLE_FWD, &p, 4, &m, &cv, &e), 0);
	sample_model_free(&m);
	sample_data_free(&d);
}

static void test_layer_shapes(void **state)
{
	const char *ops[SAMPLE_LAYER_MAX_OPS];
	int n = sample_layer_ops("RMSlayernorm", "unfused", ops);
	assert_int_equal(n, 13);
	assert_string_equal(ops[3], "baddbmm");
	assert_string_equal(ops[12], "res_add");
	assert_int_equal(sample_layer_ops("layernorm", "flash_atten", ops), 11);
	assert_string_equal(ops[3], "flash_atten");
	assert_string_equal(ops[5], "layernorm");
	int64_t enc[5] = {2, 4, 32, 2048, 4096}, shape[8];
	static const char *const cols[] = {"mp", "b", "h", "l"}, *bad[] = {"b", "vocab"};
	struct sp_err e;
	assert_int_equal(sample_layer_shape("softmax", cols, 4, enc, shape, &e), 0);
	assert_true(shape[0] == 2 && shape[1] == 4 && shape[2] == 32 && shape[3] == 2048);
	assert_int_equal(sample_layer_shape("moe", bad, 2, enc, shape, &e), -1);
	assert_msg_has(&e, "moe: column 'vocab'", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_and_held_out_error),
		cmocka_unit_test(test_save_and_read_back),
		cmocka_unit_test(test_model_file_damage),
		cmocka_unit_test(test_too_few_rows_say_how_many),
		cmocka_unit_test(test_layer_shapes),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
