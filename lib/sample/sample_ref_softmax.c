/* CPU references of the row-wise softmax operators: softmax over the last
 * dimension, Megatron-LM's scaled upper-triangular masked softmax (causal:
 * row i of each l x l matrix keeps columns 0..i, the rest are 0; scale 1),
 * and Megatron-LM's vocab-parallel cross-entropy on partition 0. */
#include <math.h>

#include "sample/sample_ref.h"

/* The causal softmax's scale, as estimate-train-time passes it. */
#define CAUSAL_SCALE 1.0

/* Columns of row r that are kept: all, or 0..i for row i of its matrix. */
static int64_t kept(const struct sample_state *st, int64_t r, int causal)
{
	return causal ? r % st->d.seq + 1 : st->d.cols;
}

static void softmax_rows(const struct sample_state *st, int64_t lo, int64_t hi, int causal)
{
	int64_t n = st->d.cols;
	double scale = causal ? CAUSAL_SCALE : 1.0;
	for (int64_t r = lo; r < hi; r++) {
		const float *x = sample_ref_values(st, SM_X) + r * n;
		float *y = sample_ref_values(st, SM_Y) + r * n;
		int64_t keep = kept(st, r, causal);
		double max = -INFINITY, sum = 0;
		for (int64_t j = 0; j < keep; j++)
			max = fmax(max, x[j] * scale);
		for (int64_t j = 0; j < keep; j++)
			sum += exp(x[j] * scale - max);
		for (int64_t j = 0; j < n; j++)
			y[j] = j < keep ? sample_round(st->p, exp(x[j] * scale - max) / sum) : 0.0f;
	}
}

/* dx = scale y (dy - sum(dy y)) on the kept columns, 0 elsewhere; y is the
 * saved (rounded) output, as the frameworks' backward uses it. */
static void softmax_backward_rows(const struct sample_state *st, int64_t lo, int64_t hi,
				  int causal)
{
	int64_t n = st->d.cols;
	double scale = causal ? CAUSAL_SCALE : 1.0;
	for (int64_t r = lo; r < hi; r++) {
		const float *y = sample_ref_values(st, SM_Y) + r * n;
		const float *dy = sample_ref_values(st, SM_DY) + r * n;
		float *dx = sample_ref_values(st, SM_DX) + r * n;
		int64_t keep = kept(st, r, causal);
		double dot = 0;
		for (int64_t j = 0; j < keep; j++)
			dot += (double)dy[j] * y[j];
		for (int64_t j = 0; j < n; j++)
			dx[j] = j < keep ? sample_round(st->p, scale * y[j] * (dy[j] - dot)) : 0.0f;
	}
}

static void plain_rows(const void *ctx, int64_t lo, int64_t hi)
{
	softmax_rows(ctx, lo, hi, 0);
}

static void causal_rows(const void *ctx, int64_t lo, int64_t hi)
{
	softmax_rows(ctx, lo, hi, 1);
}

static void plain_backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	softmax_backward_rows(ctx, lo, hi, 0);
}

static void causal_backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	softmax_backward_rows(ctx, lo, hi, 1);
}

int sample_ref_softmax_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, plain_rows);
}

int sample_ref_softmax_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, plain_backward_rows);
}

int sample_ref_causal_softmax_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, causal_rows);
}

int sample_ref_causal_softmax_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, causal_backward_rows);
}

static double row_logsumexp(const float *x, int64_t n)
{
	double max = -INFINITY, sum = 0;
	for (int64_t j = 0; j < n; j++)
		max = fmax(max, x[j]);
	for (int64_t j = 0; j < n; j++)
		sum += exp(x[j] - max);
	return max + log(sum);
}

/* loss = logsumexp(row) - row[target]; a target outside the partition
 * [0, vocab) is another partition's, so its logit counts as 0 here. */
static void xent_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	int64_t n = st->d.cols;
	const int32_t *target = (const int32_t *)st->t[XENT_TARGET].data;
	for (int64_t r = lo; r < hi; r++) {
		const float *x = sample_ref_values(st, XENT_LOGITS) + r * n;
		double lse = row_logsumexp(x, n);
		double picked = target[r] < n ? x[target[r]] : 0.0;
		sample_ref_values(st, XENT_LOSS)[r] = (float)(lse - picked);
		sample_ref_values(st, XENT_LSE)[r] = (float)lse;
	}
}

/* dlogits = (softmax(row) - onehot(target)) dloss[row]. */
static void xent_backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	int64_t n = st->d.cols;
	const int32_t *target = (const int32_t *)st->t[XENT_TARGET].data;
	for (int64_t r = lo; r < hi; r++) {
		const float *x = sample_ref_values(st, XENT_LOGITS) + r * n;
		float *dx = sample_ref_values(st, XENT_DLOGITS) + r * n;
		double lse = row_logsumexp(x, n), g = sample_ref_values(st, XENT_DLOSS)[r];
		for (int64_t j = 0; j < n; j++)
			dx[j] = sample_round(st->p, (exp(x[j] - lse) - (j == target[r])) * g);
	}
}

int sample_ref_xent_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, xent_rows);
}

int sample_ref_xent_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, xent_backward_rows);
}
