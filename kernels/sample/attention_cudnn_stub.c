/* Stand-in for kernels/sample/attention_cudnn.c (cuDNN's fused attention,
 * written beside this branch) so that this branch links: cuDNN never
 * opens, so `auto` takes our kernel and `--attention cudnn` is refused with
 * the reason. Delete this file when attention_cudnn.c is merged. */
#ifdef SPKIT_CUDA
#include "sample/attention.h"

int attention_cudnn_open(const char *library, struct attention_cudnn **out, struct sp_err *err)
{
	*out = NULL;
	return sp_fail(err, "%s: cuDNN's fused attention is not in this build",
		       library ? library : "libcudnn.so.9");
}

void attention_cudnn_close(struct attention_cudnn *c)
{
}

int attention_cudnn_plan(struct attention_cudnn *c, const struct attention_dims *d,
			 struct attention_cudnn_plan **out, struct sp_err *err)
{
	return sp_fail(err, "cuDNN's fused attention is not in this build");
}

void attention_cudnn_plan_free(struct attention_cudnn_plan *p)
{
}

int attention_cudnn_forward(struct attention_cudnn_plan *p, const void *q, const void *k,
			    const void *v, void *o, float *stats, struct sp_err *err)
{
	return sp_fail(err, "cuDNN's fused attention is not in this build");
}

int attention_cudnn_backward(struct attention_cudnn_plan *p, const void *q, const void *k,
			     const void *v, const void *o, const void *dout, const float *stats,
			     void *dq, void *dk, void *dv, struct sp_err *err)
{
	return sp_fail(err, "cuDNN's fused attention is not in this build");
}
#endif
