/* How the MaxK forward (maxk_forward.cu) and backward (maxk_backward.cu)
 * walk the graph: work items of one row's edges (int4 {row, first edge,
 * edges, whole}: the graph's own, rows cut at MAXK_CHUNK edges, or
 * MaxK-GNN's .warp4 records), a warp an item, taken round-robin by a grid
 * of the blocks that are resident at once; and within an item, which lane
 * loads which of a neighbour's kept values. Private to kernels/maxk/. */
#ifndef SPKIT_MAXK_ITEMS_CUH
#define SPKIT_MAXK_ITEMS_CUH

#include <type_traits>

#include "maxk/maxk_kernels.cuh"

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

static inline int pow2_at_least(int x)
{
	int p = 1;
	while (p < x)
		p *= 2;
	return p;
}

/* V: as wide as k's divisibility allows, then narrowed while the forward's
 * G accumulators (h rounded up to a power of two) would pass max_floats a
 * warp; G capped at 8. */
layout maxk_items_layout(int k, int h, int max_floats, int max_groups);

/* Turns of a batch loaded before any is used (bench/RESULTS.md,
 * maxk-train, "Turns in flight": 2, 4, 6 and 8 measured, 4 the fastest). */
enum { TURNS = 4 };

template <int N> using int_c = std::integral_constant<int, N>;

/* f(int_c<V>(), int_c<G>()) for the layout's V (1, 2 or 4) and G (1, 2, 4
 * or 8): the kernels are instantiated for each, and a launch runs the one
 * its layout names. */
template <typename F>
static auto with_layout(const layout &l, F f)
{
	const auto groups = [&](auto v) {
		switch (l.G) {
		case 1: return f(v, int_c<1>());
		case 2: return f(v, int_c<2>());
		case 4: return f(v, int_c<4>());
		default: return f(v, int_c<8>());
		}
	};
	switch (l.V) {
	case 1: return groups(int_c<1>());
	case 2: return groups(int_c<2>());
	default: return groups(int_c<4>());
	}
}

/* Blocks for a kernel that takes its items round-robin: as many as are
 * resident at once (more only queue behind them, and a block holds its
 * slot until its slowest warp is done), fewer when items are few. On first
 * use of a kernel (per device and shared-memory size) its limit is raised
 * when it passes 48 KiB and it gets the largest carveout, so shared memory
 * does not cap the blocks an SM holds; the answer is kept, since the
 * queries cost more than a small graph's whole kernel. */
int maxk_items_grid(const void *kernel, size_t smem, int64_t nitems, unsigned *grid,
		    struct sp_err *err);

/* The kernels index kept values with 32-bit offsets: k in 1..h and n k
 * under 2^32, else an error naming `what`. */
int maxk_items_check(const struct maxk_dev_graph *g, int h, int k, const char *what,
		     struct sp_err *err);

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

#endif
