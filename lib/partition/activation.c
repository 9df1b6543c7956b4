#include "partition/activation.h"

#include <stdlib.h>

static int is_activation(const struct partition_report *r, size_t v)
{
	const struct opgraph_value *x = &r->g.values[v];
	if (x->is_input)
		return 1;
	return !r->is_param[v] && !x->is_constant && x->producer != OPGRAPH_NONE &&
	       r->stage[x->producer] >= 0;
}

int activation_peak(const struct partition_report *r, int64_t *bytes, struct sp_err *err)
{
	const struct opgraph *g = &r->g;
	size_t nv = g->nvalues ? g->nvalues : 1;
	size_t *root = malloc(nv * sizeof *root); /* the value whose memory v uses */
	size_t *last = malloc(nv * sizeof *last); /* position in order of a root's last reader */
	int64_t *size = calloc(nv, sizeof *size);  /* a root's bytes while it is held */
	if (!root || !last || !size) {
		free(root);
		free(last);
		free(size);
		return sp_fail(err, "%s: out of memory", g->path);
	}
	int dtype_bytes = op_cost_dtype_size(hardware_dtype_name(r->o->dtype));
	int64_t live = 0, peak = 0;
	for (size_t v = 0; v < g->nvalues; v++) {
		root[v] = v;
		last[v] = 0;
		if (g->values[v].is_input && g->values[v].ndim >= 0) {
			size[v] = opgraph_mul_sat(opgraph_value_numel(&g->values[v]), dtype_bytes);
			live = opgraph_add_sat(live, size[v]);
		}
	}
	/* the aliases of views, then each root's last reader */
	for (size_t i = 0; i < g->nnodes; i++) {
		size_t k = r->order[i];
		const struct opgraph_node *n = &g->nodes[k];
		if (r->stage[k] < 0)
			continue;
		for (size_t j = 0; j < n->nin; j++)
			if (n->in[j] != OPGRAPH_NONE && is_activation(r, n->in[j]))
				last[root[n->in[j]]] = i;
		if (!r->ops[k].cost.kernel && n->nin && n->in[0] != OPGRAPH_NONE &&
		    is_activation(r, n->in[0]))
			for (size_t j = 0; j < n->nout; j++)
				if (n->out[j] != OPGRAPH_NONE)
					root[n->out[j]] = root[n->in[0]];
	}
	for (size_t v = 0; v < g->nvalues; v++) /* the caller's tensors: held throughout */
		if (g->values[v].is_input || g->values[v].is_output)
			last[root[v]] = g->nnodes;
	peak = live;
	for (size_t i = 0; i < g->nnodes; i++) {
		size_t k = r->order[i];
		const struct opgraph_node *n = &g->nodes[k];
		if (r->stage[k] < 0)
			continue;
		for (size_t j = 0; j < n->nout; j++) {
			size_t v = n->out[j];
			if (v == OPGRAPH_NONE || root[v] != v || g->values[v].ndim < 0)
				continue;
			size[v] = opgraph_mul_sat(opgraph_value_numel(&g->values[v]), dtype_bytes);
			live = opgraph_add_sat(live, size[v]);
			if (last[v] < i) /* read by no later op */
				last[v] = i;
		}
		if (live > peak)
			peak = live;
		/* free what no later op reads: this op's inputs and unread outputs */
		for (int side = 0; side < 2; side++) {
			const size_t *vs = side ? n->out : n->in, count = side ? n->nout : n->nin;
			for (size_t j = 0; j < count; j++) {
				size_t v = vs[j] == OPGRAPH_NONE ? OPGRAPH_NONE : root[vs[j]];
				if (v != OPGRAPH_NONE && size[v] && last[v] == i) {
					live -= size[v];
					size[v] = 0;
				}
			}
		}
	}
	*bytes = peak;
	free(root);
	free(last);
	free(size);
	return 0;
}
