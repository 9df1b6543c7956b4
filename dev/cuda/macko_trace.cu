// A per-warp timeline of the MACKO SpMV kernel (one vector), and of two
// kernels that only read as many bytes: a plain grid-stride read (the read
// floor's, stream_read.cuh) and MACKO's order of reads without the decode
// (walk_read.cuh, rows one after the other, .cs loads; in the
// pattern-misaligned run the rows start at 16- and 4-byte offsets, as
// MACKO's do). Each launch follows an L2 flush;
// the last of REPS is kept. Where a kernel loses time against a plain read (a
// late start, a slower steady rate, a long tail) shows in these files, not in
// one total time (bench/RESULTS.md, sessions 9 and 11).
//   make CUDA_ARCH=90 all    (the project's libraries)
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ilib -Ikernels -DSPKIT_CUDA=1 -o macko-trace \
//        kernels/tools/macko_trace.cu build/kernels/gpu.o build/kernels/macko_order.o \
//        -Xlinker --start-group build/libspkit.a -Xlinker --end-group -lcublas -lcusparse
// (a measurement, not part of the build: make compiles kernels/*.cu only)
//   ./macko-trace ROWS COLS DENSITY OUTDIR    writes OUTDIR/trace-{macko,read,pattern,
//                                             pattern-misaligned}-ROWSxCOLS-dDENSITY.bin
//   python3 scripts/macko-trace.py OUTDIR/trace-*.bin
// A file holds TRACE_SLOTS 64-bit words a warp (macko_trace.cuh).
#include "macko_trace.cuh"
#include "macko/macko_spmv.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" {
#include "macko/randmat.h"
}
#include "stream_read.cuh"
#include "tool_check.h"
#include "walk_read.cuh"

enum { REPS = 5, READ_BLOCKS = 264, READ_THREADS = 512, STEP_BYTES = 1280 };

static int fail(const sp_err &err)
{
	std::fprintf(stderr, "macko-trace: %s\n", err.msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: macko-trace ROWS COLS DENSITY OUTDIR\n");
		return 2;
	}
	const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
	const double density = std::atof(argv[3]);
	const char *dir = argv[4];
	if (rows < 1 || cols < 1 || !(density > 0 && density <= 1)) {
		std::fprintf(stderr, "macko-trace: ROWS and COLS must be positive, DENSITY in (0, 1]\n");
		return 2;
	}
	sp_err err = {};
	macko m;
	{
		std::vector<uint16_t> dense((size_t)rows * cols);
		randmat_fp16(dense.data(), rows, cols, density, 1);
		if (macko_compress_dense(dense.data(), rows, cols, &m, "random matrix", &err))
			return fail(err);
	}
	macko_dev d;
	if (macko_dev_upload(&m, 1, &d, &err))
		return fail(err);
	std::vector<uint16_t> xh(cols);
	for (int64_t c = 0; c < cols; c++)
		xh[c] = (uint16_t)(0x3800 | ((c * 2654435761u) & 0x3ff)); // 0.5 to 1
	void *x, *y;
	unsigned *sink;
	CHECK(cudaMalloc(&x, cols * 2));
	CHECK(cudaMalloc(&y, rows * 2));
	CHECK(cudaMalloc(&sink, 4));
	CHECK(cudaMemcpy(x, xh.data(), cols * 2, cudaMemcpyHostToDevice));

	// The read kernels move MACKO's bytes: whole 1280-byte steps, spr a row.
	const int spr = std::max(1, (int)std::lround(2.5 * d.padded / rows / STEP_BYTES));
	const size_t read_bytes = (size_t)rows * spr * STEP_BYTES;
	unsigned char *rb;
	CHECK(cudaMalloc(&rb, read_bytes + 4096));
	CHECK(cudaMemset(rb, 1, read_bytes + 4096));

	const size_t max_warps = 16384, words = max_warps * TRACE_SLOTS;
	unsigned long long *trace;
	CHECK(cudaMalloc(&trace, words * 8));
	CHECK(cudaMemcpyToSymbol(g_macko_trace, &trace, sizeof trace));
	gpu_l2_flusher flusher;
	if (gpu_l2_flusher_init(&flusher, &err))
		return fail(err);
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	std::vector<unsigned long long> host(words);

	static const char *const names[] = {"macko", "read", "pattern", "pattern-misaligned"};
	for (int k = 0; k < 4; k++) {
		std::printf("%-18s", names[k]);
		for (int rep = 0; rep < REPS; rep++) {
			if (gpu_l2_flusher_run(&flusher, &err))
				return fail(err);
			CHECK(cudaMemset(trace, 0, words * 8));
			CHECK(cudaEventRecord(e0));
			if (k == 0) {
				if (macko_dev_spmv(&d, x, 1, 1.0f, 0.0f, NULL, y, MACKO_OUT_F16, &err))
					return fail(err);
			} else if (k == 1) {
				stream_read<4><<<READ_BLOCKS, READ_THREADS>>>((const uint4 *)rb,
									      read_bytes / 16, sink);
			} else {
				walk_read<ROW_MAJOR, true><<<READ_BLOCKS, READ_THREADS>>>(
					rb, (int)rows, spr, k == 3, sink);
			}
			CHECK(cudaGetLastError());
			CHECK(cudaEventRecord(e1));
			CHECK(cudaDeviceSynchronize());
			float ms;
			CHECK(cudaEventElapsedTime(&ms, e0, e1));
			std::printf(" %8.2f", ms * 1e3);
		}
		CHECK(cudaMemcpy(host.data(), trace, words * 8, cudaMemcpyDeviceToHost));
		size_t warps = max_warps;
		while (warps > 0 && host[(warps - 1) * TRACE_SLOTS + TRACE_ENTRY] == 0)
			warps--;
		char path[4096];
		std::snprintf(path, sizeof path, "%s/trace-%s-%lldx%lld-d%g.bin", dir, names[k],
			      (long long)rows, (long long)cols, density);
		FILE *f = std::fopen(path, "wb");
		if (!f || std::fwrite(host.data(), 8, warps * TRACE_SLOTS, f) != warps * TRACE_SLOTS ||
		    std::fclose(f)) {
			std::fprintf(stderr, "macko-trace: cannot write %s\n", path);
			return 1;
		}
		std::printf(" us (%d launches, each after an L2 flush); %zu warps of the last -> %s\n",
			    REPS, warps, path);
	}
	std::printf("bytes: macko %.0f, read and pattern %zu (%d steps of %d bytes a row)\n",
		    macko_dev_bytes(&d, 1, MACKO_OUT_F16, 0), read_bytes, spr, STEP_BYTES);
	return 0;
}
