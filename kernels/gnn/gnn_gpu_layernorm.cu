/* LayerNorm and its backward on the GPU (gnn_backend.h: layernorm,
 * layernorm_backward), as lib/gnn/gnn_cpu.c computes them.
 *
 * Work: a warp a row, the row's statistics by warp shuffles; gamma's and
 * beta's gradients are column sums (gnn_gpu_reduce.cuh). Bytes: the
 * forward reads x twice (two passes, mean then deviations; the second
 * mostly from L1/L2) and writes y; the backward reads x and dy and writes
 * dx, then reads both again for the two column sums. */
#include <limits.h>

#include "gnn/gnn_gpu_reduce.cuh"

static const float LAYERNORM_EPS = 1e-5f;

__global__ void __launch_bounds__(THREADS)
	layernorm_kernel(const float *x, const float *__restrict__ gamma,
			 const float *__restrict__ beta, int64_t m, int n, float *y,
			 float *__restrict__ mean, float *__restrict__ rstd)
{
	const int lane = threadIdx.x & 31;
	for (int64_t i = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; i < m;
	     i += (int64_t)gridDim.x * WARPS) {
		const float *xr = x + i * n;
		/* Two passes (the mean, then squared deviations from it): no
		 * cancellation for rows far from zero. */
		float s = 0.0f;
		for (int j = lane; j < n; j += 32)
			s += xr[j];
		const float mu = warp_sum(s) / n;
		float v = 0.0f;
		for (int j = lane; j < n; j += 32)
			v += (xr[j] - mu) * (xr[j] - mu);
		const float rs = 1.0f / sqrtf(warp_sum(v) / n + LAYERNORM_EPS);
		/* y may be x: each lane reads its own entries before writing them. */
		float *yr = y + i * n;
		for (int j = lane; j < n; j += 32)
			yr[j] = (xr[j] - mu) * rs * gamma[j] + beta[j];
		if (lane == 0) {
			mean[i] = mu;
			rstd[i] = rs;
		}
	}
}

/* dx = rstd (g - mean_j(g) - xhat mean_j(g xhat)), g = dy gamma. */
__global__ void __launch_bounds__(THREADS)
	layernorm_backward_kernel(const float *__restrict__ x, const float *__restrict__ dy,
				  const float *__restrict__ gamma, const float *__restrict__ mean,
				  const float *__restrict__ rstd, int64_t m, int n,
				  float *__restrict__ dx)
{
	const int lane = threadIdx.x & 31;
	for (int64_t i = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; i < m;
	     i += (int64_t)gridDim.x * WARPS) {
		const float *xr = x + i * n, *dyr = dy + i * n;
		const float mu = mean[i], rs = rstd[i];
		float sg = 0.0f, sgx = 0.0f;
		for (int j = lane; j < n; j += 32) {
			const float g = dyr[j] * gamma[j];
			sg += g;
			sgx += g * (xr[j] - mu) * rs;
		}
		const float mg = warp_sum(sg) / n, mgx = warp_sum(sgx) / n;
		for (int j = lane; j < n; j += 32)
			dx[i * n + j] = rs * (dyr[j] * gamma[j] - mg - (xr[j] - mu) * rs * mgx);
	}
}

static int check_rows(const char *op, int64_t m, int64_t n, struct sp_err *err)
{
	if (m < 0 || n < 1 || n > INT32_MAX)
		return sp_fail(err, "%s: %lld x %lld is not a valid shape", op, (long long)m,
			       (long long)n);
	return 0;
}

int gnn_gpu_layernorm(struct gnn_backend *b, const float *x, const float *gamma,
		      const float *beta, int64_t m, int64_t n, float *y, float *mean,
		      float *rstd, struct sp_err *err)
{
	if (check_rows("layernorm", m, n, err))
		return -1;
	if (m == 0)
		return 0;
	layernorm_kernel<<<blocks_for(impl(b), m, WARPS, 32), THREADS>>>(x, gamma, beta, m, (int)n,
									 y, mean, rstd);
	GPU_CHECK_LAUNCH(err, "layernorm_kernel");
	return 0;
}

/* dy[r][c] xhat[r][c], LayerNorm's gamma gradient before the sum over rows. */
struct dy_xhat {
	const float *x, *dy, *mean, *rstd;
	int64_t n;
	__device__ double operator()(int64_t r, int64_t c) const
	{
		return (double)dy[r * n + c] * ((x[r * n + c] - mean[r]) * rstd[r]);
	}
};

int gnn_gpu_layernorm_backward(struct gnn_backend *b, const float *x, const float *dy,
			       const float *gamma, const float *mean, const float *rstd,
			       int64_t m, int64_t n, float *dx, float *dgamma, float *dbeta,
			       struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	if (check_rows("layernorm_backward", m, n, err))
		return -1;
	if (m > 0) {
		layernorm_backward_kernel<<<blocks_for(c, m, WARPS, 32), THREADS>>>(
			x, dy, gamma, mean, rstd, m, (int)n, dx);
		GPU_CHECK_LAUNCH(err, "layernorm_backward_kernel");
	}
	if (column_sum(c, m, n, dy_xhat{x, dy, mean, rstd, n}, 0.0f, dgamma, err) ||
	    column_sum(c, m, n, matrix_entry{dy, n}, 0.0f, dbeta, err))
		return -1;
	return 0;
}

