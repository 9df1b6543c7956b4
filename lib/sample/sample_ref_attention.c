/* CPU reference of fused attention (flash_atten, flash_atten_causal), the
 * exact arithmetic in double that the GPU kernels approximate in fp32:
 *
 *   S = scale Q K^T (query i sees keys 0..i when causal), P = softmax(S)
 *   O = P V, logsumexp_i = log sum_j exp(S_ij)
 *   dV = P^T dO, dP = dO V^T, dS = P (dP - D) with D_i = sum_j P_ij dP_ij,
 *   dQ = scale dS K, dK = scale dS^T Q
 *
 * on tensors (b, l, h/mp, d) (sample_spec.h's ATT_*). Forward: a row a
 * query. Backward: a pass over the queries (logsumexp, D and dQ), then a pass
 * over the keys (dK, dV), each row owned by one thread. D is computed from
 * P and dP, not from the rounded output, so the reference is the exact
 * gradient. */
#include <math.h>
#include <stdlib.h>

#include "sample/sample_ref.h"

/* scale = 1/sqrt(head size), flash_attn_func's default softmax_scale. */
struct att {
	const struct sample_state *st;
	int causal;
	double scale;
	double *lse, *dsum; /* backward: per query row, in double */
};

/* Row r of the (b, h/mp, l) order: batch, head and position. */
struct pos {
	int64_t z, h, i;
};

static struct pos row_pos(const struct sample_state *st, int64_t r)
{
	struct pos p = {r / (st->d.heads * st->d.seq), r / st->d.seq % st->d.heads, r % st->d.seq};
	return p;
}

/* The head vector of position i (batch z, head h) in a (b, l, h/mp, d) tensor. */
static float *vec_at(const struct sample_state *st, int t, struct pos p, int64_t i)
{
	return sample_ref_values(st, t) + ((p.z * st->d.seq + i) * st->d.heads + p.h) * st->d.cols;
}

static double dot(const float *a, const float *b, int64_t n)
{
	double s = 0;
	for (int64_t k = 0; k < n; k++)
		s += (double)a[k] * b[k];
	return s;
}

/* Keys query i sees. */
static int64_t keys(const struct att *a, int64_t i)
{
	return a->causal ? i + 1 : a->st->d.seq;
}

/* The scaled logit of the query at p and key j. */
static double logit(const struct att *a, struct pos p, int64_t j)
{
	const struct sample_state *st = a->st;
	return a->scale * dot(vec_at(st, ATT_Q, p, p.i), vec_at(st, ATT_K, p, j), st->d.cols);
}

/* The row's logsumexp, with a running maximum (no buffer of the row). */
static double row_lse(const struct att *a, struct pos p)
{
	double max = -INFINITY, sum = 0;
	for (int64_t j = 0; j < keys(a, p.i); j++) {
		double s = logit(a, p, j);
		if (s > max) {
			sum = sum * exp(max - s) + 1;
			max = s;
		} else {
			sum += exp(s - max);
		}
	}
	return max + log(sum);
}

/* Head sizes are 64 or 128 (sample_check_attention): rows fit the stack. */
#define MAX_HEAD 128

/* acc[0..d) += w x[0..d). */
static void axpy(double *acc, double w, const float *x, int64_t d)
{
	for (int64_t k = 0; k < d; k++)
		acc[k] += w * x[k];
}

/* out[0..d) = scale acc[0..d), rounded to the state's precision. */
static void store(const struct sample_state *st, float *out, double scale, const double *acc)
{
	for (int64_t k = 0; k < st->d.cols; k++)
		out[k] = sample_round(st->p, scale * acc[k]);
}

static void forward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct att *a = ctx;
	const struct sample_state *st = a->st;
	int64_t d = st->d.cols;
	double o[MAX_HEAD];
	for (int64_t r = lo; r < hi; r++) {
		struct pos p = row_pos(st, r);
		double lse = row_lse(a, p);
		for (int64_t k = 0; k < d; k++)
			o[k] = 0;
		for (int64_t j = 0; j < keys(a, p.i); j++)
			axpy(o, exp(logit(a, p, j) - lse), vec_at(st, ATT_V, p, j), d);
		store(st, vec_at(st, ATT_O, p, p.i), 1.0, o);
		sample_ref_values(st, ATT_LSE)[r] = (float)lse;
	}
}

/* Query rows: logsumexp, D = sum_j P dP, dQ = scale sum_j dS_ij k_j. */
static void query_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct att *a = ctx;
	const struct sample_state *st = a->st;
	int64_t d = st->d.cols;
	double dq[MAX_HEAD];
	for (int64_t r = lo; r < hi; r++) {
		struct pos p = row_pos(st, r);
		const float *g = vec_at(st, ATT_DO, p, p.i);
		double lse = row_lse(a, p), dsum = 0;
		for (int64_t j = 0; j < keys(a, p.i); j++)
			dsum += exp(logit(a, p, j) - lse) * dot(g, vec_at(st, ATT_V, p, j), d);
		for (int64_t k = 0; k < d; k++)
			dq[k] = 0;
		for (int64_t j = 0; j < keys(a, p.i); j++) {
			double pj = exp(logit(a, p, j) - lse);
			double ds = pj * (dot(g, vec_at(st, ATT_V, p, j), d) - dsum);
			axpy(dq, ds, vec_at(st, ATT_K, p, j), d);
		}
		store(st, vec_at(st, ATT_DQ, p, p.i), a->scale, dq);
		a->lse[r] = lse;
		a->dsum[r] = dsum;
	}
}

/* Key rows: dV_j = sum_i P_ij dO_i, dK_j = scale sum_i dS_ij q_i over the
 * queries that see key j. */
static void key_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct att *a = ctx;
	const struct sample_state *st = a->st;
	int64_t d = st->d.cols;
	double dk[MAX_HEAD], dv[MAX_HEAD];
	for (int64_t r = lo; r < hi; r++) {
		struct pos p = row_pos(st, r);
		const float *kv = vec_at(st, ATT_K, p, p.i), *vv = vec_at(st, ATT_V, p, p.i);
		for (int64_t k = 0; k < d; k++)
			dk[k] = dv[k] = 0;
		for (int64_t i = a->causal ? p.i : 0; i < st->d.seq; i++) {
			int64_t qr = r - p.i + i; /* query i's row */
			const float *q = vec_at(st, ATT_Q, p, i), *g = vec_at(st, ATT_DO, p, i);
			double pij = exp(a->scale * dot(q, kv, d) - a->lse[qr]);
			axpy(dv, pij, g, d);
			axpy(dk, pij * (dot(g, vv, d) - a->dsum[qr]), q, d);
		}
		store(st, vec_at(st, ATT_DK, p, p.i), a->scale, dk);
		store(st, vec_at(st, ATT_DV, p, p.i), 1.0, dv);
	}
}

static struct att att_of(void *state, int causal)
{
	const struct sample_state *st = state;
	struct att a = {st, causal, 1.0 / sqrt((double)st->d.cols), NULL, NULL};
	return a;
}

static int forward(void *state, int causal)
{
	struct att a = att_of(state, causal);
	sample_ref_for_rows(&a, a.st->d.rows, forward_rows);
	return 0;
}

static int backward(void *state, int causal, struct sp_err *err)
{
	struct att a = att_of(state, causal);
	a.lse = malloc(2 * (size_t)a.st->d.rows * sizeof *a.lse);
	if (!a.lse)
		return sp_fail(err, "out of memory for attention's backward");
	a.dsum = a.lse + a.st->d.rows;
	sample_ref_for_rows(&a, a.st->d.rows, query_rows);
	sample_ref_for_rows(&a, a.st->d.rows, key_rows);
	free(a.lse);
	return 0;
}

int sample_ref_attention_forward(void *state, struct sp_err *err)
{
	return forward(state, 0);
}

int sample_ref_attention_backward(void *state, struct sp_err *err)
{
	return backward(state, 0, err);
}

int sample_ref_causal_attention_forward(void *state, struct sp_err *err)
{
	return forward(state, 1);
}

int sample_ref_causal_attention_backward(void *state, struct sp_err *err)
{
	return backward(state, 1, err);
}
