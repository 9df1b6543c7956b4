/* CPU reference of the ksmm operator: ksmm-tune's ksmm_ref_factor (sums in
 * double, threads over the batch), batch-size-first, on the weights and x
 * in the dtype's storage (fp16 and bf16 as their bits: copies made once at
 * setup, the inputs never change), y rounded to the run's precision. */
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/half.h"
#include "sample/sample_ksmm.h"
#include "sample/sample_ref.h"

struct ksmm_cpu {
	void *w, *x; /* in the dtype's storage */
	double *y;
};

static void ksmm_cpu_release(void *extra)
{
	struct ksmm_cpu *k = extra;
	if (!k)
		return;
	free(k->w);
	free(k->x);
	free(k->y);
	free(k);
}

enum ksmm_dtype sample_ksmm_dtype(enum sample_precision p)
{
	return p == SAMPLE_FP16 ? KSMM_F16 : p == SAMPLE_BF16 ? KSMM_BF16 : KSMM_F32;
}

/* A tensor's floats in the dtype's storage (malloc'd). */
static void *stored(const struct sample_tensor *t, enum sample_precision p)
{
	const float *v = t->data;
	if (p == SAMPLE_FP32) {
		float *out = malloc((size_t)t->count * sizeof *out);
		if (out)
			memcpy(out, v, (size_t)t->count * sizeof *out);
		return out;
	}
	uint16_t *out = malloc((size_t)t->count * sizeof *out);
	for (int64_t i = 0; out && i < t->count; i++)
		out[i] = p == SAMPLE_FP16 ? half_from_float(v[i]) : bf16_from_float(v[i]);
	return out;
}

int sample_ref_ksmm_prepare(struct sample_cpu_state *st, struct sp_err *err)
{
	struct ksmm_cpu *k = calloc(1, sizeof *k);
	if (!k)
		return sp_fail(err, "out of memory for the ksmm state");
	st->extra = k;
	st->release = ksmm_cpu_release;
	k->w = stored(&st->s.t[KS_W], st->s.p);
	k->x = stored(&st->s.t[KS_X], st->s.p);
	k->y = malloc((size_t)st->s.t[KS_Y].count * sizeof *k->y);
	if (!k->w || !k->x || !k->y)
		return sp_fail(err, "out of memory for the ksmm operands");
	return 0;
}

int sample_ref_ksmm_forward(void *state, struct sp_err *err)
{
	struct sample_cpu_state *st = state;
	struct ksmm_cpu *k = st->extra;
	const struct sample_dims *d = &st->s.d;
	const struct ksmm_pattern p = {d->m, d->n, d->k, d->seq};
	float *y = sample_ref_values(&st->s, KS_Y);
	ksmm_ref_factor(&p, KSMM_BS_FIRST, sample_ksmm_dtype(st->s.p), d->batch, k->w, k->x, k->y);
	for (int64_t i = 0; i < st->s.t[KS_Y].count; i++)
		y[i] = sample_round(st->s.p, k->y[i]);
	return 0;
}
