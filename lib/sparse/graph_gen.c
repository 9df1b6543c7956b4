#include "sparse/graph_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/rng.h"
#include "sparse/synth_spec.h"

/* Rows per random stream; fixed so output does not depend on threads. */
enum { BLOCK_ROWS = 4096 };

static const struct graph_spec presets[] = {
	{"reddit_like", 232965, 114618749, 1.0, 1},
	{"products_like", 2449029, 123676637, 1.0, 1},
	{"flickr_like", 89250, 991155, 1.0, 1},
};

int graph_spec_parse(const char *text, struct graph_spec *s, struct sp_err *err)
{
	char buf[256];
	if (strlen(text) >= sizeof buf)
		return sp_fail(err, "--synthetic: spec is too long");
	strcpy(buf, text);
	size_t head = strcspn(buf, ":,");
	char sep = buf[head];
	buf[head] = '\0';
	memset(s, 0, sizeof *s);
	int found = 0;
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
		if (!strcmp(buf, presets[i].name)) {
			*s = presets[i];
			found = 1;
		}
	if (!found) {
		if (strcmp(buf, "powerlaw"))
			return sp_fail(err, "--synthetic: unknown graph '%s' (reddit_like, products_like, "
					    "flickr_like, powerlaw:nodes=N,edges=E)", buf);
		snprintf(s->name, sizeof s->name, "powerlaw");
		s->sigma = 1.0;
		s->seed = 1;
	}
	long long nodes = s->nodes, edges = s->edges, seed = (long long)s->seed;
	const struct spec_key keys[] = {
		{"nodes", 0, 0, (double)INT64_MAX, &nodes},
		{"edges", 0, 0, (double)INT64_MAX, &edges},
		{"sigma", 1, 0, 4, &s->sigma},
		{"seed", 0, 0, (double)INT64_MAX, &seed},
	};
	if (sep && synth_spec_parse(buf + head + 1, keys, sizeof keys / sizeof *keys,
				   "nodes, edges, sigma, seed", NULL, 0, err))
		return -1;
	s->nodes = nodes;
	s->edges = edges;
	s->seed = (uint64_t)seed;
	if (s->nodes < 1 || s->nodes > CSR_MAX_DIM)
		return sp_fail(err, "--synthetic: nodes must be in 1..%lld", (long long)CSR_MAX_DIM);
	if (s->edges > s->nodes * (s->nodes - 1) || s->edges > CSR_MAX_NNZ)
		return sp_fail(err, "--synthetic: %lld edges do not fit %lld nodes without self-loops or repeats",
			       (long long)s->edges, (long long)s->nodes);
	return 0;
}

struct degree_job {
	const struct graph_spec *s;
	double *weight;
};

static void draw_weights(void *ctx, int64_t block)
{
	struct degree_job *j = ctx;
	struct rng r;
	rng_init(&r, j->s->seed, 2 * (uint64_t)block);
	int64_t end = (block + 1) * BLOCK_ROWS < j->s->nodes ? (block + 1) * BLOCK_ROWS : j->s->nodes;
	for (int64_t i = block * BLOCK_ROWS; i < end; i++)
		j->weight[i] = exp(j->s->sigma * rng_normal(&r));
}

static double capped_sum(const double *w, int64_t n, double scale, double cap)
{
	double sum = 0;
	for (int64_t i = 0; i < n; i++)
		sum += fmin(scale * w[i], cap);
	return sum;
}

int graph_gen_indptr(const struct graph_spec *s, int64_t **out, struct sp_err *err)
{
	int64_t n = s->nodes;
	int64_t *indptr = malloc((size_t)(n + 1) * sizeof *indptr);
	double *weight = malloc((size_t)n * sizeof *weight);
	if (!indptr || !weight) {
		free(indptr);
		free(weight);
		return sp_fail(err, "--synthetic: out of memory for %lld nodes", (long long)n);
	}
	/* The log-normal's scale does not matter: weights are normalised to E below. */
	struct degree_job job = {s, weight};
	parallel_for((n + BLOCK_ROWS - 1) / BLOCK_ROWS, draw_weights, &job);
	/* Degrees are scale * weight, capped at n - 1 (no self-loops, no
	 * repeats); the scale is the one at which they sum to E (water-filling,
	 * by bisection: the capped sum grows with the scale). */
	double cap = (double)(n - 1), total = 0, wmax = 0, lo = 0, hi;
	for (int64_t i = 0; i < n; i++) {
		total += weight[i];
		wmax = fmax(wmax, weight[i]);
	}
	hi = total > 0 ? (double)s->edges / total : 0;
	/* Only when some degree reaches the cap is there a scale to search for;
	 * otherwise rounding alone could send the search over every node. */
	if (hi * wmax > cap && capped_sum(weight, n, hi, cap) < (double)s->edges) {
		lo = hi;
		while (capped_sum(weight, n, hi, cap) < (double)s->edges)
			hi *= 2;
		for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
			double mid = 0.5 * (lo + hi);
			*(capped_sum(weight, n, mid, cap) < (double)s->edges ? &lo : &hi) = mid;
		}
	}
	/* Cumulative rounding: degree i is round(S_i) - round(S_{i-1}) of the
	 * running sum S of capped degrees, which totals E and is never off by
	 * more than one (clipped again at the cap, which can cost an edge). */
	double sum = capped_sum(weight, n, hi, cap), cum = 0;
	int64_t prev = 0;
	indptr[0] = 0;
	for (int64_t i = 0; i < n; i++) {
		cum += fmin(hi * weight[i], cap);
		/* No edges (or no weight): every degree is zero, not 0/0. */
		int64_t upto = sum > 0 ? (int64_t)llround((double)s->edges * (cum / sum)) : 0;
		int64_t d = upto - prev;
		prev = upto;
		indptr[i + 1] = indptr[i] + (d > n - 1 ? n - 1 : d);
	}
	free(weight);
	*out = indptr;
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* d distinct neighbours of row `self` among n nodes, sorted, no self-loop. */
static void sample_row(struct rng *r, int64_t n, int64_t self, int64_t d, int32_t *out)
{
	if (d * 4 > n) {
		/* Dense row: selection sampling (Knuth's algorithm S) over the others. */
		int64_t need = d, left = n - 1, k = 0;
		for (int64_t c = 0; c < n && need; c++) {
			if (c == self)
				continue;
			if ((int64_t)rng_below(r, (uint64_t)left) < need) {
				out[k++] = (int32_t)c;
				need--;
			}
			left--;
		}
		return;
	}
	/* Sparse row: draw, sort, drop repeats, top up until d distinct. */
	int64_t have = 0;
	while (have < d) {
		for (int64_t k = have; k < d; k++) {
			int64_t c = (int64_t)rng_below(r, (uint64_t)(n - 1));
			out[k] = (int32_t)(c >= self ? c + 1 : c);
		}
		qsort(out, (size_t)d, sizeof *out, cmp_i32);
		have = 0;
		for (int64_t k = 0; k < d; k++)
			if (have == 0 || out[k] != out[have - 1])
				out[have++] = out[k];
	}
}

struct neighbour_job {
	const struct graph_spec *s;
	struct csr *g;
};

static void draw_neighbours(void *ctx, int64_t block)
{
	struct neighbour_job *j = ctx;
	struct rng r;
	rng_init(&r, j->s->seed, 2 * (uint64_t)block + 1);
	int64_t end = (block + 1) * BLOCK_ROWS < j->g->nrows ? (block + 1) * BLOCK_ROWS : j->g->nrows;
	for (int64_t i = block * BLOCK_ROWS; i < end; i++)
		sample_row(&r, j->g->nrows, i, j->g->indptr[i + 1] - j->g->indptr[i],
			   j->g->indices + j->g->indptr[i]);
}

int graph_gen(const struct graph_spec *s, struct csr *g, struct sp_err *err)
{
	int64_t *indptr;
	if (graph_gen_indptr(s, &indptr, err))
		return -1;
	int64_t nnz = indptr[s->nodes];
	memset(g, 0, sizeof *g);
	g->nrows = g->ncols = s->nodes;
	g->nnz = nnz;
	g->indptr = indptr;
	g->indices = malloc((size_t)(nnz ? nnz : 1) * sizeof *g->indices);
	if (!g->indices) {
		csr_free(g);
		return sp_fail(err, "--synthetic: out of memory for %lld edges", (long long)nnz);
	}
	struct neighbour_job job = {s, g};
	parallel_for((s->nodes + BLOCK_ROWS - 1) / BLOCK_ROWS, draw_neighbours, &job);
	return 0;
}
