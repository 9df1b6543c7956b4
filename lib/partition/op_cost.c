#include "partition/op_cost.h"

#include <string.h>

int op_cost_dtype_size(const char *name)
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

const char *op_cost_class_name(enum op_cost_class cls)
{
	static const char *const names[] = {"matmul", "elementwise", "normalization", "pool",
					    "reduce", "data", "unknown"};
	return names[cls];
}

int64_t op_cost_mark_params(const struct opgraph *g, const size_t *order, unsigned char *is_param)
{
	int64_t total = 0;
	for (size_t v = 0; v < g->nvalues; v++)
		is_param[v] = (unsigned char)g->values[v].is_initializer;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct opgraph_node *n = &g->nodes[order[i]];
		if (!strcmp(n->op, "Identity") && n->nin == 1 && n->nout == 1 &&
		    n->in[0] != OPGRAPH_NONE && n->out[0] != OPGRAPH_NONE && is_param[n->in[0]])
			is_param[n->out[0]] = 1;
	}
	for (size_t v = 0; v < g->nvalues; v++)
		if (is_param[v])
			total = opgraph_add_sat(total, opgraph_value_numel(&g->values[v]));
	return total;
}

struct per_element {
	const char *op;
	int flops;
	enum op_cost_class cls;
};

/* Ops whose cost is a constant per output element (see op_cost.h). */
static const struct per_element per_element[] = {
	{"BatchNormalization", 2, OP_COST_NORMALIZATION},
	{"LayerNormalization", 5, OP_COST_NORMALIZATION},
	{"InstanceNormalization", 5, OP_COST_NORMALIZATION},
	{"Softmax", 5, OP_COST_NORMALIZATION},
	{"LogSoftmax", 5, OP_COST_NORMALIZATION},
	{"Relu", 1, OP_COST_ELEMENTWISE},
	{"LeakyRelu", 1, OP_COST_ELEMENTWISE},
	{"Sigmoid", 1, OP_COST_ELEMENTWISE},
	{"HardSigmoid", 1, OP_COST_ELEMENTWISE},
	{"HardSwish", 1, OP_COST_ELEMENTWISE},
	{"Tanh", 1, OP_COST_ELEMENTWISE},
	{"Clip", 1, OP_COST_ELEMENTWISE},
	{"Exp", 1, OP_COST_ELEMENTWISE},
	{"Log", 1, OP_COST_ELEMENTWISE},
	{"Sqrt", 1, OP_COST_ELEMENTWISE},
	{"Reciprocal", 1, OP_COST_ELEMENTWISE},
	{"Neg", 1, OP_COST_ELEMENTWISE},
	{"Abs", 1, OP_COST_ELEMENTWISE},
	{"Erf", 1, OP_COST_ELEMENTWISE},
	{"Gelu", 1, OP_COST_ELEMENTWISE},
	{"Elu", 1, OP_COST_ELEMENTWISE},
	{"Selu", 1, OP_COST_ELEMENTWISE},
	{"Softplus", 1, OP_COST_ELEMENTWISE},
	{"Mish", 1, OP_COST_ELEMENTWISE},
	{"Floor", 1, OP_COST_ELEMENTWISE},
	{"Ceil", 1, OP_COST_ELEMENTWISE},
	{"Not", 1, OP_COST_ELEMENTWISE},
	{"Add", 1, OP_COST_ELEMENTWISE},
	{"Sub", 1, OP_COST_ELEMENTWISE},
	{"Mul", 1, OP_COST_ELEMENTWISE},
	{"Div", 1, OP_COST_ELEMENTWISE},
	{"Pow", 1, OP_COST_ELEMENTWISE},
	{"Max", 1, OP_COST_ELEMENTWISE},
	{"Min", 1, OP_COST_ELEMENTWISE},
	{"Sum", 1, OP_COST_ELEMENTWISE},
	{"Mean", 1, OP_COST_ELEMENTWISE},
	{"Mod", 1, OP_COST_ELEMENTWISE},
	{"PRelu", 1, OP_COST_ELEMENTWISE},
	{"Where", 1, OP_COST_ELEMENTWISE},
	{"Equal", 1, OP_COST_ELEMENTWISE},
	{"Less", 1, OP_COST_ELEMENTWISE},
	{"Greater", 1, OP_COST_ELEMENTWISE},
	{"LessOrEqual", 1, OP_COST_ELEMENTWISE},
	{"GreaterOrEqual", 1, OP_COST_ELEMENTWISE},
	{"And", 1, OP_COST_ELEMENTWISE},
	{"Or", 1, OP_COST_ELEMENTWISE},
	{"Xor", 1, OP_COST_ELEMENTWISE},
	{"Sin", 1, OP_COST_ELEMENTWISE},
	{"Cos", 1, OP_COST_ELEMENTWISE},
	{"Sign", 1, OP_COST_ELEMENTWISE},
	{"Round", 1, OP_COST_ELEMENTWISE},
	{"IsNaN", 1, OP_COST_ELEMENTWISE},
	{"IsInf", 1, OP_COST_ELEMENTWISE},
	{"Softsign", 1, OP_COST_ELEMENTWISE},
	{"Celu", 1, OP_COST_ELEMENTWISE},
	{"ThresholdedRelu", 1, OP_COST_ELEMENTWISE},
	{"Shrink", 1, OP_COST_ELEMENTWISE},
	{"CumSum", 1, OP_COST_ELEMENTWISE},
	{"GroupNormalization", 5, OP_COST_NORMALIZATION},
	{"MeanVarianceNormalization", 5, OP_COST_NORMALIZATION},
	{"LRN", 5, OP_COST_NORMALIZATION},
	{"Hardmax", 5, OP_COST_NORMALIZATION},
};

/* Ops that run no kernel at inference: they relabel their input. */
static const char *const views[] = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
				    "Dropout"};

static const struct opgraph_value *in(const struct opgraph *g, const struct opgraph_node *n,
				      size_t i)
{
	return i < n->nin && n->in[i] != OPGRAPH_NONE && g->values[n->in[i]].ndim >= 0
		       ? &g->values[n->in[i]]
		       : NULL;
}

static int64_t prod(const int64_t *dims, int n)
{
	int64_t p = 1;
	for (int d = 0; d < n; d++)
		p = opgraph_mul_sat(p, dims[d]);
	return p;
}

/* Einsum's MACs: the product of every index's size (shape inference has
 * checked the equation against the operands). */
static int64_t einsum_macs(const struct opgraph *g, const struct opgraph_node *n)
{
	const struct opgraph_attr *ea = opgraph_attr(n, "equation");
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
			macs = opgraph_mul_sat(macs, size[l]);
	return macs;
}

/* Resize: 2 FLOPs per tap; 2^k taps (linear) or 4^k (cubic) over the k
 * axes whose size changes. */
static int64_t resize_flops(const struct opgraph_node *n, const struct opgraph_value *x,
			    const struct opgraph_value *y)
{
	const struct opgraph_attr *ma = opgraph_attr(n, "mode");
	const char *mode = ma && ma->type == OPGRAPH_ATTR_STRING ? ma->s : "nearest";
	int64_t per_axis = !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 2
			   : !strcmp(mode, "cubic") || !strcmp(mode, "bicubic") ? 4 : 0, taps = 1;
	for (int d = 0; per_axis && d < x->ndim && d < y->ndim; d++)
		if (x->dims[d] != y->dims[d])
			taps = opgraph_mul_sat(taps, per_axis);
	return per_axis ? opgraph_mul_sat(opgraph_mul_sat(2, taps), opgraph_value_numel(y)) : 0;
}

/* Multiply-accumulates of the matrix-product ops; -1 for other ops. */
static int64_t matmul_macs(const struct opgraph *g, const struct opgraph_node *n,
			   const struct opgraph_value *y)
{
	const struct opgraph_value *a = in(g, n, 0), *b = in(g, n, 1);
	if (!a || !b || !y)
		return -1;
	if (!strcmp(n->op, "Conv")) /* B*Cout*out spatial = numel(y); W is (Cout, Cin/g, k...) */
		return opgraph_mul_sat(opgraph_value_numel(y), prod(b->dims + 1, b->ndim - 1));
	if (!strcmp(n->op, "ConvTranspose")) /* W is (Cin, Cout/g, k...) */
		return opgraph_mul_sat(opgraph_value_numel(a), prod(b->dims + 1, b->ndim - 1));
	if (!strcmp(n->op, "Gemm"))
		return opgraph_mul_sat(opgraph_value_numel(y),
				       a->dims[opgraph_attr_int(n, "transA", 0) ? 0 : 1]);
	if (!strcmp(n->op, "MatMul"))
		return opgraph_mul_sat(opgraph_value_numel(y), a->dims[a->ndim - 1]);
	if (!strcmp(n->op, "Einsum"))
		return einsum_macs(g, n);
	return -1;
}

static void count_flops(const struct opgraph *g, const struct opgraph_node *n, struct op_cost *c)
{
	const struct opgraph_value *y =
		n->nout && n->out[0] != OPGRAPH_NONE && g->values[n->out[0]].ndim >= 0
			? &g->values[n->out[0]]
			: NULL;
	int64_t macs = matmul_macs(g, n, y);
	if (macs >= 0) {
		c->cls = OP_COST_MATMUL;
		c->macs = macs;
		c->flops = opgraph_mul_sat(2, macs);
		return;
	}
	c->cls = OP_COST_DATA;
	if (!y)
		return;
	for (size_t i = 0; i < sizeof per_element / sizeof per_element[0]; i++)
		if (!strcmp(per_element[i].op, n->op)) {
			c->cls = per_element[i].cls;
			c->flops = opgraph_mul_sat(per_element[i].flops, opgraph_value_numel(y));
			return;
		}
	const struct opgraph_value *x = in(g, n, 0);
	if (!x)
		return;
	if (!strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool") || !strcmp(n->op, "LpPool")) {
		const struct opgraph_attr *k = opgraph_attr(n, "kernel_shape");
		c->cls = OP_COST_POOL;
		c->flops = opgraph_mul_sat(opgraph_value_numel(y),
					   k ? prod(k->ints, (int)k->nints) : 1);
	} else if (!strcmp(n->op, "GlobalAveragePool") || !strcmp(n->op, "GlobalMaxPool")) {
		c->cls = OP_COST_POOL;
		c->flops = opgraph_value_numel(x);
	} else if (!strncmp(n->op, "Reduce", 6) || !strcmp(n->op, "ArgMax") ||
		   !strcmp(n->op, "ArgMin") || !strcmp(n->op, "TopK")) {
		c->cls = OP_COST_REDUCE;
		c->flops = opgraph_value_numel(x);
	} else if (!strcmp(n->op, "Resize") || !strcmp(n->op, "Upsample")) {
		c->flops = resize_flops(n, x, y);
		c->cls = c->flops ? OP_COST_ELEMENTWISE : OP_COST_DATA;
	}
}

void op_cost(const struct opgraph *g, size_t i, int unknown, const unsigned char *is_param,
	     int dtype_bytes, struct op_cost *c)
{
	const struct opgraph_node *n = &g->nodes[i];
	memset(c, 0, sizeof *c);
	if (unknown)
		c->cls = OP_COST_UNKNOWN;
	else
		count_flops(g, n, c);
	c->groups = 1;
	if (!strcmp(n->op, "Conv") || !strcmp(n->op, "ConvTranspose")) {
		const struct opgraph_value *x = in(g, n, 0);
		c->groups = opgraph_attr_int(n, "group", 1);
		c->depthwise = c->groups > 1 && x && x->ndim > 1 && x->dims[1] == c->groups;
	}
	c->kernel = 1;
	for (size_t k = 0; k < sizeof views / sizeof views[0]; k++)
		if (!strcmp(n->op, views[k]))
			c->kernel = 0;
	if (!c->kernel)
		return; /* a view moves nothing and runs no threads */
	if (n->nout && n->out[0] != OPGRAPH_NONE && g->values[n->out[0]].ndim >= 0)
		c->threads = opgraph_value_numel(&g->values[n->out[0]]);
	for (size_t k = 0; k < n->nin; k++) {
		const struct opgraph_value *v = in(g, n, k);
		if (!v)
			continue;
		int64_t b = opgraph_mul_sat(opgraph_value_numel(v), dtype_bytes);
		if (is_param[n->in[k]])
			c->weight_bytes = opgraph_add_sat(c->weight_bytes, b);
		else
			c->input_bytes = opgraph_add_sat(c->input_bytes, b);
	}
	for (size_t k = 0; k < n->nout; k++)
		if (n->out[k] != OPGRAPH_NONE && g->values[n->out[k]].ndim >= 0)
			c->output_bytes =
				opgraph_add_sat(c->output_bytes,
						opgraph_mul_sat(opgraph_value_numel(
									&g->values[n->out[k]]),
								dtype_bytes));
	int64_t moved =
		opgraph_add_sat(opgraph_add_sat(c->input_bytes, c->output_bytes), c->weight_bytes);
	c->intensity = moved ? (double)c->flops / (double)moved : 0.0;
}

void op_cost_make_constant(struct op_cost *c)
{
	enum op_cost_class cls = c->cls;
	int64_t groups = c->groups;
	int depthwise = c->depthwise;
	memset(c, 0, sizeof *c);
	c->cls = cls;
	c->groups = groups;
	c->depthwise = depthwise;
}

void op_cost_accumulate(struct op_cost_totals *t, const struct op_cost *c)
{
	t->total_flops = opgraph_add_sat(t->total_flops, c->flops);
	t->macs = opgraph_add_sat(t->macs, c->macs);
	if (c->cls == OP_COST_MATMUL)
		t->matmul_flops = opgraph_add_sat(t->matmul_flops, c->flops);
	t->memory_bytes = opgraph_add_sat(opgraph_add_sat(t->memory_bytes, c->input_bytes),
					  opgraph_add_sat(c->output_bytes, c->weight_bytes));
}
