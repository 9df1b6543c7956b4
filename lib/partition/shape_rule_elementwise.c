/* Shape rules of the elementwise ops: unary ops keep their input's shape,
 * the others broadcast as numpy does; on constants they are evaluated
 * (shape arithmetic), and Identity and Cast pass constants on. */
#include "partition/shape_rule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Identity and Cast; Cast converts constants between integers and floating
 * point (toward zero, as C and numpy's astype do). */
static int rule_passthrough(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x || shape_rule_set_output_keep(c, x, x->ndim, x->dims))
		return -1;
	if (strcmp(c->n->op, "Cast"))
		return 0;
	struct opgraph_value *y = shape_rule_output(c, 0);
	if (!y) /* its output left out (""): nothing to type */
		return 0;
	int to = (int)opgraph_attr_int(c->n, "to", 0);
	y->elem_type = to;
	int64_t ints[OPGRAPH_CONST_MAX];
	double floats[OPGRAPH_CONST_MAX];
	if (x->cval && !shape_rule_is_integral(to)) {
		for (size_t i = 0; i < x->ncval; i++)
			floats[i] = (double)x->cval[i];
		return shape_rule_set_floats(c, 0, floats, x->ncval);
	}
	if (x->fval && shape_rule_is_integral(to)) {
		for (size_t i = 0; i < x->nfval; i++) {
			if (!(fabs(x->fval[i]) < 9.2e18)) /* NaN, infinities, beyond int64 */
				return shape_rule_set_ints(c, 0, NULL, OPGRAPH_CONST_MAX + 1);
			ints[i] = (int64_t)x->fval[i];
		}
		return shape_rule_set_ints(c, 0, ints, x->nfval);
	}
	return 0;
}

static void dims_text(const struct opgraph_value *v, char *buf, size_t size)
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
static int broadcast_into(const struct shape_rule *c, int *ndim, int64_t *dims,
			  const struct opgraph_value *v)
{
	int r = v->ndim > *ndim ? v->ndim : *ndim;
	int64_t out[OPGRAPH_MAX_DIMS];
	for (int d = 0; d < r; d++) {
		int da = d - (r - *ndim), db = d - (r - v->ndim);
		int64_t a = da >= 0 ? dims[da] : 1, b = db >= 0 ? v->dims[db] : 1;
		if (a != b && a != 1 && b != 1) {
			char sa[128], sb[128];
			struct opgraph_value acc = {.ndim = *ndim};
			memcpy(acc.dims, dims, (size_t)*ndim * sizeof *dims);
			dims_text(&acc, sa, sizeof sa);
			dims_text(v, sb, sizeof sb);
			return shape_rule_fail(c, "shapes %s and %s ('%s') cannot broadcast", sa,
					       sb, v->name);
		}
		out[d] = a == 1 ? b : a;
	}
	*ndim = r;
	memcpy(dims, out, (size_t)r * sizeof *out);
	return 0;
}

/* One element of an integer elementwise op; 0 when it has no integer value
 * (another op, a division by zero, an overflow). */
static int fold_int(const struct opgraph_node *n, const int64_t *x, int64_t *out)
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
		if (!strcmp(op, "Mod") && !opgraph_attr_int(n, "fmod", 0) && *out &&
		    (*out < 0) != (x[1] < 0))
			*out += x[1];
		return 1;
	}
	if (!strcmp(op, "Neg") || !strcmp(op, "Abs")) {
		if (!strcmp(op, "Abs") && x[0] >= 0) {
			*out = x[0];
			return 1;
		}
		return !__builtin_sub_overflow(0, x[0], out);
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
static int fold_constants(const struct shape_rule *c)
{
	const struct opgraph_value *y = shape_rule_output(c, 0);
	int64_t n = y ? opgraph_value_numel(y) : 0, ivals[OPGRAPH_CONST_MAX];
	double fvals[OPGRAPH_CONST_MAX];
	int all_int = 1;
	if (!y || n > OPGRAPH_CONST_MAX || !c->n->nin || c->n->nin > 3)
		return 0;
	for (size_t i = 0; i < c->n->nin; i++) {
		if (c->n->in[i] == OPGRAPH_NONE) /* an input left out (""): nothing to fold */
			return 0;
		const struct opgraph_value *v = &c->g->values[c->n->in[i]];
		size_t count = v->cval ? v->ncval : v->nfval;
		if ((!v->cval && !v->fval) || (count != 1 && (int64_t)count != n))
			return 0;
		all_int &= v->cval != NULL;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t xi[3];
		double xf[3];
		for (size_t i = 0; i < c->n->nin; i++) {
			const struct opgraph_value *v = &c->g->values[c->n->in[i]];
			size_t at = (v->cval ? v->ncval : v->nfval) == 1 ? 0 : (size_t)k;
			xi[i] = v->cval ? v->cval[at] : 0;
			xf[i] = v->cval ? (double)v->cval[at] : v->fval[at];
		}
		if (all_int ? !fold_int(c->n, xi, &ivals[k]) : !fold_float(c->n->op, xf, &fvals[k]))
			return 0;
		if (!all_int && shape_rule_is_integral(y->elem_type)) /* a comparison's bool */
			ivals[k] = fvals[k] != 0;
	}
	return all_int || shape_rule_is_integral(y->elem_type)
		       ? shape_rule_set_ints(c, 0, ivals, (size_t)n)
		       : shape_rule_set_floats(c, 0, fvals, (size_t)n);
}

/* Unary ops: the input's shape (and every output's). */
static int rule_same(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	if (!x || shape_rule_set_output(c, 0, x->ndim, x->dims, x->elem_type))
		return -1;
	/* Dropout's mask and the like have the input's shape too. */
	for (size_t i = 1; i < c->n->nout; i++)
		if (shape_rule_set_output(c, i, x->ndim, x->dims, 0))
			return -1;
	return fold_constants(c); /* Neg, Sqrt, Floor ... of a constant */
}

/* Softmax, LogSoftmax and Hardmax: the input's shape, along an axis that
 * must be one of its own. */
static int rule_along_axis(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0);
	int64_t axis;
	if (!x || shape_rule_axis(c, opgraph_attr_int(c->n, "axis", -1), x->ndim, &axis))
		return -1;
	return rule_same(c);
}

/* numpy broadcasting of all inputs. */
static int rule_broadcast(const struct shape_rule *c)
{
	int64_t dims[OPGRAPH_MAX_DIMS];
	int ndim = 0, elem = 0;
	if (!c->n->nin)
		return shape_rule_fail(c, "no inputs");
	for (size_t i = 0; i < c->n->nin; i++) {
		const struct opgraph_value *v = shape_rule_input(c, i);
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
	if (shape_rule_set_output(c, 0, ndim, dims, elem))
		return -1;
	return fold_constants(c);
}

/* Expand: x broadcast with the constant shape of input 1. */
static int rule_expand(const struct shape_rule *c)
{
	const struct opgraph_value *x = shape_rule_input(c, 0),
				   *s = x ? shape_rule_input(c, 1) : NULL;
	if (!s)
		return -1;
	if (!s->cval || s->ncval > OPGRAPH_MAX_DIMS)
		return shape_rule_fail(c, "shape '%s' is not a constant of at most %d dims",
				       s->name, OPGRAPH_MAX_DIMS);
	struct opgraph_value target = {.name = s->name, .ndim = (int)s->ncval};
	memcpy(target.dims, s->cval, s->ncval * sizeof *s->cval);
	int64_t dims[OPGRAPH_MAX_DIMS];
	int ndim = x->ndim;
	memcpy(dims, x->dims, sizeof dims);
	if (broadcast_into(c, &ndim, dims, &target))
		return -1;
	return shape_rule_set_output(c, 0, ndim, dims, x->elem_type);
}

const struct shape_rule_op shape_rule_elementwise[] = {
	{"Identity", rule_passthrough}, {"Cast", rule_passthrough}, {"Dropout", rule_same},
	{"Relu", rule_same}, {"LeakyRelu", rule_same}, {"Sigmoid", rule_same},
	{"HardSigmoid", rule_same}, {"HardSwish", rule_same}, {"Tanh", rule_same},
	{"Clip", rule_same}, {"Exp", rule_same}, {"Log", rule_same}, {"Sqrt", rule_same},
	{"Reciprocal", rule_same}, {"Neg", rule_same}, {"Abs", rule_same}, {"Erf", rule_same},
	{"Gelu", rule_same}, {"Elu", rule_same}, {"Selu", rule_same}, {"Softplus", rule_same},
	{"Mish", rule_same}, {"Floor", rule_same}, {"Ceil", rule_same}, {"Not", rule_same},
	{"Softmax", rule_along_axis}, {"LogSoftmax", rule_along_axis},
	{"BatchNormalization", rule_same}, {"InstanceNormalization", rule_same},
	{"GroupNormalization", rule_same}, {"MeanVarianceNormalization", rule_same},
	{"LRN", rule_same}, {"Sin", rule_same}, {"Cos", rule_same}, {"Sign", rule_same},
	{"Round", rule_same}, {"IsNaN", rule_same}, {"IsInf", rule_same}, {"Softsign", rule_same},
	{"Celu", rule_same}, {"ThresholdedRelu", rule_same}, {"Shrink", rule_same},
	{"Hardmax", rule_along_axis}, {"CumSum", rule_same}, {"Trilu", rule_same},
	{"ScatterND", rule_same}, {"ScatterElements", rule_same}, {"Add", rule_broadcast},
	{"Sub", rule_broadcast}, {"Mul", rule_broadcast}, {"Div", rule_broadcast},
	{"Pow", rule_broadcast}, {"Max", rule_broadcast}, {"Min", rule_broadcast},
	{"Sum", rule_broadcast}, {"Mean", rule_broadcast}, {"Mod", rule_broadcast},
	{"PRelu", rule_broadcast}, {"Where", rule_broadcast}, {"Equal", rule_broadcast},
	{"Less", rule_broadcast}, {"Greater", rule_broadcast}, {"LessOrEqual", rule_broadcast},
	{"GreaterOrEqual", rule_broadcast}, {"And", rule_broadcast}, {"Or", rule_broadcast},
	{"Xor", rule_broadcast}, {"Expand", rule_expand},
	{NULL, NULL},
};
