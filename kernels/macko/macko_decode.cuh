/* How a warp walks a MACKO row on the device (lib/macko/macko_layout.h's
 * layout): the step, its chunks, and each chunk's columns. Shared by the
 * SpMV kernel (macko_spmv.cu) and the kernel that chooses its gather order
 * (macko_order.cu), which must see the same columns. */
#ifndef SPKIT_MACKO_DECODE_CUH
#define SPKIT_MACKO_DECODE_CUH

#include <stdint.h>

/* A warp takes a step of 512 elements; lane l holds two chunks of 8 of
 * them, elements 8l..8l+7 and 256+8l..256+8l+7, so each of the warp's
 * load instructions reads 512 (values) or 128 (deltas) contiguous bytes. */
enum { STEP = 512, CHUNK = 8, LANE_ELEMS = 16 };

__device__ __forceinline__ int chunk_first(int base, int lane, int c)
{
	return base + c * (STEP / 2) + lane * CHUNK;
}

/* How many of the row's elements (it ends at e) lane's chunk c of the step
 * at base holds: 0 to 8. */
__device__ __forceinline__ int chunk_elements(int base, int lane, int c, int e)
{
	return min(max(e - chunk_first(base, lane, c), 0), (int)CHUNK);
}

/* Inclusive prefix sums of a chunk's 8 deltas (not delta + 1) as 8 bytes,
 * element k in byte k % 4 of p[k / 4], without a loop over nibbles: the
 * nibbles become bytes (two masks, two byte permutes), one multiply by
 * 0x01010101 sums each group of four, and the first group's sum is added
 * to the second before its multiply. At most 15 x 8 = 120: no byte
 * spills into the next. */
__device__ __forceinline__ void delta_prefix(uint32_t w, uint32_t (&p)[2])
{
	const uint32_t even = w & 0x0f0f0f0fu;        /* elements 0, 2, 4, 6 */
	const uint32_t odd = (w >> 4) & 0x0f0f0f0fu;  /* elements 1, 3, 5, 7 */
	p[0] = __byte_perm(even, odd, 0x5140) * 0x01010101u;
	p[1] = (__byte_perm(even, odd, 0x7362) + (p[0] >> 24)) * 0x01010101u;
}

/* Inclusive sum over the warp's lanes. shfl.up's predicate says whether
 * the source lane exists, so a round is a shuffle and a predicated add,
 * with no test of the lane number. */
__device__ __forceinline__ int warp_inclusive_sum(int v)
{
#pragma unroll
	for (int off = 1; off < 32; off <<= 1)
		asm("{\n\t.reg .s32 t;\n\t.reg .pred p;\n\t"
		    "shfl.sync.up.b32 t|p, %0, %1, 0, 0xffffffff;\n\t"
		    "@p add.s32 %0, %0, t;\n\t}"
		    : "+r"(v)
		    : "r"(off));
	return v;
}

/* The sum of a chunk's deltas up to and including element k: byte k of its
 * prefix p (delta_prefix). Element k's slot is base + k + this. */
__device__ __forceinline__ uint32_t delta_sum(const uint32_t (&p)[2], int k)
{
	return __byte_perm(p[k / 4], 0, 0x4440 | (k % 4));
}

/* Where a step's two chunks start: idx0[c] is `carry` plus the columns
 * the chunks before chunk c advance the row by (its deltas plus one for
 * each element it holds, hi[c]), scanned over the warp for both chunks at
 * once (16 bits each; at most 32 x 128). Returns the step's advance. */
__device__ __forceinline__ int chunk_starts(const uint32_t (&p)[2][2], const int (&hi)[2],
					    int carry, int (&idx0)[2])
{
	const int own = ((int)(p[0][1] >> 24) + hi[0]) | ((int)(p[1][1] >> 24) + hi[1]) << 16;
	const int incl = warp_inclusive_sum(own);
	const int all = __shfl_sync(0xffffffffu, incl, 31);
	const int excl = incl - own;
	idx0[0] = carry + (excl & 0xffff);
	idx0[1] = carry + (all & 0xffff) + (excl >> 16);
	return (all & 0xffff) + (all >> 16);
}

#endif
