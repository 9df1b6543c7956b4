/* MaxK kernels on the GPU against the CPU references (lib/maxk/maxk_ref.c) on
 * fresh random data: top-k exactly (values and indices), the forward
 * SpGEMM and backward SSpMM to fp32 rounding. Graphs: power-law with empty
 * rows, row counts that are not multiples of the block, and a star whose
 * centre has 100,000 neighbours; h of 64, 128, 256, 512 and k of 1, 3, 17,
 * 32, 100 and h. Outputs are poisoned (NaN) before every run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/csr.h"
#include "core/gpu.h"
#include "sparse/graph_gen.h"
#include "maxk/maxk_gpu.h"
#include "maxk/maxk_ref.h"
#include "core/rng.h"
#include "../unit/testutil.h"
#include "maxk/warp4.h"

static float *random_features(int64_t n, int h, uint64_t seed)
{
	struct rng r;
	rng_init(&r, seed, 0);
	float *x = malloc((size_t)(n * h) * sizeof *x);
	for (int64_t i = 0; i < n * h; i++)
		x[i] = (float)((int)rng_below(&r, 2001) - 1000) / 256; /* ties happen */
	return x;
}

static void *dev_poisoned(size_t bytes)
{
	struct sp_err e;
	void *p;
	assert_int_equal(gpu_malloc(&p, bytes ? bytes : 4, "test", &e), 0);
	void *host = malloc(bytes ? bytes : 4);
	memset(host, 0xff, bytes ? bytes : 4);
	assert_int_equal(gpu_upload(p, host, bytes, &e), 0);
	free(host);
	return p;
}

/* The GPU's kept indices (maxk_index_bytes(h) each) widened to the CPU
 * reference's 16 bits. */
static uint16_t *download_index(const void *idx_d, int64_t count, int h)
{
	struct sp_err e;
	const size_t width = (size_t)maxk_index_bytes(h);
	uint8_t *raw = malloc((size_t)count * width + 1);
	uint16_t *idx = malloc((size_t)count * 2 + 2);
	assert_int_equal(gpu_download(raw, idx_d, (size_t)count * width, &e), 0);
	for (int64_t i = 0; i < count; i++)
		idx[i] = width == 1 ? raw[i] : (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
	free(raw);
	return idx;
}

static void check(const struct csr *g, int h, int k, uint64_t seed)
{
	struct sp_err e;
	int64_t n = g->nrows;
	float *av = malloc((size_t)(g->nnz ? g->nnz : 1) * sizeof *av);
	edge_values(g, EDGE_MEAN, av);
	int64_t records = warp4_count(g->indptr, n, 64);
	int32_t *w4 = malloc((size_t)(records ? records : 1) * 16);
	assert_int_equal(warp4_build(g->indptr, n, 64, w4, "test", &e), 0);
	float *x = random_features(n, h, seed), *dy = random_features(n, h, seed + 1);

	/* CPU */
	struct cbsr c;
	assert_int_equal(maxk_topk_ref(x, n, h, k, &c, &e), 0);
	double *y_ref = malloc((size_t)(n * h) * sizeof *y_ref), *dx_ref = malloc((size_t)(n * k) * 8);
	maxk_spgemm_ref(g, av, &c, y_ref);
	assert_int_equal(maxk_sspmm_ref(g, av, &c, dy, dx_ref, &e), 0);

	/* GPU */
	struct maxk_dev_graph d;
	if (maxk_dev_graph_upload(g, av, w4, records, &d, &e))
		fail_msg("upload: %s", e.msg);
	float *x_d, *dy_d;
	assert_int_equal(gpu_malloc((void **)&x_d, (size_t)(n * h) * 4, "x", &e), 0);
	assert_int_equal(gpu_malloc((void **)&dy_d, (size_t)(n * h) * 4, "dy", &e), 0);
	assert_int_equal(gpu_upload(x_d, x, (size_t)(n * h) * 4, &e), 0);
	assert_int_equal(gpu_upload(dy_d, dy, (size_t)(n * h) * 4, &e), 0);
	float *vals_d = dev_poisoned((size_t)(n * k) * 4), *y_d = dev_poisoned((size_t)(n * h) * 4);
	float *dx_d = dev_poisoned((size_t)(n * k) * 4);
	void *idx_d = dev_poisoned((size_t)(n * k) * 2);
	if (maxk_topk_gpu(x_d, n, h, k, vals_d, idx_d, &e) || gpu_sync(&e))
		fail_msg("top-k: %s", e.msg);
	float *vals = malloc((size_t)(n * k) * 4), *y = malloc((size_t)(n * h) * 4);
	float *dx = malloc((size_t)(n * k) * 4);
	assert_int_equal(gpu_download(vals, vals_d, (size_t)(n * k) * 4, &e), 0);
	uint16_t *idx = download_index(idx_d, n * k, h);
	assert_memory_equal(idx, c.index, (size_t)(n * k) * 2);
	assert_memory_equal(vals, c.values, (size_t)(n * k) * 4);

	/* Every form of the forward and of the backward, each into poisoned
	 * output (they must write all of it). */
	static const struct {
		const char *name;
		int (*run)(const struct maxk_dev_graph *, const float *, const void *, int, int,
			   float *, struct sp_err *);
	} forwards[] = {{"forward", maxk_forward_gpu}, {"forward over records", maxk_forward_records_gpu}};
	static const struct {
		const char *name;
		int (*run)(const struct maxk_dev_graph *, const void *, int, int, const float *,
			   float *, struct sp_err *);
	} backwards[] = {{"backward", maxk_backward_gpu},
			 {"backward over records", maxk_backward_records_gpu},
			 {"backward gather", maxk_backward_gather_gpu}};
	for (size_t f = 0; f < sizeof forwards / sizeof *forwards; f++) {
		float *poison = dev_poisoned((size_t)(n * h) * 4);
		gpu_free(y_d);
		y_d = poison;
		if (forwards[f].run(&d, vals_d, idx_d, h, k, y_d, &e) || gpu_sync(&e))
			fail_msg("%s: %s", forwards[f].name, e.msg);
		assert_int_equal(gpu_download(y, y_d, (size_t)(n * h) * 4, &e), 0);
		double err = test_rel_err(y_ref, y, (size_t)(n * h));
		printf("# n=%lld nnz=%lld h=%d k=%d: %s rel err %.2e\n", (long long)n,
		       (long long)g->nnz, h, k, forwards[f].name, err);
		if (!(err < 1e-5))
			fail_msg("%s: relative error %.2e", forwards[f].name, err);
	}
	for (size_t f = 0; f < sizeof backwards / sizeof *backwards; f++) {
		float *poison = dev_poisoned((size_t)(n * k) * 4);
		gpu_free(dx_d);
		dx_d = poison;
		if (backwards[f].run(&d, idx_d, h, k, dy_d, dx_d, &e) || gpu_sync(&e))
			fail_msg("%s: %s", backwards[f].name, e.msg);
		assert_int_equal(gpu_download(dx, dx_d, (size_t)(n * k) * 4, &e), 0);
		double err = test_rel_err(dx_ref, dx, (size_t)(n * k));
		if (!(err < 1e-5))
			fail_msg("%s: relative error %.2e (n=%lld h=%d k=%d)", backwards[f].name, err,
				 (long long)n, h, k);
	}

	/* Scatter to the dense form and gather back at the kept positions. */
	float *dense_d = dev_poisoned((size_t)(n * h) * 4), *gk_d = dev_poisoned((size_t)(n * k) * 4);
	if (maxk_scatter_gpu(vals_d, idx_d, n, h, k, dense_d, &e) ||
	    maxk_gather_gpu(dy_d, idx_d, n, h, k, gk_d, &e) || gpu_sync(&e))
		fail_msg("scatter/gather: %s", e.msg);
	float *dense = malloc((size_t)(n * h) * 4), *dense_ref = malloc((size_t)(n * h) * 4);
	float *gk = malloc((size_t)(n * k) * 4), *gk_ref = malloc((size_t)(n * k) * 4);
	assert_int_equal(gpu_download(dense, dense_d, (size_t)(n * h) * 4, &e), 0);
	assert_int_equal(gpu_download(gk, gk_d, (size_t)(n * k) * 4, &e), 0);
	cbsr_to_dense(&c, dense_ref);
	maxk_backward_ref(&c, dy, gk_ref);
	assert_memory_equal(dense, dense_ref, (size_t)(n * h) * 4);
	assert_memory_equal(gk, gk_ref, (size_t)(n * k) * 4);
	gpu_free(dense_d);
	gpu_free(gk_d);
	free(dense);
	free(dense_ref);
	free(gk);
	free(gk_ref);
	maxk_dev_graph_free(&d);
	gpu_free(x_d);
	gpu_free(dy_d);
	gpu_free(vals_d);
	gpu_free(y_d);
	gpu_free(dx_d);
	gpu_free(idx_d);
	free(av);
	free(w4);
	free(x);
	free(dy);
	free(y_ref);
	free(dx_ref);
	free(vals);
	free(y);
	free(dx);
	free(idx);
	cbsr_free(&c);
}

static void check_spec(const char *spec, int h, int k)
{
	struct graph_spec s;
	struct sp_err e;
	struct csr g;
	assert_int_equal(graph_spec_parse(spec, &s, &e), 0);
	assert_int_equal(graph_gen(&s, &g, &e), 0);
	check(&g, h, k, (uint64_t)(h * 1000 + k));
	csr_free(&g);
}

static void test_all_k_and_widths(void **state)
{
	const int hs[] = {64, 128, 256, 512};
	for (int i = 0; i < 4; i++) {
		const int ks[] = {1, 3, 8, 16, 17, 32, 100, hs[i]};
		for (int j = 0; j < 8; j++)
			if (ks[j] <= hs[i])
				check_spec("powerlaw:nodes=1001,edges=30000,sigma=1.5,seed=5", hs[i], ks[j]);
	}
}

static void test_odd_graphs(void **state)
{
	check_spec("powerlaw:nodes=1,edges=0", 64, 3);
	check_spec("powerlaw:nodes=7,edges=20", 33, 5); /* h not a multiple of 32 */
	check_spec("powerlaw:nodes=5000,edges=0", 64, 16);
	check_spec("powerlaw:nodes=20000,edges=1000000,sigma=2,seed=9", 256, 32);
	check_spec("flickr_like", 256, 32);
	check_spec("powerlaw:nodes=3001,edges=90000,seed=3", 128, 100);
	check_spec("powerlaw:nodes=3001,edges=90000,seed=4", 512, 1);
}

/* The index width changes above 256 columns (8-bit to 16-bit): 256 is the
 * last 8-bit width, 257 (column 256 kept) and 300 the first 16-bit ones. */
static void test_index_width_boundary(void **state)
{
	assert_int_equal(maxk_index_bytes(256), 1);
	assert_int_equal(maxk_index_bytes(257), 2);
	check_spec("powerlaw:nodes=1001,edges=30000,seed=8", 256, 200);
	check_spec("powerlaw:nodes=1001,edges=30000,seed=8", 257, 200);
	check_spec("powerlaw:nodes=1001,edges=30000,seed=8", 257, 1);
	check_spec("powerlaw:nodes=1001,edges=30000,seed=8", 300, 17);
}

/* Mean degree 200: the forward's bank-spread accumulators and groups (used
 * from mean degree 128); widths under 32 give fewer accumulator rows than
 * groups. */
static void test_dense_rows(void **state)
{
	const int hk[][2] = {{256, 32}, {256, 16}, {256, 8}, {256, 3}, {256, 64}, {256, 256},
			     {64, 8},   {128, 100}, {512, 16}, {1024, 32}, {100, 20}, {16, 2},
			     {8, 1},    {2, 1}};
	for (size_t i = 0; i < sizeof hk / sizeof *hk; i++)
		check_spec("powerlaw:nodes=1500,edges=300000,seed=6", hk[i][0], hk[i][1]);
}

static void test_star_of_degree_100000(void **state)
{
	/* Row 0 links to every other node; the others link to node 0. */
	const int64_t n = 100001;
	struct csr g;
	struct sp_err e;
	assert_int_equal(csr_alloc(&g, n, n, 2 * (n - 1), 0, "star", &e), 0);
	for (int64_t j = 1; j < n; j++)
		g.indices[j - 1] = (int32_t)j;
	g.indptr[1] = n - 1;
	for (int64_t r = 1; r < n; r++) {
		g.indices[n - 1 + r - 1] = 0;
		g.indptr[r + 1] = g.indptr[r] + 1;
	}
	check(&g, 64, 17, 77);
	csr_free(&g);
}

/* A dense graph (mean degree over 128: groups) whose rows sit at the
 * forward's cut (MAXK_CHUNK edges): one edge short, exactly, one over, and
 * twice over, beside an empty row; a row stored whole must not be zeroed
 * or added to, a cut row must be zeroed and added to. */
static void test_rows_at_the_cut(void **state)
{
	const int64_t n = 600;
	const int64_t degree[] = {MAXK_CHUNK - 1, MAXK_CHUNK, MAXK_CHUNK + 1, 2 * MAXK_CHUNK, 0};
	int64_t nnz = 0;
	for (int64_t r = 0; r < n; r++)
		nnz += r < 5 ? degree[r] : 150;
	struct csr g;
	struct sp_err e;
	struct rng rg;
	rng_init(&rg, 11, 0);
	assert_int_equal(csr_alloc(&g, n, n, nnz, 0, "cut", &e), 0);
	for (int64_t r = 0; r < n; r++) {
		const int64_t d = r < 5 ? degree[r] : 150;
		g.indptr[r + 1] = g.indptr[r] + d;
		for (int64_t i = 0; i < d; i++) /* repeats are fine: A[r][j] adds up */
			g.indices[g.indptr[r] + i] = (int32_t)rng_below(&rg, (uint64_t)n);
	}
	check(&g, 256, 32, 12);
	check(&g, 256, 16, 13);
	check(&g, 64, 5, 14);
	csr_free(&g);
}

/* Rows the bounds of the select must not fool: all equal, all zero, all
 * negative, a NaN, -0 beside +0, infinities, a few distinct values,
 * subnormals among zeros of both signs (the key adds +0 to a value: it
 * must not flush them), and a negative NaN beside a positive one. */
static void test_topk_special_rows(void **state)
{
	const int64_t n = 11;
	const int hs[] = {33, 256, 512};
	const int ks[] = {1, 5, 32, 33, 64, 65, 200};
	for (int hi = 0; hi < 3; hi++) {
		const int h = hs[hi];
		float *x = malloc((size_t)(n * h) * sizeof *x);
		for (int c = 0; c < h; c++) {
			x[0 * h + c] = 1.5f;
			x[1 * h + c] = 0.0f;
			x[2 * h + c] = -1.0f - c;
			x[3 * h + c] = c == 7 ? NAN : (float)(c % 13);
			x[4 * h + c] = c % 2 ? -0.0f : 0.0f;
			x[5 * h + c] = c == 3 ? INFINITY : c == 4 ? -INFINITY : (float)c / 1024;
			x[6 * h + c] = (float)(c % 3);
			x[7 * h + c] = c == h - 1 ? 2.0f : 1.0f;
			x[8 * h + c] = (float)(h - c) * 1e-30f;
			x[9 * h + c] = c % 3 == 0 ? (float)(c % 7) * 1e-45f : c % 3 == 1 ? -0.0f : 0.0f;
			x[10 * h + c] = c == 2 ? -NAN : c == 9 ? NAN : (float)(c % 5) - 2.0f;
		}
		struct sp_err e;
		float *x_d;
		assert_int_equal(gpu_malloc((void **)&x_d, (size_t)(n * h) * 4, "x", &e), 0);
		assert_int_equal(gpu_upload(x_d, x, (size_t)(n * h) * 4, &e), 0);
		for (int ki = 0; ki < 7 && ks[ki] <= h; ki++) {
			const int k = ks[ki];
			struct cbsr c;
			assert_int_equal(maxk_topk_ref(x, n, h, k, &c, &e), 0);
			float *vals_d = dev_poisoned((size_t)(n * k) * 4);
			void *idx_d = dev_poisoned((size_t)(n * k) * 2);
			if (maxk_topk_gpu(x_d, n, h, k, vals_d, idx_d, &e) || gpu_sync(&e))
				fail_msg("top-k: %s", e.msg);
			float *vals = malloc((size_t)(n * k) * 4);
			assert_int_equal(gpu_download(vals, vals_d, (size_t)(n * k) * 4, &e), 0);
			uint16_t *idx = download_index(idx_d, n * k, h);
			assert_memory_equal(idx, c.index, (size_t)(n * k) * 2);
			assert_memory_equal(vals, c.values, (size_t)(n * k) * 4);
			free(vals);
			free(idx);
			gpu_free(vals_d);
			gpu_free(idx_d);
			cbsr_free(&c);
		}
		gpu_free(x_d);
		free(x);
	}
}

static void test_bad_k(void **state)
{
	struct sp_err e;
	assert_int_equal(maxk_topk_gpu(NULL, 10, 64, 0, NULL, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "k = 0"));
	assert_int_equal(maxk_topk_gpu(NULL, 10, 64, 65, NULL, NULL, &e), -1);
	assert_int_equal(maxk_topk_gpu(NULL, 10, 2048, 8, NULL, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "feature width 2048"));
}

static int setup(void **state)
{
	struct sp_err e;
	return gpu_count() > 0 && gpu_select(0, &e) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_k_and_widths),
		cmocka_unit_test(test_odd_graphs),
		cmocka_unit_test(test_index_width_boundary),
		cmocka_unit_test(test_dense_rows),
		cmocka_unit_test(test_star_of_degree_100000),
		cmocka_unit_test(test_rows_at_the_cut),
		cmocka_unit_test(test_topk_special_rows),
		cmocka_unit_test(test_bad_k),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
