// The read floor's kernel (stream_floor.cu), shared with macko_trace.cu,
// which times it with the timeline hooks on:
// reads n 16-byte words, grid-stride, UNROLL independent loads in flight a
// thread; the sum keeps the loads alive. A step of the timeline is one
// round of UNROLL loads.
#ifndef SPKIT_STREAM_READ_CUH
#define SPKIT_STREAM_READ_CUH

#include "macko_trace.cuh"

template <int UNROLL> __global__ void stream_read(const uint4 *__restrict__ p, size_t n, unsigned *out)
{
	const int lane = threadIdx.x & 31;
	TRACE_ENTER(lane);
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned sum = 0;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
		uint4 v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = __ldcs(p + i + u * stride);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			sum += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
		TRACE_STEP(lane);
	}
	for (; i < n; i += stride)
		sum += __ldcs(&p[i].x);
	TRACE_EXIT(lane);
	if (sum == 0x9e3779b9u)
		*out = sum;
}

#endif
