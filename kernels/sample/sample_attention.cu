/* kernel-sample's fused attention operators on the GPU (flash_atten,
 * flash_atten_causal): the tensors of sample_spec.h's ATT_* layout handed
 * to one of the two backends of kernels/sample/attention.h, cuDNN's or ours,
 * chosen once for the process (sample_gpu_attention_use). A cuDNN state
 * holds its plan (the finalized graphs and their workspace), made in
 * prepare, outside the timed calls. */
#include <math.h>
#include <stdlib.h>

#include "sample/sample_gpu.cuh"
extern "C" {
#include "sample/attention.h"
#include "sample/sample_gpu.h"
}

/* The process's choice (AUTO: not made yet), and cuDNN once opened. */
static enum sample_attention chosen = SAMPLE_ATTENTION_AUTO;
static struct attention_cudnn *cudnn;

extern "C" int sample_gpu_attention_use(enum sample_attention which, enum sample_attention *used,
					struct sp_err *err)
{
	struct sp_err why;
	if (which == SAMPLE_ATTENTION_OWN) {
		chosen = SAMPLE_ATTENTION_OWN;
	} else if (cudnn || !attention_cudnn_open(NULL, &cudnn, &why)) {
		chosen = SAMPLE_ATTENTION_CUDNN;
	} else if (which == SAMPLE_ATTENTION_CUDNN) {
		*err = why;
		return -1;
	} else {
		chosen = SAMPLE_ATTENTION_OWN; /* auto: cuDNN did not load */
	}
	if (used)
		*used = chosen;
	return 0;
}

struct attention_state {
	struct attention_dims dims;
	struct attention_cudnn_plan *plan; /* NULL: our kernel */
	void *workspace;                   /* our kernel's backward workspace */
};

static void attention_release(void *extra)
{
	struct attention_state *a = (struct attention_state *)extra;
	if (a && a->plan)
		attention_cudnn_plan_free(a->plan);
	if (a)
		gpu_free(a->workspace);
	free(a);
}

static int prepare(struct sample_gpu_state *st, int causal, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	if (st->s.p == SAMPLE_FP32)
		return sp_fail(err, "fused attention runs in fp16 or bf16 only");
	if (chosen == SAMPLE_ATTENTION_AUTO && sample_gpu_attention_use(chosen, NULL, err))
		return -1;
	struct attention_state *a = (struct attention_state *)calloc(1, sizeof *a);
	if (!a)
		return sp_fail(err, "out of memory for an attention state");
	a->dims = (struct attention_dims){d->batch, d->seq, d->heads, d->cols, causal,
					  st->s.p == SAMPLE_BF16, (float)(1.0 / sqrt((double)d->cols))};
	st->extra = a;
	st->release = attention_release;
	if (chosen == SAMPLE_ATTENTION_CUDNN)
		return attention_cudnn_plan(cudnn, &a->dims, &a->plan, err);
	return gpu_malloc(&a->workspace, attention_own_workspace(&a->dims),
			  "attention's backward workspace", err);
}

int sample_gpu_attention_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	return prepare(st, 0, err);
}

int sample_gpu_causal_attention_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	return prepare(st, 1, err);
}

static int forward(void *state, struct sp_err *err)
{
	const struct sample_gpu_state *st = (const struct sample_gpu_state *)state;
	const struct attention_state *a = (const struct attention_state *)st->extra;
	const void *q = st->s.t[ATT_Q].data, *k = st->s.t[ATT_K].data, *v = st->s.t[ATT_V].data;
	void *o = st->s.t[ATT_O].data;
	float *lse = sample_dev<float>(st, ATT_LSE);
	if (a->plan)
		return attention_cudnn_forward(a->plan, q, k, v, o, lse, err);
	return attention_own_forward(&a->dims, q, k, v, o, lse, err);
}

static int backward(void *state, struct sp_err *err)
{
	const struct sample_gpu_state *st = (const struct sample_gpu_state *)state;
	const struct attention_state *a = (const struct attention_state *)st->extra;
	const struct sample_tensor *t = st->s.t;
	const float *lse = sample_dev<float>(st, ATT_LSE);
	if (a->plan)
		return attention_cudnn_backward(a->plan, t[ATT_Q].data, t[ATT_K].data,
						t[ATT_V].data, t[ATT_O].data, t[ATT_DO].data, lse,
						t[ATT_DQ].data, t[ATT_DK].data, t[ATT_DV].data, err);
	return attention_own_backward(&a->dims, t[ATT_Q].data, t[ATT_K].data, t[ATT_V].data,
				      t[ATT_O].data, t[ATT_DO].data, lse, t[ATT_DQ].data,
				      t[ATT_DK].data, t[ATT_DV].data, a->workspace, err);
}

/* The mask is in the state's dims: both families run the same calls. */
int sample_gpu_attention_forward(void *state, struct sp_err *err)
{
	return forward(state, err);
}

int sample_gpu_attention_backward(void *state, struct sp_err *err)
{
	return backward(state, err);
}

int sample_gpu_causal_attention_forward(void *state, struct sp_err *err)
{
	return forward(state, err);
}

int sample_gpu_causal_attention_backward(void *state, struct sp_err *err)
{
	return backward(state, err);
}
