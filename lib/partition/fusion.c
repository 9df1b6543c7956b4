#include "partition/fusion.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static int is_one_of(const char *op, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(op, *list))
			return 1;
	return 0;
}

static const char *const heads[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", NULL};
static const char *const convs[] = {"Conv", "ConvTranspose", NULL};
static const char *const products[] = {"Gemm", "MatMul", NULL};
static const char *const activations[] = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid",
					  "HardSwish", "Tanh", "Gelu", "Elu", "Selu", "Mish",
					  "Softplus", "PRelu", NULL};

/* The only consumer of node k's first output, or OPGRAPH_NONE. */
static size_t sole_consumer(const struct opgraph *g, const size_t *consumer, size_t k)
{
	const struct opgraph_node *n = &g->nodes[k];
	if (!n->nout || n->out[0] == OPGRAPH_NONE || g->values[n->out[0]].is_output)
		return OPGRAPH_NONE;
	return consumer[n->out[0]];
}

/* Does node k add a parameter to the value v (a bias)? */
static int adds_bias(const struct opgraph *g, const unsigned char *is_param, size_t k, size_t v)
{
	const struct opgraph_node *n = &g->nodes[k];
	if (strcmp(n->op, "Add") || n->nin != 2)
		return 0;
	size_t other = n->in[0] == v ? n->in[1] : n->in[0];
	return other != OPGRAPH_NONE && is_param[other];
}

int fusion_find(const struct opgraph *g, const size_t *order, const int64_t *stage,
		const unsigned char *is_param, int dtype_bytes, struct fusion **out, size_t *n,
		struct sp_err *err)
{
	/* consumer[v]: the node reading value v when exactly one does (once),
	 * OPGRAPH_NONE for none or several; uses[v] counts the reads */
	size_t *consumer = malloc((g->nvalues + 1) * sizeof *consumer), cap = 0;
	unsigned *uses = calloc(g->nvalues + 1, sizeof *uses);
	*out = NULL;
	*n = 0;
	if (!consumer || !uses)
		goto oom;
	for (size_t v = 0; v < g->nvalues; v++)
		consumer[v] = OPGRAPH_NONE;
	for (size_t k = 0; k < g->nnodes; k++)
		for (size_t j = 0; j < g->nodes[k].nin; j++) {
			size_t v = g->nodes[k].in[j];
			if (v == OPGRAPH_NONE)
				continue;
			if (uses[v] < 2)
				uses[v]++;
			consumer[v] = uses[v] == 1 ? k : OPGRAPH_NONE;
		}
	for (size_t i = 0; i < g->nnodes; i++) {
		size_t k = order[i];
		const struct opgraph_node *head = &g->nodes[k];
		if (stage[k] < 0 || !is_one_of(head->op, heads))
			continue;
		struct fusion f = {.ops = {k}, .nops = 1};
		int conv = is_one_of(head->op, convs), product = is_one_of(head->op, products);
		for (int step = 0; step < 3; step++) {
			size_t last = f.ops[f.nops - 1], next = sole_consumer(g, consumer, last);
			if (next == OPGRAPH_NONE)
				break;
			const char *op = g->nodes[next].op;
			size_t v = g->nodes[last].out[0];
			if (step == 0 && !(conv && !strcmp(op, "BatchNormalization")))
				continue; /* no norm: try the bias */
			if (step == 1 && !(product && adds_bias(g, is_param, next, v)))
				continue;
			if (step == 2 && !is_one_of(op, activations))
				break;
			f.ops[f.nops++] = next;
			f.saved_bytes = opgraph_add_sat(f.saved_bytes,
							opgraph_mul_sat(2 * (int64_t)dtype_bytes,
									opgraph_value_numel(
										&g->values[v])));
		}
		if (f.nops < 2)
			continue;
		struct fusion *grown = buf_grow_array(*out, &cap, *n + 1, sizeof *grown);
		if (!grown)
			goto oom;
		*out = grown;
		(*out)[(*n)++] = f;
	}
	free(consumer);
	free(uses);
	return 0;
oom:
	free(consumer);
	free(uses);
	free(*out);
	*out = NULL;
	*n = 0;
	return sp_fail(err, "%s: out of memory", g->path);
}
