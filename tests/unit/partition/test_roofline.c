/* Hardware files (hardware.h) and the roofline estimate with its classes
 * (roofline.h): times by hand, the classes at and around their cut-offs,
 * the built-in H200 against configs/hardware/h200.yaml, the files'
 * errors with their lines, and graph-partition's times on absurdly slow
 * hardware. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "partition/hardware.h"
#include "partition/model_yaml.h"
#include "partition/partition.h"
#include "partition/roofline.h"
#include "testutil.h"

/* A GPU with round numbers: 100 TFLOP/s matrix fp16, 10 vector, 1 TB/s, 5 us. */
static struct hardware_spec toy(void)
{
	struct hardware_spec hw = {.name = "toy",
				   .vector_flops = 10e12,
				   .bandwidth = 1e12,
				   .l2_bytes = 1 << 20,
				   .sms = 10,
				   .launch_s = 5e-6};
	for (int d = 0; d < HARDWARE_NDTYPES; d++)
		hw.peak_flops[d] = 100e12;
	return hw;
}

static void close_to(double got, double want)
{
	if (fabs(got - want) > 1e-12 * fabs(want) + 1e-18)
		fail_msg("%.17g, expected %.17g", got, want);
}

static void test_ridge_classes(void **state)
{
	struct hardware_spec hw = toy();
	struct roofline_estimate e;
	/* a matmul of 1 GFLOP moving 1 MB: 10 us of compute, 1 us of memory */
	struct roofline_op mm = {.kernel = 1, .matrix = 1, .flops = 1000000000, .bytes = 1000000};
	roofline_estimate(&hw, HARDWARE_FP16, ROOFLINE_RIDGE, &mm, &e);
	close_to(e.compute_s, 10e-6);
	close_to(e.memory_s, 1e-6);
	close_to(e.time_s, 15e-6);
	close_to(e.ridge, 100);
	assert_int_equal(e.cls, ROOFLINE_COMPUTE);
	/* an elementwise op of 1M FLOPs moving 100 MB: 100 us of memory */
	struct roofline_op add = {.kernel = 1, .flops = 1000000, .bytes = 100000000};
	roofline_estimate(&hw, HARDWARE_FP16, ROOFLINE_RIDGE, &add, &e);
	close_to(e.compute_s, 1e-7);
	close_to(e.time_s, 105e-6);
	close_to(e.ridge, 10); /* the vector peak's */
	assert_int_equal(e.cls, ROOFLINE_MEMORY);
	/* a tiny op: the launch is longer than its work */
	struct roofline_op tiny = {.kernel = 1, .flops = 1000, .bytes = 1000};
	roofline_estimate(&hw, HARDWARE_FP16, ROOFLINE_RIDGE, &tiny, &e);
	assert_int_equal(e.cls, ROOFLINE_LATENCY);
	close_to(e.time_s, 5e-6 + 1e-9);
	/* exactly at the ridge point: compute-bound */
	struct roofline_op edge = {.kernel = 1,
				   .matrix = 1,
				   .flops = 100 * 100000000LL,
				   .bytes = 100000000};
	roofline_estimate(&hw, HARDWARE_FP16, ROOFLINE_RIDGE, &edge, &e);
	assert_int_equal(e.cls, ROOFLINE_COMPUTE);
	/* no kernel: no time, no class */
	struct roofline_op view = {.kernel = 0, .flops = 0, .bytes = 0};
	roofline_estimate(&hw, HARDWARE_FP16, ROOFLINE_RIDGE, &view, &e);
	assert_int_equal(e.cls, ROOFLINE_NONE);
	close_to(e.time_s, 0);
	assert_string_equal(roofline_class_name(ROOFLINE_LATENCY), "latency_bound");
	assert_string_equal(roofline_class_name(ROOFLINE_NONE), "none");
}

static void test_fixed_classes(void **state)
{
	struct hardware_spec hw = toy();
	struct roofline_estimate e;
	static const struct {
		int64_t flops, bytes;
		enum roofline_class cls;
	} cases[] = {
		{4001, 100, ROOFLINE_COMPUTE},  {4000, 100, ROOFLINE_BALANCED},
		{1001, 100, ROOFLINE_BALANCED}, {1000, 100, ROOFLINE_MEMORY},
		{101, 100, ROOFLINE_MEMORY},    {100, 100, ROOFLINE_BANDWIDTH},
		{0, 100, ROOFLINE_BANDWIDTH},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct roofline_op op = {.kernel = 1,
					 .flops = cases[i].flops,
					 .bytes = cases[i].bytes};
		roofline_estimate(&hw, HARDWARE_FP32, ROOFLINE_FIXED, &op, &e);
		if (e.cls != cases[i].cls)
			fail_msg("intensity %g: %s",
				 (double)cases[i].flops / (double)cases[i].bytes,
				 roofline_class_name(e.cls));
		assert_true(e.time_s > 0); /* the time is the roofline's in either mode */
	}
}

static void test_dtypes_and_default(void **state)
{
	assert_int_equal(hardware_dtype_parse("fp32"), HARDWARE_FP32);
	assert_int_equal(hardware_dtype_parse("tf32"), HARDWARE_TF32);
	assert_int_equal(hardware_dtype_parse("int8"), HARDWARE_INT8);
	assert_int_equal(hardware_dtype_parse("fp8"), -1);
	assert_string_equal(hardware_dtype_name(HARDWARE_BF16), "bf16");
	/* make test runs in the repository: the shipped file equals the built-in */
	struct hardware_spec def, file;
	struct sp_err e;
	hardware_default(&def);
	if (hardware_load("configs/hardware/h200.yaml", &file, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(def.name, file.name);
	/* Exactly: the file's "66.9" TFLOP/s scaled in decimal is the double
	 * 66.9e12 (66.9 * 1e12 is an ulp off), so a report on the default
	 * and on the file print the same digits (JSON writes them all). */
	for (int d = 0; d < HARDWARE_NDTYPES; d++)
		assert_true(file.peak_flops[d] == def.peak_flops[d]);
	assert_true(file.vector_flops == def.vector_flops);
	assert_true(file.bandwidth == def.bandwidth);
	assert_true(file.l2_bytes == def.l2_bytes);
	assert_true(file.launch_s == def.launch_s);
	assert_int_equal(file.sms, def.sms);
	assert_int_equal(hardware_load("configs/hardware/a100.yaml", &file, &e), 0);
	assert_int_equal(file.sms, 108);
	close_to(file.peak_flops[HARDWARE_TF32], 156e12);
}

/* hardware_load on text as a file must fail with "FILE:msg". */
static void load_fails(const char *text, const char *msg)
{
	const char *path = test_path("hw.yaml");
	struct hardware_spec hw;
	struct sp_err e;
	test_spit(path, text, strlen(text));
	assert_int_equal(hardware_load(path, &hw, &e), -1);
	if (strncmp(e.msg, path, strlen(path)) || strcmp(e.msg + strlen(path) + 1, msg))
		fail_msg("'%s', expected '%s:%s'", e.msg, path, msg);
}

static void test_file_errors(void **state)
{
	static const char ok[] = "name: x\nsms: 4\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
				 "launch_overhead_us: 2\npeak_tflops: {fp32: 1, tf32: 2, fp16: 3, "
				 "bf16: 3, int8: 6}\n";
	const char *path = test_path("ok.yaml");
	struct hardware_spec hw;
	struct sp_err e;
	test_spit(path, ok, sizeof ok - 1);
	assert_int_equal(hardware_load(path, &hw, &e), 0);
	close_to(hw.vector_flops, 1e12); /* the fp32 peak when absent */
	close_to(hw.launch_s, 2e-6);
	close_to(hw.l2_bytes, 1 << 20);
	/* numbers with an exponent scale exactly too (2.5e1 TFLOP/s is 2.5e13) */
	static const char exp[] = "name: x\nsms: 4\nmemory_bandwidth_gbs: 1.2e3\nl2_cache_mb: 1\n"
				  "launch_overhead_us: 1e-7\npeak_tflops: {fp32: 2.5e1, tf32: 2, "
				  "fp16: 3, bf16: 3, int8: 6}\n";
	test_spit(path, exp, sizeof exp - 1);
	assert_int_equal(hardware_load(path, &hw, &e), 0);
	assert_true(hw.peak_flops[HARDWARE_FP32] == 2.5e13);
	assert_true(hw.bandwidth == 1.2e12);
	assert_true(hw.launch_s == 1e-13); /* "1e-07": its exponent and -6 add */
	load_fails("name: x\n", "1: missing key 'sms'");
	load_fails("name: x\nsms: 4\nbandwidth: 3\n",
		   "3: unknown key 'bandwidth' in a hardware file (expected name, sms, "
		   "memory_bandwidth_gbs, l2_cache_mb, launch_overhead_us, vector_tflops, "
		   "peak_tflops)");
	load_fails("name: x\nsms: 0\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
		   "launch_overhead_us: 2\npeak_tflops: {fp32: 1, tf32: 2, fp16: 3, bf16: 3, int8: 6}\n",
		   "2: sms: expected a positive integer");
	load_fails("name: x\nsms: 4\nmemory_bandwidth_gbs: 0\n",
		   "3: memory_bandwidth_gbs: expected a positive number");
	load_fails("name: x\nsms: 4\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
		   "launch_overhead_us: 2\npeak_tflops: [1, 2]\n",
		   "6: peak_tflops: expected a mapping, found a sequence");
	load_fails("name: x\nsms: 4\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
		   "launch_overhead_us: 2\npeak_tflops:\n  fp32: 1\n",
		   "7: missing key 'tf32'");
	/* Found by fuzz_hardware: a peak that scales past the doubles
	 * (1e300 TFLOP/s) or a launch cost below them. */
	load_fails("name: x\nsms: 4\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
		   "launch_overhead_us: 2\npeak_tflops: {fp32: 1e300, tf32: 2, fp16: 3, bf16: 3, "
		   "int8: 6}\n", "6: fp32: 1e+300 is out of range");
	load_fails("name: x\nsms: 4\nmemory_bandwidth_gbs: 100\nl2_cache_mb: 1\n"
		   "launch_overhead_us: 1e-310\n", "5: launch_overhead_us: 1e-310 is out of range");
}

/* Found by fuzz_hardware: on a very slow GPU an op takes more than 2^63
 * ps, and the critical path by time (summed in ps) saturates instead of
 * converting out of range (INT64_MIN on x86: a negative time). */
static void test_slow_hardware(void **state)
{
	static const char model[] = "name: one\ninputs:\n  x: [8, 8]\nparams:\n  w: [8, 8]\n"
				    "nodes:\n  - {op: MatMul, name: mm, inputs: [x, w], outputs: [y]}\n"
				    "outputs: [y]\n";
	struct partition_options o = {.thresholds = ROOFLINE_FIXED};
	struct partition_report r = {0};
	struct sp_err e;
	o.hw = toy();
	for (int d = 0; d < HARDWARE_NDTYPES; d++)
		o.hw.peak_flops[d] = 1e-290;
	if (model_yaml_load_buffer(model, sizeof model - 1, "one.yaml", &r.g, &e) ||
	    partition_analyse(&r, &o, &e))
		fail_msg("%s", e.msg);
	assert_true(r.critical_path_time_s > 9e6);
	partition_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ridge_classes),
		cmocka_unit_test(test_fixed_classes),
		cmocka_unit_test(test_dtypes_and_default),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_slow_hardware),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
