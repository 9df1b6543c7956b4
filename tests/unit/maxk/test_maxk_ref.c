/* The MaxK CPU references against naive dense computations on random data:
 * top-k with ties, negatives and NaN; CBSR scatter and the MaxK backward;
 * the three edge normalisations; the forward SpGEMM and backward SSpMM
 * against dense products; bad k and widths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/csr.h"
#include "sparse/graph_gen.h"
#include "maxk/maxk_ref.h"
#include "core/rng.h"

/* Values on a coarse grid, so that ties are common, of both signs. */
static float *random_matrix(int64_t n, int h, uint64_t seed)
{
	struct rng r;
	rng_init(&r, seed, 0);
	float *x = malloc((size_t)(n * h) * sizeof *x);
	for (int64_t i = 0; i < n * h; i++)
		x[i] = (float)((int)rng_below(&r, 41) - 20) / 8;
	return x;
}

/* Is column c among the k best of row (by the documented rule)? */
static int kept_naive(const float *row, int h, int k, int c)
{
	int before = 0;
	for (int o = 0; o < h; o++) {
		if (o == c)
			continue;
		int nan_o = isnan(row[o]), nan_c = isnan(row[c]);
		if (nan_o != nan_c)
			before += nan_o;
		else if (row[o] != row[c] && !nan_o)
			before += row[o] > row[c];
		else
			before += o < c;
	}
	return before < k;
}

static void check_topk(int64_t n, int h, int k, uint64_t seed)
{
	float *x = random_matrix(n, h, seed);
	x[0] = NAN; /* a NaN is kept, not lost */
	struct cbsr c;
	struct sp_err e;
	assert_int_equal(maxk_topk_ref(x, n, h, k, &c, &e), 0);
	for (int64_t i = 0; i < n; i++) {
		int t = 0;
		for (int col = 0; col < h; col++) {
			if (!kept_naive(x + i * h, h, k, col))
				continue;
			assert_true(t < k);
			assert_int_equal(c.index[i * k + t], col); /* ascending, exactly the kept set */
			float v = c.values[i * k + t], want = x[i * h + col];
			assert_true(v == want || (isnan(v) && isnan(want)));
			t++;
		}
		assert_int_equal(t, k);
	}
	cbsr_free(&c);
	free(x);
}

static void test_topk_against_naive(void **state)
{
	const int ks[] = {1, 3, 17, 32, 100, 256};
	for (int i = 0; i < 6; i++)
		check_topk(300, 256, ks[i], 10 + i);
	check_topk(77, 64, 64, 3); /* k = h keeps everything */
	check_topk(50, 1, 1, 4);
	check_topk(40, 512, 32, 5);
}

static void test_scatter_and_backward(void **state)
{
	const int64_t n = 20;
	const int h = 64, k = 5;
	float *x = random_matrix(n, h, 7);
	struct cbsr c;
	struct sp_err e;
	assert_int_equal(maxk_topk_ref(x, n, h, k, &c, &e), 0);
	float *dense = malloc(n * h * sizeof *dense), *grad = random_matrix(n, h, 8);
	float *gk = malloc(n * k * sizeof *gk);
	cbsr_to_dense(&c, dense);
	maxk_backward_ref(&c, grad, gk);
	for (int64_t i = 0; i < n; i++) {
		int nz = 0;
		for (int col = 0; col < h; col++) {
			int kept = kept_naive(x + i * h, h, k, col);
			assert_true(dense[i * h + col] == (kept ? x[i * h + col] : 0.0f));
			nz += kept;
		}
		assert_int_equal(nz, k);
		for (int t = 0; t < k; t++)
			assert_true(gk[i * k + t] == grad[i * h + c.index[i * k + t]]);
	}
	cbsr_free(&c);
	free(x);
	free(dense);
	free(grad);
	free(gk);
}

static void test_bad_arguments(void **state)
{
	struct cbsr c;
	struct sp_err e;
	float x[4] = {0};
	assert_int_equal(maxk_topk_ref(x, 1, 4, 0, &c, &e), -1);
	assert_non_null(strstr(e.msg, "k = 0 is outside 1..4"));
	assert_int_equal(maxk_topk_ref(x, 1, 4, 5, &c, &e), -1);
	assert_non_null(strstr(e.msg, "k = 5"));
	assert_int_equal(cbsr_alloc(&c, 1, MAXK_MAX_WIDTH + 1, 1, &e), -1);
	assert_non_null(strstr(e.msg, "feature width"));
}

/* A small graph by hand: 0 -> {1, 2}, 1 -> {0}, 2 -> {}, 3 -> {0, 1, 2}. */
static void small_graph(struct csr *g)
{
	static int64_t indptr[] = {0, 2, 3, 3, 6};
	static int32_t indices[] = {1, 2, 0, 0, 1, 2};
	*g = (struct csr){4, 4, 6, indptr, indices, NULL};
}

static void test_edge_values(void **state)
{
	struct csr g;
	small_graph(&g);
	float v[6];
	edge_values(&g, EDGE_ONES, v);
	for (int e = 0; e < 6; e++)
		assert_true(v[e] == 1.0f);
	edge_values(&g, EDGE_MEAN, v);
	const float mean[] = {0.5f, 0.5f, 1.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3};
	for (int e = 0; e < 6; e++)
		assert_true(fabsf(v[e] - mean[e]) < 1e-7f);
	edge_values(&g, EDGE_GCN, v);
	/* degrees 2, 1, 0, 3: edge (0,1) 1/sqrt(2*1), (0,2) deg(2) = 0 gives 0 */
	assert_true(fabsf(v[0] - (float)(1 / sqrt(2.0))) < 1e-7f);
	assert_true(v[1] == 0.0f);
	assert_true(fabsf(v[2] - (float)(1 / sqrt(2.0))) < 1e-7f);
	assert_true(fabsf(v[3] - (float)(1 / sqrt(6.0))) < 1e-7f);
}

/* The forward and backward products against dense ones, on a power-law
 * graph with empty rows and a high-degree row. */
static void check_products(const char *spec, int h, int k, enum edge_norm norm)
{
	struct graph_spec gs;
	struct sp_err e;
	struct csr g;
	assert_int_equal(graph_spec_parse(spec, &gs, &e), 0);
	assert_int_equal(graph_gen(&gs, &g, &e), 0);
	int64_t n = g.nrows;
	float *av = malloc((size_t)(g.nnz ? g.nnz : 1) * sizeof *av);
	edge_values(&g, norm, av);
	float *x = random_matrix(n, h, 21), *dy = random_matrix(n, h, 22);
	struct cbsr c;
	assert_int_equal(maxk_topk_ref(x, n, h, k, &c, &e), 0);
	float *xs = malloc((size_t)(n * h) * sizeof *xs);
	cbsr_to_dense(&c, xs);

	double *y = malloc((size_t)(n * h) * sizeof *y), *dx = malloc((size_t)(n * k) * sizeof *dx);
	maxk_spgemm_ref(&g, av, &c, y);
	assert_int_equal(maxk_sspmm_ref(&g, av, &c, dy, dx, &e), 0);

	double *want = calloc((size_t)(n * h), sizeof *want);
	double *at_dy = calloc((size_t)(n * h), sizeof *at_dy); /* A^T dY, dense */
	for (int64_t r = 0; r < n; r++)
		for (int64_t p = g.indptr[r]; p < g.indptr[r + 1]; p++)
			for (int col = 0; col < h; col++) {
				want[r * h + col] += (double)av[p] * xs[g.indices[p] * h + col];
				at_dy[(int64_t)g.indices[p] * h + col] += (double)av[p] * dy[r * h + col];
			}
	for (int64_t i = 0; i < n * h; i++)
		assert_true(fabs(y[i] - want[i]) <= 1e-9 * (1 + fabs(want[i])));
	for (int64_t j = 0; j < n; j++)
		for (int t = 0; t < k; t++) {
			double w = at_dy[j * h + c.index[j * k + t]];
			assert_true(fabs(dx[j * k + t] - w) <= 1e-9 * (1 + fabs(w)));
		}
	free(av);
	free(x);
	free(dy);
	free(xs);
	free(y);
	free(dx);
	free(want);
	free(at_dy);
	cbsr_free(&c);
	csr_free(&g);
}

static void test_spgemm_and_sspmm(void **state)
{
	check_products("powerlaw:nodes=300,edges=6000,sigma=1.5", 64, 8, EDGE_MEAN);
	check_products("powerlaw:nodes=200,edges=3000,seed=2", 128, 17, EDGE_GCN);
	check_products("powerlaw:nodes=50,edges=2000,sigma=2,seed=3", 32, 32, EDGE_ONES);
	check_products("powerlaw:nodes=100,edges=0", 16, 3, EDGE_MEAN); /* no edges at all */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topk_against_naive),
		cmocka_unit_test(test_scatter_and_backward),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_edge_values),
		cmocka_unit_test(test_spgemm_and_sspmm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
