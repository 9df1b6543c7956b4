#include "stages.h"

#include <stdlib.h>
#include <string.h>

int stages_compute(const struct om_graph *g, const size_t *order, const int64_t *flops,
		   int64_t *stage, struct stages_summary *s, struct sp_err *err)
{
	size_t n = g->nnodes;
	/* the heaviest path ending at each node, and how many ops each stage has */
	int64_t *path = calloc(n + 1, sizeof *path), *count = calloc(n + 1, sizeof *count);
	if (!path || !count) {
		free(path);
		free(count);
		return sp_fail(err, "%s: out of memory", g->path);
	}
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		size_t k = order[i];
		const struct om_node *nd = &g->nodes[k];
		int64_t level = -1, heaviest = 0;
		int reads_input = 0;
		for (size_t j = 0; j < nd->nin; j++) {
			if (nd->in[j] == OM_NONE)
				continue;
			const struct om_value *v = &g->values[nd->in[j]];
			reads_input |= v->is_input;
			if (v->producer == OM_NONE || stage[v->producer] < 0)
				continue;
			if (stage[v->producer] > level)
				level = stage[v->producer];
			if (path[v->producer] > heaviest)
				heaviest = path[v->producer];
		}
		stage[k] = level >= 0 ? level + 1 : reads_input ? 0 : -1;
		if (stage[k] < 0)
			continue;
		path[k] = om_add(heaviest, flops[k]);
		count[stage[k]]++;
		if (stage[k] + 1 > s->stages)
			s->stages = stage[k] + 1;
		if (count[stage[k]] > s->max_parallel_ops)
			s->max_parallel_ops = count[stage[k]];
		if (path[k] > s->critical_path_flops)
			s->critical_path_flops = path[k];
	}
	/* the longest path by count passes through one op of every stage */
	s->critical_path_ops = s->stages;
	free(path);
	free(count);
	return 0;
}
