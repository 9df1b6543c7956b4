/* CPU references of the elementwise operators: gelu (erf form, F.gelu's
 * default), the residual sum, the rotary embedding of query and key
 * (GPT-NeoX / Megatron-LM's apply_rotary_pos_emb: x cos + rotate_half(x) sin)
 * and the causal masked_fill_ (zero above the diagonal, in place). */
#include <math.h>

#include "sample/sample_ref.h"

static void gelu_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	const float *x = sample_ref_values(st, ELT_X);
	float *y = sample_ref_values(st, ELT_Y);
	for (int64_t i = lo * st->d.cols; i < hi * st->d.cols; i++)
		y[i] = sample_round(st->p, sample_ref_gelu(x[i]));
}

/* d gelu / dx = Phi(x) + x phi(x). */
static void gelu_backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	const float *x = sample_ref_values(st, ELT_X), *dy = sample_ref_values(st, ELT_DY);
	float *dx = sample_ref_values(st, ELT_DX);
	for (int64_t i = lo * st->d.cols; i < hi * st->d.cols; i++)
		dx[i] = sample_round(st->p, dy[i] * sample_ref_gelu_grad(x[i]));
}

static void add_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	const float *a = sample_ref_values(st, ELT_X), *b = sample_ref_values(st, ELT_X2);
	float *y = sample_ref_values(st, ELT_Y);
	for (int64_t i = lo * st->d.cols; i < hi * st->d.cols; i++)
		y[i] = sample_round(st->p, (double)a[i] + b[i]);
}

int sample_ref_gelu_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, gelu_rows);
}

int sample_ref_gelu_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, gelu_backward_rows);
}

int sample_ref_res_add_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, add_rows);
}

/* Rotate each head vector's pairs (i, i + half) by the angle
 * s inv_freq[i] (s its position, the product in fp32 as the frameworks form
 * it): out_i = x_i cos - x_{i+half} sin, out_{i+half} = x_{i+half} cos + x_i sin.
 * Backward rotates the gradient back (sin negated). */
static void rope_rows(const struct sample_state *st, int64_t lo, int64_t hi, int in, int out,
		      double sign)
{
	int64_t hd = st->d.cols, half = hd / 2, per_pos = st->d.rows / st->d.seq;
	const float *freq = sample_ref_values(st, ROPE_FREQ);
	for (int t = 0; t < 2; t++) {
		const float *x = sample_ref_values(st, in + t);
		float *y = sample_ref_values(st, out + t);
		for (int64_t r = lo; r < hi; r++) {
			float pos = (float)(r / per_pos);
			for (int64_t i = 0; i < half; i++) {
				double angle = (double)(pos * freq[i]);
				double c = cos(angle), s = sign * sin(angle);
				double a = x[r * hd + i], b = x[r * hd + half + i];
				y[r * hd + i] = sample_round(st->p, a * c - b * s);
				y[r * hd + half + i] = sample_round(st->p, b * c + a * s);
			}
		}
	}
}

static void rope_forward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	rope_rows(ctx, lo, hi, ROPE_Q, ROPE_QO, 1.0);
}

static void rope_backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	rope_rows(ctx, lo, hi, ROPE_DQO, ROPE_DQ, -1.0);
}

int sample_ref_rope_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, rope_forward_rows);
}

int sample_ref_rope_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, rope_backward_rows);
}

/* Row i of each l x l matrix: columns above i set to 0. */
static void mask_rows(const struct sample_state *st, int64_t lo, int64_t hi, int tensor)
{
	int64_t l = st->d.cols;
	float *s = sample_ref_values(st, tensor);
	for (int64_t r = lo; r < hi; r++)
		for (int64_t j = r % l + 1; j < l; j++)
			s[r * l + j] = 0.0f;
}

static void mask_scores_rows(const void *ctx, int64_t lo, int64_t hi)
{
	mask_rows(ctx, lo, hi, MASK_S);
}

static void mask_grad_rows(const void *ctx, int64_t lo, int64_t hi)
{
	mask_rows(ctx, lo, hi, MASK_G);
}

int sample_ref_fillmask_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, mask_scores_rows);
}

int sample_ref_fillmask_backward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, mask_grad_rows);
}
