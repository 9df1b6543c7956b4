/* MACKO sparse matrix x (1..16) vectors on the GPU.
 *
 * What it computes: y[v][r] = alpha * sum_c A[r][c] x[v][c] + beta y_in[v][r]
 * with A in the MACKO format (lib/macko.h), fp16 values and x, fp32
 * accumulation, fp16 or fp32 y.
 *
 * Bytes it must move: 2.5 per stored element (fp16 value + 4-bit delta),
 * 4 per row (row_indices), x once per SM (from L2) and y. The kernel is
 * memory-bound; everything below serves keeping ~22 KB per SM in flight
 * with as few instructions per element as possible.
 *
 * Work decomposition: one warp per row, rows spread over a persistent grid
 * (grid-stride), so long and short rows mix and no block waits on another.
 * A warp walks its row in steps of 512 elements: lane l takes 16
 * consecutive elements, loading them with two 16-byte value loads and one
 * 8-byte delta load (the device copy is padded so these never run off the
 * end). The step's first element is aligned to 16, so steps at a row's
 * edges mask out the neighbours' elements. An element's column is
 * (sum of delta+1 over the row up to and including it) - 1: each lane
 * prefixes its 16 increments, one warp scan adds the lanes before it, and a
 * carry runs across steps. The next step's loads are issued before the
 * current step is decoded (software pipelining), so each warp keeps two
 * steps (2.5 KB) in flight.
 *
 * x is used as fp16 [col][NVP] (NVP = nvec rounded up to a power of two;
 * for NVP > 1 a small kernel transposes it first), so all vectors of one
 * element come in one 2..32-byte load and the matrix is read once whatever
 * nvec is. As many columns as fit are copied into shared memory; the rest
 * (16 vectors of more than ~7,000 columns) are read from the global copy,
 * through L1 and L2. */
#include <cuda_fp16.h>

#include <stdint.h>

#include "gpu_check.cuh"
#include "macko_gpu.h"

/* 16 warps a block: fewer blocks stage x into shared memory than with 8,
 * while two blocks an SM still keep 32 warps of loads in flight. */
enum { WARPS_PER_BLOCK = 16, BLOCK = 32 * WARPS_PER_BLOCK, STEP = 512, LANE_ELEMS = 16 };
/* Device arrays are padded to this many elements past `elements` (a
 * multiple of STEP), so any 16-element load that starts before `elements`
 * stays inside the allocation. */
enum { DEVICE_PAD = STEP };

/* The NVP fp16 entries of x for column c, as floats, from p = the column's
 * NVP halves (shared or global memory): one 2- to 32-byte access. */
template <int NVP>
__device__ __forceinline__ void load_x(const __half *p, float (&out)[NVP])
{
	if constexpr (NVP == 1) {
		out[0] = __half2float(*p);
	} else if constexpr (NVP == 2) {
		float2 f = __half22float2(*reinterpret_cast<const __half2 *>(p));
		out[0] = f.x;
		out[1] = f.y;
	} else {
		/* 4, 8 or 16 halves: 8- or 16-byte loads. */
#pragma unroll
		for (int q = 0; q < NVP; q += 8 < NVP ? 8 : NVP) {
			__half2 h[4];
			if constexpr (NVP == 4)
				*reinterpret_cast<uint2 *>(h) = *reinterpret_cast<const uint2 *>(p + q);
			else
				*reinterpret_cast<uint4 *>(h) = *reinterpret_cast<const uint4 *>(p + q);
#pragma unroll
			for (int k = 0; k < (NVP < 8 ? NVP : 8) / 2; k++) {
				float2 f = __half22float2(h[k]);
				out[q + 2 * k] = f.x;
				out[q + 2 * k + 1] = f.y;
			}
		}
	}
}

/* x in shared memory: fp32 for one vector (a conversion fewer per element,
 * 4 bytes a column), fp16 [col][NVP] for several (2 NVP bytes a column). */
template <int NVP> struct shared_x {
	using type = __half;
	static constexpr int bytes = 2 * NVP;
};
template <> struct shared_x<1> {
	using type = float;
	static constexpr int bytes = 4;
};

template <int NVP>
__device__ __forceinline__ void load_shared_x(const typename shared_x<NVP>::type *xs, int c,
					      float (&out)[NVP])
{
	if constexpr (NVP == 1)
		out[0] = xs[c];
	else
		load_x<NVP>(xs + (size_t)c * NVP, out);
}

template <typename OutT> __device__ __forceinline__ float to_float(OutT v);
template <> __device__ __forceinline__ float to_float<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <typename OutT> __device__ __forceinline__ OutT from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

struct step_data {
	uint4 v0, v1; /* 16 fp16 values */
	uint2 d;      /* 16 nibbles */
};

__device__ __forceinline__ step_data load_step(const uint4 *values, const uint2 *deltas, int first,
					       int s, int e)
{
	step_data t;
	if (first < e && first + LANE_ELEMS > s) {
		t.v0 = __ldcs(values + first / 8);
		t.v1 = __ldcs(values + first / 8 + 1);
		t.d = __ldcs(deltas + first / 16);
	} else {
		t.v0 = t.v1 = make_uint4(0, 0, 0, 0);
		t.d = make_uint2(0, 0);
	}
	return t;
}

/* x as [col][NVP] halves (xt) for its first smem_cols columns into shared
 * memory: a plain copy, 16 bytes a thread at a time, all loads independent,
 * so staging costs about one L2 round trip. */
template <int NVP>
__device__ __forceinline__ void stage_x(typename shared_x<NVP>::type *xs, const __half *xt,
					int smem_cols)
{
	const int n = smem_cols * NVP, n16 = n / 8;
	for (int i = threadIdx.x; i < n16; i += blockDim.x) {
		const uint4 in = __ldg(reinterpret_cast<const uint4 *>(xt) + i);
		if constexpr (NVP == 1) {
			const __half2 *h = reinterpret_cast<const __half2 *>(&in);
			float4 *out = reinterpret_cast<float4 *>(xs + 8 * i);
			const float2 a = __half22float2(h[0]), b = __half22float2(h[1]);
			const float2 c = __half22float2(h[2]), d = __half22float2(h[3]);
			out[0] = make_float4(a.x, a.y, b.x, b.y);
			out[1] = make_float4(c.x, c.y, d.x, d.y);
		} else {
			reinterpret_cast<uint4 *>(xs)[i] = in;
		}
	}
	for (int i = 8 * n16 + threadIdx.x; i < n; i += blockDim.x) {
		if constexpr (NVP == 1)
			xs[i] = __half2float(xt[i]);
		else
			xs[i] = xt[i];
	}
	__syncthreads();
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
#pragma unroll
	for (int q = 0; q < NVP; q += 8 < NVP ? 8 : NVP) {
		if constexpr (NVP >= 8)
			*reinterpret_cast<uint4 *>(xt + (size_t)c * NVP + q) = *reinterpret_cast<const uint4 *>(col + q);
		else if constexpr (NVP == 4)
			*reinterpret_cast<uint2 *>(xt + (size_t)c * NVP) = *reinterpret_cast<const uint2 *>(col);
		else
			*reinterpret_cast<__half2 *>(xt + (size_t)c * NVP) = *reinterpret_cast<const __half2 *>(col);
	}
}

/* Where a warp is in its sequence of rows: row r (its k-th), elements
 * [s, e), current step starting at base. */
struct cursor {
	int k, r, s, e, base;
};

/* Move to the warp's next row that has a step to run. Rows whose aligned
 * start is already at their end (empty rows) are finished on the way:
 * their y is beta * y_in. Row pointers come from `ptr`, which lane j
 * loaded for the warp's row k0 + j, reloaded every 32 rows. */
template <typename OutT>
__device__ __forceinline__ void next_row(cursor &c, int &ptr_lo, int &ptr_hi, int &k0, int lane,
					 int first_row, int nwarps, int rows,
					 const int32_t *__restrict__ row_indices, int nvec, float beta,
					 const OutT *__restrict__ y_in, OutT *__restrict__ y)
{
	for (;;) {
		c.k++;
		c.r = first_row + c.k * nwarps;
		if (c.r >= rows)
			return;
		if (c.k - k0 == 32) {
			k0 = c.k;
			const int rr = first_row + (k0 + lane) * nwarps;
			ptr_lo = rr < rows ? __ldg(row_indices + rr) : 0;
			ptr_hi = rr < rows ? __ldg(row_indices + rr + 1) : 0;
		}
		c.s = __shfl_sync(0xffffffffu, ptr_lo, c.k - k0);
		c.e = __shfl_sync(0xffffffffu, ptr_hi, c.k - k0);
		c.base = c.s & ~(LANE_ELEMS - 1);
		if (c.base < c.e)
			return;
		if (lane < nvec) {
			const size_t at = (size_t)lane * rows + c.r;
			y[at] = from_float<OutT>(beta != 0.0f ? beta * to_float<OutT>(y_in[at]) : 0.0f);
		}
	}
}

/* Inclusive prefix of (delta + 1) over the 8 nibbles of w (elements
 * at..at+7), added to total, without a loop over nibbles: the nibbles
 * become byte increments (two masks, two byte permutes), one multiply by
 * 0x01010101 sums each group of four (at most 64, so no carries), and one
 * byte extract per element reads the prefix out. */
__device__ __forceinline__ void swar_prefix(uint32_t w, int at, int (&pre)[LANE_ELEMS], int &total)
{
	const uint32_t even = (w & 0x0f0f0f0fu) + 0x01010101u;        /* elements 0, 2, 4, 6 */
	const uint32_t odd = ((w >> 4) & 0x0f0f0f0fu) + 0x01010101u;  /* elements 1, 3, 5, 7 */
	const uint32_t lo = __byte_perm(even, odd, 0x5140) * 0x01010101u; /* elements 0..3 */
	const uint32_t hi = __byte_perm(even, odd, 0x7362) * 0x01010101u; /* elements 4..7 */
#pragma unroll
	for (int k = 0; k < 4; k++)
		pre[at + k] = total + (int)__byte_perm(lo, 0, 0x4440 | k);
	total += (int)(lo >> 24);
#pragma unroll
	for (int k = 0; k < 4; k++)
		pre[at + 4 + k] = total + (int)__byte_perm(hi, 0, 0x4440 | k);
	total += (int)(hi >> 24);
}

/* acc[v] += value * x[v][column] over a lane's 16 elements; MASKED checks
 * each element against the row's [s, e). */
template <int NVP, bool ALL_SHARED, bool MASKED>
__device__ __forceinline__ void multiply_step(const uint32_t (&words)[8], const int (&pre)[LANE_ELEMS],
					      int col0, int first, int s, int e,
					      const typename shared_x<NVP>::type *xs, const __half *xt,
					      int smem_cols, float (&acc)[NVP])
{
#pragma unroll
	for (int k = 0; k < LANE_ELEMS; k += 2) {
		const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&words[k / 2]));
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int i = first + k + h;
			if (!MASKED || (i >= s && i < e)) {
				float xv[NVP];
				const int c = col0 + pre[k + h];
				/* When all of x is in shared memory (ALL_SHARED, the
				 * usual case) there is no test here: a per-element
				 * branch would keep the compiler from issuing the
				 * loads of a step together (measured 1.5x slower).
				 * Otherwise two calls, not one on a selected pointer:
				 * each then knows its address space (LDS, or LDG
				 * through L1), where a pointer that may be either
				 * compiles to slower generic loads. */
				if (ALL_SHARED || c < smem_cols)
					load_shared_x<NVP>(xs, c, xv);
				else
					load_x<NVP>(xt + (size_t)c * NVP, xv);
				const float av = h ? a.y : a.x;
#pragma unroll
				for (int v = 0; v < NVP; v++)
					acc[v] = fmaf(av, xv[v], acc[v]);
			}
		}
	}
}

template <int NVP, bool ALL_SHARED, typename OutT>
__global__ void __launch_bounds__(BLOCK, NVP <= 4 ? 2 : 1) macko_spmv_kernel(
	const uint4 *__restrict__ values, const uint2 *__restrict__ deltas,
	const int32_t *__restrict__ row_indices, int rows, const __half *__restrict__ xt,
	int smem_cols, int nvec, float alpha, float beta, const OutT *__restrict__ y_in,
	OutT *__restrict__ y)
{
	extern __shared__ __align__(16) unsigned char smem[];
	auto *xs = reinterpret_cast<typename shared_x<NVP>::type *>(smem);
	stage_x<NVP>(xs, xt, smem_cols);
	const int lane = threadIdx.x & 31;
	const int nwarps = gridDim.x * WARPS_PER_BLOCK;
	const int first_row = blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);

	/* The pipeline runs across rows: the first step of the next row is
	 * loaded while the last step of this one is decoded, so a warp always
	 * has a step in flight and never waits on a row pointer. */
	int ptr_lo = 0, ptr_hi = 0, k0 = 0;
	cursor at = {-1, 0, 0, 0, 0};
	next_row<OutT>(at, ptr_lo, ptr_hi, k0 = -32, lane, first_row, nwarps, rows, row_indices,
		       nvec, beta, y_in, y);
	if (at.r >= rows)
		return;
	step_data next = load_step(values, deltas, at.base + lane * LANE_ELEMS, at.s, at.e);

	float acc[NVP];
#pragma unroll
	for (int v = 0; v < NVP; v++)
		acc[v] = 0.0f;
	int carry = 0; /* sum of (delta + 1) over the row's elements before this step */
	while (at.r < rows) {
		const cursor cur = at;
		const step_data d = next;
		at.base += STEP;
		if (at.base >= at.e)
			next_row<OutT>(at, ptr_lo, ptr_hi, k0, lane, first_row, nwarps, rows, row_indices,
				       nvec, beta, y_in, y);
		if (at.r < rows)
			next = load_step(values, deltas, at.base + lane * LANE_ELEMS, at.s, at.e);

		const int first = cur.base + lane * LANE_ELEMS;
		/* Most steps lie wholly inside their row; only a row's first and
		 * last step need each element checked against [s, e). The check
		 * costs a quarter of the instructions per element, so lanes whose
		 * 16 elements are all inside skip it (two copies of the loops,
		 * chosen per lane; the warp diverges only at row edges). */
		const bool inside = first >= cur.s && first + LANE_ELEMS <= cur.e;
		int pre[LANE_ELEMS];
		int total = 0;
		if (inside) {
			swar_prefix(d.d.x, 0, pre, total);
			swar_prefix(d.d.y, 8, pre, total);
		} else {
#pragma unroll
			for (int k = 0; k < LANE_ELEMS; k++) {
				const int i = first + k;
				const uint32_t word = k < 8 ? d.d.x : d.d.y;
				const int delta = (word >> (4 * (k & 7))) & 15;
				total += (i >= cur.s && i < cur.e) ? delta + 1 : 0;
				pre[k] = total;
			}
		}
		int incl = total;
#pragma unroll
		for (int off = 1; off < 32; off <<= 1) {
			const int t = __shfl_up_sync(0xffffffffu, incl, off);
			if (lane >= off)
				incl += t;
		}
		const int col0 = carry + incl - total - 1;
		carry += __shfl_sync(0xffffffffu, incl, 31);

		const uint32_t words[8] = {d.v0.x, d.v0.y, d.v0.z, d.v0.w, d.v1.x, d.v1.y, d.v1.z, d.v1.w};
		if (inside)
			multiply_step<NVP, ALL_SHARED, false>(words, pre, col0, first, cur.s, cur.e, xs, xt,
							      smem_cols, acc);
		else
			multiply_step<NVP, ALL_SHARED, true>(words, pre, col0, first, cur.s, cur.e, xs, xt,
							     smem_cols, acc);
		if (cur.base + STEP < cur.e)
			continue; /* the row goes on */
#pragma unroll
		for (int v = 0; v < NVP; v++) {
#pragma unroll
			for (int off = 16; off > 0; off >>= 1)
				acc[v] += __shfl_xor_sync(0xffffffffu, acc[v], off);
		}
		if (lane < NVP && lane < nvec) {
			float sum = 0.0f;
#pragma unroll
			for (int v = 0; v < NVP; v++)
				sum = v == lane ? acc[v] : sum;
			const size_t o = (size_t)lane * rows + cur.r;
			float out = alpha * sum;
			if (beta != 0.0f)
				out = fmaf(beta, to_float<OutT>(y_in[o]), out);
			y[o] = from_float<OutT>(out);
		}
#pragma unroll
		for (int v = 0; v < NVP; v++)
			acc[v] = 0.0f;
		carry = 0;
	}
}

extern "C" int macko_dev_upload(const struct macko *m, struct macko_dev *d, struct sp_err *err)
{
	*d = (struct macko_dev){m->rows, m->cols, m->elements, m->padded, NULL, NULL, NULL, NULL};
	if (m->rows > INT32_MAX - 1 || m->cols > INT32_MAX || m->padded > INT32_MAX - DEVICE_PAD)
		return sp_fail(err, "MACKO matrix of %lld x %lld with %lld elements is too large for "
				    "the GPU kernel's 32-bit indices",
			       (long long)m->rows, (long long)m->cols, (long long)m->padded);
	size_t n = (size_t)m->padded + DEVICE_PAD;
	if (gpu_malloc(&d->values, n * 2, "MACKO values", err) ||
	    gpu_malloc(&d->deltas, n / 2, "MACKO deltas", err) ||
	    gpu_malloc((void **)&d->row_indices, (size_t)(m->rows + 1) * 4, "MACKO row_indices", err) ||
	    gpu_malloc(&d->xt, (size_t)m->cols * MACKO_MAX_VECTORS * 2 + 16, "transposed x", err))
		goto fail;
	if (GPU_FAILED(err, cudaMemset(d->values, 0, n * 2)) ||
	    GPU_FAILED(err, cudaMemset(d->deltas, 0, n / 2)) ||
	    gpu_upload(d->values, m->values, (size_t)m->padded * 2, err) ||
	    gpu_upload(d->deltas, m->deltas, (size_t)m->padded / 2, err) ||
	    gpu_upload(d->row_indices, m->row_indices, (size_t)(m->rows + 1) * 4, err))
		goto fail;
	return 0;
fail:
	macko_dev_free(d);
	return -1;
}

extern "C" void macko_dev_free(struct macko_dev *d)
{
	gpu_free(d->values);
	gpu_free(d->deltas);
	gpu_free(d->row_indices);
	gpu_free(d->xt);
	d->values = d->deltas = d->xt = NULL;
	d->row_indices = NULL;
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
	const size_t smem = (size_t)smem_cols * shared_x<NVP>::bytes;
	/* The grid depends on the shared memory x takes; remember it for the
	 * last size so repeated products (benchmarks, training) launch at once. */
	static size_t cached_smem = (size_t)-1;
	static int blocks_per_sm;
	if (smem != cached_smem) {
		GPU_CHECK(err, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
						    lim.smem_optin));
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel,
									     BLOCK, smem));
		if (blocks_per_sm < 1)
			return sp_fail(err, "MACKO kernel: %zu bytes of shared memory for x do not fit an SM",
				       smem);
		cached_smem = smem;
	}
	const __half *xt = (const __half *)x;
	if (NVP > 1) {
		if (!d->xt)
			return sp_fail(err, "MACKO SpMV: no scratch for the transposed x");
		transpose_x<NVP><<<(unsigned)((d->cols + 255) / 256), 256>>>((const __half *)x, (int)d->cols,
									    nvec, (__half *)d->xt);
		GPU_CHECK_LAUNCH(err, "transpose_x");
		xt = (const __half *)d->xt;
	}
	long long grid = (long long)lim.sms * blocks_per_sm;
	long long needed = (d->rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
	if (grid > needed)
		grid = needed;
	kernel<<<(unsigned)grid, BLOCK, smem>>>((const uint4 *)d->values, (const uint2 *)d->deltas,
						d->row_indices, (int)d->rows, xt, smem_cols, nvec,
						alpha, beta, (const OutT *)y_in, (OutT *)y);
	GPU_CHECK_LAUNCH(err, "macko_spmv_kernel");
	return 0;
}

template <int NVP, typename OutT>
static int launch_fit(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		      const void *y_in, void *y, struct sp_err *err)
{
	struct device_limits lim;
	if (device_limits(&lim, err))
		return -1;
	if (shared_columns(d, shared_x<NVP>::bytes, &lim) == d->cols)
		return launch<NVP, true, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	return launch<NVP, false, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
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
	if (nvec <= 8)
		return launch_fit<8, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
	return launch_fit<16, OutT>(d, x, nvec, alpha, beta, y_in, y, err);
}

extern "C" int macko_dev_spmv(const struct macko_dev *d, const void *x, int nvec, float alpha,
			      float beta, const void *y_in, void *y, enum macko_out out,
			      struct sp_err *err)
{
	if (nvec < 1 || nvec > MACKO_MAX_VECTORS)
		return sp_fail(err, "MACKO SpMV: %d vectors (1..%d)", nvec, MACKO_MAX_VECTORS);
	if (d->rows == 0)
		return 0;
	gpu_range_push("macko_spmv");
	int rc = out == MACKO_OUT_F16
			 ? dispatch<__half>(d, x, nvec, alpha, beta, y_in, y, err)
			 : dispatch<float>(d, x, nvec, alpha, beta, y_in, y, err);
	gpu_range_pop();
	return rc;
}
