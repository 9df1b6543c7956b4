/* CPU references of the GEMM operators: the five linears (nn.Linear on
 * sequence-first activations) and bmm / baddbmm (attention's batched
 * products), forward and the two products of backward. */
#include "sample/sample_ref.h"

static void gemm_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_ref_gemm *g = ctx;
	for (int64_t r = lo; r < hi; r++) {
		int64_t z = r / g->m, i = r % g->m;
		const float *a = g->a + z * g->a_batch + i * g->a_row;
		const float *b = g->b + z * g->b_batch;
		float *c = g->c + r * g->n;
		for (int64_t j = 0; j < g->n; j++) {
			double acc = g->bias ? g->bias[j] : 0.0;
			for (int64_t k = 0; k < g->k; k++)
				acc += (double)a[k * g->a_col] * b[k * g->b_row + j * g->b_col];
			c[j] = sample_round(g->p, acc);
		}
	}
}

void sample_ref_gemm(const struct sample_ref_gemm *g)
{
	sample_ref_for_rows(g, g->batch * g->m, gemm_rows);
}

/* Y[m][n] = X[m][k] W[n][k]^T + bias[n]. */
int sample_ref_linear_forward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	int64_t m = st->d.m, n = st->d.n, k = st->d.k;
	struct sample_ref_gemm g = {
		.batch = 1, .m = m, .n = n, .k = k,
		.a = sample_ref_values(st, LIN_X), .a_row = k, .a_col = 1,
		.b = sample_ref_values(st, LIN_W), .b_row = 1, .b_col = k,
		.bias = st->t[LIN_B].count ? sample_ref_values(st, LIN_B) : NULL,
		.c = sample_ref_values(st, LIN_Y), .p = st->p,
	};
	sample_ref_gemm(&g);
	return 0;
}

/* The bias gradient: column sums of dY, a column per row of work. */
static void bias_grad_cols(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	const float *dy = sample_ref_values(st, LIN_DY);
	float *db = sample_ref_values(st, LIN_DB);
	for (int64_t j = lo; j < hi; j++) {
		double acc = 0;
		for (int64_t i = 0; i < st->d.m; i++)
			acc += dy[i * st->d.n + j];
		db[j] = sample_round(st->p, acc);
	}
}

/* dX = dY W (m x k), dW = dY^T X (n x k), dbias = column sums of dY. */
int sample_ref_linear_backward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	int64_t m = st->d.m, n = st->d.n, k = st->d.k;
	const float *dy = sample_ref_values(st, LIN_DY);
	struct sample_ref_gemm dx = {
		.batch = 1, .m = m, .n = k, .k = n,
		.a = dy, .a_row = n, .a_col = 1,
		.b = sample_ref_values(st, LIN_W), .b_row = k, .b_col = 1,
		.c = sample_ref_values(st, LIN_DX), .p = st->p,
	};
	struct sample_ref_gemm dw = {
		.batch = 1, .m = n, .n = k, .k = m,
		.a = dy, .a_row = 1, .a_col = n,
		.b = sample_ref_values(st, LIN_X), .b_row = k, .b_col = 1,
		.c = sample_ref_values(st, LIN_DW), .p = st->p,
	};
	sample_ref_gemm(&dx);
	sample_ref_gemm(&dw);
	if (st->t[LIN_DB].count)
		sample_ref_for_rows(st, n, bias_grad_cols);
	return 0;
}

/* C = A B per matrix of the batch: A is m x k, B is k x n. */
int sample_ref_batched_forward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	int64_t m = st->d.m, n = st->d.n, k = st->d.k;
	struct sample_ref_gemm g = {
		.batch = st->d.batch, .m = m, .n = n, .k = k,
		.a = sample_ref_values(st, MM_A), .a_batch = m * k, .a_row = k, .a_col = 1,
		.b = sample_ref_values(st, MM_B), .b_batch = k * n, .b_row = n, .b_col = 1,
		.c = sample_ref_values(st, MM_C), .p = st->p,
	};
	sample_ref_gemm(&g);
	return 0;
}

/* dA = dC B^T (m x k), dB = A^T dC (k x n). */
int sample_ref_batched_backward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	int64_t m = st->d.m, n = st->d.n, k = st->d.k;
	const float *dc = sample_ref_values(st, MM_DC);
	struct sample_ref_gemm da = {
		.batch = st->d.batch, .m = m, .n = k, .k = n,
		.a = dc, .a_batch = m * n, .a_row = n, .a_col = 1,
		.b = sample_ref_values(st, MM_B), .b_batch = k * n, .b_row = 1, .b_col = n,
		.c = sample_ref_values(st, MM_DA), .p = st->p,
	};
	struct sample_ref_gemm db = {
		.batch = st->d.batch, .m = k, .n = n, .k = m,
		.a = sample_ref_values(st, MM_A), .a_batch = m * k, .a_row = 1, .a_col = k,
		.b = dc, .b_batch = m * n, .b_row = n, .b_col = 1,
		.c = sample_ref_values(st, MM_DB), .p = st->p,
	};
	sample_ref_gemm(&da);
	sample_ref_gemm(&db);
	return 0;
}
