/* The MaxK backward SSpMM on the GPU: dX (n x k) = the gradient of X's
 * kept values from dY (n x h), that is (A^T dY) at the kept positions, as
 * maxk_sspmm_ref (lib/maxk/) computes it. Two forms:
 *
 * Scatter (maxk_backward_gpu, what training runs): the forward's work
 * items (maxk_items.cuh), one warp an item; the item's row of dY staged in
 * shared memory, and for each edge (r, j) the k gradients A[r][j]
 * dY[r][c] of j's kept columns c added into dX's row j with atomics (four
 * floats an instruction on sm_90). Bytes: the edges once, dY once (4 n h),
 * the kept indices (k an edge) and the adds (4 k an edge) in L2, where dX
 * (4 n k) stays. On reddit_like at k = 32: 4.32 ms on the H200 (1.6x the
 * published MaxK-GNN kernel), 1.15x what the same adds alone take (3.74
 * ms, dev/cuda/atomic_floor.cu): the limit is L2's atomic throughput,
 * wherever in the L2 the adds land (bench/RESULTS.md, maxk-train, "Atomic
 * floor", "L2 sides"; one bulk reduction an edge was slower, "Bulk
 * reductions").
 *
 * Gather (maxk_backward_gather_gpu, kept for the benchmark): a warp a
 * column j of A, through the graph's cached transpose, no atomics; but
 * each edge reads k scattered floats of a dY row, most of its sectors, and
 * dY does not fit in L2: 16.8 ms on reddit_like at k = 32 (bench/
 * RESULTS.md, maxk-train, "Gather form"). */
#include "maxk/maxk_items.cuh"

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

template <typename IT>
using backward_fn = void (*)(const int4 *, int64_t, const int32_t *, const float *, const IT *, int,
			     int, int, const float *, float *);

template <typename IT>
static int launch_backward(const struct maxk_dev_graph *g, const int32_t *items, int64_t nitems,
			   const IT *index, int h, int k, const float *dy, float *dx,
			   struct sp_err *err)
{
	/* No accumulators here: any number of groups fits. */
	const layout l = maxk_items_layout(k, h, 1 << 30, 8);
	const backward_fn<IT> b = with_layout(l, [&](auto vec, auto groups) -> backward_fn<IT> {
		constexpr int V = decltype(vec)::value, G = decltype(groups)::value;
		return l.parts == 1 ? backward_kernel<V, G, true, TURNS, IT>
				    : backward_kernel<V, G, false, TURNS, IT>;
	});
	const size_t smem = (size_t)WARPS * h * sizeof(float);
	unsigned grid;
	if (maxk_items_grid((const void *)b, smem, nitems, &grid, err))
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
	if (maxk_items_check(g, h, k, "backward", err))
		return -1;
	gpu_range_push("maxk_backward");
	int rc = GPU_FAILED(err, cudaMemsetAsync(dx, 0, (size_t)g->ncols * k * sizeof(float)));
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
	if (g->ncols <= 0)
		return 0;
	gpu_range_push("maxk_backward_gather");
	const unsigned grid = grid_for(g->ncols, WARPS, 132 * 64);
	with_index(h, index, [&](auto ix) {
		backward_gather_kernel<<<grid, BLOCK>>>(g->ncols, g->t_indptr, g->t_indices, g->t_vals,
							ix, h, k, dy, dx);
	});
	gpu_range_pop();
	GPU_CHECK_LAUNCH(err, "backward_gather_kernel");
	return 0;
}
