/* What kernel-sample's GPU operators share (CUDA C++, kernels/sample/ only):
 * the GPU state (a struct sample_state whose tensors are device memory,
 * plus what a family keeps beside them), the generic setup, element
 * conversions, 16-byte vectors, block reductions, the precision dispatch and
 * the column-sum finish used by the norms' and the linears' backward. */
#ifndef SPKIT_SAMPLE_GPU_CUH
#define SPKIT_SAMPLE_GPU_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "core/gpu_check.cuh"
extern "C" {
#include "sample/sample_op.h"
#include "sample/sample_spec.h"
}

/* The state: tensors first (sample_spec.h), then the family's own data
 * (cuBLASLt plans, scratch), made by its prepare and freed by release. */
struct sample_gpu_state {
	struct sample_state s;
	void *extra;
	void (*release)(void *extra);
};

/* A family's extra set-up, after the tensors exist and are filled; NULL when
 * it needs none. */
typedef int (*sample_gpu_prepare_fn)(struct sample_gpu_state *st, struct sp_err *err);

int sample_gpu_setup(sample_layout_fn layout, sample_gpu_prepare_fn prepare, const int64_t *shape,
		     enum sample_precision p, uint64_t seed, void **state, struct sp_err *err);
void sample_gpu_teardown(void *state);

/* Each family of SAMPLE_OP_LIST: forward, backward, and for some a prepare. */
#define SAMPLE_GPU_DECLARE(family)                                          \
	int sample_gpu_##family##_forward(void *state, struct sp_err *err); \
	int sample_gpu_##family##_backward(void *state, struct sp_err *err);
SAMPLE_GPU_DECLARE(embedding)
SAMPLE_GPU_DECLARE(norm)
SAMPLE_GPU_DECLARE(linear)
SAMPLE_GPU_DECLARE(gelu)
SAMPLE_GPU_DECLARE(rope)
SAMPLE_GPU_DECLARE(xent)
SAMPLE_GPU_DECLARE(softmax)
SAMPLE_GPU_DECLARE(causal_softmax)
SAMPLE_GPU_DECLARE(fillmask)
SAMPLE_GPU_DECLARE(batched)
SAMPLE_GPU_DECLARE(attention)
SAMPLE_GPU_DECLARE(causal_attention)
SAMPLE_GPU_DECLARE(moe)
SAMPLE_GPU_DECLARE(maxk)
#undef SAMPLE_GPU_DECLARE
int sample_gpu_adam_forward(void *state, struct sp_err *err);
int sample_gpu_macko_forward(void *state, struct sp_err *err);
int sample_gpu_macko_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_ksmm_forward(void *state, struct sp_err *err);
int sample_gpu_ksmm_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_moe_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_maxk_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_res_add_forward(void *state, struct sp_err *err);
int sample_gpu_embedding_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_norm_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_linear_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_batched_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_softmax_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_attention_prepare(struct sample_gpu_state *st, struct sp_err *err);
int sample_gpu_causal_attention_prepare(struct sample_gpu_state *st, struct sp_err *err);

/* The device's multiprocessor count, for grids sized to fill it. */
int sample_gpu_sms(struct sp_err *err, int *sms);
/* 0 when a block may have `bytes` of dynamic shared memory on this device;
 * else -1 with "WHAT needs N bytes of shared memory a block, this GPU
 * allows M" (a row too long for the row-cached kernels). */
int sample_gpu_smem_fits(size_t bytes, const char *what, struct sp_err *err);

template <typename T> static inline T *sample_dev(const struct sample_gpu_state *st, int i)
{
	return (T *)st->s.t[i].data;
}

/* Elements to and from fp32. */
static __device__ __forceinline__ float to_f(float x) { return x; }
static __device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
static __device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> static __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x)
{
	return __float2bfloat16_rn(x);
}

/* gelu, erf form (F.gelu's default), and its derivative Phi(x) + x phi(x). */
static __device__ __forceinline__ float gelu_f(float x)
{
	return x * (0.5f * (1.0f + erff(x * 0.70710678118654752f)));
}
static __device__ __forceinline__ float gelu_grad_f(float x)
{
	const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
	return cdf + x * expf(-0.5f * x * x) * 0.39894228040143268f;
}

/* V elements moved as one load or store: 16 bytes when V = 16 / sizeof(T). */
template <typename T, int V> struct alignas(sizeof(T) * V) vec {
	T v[V];
};
template <typename T, int V> static __device__ __forceinline__ vec<T, V> vload(const T *p)
{
	return *(const vec<T, V> *)p;
}
template <typename T, int V> static __device__ __forceinline__ void vstore(T *p, vec<T, V> x)
{
	*(vec<T, V> *)p = x;
}

/* Elements a 16-byte vector holds. */
template <typename T> __host__ __device__ constexpr int vec16() { return (int)(16 / sizeof(T)); }

/* Sums and maxima over a block; every thread gets the result. `red` is 32
 * floats of shared memory; the leading barrier lets calls follow each other. */
static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}
static __device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}
template <bool MAX> static __device__ __forceinline__ float block_reduce(float v, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
	v = MAX ? warp_max(v) : warp_sum(v);
	__syncthreads();
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	v = lane < nwarps ? red[lane] : MAX ? -INFINITY : 0.0f;
	return MAX ? warp_max(v) : warp_sum(v);
}
static __device__ __forceinline__ float block_sum(float v, float *red)
{
	return block_reduce<false>(v, red);
}
static __device__ __forceinline__ float block_max(float v, float *red)
{
	return block_reduce<true>(v, red);
}

/* Two sums at once (one pair of barriers): `red` is 64 floats. */
static __device__ __forceinline__ float2 block_sum2(float a, float b, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
	a = warp_sum(a);
	b = warp_sum(b);
	__syncthreads();
	if (lane == 0) {
		red[warp] = a;
		red[32 + warp] = b;
	}
	__syncthreads();
	return make_float2(warp_sum(lane < nwarps ? red[lane] : 0.0f),
			   warp_sum(lane < nwarps ? red[32 + lane] : 0.0f));
}

/* Threads for a block that walks a row of `nvec` vectors, about two each:
 * a multiple of 32 in [32, 512]. */
static inline int sample_row_threads(int64_t nvec)
{
	int64_t t = ((nvec + 1) / 2 + 31) / 32 * 32;
	return (int)(t < 32 ? 32 : t > 512 ? 512 : t);
}

/* Run `body` with T the state's element type: SAMPLE_DISPATCH(p, T, launch<T>(...)). */
#define SAMPLE_DISPATCH(p, T, ...)                                  \
	do {                                                        \
		switch (p) {                                        \
		case SAMPLE_FP16: {                                 \
			typedef __half T;                           \
			__VA_ARGS__;                                \
		} break;                                            \
		case SAMPLE_BF16: {                                 \
			typedef __nv_bfloat16 T;                    \
			__VA_ARGS__;                                \
		} break;                                            \
		case SAMPLE_FP32: {                                 \
			typedef float T;                            \
			__VA_ARGS__;                                \
		} break;                                            \
		}                                                   \
	} while (0)

/* out_s[j] = sum over g < parts of partial[s][g][j], for j < n and each of
 * the gridDim.y sums s (outs[s]): the last step of column sums done as
 * per-block partial sums (fp32). Blocks of COLSUM_THREADS_X x
 * COLSUM_THREADS_Y threads: 32 columns a block, each column's parts split
 * over 32 threads and added in shared memory. At 4096 columns that is 128
 * blocks a sum; the norms' two sums (weight and bias) go in one launch.
 * Measured on an H100 (2026-11-27, dev/cuda/sample_ops_time, two processes
 * each): the layernorm backward at b4 l2048 dim4096 fp16 went from
 * 124.4/122.8 us with 8 threads a column (each waiting on 66 loads in turn
 * for its 528 parts) to 118.6/118.1 us (54-55% to 57% of the copy
 * bandwidth), RMSNorm's from 88.6 to 85.0. */
#define COLSUM_THREADS_X 32
#define COLSUM_THREADS_Y 32
#define COLSUM_MAX_SUMS 2
template <typename T> struct colsum_outs {
	T *out[COLSUM_MAX_SUMS];
};

template <typename T>
static __global__ void colsum_finish(const float *__restrict__ partial, int parts, int64_t n,
				     colsum_outs<T> outs)
{
	__shared__ float sums[COLSUM_THREADS_Y][COLSUM_THREADS_X];
	const int64_t j = (int64_t)blockIdx.x * COLSUM_THREADS_X + threadIdx.x;
	const float *p = partial + (int64_t)blockIdx.y * parts * n;
	float acc = 0;
	if (j < n)
		for (int g = threadIdx.y; g < parts; g += COLSUM_THREADS_Y)
			acc += p[(int64_t)g * n + j];
	sums[threadIdx.y][threadIdx.x] = acc;
	__syncthreads();
	if (threadIdx.y == 0 && j < n) {
		for (int y = 1; y < COLSUM_THREADS_Y; y++)
			acc += sums[y][threadIdx.x];
		outs.out[blockIdx.y][j] = from_f<T>(acc);
	}
}

/* Launch colsum_finish over n columns for one sum (out1 NULL) or two, the
 * second's partials right after the first's (parts x n floats each). */
template <typename T>
static inline void colsum_finish_launch(const float *partial, int parts, int64_t n, T *out0,
					T *out1)
{
	const dim3 block(COLSUM_THREADS_X, COLSUM_THREADS_Y);
	const dim3 grid((unsigned)((n + COLSUM_THREADS_X - 1) / COLSUM_THREADS_X), out1 ? 2 : 1);
	colsum_outs<T> outs = {{out0, out1}};
	colsum_finish<T><<<grid, block>>>(partial, parts, n, outs);
}

#endif
