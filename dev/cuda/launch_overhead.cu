// What a kernel costs beyond its work, for graph-partition's hardware files
// (launch_overhead_us): LAUNCHES back-to-back launches of an empty kernel
// from the host on one stream, for a one-block grid and a grid of 4 blocks
// an SM, and the same launches replayed from a CUDA graph; the time per
// kernel once the queue is full. Timed by the benchmarks' gpu_time (events
// around each batch of LAUNCHES, one warm-up batch, median of 7; no L2
// flush). bench/RESULTS.md, graph-partition, "Launch overhead".
//   make dev && build/dev/launch_overhead
#include <cstdio>

#include "core/gpu_check.cuh"
#include "probe.h"

enum { LAUNCHES = 20000, GRAPH_LAUNCHES = 1000, WARMUP = 1, REPS = 7 };

__global__ void empty_kernel() {}

struct launch_job {
	int grid;
	cudaGraphExec_t graph; /* NULL: launch from the host */
};

static int enqueue_launches(void *ctx, struct sp_err *err)
{
	const launch_job *j = (const launch_job *)ctx;
	if (j->graph) {
		for (int i = 0; i < LAUNCHES / GRAPH_LAUNCHES; i++)
			GPU_CHECK(err, cudaGraphLaunch(j->graph, 0));
		return 0;
	}
	for (int i = 0; i < LAUNCHES; i++)
		empty_kernel<<<j->grid, 256>>>();
	GPU_CHECK_LAUNCH(err, "empty_kernel");
	return 0;
}

static int time_launches(const char *what, launch_job *job, struct sp_err *err)
{
	struct gpu_timing t;
	if (gpu_time(enqueue_launches, job, WARMUP, REPS, 0, &t, err))
		return -1;
	const double us = 1e3 / LAUNCHES;
	std::printf("%-16s grid %4d x 256: %.2f us per kernel (min %.2f, max %.2f)\n", what, job->grid,
		    t.median_ms * us, t.min_ms * us, t.max_ms * us);
	return 0;
}

// GRAPH_LAUNCHES launches captured on a stream of their own (the legacy
// default stream cannot be captured); the graph is replayed on stream 0.
static int time_graph(launch_job *job, struct sp_err *err)
{
	cudaStream_t s;
	cudaGraph_t graph = NULL;
	GPU_CHECK(err, cudaStreamCreate(&s));
	int rc = -1;
	if (GPU_FAILED(err, cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)))
		goto done;
	for (int i = 0; i < GRAPH_LAUNCHES; i++)
		empty_kernel<<<job->grid, 256, 0, s>>>();
	if (GPU_FAILED(err, cudaStreamEndCapture(s, &graph)) ||
	    GPU_FAILED(err, cudaGraphInstantiate(&job->graph, graph, 0)))
		goto done;
	rc = time_launches("CUDA graph,", job, err);
	cudaGraphExecDestroy(job->graph);
	job->graph = NULL;
done:
	if (graph)
		cudaGraphDestroy(graph);
	cudaStreamDestroy(s);
	return rc;
}

static int run(struct sp_err *err)
{
	struct gpu_info info;
	if (gpu_query(0, &info, err))
		return -1;
	std::printf("%s, %d SMs\n", info.name, info.sms);
	const int grids[] = {1, 4 * info.sms};
	for (int grid : grids) {
		launch_job job = {grid, NULL};
		if (time_launches("stream launches,", &job, err) || time_graph(&job, err))
			return -1;
	}
	return 0;
}

int main()
{
	struct sp_err err;
	return probe_exit("launch_overhead", run(&err), &err);
}
