#include "partition/onnx_model.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/half.h"
#include "onnx/onnx.pb-c.h"
#include "partition/onnx_wire.h"

static int oom(struct sp_err *err, const struct opgraph *g)
{
	return sp_fail(err, "%s: out of memory", g->path ? g->path : "model");
}


/* The contents of a small tensor with its data in the file (n elements):
 * integers into ints or floating point into floats; 0 when there are none
 * (a stripped initializer, another type), 1 ints, 2 floats. Raw data is
 * little-endian, as on the hosts this runs on. */
static int tensor_data(const Onnx__TensorProto *t, size_t n, int64_t *ints, double *floats)
{
	union {
		int64_t i64[OPGRAPH_CONST_MAX];
		int32_t i32[OPGRAPH_CONST_MAX];
		float f32[OPGRAPH_CONST_MAX];
		double f64[OPGRAPH_CONST_MAX];
		uint16_t f16[OPGRAPH_CONST_MAX];
	} u;
	const void *typed = NULL; /* the typed field, when it holds the n elements */
	size_t size;
#define TYPED(field) (t->n_##field == n ? (const void *)t->field : NULL)
	switch (t->data_type) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: size = 8, typed = TYPED(int64_data); break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: size = 4, typed = TYPED(int32_data); break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: size = 4, typed = TYPED(float_data); break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: size = 8, typed = TYPED(double_data); break;
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: /* typed: the bits in int32_data */
		size = 2;
		for (size_t i = 0; t->n_int32_data == n && i < n; i++)
			u.f16[i] = (uint16_t)t->int32_data[i];
		break;
	default: return 0;
	}
#undef TYPED
	if (typed)
		memcpy(&u, typed, n * size);
	else if (t->has_raw_data && t->raw_data.len == n * size)
		memcpy(&u, t->raw_data.data, n * size);
	else if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 || t->n_int32_data != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		switch (t->data_type) {
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: ints[i] = u.i64[i]; break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: ints[i] = u.i32[i]; break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: floats[i] = u.f32[i]; break;
		case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: floats[i] = u.f64[i]; break;
		default: floats[i] = half_to_float(u.f16[i]);
		}
	return t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
			       t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32
		       ? 1
		       : 2;
}

/* Dims and, for small tensors with data, the values. */
static int load_tensor(struct opgraph *g, const Onnx__TensorProto *t, const char *name,
		       int is_initializer, size_t *index, struct sp_err *err)
{
	if (t->n_dims > OPGRAPH_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %zu dims, more than %d", g->path, name,
			       t->n_dims, OPGRAPH_MAX_DIMS);
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] < 0)
			return sp_fail(err, "%s: tensor '%s' has a negative dim %lld", g->path, name,
				       (long long)t->dims[d]);
	if (opgraph_set_value(g, name, (int)t->n_dims, t->dims, is_initializer, err))
		return -1;
	*index = opgraph_value_intern(g, name);
	struct opgraph_value *v = &g->values[*index];
	v->elem_type = t->data_type;
	int64_t n = opgraph_value_numel(v), ints[OPGRAPH_CONST_MAX];
	double floats[OPGRAPH_CONST_MAX];
	if (n == 0 || n > OPGRAPH_CONST_MAX)
		return 0;
	int kind = tensor_data(t, (size_t)n, ints, floats);
	int rc = kind ? opgraph_value_set_contents(v, ints, kind == 2 ? floats : NULL, (size_t)n)
		      : 0;
	return rc ? oom(err, g) : 0;
}

static int load_value_info(struct opgraph *g, const Onnx__ValueInfoProto *vi, size_t *index,
			   struct sp_err *err)
{
	if (!vi->name || !vi->name[0])
		return sp_fail(err, "%s: a graph input, output or value_info has no name", g->path);
	*index = opgraph_value_intern(g, vi->name);
	if (*index == OPGRAPH_NONE)
		return oom(err, g);
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return 0;
	struct opgraph_value *v = &g->values[*index];
	v->elem_type = tp->tensor_type->elem_type;
	const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
	if (!sh)
		return 0;
	if (sh->n_dim > OPGRAPH_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %zu dims, more than %d", g->path, vi->name,
			       sh->n_dim, OPGRAPH_MAX_DIMS);
	int64_t dims[OPGRAPH_MAX_DIMS];
	for (size_t d = 0; d < sh->n_dim; d++) {
		const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
		dims[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
				  ? dim->dim_value
				  : -1;
		if (dims[d] < -1 || (dims[d] < 0 &&
				     dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE))
			return sp_fail(err, "%s: tensor '%s' has a negative dim %lld", g->path,
				       vi->name, (long long)dims[d]);
	}
	return opgraph_set_value(g, vi->name, (int)sh->n_dim, dims, 0, err);
}

/* A call of a model-local function being inlined (ONNX's FunctionProto):
 * the calling node, whose inputs and outputs the function's formal ones
 * stand for and whose attributes its attribute references read; the call
 * that encloses it, or NULL at the graph. */
struct call {
	const Onnx__NodeProto *node;
	const char *prefix; /* "caller/": the function's own values and nodes are renamed under it */
	const Onnx__FunctionProto *fn;
	const struct call *outer;
	int depth;
};

/* The attribute a function's node reads through ref_attr_name: the caller's
 * attribute called name, followed outwards while it is a reference itself;
 * NULL when the caller leaves it unset (the op's default then applies). */
static const Onnx__AttributeProto *resolve_attr(const struct call *c, const char *name)
{
	for (; c; c = c->outer) {
		const Onnx__AttributeProto *found = NULL;
		for (size_t k = 0; k < c->node->n_attribute && !found; k++)
			if (c->node->attribute[k]->name && !strcmp(c->node->attribute[k]->name, name))
				found = c->node->attribute[k];
		if (!found || !found->ref_attr_name || !found->ref_attr_name[0])
			return found;
		name = found->ref_attr_name;
	}
	return NULL;
}

static int load_attrs(struct opgraph *g, struct opgraph_node *n, const Onnx__NodeProto *np,
		      const struct call *call, struct sp_err *err)
{
	for (size_t k = 0; k < np->n_attribute; k++) {
		const Onnx__AttributeProto *ap = np->attribute[k];
		const char *an = ap->name ? ap->name : "";
		if (ap->ref_attr_name && ap->ref_attr_name[0] &&
		    !(ap = resolve_attr(call, ap->ref_attr_name)))
			continue;
		int rc = 0;
		struct opgraph_attr *a;
		switch (ap->type) {
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
			rc = opgraph_node_add_int(n, an, ap->i);
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
			rc = opgraph_node_add_ints(n, an, ap->ints, ap->n_ints);
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
			rc = opgraph_node_add_float(n, an, ap->f);
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
			double *v = malloc((ap->n_floats ? ap->n_floats : 1) * sizeof *v);
			for (size_t i = 0; v && i < ap->n_floats; i++)
				v[i] = ap->floats[i];
			rc = !v || opgraph_node_add_floats(n, an, v, ap->n_floats);
			free(v);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
			char *s = ap->s.len ? strndup((const char *)ap->s.data, ap->s.len) : strdup("");
			rc = !s || opgraph_node_add_string(n, an, s);
			free(s);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
			if (!ap->t)
				break;
			/* A Constant's tensor is the value of its output. */
			const char *vname = n->nout && n->out[0] != OPGRAPH_NONE
						    ? g->values[n->out[0]].name
						    : NULL;
			if (!vname || !(a = opgraph_node_add_tensor(n, an)))
				break;
			if (load_tensor(g, ap->t, vname, 0, &a->tensor, err))
				return -1;
			break;
		}
		default: break; /* graphs, strings: not needed for shapes */
		}
		if (rc)
			return oom(err, g);
	}
	return 0;
}

static int same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* The model-local function a node calls, or NULL for an operator. */
static const Onnx__FunctionProto *called_function(const Onnx__ModelProto *m,
						  const Onnx__NodeProto *np)
{
	for (size_t i = 0; i < m->n_functions; i++)
		if (same(m->functions[i]->name, np->op_type) &&
		    same(m->functions[i]->domain, np->domain))
			return m->functions[i];
	return NULL;
}

/* A value name inside the call c, as the graph knows it: a formal input or
 * output is the caller's actual one (empty when the caller leaves an
 * optional one out), itself a name inside the call enclosing c; any other
 * name is the function's own, under c's prefix (built in b). NULL when out
 * of memory. */
static const char *actual_name(const struct call *c, const char *name, struct buf *b)
{
	b->len = 0;
	if (c && name[0]) {
		for (size_t i = 0; i < c->fn->n_input; i++)
			if (same(c->fn->input[i], name))
				return i < c->node->n_input ? actual_name(c->outer, c->node->input[i], b)
							    : "";
		for (size_t i = 0; i < c->fn->n_output; i++)
			if (same(c->fn->output[i], name))
				return i < c->node->n_output
					       ? actual_name(c->outer, c->node->output[i], b)
					       : "";
		if (buf_add(b, c->prefix, strlen(c->prefix)))
			return NULL;
	}
	return buf_add(b, name, strlen(name) + 1) ? NULL : b->data;
}

/* The names of count values inside c, each copied into names (count
 * entries, NULL before); -1 when out of memory, the copies made so far left
 * for the caller to free. */
static int actual_names(const struct call *c, char *const *formal, size_t count, char **names)
{
	struct buf b = {0};
	size_t i = 0;
	for (; i < count; i++) {
		const char *a = actual_name(c, formal[i], &b);
		if (!a || !(names[i] = strdup(a)))
			break;
	}
	buf_free(&b);
	return i == count ? 0 : -1;
}

/* Deeper calls than this are a function calling itself (ONNX forbids it);
 * more nodes than this from inlining are a file built to explode (each
 * function calling the next many times), refused before memory runs out. */
enum { MAX_CALL_DEPTH = 16, MAX_INLINED_NODES = 1 << 20 };

static int add_node(struct opgraph *g, const Onnx__ModelProto *m, const Onnx__NodeProto *np,
		    const char *name, const struct call *call, struct sp_err *err);

/* The nodes of the graph (call NULL) or of a function's body, functions
 * inlined: a node that calls a model-local function is replaced by the
 * function's nodes, named "caller/node" (nested calls "outer/inner/node"),
 * so the analysis sees the operators that run. */
static int add_nodes(struct opgraph *g, const Onnx__ModelProto *m, Onnx__NodeProto *const *nodes,
		     size_t count, const struct call *call, struct sp_err *err)
{
	struct buf name = {0};
	int rc = 0;
	for (size_t i = 0; i < count && !rc; i++) {
		const Onnx__NodeProto *np = nodes[i];
		char fallback[32];
		snprintf(fallback, sizeof fallback, "node%zu", i);
		const char *own = np->name && np->name[0] ? np->name : fallback;
		name.len = 0;
		if ((call && buf_add(&name, call->prefix, strlen(call->prefix))) ||
		    buf_add(&name, own, strlen(own) + 1))
			rc = oom(err, g);
		else
			rc = add_node(g, m, np, name.data, call, err);
	}
	buf_free(&name);
	return rc;
}

static int add_node(struct opgraph *g, const Onnx__ModelProto *m, const Onnx__NodeProto *np,
		    const char *name, const struct call *call, struct sp_err *err)
{
	if (!np->op_type || !np->op_type[0])
		return sp_fail(err, "%s: node '%s' has no op_type", g->path, name);
	for (size_t k = 0; k < np->n_input; k++)
		if (!np->input[k])
			return sp_fail(err, "%s: node '%s': input %zu has no name", g->path, name, k);
	if (call && g->nnodes >= MAX_INLINED_NODES)
		return sp_fail(err, "%s: node '%s': model-local functions expand to more than %d "
				    "nodes", g->path, name, MAX_INLINED_NODES);
	const Onnx__FunctionProto *fn = called_function(m, np);
	if (fn) {
		if (call && call->depth >= MAX_CALL_DEPTH)
			return sp_fail(err, "%s: node '%s': function '%s' nested more than %d deep "
					    "(a function calling itself)", g->path, name, np->op_type,
				       MAX_CALL_DEPTH);
		char *prefix = malloc(strlen(name) + 2);
		if (!prefix)
			return oom(err, g);
		sprintf(prefix, "%s/", name);
		struct call inner = {np, prefix, fn, call, call ? call->depth + 1 : 1};
		int rc = add_nodes(g, m, fn->node, fn->n_node, &inner, err);
		free(prefix);
		return rc;
	}
	size_t nio = np->n_input + np->n_output;
	char **io = calloc(nio ? nio : 1, sizeof *io);
	int rc;
	if (!io || actual_names(call, np->input, np->n_input, io) ||
	    actual_names(call, np->output, np->n_output, io + np->n_input))
		rc = oom(err, g);
	else
		rc = opgraph_add_node(g, np->op_type, name, (const char *const *)io, np->n_input,
				      (const char *const *)(io + np->n_input), np->n_output, err) ||
			     load_attrs(g, &g->nodes[g->nnodes - 1], np, call, err)
			     ? -1
			     : 0;
	for (size_t k = 0; io && k < nio; k++)
		free(io[k]);
	free(io);
	return rc;
}

static int convert(struct opgraph *g, const Onnx__ModelProto *m, struct sp_err *err)
{
	const Onnx__GraphProto *gp = m->graph;
	if (!gp)
		return sp_fail(err, "%s: not an ONNX model: no graph", g->path);
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[i];
		if (!os->domain || !os->domain[0] || !strcmp(os->domain, "ai.onnx"))
			g->opset = os->version;
	}
	if (g->opset && (g->opset < OPGRAPH_OPSET_MIN || g->opset > OPGRAPH_OPSET_MAX))
		return sp_fail(err, "%s: opset %lld: graph-partition reads ONNX opsets %d to %d",
			       g->path, (long long)g->opset, OPGRAPH_OPSET_MIN, OPGRAPH_OPSET_MAX);
	size_t idx;
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *t = gp->initializer[i];
		if (!t->name || !t->name[0])
			return sp_fail(err, "%s: initializer %zu has no name", g->path, i);
		if (load_tensor(g, t, t->name, 1, &idx, err))
			return -1;
	}
	for (size_t i = 0; i < gp->n_input; i++) {
		if (load_value_info(g, gp->input[i], &idx, err))
			return -1;
		g->values[idx].is_input = !g->values[idx].is_initializer;
	}
	for (size_t i = 0; i < gp->n_value_info; i++)
		if (load_value_info(g, gp->value_info[i], &idx, err))
			return -1;
	for (size_t i = 0; i < gp->n_output; i++) {
		if (load_value_info(g, gp->output[i], &idx, err))
			return -1;
		g->values[idx].is_output = 1;
	}
	return add_nodes(g, m, gp->node, gp->n_node, NULL, err);
}

/* protobuf-c's allocations while decoding, carved from large blocks that
 * are freed together: a 100,000-node model makes a million small ones. */
struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(void *arena, size_t size)
{
	struct arena_block **head = arena, *b = *head;
	size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!b || b->cap - b->used < size) {
		size_t cap = size > (1 << 20) ? size : 1 << 20;
		if (!(b = malloc(sizeof *b + cap)))
			return NULL;
		b->next = *head;
		b->used = 0;
		b->cap = cap;
		*head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

static void arena_free_one(void *arena, void *p)
{
	(void)arena; /* freed with the whole arena */
	(void)p;
}

/* Decode a slimmed model (onnx_wire.h) into g. */
static int decode(const struct buf *wire, const struct onnx_wire_stats *st, const char *name,
		  struct opgraph *g, struct sp_err *err)
{
	g->path = strdup(name);
	if (!g->path)
		return sp_fail(err, "%s: out of memory", name);
	g->dropped_bytes = st->dropped_bytes;
	struct arena_block *arena = NULL;
	ProtobufCAllocator alloc = {arena_alloc, arena_free_one, &arena};
	Onnx__ModelProto *m =
		onnx__model_proto__unpack(&alloc, wire->len, (const uint8_t *)wire->data);
	int rc = m ? convert(g, m, err)
		   : sp_fail(err, "%s: not an ONNX model (protobuf decoding failed: truncated or "
				  "another format)", name);
	while (arena) {
		struct arena_block *next = arena->next;
		free(arena);
		arena = next;
	}
	if (rc)
		opgraph_free(g);
	return rc;
}

int onnx_model_load_mem(const void *data, size_t size, const char *name, struct opgraph *g,
			struct sp_err *err)
{
	struct buf wire = {0};
	struct onnx_wire_stats st;
	memset(g, 0, sizeof *g);
	int rc = onnx_wire_slim_mem(data, size, name, &wire, &st, err) ||
		 decode(&wire, &st, name, g, err);
	buf_free(&wire);
	return rc ? -1 : 0;
}

int onnx_model_load(const char *path, struct opgraph *g, struct sp_err *err)
{
	struct buf wire = {0};
	struct onnx_wire_stats st;
	memset(g, 0, sizeof *g);
	int rc = onnx_wire_slim_file(path, &wire, &st, err) || decode(&wire, &st, path, g, err);
	buf_free(&wire);
	return rc ? -1 : 0;
}
