/* What the MaxK kernels (maxk_topk.cu, maxk_scatter.cu, maxk_forward.cu,
 * maxk_backward.cu) share: the block shape, the grid of a grid-stride loop,
 * and the kept columns' index type. Private to kernels/maxk/; the C
 * interface is maxk_gpu.h. */
#ifndef SPKIT_MAXK_KERNELS_CUH
#define SPKIT_MAXK_KERNELS_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_gpu.h"

enum { WARPS = 8, BLOCK = 32 * WARPS };

/* Blocks for `items` work items taken `per_block` at a time, capped: every
 * kernel here loops over its items with a grid stride, so the cap only
 * bounds the launch, and at least one block runs. */
static inline unsigned grid_for(int64_t items, int per_block, int64_t cap)
{
	const int64_t b = (items + per_block - 1) / per_block;
	return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

/* f called with index as the kept columns' own type: 8-bit when h <= 256,
 * 16-bit above (maxk_index_bytes), decided here once for every launcher.
 * 8 bits cost the forward its unpacking and spare the backward L2 traffic
 * (bench/RESULTS.md, maxk-train, "Index width"). */
template <typename F>
static auto with_index(int h, void *index, F f)
{
	return maxk_index_bytes(h) == 1 ? f((uint8_t *)index) : f((uint16_t *)index);
}

template <typename F>
static auto with_index(int h, const void *index, F f)
{
	return maxk_index_bytes(h) == 1 ? f((const uint8_t *)index) : f((const uint16_t *)index);
}

#endif
