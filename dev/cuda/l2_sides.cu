// Does it matter which half of the L2 an atomic lands in? The MaxK
// backward adds 32 floats (one 128-byte line) into a random row of dX for
// every edge, and atomic_floor.cu shows those adds alone take longer than
// the backward's target. The L2 is split in two partitions; an SM reaches
// the far one through the crossbar between them. This program
//   1. times dependent L2 hits (ld.global.cg chasing a line's own address)
//      from every SM to a sample of lines, and splits SMs and lines into
//      two sides by latency;
//   2. classifies every line of a 232,965 x 128-byte array (reddit_like's
//      dX at k = 32) by its home side;
//   3. times atomic_floor's red.v4 case (114,618,749 edges, 8 lanes an edge,
//      red.global.add.v4.f32 into a hashed line of 2^16) with the lines
//      taken from either side, only the SM's own side, only the other
//      side, and (the control) lines 0 .. 2^16 - 1 without a list, by the
//      benchmarks' gpu_time (events, 3 warm-up launches, median of 9, no
//      L2 flush: dX belongs in L2).
// If "own side" is much faster than "either side", a backward that sends
// each edge to an SM near its row of dX would have a lower floor
// (bench/RESULTS.md, maxk-train, "L2 sides").
//   make dev && build/dev/l2_sides
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/gpu_check.cuh"
#include "edge_mix.cuh"
#include "probe.h"

static const int64_t NODES = 232965, EDGES = 114618749;
enum { LINE_WORDS = 32, CHASE = 16, SAMPLE = 512, BLOCK = 256, LIST = 1 << 16, WARMUP = 3, REPS = 9 };

__device__ __forceinline__ unsigned smid()
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

/* Each line's first word holds its own address: a chase stays on it. */
__global__ void link_lines(uint64_t *lines, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		lines[i * (LINE_WORDS / 2)] = (uint64_t)(lines + i * (LINE_WORDS / 2));
}

/* Cycles of one L2 hit on `line`: the mean over a chain of CHASE loads,
 * each waiting for the one before (the line holds its own address). */
__device__ uint32_t chase_cycles(const uint64_t *line)
{
	uint64_t p = (uint64_t)line;
	asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)); /* warm: in L2 */
	const uint64_t t0 = clock64();
#pragma unroll 1
	for (int i = 0; i < CHASE; i++)
		asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
	if (p == 0)
		asm volatile("trap;");
	const uint64_t t1 = clock64();
	return (uint32_t)((t1 - t0) / CHASE);
}

/* One block an SM (its shared memory sees to that), one thread of it
 * measuring: SAMPLE lines `stride` apart, or with `share` its share of
 * every line (line i to block i % gridDim). sm_of says where each ran. */
__global__ void probe(const uint64_t *lines, int64_t n, int64_t stride, uint32_t *lat, unsigned *sm_of,
		      bool share)
{
	extern __shared__ char hold[];
	if (threadIdx.x)
		return;
	hold[0] = 0;
	sm_of[blockIdx.x] = smid();
	if (!share) {
		for (int i = 0; i < SAMPLE; i++)
			lat[blockIdx.x * SAMPLE + i] = chase_cycles(lines + (int64_t)i * stride * (LINE_WORDS / 2));
	} else {
		for (int64_t i = blockIdx.x; i < n; i += gridDim.x)
			lat[i] = chase_cycles(lines + i * (LINE_WORDS / 2));
	}
}

/* atomic_floor's red.v4: 8 lanes an edge, each adding 16 bytes. The line
 * is list[which][edge_mix & (LIST - 1)], `which` chosen by mode: 0 lines
 * of either side, 1 of the SM's own side, 2 of the other side; mode 3 is
 * the control without a list: lines 0 .. LIST - 1. Every list
 * holds LIST lines (a power of two: a division per edge would make the
 * loop slower than its adds, and hide them). */
__global__ void __launch_bounds__(BLOCK) reds(float *dx, const int32_t *lists, const int8_t *side_of_sm,
					      int mode)
{
	const int s = side_of_sm[smid()];
	const int which = mode == 0 || mode == 3 ? 2 : mode == 1 ? s : 1 - s;
	const int32_t *l = lists + (size_t)which * LIST;
	const int lane = threadIdx.x & 31;
	const int64_t warps = (int64_t)gridDim.x * (BLOCK / 32);
	for (int64_t e = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) / 32 * 4 + lane / 8; e < EDGES; e += warps * 4) {
		const uint32_t at = (uint32_t)edge_mix(e) & (LIST - 1);
		const int32_t line = mode == 3 ? (int32_t)at : __ldg(l + at);
		atomicAdd((float4 *)(dx + (int64_t)line * 32) + lane % 8, make_float4(1, 1, 1, 1));
	}
}

struct reds_job {
	unsigned grid;
	float *dx;
	const int32_t *lists;
	const int8_t *side_of_sm;
	int mode;
};

static int enqueue_reds(void *ctx, struct sp_err *err)
{
	const reds_job *j = (const reds_job *)ctx;
	reds<<<j->grid, BLOCK>>>(j->dx, j->lists, j->side_of_sm, j->mode);
	GPU_CHECK_LAUNCH(err, "reds");
	return 0;
}

static int run(struct sp_err *err)
{
	int sms;
	GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	uint64_t *lines;
	GPU_CHECK(err, cudaMalloc(&lines, NODES * 128));
	link_lines<<<1024, 256>>>(lines, NODES);
	GPU_CHECK(err, cudaGetLastError());
	GPU_CHECK(err, cudaDeviceSynchronize());
	const size_t hold = 150 << 10; /* one probe block an SM */
	GPU_CHECK(err, cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)hold));
	uint32_t *lat;
	unsigned *sm_of;
	GPU_CHECK(err, cudaMalloc(&lat, std::max<size_t>((size_t)sms * SAMPLE, NODES) * 4));
	GPU_CHECK(err, cudaMalloc(&sm_of, sms * 4));

	/* 1. every SM against a sample of lines spread over the array */
	const int64_t stride = NODES / SAMPLE;
	probe<<<sms, 32, hold>>>(lines, NODES, stride, lat, sm_of, false);
	GPU_CHECK(err, cudaGetLastError());
	GPU_CHECK(err, cudaDeviceSynchronize());
	std::vector<uint32_t> a((size_t)sms * SAMPLE);
	std::vector<unsigned> where(sms);
	GPU_CHECK(err, cudaMemcpy(a.data(), lat, a.size() * 4, cudaMemcpyDeviceToHost));
	GPU_CHECK(err, cudaMemcpy(where.data(), sm_of, sms * 4, cudaMemcpyDeviceToHost));
	std::vector<uint32_t> b0(a.begin(), a.begin() + SAMPLE);
	std::sort(b0.begin(), b0.end());
	printf("block 0 (SM %u): L2 hit cycles over %d lines: min %u p10 %u p25 %u p50 %u p75 %u p90 %u max %u\n",
	       where[0], SAMPLE, b0[0], b0[SAMPLE / 10], b0[SAMPLE / 4], b0[SAMPLE / 2], b0[3 * SAMPLE / 4],
	       b0[9 * SAMPLE / 10], b0[SAMPLE - 1]);
	/* Lines near block 0: below the midpoint of its fastest and slowest. */
	const uint32_t mid0 = (b0[SAMPLE / 20] + b0[SAMPLE - 1 - SAMPLE / 20]) / 2;
	std::vector<int> near0(SAMPLE);
	for (int i = 0; i < SAMPLE; i++)
		near0[i] = a[i] < mid0;
	/* Each SM's side: block 0's if block 0's near lines are near it too. */
	std::vector<int8_t> side(256, 0);
	std::vector<double> thr(256, 0); /* by SM */
	int on_side[2] = {0, 0}, agree_min = SAMPLE;
	for (int b = 0; b < sms; b++) {
		double sn = 0, sf = 0;
		int nn = 0;
		for (int i = 0; i < SAMPLE; i++) {
			(near0[i] ? sn : sf) += a[(size_t)b * SAMPLE + i];
			nn += near0[i];
		}
		sn /= nn;
		sf /= SAMPLE - nn;
		const int s = sn < sf ? 0 : 1;
		side[where[b]] = (int8_t)s;
		on_side[s]++;
		thr[where[b]] = (sn + sf) / 2;
		int agree = 0;
		for (int i = 0; i < SAMPLE; i++)
			agree += (a[(size_t)b * SAMPLE + i] < thr[where[b]]) == (near0[i] == (s == 0));
		agree_min = std::min(agree_min, agree);
		if (b < 4 || b % 33 == 0)
			printf("block %3d SM %3u side %d: near %.0f far %.0f cycles\n", b, where[b], s,
			       std::min(sn, sf), std::max(sn, sf));
	}
	printf("SMs per side: %d / %d; lines of the sample near block 0: %d of %d; worst SM agrees on %d of %d lines\n",
	       on_side[0], on_side[1], (int)std::count(near0.begin(), near0.end(), 1), SAMPLE, agree_min, SAMPLE);

	/* 2. every line, each block measuring its share, judged by its threshold */
	probe<<<sms, 32, hold>>>(lines, NODES, 1, lat, sm_of, true);
	GPU_CHECK(err, cudaGetLastError());
	GPU_CHECK(err, cudaDeviceSynchronize());
	std::vector<uint32_t> all(NODES);
	GPU_CHECK(err, cudaMemcpy(all.data(), lat, NODES * 4, cudaMemcpyDeviceToHost));
	GPU_CHECK(err, cudaMemcpy(where.data(), sm_of, sms * 4, cudaMemcpyDeviceToHost));
	std::vector<int32_t> by_side[2];
	for (int64_t i = 0; i < NODES; i++) {
		const int b = (int)(i % sms);
		const int near = all[i] < thr[where[b]];
		const int home = near ? side[where[b]] : 1 - side[where[b]];
		by_side[home].push_back((int32_t)i);
	}
	printf("lines by home side: %zu / %zu\n", by_side[0].size(), by_side[1].size());

	/* 3. the adds: LIST lines of each kind, spread evenly over its lines;
	 * "either side" takes half from each. */
	std::vector<int32_t> lists(3 * (size_t)LIST);
	for (int s = 0; s < 2; s++) {
		const size_t n = by_side[s].size();
		if (n < LIST)
			return sp_fail(err, "side %d has %zu lines, fewer than %d", s, n, (int)LIST);
		for (int i = 0; i < LIST; i++) {
			lists[(size_t)s * LIST + i] = by_side[s][(size_t)i * n / LIST];
			if (i % 2 == s)
				lists[2 * (size_t)LIST + i] = by_side[s][(size_t)(i / 2) * n / (LIST / 2)];
		}
	}
	int32_t *dlists;
	GPU_CHECK(err, cudaMalloc(&dlists, lists.size() * 4));
	GPU_CHECK(err, cudaMemcpy(dlists, lists.data(), lists.size() * 4, cudaMemcpyHostToDevice));
	int8_t *dside;
	GPU_CHECK(err, cudaMalloc(&dside, 256));
	GPU_CHECK(err, cudaMemcpy(dside, side.data(), 256, cudaMemcpyHostToDevice));
	float *dx;
	GPU_CHECK(err, cudaMalloc(&dx, NODES * 128));
	GPU_CHECK(err, cudaMemset(dx, 0, NODES * 128)); /* the sums are not read: zeroed once */
	int per_sm;
	GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reds, BLOCK, 0));
	const unsigned grid = (unsigned)(per_sm * sms);
	const char *names[4] = {"either side", "own side", "other side", "no list"};
	for (int mode = 0; mode < 4; mode++) {
		reds_job job = {grid, dx, dlists, dside, mode};
		struct gpu_timing t;
		if (gpu_time(enqueue_reds, &job, WARMUP, REPS, 0, &t, err))
			return -1;
		printf("red.v4, 114.6M edges x 128 bytes into %d lines, %-10s: median %.3f ms (min %.3f)\n",
		       (int)LIST, names[mode], t.median_ms, t.min_ms);
	}
	return 0;
}

int main()
{
	struct sp_err err;
	return probe_exit("l2_sides", run(&err), &err);
}
