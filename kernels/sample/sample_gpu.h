/* kernel-sample's GPU operators, what the tests see beyond the table
 * (sample_gpu_op in sample/sample_op.h): a GPU state's tensor read back as
 * the CPU reference holds it. kernels/sample/sample_gpu_none.c answers in
 * builds without CUDA. */
#ifndef SPKIT_SAMPLE_GPU_H
#define SPKIT_SAMPLE_GPU_H

#include "core/err.h"
#include "sample/sample_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor i of a GPU state (from a GPU op's setup) into host memory: floats
 * for values (fp16 and bf16 widened exactly), int32 for ids. Synchronizes,
 * so a fault in an earlier kernel surfaces here. */
int sample_gpu_tensor_read(const void *state, int i, void *host, struct sp_err *err);

/* Which fused attention the flash_atten operators run on the GPU
 * (kernels/sample/attention.h): cuDNN's or ours. */
enum sample_attention { SAMPLE_ATTENTION_AUTO, SAMPLE_ATTENTION_CUDNN, SAMPLE_ATTENTION_OWN };
/* Choose it for the states set up from now on: cudnn opens libcudnn.so.9
 * now (-1 with the reason when it cannot load); auto takes cuDNN when it
 * loads, else ours (what a flash_atten setup does when nothing was chosen);
 * *used (when not NULL) gets the one taken. */
int sample_gpu_attention_use(enum sample_attention which, enum sample_attention *used,
			     struct sp_err *err);
/* The ksmm operator's configurations from this best table (ksmm-tune
 * best's, lib/ksmm/ksmm_best.h), kept by the caller while operators are set
 * up; NULL: ksmm-tune's default heuristic. Nothing without CUDA. */
struct ksmm_table;
void sample_gpu_ksmm_table(const struct ksmm_table *t);

#ifdef __cplusplus
}
#endif

#endif
