/* Stages, parallel ops and critical paths of a small branching graph. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "graphutil.h"
#include "partition/stages.h"

/* x -> a -> b -> d, x -> c -> d (a residual block: c beside a and b),
 * plus an Identity of a weight and a Shape of x that no stage holds. */
static void test_diamond(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	gu_tensor(&g, 'w', "w", 1, GU_DIMS(4), NULL);
	gu_node(&g, "Identity", "alias", GU_IN("w"), "w2");
	gu_node(&g, "Relu", "a", GU_IN("x"), "a");
	gu_node(&g, "Add", "b", GU_IN("a", "w2"), "b");
	gu_node(&g, "Relu", "c", GU_IN("x"), "c");
	gu_node(&g, "Add", "d", GU_IN("b", "c"), "d");
	gu_node(&g, "Shape", "shape", GU_IN("d"), "s");
	size_t order[6];
	unsigned char unknown[6], on_path[6];
	struct shape_infer_opts o = {0};
	assert_int_equal(shape_infer(&g, &o, order, unknown, &e), 0);
	const int64_t flops[6] = {0, 10, 20, 100, 1, 1000};
	int64_t stage[6], total;
	struct stages_summary s;
	assert_int_equal(stages_assign(&g, order, stage, &s, &e), 0);
	const int64_t want[6] = {-1, 0, 1, 0, 2, -1};
	assert_memory_equal(stage, want, sizeof want);
	assert_int_equal(s.stages, 3);
	assert_int_equal(s.max_parallel_ops, 2);
	assert_int_equal(s.critical_path_ops, 3);
	assert_int_equal(stages_heaviest_path(&g, order, stage, flops, &total, on_path, &e), 0);
	assert_int_equal(total, 101); /* through c, not the longer a-b; the Shape is constant */
	const unsigned char want_path[6] = {0, 0, 0, 1, 1, 0};
	assert_memory_equal(on_path, want_path, sizeof want_path);
	opgraph_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diamond),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
