/* kernel-sample merge (sample_merge.h): what output names say, part files
 * joined, sorted by shape and deduplicated, and the files it refuses to
 * mix, with no output left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_merge.h"
#include "testutil.h"

static void test_file_names(void **state)
{
	struct sample_file_name n;
	struct sp_err e;
	if (sample_file_name_parse("a/b/NVIDIAH10080GBHBM3_linear_final_fp16_4_2.csv", &n, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(n.device, "NVIDIAH10080GBHBM3");
	assert_string_equal(n.op, "linear_final");
	assert_string_equal(n.precision, "fp16");
	assert_int_equal(n.parts, 4);
	assert_int_equal(n.part, 2);
	if (sample_file_name_parse("X_parallel_cross_entropy_128_bf16.csv", &n, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(n.op, "parallel_cross_entropy_128");
	assert_string_equal(n.precision, "bf16");
	assert_int_equal(n.parts, 0);
	if (sample_file_name_parse("X_parallel_cross_entropy_128_fp32_16_16.csv", &n, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(n.op, "parallel_cross_entropy_128");
	assert_int_equal(n.part, 16);
	static const char *const bad[] = {"layernorm.csv", "X_fp16.csv", "X_bmm_fp8_1_1.csv",
					  "X_bmm_fp16_1_1.txt", "_bmm_fp16.csv", "X__fp16.csv",
					  "X_bmm_fp16_0_1.csv" /* part counts start at 1 */};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(sample_file_name_parse(bad[i], &n, &e), -1);
		assert_msg_has(&e, bad[i], "not a kernel-sample file name", NULL);
	}
}

static int merge(const char *out, size_t n, const char *const *in, struct sample_merge_result *r,
		 struct sp_err *e)
{
	return sample_merge(in, n, out, r, e);
}

static void test_merge_parts(void **state)
{
	const char *a = test_write("GPU_bmm_fp16_2_1.csv", "mp,b,F_dur(us),B_dur(us)\n"
							    "2,8,5.5,11\n1,16,3,6\n1,4,1.25,2.5\n");
	const char *b = test_write("GPU_bmm_fp16_2_2.csv", "mp,b,F_dur(us),B_dur(us)\n"
							    "1,8,2,4\n1,4,9,9\n10,1,7,7\n");
	const char *out = test_path("GPU_bmm_fp16.csv");
	struct sample_merge_result r;
	struct sp_err e;
	if (merge(out, 2, (const char *[]){a, b}, &r, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(r.rows_in, 6);
	assert_int_equal(r.rows_out, 5);
	char *text = test_read(out);
	/* numeric order (10 after 2), and (1,4) from the first file */
	assert_string_equal(text, "mp,b,F_dur(us),B_dur(us)\n"
				  "1,4,1.25,2.5\n1,8,2,4\n1,16,3,6\n2,8,5.5,11\n10,1,7,7\n");
	free(text);
	/* the original's rows (NumPy floats) merge with ours, shape by shape */
	const char *orig = test_write("GPU_bmm_fp16_4_1.csv", "mp,b,F_dur(us),B_dur(us)\n"
							       "1.0,8.0,99.0,99.0\n3.0,2.0,1.0,2.0\n");
	if (merge(test_path("GPU_bmm_fp16_9_9.csv"), 2, (const char *[]){out, orig}, &r, &e))
		fail_msg("%s", e.msg);
	text = test_read(test_path("GPU_bmm_fp16_9_9.csv"));
	assert_string_equal(text, "mp,b,F_dur(us),B_dur(us)\n"
				  "1,4,1.25,2.5\n1,8,2,4\n1,16,3,6\n2,8,5.5,11\n3.0,2.0,1.0,2.0\n"
				  "10,1,7,7\n");
	free(text);
	/* a merged file merges again, to the same */
	const char *again = test_path("GPU_bmm_fp16_1_1.csv");
	if (merge(again, 2, (const char *[]){out, b}, &r, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(r.rows_out, 5);
}

static void refused(const char *name, const char *text, const char *problem)
{
	const char *a = test_write("GPU_gelu_fp32_2_1.csv", "mp,b,F_dur(us),B_dur(us)\n1,2,3,4\n");
	const char *b = test_write(name, text);
	const char *out = test_path("merged_gelu_fp32.csv");
	struct sample_merge_result r;
	struct sp_err e;
	assert_int_equal(merge(out, 2, (const char *[]){a, b}, &r, &e), -1);
	assert_msg_has(&e, problem, NULL);
	assert_false(test_exists(out));
	assert_false(test_dir_has_temporaries());
	remove(b);
}

static void test_refusals(void **state)
{
	static const char ok[] = "mp,b,F_dur(us),B_dur(us)\n1,4,3,4\n";
	refused("GPU_gelu_fp16_2_2.csv", ok, "GPU_gelu_fp16_2_2.csv: another precision than");
	refused("GPU_bmm_fp32_2_2.csv", ok, "GPU_bmm_fp32_2_2.csv: another operator than");
	refused("CPU_gelu_fp32_2_2.csv", ok, "CPU_gelu_fp32_2_2.csv: another device than");
	refused("GPU_gelu_fp32_2_2.csv", "mp,l,F_dur(us),B_dur(us)\n1,4,3,4\n",
		"GPU_gelu_fp32_2_2.csv: other columns than");
	refused("GPU_gelu_fp32_2_2.csv", "mp,b,F_dur(us)\n1,4,3\n", "other columns than");
	refused("GPU_gelu_fp32_2_2.csv", "mp,b,F_dur(us),B_dur(us)\n1,4,3,4\n1.5,4,3,4\n",
		"GPU_gelu_fp32_2_2.csv:3: column 'mp': expected a whole number, found '1.5'");
	refused("GPU_gelu_fp32_2_2.csv", "mp,b,F_dur(us),B_dur(us)\n1,4,3,x\n",
		"GPU_gelu_fp32_2_2.csv:2: column 'B_dur(us)'");
	refused("gelu.csv", ok, "gelu.csv: not a kernel-sample file name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_merge_parts),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
