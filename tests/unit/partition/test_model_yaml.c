/* YAML models (model_yaml.h) read into an opgraph: declarations, nodes
 * with every kind of attribute, repeated blocks with their substitutions
 * and shared params, and errors with their lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/model_yaml.h"
#include "partition/opgraph.h"

static void load(const char *text, struct opgraph *g)
{
	struct sp_err e;
	if (model_yaml_load_buffer(text, strlen(text), "m.yaml", g, &e))
		fail_msg("%s", e.msg);
}

static void load_fails(const char *text, const char *msg)
{
	struct opgraph g;
	struct sp_err e;
	assert_int_equal(model_yaml_load_buffer(text, strlen(text), "m.yaml", &g, &e), -1);
	assert_int_equal(g.nnodes, 0); /* nothing half-built is left */
	if (strcmp(e.msg, msg))
		fail_msg("'%s', expected '%s'", e.msg, msg);
}

static const struct opgraph_value *value(struct opgraph *g, const char *name)
{
	size_t *i = strmap_find(&g->names, name, strlen(name));
	if (!i)
		fail_msg("no value '%s'", name);
	return &g->values[*i];
}

static void test_declarations_and_attributes(void **state)
{
	struct opgraph g;
	load("opset: 13\n"
	     "inputs: {x: [N, 3, 8, 8], mask: [1]}\n"
	     "params: {w: [4, 3, 3, 3]}\n"
	     "constants: {shape: [0, -1], scale: 0.5, scales: [1, 1, 2, 2.0]}\n"
	     "nodes:\n"
	     "  - {op: Conv, inputs: [x, w, \"\"], outputs: [c],\n"
	     "     attrs: {pads: [1, 1, 1, 1], auto_pad: NOTSET, alpha: 0.25, rates: [0.5, 2]}}\n"
	     "  - {op: Reshape, name: flat, inputs: [c, shape], outputs: [y]}\n"
	     "outputs: [y]\n",
	     &g);
	assert_int_equal(g.opset, 13);
	assert_int_equal(g.nnodes, 2);
	const struct opgraph_node *n = &g.nodes[0];
	assert_string_equal(n->name, "c"); /* the first output's name */
	assert_int_equal(n->line, 6);
	assert_int_equal(n->nin, 3);
	assert_int_equal(n->in[2], OPGRAPH_NONE);
	assert_int_equal(opgraph_attr(n, "pads")->type, OPGRAPH_ATTR_INTS);
	assert_int_equal(opgraph_attr(n, "pads")->nints, 4);
	assert_string_equal(opgraph_attr(n, "auto_pad")->s, "NOTSET");
	assert_int_equal(opgraph_attr(n, "alpha")->type, OPGRAPH_ATTR_FLOAT);
	assert_true(opgraph_attr(n, "alpha")->f == 0.25);
	assert_int_equal(opgraph_attr(n, "rates")->type, OPGRAPH_ATTR_FLOATS);
	assert_true(opgraph_attr(n, "rates")->floats[1] == 2);
	const struct opgraph_value *x = value(&g, "x");
	assert_true(x->is_input && x->ndim == 4 && x->dims[0] == -1 && x->dims[3] == 8);
	const struct opgraph_value *w = value(&g, "w");
	assert_true(w->is_initializer && !w->is_input && w->ndim == 4);
	const struct opgraph_value *s = value(&g, "shape");
	assert_true(s->is_constant && !s->is_initializer && s->ncval == 2 && s->cval[1] == -1);
	assert_int_equal(s->elem_type, 7);
	const struct opgraph_value *k = value(&g, "scale");
	assert_true(k->ndim == 0 && k->nfval == 1 && k->fval[0] == 0.5);
	const struct opgraph_value *f = value(&g, "scales");
	assert_true(f->nfval == 4 && f->fval[3] == 2 && f->elem_type == 1);
	assert_true(value(&g, "y")->is_output);
	opgraph_free(&g);
}

static void test_repeated_block(void **state)
{
	struct opgraph g;
	load("inputs: {x: [2, 8]}\n"
	     "nodes:\n"
	     "  - repeat: 3\n"
	     "    input: x\n"
	     "    output: y\n"
	     "    params: {w$i: [8, 8], shared: [8]}\n"
	     "    constants: {c$i: [7], one: 1}\n"
	     "    nodes:\n"
	     "      - {op: MatMul, name: mm$i, inputs: [$in, w$i], outputs: [h$i]}\n"
	     "      - {op: Add, name: add$i, inputs: [h$i, shared], outputs: [$out]}\n",
	     &g);
	assert_int_equal(g.nnodes, 6);
	static const char *const want[][3] = {{"mm0", "x", "h0"},     {"add0", "h0", "y#0"},
					      {"mm1", "y#0", "h1"},   {"add1", "h1", "y#1"},
					      {"mm2", "y#1", "h2"},   {"add2", "h2", "y"}};
	for (size_t i = 0; i < 6; i++) {
		const struct opgraph_node *n = &g.nodes[i];
		assert_string_equal(n->name, want[i][0]);
		assert_string_equal(g.values[n->in[0]].name, want[i][1]);
		assert_string_equal(g.values[n->out[0]].name, want[i][2]);
		assert_int_equal(n->line, i % 2 ? 10 : 9);
	}
	/* one shared param and constant, three per-copy ones */
	assert_true(value(&g, "shared")->is_initializer);
	assert_true(value(&g, "w2")->is_initializer);
	assert_int_equal(value(&g, "c2")->cval[0], 7);
	assert_true(value(&g, "one")->is_constant);
	assert_int_equal(g.nvalues, 1 + 3 + 1 + 3 + 1 + 3 + 3); /* x w shared c one h y */
	opgraph_free(&g);
}

static void test_errors(void **state)
{
	load_fails("nodes: [", "m.yaml:2: syntax error: did not find expected node content");
	load_fails("inputs: {x: [1]}\n", "m.yaml:1: missing key 'nodes'");
	load_fails("nodes:\n  - {op: Relu, outputs: [y]}\n  - {op: Relu, outputs: [y]}\n",
		   "m.yaml:3: node 'y': output 'y' is already produced by node 'y' (line 2)");
	load_fails("nodes:\n  - {op: 3, outputs: [y], extra: 1}\n",
		   "m.yaml:2: unknown key 'extra' in a node (expected op, name, inputs, outputs, "
		   "attrs)");
	load_fails("nodes:\n  - {op: Relu, outputs: [a$b]}\n",
		   "m.yaml:2: 'a$b': unknown placeholder '$b' (expected $i, $in or $out)");
	load_fails("nodes:\n  - repeat: 2\n    nodes:\n      - {op: Relu, outputs: [$out]}\n",
		   "m.yaml:4: '$out': $out outside a repeated block with that key");
	load_fails("nodes:\n  - repeat: 3000000\n    nodes: [{op: Relu, outputs: [y$i]}]\n",
		   "m.yaml:2: repeat: 3000000 copies of 1 nodes: expected 1 or more, at most "
		   "2000000 nodes in the model");
	load_fails("params: {w: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\nnodes: []\n",
		   "m.yaml:1: 'w': 9 dims, more than 8");
	load_fails("nodes:\n  - {op: Relu, outputs: [y], attrs: {k: {a: 1}}}\n",
		   "m.yaml:2: attribute 'k': expected a number, a string or a list of at most 64 "
		   "numbers");
	load_fails("nodes:\n  - {op: ConstantOfShape, outputs: [y], attrs: {value: [1, 2]}}\n",
		   "m.yaml:2: ConstantOfShape's value: expected one number");
	char longname[400];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	char text[600];
	snprintf(text, sizeof text, "nodes:\n  - {op: Relu, outputs: [%s]}\n", longname);
	struct opgraph g;
	struct sp_err e;
	assert_int_equal(model_yaml_load_buffer(text, strlen(text), "m.yaml", &g, &e), -1);
	assert_non_null(strstr(e.msg, "name longer than 255 bytes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_declarations_and_attributes),
		cmocka_unit_test(test_repeated_block),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
