/* CPU reference of nn.Embedding: forward gathers a weight row per token;
 * backward sums each token's gradient row into its id's row of dweight
 * (rows no token uses are 0). The tokens are grouped by id first (a counting
 * sort), so every dweight row is one independent sum, in token order. */
#include <stdlib.h>
#include <string.h>

#include "sample/sample_ref.h"

static void gather_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	const int32_t *ids = (const int32_t *)st->t[EMB_IDS].data;
	int64_t n = st->d.cols;
	for (int64_t r = lo; r < hi; r++)
		memcpy(sample_ref_values(st, EMB_Y) + r * n,
		       sample_ref_values(st, EMB_W) + (int64_t)ids[r] * n, (size_t)n * sizeof(float));
}

int sample_ref_embedding_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, gather_rows);
}

struct by_id {
	const struct sample_state *st;
	int64_t *start; /* vocab + 1: tokens of id v are order[start[v] .. start[v + 1]) */
	int64_t *order;
};

static void scatter_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct by_id *g = ctx;
	const struct sample_state *st = g->st;
	int64_t n = st->d.cols;
	const float *dy = sample_ref_values(st, EMB_DY);
	for (int64_t v = lo; v < hi; v++) {
		float *dw = sample_ref_values(st, EMB_DW) + v * n;
		for (int64_t j = 0; j < n; j++) {
			double acc = 0;
			for (int64_t t = g->start[v]; t < g->start[v + 1]; t++)
				acc += dy[g->order[t] * n + j];
			dw[j] = sample_round(st->p, acc);
		}
	}
}

int sample_ref_embedding_backward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	const int32_t *ids = (const int32_t *)st->t[EMB_IDS].data;
	int64_t vocab = st->d.vocab, tokens = st->d.rows;
	struct by_id g = {st, calloc((size_t)vocab + 1, sizeof(int64_t)),
			  malloc((size_t)tokens * sizeof(int64_t))};
	int64_t *cursor = malloc((size_t)vocab * sizeof(int64_t));
	if (!g.start || !g.order || !cursor) {
		free(g.start);
		free(g.order);
		free(cursor);
		return sp_fail(err, "embedding backward: out of memory grouping %lld tokens",
			       (long long)tokens);
	}
	for (int64_t t = 0; t < tokens; t++)
		g.start[ids[t] + 1]++;
	for (int64_t v = 0; v < vocab; v++) {
		g.start[v + 1] += g.start[v];
		cursor[v] = g.start[v];
	}
	for (int64_t t = 0; t < tokens; t++)
		g.order[cursor[ids[t]]++] = t;
	sample_ref_for_rows(&g, vocab, scatter_rows);
	free(g.start);
	free(g.order);
	free(cursor);
	return 0;
}
