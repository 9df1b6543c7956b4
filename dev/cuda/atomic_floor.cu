// The floor under the MaxK backward's scatter form: what the GPU takes to
// add one row of k = 32 floats (128 bytes) into a random row of dX
// (reddit_like: 232,965 x 32 floats, 29.8 MB, which stays in L2) for each of
// 114,618,749 edges, with nothing else to do: no edge list, no indices, no
// dY (the row is a hash of the edge). Timed side by side:
//   red.v4   8 lanes an edge, red.global.add.v4.f32 (the backward's adds)
//   red.f32  32 lanes an edge, one float each
//   bulk     one lane an edge hands a 128-byte buffer in shared memory to
//            cp.reduce.async.bulk .add.f32
//   st.v4    8 lanes an edge, plain 16-byte stores (not atomic, so not
//            the same sums: the L2 write floor for the same traffic)
// Each kernel runs as many blocks as are resident at once, timed by the
// benchmarks' gpu_time (events, 3 warm-up launches, median of 9; no L2
// flush: dX belongs in L2). bench/RESULTS.md, maxk-train, "Atomic floor".
//   make dev && build/dev/atomic_floor
#include <cstdint>
#include <cstdio>

#include "core/gpu_check.cuh"
#include "edge_mix.cuh"
#include "probe.h"

enum { K = 32, BLOCK = 256, WARMUP = 3, REPS = 9 };
static const int64_t NODES = 232965, EDGES = 114618749;

__device__ __forceinline__ uint32_t row_of(int64_t e)
{
	return (uint32_t)(edge_mix(e) % (uint64_t)NODES);
}

__global__ void red_v4(float *dx)
{
	const int sub = threadIdx.x & 7;
	for (int64_t e = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 3; e < EDGES;
	     e += ((int64_t)gridDim.x * BLOCK) >> 3)
		atomicAdd((float4 *)(dx + (size_t)row_of(e) * K) + sub, make_float4(1, 1, 1, 1));
}

__global__ void red_f32(float *dx)
{
	const int lane = threadIdx.x & 31;
	for (int64_t e = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; e < EDGES;
	     e += ((int64_t)gridDim.x * BLOCK) >> 5)
		atomicAdd(dx + (size_t)row_of(e) * K + lane, 1.0f);
}

__global__ void st_v4(float *dx)
{
	const int sub = threadIdx.x & 7;
	for (int64_t e = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 3; e < EDGES;
	     e += ((int64_t)gridDim.x * BLOCK) >> 3)
		((float4 *)(dx + (size_t)row_of(e) * K))[sub] = make_float4(1, 1, 1, 1);
}

// Each lane owns two 128-byte buffers and alternates; it waits for the
// engine to have read a buffer before writing it again.
__global__ void bulk(float *dx)
{
	__shared__ float4 buf[BLOCK / 2][2][K / 4]; /* launched with BLOCK / 2 threads */
	int set = 0;
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < EDGES;
	     e += (int64_t)gridDim.x * blockDim.x) {
		asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
		for (int i = 0; i < K / 4; i++)
			buf[threadIdx.x][set][i] = make_float4(1, 1, 1, 1);
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
		asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
			     :
			     : "l"(dx + (size_t)row_of(e) * K),
			       "r"((uint32_t)__cvta_generic_to_shared(buf[threadIdx.x][set])),
			       "r"(K * 4)
			     : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		set ^= 1;
	}
	asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

struct add_job {
	void (*kernel)(float *);
	int grid, threads;
	float *dx;
};

static int enqueue_adds(void *ctx, struct sp_err *err)
{
	const add_job *j = (const add_job *)ctx;
	j->kernel<<<j->grid, j->threads>>>(j->dx);
	GPU_CHECK_LAUNCH(err, "atomic_floor kernel");
	return 0;
}

static int run(float *dx, size_t bytes, struct sp_err *err)
{
	struct gpu_info info;
	if (gpu_query(0, &info, err))
		return -1;
	std::printf("%s, %d SMs, L2 %zu MB; %lld edges x %d floats into %lld x %d (%.1f MB)\n",
		    info.name, info.sms, info.l2_bytes >> 20, (long long)EDGES, K, (long long)NODES,
		    K, bytes / 1e6);
	GPU_CHECK(err, cudaMemset(dx, 0, bytes));
	const struct {
		const char *name;
		void (*kernel)(float *);
	} runs[] = {{"red.v4", red_v4}, {"red.f32", red_f32}, {"bulk", bulk}, {"st.v4", st_v4}};
	for (const auto &r : runs) {
		// as many blocks as are resident at once (the bulk kernel's shared
		// buffers allow fewer than the others)
		add_job job = {r.kernel, 0, r.kernel == bulk ? BLOCK / 2 : BLOCK, dx};
		int per_sm;
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, r.kernel,
									     job.threads, 0));
		job.grid = info.sms * per_sm;
		struct gpu_timing t;
		if (gpu_time(enqueue_adds, &job, WARMUP, REPS, 0, &t, err))
			return -1;
		std::printf("%-8s median %.3f ms (min %.3f, max %.3f)  %.0f GB/s of adds\n", r.name,
			    t.median_ms, t.min_ms, t.max_ms, (double)EDGES * K * 4 / (t.median_ms * 1e6));
	}
	return 0;
}

int main()
{
	const size_t bytes = (size_t)NODES * K * sizeof(float);
	void *dx = NULL;
	struct sp_err err;
	const int failed = gpu_malloc(&dx, bytes, "dX", &err) || run((float *)dx, bytes, &err);
	gpu_free(dx);
	return probe_exit("atomic_floor", failed, &err);
}
