// What a kernel costs beyond its work, for graph-partition's hardware files
// (launch_overhead_us): back-to-back launches of an empty kernel from the
// host on one stream, timed with CUDA events (the per-launch time once the
// queue is full), for a one-block grid and a grid of 4 blocks per SM; and
// the same launches replayed from a CUDA graph. Medians of 7 runs.
//   nvcc -O2 -std=c++17 -arch=sm_90 -o launch-overhead kernels/tools/launch_overhead.cu
// (a standalone measurement, not part of the build: make compiles
// kernels/*.cu only)
//   ./launch-overhead
#include <algorithm>
#include <cstdio>
#include <vector>

#include "tool_check.h"

__global__ void empty_kernel() {}

int main()
{
	const int launches = 20000, runs = 7;
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	cudaStream_t s;
	cudaEvent_t start, stop;
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
	// the median time per kernel of launches kernels issued by issue(), in us
	auto per_kernel = [&](auto issue, float *med, float *lo, float *hi) -> cudaError_t {
		std::vector<float> us;
		for (int r = 0; r < runs; r++) {
			float ms;
			cudaEventRecord(start, s);
			issue();
			cudaEventRecord(stop, s);
			cudaError_t e = cudaEventSynchronize(stop);
			if (e != cudaSuccess || (e = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess)
				return e;
			us.push_back(ms * 1000 / launches);
		}
		std::sort(us.begin(), us.end());
		*med = us[runs / 2], *lo = us[0], *hi = us[runs - 1];
		return cudaGetLastError();
	};
	const int grids[] = {1, 4 * prop.multiProcessorCount};
	for (int grid : grids) {
		float med, lo, hi;
		for (int i = 0; i < 2000; i++) // warm-up
			empty_kernel<<<grid, 256, 0, s>>>();
		CHECK(per_kernel([&] {
			for (int i = 0; i < launches; i++)
				empty_kernel<<<grid, 256, 0, s>>>();
		}, &med, &lo, &hi));
		std::printf("stream launches, grid %4d x 256: %.2f us per kernel (min %.2f, max %.2f)\n",
			    grid, med, lo, hi);
		// the same from a CUDA graph of 1000 launches
		cudaGraph_t graph;
		cudaGraphExec_t exec;
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		for (int i = 0; i < 1000; i++)
			empty_kernel<<<grid, 256, 0, s>>>();
		CHECK(cudaStreamEndCapture(s, &graph));
		CHECK(cudaGraphInstantiate(&exec, graph, 0));
		CHECK(cudaGraphLaunch(exec, s));
		CHECK(per_kernel([&] {
			for (int i = 0; i < launches / 1000; i++)
				cudaGraphLaunch(exec, s);
		}, &med, &lo, &hi));
		std::printf("CUDA graph,      grid %4d x 256: %.2f us per kernel (min %.2f, max %.2f)\n",
			    grid, med, lo, hi);
		CHECK(cudaGraphExecDestroy(exec));
		CHECK(cudaGraphDestroy(graph));
	}
	return 0;
}
