/* Rows moved between ranks on the GPU (gnn_backend.h: gather_rows,
 * add_rows, index_bytes): the packing of the rows a peer needs before they
 * are sent, and the sum of the gradients sent back into the rows they
 * belong to.
 *
 * Work: a warp a row, lanes over the row's 4-byte words (or bytes, for
 * the 8-bit MaxK index rows of k bytes). Bytes: each moved row read once
 * and written once; add_rows reads its destination rows too. The rows of
 * one call are distinct, so add_rows needs no atomics. */
#include "gnn/gnn_gpu.cuh"

template <typename T>
__global__ void __launch_bounds__(THREADS) gather_rows_kernel(const T *__restrict__ src,
							      int64_t width,
							      const int32_t *__restrict__ rows,
							      int64_t count, T *__restrict__ dst)
{
	for (int64_t w = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; w < count;
	     w += ((int64_t)gridDim.x * THREADS) >> 5) {
		const T *s = src + (size_t)rows[w] * width;
		T *d = dst + (size_t)w * width;
		for (int64_t c = threadIdx.x & 31; c < width; c += 32)
			d[c] = s[c];
	}
}

__global__ void __launch_bounds__(THREADS) add_rows_kernel(const float *__restrict__ src,
							   const int32_t *__restrict__ rows,
							   int64_t count, int width,
							   float *__restrict__ dst)
{
	for (int64_t w = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; w < count;
	     w += ((int64_t)gridDim.x * THREADS) >> 5) {
		float *d = dst + (size_t)rows[w] * width;
		const float *s = src + (size_t)w * width;
		for (int c = threadIdx.x & 31; c < width; c += 32)
			d[c] += s[c];
	}
}

int gnn_gpu_gather_rows(struct gnn_backend *b, const void *src, size_t row_bytes,
			const int32_t *rows, int64_t count, void *dst, struct sp_err *err)
{
	if (count <= 0 || row_bytes == 0)
		return 0;
	const unsigned grid = blocks_for(impl(b), count, WARPS, 16);
	if (row_bytes % 4 == 0)
		gather_rows_kernel<<<grid, THREADS>>>((const uint32_t *)src, (int64_t)row_bytes / 4,
						      rows, count, (uint32_t *)dst);
	else
		gather_rows_kernel<<<grid, THREADS>>>((const uint8_t *)src, (int64_t)row_bytes, rows,
						      count, (uint8_t *)dst);
	GPU_CHECK_LAUNCH(err, "gather_rows_kernel");
	return 0;
}

int gnn_gpu_add_rows(struct gnn_backend *b, const float *src, const int32_t *rows, int64_t count,
		     int width, float *dst, struct sp_err *err)
{
	if (count <= 0 || width <= 0)
		return 0;
	add_rows_kernel<<<blocks_for(impl(b), count, WARPS, 16), THREADS>>>(src, rows, count, width,
									    dst);
	GPU_CHECK_LAUNCH(err, "add_rows_kernel");
	return 0;
}

int gnn_gpu_index_bytes(int h)
{
	return maxk_index_bytes(h);
}
