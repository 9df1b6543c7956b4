#include "sample/sample_grid.h"

/* The value after v in dimension i: above the end once past it, without
 * overflow (values and steps are at most SAMPLE_MAX_VALUE). */
static int64_t advance(const struct sample_grid *g, int i, int64_t v)
{
	if (g->grow[i] == SAMPLE_ADD)
		return v + g->step[i];
	return v > g->end[i] / g->step[i] ? g->end[i] + 1 : v * g->step[i];
}

uint64_t sample_grid_axis_len(const struct sample_grid *g, int i)
{
	if (g->grow[i] == SAMPLE_ADD)
		return (uint64_t)((g->end[i] - g->start[i]) / g->step[i]) + 1;
	uint64_t n = 0;
	for (int64_t v = g->start[i]; v <= g->end[i]; v = advance(g, i, v))
		n++;
	return n;
}

uint64_t sample_grid_count(const struct sample_grid *g)
{
	uint64_t n = 1;
	for (int i = 0; i < g->ndims; i++)
		n *= sample_grid_axis_len(g, i);
	return n;
}

void sample_grid_first(const struct sample_grid *g, int64_t *shape)
{
	for (int i = 0; i < g->ndims; i++)
		shape[i] = g->start[i];
}

int sample_grid_next(const struct sample_grid *g, int64_t *shape)
{
	int i = g->ndims - 1;
	shape[i] = advance(g, i, shape[i]);
	while (i > 0 && shape[i] > g->end[i]) {
		shape[i] = g->start[i];
		i--;
		shape[i] = advance(g, i, shape[i]);
	}
	return shape[0] <= g->end[0];
}

int sample_grid_owns(uint64_t n, int parts, int part)
{
	return n % (uint64_t)parts == (uint64_t)(part - 1);
}

uint64_t sample_grid_part_count(uint64_t total, int parts, int part)
{
	/* The part's first position: n mod parts = part - 1, n >= 1. */
	uint64_t first = part == 1 ? (uint64_t)parts : (uint64_t)(part - 1);
	return total < first ? 0 : (total - first) / (uint64_t)parts + 1;
}
