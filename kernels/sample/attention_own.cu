/* Our fused attention (kernels/sample/attention.h): FlashAttention-2's
 * algorithm (Dao, 2023) with Ampere-style tensor-core instructions that
 * Hopper runs too: mma.sync m16n8k16 (fp16 or bf16 in, fp32 accumulated),
 * ldmatrix from shared memory swizzled so that its 8 row reads hit 8
 * different bank groups, cp.async copies double-buffered so the next tile
 * loads while this one is multiplied. Head sizes 64 and 128.
 *
 * Forward: a block of 4 warps per 128 queries of one (batch, head), two
 * blocks an SM; each warp owns 32 query rows (two m16 tiles), so that each
 * K or V fragment read from shared memory feeds 4 mma instead of 2 (8 warps
 * of 16 rows measured 1.2x slower). Key and value tiles of 64 rows stream through
 * shared memory; S = Q K^T stays in registers, the online softmax keeps a
 * running maximum and sum per row and rescales the output accumulator, and
 * P (rounded to the input type) is fed to the P V product straight from the
 * registers that held S (the m16n8 accumulator is laid out as the m16k16
 * operand). Bytes: Q and O once, K and V once per query block; FLOPs
 * 4 l^2 d per head (half that causal), which bound it.
 *
 * Backward: D = rowsum(dO * O) first (with the fp32 dQ accumulator zeroed),
 * then a block of 8 warps per 128 keys: K and V stay in shared memory, query
 * tiles of 64 rows (Q, dO, logsumexp, D) stream through double buffers. Per
 * step, as FlashAttention-2 splits it: each warp computes S^T = K Q^T and
 * dP^T = V dO^T for 32 keys x 32 queries, P^T = exp(S^T - lse) and dS^T =
 * P^T (dP^T - D), and writes both to shared memory; then each warp takes 32
 * keys x half the head for dV += P^T dO and dK += dS^T Q (accumulated in
 * registers over the steps), and 32 queries x 32 columns (16 x 32 at head
 * 64) for dQ += dS K, as FlashAttention-2 does, added to the fp32
 * accumulator with atomics; a last pass scales dQ into the input type.
 * Five products of l^2 d per head: 2.5 times the forward's FLOPs. Shared
 * memory read a step (head 128): 256 KB for S and dP, 192 KB for dV and
 * dK, 128 KB for dQ (160 KB with 16 queries x half the head a warp: 1.3 to
 * 2.3% slower on the H200), 32 KB of P^T and dS^T written; the layout
 * before (16 keys x all 64 queries a warp, P^T kept in registers) read 320
 * + 256 + 160 KB: at 128 bytes a clock shared memory, not the tensor cores,
 * bounds a step (10.5 MFLOP: 5.2 M multiply-adds).
 *
 * Causal: query blocks run heaviest first; key tiles past a block's last
 * query are never loaded, and only tiles that cross the diagonal or the end
 * of the sequence are masked. The backward's query steps run from the last
 * to the diagonal, as FlashAttention-2's do (0.7 to 1.4% faster than from
 * the diagonal on the H100 at b4 h32 l2048 and b8 h64 l4096), and its key
 * blocks start heaviest first, a few (batch, head) pairs at a time
 * (backward_launch). Rows past the end of the sequence load as zeros and
 * are neither stored nor counted. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "core/cp_async.cuh"
#include "core/gpu_check.cuh"
extern "C" {
#include "sample/attention.h"
}

#define LOG2E 1.4426950408889634f

/* ---- the instructions ------------------------------------------------- */

/* Four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give matrix i's rows. */
static __device__ __forceinline__ void ldsm_x4(uint32_t r[4], uint32_t at)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(at));
}
static __device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], uint32_t at)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(at));
}

/* c += a b: a 16x16 (row), b 16x8 (col), c 16x8 fp32; TYPE names T in PTX. */
template <typename T>
static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0,
					   uint32_t b1);
#define MMA_FOR(T, TYPE)                                                                      \
	template <>                                                                           \
	__device__ __forceinline__ void mma<T>(float c[4], const uint32_t a[4], uint32_t b0,  \
					       uint32_t b1)                                   \
	{                                                                                     \
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "   \
			     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"       \
			     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                 \
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1)); \
	}
MMA_FOR(__half, "f16")
MMA_FOR(__nv_bfloat16, "bf16")
#undef MMA_FOR

/* N m16n8 accumulators set to 0. */
template <int N> static __device__ __forceinline__ void zero(float (&c)[N][4])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		c[i][0] = c[i][1] = c[i][2] = c[i][3] = 0;
}

/* c0 += a b for the n8 tile of b's registers 0-1, c1 += a b for that of
 * 2-3: an ldmatrix.x4 of B holds two n8 tiles. */
template <typename T>
static __device__ __forceinline__ void mma_pair(float c0[4], float c1[4], const uint32_t a[4],
						const uint32_t b[4])
{
	mma<T>(c0, a, b[0], b[1]);
	mma<T>(c1, a, b[2], b[3]);
}

/* Two floats as one register of two T (x in the low half). */
template <typename T> static __device__ __forceinline__ uint32_t pack(float x, float y);
template <> __device__ __forceinline__ uint32_t pack<__half>(float x, float y)
{
	__half2 h = __floats2half2_rn(x, y);
	return *(uint32_t *)&h;
}
template <> __device__ __forceinline__ uint32_t pack<__nv_bfloat16>(float x, float y)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(x, y);
	return *(uint32_t *)&h;
}

/* The m16k16 operand from two m16n8 accumulators (columns 16k..16k+15):
 * the layouts agree, so no data moves between threads. */
template <typename T>
static __device__ __forceinline__ void acc_to_a(uint32_t a[4], const float lo[4],
						const float hi[4])
{
	a[0] = pack<T>(lo[0], lo[1]);
	a[1] = pack<T>(lo[2], lo[3]);
	a[2] = pack<T>(hi[0], hi[1]);
	a[3] = pack<T>(hi[2], hi[3]);
}

/* p[0] += x, p[1] += y in global memory: one 8-byte reduction on Hopper
 * (half the atomic instructions), two 4-byte ones before it. */
static __device__ __forceinline__ void add2(float *p, float x, float y)
{
#if __CUDA_ARCH__ >= 900
	atomicAdd((float2 *)p, make_float2(x, y));
#else
	atomicAdd(p, x);
	atomicAdd(p + 1, y);
#endif
}

/* 2^x by the special-function unit (relative error about 2^-22, -inf -> 0):
 * what the softmax needs for outputs rounded to 16 bits, in one instruction
 * where exp2f spends several on subnormal results. */
static __device__ __forceinline__ float exp2_approx(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* ---- tiles in shared memory ------------------------------------------- */

/* Element offset of (row, 16-byte chunk) in a tile of rows W elements wide:
 * the chunk XOR the row's low 3 bits, so that ldmatrix's 8 rows of one
 * chunk land in 8 different 16-byte bank groups (rows are 128 or 256 bytes,
 * a multiple of the 128 bytes the banks span). */
template <int W> static __device__ __forceinline__ int swz(int row, int chunk)
{
	return row * W + ((chunk ^ (row & 7)) << 3);
}

/* A lane's ldmatrix addresses: tile_at gives the shared-memory address of
 * (row, chunk) of a swizzled tile of 16-bit elements once, and tile_step
 * the one `rows` (a multiple of 8: same swizzle) further down and `chunks`
 * further right, where the lane's chunk has none of the bits of `chunks`
 * set (chunk + chunks == chunk ^ chunks): the swizzle's XOR is then the
 * address's own, as tiles start on a 256-byte boundary and rows are 128 or
 * 256 bytes. Each ldmatrix so costs one LOP3, or an immediate offset, where
 * working out swz for each spent about four instructions. */
template <int W> static __device__ __forceinline__ uint32_t tile_at(const void *tile, int row,
								     int chunk)
{
	return smem_addr((const char *)tile + 2 * swz<W>(row, chunk));
}
template <int W> static __device__ __forceinline__ uint32_t tile_step(uint32_t at, int rows,
								       int chunks)
{
	return (at ^ (uint32_t)(chunks << 4)) + (uint32_t)(rows * W * 2);
}

/* c = A B^T over the D columns of two [row][D] swizzled tiles: A's 32 rows
 * (two m16 tiles) from the lane's address a_at by B's 16 NP rows from b_at
 * (lane addresses as tile_at gives them for the non-transposed ldmatrix
 * layouts); each A fragment feeds 2 NP mma and each B fragment 4. The
 * forward's S = Q K^T and the backward's S^T = K Q^T and dP^T = V dO^T.
 * after(kc) runs after the mma of each 16 columns: other work placed there
 * issues while they compute. */
template <typename T, int D, int NP, typename After>
static __device__ __forceinline__ void rows_by_rows(float (&c)[2][2 * NP][4], uint32_t a_at,
						    uint32_t b_at, After after)
{
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		zero(c[mt]);
#pragma unroll
	for (int kc = 0; kc < D / 16; kc++) {
		uint32_t a[2][4];
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			ldsm_x4(a[mt], tile_step<D>(a_at, mt * 16, kc * 2));
#pragma unroll
		for (int np = 0; np < NP; np++) {
			uint32_t b[4];
			ldsm_x4(b, tile_step<D>(b_at, np * 16, kc * 2));
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				mma_pair<T>(c[mt][2 * np], c[mt][2 * np + 1], a[mt], b);
		}
		after(kc);
	}
}
template <typename T, int D, int NP>
static __device__ __forceinline__ void rows_by_rows(float (&c)[2][2 * NP][4], uint32_t a_at,
						    uint32_t b_at)
{
	struct nothing {
		__device__ void operator()(int) const {}
	};
	rows_by_rows<T, D, NP>(c, a_at, b_at, nothing());
}

/* ROWS rows of head h from position p0 of a (b, l, heads, D) tensor (`head`
 * points at position 0 of the batch and head, `stride` elements apart),
 * into a swizzled tile; rows past `seq` are zeros. Each thread copies one
 * 16-byte chunk of a row every THREADS / (D / 8) rows (a multiple of 8, so
 * its swizzle is the same on every row it copies): the addresses are worked
 * out once and stepped, where a loop over a flat index spent about 25
 * instructions a copy on them (the forward's K and V loads were a quarter
 * of the instructions it issued at head 128, by ncu and the SASS). */
template <typename T, int D, int ROWS, int THREADS>
static __device__ __forceinline__ void load_tile(T *tile, const T *head, int64_t stride, int p0,
						 int seq)
{
	constexpr int CHUNKS = D / 8, PASS_ROWS = THREADS / CHUNKS;
	static_assert(THREADS % CHUNKS == 0 && PASS_ROWS % 8 == 0 && ROWS % PASS_ROWS == 0,
		      "a thread's rows must share their swizzle");
	const int r0 = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
	const T *src = head + (int64_t)(p0 + r0) * stride + c * 8;
	T *dst = tile + swz<D>(r0, c);
#pragma unroll
	for (int j = 0; j < ROWS / PASS_ROWS; j++) {
		bool valid = p0 + r0 + j * PASS_ROWS < seq;
		cp_async16(dst + j * PASS_ROWS * D, valid ? src + j * PASS_ROWS * stride : head,
			   valid);
	}
}

/* The double buffer's turn, one barrier a step: this step's copies awaited
 * and, by the barrier, made visible to all; the barrier also tells that
 * every warp is done with the buffer the last step read, so the next
 * step's copies (when there is one) go there right after it. (The copies
 * issued before the wait instead needed a second barrier at the end of
 * each step.) */
template <typename Issue>
static __device__ __forceinline__ void next_tiles(bool more, Issue issue)
{
	cp_async_wait<0>();
	__syncthreads();
	if (more) {
		issue();
		cp_async_commit();
	}
}

/* ---- forward ---------------------------------------------------------- */

#define FWD_BM 128
#define FWD_BN 64
#define FWD_THREADS 128
#define FWD_MT 2 /* m16 tiles a warp: 32 query rows, so each K or V fragment feeds 4 mma */

template <int D> constexpr size_t fwd_smem()
{
	return (size_t)(FWD_BM + 4 * FWD_BN) * D * 2;
}

template <typename T, int D, bool CAUSAL>
static __global__ void __launch_bounds__(FWD_THREADS, 2)
	attention_forward(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
			  T *__restrict__ o, float *__restrict__ lse, int seq, int heads,
			  float scale)
{
	extern __shared__ __align__(1024) unsigned char smem[];
	T *sq = (T *)smem, *sk = sq + FWD_BM * D, *sv = sk + 2 * FWD_BN * D;
	static_assert(FWD_BM * D * 2 % 256 == 0 && FWD_BN * D * 2 % 256 == 0,
		      "tiles on 256-byte boundaries (tile_step)");
	const int mblk = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
	const int h = blockIdx.y, z = blockIdx.z, m0 = mblk * FWD_BM;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int64_t stride = (int64_t)heads * D, head = ((int64_t)z * seq * heads + h) * D;
	const float scale_log2 = scale * LOG2E;
	int ntiles = (seq + FWD_BN - 1) / FWD_BN;
	if (CAUSAL)
		ntiles = min(ntiles, (m0 + FWD_BM + FWD_BN - 1) / FWD_BN);

	load_tile<T, D, FWD_BM, FWD_THREADS>(sq, q + head, stride, m0, seq);
	cp_async_commit();
	load_tile<T, D, FWD_BN, FWD_THREADS>(sk, k + head, stride, 0, seq);
	load_tile<T, D, FWD_BN, FWD_THREADS>(sv, v + head, stride, 0, seq);
	cp_async_commit();

	float acc[FWD_MT][D / 8][4];
	float row_max[FWD_MT][2], row_sum[FWD_MT][2];
#pragma unroll
	for (int mt = 0; mt < FWD_MT; mt++) {
		zero(acc[mt]);
		row_max[mt][0] = row_max[mt][1] = -INFINITY;
		row_sum[mt][0] = row_sum[mt][1] = 0;
	}
	const int wrow = warp * 16 * FWD_MT; /* the warp's first row in the block */
	const uint32_t q_at = tile_at<D>(sq, wrow + (lane & 15), lane >> 4);
	const uint32_t k_at = tile_at<D>(sk, (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
	const uint32_t v_at = tile_at<D>(sv, (lane & 7) + (((lane >> 3) & 1) << 3), lane >> 4);

	for (int j = 0; j < ntiles; j++) {
		const int buf = j & 1;
		next_tiles(j + 1 < ntiles, [&] {
			load_tile<T, D, FWD_BN, FWD_THREADS>(sk + (buf ^ 1) * FWD_BN * D, k + head,
							     stride, (j + 1) * FWD_BN, seq);
			load_tile<T, D, FWD_BN, FWD_THREADS>(sv + (buf ^ 1) * FWD_BN * D, v + head,
							     stride, (j + 1) * FWD_BN, seq);
		});
		const uint32_t ck = k_at + buf * FWD_BN * D * 2, cv = v_at + buf * FWD_BN * D * 2;

		/* S = Q K^T, 32 rows x 64 keys a warp. */
		static_assert(FWD_MT == 2, "rows_by_rows takes 32 rows");
		float s[FWD_MT][FWD_BN / 8][4];
		rows_by_rows<T, D, FWD_BN / 16>(s, q_at, ck);

		/* Keys past the end, and (causal) keys after the query. */
		const int n0 = j * FWD_BN;
		if (n0 + FWD_BN > seq || (CAUSAL && n0 + FWD_BN - 1 > m0 + wrow)) {
#pragma unroll
			for (int mt = 0; mt < FWD_MT; mt++)
#pragma unroll
				for (int nt = 0; nt < FWD_BN / 8; nt++)
#pragma unroll
					for (int e = 0; e < 4; e++) {
						int col = n0 + nt * 8 + 2 * (lane & 3) + (e & 1);
						int row = m0 + wrow + mt * 16 + (lane >> 2) + (e >> 1) * 8;
						if (col >= seq || (CAUSAL && col > row))
							s[mt][nt][e] = -INFINITY;
					}
		}

		/* Online softmax: each row lives in a quad of lanes. */
#pragma unroll
		for (int mt = 0; mt < FWD_MT; mt++)
#pragma unroll
			for (int r = 0; r < 2; r++) {
				float mx = row_max[mt][r];
#pragma unroll
				for (int nt = 0; nt < FWD_BN / 8; nt++)
					mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
				const float base = mx == -INFINITY ? 0.0f : mx * scale_log2;
				const float alpha = exp2_approx(row_max[mt][r] * scale_log2 - base);
				float sum = 0;
#pragma unroll
				for (int nt = 0; nt < FWD_BN / 8; nt++)
#pragma unroll
					for (int e = 2 * r; e < 2 * r + 2; e++) {
						s[mt][nt][e] = exp2_approx(s[mt][nt][e] * scale_log2 - base);
						sum += s[mt][nt][e];
					}
				row_sum[mt][r] = row_sum[mt][r] * alpha + sum;
				row_max[mt][r] = mx;
#pragma unroll
				for (int dt = 0; dt < D / 8; dt++) {
					acc[mt][dt][2 * r] *= alpha;
					acc[mt][dt][2 * r + 1] *= alpha;
				}
			}

		/* O += P V. */
#pragma unroll
		for (int kc = 0; kc < FWD_BN / 16; kc++) {
			uint32_t a[FWD_MT][4];
#pragma unroll
			for (int mt = 0; mt < FWD_MT; mt++)
				acc_to_a<T>(a[mt], s[mt][2 * kc], s[mt][2 * kc + 1]);
#pragma unroll
			for (int dp = 0; dp < D / 16; dp++) {
				uint32_t b[4];
				ldsm_x4_trans(b, tile_step<D>(cv, kc * 16, dp * 2));
#pragma unroll
				for (int mt = 0; mt < FWD_MT; mt++) {
					mma_pair<T>(acc[mt][2 * dp], acc[mt][2 * dp + 1], a[mt], b);
				}
			}
		}
	}

#pragma unroll
	for (int mt = 0; mt < FWD_MT; mt++)
#pragma unroll
		for (int r = 0; r < 2; r++) {
			float sum = row_sum[mt][r];
			sum += __shfl_xor_sync(0xffffffffu, sum, 1);
			sum += __shfl_xor_sync(0xffffffffu, sum, 2);
			const int row = m0 + wrow + mt * 16 + (lane >> 2) + r * 8;
			if (row >= seq)
				continue;
			const float inv = 1.0f / sum;
			T *out = o + head + (int64_t)row * stride + 2 * (lane & 3);
#pragma unroll
			for (int dt = 0; dt < D / 8; dt++)
				*(uint32_t *)(out + dt * 8) = pack<T>(acc[mt][dt][2 * r] * inv,
								      acc[mt][dt][2 * r + 1] * inv);
			if ((lane & 3) == 0)
				lse[((int64_t)z * heads + h) * seq + row] =
					row_max[mt][r] * scale + logf(sum);
		}
}

/* ---- backward --------------------------------------------------------- */

#define BWD_BN 128 /* keys a block */
#define BWD_BM 64  /* queries a step */
#define BWD_THREADS 256
#define BWD_KW 32 /* keys a warp, in S^T and dP^T and in dV and dK */

/* K, V; Q, dO double-buffered; P^T and dS^T ([key][query]); lse and D. */
template <int D> constexpr size_t bwd_smem()
{
	return (size_t)(2 * BWD_BN + 4 * BWD_BM) * D * 2 + 2 * (size_t)BWD_BN * BWD_BM * 2 +
	       4 * BWD_BM * sizeof(float);
}

/* dsum[b][h][i] = sum_c dO[b][i][h][c] O[b][i][h][c]; the row's dQ
 * accumulator set to 0. A warp a row. */
template <typename T, int D>
static __global__ void attention_backward_prep(const T *__restrict__ o, const T *__restrict__ dout,
					       float *__restrict__ dsum, float *__restrict__ dq_acc,
					       int64_t rows, int seq, int heads)
{
	const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const int lane = threadIdx.x & 31;
	if (row >= rows)
		return;
	float acc = 0;
#pragma unroll
	for (int c = lane; c < D; c += 32) {
		acc += (float)o[row * D + c] * (float)dout[row * D + c];
		dq_acc[row * D + c] = 0;
	}
	for (int off = 16; off; off >>= 1)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (lane == 0) {
		int64_t pos = row / heads, h = row % heads, z = pos / seq, i = pos % seq;
		dsum[(z * heads + h) * seq + i] = acc;
	}
}

/* dq = scale dq_acc in the input type, 4 elements a thread. */
template <typename T>
static __global__ void attention_backward_dq(const float4 *__restrict__ acc, T *__restrict__ dq,
					     int64_t n4, float scale)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float4 a = acc[i];
		uint2 out = {pack<T>(a.x * scale, a.y * scale), pack<T>(a.z * scale, a.w * scale)};
		*(uint2 *)(dq + 4 * i) = out;
	}
}

template <typename T, int D, bool CAUSAL>
static __global__ void __launch_bounds__(BWD_THREADS, 1)
	attention_backward(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
			   const T *__restrict__ dout, const float *__restrict__ lse,
			   const float *__restrict__ dsum, float *__restrict__ dq_acc,
			   T *__restrict__ dk, T *__restrict__ dv, int seq, int heads, int side_by_side,
			   float scale)
{
	extern __shared__ __align__(1024) unsigned char smem[];
	T *sk = (T *)smem, *sv = sk + BWD_BN * D, *sq = sv + BWD_BN * D, *sdo = sq + 2 * BWD_BM * D;
	static_assert(BWD_BN * D * 2 % 256 == 0 && BWD_BM * D * 2 % 256 == 0 &&
			      BWD_BN * BWD_BM * 2 % 256 == 0,
		      "tiles on 256-byte boundaries (tile_step)");
	T *sp = sdo + 2 * BWD_BM * D, *sds = sp + BWD_BN * BWD_BM; /* P^T, dS^T: [key][query] */
	float *sl = (float *)(sds + BWD_BN * BWD_BM), *sd = sl + 2 * BWD_BM;
	int hz = blockIdx.y + gridDim.y * blockIdx.z, key_block = blockIdx.x;
	if (CAUSAL) {
		/* Blocks run side_by_side (batch, head) pairs at a time, key block
		 * by key block, so that the heaviest start first and the last to
		 * start are the lightest: in grid order a late pair's first block
		 * (all of the queries) ran on alone at the end. */
		const int pairs = gridDim.y * gridDim.z;
		const int lin = blockIdx.x + gridDim.x * hz, group = side_by_side * gridDim.x;
		const int base = lin / group * side_by_side, in_group = lin % group;
		const int n = min(side_by_side, pairs - base);
		key_block = in_group / n;
		hz = base + in_group % n;
	}
	const int h = hz % heads, z = hz / heads, n0 = key_block * BWD_BN;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int64_t stride = (int64_t)heads * D, head = ((int64_t)z * seq * heads + h) * D;
	const int64_t stat = (int64_t)hz * seq;
	const float scale_log2 = scale * LOG2E;
	const int first = CAUSAL ? n0 / BWD_BM : 0, last = (seq + BWD_BM - 1) / BWD_BM;
	/* S^T and dP^T: warp w takes keys 32 (w / 2).. and queries 32 (w % 2)..;
	 * dV and dK: keys 32 (w % 4).. and half w / 4 of the head. */
	const int kw = (warp >> 1) * BWD_KW, qw = (warp & 1) * (BWD_BM / 2);
	const int kv = (warp & 3) * BWD_KW, dh = (warp >> 2) * (D / 2);
	/* dQ: warp w takes DQ_MT m16 tiles of queries qq.. by 32 columns dc..
	 * of the head: 32 x 32 at head 128, 16 x 32 at 64. */
	constexpr int DQ_MT = D / 64, DQ_QW = BWD_BM / (16 * DQ_MT);
	static_assert(DQ_QW * (D / 32) * 32 == BWD_THREADS, "dQ's warp tiles cover the step");
	const int qq = (warp % DQ_QW) * 16 * DQ_MT, dc = (warp / DQ_QW) * 32;
	/* The lanes' ldmatrix addresses (tile_at): K or V rows and Q or dO rows
	 * of S^T and dP^T; P^T (dS^T at the same offset) rows, dO or Q columns
	 * of dV and dK; dS^T columns and K columns of dQ. */
	const uint32_t key_at = tile_at<D>(sk, kw + (lane & 15), lane >> 4);
	const uint32_t query_at =
		tile_at<D>(sq, qw + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
	const uint32_t pt_at = tile_at<BWD_BM>(sp, kv + (lane & 15), lane >> 4);
	const int col_row = (lane & 7) + (((lane >> 3) & 1) << 3), col_chunk = (dh >> 3) + (lane >> 4);
	const uint32_t col_at = tile_at<D>(sq, col_row, col_chunk);
	const uint32_t dst_at = tile_at<BWD_BM>(sds, (lane & 7) + ((lane >> 4) << 3),
						(qq >> 3) + ((lane >> 3) & 1));
	const uint32_t kcol_at = tile_at<D>(sk, col_row, (dc >> 3) + (lane >> 4));
	const uint32_t v_off = BWD_BN * D * 2, do_off = 2 * BWD_BM * D * 2; /* sv - sk, sdo - sq */
	const uint32_t ds_off = BWD_BN * BWD_BM * 2;                         /* sds - sp */

	/* A query step's inputs, all by cp.async: Q, dO, lse and D, zeros past
	 * the end (there Q and dO rows of zeros make P^T dO and dS^T = P^T (0 -
	 * 0) zero whatever P is). Plain loads of lse and D held the two warps
	 * that made them for a global load's latency at the start of each step. */
	auto load_step = [&](int step, int buf) {
		const int m0 = step * BWD_BM;
		load_tile<T, D, BWD_BM, BWD_THREADS>(sq + buf * BWD_BM * D, q + head, stride, m0, seq);
		load_tile<T, D, BWD_BM, BWD_THREADS>(sdo + buf * BWD_BM * D, dout + head, stride, m0,
						     seq);
		static_assert(2 * BWD_BM <= BWD_THREADS, "a thread a row of lse or D");
		if (threadIdx.x < 2 * BWD_BM) {
			const int r = threadIdx.x % BWD_BM;
			const bool valid = m0 + r < seq;
			const bool is_lse = threadIdx.x < BWD_BM;
			const float *src = (is_lse ? lse : dsum) + stat + (valid ? m0 + r : 0);
			cp_async4((is_lse ? sl : sd) + buf * BWD_BM + r, src, valid);
		}
	};

	load_tile<T, D, BWD_BN, BWD_THREADS>(sk, k + head, stride, n0, seq);
	load_tile<T, D, BWD_BN, BWD_THREADS>(sv, v + head, stride, n0, seq);
	load_step(CAUSAL ? last - 1 : first, 0);
	cp_async_commit();

	float acc_dk[2][D / 16][4], acc_dv[2][D / 16][4];
#pragma unroll
	for (int mt = 0; mt < 2; mt++) {
		zero(acc_dk[mt]);
		zero(acc_dv[mt]);
	}

	for (int i = 0; i < last - first; i++) {
		const int step = CAUSAL ? last - 1 - i : first + i;
		const int buf = i & 1, m0 = step * BWD_BM;
		const int next = CAUSAL ? step - 1 : step + 1;
		next_tiles(i + 1 < last - first, [&] { load_step(next, buf ^ 1); });
		const uint32_t cq = buf * BWD_BM * D * 2; /* this step's Q (dO) tile from sq (sdo) */
		const float *cl = sl + buf * BWD_BM, *cd = sd + buf * BWD_BM;

		/* S^T = K Q^T, then dP^T = V dO^T: the warp's 32 keys x 32 queries,
		 * each key fragment feeding 4 mma and each query fragment 4; one
		 * product at a time holds half the fragments of both at once. */
		float s[2][BWD_BM / 16][4], dp[2][BWD_BM / 16][4];
		rows_by_rows<T, D, BWD_BM / 32>(s, key_at, query_at + cq);

		/* P^T = exp(S^T - lse), masked past the end and (causal) where the
		 * query comes before the key, worked out a slice after each of dP's
		 * k steps, so that the exponentials issue under its mma. */
		const bool edge = n0 + kw + BWD_KW - 1 >= seq || (CAUSAL && m0 + qw < n0 + kw + BWD_KW);
		constexpr int P_SLICE = 2 * (BWD_BM / 16) * 4 / (D / 16);
		static_assert(2 * (BWD_BM / 16) * 4 % (D / 16) == 0, "P^T in even slices");
		rows_by_rows<T, D, BWD_BM / 32>(dp, key_at + v_off, query_at + cq + do_off,
						  [&](int kc) {
#pragma unroll
			for (int j = 0; j < P_SLICE; j++) {
				const int x = kc * P_SLICE + j, mt = x / 16, nt = x / 4 % 4, e = x % 4;
				const int qi = qw + nt * 8 + 2 * (lane & 3) + (e & 1);
				const int key = n0 + kw + mt * 16 + (lane >> 2) + (e >> 1) * 8;
				float p = exp2_approx(s[mt][nt][e] * scale_log2 - cl[qi] * LOG2E);
				if (edge && (key >= seq || (CAUSAL && m0 + qi < key)))
					p = 0;
				s[mt][nt][e] = p;
			}
		});

		/* dS^T = P^T (dP^T - D); both to shared memory. */
#pragma unroll
		for (int mt = 0; mt < 2; mt++) {
#pragma unroll
			for (int nt = 0; nt < BWD_BM / 16; nt++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const int qi = qw + nt * 8 + 2 * (lane & 3) + (e & 1);
					dp[mt][nt][e] = s[mt][nt][e] * (dp[mt][nt][e] - cd[qi]);
				}
#pragma unroll
			for (int kc = 0; kc < BWD_BM / 32; kc++) {
				uint32_t a[4], c[4];
				acc_to_a<T>(a, s[mt][2 * kc], s[mt][2 * kc + 1]);
				acc_to_a<T>(c, dp[mt][2 * kc], dp[mt][2 * kc + 1]);
				const int r0 = kw + mt * 16 + (lane >> 2);
				const int col = qw + kc * 16 + 2 * (lane & 3);
				const int at[4] = {swz<BWD_BM>(r0, col >> 3) + (col & 7),
						   swz<BWD_BM>(r0 + 8, col >> 3) + (col & 7),
						   swz<BWD_BM>(r0, (col >> 3) + 1) + (col & 7),
						   swz<BWD_BM>(r0 + 8, (col >> 3) + 1) + (col & 7)};
#pragma unroll
				for (int i = 0; i < 4; i++) {
					*(uint32_t *)(sp + at[i]) = a[i];
					*(uint32_t *)(sds + at[i]) = c[i];
				}
			}
		}
		__syncthreads();

		/* dV += P^T dO; dQ = dS K; dK += dS^T Q with dQ's reductions to
		 * dq_acc issued a quarter after each of dK's 16-query slices. Issued
		 * in one burst (16 8-byte reductions a thread, 32 KB a block a step)
		 * they filled the load/store queue (ncu: "lg throttle" 0.39 cycles an
		 * instruction against FlashAttention-2's 0.02) and the step waited on
		 * them; spread under dK's mma they drain while it computes: causal
		 * b8 h64 l4096 on an H200 21.1 -> 20.4 ms. One reduction after each
		 * mma pair, all of them under dV's mma, or dQ's product first were
		 * each slower (bench/RESULTS.md). */
#pragma unroll
		for (int kc = 0; kc < BWD_BM / 16; kc++) {
			uint32_t a[2][4];
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				ldsm_x4(a[mt], tile_step<BWD_BM>(pt_at, mt * 16, kc * 2));
#pragma unroll
			for (int dq = 0; dq < D / 32; dq++) {
				uint32_t g[4];
				ldsm_x4_trans(g, tile_step<D>(col_at + cq, kc * 16, dq * 2) + do_off);
#pragma unroll
				for (int mt = 0; mt < 2; mt++)
					mma_pair<T>(acc_dv[mt][2 * dq], acc_dv[mt][2 * dq + 1], a[mt], g);
			}
		}

		/* dQ = dS K: the warp's DQ_MT m16 tiles by 4 n8 tiles, each dS
		 * fragment feeding 4 mma and each K fragment DQ_MT pairs (16
		 * queries by half the head a warp read 5 fragments for 8 mma). */
		float acc[DQ_MT * 4][4];
		zero(acc);
#pragma unroll
		for (int kc = 0; kc < BWD_BN / 16; kc++) {
			uint32_t a[DQ_MT][4];
#pragma unroll
			for (int mt = 0; mt < DQ_MT; mt++)
				ldsm_x4_trans(a[mt], tile_step<BWD_BM>(dst_at, kc * 16, mt * 2));
#pragma unroll
			for (int dq = 0; dq < 2; dq++) {
				uint32_t b[4];
				ldsm_x4_trans(b, tile_step<D>(kcol_at, kc * 16, dq * 2));
#pragma unroll
				for (int mt = 0; mt < DQ_MT; mt++)
					mma_pair<T>(acc[mt * 4 + 2 * dq], acc[mt * 4 + 2 * dq + 1],
						    a[mt], b);
			}
		}
		const int row0 = m0 + qq + (lane >> 2);
		float *out = dq_acc + head + (int64_t)row0 * stride + dc + 2 * (lane & 3);

#pragma unroll
		for (int kc = 0; kc < BWD_BM / 16; kc++) {
			uint32_t c[2][4];
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				ldsm_x4(c[mt], tile_step<BWD_BM>(pt_at, mt * 16, kc * 2) + ds_off);
#pragma unroll
			for (int dq = 0; dq < D / 32; dq++) {
				uint32_t b[4];
				ldsm_x4_trans(b, tile_step<D>(col_at + cq, kc * 16, dq * 2));
#pragma unroll
				for (int mt = 0; mt < 2; mt++)
					mma_pair<T>(acc_dk[mt][2 * dq], acc_dk[mt][2 * dq + 1], c[mt], b);
			}
			constexpr int PER = DQ_MT * 4 / (BWD_BM / 16); /* dQ's tiles a slice */
			static_assert(DQ_MT * 4 % (BWD_BM / 16) == 0,
				      "dQ's tiles shared evenly by the slices");
#pragma unroll
			for (int r = 0; r < 2; r++)
#pragma unroll
				for (int j = 0; j < PER; j++) {
					const int t = kc * PER + j, row = (t / 4) * 16 + r * 8;
					if (row0 + row < seq)
						add2(out + row * stride + (t % 4) * 8, acc[t][2 * r],
						     acc[t][2 * r + 1]);
				}
		}
	}

	/* dK and dV leave through shared memory, free now that every warp is
	 * past its last step, so that global memory sees whole 16-byte chunks
	 * of rows: straight from the accumulators each store wrote 8 rows x 16
	 * bytes. */
	T *stage_k = sq, *stage_v = sq + BWD_BN * D;
	static_assert(2 * BWD_BN <= 4 * BWD_BM, "dK and dV fit where Q and dO were");
	__syncthreads();
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int row = kv + mt * 16 + (lane >> 2) + r * 8;
#pragma unroll
			for (int dt = 0; dt < D / 16; dt++) {
				const int col = dh + dt * 8 + 2 * (lane & 3);
				const int at = swz<D>(row, col >> 3) + (col & 7);
				*(uint32_t *)(stage_k + at) = pack<T>(acc_dk[mt][dt][2 * r] * scale,
								      acc_dk[mt][dt][2 * r + 1] * scale);
				*(uint32_t *)(stage_v + at) =
					pack<T>(acc_dv[mt][dt][2 * r], acc_dv[mt][dt][2 * r + 1]);
			}
		}
	__syncthreads();
	constexpr int CHUNKS = D / 8;
	static_assert(BWD_BN * CHUNKS % BWD_THREADS == 0, "whole passes over the rows");
#pragma unroll
	for (int j = 0; j < BWD_BN * CHUNKS / BWD_THREADS; j++) {
		const int i = threadIdx.x + j * BWD_THREADS, row = i / CHUNKS, c = i % CHUNKS;
		if (n0 + row >= seq)
			break;
		const int64_t at = head + (int64_t)(n0 + row) * stride + c * 8;
		*(uint4 *)(dk + at) = *(const uint4 *)(stage_k + swz<D>(row, c));
		*(uint4 *)(dv + at) = *(const uint4 *)(stage_v + swz<D>(row, c));
	}
}

/* ---- the C interface -------------------------------------------------- */

/* The problem fits our kernels' launch: head size 64 or 128, the grid's y
 * and z (heads, batch) under 65536, positions under 2^31. */
static int check_dims(const struct attention_dims *d, struct sp_err *err)
{
	if (d->head_dim != 64 && d->head_dim != 128)
		return sp_fail(err, "attention: head size %lld: our kernel has tiles for 64 and 128",
			       (long long)d->head_dim);
	if (d->batch < 1 || d->seq < 1 || d->heads < 1 || d->batch > 65535 || d->heads > 65535 ||
	    d->seq > INT32_MAX / 2)
		return sp_fail(err, "attention: batch %lld, seq %lld, heads %lld: outside what our "
				    "kernel launches (1..65535 batches and heads, seq < 2^30)",
			       (long long)d->batch, (long long)d->seq, (long long)d->heads);
	return 0;
}

template <typename T, int D, bool CAUSAL>
static int forward_launch(const struct attention_dims *d, const void *q, const void *k,
			  const void *v, void *o, float *stats, struct sp_err *err)
{
	auto kernel = attention_forward<T, D, CAUSAL>;
	GPU_CHECK(err, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					    (int)fwd_smem<D>()));
	dim3 grid((unsigned)((d->seq + FWD_BM - 1) / FWD_BM), (unsigned)d->heads,
		  (unsigned)d->batch);
	kernel<<<grid, FWD_THREADS, fwd_smem<D>()>>>((const T *)q, (const T *)k, (const T *)v,
						     (T *)o, stats, (int)d->seq, (int)d->heads,
						     d->scale);
	GPU_CHECK_LAUNCH(err, "attention_forward");
	return 0;
}

/* The backward's workspace: the fp32 dQ accumulator (rows x head_dim) and
 * D (rows), rows = batch x seq x heads. */
extern "C" size_t attention_own_workspace(const struct attention_dims *d)
{
	const int64_t rows = d->batch * d->seq * d->heads;
	return (size_t)(rows * d->head_dim + rows) * sizeof(float);
}

template <typename T, int D, bool CAUSAL>
static int backward_launch(const struct attention_dims *d, const void *q, const void *k,
			   const void *v, const void *o, const void *dout, const float *stats,
			   void *dq, void *dk, void *dv, void *ws, struct sp_err *err)
{
	const int64_t rows = d->batch * d->seq * d->heads, count = rows * D;
	float *dq_acc = (float *)ws, *dsum = dq_acc + count;
	attention_backward_prep<T, D><<<(unsigned)((rows + 7) / 8), 256>>>(
		(const T *)o, (const T *)dout, dsum, dq_acc, rows, (int)d->seq, (int)d->heads);
	GPU_CHECK_LAUNCH(err, "attention_backward_prep");
	auto kernel = attention_backward<T, D, CAUSAL>;
	GPU_CHECK(err, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					    (int)bwd_smem<D>()));
	dim3 grid((unsigned)((d->seq + BWD_BN - 1) / BWD_BN), (unsigned)d->heads,
		  (unsigned)d->batch);
	/* Causal: as many (batch, head) pairs side by side as keep their Q,
	 * dO, K and V within 16 MB, a third of the H100's L2. On the H200 at
	 * head 128: 8 pairs of 2,048 positions 4.7% faster than grid order, 4
	 * of 4,096 0.7% (8 there 0.2% slower, 16 0.3%); key block by key block
	 * over the whole grid, every pair at once, was 15 to 17% slower. */
	const int64_t pair_bytes = d->seq * D * 8;
	const int side_by_side = (int)(pair_bytes >= (16 << 20) ? 1 : (16 << 20) / pair_bytes);
	kernel<<<grid, BWD_THREADS, bwd_smem<D>()>>>((const T *)q, (const T *)k, (const T *)v,
						     (const T *)dout, stats, dsum, dq_acc, (T *)dk,
						     (T *)dv, (int)d->seq, (int)d->heads, side_by_side,
						     d->scale);
	GPU_CHECK_LAUNCH(err, "attention_backward");
	const int64_t n4 = count / 4, blocks = (n4 + 255) / 256;
	attention_backward_dq<T><<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(
		(const float4 *)dq_acc, (T *)dq, n4, d->scale);
	GPU_CHECK_LAUNCH(err, "attention_backward_dq");
	return 0;
}

/* Run F<T, D, CAUSAL>(args...) for the problem's element type, head size
 * and mask. */
#define ATTENTION_DISPATCH(d, F, ...)                                                     \
	do {                                                                              \
		const bool c = (d)->causal != 0, w = (d)->head_dim == 128;                \
		if ((d)->bf16)                                                            \
			return w ? (c ? F<__nv_bfloat16, 128, true>(__VA_ARGS__)          \
				      : F<__nv_bfloat16, 128, false>(__VA_ARGS__))        \
				 : (c ? F<__nv_bfloat16, 64, true>(__VA_ARGS__)           \
				      : F<__nv_bfloat16, 64, false>(__VA_ARGS__));        \
		return w ? (c ? F<__half, 128, true>(__VA_ARGS__)                         \
			      : F<__half, 128, false>(__VA_ARGS__))                       \
			 : (c ? F<__half, 64, true>(__VA_ARGS__)                          \
			      : F<__half, 64, false>(__VA_ARGS__));                       \
	} while (0)

extern "C" int attention_own_forward(const struct attention_dims *d, const void *q, const void *k,
				     const void *v, void *o, float *stats, struct sp_err *err)
{
	if (check_dims(d, err))
		return -1;
	ATTENTION_DISPATCH(d, forward_launch, d, q, k, v, o, stats, err);
}

extern "C" int attention_own_backward(const struct attention_dims *d, const void *q,
				      const void *k, const void *v, const void *o,
				      const void *dout, const float *stats, void *dq, void *dk,
				      void *dv, void *workspace, struct sp_err *err)
{
	if (check_dims(d, err))
		return -1;
	ATTENTION_DISPATCH(d, backward_launch, d, q, k, v, o, dout, stats, dq, dk, dv, workspace,
			   err);
}
