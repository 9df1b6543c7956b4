/* The slimming pass before decoding: large tensor data is left out
 * wherever it sits (initializers, a Constant's attribute, a subgraph),
 * small shape constants stay, and broken wire formats fail with the offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "partition/onnx_model.h"
#include "partition/onnx_wire.h"
#include "testutil.h"

enum { BIG = 100000 };

static void init_tensor(Onnx__TensorProto *t, char *name, int64_t *dims, size_t ndims,
			uint8_t *data, size_t len, int type)
{
	onnx__tensor_proto__init(t);
	t->name = name;
	t->dims = dims;
	t->n_dims = ndims;
	t->data_type = type;
	t->has_data_type = 1;
	t->raw_data.data = data;
	t->raw_data.len = len;
	t->has_raw_data = 1;
}

static void init_node(Onnx__NodeProto *n, char *op, char *name, char **in, size_t nin,
		      char **out)
{
	onnx__node_proto__init(n);
	n->op_type = op;
	n->name = name;
	n->input = in;
	n->n_input = nin;
	n->output = out;
	n->n_output = 1;
}

/* A model: y = Reshape(x @ w, shape) where w holds BIG bytes of data, shape
 * two int64s, and a Constant node carries BIG bytes in its attribute. */
static uint8_t *pack_model(size_t *size)
{
	static uint8_t weights[BIG], constant[BIG];
	static int64_t wdims[] = {BIG / 4}, sdims[] = {2}, cdims[] = {BIG / 4},
		       shape[] = {1, -1};
	Onnx__TensorProto w, s, c;
	init_tensor(&w, "w", wdims, 1, weights, sizeof weights, 1);
	init_tensor(&s, "shape", sdims, 1, (uint8_t *)shape, sizeof shape, 7);
	init_tensor(&c, "c", cdims, 1, constant, sizeof constant, 1);
	Onnx__AttributeProto attr;
	onnx__attribute_proto__init(&attr);
	attr.name = "value";
	attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	attr.has_type = 1;
	attr.t = &c;
	Onnx__AttributeProto *attrs[] = {&attr};
	char *const_out[] = {"cv"}, *mm_in[] = {"x", "w"}, *mm_out[] = {"xw"},
	     *rs_in[] = {"xw", "shape"}, *rs_out[] = {"y"};
	Onnx__NodeProto nodes[3];
	init_node(&nodes[0], "Constant", "const", NULL, 0, const_out);
	nodes[0].attribute = attrs;
	nodes[0].n_attribute = 1;
	init_node(&nodes[1], "MatMul", "mm", mm_in, 2, mm_out);
	init_node(&nodes[2], "Reshape", "rs", rs_in, 2, rs_out);
	Onnx__NodeProto *np[] = {&nodes[0], &nodes[1], &nodes[2]};
	Onnx__TensorProto *inits[] = {&w, &s};
	Onnx__GraphProto g;
	onnx__graph_proto__init(&g);
	g.name = "g";
	g.node = np;
	g.n_node = 3;
	g.initializer = inits;
	g.n_initializer = 2;
	Onnx__OperatorSetIdProto os;
	onnx__operator_set_id_proto__init(&os);
	os.domain = "";
	os.version = 17;
	os.has_version = 1;
	Onnx__OperatorSetIdProto *osp[] = {&os};
	Onnx__ModelProto m;
	onnx__model_proto__init(&m);
	m.graph = &g;
	m.opset_import = osp;
	m.n_opset_import = 1;
	*size = onnx__model_proto__get_packed_size(&m);
	uint8_t *out = malloc(*size);
	assert_non_null(out);
	onnx__model_proto__pack(&m, out);
	return out;
}

static void test_large_data_dropped_small_kept(void **state)
{
	size_t size;
	uint8_t *wire = pack_model(&size);
	assert_true(size > 2 * BIG);
	struct buf out = {0};
	struct onnx_wire_stats st;
	struct sp_err e;
	assert_int_equal(onnx_wire_slim_mem(wire, size, "m.onnx", &out, &st, &e), 0);
	assert_int_equal(st.dropped_fields, 2);
	assert_int_equal(st.dropped_bytes, 2 * BIG);
	assert_true(out.len < 1000);
	buf_free(&out);
	/* what loads: dims of w, the shape constant's values */
	struct opgraph g;
	assert_int_equal(onnx_model_load_mem(wire, size, "m.onnx", &g, &e), 0);
	const struct opgraph_value *w = &g.values[opgraph_value_intern(&g, "w")];
	assert_int_equal(w->ndim, 1);
	assert_int_equal(w->dims[0], BIG / 4);
	assert_null(w->fval);
	const struct opgraph_value *s = &g.values[opgraph_value_intern(&g, "shape")];
	assert_int_equal(s->ncval, 2);
	assert_int_equal(s->cval[0], 1);
	assert_int_equal(s->cval[1], -1);
	assert_int_equal(g.dropped_bytes, 2 * BIG);
	assert_int_equal(g.nnodes, 3);
	opgraph_free(&g);
	free(wire);
}

static void test_file_and_memory_agree(void **state)
{
	size_t size;
	uint8_t *wire = pack_model(&size);
	const char *path = test_path("m.onnx");
	test_spit(path, wire, size);
	struct buf a = {0}, b = {0};
	struct onnx_wire_stats sa, sb;
	struct sp_err e;
	assert_int_equal(onnx_wire_slim_mem(wire, size, "m", &a, &sa, &e), 0);
	assert_int_equal(onnx_wire_slim_file(path, &b, &sb, &e), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	assert_int_equal(sa.dropped_bytes, sb.dropped_bytes);
	/* cut anywhere, the file is truncated: an error with an offset */
	test_spit(path, wire, size - 7);
	assert_int_equal(onnx_wire_slim_file(path, &b, &sb, &e), -1);
	assert_non_null(strstr(e.msg, "not an ONNX model: truncated or another format (at byte"));
	buf_free(&a);
	buf_free(&b);
	free(wire);
}

static void test_bad_wire(void **state)
{
	struct buf out = {0};
	struct onnx_wire_stats st;
	struct sp_err e;
	static const uint8_t group[] = {0x0b}, field0[] = {0x00, 0x01},
			     overlong[] = {0x3a, 0x05, 0x0a}, /* graph of 5 bytes, 1 there */
		endless[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	assert_int_equal(onnx_wire_slim_mem(group, sizeof group, "g.onnx", &out, &st, &e), -1);
	assert_string_equal(e.msg, "g.onnx: not an ONNX model: truncated or another format (at byte 0)");
	assert_int_equal(onnx_wire_slim_mem(field0, sizeof field0, "z", &out, &st, &e), -1);
	assert_int_equal(onnx_wire_slim_mem(overlong, sizeof overlong, "o", &out, &st, &e), -1);
	assert_int_equal(onnx_wire_slim_mem(endless, sizeof endless, "v", &out, &st, &e), -1);
	/* model.graph > node > attribute > g > node > ...: each a one-byte
	 * length with the rest nested, built from the inside out */
	static const uint8_t keys[] = {0x0a, 0x2a, 0x32}; /* node, attribute, g */
	uint8_t body[2 * (ONNX_WIRE_MAX_DEPTH + 4)];
	size_t blen = 0, levels = ONNX_WIRE_MAX_DEPTH + 3;
	for (size_t i = 0; i < levels; i++) {
		memmove(body + 2, body, blen);
		body[0] = i + 1 == levels ? 0x3a : keys[(levels - 2 - i) % 3];
		body[1] = (uint8_t)blen;
		blen += 2;
	}
	assert_int_equal(onnx_wire_slim_mem(body, blen, "d.onnx", &out, &st, &e), -1);
	assert_non_null(strstr(e.msg, "d.onnx: messages nested deeper than"));
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_data_dropped_small_kept),
		cmocka_unit_test(test_file_and_memory_agree),
		cmocka_unit_test(test_bad_wire),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
