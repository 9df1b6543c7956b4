/* Shape rules of the reductions (ReduceSum and the like, ArgMax, ArgMin,
 * TopK) and of LayerNormalization with its reduced statistics. */
#include "partition/shape_rule.h"

#include <string.h>

static int rule_reduce(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t dims[OPGRAPH_MAX_DIMS];
	size_t na;
	int found, red, nd = 0, keep = opgraph_attr_int(c->n, "keepdims", 1) != 0;
	if (!x || shape_rule_axes_mask(c, x->ndim, 0, &red, &na, &found))
		return -1;
	if (!na && !opgraph_attr_int(c->n, "noop_with_empty_axes", 0))
		red = (1 << x->ndim) - 1;
	for (int d = 0; d < x->ndim; d++)
		if (!(red & (1 << d)))
			dims[nd++] = x->dims[d];
		else if (keep)
			dims[nd++] = 1;
	return shape_rule_set_output(c, 0, nd, dims, x->elem_type);
}

/* LayerNormalization: Y like X; Mean and InvStdDev (training outputs) with
 * the normalised dims from axis on reduced to 1. */
static int rule_layer_norm(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis, dims[OPGRAPH_MAX_DIMS];
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", -1), x->ndim, &axis) ||
	    shape_rule_set_output(c, 0, x->ndim, x->dims, x->elem_type))
		return -1;
	memcpy(dims, x->dims, sizeof dims);
	for (int d = (int)axis; d < x->ndim; d++)
		dims[d] = 1;
	return shape_rule_set_output(c, 1, x->ndim, dims, 1) ||
	       shape_rule_set_output(c, 2, x->ndim, dims, 1);
}

/* ArgMax, ArgMin: one axis reduced (kept as 1 by default), int64 indices. */
static int rule_arg_reduce(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis, dims[OPGRAPH_MAX_DIMS];
	int nd = 0;
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	for (int d = 0; d < x->ndim; d++)
		if (d != axis)
			dims[nd++] = x->dims[d];
		else if (opgraph_attr_int(c->n, "keepdims", 1))
			dims[nd++] = 1;
	return shape_rule_set_output(c, 0, nd, dims, 7);
}

/* TopK: K (input 1, or an attribute before opset 10) along axis; values and
 * int64 indices. */
static int rule_topk(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis, k[1], dims[OPGRAPH_MAX_DIMS];
	size_t nk;
	int found;
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", -1), x->ndim, &axis))
		return -1;
	const struct opgraph_attr *ka = opgraph_attr(c->n, "k");
	if (ka && ka->type == OPGRAPH_ATTR_INT) {
		k[0] = ka->i;
		nk = 1;
	} else if (shape_rule_int_list(c, "K", 1, k, 1, &nk, &found)) {
		return -1;
	}
	if (nk != 1 || k[0] < 0 || k[0] > x->dims[axis])
		return shape_rule_fail(c, "K is not one integer from 0 to %lld",
				       (long long)x->dims[axis]);
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = k[0];
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type) ||
	       shape_rule_set_output(c, 1, x->ndim, dims, 7);
}

const struct shape_rule_op shape_rule_reduce[] = {
	{"LayerNormalization", rule_layer_norm}, {"ReduceMean", rule_reduce},
	{"ReduceSum", rule_reduce}, {"ReduceMax", rule_reduce}, {"ReduceMin", rule_reduce},
	{"ReduceProd", rule_reduce}, {"ReduceL1", rule_reduce}, {"ReduceL2", rule_reduce},
	{"ReduceLogSum", rule_reduce}, {"ReduceLogSumExp", rule_reduce},
	{"ReduceSumSquare", rule_reduce}, {"ArgMax", rule_arg_reduce}, {"ArgMin", rule_arg_reduce},
	{"TopK", rule_topk},
	{NULL, NULL},
};
