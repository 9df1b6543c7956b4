#include "shape_infer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The context of one node's rule: its graph, the node, and messages. */
struct ctx {
	struct om_graph *g;
	const struct om_node *n;
	struct sp_err *err;
};

/* Every message about a node starts the same way. */
static int node_fail(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int node_fail(const struct ctx *c, const char *fmt, ...)
{
	char what[SP_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return sp_fail(c->err, "%s: node '%s' (%s): %s", c->g->path, c->n->name, c->n->op, what);
}

static struct om_value *input(const struct ctx *c, size_t i)
{
	if (i >= c->n->nin || c->n->in[i] == OM_NONE) {
		node_fail(c, "input %zu is missing", i);
		return NULL;
	}
	struct om_value *v = &c->g->values[c->n->in[i]];
	if (v->ndim < 0) {
		node_fail(c, "input '%s' has no known shape", v->name);
		return NULL;
	}
	return v;
}

static struct om_value *output(const struct ctx *c, size_t i)
{
	return i < c->n->nout && c->n->out[i] != OM_NONE ? &c->g->values[c->n->out[i]] : NULL;
}

static int set_output(const struct ctx *c, size_t i, int ndim, const int64_t *dims, int elem_type)
{
	struct om_value *v = output(c, i);
	if (!v)
		return 0;
	if (ndim > OM_MAX_DIMS)
		return node_fail(c, "output '%s' would have %d dims, more than %d", v->name, ndim,
				 OM_MAX_DIMS);
	for (int d = 0; d < ndim; d++)
		if (dims[d] < 0)
			return node_fail(c, "output '%s' dim %d would be %lld", v->name, d,
					 (long long)dims[d]);
	if (ndim) /* dims may be NULL for a scalar */
		memmove(v->dims, dims, (size_t)ndim * sizeof *dims);
	v->ndim = ndim;
	if (elem_type)
		v->elem_type = elem_type;
	return 0;
}

/* Constant int64 contents for an output (copied; at most OM_CONST_MAX). */
static int set_cval(const struct ctx *c, size_t i, const int64_t *vals, size_t n)
{
	struct om_value *v = output(c, i);
	if (!v || n > OM_CONST_MAX)
		return 0;
	free(v->cval);
	v->cval = malloc((n ? n : 1) * sizeof *vals);
	if (!v->cval)
		return sp_fail(c->err, "%s: out of memory", c->g->path);
	memcpy(v->cval, vals, n * sizeof *vals);
	v->ncval = n;
	return 0;
}

static int norm_axis(const struct ctx *c, int64_t axis, int rank, int64_t *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return node_fail(c, "axis %lld is out of range for rank %d", (long long)axis, rank);
	*out = axis < 0 ? axis + rank : axis;
	return 0;
}

/* The int list of attribute name, or of constant input i when the
 * attribute is absent (opset 13 moved axes and the like to inputs).
 * *found 0: neither is there. */
static int int_list(const struct ctx *c, const char *name, size_t i, int64_t *out, size_t cap,
		    size_t *count, int *found)
{
	const struct om_attr *a = om_attr(c->n, name);
	const int64_t *src = NULL;
	size_t n = 0;
	*found = 1;
	if (a && a->type == OM_ATTR_INTS) {
		src = a->ints;
		n = a->nints;
	} else if (i < c->n->nin && c->n->in[i] != OM_NONE) {
		const struct om_value *v = &c->g->values[c->n->in[i]];
		if (!v->cval)
			return node_fail(c, "%s input '%s' is not a constant", name, v->name);
		src = v->cval;
		n = v->ncval;
	} else {
		*found = 0;
	}
	if (n > cap)
		return node_fail(c, "%s has %zu entries, more than %zu", name, n, cap);
	if (n)
		memcpy(out, src, n * sizeof *src);
	*count = n;
	return 0;
}

/* ---- elementwise ---- */

static int rule_same(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x || set_output(c, 0, x->ndim, x->dims, x->elem_type))
		return -1;
	/* Dropout's mask and the like have the input's shape too. */
	for (size_t i = 1; i < c->n->nout; i++)
		if (set_output(c, i, x->ndim, x->dims, 0))
			return -1;
	return 0;
}

/* Output 0 takes these dims, x's element type and x's constant contents
 * (the ops that only move or relabel data). */
static int set_output_keep(const struct ctx *c, const struct om_value *x, int ndim,
			   const int64_t *dims)
{
	if (set_output(c, 0, ndim, dims, x->elem_type))
		return -1;
	return x->cval ? set_cval(c, 0, x->cval, x->ncval) : 0;
}

static int rule_passthrough(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x || set_output_keep(c, x, x->ndim, x->dims))
		return -1;
	if (!strcmp(c->n->op, "Cast"))
		output(c, 0)->elem_type = (int)om_attr_int(c->n, "to", 0);
	return 0;
}

static void dims_text(const struct om_value *v, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	len += (size_t)snprintf(buf, size, "(");
	for (int d = 0; d < v->ndim && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "," : "",
					(long long)v->dims[d]);
	if (len < size)
		snprintf(buf + len, size - len, ")");
}

/* numpy broadcasting: the shape acc (ndim dims) with v's, into acc. */
static int broadcast_into(const struct ctx *c, int *ndim, int64_t *dims, const struct om_value *v)
{
	int r = v->ndim > *ndim ? v->ndim : *ndim;
	int64_t out[OM_MAX_DIMS];
	for (int d = 0; d < r; d++) {
		int da = d - (r - *ndim), db = d - (r - v->ndim);
		int64_t a = da >= 0 ? dims[da] : 1, b = db >= 0 ? v->dims[db] : 1;
		if (a != b && a != 1 && b != 1) {
			char sa[128], sb[128];
			struct om_value acc = {.ndim = *ndim};
			memcpy(acc.dims, dims, (size_t)*ndim * sizeof *dims);
			dims_text(&acc, sa, sizeof sa);
			dims_text(v, sb, sizeof sb);
			return node_fail(c, "shapes %s and %s ('%s') cannot broadcast", sa, sb,
					 v->name);
		}
		out[d] = a == 1 ? b : a;
	}
	*ndim = r;
	memcpy(dims, out, (size_t)r * sizeof *out);
	return 0;
}

/* One element of an int64 elementwise op; 0 when it has no int64 value
 * (another op, a division by zero, an overflow). */
static int fold_one(const char *op, const int64_t *x, int64_t *out)
{
	if (!strcmp(op, "Add"))
		return !__builtin_add_overflow(x[0], x[1], out);
	if (!strcmp(op, "Sub"))
		return !__builtin_sub_overflow(x[0], x[1], out);
	if (!strcmp(op, "Mul"))
		return !__builtin_mul_overflow(x[0], x[1], out);
	if (!strcmp(op, "Div")) {
		if (x[1] == 0 || (x[0] == INT64_MIN && x[1] == -1))
			return 0;
		*out = x[0] / x[1];
		return 1;
	}
	if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
		*out = (x[0] > x[1]) == !strcmp(op, "Max") ? x[0] : x[1];
		return 1;
	}
	if (!strcmp(op, "Equal")) {
		*out = x[0] == x[1];
		return 1;
	}
	if (!strcmp(op, "Where")) {
		*out = x[0] ? x[1] : x[2];
		return 1;
	}
	return 0;
}

/* Shape arithmetic: an elementwise op on int64 constants is evaluated when
 * every input is a scalar or has the output's element count (the 1-D shape
 * tensors of dynamic exports). */
static int fold_constants(const struct ctx *c)
{
	const struct om_value *y = output(c, 0);
	int64_t n = y ? om_value_numel(y) : 0, vals[OM_CONST_MAX];
	if (!y || n > OM_CONST_MAX || c->n->nin > 3)
		return 0;
	for (size_t i = 0; i < c->n->nin; i++) {
		const struct om_value *v = &c->g->values[c->n->in[i]];
		if (!v->cval || (v->ncval != 1 && (int64_t)v->ncval != n))
			return 0;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t x[3];
		for (size_t i = 0; i < c->n->nin; i++) {
			const struct om_value *v = &c->g->values[c->n->in[i]];
			x[i] = v->cval[v->ncval == 1 ? 0 : k];
		}
		if (!fold_one(c->n->op, x, &vals[k]))
			return 0;
	}
	return set_cval(c, 0, vals, (size_t)n);
}

/* numpy broadcasting of all inputs. */
static int rule_broadcast(const struct ctx *c)
{
	int64_t dims[OM_MAX_DIMS];
	int ndim = 0, elem = 0;
	if (!c->n->nin)
		return node_fail(c, "no inputs");
	for (size_t i = 0; i < c->n->nin; i++) {
		const struct om_value *v = input(c, i);
		if (!v || broadcast_into(c, &ndim, dims, v))
			return -1;
		/* Where's condition is bool; the result has the values' type. */
		if (!elem || (i == 1 && !strcmp(c->n->op, "Where")))
			elem = v->elem_type;
	}
	static const char *const compare[] = {"Equal", "Less", "Greater", "LessOrEqual",
					      "GreaterOrEqual", "And", "Or", "Xor", "Not"};
	for (size_t i = 0; i < sizeof compare / sizeof compare[0]; i++)
		if (!strcmp(c->n->op, compare[i]))
			elem = 9; /* BOOL */
	if (set_output(c, 0, ndim, dims, elem))
		return -1;
	return fold_constants(c);
}

/* Expand: x broadcast with the constant shape of input 1. */
static int rule_expand(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *s = x ? input(c, 1) : NULL;
	if (!s)
		return -1;
	if (!s->cval || s->ncval > OM_MAX_DIMS)
		return node_fail(c, "shape '%s' is not a constant of at most %d dims", s->name,
				 OM_MAX_DIMS);
	struct om_value target = {.name = s->name, .ndim = (int)s->ncval};
	memcpy(target.dims, s->cval, s->ncval * sizeof *s->cval);
	int64_t dims[OM_MAX_DIMS];
	int ndim = x->ndim;
	memcpy(dims, x->dims, sizeof dims);
	if (broadcast_into(c, &ndim, dims, &target))
		return -1;
	return set_output(c, 0, ndim, dims, x->elem_type);
}

/* ---- convolution and pooling ---- */

/* Output spatial dims of a sliding window: kernel k (nsp dims) over
 * x's dims from 2 on, with strides, dilations, pads and auto_pad. */
static int window(const struct ctx *c, const struct om_value *x, const int64_t *k, int nsp,
		  int ceil_mode, int64_t *out)
{
	int64_t strides[OM_MAX_DIMS], dil[OM_MAX_DIMS], pads[2 * OM_MAX_DIMS];
	size_t ns, nd, np;
	int found;
	if (int_list(c, "strides", OM_NONE, strides, OM_MAX_DIMS, &ns, &found) ||
	    int_list(c, "dilations", OM_NONE, dil, OM_MAX_DIMS, &nd, &found) ||
	    int_list(c, "pads", OM_NONE, pads, 2 * OM_MAX_DIMS, &np, &found))
		return -1;
	if ((ns && ns != (size_t)nsp) || (nd && nd != (size_t)nsp) || (np && np != 2 * (size_t)nsp))
		return node_fail(c, "strides, dilations or pads do not match %d spatial dims", nsp);
	const struct om_attr *ap = om_attr(c->n, "auto_pad");
	const char *auto_pad = ap && ap->type == OM_ATTR_STRING ? ap->s : "NOTSET";
	for (int d = 0; d < nsp; d++) {
		int64_t s = ns ? strides[d] : 1, dl = nd ? dil[d] : 1, in = x->dims[2 + d];
		if (s < 1 || dl < 1 || k[d] < 1 || (np && (pads[d] < 0 || pads[nsp + d] < 0)))
			return node_fail(c, "strides, dilations and kernel must be positive, pads not "
					 "negative");
		int64_t ext = om_add(om_mul(dl, k[d] - 1), 1);
		if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
			out[d] = in / s + (in % s != 0);
			continue;
		}
		int64_t pad = !strcmp(auto_pad, "VALID") || !np ? 0 : om_add(pads[d], pads[nsp + d]);
		if (strcmp(auto_pad, "VALID") && strcmp(auto_pad, "NOTSET"))
			return node_fail(c, "unknown auto_pad '%s'", auto_pad);
		int64_t span = om_add(in, pad) - ext;
		if (span < 0)
			return node_fail(c, "spatial dim %d: input %lld (padded %lld) is smaller than "
					 "the kernel extent %lld", d, (long long)in,
					 (long long)om_add(in, pad), (long long)ext);
		out[d] = span / s + (ceil_mode && span % s) + 1;
	}
	return 0;
}

static int rule_conv(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *w = x ? input(c, 1) : NULL;
	if (!w)
		return -1;
	if (x->ndim < 3 || w->ndim != x->ndim)
		return node_fail(c, "input rank %d and weight rank %d do not fit a convolution",
				 x->ndim, w->ndim);
	int64_t group = om_attr_int(c->n, "group", 1);
	if (group < 1 || x->dims[1] != om_mul(w->dims[1], group) || w->dims[0] % group)
		return node_fail(c, "input channels %lld are not weight channels %lld x group %lld "
				 "(or output channels %lld do not divide by it)",
				 (long long)x->dims[1], (long long)w->dims[1], (long long)group,
				 (long long)w->dims[0]);
	int nsp = x->ndim - 2;
	int64_t dims[OM_MAX_DIMS] = {x->dims[0], w->dims[0]};
	if (window(c, x, w->dims + 2, nsp, 0, dims + 2))
		return -1;
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_conv_transpose(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *w = x ? input(c, 1) : NULL;
	if (!w)
		return -1;
	int64_t group = om_attr_int(c->n, "group", 1);
	if (x->ndim < 3 || w->ndim != x->ndim || group < 1 || x->dims[1] != w->dims[0])
		return node_fail(c, "input channels %lld do not match weight dim 0 %lld",
				 (long long)x->dims[1], (long long)w->dims[0]);
	int nsp = x->ndim - 2;
	int64_t strides[OM_MAX_DIMS], dil[OM_MAX_DIMS], pads[2 * OM_MAX_DIMS],
		opad[OM_MAX_DIMS], oshape[OM_MAX_DIMS];
	size_t ns, nd, np, no, nshape;
	int found;
	if (int_list(c, "strides", OM_NONE, strides, OM_MAX_DIMS, &ns, &found) ||
	    int_list(c, "dilations", OM_NONE, dil, OM_MAX_DIMS, &nd, &found) ||
	    int_list(c, "pads", OM_NONE, pads, 2 * OM_MAX_DIMS, &np, &found) ||
	    int_list(c, "output_padding", OM_NONE, opad, OM_MAX_DIMS, &no, &found) ||
	    int_list(c, "output_shape", OM_NONE, oshape, OM_MAX_DIMS, &nshape, &found))
		return -1;
	int64_t dims[OM_MAX_DIMS] = {x->dims[0], om_mul(w->dims[1], group)};
	for (int d = 0; d < nsp; d++) {
		if (nshape == (size_t)nsp) {
			dims[2 + d] = oshape[d];
			continue;
		}
		int64_t s = ns > (size_t)d ? strides[d] : 1, dl = nd > (size_t)d ? dil[d] : 1;
		if (np != 2 * (size_t)nsp)
			pads[d] = pads[nsp + d] = 0;
		int64_t pad = om_add(pads[d], pads[nsp + d]);
		/* Saturating: strides and pads come from the file. */
		int64_t ext = om_add(om_mul(w->dims[2 + d] - 1, dl), 1);
		int64_t span = om_add(om_mul(s, x->dims[2 + d] - 1), no > (size_t)d ? opad[d] : 0);
		if (pads[d] < 0 || pads[nsp + d] < 0 || s < 1 || dl < 1)
			return node_fail(c, "negative pads, or strides or dilations below 1");
		dims[2 + d] = om_add(span, ext) - pad;
	}
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_pool(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	int64_t k[OM_MAX_DIMS];
	size_t nk;
	int found;
	if (int_list(c, "kernel_shape", OM_NONE, k, OM_MAX_DIMS, &nk, &found))
		return -1;
	if (x->ndim < 3 || nk != (size_t)(x->ndim - 2))
		return node_fail(c, "kernel_shape has %zu dims for an input of rank %d", nk, x->ndim);
	int64_t dims[OM_MAX_DIMS] = {x->dims[0], x->dims[1]};
	if (window(c, x, k, x->ndim - 2, (int)om_attr_int(c->n, "ceil_mode", 0), dims + 2) ||
	    set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	return set_output(c, 1, x->ndim, dims, 7); /* MaxPool's indices: int64 */
}

static int rule_global_pool(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	if (x->ndim < 3)
		return node_fail(c, "input rank %d, expected at least 3", x->ndim);
	int64_t dims[OM_MAX_DIMS] = {x->dims[0], x->dims[1], 1, 1, 1, 1, 1, 1};
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* ---- matrix products ---- */

static int rule_gemm(const struct ctx *c)
{
	const struct om_value *a = input(c, 0), *b = a ? input(c, 1) : NULL;
	if (!b)
		return -1;
	if (a->ndim != 2 || b->ndim != 2)
		return node_fail(c, "inputs of rank %d and %d, expected 2 and 2", a->ndim, b->ndim);
	int ta = om_attr_int(c->n, "transA", 0) != 0, tb = om_attr_int(c->n, "transB", 0) != 0;
	int64_t m = a->dims[ta], k = a->dims[!ta], kb = b->dims[tb], n = b->dims[!tb];
	if (k != kb)
		return node_fail(c, "inner dims %lld and %lld differ", (long long)k, (long long)kb);
	int64_t dims[2] = {m, n};
	return set_output(c, 0, 2, dims, a->elem_type);
}

static int rule_matmul(const struct ctx *c)
{
	const struct om_value *a = input(c, 0), *b = a ? input(c, 1) : NULL;
	if (!b)
		return -1;
	if (a->ndim < 1 || b->ndim < 1)
		return node_fail(c, "MatMul of a scalar");
	/* 1-D operands are promoted to matrices and the added dim removed after. */
	int64_t ad[OM_MAX_DIMS + 1], bd[OM_MAX_DIMS + 1];
	int ar = a->ndim, br = b->ndim;
	memcpy(ad, a->dims, sizeof a->dims);
	memcpy(bd, b->dims, sizeof b->dims);
	if (ar == 1) {
		ad[1] = ad[0];
		ad[0] = 1;
		ar = 2;
	}
	if (br == 1) {
		bd[1] = 1;
		br = 2;
	}
	if (ad[ar - 1] != bd[br - 2])
		return node_fail(c, "inner dims %lld and %lld differ", (long long)ad[ar - 1],
				 (long long)bd[br - 2]);
	int r = ar > br ? ar : br, nd = 0;
	int64_t dims[OM_MAX_DIMS + 1];
	for (int d = 0; d < r - 2; d++) {
		int da = d - (r - ar), db = d - (r - br);
		int64_t x = da >= 0 ? ad[da] : 1, y = db >= 0 ? bd[db] : 1;
		if (x != y && x != 1 && y != 1)
			return node_fail(c, "batch dims %lld and %lld cannot broadcast", (long long)x,
					 (long long)y);
		dims[nd++] = x == 1 ? y : x;
	}
	if (a->ndim > 1)
		dims[nd++] = ad[ar - 2];
	if (b->ndim > 1)
		dims[nd++] = bd[br - 1];
	return set_output(c, 0, nd, dims, a->elem_type);
}

/* ---- layout ---- */

static int rule_flatten(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	/* axis may be the rank itself: everything goes to the first dim. */
	int64_t axis = om_attr_int(c->n, "axis", 1);
	axis = axis < 0 ? axis + x->ndim : axis;
	if (axis < 0 || axis > x->ndim)
		return node_fail(c, "axis %lld is out of range for rank %d",
				 (long long)om_attr_int(c->n, "axis", 1), x->ndim);
	int64_t dims[2] = {1, 1};
	for (int d = 0; d < x->ndim; d++)
		dims[d >= axis] = om_mul(dims[d >= axis], x->dims[d]);
	return set_output(c, 0, 2, dims, x->elem_type);
}

static int rule_reshape(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *s = x ? input(c, 1) : NULL;
	if (!s)
		return -1;
	if (!s->cval)
		return node_fail(c, "target shape '%s' is not a constant", s->name);
	if (s->ncval > OM_MAX_DIMS)
		return node_fail(c, "target shape has %zu dims, more than %d", s->ncval, OM_MAX_DIMS);
	int allowzero = om_attr_int(c->n, "allowzero", 0) != 0;
	int64_t dims[OM_MAX_DIMS], known = 1, total = om_value_numel(x);
	int infer = -1;
	for (size_t d = 0; d < s->ncval; d++) {
		dims[d] = s->cval[d];
		if (dims[d] == 0 && !allowzero) {
			if ((int)d >= x->ndim)
				return node_fail(c, "target dim %zu is 0 but the input has rank %d", d,
						 x->ndim);
			dims[d] = x->dims[d];
		}
		if (dims[d] == -1) {
			if (infer >= 0)
				return node_fail(c, "target shape has two -1 dims");
			infer = (int)d;
		} else if (dims[d] < 0) {
			return node_fail(c, "target dim %zu is %lld", d, (long long)dims[d]);
		} else {
			known = om_mul(known, dims[d]);
		}
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			return node_fail(c, "cannot infer the -1 dim: %lld elements into blocks of %lld",
					 (long long)total, (long long)known);
		dims[infer] = total / known;
		known = total;
	}
	if (known != total)
		return node_fail(c, "%lld elements cannot take a shape of %lld", (long long)total,
				 (long long)known);
	return set_output_keep(c, x, (int)s->ncval, dims);
}

static int rule_transpose(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	int64_t perm[OM_MAX_DIMS], dims[OM_MAX_DIMS];
	size_t np;
	int found, seen = 0;
	if (int_list(c, "perm", OM_NONE, perm, OM_MAX_DIMS, &np, &found))
		return -1;
	if (!found)
		for (int d = 0; d < x->ndim; d++)
			perm[d] = x->ndim - 1 - d;
	else if (np != (size_t)x->ndim)
		return node_fail(c, "perm has %zu entries for rank %d", np, x->ndim);
	for (int d = 0; d < x->ndim; d++) {
		if (perm[d] < 0 || perm[d] >= x->ndim || (seen & (1 << perm[d])))
			return node_fail(c, "perm is not a permutation of 0..%d", x->ndim - 1);
		seen |= 1 << perm[d];
		dims[d] = x->dims[perm[d]];
	}
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

static int rule_concat(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t axis;
	if (!x || norm_axis(c, om_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	int64_t dims[OM_MAX_DIMS], vals[OM_CONST_MAX];
	size_t nvals = 0;
	int all_const = 1;
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = 0;
	for (size_t i = 0; i < c->n->nin; i++) {
		const struct om_value *v = input(c, i);
		if (!v)
			return -1;
		if (v->ndim != x->ndim)
			return node_fail(c, "input '%s' has rank %d, not %d", v->name, v->ndim, x->ndim);
		for (int d = 0; d < x->ndim; d++)
			if (d != axis && v->dims[d] != x->dims[d])
				return node_fail(c, "input '%s' dim %d is %lld, not %lld", v->name, d,
						 (long long)v->dims[d], (long long)x->dims[d]);
		dims[axis] = om_add(dims[axis], v->dims[axis]);
		if (!v->cval || x->ndim != 1 || nvals + v->ncval > OM_CONST_MAX) {
			all_const = 0;
		} else {
			memcpy(vals + nvals, v->cval, v->ncval * sizeof *vals);
			nvals += v->ncval;
		}
	}
	if (set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	return all_const ? set_cval(c, 0, vals, nvals) : 0;
}

/* The axes of Squeeze, Unsqueeze and the reductions (an attribute, or
 * input 1 from opset 13 or 18) as a bit mask over a rank of rank, plus
 * the axes' count when grows (Unsqueeze: the axes index the output). */
static int axes_mask(const struct ctx *c, int rank, int grows, int *mask, size_t *count,
		     int *found)
{
	int64_t axes[OM_MAX_DIMS];
	*mask = 0;
	if (int_list(c, "axes", 1, axes, OM_MAX_DIMS, count, found))
		return -1;
	rank += grows ? (int)*count : 0;
	if (rank > OM_MAX_DIMS)
		return node_fail(c, "the output would have %d dims, more than %d", rank, OM_MAX_DIMS);
	for (size_t i = 0; i < *count; i++) {
		int64_t a;
		if (norm_axis(c, axes[i], rank, &a))
			return -1;
		if (*mask & (1 << a))
			return node_fail(c, "axis %lld given twice", (long long)a);
		*mask |= 1 << a;
	}
	return 0;
}

static int rule_squeeze(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t dims[OM_MAX_DIMS];
	size_t na;
	int found, drop, nd = 0;
	if (!x || axes_mask(c, x->ndim, 0, &drop, &na, &found))
		return -1;
	for (int d = 0; d < x->ndim; d++) {
		if (na && (drop & (1 << d)) && x->dims[d] != 1)
			return node_fail(c, "cannot squeeze dim %d of size %lld", d,
					 (long long)x->dims[d]);
		if (!(na ? drop & (1 << d) : x->dims[d] == 1))
			dims[nd++] = x->dims[d];
	}
	return set_output_keep(c, x, nd, dims);
}

static int rule_unsqueeze(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t dims[OM_MAX_DIMS];
	size_t na;
	int found, add;
	if (!x || axes_mask(c, x->ndim, 1, &add, &na, &found))
		return -1;
	if (!found)
		return node_fail(c, "no axes");
	int r = x->ndim + (int)na;
	for (int d = 0, k = 0; d < r; d++)
		dims[d] = add & (1 << d) ? 1 : x->dims[k++];
	return set_output_keep(c, x, r, dims);
}

/* Slice (starts, ends, axes, steps as inputs from opset 10, attributes
 * before), with the clamping rules of the ONNX spec. */
static int rule_slice(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t starts[OM_MAX_DIMS], ends[OM_MAX_DIMS], axes[OM_MAX_DIMS], steps[OM_MAX_DIMS];
	size_t ns, ne, na, nst;
	int found;
	if (!x || int_list(c, "starts", 1, starts, OM_MAX_DIMS, &ns, &found) ||
	    int_list(c, "ends", 2, ends, OM_MAX_DIMS, &ne, &found) ||
	    int_list(c, "axes", 3, axes, OM_MAX_DIMS, &na, &found) ||
	    int_list(c, "steps", 4, steps, OM_MAX_DIMS, &nst, &found))
		return -1;
	if (ns != ne || (na && na != ns) || (nst && nst != ns))
		return node_fail(c, "starts, ends, axes and steps differ in length");
	int64_t dims[OM_MAX_DIMS], first = 0, step1 = 1;
	memcpy(dims, x->dims, sizeof dims);
	for (size_t i = 0; i < ns; i++) {
		int64_t axis, dim, step = nst ? steps[i] : 1;
		if (norm_axis(c, na ? axes[i] : (int64_t)i, x->ndim, &axis))
			return -1;
		if (step == 0)
			return node_fail(c, "step 0");
		dim = x->dims[axis];
		int64_t b = starts[i] < 0 ? om_add(starts[i], dim) : starts[i];
		int64_t e = ends[i] < 0 ? om_add(ends[i], dim) : ends[i];
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
	if (set_output(c, 0, x->ndim, dims, x->elem_type))
		return -1;
	if (!x->cval || x->ndim != 1)
		return 0;
	int64_t vals[OM_CONST_MAX];
	for (int64_t i = 0; i < dims[0]; i++)
		vals[i] = x->cval[first + i * step1];
	return set_cval(c, 0, vals, (size_t)dims[0]);
}

/* Split: sizes from the split attribute or input 1, else equal parts
 * (the last one smaller, as opset 18's num_outputs says). */
static int rule_split(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t axis, parts[OM_CONST_MAX];
	size_t np;
	int found;
	if (!x || norm_axis(c, om_attr_int(c->n, "axis", 0), x->ndim, &axis) ||
	    int_list(c, "split", 1, parts, OM_CONST_MAX, &np, &found))
		return -1;
	int64_t dim = x->dims[axis], total = 0;
	if (!np) {
		if (!c->n->nout || c->n->nout > OM_CONST_MAX)
			return node_fail(c, "%zu outputs", c->n->nout);
		np = c->n->nout;
		int64_t each = dim / (int64_t)np + (dim % (int64_t)np != 0);
		for (size_t i = 0; i < np; i++) {
			parts[i] = dim - total < each ? dim - total : each;
			total += parts[i];
		}
	} else {
		for (size_t i = 0; i < np; i++)
			total = parts[i] < 0 ? -1 : om_add(total, parts[i]);
	}
	if (np != c->n->nout || total != dim)
		return node_fail(c, "%zu parts summing to %lld for %zu outputs and a dim of %lld", np,
				 (long long)total, c->n->nout, (long long)dim);
	int64_t dims[OM_MAX_DIMS];
	memcpy(dims, x->dims, sizeof dims);
	for (size_t i = 0; i < np; i++) {
		dims[axis] = parts[i];
		if (set_output(c, i, x->ndim, dims, x->elem_type))
			return -1;
	}
	return 0;
}

static int rule_pad(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t pads[2 * OM_MAX_DIMS], dims[OM_MAX_DIMS];
	size_t np;
	int found;
	if (!x || int_list(c, "pads", 1, pads, 2 * OM_MAX_DIMS, &np, &found))
		return -1;
	if (c->n->nin > 3 && c->n->in[3] != OM_NONE)
		return node_fail(c, "the axes input is not supported");
	if (np != 2 * (size_t)x->ndim)
		return node_fail(c, "%zu pads for rank %d", np, x->ndim);
	for (int d = 0; d < x->ndim; d++)
		dims[d] = om_add(om_add(x->dims[d], pads[d]), pads[x->ndim + d]);
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* ---- shape arithmetic ---- */

static int rule_shape(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	int64_t start = om_attr_int(c->n, "start", 0), end = om_attr_int(c->n, "end", x->ndim);
	/* start and end clamp as slices do (opset 15). */
	start = start < 0 ? start + x->ndim : start;
	end = end < 0 ? end + x->ndim : end;
	start = start < 0 ? 0 : start > x->ndim ? x->ndim : start;
	end = end < start ? start : end > x->ndim ? x->ndim : end;
	int64_t n = end - start;
	if (set_output(c, 0, 1, &n, 7))
		return -1;
	return set_cval(c, 0, x->dims + start, (size_t)n);
}

static int rule_gather(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *idx = x ? input(c, 1) : NULL;
	int64_t axis;
	if (!idx || norm_axis(c, om_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	int r = x->ndim - 1 + idx->ndim, nd = 0;
	if (r > OM_MAX_DIMS)
		return node_fail(c, "output would have %d dims", r);
	int64_t dims[OM_MAX_DIMS];
	for (int d = 0; d < axis; d++)
		dims[nd++] = x->dims[d];
	for (int d = 0; d < idx->ndim; d++)
		dims[nd++] = idx->dims[d];
	for (int d = (int)axis + 1; d < x->ndim; d++)
		dims[nd++] = x->dims[d];
	if (set_output(c, 0, r, dims, x->elem_type))
		return -1;
	if (!x->cval || !idx->cval || x->ndim != 1)
		return 0;
	int64_t vals[OM_CONST_MAX];
	for (size_t i = 0; i < idx->ncval; i++) {
		int64_t k = idx->cval[i] < 0 ? idx->cval[i] + (int64_t)x->ncval : idx->cval[i];
		if (k < 0 || k >= (int64_t)x->ncval)
			return node_fail(c, "index %lld is out of range for %zu elements",
					 (long long)idx->cval[i], x->ncval);
		vals[i] = x->cval[k];
	}
	return set_cval(c, 0, vals, idx->ncval);
}

/* ConstantOfShape: dims from a constant; int64 contents when small
 * (the value tensor was loaded onto the output as one element). */
static int rule_constant_of_shape(const struct ctx *c)
{
	const struct om_value *s = input(c, 0);
	struct om_value *y = output(c, 0);
	if (!s || !y)
		return -1;
	if (!s->cval || s->ncval > OM_MAX_DIMS)
		return node_fail(c, "shape '%s' is not a constant of at most %d dims", s->name,
				 OM_MAX_DIMS);
	int64_t fill = y->cval && y->ncval == 1 ? y->cval[0] : 0;
	int is_int = y->cval != NULL;
	if (set_output(c, 0, (int)s->ncval, s->cval, y->elem_type ? y->elem_type : 1))
		return -1;
	int64_t n = om_value_numel(y), vals[OM_CONST_MAX];
	if (!is_int || n > OM_CONST_MAX)
		return 0;
	for (int64_t i = 0; i < n; i++)
		vals[i] = fill;
	return set_cval(c, 0, vals, (size_t)n);
}

/* Range on int64 scalars. */
static int rule_range(const struct ctx *c)
{
	const struct om_value *v[3];
	for (size_t i = 0; i < 3; i++) {
		v[i] = input(c, i);
		if (!v[i])
			return -1;
		if (!v[i]->cval || v[i]->ncval != 1)
			return node_fail(c, "'%s' is not a constant int64 scalar", v[i]->name);
	}
	int64_t start = v[0]->cval[0], limit = v[1]->cval[0], delta = v[2]->cval[0];
	if (delta == 0 || delta == INT64_MIN)
		return node_fail(c, "delta %lld", (long long)delta);
	/* the span may exceed int64: compute it in double, then check */
	double span = ((double)limit - (double)start) / (double)delta;
	if (span > 1e15)
		return node_fail(c, "more than 10^15 elements");
	int64_t n = span <= 0 ? 0 : (int64_t)ceil(span);
	if (set_output(c, 0, 1, &n, v[0]->elem_type))
		return -1;
	if (n > OM_CONST_MAX)
		return 0; /* the shape is what matters; large ranges keep no contents */
	int64_t vals[OM_CONST_MAX];
	for (int64_t i = 0; i < n; i++)
		vals[i] = om_add(start, om_mul(i, delta));
	return set_cval(c, 0, vals, (size_t)n);
}

/* Constant: a tensor attribute was loaded onto the output already;
 * value_int(s) and value_float(s) are made here. */
static int rule_constant(const struct ctx *c)
{
	struct om_value *y = output(c, 0);
	if (!y)
		return node_fail(c, "no output");
	const struct om_attr *a;
	if ((a = om_attr(c->n, "value_ints"))) {
		int64_t n = (int64_t)a->nints;
		return set_output(c, 0, 1, &n, 7) || set_cval(c, 0, a->ints, a->nints);
	}
	if ((a = om_attr(c->n, "value_int")))
		return set_output(c, 0, 0, NULL, 7) || set_cval(c, 0, &a->i, 1);
	if (om_attr(c->n, "value_float"))
		return set_output(c, 0, 0, NULL, 1);
	if (y->ndim < 0)
		return node_fail(c, "no value attribute this program reads");
	return 0;
}

static int rule_reduce(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t dims[OM_MAX_DIMS];
	size_t na;
	int found, red, nd = 0, keep = om_attr_int(c->n, "keepdims", 1) != 0;
	if (!x || axes_mask(c, x->ndim, 0, &red, &na, &found))
		return -1;
	if (!na && !om_attr_int(c->n, "noop_with_empty_axes", 0))
		red = (1 << x->ndim) - 1;
	for (int d = 0; d < x->ndim; d++)
		if (!(red & (1 << d)))
			dims[nd++] = x->dims[d];
		else if (keep)
			dims[nd++] = 1;
	return set_output(c, 0, nd, dims, x->elem_type);
}

struct rule {
	const char *op;
	int (*fn)(const struct ctx *c);
};

static const struct rule rules[] = {
	{"Identity", rule_passthrough}, {"Cast", rule_passthrough},
	{"Dropout", rule_same}, {"Relu", rule_same}, {"LeakyRelu", rule_same},
	{"Sigmoid", rule_same}, {"HardSigmoid", rule_same}, {"HardSwish", rule_same},
	{"Tanh", rule_same}, {"Clip", rule_same}, {"Exp", rule_same}, {"Log", rule_same},
	{"Sqrt", rule_same}, {"Reciprocal", rule_same}, {"Neg", rule_same}, {"Abs", rule_same},
	{"Erf", rule_same}, {"Gelu", rule_same}, {"Elu", rule_same}, {"Selu", rule_same},
	{"Softplus", rule_same}, {"Mish", rule_same}, {"Floor", rule_same}, {"Ceil", rule_same},
	{"Not", rule_same}, {"Softmax", rule_same}, {"LogSoftmax", rule_same},
	{"BatchNormalization", rule_same}, {"LayerNormalization", rule_same},
	{"InstanceNormalization", rule_same},
	{"Add", rule_broadcast}, {"Sub", rule_broadcast}, {"Mul", rule_broadcast},
	{"Div", rule_broadcast}, {"Pow", rule_broadcast}, {"Max", rule_broadcast},
	{"Min", rule_broadcast}, {"Sum", rule_broadcast}, {"Mean", rule_broadcast},
	{"Mod", rule_broadcast}, {"PRelu", rule_broadcast}, {"Where", rule_broadcast},
	{"Equal", rule_broadcast}, {"Less", rule_broadcast}, {"Greater", rule_broadcast},
	{"LessOrEqual", rule_broadcast}, {"GreaterOrEqual", rule_broadcast},
	{"And", rule_broadcast}, {"Or", rule_broadcast}, {"Xor", rule_broadcast},
	{"Conv", rule_conv}, {"ConvTranspose", rule_conv_transpose},
	{"MaxPool", rule_pool}, {"AveragePool", rule_pool}, {"LpPool", rule_pool},
	{"GlobalAveragePool", rule_global_pool}, {"GlobalMaxPool", rule_global_pool},
	{"Gemm", rule_gemm}, {"MatMul", rule_matmul},
	{"Flatten", rule_flatten}, {"Reshape", rule_reshape}, {"Transpose", rule_transpose},
	{"Concat", rule_concat}, {"Squeeze", rule_squeeze}, {"Unsqueeze", rule_unsqueeze},
	{"Shape", rule_shape}, {"Gather", rule_gather}, {"Constant", rule_constant},
	{"ReduceMean", rule_reduce}, {"ReduceSum", rule_reduce}, {"ReduceMax", rule_reduce},
	{"ReduceMin", rule_reduce}, {"Expand", rule_expand}, {"Slice", rule_slice},
	{"Split", rule_split}, {"Pad", rule_pad}, {"ConstantOfShape", rule_constant_of_shape},
	{"Range", rule_range},
};

static const struct rule *find_rule(const char *op)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(rules[i].op, op))
			return &rules[i];
	return NULL;
}

int si_knows_op(const char *op)
{
	return find_rule(op) != NULL;
}

static int apply_inputs(struct om_graph *g, const struct si_opts *o, struct sp_err *err)
{
	for (size_t k = 0; k < o->noverrides; k++) {
		const struct si_override *ov = &o->overrides[k];
		size_t *i = strmap_find(&g->names, ov->name, strlen(ov->name));
		if (!i || !g->values[*i].is_input)
			return sp_fail(err, "--input-shape: %s has no graph input '%s'", g->path,
				       ov->name);
		struct om_value *v = &g->values[*i];
		v->ndim = ov->ndim;
		memcpy(v->dims, ov->dims, (size_t)ov->ndim * sizeof *ov->dims);
	}
	for (size_t i = 0; i < g->nvalues; i++) {
		struct om_value *v = &g->values[i];
		if (!v->is_input)
			continue;
		int overridden = 0;
		for (size_t k = 0; k < o->noverrides; k++)
			overridden |= !strcmp(o->overrides[k].name, v->name);
		if (o->batch > 0 && !overridden && v->ndim >= 1)
			v->dims[0] = o->batch;
		if (v->ndim < 0)
			return sp_fail(err, "%s: input '%s' has no shape; give --input-shape", g->path,
				       v->name);
		for (int d = 0; d < v->ndim; d++)
			if (v->dims[d] < 0)
				return sp_fail(err, "%s: input '%s' dim %d is symbolic; give %s", g->path,
					       v->name, d, d ? "--input-shape" : "--batch or --input-shape");
	}
	return 0;
}

/* Kahn's algorithm over producer -> consumer edges. */
static int topo_order(const struct om_graph *g, size_t *order, struct sp_err *err)
{
	size_t *missing = calloc(g->nnodes + 1, sizeof *missing);
	size_t *nusers = calloc(g->nvalues + 1, sizeof *nusers);
	size_t *start = calloc(g->nvalues + 2, sizeof *start), *users = NULL;
	size_t nedges = 0, head = 0, tail = 0;
	int rc = -1;
	if (!missing || !nusers || !start)
		goto oom;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct om_node *n = &g->nodes[i];
		for (size_t k = 0; k < n->nin; k++) {
			if (n->in[k] == OM_NONE)
				continue;
			const struct om_value *v = &g->values[n->in[k]];
			if (v->producer == OM_NONE) {
				if (!v->is_initializer && !v->is_input) {
					rc = sp_fail(err, "%s: node '%s' (%s): input '%s' is never produced",
						     g->path, n->name, n->op, v->name);
					goto done;
				}
				continue;
			}
			missing[i]++;
			nusers[n->in[k]]++;
			nedges++;
		}
	}
	for (size_t v = 0; v < g->nvalues; v++)
		start[v + 1] = start[v] + nusers[v];
	users = malloc((nedges ? nedges : 1) * sizeof *users);
	if (!users)
		goto oom;
	memset(nusers, 0, (g->nvalues + 1) * sizeof *nusers);
	for (size_t i = 0; i < g->nnodes; i++)
		for (size_t k = 0; k < g->nodes[i].nin; k++) {
			size_t v = g->nodes[i].in[k];
			if (v != OM_NONE && g->values[v].producer != OM_NONE)
				users[start[v] + nusers[v]++] = i;
		}
	for (size_t i = 0; i < g->nnodes; i++)
		if (!missing[i])
			order[tail++] = i;
	while (head < tail) {
		const struct om_node *n = &g->nodes[order[head++]];
		for (size_t k = 0; k < n->nout; k++) {
			size_t v = n->out[k];
			if (v == OM_NONE)
				continue;
			for (size_t u = start[v]; u < start[v + 1]; u++)
				if (--missing[users[u]] == 0)
					order[tail++] = users[u];
		}
	}
	if (tail < g->nnodes) {
		for (size_t i = 0; i < g->nnodes; i++)
			if (missing[i]) {
				rc = sp_fail(err, "%s: the graph has a cycle through node '%s' (%s)",
					     g->path, g->nodes[i].name, g->nodes[i].op);
				break;
			}
		goto done;
	}
	rc = 0;
	goto done;
oom:
	rc = sp_fail(err, "%s: out of memory", g->path);
done:
	free(missing);
	free(nusers);
	free(start);
	free(users);
	return rc;
}

int shape_infer(struct om_graph *g, const struct si_opts *o, size_t *order,
		unsigned char *unknown, struct sp_err *err)
{
	if (apply_inputs(g, o, err) || topo_order(g, order, err))
		return -1;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct om_node *n = &g->nodes[order[i]];
		struct ctx c = {g, n, err};
		const struct rule *r = find_rule(n->op);
		unknown[order[i]] = !r;
		if (!r && !o->allow_unknown)
			return node_fail(&c, "no shape rule for this op (--allow-unknown counts it as "
					 "zero)");
		if (r && r->fn(&c))
			return -1;
	}
	return 0;
}

int si_parse_dims(const char *text, const char *option, int *ndim, int64_t *dims,
		  struct sp_err *err)
{
	const char *p = text;
	*ndim = 0;
	for (;;) {
		char *end;
		int64_t v;
		size_t len = strcspn(p, "x");
		char part[32];
		if (len == 0 || len >= sizeof part || *ndim == OM_MAX_DIMS)
			return sp_fail(err, "%s: '%s' is not dims like 1x3x224x224 (at most %d)",
				       option, text, OM_MAX_DIMS);
		memcpy(part, p, len);
		part[len] = '\0';
		v = strtoll(part, &end, 10);
		if (*end || v < 1 || part[0] == '+' || part[0] == ' ')
			return sp_fail(err, "%s: dim '%s' in '%s' is not a positive integer", option,
				       part, text);
		dims[(*ndim)++] = v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
