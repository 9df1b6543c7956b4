// Whether the order of MACKO's reads costs time, without its decode: three
// kernels read ROWS x STEPS steps of 1280 bytes on 264 blocks of 512
// threads, each launch after an L2 flush (kernels/gpu.cu), medians of REPS:
//   read         a plain grid-stride read of the same bytes (stream_read.cuh);
//   rowmajor     MACKO's walk of the rows (walk_read.cuh), a row's steps
//                stored one after the other, rows one after the other;
//   interleaved  the same walk, step k of a turn's rows stored side by
//                side, so the warps, at about the same step, read one
//                contiguous region (bench/RESULTS.md, session 16).
// All three with .cs loads (evict first), so only the order differs.
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
#include "walk_read.cuh"

enum { BLOCKS = 264, THREADS = 512 };

// A whole positive decimal number of at most 9 digits, else -1.
static long positive(const char *s)
{
	char *end;
	const long v = std::strtol(s, &end, 10);
	return end != s && !*end && v > 0 && v < 1000000000 ? v : -1;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		std::fprintf(stderr, "usage: read-order ROWS STEPS [REPS]\n");
		return 2;
	}
	const long rows = positive(argv[1]), steps = positive(argv[2]);
	const long reps = argc > 3 ? positive(argv[3]) : 30;
	if (rows < 1 || steps < 1 || reps < 1 || (double)rows * steps * 1280 > 8e9) {
		std::fprintf(stderr, "read-order: ROWS, STEPS and REPS must be whole positive numbers, "
				     "and the bytes at most 8 GB\n");
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
				walk_read<ROW_MAJOR, true><<<BLOCKS, THREADS>>>(data, (int)rows, (int)steps, 0,
										 sink);
			else
				walk_read<INTERLEAVED, true><<<BLOCKS, THREADS>>>(data, (int)rows, (int)steps,
										  0, sink);
			CHECK(cudaGetLastError());
			CHECK(cudaEventRecord(e1));
			CHECK(cudaEventSynchronize(e1));
			float ms;
			CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (rep >= 3)
				us[k].push_back(ms * 1e3f);
		}
	std::printf("rows %ld steps %ld (%.1f MB):", rows, steps, bytes / 1e6);
	for (int k = 0; k < 3; k++) {
		std::sort(us[k].begin(), us[k].end());
		std::printf(" %s %.2f", names[k], us[k][us[k].size() / 2]);
	}
	std::printf(" us, medians of %ld\n", reps);
	gpu_l2_flusher_free(&flusher);
	return 0;
}
