/* kernel-sample's GPU operators in builds without nvcc: there are none, so
 * the sweep runs only with --device cpu. */
#ifndef SPKIT_CUDA
#include "sample/sample_gpu.h"
#include "sample/sample_op.h"

const struct sample_op *sample_gpu_op(const char *name)
{
	return NULL;
}

int sample_gpu_tensor_read(const void *state, int i, void *host, struct sp_err *err)
{
	return sp_fail(err, "kernel-sample: spkit was built without CUDA");
}

int sample_gpu_attention_use(enum sample_attention which, enum sample_attention *used,
			     struct sp_err *err)
{
	return sp_fail(err, "spkit was built without CUDA");
}

void sample_gpu_ksmm_table(const struct ksmm_table *t)
{
}
#endif
