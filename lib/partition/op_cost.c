#include "partition/op_cost.h"

#include <string.h>

int oc_dtype_size(const char *name)
{
	static const struct {
		const char *name;
		int size;
	} sizes[] = {{"fp32", 4}, {"tf32", 4}, {"fp16", 2}, {"bf16", 2}, {"int8", 1}};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (!strcmp(sizes[i].name, name))
			return sizes[i].size;
	return 0;
}

const char *oc_class_name(enum oc_class cls)
{
	static const char *const names[] = {"matmul", "elementwise", "normalization", "pool",
					    "reduce", "data", "unknown"};
	return names[cls];
}

int64_t oc_mark_params(const struct om_graph *g, const size_t *order, unsigned char *is_param)
{
	int64_t total = 0;
	for (size_t v = 0; v < g->nvalues; v++)
		is_param[v] = (unsigned char)g->values[v].is_initializer;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct om_node *n = &g->nodes[order[i]];
		if (!strcmp(n->op, "Identity") && n->nin == 1 && n->nout == 1 &&
		    n->in[0] != OM_NONE && n->out[0] != OM_NONE && is_param[n->in[0]])
			is_param[n->out[0]] = 1;
	}
	for (size_t v = 0; v < g->nvalues; v++)
		if (is_param[v])
			total = om_add(total, om_value_numel(&g->values[v]));
	return total;
}

struct per_element {
	const char *op;
	int flops;
	enum oc_class cls;
};

/* Ops whose cost is a constant per output element (see op_cost.h). */
static const struct per_element per_element[] = {
	{"BatchNormalization", 2, OC_NORMALIZATION}, {"LayerNormalization", 5, OC_NORMALIZATION},
	{"InstanceNormalization", 5, OC_NORMALIZATION}, {"Softmax", 5, OC_NORMALIZATION},
	{"LogSoftmax", 5, OC_NORMALIZATION},
	{"Relu", 1, OC_ELEMENTWISE}, {"LeakyRelu", 1, OC_ELEMENTWISE}, {"Sigmoid", 1, OC_ELEMENTWISE},
	{"HardSigmoid", 1, OC_ELEMENTWISE}, {"HardSwish", 1, OC_ELEMENTWISE},
	{"Tanh", 1, OC_ELEMENTWISE}, {"Clip", 1, OC_ELEMENTWISE}, {"Exp", 1, OC_ELEMENTWISE},
	{"Log", 1, OC_ELEMENTWISE}, {"Sqrt", 1, OC_ELEMENTWISE}, {"Reciprocal", 1, OC_ELEMENTWISE},
	{"Neg", 1, OC_ELEMENTWISE}, {"Abs", 1, OC_ELEMENTWISE}, {"Erf", 1, OC_ELEMENTWISE},
	{"Gelu", 1, OC_ELEMENTWISE}, {"Elu", 1, OC_ELEMENTWISE}, {"Selu", 1, OC_ELEMENTWISE},
	{"Softplus", 1, OC_ELEMENTWISE}, {"Mish", 1, OC_ELEMENTWISE}, {"Floor", 1, OC_ELEMENTWISE},
	{"Ceil", 1, OC_ELEMENTWISE}, {"Not", 1, OC_ELEMENTWISE}, {"Add", 1, OC_ELEMENTWISE},
	{"Sub", 1, OC_ELEMENTWISE}, {"Mul", 1, OC_ELEMENTWISE}, {"Div", 1, OC_ELEMENTWISE},
	{"Pow", 1, OC_ELEMENTWISE}, {"Max", 1, OC_ELEMENTWISE}, {"Min", 1, OC_ELEMENTWISE},
	{"Sum", 1, OC_ELEMENTWISE}, {"Mean", 1, OC_ELEMENTWISE}, {"Mod", 1, OC_ELEMENTWISE},
	{"PRelu", 1, OC_ELEMENTWISE}, {"Where", 1, OC_ELEMENTWISE}, {"Equal", 1, OC_ELEMENTWISE},
	{"Less", 1, OC_ELEMENTWISE}, {"Greater", 1, OC_ELEMENTWISE},
	{"LessOrEqual", 1, OC_ELEMENTWISE}, {"GreaterOrEqual", 1, OC_ELEMENTWISE},
	{"And", 1, OC_ELEMENTWISE}, {"Or", 1, OC_ELEMENTWISE}, {"Xor", 1, OC_ELEMENTWISE},
	{"Sin", 1, OC_ELEMENTWISE}, {"Cos", 1, OC_ELEMENTWISE}, {"Sign", 1, OC_ELEMENTWISE},
	{"Round", 1, OC_ELEMENTWISE}, {"IsNaN", 1, OC_ELEMENTWISE}, {"IsInf", 1, OC_ELEMENTWISE},
	{"Softsign", 1, OC_ELEMENTWISE}, {"Celu", 1, OC_ELEMENTWISE},
	{"ThresholdedRelu", 1, OC_ELEMENTWISE}, {"Shrink", 1, OC_ELEMENTWISE},
	{"CumSum", 1, OC_ELEMENTWISE},
	{"GroupNormalization", 5, OC_NORMALIZATION}, {"MeanVarianceNormalization", 5, OC_NORMALIZATION},
	{"LRN", 5, OC_NORMALIZATION}, {"Hardmax", 5, OC_NORMALIZATION},
};

/* Ops that run no kernel at inference: they relabel their input. */
static const char *const views[] = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
				    "Dropout"};

static const struct om_value *in(const struct om_graph *g, const struct om_node *n, size_t i)
{
	return i < n->nin && n->in[i] != OM_NONE && g->values[n->in[i]].ndim >= 0
		       ? &g->values[n->in[i]]
		       : NULL;
}

static int64_t prod(const int64_t *dims, int n)
{
	int64_t p = 1;
	for (int d = 0; d < n; d++)
		p = om_mul(p, dims[d]);
	return p;
}

/* Einsum's MACs: the product of every index's size (shape inference has
 * checked the equation against the operands). */
static int64_t einsum_macs(const struct om_graph *g, const struct om_node *n)
{
	const struct om_attr *ea = om_attr(n, "equation");
	int64_t size[128] = {0}, macs = 1;
	size_t k = 0;
	int d = 0;
	for (const char *p = ea ? ea->s : ""; *p && *p != '-'; p++) {
		unsigned char l = (unsigned char)*p;
		if (l == ',') {
			k++;
			d = 0;
		} else if (l < 128 && l != ' ' && in(g, n, k) && d < in(g, n, k)->ndim) {
			int64_t dim = in(g, n, k)->dims[d++];
			size[l] = dim > size[l] ? dim : size[l];
		}
	}
	for (int l = 0; l < 128; l++)
		if (size[l])
			macs = om_mul(macs, size[l]);
	return macs;
}

/* Resize: 2 FLOPs per tap; 2^k taps (linear) or 4^k (cubic) over the k
 * axes whose size changes. */
static int64_t resize_flops(const struct om_node *n, const struct om_value *x,
			    const struct om_value *y)
{
	const struct om_attr *ma = om_attr(n, "mode");
	const char *mode = ma && ma->type == OM_ATTR_STRING ? ma->s : "nearest";
	int64_t per_axis = !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 2
			   : !strcmp(mode, "cubic") || !strcmp(mode, "bicubic") ? 4 : 0, taps = 1;
	for (int d = 0; per_axis && d < x->ndim && d < y->ndim; d++)
		if (x->dims[d] != y->dims[d])
			taps = om_mul(taps, per_axis);
	return per_axis ? om_mul(om_mul(2, taps), om_value_numel(y)) : 0;
}

/* Multiply-accumulates of the matrix-product ops; -1 for other ops. */
static int64_t matmul_macs(const struct om_graph *g, const struct om_node *n,
			   const struct om_value *y)
{
	const struct om_value *a = in(g, n, 0), *b = in(g, n, 1);
	if (!a || !b || !y)
		return -1;
	if (!strcmp(n->op, "Conv")) /* B*Cout*out spatial = numel(y); W is (Cout, Cin/g, k...) */
		return om_mul(om_value_numel(y), prod(b->dims + 1, b->ndim - 1));
	if (!strcmp(n->op, "ConvTranspose")) /* W is (Cin, Cout/g, k...) */
		return om_mul(om_value_numel(a), prod(b->dims + 1, b->ndim - 1));
	if (!strcmp(n->op, "Gemm"))
		return om_mul(om_value_numel(y), a->dims[om_attr_int(n, "transA", 0) ? 0 : 1]);
	if (!strcmp(n->op, "MatMul"))
		return om_mul(om_value_numel(y), a->dims[a->ndim - 1]);
	if (!strcmp(n->op, "Einsum"))
		return einsum_macs(g, n);
	return -1;
}

static void count_flops(const struct om_graph *g, const struct om_node *n, struct op_cost *c)
{
	const struct om_value *y = n->nout && n->out[0] != OM_NONE && g->values[n->out[0]].ndim >= 0
					   ? &g->values[n->out[0]]
					   : NULL;
	int64_t macs = matmul_macs(g, n, y);
	if (macs >= 0) {
		c->cls = OC_MATMUL;
		c->macs = macs;
		c->flops = om_mul(2, macs);
		return;
	}
	c->cls = OC_DATA;
	if (!y)
		return;
	for (size_t i = 0; i < sizeof per_element / sizeof per_element[0]; i++)
		if (!strcmp(per_element[i].op, n->op)) {
			c->cls = per_element[i].cls;
			c->flops = om_mul(per_element[i].flops, om_value_numel(y));
			return;
		}
	const struct om_value *x = in(g, n, 0);
	if (!x)
		return;
	if (!strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool") || !strcmp(n->op, "LpPool")) {
		const struct om_attr *k = om_attr(n, "kernel_shape");
		c->cls = OC_POOL;
		c->flops = om_mul(om_value_numel(y), k ? prod(k->ints, (int)k->nints) : 1);
	} else if (!strcmp(n->op, "GlobalAveragePool") || !strcmp(n->op, "GlobalMaxPool")) {
		c->cls = OC_POOL;
		c->flops = om_value_numel(x);
	} else if (!strncmp(n->op, "Reduce", 6) || !strcmp(n->op, "ArgMax") ||
		   !strcmp(n->op, "ArgMin") || !strcmp(n->op, "TopK")) {
		c->cls = OC_REDUCE;
		c->flops = om_value_numel(x);
	} else if (!strcmp(n->op, "Resize") || !strcmp(n->op, "Upsample")) {
		c->flops = resize_flops(n, x, y);
		c->cls = c->flops ? OC_ELEMENTWISE : OC_DATA;
	}
}

void op_cost(const struct om_graph *g, size_t i, int unknown, const unsigned char *is_param,
	     int dtype_bytes, struct op_cost *c)
{
	const struct om_node *n = &g->nodes[i];
	memset(c, 0, sizeof *c);
	if (unknown)
		c->cls = OC_UNKNOWN;
	else
		count_flops(g, n, c);
	c->groups = 1;
	if (!strcmp(n->op, "Conv") || !strcmp(n->op, "ConvTranspose")) {
		const struct om_value *x = in(g, n, 0);
		c->groups = om_attr_int(n, "group", 1);
		c->depthwise = c->groups > 1 && x && x->ndim > 1 && x->dims[1] == c->groups;
	}
	c->kernel = 1;
	for (size_t k = 0; k < sizeof views / sizeof views[0]; k++)
		if (!strcmp(n->op, views[k]))
			c->kernel = 0;
	if (!c->kernel)
		return; /* a view moves nothing and runs no threads */
	if (n->nout && n->out[0] != OM_NONE && g->values[n->out[0]].ndim >= 0)
		c->threads = om_value_numel(&g->values[n->out[0]]);
	for (size_t k = 0; k < n->nin; k++) {
		const struct om_value *v = in(g, n, k);
		if (!v)
			continue;
		int64_t b = om_mul(om_value_numel(v), dtype_bytes);
		if (is_param[n->in[k]])
			c->weight_bytes = om_add(c->weight_bytes, b);
		else
			c->input_bytes = om_add(c->input_bytes, b);
	}
	for (size_t k = 0; k < n->nout; k++)
		if (n->out[k] != OM_NONE && g->values[n->out[k]].ndim >= 0)
			c->output_bytes = om_add(c->output_bytes,
						 om_mul(om_value_numel(&g->values[n->out[k]]),
							dtype_bytes));
	int64_t moved = om_add(om_add(c->input_bytes, c->output_bytes), c->weight_bytes);
	c->intensity = moved ? (double)c->flops / (double)moved : 0.0;
}

void oc_make_constant(struct op_cost *c)
{
	enum oc_class cls = c->cls;
	int64_t groups = c->groups;
	int depthwise = c->depthwise;
	memset(c, 0, sizeof *c);
	c->cls = cls;
	c->groups = groups;
	c->depthwise = depthwise;
}

void oc_accumulate(struct oc_totals *t, const struct op_cost *c)
{
	t->total_flops = om_add(t->total_flops, c->flops);
	t->macs = om_add(t->macs, c->macs);
	if (c->cls == OC_MATMUL)
		t->matmul_flops = om_add(t->matmul_flops, c->flops);
	t->memory_bytes = om_add(om_add(t->memory_bytes, c->input_bytes),
				 om_add(c->output_bytes, c->weight_bytes));
}
