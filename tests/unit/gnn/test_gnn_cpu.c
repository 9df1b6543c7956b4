/* The CPU GNN backend (lib/gnn/gnn_cpu.c), the reference the GPU backend is
 * tested against. Every op against a direct double-precision computation
 * on small random inputs; every backward against central finite
 * differences of its forward (and, for the linear ops, the adjoint
 * identity); Adam against a hand-computed example; the same bits for any
 * thread count; bad arguments.
 *
 * Finite differences: the objective is L = <w, forward(x)> (the loss
 * itself for the losses), summed in double from the backend's float
 * outputs; fd_i = (L(x + s e_i) - L(x - s e_i)) / (the float distance
 * between the two points). Linear ops take a large step (their
 * differences are exact but for float rounding, tolerance 1e-6); smooth
 * ones s = 1e-2, where the O(s^2) truncation and the float rounding of L
 * (about 1e-7 / s) both stay below 1e-4 (tolerance 5e-4). Piecewise-linear
 * ops (ReLU, MaxK) keep their inputs a step away from the kinks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/csr.h"
#include "gnn/gnn_backend.h"
#include "gnn/gnn_dropout.h"
#include "core/rng.h"
#include "testutil.h"

static struct gnn_backend *be;
static struct sp_err err;
static struct rng rng;

/* Buffers of the current test, released by its teardown. */
static void *held[64];
static int nheld;

static void *hold(size_t bytes)
{
	void *p = be->alloc(be, bytes, &err);
	assert_non_null(p);
	assert_true(nheld < 64);
	held[nheld++] = p;
	return p;
}

static float *floats(int64_t count)
{
	return hold((size_t)count * sizeof(float));
}

/* Uniform in [lo, hi). */
static float *random_floats(int64_t count, double lo, double hi)
{
	float *x = floats(count);
	for (int64_t i = 0; i < count; i++)
		x[i] = (float)(lo + (hi - lo) * rng_uniform(&rng));
	return x;
}

static float *copy_of(const float *x, int64_t count)
{
	float *y = floats(count);
	memcpy(y, x, (size_t)count * sizeof *y);
	return y;
}

static double inner(const float *a, const float *b, int64_t count)
{
	double s = 0;
	for (int64_t i = 0; i < count; i++)
		s += (double)a[i] * b[i];
	return s;
}

static int setup_backend(void **state)
{
	return gnn_cpu_backend(&be, &err);
}

static int teardown_backend(void **state)
{
	be->destroy(be);
	return 0;
}

static int setup_test(void **state)
{
	rng_init(&rng, 20240611, 0);
	return 0;
}

static int teardown_test(void **state)
{
	while (nheld)
		be->release(be, held[--nheld]);
	return 0;
}

static void assert_close(const double *ref, const float *got, int64_t count, double tol,
			 const char *what)
{
	double rel = test_rel_err(ref, got, (size_t)count);
	if (!(rel <= tol))
		fail_msg("%s: relative error %.3g, tolerance %.3g", what, rel, tol);
}

/* ---- finite differences ---- */

enum objective {
	OBJ_GEMM, OBJ_RELU, OBJ_DROPOUT, OBJ_BIAS, OBJ_AXPY_EPS, OBJ_LAYERNORM, OBJ_MAXK,
	OBJ_SCATTER, OBJ_AGGREGATE, OBJ_AGGREGATE_MAXK, OBJ_SOFTMAX, OBJ_BCE,
};

/* A forward under test: what it reads and writes (each op uses its
 * fields) and the weights of the objective. */
struct probe {
	enum objective op;
	int64_t m, n, k;
	int ta, tb, h, kk, c, which;
	const struct gnn_graph *g;
	float *x, *x2, *x3; /* inputs (perturbed) */
	float *y, *aux1, *aux2; /* outputs and scratch */
	uint16_t *index;
	const int32_t *labels;
	const uint8_t *mask;
	const float *w;
	float p, scalar;
	uint64_t seed;
	int64_t count; /* of y */
};

/* Runs the forward; returns <w, y>, or the loss itself for the losses. */
static double objective(struct probe *q)
{
	int rc = -1;
	switch (q->op) {
	case OBJ_GEMM:
		rc = be->gemm(be, q->ta, q->tb, q->m, q->n, q->k, q->scalar, q->x, q->x2, 0, q->y,
			      &err);
		break;
	case OBJ_RELU:
		rc = be->relu(be, q->x, q->y, q->count, &err);
		break;
	case OBJ_DROPOUT:
		rc = be->dropout(be, q->x, q->y, q->count, q->p, q->seed, &err);
		break;
	case OBJ_BIAS: /* y = x2 + bias x */
		memcpy(q->y, q->x2, (size_t)q->count * sizeof *q->y);
		rc = be->bias_add(be, q->y, q->x, q->m, q->n, &err);
		break;
	case OBJ_AXPY_EPS: /* y = x3 + (1 + x2[0]) x */
		memcpy(q->y, q->x3, (size_t)q->count * sizeof *q->y);
		rc = be->axpy_eps(be, q->x2, q->x, q->y, q->count, &err);
		break;
	case OBJ_LAYERNORM: /* gamma x2, beta x3 */
		rc = be->layernorm(be, q->x, q->x2, q->x3, q->m, q->n, q->y, q->aux1, q->aux2,
				   &err);
		break;
	case OBJ_MAXK: /* scatter(topk(x)), the kept values in aux1 */
		rc = be->topk(be, q->x, q->m, q->h, q->kk, q->aux1, q->index, &err) ||
		     be->scatter(be, q->aux1, q->index, q->m, q->h, q->kk, q->y, &err);
		break;
	case OBJ_SCATTER:
		rc = be->scatter(be, q->x, q->index, q->m, q->h, q->kk, q->y, &err);
		break;
	case OBJ_AGGREGATE:
		rc = be->aggregate(be, q->g, q->x, q->h, q->y, &err);
		break;
	case OBJ_AGGREGATE_MAXK:
		rc = be->aggregate_maxk(be, q->g, q->x, q->index, q->h, q->kk, q->y, &err);
		break;
	case OBJ_SOFTMAX: /* the loss to y[0], dlogits to aux1 */
		assert_int_equal(be->softmax_xent(be, q->x, q->labels, q->mask, q->which, q->m,
						  q->c, q->aux1, q->y, &err),
				 0);
		return q->y[0];
	case OBJ_BCE: /* targets x2 */
		assert_int_equal(be->bce(be, q->x, q->x2, q->mask, q->which, q->m, q->c, q->aux1,
					 q->y, &err),
				 0);
		return q->y[0];
	}
	assert_int_equal(rc, 0);
	return inner(q->w, q->y, q->count);
}

#define STEP_LINEAR 0.5f
#define TOL_LINEAR 1e-6
#define STEP_SMOOTH 1e-2f
#define TOL_SMOOTH 5e-4

/* grad against central differences of the objective in each coordinate
 * of x (one of the probe's inputs). */
static void check_fd(struct probe *q, float *x, const float *grad, int64_t count, float step,
		     double tol, const char *what)
{
	double *fd = malloc((size_t)count * sizeof *fd);
	for (int64_t i = 0; i < count; i++) {
		float keep = x[i], up = keep + step, down = keep - step;
		x[i] = up;
		double f_up = objective(q);
		x[i] = down;
		double f_down = objective(q);
		x[i] = keep;
		fd[i] = (f_up - f_down) / ((double)up - down);
	}
	assert_close(fd, grad, count, tol, what);
	free(fd);
}

/* For a linear forward y = F x and its claimed adjoint g = F^T w: the
 * identity <F x, w> = <x, F^T w> (both sides in double from float
 * results, so to about 1e-7), then the finite differences. */
static void check_linear(struct probe *q, float *x, const float *g, int64_t count,
			 const char *what)
{
	double lhs = objective(q), rhs = inner(x, g, count);
	if (!(fabs(lhs - rhs) <= 1e-6 * (1 + fabs(rhs))))
		fail_msg("%s: <F x, w> = %.9g but <x, F^T w> = %.9g", what, lhs, rhs);
	check_fd(q, x, g, count, STEP_LINEAR, TOL_LINEAR, what);
}

/* ---- memory ---- */

static void test_memory(void **state)
{
	struct gnn_backend *b;
	assert_int_equal(gnn_cpu_backend(&b, &err), 0);
	assert_string_equal(b->name, "cpu");
	assert_int_equal(b->peak_memory(b), 0);
	unsigned char *p = b->alloc(b, 1000, &err), *q = b->alloc(b, 3000, &err);
	assert_non_null(p);
	assert_non_null(q);
	for (int i = 0; i < 3000; i++)
		assert_int_equal(q[i], 0);
	assert_int_equal(b->peak_memory(b), 4000);
	b->release(b, p);
	unsigned char *r = b->alloc(b, 500, &err);
	assert_int_equal(b->peak_memory(b), 4000); /* 3500 held now */
	unsigned char host[3000], back[3000];
	for (int i = 0; i < 3000; i++)
		host[i] = (unsigned char)(i * 7);
	assert_int_equal(b->to_device(b, q, host, 3000, &err), 0);
	assert_int_equal(b->copy(b, r, q + 100, 500, &err), 0);
	assert_int_equal(b->to_host(b, back, r, 500, &err), 0);
	assert_memory_equal(back, host + 100, 500);
	assert_int_equal(b->to_host(b, back, q, 0, &err), 0);
	assert_int_equal(b->sync(b, &err), 0);
	b->release(b, q);
	b->release(b, r);
	b->release(b, NULL);
	unsigned char *big = b->alloc(b, 5000, &err);
	assert_int_equal(b->peak_memory(b), 5000);
	b->release(b, big);
	assert_null(b->alloc(b, SIZE_MAX, &err));
	assert_msg_has(&err, "alloc: ", "bytes", NULL);
	b->destroy(b);
}

/* A graph holds memory too: its CSR, edge values and transpose. */
static void test_graph_memory(void **state)
{
	struct gnn_backend *b;
	assert_int_equal(gnn_cpu_backend(&b, &err), 0);
	int64_t rows[] = {0, 1, 1, 2}, cols[] = {1, 0, 2, 2};
	struct csr g;
	assert_int_equal(csr_from_coo(&g, 3, 3, 4, rows, cols, NULL, "t", &err), 0);
	struct gnn_graph *gg;
	assert_int_equal(b->graph_create(b, &g, EDGE_MEAN, NULL, 0, &gg, &err), 0);
	size_t one = 4 * sizeof(int64_t) + 4 * (sizeof(int32_t) + sizeof(float));
	assert_int_equal(b->peak_memory(b), 2 * one);
	b->graph_free(b, gg);
	void *p = b->alloc(b, 10, &err);
	assert_int_equal(b->peak_memory(b), 2 * one);
	b->release(b, p);
	csr_free(&g);
	b->destroy(b);
}

/* ---- gemm ---- */

static double op_at(const float *X, int t, int64_t rows, int64_t cols, int64_t i, int64_t j)
{
	return t ? X[j * rows + i] : X[i * cols + j];
}

/* The left-to-right double sum, scaled and added as the backend does; the
 * backend's kernel adds each element's products in the same order, so the
 * results are the same bits. */
static void gemm_naive(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
		       const float *A, const float *Bm, float beta, float *C)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t p = 0; p < k; p++)
				s += op_at(A, ta, m, k, i, p) * op_at(Bm, tb, k, n, p, j);
			double v = (double)alpha * s;
			C[i * n + j] = (float)(beta != 0 ? v + (double)beta * C[i * n + j] : v);
		}
}

static void check_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, float beta)
{
	float *A = random_floats(m * k + 1, -1, 1), *Bm = random_floats(k * n + 1, -1, 1);
	float *C = random_floats(m * n, -1, 1);
	if (beta == 0)
		for (int64_t i = 0; i < m * n; i++)
			C[i] = NAN; /* beta = 0 ignores C */
	float *want = copy_of(C, m * n);
	gemm_naive(ta, tb, m, n, k, alpha, A, Bm, beta, want);
	assert_int_equal(be->gemm(be, ta, tb, m, n, k, alpha, A, Bm, beta, C, &err), 0);
	for (int64_t i = 0; i < m * n; i++)
		if (C[i] != want[i])
			fail_msg("gemm ta=%d tb=%d %lldx%lldx%lld: C[%lld] = %.9g, naive %.9g", ta,
				 tb, (long long)m, (long long)n, (long long)k, (long long)i, C[i],
				 want[i]);
	teardown_test(NULL);
}

static void test_gemm_against_naive(void **state)
{
	/* non-square, past the 64 x 64 tiles and the 256 k-block, edge panels */
	const int64_t shapes[][3] = {{7, 5, 9}, {1, 1, 1}, {70, 133, 300}, {65, 9, 513},
				     {3, 70, 0}, {129, 64, 256}, {2, 300, 17}};
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
				check_gemm(ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], 0.75f,
					   -0.5f);
				check_gemm(ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f,
					   0.0f);
			}
	check_gemm(0, 1, 5, 6, 7, 0.0f, 2.0f); /* alpha = 0 scales C */
	check_gemm(1, 0, 0, 6, 7, 1.0f, 0.0f); /* empty C */
}

/* C = alpha op(A) op(B), W = dL/dC. The gradients through the transposed
 * products, as the training loop writes them:
 *   ta = 0: dA = alpha W op(B)^T          ta = 1: dA = alpha op(B) W^T
 *   tb = 0: dB = alpha op(A)^T W          tb = 1: dB = alpha W^T op(A) */
static void test_gemm_gradients(void **state)
{
	const int64_t m = 6, n = 5, k = 7;
	const float alpha = 0.5f;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			struct probe q = {.op = OBJ_GEMM, .m = m, .n = n, .k = k, .ta = ta,
					  .tb = tb, .x = random_floats(m * k, -1, 1),
					  .x2 = random_floats(k * n, -1, 1), .y = floats(m * n),
					  .w = random_floats(m * n, -1, 1), .scalar = alpha,
					  .count = m * n};
			float *dA = floats(m * k), *dB = floats(k * n);
			const float *W = q.w;
			int rc = ta ? be->gemm(be, tb, 1, k, m, n, alpha, q.x2, W, 0, dA, &err)
				    : be->gemm(be, 0, !tb, m, k, n, alpha, W, q.x2, 0, dA, &err);
			assert_int_equal(rc, 0);
			rc = tb ? be->gemm(be, 1, ta, n, k, m, alpha, W, q.x, 0, dB, &err)
				: be->gemm(be, !ta, 0, k, n, m, alpha, q.x, W, 0, dB, &err);
			assert_int_equal(rc, 0);
			check_linear(&q, q.x, dA, m * k, "gemm dA");
			check_linear(&q, q.x2, dB, k * n, "gemm dB");
			teardown_test(NULL);
		}
}

/* ---- element-wise ---- */

static void test_elementwise_against_naive(void **state)
{
	const int64_t count = 200001; /* several chunks and a ragged end */
	float *x = random_floats(count, -2, 2), *y0 = random_floats(count, -2, 2);
	float *y = copy_of(y0, count);
	double *want = malloc((size_t)count * sizeof *want);

	assert_int_equal(be->axpby(be, 0.25f, x, -1.5f, y, count, &err), 0);
	for (int64_t i = 0; i < count; i++)
		want[i] = 0.25 * x[i] - 1.5 * y0[i];
	assert_close(want, y, count, 1e-7, "axpby");

	for (int64_t i = 0; i < count; i++)
		y[i] = NAN;
	assert_int_equal(be->axpby(be, 3.0f, x, 0.0f, y, count, &err), 0);
	for (int64_t i = 0; i < count; i++)
		want[i] = 3.0 * x[i];
	assert_close(want, y, count, 1e-7, "axpby beta = 0");

	float *eps = floats(1);
	eps[0] = -0.375f;
	memcpy(y, y0, (size_t)count * sizeof *y);
	assert_int_equal(be->axpy_eps(be, eps, x, y, count, &err), 0);
	for (int64_t i = 0; i < count; i++)
		want[i] = y0[i] + 0.625 * x[i];
	assert_close(want, y, count, 1e-7, "axpy_eps");

	x[0] = NAN;
	x[1] = -0.0f;
	assert_int_equal(be->relu(be, x, y, count, &err), 0);
	assert_true(isnan(y[0])); /* NaN is not hidden */
	for (int64_t i = 1; i < count; i++)
		assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
	float *dy = random_floats(count, -1, 1), *dx = floats(count);
	assert_int_equal(be->relu_backward(be, y, dy, dx, count, &err), 0);
	for (int64_t i = 0; i < count; i++)
		assert_true(dx[i] == (y[i] > 0 ? dy[i] : 0.0f));
	memcpy(y, x, (size_t)count * sizeof *y);
	assert_int_equal(be->relu(be, y, y, count, &err), 0); /* in place */
	for (int64_t i = 1; i < count; i++)
		assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
	free(want);
}

static void test_dropout(void **state)
{
	const int64_t count = 100000;
	const float p = 0.3f;
	const uint64_t seed = 99;
	float *x = random_floats(count, -1, 1), *y = floats(count);
	assert_int_equal(be->dropout(be, x, y, count, p, seed, &err), 0);
	int64_t kept = 0;
	for (int64_t i = 0; i < count; i++) {
		int keep = gnn_dropout_keep(seed, (uint64_t)i, p);
		assert_true(y[i] == (keep ? (float)(x[i] / (1.0 - p)) : 0.0f));
		kept += keep;
	}
	/* 70,000 expected, standard deviation 145 */
	assert_true(kept > 69000 && kept < 71000);
	float *z = copy_of(x, count);
	assert_int_equal(be->dropout(be, z, z, count, p, seed, &err), 0); /* in place */
	assert_memory_equal(z, y, (size_t)count * sizeof *z);
	assert_int_equal(be->dropout(be, x, y, count, 0.0f, seed, &err), 0);
	assert_memory_equal(x, y, (size_t)count * sizeof *x); /* p = 0 copies */
	assert_int_equal(be->dropout(be, x, y, count, p, seed + 1, &err), 0);
	assert_true(memcmp(y, z, (size_t)count * sizeof *y) != 0); /* the seed matters */
}

static void test_relu_gradient(void **state)
{
	const int64_t count = 300;
	struct probe q = {.op = OBJ_RELU, .x = random_floats(count, -1, 1), .y = floats(count),
			  .w = random_floats(count, -1, 1), .count = count};
	for (int64_t i = 0; i < count; i++) /* a step away from the kink */
		q.x[i] += q.x[i] < 0 ? -0.1f : 0.1f;
	float *dx = floats(count);
	objective(&q);
	assert_int_equal(be->relu_backward(be, q.y, q.w, dx, count, &err), 0);
	check_fd(&q, q.x, dx, count, 0.05f, TOL_LINEAR, "relu");
}

static void test_dropout_gradient(void **state)
{
	const int64_t count = 300;
	struct probe q = {.op = OBJ_DROPOUT, .x = random_floats(count, -1, 1), .y = floats(count),
			  .w = random_floats(count, -1, 1), .count = count, .p = 0.4f,
			  .seed = 5};
	float *dx = floats(count);
	/* the backward is the same call on the upstream gradient */
	assert_int_equal(be->dropout(be, q.w, dx, count, q.p, q.seed, &err), 0);
	check_linear(&q, q.x, dx, count, "dropout");
}

/* ---- bias, column sums, GIN's epsilon ---- */

static void test_bias_and_col_sum(void **state)
{
	const int64_t m = 1000, n = 77;
	float *y0 = random_floats(m * n, -1, 1), *bias = random_floats(n, -1, 1);
	float *y = copy_of(y0, m * n);
	double *want = malloc((size_t)(m * n) * sizeof *want);
	assert_int_equal(be->bias_add(be, y, bias, m, n, &err), 0);
	for (int64_t i = 0; i < m * n; i++)
		want[i] = (double)y0[i] + bias[i % n];
	assert_close(want, y, m * n, 1e-7, "bias_add");

	float *db = random_floats(n, -1, 1), *db0 = copy_of(db, n);
	assert_int_equal(be->col_sum(be, y0, m, n, 0.5f, db, &err), 0);
	for (int64_t j = 0; j < n; j++) {
		want[j] = 0.5 * db0[j];
		for (int64_t i = 0; i < m; i++)
			want[j] += y0[i * n + j];
	}
	assert_close(want, db, n, 1e-7, "col_sum");
	for (int64_t j = 0; j < n; j++)
		db[j] = NAN;
	assert_int_equal(be->col_sum(be, y0, m, n, 0.0f, db, &err), 0);
	for (int64_t j = 0; j < n; j++) {
		want[j] = 0;
		for (int64_t i = 0; i < m; i++)
			want[j] += y0[i * n + j];
	}
	assert_close(want, db, n, 1e-7, "col_sum beta = 0");
	free(want);
}

static void test_bias_gradient(void **state)
{
	const int64_t m = 40, n = 9;
	struct probe q = {.op = OBJ_BIAS, .m = m, .n = n, .x = random_floats(n, -1, 1),
			  .x2 = random_floats(m * n, -1, 1), .y = floats(m * n),
			  .w = random_floats(m * n, -1, 1), .count = m * n};
	float *db = floats(n);
	assert_int_equal(be->col_sum(be, q.w, m, n, 0, db, &err), 0);
	check_fd(&q, q.x, db, n, STEP_LINEAR, TOL_LINEAR, "bias_add/col_sum");
}

static void test_dot(void **state)
{
	const int64_t count = 150001;
	float *x = random_floats(count, -1, 1), *y = random_floats(count, -1, 1);
	float *out = floats(1);
	out[0] = 2.0f;
	double want = 0.25 * 2.0 + inner(x, y, count);
	assert_int_equal(be->dot(be, x, y, count, 0.25f, out, &err), 0);
	assert_close(&want, out, 1, 1e-7, "dot");
	out[0] = NAN;
	want = inner(x, y, count);
	assert_int_equal(be->dot(be, x, y, count, 0.0f, out, &err), 0);
	assert_close(&want, out, 1, 1e-7, "dot beta = 0");
}

/* y = y0 + (1 + eps) x: dL/deps = <x, w> (dot), dL/dx = (1 + eps) w. */
static void test_axpy_eps_gradient(void **state)
{
	const int64_t count = 50;
	struct probe q = {.op = OBJ_AXPY_EPS, .x = random_floats(count, -1, 1), .x2 = floats(1),
			  .x3 = random_floats(count, -1, 1), .y = floats(count),
			  .w = random_floats(count, -1, 1), .count = count};
	q.x2[0] = 0.3f;
	float *deps = floats(1), *dx = floats(count);
	assert_int_equal(be->dot(be, q.x, q.w, count, 0, deps, &err), 0);
	assert_int_equal(be->axpby(be, 1 + q.x2[0], q.w, 0, dx, count, &err), 0);
	check_fd(&q, q.x2, deps, 1, STEP_LINEAR, TOL_LINEAR, "GIN eps");
	check_fd(&q, q.x, dx, count, STEP_LINEAR, TOL_LINEAR, "GIN x");
}

/* ---- LayerNorm ---- */

struct ln_ref {
	double *y, *mean, *rstd, *dx, *dgamma, *dbeta;
};

/* PyTorch's LayerNorm and its backward, directly in double. */
static void layernorm_naive(const float *x, const float *gamma, const float *beta,
			    const float *dy, int64_t m, int64_t n, struct ln_ref *r)
{
	for (int64_t j = 0; j < n; j++)
		r->dgamma[j] = r->dbeta[j] = 0;
	for (int64_t i = 0; i < m; i++) {
		double mu = 0, var = 0, a = 0, b = 0;
		for (int64_t j = 0; j < n; j++)
			mu += x[i * n + j] / (double)n;
		for (int64_t j = 0; j < n; j++)
			var += (x[i * n + j] - mu) * (x[i * n + j] - mu) / (double)n;
		double rs = 1 / sqrt(var + 1e-5);
		r->mean[i] = mu;
		r->rstd[i] = rs;
		for (int64_t j = 0; j < n; j++) {
			double xh = (x[i * n + j] - mu) * rs;
			r->y[i * n + j] = xh * gamma[j] + beta[j];
			r->dgamma[j] += dy[i * n + j] * xh;
			r->dbeta[j] += dy[i * n + j];
			a += dy[i * n + j] * gamma[j] / (double)n;
			b += dy[i * n + j] * gamma[j] * xh / (double)n;
		}
		for (int64_t j = 0; j < n; j++) {
			double xh = (x[i * n + j] - mu) * rs;
			r->dx[i * n + j] = rs * (dy[i * n + j] * gamma[j] - a - xh * b);
		}
	}
}

static void test_layernorm_against_naive(void **state)
{
	const int64_t m = 3000, n = 48; /* several chunks of rows */
	float *x = random_floats(m * n, -3, 1), *gamma = random_floats(n, 0.5, 1.5);
	float *beta = random_floats(n, -1, 1), *dy = random_floats(m * n, -1, 1);
	float *y = floats(m * n), *mean = floats(m), *rstd = floats(m), *dx = floats(m * n);
	float *dgamma = random_floats(n, -1, 1), *dbeta = random_floats(n, -1, 1);
	struct ln_ref r;
	double *all = malloc((size_t)(3 * m * n + 2 * m + 2 * n) * sizeof *all);
	r.y = all;
	r.dx = r.y + m * n;
	r.mean = r.dx + m * n;
	r.rstd = r.mean + m;
	r.dgamma = r.rstd + m;
	r.dbeta = r.dgamma + n;
	layernorm_naive(x, gamma, beta, dy, m, n, &r);
	assert_int_equal(be->layernorm(be, x, gamma, beta, m, n, y, mean, rstd, &err), 0);
	assert_close(r.y, y, m * n, 1e-6, "layernorm y");
	assert_close(r.mean, mean, m, 1e-7, "layernorm mean");
	assert_close(r.rstd, rstd, m, 1e-7, "layernorm rstd");
	assert_int_equal(be->layernorm_backward(be, x, dy, gamma, mean, rstd, m, n, dx, dgamma,
						dbeta, &err),
			 0);
	assert_close(r.dx, dx, m * n, 1e-6, "layernorm dx");
	assert_close(r.dgamma, dgamma, n, 1e-6, "layernorm dgamma"); /* overwritten */
	assert_close(r.dbeta, dbeta, n, 1e-7, "layernorm dbeta");
	free(all);
}

static void test_layernorm_gradients(void **state)
{
	const int64_t m = 5, n = 12;
	struct probe q = {.op = OBJ_LAYERNORM, .m = m, .n = n, .x = random_floats(m * n, -1, 1),
			  .x2 = random_floats(n, 0.5, 1.5), .x3 = random_floats(n, -1, 1),
			  .y = floats(m * n), .aux1 = floats(m), .aux2 = floats(m),
			  .w = random_floats(m * n, -1, 1), .count = m * n};
	float *dx = floats(m * n), *dgamma = floats(n), *dbeta = floats(n);
	objective(&q);
	assert_int_equal(be->layernorm_backward(be, q.x, q.w, q.x2, q.aux1, q.aux2, m, n, dx,
						dgamma, dbeta, &err),
			 0);
	check_fd(&q, q.x, dx, m * n, STEP_SMOOTH, TOL_SMOOTH, "layernorm dx");
	check_fd(&q, q.x2, dgamma, n, STEP_SMOOTH, TOL_SMOOTH,
		 "layernorm dgamma");
	check_fd(&q, q.x3, dbeta, n, STEP_LINEAR, TOL_LINEAR,
		 "layernorm dbeta");
}

/* ---- MaxK ---- */

static const float *rank_row;

/* Larger first, ties to the lower column. */
static int rank_cmp(const void *a, const void *b)
{
	int ca = *(const int *)a, cb = *(const int *)b;
	if (rank_row[ca] != rank_row[cb])
		return rank_row[ca] > rank_row[cb] ? -1 : 1;
	return ca - cb;
}

/* The kept columns of each row by sorting it: kept[i * h + col]. */
static unsigned char *kept_by_sorting(const float *x, int64_t m, int h, int k)
{
	unsigned char *kept = calloc((size_t)(m * h), 1);
	int *cols = malloc((size_t)h * sizeof *cols);
	for (int64_t i = 0; i < m; i++) {
		for (int c = 0; c < h; c++)
			cols[c] = c;
		rank_row = x + i * h;
		qsort(cols, (size_t)h, sizeof *cols, rank_cmp);
		for (int t = 0; t < k; t++)
			kept[i * h + cols[t]] = 1;
	}
	free(cols);
	return kept;
}

/* Values on a coarse grid, so that ties are common. */
static float *grid_floats(int64_t count)
{
	float *x = floats(count);
	for (int64_t i = 0; i < count; i++)
		x[i] = (float)((int)rng_below(&rng, 21) - 10) / 4;
	return x;
}

static void check_topk(int64_t m, int h, int k)
{
	float *x = grid_floats(m * h), *values = floats(m * k), *dense = floats(m * h);
	uint16_t *index = hold((size_t)(m * k) * sizeof *index);
	float *d = random_floats(m * h, -1, 1), *gathered = floats(m * k);
	assert_int_equal(be->topk(be, x, m, h, k, values, index, &err), 0);
	assert_int_equal(be->scatter(be, values, index, m, h, k, dense, &err), 0);
	assert_int_equal(be->gather(be, d, index, m, h, k, gathered, &err), 0);
	unsigned char *kept = kept_by_sorting(x, m, h, k);
	for (int64_t i = 0; i < m; i++) {
		int t = 0;
		for (int c = 0; c < h; c++) {
			assert_true(dense[i * h + c] == (kept[i * h + c] ? x[i * h + c] : 0.0f));
			if (!kept[i * h + c])
				continue;
			assert_int_equal(index[i * k + t], c); /* ascending columns */
			assert_true(values[i * k + t] == x[i * h + c]);
			assert_true(gathered[i * k + t] == d[i * h + c]);
			t++;
		}
		assert_int_equal(t, k);
	}
	free(kept);
	teardown_test(NULL);
}

static void test_topk_scatter_gather(void **state)
{
	check_topk(2500, 64, 8); /* several chunks */
	check_topk(30, 256, 32);
	check_topk(10, 16, 1);
	check_topk(10, 16, 16);
	check_topk(5, 300, 7);
}

/* <w, scatter(topk(x))> as a function of x: away from ties its gradient
 * is w at the kept positions, scatter(gather(w)). */
static void test_maxk_gradient(void **state)
{
	const int64_t m = 6;
	const int h = 20, k = 5;
	struct probe q = {.op = OBJ_MAXK, .m = m, .h = h, .kk = k, .x = floats(m * h),
			  .y = floats(m * h), .aux1 = floats(m * k),
			  .index = hold((size_t)(m * k) * sizeof(uint16_t)),
			  .w = random_floats(m * h, -1, 1), .count = m * h};
	/* distinct values 0.1 apart, so a step of 0.02 changes no ranking */
	for (int64_t i = 0; i < m; i++)
		for (int c = 0; c < h; c++)
			q.x[i * h + c] = (float)(((c * 7 + i * 3) % h) * 0.1 - 1);
	float *gk = floats(m * k), *dx = floats(m * h);
	objective(&q);
	assert_int_equal(be->gather(be, q.w, q.index, m, h, k, gk, &err), 0);
	assert_int_equal(be->scatter(be, gk, q.index, m, h, k, dx, &err), 0);
	check_fd(&q, q.x, dx, m * h, 0.02f, TOL_LINEAR, "maxk");
}

/* scatter and gather are each other's adjoints: <scatter(v), D> =
 * <v, gather(D)>, and gather(w) is the gradient of <w, scatter(v)>. */
static void test_scatter_gather_adjoint(void **state)
{
	const int64_t m = 40;
	const int h = 24, k = 6;
	struct probe q = {.op = OBJ_SCATTER, .m = m, .h = h, .kk = k, .x = floats(m * k),
			  .y = floats(m * h), .index = hold((size_t)(m * k) * sizeof(uint16_t)),
			  .w = random_floats(m * h, -1, 1), .count = m * h};
	float *x = random_floats(m * h, -1, 1), *gw = floats(m * k);
	assert_int_equal(be->topk(be, x, m, h, k, q.x, q.index, &err), 0);
	assert_int_equal(be->gather(be, q.w, q.index, m, h, k, gw, &err), 0);
	check_linear(&q, q.x, gw, m * k, "scatter/gather");
}

/* ---- aggregation ---- */

/* A random graph of n nodes, about deg edges a row, with row 4 empty and a
 * self-loop on node 2 (n >= 5); rows sorted. */
static void random_graph(struct csr *g, int64_t n, int deg)
{
	int64_t cap = n * (deg + 2) + 1, nnz = 0;
	int64_t *rows = malloc((size_t)cap * sizeof *rows);
	int64_t *cols = malloc((size_t)cap * sizeof *cols);
	for (int64_t r = 0; r < n; r++)
		for (int64_t c = 0; c < n && r != 4 && nnz < cap; c++) {
			int self_loop = r == 2 && c == 2;
			if (self_loop || (c != r && rng_below(&rng, (uint64_t)n) < (uint64_t)deg)) {
				rows[nnz] = r;
				cols[nnz++] = c;
			}
		}
	assert_int_equal(csr_from_coo(g, n, n, nnz, rows, cols, NULL, "random", &err), 0);
	assert_int_equal(csr_sort_rows(g, "random", &err), 0);
	free(rows);
	free(cols);
}

/* A as a dense n x n matrix, its values from the definitions. */
static double *dense_adjacency(const struct csr *g, enum edge_norm norm)
{
	int64_t n = g->nrows;
	double *a = calloc((size_t)(n * n), sizeof *a);
	for (int64_t r = 0; r < n; r++)
		for (int64_t e = g->indptr[r]; e < g->indptr[r + 1]; e++) {
			int64_t j = g->indices[e];
			double dr = (double)(g->indptr[r + 1] - g->indptr[r]);
			double dj = (double)(g->indptr[j + 1] - g->indptr[j]);
			if (norm == EDGE_ONES)
				a[r * n + j] += 1;
			else if (norm == EDGE_MEAN)
				a[r * n + j] += 1 / dr;
			else if (dj > 0) /* an edge into a node without edges weighs 0 */
				a[r * n + j] += 1 / sqrt(dr * dj);
		}
	return a;
}

/* y = op(A) x, x dense n x h, op(A) = A or A^T. */
static void dense_spmm(const double *a, int trans, const float *x, int64_t n, int h, double *y)
{
	for (int64_t r = 0; r < n; r++)
		for (int c = 0; c < h; c++) {
			double s = 0;
			for (int64_t j = 0; j < n; j++)
				s += (trans ? a[j * n + r] : a[r * n + j]) * x[j * h + c];
			y[r * h + c] = s;
		}
}

static void check_aggregate(int64_t n, int deg, int h, enum edge_norm norm)
{
	struct csr g;
	random_graph(&g, n, deg);
	struct gnn_graph *gg;
	assert_int_equal(be->graph_create(be, &g, norm, NULL, 0, &gg, &err), 0);
	double *a = dense_adjacency(&g, norm), *want = malloc((size_t)(n * h) * sizeof *want);
	float *x = random_floats(n * h, -1, 1), *y = floats(n * h);
	assert_int_equal(be->aggregate(be, gg, x, h, y, &err), 0);
	dense_spmm(a, 0, x, n, h, want);
	assert_close(want, y, n * h, 1e-6, "aggregate");
	for (int c = 0; c < h; c++)
		assert_true(y[4 * h + c] == 0); /* row 4 has no edges */
	assert_int_equal(be->aggregate_backward(be, gg, x, h, y, &err), 0);
	dense_spmm(a, 1, x, n, h, want);
	assert_close(want, y, n * h, 1e-6, "aggregate_backward");

	/* MaxK: x in CBSR form, A times its dense form; the backward is
	 * A^T dY at the kept positions. */
	int k = h < 8 ? h : 8;
	float *values = floats(n * k), *dense = floats(n * h), *dvalues = floats(n * k);
	uint16_t *index = hold((size_t)(n * k) * sizeof *index);
	assert_int_equal(be->topk(be, x, n, h, k, values, index, &err), 0);
	assert_int_equal(be->scatter(be, values, index, n, h, k, dense, &err), 0);
	assert_int_equal(be->aggregate_maxk(be, gg, values, index, h, k, y, &err), 0);
	dense_spmm(a, 0, dense, n, h, want);
	assert_close(want, y, n * h, 1e-6, "aggregate_maxk");
	float *dy = random_floats(n * h, -1, 1);
	assert_int_equal(be->aggregate_maxk_backward(be, gg, index, h, k, dy, dvalues, &err), 0);
	dense_spmm(a, 1, dy, n, h, want);
	double *kept = malloc((size_t)(n * k) * sizeof *kept);
	for (int64_t i = 0; i < n * k; i++)
		kept[i] = want[i / k * h + index[i]];
	assert_close(kept, dvalues, n * k, 1e-6, "aggregate_maxk_backward");

	free(kept);
	free(a);
	free(want);
	be->graph_free(be, gg);
	csr_free(&g);
	teardown_test(NULL);
}

static void test_aggregate_against_naive(void **state)
{
	const enum edge_norm norms[] = {EDGE_ONES, EDGE_MEAN, EDGE_GCN};
	for (int i = 0; i < 3; i++) {
		check_aggregate(9, 3, 16, norms[i]);
		check_aggregate(7, 4, 300, norms[i]); /* past one column block */
		check_aggregate(700, 8, 48, norms[i]); /* several chunks of rows */
	}
}

/* <A x, w> = <x, A^T w>, and A^T w is the gradient of <w, A x>; the same
 * for the MaxK pair with x the kept values. */
static void test_aggregate_gradients(void **state)
{
	const int64_t n = 10;
	const int h = 12, k = 4;
	struct csr g;
	random_graph(&g, n, 3);
	struct gnn_graph *gg;
	assert_int_equal(be->graph_create(be, &g, EDGE_GCN, NULL, 0, &gg, &err), 0);
	struct probe q = {.op = OBJ_AGGREGATE, .g = gg, .h = h, .kk = k,
			  .x = random_floats(n * h, -1, 1),
			  .y = floats(n * h), .w = random_floats(n * h, -1, 1), .count = n * h};
	float *dx = floats(n * h);
	assert_int_equal(be->aggregate_backward(be, gg, q.w, h, dx, &err), 0);
	check_linear(&q, q.x, dx, n * h, "aggregate");

	float *values = floats(n * k), *dvalues = floats(n * k);
	q.index = hold((size_t)(n * k) * sizeof *q.index);
	assert_int_equal(be->topk(be, q.x, n, h, k, values, q.index, &err), 0);
	q.op = OBJ_AGGREGATE_MAXK;
	q.x = values;
	assert_int_equal(be->aggregate_maxk_backward(be, gg, q.index, h, k, q.w, dvalues, &err), 0);
	check_linear(&q, values, dvalues, n * k, "aggregate_maxk");
	be->graph_free(be, gg);
	csr_free(&g);
}

/* ---- losses ---- */

/* Mask values 0, 1, 2 at random. */
static uint8_t *random_mask(int64_t m)
{
	uint8_t *mask = hold((size_t)m);
	for (int64_t i = 0; i < m; i++)
		mask[i] = (uint8_t)rng_below(&rng, 3);
	return mask;
}

static int64_t rows_in_split(const uint8_t *mask, int64_t m, int which)
{
	int64_t count = 0;
	for (int64_t i = 0; i < m; i++)
		count += mask[i] == which;
	return count;
}

static void test_softmax_xent_against_naive(void **state)
{
	const int64_t m = 5000;
	const int c = 7;
	float *x = random_floats(m * c, -4, 4), *d = floats(m * c), *loss = floats(1);
	int32_t *labels = hold((size_t)m * sizeof *labels);
	uint8_t *mask = random_mask(m);
	for (int64_t i = 0; i < m; i++)
		labels[i] = (int32_t)rng_below(&rng, c);
	x[3] = 1000; /* the log-sum-exp does not overflow */
	for (int64_t i = 0; i < m * c; i++)
		d[i] = NAN; /* every entry is written */
	double count = (double)rows_in_split(mask, m, 1), want_loss = 0;
	double *want = calloc((size_t)(m * c), sizeof *want);
	for (int64_t i = 0; i < m; i++) {
		if (mask[i] != 1)
			continue;
		double mx = -INFINITY, z = 0;
		for (int j = 0; j < c; j++)
			mx = fmax(mx, x[i * c + j]);
		for (int j = 0; j < c; j++)
			z += exp(x[i * c + j] - mx);
		for (int j = 0; j < c; j++)
			want[i * c + j] = (exp(x[i * c + j] - mx) / z - (j == labels[i])) / count;
		want_loss -= (x[i * c + labels[i]] - mx - log(z)) / count;
	}
	assert_int_equal(be->softmax_xent(be, x, labels, mask, 1, m, c, d, loss, &err), 0);
	assert_close(&want_loss, loss, 1, 1e-7, "softmax_xent loss");
	assert_close(want, d, m * c, 1e-6, "softmax_xent dlogits");

	for (int64_t i = 0; i < m; i++)
		mask[i] = 0;
	assert_int_equal(be->softmax_xent(be, x, labels, mask, 1, m, c, d, loss, &err), 0);
	assert_true(loss[0] == 0); /* no rows: loss 0, gradient 0 */
	for (int64_t i = 0; i < m * c; i++)
		assert_true(d[i] == 0);
	free(want);
}

static void test_bce_against_naive(void **state)
{
	const int64_t m = 3000;
	const int c = 5;
	float *x = random_floats(m * c, -6, 6), *t = floats(m * c), *d = floats(m * c);
	float *loss = floats(1);
	uint8_t *mask = random_mask(m);
	for (int64_t i = 0; i < m * c; i++)
		t[i] = (float)rng_below(&rng, 2);
	x[0] = 200; /* exp(200) overflows float: the stable form does not */
	x[1] = -200;
	double terms = (double)(rows_in_split(mask, m, 2) * c), want_loss = 0;
	double *want = calloc((size_t)(m * c), sizeof *want);
	for (int64_t i = 0; i < m * c; i++) {
		if (mask[i / c] != 2)
			continue;
		double v = x[i], p = 1 / (1 + exp(-v)), y = t[i];
		/* -(y log p + (1 - y) log(1 - p)), through log1p for large |v| */
		double term = v >= 0 ? (1 - y) * v + log1p(exp(-v)) : -y * v + log1p(exp(v));
		want_loss += term / terms;
		want[i] = (p - y) / terms;
	}
	assert_int_equal(be->bce(be, x, t, mask, 2, m, c, d, loss, &err), 0);
	assert_close(&want_loss, loss, 1, 1e-7, "bce loss");
	assert_close(want, d, m * c, 1e-6, "bce dlogits");
	free(want);
}

static void test_loss_gradients(void **state)
{
	const int64_t m = 8;
	const int c = 5;
	int32_t *labels = hold((size_t)m * sizeof *labels);
	for (int64_t i = 0; i < m; i++)
		labels[i] = (int32_t)rng_below(&rng, c);
	struct probe q = {.op = OBJ_SOFTMAX, .m = m, .c = c, .which = 1,
			  .x = random_floats(m * c, -2, 2),
			  .x2 = floats(m * c), .y = floats(1), .aux1 = floats(m * c),
			  .labels = labels, .mask = random_mask(m)};
	for (int64_t i = 0; i < m * c; i++)
		q.x2[i] = (float)rng_below(&rng, 2);
	float *d = floats(m * c);
	objective(&q);
	memcpy(d, q.aux1, (size_t)(m * c) * sizeof *d);
	check_fd(&q, q.x, d, m * c, STEP_SMOOTH, TOL_SMOOTH, "softmax_xent");
	q.op = OBJ_BCE;
	objective(&q);
	memcpy(d, q.aux1, (size_t)(m * c) * sizeof *d);
	check_fd(&q, q.x, d, m * c, STEP_SMOOTH, TOL_SMOOTH, "bce");
}

/* ---- Adam ---- */

/* Two steps, lr 0.1, betas 0.9 / 0.999, eps 1e-8, weight decay 0.1. The
 * first parameter by hand:
 *   step 1: g = 0.5 + 0.1 * 1 = 0.6; m1 = 0.06, m2 = 0.00036;
 *           m1/(1-0.9) = 0.6, m2/(1-0.999) = 0.36, sqrt 0.6;
 *           p = 1 - 0.1 * 0.6 / (0.6 + 1e-8) = 0.9 (to float)
 *   step 2: g = -0.25 + 0.1 * 0.9 = -0.16;
 *           m1 = 0.054 - 0.016 = 0.038, m2 = 0.00035964 + 0.0000256 = 0.00038524;
 *           m1/(1-0.81) = 0.2, m2/(1-0.998001) = 0.192716358, sqrt 0.438994713;
 *           p = 0.9 - 0.1 * 0.2 / 0.438994713 = 0.854441345
 * The others are the same arithmetic (a zero gradient, so weight decay
 * alone moves it; a large one). The hyperparameters arrive as floats
 * (0.9f is 0.899999976), which moves m1 and m2 in the seventh digit from
 * the decimal values above; the expected values below are computed with
 * them, each result rounded to float as stored. */
static void test_adam_two_steps(void **state)
{
	float *p = floats(3), *g = floats(3), *m1 = floats(3), *m2 = floats(3);
	const float p0[] = {1.0f, 2.0f, -0.5f}, g1[] = {0.5f, 0.0f, -3.0f};
	const float g2[] = {-0.25f, 0.0f, 0.75f};
	memcpy(p, p0, sizeof p0);
	memcpy(g, g1, sizeof g1);
	assert_int_equal(be->adam(be, p, g, m1, m2, 3, 0.1f, 0.9f, 0.999f, 1e-8f, 0.1f, 1, &err),
			 0);
	const double want_p1[] = {0.899999976, 1.89999998, -0.400000006};
	const double want_m1[] = {0.0600000136, 0.0200000051, -0.305000067};
	const double want_m2[] = {0.000359995378, 3.9999486e-05, 0.00930238049};
	assert_close(want_p1, p, 3, 1e-7, "adam step 1 param");
	assert_close(want_m1, m1, 3, 1e-7, "adam step 1 m1");
	assert_close(want_m2, m2, 3, 1e-7, "adam step 1 m2");
	memcpy(g, g2, sizeof g2);
	assert_int_equal(be->adam(be, p, g, m1, m2, 3, 0.1f, 0.9f, 0.999f, 1e-8f, 0.1f, 2, &err),
			 0);
	const double want_p2[] = {0.854441345, 1.80016649, -0.351620197};
	assert_close(want_p2, p, 3, 1e-7, "adam step 2 param");
	const double want_m1_2[] = {0.0380000062, 0.0370000079, -0.203500032};
	const double want_m2_2[] = {0.000385235064, 7.60590192e-05, 0.00979717169};
	assert_close(want_m1_2, m1, 3, 1e-7, "adam step 2 m1");
	assert_close(want_m2_2, m2, 3, 1e-7, "adam step 2 m2");
	assert_memory_equal(g, g2, sizeof g2); /* the gradient is not changed */
}

/* ---- determinism ---- */

/* Each op's output for one thread and for three: the same bits. */
static void test_same_bits_any_thread_count(void **state)
{
	const int64_t m = 2000, n = 96, k = 80;
	float *A = random_floats(m * k, -1, 1), *Bm = random_floats(k * n, -1, 1);
	float *out[2][6];
	struct csr g;
	random_graph(&g, 1200, 10);
	struct gnn_graph *gg;
	assert_int_equal(be->graph_create(be, &g, EDGE_MEAN, NULL, 0, &gg, &err), 0);
	float *x = random_floats(1200 * 64, -1, 1), *gamma = random_floats(n, 0.5, 1.5);
	float *dy = random_floats(m * n, -1, 1);
	for (int run = 0; run < 2; run++) {
		setenv("SPKIT_THREADS", run ? "3" : "1", 1);
		float **o = out[run];
		o[0] = floats(m * n);
		o[1] = floats(n);
		o[2] = floats(1);
		o[3] = floats(1200 * 64);
		o[4] = floats(m * n);
		o[5] = floats(2 * n + 2 * m);
		assert_int_equal(be->gemm(be, 1, 0, m, n, k, 1, A, Bm, 0, o[0], &err), 0);
		assert_int_equal(be->col_sum(be, dy, m, n, 0, o[1], &err), 0);
		assert_int_equal(be->dot(be, A, A, m * k, 0, o[2], &err), 0);
		assert_int_equal(be->aggregate_backward(be, gg, x, 64, o[3], &err), 0);
		float *mean = o[5] + 2 * n, *rstd = mean + m;
		assert_int_equal(be->layernorm(be, dy, gamma, gamma, m, n, o[4], mean, rstd, &err),
				 0);
		assert_int_equal(be->layernorm_backward(be, dy, dy, gamma, mean, rstd, m, n, o[4],
							o[5], o[5] + n, &err),
				 0);
	}
	unsetenv("SPKIT_THREADS");
	const int64_t sizes[] = {m * n, n, 1, 1200 * 64, m * n, 2 * n + 2 * m};
	for (int i = 0; i < 6; i++)
		assert_memory_equal(out[0][i], out[1][i], (size_t)sizes[i] * sizeof(float));
	be->graph_free(be, gg);
	csr_free(&g);
}

/* ---- bad arguments ---- */

static void test_bad_arguments(void **state)
{
	float *x = floats(64), *y = floats(64);
	uint16_t *index = hold(64 * sizeof *index);
	assert_int_equal(be->gemm(be, 0, 0, -1, 2, 2, 1, x, x, 0, y, &err), -1);
	assert_msg_has(&err, "gemm: size -1 x 2 x 2 is negative", NULL);
	assert_int_equal(be->gemm(be, 0, 0, 2, 2, -5, 1, x, x, 0, y, &err), -1);
	assert_msg_has(&err, "gemm: size 2 x 2 x -5 is negative", NULL);
	assert_int_equal(be->topk(be, x, 4, 8, 0, y, index, &err), -1);
	assert_msg_has(&err, "topk: k = 0 is outside 1..8", NULL);
	assert_int_equal(be->topk(be, x, 1, 8, 9, y, index, &err), -1);
	assert_msg_has(&err, "topk: k = 9 is outside 1..8", NULL);
	assert_int_equal(be->scatter(be, x, index, 1, MAXK_MAX_WIDTH + 1, 1, y, &err), -1);
	assert_msg_has(&err, "scatter: feature width", NULL);
	assert_int_equal(be->dropout(be, x, y, 64, 1.0f, 1, &err), -1);
	assert_msg_has(&err, "dropout: rate 1 is outside [0, 1)", NULL);
	assert_int_equal(be->dropout(be, x, y, 64, NAN, 1, &err), -1);
	assert_int_equal(be->adam(be, x, y, x, y, 4, 0.1f, 0.9f, 0.999f, 1e-8f, 0, 0, &err), -1);
	assert_msg_has(&err, "adam: step 0 is not positive", NULL);
	assert_int_equal(be->layernorm(be, x, x, x, 2, 0, y, y, y, &err), -1);
	assert_msg_has(&err, "layernorm: rows of width 0", NULL);
	assert_int_equal(be->relu(be, x, y, -3, &err), -1);
	assert_msg_has(&err, "relu: size -3 x 1 is negative", NULL);

	int32_t labels[4] = {0, 1, 7, 2};
	uint8_t mask[4] = {1, 0, 1, 1};
	assert_int_equal(be->softmax_xent(be, x, labels, mask, 1, 4, 5, y, x + 40, &err), -1);
	assert_msg_has(&err, "softmax_xent: row 2: label 7 is outside 0..4", NULL);
	mask[2] = 0; /* a row outside the split is not looked at */
	assert_int_equal(be->softmax_xent(be, x, labels, mask, 1, 4, 5, y, x + 40, &err), 0);

	/* a rectangular graph (2 x 3) with its own edge values: y = A x,
	 * dx = A^T dy, and the MaxK forms over x's 3 rows */
	int64_t rows[] = {0, 0, 1}, cols[] = {1, 2, 2};
	const float vals[] = {2, 3, 5};
	struct csr g;
	assert_int_equal(csr_from_coo(&g, 2, 3, 3, rows, cols, vals, "t", &err), 0);
	struct gnn_graph *gg;
	assert_int_equal(be->graph_create(be, &g, EDGE_ONES, NULL, 0, &gg, &err), 0);
	const float xr[] = {1, 10, 100, 1000, 7, 70}; /* 3 x 2 */
	float yr[4], dxr[6];
	assert_int_equal(be->aggregate(be, gg, xr, 2, yr, &err), 0);
	const float want_y[] = {2 * 100 + 3 * 7, 2 * 1000 + 3 * 70, 5 * 7, 5 * 70};
	assert_memory_equal(yr, want_y, sizeof want_y);
	const float dy[] = {1, 2, 3, 4};
	assert_int_equal(be->aggregate_backward(be, gg, dy, 2, dxr, &err), 0);
	const float want_dx[] = {0, 0, 2, 4, 3 + 15, 6 + 20};
	assert_memory_equal(dxr, want_dx, sizeof want_dx);
	const float kv[] = {10, 1000, 70}; /* k = 1 of x's rows */
	const uint16_t ki[] = {1, 1, 1};
	assert_int_equal(be->aggregate_maxk(be, gg, kv, ki, 2, 1, yr, &err), 0);
	const float want_ym[] = {0, 2 * 1000 + 3 * 70, 0, 5 * 70};
	assert_memory_equal(yr, want_ym, sizeof want_ym);
	assert_int_equal(be->aggregate_maxk_backward(be, gg, ki, 2, 1, dy, dxr, &err), 0);
	const float want_dv[] = {0, 4, 6 + 20};
	assert_memory_equal(dxr, want_dv, sizeof want_dv);
	be->graph_free(be, gg);
	csr_free(&g);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_test, teardown_test)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_memory),
		T(test_graph_memory),
		T(test_gemm_against_naive),
		T(test_gemm_gradients),
		T(test_elementwise_against_naive),
		T(test_dropout),
		T(test_relu_gradient),
		T(test_dropout_gradient),
		T(test_bias_and_col_sum),
		T(test_bias_gradient),
		T(test_dot),
		T(test_axpy_eps_gradient),
		T(test_layernorm_against_naive),
		T(test_layernorm_gradients),
		T(test_topk_scatter_gather),
		T(test_maxk_gradient),
		T(test_scatter_gather_adjoint),
		T(test_aggregate_against_naive),
		T(test_aggregate_gradients),
		T(test_softmax_xent_against_naive),
		T(test_bce_against_naive),
		T(test_loss_gradients),
		T(test_adam_two_steps),
		T(test_same_bits_any_thread_count),
		T(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, setup_backend, teardown_backend);
}
