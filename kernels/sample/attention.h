/* Fused scaled-dot-product attention on the GPU, kernel-sample's
 * flash_atten operator: two backends behind one problem description.
 *
 *   O = softmax(scale Q K^T, causal mask if asked) V
 *
 * Layout, every tensor contiguous on the device: Q, K, V, O, dO, dQ, dK, dV
 * are (batch, seq, heads, head_dim), the layout of flash_attn_func and of
 * Megatron-LM's sequence-first activations after the QKV split; their
 * elements are fp16 or bf16, accumulated in fp32. stats is (batch, heads,
 * seq) fp32: the natural log of each row's softmax denominator over the
 * scaled logits (logsumexp), written by the forward and read by the backward.
 * Causal: query i sees keys 0..i (seq_q = seq_k).
 *
 * Backends: attention_own.cu (ours) and attention_cudnn.c (cuDNN's fused
 * attention through its backend API, libcudnn.so.9 loaded at run time). */
#ifndef SPKIT_ATTENTION_H
#define SPKIT_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct attention_dims {
	int64_t batch, seq, heads, head_dim;
	int causal;
	int bf16;    /* 0: fp16 */
	float scale; /* usually 1/sqrt(head_dim) */
};

/* Our kernel. Pointers are device memory; work is queued on the default
 * stream. -1 with the reason for a head_dim it has no tiles for. */
int attention_own_forward(const struct attention_dims *d, const void *q, const void *k,
			  const void *v, void *o, float *stats, struct sp_err *err);
/* The backward needs a workspace of attention_own_workspace(d) bytes of
 * device memory (D and the fp32 dQ accumulator), which the caller keeps
 * between calls, as callers of cuDNN and FlashAttention keep theirs, so a
 * timed call allocates nothing and calls of different threads share none. */
size_t attention_own_workspace(const struct attention_dims *d);
int attention_own_backward(const struct attention_dims *d, const void *q, const void *k,
			   const void *v, const void *o, const void *dout, const float *stats,
			   void *dq, void *dk, void *dv, void *workspace, struct sp_err *err);

/* cuDNN, loaded by path (NULL: "libcudnn.so.9" through the loader's search,
 * LD_LIBRARY_PATH included). Open fails with one line when the library is
 * absent, of a major version other than 9, or lacks what fused attention
 * needs. A plan holds the finalized forward and backward graphs of one
 * problem and their workspace. */
struct attention_cudnn;
struct attention_cudnn_plan;
int attention_cudnn_open(const char *library, struct attention_cudnn **out, struct sp_err *err);
void attention_cudnn_close(struct attention_cudnn *c);
int attention_cudnn_plan(struct attention_cudnn *c, const struct attention_dims *d,
			 struct attention_cudnn_plan **out, struct sp_err *err);
void attention_cudnn_plan_free(struct attention_cudnn_plan *p);
int attention_cudnn_forward(struct attention_cudnn_plan *p, const void *q, const void *k,
			    const void *v, void *o, float *stats, struct sp_err *err);
int attention_cudnn_backward(struct attention_cudnn_plan *p, const void *q, const void *k,
			     const void *v, const void *o, const void *dout, const float *stats,
			     void *dq, void *dk, void *dv, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
