#include "partition/onnx_model.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/half.h"
#include "onnx/onnx.pb-c.h"
#include "partition/onnx_wire.h"

static int oom(struct sp_err *err, const struct om_graph *g)
{
	return sp_fail(err, "%s: out of memory", g->path ? g->path : "model");
}

size_t om_value_intern(struct om_graph *g, const char *name)
{
	int added;
	size_t len = strlen(name), *slot = strmap_insert(&g->names, name, len, &added);
	if (!slot)
		return OM_NONE;
	if (!added)
		return *slot; /* the values do not move: callers may hold pointers into them */
	/* out of memory from here on, the name maps to no value: the caller
	 * fails and the graph is only freed */
	struct om_value *v = buf_grow_array(g->values, &g->values_cap, g->nvalues + 1, sizeof *v);
	if (!v)
		return OM_NONE;
	g->values = v;
	v = &g->values[g->nvalues];
	memset(v, 0, sizeof *v);
	v->ndim = -1;
	v->producer = OM_NONE;
	*slot = g->nvalues++;
	v->name = malloc(len + 1);
	if (!v->name)
		return OM_NONE;
	memcpy(v->name, name, len + 1);
	return *slot;
}

static struct om_attr *attr_new(struct om_node *n, const char *name, enum om_attr_type type)
{
	struct om_attr *a = realloc(n->attrs, (n->nattrs + 1) * sizeof *a);
	if (!a)
		return NULL;
	n->attrs = a;
	a = &a[n->nattrs];
	memset(a, 0, sizeof *a);
	a->name = strdup(name);
	if (!a->name)
		return NULL;
	a->type = type;
	a->tensor = OM_NONE;
	n->nattrs++;
	return a;
}

int om_node_add_int(struct om_node *n, const char *name, int64_t v)
{
	struct om_attr *a = attr_new(n, name, OM_ATTR_INT);
	return a ? (a->i = v, 0) : -1;
}

int om_node_add_float(struct om_node *n, const char *name, double v)
{
	struct om_attr *a = attr_new(n, name, OM_ATTR_FLOAT);
	return a ? (a->f = v, 0) : -1;
}

/* A list attribute: count elements of size bytes copied from v (NULL when 0). */
static void *add_list(struct om_node *n, const char *name, enum om_attr_type type, const void *v,
		      size_t count, size_t size)
{
	struct om_attr *a = attr_new(n, name, type);
	void *copy = a ? malloc((count ? count : 1) * size) : NULL;
	if (!copy)
		return NULL;
	if (count)
		memcpy(copy, v, count * size);
	a->nints = count;
	return type == OM_ATTR_INTS ? (void *)(a->ints = copy) : (void *)(a->floats = copy);
}

int om_node_add_ints(struct om_node *n, const char *name, const int64_t *v, size_t count)
{
	return add_list(n, name, OM_ATTR_INTS, v, count, sizeof *v) ? 0 : -1;
}

int om_node_add_floats(struct om_node *n, const char *name, const double *v, size_t count)
{
	return add_list(n, name, OM_ATTR_FLOATS, v, count, sizeof *v) ? 0 : -1;
}

int om_node_add_string(struct om_node *n, const char *name, const char *s)
{
	struct om_attr *a = attr_new(n, name, OM_ATTR_STRING);
	return a && (a->s = strdup(s)) ? 0 : -1;
}

static int add_names(struct om_graph *g, const char *const *names, size_t count, size_t **out)
{
	*out = malloc((count ? count : 1) * sizeof **out);
	if (!*out)
		return -1;
	for (size_t i = 0; i < count; i++) {
		(*out)[i] = names[i][0] ? om_value_intern(g, names[i]) : OM_NONE;
		if (names[i][0] && (*out)[i] == OM_NONE)
			return -1;
	}
	return 0;
}

/* The graph's one copy of an op type's name (nodes share it), and its index. */
static const char *intern_op(struct om_graph *g, const char *op, size_t *id)
{
	int added;
	size_t *slot = strmap_insert(&g->op_index, op, strlen(op), &added);
	if (!slot)
		return NULL;
	*id = *slot;
	if (!added)
		return g->op_types[*slot];
	char **grown = buf_grow_array(g->op_types, &g->op_types_cap, g->nop_types + 1,
				      sizeof *grown);
	char *copy = strdup(op);
	if (!grown || !copy) {
		free(copy);
		g->op_types = grown ? grown : g->op_types;
		return NULL; /* the map holds a slot pointing nowhere: the graph is freed next */
	}
	g->op_types = grown;
	*id = *slot = g->nop_types;
	g->op_types[g->nop_types++] = copy;
	return copy;
}

int om_add_node(struct om_graph *g, const char *op, const char *name, const char *const *in,
		size_t nin, const char *const *out, size_t nout, struct sp_err *err)
{
	struct om_node *nodes = buf_grow_array(g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof *nodes);
	if (!nodes)
		return oom(err, g);
	g->nodes = nodes;
	struct om_node *n = &nodes[g->nnodes++];
	memset(n, 0, sizeof *n);
	n->op = intern_op(g, op, &n->op_id);
	n->name = strdup(name);
	n->nin = nin;
	n->nout = nout;
	if (!n->op || !n->name || add_names(g, in, nin, &n->in) || add_names(g, out, nout, &n->out))
		return oom(err, g);
	for (size_t i = 0; i < nout; i++) {
		if (n->out[i] == OM_NONE)
			continue;
		struct om_value *v = &g->values[n->out[i]];
		if (v->producer != OM_NONE || v->is_initializer || v->is_input || v->is_constant)
			return sp_fail(err, "%s: node '%s' (%s): output '%s' is already produced",
				       g->path, name, op, v->name);
		v->producer = g->nnodes - 1;
	}
	return 0;
}

int om_set_value(struct om_graph *g, const char *name, int ndim, const int64_t *dims,
		 int is_initializer, struct sp_err *err)
{
	if (ndim > OM_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %d dims, more than %d", g->path, name, ndim,
			       OM_MAX_DIMS);
	size_t i = om_value_intern(g, name);
	if (i == OM_NONE)
		return oom(err, g);
	struct om_value *v = &g->values[i];
	v->ndim = ndim;
	for (int d = 0; d < ndim; d++) {
		if (dims[d] < -1)
			return sp_fail(err, "%s: tensor '%s' has a negative dim %lld", g->path, name,
				       (long long)dims[d]);
		v->dims[d] = dims[d];
	}
	v->is_initializer |= is_initializer;
	return 0;
}

static void clear_contents(struct om_value *v)
{
	free(v->cval);
	free(v->fval);
	v->cval = NULL;
	v->fval = NULL;
	v->ncval = v->nfval = 0;
}

int om_value_set(struct om_value *v, const int64_t *ints, const double *floats, size_t n)
{
	clear_contents(v);
	if (n > OM_CONST_MAX)
		return 0;
	size_t size = floats ? sizeof *floats : sizeof *ints;
	void *p = malloc((n ? n : 1) * size);
	if (!p)
		return -1;
	if (n)
		memcpy(p, floats ? (const void *)floats : (const void *)ints, n * size);
	if (floats) {
		v->fval = p;
		v->nfval = n;
	} else {
		v->cval = p;
		v->ncval = n;
	}
	return 0;
}

/* The contents of a small tensor with its data in the file (n elements):
 * integers into ints or floating point into floats; 0 when there are none
 * (a stripped initializer, another type), 1 ints, 2 floats. Raw data is
 * little-endian, as on the hosts this runs on. */
static int tensor_data(const Onnx__TensorProto *t, size_t n, int64_t *ints, double *floats)
{
	union {
		int64_t i64[OM_CONST_MAX];
		int32_t i32[OM_CONST_MAX];
		float f32[OM_CONST_MAX];
		double f64[OM_CONST_MAX];
		uint16_t f16[OM_CONST_MAX];
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
static int load_tensor(struct om_graph *g, const Onnx__TensorProto *t, const char *name,
		       int is_initializer, size_t *index, struct sp_err *err)
{
	if (t->n_dims > OM_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %zu dims, more than %d", g->path, name,
			       t->n_dims, OM_MAX_DIMS);
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] < 0)
			return sp_fail(err, "%s: tensor '%s' has a negative dim %lld", g->path, name,
				       (long long)t->dims[d]);
	if (om_set_value(g, name, (int)t->n_dims, t->dims, is_initializer, err))
		return -1;
	*index = om_value_intern(g, name);
	struct om_value *v = &g->values[*index];
	v->elem_type = t->data_type;
	int64_t n = om_value_numel(v), ints[OM_CONST_MAX];
	double floats[OM_CONST_MAX];
	if (n == 0 || n > OM_CONST_MAX)
		return 0;
	int kind = tensor_data(t, (size_t)n, ints, floats);
	int rc = kind ? om_value_set(v, ints, kind == 2 ? floats : NULL, (size_t)n) : 0;
	return rc ? oom(err, g) : 0;
}

static int load_value_info(struct om_graph *g, const Onnx__ValueInfoProto *vi, size_t *index,
			   struct sp_err *err)
{
	if (!vi->name || !vi->name[0])
		return sp_fail(err, "%s: a graph input, output or value_info has no name", g->path);
	*index = om_value_intern(g, vi->name);
	if (*index == OM_NONE)
		return oom(err, g);
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return 0;
	struct om_value *v = &g->values[*index];
	v->elem_type = tp->tensor_type->elem_type;
	const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
	if (!sh)
		return 0;
	if (sh->n_dim > OM_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %zu dims, more than %d", g->path, vi->name,
			       sh->n_dim, OM_MAX_DIMS);
	int64_t dims[OM_MAX_DIMS];
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
	return om_set_value(g, vi->name, (int)sh->n_dim, dims, 0, err);
}

static int load_attrs(struct om_graph *g, struct om_node *n, const Onnx__NodeProto *np,
		      struct sp_err *err)
{
	for (size_t k = 0; k < np->n_attribute; k++) {
		const Onnx__AttributeProto *ap = np->attribute[k];
		const char *an = ap->name ? ap->name : "";
		int rc = 0;
		struct om_attr *a;
		switch (ap->type) {
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: rc = om_node_add_int(n, an, ap->i); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
			rc = om_node_add_ints(n, an, ap->ints, ap->n_ints);
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: rc = om_node_add_float(n, an, ap->f); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
			double *v = malloc((ap->n_floats ? ap->n_floats : 1) * sizeof *v);
			for (size_t i = 0; v && i < ap->n_floats; i++)
				v[i] = ap->floats[i];
			rc = !v || om_node_add_floats(n, an, v, ap->n_floats);
			free(v);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
			char *s = ap->s.len ? strndup((const char *)ap->s.data, ap->s.len) : strdup("");
			rc = !s || om_node_add_string(n, an, s);
			free(s);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
			if (!ap->t)
				break;
			/* A Constant's tensor is the value of its output. */
			const char *vname = n->nout && n->out[0] != OM_NONE ? g->values[n->out[0]].name
									    : NULL;
			if (!vname || !(a = attr_new(n, an, OM_ATTR_TENSOR)))
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

static int convert(struct om_graph *g, const Onnx__ModelProto *m, struct sp_err *err)
{
	const Onnx__GraphProto *gp = m->graph;
	if (!gp)
		return sp_fail(err, "%s: not an ONNX model: no graph", g->path);
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[i];
		if (!os->domain || !os->domain[0] || !strcmp(os->domain, "ai.onnx"))
			g->opset = os->version;
	}
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
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		char fallback[32];
		snprintf(fallback, sizeof fallback, "node%zu", i);
		const char *name = np->name && np->name[0] ? np->name : fallback;
		if (!np->op_type || !np->op_type[0])
			return sp_fail(err, "%s: node '%s' has no op_type", g->path, name);
		for (size_t k = 0; k < np->n_input; k++)
			if (!np->input[k])
				return sp_fail(err, "%s: node '%s': input %zu has no name", g->path, name, k);
		if (om_add_node(g, np->op_type, name, (const char *const *)np->input, np->n_input,
				(const char *const *)np->output, np->n_output, err) ||
		    load_attrs(g, &g->nodes[g->nnodes - 1], np, err))
			return -1;
	}
	return 0;
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
		  struct om_graph *g, struct sp_err *err)
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
		om_free(g);
	return rc;
}

int om_load_mem(const void *data, size_t size, const char *name, struct om_graph *g,
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

int om_load(const char *path, struct om_graph *g, struct sp_err *err)
{
	struct buf wire = {0};
	struct onnx_wire_stats st;
	memset(g, 0, sizeof *g);
	int rc = onnx_wire_slim_file(path, &wire, &st, err) || decode(&wire, &st, path, g, err);
	buf_free(&wire);
	return rc ? -1 : 0;
}

void om_free(struct om_graph *g)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		struct om_node *n = &g->nodes[i];
		for (size_t k = 0; k < n->nattrs; k++) {
			free(n->attrs[k].name);
			free(n->attrs[k].ints);
			free(n->attrs[k].floats);
			free(n->attrs[k].s);
		}
		free(n->attrs);
		free(n->in);
		free(n->out);
		free(n->name);
	}
	for (size_t i = 0; i < g->nvalues; i++) {
		free(g->values[i].name);
		free(g->values[i].cval);
		free(g->values[i].fval);
	}
	for (size_t i = 0; i < g->nop_types; i++)
		free(g->op_types[i]);
	free(g->op_types);
	strmap_free(&g->op_index);
	free(g->nodes);
	free(g->values);
	free(g->path);
	strmap_free(&g->names);
	memset(g, 0, sizeof *g);
}

const struct om_attr *om_attr(const struct om_node *n, const char *name)
{
	for (size_t k = 0; k < n->nattrs; k++)
		if (!strcmp(n->attrs[k].name, name))
			return &n->attrs[k];
	return NULL;
}

int64_t om_attr_int(const struct om_node *n, const char *name, int64_t dflt)
{
	const struct om_attr *a = om_attr(n, name);
	return a && a->type == OM_ATTR_INT ? a->i : dflt;
}

int64_t om_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t om_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t om_value_numel(const struct om_value *v)
{
	int64_t n = 1;
	for (int d = 0; d < v->ndim; d++)
		n = om_mul(n, v->dims[d] < 0 ? 0 : v->dims[d]);
	return n;
}
