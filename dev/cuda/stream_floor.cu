// The least time one kernel launch can take to read N bytes from DRAM, timed
// by the benchmarks' own gpu_time (kernels/core/gpu.h: the L2 flushed before
// each repetition, events around the one launch, the median): a floor under
// any SpMV that must move those bytes. Also an empty kernel of MACKO's
// launch shape (two 512-thread blocks an SM, 33 KB of shared memory), the
// cost of a launch with nothing to read, and the copy bandwidth the
// benchmarks' "% of copy" divides by, measured in the same run
// (bench/RESULTS.md, macko-spmv, "Read floor").
//   make dev && build/dev/stream_floor [BYTES]...
//     default: the MACKO bytes of 28672x8192 at d = 0.1 and 0.5, and the
//     dense fp16 matrix
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/gpu_check.cuh"
#include "probe.h"
#include "stream_read.cuh"

enum { REPS = 200, WARMUP = 20, EMPTY_SMEM = 33 * 1024 };

__global__ void empty_kernel() {}

struct read_job {
	const uint4 *p;
	size_t words;
	unsigned *sink;
	int blocks, unroll;
};

static int enqueue_read(void *ctx, struct sp_err *err)
{
	const read_job *j = (const read_job *)ctx;
	if (j->unroll == 4)
		stream_read<4><<<j->blocks, 512>>>(j->p, j->words, j->sink);
	else
		stream_read<8><<<j->blocks, 512>>>(j->p, j->words, j->sink);
	GPU_CHECK_LAUNCH(err, "stream_read");
	return 0;
}

static int enqueue_empty(void *ctx, struct sp_err *err)
{
	empty_kernel<<<*(const int *)ctx, 512, EMPTY_SMEM>>>();
	GPU_CHECK_LAUNCH(err, "empty_kernel");
	return 0;
}

static int run(const std::vector<size_t> &sizes, struct sp_err *err)
{
	struct gpu_info info;
	double copy_gbs;
	if (probe_device(&info, &copy_gbs, err))
		return -1;
	std::printf("%s, %d SMs, L2 %zu MB, copy %.0f GB/s; medians of %d, L2 flushed before each\n",
		    info.name, info.sms, info.l2_bytes >> 20, copy_gbs, REPS);

	struct gpu_timing t;
	int empty_blocks = 2 * info.sms;
	GPU_CHECK(err, cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					    EMPTY_SMEM));
	if (gpu_time(enqueue_empty, &empty_blocks, WARMUP, REPS, 1, &t, err))
		return -1;
	std::printf("empty kernel, %d x 512, 33 KB shared: %.2f us (min %.2f)\n", empty_blocks,
		    t.median_ms * 1e3, t.min_ms * 1e3);

	size_t most = 0;
	for (size_t bytes : sizes)
		most = bytes > most ? bytes : most;
	void *buf = NULL, *sink = NULL;
	int rc = -1;
	if (gpu_malloc(&buf, most + 16, "bytes to read", err) || gpu_malloc(&sink, 4, "sink", err) ||
	    GPU_FAILED(err, cudaMemset(buf, 0xa5, most + 16)))
		goto done;
	for (size_t bytes : sizes) {
		double best = 1e30;
		for (int blocks_per_sm : {2, 4, 8}) {
			for (int unroll : {4, 8}) {
				read_job job = {(const uint4 *)buf, bytes / 16, (unsigned *)sink,
						info.sms * blocks_per_sm, unroll};
				if (gpu_time(enqueue_read, &job, WARMUP, REPS, 1, &t, err))
					goto done;
				const double us = t.median_ms * 1e3;
				std::printf("read %10zu bytes, %4d x 512, %d loads a thread: %8.2f us (min %8.2f), "
					    "%6.0f GB/s\n",
					    bytes, job.blocks, unroll, us, t.min_ms * 1e3, bytes / (us * 1e3));
				best = us < best ? us : best;
			}
		}
		std::printf("FLOOR %zu bytes: %.2f us, %.1f%% of copy\n", bytes, best,
			    100.0 * bytes / (best * 1e3) / copy_gbs);
	}
	rc = 0;
done:
	gpu_free(buf);
	gpu_free(sink);
	return rc;
}

int main(int argc, char **argv)
{
	std::vector<size_t> sizes;
	for (int i = 1; i < argc; i++)
		sizes.push_back(strtoull(argv[i], nullptr, 10));
	if (sizes.empty())
		sizes = {72226440, 293783620, 469762048};
	struct sp_err err;
	return probe_exit("stream_floor", run(sizes, &err), &err);
}
