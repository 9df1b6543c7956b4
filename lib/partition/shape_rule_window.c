/* Shape rules of the sliding-window ops: convolution, transposed
 * convolution and pooling (strides, dilations, pads, auto_pad, ceil_mode),
 * and the global pools. */
#include "partition/shape_rule.h"

#include <string.h>

/* Output spatial dims of a sliding window: kernel k (nsp dims) over
 * x's dims from 2 on, with strides, dilations, pads and auto_pad. */
static int window(const struct shape_rule *c, const struct opgraph_value *x, const int64_t *k,
		  int nsp, int ceil_mode, int64_t *out)
{
	int64_t strides[OPGRAPH_MAX_DIMS], dil[OPGRAPH_MAX_DIMS], pads[2 * OPGRAPH_MAX_DIMS];
	size_t ns, nd, np;
	int found;
	if (shape_rule_int_list(c, "strides", OPGRAPH_NONE, strides, OPGRAPH_MAX_DIMS, &ns,
				&found) ||
	    shape_rule_int_list(c, "dilations", OPGRAPH_NONE, dil, OPGRAPH_MAX_DIMS, &nd, &found) ||
	    shape_rule_int_list(c, "pads", OPGRAPH_NONE, pads, 2 * OPGRAPH_MAX_DIMS, &np, &found))
		return -1;
	if ((ns && ns != (size_t)nsp) || (nd && nd != (size_t)nsp) || (np && np != 2 * (size_t)nsp))
		return shape_rule_fail(c, "strides, dilations or pads do not match %d spatial dims",
				       nsp);
	const struct opgraph_attr *ap = opgraph_attr(c->n, "auto_pad");
	const char *auto_pad = ap && ap->type == OPGRAPH_ATTR_STRING ? ap->s : "NOTSET";
	for (int d = 0; d < nsp; d++) {
		int64_t s = ns ? strides[d] : 1, dl = nd ? dil[d] : 1, in = x->dims[2 + d];
		if (s < 1 || dl < 1 || k[d] < 1 || (np && (pads[d] < 0 || pads[nsp + d] < 0)))
			return shape_rule_fail(c, "strides, dilations and kernel must be positive, "
						  "pads not "
						  "negative");
		int64_t ext = opgraph_add_sat(opgraph_mul_sat(dl, k[d] - 1), 1);
		if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
			out[d] = in / s + (in % s != 0);
			continue;
		}
		int64_t pad = !strcmp(auto_pad, "VALID") || !np
				      ? 0
				      : opgraph_add_sat(pads[d], pads[nsp + d]);
		if (strcmp(auto_pad, "VALID") && strcmp(auto_pad, "NOTSET"))
			return shape_rule_fail(c, "unknown auto_pad '%s'", auto_pad);
		int64_t span = opgraph_add_sat(in, pad) - ext;
		if (span < 0)
			return shape_rule_fail(c,
					       "spatial dim %d: input %lld (padded %lld) is "
					       "smaller than "
					       "the kernel extent %lld",
					       d, (long long)in,
					       (long long)opgraph_add_sat(in, pad), (long long)ext);
		out[d] = span / s + (ceil_mode && span % s) + 1;
	}
	return 0;
}

/* kernel_shape, which Conv and ConvTranspose may give beside their weight,
 * says the weight's spatial dims again: it must agree with them. */
static int check_kernel_shape(const struct shape_rule *c, const struct opgraph_value *w)
{
	int64_t k[OPGRAPH_MAX_DIMS];
	size_t nk;
	int found;
	if (shape_rule_int_list(c, "kernel_shape", OPGRAPH_NONE, k, OPGRAPH_MAX_DIMS, &nk, &found))
		return -1;
	if (!found)
		return 0;
	if (nk != (size_t)(w->ndim - 2))
		return shape_rule_fail(c, "kernel_shape has %zu dims, the weight %d spatial dims", nk,
				       w->ndim - 2);
	for (size_t d = 0; d < nk; d++)
		if (w->dims[2 + d] >= 0 && k[d] != w->dims[2 + d])
			return shape_rule_fail(c,
					       "kernel_shape[%zu] is %lld, the weight's spatial dim "
					       "is %lld",
					       d, (long long)k[d], (long long)w->dims[2 + d]);
	return 0;
}

static int rule_conv(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *w = x ? shape_rule_input(c, 1) : NULL;
	if (!w)
		return -1;
	if (x->ndim < 3 || w->ndim != x->ndim)
		return shape_rule_fail(c,
				       "input rank %d and weight rank %d do not fit a convolution",
				       x->ndim, w->ndim);
	if (check_kernel_shape(c, w))
		return -1;
	int64_t group = opgraph_attr_int(c->n, "group", 1);
	if (group < 1 || x->dims[1] != opgraph_mul_sat(w->dims[1], group) || w->dims[0] % group)
		return shape_rule_fail(c,
				       "input channels %lld are not weight channels %lld x group "
				       "%lld "
				       "(or output channels %lld do not divide by it)",
				       (long long)x->dims[1], (long long)w->dims[1],
				       (long long)group, (long long)w->dims[0]);
	int nsp = x->ndim - 2;
	int64_t dims[OPGRAPH_MAX_DIMS] = {x->dims[0], w->dims[0]};
	if (window(c, x, w->dims + 2, nsp, 0, dims + 2))
		return -1;
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_conv_transpose(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *w = x ? shape_rule_input(c, 1) : NULL;
	if (!w)
		return -1;
	int64_t group = opgraph_attr_int(c->n, "group", 1);
	if (x->ndim < 3 || w->ndim != x->ndim || group < 1 || x->dims[1] != w->dims[0])
		return shape_rule_fail(c, "input channels %lld do not match weight dim 0 %lld",
				       (long long)x->dims[1], (long long)w->dims[0]);
	if (check_kernel_shape(c, w))
		return -1;
	int nsp = x->ndim - 2;
	int64_t strides[OPGRAPH_MAX_DIMS], dil[OPGRAPH_MAX_DIMS], pads[2 * OPGRAPH_MAX_DIMS],
		opad[OPGRAPH_MAX_DIMS], oshape[OPGRAPH_MAX_DIMS];
	size_t ns, nd, np, no, nshape;
	int found;
	if (shape_rule_int_list(c, "strides", OPGRAPH_NONE, strides, OPGRAPH_MAX_DIMS, &ns,
				&found) ||
	    shape_rule_int_list(c, "dilations", OPGRAPH_NONE, dil, OPGRAPH_MAX_DIMS, &nd, &found) ||
	    shape_rule_int_list(c, "pads", OPGRAPH_NONE, pads, 2 * OPGRAPH_MAX_DIMS, &np, &found) ||
	    shape_rule_int_list(c, "output_padding", OPGRAPH_NONE, opad, OPGRAPH_MAX_DIMS, &no,
				&found) ||
	    shape_rule_int_list(c, "output_shape", OPGRAPH_NONE, oshape, OPGRAPH_MAX_DIMS, &nshape,
				&found))
		return -1;
	const struct opgraph_attr *ap = opgraph_attr(c->n, "auto_pad");
	const char *auto_pad = ap && ap->type == OPGRAPH_ATTR_STRING ? ap->s : "NOTSET";
	int same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
	if (!same && strcmp(auto_pad, "VALID") && strcmp(auto_pad, "NOTSET"))
		return shape_rule_fail(c, "unknown auto_pad '%s'", auto_pad);
	if (!strcmp(auto_pad, "VALID"))
		np = 0;
	int64_t dims[OPGRAPH_MAX_DIMS] = {x->dims[0], opgraph_mul_sat(w->dims[1], group)};
	for (int d = 0; d < nsp; d++) {
		int64_t s = ns > (size_t)d ? strides[d] : 1, dl = nd > (size_t)d ? dil[d] : 1;
		if (nshape == (size_t)nsp || same) { /* the pads are derived from the output */
			dims[2 + d] = same ? opgraph_mul_sat(x->dims[2 + d], s) : oshape[d];
			continue;
		}
		if (np != 2 * (size_t)nsp)
			pads[d] = pads[nsp + d] = 0;
		int64_t pad = opgraph_add_sat(pads[d], pads[nsp + d]);
		/* Saturating: strides and pads come from the file. */
		int64_t ext = opgraph_add_sat(opgraph_mul_sat(w->dims[2 + d] - 1, dl), 1);
		int64_t span = opgraph_add_sat(opgraph_mul_sat(s, x->dims[2 + d] - 1),
					       no > (size_t)d ? opad[d] : 0);
		if (pads[d] < 0 || pads[nsp + d] < 0 || s < 1 || dl < 1)
			return shape_rule_fail(c, "negative pads, or strides or dilations below 1");
		dims[2 + d] = opgraph_add_sat(span, ext) - pad;
	}
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_pool(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	int64_t k[OPGRAPH_MAX_DIMS];
	size_t nk;
	int found;
	if (shape_rule_int_list(c, "kernel_shape", OPGRAPH_NONE, k, OPGRAPH_MAX_DIMS, &nk, &found))
		return -1;
	if (x->ndim < 3 || nk != (size_t)(x->ndim - 2))
		return shape_rule_fail(c, "kernel_shape has %zu dims for an input of rank %d", nk,
				       x->ndim);
	int64_t dims[OPGRAPH_MAX_DIMS] = {x->dims[0], x->dims[1]};
	if (window(c, x, k, x->ndim - 2, (int)opgraph_attr_int(c->n, "ceil_mode", 0), dims + 2) ||
	    shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	return shape_rule_set_output(c, 1, x->ndim, dims, 7); /* MaxPool's indices: int64 */
}

static int rule_global_pool(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x)
		return -1;
	if (x->ndim < 3)
		return shape_rule_fail(c, "input rank %d, expected at least 3", x->ndim);
	int64_t dims[OPGRAPH_MAX_DIMS] = {x->dims[0], x->dims[1], 1, 1, 1, 1, 1, 1};
	return shape_rule_set_output(c, 0, x->ndim, dims, x->elem_type);
}

const struct shape_rule_op shape_rule_window[] = {
	{"Conv", rule_conv}, {"ConvTranspose", rule_conv_transpose}, {"MaxPool", rule_pool},
	{"AveragePool", rule_pool}, {"LpPool", rule_pool}, {"GlobalAveragePool", rule_global_pool},
	{"GlobalMaxPool", rule_global_pool}, {"GlobalLpPool", rule_global_pool},
	{NULL, NULL},
};
