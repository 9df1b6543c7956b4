/* The peak activation memory of small graphs whose peaks are counted by
 * hand: a view sharing its input's memory, and graph inputs and outputs
 * held throughout. fp32: 4 bytes an element. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "graphutil.h"
#include "partition/activation.h"

static int64_t peak_of(struct opgraph *g)
{
	struct partition_options o = {.dtype = HARDWARE_FP32};
	struct partition_report r = {.g = *g};
	struct sp_err e;
	int64_t bytes = -1;
	hardware_default(&o.hw);
	assert_int_equal(partition_analyse(&r, &o, &e), 0);
	assert_int_equal(activation_peak(&r, &bytes, &e), 0);
	partition_free(&r);
	return bytes;
}

static void mark_output(struct opgraph *g, const char *name)
{
	g->values[opgraph_value_intern(g, name)].is_output = 1;
}

/* x -> a = Relu -> v = Flatten (a view of a) -> b = Relu -> y = Sum(b, a, v).
 * While Sum runs: x, a, b and y, 4 x 4000 bytes; were the view a copy of
 * its own, v too. */
static void test_view_is_no_copy(void **state)
{
	struct opgraph g;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(1, 1000), NULL);
	gu_node(&g, "Relu", "relu_a", GU_IN("x"), "a");
	gu_node(&g, "Flatten", "flatten", GU_IN("a"), "v");
	gu_node(&g, "Relu", "relu_b", GU_IN("v"), "b");
	gu_node(&g, "Sum", "sum", GU_IN("b", "a", "v"), "y");
	mark_output(&g, "y");
	assert_int_equal(peak_of(&g), 4 * 4000);
}

/* x -> a = Relu -> v = Flatten; b = Relu(x); y = Add(b, v): a is read
 * through v by the Add, so it lives until then: x, a, b and y. Freed when
 * Flatten read it, the peak would be 3 tensors. */
static void test_view_keeps_input(void **state)
{
	struct opgraph g;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(1, 1000), NULL);
	gu_node(&g, "Relu", "relu_a", GU_IN("x"), "a");
	gu_node(&g, "Flatten", "flatten", GU_IN("a"), "v");
	gu_node(&g, "Relu", "relu_b", GU_IN("x"), "b");
	gu_node(&g, "Add", "add", GU_IN("b", "v"), "y");
	mark_output(&g, "y");
	assert_int_equal(peak_of(&g), 4 * 4000);
}

/* x -> p = Relu (a graph output no op reads) and x -> q = Relu -> r = Relu
 * (the output): p stays held, so while r runs x, p, q and r are live. */
static void test_outputs_held(void **state)
{
	struct opgraph g;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 1, GU_DIMS(1000), NULL);
	gu_node(&g, "Relu", "p", GU_IN("x"), "p");
	gu_node(&g, "Relu", "q", GU_IN("x"), "q");
	gu_node(&g, "Relu", "r", GU_IN("q"), "r");
	mark_output(&g, "p");
	mark_output(&g, "r");
	assert_int_equal(peak_of(&g), 4 * 4000);
}

/* A chain frees each tensor after its reader: never more than the input
 * and two activations; parameters are not activations. */
static void test_chain_frees(void **state)
{
	struct opgraph g;
	gu_init(&g);
	gu_tensor(&g, 'i', "x", 2, GU_DIMS(1, 1000), NULL);
	gu_tensor(&g, 'w', "w", 2, GU_DIMS(1000, 1000), NULL);
	gu_node(&g, "MatMul", "mm", GU_IN("x", "w"), "h1");
	gu_node(&g, "Relu", "r1", GU_IN("h1"), "h2");
	gu_node(&g, "Relu", "r2", GU_IN("h2"), "h3");
	gu_node(&g, "Relu", "r3", GU_IN("h3"), "y");
	mark_output(&g, "y");
	assert_int_equal(peak_of(&g), 3 * 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_is_no_copy),
		cmocka_unit_test(test_view_keeps_input),
		cmocka_unit_test(test_outputs_held),
		cmocka_unit_test(test_chain_frees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
