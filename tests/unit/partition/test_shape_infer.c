/* Shape inference: each rule on small hand-built graphs, and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "graphutil.h"

static const struct shape_infer_opts plain = {0};

static void expect_error(struct opgraph *g, const struct shape_infer_opts *o, const char *text)
{
	struct sp_err e;
	assert_int_equal(gu_infer(g, o, &e), -1);
	if (!strstr(e.msg, text))
		fail_msg("message '%s' lacks '%s'", e.msg, text);
}

/* One node over the inputs a and b (rank ra and rb) must fail with text. */
static void expect_binary_error(const char *op, int ra, const int64_t *a, int rb,
				const int64_t *b, const char *text)
{
	struct opgraph g;
	gu_init(&g);
	gu_tensor(&g, 'i', "a", ra, a, NULL);
	gu_tensor(&g, 'i', "b", rb, b, NULL);
	gu_node(&g, op, "n", GU_IN("a", "b"), "y");
	expect_error(&g, &plain, text);
	opgraph_free(&g);
}

static void test_conv(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(2, 8, 32, 32), NULL);
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(16, 2, 3, 3), NULL);
	struct opgraph_node *n = gu_node(&g, "Conv", "grouped", GU_IN("x", "w"), "y");
	opgraph_node_add_int(n, "group", 4);
	opgraph_node_add_ints(n, "dilations", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "pads", GU_DIMS(1, 1, 2, 1), 4);
	n = gu_node(&g, "Conv", "same", GU_IN("x", "w2"), "y2");
	gu_tensor(&g, 'w', "w2", 4, GU_DIMS(5, 8, 4, 4), NULL);
	opgraph_node_add_ints(n, "strides", GU_DIMS(3, 3), 2);
	opgraph_node_add_string(n, "auto_pad", "SAME_UPPER");
	n = gu_node(&g, "Conv", "valid", GU_IN("x", "w2"), "y3");
	opgraph_node_add_string(n, "auto_pad", "VALID");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	/* (32 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 16; (32 + 1 + 1 - 5) / 2 + 1 = 15 */
	gu_assert_dims(&g, "y", 4, GU_DIMS(2, 16, 16, 15));
	gu_assert_dims(&g, "y2", 4, GU_DIMS(2, 5, 11, 11)); /* ceil(32 / 3) */
	gu_assert_dims(&g, "y3", 4, GU_DIMS(2, 5, 29, 29));
	opgraph_free(&g);
	expect_binary_error("Conv", 4, GU_DIMS(1, 3, 8, 8), 4, GU_DIMS(4, 4, 3, 3),
			    "t.onnx: node 'n' (Conv): input channels 3 are not weight channels 4 "
			    "x group 1");
	/* kernel_shape repeats the weight's spatial dims; a Conv and a
	 * ConvTranspose whose kernel_shape disagrees are refused */
	static const char *const convs[] = {"Conv", "ConvTranspose"};
	for (int i = 0; i < 2; i++) {
		gu_init(&g);
		gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 4, 8, 8), NULL);
		gu_tensor(&g, 'w', "w", 4, GU_DIMS(4, 4, 3, 3), NULL);
		n = gu_node(&g, convs[i], "k", GU_IN("x", "w"), "y");
		opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(3, 5), 2);
		expect_error(&g, &plain, "node 'k' (");
		expect_error(&g, &plain, "): kernel_shape[1] is 5, the weight's spatial dim is 3");
		opgraph_free(&g);
	}
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 4, 8, 8), NULL);
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(4, 4, 3, 3), NULL);
	n = gu_node(&g, "Conv", "k", GU_IN("x", "w"), "y");
	opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(3), 1);
	expect_error(&g, &plain,
		     "node 'k' (Conv): kernel_shape has 1 dims, the weight 2 spatial dims");
	opgraph_free(&g);
}

static void test_conv_transpose(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 8, 5, 5), NULL);
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(8, 2, 3, 3), NULL);
	struct opgraph_node *n = gu_node(&g, "ConvTranspose", "up", GU_IN("x", "w"), "y");
	opgraph_node_add_int(n, "group", 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "pads", GU_DIMS(1, 1, 1, 1), 4);
	opgraph_node_add_ints(n, "output_padding", GU_DIMS(1, 1), 2);
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "y", 4, GU_DIMS(1, 4, 10, 10)); /* 2*4 + 1 + 3 - 2 */
	opgraph_free(&g);
}

static void test_gemm_and_matmul(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "a", 2, GU_DIMS(7, 3), NULL);
	gu_tensor(&g, 'w', "b", 2, GU_DIMS(5, 7), NULL);
	struct opgraph_node *n = gu_node(&g, "Gemm", "g", GU_IN("a", "b"), "y");
	opgraph_node_add_int(n, "transA", 1);
	opgraph_node_add_int(n, "transB", 1);
	gu_tensor(&g, 'i', "m", 4, GU_DIMS(3, 1, 4, 5), NULL);
	gu_tensor(&g, 'i', "k", 3, GU_DIMS(6, 5, 2), NULL);
	gu_tensor(&g, 'i', "v", 1, GU_DIMS(5), NULL);
	gu_node(&g, "MatMul", "batched", GU_IN("m", "k"), "mk");
	gu_node(&g, "MatMul", "matvec", GU_IN("m", "v"), "mv");
	gu_node(&g, "MatMul", "vecmat", GU_IN("v", "k"), "vk");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "y", 2, GU_DIMS(3, 5));
	gu_assert_dims(&g, "mk", 4, GU_DIMS(3, 6, 4, 2));
	gu_assert_dims(&g, "mv", 3, GU_DIMS(3, 1, 4));
	gu_assert_dims(&g, "vk", 2, GU_DIMS(6, 2));
	opgraph_free(&g);
	expect_binary_error("MatMul", 2, GU_DIMS(7, 3), 2, GU_DIMS(4, 5),
			    "node 'n' (MatMul): inner dims 3 and 4 differ");
	expect_binary_error("MatMul", 3, GU_DIMS(2, 7, 3), 3, GU_DIMS(5, 3, 5),
			    "node 'n' (MatMul): batch dims 2 and 5 cannot broadcast");
	expect_binary_error("Gemm", 2, GU_DIMS(7, 3), 2, GU_DIMS(4, 5),
			    "node 'n' (Gemm): inner dims 3 and 4 differ");
}

static void test_elementwise(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 3, GU_DIMS(1, 3, 1), NULL);
	gu_tensor(&g, 'w', "y", 3, GU_DIMS(4, 1, 5), NULL);
	gu_tensor(&g, 'w', "s", 0, NULL, NULL);
	gu_node(&g, "Add", "add", GU_IN("x", "y"), "xy");
	gu_node(&g, "Mul", "scale", GU_IN("xy", "s"), "z");
	gu_node(&g, "Relu", "relu", GU_IN("z"), "r");
	gu_node(&g, "Clip", "clip", GU_IN("r", "", ""), "c");
	gu_node(&g, "BatchNormalization", "bn", GU_IN("c", "s", "s", "s", "s"), "bn");
	gu_node(&g, "Softmax", "sm", GU_IN("bn"), "sm");
	gu_node(&g, "Identity", "id", GU_IN("sm"), "id");
	struct sp_err e2;
	const char *outs[] = {"d", "mask"};
	assert_int_equal(opgraph_add_node(&g, "Dropout", "drop", GU_IN("id"), 1, outs, 2, &e2), 0);
	gu_node(&g, "Where", "where", GU_IN("mask", "x", "s"), "w");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	for (const char *const *v = GU_IN("xy", "z", "r", "c", "bn", "sm", "id", "d", "mask"); *v; v++)
		gu_assert_dims(&g, *v, 3, GU_DIMS(4, 3, 5));
	gu_assert_dims(&g, "w", 3, GU_DIMS(4, 3, 5));
	opgraph_free(&g);
	expect_binary_error("Sub", 2, GU_DIMS(2, 3), 2, GU_DIMS(4, 3),
			    "node 'n' (Sub): shapes (2,3) and (4,3) ('b') cannot broadcast");
}

/* Every elementwise op of the list: the unary ones keep the shape,
 * the binary ones broadcast (3,1,5) with (4,1). */
static void test_each_elementwise_op(void **state)
{
	static const char *const unary[] = {"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
					    "Sqrt", "Erf", "Tanh", "Gelu", "Exp", "Log", "Neg",
					    "Abs", "Reciprocal", "LeakyRelu", "Elu", "Softplus",
					    "Softmax", "LogSoftmax", "Sin", "Cos", "Round", "CumSum"};
	static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
					     "Mod", "Equal", "Less", "Greater", "And", "Or"};
	struct sp_err e;
	for (size_t k = 0; k < sizeof unary / sizeof unary[0] + sizeof binary / sizeof binary[0];
	     k++) {
		int is_unary = k < sizeof unary / sizeof unary[0];
		const char *op = is_unary ? unary[k] : binary[k - sizeof unary / sizeof unary[0]];
		struct opgraph g;
		gu_init(&g);
		gu_tensor(&g, 'i', "x", 3, GU_DIMS(3, 1, 5), NULL);
		gu_tensor(&g, 'i', "y", 2, GU_DIMS(4, 1), NULL);
		gu_node(&g, op, "n", is_unary ? GU_IN("x") : GU_IN("x", "y"), "z");
		if (gu_infer(&g, &plain, &e))
			fail_msg("%s: %s", op, e.msg);
		gu_assert_dims(&g, "z", 3, is_unary ? GU_DIMS(3, 1, 5) : GU_DIMS(3, 4, 5));
		opgraph_free(&g);
	}
}

static void test_pools(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 8, 15, 15), NULL);
	struct opgraph_node *n = gu_node(&g, "MaxPool", "max", GU_IN("x"), "p");
	opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(3, 3), 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "pads", GU_DIMS(1, 1, 1, 1), 4);
	n = gu_node(&g, "AveragePool", "avg", GU_IN("p"), "q");
	opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(3, 3), 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	opgraph_node_add_int(n, "ceil_mode", 1);
	n = gu_node(&g, "AveragePool", "avgfloor", GU_IN("p"), "q2");
	opgraph_node_add_ints(n, "kernel_shape", GU_DIMS(3, 3), 2);
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	gu_node(&g, "GlobalAveragePool", "gap", GU_IN("q"), "gq");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "p", 4, GU_DIMS(1, 8, 8, 8));
	gu_assert_dims(&g, "q", 4, GU_DIMS(1, 8, 4, 4)); /* ceil(5 / 2) + 1 */
	gu_assert_dims(&g, "q2", 4, GU_DIMS(1, 8, 3, 3));
	gu_assert_dims(&g, "gq", 4, GU_DIMS(1, 8, 1, 1));
	opgraph_free(&g);
}

static void test_layout(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(2, 3, 4, 5), NULL);
	gu_tensor(&g, 'c', "target", 1, GU_DIMS(3), GU_DIMS(0, -1, 10));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(2), GU_DIMS(0, -1));
	struct opgraph_node *n = gu_node(&g, "Flatten", "f0", GU_IN("x"), "f0");
	opgraph_node_add_int(n, "axis", 0);
	n = gu_node(&g, "Flatten", "f2", GU_IN("x"), "f2");
	opgraph_node_add_int(n, "axis", -1);
	gu_node(&g, "Reshape", "r", GU_IN("x", "target"), "r");
	gu_node(&g, "Transpose", "t", GU_IN("x"), "t");
	n = gu_node(&g, "Transpose", "tp", GU_IN("x"), "tp");
	opgraph_node_add_ints(n, "perm", GU_DIMS(0, 2, 3, 1), 4);
	n = gu_node(&g, "Concat", "cat", GU_IN("x", "tp2"), "cat");
	opgraph_node_add_int(n, "axis", -1);
	n = gu_node(&g, "Transpose", "tp2", GU_IN("x"), "tp2");
	opgraph_node_add_ints(n, "perm", GU_DIMS(0, 1, 2, 3), 4);
	gu_node(&g, "Unsqueeze", "u", GU_IN("x", "axes"), "u");
	gu_node(&g, "Squeeze", "s", GU_IN("u", "axes"), "s");
	n = gu_node(&g, "Unsqueeze", "u11", GU_IN("x"), "u11");
	opgraph_node_add_ints(n, "axes", GU_DIMS(2), 1); /* opset 11: an attribute */
	gu_node(&g, "Squeeze", "sall", GU_IN("u11"), "sall");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "f0", 2, GU_DIMS(1, 120));
	gu_assert_dims(&g, "f2", 2, GU_DIMS(24, 5));
	gu_assert_dims(&g, "r", 3, GU_DIMS(2, 6, 10));
	gu_assert_dims(&g, "t", 4, GU_DIMS(5, 4, 3, 2));
	gu_assert_dims(&g, "tp", 4, GU_DIMS(2, 4, 5, 3));
	gu_assert_dims(&g, "cat", 4, GU_DIMS(2, 3, 4, 10));
	gu_assert_dims(&g, "u", 6, GU_DIMS(1, 2, 3, 4, 5, 1));
	gu_assert_dims(&g, "s", 4, GU_DIMS(2, 3, 4, 5));
	gu_assert_dims(&g, "u11", 5, GU_DIMS(2, 3, 1, 4, 5));
	gu_assert_dims(&g, "sall", 4, GU_DIMS(2, 3, 4, 5));
	opgraph_free(&g);
	expect_binary_error("Concat", 2, GU_DIMS(2, 3), 2, GU_DIMS(2, 4),
			    "node 'n' (Concat): input 'b' dim 1 is 4, not 3");
	expect_binary_error("Reshape", 2, GU_DIMS(2, 3), 1, GU_DIMS(2),
			    "node 'n' (Reshape): target shape 'b' is not a constant");
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_tensor(&g, 'c', "target", 1, GU_DIMS(2), GU_DIMS(4, -1));
	gu_node(&g, "Reshape", "r", GU_IN("x", "target"), "z");
	expect_error(&g, &plain, "node 'r' (Reshape): cannot infer the -1 dim: 6 elements");
	opgraph_free(&g);
}

/* The shape arithmetic of dynamic exports: Shape, Gather, Unsqueeze and
 * Concat on constants give Reshape its target. */
static void test_shape_arithmetic(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(-1, 4, 6, 6), NULL);
	gu_tensor(&g, 'c', "zero", 0, NULL, GU_DIMS(0));
	gu_tensor(&g, 'c', "rest", 1, GU_DIMS(1), GU_DIMS(-1));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(1), GU_DIMS(0));
	gu_node(&g, "Shape", "shape", GU_IN("x"), "s");
	gu_node(&g, "Gather", "gather", GU_IN("s", "zero"), "n");
	gu_node(&g, "Unsqueeze", "unsq", GU_IN("n", "axes"), "n1");
	struct opgraph_node *n = gu_node(&g, "Concat", "cat", GU_IN("n1", "rest"), "target");
	opgraph_node_add_int(n, "axis", 0);
	gu_node(&g, "Reshape", "reshape", GU_IN("x", "target"), "y");
	expect_error(&g, &plain, "input 'x' dim 0 is symbolic; give --batch or --input-shape");
	struct shape_infer_opts batch = {.batch = 3};
	assert_int_equal(gu_infer(&g, &batch, &e), 0);
	gu_assert_dims(&g, "s", 1, GU_DIMS(4));
	gu_assert_dims(&g, "n", 0, NULL);
	gu_assert_dims(&g, "target", 1, GU_DIMS(2));
	gu_assert_dims(&g, "y", 2, GU_DIMS(3, 144));
	const struct opgraph_value *t = &g.values[opgraph_value_intern(&g, "target")];
	assert_int_equal(t->ncval, 2);
	assert_int_equal(t->cval[0], 3);
	assert_int_equal(t->cval[1], -1);
	opgraph_free(&g);
}

static void test_slice_split_pad_expand(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 3, GU_DIMS(2, 10, 6), NULL);
	gu_tensor(&g, 'c', "starts", 1, GU_DIMS(2), GU_DIMS(1, -1));
	gu_tensor(&g, 'c', "ends", 1, GU_DIMS(2), GU_DIMS(INT64_MAX, -100));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(2), GU_DIMS(1, -1));
	gu_tensor(&g, 'c', "steps", 1, GU_DIMS(2), GU_DIMS(3, -2));
	gu_tensor(&g, 'c', "split", 1, GU_DIMS(2), GU_DIMS(4, 6));
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(6), GU_DIMS(0, 1, 2, 0, 3, 4));
	gu_tensor(&g, 'c', "shape", 1, GU_DIMS(4), GU_DIMS(5, 1, 10, 1));
	/* axis 1: 1, 4, 7 (3 elements); axis 2 backwards from 5 by 2: 5, 3, 1 */
	gu_node(&g, "Slice", "slice", GU_IN("x", "starts", "ends", "axes", "steps"), "s");
	const char *halves[] = {"a", "b"}, *thirds[] = {"t0", "t1", "t2"};
	assert_int_equal(opgraph_add_node(&g, "Split", "split", GU_IN("x", "split"), 2, halves, 2,
					  &e),
			 0);
	opgraph_node_add_int(&g.nodes[1], "axis", 1);
	assert_int_equal(opgraph_add_node(&g, "Split", "thirds", GU_IN("x"), 1, thirds, 3, &e), 0);
	opgraph_node_add_int(&g.nodes[2], "axis", 1); /* 10 in 3: 4, 4, 2 */
	gu_node(&g, "Pad", "pad", GU_IN("x", "pads"), "p");
	gu_node(&g, "Expand", "expand", GU_IN("x", "shape"), "ex");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "s", 3, GU_DIMS(2, 3, 3));
	gu_assert_dims(&g, "a", 3, GU_DIMS(2, 4, 6));
	gu_assert_dims(&g, "b", 3, GU_DIMS(2, 6, 6));
	gu_assert_dims(&g, "t0", 3, GU_DIMS(2, 4, 6));
	gu_assert_dims(&g, "t2", 3, GU_DIMS(2, 2, 6));
	gu_assert_dims(&g, "p", 3, GU_DIMS(2, 14, 12));
	gu_assert_dims(&g, "ex", 4, GU_DIMS(5, 2, 10, 6));
	opgraph_free(&g);

	expect_binary_error("Expand", 2, GU_DIMS(2, 3), 1, GU_DIMS(2),
			    "node 'n' (Expand): shape 'b' is not a constant");

	/* sizes past int64 are errors, not INT64_MAX: pads of 2^62 a side,
	 * an Expand to 2^40 x 2^40, a MatMul of 2^40 x 2^40 rows and columns */
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(2), GU_DIMS(INT64_C(1) << 62, INT64_C(1) << 62));
	gu_node(&g, "Pad", "pad", GU_IN("x", "pads"), "p");
	expect_error(&g, &plain,
		     "node 'pad' (Pad): output 'p' would have more than 9223372036854775807 elements");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(1, 1), NULL);
	gu_tensor(&g, 'c', "shape", 1, GU_DIMS(2), GU_DIMS(INT64_C(1) << 40, INT64_C(1) << 40));
	gu_node(&g, "Expand", "big", GU_IN("x", "shape"), "ex");
	expect_error(&g, &plain, "node 'big' (Expand): output 'ex' would have more than");
	opgraph_free(&g);
	expect_binary_error("MatMul", 2, GU_DIMS(INT64_C(1) << 40, 2), 2,
			    GU_DIMS(2, INT64_C(1) << 40),
			    "node 'n' (MatMul): output 'y' would have more than");
}

/* ConstantOfShape and Range make constants that Slice and Reshape read. */
static void test_constant_makers(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(4, 10), NULL);
	gu_tensor(&g, 'c', "two", 1, GU_DIMS(1), GU_DIMS(2));
	gu_tensor(&g, 'c', "r0", 0, NULL, GU_DIMS(2));
	gu_tensor(&g, 'c', "r1", 0, NULL, GU_DIMS(9));
	gu_tensor(&g, 'c', "r2", 0, NULL, GU_DIMS(3));
	gu_tensor(&g, 'c', "s0", 1, GU_DIMS(1), GU_DIMS(1));
	gu_tensor(&g, 'c', "s1", 1, GU_DIMS(1), GU_DIMS(3));
	gu_node(&g, "ConstantOfShape", "fill", GU_IN("two"), "f");
	gu_node(&g, "Range", "range", GU_IN("r0", "r1", "r2"), "r"); /* 2, 5, 8 */
	gu_node(&g, "Slice", "tail", GU_IN("r", "s0", "s1"), "rt");  /* 5, 8 */
	gu_node(&g, "Reshape", "reshape", GU_IN("x", "rt"), "y");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "f", 1, GU_DIMS(2));
	gu_assert_dims(&g, "r", 1, GU_DIMS(3));
	gu_assert_dims(&g, "rt", 1, GU_DIMS(2));
	gu_assert_dims(&g, "y", 2, GU_DIMS(5, 8));
	opgraph_free(&g);
}

/* Elementwise ops on shape tensors are evaluated: Mul of two gathered
 * dims, then Equal and Where choosing between two shapes. */
static void test_constant_folding(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 3, GU_DIMS(3, 8, 4), NULL);
	gu_tensor(&g, 'c', "i0", 1, GU_DIMS(1), GU_DIMS(0));
	gu_tensor(&g, 'c', "i1", 0, NULL, GU_DIMS(1));
	gu_tensor(&g, 'c', "i2", 0, NULL, GU_DIMS(2));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(1), GU_DIMS(0));
	gu_tensor(&g, 'c', "probe", 1, GU_DIMS(2), GU_DIMS(3, 0));
	gu_tensor(&g, 'c', "sevens", 1, GU_DIMS(2), GU_DIMS(7, 7));
	gu_node(&g, "Shape", "shape", GU_IN("x"), "s");
	gu_node(&g, "Gather", "b", GU_IN("s", "i0"), "b");
	gu_node(&g, "Gather", "h", GU_IN("s", "i1"), "h");
	gu_node(&g, "Gather", "w", GU_IN("s", "i2"), "w");
	gu_node(&g, "Mul", "hw", GU_IN("h", "w"), "hw");
	gu_node(&g, "Unsqueeze", "hw1", GU_IN("hw", "axes"), "hw1");
	opgraph_node_add_int(gu_node(&g, "Concat", "target", GU_IN("b", "hw1"), "target"), "axis",
			     0);
	gu_node(&g, "Reshape", "reshape", GU_IN("x", "target"), "y");
	gu_node(&g, "Equal", "eq", GU_IN("target", "probe"), "eq");
	gu_node(&g, "Where", "pick", GU_IN("eq", "target", "sevens"), "pick");
	gu_node(&g, "ConstantOfShape", "fill", GU_IN("pick"), "f");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "y", 2, GU_DIMS(3, 32));
	gu_assert_dims(&g, "f", 2, GU_DIMS(3, 7)); /* 3 == 3 kept, 32 != 0 replaced by 7 */
	opgraph_free(&g);
}

/* Resize and Upsample: scales, sizes (stretched or kept in aspect), axes,
 * tf_crop_and_resize's roi, opset 10's inputs, Upsample's attribute. */
static void test_resize(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 3, 7, 9), NULL);
	gu_tensor(&g, 'i', "y", 4, GU_DIMS(1, 2, 6, 8), NULL);
	gu_floats(&g, "scales", 1, 4, GU_F(1, 1, 2, 1.5));
	gu_floats(&g, "none", 1, 0, NULL);
	gu_tensor(&g, 'c', "sizes", 1, GU_DIMS(4), GU_DIMS(1, 3, 10, 12));
	gu_tensor(&g, 'c', "hw", 1, GU_DIMS(2), GU_DIMS(9, 9));
	gu_floats(&g, "roi", 1, 8, GU_F(0, 0, 0.25, 0, 1, 1, 0.75, 0.5));
	gu_floats(&g, "twice", 1, 4, GU_F(1, 1, 2, 2));
	gu_node(&g, "Resize", "by_scales", GU_IN("x", "", "scales"), "a");
	gu_node(&g, "Resize", "by_sizes", GU_IN("x", "", "none", "sizes"), "b");
	struct opgraph_node *n = gu_node(&g, "Resize", "larger", GU_IN("y", "", "", "hw"), "c");
	opgraph_node_add_ints(n, "axes", GU_DIMS(2, -1), 2);
	opgraph_node_add_string(n, "keep_aspect_ratio_policy", "not_smaller");
	n = gu_node(&g, "Resize", "smaller", GU_IN("y", "", "", "hw"), "d");
	opgraph_node_add_ints(n, "axes", GU_DIMS(2, 3), 2);
	opgraph_node_add_string(n, "keep_aspect_ratio_policy", "not_larger");
	n = gu_node(&g, "Resize", "crop", GU_IN("y", "roi", "twice"), "f");
	opgraph_node_add_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
	gu_node(&g, "Upsample", "up9", GU_IN("y", "twice"), "u9");
	n = gu_node(&g, "Upsample", "up7", GU_IN("y"), "u7");
	opgraph_node_add_floats(n, "scales", GU_F(1, 1, 3, 0.5), 4);
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "a", 4, GU_DIMS(1, 3, 14, 13)); /* floor(9 * 1.5) */
	gu_assert_dims(&g, "b", 4, GU_DIMS(1, 3, 10, 12));
	gu_assert_dims(&g, "c", 4, GU_DIMS(1, 2, 9, 12)); /* one scale: max(9/6, 9/8) */
	gu_assert_dims(&g, "d", 4, GU_DIMS(1, 2, 7, 9));  /* min: round(6 * 1.125) */
	gu_assert_dims(&g, "f", 4, GU_DIMS(1, 2, 6, 8));  /* 6 * 0.5 * 2, 8 * 0.5 * 2 */
	gu_assert_dims(&g, "u9", 4, GU_DIMS(1, 2, 12, 16));
	gu_assert_dims(&g, "u7", 4, GU_DIMS(1, 2, 18, 4));
	opgraph_free(&g);

	/* opset 10: Resize(X, scales) */
	gu_init(&g);
	g.opset = 10;
	gu_tensor(&g, 'i', "x", 3, GU_DIMS(1, 4, 5), NULL);
	gu_floats(&g, "s", 1, 3, GU_F(1, 1, 3));
	gu_node(&g, "Resize", "r10", GU_IN("x", "s"), "y");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "y", 3, GU_DIMS(1, 4, 15));
	opgraph_free(&g);

	expect_binary_error("Resize", 2, GU_DIMS(2, 3), 1, GU_DIMS(2),
			    "node 'n' (Resize): neither scales nor sizes");
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_tensor(&g, 'i', "sz", 1, GU_DIMS(2), NULL);
	gu_floats(&g, "s", 1, 3, GU_F(1, 1, 3));
	gu_node(&g, "Resize", "r", GU_IN("x", "", "", "sz"), "y");
	expect_error(&g, &plain, "node 'r' (Resize): sizes 'sz' is not a constant of 2 integers");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_floats(&g, "s", 1, 3, GU_F(1, 1, 3));
	gu_node(&g, "Resize", "r", GU_IN("x", "", "s"), "y");
	expect_error(&g, &plain, "node 'r' (Resize): scales 's' is not a constant of 2 numbers");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_floats(&g, "s", 1, 2, GU_F(1, 2));
	opgraph_node_add_string(gu_node(&g, "Resize", "r", GU_IN("x", "", "s"), "y"),
				"coordinate_transformation_mode", "tf_crop_and_resize");
	expect_error(&g, &plain, "tf_crop_and_resize without a constant roi of 4 numbers");
	opgraph_free(&g);
}

/* Pad over opset 18's axes, ConvTranspose with SAME padding or output_shape. */
static void test_pad_axes_and_deconv(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 2, 6, 8), NULL);
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(4), GU_DIMS(1, 2, 3, 4));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(2), GU_DIMS(-1, 1));
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(2, 3, 3, 3), NULL);
	gu_node(&g, "Pad", "pad", GU_IN("x", "pads", "", "axes"), "p");
	struct opgraph_node *n = gu_node(&g, "ConvTranspose", "same", GU_IN("x", "w"), "s");
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 3), 2);
	opgraph_node_add_string(n, "auto_pad", "SAME_UPPER");
	n = gu_node(&g, "ConvTranspose", "shaped", GU_IN("x", "w"), "o");
	opgraph_node_add_ints(n, "strides", GU_DIMS(2, 2), 2);
	opgraph_node_add_ints(n, "output_shape", GU_DIMS(12, 17), 2);
	n = gu_node(&g, "ConvTranspose", "valid", GU_IN("x", "w"), "v");
	opgraph_node_add_ints(n, "pads", GU_DIMS(1, 1, 1, 1), 4);
	opgraph_node_add_string(n, "auto_pad", "VALID"); /* the pads do not count */
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "p", 4, GU_DIMS(1, 8, 6, 12));
	gu_assert_dims(&g, "s", 4, GU_DIMS(1, 3, 12, 24));
	gu_assert_dims(&g, "o", 4, GU_DIMS(1, 3, 12, 17));
	gu_assert_dims(&g, "v", 4, GU_DIMS(1, 3, 8, 10));
	opgraph_free(&g);

	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(4), GU_DIMS(1, 1, 1, 1));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(2), GU_DIMS(1, -1));
	gu_node(&g, "Pad", "pad", GU_IN("x", "pads", "", "axes"), "p");
	expect_error(&g, &plain, "node 'pad' (Pad): axis 1 given twice");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(2, 3), NULL);
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(2), GU_DIMS(1, 1));
	gu_node(&g, "Pad", "pad", GU_IN("x", "pads"), "p");
	expect_error(&g, &plain, "node 'pad' (Pad): 2 pads for 2 axes");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 2, 6, 8), NULL);
	gu_tensor(&g, 'w', "w", 4, GU_DIMS(2, 3, 3, 3), NULL);
	opgraph_node_add_string(gu_node(&g, "ConvTranspose", "up", GU_IN("x", "w"), "y"),
				"auto_pad", "SOMETIMES");
	expect_error(&g, &plain, "node 'up' (ConvTranspose): unknown auto_pad 'SOMETIMES'");
	opgraph_free(&g);
}

/* TopK, Tile, DepthToSpace, SpaceToDepth, Size, GatherElements, OneHot,
 * ArgMax, ReduceL2 and LayerNormalization's extra outputs. */
static void test_more_ops(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(2, 8, 6, 4), NULL);
	gu_tensor(&g, 'i', "idx", 4, GU_DIMS(2, 8, 3, 4), NULL);
	gu_tensor(&g, 'i', "cls", 2, GU_DIMS(3, 2), NULL);
	gu_tensor(&g, 'i', "onoff", 1, GU_DIMS(2), NULL);
	gu_tensor(&g, 'c', "k", 1, GU_DIMS(1), GU_DIMS(3));
	gu_tensor(&g, 'c', "reps", 1, GU_DIMS(4), GU_DIMS(1, 2, 1, 3));
	gu_tensor(&g, 'c', "depth", 0, NULL, GU_DIMS(10));
	gu_tensor(&g, 'w', "ln_w", 2, GU_DIMS(6, 4), NULL);
	const char *topk_out[] = {"tv", "ti"}, *ln_out[] = {"ln", "mean", "inv"};
	assert_int_equal(opgraph_add_node(&g, "TopK", "topk", GU_IN("x", "k"), 2, topk_out, 2, &e),
			 0);
	opgraph_node_add_int(&g.nodes[0], "axis", 2);
	gu_node(&g, "Tile", "tile", GU_IN("x", "reps"), "tl");
	opgraph_node_add_int(gu_node(&g, "DepthToSpace", "d2s", GU_IN("x"), "d2s"), "blocksize", 2);
	opgraph_node_add_int(gu_node(&g, "SpaceToDepth", "s2d", GU_IN("x"), "s2d"), "blocksize", 2);
	gu_node(&g, "Size", "size", GU_IN("x"), "n");
	opgraph_node_add_int(gu_node(&g, "GatherElements", "ge", GU_IN("x", "idx"), "ge"), "axis",
			     2);
	opgraph_node_add_int(gu_node(&g, "OneHot", "oh", GU_IN("cls", "depth", "onoff"), "oh"),
			     "axis", 1);
	struct opgraph_node *n = gu_node(&g, "ArgMax", "am", GU_IN("x"), "am");
	opgraph_node_add_int(n, "axis", -1);
	opgraph_node_add_int(n, "keepdims", 0);
	gu_node(&g, "ArgMin", "amin", GU_IN("x"), "amin");
	opgraph_node_add_ints(gu_node(&g, "ReduceL2", "l2", GU_IN("x"), "l2"), "axes",
			      GU_DIMS(1, 3), 2);
	assert_int_equal(opgraph_add_node(&g, "LayerNormalization", "layer_norm",
					  GU_IN("x", "ln_w"), 2, ln_out, 3, &e),
			 0);
	opgraph_node_add_int(&g.nodes[g.nnodes - 1], "axis", -2);
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "tv", 4, GU_DIMS(2, 8, 3, 4));
	gu_assert_dims(&g, "ti", 4, GU_DIMS(2, 8, 3, 4));
	assert_int_equal(g.values[opgraph_value_intern(&g, "ti")].elem_type, 7);
	gu_assert_dims(&g, "tl", 4, GU_DIMS(2, 16, 6, 12));
	gu_assert_dims(&g, "d2s", 4, GU_DIMS(2, 2, 12, 8));
	gu_assert_dims(&g, "s2d", 4, GU_DIMS(2, 32, 3, 2));
	gu_assert_dims(&g, "n", 0, NULL);
	assert_int_equal(g.values[opgraph_value_intern(&g, "n")].cval[0], 2 * 8 * 6 * 4);
	gu_assert_dims(&g, "ge", 4, GU_DIMS(2, 8, 3, 4));
	gu_assert_dims(&g, "oh", 3, GU_DIMS(3, 10, 2));
	gu_assert_dims(&g, "am", 3, GU_DIMS(2, 8, 6));
	gu_assert_dims(&g, "amin", 4, GU_DIMS(1, 8, 6, 4));
	gu_assert_dims(&g, "l2", 4, GU_DIMS(2, 1, 6, 1));
	gu_assert_dims(&g, "ln", 4, GU_DIMS(2, 8, 6, 4));
	gu_assert_dims(&g, "mean", 4, GU_DIMS(2, 8, 1, 1));
	gu_assert_dims(&g, "inv", 4, GU_DIMS(2, 8, 1, 1));
	opgraph_free(&g);

	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 6, 4, 4), NULL);
	opgraph_node_add_int(gu_node(&g, "DepthToSpace", "d2s", GU_IN("x"), "y"), "blocksize", 4);
	expect_error(&g, &plain, "node 'd2s' (DepthToSpace): dims do not divide by blocksize 4");
	opgraph_free(&g);
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(4, 6), NULL);
	gu_tensor(&g, 'c', "k", 1, GU_DIMS(1), GU_DIMS(7));
	gu_node(&g, "TopK", "topk", GU_IN("x", "k"), "y");
	expect_error(&g, &plain, "node 'topk' (TopK): K is not one integer from 0 to 6");
	opgraph_free(&g);
	expect_binary_error("GatherElements", 2, GU_DIMS(4, 6), 1, GU_DIMS(4),
			    "node 'n' (GatherElements): indices of rank 1 for data of rank 2");
}

/* Einsum: explicit and implicit outputs, broadcast 1s, and its errors. */
static void test_einsum(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "q", 4, GU_DIMS(2, 4, 5, 8), NULL);
	gu_tensor(&g, 'i', "k", 4, GU_DIMS(1, 4, 6, 8), NULL);
	gu_tensor(&g, 'i', "a", 2, GU_DIMS(3, 7), NULL);
	gu_tensor(&g, 'i', "b", 2, GU_DIMS(7, 5), NULL);
	opgraph_node_add_string(gu_node(&g, "Einsum", "att", GU_IN("q", "k"), "s"), "equation",
				"bhid,bhjd->bhij");
	opgraph_node_add_string(gu_node(&g, "Einsum", "mm", GU_IN("a", "b"), "ab"), "equation",
				"ij,jk");
	opgraph_node_add_string(gu_node(&g, "Einsum", "tr", GU_IN("a"), "at"), "equation",
				"ij->ji");
	assert_int_equal(gu_infer(&g, &plain, &e), 0);
	gu_assert_dims(&g, "s", 4, GU_DIMS(2, 4, 5, 6));
	gu_assert_dims(&g, "ab", 2, GU_DIMS(3, 5)); /* i and k, once each, sorted */
	gu_assert_dims(&g, "at", 2, GU_DIMS(7, 3));
	opgraph_free(&g);
	static const struct {
		const char *eq, *msg;
	} bad[] = {
		{"ij,ik->ik", "equation 'ij,ik->ik': 'i' is 2 and 4"},
		{"...j,jk->k", "only letters are supported"},
		{"ijk,jk->ik", "operand 0 has rank 2"},
		{"ij,kj->iz", "output letter 'z' is no input's"},
		{"ij", "names 1 operands, the node has 2"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		gu_init(&g);
		gu_tensor(&g, 'i', "a", 2, GU_DIMS(2, 3), NULL);
		gu_tensor(&g, 'i', "b", 2, GU_DIMS(4, 3), NULL);
		opgraph_node_add_string(gu_node(&g, "Einsum", "n", GU_IN("a", "b"), "y"),
					"equation", bad[i].eq);
		expect_error(&g, &plain, bad[i].msg);
		opgraph_free(&g);
	}
}

/* Constants in floating point: Cast between integers and floats, Mul and
 * Sqrt on floats, Mod in both of its modes, comparisons, Constant's floats. */
static void test_float_folding(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 3, 7, 9), NULL);
	gu_tensor(&g, 'c', "zero", 1, GU_DIMS(1), GU_DIMS(0));
	gu_tensor(&g, 'c', "two", 1, GU_DIMS(1), GU_DIMS(2));
	gu_tensor(&g, 'c', "minus7", 1, GU_DIMS(2), GU_DIMS(-7, 7));
	gu_tensor(&g, 'c', "three", 0, NULL, GU_DIMS(3));
	gu_tensor(&g, 'c', "minus3", 0, NULL, GU_DIMS(-3));
	gu_floats(&g, "half", 0, 1, GU_F(2.5));
	gu_node(&g, "Shape", "shape", GU_IN("x"), "s");
	gu_node(&g, "Slice", "empty", GU_IN("s", "two", "two"), "hw0");
	gu_node(&g, "Slice", "nc", GU_IN("s", "zero", "two"), "nc"); /* 1, 3 */
	opgraph_node_add_int(gu_node(&g, "Cast", "f", GU_IN("nc"), "ncf"), "to", 1);
	gu_node(&g, "Mul", "scaled", GU_IN("ncf", "half"), "m"); /* 2.5, 7.5 */
	gu_node(&g, "Sqrt", "root", GU_IN("m"), "sq");
	opgraph_node_add_int(gu_node(&g, "Cast", "i", GU_IN("m"), "mi"), "to", 7); /* 2, 7 */
	gu_node(&g, "Mod", "py_mod", GU_IN("minus7", "three"), "pm");      /* 2, 1 */
	opgraph_node_add_int(gu_node(&g, "Mod", "c_mod", GU_IN("minus7", "minus3"), "cm"), "fmod",
			     1);
	gu_node(&g, "Less", "less", GU_IN("mi", "three"), "lt");
	gu_node(&g, "Neg", "neg", GU_IN("minus7"), "ng");
	/* -INT64_MIN is past int64: Neg and Abs of it fold to nothing */
	gu_tensor(&g, 'c', "least", 1, GU_DIMS(2), GU_DIMS(INT64_MIN, 5));
	gu_node(&g, "Neg", "neg_least", GU_IN("least"), "nl");
	gu_node(&g, "Abs", "abs_least", GU_IN("least"), "al");
	struct opgraph_node *n = gu_node(&g, "Constant", "cf", GU_IN(NULL), "cf");
	n->nin = 0;
	opgraph_node_add_floats(n, "value_floats", GU_F(0.5, 1.5), 2);
	if (gu_infer(&g, &plain, &e))
		fail_msg("%s", e.msg);
	const struct opgraph_value *v = &g.values[opgraph_value_intern(&g, "m")];
	assert_int_equal(v->nfval, 2);
	assert_true(v->fval[0] == 2.5 && v->fval[1] == 7.5);
	v = &g.values[opgraph_value_intern(&g, "sq")];
	assert_true(fabs(v->fval[1] - sqrt(7.5)) < 1e-12);
	v = &g.values[opgraph_value_intern(&g, "mi")];
	assert_true(v->ncval == 2 && v->cval[0] == 2 && v->cval[1] == 7);
	v = &g.values[opgraph_value_intern(&g, "pm")];
	assert_true(v->cval[0] == 2 && v->cval[1] == 1);
	v = &g.values[opgraph_value_intern(&g, "cm")];
	assert_true(v->cval[0] == -1 && v->cval[1] == 1);
	v = &g.values[opgraph_value_intern(&g, "lt")];
	assert_true(v->cval[0] == 1 && v->cval[1] == 0);
	v = &g.values[opgraph_value_intern(&g, "ng")];
	assert_true(v->cval[0] == 7 && v->cval[1] == -7);
	assert_int_equal(g.values[opgraph_value_intern(&g, "nl")].ncval, 0);
	assert_int_equal(g.values[opgraph_value_intern(&g, "al")].ncval, 0);
	v = &g.values[opgraph_value_intern(&g, "cf")];
	assert_true(v->ndim == 1 && v->nfval == 2 && v->fval[1] == 1.5);
	gu_assert_dims(&g, "hw0", 1, GU_DIMS(0));
	opgraph_free(&g);
}

/* Found by fuzz_onnx: a Cast without an output typed a missing value. Ops
 * whose outputs are all left out infer nothing, and do not fail. */
static void test_left_out_values(void **state)
{
	struct opgraph g;
	struct sp_err e;
	const char *in[] = {"x"}, *none[] = {""};
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	assert_int_equal(opgraph_add_node(&g, "Cast", "c0", in, 1, none, 0, &e), 0);
	opgraph_node_add_int(&g.nodes[g.nnodes - 1], "to", 1);
	assert_int_equal(opgraph_add_node(&g, "Cast", "c1", in, 1, none, 1, &e), 0);
	opgraph_node_add_int(&g.nodes[g.nnodes - 1], "to", 7);
	assert_int_equal(opgraph_add_node(&g, "Relu", "r", in, 1, none, 0, &e), 0);
	if (gu_infer(&g, &plain, &e))
		fail_msg("%s", e.msg);
	opgraph_free(&g);

	/* Also found by fuzz_onnx: constant folding read the value of an input
	 * left out (""): a Not with inputs (pads, "", axes). */
	const char *three[] = {"pads", "", "axes"}, *out[] = {"p"};
	gu_init(&g);
	gu_tensor(&g, 'c', "pads", 1, GU_DIMS(2), GU_DIMS(3, 4));
	gu_tensor(&g, 'c', "axes", 1, GU_DIMS(2), GU_DIMS(0, 1));
	assert_int_equal(opgraph_add_node(&g, "Not", "not", three, 3, out, 1, &e), 0);
	(void)gu_infer(&g, &plain, &e); /* an error or not, but no crash */
	opgraph_free(&g);
}

static void test_inputs_and_graph_errors(void **state)
{
	struct opgraph g;
	struct sp_err e;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 3, 8, 8), NULL);
	gu_node(&g, "Relu", "relu", GU_IN("x"), "y");
	struct shape_infer_override ov = {.name = "x", .ndim = 2, .dims = {5, 7}};
	struct shape_infer_opts o = {.batch = 9, .overrides = &ov, .noverrides = 1};
	assert_int_equal(gu_infer(&g, &o, &e), 0);
	gu_assert_dims(&g, "y", 2, GU_DIMS(5, 7)); /* the override wins over --batch */
	ov.name = "nope";
	expect_error(&g, &o, "--input-shape: t.onnx has no graph input 'nope'");
	opgraph_free(&g);

	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	gu_node(&g, "Add", "first", GU_IN("x", "b"), "a");
	gu_node(&g, "Relu", "second", GU_IN("a"), "b");
	expect_error(&g, &plain, "t.onnx: the graph has a cycle through node 'first' (Add)");
	opgraph_free(&g);

	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	gu_node(&g, "Add", "add", GU_IN("x", "ghost"), "a");
	expect_error(&g, &plain, "node 'add' (Add): input 'ghost' is never produced");
	opgraph_free(&g);

	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(4), NULL);
	gu_node(&g, "Frobnicate", "frob", GU_IN("x"), "a");
	expect_error(&g, &plain, "node 'frob' (Frobnicate): no shape rule for this op");
	struct shape_infer_opts allow = {.allow_unknown = 1};
	size_t order[1];
	unsigned char unknown[1];
	assert_int_equal(shape_infer(&g, &allow, order, unknown, &e), 0);
	assert_int_equal(unknown[0], 1);
	assert_false(shape_infer_knows_op("Frobnicate"));
	assert_true(shape_infer_knows_op("Conv"));
	opgraph_free(&g);

	/* Softmax and its kin along an axis the input does not have */
	static const char *const along[] = {"Softmax", "LogSoftmax", "Hardmax"};
	for (int i = 0; i < 3; i++) {
		gu_init(&g);
		gu_tensor(&g, 'i', "x", 4, GU_DIMS(1, 3, 8, 8), NULL);
		opgraph_node_add_int(gu_node(&g, along[i], "sm", GU_IN("x"), "y"), "axis", 9);
		expect_error(&g, &plain, "): axis 9 is out of range for rank 4");
		opgraph_free(&g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_conv_transpose),
		cmocka_unit_test(test_gemm_and_matmul),
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_each_elementwise_op),
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_shape_arithmetic),
		cmocka_unit_test(test_slice_split_pad_expand),
		cmocka_unit_test(test_constant_makers),
		cmocka_unit_test(test_constant_folding),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_pad_axes_and_deconv),
		cmocka_unit_test(test_more_ops),
		cmocka_unit_test(test_einsum),
		cmocka_unit_test(test_float_folding),
		cmocka_unit_test(test_left_out_values),
		cmocka_unit_test(test_inputs_and_graph_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
