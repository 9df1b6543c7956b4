/* The files built into the program as C arrays (Makefile's embed_c): the
 * default tuning space and, in a CUDA build, the kernel source NVRTC
 * compiles, each the same bytes as its file. The kernel source holds a
 * backslash (barrier_wait's comment), which the awk rule before embed_c
 * turned into an escape under mawk. Run from the repository's root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ksmm/ksmm_impl.h"
#include "ksmm/ksmm_space.h"
#include "testutil.h"

static void assert_same_as_file(const char *embedded, const char *path)
{
	size_t n;
	unsigned char *file = test_slurp(path, &n);
	assert_non_null(file);
	assert_int_equal(strlen(embedded), n);
	assert_memory_equal(embedded, file, n);
	free(file);
}

static void test_default_space(void **state)
{
	(void)state;
	assert_same_as_file(ksmm_space_default_yaml, "configs/ksmm/space.yaml");
}

static void test_kernel_source(void **state)
{
	(void)state;
#ifdef SPKIT_CUDA
	assert_non_null(strchr(ksmm_kernel_src, '\\'));
	assert_same_as_file(ksmm_kernel_src, "kernels/ksmm/ksmm_kernel.cuh");
#else
	skip(); /* no CUDA build: no kernel source built in */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_space),
		cmocka_unit_test(test_kernel_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
