/* Shape rules of the ops that make constants: Constant, Shape, Size,
 * ConstantOfShape, Range, and Gather of constants; their small integer
 * contents are carried along, so that the Reshape targets of
 * dynamic-shape exports resolve. */
#include "partition/shape_rule.h"

#include <math.h>
#include <string.h>

static int rule_shape(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	int64_t start = opgraph_attr_int(c->n, "start", 0),
		end = opgraph_attr_int(c->n, "end", x->ndim);
	/* start and end clamp as slices do (opset 15). */
	start = start < 0 ? start + x->ndim : start;
	end = end < 0 ? end + x->ndim : end;
	start = start < 0 ? 0 : start > x->ndim ? x->ndim : start;
	end = end < start ? start : end > x->ndim ? x->ndim : end;
	int64_t n = end - start;
	if (shape_rule_set_output(c, 0, 1, &n, 7))
		return -1;
	return shape_rule_set_ints(c, 0, x->dims + start, (size_t)n);
}

static int rule_gather(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *idx = x ? shape_rule_input(c, 1) : NULL;
	int64_t axis;
	if (!idx || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	int r = x->ndim - 1 + idx->ndim, nd = 0;
	if (r > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "output would have %d dims", r);
	int64_t dims[OPGRAPH_MAX_DIMS];
	for (int d = 0; d < axis; d++)
		dims[nd++] = x->dims[d];
	for (int d = 0; d < idx->ndim; d++)
		dims[nd++] = idx->dims[d];
	for (int d = (int)axis + 1; d < x->ndim; d++)
		dims[nd++] = x->dims[d];
	if (shape_rule_set_output(c, 0, r, dims, x->elem_type))
		return -1;
	if (!x->cval || !idx->cval || x->ndim != 1)
		return 0;
	int64_t vals[OPGRAPH_CONST_MAX];
	for (size_t i = 0; i < idx->ncval; i++) {
		int64_t k = idx->cval[i] < 0 ? idx->cval[i] + (int64_t)x->ncval : idx->cval[i];
		if (k < 0 || k >= (int64_t)x->ncval)
			return shape_rule_fail(c, "index %lld is out of range for %zu elements",
					       (long long)idx->cval[i], x->ncval);
		vals[i] = x->cval[k];
	}
	return shape_rule_set_ints(c, 0, vals, idx->ncval);
}

/* ConstantOfShape: dims from a constant; constant contents when small
 * (the value tensor was loaded onto the output as one element). */
static int rule_constant_of_shape(const struct shape_rule *c)
{
	const struct opgraph_value *s = shape_rule_input(c, 0);
	struct opgraph_value *y = shape_rule_output(c, 0);
	if (!s || !y)
		return -1;
	if (!s->cval || s->ncval > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "shape '%s' is not a constant of at most %d dims",
				       s->name, OPGRAPH_MAX_DIMS);
	int64_t ifill = y->cval && y->ncval == 1 ? y->cval[0] : 0;
	double ffill = y->fval && y->nfval == 1 ? y->fval[0] : 0;
	int is_int = y->cval != NULL || !y->fval; /* no value: float zeros */
	if (shape_rule_set_output(c, 0, (int)s->ncval, s->cval, y->elem_type ? y->elem_type : 1))
		return -1;
	int64_t n = opgraph_value_numel(y), ivals[OPGRAPH_CONST_MAX];
	double fvals[OPGRAPH_CONST_MAX];
	if (n > OPGRAPH_CONST_MAX)
		return shape_rule_set_ints(c, 0, NULL,
					   OPGRAPH_CONST_MAX + 1); /* too large to carry */
	for (int64_t i = 0; i < n; i++) {
		ivals[i] = ifill;
		fvals[i] = ffill;
	}
	return is_int && shape_rule_is_integral(y->elem_type)
		       ? shape_rule_set_ints(c, 0, ivals, (size_t)n)
		       : shape_rule_set_floats(c, 0, fvals, (size_t)n);
}

/* Range on int64 scalars. */
static int rule_range(const struct shape_rule *c)
{
	const struct opgraph_value *v[3];
	for (size_t i = 0; i < 3; i++) {
		v[i] = shape_rule_input(c, i);
		if (!v[i])
			return -1;
		if (!v[i]->cval || v[i]->ncval != 1)
			return shape_rule_fail(c, "'%s' is not a constant int64 scalar",
					       v[i]->name);
	}
	int64_t start = v[0]->cval[0], limit = v[1]->cval[0], delta = v[2]->cval[0];
	if (delta == 0 || delta == INT64_MIN)
		return shape_rule_fail(c, "delta %lld", (long long)delta);
	/* the span may exceed int64: compute it in double, then check */
	double span = ((double)limit - (double)start) / (double)delta;
	if (span > 1e15)
		return shape_rule_fail(c, "more than 10^15 elements");
	int64_t n = span <= 0 ? 0 : (int64_t)ceil(span);
	if (shape_rule_set_output(c, 0, 1, &n, v[0]->elem_type))
		return -1;
	if (n > OPGRAPH_CONST_MAX)
		return 0; /* the shape is what matters; large ranges keep no contents */
	int64_t vals[OPGRAPH_CONST_MAX];
	for (int64_t i = 0; i < n; i++)
		vals[i] = opgraph_add_sat(start, opgraph_mul_sat(i, delta));
	return shape_rule_set_ints(c, 0, vals, (size_t)n);
}

/* Constant: a tensor attribute was loaded onto the output already;
 * value_int(s) and value_float(s) are made here. */
static int rule_constant(const struct shape_rule *c)
{
	struct opgraph_value *y = shape_rule_output(c, 0);
	if (!y)
		return shape_rule_fail(c, "no output");
	const struct opgraph_attr *a;
	if ((a = opgraph_attr(c->n, "value_ints"))) {
		int64_t n = (int64_t)a->nints;
		return shape_rule_set_output(c, 0, 1, &n, 7) ||
		       shape_rule_set_ints(c, 0, a->ints, a->nints);
	}
	if ((a = opgraph_attr(c->n, "value_int")))
		return shape_rule_set_output(c, 0, 0, NULL, 7) ||
		       shape_rule_set_ints(c, 0, &a->i, 1);
	if ((a = opgraph_attr(c->n, "value_floats"))) {
		int64_t n = (int64_t)a->nints;
		return shape_rule_set_output(c, 0, 1, &n, 1) ||
		       shape_rule_set_floats(c, 0, a->floats, a->nints);
	}
	if ((a = opgraph_attr(c->n, "value_float")))
		return shape_rule_set_output(c, 0, 0, NULL, 1) ||
		       shape_rule_set_floats(c, 0, &a->f, 1);
	if (y->ndim < 0)
		return shape_rule_fail(c, "no value attribute this program reads");
	return 0;
}

/* Size: the element count as an int64 scalar, a constant. */
static int rule_size(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t n = x ? opgraph_value_numel(x) : 0;
	return !x || shape_rule_set_output(c, 0, 0, NULL, 7) || shape_rule_set_ints(c, 0, &n, 1)
		       ? -1
		       : 0;
}

const struct shape_rule_op shape_rule_constant[] = {
	{"Shape", rule_shape}, {"Gather", rule_gather}, {"Constant", rule_constant},
	{"ConstantOfShape", rule_constant_of_shape}, {"Range", rule_range}, {"Size", rule_size},
	{NULL, NULL},
};
