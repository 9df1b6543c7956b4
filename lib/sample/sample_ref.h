/* The CPU references of kernel-sample's operators: the operators of the CPU
 * table (`--device cpu`) and what the GPU tests compare the kernels with.
 * Each works on a struct sample_state whose tensors hold floats (values
 * rounded to the state's precision) or int32 ids, accumulates in double, and
 * rounds its outputs to the precision, as a GPU that accumulates in fp32 and
 * stores fp16/bf16 would, up to the accumulation's own rounding. Rows run in
 * parallel (core/parallel.h), with results independent of the thread count. */
#ifndef SPKIT_SAMPLE_REF_H
#define SPKIT_SAMPLE_REF_H

#include <math.h>
#include <stdint.h>

#include "core/err.h"
#include "sample/sample_spec.h"

/* One per operator family of SAMPLE_OP_LIST, forward and backward. */
#define SAMPLE_REF_DECLARE(family)                                       \
	int sample_ref_##family##_forward(void *state, struct sp_err *err); \
	int sample_ref_##family##_backward(void *state, struct sp_err *err);
SAMPLE_REF_DECLARE(embedding)
SAMPLE_REF_DECLARE(norm)
SAMPLE_REF_DECLARE(linear)
SAMPLE_REF_DECLARE(gelu)
SAMPLE_REF_DECLARE(rope)
SAMPLE_REF_DECLARE(xent)
SAMPLE_REF_DECLARE(softmax)
SAMPLE_REF_DECLARE(causal_softmax)
SAMPLE_REF_DECLARE(fillmask)
SAMPLE_REF_DECLARE(batched)
SAMPLE_REF_DECLARE(attention)
SAMPLE_REF_DECLARE(causal_attention)
SAMPLE_REF_DECLARE(moe)
SAMPLE_REF_DECLARE(maxk)
#undef SAMPLE_REF_DECLARE
int sample_ref_res_add_forward(void *state, struct sp_err *err);
int sample_ref_adam_forward(void *state, struct sp_err *err);
int sample_ref_macko_forward(void *state, struct sp_err *err);
int sample_ref_ksmm_forward(void *state, struct sp_err *err);

/* gelu, erf form (F.gelu's default), and its derivative Phi(x) + x phi(x). */
static inline double sample_ref_gelu(double x)
{
	return 0.5 * x * (1.0 + erf(x * M_SQRT1_2));
}
static inline double sample_ref_gelu_grad(double x)
{
	return 0.5 * (1.0 + erf(x * M_SQRT1_2)) + x * exp(-0.5 * x * x) * (M_2_SQRTPI * M_SQRT1_2 * 0.5);
}

/* The CPU state: the tensors, then what a family keeps beyond them (a
 * graph), made by its prepare after the tensors are filled and freed by
 * release. */
struct sample_cpu_state {
	struct sample_state s;
	void *extra;
	void (*release)(void *extra);
};
typedef int (*sample_ref_prepare_fn)(struct sample_cpu_state *st, struct sp_err *err);
int sample_ref_maxk_prepare(struct sample_cpu_state *st, struct sp_err *err);
int sample_ref_macko_prepare(struct sample_cpu_state *st, struct sp_err *err);
int sample_ref_ksmm_prepare(struct sample_cpu_state *st, struct sp_err *err);

/* A tensor's host data. */
static inline float *sample_ref_values(const struct sample_state *st, int i)
{
	return (float *)st->t[i].data;
}

/* fn(ctx, lo, hi) over rows [lo, hi) of 0..rows, in chunks on every thread. */
typedef void (*sample_ref_rows_fn)(const void *ctx, int64_t lo, int64_t hi);
void sample_ref_for_rows(const void *ctx, int64_t rows, sample_ref_rows_fn fn);
/* fn(state, lo, hi) over all the state's rows (d.rows); returns 0, as an
 * operator's forward or backward does. */
int sample_ref_state_rows(void *state, sample_ref_rows_fn fn);

/* C = A B, batched, row-major output c[batch][m][n] (plus bias[n] when not
 * NULL); A's element (i, k) of matrix z at a[z a_batch + i a_row + k a_col],
 * B's (k, j) at b[z b_batch + k b_row + j b_col], so a transpose is a swap of
 * strides. */
struct sample_ref_gemm {
	int64_t batch, m, n, k;
	const float *a;
	int64_t a_batch, a_row, a_col;
	const float *b;
	int64_t b_batch, b_row, b_col;
	const float *bias;
	float *c;
	enum sample_precision p;
};
void sample_ref_gemm(const struct sample_ref_gemm *g);

#endif
