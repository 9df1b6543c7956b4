/* MaxK-GNN kernels, first version: right for every k (1..h), every graph
 * (empty rows, rows of any degree) and any n; not yet tuned.
 *
 * top-k: one warp per row, the row's keys in registers (32 columns a
 *   lane); a radix select over the 32 key bits (one warp reduction a bit)
 *   finds the k-th largest key, then the row is written in column order:
 *   every key above it, and of the keys equal to it the first ones by
 *   column. Bytes: the matrix once, the k kept values and indices once.
 * forward: one warp per .warp4 record (row r, up to warp_max_nz
 *   neighbours): each neighbour's k kept values are added into a row
 *   accumulator in shared memory (lanes take distinct columns, so plain
 *   adds, a __syncwarp between neighbours), then added into y with
 *   atomics, since a row may span several records.
 * backward: dX[j][t] = sum over the transpose's row j of A[r][j] *
 *   dY[r][index[j][t]]: a warp per j, lanes over t, a gather with no
 *   atomics. */
#include <cuda_runtime.h>

#include <stdint.h>

#include "gpu_check.cuh"
#include "maxk_gpu.h"

enum { WARPS = 8, BLOCK = 32 * WARPS };

/* Blocks for `items` work items taken `per_block` at a time, capped: every
 * kernel here loops over its items with a grid stride, so the cap only
 * bounds the launch, and at least one block runs. */
static unsigned grid_for(int64_t items, int per_block, int64_t cap)
{
	const int64_t b = (items + per_block - 1) / per_block;
	return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

/* A float's order as an unsigned key; NaN above everything, like the CPU
 * reference, so it is kept and propagates. */
__device__ __forceinline__ uint32_t order_key(float f)
{
	uint32_t b = __float_as_uint(f);
	if (f != f)
		return 0xffffffffu;
	return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

template <int M>
__global__ void __launch_bounds__(BLOCK) topk_kernel(const float *__restrict__ x, int n, int h, int k,
						     float *__restrict__ values,
						     uint16_t *__restrict__ index)
{
	const int lane = threadIdx.x & 31;
	for (int i = (blockIdx.x * BLOCK + threadIdx.x) >> 5; i < n; i += gridDim.x * WARPS) {
		const float *row = x + (size_t)i * h;
		uint32_t key[M];
		float val[M];
#pragma unroll
		for (int m = 0; m < M; m++) {
			const int c = 32 * m + lane;
			val[m] = c < h ? row[c] : 0.0f;
			key[m] = c < h ? order_key(val[m]) : 0; /* real keys are never 0 */
		}
		uint32_t kth = 0;
		for (int bit = 31; bit >= 0; bit--) {
			const uint32_t cand = kth | (1u << bit);
			unsigned cnt = 0;
#pragma unroll
			for (int m = 0; m < M; m++)
				cnt += key[m] >= cand;
			if (__reduce_add_sync(0xffffffffu, cnt) >= (unsigned)k)
				kth = cand;
		}
		unsigned above = 0;
#pragma unroll
		for (int m = 0; m < M; m++)
			above += key[m] > kth;
		const int ties_kept = k - (int)__reduce_add_sync(0xffffffffu, above);
		int written = 0, ties_seen = 0;
		const unsigned lower = (1u << lane) - 1;
#pragma unroll
		for (int m = 0; m < M; m++) {
			const bool tie = key[m] == kth;
			const unsigned ties = __ballot_sync(0xffffffffu, tie);
			const bool keep = key[m] > kth || (tie && ties_seen + __popc(ties & lower) < ties_kept);
			const unsigned kept = __ballot_sync(0xffffffffu, keep);
			if (keep) {
				const size_t at = (size_t)i * k + written + __popc(kept & lower);
				values[at] = val[m];
				index[at] = (uint16_t)(32 * m + lane);
			}
			written += __popc(kept);
			ties_seen += __popc(ties);
		}
	}
}

template <int M>
static int launch_topk(const float *x, int64_t n, int h, int k, float *values, uint16_t *index,
		       struct sp_err *err)
{
	topk_kernel<M><<<grid_for(n, WARPS, 65535 * 8), BLOCK>>>(
		x, (int)n, h, k, values, index);
	GPU_CHECK_LAUNCH(err, "topk_kernel");
	return 0;
}

extern "C" int maxk_topk_gpu(const float *x, int64_t n, int h, int k, float *values,
			     uint16_t *index, struct sp_err *err)
{
	if (h < 1 || h > MAXK_GPU_MAX_WIDTH)
		return sp_fail(err, "top-k: feature width %d is outside 1..%d", h, MAXK_GPU_MAX_WIDTH);
	if (k < 1 || k > h)
		return sp_fail(err, "top-k: k = %d is outside 1..%d (the feature width)", k, h);
	if (n <= 0)
		return 0;
	gpu_range_push("maxk_topk");
	int rc = h <= 32    ? launch_topk<1>(x, n, h, k, values, index, err)
		 : h <= 64  ? launch_topk<2>(x, n, h, k, values, index, err)
		 : h <= 128 ? launch_topk<4>(x, n, h, k, values, index, err)
		 : h <= 256 ? launch_topk<8>(x, n, h, k, values, index, err)
		 : h <= 512 ? launch_topk<16>(x, n, h, k, values, index, err)
			    : launch_topk<32>(x, n, h, k, values, index, err);
	gpu_range_pop();
	return rc;
}

__global__ void scatter_kernel(const float *__restrict__ values, const uint16_t *__restrict__ index,
			       int64_t nk, int h, int k, float *__restrict__ dense)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		dense[(e / k) * h + index[e]] = values[e];
}

__global__ void gather_kernel(const float *__restrict__ dense, const uint16_t *__restrict__ index,
			      int64_t nk, int h, int k, float *__restrict__ out)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		out[e] = dense[(e / k) * h + index[e]];
}


extern "C" int maxk_scatter_gpu(const float *values, const uint16_t *index, int64_t n, int h, int k,
				float *dense, struct sp_err *err)
{
	GPU_CHECK(err, cudaMemsetAsync(dense, 0, (size_t)n * h * sizeof(float)));
	if (n * k == 0)
		return 0;
	scatter_kernel<<<grid_for(n * k, 256, 132 * 32), 256>>>(values, index, n * k, h, k, dense);
	GPU_CHECK_LAUNCH(err, "scatter_kernel");
	return 0;
}

extern "C" int maxk_gather_gpu(const float *dense, const uint16_t *index, int64_t n, int h, int k,
			       float *out, struct sp_err *err)
{
	if (n * k == 0)
		return 0;
	gather_kernel<<<grid_for(n * k, 256, 132 * 32), 256>>>(dense, index, n * k, h, k, out);
	GPU_CHECK_LAUNCH(err, "gather_kernel");
	return 0;
}

__global__ void __launch_bounds__(BLOCK) forward_kernel(
	const int4 *__restrict__ warp4, int64_t records, const int32_t *__restrict__ indices,
	const float *__restrict__ vals, const float *__restrict__ xv, const uint16_t *__restrict__ xi,
	int h, int k, float *__restrict__ y)
{
	extern __shared__ float acc_all[];
	const int lane = threadIdx.x & 31;
	float *acc = acc_all + (threadIdx.x >> 5) * h;
	for (int64_t w = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; w < records;
	     w += (int64_t)gridDim.x * WARPS) {
		const int4 rec = warp4[w];
		for (int c = lane; c < h; c += 32)
			acc[c] = 0.0f;
		__syncwarp();
		for (int e = rec.y; e < rec.y + rec.z; e++) {
			const int64_t j = indices[e];
			const float a = vals[e];
			for (int t = lane; t < k; t += 32)
				acc[xi[j * k + t]] += a * xv[j * k + t];
			__syncwarp(); /* the next neighbour may add to a column another lane just did */
		}
		for (int c = lane; c < h; c += 32)
			atomicAdd(y + (size_t)rec.x * h + c, acc[c]);
		__syncwarp();
	}
}

extern "C" int maxk_forward_gpu(const struct maxk_dev_graph *g, const float *values,
				const uint16_t *index, int h, int k, float *y, struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "forward: k = %d is outside 1..%d (the feature width)", k, h);
	gpu_range_push("maxk_forward");
	int rc = -1;
	if (GPU_FAILED(err, cudaMemsetAsync(y, 0, (size_t)g->n * h * sizeof(float))))
		goto out;
	if (g->records > 0) {
		const size_t smem = (size_t)WARPS * h * sizeof(float);
		if (smem > 48 * 1024 &&
		    GPU_FAILED(err, cudaFuncSetAttribute(forward_kernel,
							  cudaFuncAttributeMaxDynamicSharedMemorySize,
							  (int)smem)))
			goto out;
		forward_kernel<<<grid_for(g->records, WARPS, 132 * 64), BLOCK, smem>>>(
			(const int4 *)g->warp4, g->records, g->indices, g->vals, values, index, h, k, y);
		if (gpu_check_status(cudaGetLastError(), "launch of forward_kernel", __FILE__, __LINE__,
				     err))
			goto out;
	}
	rc = 0;
out:
	gpu_range_pop();
	return rc;
}

__global__ void __launch_bounds__(BLOCK) backward_kernel(
	int64_t n, const int32_t *__restrict__ t_indptr, const int32_t *__restrict__ t_indices,
	const float *__restrict__ t_vals, const uint16_t *__restrict__ xi, int h, int k,
	const float *__restrict__ dy, float *__restrict__ dx)
{
	const int lane = threadIdx.x & 31;
	for (int64_t j = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; j < n;
	     j += (int64_t)gridDim.x * WARPS) {
		const int b = t_indptr[j], e = t_indptr[j + 1];
		for (int t = lane; t < k; t += 32) {
			const int c = xi[j * k + t];
			float acc = 0.0f;
			for (int p = b; p < e; p++)
				acc = fmaf(t_vals[p], dy[(size_t)t_indices[p] * h + c], acc);
			dx[j * k + t] = acc;
		}
	}
}

/* The scatter form of the backward: per .warp4 record (row r and some of
 * its neighbours j), dY's row r is staged in shared memory once and each
 * neighbour's k results get A[r][j] dY[r][index[j][t]] added atomically
 * (k contiguous floats: coalesced atomics). dx must start at zero. */
__global__ void __launch_bounds__(BLOCK) backward_scatter_kernel(
	const int4 *__restrict__ warp4, int64_t records, const int32_t *__restrict__ indices,
	const float *__restrict__ vals, const uint16_t *__restrict__ xi, int h, int k,
	const float *__restrict__ dy, float *__restrict__ dx)
{
	extern __shared__ float row_all[];
	const int lane = threadIdx.x & 31;
	float *row = row_all + (threadIdx.x >> 5) * h;
	for (int64_t w = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; w < records;
	     w += (int64_t)gridDim.x * WARPS) {
		const int4 rec = warp4[w];
		__syncwarp(); /* the last record's reads of row are done */
		for (int c = lane; c < h; c += 32)
			row[c] = dy[(size_t)rec.x * h + c];
		__syncwarp();
		for (int e = rec.y; e < rec.y + rec.z; e++) {
			const int64_t j = indices[e];
			const float a = vals[e];
			for (int t = lane; t < k; t += 32)
				atomicAdd(dx + j * k + t, a * row[xi[j * k + t]]);
		}
	}
}

extern "C" int maxk_backward_scatter_gpu(const struct maxk_dev_graph *g, const uint16_t *index,
					 int h, int k, const float *dy, float *dx,
					 struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "backward: k = %d is outside 1..%d (the feature width)", k, h);
	GPU_CHECK(err, cudaMemsetAsync(dx, 0, (size_t)g->n * k * sizeof(float)));
	if (g->records == 0)
		return 0;
	const size_t smem = (size_t)WARPS * h * sizeof(float);
	if (smem > 48 * 1024)
		GPU_CHECK(err, cudaFuncSetAttribute(backward_scatter_kernel,
						    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	gpu_range_push("maxk_backward_scatter");
	backward_scatter_kernel<<<grid_for(g->records, WARPS, 132 * 64), BLOCK, smem>>>(
		(const int4 *)g->warp4, g->records, g->indices, g->vals, index, h, k, dy, dx);
	gpu_range_pop();
	GPU_CHECK_LAUNCH(err, "backward_scatter_kernel");
	return 0;
}

extern "C" int maxk_backward_gpu(const struct maxk_dev_graph *g, const uint16_t *index, int h,
				 int k, const float *dy, float *dx, struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "backward: k = %d is outside 1..%d (the feature width)", k, h);
	if (g->n <= 0)
		return 0;
	gpu_range_push("maxk_backward");
	backward_kernel<<<grid_for(g->n, WARPS, 132 * 64), BLOCK>>>(
		g->n, g->t_indptr, g->t_indices, g->t_vals, index, h, k, dy, dx);
	gpu_range_pop();
	GPU_CHECK_LAUNCH(err, "backward_kernel");
	return 0;
}

extern "C" int maxk_dev_graph_upload(const struct csr *g, const float *vals, const int32_t *warp4,
				     int64_t records, struct maxk_dev_graph *d, struct sp_err *err)
{
	*d = (struct maxk_dev_graph){g->nrows, g->nnz, records};
	if (g->nnz > INT32_MAX || g->nrows >= INT32_MAX)
		return sp_fail(err, "graph of %lld rows and %lld edges is too large for 32-bit offsets",
			       (long long)g->nrows, (long long)g->nnz);
	struct csr t;
	if (csr_transpose(g, vals, &t, err))
		return -1;
	int32_t *t_ptr32 = (int32_t *)malloc((size_t)(t.nrows + 1) * sizeof *t_ptr32);
	int32_t *ptr32 = (int32_t *)malloc((size_t)(g->nrows + 1) * sizeof *ptr32);
	int rc = -1;
	const size_t nnz = (size_t)(g->nnz ? g->nnz : 1);
	if (!t_ptr32 || !ptr32) {
		sp_fail(err, "out of memory");
		goto out;
	}
	for (int64_t j = 0; j <= t.nrows; j++)
		t_ptr32[j] = (int32_t)t.indptr[j];
	for (int64_t r = 0; r <= g->nrows; r++)
		ptr32[r] = (int32_t)g->indptr[r];
	if (gpu_malloc((void **)&d->indptr, (size_t)(g->nrows + 1) * 4, "graph indptr", err) ||
	    gpu_malloc((void **)&d->indices, nnz * 4, "graph indices", err) ||
	    gpu_malloc((void **)&d->vals, nnz * 4, "edge values", err) ||
	    gpu_malloc((void **)&d->warp4, (size_t)(records ? records : 1) * 16, "warp4 records", err) ||
	    gpu_malloc((void **)&d->t_indptr, (size_t)(t.nrows + 1) * 4, "transpose indptr", err) ||
	    gpu_malloc((void **)&d->t_indices, nnz * 4, "transpose indices", err) ||
	    gpu_malloc((void **)&d->t_vals, nnz * 4, "transpose values", err) ||
	    gpu_upload(d->indptr, ptr32, (size_t)(g->nrows + 1) * 4, err) ||
	    gpu_upload(d->indices, g->indices, (size_t)g->nnz * 4, err) ||
	    gpu_upload(d->vals, vals, (size_t)g->nnz * 4, err) ||
	    gpu_upload(d->warp4, warp4, (size_t)records * 16, err) ||
	    gpu_upload(d->t_indptr, t_ptr32, (size_t)(t.nrows + 1) * 4, err) ||
	    gpu_upload(d->t_indices, t.indices, (size_t)g->nnz * 4, err) ||
	    gpu_upload(d->t_vals, t.values, (size_t)g->nnz * 4, err))
		goto out;
	rc = 0;
out:
	free(t_ptr32);
	free(ptr32);
	csr_free(&t);
	if (rc)
		maxk_dev_graph_free(d);
	return rc;
}

extern "C" void maxk_dev_graph_free(struct maxk_dev_graph *d)
{
	gpu_free(d->indptr);
	gpu_free(d->indices);
	gpu_free(d->vals);
	gpu_free(d->warp4);
	gpu_free(d->t_indptr);
	gpu_free(d->t_indices);
	gpu_free(d->t_vals);
	*d = (struct maxk_dev_graph){0};
}
