/* The GPU backend of lib/gnn/gnn_backend.h: cuBLAS for the dense layers, the
 * MaxK kernels (kernels/maxk/maxk_gpu.h) for top-k and the CBSR
 * aggregation (gnn_gpu_maxk.cu), cuSPARSE SpMM for the dense aggregation
 * (gnn_gpu_graph.cu), and small kernels of its own: elementwise
 * (gnn_gpu_elementwise.cu), sums (gnn_gpu_reduce.cu), LayerNorm
 * (gnn_gpu_layernorm.cu) and the losses (gnn_gpu_loss.cu). This file is
 * the backend itself: its memory, its scratch buffer and its table of
 * operations.
 *
 * Stream: everything is queued on the legacy default stream (0). The MaxK
 * kernels and kernels/core/gpu.h launch there, so the backend does too (cuBLAS
 * and cuSPARSE are told so explicitly), and one epoch is one ordered queue
 * without events between streams. to_host and sync wait for it.
 *
 * Memory: peak_memory is the most device memory the backend has held at
 * once by its own count, as PyTorch's max_memory_allocated counts: every
 * alloc (by its requested size), each graph's arrays, the cuBLAS workspace
 * the backend hands cuBLAS (so it allocates none of its own) and the
 * scratch buffer below. The CUDA context and the libraries' handles are not
 * counted.
 *
 * Scratch: one growing device buffer for what an operation needs only
 * while it runs (cuSPARSE's SpMM workspace, reduction partials). Operations
 * run one after another on the one stream, so they can share it; it grows
 * (after a sync, so no queued work still uses the old one) when an
 * operation needs more. */
#include <stdlib.h>

#include "core/gpu.h"
#include "gnn/gnn_gpu.cuh"

/* NVIDIA's recommended cuBLAS workspace on Hopper. */
static const size_t BLAS_WORKSPACE = (size_t)32 << 20;
/* Held from the start, so small operations never grow it. */
static const size_t SCRATCH_INITIAL = (size_t)1 << 20;

/* At least `bytes` of scratch; NULL (err set) when that memory is not there. */
void *gnn_gpu_scratch(struct cuda_backend *c, size_t bytes, struct sp_err *err)
{
	if (bytes <= c->scratch_bytes)
		return c->scratch;
	if (GPU_FAILED(err, cudaStreamSynchronize(0)))
		return NULL;
	gpu_free(c->scratch);
	account(c, c->scratch_bytes, 0);
	c->scratch = NULL;
	c->scratch_bytes = 0;
	if (gpu_malloc(&c->scratch, bytes, "scratch (workspace and partial sums)", err))
		return NULL;
	c->scratch_bytes = bytes;
	account(c, bytes, 1);
	return c->scratch;
}

static void *gnn_gpu_alloc(struct gnn_backend *b, size_t bytes, struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	void *p;
	if (c->nlive == c->live_cap) {
		size_t cap = c->live_cap ? 2 * c->live_cap : 64;
		struct live_alloc *grown =
			(struct live_alloc *)realloc(c->live, cap * sizeof *grown);
		if (!grown) {
			sp_fail(err, "out of host memory for the allocation list");
			return NULL;
		}
		c->live = grown;
		c->live_cap = cap;
	}
	if (gpu_malloc(&p, bytes ? bytes : 1, "training buffer", err))
		return NULL;
	if (GPU_FAILED(err, cudaMemsetAsync(p, 0, bytes, 0))) {
		gpu_free(p);
		return NULL;
	}
	c->live[c->nlive++] = (struct live_alloc){p, bytes};
	account(c, bytes, 1);
	return p;
}

static void gnn_gpu_release(struct gnn_backend *b, void *p)
{
	struct cuda_backend *c = impl(b);
	if (!p)
		return;
	/* From the end: buffers tend to go in the reverse order they came. */
	for (size_t i = c->nlive; i-- > 0;)
		if (c->live[i].p == p) {
			account(c, c->live[i].bytes, 0);
			c->live[i] = c->live[--c->nlive];
			break;
		}
	gpu_free(p);
}

static int gnn_gpu_to_device(struct gnn_backend *b, void *dst, const void *src_host, size_t bytes,
			     struct sp_err *err)
{
	/* From pageable memory the copy is staged before this returns, so the
	 * caller may reuse src_host at once. */
	GPU_CHECK(err, cudaMemcpyAsync(dst, src_host, bytes, cudaMemcpyHostToDevice, 0));
	return 0;
}

static int gnn_gpu_to_host(struct gnn_backend *b, void *dst_host, const void *src, size_t bytes,
			   struct sp_err *err)
{
	GPU_CHECK(err, cudaMemcpyAsync(dst_host, src, bytes, cudaMemcpyDeviceToHost, 0));
	GPU_CHECK(err, cudaStreamSynchronize(0));
	return 0;
}

static int gnn_gpu_copy(struct gnn_backend *b, void *dst, const void *src, size_t bytes,
			struct sp_err *err)
{
	GPU_CHECK(err, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
	return 0;
}

static int gnn_gpu_sync(struct gnn_backend *b, struct sp_err *err)
{
	GPU_CHECK(err, cudaStreamSynchronize(0));
	return 0;
}

static size_t gnn_gpu_peak_memory(struct gnn_backend *b)
{
	return impl(b)->peak;
}

static void gnn_gpu_destroy(struct gnn_backend *b)
{
	struct cuda_backend *c;
	if (!b)
		return;
	c = impl(b);
	/* Queued work may still use what is freed below. */
	cudaStreamSynchronize(0);
	cudaGetLastError();
	for (size_t i = 0; i < c->nlive; i++)
		gpu_free(c->live[i].p);
	free(c->live);
	if (c->sparse)
		cusparseDestroy(c->sparse);
	if (c->blas)
		cublasDestroy(c->blas);
	gpu_free(c->blas_ws);
	gpu_free(c->scratch);
	free(c);
}

static int setup(struct cuda_backend *c, struct sp_err *err)
{
	int device;
	GPU_CHECK(err, cudaGetDevice(&device));
	GPU_CHECK(err, cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, device));
	GPU_CHECK(err, cublasCreate(&c->blas));
	/* cublasSetStream puts cuBLAS back on its own workspace pool, so the
	 * workspace comes after it. */
	GPU_CHECK(err, cublasSetStream(c->blas, 0));
	if (gpu_malloc(&c->blas_ws, BLAS_WORKSPACE, "cuBLAS workspace", err))
		return -1;
	account(c, BLAS_WORKSPACE, 1);
	GPU_CHECK(err, cublasSetWorkspace(c->blas, c->blas_ws, BLAS_WORKSPACE));
	GPU_CHECK(err, cusparseCreate(&c->sparse));
	GPU_CHECK(err, cusparseSetStream(c->sparse, 0));
	return gnn_gpu_scratch(c, SCRATCH_INITIAL, err) ? 0 : -1;
}

extern "C" int gnn_cuda_backend(struct gnn_backend **out, struct sp_err *err)
{
	struct sp_err why;
	*out = NULL;
	if (gpu_count() < 1) {
		gpu_probe(&why);
		return sp_fail(err, "no usable CUDA device: %s", why.msg);
	}
	struct cuda_backend *c = (struct cuda_backend *)calloc(1, sizeof *c);
	if (!c)
		return sp_fail(err, "out of host memory for the CUDA backend");
	c->table = (struct gnn_backend){
		.name = "cuda",
		.impl = c,
		.destroy = gnn_gpu_destroy,
		.alloc = gnn_gpu_alloc,
		.release = gnn_gpu_release,
		.to_device = gnn_gpu_to_device,
		.to_host = gnn_gpu_to_host,
		.copy = gnn_gpu_copy,
		.sync = gnn_gpu_sync,
		.peak_memory = gnn_gpu_peak_memory,
		.graph_create = gnn_gpu_graph_create,
		.graph_free = gnn_gpu_graph_free,
		.gemm = gnn_gpu_gemm,
		.bias_add = gnn_gpu_bias_add,
		.col_sum = gnn_gpu_col_sum,
		.axpby = gnn_gpu_axpby,
		.axpy_eps = gnn_gpu_axpy_eps,
		.dot = gnn_gpu_dot,
		.relu = gnn_gpu_relu,
		.relu_backward = gnn_gpu_relu_backward,
		.dropout = gnn_gpu_dropout,
		.layernorm = gnn_gpu_layernorm,
		.layernorm_backward = gnn_gpu_layernorm_backward,
		.topk = gnn_gpu_topk,
		.scatter = gnn_gpu_scatter,
		.gather = gnn_gpu_gather,
		.aggregate = gnn_gpu_aggregate,
		.aggregate_backward = gnn_gpu_aggregate_backward,
		.aggregate_maxk = gnn_gpu_aggregate_maxk,
		.aggregate_maxk_backward = gnn_gpu_aggregate_maxk_backward,
		.gather_rows = gnn_gpu_gather_rows,
		.add_rows = gnn_gpu_add_rows,
		.index_bytes = gnn_gpu_index_bytes,
		.softmax_xent = gnn_gpu_softmax_xent,
		.bce = gnn_gpu_bce,
		.adam = gnn_gpu_adam,
		.tf32 = 0,
		.range_push = gpu_range_push,
		.range_pop = gpu_range_pop,
	};
	if (setup(c, err)) {
		gnn_gpu_destroy(&c->table);
		return -1;
	}
	*out = &c->table;
	return 0;
}
