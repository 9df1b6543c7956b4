// Whether the order of MACKO's reads costs time, without its decode: three
// kernels read ROWS x STEPS steps of 1280 bytes (1024 of values, 256 of
// deltas, from two arrays, as MACKO's steps are) on 264 blocks of 512
// threads, each launch after an L2 flush (kernels/gpu.cu), medians of REPS:
//   read         a plain grid-stride read of the same bytes (stream_read.cuh);
//   rowmajor     MACKO's order: warp g of W takes rows g, g + W, ..., a step
//                at a time, with the next step in flight; a row's steps are
//                stored one after the other, rows one after the other;
//   interleaved  the same walk, but step k of the W rows of a turn stored
//                side by side, so the warps, at about the same step, read
//                one contiguous region (bench/RESULTS.md, session 16).
//   make CUDA_ARCH=90 all    (the project's libraries)
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ilib -Ikernels -o read-order kernels/tools/read_order.cu \
//        -Xlinker --start-group build/libspkit_cuda.a build/libspkit.a -Xlinker --end-group \
//        -lcublas -lcusparse
// (a measurement, not part of the build: make compiles kernels/*.cu only)
//   ./read-order ROWS STEPS [REPS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdint.h>
#include <vector>

extern "C" {
#include "gpu.h"
}
#include "stream_read.cuh"
#include "tool_check.h"

enum { BLOCKS = 264, THREADS = 512 };

struct step {
	uint4 v[2];
	uint32_t d[2];
};

// Step t of warp g (row g + (t / steps) W, its step t % steps); values are
// rows x steps x 1024 bytes, deltas the next rows x steps x 256.
template <bool INTERLEAVED>
__device__ __forceinline__ step load(const unsigned char *base, int rows, int steps, int g, int W,
				     int t, int lane)
{
	step p = {};
	const int turn = t / steps, k = t % steps, row = g + turn * W;
	if (row >= rows)
		return p;
	const size_t at = INTERLEAVED ? ((size_t)turn * steps + k) * W + g : (size_t)row * steps + k;
	const uint4 *v = (const uint4 *)(base + at * 1024);
	const uint32_t *d = (const uint32_t *)(base + (size_t)rows * steps * 1024 + at * 256);
	p.v[0] = __ldcg(v + lane);
	p.v[1] = __ldcg(v + 32 + lane);
	p.d[0] = __ldcg(d + lane);
	p.d[1] = __ldcg(d + 32 + lane);
	return p;
}

__device__ __forceinline__ unsigned fold(const step &c, unsigned sum)
{
	sum += c.v[0].x ^ c.v[0].y ^ c.v[0].z ^ c.v[0].w ^ c.v[1].x ^ c.v[1].y ^ c.v[1].z ^ c.v[1].w ^
	       c.d[0] ^ c.d[1];
	return __reduce_add_sync(0xffffffffu, sum);
}

// MACKO's pipeline without its decode: two buffers that trade roles.
template <bool INTERLEAVED>
__global__ void walk(const unsigned char *base, int rows, int steps, unsigned *out)
{
	const int lane = threadIdx.x & 31;
	const int W = gridDim.x * (blockDim.x >> 5), g = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
	const int total = (rows - g + W - 1) / W * steps;
	step a = load<INTERLEAVED>(base, rows, steps, g, W, 0, lane), b;
	unsigned sum = 0;
	for (int t = 0; t < total; t += 2) {
		b = load<INTERLEAVED>(base, rows, steps, g, W, t + 1, lane);
		sum = fold(a, sum);
		if (t + 1 >= total)
			break;
		a = load<INTERLEAVED>(base, rows, steps, g, W, t + 2, lane);
		sum = fold(b, sum);
	}
	if (sum == 0x9e3779b9u)
		*out = sum;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		std::fprintf(stderr, "usage: read-order ROWS STEPS [REPS]\n");
		return 2;
	}
	const int rows = std::atoi(argv[1]), steps = std::atoi(argv[2]);
	const int reps = argc > 3 ? std::atoi(argv[3]) : 30;
	if (rows < 1 || steps < 1 || reps < 1 || (double)rows * steps * 1280 > 8e9) {
		std::fprintf(stderr, "read-order: ROWS, STEPS and REPS must be positive, and the bytes "
				     "at most 8 GB\n");
		return 2;
	}
	const size_t bytes = (size_t)rows * steps * 1280;
	unsigned char *data;
	unsigned *sink;
	CHECK(cudaMalloc(&data, bytes));
	CHECK(cudaMemset(data, 1, bytes));
	CHECK(cudaMalloc(&sink, 4));
	sp_err err = {};
	gpu_l2_flusher flusher;
	if (gpu_l2_flusher_init(&flusher, &err)) {
		std::fprintf(stderr, "read-order: %s\n", err.msg);
		return 1;
	}
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	static const char *const names[] = {"read", "rowmajor", "interleaved"};
	std::vector<float> us[3];
	for (int rep = 0; rep < reps + 3; rep++) // the first 3 are a warm-up
		for (int k = 0; k < 3; k++) {
			if (gpu_l2_flusher_run(&flusher, &err)) {
				std::fprintf(stderr, "read-order: %s\n", err.msg);
				return 1;
			}
			CHECK(cudaEventRecord(e0));
			if (k == 0)
				stream_read<4><<<BLOCKS, THREADS>>>((const uint4 *)data, bytes / 16, sink);
			else if (k == 1)
				walk<false><<<BLOCKS, THREADS>>>(data, rows, steps, sink);
			else
				walk<true><<<BLOCKS, THREADS>>>(data, rows, steps, sink);
			CHECK(cudaGetLastError());
			CHECK(cudaEventRecord(e1));
			CHECK(cudaEventSynchronize(e1));
			float ms;
			CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (rep >= 3)
				us[k].push_back(ms * 1e3f);
		}
	std::printf("rows %d steps %d (%.1f MB):", rows, steps, bytes / 1e6);
	for (int k = 0; k < 3; k++) {
		std::sort(us[k].begin(), us[k].end());
		std::printf(" %s %.2f", names[k], us[k][us[k].size() / 2]);
	}
	std::printf(" us, medians of %d\n", reps);
	gpu_l2_flusher_free(&flusher);
	return 0;
}
