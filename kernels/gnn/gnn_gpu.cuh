/* What the files of the GPU backend (gnn_gpu*.cu) share: the backend's
 * state, the graph, the launch shape, the scratch buffer, and the
 * operations each file gives the table in gnn_gpu.cu (gnn_backend.h says
 * what each computes). Private to kernels/gnn/. */
#ifndef SPKIT_GNN_GPU_CUH
#define SPKIT_GNN_GPU_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <stdint.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_gpu.h"

extern "C" {
#include "gnn/gnn_backend.h"
}

enum { THREADS = 256, WARPS = THREADS / 32 };

struct live_alloc {
	void *p;
	size_t bytes;
};

struct cuda_backend {
	struct gnn_backend table;
	cublasHandle_t blas;
	cusparseHandle_t sparse;
	int sms;
	void *blas_ws;
	void *scratch;
	size_t scratch_bytes;
	struct live_alloc *live; /* what alloc handed out and release has not taken back */
	size_t nlive, live_cap;
	size_t in_use, peak;
};

struct gnn_graph {
	struct maxk_dev_graph d;
	/* A and its transpose for cuSPARSE; NULL when the graph has no edges. */
	cusparseConstSpMatDescr_t a, at;
};

static inline struct cuda_backend *impl(struct gnn_backend *b)
{
	return (struct cuda_backend *)b->impl;
}

static inline void account(struct cuda_backend *c, size_t bytes, int add)
{
	c->in_use = add ? c->in_use + bytes : c->in_use - bytes;
	if (c->in_use > c->peak)
		c->peak = c->in_use;
}

/* Blocks for a grid-stride loop over `items` taken `per_block` at a time:
 * no more than needed, nor than `per_sm` blocks for each SM. */
static inline unsigned blocks_for(const struct cuda_backend *c, int64_t items, int per_block,
				  int per_sm)
{
	const int64_t need = (items + per_block - 1) / per_block, cap = (int64_t)c->sms * per_sm;
	return (unsigned)(need < 1 ? 1 : need < cap ? need : cap);
}

/* At least `bytes` of scratch; NULL (err set) when that memory is not there. */
void *gnn_gpu_scratch(struct cuda_backend *c, size_t bytes, struct sp_err *err);

/* gnn_gpu_elementwise.cu */
int gnn_gpu_bias_add(struct gnn_backend *b, float *y, const float *bias, int64_t m, int64_t n,
		     struct sp_err *err);
int gnn_gpu_axpby(struct gnn_backend *b, float alpha, const float *x, float beta, float *y,
		  int64_t count, struct sp_err *err);
int gnn_gpu_axpy_eps(struct gnn_backend *b, const float *eps, const float *x, float *y,
		     int64_t count, struct sp_err *err);
int gnn_gpu_relu(struct gnn_backend *b, const float *x, float *y, int64_t count,
		 struct sp_err *err);
int gnn_gpu_relu_backward(struct gnn_backend *b, const float *y, const float *dy, float *dx,
			  int64_t count, struct sp_err *err);
int gnn_gpu_dropout(struct gnn_backend *b, const float *x, float *y, int64_t count, float p,
		    uint64_t seed, struct sp_err *err);
int gnn_gpu_adam(struct gnn_backend *b, float *param, const float *grad, float *m1, float *m2,
		 int64_t count, float lr, float beta1, float beta2, float eps,
		 float weight_decay, int64_t t, struct sp_err *err);

/* gnn_gpu_reduce.cu */
int gnn_gpu_col_sum(struct gnn_backend *b, const float *dy, int64_t m, int64_t n, float beta,
		    float *db, struct sp_err *err);
int gnn_gpu_dot(struct gnn_backend *b, const float *x, const float *y, int64_t count,
		float beta, float *out, struct sp_err *err);

/* gnn_gpu_layernorm.cu */
int gnn_gpu_layernorm(struct gnn_backend *b, const float *x, const float *gamma,
		      const float *beta, int64_t m, int64_t n, float *y, float *mean,
		      float *rstd, struct sp_err *err);
int gnn_gpu_layernorm_backward(struct gnn_backend *b, const float *x, const float *dy,
			       const float *gamma, const float *mean, const float *rstd,
			       int64_t m, int64_t n, float *dx, float *dgamma, float *dbeta,
			       struct sp_err *err);

/* gnn_gpu_loss.cu */
int gnn_gpu_softmax_xent(struct gnn_backend *b, const float *logits, const int32_t *labels,
			 const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
			 float *loss_out, struct sp_err *err);
int gnn_gpu_bce(struct gnn_backend *b, const float *logits, const float *targets,
		const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
		float *loss_out, struct sp_err *err);

/* gnn_gpu_gemm.cu */
int gnn_gpu_gemm(struct gnn_backend *b, int ta, int tb, int64_t m, int64_t n, int64_t k,
		 float alpha, const float *A, const float *B, float beta, float *C,
		 struct sp_err *err);

/* gnn_gpu_maxk.cu */
int gnn_gpu_topk(struct gnn_backend *b, const float *x, int64_t m, int h, int k, float *values,
		 uint16_t *index, struct sp_err *err);
int gnn_gpu_scatter(struct gnn_backend *b, const float *values, const uint16_t *index,
		    int64_t m, int h, int k, float *dense, struct sp_err *err);
int gnn_gpu_gather(struct gnn_backend *b, const float *dense, const uint16_t *index, int64_t m,
		   int h, int k, float *out, struct sp_err *err);
int gnn_gpu_aggregate_maxk(struct gnn_backend *b, const struct gnn_graph *g,
			   const float *values, const uint16_t *index, int h, int k, float *y,
			   struct sp_err *err);
int gnn_gpu_aggregate_maxk_backward(struct gnn_backend *b, const struct gnn_graph *g,
				    const uint16_t *index, int h, int k, const float *dy,
				    float *dvalues, struct sp_err *err);

/* gnn_gpu_rows.cu */
int gnn_gpu_gather_rows(struct gnn_backend *b, const void *src, size_t row_bytes,
			const int32_t *rows, int64_t count, void *dst, struct sp_err *err);
int gnn_gpu_add_rows(struct gnn_backend *b, const float *src, const int32_t *rows, int64_t count,
		     int width, float *dst, struct sp_err *err);
int gnn_gpu_index_bytes(int h);

/* gnn_gpu_graph.cu */
int gnn_gpu_graph_create(struct gnn_backend *b, const struct csr *g, enum edge_norm norm,
			 const int32_t *warp4_host, int64_t records, struct gnn_graph **out,
			 struct sp_err *err);
void gnn_gpu_graph_free(struct gnn_backend *b, struct gnn_graph *g);
int gnn_gpu_aggregate(struct gnn_backend *b, const struct gnn_graph *g, const float *x, int h,
		      float *y, struct sp_err *err);
int gnn_gpu_aggregate_backward(struct gnn_backend *b, const struct gnn_graph *g,
			       const float *dy, int h, float *dx, struct sp_err *err);

#endif
