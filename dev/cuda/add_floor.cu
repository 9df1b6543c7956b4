// How fast one launch can do the residual sum y = a + b at fp16 (the
// kernel-sample res_add operator: 2 reads and 1 write of N elements), over
// the launch shapes an elementwise kernel can take, timed by the
// benchmarks' own gpu_time (L2 flushed, events, medians), beside the copy
// bandwidth "% of copy" divides by (bench/RESULTS.md, kernel-sample, res_add).
//   make dev && build/dev/add_floor [ELEMENTS [random|ones [one|separate]]]
//   (default 4 x 2048 x 4096; the inputs all 1.0 unless `random`: uniform in
//   [-1, 1) from a hash; a, b and y in one allocation unless `separate`)
// Shapes: each thread UNROLL 16-byte vectors a block-width apart (what
// kernels/sample/sample_pointwise.cu does, 256 x 4), the same vectors
// contiguous in a thread, and a grid of a few blocks an SM striding over
// the whole array.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_fp16.h>

#include "core/gpu_check.cuh"
#include "probe.h"

enum { REPS = 100, WARMUP = 10 };
enum add_shape { SPREAD, CONTIGUOUS, STRIDED };

static __device__ __forceinline__ uint4 add8(uint4 a, uint4 b)
{
	uint4 o;
	const __half2 *x = (const __half2 *)&a, *y = (const __half2 *)&b;
	__half2 *z = (__half2 *)&o;
#pragma unroll
	for (int i = 0; i < 4; i++)
		z[i] = __float22half2_rn(make_float2(__low2float(x[i]) + __low2float(y[i]),
						     __high2float(x[i]) + __high2float(y[i])));
	return o;
}

// Vectors i0 + u * step for u < U, all loaded before any is added.
template <int U>
static __device__ __forceinline__ void add_run(const uint4 *a, const uint4 *b, uint4 *y,
					       int64_t i0, int64_t step, int64_t n)
{
	uint4 av[U], bv[U];
#pragma unroll
	for (int u = 0; u < U; u++)
		if (i0 + u * step < n) {
			av[u] = __ldg(a + i0 + u * step);
			bv[u] = __ldg(b + i0 + u * step);
		}
#pragma unroll
	for (int u = 0; u < U; u++)
		if (i0 + u * step < n)
			y[i0 + u * step] = add8(av[u], bv[u]);
}

template <int U, int SHAPE>
static __global__ void add_kernel(const uint4 *a, const uint4 *b, uint4 *y, int64_t n)
{
	const int64_t per_block = (int64_t)blockDim.x * U;
	if (SHAPE == SPREAD)
		add_run<U>(a, b, y, blockIdx.x * per_block + threadIdx.x, blockDim.x, n);
	else if (SHAPE == CONTIGUOUS)
		add_run<U>(a, b, y, (blockIdx.x * per_block) + threadIdx.x * U, 1, n);
	else
		for (int64_t s = blockIdx.x * per_block + threadIdx.x; s < n; s += gridDim.x * per_block)
			add_run<U>(a, b, y, s, blockDim.x, n);
}

static __global__ void fill_random(__half *p, int64_t count)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * blockDim.x) {
		uint32_t h = (uint32_t)i * 2654435761u;
		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		p[i] = __float2half((float)(h & 0xffff) / 32768.0f - 1.0f);
	}
}

struct add_job {
	const uint4 *a, *b;
	uint4 *y;
	int64_t n;
	int threads, unroll, shape, blocks;
};

template <int SHAPE> static void launch(const add_job *j)
{
	switch (j->unroll) {
	case 1: add_kernel<1, SHAPE><<<j->blocks, j->threads>>>(j->a, j->b, j->y, j->n); break;
	case 2: add_kernel<2, SHAPE><<<j->blocks, j->threads>>>(j->a, j->b, j->y, j->n); break;
	case 4: add_kernel<4, SHAPE><<<j->blocks, j->threads>>>(j->a, j->b, j->y, j->n); break;
	default: add_kernel<8, SHAPE><<<j->blocks, j->threads>>>(j->a, j->b, j->y, j->n); break;
	}
}

static int enqueue_add(void *ctx, struct sp_err *err)
{
	const add_job *j = (const add_job *)ctx;
	if (j->shape == SPREAD)
		launch<SPREAD>(j);
	else if (j->shape == CONTIGUOUS)
		launch<CONTIGUOUS>(j);
	else
		launch<STRIDED>(j);
	GPU_CHECK_LAUNCH(err, "add_kernel");
	return 0;
}

static int run(int64_t elements, bool random, bool separate, struct sp_err *err)
{
	struct gpu_info info;
	double copy_gbs;
	if (probe_device(&info, &copy_gbs, err))
		return -1;
	const int64_t n = elements / 8;
	const double bytes = 3.0 * n * 16;
	std::printf("%s, %d SMs, copy %.0f GB/s; y = a + b over %lld fp16 (%.1f MB moved), "
		    "inputs %s; medians of %d, L2 flushed before each\n",
		    info.name, info.sms, copy_gbs, (long long)(n * 8), bytes / 1e6,
		    random ? "random" : "all 1.0", REPS);
	void *buf[3] = {NULL, NULL, NULL};
	int rc = -1;
	if (separate) {
		for (int i = 0; i < 3; i++)
			if (gpu_malloc(&buf[i], n * 16, "a, b or y", err))
				goto done;
	} else if (gpu_malloc(&buf[0], 3 * n * 16, "a, b and y", err)) {
		goto done;
	} else {
		buf[1] = (uint4 *)buf[0] + n;
		buf[2] = (uint4 *)buf[0] + 2 * n;
	}
	for (int i = 0; i < 3; i++) {
		if (GPU_FAILED(err, cudaMemset(buf[i], 0x3c, n * 16)))
			goto done;
		if (random && i < 2)
			fill_random<<<1024, 256>>>((__half *)buf[i], n * 8);
	}
	if (GPU_FAILED(err, cudaDeviceSynchronize()))
		goto done;
	std::printf("a %p, b %p, y %p\n", buf[0], buf[1], buf[2]);
	{
		const uint4 *a = (const uint4 *)buf[0], *b = (const uint4 *)buf[1];
		uint4 *y = (uint4 *)buf[2];
		const char *names[] = {"spread", "contiguous", "strided"};
		for (int shape = SPREAD; shape <= STRIDED; shape++)
			for (int threads : {128, 256, 512})
				for (int unroll : {1, 2, 4, 8})
					for (int per_sm : {0, 4, 8, 16}) {
						if ((shape == STRIDED) != (per_sm != 0))
							continue;
						const int64_t per_block = (int64_t)threads * unroll;
						add_job job = {a, b, y, n, threads, unroll, shape,
							       per_sm ? per_sm * info.sms
								      : (int)((n + per_block - 1) / per_block)};
						struct gpu_timing t;
						if (gpu_time(enqueue_add, &job, WARMUP, REPS, 1, &t, err))
							goto done;
						const double us = t.median_ms * 1e3;
						std::printf("%-10s %3d threads x %d vectors, %6d blocks: %7.2f us "
							    "(min %7.2f), %5.1f%% of copy\n",
							    names[shape], threads, unroll, job.blocks, us,
							    t.min_ms * 1e3, 100.0 * bytes / (us * 1e3) / copy_gbs);
					}
	}
	rc = 0;
done:
	gpu_free(buf[0]);
	if (separate) {
		gpu_free(buf[1]);
		gpu_free(buf[2]);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const int64_t elements = argc > 1 ? strtoll(argv[1], nullptr, 10) : 4LL * 2048 * 4096;
	const bool random = argc > 2 && !strcmp(argv[2], "random");
	const bool separate = argc > 3 && !strcmp(argv[3], "separate");
	struct sp_err err;
	if (elements < 8 || elements % 8) {
		std::fprintf(stderr, "add_floor: ELEMENTS must be a positive multiple of 8\n");
		return 2;
	}
	return probe_exit("add_floor", run(elements, random, separate, &err), &err);
}
