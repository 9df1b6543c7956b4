/* MaxK's top-k on the GPU: of each row of x (n x h) the k largest entries,
 * as values and column indices (n x k, CBSR), in column order, ties to the
 * lower column and NaN kept, bit for bit as maxk_topk_ref (lib/maxk/).
 *
 * Work: one warp a row, the row's keys in registers (32 columns a lane,
 * h up to MAXK_GPU_MAX_WIDTH). A radix select over the key bits finds the
 * k-th largest key: one warp reduction a bit, starting below the bits the
 * answer must share with bounds taken from the lanes' largest keys, and
 * stopping at the first bit after which exactly k keys are at or above
 * the prefix. Then the row is written in column order: every key above
 * the threshold, and of the keys equal to it the first ones by column.
 *
 * Bytes: x once (4 n h), the kept values and indices once (n k (4 + 1),
 * or 4 + 2 above h = 256): at 232,965 x 256 and k = 32, 0.167 ms on the
 * H200, about 1.6 TB/s. The kernel is issue-bound (about 830 instructions
 * a row), so what won was fewer instructions a key and more warps an SM:
 * the select's start below the shared bits, the key in three
 * instructions, no bounds tests when h is a multiple of 32, and 32
 * registers a thread (bench/RESULTS.md, maxk-train, "Top-k select
 * variants"; a persistent grid, two bits a step and the count on the FMA
 * pipe were measured there and were slower, as were the next row's loads
 * held in flight: "Top-k loads in flight"). */
#include "maxk/maxk_kernels.cuh"

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
