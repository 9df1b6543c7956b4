// MACKO's walk of the rows without its decode, shared by macko_trace.cu
// (which times it with the timeline hooks on) and read_order.cu: warp g of
// W takes rows g, g + W, ...,
// `steps` steps of 1280 bytes a row (1024 of values, 256 of deltas, from
// two arrays, as MACKO's steps are), the next step in flight while the
// current one is summed over the warp. A step of the timeline is one step.
// Where the steps are stored:
//   ROW_MAJOR    a row's steps one after the other, rows one after the
//                other, as MACKO's are; `skew` bytes a row (times 16 for
//                values, 4 for deltas, modulo 61 rows) misalign them as
//                MACKO's 8-element row starts do;
//   INTERLEAVED  step k of a turn's rows (W, fewer in the last turn) side by
//                side (skew unused).
#ifndef SPKIT_WALK_READ_CUH
#define SPKIT_WALK_READ_CUH

#include <stdint.h>

#include "macko_trace.cuh"

enum walk_order { ROW_MAJOR, INTERLEAVED };

struct walk_step {
	uint4 v[2];
	uint32_t d[2];
};

// Step t of warp g: row g + (t / steps) W, its step t % steps. Values are
// rows x steps x 1024 bytes, deltas the next rows x steps x 256. EVICT_FIRST:
// .cs loads (what the probes use), else .cg (the kernel's).
template <walk_order ORDER, bool EVICT_FIRST>
__device__ __forceinline__ walk_step walk_load(const unsigned char *base, int rows, int steps,
					       int skew, int g, int W, int t, int lane)
{
	walk_step p = {};
	const int turn = t / steps, k = t % steps, row = g + turn * W;
	if (row >= rows)
		return p;
	const int in_turn = rows - turn * W < W ? rows - turn * W : W;
	const size_t at = ORDER == INTERLEAVED ? ((size_t)turn * W * steps + (size_t)k * in_turn + g)
					       : (size_t)row * steps + k;
	const size_t off = ORDER == INTERLEAVED ? 0 : (size_t)skew * (row % 61);
	const uint4 *v = (const uint4 *)(base + at * 1024 + 16 * off);
	const uint32_t *d = (const uint32_t *)(base + (size_t)rows * steps * 1024 + at * 256 + 4 * off);
	if (EVICT_FIRST) {
		p.v[0] = __ldcs(v + lane);
		p.v[1] = __ldcs(v + 32 + lane);
		p.d[0] = __ldcs(d + lane);
		p.d[1] = __ldcs(d + 32 + lane);
	} else {
		p.v[0] = __ldcg(v + lane);
		p.v[1] = __ldcg(v + 32 + lane);
		p.d[0] = __ldcg(d + lane);
		p.d[1] = __ldcg(d + 32 + lane);
	}
	return p;
}

__device__ __forceinline__ unsigned walk_fold(const walk_step &c, unsigned sum)
{
	sum += c.v[0].x ^ c.v[0].y ^ c.v[0].z ^ c.v[0].w ^ c.v[1].x ^ c.v[1].y ^ c.v[1].z ^ c.v[1].w ^
	       c.d[0] ^ c.d[1];
	return __reduce_add_sync(0xffffffffu, sum);
}

// Two buffers that trade roles (an array indexed by t would live in local
// memory). base holds rows x steps x 1280 bytes, and 240 x skew more.
template <walk_order ORDER, bool EVICT_FIRST>
__global__ void walk_read(const unsigned char *base, int rows, int steps, int skew, unsigned *out)
{
	const int lane = threadIdx.x & 31;
	TRACE_ENTER(lane);
	const int W = gridDim.x * (blockDim.x >> 5), g = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
	const int total = (rows - g + W - 1) / W * steps;
	walk_step a = walk_load<ORDER, EVICT_FIRST>(base, rows, steps, skew, g, W, 0, lane), b;
	unsigned sum = 0;
	for (int t = 0; t < total; t += 2) {
		b = walk_load<ORDER, EVICT_FIRST>(base, rows, steps, skew, g, W, t + 1, lane);
		sum = walk_fold(a, sum);
		TRACE_STEP(lane);
		if (t + 1 >= total)
			break;
		a = walk_load<ORDER, EVICT_FIRST>(base, rows, steps, skew, g, W, t + 2, lane);
		sum = walk_fold(b, sum);
		TRACE_STEP(lane);
	}
	TRACE_EXIT(lane);
	if (sum == 0x9e3779b9u)
		*out = sum;
}

#endif
