/* CPU reference of the optimizer steps: Adam (torch.optim.Adam's update, as
 * DeepSpeed's FusedAdam does it) over a stage's flat parameter buffer, in
 * double, at step 1:
 *   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
 *   p -= lr / (1 - b1) * m / (sqrt(v) / sqrt(1 - b2) + eps),
 * then the model's copy of p rounded to the run's precision. */
#include <math.h>

#include "sample/sample_ref.h"

/* Elements a chunk of the parallel loop takes. */
#define ADAM_CHUNK 4096

static void adam_rows(const void *ctx, int64_t lo, int64_t hi)
{
	const struct sample_state *st = ctx;
	float *p = sample_ref_values(st, ADAM_MASTER), *m = sample_ref_values(st, ADAM_M);
	float *v = sample_ref_values(st, ADAM_V), *w = sample_ref_values(st, ADAM_WEIGHT);
	const float *g = sample_ref_values(st, ADAM_GRAD);
	const double b1 = SAMPLE_ADAM_BETA1, b2 = SAMPLE_ADAM_BETA2;
	const int64_t n = st->d.cols, end = hi * ADAM_CHUNK < n ? hi * ADAM_CHUNK : n;
	for (int64_t i = lo * ADAM_CHUNK; i < end; i++) {
		double mi = b1 * m[i] + (1 - b1) * g[i];
		double vi = b2 * v[i] + (1 - b2) * (double)g[i] * g[i];
		double pi = p[i] - SAMPLE_ADAM_LR / (1 - b1) * mi /
					   (sqrt(vi) / sqrt(1 - b2) + SAMPLE_ADAM_EPS);
		m[i] = (float)mi;
		v[i] = (float)vi;
		p[i] = (float)pi;
		w[i] = sample_round(st->p, p[i]);
	}
}

int sample_ref_adam_forward(void *state, struct sp_err *err)
{
	const struct sample_state *st = state;
	sample_ref_for_rows(st, (st->d.cols + ADAM_CHUNK - 1) / ADAM_CHUNK, adam_rows);
	return 0;
}
