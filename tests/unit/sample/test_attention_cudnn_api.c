/* Loading cuDNN at run time (kernels/sample/attention_cudnn_api.c), on any
 * machine: a missing library, a library that is not cuDNN and a cuDNN of
 * another major version each fail with one line saying so; a real cuDNN 9,
 * where one is installed, loads with every entry point. Where cuDNN's header
 * is installed too (CUDA builds), our copies of its constants must equal
 * its own. Builds without CUDA refuse to open it, saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sample/attention.h"
#include "sample/attention_cudnn_api.h"

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' does not contain '%s'", text, part);
	assert_null(strchr(text, '\n'));
}

static void test_missing_file(void **state)
{
	struct attention_cudnn_api api;
	struct sp_err e;
	assert_int_equal(attention_cudnn_api_load("/nonexistent/libcudnn.so.9", &api, &e), -1);
	assert_contains(e.msg, "/nonexistent/libcudnn.so.9: cannot load cuDNN (");
	assert_null(strstr(e.msg, "LD_LIBRARY_PATH")); /* a path: no search to extend */
	assert_null(api.lib);
}

static void test_missing_on_search_path(void **state)
{
	struct attention_cudnn_api api;
	struct sp_err e;
	assert_int_equal(attention_cudnn_api_load("libcudnn_spkit_absent.so.9", &api, &e), -1);
	assert_contains(e.msg, "libcudnn_spkit_absent.so.9: cannot load cuDNN (");
	assert_contains(e.msg, "LD_LIBRARY_PATH or give the library's path");
}

static void test_not_cudnn(void **state)
{
	struct attention_cudnn_api api;
	struct sp_err e;
	assert_int_equal(attention_cudnn_api_load("libz.so.1", &api, &e), -1);
	assert_string_equal(e.msg, "libz.so.1: not cuDNN (no cudnnGetVersion in it)");
	assert_null(api.lib);
}

static void test_version(void **state)
{
	struct sp_err e;
	assert_int_equal(attention_cudnn_api_check_version("x.so", 90000, &e), 0);
	assert_int_equal(attention_cudnn_api_check_version("x.so", 91900, &e), 0);
	assert_int_equal(attention_cudnn_api_check_version("x.so", 8907, &e), -1);
	assert_string_equal(e.msg, "x.so: cuDNN 8.9.7 found, major version 9 required");
	assert_int_equal(attention_cudnn_api_check_version("y.so", 100203, &e), -1);
	assert_string_equal(e.msg, "y.so: cuDNN 10.2.3 found, major version 9 required");
}

/* The machine's own cuDNN 9, when the loader finds one. */
static void test_installed(void **state)
{
	struct attention_cudnn_api api;
	struct sp_err e;
	if (attention_cudnn_api_load(NULL, &api, &e)) {
		print_message("no cuDNN 9 here: %s\n", e.msg);
		skip();
	}
	assert_int_equal(api.version / 10000, 9);
	assert_string_equal(api.path, DNN_DEFAULT_LIBRARY);
	assert_non_null(api.backend_execute);
	assert_string_equal(api.get_error_string(DNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
	assert_int_equal(attention_cudnn_api_fail(&api, 2000, "call", &e), -1);
	assert_contains(e.msg, "cuDNN call: CUDNN_STATUS_BAD_PARAM");
	attention_cudnn_api_unload(&api);
	assert_null(api.lib);
}

#if defined(SPKIT_CUDA) && defined(__has_include)
#if __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
#define SAME(x) _Static_assert((int)DNN_##x == (int)CUDNN_##x, #x)
SAME(DATA_FLOAT);
SAME(DATA_HALF);
SAME(DATA_INT32);
SAME(DATA_BFLOAT16);
SAME(DATA_BOOLEAN);
SAME(POINTWISE_ADD);
SAME(POINTWISE_MUL);
SAME(POINTWISE_DIV);
SAME(POINTWISE_SUB);
SAME(POINTWISE_EXP);
SAME(POINTWISE_LOG);
SAME(POINTWISE_IDENTITY);
SAME(POINTWISE_CMP_GE);
SAME(POINTWISE_GEN_INDEX);
SAME(POINTWISE_BINARY_SELECT);
SAME(REDUCE_TENSOR_ADD);
SAME(REDUCE_TENSOR_MAX);
SAME(HEUR_MODE_INSTANT);
SAME(HEUR_MODE_B);
SAME(HEUR_MODE_FALLBACK);
SAME(HEUR_MODE_A);
SAME(TYPE_HANDLE);
SAME(TYPE_DATA_TYPE);
SAME(TYPE_BOOLEAN);
SAME(TYPE_INT64);
SAME(TYPE_VOID_PTR);
SAME(TYPE_HEUR_MODE);
SAME(TYPE_POINTWISE_MODE);
SAME(TYPE_BACKEND_DESCRIPTOR);
SAME(TYPE_REDUCTION_OPERATOR_TYPE);
SAME(BACKEND_POINTWISE_DESCRIPTOR);
SAME(BACKEND_ENGINECFG_DESCRIPTOR);
SAME(BACKEND_ENGINEHEUR_DESCRIPTOR);
SAME(BACKEND_EXECUTION_PLAN_DESCRIPTOR);
SAME(BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
SAME(BACKEND_OPERATIONGRAPH_DESCRIPTOR);
SAME(BACKEND_VARIANT_PACK_DESCRIPTOR);
SAME(BACKEND_TENSOR_DESCRIPTOR);
SAME(BACKEND_MATMUL_DESCRIPTOR);
SAME(BACKEND_OPERATION_MATMUL_DESCRIPTOR);
SAME(BACKEND_REDUCTION_DESCRIPTOR);
SAME(BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
SAME(BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
SAME(ATTR_POINTWISE_MODE);
SAME(ATTR_POINTWISE_MATH_PREC);
SAME(ATTR_POINTWISE_AXIS);
SAME(ATTR_ENGINEHEUR_MODE);
SAME(ATTR_ENGINEHEUR_OPERATION_GRAPH);
SAME(ATTR_ENGINEHEUR_RESULTS);
SAME(ATTR_EXECUTION_PLAN_HANDLE);
SAME(ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
SAME(ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
SAME(ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
SAME(ATTR_OPERATION_POINTWISE_XDESC);
SAME(ATTR_OPERATION_POINTWISE_BDESC);
SAME(ATTR_OPERATION_POINTWISE_YDESC);
SAME(ATTR_OPERATION_POINTWISE_TDESC);
SAME(ATTR_OPERATIONGRAPH_HANDLE);
SAME(ATTR_OPERATIONGRAPH_OPS);
SAME(ATTR_TENSOR_BYTE_ALIGNMENT);
SAME(ATTR_TENSOR_DATA_TYPE);
SAME(ATTR_TENSOR_DIMENSIONS);
SAME(ATTR_TENSOR_STRIDES);
SAME(ATTR_TENSOR_UNIQUE_ID);
SAME(ATTR_TENSOR_IS_VIRTUAL);
SAME(ATTR_TENSOR_IS_BY_VALUE);
SAME(ATTR_VARIANT_PACK_UNIQUE_IDS);
SAME(ATTR_VARIANT_PACK_DATA_POINTERS);
SAME(ATTR_VARIANT_PACK_WORKSPACE);
SAME(ATTR_MATMUL_COMP_TYPE);
SAME(ATTR_OPERATION_MATMUL_ADESC);
SAME(ATTR_OPERATION_MATMUL_BDESC);
SAME(ATTR_OPERATION_MATMUL_CDESC);
SAME(ATTR_OPERATION_MATMUL_DESC);
SAME(ATTR_REDUCTION_OPERATOR);
SAME(ATTR_REDUCTION_COMP_TYPE);
SAME(ATTR_OPERATION_REDUCTION_XDESC);
SAME(ATTR_OPERATION_REDUCTION_YDESC);
SAME(ATTR_OPERATION_REDUCTION_DESC);
SAME(ATTR_OPERATION_RESHAPE_XDESC);
SAME(ATTR_OPERATION_RESHAPE_YDESC);
#undef SAME
#endif
#endif

#ifndef SPKIT_CUDA
static void test_open_without_cuda(void **state)
{
	struct attention_cudnn *c = (void *)1;
	struct sp_err e;
	assert_int_equal(attention_cudnn_open(NULL, &c, &e), -1);
	assert_null(c);
	assert_string_equal(e.msg, "cuDNN attention: spkit was built without CUDA");
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_missing_on_search_path),
		cmocka_unit_test(test_not_cudnn),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_installed),
#ifndef SPKIT_CUDA
		cmocka_unit_test(test_open_without_cuda),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
