/* The MaxK forward SpGEMM on the GPU: y (n x h) = A X, A the graph with
 * its edge values and X given by its kept entries (values and column
 * indices, n x k), as maxk_spgemm_ref (lib/maxk/) computes it.
 *
 * Work: one warp a work item (a row, or a piece of a row longer than
 * MAXK_CHUNK edges; maxk_items.cuh), the warp's lanes in G groups, a group
 * on one neighbour's kept values at a time. Each kept value is added into
 * the group's row accumulator in shared memory; the G accumulators are
 * summed and the row stored once, with plain stores, or added with
 * atomics where the row is cut into several items (only those rows, and
 * empty ones, are zeroed first).
 *
 * Bytes: the edges once (8 nnz), the kept values and indices once from
 * DRAM (n k (4 + index bytes)), y once (4 n h); the neighbours' kept
 * values are gathered again and again (k values an edge), from L2, where
 * they stay: the edges and y are loaded and stored evict-first. On
 * reddit_like (232,965 rows, 114.6M edges) at k = 32: 3.56 ms on the H200,
 * 6.8x cuSPARSE on the dense features, 2.15x the published MaxK-GNN kernel
 * (bench/RESULTS.md, maxk-train, "MaxK kernels"). The limit is the
 * accumulator's read-modify-write in shared memory and the gathers' L1
 * wavefronts, not DRAM. What won: rows as work items instead of
 * MaxK-GNN's 64-edge records (a row stored once, without atomics: 9.0 ->
 * 4.5 ms, "Records as work items"), vector loads of a neighbour's slots
 * with 4 turns in flight ("Turns in flight"), bank-spread accumulators on
 * dense rows, a neighbour's slots read then written, one lane summing a
 * column's G partial sums, and the edges staged in shared memory when
 * there is one group ("Staged edges with groups"). Lane-private
 * accumulators and a bank-friendly slot order were measured or simulated
 * and lost (their topics there). */
#include "maxk/maxk_items.cuh"

template <int V, typename IT> struct slots {
	values_of<V> v;
	packed_index<V, IT> c;
};

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

template <typename IT>
using forward_fn = void (*)(const int4 *, int64_t, const int32_t *, const int32_t *, const float *,
			    const float *, const IT *, int, int, int, int, int, bool, float *);
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
	const layout l = maxk_items_layout(k, h, 1024, dense ? 8 : 1);
	const int P = pow2_at_least(h) < 32 / l.G ? 32 / l.G : pow2_at_least(h);
	int shift = 0;
	while ((32 / l.G) << shift < P)
		shift++;
	const int size = l.G * P; /* G accumulators of P columns */
	const size_t smem = (size_t)WARPS * forward_warp_floats(l.G, size) * sizeof(float);
	const forward_fn<IT> f = with_layout(l, [&](auto vec, auto groups) -> forward_fn<IT> {
		constexpr int V = decltype(vec)::value, G = decltype(groups)::value;
		return l.parts == 1 ? forward_kernel<V, G, true, TURNS, IT>
				    : forward_kernel<V, G, false, TURNS, IT>;
	});
	unsigned grid;
	if (maxk_items_grid((const void *)f, smem, nitems, &grid, err))
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
	if (maxk_items_check(g, h, k, "forward", err))
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
