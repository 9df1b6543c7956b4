/* The CUDA backend (kernels/gnn/gnn_gpu*.cu) against the CPU backend
 * (lib/gnn/gnn_cpu.c), operation by operation, through the same table
 * (lib/gnn/gnn_backend.h): each input is made once on the host and copied into
 * both backends, each operation runs on both, and the outputs are compared
 * (2-norm relative error): 1e-5 for fp32 elementwise work and sums, 1e-4
 * for gemm and LayerNorm's backward, 1e-2 for gemm in TF32; top-k,
 * scatter, gather, ReLU and dropout exactly. Pure
 * outputs start as NaN on both sides, so an entry left unwritten shows.
 * Shapes are odd on purpose: row counts that are not multiples of a block,
 * widths 64, 100, 256, 512 and 1024, k of 1, 17, 32 and h, graphs with an
 * empty row and with no edges at all. The seed is fresh each run and
 * printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gnn/gnn_backend.h"
#include "gnn/gnn_data.h"
#include "sparse/graph_gen.h"
#include "core/rng.h"
#include "../unit/testutil.h"
#include "maxk/maxk_gpu.h"
#include "maxk/warp4.h"

/* be[0] is the CPU backend (the reference), be[1] the CUDA backend. */
static struct gnn_backend *be[2];
static uint64_t seed;

/* A buffer on both backends. */
struct twin {
	void *p[2];
	size_t bytes;
};

static void ok(int rc, int side, const struct sp_err *e)
{
	if (rc)
		fail_msg("%s backend: %s", be[side]->name, e->msg);
}

/* A twin holding host's bytes, or NaN (all bits set) when host is NULL. */
static struct twin twin_new(const void *host, size_t bytes)
{
	struct twin t = {{NULL, NULL}, bytes};
	struct sp_err e;
	void *fill = NULL;
	if (!host) {
		fill = malloc(bytes ? bytes : 1);
		memset(fill, 0xff, bytes);
		host = fill;
	}
	for (int s = 0; s < 2; s++) {
		t.p[s] = be[s]->alloc(be[s], bytes, &e);
		if (!t.p[s])
			fail_msg("%s alloc: %s", be[s]->name, e.msg);
		ok(be[s]->to_device(be[s], t.p[s], host, bytes, &e), s, &e);
	}
	free(fill);
	return t;
}

static void twin_free(struct twin *t)
{
	for (int s = 0; s < 2; s++)
		be[s]->release(be[s], t->p[s]);
}

static void *fetch(const struct twin *t, int side)
{
	struct sp_err e;
	void *host = malloc(t->bytes ? t->bytes : 1);
	ok(be[side]->to_host(be[side], host, t->p[side], t->bytes, &e), side, &e);
	return host;
}

/* ||gpu - cpu|| / ||cpu|| over the twin's floats (the plain norm when the
 * CPU's is zero); infinity when only one side has a NaN somewhere. */
static double twin_rel_err(const struct twin *t)
{
	float *c = fetch(t, 0), *g = fetch(t, 1);
	double num = 0, den = 0;
	for (size_t i = 0; i < t->bytes / sizeof(float); i++) {
		if (isnan(c[i]) != isnan(g[i])) {
			num = INFINITY;
			break;
		}
		if (isnan(c[i]))
			continue;
		num += ((double)g[i] - c[i]) * ((double)g[i] - c[i]);
		den += (double)c[i] * c[i];
	}
	free(c);
	free(g);
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The relative error, failing above tol; returns it for the summary line. */
static double expect_close(const char *what, const struct twin *t, double tol)
{
	double err = twin_rel_err(t);
	if (!(err <= tol))
		fail_msg("%s: relative error %.3g, allowed %.3g", what, err, tol);
	return err;
}

static void expect_equal(const char *what, const struct twin *t)
{
	unsigned char *c = fetch(t, 0), *g = fetch(t, 1);
	for (size_t i = 0; i < t->bytes; i++)
		if (c[i] != g[i])
			fail_msg("%s: byte %zu differs (cpu %#x, gpu %#x)", what, i, c[i], g[i]);
	free(c);
	free(g);
}

static double worse(double a, double b)
{
	return a > b ? a : b;
}

/* count normal floats, scaled. */
static float *randn(size_t count, float scale, uint64_t stream)
{
	struct rng r;
	rng_init(&r, seed, stream);
	float *x = malloc((count ? count : 1) * sizeof *x);
	for (size_t i = 0; i < count; i++)
		x[i] = scale * (float)rng_normal(&r);
	return x;
}

static struct twin twin_randn(size_t count, float scale, uint64_t stream)
{
	float *x = randn(count, scale, stream);
	struct twin t = twin_new(x, count * sizeof(float));
	free(x);
	return t;
}

static struct twin twin_nan(size_t count, size_t size)
{
	return twin_new(NULL, count * size);
}

static void test_memory(void **state)
{
	struct sp_err e;
	const size_t n = 1000003;
	float *zeros = calloc(n, sizeof *zeros);
	void *none = be[1]->alloc(be[1], 0, &e);
	assert_non_null(none);
	be[1]->release(be[1], none);
	void *p = be[1]->alloc(be[1], n * sizeof(float), &e);
	assert_non_null(p);
	float *host = malloc(n * sizeof *host);
	assert_int_equal(be[1]->to_host(be[1], host, p, n * sizeof(float), &e), 0);
	assert_memory_equal(host, zeros, n * sizeof(float)); /* alloc zeroes */
	assert_true(be[1]->peak_memory(be[1]) >= n * sizeof(float));

	float *x = randn(n, 1, 1);
	void *q = be[1]->alloc(be[1], n * sizeof(float), &e);
	assert_int_equal(be[1]->to_device(be[1], p, x, n * sizeof(float), &e), 0);
	assert_int_equal(be[1]->copy(be[1], q, p, n * sizeof(float), &e), 0);
	assert_int_equal(be[1]->sync(be[1], &e), 0);
	assert_int_equal(be[1]->to_host(be[1], host, q, n * sizeof(float), &e), 0);
	assert_memory_equal(host, x, n * sizeof(float));
	size_t peak = be[1]->peak_memory(be[1]);
	assert_true(peak >= 2 * n * sizeof(float));
	be[1]->release(be[1], p);
	be[1]->release(be[1], q);
	be[1]->release(be[1], NULL);
	assert_int_equal(be[1]->peak_memory(be[1]), peak); /* the peak stays */
	printf("# peak device memory so far: %zu bytes\n", peak);
	free(zeros);
	free(host);
	free(x);
}

/* C (m x n) = alpha op(A) op(B) + beta C in every transpose combination. */
static double check_gemm(int64_t m, int64_t n, int64_t k, int ta, int tb, int tf32)
{
	struct sp_err e;
	struct twin a = twin_randn((size_t)(m * k), 1, 10), b = twin_randn((size_t)(k * n), 1, 11);
	struct twin c = twin_randn((size_t)(m * n), 1, 12);
	for (int s = 0; s < 2; s++) {
		be[s]->tf32 = tf32;
		ok(be[s]->gemm(be[s], ta, tb, m, n, k, 0.75f, a.p[s], b.p[s], 0.5f, c.p[s], &e), s,
		   &e);
	}
	char what[96];
	snprintf(what, sizeof what, "gemm m=%lld n=%lld k=%lld ta=%d tb=%d tf32=%d", (long long)m,
		 (long long)n, (long long)k, ta, tb, tf32);
	double err = expect_close(what, &c, tf32 ? 1e-2 : 1e-4);
	for (int s = 0; s < 2; s++)
		be[s]->tf32 = 0;
	twin_free(&a);
	twin_free(&b);
	twin_free(&c);
	return err;
}

static void test_gemm(void **state)
{
	static const int64_t shapes[][3] = {
		{1, 1, 1}, {37, 100, 64}, {1001, 256, 100}, {64, 47, 256}, {300, 41, 1001},
		{5, 602, 3},
	};
	double fp32 = 0, tf32 = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		for (int t = 0; t < 4; t++) {
			fp32 = worse(fp32, check_gemm(shapes[i][0], shapes[i][1], shapes[i][2],
						      t & 1, t >> 1, 0));
			tf32 = worse(tf32, check_gemm(shapes[i][0], shapes[i][1], shapes[i][2],
						      t & 1, t >> 1, 1));
		}
	printf("# gemm: worst relative error %.2e (fp32), %.2e (tf32)\n", fp32, tf32);
}

static void test_bias_and_col_sum(void **state)
{
	static const int64_t ms[] = {1, 1001, 5000}, ns[] = {1, 47, 64, 100, 256, 602};
	struct sp_err e;
	double worst = 0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 6; j++) {
			const int64_t m = ms[i], n = ns[j];
			struct twin y = twin_randn((size_t)(m * n), 1, 20);
			struct twin bias = twin_randn((size_t)n, 1, 21),
				    db = twin_randn((size_t)n, 1, 22);
			for (int s = 0; s < 2; s++)
				ok(be[s]->bias_add(be[s], y.p[s], bias.p[s], m, n, &e), s, &e);
			worst = worse(worst, expect_close("bias_add", &y, 1e-5));
			for (int s = 0; s < 2; s++)
				ok(be[s]->col_sum(be[s], y.p[s], m, n, 0.5f, db.p[s], &e), s, &e);
			worst = worse(worst, expect_close("col_sum beta=0.5", &db, 1e-5));
			for (int s = 0; s < 2; s++)
				ok(be[s]->col_sum(be[s], y.p[s], m, n, 0.0f, db.p[s], &e), s, &e);
			worst = worse(worst, expect_close("col_sum beta=0", &db, 1e-5));
			twin_free(&y);
			twin_free(&bias);
			twin_free(&db);
		}
	printf("# bias_add, col_sum: worst relative error %.2e\n", worst);
}

static void test_vector_ops(void **state)
{
	static const int64_t counts[] = {1, 1000, 100003, (1 << 20) + 7};
	struct sp_err e;
	double worst = 0;
	for (int i = 0; i < 4; i++) {
		const int64_t n = counts[i];
		struct twin x = twin_randn((size_t)n, 1, 30), y = twin_randn((size_t)n, 1, 31);
		struct twin eps = twin_randn(1, 0.1f, 32), out = twin_randn(1, 1, 33);
		for (int s = 0; s < 2; s++)
			ok(be[s]->axpby(be[s], 0.5f, x.p[s], -1.25f, y.p[s], n, &e), s, &e);
		worst = worse(worst, expect_close("axpby", &y, 1e-5));
		for (int s = 0; s < 2; s++)
			ok(be[s]->axpby(be[s], 1.5f, x.p[s], 0.0f, y.p[s], n, &e), s, &e);
		worst = worse(worst, expect_close("axpby beta=0", &y, 1e-5));
		for (int s = 0; s < 2; s++)
			ok(be[s]->axpy_eps(be[s], eps.p[s], x.p[s], y.p[s], n, &e), s, &e);
		worst = worse(worst, expect_close("axpy_eps", &y, 1e-5));
		for (int s = 0; s < 2; s++)
			ok(be[s]->dot(be[s], x.p[s], y.p[s], n, 0.5f, out.p[s], &e), s, &e);
		worst = worse(worst, expect_close("dot beta=0.5", &out, 1e-5));
		for (int s = 0; s < 2; s++)
			ok(be[s]->dot(be[s], x.p[s], y.p[s], n, 0.0f, out.p[s], &e), s, &e);
		worst = worse(worst, expect_close("dot beta=0", &out, 1e-5));
		twin_free(&x);
		twin_free(&y);
		twin_free(&eps);
		twin_free(&out);
	}
	printf("# axpby, axpy_eps, dot: worst relative error %.2e\n", worst);
}

static void test_relu_and_dropout(void **state)
{
	static const float rates[] = {0.0f, 0.1f, 0.5f, 0.9f};
	const int64_t n = 100003;
	struct sp_err e;
	struct twin x = twin_randn((size_t)n, 1, 40), dy = twin_randn((size_t)n, 1, 41);
	struct twin y = twin_nan((size_t)n, sizeof(float)), dx = twin_nan((size_t)n, sizeof(float));
	for (int s = 0; s < 2; s++) {
		ok(be[s]->relu(be[s], x.p[s], y.p[s], n, &e), s, &e);
		ok(be[s]->relu_backward(be[s], y.p[s], dy.p[s], dx.p[s], n, &e), s, &e);
	}
	expect_equal("relu", &y);
	expect_equal("relu_backward", &dx);
	for (int s = 0; s < 2; s++) { /* in place */
		ok(be[s]->relu_backward(be[s], y.p[s], dy.p[s], dy.p[s], n, &e), s, &e);
		ok(be[s]->relu(be[s], x.p[s], x.p[s], n, &e), s, &e);
	}
	expect_equal("relu_backward in place", &dy);
	expect_equal("relu in place", &x);
	twin_free(&x);

	for (int r = 0; r < 4; r++) {
		struct twin in = twin_randn((size_t)n, 1, 42 + (uint64_t)r);
		for (int s = 0; s < 2; s++) {
			ok(be[s]->dropout(be[s], in.p[s], y.p[s], n, rates[r], seed + 7, &e), s,
			   &e);
			ok(be[s]->dropout(be[s], in.p[s], in.p[s], n, rates[r], seed + 8, &e), s,
			   &e);
		}
		for (int pass = 0; pass < 2; pass++) {
			const struct twin *t = pass ? &in : &y;
			float *c = fetch(t, 0), *g = fetch(t, 1);
			int64_t dropped = 0;
			for (int64_t i = 0; i < n; i++) {
				if ((c[i] == 0) != (g[i] == 0))
					fail_msg("dropout p=%g: element %lld kept on one side only",
						 rates[r], (long long)i);
				dropped += g[i] == 0;
			}
			/* The kept fraction is near 1 - p (binomial, 6 sigma). */
			const double p = rates[r], sd = sqrt(n * p * (1 - p));
			assert_true(fabs(dropped - n * p) <= 6 * sd + 1);
			free(c);
			free(g);
			expect_equal("dropout", t); /* both divide in double */
		}
		twin_free(&in);
	}
	twin_free(&y);
	twin_free(&dy);
	twin_free(&dx);
}

static void test_layernorm(void **state)
{
	static const int64_t shapes[][2] = {{1001, 64}, {33, 100}, {500, 256},
					    {17, 1024}, {9, 3000}, {5, 1}};
	struct sp_err e;
	double fwd = 0, bwd = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		const int64_t m = shapes[i][0], n = shapes[i][1];
		struct twin x = twin_randn((size_t)(m * n), 3, 50),
			    dy = twin_randn((size_t)(m * n), 1, 51);
		struct twin gamma = twin_randn((size_t)n, 1, 52),
			    beta = twin_randn((size_t)n, 1, 53);
		struct twin y = twin_nan((size_t)(m * n), 4), mean = twin_nan((size_t)m, 4);
		struct twin rstd = twin_nan((size_t)m, 4), dx = twin_nan((size_t)(m * n), 4);
		struct twin dgamma = twin_nan((size_t)n, 4), dbeta = twin_nan((size_t)n, 4);
		for (int s = 0; s < 2; s++) {
			ok(be[s]->layernorm(be[s], x.p[s], gamma.p[s], beta.p[s], m, n, y.p[s],
					    mean.p[s], rstd.p[s], &e),
			   s, &e);
			ok(be[s]->layernorm_backward(be[s], x.p[s], dy.p[s], gamma.p[s], mean.p[s],
						     rstd.p[s], m, n, dx.p[s], dgamma.p[s],
						     dbeta.p[s], &e),
			   s, &e);
		}
		fwd = worse(fwd, expect_close("layernorm y", &y, 1e-5));
		fwd = worse(fwd, expect_close("layernorm mean", &mean, 1e-5));
		fwd = worse(fwd, expect_close("layernorm rstd", &rstd, 1e-5));
		bwd = worse(bwd, expect_close("layernorm dx", &dx, 1e-4));
		bwd = worse(bwd, expect_close("layernorm dgamma", &dgamma, 1e-4));
		bwd = worse(bwd, expect_close("layernorm dbeta", &dbeta, 1e-5));
		struct twin *all[] = {&x, &dy, &gamma, &beta, &y,
				      &mean, &rstd, &dx, &dgamma, &dbeta};
		for (size_t j = 0; j < sizeof all / sizeof *all; j++)
			twin_free(all[j]);
	}
	printf("# layernorm: worst relative error %.2e forward, %.2e backward\n", fwd, bwd);
}

/* m x h values without ties inside a row (a shuffled ramp), so top-k's
 * choice is unique. */
static struct twin twin_no_ties(int64_t m, int h, uint64_t stream)
{
	struct rng r;
	rng_init(&r, seed, stream);
	float *x = malloc((size_t)(m * h) * sizeof *x);
	for (int64_t i = 0; i < m; i++) {
		float *row = x + i * h;
		for (int j = 0; j < h; j++)
			row[j] = (float)(j - h / 2) * 0.125f;
		for (int j = h - 1; j > 0; j--) {
			int o = (int)rng_below(&r, (uint64_t)j + 1);
			float t = row[j];
			row[j] = row[o];
			row[o] = t;
		}
	}
	struct twin t = twin_new(x, (size_t)(m * h) * sizeof *x);
	free(x);
	return t;
}

/* Top-k on both sides (checked exact), leaving values and index in vi[]. */
static void topk_both(const struct twin *x, int64_t m, int h, int k, struct twin *vi)
{
	struct sp_err e;
	vi[0] = twin_nan((size_t)(m * k), sizeof(float));
	vi[1] = twin_nan((size_t)(m * k), sizeof(uint16_t));
	for (int s = 0; s < 2; s++)
		ok(be[s]->topk(be[s], x->p[s], m, h, k, vi[0].p[s], vi[1].p[s], &e), s, &e);
	expect_equal("topk values", &vi[0]);
	/* The CPU keeps 16-bit indices; the GPU 8-bit ones when h <= 256
	 * (maxk_index_bytes): the same columns. */
	uint16_t *c = fetch(&vi[1], 0);
	unsigned char *g = fetch(&vi[1], 1);
	for (int64_t i = 0; i < m * k; i++) {
		const unsigned col = maxk_index_bytes(h) == 1 ? g[i] : g[2 * i] | g[2 * i + 1] << 8;
		if (c[i] != col)
			fail_msg("topk index %lld: cpu %u, gpu %u", (long long)i, c[i], col);
	}
	free(c);
	free(g);
}

static void test_maxk_ops(void **state)
{
	static const int hs[] = {64, 100, 256, 512, 1024};
	const int64_t m = 1001;
	struct sp_err e;
	for (int i = 0; i < 5; i++) {
		const int h = hs[i], ks[] = {1, 17, 32, h};
		struct twin x = twin_no_ties(m, h, 60), dy = twin_randn((size_t)(m * h), 1, 61);
		for (int j = 0; j < 4; j++) {
			const int k = ks[j];
			struct twin vi[2];
			topk_both(&x, m, h, k, vi);
			struct twin dense = twin_nan((size_t)(m * h), 4),
				    kept = twin_nan((size_t)(m * k), 4);
			for (int s = 0; s < 2; s++) {
				ok(be[s]->scatter(be[s], vi[0].p[s], vi[1].p[s], m, h, k,
						  dense.p[s], &e),
				   s, &e);
				ok(be[s]->gather(be[s], dy.p[s], vi[1].p[s], m, h, k, kept.p[s],
						 &e),
				   s, &e);
			}
			expect_equal("scatter", &dense);
			expect_equal("gather", &kept);
			twin_free(&vi[0]);
			twin_free(&vi[1]);
			twin_free(&dense);
			twin_free(&kept);
		}
		twin_free(&x);
		twin_free(&dy);
	}
}

/* Row r's edges removed, so the graph surely has an empty row. */
static void empty_row(struct csr *g, int64_t r)
{
	const int64_t b = g->indptr[r], d = g->indptr[r + 1] - b;
	memmove(g->indices + b, g->indices + b + d, (size_t)(g->nnz - b - d) * sizeof *g->indices);
	for (int64_t q = r + 1; q <= g->nrows; q++)
		g->indptr[q] -= d;
	g->nnz -= d;
}

/* Every aggregation of x (n x h) over g on both sides: dense forward and
 * backward (cuSPARSE), and the MaxK forward and backward from top-k. */
static double check_aggregate(const struct csr *g, enum edge_norm norm, int with_warp4, int h,
			      const int *ks, int nk)
{
	struct sp_err e;
	const int64_t n = g->nrows, nc = g->ncols; /* y and dy n x h; x and dx nc x h */
	int32_t *w4 = NULL;
	int64_t records = 0;
	if (with_warp4) { /* 8 neighbours a record: many rows span several */
		records = warp4_count(g->indptr, n, 8);
		w4 = malloc((size_t)(records ? records : 1) * 16);
		assert_int_equal(warp4_build(g->indptr, n, 8, w4, "test", &e), 0);
	}
	struct gnn_graph *gg[2];
	for (int s = 0; s < 2; s++)
		ok(be[s]->graph_create(be[s], g, norm, w4, records, &gg[s], &e), s, &e);
	struct twin x = twin_no_ties(nc, h, 70), dy = twin_randn((size_t)(n * h), 1, 71);
	struct twin y = twin_nan((size_t)(n * h), 4), dx = twin_nan((size_t)(nc * h), 4);
	for (int s = 0; s < 2; s++) {
		ok(be[s]->aggregate(be[s], gg[s], x.p[s], h, y.p[s], &e), s, &e);
		ok(be[s]->aggregate_backward(be[s], gg[s], dy.p[s], h, dx.p[s], &e), s, &e);
	}
	double worst = expect_close("aggregate", &y, 1e-5);
	worst = worse(worst, expect_close("aggregate_backward", &dx, 1e-5));
	for (int j = 0; j < nk; j++) {
		const int k = ks[j];
		struct twin vi[2];
		topk_both(&x, nc, h, k, vi);
		struct twin ym = twin_nan((size_t)(n * h), 4), dv = twin_nan((size_t)(nc * k), 4);
		for (int s = 0; s < 2; s++) {
			ok(be[s]->aggregate_maxk(be[s], gg[s], vi[0].p[s], vi[1].p[s], h, k,
						 ym.p[s], &e),
			   s, &e);
			ok(be[s]->aggregate_maxk_backward(be[s], gg[s], vi[1].p[s], h, k, dy.p[s],
							  dv.p[s], &e),
			   s, &e);
		}
		worst = worse(worst, expect_close("aggregate_maxk", &ym, 1e-5));
		worst = worse(worst, expect_close("aggregate_maxk_backward", &dv, 1e-5));
		twin_free(&vi[0]);
		twin_free(&vi[1]);
		twin_free(&ym);
		twin_free(&dv);
	}
	for (int s = 0; s < 2; s++)
		be[s]->graph_free(be[s], gg[s]);
	twin_free(&x);
	twin_free(&dy);
	twin_free(&y);
	twin_free(&dx);
	free(w4);
	return worst;
}

static void gen(const char *spec, struct csr *g)
{
	struct graph_spec s;
	struct sp_err e;
	assert_int_equal(graph_spec_parse(spec, &s, &e), 0);
	assert_int_equal(graph_gen(&s, g, &e), 0);
}

/* rows x cols of g: its first rows, the edges to its first cols (a rank's
 * block, its edges to received rows). Edge values GCN's, from g. */
static void rect_of(const struct csr *g, int64_t rows, int64_t cols, struct csr *out)
{
	struct sp_err e;
	float *vals = malloc((size_t)g->nnz * sizeof *vals);
	edge_values(g, EDGE_GCN, vals);
	int64_t nnz = 0;
	for (int64_t i = 0; i < g->indptr[rows]; i++)
		nnz += g->indices[i] < cols;
	assert_int_equal(csr_alloc(out, rows, cols, nnz, 1, "rect", &e), 0);
	nnz = 0;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t i = g->indptr[r]; i < g->indptr[r + 1]; i++)
			if (g->indices[i] < cols) {
				out->indices[nnz] = g->indices[i];
				out->values[nnz++] = vals[i];
			}
		out->indptr[r + 1] = nnz;
	}
	free(vals);
}

/* What ranks move: rows packed by a list (4-byte and 1-byte rows), and
 * gradients added into listed rows. */
static void test_rows(void **state)
{
	struct sp_err e;
	const int64_t n = 5000, count = 1700;
	const int width = 37;
	int32_t *list = malloc(count * sizeof *list);
	for (int64_t i = 0; i < count; i++)
		list[i] = (int32_t)(i * 761 % n); /* distinct: 761 is prime to 5000 */
	struct twin rows = twin_new(list, count * sizeof *list);
	struct twin src = twin_randn((size_t)(n * width), 1, 80);
	struct twin add = twin_randn((size_t)(count * width), 1, 81);
	struct twin packed = twin_nan((size_t)(count * width), 4);
	struct twin bytes = twin_nan((size_t)(count * 3), 1); /* 3-byte rows */
	for (int s = 0; s < 2; s++) {
		ok(be[s]->gather_rows(be[s], src.p[s], width * 4, rows.p[s], count, packed.p[s], &e),
		   s, &e);
		ok(be[s]->gather_rows(be[s], src.p[s], 3, rows.p[s], count, bytes.p[s], &e), s, &e);
		ok(be[s]->add_rows(be[s], add.p[s], rows.p[s], count, width, src.p[s], &e), s, &e);
	}
	expect_equal("gather_rows", &packed);
	expect_equal("gather_rows, bytes", &bytes);
	expect_close("add_rows", &src, 1e-7);
	assert_int_equal(be[1]->index_bytes(256), 1);
	assert_int_equal(be[1]->index_bytes(257), 2);
	twin_free(&rows);
	twin_free(&src);
	twin_free(&add);
	twin_free(&packed);
	twin_free(&bytes);
	free(list);
}

static void test_aggregate(void **state)
{
	static const int hs[] = {64, 100, 256};
	struct csr g;
	double worst = 0;
	gen("powerlaw:nodes=1001,edges=30000,sigma=1.5,seed=5", &g);
	empty_row(&g, 3);
	for (int i = 0; i < 3; i++) {
		const int ks[] = {1, 17, 32, hs[i]};
		for (int norm = EDGE_ONES; norm <= EDGE_GCN; norm++)
			worst = worse(worst, check_aggregate(&g, (enum edge_norm)norm,
							     norm != EDGE_MEAN, hs[i], ks, 4));
	}
	csr_free(&g);
	const int k17[] = {17};
	gen("powerlaw:nodes=300,edges=0", &g); /* no edges: every aggregation is zero */
	worst = worse(worst, check_aggregate(&g, EDGE_MEAN, 0, 64, k17, 1));
	csr_free(&g);
	gen("powerlaw:nodes=4099,edges=200000,sigma=2,seed=9", &g);
	worst = worse(worst, check_aggregate(&g, EDGE_GCN, 0, 256, k17, 1));
	/* rectangular, with its own edge values: fewer rows than columns and
	 * more (a rank's edges to the rows it receives) */
	const int ks[] = {1, 32};
	struct csr r;
	rect_of(&g, 700, 4099, &r);
	worst = worse(worst, check_aggregate(&r, EDGE_ONES, 0, 256, ks, 2));
	csr_free(&r);
	rect_of(&g, 4099, 333, &r);
	worst = worse(worst, check_aggregate(&r, EDGE_ONES, 0, 64, ks, 2));
	csr_free(&r);
	csr_free(&g);
	printf("# aggregations: worst relative error %.2e\n", worst);
}

/* Losses over a random split: mask values 0..3, rows with `which` count. */
static void test_losses(void **state)
{
	static const int cs[] = {1, 7, 41, 47, 100};
	const int64_t m = 1001;
	struct sp_err e;
	struct rng r;
	double worst = 0;
	rng_init(&r, seed, 80);
	uint8_t *mask = malloc((size_t)m);
	for (int64_t i = 0; i < m; i++)
		mask[i] = (uint8_t)rng_below(&r, 4);
	struct twin tmask = twin_new(mask, (size_t)m);
	for (int i = 0; i < 5; i++) {
		const int c = cs[i];
		int32_t *labels = malloc((size_t)m * sizeof *labels);
		float *targets = malloc((size_t)(m * c) * sizeof *targets);
		for (int64_t j = 0; j < m; j++)
			labels[j] = (int32_t)rng_below(&r, (uint64_t)c);
		for (int64_t j = 0; j < m * c; j++)
			targets[j] = (float)rng_below(&r, 2);
		struct twin tl = twin_new(labels, (size_t)m * sizeof *labels);
		struct twin tt = twin_new(targets, (size_t)(m * c) * sizeof *targets);
		struct twin z = twin_randn((size_t)(m * c), 3, 81 + (uint64_t)i);
		struct twin dz = twin_nan((size_t)(m * c), 4), loss = twin_nan(1, 4);
		for (int which = GNN_TRAIN; which <= GNN_TEST; which += 2) {
			for (int s = 0; s < 2; s++)
				ok(be[s]->softmax_xent(be[s], z.p[s], tl.p[s], tmask.p[s], which, m,
						       c, dz.p[s], loss.p[s], &e),
				   s, &e);
			worst = worse(worst, expect_close("softmax_xent loss", &loss, 1e-5));
			worst = worse(worst, expect_close("softmax_xent dlogits", &dz, 1e-5));
			for (int s = 0; s < 2; s++)
				ok(be[s]->bce(be[s], z.p[s], tt.p[s], tmask.p[s], which, m, c,
					      dz.p[s], loss.p[s], &e),
				   s, &e);
			worst = worse(worst, expect_close("bce loss", &loss, 1e-5));
			worst = worse(worst, expect_close("bce dlogits", &dz, 1e-5));
		}
		twin_free(&tl);
		twin_free(&tt);
		twin_free(&z);
		twin_free(&dz);
		twin_free(&loss);
		free(labels);
		free(targets);
	}
	twin_free(&tmask);
	free(mask);
	printf("# softmax_xent, bce: worst relative error %.2e\n", worst);
}

static void test_adam(void **state)
{
	static const int64_t counts[] = {1, 100003};
	struct sp_err e;
	double worst = 0;
	for (int i = 0; i < 2; i++) {
		const int64_t n = counts[i];
		float *zeros = calloc((size_t)n, sizeof *zeros);
		struct twin param = twin_randn((size_t)n, 1, 90);
		struct twin m1 = twin_new(zeros, (size_t)n * sizeof *zeros);
		struct twin m2 = twin_new(zeros, (size_t)n * sizeof *zeros);
		free(zeros);
		for (int64_t t = 1; t <= 3; t++) {
			struct twin grad = twin_randn((size_t)n, 1, 91 + (uint64_t)t);
			for (int s = 0; s < 2; s++)
				ok(be[s]->adam(be[s], param.p[s], grad.p[s], m1.p[s], m2.p[s], n,
					       0.01f, 0.9f, 0.999f, 1e-8f, 5e-4f, t, &e),
				   s, &e);
			worst = worse(worst, expect_close("adam param", &param, 1e-5));
			worst = worse(worst, expect_close("adam m1", &m1, 1e-5));
			worst = worse(worst, expect_close("adam m2", &m2, 1e-5));
			twin_free(&grad);
		}
		twin_free(&param);
		twin_free(&m1);
		twin_free(&m2);
	}
	printf("# adam: worst relative error %.2e\n", worst);
}

static void test_errors(void **state)
{
	struct sp_err e;
	struct gnn_backend *g = be[1];
	assert_int_equal(g->topk(g, NULL, 10, 64, 0, NULL, NULL, &e), -1);
	assert_msg_has(&e, "k = 0", NULL);
	assert_int_equal(g->topk(g, NULL, 10, 64, 65, NULL, NULL, &e), -1);
	assert_int_equal(
		g->adam(g, NULL, NULL, NULL, NULL, 10, 0.01f, 0.9f, 0.999f, 1e-8f, 0, 0, &e), -1);
	assert_msg_has(&e, "adam", "step 0", NULL);
	void *huge = g->alloc(g, (size_t)1 << 50, &e);
	assert_null(huge);
	assert_msg_has(&e, "cudaMalloc", NULL);
}

/* Without a usable GPU the CUDA backend says why ("no usable CUDA device:
 * no NVIDIA driver found") and the group is not run. */
static int setup(void **state)
{
	struct sp_err e = {""};
	if (gnn_cuda_backend(&be[1], &e) || gnn_cpu_backend(&be[0], &e)) {
		printf("# %s\n", e.msg);
		return -1;
	}
	seed = (uint64_t)time(NULL);
	printf("# seed %llu\n", (unsigned long long)seed);
	return 0;
}

static int teardown(void **state)
{
	for (int s = 0; s < 2; s++)
		if (be[s])
			be[s]->destroy(be[s]);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_bias_and_col_sum),
		cmocka_unit_test(test_vector_ops),
		cmocka_unit_test(test_relu_and_dropout),
		cmocka_unit_test(test_layernorm),
		cmocka_unit_test(test_maxk_ops),
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_losses),
		cmocka_unit_test(test_adam),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
