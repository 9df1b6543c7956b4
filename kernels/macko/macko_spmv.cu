/* MACKO sparse matrix x (1..16) vectors on the GPU.
 *
 * What it computes: y[v][r] = alpha * sum_c A[r][c] x[v][c] + beta y_in[v][r]
 * with A in the MACKO format (lib/macko/macko.h), fp16 values and x, fp32
 * accumulation, fp16 or fp32 y. On the device the rows start at multiples
 * of 8 elements (lib/macko/macko_layout.h, at most 7 zeros a row more).
 *
 * Work decomposition: one warp per row, on a resident grid of W warps; warp
 * g takes rows g, g + W, g + 2W, ... (next_row). Nothing is claimed at run
 * time: rows claimed from a counter in global memory made the kernel 19%
 * slower at d = 0.5 and 51% at d = 0.1 (the adds on one address, which the
 * warps wait for), and each block's rows claimed from a counter in shared
 * memory 2.5 to 8% (bench/RESULTS.md, macko-spmv, "Rows in turn" and
 * "Dynamic rows"; splitting the last turns' rows between two warps lost
 * too: "Split rows"). A warp walks its row in steps of 512 elements, each
 * lane holding two chunks of 8 (see CHUNK). An element's column is the sum
 * of (delta + 1) over the row up to and including it, minus one: each chunk
 * prefixes its 8 deltas in bytes (SWAR), one warp scan adds the chunks
 * before it, and a carry runs across steps. The next step's loads are
 * issued before the current step is decoded, across rows too, so each warp
 * keeps a step in flight. A chunk never holds two rows' elements, so
 * nothing is masked and no lane ever branches per element ("Rows from
 * multiples of 8").
 *
 * x is used as fp16 [col][NVP] (NVP = nvec rounded up to a power of two,
 * at most 8; for NVP > 1 a small kernel transposes it first), so all
 * vectors of one element come in one 2..16-byte load and the matrix is
 * read once for up to eight vectors. More than eight go as two products,
 * eight and the rest (dispatch), and eight whose x does not fit in shared
 * memory (more than ~14,000 columns) as two of four (launch_fit): faster
 * than one pass ("Two products", "One pass for sixteen vectors").
 * Otherwise as many columns as fit are copied into shared memory (for one
 * vector as pairs, shared_x<1>); the rest (4 vectors of more than ~28,000
 * columns, one of more than ~57,000) are read from the global copy.
 *
 * Bytes it must move: 2.5 per stored element (fp16 value + 4-bit delta),
 * 4 per row (its end), x once per block (from L2) and y; eight vectors also
 * read their gather order (macko_order.cu), 1/16 byte an element, which
 * the reported bytes (macko_dev_bytes) leave out.
 *
 * What limits it, and why this design: on the H200 the L1 data pipe, 85%
 * busy for one vector at d = 0.5 (issue 78%) and 94% for eight (ncu;
 * "Several vectors"). Each element gathers its x from shared memory at a
 * column that is, for the warp's 32 lanes, in effect a random bank: 3.5
 * wavefronts a 4-byte gather, 10.2 a 16-byte one, and no layout of x in
 * shared memory spreads them better ("Bank layouts of x"). One vector's x
 * is stored in pairs, so an element in the column after the one before it
 * needs no gather (multiply_one: 15% fewer wavefronts at d = 0.5, for two
 * instructions an element more; "x in pairs"). Eight vectors gather each
 * chunk's elements in an order chosen at upload so that a quarter-warp's
 * lanes meet fewer bank groups (macko_order.cu, "Gather order": 8 to 35%
 * faster); that leaves them as much bound by issue (79% on an H100, 31
 * instructions an element, 16 of them converts and FMAs) as by the L1.
 * Everything else is kept small beside that: 5 to 7 instructions an element
 * (byte extract, address, load, converts, FMA) and contiguous 512-byte
 * loads; cutting a step's instructions further did not pay ("Fewer
 * instructions a step"). On the H200 one vector's steps at d = 0.5 then
 * move 4.19 TB/s (10.3 us a turn of the grid, plus 6.9 us fixed: "Time
 * against turns"), where a kernel that only reads streams about 4.6 ("Read
 * floor"). On an H100 the kernel is memory-bound (without its gathers it is
 * 1% faster), and what it loses against a plain read is mostly at the
 * start: x is staged about 3.4 us after launch, 1.4 without x's loads, and
 * no step is decoded before ("Timelines"). x is late because its loads
 * share DRAM with the first steps' 5.4 MB: copies of x, the copy engine or
 * other cache policies do not bring it sooner ("x staging"), and neither
 * prefetches nor more steps in flight help ("Prefetches", "More steps in
 * flight"). What is left is bounded: on the H200, gathers that never met in
 * a bank would take 2% off at d = 0.5 and 12% at d = 0.1 ("Ideal banks"),
 * and this walk of the rows, without any decode, already reads 7% slower
 * than a plain read at d = 0.5's 8 steps a row, 4% at d = 0.1's 2
 * (dev/cuda/read_order.cu); steps through a shared-memory ring filled by
 * cp.async, or stored turn by turn, were slower ("cp.async ring",
 * "Turn-by-turn step placement"). */
#include <cuda_fp16.h>

#include <stdint.h>

#include "core/gpu_check.cuh"
#include "macko/macko_decode.cuh"
#include "macko/macko_gpu.h"
#include "macko/macko_order.h"
/* Per-warp timeline hooks: dev/cuda/macko_trace.cu defines them (and
 * MACKO_TRACE) before it includes this file; in the library they are empty. */
#ifndef MACKO_TRACE
#define TRACE_ENTER(lane) (void)(lane)
#define TRACE_AT(lane, slot)
#define TRACE_STEP(lane)
#define TRACE_X_ARRIVED()
#define TRACE_EXIT(lane)
#endif
extern "C" {
#include "macko/macko_layout.h"
}

/* The most vectors one pass takes; more go as several (dispatch). */
enum { MAX_NVP = 8 };

/* Threads a block. 16 warps: fewer blocks stage x into shared memory than
 * with 8, while two blocks an SM still keep 32 warps of loads in flight.
 * When x is not all in shared memory, the block takes all of it, so one
 * block an SM: for up to four vectors it has 32 warps (12% faster on
 * 4096x65536 than 16: the gathers from global memory want warps). Eight
 * vectors' x (16 bytes a column) leaves room for one block an SM; it has
 * 28 warps: at 72 registers a thread nothing spills, where 32 warps (64
 * registers) spill in the step loop and run 4% slower. */
template <int NVP, bool ALL_SHARED> constexpr int block_threads()
{
	return NVP <= 4 && !ALL_SHARED ? 1024 : NVP == 8 ? 896 : 512;
}
template <int NVP, bool ALL_SHARED> constexpr int min_blocks()
{
	return NVP <= 4 && ALL_SHARED ? 2 : 1;
}

/* The threads a launch's blocks get: block_threads, but the 32-warp blocks
 * (x partly in global memory) get fewer warps, down to the all-shared
 * kernel's block, when the rows are too few to give 32 to every SM (with a
 * block an SM, 2048 rows would otherwise fill only 64 SMs). */
template <int NVP, bool ALL_SHARED> static int launch_threads(int64_t rows, int sms)
{
	constexpr int most = block_threads<NVP, ALL_SHARED>(), fewest = block_threads<NVP, true>();
	const int64_t want = (rows + sms - 1) / sms * 32;
	return (int)(want < fewest ? fewest : want > most ? most : want);
}

/* The NVP (2 or 4) fp16 entries of x for column c, as floats, from p =
 * the column's NVP halves in global memory (the columns past shared
 * memory): one 4- or 8-byte access. More vectors never read x from global
 * memory: dispatch splits them into products whose x fits. */
template <int NVP>
__device__ __forceinline__ void load_x(const __half *p, float (&out)[NVP])
{
	static_assert(NVP == 2 || NVP == 4, "only 2 or 4 vectors read x from global memory");
	__half2 h[NVP / 2];
	if constexpr (NVP == 2)
		h[0] = *reinterpret_cast<const __half2 *>(p);
	else
		*reinterpret_cast<uint2 *>(h) = *reinterpret_cast<const uint2 *>(p);
#pragma unroll
	for (int k = 0; k < NVP / 2; k++) {
		const float2 f = __half22float2(h[k]);
		out[2 * k] = f.x;
		out[2 * k + 1] = f.y;
	}
}

/* x in shared memory: fp16 [col][NVP] for several vectors (2 NVP bytes a
 * column); for one vector, column c's slot holds the pair x[c], x[c + 1]
 * (fp16, low half first), so one 4-byte gather serves an element and the
 * next when that one is in the next column (multiply_one). */
template <int NVP> struct shared_x {
	using type = __half;
	static constexpr int bytes = 2 * NVP;
};
template <> struct shared_x<1> {
	using type = uint32_t;
	static constexpr int bytes = 4;
};

template <typename OutT> __device__ __forceinline__ float to_float(OutT v);
template <> __device__ __forceinline__ float to_float<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <typename OutT> __device__ __forceinline__ OutT from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

/* A lane's part of a step: two chunks of 8 fp16 values and their nibbles,
 * and for eight vectors the order of their gathers (chunk c's rotation in
 * bits 4c..4c + 2; macko_order.cu). */
struct step_data {
	uint4 v[2];
	uint32_t d[2];
	uint32_t rot;
};

/* Whether a kernel gathers each chunk in the order macko_order.cu chose:
 * eight vectors with x all in shared memory, whose 16-byte gathers are
 * what it was chosen for. */
template <int NVP, bool ALL_SHARED> __host__ __device__ constexpr bool gathers_in_order()
{
	return NVP == 8 && ALL_SHARED;
}

template <bool ORDERED>
__device__ __forceinline__ step_data load_step(const uint4 *values, const uint32_t *deltas,
					       const uint8_t *order, int base, int lane, int e)
{
	step_data t;
#pragma unroll
	for (int c = 0; c < 2; c++) {
		const int first = chunk_first(base, lane, c);
		if (first < e) {
			/* unsigned: a shift, where a signed division takes three.
			 * .cg (L2, normal eviction), not .cs (evict first): 0.6
			 * to 2.3% faster on an H100, and within 0.6% of every
			 * other load on the H200 (bench/RESULTS.md, macko-spmv,
			 * ".cg loads", "Load instructions"; line-aligned steps
			 * did not help either: "hs256", "Row alignment").
			 * Probably because rows start at 16-byte boundaries,
			 * so consecutive steps share a 32-byte sector, which .cs
			 * lets go before the second read (not measured). */
			t.v[c] = __ldcg(values + (unsigned)first / CHUNK);
			t.d[c] = __ldcg(deltas + (unsigned)first / CHUNK);
		} else {
			t.v[c] = make_uint4(0, 0, 0, 0);
			t.d[c] = 0;
		}
	}
	if constexpr (ORDERED) {
		const int first = chunk_first(base, lane, 0);
		t.rot = first < e ? __ldcg(order + (unsigned)first / CHUNK) : 0u;
	}
	return t;
}

/* Shared memory holds x between PAD zero slots on each side: column c is
 * slot c + PAD (for one vector, the last column's pair ends in a zero).
 * The elements of a row's last step that lie past its end then read real
 * x or zeros without leaving the array, at most 7 slots past the row's
 * last column; the redirect reads the left zeros. */
enum { PAD = 8 };

/* The 16 bytes `in` of x (entries 8i..8i+7 of xt) into shared memory; for
 * one vector as the 8 pairs they begin, `next` being entry 8i+8. Returns 1
 * if any of the 8 halves is Inf or NaN. */
template <int NVP>
__device__ __forceinline__ uint32_t store_staged(typename shared_x<NVP>::type *xs, int i, uint4 in,
						 uint32_t next)
{
	const uint32_t w[4] = {in.x, in.y, in.z, in.w};
	uint32_t bad = 0;
#pragma unroll
	for (int q = 0; q < 4; q++)
		bad |= ((w[q] & 0x7c00u) == 0x7c00u) | ((w[q] & 0x7c000000u) == 0x7c000000u);
	if constexpr (NVP == 1) {
		/* pair 2q is word q; pair 2q + 1 its high half and the next word's low one */
		uint4 *out = reinterpret_cast<uint4 *>(xs + 8 * i);
		out[0] = make_uint4(w[0], __byte_perm(w[0], w[1], 0x5432), w[1], __byte_perm(w[1], w[2], 0x5432));
		out[1] = make_uint4(w[2], __byte_perm(w[2], w[3], 0x5432), w[3], __byte_perm(w[3], next, 0x5432));
	} else {
		reinterpret_cast<uint4 *>(xs)[i] = in;
	}
	return bad;
}

/* Loads of x that one thread issues before it stores any: a loop of one
 * load and its store waits an L2 round trip per 16 bytes, which for eight
 * vectors (9 round trips a thread at 8192 columns) is most of the
 * kernel's fixed cost (bench/RESULTS.md, macko-spmv, "x staged with loads
 * in flight"). */
template <int NVP> struct x_batch {
	static constexpr int n = NVP == 1 ? 4 : 8;
	uint4 in[n];
	uint32_t next[n]; /* one vector: the half after in's 8 (store_staged) */
};

/* The batch of x's 16-byte words i0, i0 + blockDim.x, ... (n16 of them, of
 * n halves in all), zeros past the end. */
template <int NVP>
__device__ __forceinline__ x_batch<NVP> load_x_batch(const __half *xt, int n, int i0)
{
	const uint4 *src = reinterpret_cast<const uint4 *>(xt);
	const int n16 = n / 8;
	x_batch<NVP> t;
#pragma unroll
	for (int b = 0; b < x_batch<NVP>::n; b++) {
		const int i = i0 + b * (int)blockDim.x;
		t.in[b] = i < n16 ? __ldg(src + i) : make_uint4(0, 0, 0, 0);
		t.next[b] = NVP == 1 && 8 * i + 8 < n ? __half_as_ushort(__ldg(xt + 8 * i + 8)) : 0;
	}
	return t;
}

/* x as [col][NVP] halves (xt) for its first smem_cols columns into shared
 * memory between the zero slots: a plain copy, 16 bytes at a time (for one
 * vector made into pairs, store_staged, with the half after them), in
 * batches of loads (x_batch). The kernel issues the first batch (`first`,
 * load_x_batch at threadIdx.x) before it waits on anything, so those loads
 * and the row ends' go to memory together rather than one after the other
 * (x is staged about 4 us into a 28 us product at d = 0.1 on the H200:
 * bench/RESULTS.md, macko-spmv, "Timelines" and "x staged with loads in
 * flight").
 * Returns whether any entry of x is Inf or NaN, the same in every thread
 * of the block. */
template <int NVP>
__device__ __forceinline__ bool stage_x(typename shared_x<NVP>::type *xs0, const __half *xt,
					int smem_cols, x_batch<NVP> batch)
{
	constexpr int pad_words = PAD * shared_x<NVP>::bytes / 4;
	constexpr int BATCH = x_batch<NVP>::n;
	uint32_t *words = reinterpret_cast<uint32_t *>(xs0);
	const int tail = pad_words + smem_cols * shared_x<NVP>::bytes / 4;
	for (int i = threadIdx.x; i < pad_words; i += blockDim.x)
		words[i] = words[tail + i] = 0;
	typename shared_x<NVP>::type *xs = xs0 + PAD * NVP;
	const int n = smem_cols * NVP, n16 = n / 8;
	uint32_t exponents = 0; /* 1 once an Inf or NaN is seen */
	for (int i0 = threadIdx.x; i0 < n16; i0 += BATCH * blockDim.x) {
		if (i0 != (int)threadIdx.x)
			batch = load_x_batch<NVP>(xt, n, i0);
#pragma unroll
		for (int b = 0; b < BATCH; b++) {
			const int i = i0 + b * (int)blockDim.x;
			if (i < n16)
				exponents |= store_staged<NVP>(xs, i, batch.in[b], batch.next[b]);
		}
	}
	for (int i = 8 * n16 + threadIdx.x; i < n; i += blockDim.x) {
		exponents |= (__half_as_ushort(xt[i]) & 0x7c00u) == 0x7c00u;
		if constexpr (NVP == 1)
			xs[i] = __half_as_ushort(xt[i]) |
				(i + 1 < n ? (uint32_t)__half_as_ushort(xt[i + 1]) << 16 : 0u);
		else
			xs[i] = xt[i];
	}
	TRACE_X_ARRIVED();
	return __syncthreads_or((int)exponents) != 0;
}

/* x (nvec x cols, row-major) to xt ([col][NVP], vectors past nvec zero):
 * one column a thread, each vector read coalesced, one vector store. */
template <int NVP>
__global__ void transpose_x(const __half *__restrict__ x, int cols, int nvec, __half *__restrict__ xt)
{
	const int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	__align__(16) __half col[NVP];
#pragma unroll
	for (int v = 0; v < NVP; v++)
		col[v] = v < nvec ? x[(size_t)v * cols + c] : __float2half(0.0f);
	__half *out = xt + (size_t)c * NVP;
	if constexpr (NVP == 8)
		*reinterpret_cast<uint4 *>(out) = *reinterpret_cast<const uint4 *>(col);
	else if constexpr (NVP == 4)
		*reinterpret_cast<uint2 *>(out) = *reinterpret_cast<const uint2 *>(col);
	else
		*reinterpret_cast<__half2 *>(out) = *reinterpret_cast<const __half2 *>(col);
}

/* Where a warp is: row r, elements [s, e), current step starting at base. */
struct cursor {
	int r, s, e, base;
};

/* The row a warp takes after its current one, its pointers loaded a whole
 * row ahead, so they are not waited for. s is where the row before it ends,
 * as loaded: rounded here, it would wait for the load. */
struct claim {
	int r, s, e;
};

/* Row r and its pointers (none past the last row). */
__device__ __forceinline__ claim claim_at(int r, int rows, const int32_t *__restrict__ ends)
{
	claim c;
	c.r = r;
	c.s = r < rows ? __ldg(ends + r) : 0;
	c.e = r < rows ? __ldg(ends + r + 1) : 0;
	return c;
}

/* Move to the next row and load the pointers of the one after; rows go
 * to the grid's `warps` warps in turn (the header says why). Rows whose
 * start is already their end (empty rows) are finished on the way: their
 * y is beta * y_in. c.r >= rows: no rows left. */
template <typename OutT>
__device__ __forceinline__ void next_row(cursor &c, claim &next, int warps, int lane,
					 int rows, const int32_t *__restrict__ ends, int nvec,
					 float beta, const OutT *__restrict__ y_in, OutT *__restrict__ y)
{
	for (;;) {
		c.r = next.r;
		if (c.r >= rows)
			return;
		c.s = (next.s + CHUNK - 1) & ~(CHUNK - 1);
		c.e = next.e;
		next = claim_at(c.r + warps, rows, ends);
		c.base = c.s;
		if (c.base < c.e)
			return;
		if (lane < nvec) {
			const size_t at = (size_t)lane * rows + c.r;
			y[at] = from_float<OutT>(beta != 0.0f ? beta * to_float<OutT>(y_in[at]) : 0.0f);
		}
	}
}

/* The NVP (2, 4 or 8) entries of x at shared-memory address `addr` (an
 * address in the shared window, as __cvta_generic_to_shared gives), as
 * floats. */
template <int NVP> __device__ __forceinline__ void lds_x(uint32_t addr, float (&out)[NVP])
{
	uint32_t w[NVP / 2];
	if constexpr (NVP == 2)
		asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w[0]) : "r"(addr));
	else if constexpr (NVP == 4)
		asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "r"(addr));
	else
		asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
			     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
			     : "r"(addr));
#pragma unroll
	for (int i = 0; i < NVP / 2; i++) {
		const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
		out[2 * i] = f.x;
		out[2 * i + 1] = f.y;
	}
}

/* The shared address of a chunk's base slot, idx0 slots of slot_bytes past
 * x's zero slot: opaque to the compiler, so it does not fold idx0 into
 * each element's address (one instruction more per element). */
__device__ __forceinline__ uint32_t chunk_base(uint32_t zero, int idx0, int slot_bytes)
{
	uint32_t base;
	asm("mov.u32 %0, %1;" : "=r"(base) : "r"(zero + (uint32_t)idx0 * slot_bytes));
	return base;
}

/* A chunk in the order of its gathers (macko_order.cu), rotated by r:
 * element (i + r) % 8 goes i-th. w gets the values' words in that order,
 * and byte i of off the i-th element's slot past the chunk's base, which
 * is k plus its delta prefix (p, delta_prefix; at most 127). Two selects
 * and two funnel shifts for the offsets, eight selects and four funnel
 * shifts for the values. */
__device__ __forceinline__ void rotate_chunk(uint4 v, const uint32_t (&p)[2], uint32_t r,
					     uint32_t (&w)[4], uint32_t (&off)[2])
{
	uint32_t o0 = p[0] + 0x03020100u, o1 = p[1] + 0x07060504u;
	uint32_t w0 = v.x, w1 = v.y, w2 = v.z, w3 = v.w, t;
	if (r & 4) { /* by four elements: the chunk's two halves trade places */
		t = o0, o0 = o1, o1 = t;
		t = w0, w0 = w2, w2 = t;
		t = w1, w1 = w3, w3 = t;
	}
	if (r & 2) { /* by two: one word */
		t = w0, w0 = w1, w1 = w2, w2 = w3, w3 = t;
	}
	const uint32_t bytes = (r & 3) * 8, halves = (r & 1) * 16;
	off[0] = __funnelshift_r(o0, o1, bytes);
	off[1] = __funnelshift_r(o1, o0, bytes);
	w[0] = __funnelshift_r(w0, w1, halves);
	w[1] = __funnelshift_r(w1, w2, halves);
	w[2] = __funnelshift_r(w2, w3, halves);
	w[3] = __funnelshift_r(w3, w0, halves);
}

/* For 2 to 8 vectors, acc[v] += value * x[v][column] over a lane's first
 * NCHUNKS chunks (multiply_one does one vector). Element k of
 * chunk c reads slot idx0[c] + k + (its delta prefix): one byte extract and
 * one multiply-add to an address, k being the load's constant offset.
 * Eight vectors take each chunk's elements in the order macko_order.cu
 * chose (rotate_chunk), with k in the offsets. Elements past their row's
 * end (k >= hi) have a zero value, so their
 * product is zero wherever they read, unless x holds an Inf or NaN there:
 * with `redirect` (x not finite, or not all in shared memory) they read a
 * zero slot; a copy made without MAY_REDIRECT has no test for it (and
 * only such a copy takes the chosen order). */
template <int NVP, bool ALL_SHARED, int NCHUNKS, bool MAY_REDIRECT>
__device__ __forceinline__ void multiply_lane(const step_data &d, const uint32_t (&p)[2][2],
					      const int (&idx0)[2], const int (&hi)[2], bool redirect,
					      const typename shared_x<NVP>::type *xs, const __half *xt,
					      int smem_cols, float (&acc)[NVP])
{
	constexpr int SLOT = shared_x<NVP>::bytes;
	constexpr bool ORDERED = gathers_in_order<NVP, ALL_SHARED>() && !MAY_REDIRECT;
	const uint32_t zero = (uint32_t)__cvta_generic_to_shared(xs);
	uint32_t at[LANE_ELEMS], words[NCHUNKS][4];
#pragma unroll
	for (int c = 0; c < NCHUNKS; c++) {
		const uint32_t base = chunk_base(zero, idx0[c], SLOT);
		uint32_t off[2] = {p[c][0], p[c][1]};
		if constexpr (ORDERED) {
			rotate_chunk(d.v[c], p[c], (d.rot >> (4 * c)) & 7u, words[c], off);
		} else {
			words[c][0] = d.v[c].x, words[c][1] = d.v[c].y;
			words[c][2] = d.v[c].z, words[c][3] = d.v[c].w;
		}
#pragma unroll
		for (int k = 0; k < CHUNK; k++)
			at[c * CHUNK + k] = delta_sum(off, k) * SLOT + base;
	}
	if (MAY_REDIRECT && redirect) {
#pragma unroll
		for (int i = 0; i < NCHUNKS * CHUNK; i++) {
			const int c = i / CHUNK, k = i % CHUNK;
			if (k >= hi[c])
				at[i] = zero - k * SLOT;
		}
	}
#pragma unroll
	for (int i = 0; i < NCHUNKS * CHUNK; i += 2) {
		const int c = i / CHUNK, k = i % CHUNK;
		const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&words[c][k / 2]));
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float xv[NVP];
			const uint32_t addr = at[i + h] + (ORDERED ? 0 : (k + h) * SLOT);
			/* When all of x is in shared memory (ALL_SHARED, the usual
			 * case) there is no test here: a per-element branch keeps
			 * the compiler from issuing a step's loads together. */
			if constexpr (ALL_SHARED) {
				lds_x<NVP>(addr, xv);
			} else {
				const int slot = (int)(addr - zero) / SLOT;
				if (slot < smem_cols + PAD)
					lds_x<NVP>(addr, xv);
				else
					load_x<NVP>(xt + (size_t)(slot - PAD) * NVP, xv);
			}
			const float av = h ? a.y : a.x;
#pragma unroll
			for (int v = 0; v < NVP; v++)
				acc[v] = fmaf(av, xv[v], acc[v]);
		}
	}
}

/* x's pair at shared address `addr` (see shared_x<1>); when x is not all in
 * shared memory and the slot lies past it, x[c] alone from the global copy. */
template <bool ALL_SHARED>
__device__ __forceinline__ uint32_t gather_pair(uint32_t addr, uint32_t zero, int smem_cols,
						const __half *xt)
{
	if (!ALL_SHARED) {
		const int slot = (int)(addr - zero) / 4;
		if (slot >= smem_cols + PAD)
			return __half_as_ushort(xt[slot - PAD]);
	}
	uint32_t w;
	asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w) : "r"(addr));
	return w;
}

/* multiply_lane for one vector. Elements go in pairs: the first gathers the
 * x pair at its column c; the second, when it lies in column c + 1 (its
 * delta is 0), takes the high half, and its lane's gather is off. At
 * d = 0.5 a quarter of the gathers are off, and the rest, fewer lanes at
 * random banks, cost 15% fewer wavefronts (scripts/macko-bank-sim.py;
 * ncu counts 16%), for two instructions an element more than fp32 x
 * gathered one by one: the conversion of x (a pair of fp32 would take 8
 * bytes, and 8-byte gathers conflict more) and the test.
 * With `redirect`, elements past the row's end gather the zero slot. With
 * x partly in global memory, every element gathers its own. */
template <bool ALL_SHARED, int NCHUNKS, bool MAY_REDIRECT>
__device__ __forceinline__ void multiply_one(const step_data &d, const uint32_t (&p)[2][2],
					     const int (&idx0)[2], const int (&hi)[2], bool redirect,
					     const uint32_t *xs, const __half *xt, int smem_cols,
					     float &acc)
{
	const uint32_t zero = (uint32_t)__cvta_generic_to_shared(xs);
#pragma unroll
	for (int c = 0; c < NCHUNKS; c++) {
		const uint32_t base = chunk_base(zero, idx0[c], 4);
#pragma unroll
		for (int k = 0; k < CHUNK; k += 2) {
			const uint32_t sum0 = delta_sum(p[c], k), sum1 = delta_sum(p[c], k + 1);
			uint32_t addr0 = sum0 * 4 + base + k * 4, addr1 = sum1 * 4 + base + (k + 1) * 4;
			/* the second gathers its own x unless its delta is 0 */
			int second = !ALL_SHARED || sum1 != sum0;
			if (MAY_REDIRECT && redirect) {
				if (k >= hi[c])
					addr0 = zero;
				if (k + 1 >= hi[c]) {
					addr1 = zero;
					second = 1;
				}
			}
			const uint32_t w0 = gather_pair<ALL_SHARED>(addr0, zero, smem_cols, xt);
			uint32_t w1;
			if (ALL_SHARED)
				/* w1 is set before the predicated load, or ptxas
				 * keeps its old value live across the loop */
				asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t"
					     "shr.b32 %0, %3, 16;\n\t@q ld.shared.b32 %0, [%1];\n\t}"
					     : "=r"(w1)
					     : "r"(addr1), "r"(second), "r"(w0));
			else
				w1 = gather_pair<false>(addr1, zero, smem_cols, xt);
			const uint32_t v = reinterpret_cast<const uint32_t *>(&d.v[c])[k / 2];
			const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&v));
			acc = fmaf(a.x, __half2float(__ushort_as_half((unsigned short)w0)), acc);
			acc = fmaf(a.y, __half2float(__ushort_as_half((unsigned short)w1)), acc);
		}
	}
}

/* multiply_one (one vector) or multiply_lane over one chunk a lane
 * (`one`: every lane's second chunk lies past the row) or two. */
template <int NVP, bool ALL_SHARED, bool MAY_REDIRECT>
__device__ __forceinline__ void multiply_step(bool one, const step_data &d, const uint32_t (&p)[2][2],
					      const int (&idx0)[2], const int (&hi)[2], bool redirect,
					      const typename shared_x<NVP>::type *xs, const __half *xt,
					      int smem_cols, float (&acc)[NVP])
{
	if constexpr (NVP == 1) {
		if (one)
			multiply_one<ALL_SHARED, 1, MAY_REDIRECT>(d, p, idx0, hi, redirect, xs, xt,
								  smem_cols, acc[0]);
		else
			multiply_one<ALL_SHARED, 2, MAY_REDIRECT>(d, p, idx0, hi, redirect, xs, xt,
								  smem_cols, acc[0]);
	} else if (one) {
		multiply_lane<NVP, ALL_SHARED, 1, MAY_REDIRECT>(d, p, idx0, hi, redirect, xs, xt,
								smem_cols, acc);
	} else {
		multiply_lane<NVP, ALL_SHARED, 2, MAY_REDIRECT>(d, p, idx0, hi, redirect, xs, xt,
								smem_cols, acc);
	}
}

/* One exchange of warp_totals: lanes whose bit OFF is set keep the upper
 * N of their 2N partial sums and send the lower N to the partner lane,
 * which keeps the lower ones; then the same with N / 2 and OFF / 2. */
template <int N, int OFF, int NVP>
__device__ __forceinline__ void exchange_halves(float (&acc)[NVP], int lane)
{
	const bool upper = lane & OFF;
#pragma unroll
	for (int i = 0; i < N; i++) {
		const float send = upper ? acc[i] : acc[i + N];
		const float keep = upper ? acc[i + N] : acc[i];
		acc[i] = keep + __shfl_xor_sync(0xffffffffu, send, OFF);
	}
	if constexpr (N > 1)
		exchange_halves<N / 2, OFF / 2>(acc, lane);
}

/* The warp's sums of acc[v] for all NVP vectors at once: lane l ends with
 * vector l / (32 / NVP)'s total after NVP - 1 + log2(32 / NVP) shuffles
 * (9 for 8 vectors), where reducing each vector alone takes 5 NVP (40).
 * acc is left clobbered. */
template <int NVP> __device__ __forceinline__ float warp_totals(float (&acc)[NVP], int lane)
{
	if constexpr (NVP > 1)
		exchange_halves<NVP / 2, 16>(acc, lane);
#pragma unroll
	for (int off = 16 / NVP; off > 0; off >>= 1)
		acc[0] += __shfl_xor_sync(0xffffffffu, acc[0], off);
	return acc[0];
}

/* What a warp carries from step to step. */
template <int NVP> struct warp_state {
	cursor at;           /* the next step to load */
	claim next;          /* the row after at's */
	int warps;           /* of the grid */
	int carry;           /* slot of the column before the step's first */
	float acc[NVP];
};

/* One step: load the next step into `into`, then decode and multiply
 * `cur` (the step loaded before) and, at a row's end, write its y.
 * Two buffers that trade roles each step, so the prefetch costs no copies. */
template <int NVP, bool ALL_SHARED, typename OutT>
__device__ __forceinline__ void run_step(step_data &cur_data, step_data &into, warp_state<NVP> &w,
					 int lane, bool exact,
					 const uint4 *__restrict__ values,
					 const uint32_t *__restrict__ deltas,
					 const uint8_t *__restrict__ order,
					 const int32_t *__restrict__ ends, int rows,
					 const typename shared_x<NVP>::type *xs, const __half *__restrict__ xt,
					 int smem_cols, int nvec, float alpha, float beta,
					 const OutT *__restrict__ y_in, OutT *__restrict__ y)
{
	constexpr bool ordered = gathers_in_order<NVP, ALL_SHARED>();
	const cursor cur = w.at;
	w.at.base += STEP;
	if (w.at.base >= w.at.e)
		next_row<OutT>(w.at, w.next, w.warps, lane, rows, ends, nvec, beta, y_in, y);
	if (w.at.r < rows)
		into = load_step<ordered>(values, deltas, order, w.at.base, lane, w.at.e);

	/* Rows start at multiples of 8 (macko_layout.h): no chunk holds an
	 * earlier row's elements. Only in a row's last step do lanes hold
	 * fewer than 8 of its elements (hi), or none. What lies past the end
	 * is zero, value and delta (the gap before the next row, or a chunk
	 * not loaded), so it adds nothing to the sums; hi keeps it from
	 * counting as columns. */
	const bool whole = cur.base + STEP <= cur.e; /* the same in every lane */
	int hi[2] = {CHUNK, CHUNK};
	if (!whole) {
#pragma unroll
		for (int c = 0; c < 2; c++)
			hi[c] = chunk_elements(cur.base, lane, c, cur.e);
	}
	uint32_t p[2][2];
	delta_prefix(cur_data.d[0], p[0]);
	delta_prefix(cur_data.d[1], p[1]);
	int idx0[2];
	const int advance = chunk_starts(p, hi, w.carry, idx0);
	/* A row's last step often holds only a few chunks (a row of 4100
	 * elements takes 9 steps, the last with 4); when the second chunks of
	 * all lanes lie past the row, only the first ones are multiplied.
	 * Only a row's last step has elements past it to redirect, and only
	 * when exact. With x all in shared memory, every other step takes a
	 * copy of the multiply without the test (2% faster for one vector,
	 * 0.5% for eight); with x partly in global memory, four copies of the
	 * bigger multiply cost more in instruction fetch than they save (16
	 * vectors, when they went in one pass, ran 12% slower). */
	constexpr bool lean = ALL_SHARED;
	const bool one = cur.base + STEP / 2 >= cur.e, redirect = exact && !whole;
	if (lean && !redirect)
		multiply_step<NVP, ALL_SHARED, false>(one, cur_data, p, idx0, hi, redirect, xs, xt,
						      smem_cols, w.acc);
	else
		multiply_step<NVP, ALL_SHARED, true>(one, cur_data, p, idx0, hi, redirect, xs, xt,
						     smem_cols, w.acc);
	w.carry += advance;
	if (cur.base + STEP < cur.e)
		return; /* the row goes on */
	const float sum = warp_totals<NVP>(w.acc, lane);
	const int v = lane / (32 / NVP);
	if (lane % (32 / NVP) == 0 && v < nvec) {
		const size_t o = (size_t)v * rows + cur.r;
		float out = alpha * sum;
		if (beta != 0.0f)
			out = fmaf(beta, to_float<OutT>(y_in[o]), out);
		y[o] = from_float<OutT>(out);
	}
#pragma unroll
	for (int v = 0; v < NVP; v++)
		w.acc[v] = 0.0f;
	w.carry = PAD;
}

template <int NVP, bool ALL_SHARED, typename OutT>
__global__ void __launch_bounds__(block_threads<NVP, ALL_SHARED>(), min_blocks<NVP, ALL_SHARED>())
macko_spmv_kernel(
	const uint4 *__restrict__ values, const uint32_t *__restrict__ deltas,
	const uint8_t *__restrict__ order, const int32_t *__restrict__ ends, int rows,
	const __half *__restrict__ xt,
	int smem_cols, int nvec, float alpha, float beta, const OutT *__restrict__ y_in,
	OutT *__restrict__ y)
{
	extern __shared__ __align__(16) unsigned char smem[];
	auto *xs = reinterpret_cast<typename shared_x<NVP>::type *>(smem);
	const int lane = threadIdx.x & 31;

	/* The pipeline runs across rows: the first step of the next row is
	 * loaded while the last step of this one is decoded, so a warp always
	 * has a step in flight and never waits on a row pointer. The first
	 * step is in flight while x is staged. */
	TRACE_ENTER(lane);
	const x_batch<NVP> first = load_x_batch<NVP>(xt, smem_cols * NVP, threadIdx.x);
	warp_state<NVP> w;
	w.warps = (int)(gridDim.x * (blockDim.x >> 5));
	/* Warps are numbered across the blocks first, so that the rows of the
	 * last turn, which not every warp gets, spread over all the SMs. */
	w.next = claim_at((int)((threadIdx.x >> 5) * gridDim.x + blockIdx.x), rows, ends);
	next_row<OutT>(w.at, w.next, w.warps, lane, rows, ends, nvec, beta, y_in, y);
	step_data a = {}, b = {};
	if (w.at.r < rows)
		a = load_step<gathers_in_order<NVP, ALL_SHARED>()>(values, deltas, order, w.at.base,
								   lane, w.at.e);
	TRACE_AT(lane, TRACE_ENDS);
	const bool exact = stage_x<NVP>(xs, xt, smem_cols, first) || !ALL_SHARED;
	TRACE_AT(lane, TRACE_STAGED);
#pragma unroll
	for (int v = 0; v < NVP; v++)
		w.acc[v] = 0.0f;
	w.carry = PAD;
	while (w.at.r < rows) {
		run_step<NVP, ALL_SHARED, OutT>(a, b, w, lane, exact, values, deltas,
						order, ends, rows, xs, xt, smem_cols, nvec, alpha, beta,
						y_in, y);
		TRACE_STEP(lane);
		if (w.at.r >= rows)
			break;
		run_step<NVP, ALL_SHARED, OutT>(b, a, w, lane, exact, values, deltas,
						order, ends, rows, xs, xt, smem_cols, nvec, alpha, beta,
						y_in, y);
		TRACE_STEP(lane);
	}
	TRACE_EXIT(lane);
}

extern "C" int macko_dev_upload(const struct macko *m, int max_vectors, struct macko_dev *d,
				struct sp_err *err)
{
	*d = (struct macko_dev){m->rows, m->cols, m->elements, m->padded};
	d->max_vectors = max_vectors;
	if (max_vectors < 1 || max_vectors > MACKO_MAX_VECTORS)
		return sp_fail(err, "MACKO upload: %d vectors (1..%d)", max_vectors, MACKO_MAX_VECTORS);
	if (m->rows > INT32_MAX - 1 || m->cols > INT32_MAX)
		return sp_fail(err, "MACKO matrix of %lld x %lld is too large for the GPU kernel's "
				    "32-bit indices",
			       (long long)m->rows, (long long)m->cols);
	struct macko_layout a;
	if (macko_align(m, &a, "MACKO matrix", err))
		return -1;
	/* macko_align allocates 8 elements when there are none. */
	const size_t n = (size_t)(a.elements ? a.elements : CHUNK);
	int rc = -1;
	if (gpu_malloc(&d->values, n * 2, "MACKO values", err) ||
	    gpu_malloc(&d->deltas, n / 2, "MACKO deltas", err) ||
	    gpu_malloc((void **)&d->ends, (size_t)(m->rows + 1) * 4, "MACKO row ends", err) ||
	    gpu_upload(d->values, a.values, n * 2, err) ||
	    gpu_upload(d->deltas, a.deltas, n / 2, err) ||
	    gpu_upload(d->ends, a.ends, (size_t)(m->rows + 1) * 4, err))
		goto out;
	if (max_vectors > 1 &&
	    gpu_malloc(&d->xt, (size_t)m->cols * MAX_NVP * 2 + 16, "transposed x", err))
		goto out;
	/* More than four vectors go through the eight-vector kernel (dispatch):
	 * five to eight in one product, more as eight and the rest. */
	if (max_vectors > MAX_NVP / 2 &&
	    (gpu_malloc(&d->order, macko_order_bytes((int64_t)n), "MACKO gather order", err) ||
	     macko_order_choose(d->deltas, d->ends, m->rows, (int64_t)n, d->order, err)))
		goto out;
	rc = 0;
out:
	macko_layout_free(&a);
	if (rc)
		macko_dev_free(d);
	return rc;
}

extern "C" void macko_dev_free(struct macko_dev *d)
{
	gpu_free(d->values);
	gpu_free(d->deltas);
	gpu_free(d->ends);
	gpu_free(d->xt);
	gpu_free(d->order);
	d->values = d->deltas = d->xt = d->order = NULL;
	d->ends = NULL;
}

extern "C" double macko_dev_bytes(const struct macko_dev *d, int nvec, enum macko_out out,
				  int reads_y)
{
	double ysize = out == MACKO_OUT_F16 ? 2 : 4;
	return 2.5 * (double)d->padded + 4.0 * (double)(d->rows + 1) + 2.0 * nvec * (double)d->cols +
	       (reads_y ? 2 : 1) * ysize * nvec * (double)d->rows;
}

/* The device's limits, read once. */
struct device_limits {
	int sms, smem_optin;
};

static int device_limits(struct device_limits *out, struct sp_err *err)
{
	static struct device_limits cached;
	if (!cached.sms) {
		int dev;
		GPU_CHECK(err, cudaGetDevice(&dev));
		GPU_CHECK(err, cudaDeviceGetAttribute(&cached.smem_optin,
						      cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
		GPU_CHECK(err, cudaDeviceGetAttribute(&cached.sms, cudaDevAttrMultiProcessorCount, dev));
	}
	*out = cached;
	return 0;
}

/* Columns of x in shared memory: all that fit beside a margin for the
 * kernel's own needs, a multiple of 8 so the copy stays in 16 bytes. */
static int shared_columns(const struct macko_dev *d, int bytes_per_col,
			  const struct device_limits *lim)
{
	int64_t fit = ((int64_t)lim->smem_optin - 1024) / bytes_per_col / 8 * 8;
	return (int)(d->cols < fit ? d->cols : fit);
}

template <int NVP, bool ALL_SHARED, typename OutT>
static int launch(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		  const void *y_in, void *y, struct sp_err *err)
{
	auto kernel = macko_spmv_kernel<NVP, ALL_SHARED, OutT>;
	struct device_limits lim;
	if (device_limits(&lim, err))
		return -1;
	const int smem_cols = shared_columns(d, shared_x<NVP>::bytes, &lim);
	const size_t smem = (size_t)(smem_cols + 2 * PAD) * shared_x<NVP>::bytes;
	const int threads = launch_threads<NVP, ALL_SHARED>(d->rows, lim.sms);
	/* The grid depends on the shared memory x takes and the threads; remember
	 * it for the last pair so repeated products (benchmarks, training)
	 * launch at once. */
	static size_t cached_smem = (size_t)-1;
	static int cached_threads, blocks_per_sm;
	if (smem != cached_smem || threads != cached_threads) {
		GPU_CHECK(err, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
						    lim.smem_optin));
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel,
									     threads, smem));
		if (blocks_per_sm < 1)
			return sp_fail(err, "MACKO kernel: %zu bytes of shared memory for x do not fit an SM",
				       smem);
		cached_smem = smem;
		cached_threads = threads;
	}
	/* A resident grid; its warps take rows in turn (next_row). */
	long long grid = (long long)lim.sms * blocks_per_sm;
	const int warps = threads / 32;
	const long long needed = (d->rows + warps - 1) / warps;
	if (grid > needed)
		grid = needed;
	if (d->rows > INT32_MAX - grid * warps)
		return sp_fail(err, "MACKO SpMV: %lld rows are too many for the kernel's 32-bit row numbers",
			       (long long)d->rows);
	const __half *xt = (const __half *)x;
	if (NVP > 1) {
		if (!d->xt)
			return sp_fail(err, "MACKO SpMV: no scratch for the transposed x");
		if (gathers_in_order<NVP, ALL_SHARED>() && !d->order)
			return sp_fail(err, "MACKO SpMV: no gather order for eight vectors");
		transpose_x<NVP><<<(unsigned)((d->cols + 255) / 256), 256>>>((const __half *)x, (int)d->cols,
									    nvec, (__half *)d->xt);
		GPU_CHECK_LAUNCH(err, "transpose_x");
		xt = (const __half *)d->xt;
	}
	kernel<<<(unsigned)grid, threads, smem>>>((const uint4 *)d->values, (const uint32_t *)d->deltas,
						(const uint8_t *)d->order, d->ends, (int)d->rows, xt,
						smem_cols, nvec, alpha, beta, (const OutT *)y_in,
						(OutT *)y);
	GPU_CHECK_LAUNCH(err, "macko_spmv_kernel");
	return 0;
}

template <typename OutT>
static int dispatch(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		    const void *y_in, void *y, struct sp_err *err);

/* The product for nvec vectors as two: the first `first` vectors, then
 * the rest. */
template <typename OutT>
static int two_products(const struct macko_dev *d, const void *x, int first, int nvec, float alpha,
			float beta, const void *y_in, void *y, struct sp_err *err)
{
	const size_t rows = (size_t)d->rows;
	if (dispatch<OutT>(d, x, first, alpha, beta, y_in, y, err))
		return -1;
	const __half *rest = (const __half *)x + first * (size_t)d->cols;
	return dispatch<OutT>(d, rest, nvec - first, alpha, beta,
			      y_in ? (const OutT *)y_in + first * rows : NULL,
			      (OutT *)y + first * rows, err);
}

/* x for NVP vectors in shared memory whole when it fits. When it does not,
 * up to four vectors read the columns past what fits from global memory;
 * eight go as two products of four: passes over the matrix with x in
 * shared memory take less time than one that reads part of x from L2 for
 * every element (on an H100, 8 vectors of 20,000 columns 186 against 297
 * us). Four vectors are not split: their kernel with x partly in global
 * memory runs 32 warps an SM, and two products of two are slower (179
 * against 138 us at 40,000 columns; bench/RESULTS.md, macko-spmv, "Two
 * products" and "One pass for sixteen vectors"). */
template <int NVP, typename OutT>
static int launch_fit(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		      const void *y_in, void *y, struct sp_err *err)
{
	struct device_limits lim;
	if (device_limits(&lim, err))
		return -1;
	if (shared_columns(d, shared_x<NVP>::bytes, &lim) == d->cols)
		return launch<NVP, true, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	if constexpr (NVP <= 4)
		return launch<NVP, false, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	else
		return two_products<OutT>(d, x, NVP / 2, nvec, alpha, beta, y_in, y, err);
}

template <typename OutT>
static int dispatch(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		    const void *y_in, void *y, struct sp_err *err)
{
	if (nvec <= 1)
		return launch_fit<1, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	if (nvec <= 2)
		return launch_fit<2, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	if (nvec <= 4)
		return launch_fit<4, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	if (nvec <= MAX_NVP)
		return launch_fit<MAX_NVP, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	/* More than eight: eight, then the rest. Two passes over the matrix
	 * with eight vectors' gathers in their chosen order (macko_order.cu)
	 * took 18 to 27% less time than one pass with 32-byte gathers at
	 * d >= 0.3 (2% more at d = 0.1; H100, bench/RESULTS.md, macko-spmv,
	 * "One pass for sixteen vectors"). */
	return two_products<OutT>(d, x, MAX_NVP, nvec, alpha, beta, y_in, y, err);
}

extern "C" int macko_dev_spmv(const struct macko_dev *d, const void *x, int nvec, float alpha,
			      float beta, const void *y_in, void *y, enum macko_out out,
			      struct sp_err *err)
{
	if (nvec < 1 || nvec > MACKO_MAX_VECTORS)
		return sp_fail(err, "MACKO SpMV: %d vectors (1..%d)", nvec, MACKO_MAX_VECTORS);
	if (nvec > d->max_vectors)
		return sp_fail(err, "MACKO SpMV: %d vectors, but the matrix was uploaded for at most %d",
			       nvec, d->max_vectors);
	if (d->rows == 0)
		return 0;
	gpu_range_push("macko_spmv");
	int rc = out == MACKO_OUT_F16
			 ? dispatch<__half>(d, x, nvec, alpha, beta, y_in, y, err)
			 : dispatch<float>(d, x, nvec, alpha, beta, y_in, y, err);
	gpu_range_pop();
	return rc;
}
