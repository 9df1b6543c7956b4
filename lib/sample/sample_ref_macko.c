/* CPU reference of macko_spmv: lib/macko's macko_spmv_ref (sums in double)
 * on the operator's matrix (sample_macko_matrix), alpha 1 and beta 0. x is
 * rounded to fp16 at setup, as the GPU's product reads it. */
#include <stdlib.h>

#include "macko/macko.h"
#include "sample/sample_ref.h"

struct macko_cpu {
	struct macko m;
	double *y; /* vectors x rows */
};

static void macko_cpu_release(void *extra)
{
	struct macko_cpu *c = extra;
	if (!c)
		return;
	macko_free(&c->m);
	free(c->y);
	free(c);
}

int sample_ref_macko_prepare(struct sample_cpu_state *st, struct sp_err *err)
{
	struct macko_cpu *c = calloc(1, sizeof *c);
	if (!c)
		return sp_fail(err, "out of memory for the MACKO state");
	st->extra = c;
	st->release = macko_cpu_release;
	float *x = sample_ref_values(&st->s, MACKO_X);
	for (int64_t i = 0; i < st->s.t[MACKO_X].count; i++)
		x[i] = sample_round(SAMPLE_FP16, x[i]);
	c->y = malloc((size_t)st->s.t[MACKO_Y].count * sizeof *c->y);
	if (!c->y)
		return sp_fail(err, "out of memory for the product");
	return sample_macko_matrix(&st->s, &c->m, err);
}

int sample_ref_macko_forward(void *state, struct sp_err *err)
{
	struct sample_cpu_state *st = state;
	struct macko_cpu *c = st->extra;
	float *y = sample_ref_values(&st->s, MACKO_Y);
	macko_spmv_ref(&c->m, sample_ref_values(&st->s, MACKO_X), (int)st->s.d.k, 1, 0, NULL, c->y);
	for (int64_t i = 0; i < st->s.t[MACKO_Y].count; i++)
		y[i] = (float)c->y[i];
	return 0;
}
