/* The GPU backend of lib/gnn_backend.h: cuBLAS for the dense layers, the
 * MaxK kernels (kernels/maxk_gpu.h) for top-k and the CBSR aggregation,
 * cuSPARSE SpMM for the dense aggregation, and the small kernels here.
 *
 * Stream: everything is queued on the legacy default stream (0). The MaxK
 * kernels and kernels/gpu.h launch there, so the backend does too (cuBLAS
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
 * operation needs more.
 *
 * Reductions (col_sum, dot, the losses, LayerNorm's parameter gradients)
 * are deterministic: blocks write partial sums in double to the scratch
 * buffer and one more kernel adds them in a fixed order, so the same run
 * gives the same bits. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_gpu.h"

extern "C" {
#include "gnn/gnn_backend.h"
#include "gnn/gnn_dropout.h"
#include "maxk/warp4.h"
}

enum { THREADS = 256, WARPS = THREADS / 32 };

/* cuSPARSE SpMM for a row-major dense operand: ALG2 is the CSR algorithm
 * for row-major layouts; ALG3 is the one to measure against it. */
static const cusparseSpMMAlg_t SPMM_ALG = CUSPARSE_SPMM_CSR_ALG2;
/* NVIDIA's recommended cuBLAS workspace on Hopper. */
static const size_t BLAS_WORKSPACE = (size_t)32 << 20;
/* Held from the start, so small operations never grow it. */
static const size_t SCRATCH_INITIAL = (size_t)1 << 20;
static const float LAYERNORM_EPS = 1e-5f;

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

static struct cuda_backend *impl(struct gnn_backend *b)
{
	return (struct cuda_backend *)b->impl;
}

static void account(struct cuda_backend *c, size_t bytes, int add)
{
	c->in_use = add ? c->in_use + bytes : c->in_use - bytes;
	if (c->in_use > c->peak)
		c->peak = c->in_use;
}

/* Blocks for a grid-stride loop over `items` taken `per_block` at a time:
 * no more than needed, nor than `per_sm` blocks for each SM. */
static unsigned blocks_for(const struct cuda_backend *c, int64_t items, int per_block, int per_sm)
{
	const int64_t need = (items + per_block - 1) / per_block, cap = (int64_t)c->sms * per_sm;
	return (unsigned)(need < 1 ? 1 : need < cap ? need : cap);
}

/* At least `bytes` of scratch; NULL (err set) when that memory is not there. */
static void *scratch_reserve(struct cuda_backend *c, size_t bytes, struct sp_err *err)
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

/* ---- memory ---- */

static void *cuda_alloc(struct gnn_backend *b, size_t bytes, struct sp_err *err)
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

static void cuda_release(struct gnn_backend *b, void *p)
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

static int cuda_to_device(struct gnn_backend *b, void *dst, const void *src_host, size_t bytes,
			  struct sp_err *err)
{
	/* From pageable memory the copy is staged before this returns, so the
	 * caller may reuse src_host at once. */
	GPU_CHECK(err, cudaMemcpyAsync(dst, src_host, bytes, cudaMemcpyHostToDevice, 0));
	return 0;
}

static int cuda_to_host(struct gnn_backend *b, void *dst_host, const void *src, size_t bytes,
			struct sp_err *err)
{
	GPU_CHECK(err, cudaMemcpyAsync(dst_host, src, bytes, cudaMemcpyDeviceToHost, 0));
	GPU_CHECK(err, cudaStreamSynchronize(0));
	return 0;
}

static int cuda_copy(struct gnn_backend *b, void *dst, const void *src, size_t bytes,
		     struct sp_err *err)
{
	GPU_CHECK(err, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
	return 0;
}

static int cuda_sync(struct gnn_backend *b, struct sp_err *err)
{
	GPU_CHECK(err, cudaStreamSynchronize(0));
	return 0;
}

static size_t cuda_peak_memory(struct gnn_backend *b)
{
	return impl(b)->peak;
}

/* ---- elementwise operations: one grid-stride kernel, an operation a functor ---- */

template <class F>
__global__ void __launch_bounds__(THREADS) each_kernel(int64_t count, F f)
{
	for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * THREADS)
		f(i);
}

template <class F>
static int launch_each(const struct cuda_backend *c, int64_t count, F f, const char *what,
		       struct sp_err *err)
{
	if (count <= 0)
		return 0;
	each_kernel<<<blocks_for(c, count, THREADS, 32), THREADS>>>(count, f);
	return gpu_check_status(cudaGetLastError(), what, __FILE__, __LINE__, err) ? -1 : 0;
}

struct bias_add_op {
	float *y;
	const float *bias;
	int64_t n;
	__device__ void operator()(int64_t i) const { y[i] += bias[i % n]; }
};

/* The arithmetic of these ops is in double, rounded to float once, as
 * lib/gnn_cpu.c does: the work is memory-bound, so it costs nothing, and
 * both backends agree to the last bit or close to it. */

/* beta = 0 ignores y's old contents, as BLAS does (they may be NaN). */
struct axpby_op {
	double alpha;
	const float *x;
	double beta;
	float *y;
	__device__ void operator()(int64_t i) const
	{
		y[i] = (float)(alpha * x[i] + (beta != 0.0 ? beta * y[i] : 0.0));
	}
};

struct axpy_eps_op {
	const float *eps;
	const float *x;
	float *y;
	__device__ void operator()(int64_t i) const
	{
		y[i] = (float)(y[i] + (1.0 + (double)*eps) * x[i]);
	}
};

struct relu_op {
	const float *x;
	float *y;
	/* x < 0 is false for NaN, which passes through (and shows). */
	__device__ void operator()(int64_t i) const { y[i] = x[i] < 0.0f ? 0.0f : x[i]; }
};

struct relu_backward_op {
	const float *y, *dy;
	float *dx;
	__device__ void operator()(int64_t i) const { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
};

struct dropout_op {
	const float *x;
	float *y;
	float p;
	uint64_t seed;
	/* A division, as the header writes it, in double as the CPU's: the
	 * two agree to the bit (nvcc's division is correctly rounded). */
	__device__ void operator()(int64_t i) const
	{
		y[i] = gnn_dropout_keep(seed, (uint64_t)i, p) ? (float)(x[i] / (1.0 - p)) : 0.0f;
	}
};

/* PyTorch's Adam (torch.optim.Adam, weight_decay as L2 on the gradient),
 * bc1 = 1 - beta1^t and bc2 = 1 - beta2^t the bias corrections. */
struct adam_op {
	float *param;
	const float *grad;
	float *m1, *m2;
	double lr, beta1, beta2, eps, weight_decay, bc1, bc2;
	__device__ void operator()(int64_t i) const
	{
		const double g = grad[i] + weight_decay * param[i];
		const double a = beta1 * m1[i] + (1.0 - beta1) * g;
		const double v = beta2 * m2[i] + (1.0 - beta2) * g * g;
		m1[i] = (float)a;
		m2[i] = (float)v;
		param[i] = (float)(param[i] - lr * (a / bc1) / (sqrt(v / bc2) + eps));
	}
};

static int cuda_bias_add(struct gnn_backend *b, float *y, const float *bias, int64_t m, int64_t n,
			 struct sp_err *err)
{
	return launch_each(impl(b), m * n, bias_add_op{y, bias, n}, "bias_add", err);
}

static int cuda_axpby(struct gnn_backend *b, float alpha, const float *x, float beta, float *y,
		      int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, axpby_op{alpha, x, beta, y}, "axpby", err);
}

static int cuda_axpy_eps(struct gnn_backend *b, const float *eps, const float *x, float *y,
			 int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, axpy_eps_op{eps, x, y}, "axpy_eps", err);
}

static int cuda_relu(struct gnn_backend *b, const float *x, float *y, int64_t count,
		     struct sp_err *err)
{
	return launch_each(impl(b), count, relu_op{x, y}, "relu", err);
}

static int cuda_relu_backward(struct gnn_backend *b, const float *y, const float *dy, float *dx,
			      int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, relu_backward_op{y, dy, dx}, "relu_backward", err);
}

static int cuda_dropout(struct gnn_backend *b, const float *x, float *y, int64_t count, float p,
			uint64_t seed, struct sp_err *err)
{
	if (!(p >= 0.0f && p < 1.0f))
		return sp_fail(err, "dropout: rate %g is outside [0, 1)", (double)p);
	return launch_each(impl(b), count, dropout_op{x, y, p, seed}, "dropout", err);
}

static int cuda_adam(struct gnn_backend *b, float *param, const float *grad, float *m1, float *m2,
		     int64_t count, float lr, float beta1, float beta2, float eps,
		     float weight_decay, int64_t t, struct sp_err *err)
{
	if (t < 1)
		return sp_fail(err, "adam: step %lld, expected 1 or more", (long long)t);
	const double bc1 = 1.0 - pow((double)beta1, (double)t);
	const double bc2 = 1.0 - pow((double)beta2, (double)t);
	const adam_op op = {param, grad, m1, m2, lr, beta1, beta2, eps, weight_decay, bc1, bc2};
	return launch_each(impl(b), count, op, "adam", err);
}

/* ---- reductions ---- */

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
__device__ double block_sum(double v)
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
static unsigned reduce_parts(const struct cuda_backend *c, int64_t count)
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
__global__ void column_finish_kernel(int64_t n, int chunks, const double *partials, float beta,
				     float *out)
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
	double *partials = (double *)scratch_reserve(c, (size_t)(chunks * n) * sizeof(double), err);
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

static int cuda_col_sum(struct gnn_backend *b, const float *dy, int64_t m, int64_t n, float beta,
			float *db, struct sp_err *err)
{
	return column_sum(impl(b), m, n, matrix_entry{dy, n}, beta, db, err);
}

struct product_op {
	const float *x, *y;
	__device__ double operator()(int64_t i) const { return (double)x[i] * (double)y[i]; }
};

struct store_dot {
	float *out;
	float beta;
	__device__ void operator()(double s) const
	{
		*out = (float)(beta == 0.0f ? s : (double)beta * *out + s);
	}
};

static int cuda_dot(struct gnn_backend *b, const float *x, const float *y, int64_t count,
		    float beta, float *out, struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	double *partials =
		(double *)scratch_reserve(c, reduce_parts(c, count) * sizeof(double), err);
	if (!partials)
		return -1;
	return reduce_sum(c, count, product_op{x, y}, store_dot{out, beta}, partials, err);
}

/* ---- LayerNorm: a warp a row ---- */

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

static int cuda_layernorm(struct gnn_backend *b, const float *x, const float *gamma,
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

static int cuda_layernorm_backward(struct gnn_backend *b, const float *x, const float *dy,
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

/* ---- losses: a warp a row, the count of rows in the split first ---- */

struct in_split {
	const uint8_t *mask;
	int which;
	__device__ double operator()(int64_t i) const { return mask[i] == which ? 1.0 : 0.0; }
};

struct store_count {
	double *count;
	__device__ void operator()(double s) const { *count = s; }
};

/* Softmax cross-entropy of row i against its class id: returns the lane's
 * share of the row's loss and writes the row's gradient times scale. */
struct softmax_xent_row {
	const float *logits;
	const int32_t *labels;
	__device__ double operator()(int64_t i, int c, int lane, float scale, float *g) const
	{
		const float *z = logits + i * c;
		float mx = -INFINITY;
		for (int j = lane; j < c; j += 32)
			mx = fmaxf(mx, z[j]);
		mx = warp_max(mx);
		float se = 0.0f;
		for (int j = lane; j < c; j += 32)
			se += expf(z[j] - mx);
		se = warp_sum(se);
		/* Labels are checked when the data is loaded (the CPU backend checks
		 * again); one out of range here reads nothing and makes the loss NaN. */
		const int y = labels[i];
		const float zy = y >= 0 && y < c ? z[y] : NAN;
		for (int j = lane; j < c; j += 32)
			g[j] = (expf(z[j] - mx) / se - (j == y ? 1.0f : 0.0f)) * scale;
		return lane == 0 ? (double)(mx + logf(se) - zy) : 0.0;
	}
};

/* Binary cross-entropy with logits, the stable form
 * max(z, 0) - z t + log(1 + exp(-|z|)), gradient sigmoid(z) - t. */
struct bce_row {
	const float *logits, *targets;
	__device__ double operator()(int64_t i, int c, int lane, float scale, float *g) const
	{
		double s = 0.0;
		for (int j = lane; j < c; j += 32) {
			const float z = logits[i * c + j], t = targets[i * c + j];
			const float e = expf(-fabsf(z));
			s += fmaxf(z, 0.0f) - z * t + log1pf(e);
			const float sig = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
			g[j] = (sig - t) * scale;
		}
		return s;
	}
};

/* Rows in the split get their loss and gradient (scaled by 1 / (count
 * per_row)); the others a zero gradient. partials[block] = the block's
 * loss sum. */
template <class Row>
__global__ void __launch_bounds__(THREADS)
	loss_rows_kernel(int64_t m, int c, const uint8_t *__restrict__ mask, int which, Row row,
			 double per_row, const double *count, float *dlogits, double *partials)
{
	const int lane = threadIdx.x & 31;
	const double denom = *count * per_row;
	const float scale = denom > 0 ? (float)(1.0 / denom) : 0.0f;
	double s = 0.0;
	for (int64_t i = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; i < m;
	     i += (int64_t)gridDim.x * WARPS) {
		float *g = dlogits + i * c;
		if (mask[i] == which) {
			s += row(i, c, lane, scale, g);
		} else {
			for (int j = lane; j < c; j += 32)
				g[j] = 0.0f;
		}
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s;
}

/* The mean: no rows in the split gives 0, not 0 / 0. */
struct store_loss {
	float *loss;
	const double *count;
	double per_row;
	__device__ void operator()(double s) const
	{
		*loss = *count > 0 ? (float)(s / (*count * per_row)) : 0.0f;
	}
};

/* Scratch: the count of rows in the split, then the partial sums. */
template <class Row>
static int loss(struct cuda_backend *cb, const char *op, Row row, const uint8_t *mask, int which,
		int64_t m, int c, double per_row, float *dlogits, float *loss_out,
		struct sp_err *err)
{
	if (m < 0 || c < 1)
		return sp_fail(err, "%s: %lld rows of %d classes is not a valid shape", op,
			       (long long)m, c);
	const unsigned rows_parts = blocks_for(cb, m, WARPS, 4), count_parts = reduce_parts(cb, m);
	const unsigned parts = rows_parts > count_parts ? rows_parts : count_parts;
	double *scratch = (double *)scratch_reserve(cb, (1 + (size_t)parts) * sizeof(double), err);
	if (!scratch)
		return -1;
	double *count = scratch, *partials = scratch + 1;
	if (reduce_sum(cb, m, in_split{mask, which}, store_count{count}, partials, err))
		return -1;
	loss_rows_kernel<<<rows_parts, THREADS>>>(m, c, mask, which, row, per_row, count, dlogits,
						  partials);
	GPU_CHECK_LAUNCH(err, "loss_rows_kernel");
	sum_finish_kernel<<<1, THREADS>>>(partials, (int)rows_parts,
					  store_loss{loss_out, count, per_row});
	GPU_CHECK_LAUNCH(err, "sum_finish_kernel");
	return 0;
}

static int cuda_softmax_xent(struct gnn_backend *b, const float *logits, const int32_t *labels,
			     const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
			     float *loss_out, struct sp_err *err)
{
	return loss(impl(b), "softmax_xent", softmax_xent_row{logits, labels}, mask, which, m, c,
		    1.0, dlogits, loss_out, err);
}

static int cuda_bce(struct gnn_backend *b, const float *logits, const float *targets,
		    const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
		    float *loss_out, struct sp_err *err)
{
	return loss(impl(b), "bce", bce_row{logits, targets}, mask, which, m, c, (double)c, dlogits,
		    loss_out, err);
}

/* ---- dense algebra ---- */

/* Row-major C (m x n) = alpha op(A) op(B) + beta C on column-major cuBLAS.
 * A row-major r x s matrix with rows of s floats is, read column-major,
 * its transpose (s x r, leading dimension s). So C's storage is C^T and
 * the call computes C^T = alpha op(B)^T op(A)^T + beta C^T: B first, with
 * cuBLAS's (m, n) being our (n, m), ldc = n.
 *   B is stored k x n (tb = 0) or n x k (tb = 1): read column-major it is
 *   B^T or B, and op(B)^T is wanted, so OP_N (ldb = n) or OP_T (ldb = k).
 *   A is stored m x k (ta = 0) or k x m (ta = 1): likewise OP_N with
 *   lda = k, or OP_T with lda = m.
 * The leading dimension is always the stored row length.
 * Example, a weight gradient dW (f x h) = X^T dY, X m0 x f, dY m0 x h:
 *   gemm(ta = 1, tb = 0, m = f, n = h, k = m0): cublasGemmEx(OP_N, OP_T,
 *   h, f, m0, dY, ldb = h, X, lda = f, dW, ldc = h), that is dW^T (h x f) =
 *   dY^T X (h x m0 times m0 x f). */
static int cuda_gemm(struct gnn_backend *b, int ta, int tb, int64_t m, int64_t n, int64_t k,
		     float alpha, const float *A, const float *B, float beta, float *C,
		     struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
		return sp_fail(err, "gemm: %lld x %lld x %lld is outside cuBLAS's 32-bit sizes",
			       (long long)m, (long long)n, (long long)k);
	if (m == 0 || n == 0)
		return 0;
	const int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
	/* cuBLAS wants leading dimensions of at least 1 even when k = 0. */
	GPU_CHECK(err, cublasGemmEx(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				    ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha,
				    B, CUDA_R_32F, ldb > 1 ? ldb : 1, A, CUDA_R_32F,
				    lda > 1 ? lda : 1, &beta, C, CUDA_R_32F, (int)n,
				    b->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
				    CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* ---- MaxK ---- */

static int cuda_topk(struct gnn_backend *b, const float *x, int64_t m, int h, int k, float *values,
		     uint16_t *index, struct sp_err *err)
{
	if (m > INT32_MAX)
		return sp_fail(err, "top-k: %lld rows is too many", (long long)m);
	return maxk_topk_gpu(x, m, h, k, values, index, err);
}

static int cuda_scatter(struct gnn_backend *b, const float *values, const uint16_t *index,
			int64_t m, int h, int k, float *dense, struct sp_err *err)
{
	return maxk_scatter_gpu(values, index, m, h, k, dense, err);
}

static int cuda_gather(struct gnn_backend *b, const float *dense, const uint16_t *index, int64_t m,
		       int h, int k, float *out, struct sp_err *err)
{
	return maxk_gather_gpu(dense, index, m, h, k, out, err);
}

/* ---- the graph ---- */

static void cuda_graph_free(struct gnn_backend *b, struct gnn_graph *g)
{
	if (!g)
		return;
	if (g->a)
		cusparseDestroySpMat(g->a);
	if (g->at)
		cusparseDestroySpMat(g->at);
	account(impl(b), g->d.bytes, 0);
	maxk_dev_graph_free(&g->d);
	free(g);
}

static int cuda_graph_create(struct gnn_backend *b, const struct csr *g, enum edge_norm norm,
			     const int32_t *warp4_host, int64_t records, struct gnn_graph **out,
			     struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	*out = NULL;
	if (g->nrows != g->ncols)
		return sp_fail(err, "graph_create: the graph is %lld x %lld, not square",
			       (long long)g->nrows, (long long)g->ncols);
	if (csr_validate(g, CSR_CHECK_BASIC, "graph_create", err))
		return -1;
	struct gnn_graph *gg = (struct gnn_graph *)calloc(1, sizeof *gg);
	float *vals = (float *)malloc((size_t)(g->nnz ? g->nnz : 1) * sizeof *vals);
	int32_t *built = NULL;
	int rc = -1;
	if (!gg || !vals) {
		sp_fail(err, "out of host memory for a graph of %lld edges", (long long)g->nnz);
		goto out;
	}
	edge_values(g, norm, vals);
	if (!warp4_host) {
		records = warp4_count(g->indptr, g->nrows, WARP4_DEFAULT_MAX_NZ);
		built = (int32_t *)malloc((size_t)(records ? records : 1) * 16);
		if (!built) {
			sp_fail(err, "out of host memory for %lld .warp4 records",
				(long long)records);
			goto out;
		}
		if (warp4_build(g->indptr, g->nrows, WARP4_DEFAULT_MAX_NZ, built, "graph", err))
			goto out;
		warp4_host = built;
	}
	if (maxk_dev_graph_upload(g, vals, warp4_host, records, &gg->d, err))
		goto out;
	account(c, gg->d.bytes, 1);
	/* cuSPARSE is not asked to multiply by a graph without edges: the
	 * aggregation is then zero (see spmm). */
	if (g->nnz > 0 &&
	    (GPU_FAILED(err, cusparseCreateConstCsr(&gg->a, g->nrows, g->nrows, g->nnz,
						    gg->d.indptr, gg->d.indices, gg->d.vals,
						    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
						    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F)) ||
	     GPU_FAILED(err, cusparseCreateConstCsr(&gg->at, g->nrows, g->nrows, g->nnz,
						    gg->d.t_indptr, gg->d.t_indices, gg->d.t_vals,
						    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
						    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F))))
		goto out;
	rc = 0;
out:
	free(vals);
	free(built);
	if (rc == 0)
		*out = gg;
	else if (gg && gg->d.indptr)
		cuda_graph_free(b, gg);
	else
		free(gg);
	return rc;
}

/* y (n x h) = a x, both dense row-major; a NULL means no edges. */
static int spmm(struct cuda_backend *c, cusparseConstSpMatDescr_t a, int64_t n, const float *x,
		int h, float *y, struct sp_err *err)
{
	cusparseConstDnMatDescr_t xd = NULL;
	cusparseDnMatDescr_t yd = NULL;
	const float one = 1.0f, zero = 0.0f;
	size_t bytes = 0;
	void *ws = NULL;
	int rc = -1;
	if (h < 1)
		return sp_fail(err, "aggregate: feature width %d, expected 1 or more", h);
	if (n == 0)
		return 0;
	if (!a) {
		GPU_CHECK(err, cudaMemsetAsync(y, 0, (size_t)n * h * sizeof(float), 0));
		return 0;
	}
	if (GPU_FAILED(err,
		       cusparseCreateConstDnMat(&xd, n, h, h, x, CUDA_R_32F, CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseCreateDnMat(&yd, n, h, h, y, CUDA_R_32F, CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseSpMM_bufferSize(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
						    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, xd,
						    &zero, yd, CUDA_R_32F, SPMM_ALG, &bytes)))
		goto out;
	ws = scratch_reserve(c, bytes, err);
	if (!ws || GPU_FAILED(err, cusparseSpMM(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
						CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, xd,
						&zero, yd, CUDA_R_32F, SPMM_ALG, ws)))
		goto out;
	rc = 0;
out:
	/* Host-side descriptors: the queued SpMM no longer needs them. */
	if (xd)
		cusparseDestroyDnMat(xd);
	if (yd)
		cusparseDestroyDnMat(yd);
	return rc;
}

static int cuda_aggregate(struct gnn_backend *b, const struct gnn_graph *g, const float *x, int h,
			  float *y, struct sp_err *err)
{
	return spmm(impl(b), g->a, g->d.n, x, h, y, err);
}

/* dx = A^T dy through the cached transpose: a plain (NON_TRANSPOSE) SpMM,
 * deterministic and faster than cuSPARSE's transposed one. */
static int cuda_aggregate_backward(struct gnn_backend *b, const struct gnn_graph *g,
				   const float *dy, int h, float *dx, struct sp_err *err)
{
	return spmm(impl(b), g->at, g->d.n, dy, h, dx, err);
}

static int cuda_aggregate_maxk(struct gnn_backend *b, const struct gnn_graph *g,
			       const float *values, const uint16_t *index, int h, int k, float *y,
			       struct sp_err *err)
{
	return maxk_forward_gpu(&g->d, values, index, h, k, y, err);
}

static int cuda_aggregate_maxk_backward(struct gnn_backend *b, const struct gnn_graph *g,
					const uint16_t *index, int h, int k, const float *dy,
					float *dvalues, struct sp_err *err)
{
	return maxk_backward_gpu(&g->d, index, h, k, dy, dvalues, err);
}

/* ---- the backend ---- */

static void cuda_destroy(struct gnn_backend *b)
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
	return scratch_reserve(c, SCRATCH_INITIAL, err) ? 0 : -1;
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
		.destroy = cuda_destroy,
		.alloc = cuda_alloc,
		.release = cuda_release,
		.to_device = cuda_to_device,
		.to_host = cuda_to_host,
		.copy = cuda_copy,
		.sync = cuda_sync,
		.peak_memory = cuda_peak_memory,
		.graph_create = cuda_graph_create,
		.graph_free = cuda_graph_free,
		.gemm = cuda_gemm,
		.bias_add = cuda_bias_add,
		.col_sum = cuda_col_sum,
		.axpby = cuda_axpby,
		.axpy_eps = cuda_axpy_eps,
		.dot = cuda_dot,
		.relu = cuda_relu,
		.relu_backward = cuda_relu_backward,
		.dropout = cuda_dropout,
		.layernorm = cuda_layernorm,
		.layernorm_backward = cuda_layernorm_backward,
		.topk = cuda_topk,
		.scatter = cuda_scatter,
		.gather = cuda_gather,
		.aggregate = cuda_aggregate,
		.aggregate_backward = cuda_aggregate_backward,
		.aggregate_maxk = cuda_aggregate_maxk,
		.aggregate_maxk_backward = cuda_aggregate_maxk_backward,
		.softmax_xent = cuda_softmax_xent,
		.bce = cuda_bce,
		.adam = cuda_adam,
		.tf32 = 0,
	};
	if (setup(c, err)) {
		cuda_destroy(&c->table);
		return -1;
	}
	*out = &c->table;
	return 0;
}
