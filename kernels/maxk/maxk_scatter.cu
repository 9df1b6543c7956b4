/* Between MaxK's kept entries (values and column indices, n x k) and the
 * dense n x h form: scatter writes the kept values into zeros (what
 * cuSPARSE multiplies on the dense path), gather reads a dense gradient at
 * the kept positions (MaxK's own backward: the gradient passes only
 * there).
 *
 * Work: one thread a kept entry, in a grid-stride loop; consecutive
 * threads take consecutive entries of a row, so the kept side is read or
 * written coalesced and the dense side touches the row's kept columns.
 *
 * Bytes: the kept entries once (n k (4 + index bytes)), and on the dense
 * side the memset of n h floats (scatter) or the sectors holding the kept
 * columns (gather). Both are memory-bound and small next to the
 * aggregation; no variant was measured. */
#include "maxk/maxk_kernels.cuh"

template <typename IT>
__global__ void scatter_kernel(const float *__restrict__ values, const IT *__restrict__ index,
			       int64_t nk, int h, int k, float *__restrict__ dense)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		dense[(e / k) * h + index[e]] = values[e];
}

template <typename IT>
__global__ void gather_kernel(const float *__restrict__ dense, const IT *__restrict__ index,
			      int64_t nk, int h, int k, float *__restrict__ out)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		out[e] = dense[(e / k) * h + index[e]];
}

extern "C" int maxk_scatter_gpu(const float *values, const void *index, int64_t n, int h, int k,
				float *dense, struct sp_err *err)
{
	GPU_CHECK(err, cudaMemsetAsync(dense, 0, (size_t)n * h * sizeof(float)));
	if (n * k == 0)
		return 0;
	const unsigned grid = grid_for(n * k, 256, 132 * 32);
	with_index(h, index, [&](auto ix) {
		scatter_kernel<<<grid, 256>>>(values, ix, n * k, h, k, dense);
	});
	GPU_CHECK_LAUNCH(err, "scatter_kernel");
	return 0;
}

extern "C" int maxk_gather_gpu(const float *dense, const void *index, int64_t n, int h, int k,
			       float *out, struct sp_err *err)
{
	if (n * k == 0)
		return 0;
	const unsigned grid = grid_for(n * k, 256, 132 * 32);
	with_index(h, index, [&](auto ix) {
		gather_kernel<<<grid, 256>>>(dense, ix, n * k, h, k, out);
	});
	GPU_CHECK_LAUNCH(err, "gather_kernel");
	return 0;
}
