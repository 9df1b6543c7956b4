#include "partition/stages.h"

#include <stdlib.h>
#include <string.h>

/* Shape and Size read only their input's dims, which inference knows. */
static int reads_only_dims(const struct opgraph_node *nd)
{
	return !strcmp(nd->op, "Shape") || !strcmp(nd->op, "Size");
}

int stages_assign(const struct opgraph *g, const size_t *order, int64_t *stage,
		  struct stages_summary *s, struct sp_err *err)
{
	size_t n = g->nnodes;
	int64_t *count = calloc(n + 1, sizeof *count); /* ops per stage */
	if (!count)
		return sp_fail(err, "%s: out of memory", g->path);
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		size_t k = order[i];
		const struct opgraph_node *nd = &g->nodes[k];
		int64_t level = -1;
		int reads_input = 0;
		for (size_t j = 0; j < nd->nin; j++) {
			if (nd->in[j] == OPGRAPH_NONE)
				continue;
			const struct opgraph_value *v = &g->values[nd->in[j]];
			reads_input |= v->is_input;
			if (v->producer != OPGRAPH_NONE && stage[v->producer] > level)
				level = stage[v->producer];
		}
		stage[k] = reads_only_dims(nd) ? -1 : level >= 0 ? level + 1 : reads_input ? 0 : -1;
		if (stage[k] < 0)
			continue;
		count[stage[k]]++;
		if (stage[k] + 1 > s->stages)
			s->stages = stage[k] + 1;
		if (count[stage[k]] > s->max_parallel_ops)
			s->max_parallel_ops = count[stage[k]];
	}
	/* the longest path by count passes through one op of every stage */
	s->critical_path_ops = s->stages;
	free(count);
	return 0;
}

int stages_heaviest_path(const struct opgraph *g, const size_t *order, const int64_t *stage,
			 const int64_t *weight, int64_t *total, unsigned char *on_path,
			 struct sp_err *err)
{
	size_t n = g->nnodes;
	/* the heaviest path ending at each node, and the op before it there */
	int64_t *path = calloc(n + 1, sizeof *path);
	size_t *pred = malloc((n + 1) * sizeof *pred), end = OPGRAPH_NONE;
	if (!path || !pred) {
		free(path);
		free(pred);
		return sp_fail(err, "%s: out of memory", g->path);
	}
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = order[i];
		const struct opgraph_node *nd = &g->nodes[k];
		pred[k] = OPGRAPH_NONE;
		if (stage[k] < 0)
			continue;
		int64_t heaviest = 0;
		for (size_t j = 0; j < nd->nin; j++) {
			size_t p = nd->in[j] == OPGRAPH_NONE ? OPGRAPH_NONE
							     : g->values[nd->in[j]].producer;
			if (p != OPGRAPH_NONE && stage[p] >= 0 &&
			    (pred[k] == OPGRAPH_NONE || path[p] > heaviest)) {
				heaviest = path[p];
				pred[k] = p;
			}
		}
		path[k] = opgraph_add_sat(heaviest, weight[k]);
		if (end == OPGRAPH_NONE || path[k] > *total) {
			*total = path[k];
			end = k;
		}
	}
	if (on_path) {
		memset(on_path, 0, n);
		for (size_t k = end; k != OPGRAPH_NONE; k = pred[k])
			on_path[k] = 1;
	}
	free(path);
	free(pred);
	return 0;
}
