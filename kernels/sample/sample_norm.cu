/* LayerNorm (eps 1e-5) and RMSNorm (x / (rms + 1e-8) * scale, as
 * Megatron-LM / GPT-NeoX write it) over the last dimension of (l, b, dim),
 * forward and backward, at fp16, bf16 or fp32, fp32 inside.
 *
 * Forward: a block a row; each thread loads its 16-byte vectors of the row
 * once into shared memory (it is the only one to read them back, so the
 * copy is a register file that any row length fits), the block reduces the
 * sums, and each thread writes its normalized vectors. Bytes: the row read
 * once and written once, plus the 4 or 8 bytes of statistics a row.
 *
 * Backward: a grid of as many blocks as fit on the device at once, each
 * walking rows blockIdx.x, + gridDim.x, ...: per row it loads x and dy once
 * (cached as above), reduces sum(g) and sum(g xh) with g = dy w, writes dx,
 * and adds dy xh and dy to per-column fp32 accumulators in shared memory
 * (each column owned by one thread, so no atomics; stored element-major,
 * acc[e][vector], so that a warp's 32 threads touch 32 banks, where the
 * column order would put 8 threads on each bank at fp16). The blocks' partial
 * column sums (gridDim.x x dim x 2 floats) are summed by one colsum_finish
 * launch into dweight and dbias. Bytes: x and dy read once, dx written once,
 * plus the partials written and read (16.8 MB each way at dim 4096 and 512
 * blocks: 8% more than the 201 MB of a fp16 b4 l2048 backward).
 *
 * A row of at most 2 vectors a thread at 512 threads (dim <= 8192 at fp16,
 * 4096 at fp32) runs norm_backward_regs instead: x, dy, the weight and the column sums
 * stay in registers (each thread owns the same columns on every row), and
 * the next row's x and dy are loaded before this row's reductions, so a
 * block always has a row's loads in flight and the only shared memory is
 * the reduction's 256 bytes. The cached kernel above it waits for each
 * row's loads, then spends two barriers and the shared-memory column
 * updates (16 bytes an element) before it asks for the next.
 *
 * A row that does not split into 16-byte vectors (dim not a multiple of 8
 * at fp16/bf16, of 4 at fp32) runs the same code one element at a time. */
#include "sample/sample_gpu.cuh"

#define LN_EPS 1e-5f
#define RMS_EPS 1e-8f

template <typename T, int V, bool RMS>
static __global__ void norm_forward(const T *__restrict__ x, const T *__restrict__ w,
				    const T *__restrict__ b, T *__restrict__ y,
				    float *__restrict__ mean_out, float *__restrict__ inv_out, int64_t cols)
{
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ float red[32];
	T *cache = (T *)smem;
	const int64_t row = blockIdx.x, nvec = cols / V;
	const T *xr = x + row * cols;
	float s = 0;
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(xr + v * V);
		vstore<T, V>(cache + v * V, a);
#pragma unroll
		for (int e = 0; e < V; e++) {
			float f = to_f(a.v[e]);
			s += RMS ? f * f : f;
		}
	}
	float mean = 0, inv;
	if (RMS) {
		inv = 1.0f / (sqrtf(block_sum(s, red) / (float)cols) + RMS_EPS);
	} else {
		mean = block_sum(s, red) / (float)cols;
		float q = 0;
		for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
			vec<T, V> a = vload<T, V>(cache + v * V);
#pragma unroll
			for (int e = 0; e < V; e++) {
				float d = to_f(a.v[e]) - mean;
				q += d * d;
			}
		}
		inv = rsqrtf(block_sum(q, red) / (float)cols + LN_EPS);
	}
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(cache + v * V), wv = vload<T, V>(w + v * V), o;
		vec<T, V> bv = RMS ? wv : vload<T, V>(b + v * V);
#pragma unroll
		for (int e = 0; e < V; e++)
			o.v[e] = from_f<T>((to_f(a.v[e]) - mean) * inv * to_f(wv.v[e]) +
					   (RMS ? 0.0f : to_f(bv.v[e])));
		vstore<T, V>(y + row * cols + v * V, o);
	}
	if (threadIdx.x == 0) {
		if (!RMS)
			mean_out[row] = mean;
		inv_out[row] = inv;
	}
}

/* dst[e] = acc[e * stride] for e < V, stored 16 bytes at a time where V
 * allows: a thread's V columns are contiguous in the partial sums, so a
 * warp's stores cover whole sectors (one float a store put 32 threads' 4
 * bytes in 32 sectors 32 bytes apart at V = 8). With one colsum launch for
 * both sums, on an H100 (2026-11-28) the fp16 layernorm backward at b4
 * l2048 dim4096 went from 118.4-119.6 us (56-57% of copy; ncu: 109 us in
 * norm_backward) to 92.3-92.5 (73%; 84 us), at b8 l4096 dim8192 from 665
 * to 636 (84%). */
template <int V>
static __device__ void store_columns(float *__restrict__ dst, const float *acc, int64_t stride)
{
	if (V % 4 == 0) {
#pragma unroll
		for (int e = 0; e < V; e += 4)
			*(float4 *)(dst + e) = make_float4(acc[e * stride], acc[(e + 1) * stride],
							   acc[(e + 2) * stride], acc[(e + 3) * stride]);
	} else {
#pragma unroll
		for (int e = 0; e < V; e++)
			dst[e] = acc[e * stride];
	}
}

/* See the file's comment. LayerNorm: xh = (x - mean) inv,
 * dx = inv (g - sum(g)/n - xh sum(g xh)/n). RMSNorm: xh = x inv,
 * dx = inv g - x inv sum(g xh) / (n rms), rms = 1/inv - eps. */
template <typename T, int V, bool RMS>
static __global__ void norm_backward(const T *__restrict__ x, const T *__restrict__ w,
				     const T *__restrict__ dy, const float *__restrict__ mean,
				     const float *__restrict__ inv, T *__restrict__ dx,
				     float *__restrict__ partial, int64_t rows, int64_t cols)
{
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ float red[64];
	const int64_t nvec = cols / V;
	float *acc_w = (float *)smem, *acc_b = acc_w + cols; /* [V][nvec] each */
	T *xc = (T *)(acc_w + (RMS ? cols : 2 * cols)), *gc = xc + cols;
	const float n = (float)cols;
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x)
		for (int e = 0; e < V; e++) {
			acc_w[e * nvec + v] = 0;
			if (!RMS)
				acc_b[e * nvec + v] = 0;
		}
	for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
		const float m = RMS ? 0.0f : mean[row], r = inv[row];
		float sg = 0, sgx = 0;
		for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
			vec<T, V> xv = vload<T, V>(x + row * cols + v * V);
			vec<T, V> gv = vload<T, V>(dy + row * cols + v * V), wv = vload<T, V>(w + v * V);
			vstore<T, V>(xc + v * V, xv);
			vstore<T, V>(gc + v * V, gv);
#pragma unroll
			for (int e = 0; e < V; e++) {
				float g = to_f(gv.v[e]) * to_f(wv.v[e]);
				sg += g;
				sgx += g * (to_f(xv.v[e]) - m) * r;
			}
		}
		const float2 sums = block_sum2(sg, sgx, red);
		sg = sums.x / n;
		sgx = sums.y / n;
		const float rms = 1.0f / r - RMS_EPS;
		for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
			vec<T, V> xv = vload<T, V>(xc + v * V), gv = vload<T, V>(gc + v * V);
			vec<T, V> wv = vload<T, V>(w + v * V), o;
#pragma unroll
			for (int e = 0; e < V; e++) {
				float d = to_f(gv.v[e]), g = d * to_f(wv.v[e]);
				float xh = (to_f(xv.v[e]) - m) * r, out;
				if (RMS)
					out = r * g - (rms > 0 ? to_f(xv.v[e]) * r * sgx / rms : 0.0f);
				else
					out = r * (g - sg - xh * sgx);
				o.v[e] = from_f<T>(out);
				acc_w[e * nvec + v] += d * xh;
				if (!RMS)
					acc_b[e * nvec + v] += d;
			}
			vstore<T, V>(dx + row * cols + v * V, o);
		}
	}
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		store_columns<V>(partial + blockIdx.x * cols + v * V, acc_w + v, nvec);
		if (!RMS)
			store_columns<V>(partial + (gridDim.x + blockIdx.x) * cols + v * V, acc_b + v,
					 nvec);
	}
}

/* The most threads norm_backward_regs runs a row with, and the vectors
 * each holds: thread t owns vectors t and t + blockDim.x of every row. */
#define NORM_REGS_THREADS 512
#define NORM_REGS_VPT 2

/* The register-resident backward (file comment). The launch bound holds it
 * to 128 registers, so that a block of 512 threads always fits an SM. */
template <typename T, int V, bool RMS>
static __global__ void __launch_bounds__(NORM_REGS_THREADS)
	norm_backward_regs(const T *__restrict__ x, const T *__restrict__ w,
					  const T *__restrict__ dy, const float *__restrict__ mean,
					  const float *__restrict__ inv, T *__restrict__ dx,
					  float *__restrict__ partial, int64_t rows, int64_t cols)
{
	__shared__ float red[64];
	const int64_t nvec = cols / V;
	const float n = (float)cols;
	constexpr int VPT = NORM_REGS_VPT;
	vec<T, V> wv[VPT], xv[VPT], gv[VPT], xn[VPT], gn[VPT];
	float aw[VPT][V], ab[VPT][V];
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
		if (v < nvec)
			wv[k] = vload<T, V>(w + v * V);
#pragma unroll
		for (int e = 0; e < V; e++)
			aw[k][e] = ab[k][e] = 0;
	}
	int64_t row = blockIdx.x;
	float m = 0, r = 0;
	if (row < rows) {
		m = RMS ? 0.0f : mean[row];
		r = inv[row];
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
			if (v < nvec) {
				xv[k] = vload<T, V>(x + row * cols + v * V);
				gv[k] = vload<T, V>(dy + row * cols + v * V);
			}
		}
	}
	for (; row < rows; row += gridDim.x) {
		const int64_t next = row + gridDim.x;
		float mn = 0, rn = 0;
		if (next < rows) {
			mn = RMS ? 0.0f : mean[next];
			rn = inv[next];
		}
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
			if (next < rows && v < nvec) {
				xn[k] = vload<T, V>(x + next * cols + v * V);
				gn[k] = vload<T, V>(dy + next * cols + v * V);
			}
		}
		float sg = 0, sgx = 0;
#pragma unroll
		for (int k = 0; k < VPT; k++)
			if (threadIdx.x + (int64_t)k * blockDim.x < nvec)
#pragma unroll
				for (int e = 0; e < V; e++) {
					float g = to_f(gv[k].v[e]) * to_f(wv[k].v[e]);
					sg += g;
					sgx += g * (to_f(xv[k].v[e]) - m) * r;
				}
		const float2 sums = block_sum2(sg, sgx, red);
		sg = sums.x / n;
		sgx = sums.y / n;
		const float rms = 1.0f / r - RMS_EPS, cx = rms > 0 ? r * sgx / rms : 0.0f;
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
			if (v >= nvec)
				continue;
			vec<T, V> o;
#pragma unroll
			for (int e = 0; e < V; e++) {
				float d = to_f(gv[k].v[e]), g = d * to_f(wv[k].v[e]);
				float xh = (to_f(xv[k].v[e]) - m) * r, out;
				if (RMS)
					out = r * g - to_f(xv[k].v[e]) * cx;
				else
					out = r * (g - sg - xh * sgx);
				o.v[e] = from_f<T>(out);
				aw[k][e] += d * xh;
				ab[k][e] += d;
			}
			vstore<T, V>(dx + row * cols + v * V, o);
			xv[k] = xn[k];
			gv[k] = gn[k];
		}
		m = mn;
		r = rn;
	}
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
		if (v >= nvec)
			continue;
		store_columns<V>(partial + blockIdx.x * cols + v * V, aw[k], 1);
		if (!RMS)
			store_columns<V>(partial + (gridDim.x + blockIdx.x) * cols + v * V, ab[k], 1);
	}
}

struct norm_extra {
	int threads, bwd_threads, grid; /* grid: backward's resident blocks */
	size_t fwd_smem, bwd_smem;
	void *bwd_kernel; /* one of the norm_backward kernels */
	float *partial;
};

static void norm_release(void *extra)
{
	struct norm_extra *e = (struct norm_extra *)extra;
	if (e)
		gpu_free(e->partial);
	free(e);
}

enum norm_step { NORM_PREPARE, NORM_FORWARD, NORM_BACKWARD };

template <typename T>
using norm_backward_fn = void (*)(const T *, const T *, const T *, const float *, const float *,
				  T *, float *, int64_t, int64_t);

/* The backward's kernel, threads and shared memory for rows of `nvec`
 * vectors: norm_backward_regs where NORM_REGS_THREADS threads of
 * NORM_REGS_VPT vectors hold the row, else the shared-memory cached one.
 * Two vectors a thread won at both of H100.md's shapes on an H200
 * (2026-11-28, fp16 layernorm backward, us): b4 l2048 dim4096 61.1-62.4 at
 * 2 (256 threads) against 78.6-79.1 at 1 (512 threads), b8 l4096 dim8192
 * 418.7-419.2 at 2 (512) against 458.6-462.5 at 4 (256); the cached kernel
 * took 82.5-83.0 and 562.1-563.0. */
template <typename T, int V, bool RMS>
static norm_backward_fn<T> norm_backward_pick(int64_t nvec, int *threads, size_t *smem)
{
	*smem = 0;
	const int64_t t = (nvec + NORM_REGS_VPT - 1) / NORM_REGS_VPT;
	if (t <= NORM_REGS_THREADS) {
		*threads = (int)(t < 32 ? 32 : (t + 31) / 32 * 32);
		return norm_backward_regs<T, V, RMS>;
	}
	*threads = sample_row_threads(nvec);
	*smem = (size_t)nvec * V * (2 * sizeof(T) + (RMS ? 4 : 8));
	return norm_backward<T, V, RMS>;
}

template <typename T, int V, bool RMS>
static int norm_step(struct sample_gpu_state *st, enum norm_step step, struct sp_err *err)
{
	struct norm_extra *e = (struct norm_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	if (step == NORM_PREPARE) {
		int sms, per_sm;
		e->threads = sample_row_threads(d->cols / V);
		e->fwd_smem = (size_t)d->cols * sizeof(T);
		norm_backward_fn<T> bwd = norm_backward_pick<T, V, RMS>(d->cols / V, &e->bwd_threads,
									&e->bwd_smem);
		e->bwd_kernel = (void *)bwd;
		if (sample_gpu_smem_fits(e->bwd_smem, "the norm's backward at this dim", err))
			return -1;
		GPU_CHECK(err, cudaFuncSetAttribute(norm_forward<T, V, RMS>,
						    cudaFuncAttributeMaxDynamicSharedMemorySize,
						    (int)e->fwd_smem));
		GPU_CHECK(err, cudaFuncSetAttribute(bwd, cudaFuncAttributeMaxDynamicSharedMemorySize,
						    (int)e->bwd_smem));
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bwd, e->bwd_threads,
									     e->bwd_smem));
		if (per_sm < 1)
			return sp_fail(err, "the norm's backward does not fit an SM in blocks of %d threads",
				       e->bwd_threads);
		if (sample_gpu_sms(err, &sms))
			return -1;
		/* as few blocks as keep the rows' turns: the fewest partial sums */
		const int64_t resident = (int64_t)sms * per_sm,
			      turns = (d->rows + resident - 1) / resident;
		e->grid = (int)((d->rows + turns - 1) / turns);
		return gpu_malloc((void **)&e->partial, (size_t)e->grid * d->cols * 2 * sizeof(float),
				  "norm partial sums", err);
	}
	const struct sample_gpu_state *s = st;
	if (step == NORM_FORWARD) {
		norm_forward<T, V, RMS><<<(unsigned)d->rows, e->threads, e->fwd_smem>>>(
			sample_dev<T>(s, NORM_X), sample_dev<T>(s, NORM_W), sample_dev<T>(s, NORM_B),
			sample_dev<T>(s, NORM_Y), sample_dev<float>(s, NORM_MEAN),
			sample_dev<float>(s, NORM_RSTD), d->cols);
		GPU_CHECK_LAUNCH(err, "norm_forward");
		return 0;
	}
	((norm_backward_fn<T>)e->bwd_kernel)<<<e->grid, e->bwd_threads, e->bwd_smem>>>(
		sample_dev<T>(s, NORM_X), sample_dev<T>(s, NORM_W), sample_dev<T>(s, NORM_DY),
		sample_dev<float>(s, NORM_MEAN), sample_dev<float>(s, NORM_RSTD),
		sample_dev<T>(s, NORM_DX), e->partial, d->rows, d->cols);
	GPU_CHECK_LAUNCH(err, "norm_backward");
	colsum_finish_launch<T>(e->partial, e->grid, d->cols, sample_dev<T>(s, NORM_DW),
				RMS ? (T *)NULL : sample_dev<T>(s, NORM_DB));
	GPU_CHECK_LAUNCH(err, "colsum_finish");
	return 0;
}

template <typename T>
static int norm_dispatch(struct sample_gpu_state *st, enum norm_step step, struct sp_err *err)
{
	const bool rms = st->s.t[NORM_MEAN].count == 0, whole = st->s.d.cols % vec16<T>() == 0;
	if (rms)
		return whole ? norm_step<T, vec16<T>(), true>(st, step, err)
			     : norm_step<T, 1, true>(st, step, err);
	return whole ? norm_step<T, vec16<T>(), false>(st, step, err)
		     : norm_step<T, 1, false>(st, step, err);
}

static int norm_run(struct sample_gpu_state *st, enum norm_step step, struct sp_err *err)
{
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T, rc = norm_dispatch<T>(st, step, err));
	return rc;
}

int sample_gpu_norm_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	st->extra = calloc(1, sizeof(struct norm_extra));
	if (!st->extra)
		return sp_fail(err, "out of memory for the norm's state");
	st->release = norm_release;
	return norm_run(st, NORM_PREPARE, err);
}

int sample_gpu_norm_forward(void *state, struct sp_err *err)
{
	return norm_run((struct sample_gpu_state *)state, NORM_FORWARD, err);
}

int sample_gpu_norm_backward(void *state, struct sp_err *err)
{
	return norm_run((struct sample_gpu_state *)state, NORM_BACKWARD, err);
}
