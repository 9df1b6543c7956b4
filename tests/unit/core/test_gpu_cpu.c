/* The GPU API where there is no GPU (the CPU-only CI machine, or any machine
 * with CUDA_VISIBLE_DEVICES empty, which this test sets): nothing crashes or
 * prints, --device auto and cpu choose the CPU, --device cuda is a clear
 * error, and device work fails with a message. Runs in both builds, with
 * CUDA (kernels/gpu.cu) and without (lib/gpu_none.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"

static void test_count_is_zero(void **state)
{
	struct sp_err why = {""};
	assert_int_equal(gpu_count(), 0);
	assert_int_equal(gpu_probe(&why), 0);
	assert_true(why.msg[0] != '\0');
}

static void test_resolve_chooses_cpu_or_fails(void **state)
{
	struct sp_err e = {""};
	int use_gpu = -1;
	assert_int_equal(gpu_resolve(DEVICE_AUTO, &use_gpu, &e), 0);
	assert_int_equal(use_gpu, 0);
	use_gpu = -1;
	assert_int_equal(gpu_resolve(DEVICE_CPU, &use_gpu, &e), 0);
	assert_int_equal(use_gpu, 0);
	assert_int_equal(gpu_resolve(DEVICE_CUDA, &use_gpu, &e), -1);
	assert_int_equal(use_gpu, 0);
	assert_non_null(strstr(e.msg, "no usable CUDA device ("));
	/* The reason in parentheses is not empty. */
	assert_null(strstr(e.msg, "()"));
}

static void test_device_work_fails_cleanly(void **state)
{
	struct sp_err e = {""};
	void *p = (void *)1;
	struct gpu_info info;
	assert_int_equal(gpu_malloc(&p, 1024, "features", &e), -1);
	assert_null(p);
	assert_non_null(strstr(e.msg, "'features'"));
	assert_int_equal(gpu_query(0, &info, &e), -1);
	assert_int_equal(gpu_select(0, &e), -1);
	double gbs = -1;
	assert_int_equal(gpu_copy_bandwidth(0, 3, &gbs, &e), -1);
	assert_true(e.msg[0] != '\0');
	gpu_free(NULL);
}

static void test_ranges_are_harmless(void **state)
{
	gpu_range_push("spkit test");
	gpu_range_pop();
}

int main(void)
{
	/* Hide any GPU before the CUDA runtime first looks (lazily, at the first call). */
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_is_zero),
		cmocka_unit_test(test_resolve_chooses_cpu_or_fails),
		cmocka_unit_test(test_device_work_fails_cleanly),
		cmocka_unit_test(test_ranges_are_harmless),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
