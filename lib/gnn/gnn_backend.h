/* The operations a GNN training step is made of, on the memory of one
 * backend. The model and the training loop (lib/gnn/gnn_model.c,
 * lib/gnn/gnn_train.c) are written once against this table; lib/gnn/gnn_cpu.c
 * implements it on the host (the reference, and the path without a GPU),
 * kernels/gnn/gnn_gpu*.cu on the GPU (cuBLAS, the MaxK kernels, cuSPARSE).
 *
 * Conventions: matrices are row-major float32; a pointer argument points
 * into the backend's memory (device memory for the GPU) unless its name
 * ends in _host. Every operation returns 0, or -1 with err set (the GPU
 * backend reports CUDA/cuBLAS/cuSPARSE failures with their message).
 * Operations may run asynchronously; to_host and sync wait. Counts are
 * element counts. Where an operation scales its output's old contents by
 * beta (gemm, col_sum, axpby, dot), beta = 0 ignores them, as BLAS does:
 * a NaN there does not survive. */
#ifndef SPKIT_GNN_BACKEND_H
#define SPKIT_GNN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"
#include "maxk/maxk_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The aggregation graph in the backend's form: the CSR with its edge
 * values (enum edge_norm), the .warp4 work items and whatever the backend
 * caches (its transpose, cuSPARSE descriptors). */
struct gnn_graph;

struct gnn_backend {
	const char *name; /* "cpu", "cuda" */
	void *impl;
	void (*destroy)(struct gnn_backend *b);

	/* Memory. alloc returns zeroed memory. */
	void *(*alloc)(struct gnn_backend *b, size_t bytes, struct sp_err *err);
	void (*release)(struct gnn_backend *b, void *p);
	int (*to_device)(struct gnn_backend *b, void *dst, const void *src_host, size_t bytes,
			 struct sp_err *err);
	int (*to_host)(struct gnn_backend *b, void *dst_host, const void *src, size_t bytes,
		       struct sp_err *err);
	int (*copy)(struct gnn_backend *b, void *dst, const void *src, size_t bytes,
		    struct sp_err *err);
	/* Waits for queued work (for timing with --profile-kernels). */
	int (*sync)(struct gnn_backend *b, struct sp_err *err);
	/* The most memory this backend has held at once, in bytes (for the GPU,
	 * the device memory in use including library workspaces). */
	size_t (*peak_memory)(struct gnn_backend *b);

	/* g (CSR, nrows x ncols) with edge values: g's own when it has them,
	 * else those of the given normalisation (nrows x ncols rectangular: a
	 * rank's edges to the rows other ranks hold, lib/gnn/gnn_part.h);
	 * warp4 (records x 4 int32, maxk-genmeta's work items of g) may be
	 * NULL for backends that do not use them. The backend keeps its own
	 * copy: g may be freed afterwards. */
	int (*graph_create)(struct gnn_backend *b, const struct csr *g, enum edge_norm norm,
			    const int32_t *warp4_host, int64_t records, struct gnn_graph **out,
			    struct sp_err *err);
	void (*graph_free)(struct gnn_backend *b, struct gnn_graph *g);

	/* Dense algebra. C (m x n) = alpha op(A) op(B) + beta C, op(X) = X or
	 * X^T as ta/tb say; A is m x k after op, B k x n after op. The GPU
	 * uses TF32 when tf32 is set. */
	int (*gemm)(struct gnn_backend *b, int ta, int tb, int64_t m, int64_t n, int64_t k,
		    float alpha, const float *A, const float *B, float beta, float *C,
		    struct sp_err *err);
	/* y[i][j] += bias[j] (y m x n). */
	int (*bias_add)(struct gnn_backend *b, float *y, const float *bias, int64_t m, int64_t n,
			struct sp_err *err);
	/* db[j] = beta db[j] + sum_i dy[i][j] (bias gradients). */
	int (*col_sum)(struct gnn_backend *b, const float *dy, int64_t m, int64_t n, float beta,
		       float *db, struct sp_err *err);
	/* y = alpha x + beta y. */
	int (*axpby)(struct gnn_backend *b, float alpha, const float *x, float beta, float *y,
		     int64_t count, struct sp_err *err);
	/* y += (1 + *eps) x, eps a 1-element buffer (GIN's learnable epsilon). */
	int (*axpy_eps)(struct gnn_backend *b, const float *eps, const float *x, float *y,
			int64_t count, struct sp_err *err);
	/* *out = beta *out + sum x[i] y[i] (out a 1-element buffer; the gradient
	 * of GIN's epsilon). */
	int (*dot)(struct gnn_backend *b, const float *x, const float *y, int64_t count, float beta,
		   float *out, struct sp_err *err);

	/* Nonlinearities. relu: y = max(x, 0), a NaN staying NaN (y may be x).
	 * relu_backward: dx = dy where y > 0, else 0 (dx may be dy). */
	int (*relu)(struct gnn_backend *b, const float *x, float *y, int64_t count,
		    struct sp_err *err);
	int (*relu_backward)(struct gnn_backend *b, const float *y, const float *dy, float *dx,
			     int64_t count, struct sp_err *err);
	/* Inverted dropout with rate p in [0, 1): y[i] = x[i] / (1 - p) if
	 * gnn_dropout_keep(seed, i, p), else 0; i is the flat element index,
	 * and p = 0 copies. Its backward is the same call on dy with the same
	 * seed. y may be x. */
	int (*dropout)(struct gnn_backend *b, const float *x, float *y, int64_t count, float p,
		       uint64_t seed, struct sp_err *err);
	/* LayerNorm over rows of n >= 1 (epsilon 1e-5, biased variance, as
	 * PyTorch): y = (x - mean) * rstd * gamma + beta, rstd =
	 * 1 / sqrt(var + 1e-5); mean and rstd (m each) are saved for the
	 * backward, which writes dx and overwrites dgamma/dbeta. */
	int (*layernorm)(struct gnn_backend *b, const float *x, const float *gamma,
			 const float *beta, int64_t m, int64_t n, float *y, float *mean, float *rstd,
			 struct sp_err *err);
	int (*layernorm_backward)(struct gnn_backend *b, const float *x, const float *dy,
				  const float *gamma, const float *mean, const float *rstd,
				  int64_t m, int64_t n, float *dx, float *dgamma, float *dbeta,
				  struct sp_err *err);

	/* MaxK (lib/maxk/maxk_ref.h says exactly what each computes): topk is
	 * maxk_topk_ref into values/index (m x k; k in 1..h, h at most
	 * MAXK_MAX_WIDTH), scatter is cbsr_to_dense, gather is
	 * maxk_backward_ref (out[i][t] = dense[i][index[i][t]]). The index
	 * buffer (room for m x k uint16) is the backend's own: topk fills it
	 * and only the backend's MaxK operations read it. The CPU keeps 16-bit
	 * columns; the GPU 8-bit ones when h <= 256 (kernels/maxk/maxk_gpu.h). */
	int (*topk)(struct gnn_backend *b, const float *x, int64_t m, int h, int k, float *values,
		    uint16_t *index, struct sp_err *err);
	int (*scatter)(struct gnn_backend *b, const float *values, const uint16_t *index,
		       int64_t m, int h, int k, float *dense, struct sp_err *err);
	int (*gather)(struct gnn_backend *b, const float *dense, const uint16_t *index, int64_t m,
		      int h, int k, float *out, struct sp_err *err);

	/* Aggregation over the graph. y (nrows x h) = A x (x ncols x h); its
	 * backward dx (ncols x h) = A^T dy. */
	int (*aggregate)(struct gnn_backend *b, const struct gnn_graph *g, const float *x, int h,
			 float *y, struct sp_err *err);
	int (*aggregate_backward)(struct gnn_backend *b, const struct gnn_graph *g, const float *dy,
				  int h, float *dx, struct sp_err *err);
	/* The same with x in CBSR form (values/index ncols x k): the MaxK
	 * forward SpGEMM, and the backward SSpMM giving the gradient of the
	 * kept values (ncols x k). */
	int (*aggregate_maxk)(struct gnn_backend *b, const struct gnn_graph *g, const float *values,
			      const uint16_t *index, int h, int k, float *y, struct sp_err *err);
	int (*aggregate_maxk_backward)(struct gnn_backend *b, const struct gnn_graph *g,
				       const uint16_t *index, int h, int k, const float *dy,
				       float *dvalues, struct sp_err *err);

	/* Rows moved between ranks (lib/gnn/gnn_halo.c). gather_rows:
	 * dst[i] = src[rows[i]] for i < count, rows of row_bytes bytes (the
	 * rows a peer needs, packed to send). add_rows: dst[rows[i]][c] +=
	 * src[i][c], width floats a row, rows distinct (gradients sent back).
	 * rows (int32) is backend memory. index_bytes: the bytes of one column
	 * index in the MaxK index buffer at width h (what a row of it sends). */
	int (*gather_rows)(struct gnn_backend *b, const void *src, size_t row_bytes,
			   const int32_t *rows, int64_t count, void *dst, struct sp_err *err);
	int (*add_rows)(struct gnn_backend *b, const float *src, const int32_t *rows, int64_t count,
			int width, float *dst, struct sp_err *err);
	int (*index_bytes)(int h);

	/* Losses over the rows with mask[i] equal to `which` (an enum
	 * gnn_split), averaged over those rows: softmax cross-entropy against
	 * class ids, or binary cross-entropy with logits against 0/1 targets
	 * (averaged over rows x classes). Write the loss to *loss (a 1-element
	 * buffer) and the gradient of it to dlogits (zero on other rows). No
	 * such rows: loss 0 and dlogits 0. The labels of the counted rows are
	 * in 0..c-1 (the CPU backend fails otherwise). */
	int (*softmax_xent)(struct gnn_backend *b, const float *logits, const int32_t *labels,
			    const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
			    float *loss, struct sp_err *err);
	int (*bce)(struct gnn_backend *b, const float *logits, const float *targets,
		   const uint8_t *mask, int which, int64_t m, int c, float *dlogits, float *loss,
		   struct sp_err *err);

	/* Adam as PyTorch's (L2 weight decay added to the gradient, bias
	 * correction with step t >= 1) over count parameters at once:
	 *   g = grad + weight_decay param (grad itself is not changed)
	 *   m1 = beta1 m1 + (1 - beta1) g;  m2 = beta2 m2 + (1 - beta2) g^2
	 *   param -= lr (m1 / (1 - beta1^t)) / (sqrt(m2 / (1 - beta2^t)) + eps) */
	int (*adam)(struct gnn_backend *b, float *param, const float *grad, float *m1, float *m2,
		    int64_t count, float lr, float beta1, float beta2, float eps, float weight_decay,
		    int64_t t, struct sp_err *err);

	int tf32;
	/* NVTX ranges around a phase of the training (gpu_range_push/pop on
	 * the GPU, for nsys and ncu --nvtx-include); NULL on the CPU. */
	void (*range_push)(const char *name);
	void (*range_pop)(void);
};

/* The host backend; threads as lib/core/parallel.h. */
int gnn_cpu_backend(struct gnn_backend **out, struct sp_err *err);
/* The GPU backend on the current device (gpu_resolve picks it); fails with
 * a clear message when there is no GPU or no CUDA in the build. */
int gnn_cuda_backend(struct gnn_backend **out, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
