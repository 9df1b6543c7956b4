/* CPU references of LayerNorm (nn.LayerNorm, eps 1e-5) and RMSNorm (as
 * Megatron-LM / GPT-NeoX write it: x / (||x|| / sqrt(dim) + eps) * scale,
 * eps 1e-8) over the last dimension, forward and backward. The two differ in
 * their tensors: RMSNorm's bias and mean are empty. */
#include <math.h>
#include <stdlib.h>

#include "sample/sample_ref.h"

#define LN_EPS 1e-5
#define RMS_EPS 1e-8

static int is_rms(const struct sample_state *st)
{
	return st->t[NORM_MEAN].count == 0;
}

/* A row's statistics: mean and 1/sqrt(var + eps) (LayerNorm), or 0 and
 * 1/(rms + eps) (RMSNorm); rms_out gets the rms. */
static void row_stats(const struct sample_state *st, const float *x, double *mean, double *inv,
		      double *rms_out)
{
	int64_t n = st->d.cols;
	double sum = 0, sq = 0;
	if (is_rms(st)) {
		for (int64_t j = 0; j < n; j++)
			sq += (double)x[j] * x[j];
		*mean = 0;
		*rms_out = sqrt(sq / (double)n);
		*inv = 1.0 / (*rms_out + RMS_EPS);
		return;
	}
	for (int64_t j = 0; j < n; j++)
		sum += x[j];
	*mean = sum / (double)n;
	for (int64_t j = 0; j < n; j++)
		sq += (x[j] - *mean) * (x[j] - *mean);
	*inv = 1.0 / sqrt(sq / (double)n + LN_EPS);
	*rms_out = 0;
}

static void forward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	int64_t n = st->d.cols;
	const float *w = sample_ref_values(st, NORM_W), *b = sample_ref_values(st, NORM_B);
	for (int64_t r = lo; r < hi; r++) {
		const float *x = sample_ref_values(st, NORM_X) + r * n;
		float *y = sample_ref_values(st, NORM_Y) + r * n;
		double mean, inv, rms;
		row_stats(st, x, &mean, &inv, &rms);
		for (int64_t j = 0; j < n; j++)
			y[j] = sample_round(st->p, (x[j] - mean) * inv * w[j] + (b ? b[j] : 0.0));
		if (!is_rms(st))
			sample_ref_values(st, NORM_MEAN)[r] = (float)mean;
		sample_ref_values(st, NORM_RSTD)[r] = (float)inv;
	}
}

int sample_ref_norm_forward(void *state, struct sp_err *err)
{
	return sample_ref_state_rows(state, forward_rows);
}

/* Backward keeps each row's statistics in double for the column sums. */
struct norm_backward {
	const struct sample_state *st;
	double *mean, *inv;
};

/* dx, a row at a time. LayerNorm, g = dy w, xh = (x - mean) inv:
 *   dx = inv (g - mean(g) - xh mean(g xh)).
 * RMSNorm, y = w x inv with inv = 1/(rms + eps), rms = sqrt(sum x^2 / n):
 *   dx = inv g - x inv^2 sum(g x) / (n rms). */
static void backward_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct norm_backward *nb = ctx;
	const struct sample_state *st = nb->st;
	int64_t n = st->d.cols;
	const float *w = sample_ref_values(st, NORM_W);
	for (int64_t r = lo; r < hi; r++) {
		const float *x = sample_ref_values(st, NORM_X) + r * n;
		const float *dy = sample_ref_values(st, NORM_DY) + r * n;
		float *dx = sample_ref_values(st, NORM_DX) + r * n;
		double mean, inv, rms, sg = 0, sgx = 0;
		row_stats(st, x, &mean, &inv, &rms);
		nb->mean[r] = mean;
		nb->inv[r] = inv;
		for (int64_t j = 0; j < n; j++) {
			double g = (double)dy[j] * w[j];
			sg += g;
			sgx += g * (is_rms(st) ? x[j] : (x[j] - mean) * inv);
		}
		for (int64_t j = 0; j < n; j++) {
			double g = (double)dy[j] * w[j], v;
			if (is_rms(st))
				v = inv * g - (rms > 0 ? x[j] * inv * inv * sgx / ((double)n * rms) : 0);
			else
				v = inv * (g - sg / (double)n - (x[j] - mean) * inv * sgx / (double)n);
			dx[j] = sample_round(st->p, v);
		}
	}
}

/* dweight = sum over rows of dy xh, dbias = sum of dy: a column per row of work. */
static void backward_cols(const void *ctx, int64_t lo, int64_t hi)
{
	const struct norm_backward *nb = ctx;
	const struct sample_state *st = nb->st;
	int64_t n = st->d.cols;
	const float *x = sample_ref_values(st, NORM_X), *dy = sample_ref_values(st, NORM_DY);
	for (int64_t j = lo; j < hi; j++) {
		double dw = 0, db = 0;
		for (int64_t r = 0; r < st->d.rows; r++) {
			dw += (double)dy[r * n + j] * (x[r * n + j] - nb->mean[r]) * nb->inv[r];
			db += dy[r * n + j];
		}
		sample_ref_values(st, NORM_DW)[j] = sample_round(st->p, dw);
		if (!is_rms(st))
			sample_ref_values(st, NORM_DB)[j] = sample_round(st->p, db);
	}
}

int sample_ref_norm_backward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	struct norm_backward nb = {st, malloc((size_t)st->d.rows * sizeof(double)),
				   malloc((size_t)st->d.rows * sizeof(double))};
	if (!nb.mean || !nb.inv) {
		free(nb.mean);
		free(nb.inv);
		return sp_fail(err, "norm backward: out of memory for %lld rows' statistics",
			       (long long)st->d.rows);
	}
	sample_ref_for_rows(&nb, st->d.rows, backward_rows);
	sample_ref_for_rows(&nb, st->d.cols, backward_cols);
	free(nb.mean);
	free(nb.inv);
	return 0;
}
