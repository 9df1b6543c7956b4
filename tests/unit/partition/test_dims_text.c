/* Dims as text: "1x3x224x224", and what is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "partition/dims_text.h"
#include "partition/opgraph.h"

static void test_parse_dims(void **state)
{
	int ndim;
	int64_t dims[OPGRAPH_MAX_DIMS];
	struct sp_err e;
	assert_int_equal(dims_text_parse("1x3x224x224", "--input-shape", &ndim, dims, &e), 0);
	assert_int_equal(ndim, 4);
	assert_int_equal(dims[3], 224);
	assert_int_equal(dims_text_parse("7", "--x", &ndim, dims, &e), 0);
	assert_int_equal(ndim, 1);
	static const char *const bad[] = {"", "1x", "x1", "1x0", "1x-2",
					  "1xx2", "2y3", "1x1x1x1x1x1x1x1x1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(dims_text_parse(bad[i], "--input-shape", &ndim, dims, &e), -1);
		assert_non_null(strstr(e.msg, "--input-shape: "));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_dims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
