/* The order in which the eight-vector MACKO kernel gathers each chunk's x.
 *
 * What it computes: for every chunk of 8 elements, the rotation r (0..7)
 * with which its lane gathers the chunk's x: element (i + r) % 8 on the
 * lane's i-th gather. r is chosen lane by lane within each quarter-warp so
 * that the quarter's gathers of one instruction share as few bank groups as
 * possible, given the rotations already chosen for the lanes before it.
 *
 * Why: eight vectors' x takes 16 bytes a column in shared memory, so a
 * warp's 16-byte gather is served a quarter-warp (8 lanes) at a time, and
 * the 8 lanes' columns fall on the 8 groups of 4 banks by column mod 8: in
 * effect at random, about 2.6 wavefronts a quarter where 1 would do (10.3
 * a warp's gather; scripts/macko-bank-sim.py), which makes eight vectors
 * L1-bound (bench/RESULTS.md, macko-spmv, "Bank layouts of x"). A lane may
 * gather its chunk's 8 elements in any order, and rotations cut that to
 * 1.95 wavefronts a quarter at d = 0.5 (7.8 a gather) and eight vectors'
 * time by 8 to 35% on an H100, the more the denser ("Gather order"). Richer
 * orders (any permutation, chunks regrouped between quarters) would save
 * less than their bytes and instructions cost, and the same rotations do
 * not suit four vectors' 8-byte gathers ("Regrouped gather order", "Gather
 * order for four vectors").
 *
 * Work decomposition: one warp a row, rows in turn over the grid, walking
 * the row in the SpMV kernel's steps so that each element's column (and so
 * its bank group) is the one the kernel gathers; within a quarter the 8
 * lanes take turns, each lane trying one rotation of the lane whose turn it
 * is and the quarter keeping the best (choose_rotation). Run once, at
 * upload.
 *
 * Bytes: it reads the deltas and row ends once and writes r as a nibble a
 * chunk. A lane's two chunks of a step (elements f and f + 256) share byte
 * f / 8 (the first's r in the low nibble), so the SpMV kernel loads one
 * byte a step: the array is a byte per 8 elements (5% of the matrix's
 * bytes) and the kernel reads half of it (the bytes of the chunks that are
 * a lane's first in a step; the others are 0), 2.5% more than the matrix. */
#include <stdint.h>

#include "core/gpu_check.cuh"
#include "macko/macko_decode.cuh"
#include "macko/macko_order.h"

/* Counts of a quarter's gathers per instruction k and bank group, a nibble
 * each (at most 8). */
struct quarter_counts {
	uint32_t n[CHUNK]; /* nibble g of n[k]: lanes whose k-th gather is in group g */
	uint32_t most[CHUNK];
};

/* Gathers that would wait on one more wavefront if this lane took
 * rotation r: groups packs its elements' bank groups, 3 bits each. */
__device__ __forceinline__ int added_wavefronts(const quarter_counts &q, uint32_t groups, int r)
{
	int added = 0;
#pragma unroll
	for (int k = 0; k < CHUNK; k++) {
		const uint32_t g = (groups >> (3 * ((k + r) & 7))) & 7;
		added += ((q.n[k] >> (4 * g)) & 15) + 1 > q.most[k];
	}
	return added;
}

/* The rotation of each lane's chunk c, lane by lane within each quarter:
 * the 8 lanes of a quarter try the 8 rotations of the lane whose turn it
 * is, one each, and all take the one that adds the fewest wavefronts (the
 * smaller r on a tie). `groups` has bit 31 set for a chunk past the row,
 * which takes no part. */
__device__ __forceinline__ int choose_rotation(uint32_t groups, int lane)
{
	quarter_counts q = {};
	int mine = 0;
	const int r = lane & 7;
	for (int turn = 0; turn < 8; turn++) {
		const uint32_t g = __shfl_sync(0xffffffffu, groups, (lane & ~7) | turn);
		int key = added_wavefronts(q, g, r) * 8 + r;
#pragma unroll
		for (int off = 1; off < 8; off <<= 1)
			key = min(key, __shfl_xor_sync(0xffffffffu, key, off));
		if (g >> 31)
			continue;
		const int best = key & 7;
#pragma unroll
		for (int k = 0; k < CHUNK; k++) {
			const uint32_t gk = (g >> (3 * ((k + best) & 7))) & 7;
			q.n[k] += 1u << (4 * gk);
			q.most[k] = max(q.most[k], (q.n[k] >> (4 * gk)) & 15);
		}
		if (turn == r)
			mine = best;
	}
	return mine;
}

/* One warp a row, walking it in steps as the SpMV kernel does, so each
 * element's column (and so its bank group) is the one the kernel gathers. */
__global__ void choose_order(const uint32_t *__restrict__ deltas, const int32_t *__restrict__ ends,
			     int rows, uint8_t *__restrict__ order)
{
	const int lane = threadIdx.x & 31;
	const int64_t warps = gridDim.x * blockDim.x / 32;
	for (int64_t r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
		const int s = (ends[r] + CHUNK - 1) & ~(CHUNK - 1), e = ends[r + 1];
		int column = 0;
		for (int base = s; base < e; base += STEP) {
			uint32_t p[2][2];
			int hi[2], idx0[2];
#pragma unroll
			for (int c = 0; c < 2; c++) {
				const int first = chunk_first(base, lane, c);
				hi[c] = chunk_elements(base, lane, c, e);
				delta_prefix(first < e ? deltas[first / CHUNK] : 0u, p[c]);
			}
			const int advance = chunk_starts(p, hi, column, idx0);
			uint32_t both = 0;
#pragma unroll
			for (int c = 0; c < 2; c++) {
				const int first = chunk_first(base, lane, c);
				uint32_t groups = first < e ? 0u : 1u << 31;
#pragma unroll
				for (int k = 0; k < CHUNK; k++) {
					const uint32_t col = idx0[c] + k + delta_sum(p[c], k);
					groups |= (col & 7) << (3 * k);
				}
				both |= (uint32_t)choose_rotation(groups, lane) << (4 * c);
			}
			const int first = chunk_first(base, lane, 0);
			if (first < e)
				order[first / CHUNK] = (uint8_t)both;
			column += advance;
		}
	}
}

extern "C" size_t macko_order_bytes(int64_t elements)
{
	return (size_t)(elements / CHUNK + 1); /* + 1: a byte even for no elements */
}

extern "C" int macko_order_choose(const void *deltas, const int32_t *ends, int64_t rows,
				  int64_t elements, void *order, struct sp_err *err)
{
	GPU_CHECK(err, cudaMemset(order, 0, macko_order_bytes(elements)));
	if (rows == 0)
		return 0;
	const int threads = 256;
	const int64_t blocks = (rows + threads / 32 - 1) / (threads / 32);
	choose_order<<<(unsigned)(blocks < 4096 ? blocks : 4096), threads>>>(
		(const uint32_t *)deltas, ends, (int)rows, (uint8_t *)order);
	GPU_CHECK_LAUNCH(err, "choose_order");
	return 0;
}
