/* The GPU table of kernel-sample's operators: every operator of
 * SAMPLE_OP_LIST (sample/sample_spec.h) with its family's kernels, the same
 * names, columns and checks as the CPU table. */
#include <string.h>

#include "sample/sample_gpu.cuh"

/* Families with nothing to set up beyond their tensors. */
#define sample_gpu_gelu_prepare NULL
#define sample_gpu_rope_prepare NULL
#define sample_gpu_res_add_prepare NULL
#define sample_gpu_xent_prepare NULL
#define sample_gpu_causal_softmax_prepare sample_gpu_softmax_prepare
#define sample_gpu_fillmask_prepare NULL
#define sample_gpu_adam_prepare NULL
/* The residual sum has no backward (its gradient passes through); the
 * optimizer step, the SpMV and the ksmm factor (an inference kernel) are
 * one call. */
#define sample_gpu_res_add_backward NULL
#define sample_gpu_adam_backward NULL
#define sample_gpu_macko_backward NULL
#define sample_gpu_ksmm_backward NULL

#define GPU_SETUP(id, ncol, cols, check, family)                                            \
	static int setup_##id(const int64_t *shape, enum sample_precision p, uint64_t seed,   \
			      void **state, struct sp_err *err)                                 \
	{                                                                                     \
		return sample_gpu_setup(sample_layout_##id, sample_gpu_##family##_prepare, shape, \
					p, seed, state, err);                                 \
	}
SAMPLE_OP_LIST(GPU_SETUP)
#undef GPU_SETUP

#define GPU_ENTRY(id, ncol, cols, check, family)                                               \
	{#id, ncol, cols, check, setup_##id, sample_gpu_##family##_forward,                     \
	 sample_gpu_##family##_backward, sample_gpu_teardown},
static const struct sample_op gpu_ops[] = {SAMPLE_OP_LIST(GPU_ENTRY)};
#undef GPU_ENTRY

extern "C" const struct sample_op *sample_gpu_op(const char *name)
{
	for (size_t i = 0; i < sizeof gpu_ops / sizeof gpu_ops[0]; i++)
		if (strcmp(gpu_ops[i].name, name) == 0)
			return &gpu_ops[i];
	return NULL;
}
