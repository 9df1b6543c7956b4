/* Per-operator FLOPs, MACs, bytes and intensity, parameters and totals, on
 * small hand-built graphs whose numbers are worked out in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "graphutil.h"
#include "partition/op_cost.h"

/* Shapes inferred, parameters marked, and the cost of every node. */
struct costed {
	struct opgraph g;
	size_t order[16];
	unsigned char unknown[16], is_param[64];
	struct op_cost c[16];
	int64_t params;
};

static void cost_all(struct costed *k, int dtype_bytes, int allow_unknown)
{
	struct sp_err e;
	struct shape_infer_opts o = {.allow_unknown = allow_unknown};
	assert_true(k->g.nnodes <= 16 && k->g.nvalues <= 64);
	assert_int_equal(shape_infer(&k->g, &o, k->order, k->unknown, &e), 0);
	k->params = op_cost_mark_params(&k->g, k->order, k->is_param);
	for (size_t i = 0; i < k->g.nnodes; i++)
		op_cost(&k->g, i, k->unknown[i], k->is_param, dtype_bytes, &k->c[i]);
}

static void test_conv_flops(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 4, GU_DIMS(2, 8, 32, 32), NULL);
	gu_tensor(&k.g, 'w', "w", 4, GU_DIMS(16, 2, 3, 3), NULL);
	gu_tensor(&k.g, 'w', "dw", 4, GU_DIMS(8, 1, 3, 3), NULL);
	gu_tensor(&k.g, 'w', "b", 1, GU_DIMS(16), NULL);
	struct opgraph_node *n = gu_node(&k.g, "Conv", "grouped", GU_IN("x", "w", "b"), "y");
	opgraph_node_add_int(n, "group", 4);
	opgraph_node_add_ints(n, "pads", GU_DIMS(1, 1, 1, 1), 4);
	n = gu_node(&k.g, "Conv", "depthwise", GU_IN("x", "dw"), "z");
	opgraph_node_add_int(n, "group", 8);
	cost_all(&k, 4, 0);
	/* 2*B*Cout*Hout*Wout*(Cin/groups)*Kh*Kw, the bias not counted */
	assert_int_equal(k.c[0].flops, 2LL * 2 * 16 * 32 * 32 * 2 * 3 * 3);
	assert_int_equal(k.c[0].macs, k.c[0].flops / 2);
	assert_int_equal(k.c[0].cls, OP_COST_MATMUL);
	assert_int_equal(k.c[1].flops, 2LL * 2 * 8 * 30 * 30 * 1 * 3 * 3);
	/* bytes: x in, w and b weights, y out, 4 bytes each */
	assert_int_equal(k.c[0].input_bytes, 4LL * 2 * 8 * 32 * 32);
	assert_int_equal(k.c[0].weight_bytes, 4LL * (16 * 2 * 9 + 16));
	assert_int_equal(k.c[0].output_bytes, 4LL * 2 * 16 * 32 * 32);
	double moved = (double)(k.c[0].input_bytes + k.c[0].weight_bytes + k.c[0].output_bytes);
	assert_true(fabs(k.c[0].intensity - (double)k.c[0].flops / moved) < 1e-12);
	assert_int_equal(k.params, 16 * 2 * 9 + 8 * 9 + 16);
	opgraph_free(&k.g);
}

static void test_conv_transpose_flops(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 4, GU_DIMS(1, 8, 5, 5), NULL);
	gu_tensor(&k.g, 'w', "w", 4, GU_DIMS(8, 2, 3, 3), NULL);
	struct opgraph_node *n = gu_node(&k.g, "ConvTranspose", "up", GU_IN("x", "w"), "y");
	opgraph_node_add_int(n, "group", 2);
	cost_all(&k, 4, 0);
	/* 2*B*Cin*Hin*Win*(Cout/groups)*Kh*Kw */
	assert_int_equal(k.c[0].flops, 2LL * 1 * 8 * 5 * 5 * 2 * 3 * 3);
	opgraph_free(&k.g);
}

static void test_matrix_products(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "a", 2, GU_DIMS(7, 3), NULL);
	gu_tensor(&k.g, 'w', "b", 2, GU_DIMS(5, 7), NULL);
	gu_tensor(&k.g, 'w', "c", 1, GU_DIMS(5), NULL);
	struct opgraph_node *n = gu_node(&k.g, "Gemm", "fc", GU_IN("a", "b", "c"), "y");
	opgraph_node_add_int(n, "transA", 1);
	opgraph_node_add_int(n, "transB", 1);
	gu_tensor(&k.g, 'i', "m", 4, GU_DIMS(3, 1, 4, 5), NULL);
	gu_tensor(&k.g, 'i', "q", 3, GU_DIMS(6, 5, 2), NULL);
	gu_node(&k.g, "MatMul", "bmm", GU_IN("m", "q"), "mq");
	cost_all(&k, 2, 0);
	assert_int_equal(k.c[0].flops, 2LL * 3 * 5 * 7); /* M=3 N=5 K=7 */
	assert_int_equal(k.c[1].flops, 2LL * 3 * 6 * 4 * 2 * 5); /* batch 3x6, M=4 N=2 K=5 */
	assert_int_equal(k.c[1].input_bytes, 2LL * (3 * 4 * 5 + 6 * 5 * 2)); /* fp16 */
	opgraph_free(&k.g);
}

static void test_elementwise_and_normalisation(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 3, GU_DIMS(1, 3, 1), NULL);
	gu_tensor(&k.g, 'i', "y", 3, GU_DIMS(4, 1, 5), NULL);
	gu_tensor(&k.g, 'w', "s", 1, GU_DIMS(5), NULL);
	gu_node(&k.g, "Add", "add", GU_IN("x", "y"), "a");
	gu_node(&k.g, "Relu", "relu", GU_IN("a"), "r");
	gu_node(&k.g, "BatchNormalization", "bn", GU_IN("r", "s", "s", "s", "s"), "bn");
	gu_node(&k.g, "Softmax", "sm", GU_IN("bn"), "sm");
	gu_node(&k.g, "LayerNormalization", "ln", GU_IN("sm", "s"), "ln");
	gu_node(&k.g, "Flatten", "flat", GU_IN("ln"), "f");
	struct opgraph_node *n = gu_node(&k.g, "ReduceMean", "mean", GU_IN("ln"), "m");
	opgraph_node_add_ints(n, "axes", GU_DIMS(-1), 1);
	cost_all(&k, 4, 0);
	/* per output element (60 of them): 1, 1, 2, 5, 5; data 0; reduce per input */
	const int64_t want[] = {60, 60, 120, 300, 300, 0, 60};
	const enum op_cost_class cls[] = {OP_COST_ELEMENTWISE,   OP_COST_ELEMENTWISE,
					  OP_COST_NORMALIZATION, OP_COST_NORMALIZATION,
					  OP_COST_NORMALIZATION, OP_COST_DATA,
					  OP_COST_REDUCE};
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(k.c[i].flops, want[i]);
		assert_int_equal(k.c[i].cls, cls[i]);
		assert_int_equal(k.c[i].macs, 0);
	}
	assert_int_equal(k.c[5].intensity, 0);
	opgraph_free(&k.g);
}

/* The FLOPs per output element of every elementwise and normalisation op
 * of the list, on a (2,3,4) output. */
static void test_each_per_element_op(void **state)
{
	static const struct {
		const char *op;
		int flops;
		size_t nin;
	} ops[] = {{"Relu", 1, 1},    {"Clip", 1, 1},	    {"Sigmoid", 1, 1}, {"HardSigmoid", 1, 1},
		   {"HardSwish", 1, 1}, {"Sqrt", 1, 1},     {"Erf", 1, 1},     {"Tanh", 1, 1},
		   {"Gelu", 1, 1},    {"Mul", 1, 2},	    {"Add", 1, 2},     {"Sub", 1, 2},
		   {"Div", 1, 2},     {"Pow", 1, 2},	    {"Equal", 1, 2},   {"Mod", 1, 2},
		   {"Where", 1, 3},   {"Softmax", 5, 1},    {"LayerNormalization", 5, 2},
		   {"BatchNormalization", 2, 5}};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		struct costed k = {0};
		gu_init(&k.g);
		gu_tensor(&k.g, 'i', "x", 3, GU_DIMS(2, 3, 4), NULL);
		gu_node(&k.g, ops[i].op, "n", GU_IN("x", "x", "x", "x", "x"), "y")->nin = ops[i].nin;
		cost_all(&k, 4, 0);
		if (k.c[0].flops != ops[i].flops * 24)
			fail_msg("%s: %lld FLOPs", ops[i].op, (long long)k.c[0].flops);
		assert_int_equal(k.c[0].macs, 0);
		opgraph_free(&k.g);
	}
}

static void test_pools(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 4, GU_DIMS(1, 8, 16, 16), NULL);
	struct opgraph_node *n = gu_node(&k.g, "MaxPool", "max", GU_IN("x"), "p");
	opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	gu_node(&k.g, "GlobalAveragePool", "gap", GU_IN("p"), "g");
	cost_all(&k, 4, 0);
	assert_int_equal(k.c[0].flops, 8LL * 8 * 8 * 4); /* output elements x kernel */
	assert_int_equal(k.c[1].flops, 8LL * 8 * 8);     /* input elements */
	opgraph_free(&k.g);
}

static void test_params_and_totals(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 2, GU_DIMS(1, 4), NULL);
	gu_tensor(&k.g, 'w', "w", 2, GU_DIMS(4, 4), NULL);
	/* The exporter's alias of an initializer counts as a tensor of its own. */
	gu_node(&k.g, "Identity", "alias", GU_IN("w"), "w2");
	gu_node(&k.g, "MatMul", "mm1", GU_IN("x", "w"), "h");
	gu_node(&k.g, "MatMul", "mm2", GU_IN("h", "w2"), "y");
	gu_node(&k.g, "Relu", "relu", GU_IN("y"), "z");
	gu_node(&k.g, "Frobnicate", "frob", GU_IN("z"), "u");
	cost_all(&k, 1, 1);
	assert_int_equal(k.params, 32);
	assert_int_equal(k.c[2].weight_bytes, 16); /* int8: w2 is a weight */
	assert_int_equal(k.c[4].cls, OP_COST_UNKNOWN);
	assert_int_equal(k.c[4].flops, 0);
	struct op_cost_totals t = {0};
	for (size_t i = 0; i < k.g.nnodes; i++)
		op_cost_accumulate(&t, &k.c[i]);
	assert_int_equal(t.matmul_flops, 2 * 2 * 4 * 4);
	assert_int_equal(t.total_flops, 2 * 2 * 4 * 4 + 4);
	assert_int_equal(t.macs, 2 * 4 * 4);
	/* the alias is a view: nothing; mm 4+16+4 twice, relu 4+4, frob 4 in (no shape out) */
	assert_int_equal(k.c[0].kernel, 0);
	assert_int_equal(t.memory_bytes, 24 + 24 + 8 + 4);
	opgraph_free(&k.g);
}

/* Einsum counts every index once; Resize by its taps; the reductions over
 * their input; a few of the per-element constants. */
static void test_einsum_resize_reduce(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "q", 4, GU_DIMS(2, 4, 5, 8), NULL);
	gu_tensor(&k.g, 'i', "kk", 4, GU_DIMS(2, 4, 6, 8), NULL);
	gu_tensor(&k.g, 'i', "x", 4, GU_DIMS(1, 3, 4, 5), NULL);
	gu_tensor(&k.g, 'c', "sizes", 1, GU_DIMS(4), GU_DIMS(1, 3, 8, 5));
	gu_tensor(&k.g, 'c', "big", 1, GU_DIMS(4), GU_DIMS(1, 3, 8, 10));
	opgraph_node_add_string(gu_node(&k.g, "Einsum", "att", GU_IN("q", "kk"), "s"), "equation",
				"bhid,bhjd->bhij");
	gu_node(&k.g, "Resize", "nearest", GU_IN("x", "", "", "sizes"), "r0");
	opgraph_node_add_string(gu_node(&k.g, "Resize", "linear", GU_IN("x", "", "", "big"), "r1"),
				"mode", "linear");
	opgraph_node_add_string(gu_node(&k.g, "Resize", "cubic", GU_IN("x", "", "", "sizes"), "r2"),
				"mode", "cubic");
	opgraph_node_add_int(gu_node(&k.g, "ArgMax", "argmax", GU_IN("x"), "am"), "axis", 1);
	gu_node(&k.g, "GroupNormalization", "gn", GU_IN("x"), "gn");
	gu_node(&k.g, "Sin", "sin", GU_IN("x"), "sn");
	cost_all(&k, 4, 0);
	assert_int_equal(k.c[0].cls, OP_COST_MATMUL);
	assert_int_equal(k.c[0].macs, 2LL * 4 * 5 * 6 * 8); /* b h i j d */
	assert_int_equal(k.c[0].flops, 2 * k.c[0].macs);
	assert_int_equal(k.c[1].flops, 0);
	assert_int_equal(k.c[1].cls, OP_COST_DATA);
	assert_int_equal(k.c[2].flops, 2LL * 4 * 3 * 8 * 10); /* two axes resized: 4 taps */
	assert_int_equal(k.c[2].cls, OP_COST_ELEMENTWISE);
	assert_int_equal(k.c[3].flops, 2LL * 4 * 3 * 8 * 5);  /* one axis: 4 cubic taps */
	assert_int_equal(k.c[4].flops, 3 * 4 * 5);            /* per input element */
	assert_int_equal(k.c[4].cls, OP_COST_REDUCE);
	assert_int_equal(k.c[5].flops, 5 * 60);
	assert_int_equal(k.c[6].flops, 60);
	opgraph_free(&k.g);
}

/* Threads are output elements; depthwise means group == input channels;
 * views run no kernel and move nothing; a constant op costs nothing. */
static void test_parallelism_and_views(void **state)
{
	struct costed k = {0};
	gu_init(&k.g);
	gu_tensor(&k.g, 'i', "x", 4, GU_DIMS(2, 8, 10, 10), NULL);
	gu_tensor(&k.g, 'w', "dw", 4, GU_DIMS(16, 1, 3, 3), NULL);
	gu_tensor(&k.g, 'w', "gw", 4, GU_DIMS(8, 4, 1, 1), NULL);
	gu_tensor(&k.g, 'c', "flat", 1, GU_DIMS(2), GU_DIMS(2, -1));
	opgraph_node_add_int(gu_node(&k.g, "Conv", "depthwise", GU_IN("x", "dw"), "d"), "group", 8);
	opgraph_node_add_int(gu_node(&k.g, "Conv", "grouped", GU_IN("x", "gw"), "g"), "group", 2);
	gu_node(&k.g, "Reshape", "view", GU_IN("g", "flat"), "v");
	gu_node(&k.g, "Relu", "relu", GU_IN("v"), "r");
	cost_all(&k, 2, 0);
	assert_int_equal(k.c[0].threads, 2 * 16 * 8 * 8);
	assert_true(k.c[0].depthwise);
	assert_int_equal(k.c[0].groups, 8);
	assert_false(k.c[1].depthwise);
	assert_int_equal(k.c[1].groups, 2);
	assert_int_equal(k.c[1].threads, 2 * 8 * 10 * 10);
	assert_int_equal(k.c[2].kernel, 0);
	assert_int_equal(k.c[2].threads, 0);
	assert_int_equal(k.c[2].input_bytes + k.c[2].output_bytes + k.c[2].weight_bytes, 0);
	assert_int_equal(k.c[3].kernel, 1);
	assert_int_equal(k.c[3].groups, 1);
	assert_int_equal(k.c[3].input_bytes, 2 * 2 * 800);
	op_cost_make_constant(&k.c[0]);
	assert_int_equal(k.c[0].kernel, 0);
	assert_int_equal(k.c[0].flops + k.c[0].threads + k.c[0].input_bytes, 0);
	assert_true(k.c[0].depthwise); /* what it is stays */
	assert_int_equal(k.c[0].cls, OP_COST_MATMUL);
	opgraph_free(&k.g);
}

static void test_dtypes(void **state)
{
	assert_int_equal(op_cost_dtype_size("fp32"), 4);
	assert_int_equal(op_cost_dtype_size("tf32"), 4);
	assert_int_equal(op_cost_dtype_size("fp16"), 2);
	assert_int_equal(op_cost_dtype_size("bf16"), 2);
	assert_int_equal(op_cost_dtype_size("int8"), 1);
	assert_int_equal(op_cost_dtype_size("fp64"), 0);
	assert_string_equal(op_cost_class_name(OP_COST_MATMUL), "matmul");
	assert_string_equal(op_cost_class_name(OP_COST_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_flops),
		cmocka_unit_test(test_conv_transpose_flops),
		cmocka_unit_test(test_matrix_products),
		cmocka_unit_test(test_elementwise_and_normalisation),
		cmocka_unit_test(test_each_per_element_op),
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_params_and_totals),
		cmocka_unit_test(test_einsum_resize_reduce),
		cmocka_unit_test(test_parallelism_and_views),
		cmocka_unit_test(test_dtypes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
