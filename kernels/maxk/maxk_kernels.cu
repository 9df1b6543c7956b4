/* MaxK-GNN kernels: right for every k (1..h), every graph (empty rows,
 * rows of any degree) and any n.
 *
 * top-k: one warp per row, the row's keys in registers (32 columns a
 *   lane); a radix select over the key bits (one warp reduction a bit,
 *   starting below the bits the answer must share with bounds taken from
 *   the lanes' largest keys, and stopping at the first bit after which
 *   exactly k keys are at or above the prefix) finds the threshold, then
 *   the row is written in column order: every key above it, and of the
 *   keys equal to it the first ones by column. Bytes: the matrix once, the
 *   k kept values and indices once.
 * forward: one warp per work item (a row, or a piece of a long row): the
 *   neighbours' kept values are added into a row accumulator in shared
 *   memory and the row is stored once (added with atomics when the row is
 *   cut; only those rows, and empty ones, are zeroed first). The kept
 *   values (n x k) stay in L2, so the gathers are L2 traffic; the loop
 *   keeps several in flight.
 * backward: the same items, dY's row staged in shared memory, each
 *   neighbour's k gradients added into dX with atomics (dX, n x k, stays
 *   in L2). A gather through the cached transpose is kept to be measured
 *   beside it: it reads dY scattered, from DRAM. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_gpu.h"

enum { WARPS = 8, BLOCK = 32 * WARPS };

/* Blocks for `items` work items taken `per_block` at a time, capped: every
 * kernel here loops over its items with a grid stride, so the cap only
 * bounds the launch, and at least one block runs. */
static unsigned grid_for(int64_t items, int per_block, int64_t cap)
{
	const int64_t b = (items + per_block - 1) / per_block;
	return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

/* f called with index as the kept columns' own type: 8-bit when h <= 256,
 * 16-bit above (maxk_index_bytes), decided here once for every launcher. */
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

/* A float's order as an unsigned key; NaN above everything, like the CPU
 * reference, so it is kept and propagates; -0 equal to +0 (a tie, settled
 * by column as the reference does). Adding +0 turns -0 into +0 (round to
 * nearest), and the flip is one shift and one three-input logic op: top-k
 * issues an instruction on about 86% of its cycles, so every instruction a
 * key counts. */
__device__ __forceinline__ uint32_t order_key(float f)
{
	const uint32_t b = __float_as_uint(f + 0.0f);
	const uint32_t flip = (uint32_t)((int32_t)b >> 31) | 0x80000000u;
	return f != f ? 0xffffffffu : b ^ flip;
}

/* Registers for top-k's M keys a lane: with h <= 256 (M <= 8), 32
 * registers give 8 blocks an SM (64 warps), which hides the row loads
 * better than 5 blocks at the 45 the compiler would take (0.205 against
 * 0.213 ms at k = 64 on 232,965 x 256). More keys need more registers. */
template <int M> constexpr int topk_min_blocks() { return M <= 8 ? 8 : M == 16 ? 4 : 2; }

/* FULL: h == 32 M, so no column needs a bounds test. */
template <int M, bool FULL, typename IT>
__global__ void __launch_bounds__(BLOCK, topk_min_blocks<M>())
topk_kernel(const float *__restrict__ x, int n, int h, int k, float *__restrict__ values,
	    IT *__restrict__ index)
{
	const int lane = threadIdx.x & 31;
	for (int i = (blockIdx.x * BLOCK + threadIdx.x) >> 5; i < n; i += gridDim.x * WARPS) {
		const float *row = x + (size_t)i * h;
		uint32_t key[M];
		float val[M];
#pragma unroll
		for (int m = 0; m < M; m++) {
			const int c = 32 * m + lane;
			val[m] = FULL || c < h ? row[c] : 0.0f;
			key[m] = FULL || c < h ? order_key(val[m]) : 0; /* real keys are never 0 */
		}
		/* The k-th largest key lies between lo and hi, so it shares their
		 * common leading bits, and the select starts below them: the 32
		 * lanes' largest keys (two largest when k <= 64) are k keys at or
		 * above their minimum. A lane without real keys gives lo = 0.
		 * Above the largest of the lanes' second keys lie at most 32 keys
		 * (one a lane), so for k > 32 it bounds the k-th from above. */
		uint32_t first = 0, second = 0;
#pragma unroll
		for (int m = 0; m < M; m++) {
			second = max(second, min(first, key[m]));
			first = max(first, key[m]);
		}
		const uint32_t lo = __reduce_min_sync(0xffffffffu, k <= 32 ? first : k <= 64 ? second : 0);
		const uint32_t hi = __reduce_max_sync(0xffffffffu, k <= 32 ? first : second);
		const int top = lo == hi ? -1 : 31 - __clz(lo ^ hi);
		uint32_t kth = top < 0 ? lo : lo & ~((2u << top) - 1);
		bool exact = false;
		for (int bit = top; bit >= 0; bit--) {
			const uint32_t cand = kth | (1u << bit);
			unsigned cnt = 0;
#pragma unroll
			for (int m = 0; m < M; m++)
				cnt += key[m] >= cand;
			const unsigned at_or_above = __reduce_add_sync(0xffffffffu, cnt);
			if (at_or_above >= (unsigned)k)
				kth = cand;
			exact = at_or_above == (unsigned)k;
			if (exact)
				break;
		}
		/* Exactly k keys at or above kth (the usual end): keep them. Else
		 * the ties at kth are settled by column. */
		int ties_kept = 0;
		if (!exact) {
			unsigned above = 0;
#pragma unroll
			for (int m = 0; m < M; m++)
				above += key[m] > kth;
			ties_kept = k - (int)__reduce_add_sync(0xffffffffu, above);
		}
		int written = 0, ties_seen = 0;
		const unsigned lower = (1u << lane) - 1;
		float *row_values = values + (size_t)i * k;
		IT *row_index = index + (size_t)i * k;
#pragma unroll
		for (int m = 0; m < M; m++) {
			bool keep = key[m] >= kth;
			if (!exact) {
				const bool tie = key[m] == kth;
				const unsigned ties = __ballot_sync(0xffffffffu, tie);
				keep = key[m] > kth ||
				       (tie && ties_seen + __popc(ties & lower) < ties_kept);
				ties_seen += __popc(ties);
			}
			const unsigned kept = __ballot_sync(0xffffffffu, keep);
			if (keep) {
				const int at = written + __popc(kept & lower);
				row_values[at] = val[m];
				row_index[at] = (IT)(32 * m + lane);
			}
			written += __popc(kept);
		}
	}
}

template <int M>
static int launch_topk(const float *x, int64_t n, int h, int k, float *values, void *index,
		       struct sp_err *err)
{
	const unsigned grid = grid_for(n, WARPS, 65535 * 8);
	with_index(h, index, [&](auto ix) {
		if (h == 32 * M)
			topk_kernel<M, true><<<grid, BLOCK>>>(x, (int)n, h, k, values, ix);
		else
			topk_kernel<M, false><<<grid, BLOCK>>>(x, (int)n, h, k, values, ix);
	});
	GPU_CHECK_LAUNCH(err, "topk_kernel");
	return 0;
}

extern "C" int maxk_topk_gpu(const float *x, int64_t n, int h, int k, float *values, void *index,
			     struct sp_err *err)
{
	if (h < 1 || h > MAXK_GPU_MAX_WIDTH)
		return sp_fail(err, "top-k: feature width %d is outside 1..%d", h, MAXK_GPU_MAX_WIDTH);
	if (k < 1 || k > h)
		return sp_fail(err, "top-k: k = %d is outside 1..%d (the feature width)", k, h);
	if (n <= 0)
		return 0;
	gpu_range_push("maxk_topk");
	int rc = h <= 32    ? launch_topk<1>(x, n, h, k, values, index, err)
		 : h <= 64  ? launch_topk<2>(x, n, h, k, values, index, err)
		 : h <= 128 ? launch_topk<4>(x, n, h, k, values, index, err)
		 : h <= 256 ? launch_topk<8>(x, n, h, k, values, index, err)
		 : h <= 512 ? launch_topk<16>(x, n, h, k, values, index, err)
			    : launch_topk<32>(x, n, h, k, values, index, err);
	gpu_range_pop();
	return rc;
}

template <typename IT>
__global__ void scatter_kernel(const float *__restrict__ values, const IT *__restrict__ index,
			       int64_t nk, int h, int k, float *__restrict__ dense)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		dense[(e / k) * h + index[e]] = values[e];
}

template <typename IT>
__global__ void gather_kernel(const float *__restrict__ dense, const IT *__restrict__ index,
			      int64_t nk, int h, int k, float *__restrict__ out)
{
	for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < nk;
	     e += (int64_t)gridDim.x * blockDim.x)
		out[e] = dense[(e / k) * h + index[e]];
}

extern "C" int maxk_scatter_gpu(const float *values, const void *index, int64_t n, int h, int k,
				float *dense, struct sp_err *err)
{
	GPU_CHECK(err, cudaMemsetAsync(dense, 0, (size_t)n * h * sizeof(float)));
	if (n * k == 0)
		return 0;
	const unsigned grid = grid_for(n * k, 256, 132 * 32);
	with_index(h, index, [&](auto ix) {
		scatter_kernel<<<grid, 256>>>(values, ix, n * k, h, k, dense);
	});
	GPU_CHECK_LAUNCH(err, "scatter_kernel");
	return 0;
}

extern "C" int maxk_gather_gpu(const float *dense, const void *index, int64_t n, int h, int k,
			       float *out, struct sp_err *err)
{
	if (n * k == 0)
		return 0;
	const unsigned grid = grid_for(n * k, 256, 132 * 32);
	with_index(h, index, [&](auto ix) {
		gather_kernel<<<grid, 256>>>(dense, ix, n * k, h, k, out);
	});
	GPU_CHECK_LAUNCH(err, "gather_kernel");
	return 0;
}

/* How a warp's lanes share the edges of a work item (row r, edges
 * [first, first + count)): G groups of KP = 32/G lanes, each group on its
 * own neighbour j, lane `sub` of a group on V consecutive kept slots
 * t = (part * KP + sub) * V .. + V - 1 (one vector load of values, one of
 * indices). A neighbour with more than KP * V kept values takes `parts`
 * turns. Groups keep lanes busy when k is small; the forward then needs a
 * row accumulator per group, since two neighbours may keep the same
 * column. U turns are loaded before any is used, so several gathers a
 * lane are in flight. The kernels are bound by shared memory: the
 * accumulator's (or the staged row's) bank conflicts, about 3.5-way for k
 * random columns of 256, and every other instruction is kept out of the
 * way (vector loads, 32-bit offsets). */
struct layout {
	int V, G, parts;
};

static int pow2_at_least(int x)
{
	int p = 1;
	while (p < x)
		p *= 2;
	return p;
}

/* V: as wide as k's divisibility allows, then narrowed while the forward's
 * G accumulators (h rounded up to a power of two) would pass max_floats a
 * warp; G capped at 8. */
static layout layout_for(int k, int h, int max_floats, int max_groups)
{
	int V = k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1, KP, G;
	for (;;) {
		const int lanes = (k + V - 1) / V;
		KP = 1;
		while (KP < lanes && KP < 32)
			KP *= 2;
		G = 32 / KP;
		if ((G * pow2_at_least(h) <= max_floats && G <= max_groups) || V == 1)
			break;
		V /= 2;
	}
	while (G > 8 || G > max_groups || (G > 1 && G * pow2_at_least(h) > max_floats))
		G /= 2;
	KP = 32 / G;
	return layout{V, G, (k + KP * V - 1) / (KP * V)};
}

/* V kept column indices as stored (8 or 16 bits each, packed in 32-bit
 * words; unpacked at use: the forward holds U turns of them in flight). */
template <int V, typename IT> struct packed_index {
	static constexpr int BITS = 8 * sizeof(IT);
	uint32_t w[(V * BITS + 31) / 32];
	__device__ __forceinline__ int operator[](int i) const
	{
		return (int)((w[i * BITS / 32] >> (i * BITS % 32)) & ((1u << BITS) - 1));
	}
};

/* Kept column indices of V consecutive slots at offset `at` (a multiple of
 * V, so the vector load is aligned). */
template <int V, typename IT>
__device__ __forceinline__ packed_index<V, IT> load_index(const IT *__restrict__ xi, uint32_t at)
{
	packed_index<V, IT> c;
	constexpr int bytes = V * (int)sizeof(IT);
	if constexpr (bytes == 8) {
		const uint2 i = *(const uint2 *)(xi + at);
		c.w[0] = i.x, c.w[1] = i.y;
	} else if constexpr (bytes == 4) {
		c.w[0] = *(const uint32_t *)(xi + at);
	} else if constexpr (bytes == 2) {
		c.w[0] = *(const uint16_t *)(xi + at);
	} else {
		c.w[0] = xi[at];
	}
	return c;
}

/* ... and their values. */
template <int V> struct values_of {
	float v[V];
};

template <int V>
__device__ __forceinline__ values_of<V> load_values(const float *__restrict__ xv, uint32_t at)
{
	values_of<V> r;
	if constexpr (V == 4) {
		const float4 f = *(const float4 *)(xv + at);
		r.v[0] = f.x, r.v[1] = f.y, r.v[2] = f.z, r.v[3] = f.w;
	} else if constexpr (V == 2) {
		const float2 f = *(const float2 *)(xv + at);
		r.v[0] = f.x, r.v[1] = f.y;
	} else {
		r.v[0] = xv[at];
	}
	return r;
}

template <int V, typename IT> struct slots {
	values_of<V> v;
	packed_index<V, IT> c;
};

struct turn {
	uint32_t at; /* j * k + t */
	float a;     /* A[r][j] */
	bool ok;
};

/* A batch of up to 32 edges, and where a turn finds its edge nb as {j,
 * A[r][j]}. In the warp's lanes (lane l holds edge from + l), read with two
 * shuffles; or staged in shared memory, read with one 8-byte load (the
 * shuffles cost two wavefronts). The forward with one group (sparse
 * graphs, or k > 64) stages: measured on the H200, products_like 10.5 ->
 * 8.1 ms and flickr_like 0.131 -> 0.110 at k = 16; with groups
 * (reddit_like) staging was slower, 3.67 -> 3.75 ms at k = 32 and 6.81 ->
 * 7.77 at k = 64, so groups and the backward keep the lanes. */
struct lane_edges {
	int j;
	float a;
	__device__ __forceinline__ int2 operator()(int nb) const
	{
		return make_int2(__shfl_sync(0xffffffffu, j, nb & 31),
				 __float_as_int(__shfl_sync(0xffffffffu, a, nb & 31)));
	}
};

struct staged_edges {
	const int2 *e;
	__device__ __forceinline__ int2 operator()(int nb) const { return e[nb & 31]; }
};

/* The edges [from, from + cnt) in the lanes ({0, 0} past cnt). The edges,
 * y and dY stream through once: evict them first, so the kept values
 * (gathered again and again) keep L2. */
__device__ __forceinline__ lane_edges load_lane_edges(const int32_t *__restrict__ indices,
						      const float *__restrict__ vals, int from,
						      int cnt, int lane)
{
	return lane_edges{lane < cnt ? __ldcs(indices + from + lane) : 0,
			  lane < cnt ? __ldcs(vals + from + lane) : 0.0f};
}

/* ... or in shared memory, through the lanes. */
__device__ __forceinline__ staged_edges stage_edges(int2 *edges, const int32_t *__restrict__ indices,
						    const float *__restrict__ vals, int from,
						    int cnt, int lane)
{
	const lane_edges mine = load_lane_edges(indices, vals, from, cnt, lane);
	__syncwarp(); /* the last batch's turns have read theirs */
	edges[lane] = make_int2(mine.j, __float_as_int(mine.a));
	__syncwarp();
	return staged_edges{edges};
}

/* Turn q of a batch whose turns number `steps`, its edges in E. */
template <int V, int G, bool ONE_PART, typename E>
__device__ __forceinline__ turn turn_at(int q, int steps, int parts, int sub, int k, const E &edges)
{
	const int nb = ONE_PART ? q : q / parts;
	const int t = ((ONE_PART ? 0 : q - nb * parts) * (32 / G) + sub) * V;
	const int2 e = edges(nb);
	return turn{(uint32_t)e.x * (uint32_t)k + (uint32_t)t, __int_as_float(e.y),
		    q < steps && t < k};
}

/* Where group g's accumulator keeps column c. The accumulators are P
 * columns wide (h rounded up to a power of two) and G of them share the 32
 * banks: group g has banks g*W .. g*W + W - 1 (W = 32/G), so lanes of
 * different groups never conflict, and column c goes to bank c >> shift
 * (shift = log2(P / W)) of those. A group's lanes hold consecutive kept
 * slots of one neighbour, whose columns are sorted and spread over the
 * row, so lane sub's columns fall near the sub-th W-th of the row: near
 * its own bank. Conflicts fall from 3.4-way (k random columns in 32 banks)
 * to 2-way. But then the row leaves in strided stores; on sparse rows that
 * costs more than the conflicts save, and one plain accumulator (G = 1,
 * shift < 0: column c at c) is used instead. (A flag, not a template
 * argument: ptxas gave the plain instantiations 32 registers and spills,
 * and they ran 1.5x slower on flickr_like.) */
template <int G>
__device__ __forceinline__ int acc_at(int c, int g, int shift)
{
	constexpr int W = 32 / G;
	if (G == 1 && shift < 0)
		return c;
	return ((c & ((1 << shift) - 1)) << 5) + g * W + (c >> shift);
}

/* acc[at(c[i])] += a * v[i] for one neighbour's V slots: all reads, then
 * all writes. Its columns differ, so the V read-modify-writes are
 * independent; but the compiler cannot know that, and written as V
 * separate += it waits for each read until the write before it is out
 * (reddit_like, k = 32: 4.66 -> 4.03 ms). */
template <int V, typename C, typename AT>
__device__ __forceinline__ void add_slots(float *acc, const C &c, const values_of<V> &v, float a,
					  AT at)
{
	float old[V];
#pragma unroll
	for (int i = 0; i < V; i++)
		old[i] = acc[at(c[i])];
#pragma unroll
	for (int i = 0; i < V; i++)
		acc[at(c[i])] = fmaf(a, v.v[i], old[i]);
}

/* Stores (or adds, when the row is cut into several items) one column. */
__device__ __forceinline__ void put(float *out, int c, float s, bool sole)
{
	if (sole)
		__stcs(out + c, s);
	else
		atomicAdd(out + c, s);
}

/* Floats of shared memory a forward warp takes: its G accumulators of
 * size / G columns, and with one group the batch's 32 staged edges (an
 * int2 each; size is then a power of two of at least 32, so they are
 * 8-byte aligned). */
__host__ __device__ constexpr int forward_warp_floats(int G, int size)
{
	return size + (G == 1 ? 64 : 0);
}

/* y[r] = sum over the item's edges of A[r][j] X[j]: each kept value of a
 * neighbour is added into its group's row accumulator in shared memory
 * (within a group every column is taken by one lane at most, so plain adds
 * with a __syncwarp between turns); the accumulators are summed and the
 * row stored, or added with atomics when the row is cut into several
 * items. */
template <int V, int G, bool ONE_PART, int U, typename IT>
__global__ void __launch_bounds__(BLOCK) forward_kernel(
	const int4 *__restrict__ items, int64_t nitems, const int32_t *__restrict__ indptr,
	const int32_t *__restrict__ indices, const float *__restrict__ vals,
	const float *__restrict__ xv, const IT *__restrict__ xi, int h, int k, int parts,
	int shift, int size, bool own, float *__restrict__ y)
{
	extern __shared__ float acc_all[];
	const int lane = threadIdx.x & 31, grp = lane / (32 / G), sub = lane % (32 / G);
	float *acc = acc_all + (threadIdx.x >> 5) * forward_warp_floats(G, size);
	int2 *edges = (int2 *)(acc + size); /* G == 1 only */
	for (int64_t w = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; w < nitems;
	     w += (int64_t)gridDim.x * WARPS) {
		const int4 it = items[w];
		for (int c = lane; c < size; c += 32)
			acc[c] = 0.0f;
		__syncwarp();
		for (int base = it.y; base < it.y + it.z; base += 32) {
			const int cnt = min(32, it.y + it.z - base);
			const auto batch = [&] {
				if constexpr (G == 1)
					return stage_edges(edges, indices, vals, base, cnt, lane);
				else
					return load_lane_edges(indices, vals, base, cnt, lane);
			}();
			const int steps = cnt * parts;
			for (int q0 = 0; q0 < steps; q0 += U * G) {
				slots<V, IT> x[U];
				float a[U];
				bool ok[U];
#pragma unroll
				for (int u = 0; u < U; u++) {
					const turn tr = turn_at<V, G, ONE_PART>(q0 + u * G + grp, steps,
										parts, sub, k, batch);
					ok[u] = tr.ok;
					a[u] = tr.a;
					if (tr.ok) {
						x[u].v = load_values<V>(xv, tr.at);
						x[u].c = load_index<V, IT>(xi, tr.at);
					}
				}
#pragma unroll
				for (int u = 0; u < U; u++) {
					if (ok[u])
						add_slots<V>(acc, x[u].c, x[u].v, a[u], [&](int c) {
							return acc_at<G>(c, grp, shift);
						});
					__syncwarp();
				}
			}
		}
		/* Stored, or added when the row is cut into several items: the
		 * graph's own items say so (whole), records are looked up. Plain
		 * accumulator: column c at c. Groups: a column's G partial sums
		 * share a row of 32 words (banks g * W + the column's); lane
		 * (rho_in, b) sums column (b << shift) | rho of row rho = rho0 +
		 * rho_in, reading group (g + rho_in) % G at step g, so every step
		 * reads 32 banks. */
		const bool sole = (own && it.w) || it.z == indptr[it.x + 1] - indptr[it.x];
		float *out = y + (size_t)it.x * h;
		if (G == 1 && shift < 0) {
			for (int c = lane; c < h; c += 32)
				put(out, c, acc[c], sole);
		} else {
			constexpr int W = 32 / G;
			const int b = lane % W, rho_in = lane / W;
			for (int rho0 = 0; rho0 < size / 32; rho0 += G) {
				const int rho = rho0 + rho_in;
				if (rho >= size / 32)
					break; /* fewer rows than groups (h < 32) */
				float s = 0.0f;
#pragma unroll
				for (int g = 0; g < G; g++)
					s += acc[rho * 32 + (g + rho_in) % G * W + b];
				const int c = (b << shift) | rho;
				if (c < h)
					put(out, c, s, sole);
			}
		}
		__syncwarp();
	}
}

template <int V, int G, bool ONE_PART, int U, typename IT>
__global__ void __launch_bounds__(BLOCK) backward_kernel(
	const int4 *__restrict__ items, int64_t nitems, const int32_t *__restrict__ indices,
	const float *__restrict__ vals, const IT *__restrict__ xi, int h, int k, int parts,
	const float *__restrict__ dy, float *__restrict__ dx)
{
	extern __shared__ float row_all[];
	const int lane = threadIdx.x & 31, sub = lane % (32 / G), grp = lane / (32 / G);
	float *row = row_all + (threadIdx.x >> 5) * h;
	for (int64_t w = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; w < nitems;
	     w += (int64_t)gridDim.x * WARPS) {
		const int4 it = items[w];
		__syncwarp(); /* the last item's reads of row are done */
		for (int c = lane; c < h; c += 32)
			row[c] = __ldcs(dy + (size_t)it.x * h + c);
		__syncwarp();
		for (int base = it.y; base < it.y + it.z; base += 32) {
			const int cnt = min(32, it.y + it.z - base);
			const lane_edges batch = load_lane_edges(indices, vals, base, cnt, lane);
			const int steps = cnt * parts;
			for (int q0 = 0; q0 < steps; q0 += U * G) {
				turn tr[U];
				packed_index<V, IT> c[U];
#pragma unroll
				for (int u = 0; u < U; u++) {
					tr[u] = turn_at<V, G, ONE_PART>(q0 + u * G + grp, steps, parts, sub,
									k, batch);
					if (tr[u].ok)
						c[u] = load_index<V, IT>(xi, tr[u].at);
				}
#pragma unroll
				for (int u = 0; u < U; u++) {
					if (!tr[u].ok)
						continue;
					float g[V];
#pragma unroll
					for (int i = 0; i < V; i++)
						g[i] = tr[u].a * row[c[u][i]];
					float *d = dx + tr[u].at;
#if __CUDA_ARCH__ >= 900
					if constexpr (V == 4)
						atomicAdd((float4 *)d, make_float4(g[0], g[1], g[2], g[3]));
					else if constexpr (V == 2)
						atomicAdd((float2 *)d, make_float2(g[0], g[1]));
					else
						atomicAdd(d, g[0]);
#else
#pragma unroll
					for (int i = 0; i < V; i++)
						atomicAdd(d + i, g[i]);
#endif
				}
			}
		}
	}
}

enum { TURNS = 4 };

template <typename IT>
using forward_fn = void (*)(const int4 *, int64_t, const int32_t *, const int32_t *, const float *,
			    const float *, const IT *, int, int, int, int, int, bool, float *);
template <typename IT>
using backward_fn = void (*)(const int4 *, int64_t, const int32_t *, const float *, const IT *, int,
			     int, int, const float *, float *);

/* The instantiation for a layout. */
template <int V, int G, typename IT>
static void pick(const layout &l, forward_fn<IT> *f, backward_fn<IT> *b)
{
	if (l.V == V && l.G == G) {
		*f = l.parts == 1 ? forward_kernel<V, G, true, TURNS, IT>
				  : forward_kernel<V, G, false, TURNS, IT>;
		*b = l.parts == 1 ? backward_kernel<V, G, true, TURNS, IT>
				  : backward_kernel<V, G, false, TURNS, IT>;
	}
}

template <int V, typename IT>
static void pick_g(const layout &l, forward_fn<IT> *f, backward_fn<IT> *b)
{
	pick<V, 1, IT>(l, f, b);
	pick<V, 2, IT>(l, f, b);
	pick<V, 4, IT>(l, f, b);
	pick<V, 8, IT>(l, f, b);
}

template <typename IT>
static void kernels_for(const layout &l, forward_fn<IT> *f, backward_fn<IT> *b)
{
	*f = NULL;
	*b = NULL;
	pick_g<1, IT>(l, f, b);
	pick_g<2, IT>(l, f, b);
	pick_g<4, IT>(l, f, b);
}

/* Blocks for a kernel that takes its items round-robin: as many as are
 * resident at once (more only queue behind them, and a block holds its
 * slot until its slowest warp is done), fewer when items are few. On first
 * use of a kernel (per device and shared-memory size) its limit is raised
 * when it passes 48 KiB and it gets the largest carveout, so shared memory
 * does not cap the blocks an SM holds; the answer is kept, since the
 * queries cost more than a small graph's whole kernel. */
static int prepare_launch(const void *kernel, size_t smem, int64_t nitems, unsigned *grid,
			  struct sp_err *err)
{
	static struct {
		const void *kernel;
		size_t smem;
		int device, resident;
	} seen[64];
	static int nseen;
	int device, i;
	GPU_CHECK(err, cudaGetDevice(&device));
	for (i = 0; i < nseen; i++)
		if (seen[i].kernel == kernel && seen[i].smem == smem && seen[i].device == device)
			break;
	if (i == nseen) {
		int sms, per_sm;
		GPU_CHECK(err, cudaFuncSetAttribute(kernel,
						    cudaFuncAttributePreferredSharedMemoryCarveout,
						    cudaSharedmemCarveoutMaxShared));
		if (smem > 48 * 1024)
			GPU_CHECK(err, cudaFuncSetAttribute(kernel,
							    cudaFuncAttributeMaxDynamicSharedMemorySize,
							    (int)smem));
		GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK,
									    smem));
		if (nseen == (int)(sizeof seen / sizeof *seen))
			nseen = 0; /* more shapes than ever seen together: start over */
		i = nseen++;
		seen[i].kernel = kernel;
		seen[i].smem = smem;
		seen[i].device = device;
		seen[i].resident = sms * (per_sm > 0 ? per_sm : 1);
	}
	*grid = grid_for(nitems, WARPS, seen[i].resident);
	return 0;
}

/* The kernels index kept values with 32-bit offsets. */
static int check_sizes(const struct maxk_dev_graph *g, int h, int k, const char *what,
		       struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "%s: k = %d is outside 1..%d (the feature width)", what, k, h);
	if ((uint64_t)g->n * (uint64_t)k > UINT32_MAX)
		return sp_fail(err, "%s: %lld rows x k = %d kept values pass 2^32", what,
			       (long long)g->n, k);
	return 0;
}

template <typename IT>
static int launch_forward(const struct maxk_dev_graph *g, const int32_t *items, int64_t nitems,
			  bool own, const float *values, const IT *index, int h, int k, float *y,
			  struct sp_err *err)
{
	/* Groups cost a row G accumulators to clear and sum, and the
	 * bank-spread layout strided stores: worth it on dense rows only
	 * (measured on H200.md's graphs: reddit_like, mean degree 492, runs
	 * best with 4 to 8 groups; products_like, 50, and flickr_like, 11,
	 * with 1). */
	const bool dense = g->nnz >= 128 * g->n;
	const layout l = layout_for(k, h, 1024, dense ? 8 : 1);
	const int P = pow2_at_least(h) < 32 / l.G ? 32 / l.G : pow2_at_least(h);
	int shift = 0;
	while ((32 / l.G) << shift < P)
		shift++;
	const int size = l.G * P; /* G accumulators of P columns */
	const size_t smem = (size_t)WARPS * forward_warp_floats(l.G, size) * sizeof(float);
	forward_fn<IT> f;
	backward_fn<IT> unused;
	kernels_for(l, &f, &unused);
	unsigned grid;
	if (prepare_launch((const void *)f, smem, nitems, &grid, err))
		return -1;
	f<<<grid, BLOCK, smem>>>((const int4 *)items, nitems, g->indptr, g->indices, g->vals, values,
				 index, h, k, l.parts, dense ? shift : -1, size, own, y);
	GPU_CHECK_LAUNCH(err, "forward_kernel");
	return 0;
}

/* Zeroes the given rows of y (n x h). */
static __global__ void zero_rows_kernel(const int32_t *__restrict__ rows, int64_t n, int h,
				 float *__restrict__ y)
{
	for (int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; w < n;
	     w += ((int64_t)gridDim.x * blockDim.x) >> 5)
		for (int c = threadIdx.x & 31; c < h; c += 32)
			y[(size_t)rows[w] * h + c] = 0.0f;
}

/* y starts at zero where the items add into it: the whole of it under the
 * .warp4 records; under the graph's own items (own) only the rows that no
 * item stores whole (empty rows, and rows cut into several items), which
 * on reddit_like spares a 238 MB memset. */
static int clear_output(const struct maxk_dev_graph *g, bool own, int h, float *y,
			struct sp_err *err)
{
	if (!own)
		return GPU_FAILED(err, cudaMemsetAsync(y, 0, (size_t)g->n * h * sizeof(float)));
	if (g->nbare == 0)
		return 0;
	zero_rows_kernel<<<grid_for(g->nbare, WARPS, 132 * 16), BLOCK>>>(g->bare_rows, g->nbare,
									   h, y);
	GPU_CHECK_LAUNCH(err, "zero_rows_kernel");
	return 0;
}

/* own: the items are the graph's own (chunks), not .warp4 records. */
static int forward_items(const struct maxk_dev_graph *g, const int32_t *items, int64_t nitems,
			 bool own, const float *values, const void *index, int h, int k, float *y,
			 struct sp_err *err)
{
	if (check_sizes(g, h, k, "forward", err))
		return -1;
	gpu_range_push("maxk_forward");
	int rc = clear_output(g, own, h, y, err);
	if (!rc && nitems > 0)
		rc = with_index(h, index, [&](auto ix) {
			return launch_forward(g, items, nitems, own, values, ix, h, k, y, err);
		});
	gpu_range_pop();
	return rc;
}

extern "C" int maxk_forward_gpu(const struct maxk_dev_graph *g, const float *values,
				const void *index, int h, int k, float *y, struct sp_err *err)
{
	return forward_items(g, g->chunks, g->nchunks, true, values, index, h, k, y, err);
}

extern "C" int maxk_forward_records_gpu(const struct maxk_dev_graph *g, const float *values,
					const void *index, int h, int k, float *y, struct sp_err *err)
{
	return forward_items(g, g->warp4, g->records, false, values, index, h, k, y, err);
}

template <typename IT>
static int launch_backward(const struct maxk_dev_graph *g, const int32_t *items, int64_t nitems,
			   const IT *index, int h, int k, const float *dy, float *dx,
			   struct sp_err *err)
{
	/* No accumulators here: any number of groups fits. */
	const layout l = layout_for(k, h, 1 << 30, 8);
	forward_fn<IT> unused;
	backward_fn<IT> b;
	kernels_for(l, &unused, &b);
	const size_t smem = (size_t)WARPS * h * sizeof(float);
	unsigned grid;
	if (prepare_launch((const void *)b, smem, nitems, &grid, err))
		return -1;
	b<<<grid, BLOCK, smem>>>((const int4 *)items, nitems, g->indices, g->vals, index, h, k,
				 l.parts, dy, dx);
	GPU_CHECK_LAUNCH(err, "backward_kernel");
	return 0;
}

static int backward_items(const struct maxk_dev_graph *g, const int32_t *items, int64_t nitems,
			  const void *index, int h, int k, const float *dy, float *dx,
			  struct sp_err *err)
{
	if (check_sizes(g, h, k, "backward", err))
		return -1;
	gpu_range_push("maxk_backward");
	int rc = GPU_FAILED(err, cudaMemsetAsync(dx, 0, (size_t)g->n * k * sizeof(float)));
	if (!rc && nitems > 0)
		rc = with_index(h, index, [&](auto ix) {
			return launch_backward(g, items, nitems, ix, h, k, dy, dx, err);
		});
	gpu_range_pop();
	return rc;
}

extern "C" int maxk_backward_gpu(const struct maxk_dev_graph *g, const void *index, int h, int k,
				 const float *dy, float *dx, struct sp_err *err)
{
	return backward_items(g, g->chunks, g->nchunks, index, h, k, dy, dx, err);
}

extern "C" int maxk_backward_records_gpu(const struct maxk_dev_graph *g, const void *index, int h,
					 int k, const float *dy, float *dx, struct sp_err *err)
{
	return backward_items(g, g->warp4, g->records, index, h, k, dy, dx, err);
}

/* The gather form through the cached transpose: a warp per j, lanes over
 * t, no atomics; but each edge reads k scattered floats of dY's row r,
 * which touch most of the row's sectors, and dY does not fit in L2. */
template <typename IT>
__global__ void __launch_bounds__(BLOCK) backward_gather_kernel(
	int64_t n, const int32_t *__restrict__ t_indptr, const int32_t *__restrict__ t_indices,
	const float *__restrict__ t_vals, const IT *__restrict__ xi, int h, int k,
	const float *__restrict__ dy, float *__restrict__ dx)
{
	const int lane = threadIdx.x & 31;
	for (int64_t j = (blockIdx.x * (int64_t)BLOCK + threadIdx.x) >> 5; j < n;
	     j += (int64_t)gridDim.x * WARPS) {
		const int b = t_indptr[j], e = t_indptr[j + 1];
		for (int t = lane; t < k; t += 32) {
			const int c = xi[j * k + t];
			float acc = 0.0f;
			for (int p = b; p < e; p++)
				acc = fmaf(t_vals[p], dy[(size_t)t_indices[p] * h + c], acc);
			dx[j * k + t] = acc;
		}
	}
}

extern "C" int maxk_backward_gather_gpu(const struct maxk_dev_graph *g, const void *index, int h,
					int k, const float *dy, float *dx, struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "backward: k = %d is outside 1..%d (the feature width)", k, h);
	if (g->n <= 0)
		return 0;
	gpu_range_push("maxk_backward_gather");
	const unsigned grid = grid_for(g->n, WARPS, 132 * 64);
	with_index(h, index, [&](auto ix) {
		backward_gather_kernel<<<grid, BLOCK>>>(g->n, g->t_indptr, g->t_indices, g->t_vals,
							ix, h, k, dy, dx);
	});
	gpu_range_pop();
	GPU_CHECK_LAUNCH(err, "backward_gather_kernel");
	return 0;
}

/* Longest first, then by row. */
static int by_length_descending(const void *pa, const void *pb)
{
	const int32_t *a = (const int32_t *)pa, *b = (const int32_t *)pb;
	if (a[2] != b[2])
		return a[2] > b[2] ? -1 : 1;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

/* A row of deg edges is stored whole by one item: no atomics, and y is
 * not zeroed there first. The others (empty, or cut) are its bare rows. */
static bool whole_row(int64_t deg)
{
	return deg > 0 && deg <= MAXK_CHUNK;
}

/* Rows cut into items of at most MAXK_CHUNK edges (records as .warp4's,
 * but the fourth field is 1 when the item is its whole row): most rows are
 * one item, written without atomics. Items are sorted longest first, so
 * warps taking them round-robin end together. */
static int64_t chunk_rows(const struct csr *g, int32_t *items)
{
	int64_t m = 0;
	for (int64_t r = 0; r < g->nrows; r++)
		for (int64_t e = g->indptr[r]; e < g->indptr[r + 1]; e += MAXK_CHUNK) {
			const int64_t len = g->indptr[r + 1] - e;
			if (items) {
				items[4 * m] = (int32_t)r;
				items[4 * m + 1] = (int32_t)e;
				items[4 * m + 2] = (int32_t)(len < MAXK_CHUNK ? len : MAXK_CHUNK);
				items[4 * m + 3] = e == g->indptr[r] && whole_row(len);
			}
			m++;
		}
	if (items)
		qsort(items, (size_t)m, 4 * sizeof *items, by_length_descending);
	return m;
}

/* count elements of elem bytes from src to a new device array (at least
 * one element, so empty arrays still have an address), counted in d->bytes. */
static int to_device(struct maxk_dev_graph *d, void **dst, const void *src, int64_t count,
		     size_t elem, const char *what, struct sp_err *err)
{
	const size_t bytes = (size_t)(count ? count : 1) * elem;
	if (gpu_malloc(dst, bytes, what, err))
		return -1;
	d->bytes += bytes;
	return gpu_upload(*dst, src, (size_t)count * elem, err);
}

extern "C" int maxk_dev_graph_upload(const struct csr *g, const float *vals, const int32_t *warp4,
				     int64_t records, struct maxk_dev_graph *d, struct sp_err *err)
{
	*d = (struct maxk_dev_graph){g->nrows, g->nnz, records};
	if (g->nnz > INT32_MAX || g->nrows >= INT32_MAX)
		return sp_fail(err, "graph of %lld rows and %lld edges is too large for 32-bit offsets",
			       (long long)g->nrows, (long long)g->nnz);
	struct csr t;
	if (csr_transpose(g, vals, &t, err))
		return -1;
	int32_t *t_ptr32 = (int32_t *)malloc((size_t)(t.nrows + 1) * sizeof *t_ptr32);
	int32_t *ptr32 = (int32_t *)malloc((size_t)(g->nrows + 1) * sizeof *ptr32);
	d->nchunks = chunk_rows(g, NULL);
	int32_t *chunks = (int32_t *)malloc((size_t)(d->nchunks ? d->nchunks : 1) * 16);
	int32_t *bare = (int32_t *)malloc((size_t)(g->nrows ? g->nrows : 1) * sizeof *bare);
	int rc = -1;
	if (!t_ptr32 || !ptr32 || !chunks || !bare) {
		sp_fail(err, "out of memory");
		goto out;
	}
	chunk_rows(g, chunks);
	for (int64_t r = 0; r < g->nrows; r++) {
		const int64_t deg = g->indptr[r + 1] - g->indptr[r];
		if (!whole_row(deg))
			bare[d->nbare++] = (int32_t)r;
	}
	for (int64_t j = 0; j <= t.nrows; j++)
		t_ptr32[j] = (int32_t)t.indptr[j];
	for (int64_t r = 0; r <= g->nrows; r++)
		ptr32[r] = (int32_t)g->indptr[r];
	if (to_device(d, (void **)&d->indptr, ptr32, g->nrows + 1, 4, "graph indptr", err) ||
	    to_device(d, (void **)&d->indices, g->indices, g->nnz, 4, "graph indices", err) ||
	    to_device(d, (void **)&d->vals, vals, g->nnz, 4, "edge values", err) ||
	    to_device(d, (void **)&d->warp4, warp4, records, 16, "warp4 records", err) ||
	    to_device(d, (void **)&d->chunks, chunks, d->nchunks, 16, "row items", err) ||
	    to_device(d, (void **)&d->bare_rows, bare, d->nbare, 4, "bare rows", err) ||
	    to_device(d, (void **)&d->t_indptr, t_ptr32, t.nrows + 1, 4, "transpose indptr", err) ||
	    to_device(d, (void **)&d->t_indices, t.indices, g->nnz, 4, "transpose indices", err) ||
	    to_device(d, (void **)&d->t_vals, t.values, g->nnz, 4, "transpose values", err))
		goto out;
	rc = 0;
out:
	free(t_ptr32);
	free(ptr32);
	free(chunks);
	free(bare);
	csr_free(&t);
	if (rc)
		maxk_dev_graph_free(d);
	return rc;
}

extern "C" void maxk_dev_graph_free(struct maxk_dev_graph *d)
{
	gpu_free(d->indptr);
	gpu_free(d->indices);
	gpu_free(d->vals);
	gpu_free(d->warp4);
	gpu_free(d->chunks);
	gpu_free(d->bare_rows);
	gpu_free(d->t_indptr);
	gpu_free(d->t_indices);
	gpu_free(d->t_vals);
	*d = (struct maxk_dev_graph){0};
}
