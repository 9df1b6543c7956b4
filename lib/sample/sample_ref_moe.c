/* CPU reference of the mixture-of-experts layer (sample_spec_train.c's
 * layout), a dropless top-k MoE as MegaBlocks / GPT-NeoX run it, with the
 * experts' FFN at width F:
 *   router:  logits = x Wr^T (T x E), probs = softmax(logits), the top_k
 *            experts of each token (ties to the lower index), gate = their
 *            probabilities (not renormalized: MegaBlocks' top-k router);
 *   permute: the pairs (token, choice) sorted by expert, stable in pair order
 *            (token-major), so both sides agree on the rows of H and Y;
 *   experts: H = Xp W1_e^T (n_e x F), Y = gelu(H) W2_e (n_e x dim);
 *   combine: out[t] = sum_j gate[t][j] Y[pos(t, j)].
 * Backward, from dout: dY = gate dout (per pair), dgate = dout . Y,
 * dlogits = probs (dprobs - sum_j gate_j dgate_j); dW2_e = gelu(H)^T dY,
 * dA = dY W2_e^T, dH = dA gelu'(H), dW1_e = dH^T Xp, dXp = dH W1_e;
 * dx = dlogits Wr + sum_j dXp[pos(t, j)], dWr = dlogits^T x.
 * Sums in double; what the GPU stores at the run's precision (H, gelu(H),
 * Y, out, dY, dA, dH, dXp, dlogits, the gradients) is rounded to it here too. */
#include <stdlib.h>
#include <string.h>

#include "sample/sample_ref.h"

struct moe {
	const struct sample_state *st;
	int64_t tokens, dim, experts, topk, ffn, pairs;
	const float *x, *wr, *w1, *w2;
	int32_t *pos;   /* pos[t topk + j]: the row of pair (t, j) */
	int32_t *token; /* token[row] */
	int32_t *start; /* start[e]: expert e's first row; start[E] = pairs */
	int32_t *fill;  /* the counting sort's next row per expert */
	float *dy, *dh, *dxp, *dlogits; /* backward's rows and dlogits (T x E) */
};

static float *val(const struct moe *m, int i)
{
	return sample_ref_values(m->st, i);
}

static int expert_of(const struct moe *m, int64_t row)
{
	const int32_t *e = m->st->t[MOE_EXPERT].data;
	const int32_t t = m->token[row];
	for (int64_t j = 0; j < m->topk; j++)
		if (m->pos[t * m->topk + j] == row)
			return e[t * m->topk + j];
	return -1; /* unreachable: every row is some pair's */
}

static void moe_close(struct moe *m)
{
	free(m->pos);
	free(m->token);
	free(m->start);
	free(m->fill);
	free(m->dy);
	free(m->dh);
	free(m->dxp);
	free(m->dlogits);
}

/* The rows' arrays (freed again when one cannot be had). */
static int moe_open(struct moe *m, const struct sample_state *st, int backward, struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	m->st = st;
	m->tokens = st->d.rows;
	m->dim = st->d.cols;
	m->experts = st->d.experts;
	m->topk = st->d.topk;
	m->ffn = st->d.n;
	m->pairs = st->d.m;
	m->x = val(m, MOE_X);
	m->wr = val(m, MOE_WR);
	m->w1 = val(m, MOE_W1);
	m->w2 = val(m, MOE_W2);
	m->pos = malloc((size_t)m->pairs * sizeof *m->pos);
	m->token = malloc((size_t)m->pairs * sizeof *m->token);
	m->start = calloc((size_t)m->experts + 1, sizeof *m->start);
	m->fill = malloc((size_t)m->experts * sizeof *m->fill);
	int ok = m->pos && m->token && m->start && m->fill;
	if (ok && backward) {
		m->dy = malloc((size_t)(m->pairs * m->dim) * sizeof(float));
		m->dxp = malloc((size_t)(m->pairs * m->dim) * sizeof(float));
		m->dh = malloc((size_t)(m->pairs * m->ffn) * sizeof(float));
		m->dlogits = malloc((size_t)(m->tokens * m->experts) * sizeof(float));
		ok = m->dy && m->dxp && m->dh && m->dlogits;
	}
	if (!ok) {
		moe_close(m);
		return sp_fail(err, "out of memory for the MoE reference's rows");
	}
	return 0;
}

/* The permutation from the chosen experts: a stable counting sort. */
static void moe_permute(struct moe *m)
{
	const int32_t *e = m->st->t[MOE_EXPERT].data;
	memset(m->start, 0, (size_t)(m->experts + 1) * sizeof *m->start);
	for (int64_t p = 0; p < m->pairs; p++)
		m->start[e[p] + 1]++;
	for (int64_t i = 0; i < m->experts; i++) {
		m->start[i + 1] += m->start[i];
		m->fill[i] = m->start[i];
	}
	for (int64_t p = 0; p < m->pairs; p++) {
		m->pos[p] = m->fill[e[p]]++;
		m->token[m->pos[p]] = (int32_t)(p / m->topk);
	}
}


/* Router: the logits (fp32, as the GPU's GEMM stores them), their softmax,
 * then the top_k, per token; the probabilities' row holds the logits first. */
static void route_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	float *gate = val(m, MOE_GATE);
	int32_t *expert = m->st->t[MOE_EXPERT].data;
	for (int64_t t = lo; t < hi; t++) {
		const float *x = m->x + t * m->dim;
		float *p = val(m, MOE_PROBS) + t * m->experts;
		double top = -INFINITY, sum = 0;
		for (int64_t e = 0; e < m->experts; e++) {
			double acc = 0;
			for (int64_t d = 0; d < m->dim; d++)
				acc += (double)x[d] * m->wr[e * m->dim + d];
			p[e] = (float)acc;
			top = p[e] > top ? p[e] : top;
		}
		for (int64_t e = 0; e < m->experts; e++)
			sum += exp(p[e] - top);
		for (int64_t e = 0; e < m->experts; e++)
			p[e] = (float)(exp(p[e] - top) / sum);
		/* Top-k on the stored probabilities: the largest not yet taken. */
		for (int64_t j = 0; j < m->topk; j++) {
			int64_t best = -1;
			for (int64_t e = 0; e < m->experts; e++) {
				int taken = 0;
				for (int64_t i = 0; i < j; i++)
					taken |= expert[t * m->topk + i] == e;
				if (!taken && (best < 0 || p[e] > p[best]))
					best = e;
			}
			expert[t * m->topk + j] = (int32_t)best;
			gate[t * m->topk + j] = p[best];
		}
	}
}

/* H and Y for rows [lo, hi). */
static void expert_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	const enum sample_precision p = m->st->p;
	float *h = val(m, MOE_H), *y = val(m, MOE_Y);
	for (int64_t r = lo; r < hi; r++) {
		const int64_t e = expert_of(m, r);
		const float *x = m->x + m->token[r] * m->dim;
		float *hr = h + r * m->ffn;
		for (int64_t f = 0; f < m->ffn; f++) {
			const float *w = m->w1 + (e * m->ffn + f) * m->dim;
			double acc = 0;
			for (int64_t d = 0; d < m->dim; d++)
				acc += (double)x[d] * w[d];
			hr[f] = sample_round(p, acc);
		}
		for (int64_t d = 0; d < m->dim; d++) {
			double acc = 0;
			for (int64_t f = 0; f < m->ffn; f++)
				acc += (double)sample_round(p, sample_ref_gelu(hr[f])) *
				       m->w2[(e * m->ffn + f) * m->dim + d];
			y[r * m->dim + d] = sample_round(p, acc);
		}
	}
}

static void combine_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	const float *gate = val(m, MOE_GATE), *y = val(m, MOE_Y);
	float *out = val(m, MOE_OUT);
	for (int64_t t = lo; t < hi; t++)
		for (int64_t d = 0; d < m->dim; d++) {
			double acc = 0;
			for (int64_t j = 0; j < m->topk; j++)
				acc += (double)gate[t * m->topk + j] *
				       y[(int64_t)m->pos[t * m->topk + j] * m->dim + d];
			out[t * m->dim + d] = sample_round(m->st->p, acc);
		}
}

int sample_ref_moe_forward(void *state, struct sp_err *err)
{
	struct moe m;
	if (moe_open(&m, state, 0, err))
		return -1;
	sample_ref_for_rows(&m, m.tokens, route_rows);
	moe_permute(&m);
	sample_ref_for_rows(&m, m.pairs, expert_rows);
	sample_ref_for_rows(&m, m.tokens, combine_rows);
	moe_close(&m);
	return 0;
}

/* dgate, dlogits and dY, per token. */
static void route_back_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	const enum sample_precision p = m->st->p;
	const float *gate = val(m, MOE_GATE), *y = val(m, MOE_Y), *dout = val(m, MOE_DOUT);
	const float *probs = val(m, MOE_PROBS);
	const int32_t *expert = m->st->t[MOE_EXPERT].data;
	for (int64_t t = lo; t < hi; t++) {
		const float *g = dout + t * m->dim;
		double s = 0;
		float *dl = m->dlogits + t * m->experts;
		for (int64_t e = 0; e < m->experts; e++)
			dl[e] = 0; /* dprobs first, then dlogits in place */
		for (int64_t j = 0; j < m->topk; j++) {
			const int64_t pair = t * m->topk + j, row = m->pos[pair];
			double dgate = 0;
			for (int64_t d = 0; d < m->dim; d++) {
				dgate += (double)g[d] * y[row * m->dim + d];
				m->dy[row * m->dim + d] = sample_round(p, (double)gate[pair] * g[d]);
			}
			dl[expert[pair]] = (float)dgate;
			s += (double)gate[pair] * dgate;
		}
		for (int64_t e = 0; e < m->experts; e++)
			dl[e] = sample_round(p, (double)probs[t * m->experts + e] * (dl[e] - s));
	}
}

/* dA = dY W2_e^T, then dH = dA gelu'(H), per row. */
static void hidden_back_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	const enum sample_precision p = m->st->p;
	const float *h = val(m, MOE_H);
	for (int64_t r = lo; r < hi; r++) {
		const int64_t e = expert_of(m, r);
		for (int64_t f = 0; f < m->ffn; f++) {
			const float *w = m->w2 + (e * m->ffn + f) * m->dim;
			double acc = 0;
			for (int64_t d = 0; d < m->dim; d++)
				acc += (double)m->dy[r * m->dim + d] * w[d];
			const float da = sample_round(p, acc), hv = h[r * m->ffn + f];
			m->dh[r * m->ffn + f] = sample_round(p, da * sample_ref_gelu_grad(hv));
		}
	}
}

/* dW1 and dW2, a row (e, f) of each at a time. */
static void weight_back_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	const enum sample_precision p = m->st->p;
	const float *h = val(m, MOE_H);
	float *dw1 = val(m, MOE_DW1), *dw2 = val(m, MOE_DW2);
	for (int64_t ef = lo; ef < hi; ef++) {
		const int64_t e = ef / m->ffn, f = ef % m->ffn;
		for (int64_t d = 0; d < m->dim; d++) {
			double a1 = 0, a2 = 0;
			for (int64_t r = m->start[e]; r < m->start[e + 1]; r++) {
				const double hv = h[r * m->ffn + f];
				a2 += (double)sample_round(p, sample_ref_gelu(hv)) * m->dy[r * m->dim + d];
				a1 += (double)m->dh[r * m->ffn + f] * m->x[m->token[r] * m->dim + d];
			}
			dw1[ef * m->dim + d] = sample_round(p, a1);
			dw2[ef * m->dim + d] = sample_round(p, a2);
		}
	}
}

static void input_back_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	for (int64_t r = lo; r < hi; r++) {
		const int64_t e = expert_of(m, r);
		for (int64_t d = 0; d < m->dim; d++) {
			double acc = 0;
			for (int64_t f = 0; f < m->ffn; f++)
				acc += (double)m->dh[r * m->ffn + f] *
				       m->w1[(e * m->ffn + f) * m->dim + d];
			m->dxp[r * m->dim + d] = sample_round(m->st->p, acc);
		}
	}
}

static void dx_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	float *dx = val(m, MOE_DX);
	for (int64_t t = lo; t < hi; t++)
		for (int64_t d = 0; d < m->dim; d++) {
			double acc = 0;
			for (int64_t e = 0; e < m->experts; e++)
				acc += (double)m->dlogits[t * m->experts + e] * m->wr[e * m->dim + d];
			for (int64_t j = 0; j < m->topk; j++)
				acc += m->dxp[(int64_t)m->pos[t * m->topk + j] * m->dim + d];
			dx[t * m->dim + d] = sample_round(m->st->p, acc);
		}
}

static void router_weight_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct moe *m = ctx;
	float *dwr = val(m, MOE_DWR);
	for (int64_t e = lo; e < hi; e++)
		for (int64_t d = 0; d < m->dim; d++) {
			double acc = 0;
			for (int64_t t = 0; t < m->tokens; t++)
				acc += (double)m->dlogits[t * m->experts + e] * m->x[t * m->dim + d];
			dwr[e * m->dim + d] = sample_round(m->st->p, acc);
		}
}

int sample_ref_moe_backward(void *state, struct sp_err *err)
{
	struct moe m;
	if (moe_open(&m, state, 1, err))
		return -1;
	moe_permute(&m);
	sample_ref_for_rows(&m, m.tokens, route_back_rows);
	sample_ref_for_rows(&m, m.pairs, hidden_back_rows);
	sample_ref_for_rows(&m, m.experts * m.ffn, weight_back_rows);
	sample_ref_for_rows(&m, m.pairs, input_back_rows);
	sample_ref_for_rows(&m, m.tokens, dx_rows);
	sample_ref_for_rows(&m, m.experts, router_weight_rows);
	moe_close(&m);
	return 0;
}
