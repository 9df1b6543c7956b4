#include "partition/shape_infer.h"

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

/* Where a node is: the file, and the line for a YAML model's node. */
static const char *node_where(const struct om_graph *g, const struct om_node *n, char *buf,
			      size_t size)
{
	if (n->line)
		snprintf(buf, size, "%s:%zu", g->path, n->line);
	else
		snprintf(buf, size, "%s", g->path);
	return buf;
}

/* Every message about a node starts the same way. */
static int node_fail(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int node_fail(const struct ctx *c, const char *fmt, ...)
{
	char what[SP_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	char at[300];
	return sp_fail(c->err, "%s: node '%s' (%s): %s", node_where(c->g, c->n, at, sizeof at),
		       c->n->name, c->n->op, what);
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

/* Constant contents for an output (copied; more than OM_CONST_MAX keep none). */
static int set_cval(const struct ctx *c, size_t i, const int64_t *vals, size_t n)
{
	struct om_value *v = output(c, i);
	if (v && om_value_set(v, vals, NULL, n))
		return sp_fail(c->err, "%s: out of memory", c->g->path);
	return 0;
}

static int set_fval(const struct ctx *c, size_t i, const double *vals, size_t n)
{
	struct om_value *v = output(c, i);
	if (v && om_value_set(v, NULL, vals, n))
		return sp_fail(c->err, "%s: out of memory", c->g->path);
	return 0;
}

/* ONNX's integer element types (TensorProto.DataType), whose constants are
 * carried as int64; the floating-point ones are carried as double. */
static int is_integral(int elem_type)
{
	return elem_type == 2 || elem_type == 3 || elem_type == 4 || elem_type == 5 ||
	       elem_type == 6 || elem_type == 7 || elem_type == 9 || elem_type == 12 ||
	       elem_type == 13;
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

/* Output 0 takes these dims, x's element type and x's constant contents
 * (the ops that only move or relabel data). */
static int set_output_keep(const struct ctx *c, const struct om_value *x, int ndim,
			   const int64_t *dims)
{
	if (set_output(c, 0, ndim, dims, x->elem_type))
		return -1;
	return x->cval ? set_cval(c, 0, x->cval, x->ncval)
	       : x->fval ? set_fval(c, 0, x->fval, x->nfval) : 0;
}

/* Identity and Cast; Cast converts constants between integers and floating
 * point (toward zero, as C and numpy's astype do). */
static int rule_passthrough(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x || set_output_keep(c, x, x->ndim, x->dims))
		return -1;
	if (strcmp(c->n->op, "Cast"))
		return 0;
	struct om_value *y = output(c, 0);
	if (!y) /* its output left out (""): nothing to type */
		return 0;
	int to = (int)om_attr_int(c->n, "to", 0);
	y->elem_type = to;
	int64_t ints[OM_CONST_MAX];
	double floats[OM_CONST_MAX];
	if (x->cval && !is_integral(to)) {
		for (size_t i = 0; i < x->ncval; i++)
			floats[i] = (double)x->cval[i];
		return set_fval(c, 0, floats, x->ncval);
	}
	if (x->fval && is_integral(to)) {
		for (size_t i = 0; i < x->nfval; i++) {
			if (!(fabs(x->fval[i]) < 9.2e18)) /* NaN, infinities, beyond int64 */
				return set_cval(c, 0, NULL, OM_CONST_MAX + 1);
			ints[i] = (int64_t)x->fval[i];
		}
		return set_cval(c, 0, ints, x->nfval);
	}
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

/* One element of an integer elementwise op; 0 when it has no integer value
 * (another op, a division by zero, an overflow). */
static int fold_int(const struct om_node *n, const int64_t *x, int64_t *out)
{
	const char *op = n->op;
	if (!strcmp(op, "Add"))
		return !__builtin_add_overflow(x[0], x[1], out);
	if (!strcmp(op, "Sub"))
		return !__builtin_sub_overflow(x[0], x[1], out);
	if (!strcmp(op, "Mul"))
		return !__builtin_mul_overflow(x[0], x[1], out);
	if (!strcmp(op, "Div") || !strcmp(op, "Mod")) {
		if (x[1] == 0 || (x[0] == INT64_MIN && x[1] == -1))
			return 0;
		*out = !strcmp(op, "Div") ? x[0] / x[1] : x[0] % x[1];
		/* Mod without fmod takes the divisor's sign, as Python's % does */
		if (!strcmp(op, "Mod") && !om_attr_int(n, "fmod", 0) && *out && (*out < 0) != (x[1] < 0))
			*out += x[1];
		return 1;
	}
	if (!strcmp(op, "Neg") || !strcmp(op, "Abs")) {
		*out = !strcmp(op, "Abs") && x[0] >= 0 ? x[0] : -x[0];
		return x[0] != INT64_MIN;
	}
	if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
		*out = (x[0] > x[1]) == !strcmp(op, "Max") ? x[0] : x[1];
		return 1;
	}
	if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater")) {
		*out = op[0] == 'E' ? x[0] == x[1] : op[0] == 'L' ? x[0] < x[1] : x[0] > x[1];
		return 1;
	}
	if (!strcmp(op, "Where")) {
		*out = x[0] ? x[1] : x[2];
		return 1;
	}
	return 0;
}

/* The same in floating point (scales and sizes computed from shapes). */
static int fold_float(const char *op, const double *x, double *out)
{
	static const char *const unary[] = {"Neg", "Abs", "Sqrt", "Floor", "Ceil", "Reciprocal"};
	static double (*const unary_fn[])(double) = {NULL, fabs, sqrt, floor, ceil, NULL};
	for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
		if (!strcmp(op, unary[i])) {
			*out = unary_fn[i] ? unary_fn[i](x[0]) : i == 0 ? -x[0] : 1.0 / x[0];
			return 1;
		}
	if (!strcmp(op, "Add"))
		*out = x[0] + x[1];
	else if (!strcmp(op, "Sub"))
		*out = x[0] - x[1];
	else if (!strcmp(op, "Mul"))
		*out = x[0] * x[1];
	else if (!strcmp(op, "Div"))
		*out = x[0] / x[1];
	else if (!strcmp(op, "Pow"))
		*out = pow(x[0], x[1]);
	else if (!strcmp(op, "Max") || !strcmp(op, "Min"))
		*out = (x[0] > x[1]) == !strcmp(op, "Max") ? x[0] : x[1];
	else if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater"))
		*out = op[0] == 'E' ? x[0] == x[1] : op[0] == 'L' ? x[0] < x[1] : x[0] > x[1];
	else if (!strcmp(op, "Where"))
		*out = x[0] != 0 ? x[1] : x[2];
	else
		return 0;
	return 1;
}

/* Shape arithmetic: an elementwise op on constants is evaluated when every
 * input is a scalar or has the output's element count (the 1-D shape
 * tensors of dynamic exports); in integers when every input is one, else
 * in double. */
static int fold_constants(const struct ctx *c)
{
	const struct om_value *y = output(c, 0);
	int64_t n = y ? om_value_numel(y) : 0, ivals[OM_CONST_MAX];
	double fvals[OM_CONST_MAX];
	int all_int = 1;
	if (!y || n > OM_CONST_MAX || !c->n->nin || c->n->nin > 3)
		return 0;
	for (size_t i = 0; i < c->n->nin; i++) {
		if (c->n->in[i] == OM_NONE) /* an input left out (""): nothing to fold */
			return 0;
		const struct om_value *v = &c->g->values[c->n->in[i]];
		size_t count = v->cval ? v->ncval : v->nfval;
		if ((!v->cval && !v->fval) || (count != 1 && (int64_t)count != n))
			return 0;
		all_int &= v->cval != NULL;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t xi[3];
		double xf[3];
		for (size_t i = 0; i < c->n->nin; i++) {
			const struct om_value *v = &c->g->values[c->n->in[i]];
			size_t at = (v->cval ? v->ncval : v->nfval) == 1 ? 0 : (size_t)k;
			xi[i] = v->cval ? v->cval[at] : 0;
			xf[i] = v->cval ? (double)v->cval[at] : v->fval[at];
		}
		if (all_int ? !fold_int(c->n, xi, &ivals[k]) : !fold_float(c->n->op, xf, &fvals[k]))
			return 0;
		if (!all_int && is_integral(y->elem_type)) /* a comparison's bool */
			ivals[k] = fvals[k] != 0;
	}
	return all_int || is_integral(y->elem_type) ? set_cval(c, 0, ivals, (size_t)n)
						     : set_fval(c, 0, fvals, (size_t)n);
}

/* Unary ops: the input's shape (and every output's). */
static int rule_same(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x || set_output(c, 0, x->ndim, x->dims, x->elem_type))
		return -1;
	/* Dropout's mask and the like have the input's shape too. */
	for (size_t i = 1; i < c->n->nout; i++)
		if (set_output(c, i, x->ndim, x->dims, 0))
			return -1;
	return fold_constants(c); /* Neg, Sqrt, Floor ... of a constant */
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
	const struct om_attr *ap = om_attr(c->n, "auto_pad");
	const char *auto_pad = ap && ap->type == OM_ATTR_STRING ? ap->s : "NOTSET";
	int same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
	if (!same && strcmp(auto_pad, "VALID") && strcmp(auto_pad, "NOTSET"))
		return node_fail(c, "unknown auto_pad '%s'", auto_pad);
	if (!strcmp(auto_pad, "VALID"))
		np = 0;
	int64_t dims[OM_MAX_DIMS] = {x->dims[0], om_mul(w->dims[1], group)};
	for (int d = 0; d < nsp; d++) {
		int64_t s = ns > (size_t)d ? strides[d] : 1, dl = nd > (size_t)d ? dil[d] : 1;
		if (nshape == (size_t)nsp || same) { /* the pads are derived from the output */
			dims[2 + d] = same ? om_mul(x->dims[2 + d], s) : oshape[d];
			continue;
		}
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

/* Pad: pads from the attribute (opset 2-10) or input 1, over every axis or
 * over the axes of input 3 (opset 18). */
static int rule_pad(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t pads[2 * OM_MAX_DIMS], axes[OM_MAX_DIMS], dims[OM_MAX_DIMS];
	size_t np, na = 0;
	int found;
	if (!x || int_list(c, "pads", 1, pads, 2 * OM_MAX_DIMS, &np, &found) ||
	    (c->n->nin > 3 && int_list(c, "axes", 3, axes, OM_MAX_DIMS, &na, &found)))
		return -1;
	if (!na)
		for (int d = 0; d < x->ndim; d++)
			axes[na++] = d;
	if (np != 2 * na)
		return node_fail(c, "%zu pads for %zu axes", np, na);
	memcpy(dims, x->dims, sizeof dims);
	int seen = 0;
	for (size_t i = 0; i < na; i++) {
		int64_t axis;
		if (norm_axis(c, axes[i], x->ndim, &axis))
			return -1;
		if (seen & (1 << axis))
			return node_fail(c, "axis %lld given twice", (long long)axis);
		seen |= 1 << axis;
		dims[axis] = om_add(om_add(x->dims[axis], pads[i]), pads[na + i]);
	}
	return set_output(c, 0, x->ndim, dims, x->elem_type);
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
static int rule_resize(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	int v10 = !strcmp(c->n->op, "Upsample") || c->g->opset == 10;
	size_t iroi = v10 ? OM_NONE : 1, iscales = v10 ? 1 : 2, isizes = v10 ? OM_NONE : 3;
	const struct om_value *scales = NULL, *sizes = NULL, *roi = NULL;
	if (iscales < c->n->nin && c->n->in[iscales] != OM_NONE)
		scales = &c->g->values[c->n->in[iscales]];
	if (isizes < c->n->nin && c->n->in[isizes] != OM_NONE)
		sizes = &c->g->values[c->n->in[isizes]];
	if (iroi < c->n->nin && c->n->in[iroi] != OM_NONE)
		roi = &c->g->values[c->n->in[iroi]];
	/* an empty scales tensor (a placeholder beside sizes) counts as absent */
	if (scales && sizes && om_value_numel(scales) == 0)
		scales = NULL;
	int64_t axes[OM_MAX_DIMS];
	size_t na;
	int found;
	if (int_list(c, "axes", OM_NONE, axes, OM_MAX_DIMS, &na, &found))
		return -1;
	if (!na)
		for (int d = 0; d < x->ndim; d++)
			axes[na++] = d;
	for (size_t i = 0; i < na; i++)
		if (norm_axis(c, axes[i], x->ndim, &axes[i]))
			return -1;
	double f[OM_MAX_DIMS];
	const struct om_attr *sa = om_attr(c->n, "scales");
	int64_t dims[OM_MAX_DIMS];
	memcpy(dims, x->dims, sizeof dims);
	if (sizes) {
		if (!sizes->cval || sizes->ncval != na)
			return node_fail(c, "sizes '%s' is not a constant of %zu integers", sizes->name,
					 na);
		const struct om_attr *pa = om_attr(c->n, "keep_aspect_ratio_policy");
		const char *policy = pa && pa->type == OM_ATTR_STRING ? pa->s : "stretch";
		int larger = !strcmp(policy, "not_smaller");
		if (strcmp(policy, "stretch") && !larger && strcmp(policy, "not_larger"))
			return node_fail(c, "unknown keep_aspect_ratio_policy '%s'", policy);
		double scale = larger ? 0 : HUGE_VAL;
		for (size_t i = 0; i < na; i++) {
			if (sizes->cval[i] < 0)
				return node_fail(c, "size %lld is negative", (long long)sizes->cval[i]);
			double r = x->dims[axes[i]] ? (double)sizes->cval[i] / (double)x->dims[axes[i]]
						    : 1.0;
			scale = larger ? fmax(scale, r) : fmin(scale, r);
			dims[axes[i]] = sizes->cval[i];
		}
		if (strcmp(policy, "stretch"))
			for (size_t i = 0; i < na; i++)
				dims[axes[i]] = round_half_up(scale * (double)x->dims[axes[i]]);
		return set_output(c, 0, x->ndim, dims, x->elem_type);
	}
	if (scales) {
		if (!scales->fval || scales->nfval != na)
			return node_fail(c, "scales '%s' is not a constant of %zu numbers", scales->name,
					 na);
		memcpy(f, scales->fval, na * sizeof *f);
	} else if (sa && sa->type == OM_ATTR_FLOATS && sa->nints == na) {
		memcpy(f, sa->floats, na * sizeof *f);
	} else {
		return node_fail(c, "neither scales nor sizes");
	}
	const struct om_attr *ma = om_attr(c->n, "coordinate_transformation_mode");
	int crop = ma && ma->type == OM_ATTR_STRING && !strcmp(ma->s, "tf_crop_and_resize");
	if (crop && (!roi || !roi->fval || roi->nfval != 2 * na))
		return node_fail(c, "tf_crop_and_resize without a constant roi of %zu numbers", 2 * na);
	for (size_t i = 0; i < na; i++) {
		double extent = crop ? roi->fval[na + i] - roi->fval[i] : 1.0;
		double d = floor((double)x->dims[axes[i]] * extent * f[i]);
		if (!(f[i] > 0) || !(d >= 0 && d < 9e18))
			return node_fail(c, "scale %g gives no size for dim %lld", f[i],
					 (long long)axes[i]);
		dims[axes[i]] = (int64_t)d;
	}
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

/* ConstantOfShape: dims from a constant; constant contents when small
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
	int64_t ifill = y->cval && y->ncval == 1 ? y->cval[0] : 0;
	double ffill = y->fval && y->nfval == 1 ? y->fval[0] : 0;
	int is_int = y->cval != NULL || !y->fval; /* no value: float zeros */
	if (set_output(c, 0, (int)s->ncval, s->cval, y->elem_type ? y->elem_type : 1))
		return -1;
	int64_t n = om_value_numel(y), ivals[OM_CONST_MAX];
	double fvals[OM_CONST_MAX];
	if (n > OM_CONST_MAX)
		return set_cval(c, 0, NULL, OM_CONST_MAX + 1); /* too large to carry */
	for (int64_t i = 0; i < n; i++) {
		ivals[i] = ifill;
		fvals[i] = ffill;
	}
	return is_int && is_integral(y->elem_type) ? set_cval(c, 0, ivals, (size_t)n)
						    : set_fval(c, 0, fvals, (size_t)n);
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
	if ((a = om_attr(c->n, "value_floats"))) {
		int64_t n = (int64_t)a->nints;
		return set_output(c, 0, 1, &n, 1) || set_fval(c, 0, a->floats, a->nints);
	}
	if ((a = om_attr(c->n, "value_float")))
		return set_output(c, 0, 0, NULL, 1) || set_fval(c, 0, &a->f, 1);
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

/* LayerNormalization: Y like X; Mean and InvStdDev (training outputs) with
 * the normalised dims from axis on reduced to 1. */
static int rule_layer_norm(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t axis, dims[OM_MAX_DIMS];
	if (!x || norm_axis(c, om_attr_int(c->n, "axis", -1), x->ndim, &axis) ||
	    set_output(c, 0, x->ndim, x->dims, x->elem_type))
		return -1;
	memcpy(dims, x->dims, sizeof dims);
	for (int d = (int)axis; d < x->ndim; d++)
		dims[d] = 1;
	return set_output(c, 1, x->ndim, dims, 1) || set_output(c, 2, x->ndim, dims, 1);
}

/* ArgMax, ArgMin: one axis reduced (kept as 1 by default), int64 indices. */
static int rule_arg_reduce(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t axis, dims[OM_MAX_DIMS];
	int nd = 0;
	if (!x || norm_axis(c, om_attr_int(c->n, "axis", 0), x->ndim, &axis))
		return -1;
	for (int d = 0; d < x->ndim; d++)
		if (d != axis)
			dims[nd++] = x->dims[d];
		else if (om_attr_int(c->n, "keepdims", 1))
			dims[nd++] = 1;
	return set_output(c, 0, nd, dims, 7);
}

/* TopK: K (input 1, or an attribute before opset 10) along axis; values and
 * int64 indices. */
static int rule_topk(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t axis, k[1], dims[OM_MAX_DIMS];
	size_t nk;
	int found;
	if (!x || norm_axis(c, om_attr_int(c->n, "axis", -1), x->ndim, &axis))
		return -1;
	const struct om_attr *ka = om_attr(c->n, "k");
	if (ka && ka->type == OM_ATTR_INT) {
		k[0] = ka->i;
		nk = 1;
	} else if (int_list(c, "K", 1, k, 1, &nk, &found)) {
		return -1;
	}
	if (nk != 1 || k[0] < 0 || k[0] > x->dims[axis])
		return node_fail(c, "K is not one integer from 0 to %lld", (long long)x->dims[axis]);
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = k[0];
	return set_output(c, 0, x->ndim, dims, x->elem_type) ||
	       set_output(c, 1, x->ndim, dims, 7);
}

/* Tile: every dim times its constant repeat count. */
static int rule_tile(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t reps[OM_MAX_DIMS], dims[OM_MAX_DIMS];
	size_t nr;
	int found;
	if (!x || int_list(c, "repeats", 1, reps, OM_MAX_DIMS, &nr, &found))
		return -1;
	if (nr != (size_t)x->ndim)
		return node_fail(c, "%zu repeats for rank %d", nr, x->ndim);
	for (int d = 0; d < x->ndim; d++) {
		if (reps[d] < 0)
			return node_fail(c, "repeat %lld is negative", (long long)reps[d]);
		dims[d] = om_mul(x->dims[d], reps[d]);
	}
	return set_output(c, 0, x->ndim, dims, x->elem_type);
}

/* DepthToSpace and SpaceToDepth: blocks of blocksize^2 channels to and from
 * space, on NCHW. */
static int rule_depth_space(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	if (!x)
		return -1;
	int64_t b = om_attr_int(c->n, "blocksize", 0), bb = om_mul(b, b);
	int to_space = !strcmp(c->n->op, "DepthToSpace");
	if (x->ndim != 4 || b < 1)
		return node_fail(c, "expected a rank-4 input and a positive blocksize");
	int64_t dims[4] = {x->dims[0], 0, 0, 0};
	if (to_space ? x->dims[1] % bb : x->dims[2] % b || x->dims[3] % b)
		return node_fail(c, "dims do not divide by blocksize %lld", (long long)b);
	dims[1] = to_space ? x->dims[1] / bb : om_mul(x->dims[1], bb);
	for (int d = 2; d < 4; d++)
		dims[d] = to_space ? om_mul(x->dims[d], b) : x->dims[d] / b;
	return set_output(c, 0, 4, dims, x->elem_type);
}

/* Size: the element count as an int64 scalar, a constant. */
static int rule_size(const struct ctx *c)
{
	const struct om_value *x = input(c, 0);
	int64_t n = x ? om_value_numel(x) : 0;
	return !x || set_output(c, 0, 0, NULL, 7) || set_cval(c, 0, &n, 1) ? -1 : 0;
}

/* GatherElements: the shape of the indices. */
static int rule_gather_elements(const struct ctx *c)
{
	const struct om_value *x = input(c, 0), *idx = x ? input(c, 1) : NULL;
	if (!idx)
		return -1;
	if (idx->ndim != x->ndim)
		return node_fail(c, "indices of rank %d for data of rank %d", idx->ndim, x->ndim);
	return set_output(c, 0, idx->ndim, idx->dims, x->elem_type);
}

/* OneHot: the indices' shape with a dim of the constant depth at axis. */
static int rule_one_hot(const struct ctx *c)
{
	const struct om_value *idx = input(c, 0), *depth = idx ? input(c, 1) : NULL,
			      *vals = depth ? input(c, 2) : NULL;
	if (!vals)
		return -1;
	int64_t axis, dims[OM_MAX_DIMS], d;
	if (norm_axis(c, om_attr_int(c->n, "axis", -1), idx->ndim + 1, &axis))
		return -1;
	if (depth->ncval == 1)
		d = depth->cval[0];
	else if (depth->nfval == 1 && fabs(depth->fval[0]) < 9e18)
		d = (int64_t)depth->fval[0];
	else
		return node_fail(c, "depth '%s' is not a constant scalar", depth->name);
	if (d < 0)
		return node_fail(c, "depth %lld is negative", (long long)d);
	for (int i = 0, k = 0; i <= idx->ndim; i++)
		dims[i] = i == axis ? d : idx->dims[k++];
	return set_output(c, 0, idx->ndim + 1, dims, vals->elem_type);
}

/* Einsum without ellipses: each operand's letters name its dims; the
 * output's letters (after "->", or the letters used once, sorted) give the
 * output dims. A letter's dims must agree (or be 1, broadcast). */
static int rule_einsum(const struct ctx *c)
{
	const struct om_attr *ea = om_attr(c->n, "equation");
	if (!ea || ea->type != OM_ATTR_STRING)
		return node_fail(c, "no equation");
	int64_t size[128];
	int count[128] = {0};
	for (int i = 0; i < 128; i++)
		size[i] = -1;
	const char *p = ea->s;
	size_t k = 0;
	int elem = 0;
	for (;; p++) {
		const struct om_value *v = input(c, k);
		if (!v)
			return -1;
		elem = elem ? elem : v->elem_type;
		int d = 0;
		for (; *p && *p != ',' && *p != '-'; p++) {
			if (*p == ' ')
				continue;
			unsigned char l = (unsigned char)*p;
			if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')))
				return node_fail(c, "equation '%s': only letters are supported", ea->s);
			if (d >= v->ndim)
				return node_fail(c, "equation '%s': operand %zu has rank %d", ea->s, k,
						 v->ndim);
			int64_t dim = v->dims[d++];
			if (size[l] >= 0 && size[l] != dim && size[l] != 1 && dim != 1)
				return node_fail(c, "equation '%s': '%c' is %lld and %lld", ea->s, l,
						 (long long)size[l], (long long)dim);
			if (size[l] < 0 || size[l] == 1)
				size[l] = dim;
			count[l]++;
		}
		if (d != v->ndim)
			return node_fail(c, "equation '%s': operand %zu has rank %d", ea->s, k, v->ndim);
		k++;
		if (*p != ',')
			break;
	}
	if (k != c->n->nin)
		return node_fail(c, "equation '%s' names %zu operands, the node has %zu", ea->s, k,
				 c->n->nin);
	int64_t dims[OM_MAX_DIMS];
	int nd = 0;
	if (*p == '-') {
		if (p[1] != '>')
			return node_fail(c, "equation '%s': '-' without '>'", ea->s);
		for (p += 2; *p; p++) {
			unsigned char l = (unsigned char)*p;
			if (l == ' ')
				continue;
			if (l >= 128 || size[l] < 0 || nd == OM_MAX_DIMS)
				return node_fail(c, "equation '%s': output letter '%c' is no input's",
						 ea->s, *p);
			dims[nd++] = size[l];
		}
	} else {
		for (int l = 0; l < 128; l++)
			if (count[l] == 1) {
				if (nd == OM_MAX_DIMS)
					return node_fail(c, "equation '%s': too many output dims", ea->s);
				dims[nd++] = size[l];
			}
	}
	return set_output(c, 0, nd, dims, elem);
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
	{"BatchNormalization", rule_same}, {"LayerNormalization", rule_layer_norm},
	{"InstanceNormalization", rule_same}, {"GroupNormalization", rule_same},
	{"MeanVarianceNormalization", rule_same}, {"LRN", rule_same},
	{"Sin", rule_same}, {"Cos", rule_same}, {"Sign", rule_same}, {"Round", rule_same},
	{"IsNaN", rule_same}, {"IsInf", rule_same}, {"Softsign", rule_same}, {"Celu", rule_same},
	{"ThresholdedRelu", rule_same}, {"Shrink", rule_same}, {"Hardmax", rule_same},
	{"CumSum", rule_same}, {"Trilu", rule_same}, {"ScatterND", rule_same},
	{"ScatterElements", rule_same},
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
	{"GlobalLpPool", rule_global_pool},
	{"Gemm", rule_gemm}, {"MatMul", rule_matmul},
	{"Flatten", rule_flatten}, {"Reshape", rule_reshape}, {"Transpose", rule_transpose},
	{"Concat", rule_concat}, {"Squeeze", rule_squeeze}, {"Unsqueeze", rule_unsqueeze},
	{"Shape", rule_shape}, {"Gather", rule_gather}, {"Constant", rule_constant},
	{"ReduceMean", rule_reduce}, {"ReduceSum", rule_reduce}, {"ReduceMax", rule_reduce},
	{"ReduceMin", rule_reduce}, {"ReduceProd", rule_reduce}, {"ReduceL1", rule_reduce},
	{"ReduceL2", rule_reduce}, {"ReduceLogSum", rule_reduce}, {"ReduceLogSumExp", rule_reduce},
	{"ReduceSumSquare", rule_reduce}, {"ArgMax", rule_arg_reduce}, {"ArgMin", rule_arg_reduce},
	{"Expand", rule_expand}, {"Slice", rule_slice},
	{"Split", rule_split}, {"Pad", rule_pad}, {"ConstantOfShape", rule_constant_of_shape},
	{"Range", rule_range}, {"Resize", rule_resize}, {"Upsample", rule_resize},
	{"TopK", rule_topk}, {"Tile", rule_tile}, {"DepthToSpace", rule_depth_space},
	{"SpaceToDepth", rule_depth_space}, {"Size", rule_size},
	{"GatherElements", rule_gather_elements}, {"OneHot", rule_one_hot}, {"Einsum", rule_einsum},
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
	char at[300];
	if (!missing || !nusers || !start)
		goto oom;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct om_node *n = &g->nodes[i];
		for (size_t k = 0; k < n->nin; k++) {
			if (n->in[k] == OM_NONE)
				continue;
			const struct om_value *v = &g->values[n->in[k]];
			if (v->producer == OM_NONE) {
				if (!v->is_initializer && !v->is_input && !v->is_constant) {
					rc = sp_fail(err, "%s: node '%s' (%s): input '%s' is never produced",
						     node_where(g, n, at, sizeof at), n->name, n->op,
						     v->name);
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
					     node_where(g, &g->nodes[i], at, sizeof at),
					     g->nodes[i].name, g->nodes[i].op);
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
	/* each op type's rule, looked up once */
	const struct rule **rule_of = malloc((g->nop_types + 1) * sizeof *rule_of);
	if (!rule_of)
		return sp_fail(err, "%s: out of memory", g->path);
	for (size_t t = 0; t < g->nop_types; t++)
		rule_of[t] = find_rule(g->op_types[t]);
	int rc = 0;
	for (size_t i = 0; i < g->nnodes && !rc; i++) {
		const struct om_node *n = &g->nodes[order[i]];
		struct ctx c = {g, n, err};
		const struct rule *r = rule_of[n->op_id];
		unknown[order[i]] = !r;
		if (!r && !o->allow_unknown)
			rc = node_fail(&c, "no shape rule for this op (--allow-unknown counts it as "
				       "zero)");
		else if (r)
			rc = r->fn(&c);
	}
	free(rule_of);
	return rc;
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
