/* The shared part of the shape rules: a node's inputs and outputs, its
 * int-list attributes, axes, and every message naming the node. */
#include "partition/shape_rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int shape_rule_fail(const struct shape_rule *c, const char *fmt, ...)
{
	char what[SP_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	char at[300];
	return sp_fail(c->err, "%s: node '%s' (%s): %s",
		       opgraph_node_where(c->g, c->n, at, sizeof at), c->n->name, c->n->op, what);
}

struct opgraph_value *shape_rule_input(const struct shape_rule *c, size_t i)
{
	if (i >= c->n->nin || c->n->in[i] == OPGRAPH_NONE) {
		shape_rule_fail(c, "input %zu is missing", i);
		return NULL;
	}
	struct opgraph_value *v = &c->g->values[c->n->in[i]];
	if (v->ndim < 0) {
		shape_rule_fail(c, "input '%s' has no known shape", v->name);
		return NULL;
	}
	return v;
}

struct opgraph_value *shape_rule_output(const struct shape_rule *c, size_t i)
{
	return i < c->n->nout && c->n->out[i] != OPGRAPH_NONE ? &c->g->values[c->n->out[i]] : NULL;
}

int shape_rule_set_output(const struct shape_rule *c, size_t i, int ndim, const int64_t *dims,
			  int elem_type)
{
	struct opgraph_value *v = shape_rule_output(c, i);
	if (!v)
		return 0;
	if (ndim > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "output '%s' would have %d dims, more than %d", v->name,
				       ndim, OPGRAPH_MAX_DIMS);
	/* A dim of INT64_MAX is where opgraph_add_sat and opgraph_mul_sat stop:
	 * a size past int64, as an element count past it is. */
	int64_t count = 1;
	for (int d = 0; d < ndim; d++) {
		if (dims[d] < 0)
			return shape_rule_fail(c, "output '%s' dim %d would be %lld", v->name, d,
					       (long long)dims[d]);
		if (dims[d] == INT64_MAX || __builtin_mul_overflow(count, dims[d], &count))
			return shape_rule_fail(c, "output '%s' would have more than %lld elements",
					       v->name, (long long)INT64_MAX);
	}
	if (ndim) /* dims may be NULL for a scalar */
		memmove(v->dims, dims, (size_t)ndim * sizeof *dims);
	v->ndim = ndim;
	if (elem_type)
		v->elem_type = elem_type;
	return 0;
}

/* Constant contents for an output (copied; more than OPGRAPH_CONST_MAX keep none). */
int shape_rule_set_ints(const struct shape_rule *c, size_t i, const int64_t *vals, size_t n)
{
	struct opgraph_value *v = shape_rule_output(c, i);
	if (v && opgraph_value_set_contents(v, vals, NULL, n))
		return sp_fail(c->err, "%s: out of memory", c->g->path);
	return 0;
}

int shape_rule_set_floats(const struct shape_rule *c, size_t i, const double *vals, size_t n)
{
	struct opgraph_value *v = shape_rule_output(c, i);
	if (v && opgraph_value_set_contents(v, NULL, vals, n))
		return sp_fail(c->err, "%s: out of memory", c->g->path);
	return 0;
}

/* ONNX's integer element types (TensorProto.DataType), whose constants are
 * carried as int64; the floating-point ones are carried as double. */
int shape_rule_is_integral(int elem_type)
{
	return elem_type == 2 || elem_type == 3 || elem_type == 4 || elem_type == 5 ||
	       elem_type == 6 || elem_type == 7 || elem_type == 9 || elem_type == 12 ||
	       elem_type == 13;
}

int shape_rule_axis(const struct shape_rule *c, int64_t axis, int rank, int64_t *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return shape_rule_fail(c, "axis %lld is out of range for rank %d", (long long)axis,
				       rank);
	*out = axis < 0 ? axis + rank : axis;
	return 0;
}

/* The int list of attribute name, or of constant input i when the
 * attribute is absent (opset 13 moved axes and the like to inputs).
 * *found 0: neither is there. */
int shape_rule_int_list(const struct shape_rule *c, const char *name, size_t i, int64_t *out,
			size_t cap, size_t *count, int *found)
{
	const struct opgraph_attr *a = opgraph_attr(c->n, name);
	const int64_t *src = NULL;
	size_t n = 0;
	*found = 1;
	if (a && a->type == OPGRAPH_ATTR_INTS) {
		src = a->ints;
		n = a->nints;
	} else if (i < c->n->nin && c->n->in[i] != OPGRAPH_NONE) {
		const struct opgraph_value *v = &c->g->values[c->n->in[i]];
		if (!v->cval)
			return shape_rule_fail(c, "%s input '%s' is not a constant", name, v->name);
		src = v->cval;
		n = v->ncval;
	} else {
		*found = 0;
	}
	if (n > cap)
		return shape_rule_fail(c, "%s has %zu entries, more than %zu", name, n, cap);
	if (n)
		memcpy(out, src, n * sizeof *src);
	*count = n;
	return 0;
}

/* Output 0 takes these dims, x's element type and x's constant contents
 * (the ops that only move or relabel data). */
int shape_rule_set_output_keep(const struct shape_rule *c, const struct opgraph_value *x, int ndim,
			       const int64_t *dims)
{
	if (shape_rule_set_output(c, 0, ndim, dims, x->elem_type))
		return -1;
	return x->cval   ? shape_rule_set_ints(c, 0, x->cval, x->ncval)
	       : x->fval ? shape_rule_set_floats(c, 0, x->fval, x->nfval)
			 : 0;
}

/* The axes of Squeeze, Unsqueeze and the reductions (an attribute, or
 * input 1 from opset 13 or 18) as a bit mask over a rank of rank, plus
 * the axes' count when grows (Unsqueeze: the axes index the output). */
int shape_rule_axes_mask(const struct shape_rule *c, int rank, int grows, int *mask, size_t *count,
			 int *found)
{
	int64_t axes[OPGRAPH_MAX_DIMS];
	*mask = 0;
	if (shape_rule_int_list(c, "axes", 1, axes, OPGRAPH_MAX_DIMS, count, found))
		return -1;
	rank += grows ? (int)*count : 0;
	if (rank > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "the output would have %d dims, more than %d", rank,
				       OPGRAPH_MAX_DIMS);
	for (size_t i = 0; i < *count; i++) {
		int64_t a;
		if (shape_rule_axis(c, axes[i], rank, &a))
			return -1;
		if (*mask & (1 << a))
			return shape_rule_fail(c, "axis %lld given twice", (long long)a);
		*mask |= 1 << a;
	}
	return 0;
}
