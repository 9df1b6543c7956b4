/* Fusion candidates on hand-built graphs: each chain kind, the single
 * consumer and graph output rules, constant heads, the bytes saved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "partition/fusion.h"
#include "graphutil.h"
#include "partition/op_cost.h"
#include "partition/stages.h"

/* Shapes, stages and parameters, then the chains. */
static struct fusion *find(struct opgraph *g, size_t *n)
{
	struct sp_err e;
	size_t order[32];
	unsigned char unknown[32], is_param[64];
	int64_t stage[32];
	struct stages_summary s;
	struct shape_infer_opts o = {0};
	struct fusion *f;
	assert_true(g->nnodes <= 32 && g->nvalues <= 64);
	assert_int_equal(shape_infer(g, &o, order, unknown, &e), 0);
	assert_int_equal(stages_assign(g, order, stage, &s, &e), 0);
	op_cost_mark_params(g, order, is_param);
	assert_int_equal(fusion_find(g, order, stage, is_param, 4, &f, n, &e), 0);
	return f;
}

static const char *op_of(const struct opgraph *g, const struct fusion *f, size_t i)
{
	return g->nodes[f->ops[i]].name;
}

static void test_chains(void **state)
{
	struct opgraph g;
	size_t n;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 4, 6, 6), NULL);
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(4, 4, 1, 1), NULL);
	gu_tensor(&g, 'w', "s", 1, GU_DIMS(4), NULL);
	gu_tensor(&g, 'w', "fw", 2, GU_DIMS(144, 10), NULL);
	gu_tensor(&g, 'w', "fb", 1, GU_DIMS(10), NULL);
	gu_tensor(&g, 'c', "flat", 1, GU_DIMS(2), GU_DIMS(1, 144));
	gu_node(&g, "Conv", "conv", GU_IN("x", "w"), "c");
	gu_node(&g, "BatchNormalization", "bn", GU_IN("c", "s", "s", "s", "s"), "b");
	gu_node(&g, "Relu", "relu", GU_IN("b"), "r");
	gu_node(&g, "Reshape", "flatten", GU_IN("r", "flat"), "f");
	gu_node(&g, "MatMul", "fc", GU_IN("f", "fw"), "m");
	gu_node(&g, "Add", "bias", GU_IN("fb", "m"), "mb");
	gu_node(&g, "HardSwish", "act", GU_IN("mb"), "y");
	struct fusion *f = find(&g, &n);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].nops, 3);
	assert_string_equal(op_of(&g, &f[0], 2), "relu");
	assert_int_equal(f[0].saved_bytes, 2 * 2 * 4 * 144); /* c and b, written and read */
	assert_int_equal(f[1].nops, 3);
	assert_string_equal(op_of(&g, &f[1], 1), "bias");
	assert_string_equal(op_of(&g, &f[1], 2), "act");
	free(f);
	opgraph_free(&g);
}

static void test_what_breaks_a_chain(void **state)
{
	struct opgraph g;
	size_t n;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 8), NULL);
	gu_tensor(&g, 'i', "other", 2, GU_DIMS(2, 8), NULL);
	gu_tensor(&g, 'w', "w", 2, GU_DIMS(8, 8), NULL);
	/* two consumers of the product: no chain */
	gu_node(&g, "MatMul", "shared", GU_IN("x", "w"), "a");
	gu_node(&g, "Relu", "r1", GU_IN("a"), "r1");
	gu_node(&g, "Relu", "r2", GU_IN("a"), "r2");
	/* the Add is of an activation, not a bias; BatchNorm only after a conv */
	gu_node(&g, "MatMul", "not_bias", GU_IN("x", "w"), "b");
	gu_node(&g, "Add", "add", GU_IN("b", "other"), "c");
	gu_node(&g, "Relu", "r3", GU_IN("c"), "r3");
	/* a graph output between: the chain stops before it */
	gu_node(&g, "Gemm", "gemm", GU_IN("x", "w"), "d");
	gu_node(&g, "Sigmoid", "sig", GU_IN("d"), "e");
	gu_node(&g, "Relu", "after", GU_IN("e"), "z");
	g.values[opgraph_value_intern(&g, "d")].is_output = 1;
	/* a constant product (weights times weights) runs once: not a kernel */
	gu_node(&g, "MatMul", "const", GU_IN("w", "w"), "ww");
	gu_node(&g, "Relu", "cr", GU_IN("ww"), "cr");
	struct fusion *f = find(&g, &n);
	assert_int_equal(n, 0);
	free(f);
	opgraph_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chains),
		cmocka_unit_test(test_what_breaks_a_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
