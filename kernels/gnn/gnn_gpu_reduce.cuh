/* Deterministic sums on the GPU for the backend (gnn_gpu_reduce.cu,
 * gnn_gpu_layernorm.cu, gnn_gpu_loss.cu): warp and block sums, the sum of
 * f(i) over a range, and column sums of a matrix given as f(r, c).
 * Private to kernels/gnn/.
 *
 * They are deterministic: blocks write partial sums in double to the scratch
 * buffer and one more kernel adds them in a fixed order, so the same run
 * gives the same bits. */
#ifndef SPKIT_GNN_GPU_REDUCE_CUH
#define SPKIT_GNN_GPU_REDUCE_CUH

#include <limits.h>

#include "gnn/gnn_gpu.cuh"

__device__ __forceinline__ double warp_sum(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* The sum over a block of THREADS threads, in thread 0. Once per kernel
 * (the shared array is not fenced for reuse). */
static __device__ double block_sum(double v)
{
	__shared__ double per_warp[WARPS];
	v = warp_sum(v);
	if ((threadIdx.x & 31) == 0)
		per_warp[threadIdx.x >> 5] = v;
	__syncthreads();
	v = threadIdx.x < WARPS ? per_warp[threadIdx.x] : 0.0;
	return threadIdx.x < 32 ? warp_sum(v) : 0.0;
}

/* partials[block] = the sum of f(i) over the block's share of 0..count-1. */
template <class F>
__global__ void __launch_bounds__(THREADS) sum_partials_kernel(int64_t count, F f, double *partials)
{
	double s = 0.0;
	for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * THREADS)
		s += f(i);
	s = block_sum(s);
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s;
}

/* One block adds the partials in a fixed order and hands the total to epi. */
template <class E>
__global__ void __launch_bounds__(THREADS)
	sum_finish_kernel(const double *partials, int parts, E epi)
{
	double s = 0.0;
	for (int p = threadIdx.x; p < parts; p += THREADS)
		s += partials[p];
	s = block_sum(s);
	if (threadIdx.x == 0)
		epi(s);
}

/* The partial sums (doubles) reduce_sum writes for count items. */
static inline unsigned reduce_parts(const struct cuda_backend *c, int64_t count)
{
	return blocks_for(c, count, THREADS, 4);
}

/* epi(the sum of f(i) over 0..count-1), through reduce_parts(count) partial
 * sums at `partials`. */
template <class F, class E>
static int reduce_sum(const struct cuda_backend *c, int64_t count, F f, E epi, double *partials,
		      struct sp_err *err)
{
	const unsigned parts = reduce_parts(c, count);
	sum_partials_kernel<<<parts, THREADS>>>(count, f, partials);
	GPU_CHECK_LAUNCH(err, "sum_partials_kernel");
	sum_finish_kernel<<<1, THREADS>>>(partials, (int)parts, epi);
	GPU_CHECK_LAUNCH(err, "sum_finish_kernel");
	return 0;
}

/* Column sums of an m x n matrix given as f(r, c): blocks of 32 columns x
 * WARPS row lanes (coalesced rows of 32 floats), each over one chunk of
 * rows; partials[chunk][c] in double. */
template <class F>
__global__ void __launch_bounds__(THREADS)
	column_partials_kernel(int64_t m, int64_t n, int64_t rows_per_chunk, F f, double *partials)
{
	__shared__ double part[WARPS][33];
	const int64_t c = blockIdx.x * (int64_t)32 + threadIdx.x;
	const int64_t r0 = blockIdx.y * rows_per_chunk;
	const int64_t r1 = r0 + rows_per_chunk < m ? r0 + rows_per_chunk : m;
	double s = 0.0;
	if (c < n) {
#pragma unroll 4
		for (int64_t r = r0 + threadIdx.y; r < r1; r += WARPS)
			s += f(r, c);
	}
	part[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.y == 0 && c < n) {
		for (int w = 1; w < WARPS; w++)
			s += part[w][threadIdx.x];
		partials[blockIdx.y * n + c] = s;
	}
}

/* out[c] = beta out[c] + the sum of the chunks' partials, in chunk order;
 * beta = 0 ignores out's old contents. */
static __global__ void column_finish_kernel(int64_t n, int chunks, const double *partials,
					    float beta, float *out)
{
	for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < n;
	     c += (int64_t)gridDim.x * blockDim.x) {
		double s = 0.0;
		for (int ch = 0; ch < chunks; ch++)
			s += partials[ch * n + c];
		out[c] = (float)(beta == 0.0f ? s : (double)beta * out[c] + s);
	}
}

/* out[c] = beta out[c] + sum over r of f(r, c), r in 0..m-1, c in 0..n-1. */
template <class F>
static int column_sum(struct cuda_backend *c, int64_t m, int64_t n, F f, float beta, float *out,
		      struct sp_err *err)
{
	if (n <= 0)
		return 0;
	const int64_t tiles = (n + 31) / 32;
	if (tiles > INT32_MAX)
		return sp_fail(err, "column sums: %lld columns is too many", (long long)n);
	/* About 8 blocks an SM, at least 64 rows a chunk. */
	int64_t chunks = ((int64_t)c->sms * 8 + tiles - 1) / tiles;
	const int64_t most = (m + 63) / 64;
	chunks = chunks < most ? chunks : most;
	chunks = chunks < 1 ? 1 : chunks > 1024 ? 1024 : chunks;
	const int64_t rows_per_chunk = m > 0 ? (m + chunks - 1) / chunks : 1;
	chunks = m > 0 ? (m + rows_per_chunk - 1) / rows_per_chunk : 1;
	double *partials = (double *)gnn_gpu_scratch(c, (size_t)(chunks * n) * sizeof(double), err);
	if (!partials)
		return -1;
	column_partials_kernel<<<dim3((unsigned)tiles, (unsigned)chunks), dim3(32, WARPS)>>>(
		m, n, rows_per_chunk, f, partials);
	GPU_CHECK_LAUNCH(err, "column_partials_kernel");
	column_finish_kernel<<<blocks_for(c, n, THREADS, 4), THREADS>>>(n, (int)chunks, partials,
									beta, out);
	GPU_CHECK_LAUNCH(err, "column_finish_kernel");
	return 0;
}

struct matrix_entry {
	const float *a;
	int64_t n;
	__device__ double operator()(int64_t r, int64_t c) const { return a[r * n + c]; }
};

#endif
