/* Hand-built operator graphs for the shape-inference and cost tests. Include
 * after cmocka.h. Every helper asserts that building succeeded. */
#ifndef SPKIT_GRAPHUTIL_H
#define SPKIT_GRAPHUTIL_H

#include <stdlib.h>
#include <string.h>

#include "partition/opgraph.h"
#include "partition/shape_infer.h"

static inline void gu_init(struct opgraph *g)
{
	memset(g, 0, sizeof *g);
	g->path = strdup("t.onnx");
	g->opset = 17;
}

/* A tensor: a graph input (kind 'i'), an initializer ('w') or an
 * initializer with int64 contents ('c', vals of ndim==1 dims[0] entries). */
static inline void gu_tensor(struct opgraph *g, int kind, const char *name, int ndim,
			     const int64_t *dims, const int64_t *vals)
{
	struct sp_err e;
	assert_int_equal(opgraph_set_value(g, name, ndim, dims, kind != 'i', &e), 0);
	struct opgraph_value *v = &g->values[opgraph_value_intern(g, name)];
	v->is_input = kind == 'i';
	if (kind == 'c') {
		v->ncval = (size_t)opgraph_value_numel(v);
		v->cval = malloc(v->ncval * sizeof *vals + 1);
		memcpy(v->cval, vals, v->ncval * sizeof *vals);
	}
}

/* An initializer with floating-point contents (a Resize scale, a roi):
 * ndim 1 of n elements, or a scalar when ndim is 0. */
static inline void gu_floats(struct opgraph *g, const char *name, int ndim, size_t n,
			     const double *vals)
{
	struct sp_err e;
	int64_t dims[1] = {(int64_t)n};
	assert_int_equal(opgraph_set_value(g, name, ndim, dims, 1, &e), 0);
	struct opgraph_value *v = &g->values[opgraph_value_intern(g, name)];
	v->elem_type = 1;
	assert_int_equal(opgraph_value_set_contents(v, NULL, vals, n), 0);
}

/* A node with one output; in is a NULL-terminated list. Returns the node. */
static inline struct opgraph_node *gu_node(struct opgraph *g, const char *op, const char *name,
					   const char *const *in, const char *out)
{
	struct sp_err e;
	size_t nin = 0;
	while (in[nin])
		nin++;
	assert_int_equal(opgraph_add_node(g, op, name, in, nin, &out, 1, &e), 0);
	return &g->nodes[g->nnodes - 1];
}

/* Run shape inference; returns its result, the message in e. */
static inline int gu_infer(struct opgraph *g, const struct shape_infer_opts *o, struct sp_err *e)
{
	size_t *order = malloc((g->nnodes + 1) * sizeof *order);
	unsigned char *unknown = calloc(g->nnodes + 1, 1);
	int rc = shape_infer(g, o, order, unknown, e);
	free(order);
	free(unknown);
	return rc;
}

/* The dims of value name must be exactly want (ndim entries). */
static inline void gu_assert_dims(struct opgraph *g, const char *name, int ndim,
				  const int64_t *want)
{
	const struct opgraph_value *v = &g->values[opgraph_value_intern(g, name)];
	assert_int_equal(v->ndim, ndim);
	for (int d = 0; d < ndim; d++)
		assert_int_equal(v->dims[d], want[d]);
}

#define GU_DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define GU_F(...) ((const double[]){__VA_ARGS__})
#define GU_IN(...) ((const char *const[]){__VA_ARGS__, NULL})

#endif
