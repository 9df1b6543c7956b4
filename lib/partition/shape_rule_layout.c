/* Shape rules of the ops that move data without arithmetic: reshapes,
 * transposes, concatenation, slicing, splitting, padding, tiling, resizing
 * and the gathers by index. */
#include "partition/shape_rule.h"

#include <math.h>
#include <string.h>

static int rule_flatten(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	/* axis may be the rank itself: everything goes to the first dim. */
	int64_t axis = opgraph_attr_int(c->n, "axis", 1);
	axis = axis < 0 ? axis + x->ndim : axis;
	if (axis < 0 || axis > x->ndim)
		return shape_rule_fail(c, "axis %lld is out of range for rank %d",
				       (long long)opgraph_attr_int(c->n, "axis", 1), x->ndim);
	int64_t dims[2] = {1, 1};
	for (int d = 0; d < x->ndim; d++)
		dims[d >= axis] = opgraph_mul_sat(dims[d >= axis], x->dims[d]);
	return shape_rule_set_output(c, 0, 2, dims, x->elem_type);
}

static int rule_reshape(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *s = x ? shape_rule_input(c, 1) : NULL;
	if (!s)
		return -1;
	if (!s->cval)
		return shape_rule_fail(c, "target shape '%s' is not a constant", s->name);
	if (s->ncval > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "target shape has %zu dims, more than %d", s->ncval,
				       OPGRAPH_MAX_DIMS);
	int allowzero = opgraph_attr_int(c->n, "allowzero", 0) != 0;
	int64_t dims[OPGRAPH_MAX_DIMS], known = 1, total = opgraph_value_numel(x);
	int infer = -1;
	for (size_t d = 0; d < s->ncval; d++) {
		dims[d] = s->cval[d];
		if (dims[d] == 0 && !allowzero) {
			if ((int)d >= x->ndim)
				return shape_rule_fail(c,
						       "target dim %zu is 0 but the input has rank "
						       "%d",
						       d, x->ndim);
			dims[d] = x->dims[d];
		}
		if (dims[d] == -1) {
			if (infer >= 0)
				return shape_rule_fail(c, "target shape has two -1 dims");
			infer = (int)d;
		} else if (dims[d] < 0) {
			return shape_rule_fail(c, "target dim %zu is %lld", d, (long long)dims[d]);
		} else {
			known = opgraph_mul_sat(known, dims[d]);
		}
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			return shape_rule_fail(c,
					       "cannot infer the -1 dim: %lld elements into blocks "
					       "of %lld",
					       (long long)total, (long long)known);
		dims[infer] = total / known;
		known = total;
	}
	if (known != total)
		return shape_rule_fail(c, "%lld elements cannot take a shape of %lld",
				       (long long)total, (long long)known);
	return shape_rule_set_output_keep(c, x, (int)s->ncval, dims);
}

static int rule_transpose(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	int64_t perm[OPGRAPH_MAX_DIMS], dims[OPGRAPH_MAX_DIMS];
	size_t np;
	int found, seen = 0;
	if (shape_rule_int_list(c, "perm", OPGRAPH_NONE, perm, OPGRAPH_MAX_DIMS, &np, &found))
		return -1;
	if (!found)
		for (int d = 0; d < x->ndim; d++)
			perm[d] = x->ndim - 1 - d;
	else if (np != (size_t)x->ndim)
		return shape_rule_fail(c, "perm has %zu entries for rank %d", np, x->ndim);
	for (int d = 0; d < x->ndim; d++) {
		if (perm[d] < 0 || perm[d] >= x->ndim || (seen & (1 << perm[d])))
			return shape_rule_fail(c, "perm is not a permutation of 0..%d",
					       x->ndim - 1);
		seen |= 1 << perm[d];
		dims[d] = x->dims[perm[d]];
	}
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_concat(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis;
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	int64_t dims[OPGRAPH_MAX_DIMS], vals[OPGRAPH_CONST_MAX];
	size_t nvals = 0;
	int all_const = 1;
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = 0;
	for (size_t i = 0; i < c->n->nin; i++) {
		const struct opgraph_value *v = shape_rule_input(c, i);
		if (!v)
			return -1;
		if (v->ndim != x->ndim)
			return shape_rule_fail(c, "input '%s' has rank %d, not %d", v->name,
					       v->ndim, x->ndim);
		for (int d = 0; d < x->ndim; d++)
			if (d != axis && v->dims[d] != x->dims[d])
				return shape_rule_fail(c, "input '%s' dim %d is %lld, not %lld",
						       v->name, d, (long long)v->dims[d],
						       (long long)x->dims[d]);
		dims[axis] = opgraph_add_sat(dims[axis], v->dims[axis]);
		if (!v->cval || x->ndim != 1 || nvals + v->ncval > OPGRAPH_CONST_MAX) {
			all_const = 0;
		} else {
			memcpy(vals + nvals, v->cval, v->ncval * sizeof *vals);
			nvals += v->ncval;
		}
	}
	if (shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	return all_const ? shape_rule_set_ints(c, 0, vals, nvals) : 0;
}

static int rule_squeeze(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t dims[OPGRAPH_MAX_DIMS];
	size_t na;
	int found, drop, nd = 0;
	if (!x || shape_rule_axes_mask(c, x->ndim, 0, &drop, &na, &found))
		return -1;
	for (int d = 0; d < x->ndim; d++) {
		if (na && (drop & (1 << d)) && x->dims[d] != 1)
			return shape_rule_fail(c, "cannot squeeze dim %d of size %lld", d,
					       (long long)x->dims[d]);
		if (!(na ? drop & (1 << d) : x->dims[d] == 1))
			dims[nd++] = x->dims[d];
	}
	return shape_rule_set_output_keep(c, x, nd, dims);
}

static int rule_unsqueeze(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t dims[OPGRAPH_MAX_DIMS];
	size_t na;
	int found, add;
	if (!x || shape_rule_axes_mask(c, x->ndim, 1, &add, &na, &found))
		return -1;
	if (!found)
		return shape_rule_fail(c, "no axes");
	int r = x->ndim + (int)na;
	for (int d = 0, k = 0; d < r; d++)
		dims[d] = add & (1 << d) ? 1 : x->dims[k++];
	return shape_rule_set_output_keep(c, x, r, dims);
}

/* Slice (starts, ends, axes, steps as inputs from opset 10, attributes
 * before), with the clamping rules of the ONNX spec. */
static int rule_slice(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t starts[OPGRAPH_MAX_DIMS], ends[OPGRAPH_MAX_DIMS], axes[OPGRAPH_MAX_DIMS],
		steps[OPGRAPH_MAX_DIMS];
	size_t ns, ne, na, nst;
	int found;
	if (!x || shape_rule_int_list(c, "starts", 1, starts, OPGRAPH_MAX_DIMS, &ns, &found) ||
	    shape_rule_int_list(c, "ends", 2, ends, OPGRAPH_MAX_DIMS, &ne, &found) ||
	    shape_rule_int_list(c, "axes", 3, axes, OPGRAPH_MAX_DIMS, &na, &found) ||
	    shape_rule_int_list(c, "steps", 4, steps, OPGRAPH_MAX_DIMS, &nst, &found))
		return -1;
	if (ns != ne || (na && na != ns) || (nst && nst != ns))
		return shape_rule_fail(c, "starts, ends, axes and steps differ in length");
	int64_t dims[OPGRAPH_MAX_DIMS], first = 0, step1 = 1;
	memcpy(dims, x->dims, sizeof dims);
	for (size_t i = 0; i < ns; i++) {
		int64_t axis, dim, step = nst ? steps[i] : 1;
		if (shape_rule_axis(c, na ? axes[i] : (int64_t)i, x->ndim, &axis))
			return -1;
		if (step == 0)
			return shape_rule_fail(c, "step 0");
		dim = x->dims[axis];
		int64_t b = starts[i] < 0 ? opgraph_add_sat(starts[i], dim) : starts[i];
		int64_t e = ends[i] < 0 ? opgraph_add_sat(ends[i], dim) : ends[i];
		int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
		b = b < 0 ? 0 : b > hi ? hi : b;
		e = e < lo ? lo : e > hi ? hi : e;
		/* steps of magnitude 2^63 cannot be negated; they take one element */
		int64_t mag = step > 0 ? step : step == INT64_MIN ? INT64_MAX : -step;
		int64_t span = step > 0 ? e - b : b - e;
		dims[axis] = span <= 0 ? 0 : span / mag + (span % mag != 0);
		if (axis == 0) {
			first = b;
			step1 = step;
		}
	}
	if (shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	if (!x->cval || x->ndim != 1)
		return 0;
	int64_t vals[OPGRAPH_CONST_MAX];
	for (int64_t i = 0; i < dims[0]; i++)
		vals[i] = x->cval[first + i * step1];
	return shape_rule_set_ints(c, 0, vals, (size_t)dims[0]);
}

/* Split: sizes from the split attribute or input 1, else equal parts
 * (the last one smaller, as opset 18's num_outputs says). */
static int rule_split(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis, parts[OPGRAPH_CONST_MAX];
	size_t np;
	int found;
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", 0), x->ndim, &axis) ||
	    shape_rule_int_list(c, "split", 1, parts, OPGRAPH_CONST_MAX, &np, &found))
		return -1;
	int64_t dim = x->dims[axis], total = 0;
	if (!np) {
		if (!c->n->nout || c->n->nout > OPGRAPH_CONST_MAX)
			return shape_rule_fail(c, "%zu outputs", c->n->nout);
		np = c->n->nout;
		int64_t each = dim / (int64_t)np + (dim % (int64_t)np != 0);
		for (size_t i = 0; i < np; i++) {
			parts[i] = dim - total < each ? dim - total : each;
			total += parts[i];
		}
	} else {
		for (size_t i = 0; i < np; i++)
			total = parts[i] < 0 ? -1 : opgraph_add_sat(total, parts[i]);
	}
	if (np != c->n->nout || total != dim)
		return shape_rule_fail(c,
				       "%zu parts summing to %lld for %zu outputs and a dim of "
				       "%lld",
				       np, (long long)total, c->n->nout, (long long)dim);
	int64_t dims[OPGRAPH_MAX_DIMS];
	memcpy(dims, x->dims, sizeof dims);
	for (size_t i = 0; i < np; i++) {
		dims[axis] = parts[i];
		if (shape_rule_set_output(c, i, x->ndim, dims, x->elem_type))
			return -1;
	}
	return 0;
}

/* Pad: pads from the attribute (opset 2-10) or input 1, over every axis or
 * over the axes of input 3 (opset 18). */
static int rule_pad(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t pads[2 * OPGRAPH_MAX_DIMS], axes[OPGRAPH_MAX_DIMS], dims[OPGRAPH_MAX_DIMS];
	size_t np, na = 0;
	int found;
	if (!x || shape_rule_int_list(c, "pads", 1, pads, 2 * OPGRAPH_MAX_DIMS, &np, &found) ||
	    (c->n->nin > 3 &&
	     shape_rule_int_list(c, "axes", 3, axes, OPGRAPH_MAX_DIMS, &na, &found)))
		return -1;
	if (!na)
		for (int d = 0; d < x->ndim; d++)
			axes[na++] = d;
	if (np != 2 * na)
		return shape_rule_fail(c, "%zu pads for %zu axes", np, na);
	memcpy(dims, x->dims, sizeof dims);
	int seen = 0;
	for (size_t i = 0; i < na; i++) {
		int64_t axis;
		if (shape_rule_axis(c, axes[i], x->ndim, &axis))
			return -1;
		if (seen & (1 << axis))
			return shape_rule_fail(c, "axis %lld given twice", (long long)axis);
		seen |= 1 << axis;
		dims[axis] = opgraph_add_sat(opgraph_add_sat(x->dims[axis], pads[i]), pads[na + i]);
	}
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* Round half away from zero, as ONNX's Resize rounds sizes. */
static int64_t round_half_up(double v)
{
	return (int64_t)floor(v + 0.5);
}

/* Resize (opset 10: X, scales; 11 and later: X, roi, scales, sizes, with
 * opset 18's axes and keep_aspect_ratio_policy) and Upsample (scales as
 * input 1, or an attribute before opset 9). Output dims: sizes as given
 * (or scaled by one factor under not_larger / not_smaller), else
 * floor(dim * scale), the roi's extent folded in for tf_crop_and_resize. */
static int rule_resize(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	int v10 = !strcmp(c->n->op, "Upsample") || c->g->opset == 10;
	size_t iroi = v10 ? OPGRAPH_NONE : 1, iscales = v10 ? 1 : 2,
	       isizes = v10 ? OPGRAPH_NONE : 3;
	const struct opgraph_value *scales = NULL, *sizes = NULL, *roi = NULL;
	if (iscales < c->n->nin && c->n->in[iscales] != OPGRAPH_NONE)
		scales = &c->g->values[c->n->in[iscales]];
	if (isizes < c->n->nin && c->n->in[isizes] != OPGRAPH_NONE)
		sizes = &c->g->values[c->n->in[isizes]];
	if (iroi < c->n->nin && c->n->in[iroi] != OPGRAPH_NONE)
		roi = &c->g->values[c->n->in[iroi]];
	/* an empty scales tensor (a placeholder beside sizes) counts as absent */
	if (scales && sizes && opgraph_value_numel(scales) == 0)
		scales = NULL;
	int64_t axes[OPGRAPH_MAX_DIMS];
	size_t na;
	int found;
	if (shape_rule_int_list(c, "axes", OPGRAPH_NONE, axes, OPGRAPH_MAX_DIMS, &na, &found))
		return -1;
	if (!na)
		for (int d = 0; d < x->ndim; d++)
			axes[na++] = d;
	for (size_t i = 0; i < na; i++)
		if (shape_rule_axis(c, axes[i], x->ndim, &axes[i]))
			return -1;
	double f[OPGRAPH_MAX_DIMS];
	const struct opgraph_attr *sa = opgraph_attr(c->n, "scales");
	int64_t dims[OPGRAPH_MAX_DIMS];
	memcpy(dims, x->dims, sizeof dims);
	if (sizes) {
		if (!sizes->cval || sizes->ncval != na)
			return shape_rule_fail(c, "sizes '%s' is not a constant of %zu integers",
					       sizes->name, na);
		const struct opgraph_attr *pa = opgraph_attr(c->n, "keep_aspect_ratio_policy");
		const char *policy = pa && pa->type == OPGRAPH_ATTR_STRING ? pa->s : "stretch";
		int larger = !strcmp(policy, "not_smaller");
		if (strcmp(policy, "stretch") && !larger && strcmp(policy, "not_larger"))
			return shape_rule_fail(c, "unknown keep_aspect_ratio_policy '%s'", policy);
		double scale = larger ? 0 : HUGE_VAL;
		for (size_t i = 0; i < na; i++) {
			if (sizes->cval[i] < 0)
				return shape_rule_fail(c, "size %lld is negative",
						       (long long)sizes->cval[i]);
			double r = x->dims[axes[i]] ? (double)sizes->cval[i] / (double)x->dims[axes[i]]
						    : 1.0;
			scale = larger ? fmax(scale, r) : fmin(scale, r);
			dims[axes[i]] = sizes->cval[i];
		}
		if (strcmp(policy, "stretch"))
			for (size_t i = 0; i < na; i++)
				dims[axes[i]] = round_half_up(scale * (double)x->dims[axes[i]]);
		return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
	}
	if (scales) {
		if (!scales->fval || scales->nfval != na)
			return shape_rule_fail(c, "scales '%s' is not a constant of %zu numbers",
					       scales->name, na);
		memcpy(f, scales->fval, na * sizeof *f);
	} else if (sa && sa->type == OPGRAPH_ATTR_FLOATS && sa->nints == na) {
		memcpy(f, sa->floats, na * sizeof *f);
	} else {
		return shape_rule_fail(c, "neither scales nor sizes");
	}
	const struct opgraph_attr *ma = opgraph_attr(c->n, "coordinate_transformation_mode");
	int crop = ma && ma->type == OPGRAPH_ATTR_STRING && !strcmp(ma->s, "tf_crop_and_resize");
	if (crop && (!roi || !roi->fval || roi->nfval != 2 * na))
		return shape_rule_fail(c,
				       "tf_crop_and_resize without a constant roi of %zu numbers",
				       2 * na);
	for (size_t i = 0; i < na; i++) {
		double extent = crop ? roi->fval[na + i] - roi->fval[i] : 1.0;
		double d = floor((double)x->dims[axes[i]] * extent * f[i]);
		if (!(f[i] > 0) || !(d >= 0 && d < 9e18))
			return shape_rule_fail(c, "scale %g gives no size for dim %lld", f[i],
					       (long long)axes[i]);
		dims[axes[i]] = (int64_t)d;
	}
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* Tile: every dim times its constant repeat count. */
static int rule_tile(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t reps[OPGRAPH_MAX_DIMS], dims[OPGRAPH_MAX_DIMS];
	size_t nr;
	int found;
	if (!x || shape_rule_int_list(c, "repeats", 1, reps, OPGRAPH_MAX_DIMS, &nr, &found))
		return -1;
	if (nr != (size_t)x->ndim)
		return shape_rule_fail(c, "%zu repeats for rank %d", nr, x->ndim);
	for (int d = 0; d < x->ndim; d++) {
		if (reps[d] < 0)
			return shape_rule_fail(c, "repeat %lld is negative", (long long)reps[d]);
		dims[d] = opgraph_mul_sat(x->dims[d], reps[d]);
	}
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* DepthToSpace and SpaceToDepth: blocks of blocksize^2 channels to and from
 * space, on NCHW. */
static int rule_depth_space(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	int64_t b = opgraph_attr_int(c->n, "blocksize", 0), bb = opgraph_mul_sat(b, b);
	int to_space = !strcmp(c->n->op, "DepthToSpace");
	if (x->ndim != 4 || b < 1)
		return shape_rule_fail(c, "expected a rank-4 input and a positive blocksize");
	int64_t dims[4] = {x->dims[0], 0, 0, 0};
	if (to_space ? x->dims[1] % bb : x->dims[2] % b || x->dims[3] % b)
		return shape_rule_fail(c, "dims do not divide by blocksize %lld", (long long)b);
	dims[1] = to_space ? x->dims[1] / bb : opgraph_mul_sat(x->dims[1], bb);
	for (int d = 2; d < 4; d++)
		dims[d] = to_space ? opgraph_mul_sat(x->dims[d], b) : x->dims[d] / b;
	return shape_rule_set_output(c, 0, 4, dims, x->elem_type);
}

/* GatherElements: the shape of the indices. */
static int rule_gather_elements(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *idx = x ? shape_rule_input(c, 1) : NULL;
	if (!idx)
		return -1;
	if (idx->ndim != x->ndim)
		return shape_rule_fail(c, "indices of rank %d for data of rank %d", idx->ndim,
				       x->ndim);
	return shape_rule_set_output(c, 0, idx->ndim, idx->dims, x->elem_type);
}

/* OneHot: the indices' shape with a dim of the constant depth at axis. */
static int rule_one_hot(const struct shape_rule *c)
{
	const struct opgraph_value *idx = shape_rule_input(c, 0),
				   *depth = idx ? shape_rule_input(c, 1) : NULL,
				   *vals = depth ? shape_rule_input(c, 2) : NULL;
	if (!vals)
		return -1;
	int64_t axis, dims[OPGRAPH_MAX_DIMS], d;
	if (shape_rule_axis(c, opgraph_attr_int(c->n, "axis", -1), idx->ndim + 1, &axis))
		return -1;
	if (depth->ncval == 1)
		d = depth->cval[0];
	else if (depth->nfval == 1 && fabs(depth->fval[0]) < 9e18)
		d = (int64_t)depth->fval[0];
	else
		return shape_rule_fail(c, "depth '%s' is not a constant scalar", depth->name);
	if (d < 0)
		return shape_rule_fail(c, "depth %lld is negative", (long long)d);
	for (int i = 0, k = 0; i <= idx->ndim; i++)
		dims[i] = i == axis ? d : idx->dims[k++];
	return shape_rule_set_output(c, 0, idx->ndim + 1, dims, vals->elem_type);
}

const struct shape_rule_op shape_rule_layout[] = {
	{"Flatten", rule_flatten}, {"Reshape", rule_reshape}, {"Transpose", rule_transpose},
	{"Concat", rule_concat}, {"Squeeze", rule_squeeze}, {"Unsqueeze", rule_unsqueeze},
	{"Slice", rule_slice}, {"Split", rule_split}, {"Pad", rule_pad}, {"Resize", rule_resize},
	{"Upsample", rule_resize}, {"Tile", rule_tile}, {"DepthToSpace", rule_depth_space},
	{"SpaceToDepth", rule_depth_space}, {"GatherElements", rule_gather_elements},
	{"OneHot", rule_one_hot},
	{NULL, NULL},
};
